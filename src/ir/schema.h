/* schema.h: what the IR knows of an operator: its name, arity, fusion
** pattern and the schema of its attributes (the fields, their kinds and
** defaults). The rows themselves, the OpId enum and everything that acts
** per operator (type relations, kernels, lowerings) live above the IR, in
** ops/ (ops.def, attrs.def); the IR holds pointers to these rows, prints
** call attributes against their class and verifies arities, with nothing
** from ops/. */
#ifndef RLY_IR_SCHEMA_H
#define RLY_IR_SCHEMA_H

#include "ir/ir.h"

/* What kind of value an attribute field holds. */
typedef enum {
  AK_INT,          /* int / IndexExpr: 3 */
  AK_BOOL,         /* True / False (0 and 1 accepted, normalised to bool) */
  AK_DOUBLE,       /* 0.5f (an int is accepted, normalised to float) */
  AK_STR,          /* "NCHW" */
  AK_DTYPE,        /* "float32" or "" (must name a dtype when not empty) */
  AK_INTS,         /* [1, 1] */
  AK_DOUBLES,      /* [0f, 1f] (ints accepted) */
  AK_INTS_NESTED,  /* [[0, 0], [1, 1]] (pad_width) */
  AK_INT_OR_INTS,  /* 3 or [1, 2] (split's indices_or_sections, reduction axis) */
  AK_ANY,          /* anything (objects from metadata, ...) */
} AttrKind;

typedef struct AttrField {
  const char *name;
  AttrKind kind;
  bool nullable;     /* None is accepted */
  const char *def;   /* canonical text of the default ("[1, 1]", "\"NCHW\"",
                        "1e-05f", "True", "None"); NULL = required (no default,
                        always printed; missing means None) */
} AttrField;

struct AttrsClass {
  const char *name;          /* "Conv2DAttrs" (TVM: relay.attrs.Conv2DAttrs) */
  const AttrField *fields;   /* in TVM's declaration order (= print order) */
  int nfields;
};

/* TVM's TOpPattern values. */
typedef enum {
  OPP_ELEMWISE = 0,
  OPP_BROADCAST = 1,
  OPP_INJECTIVE = 2,
  OPP_COMM_REDUCE = 3,
  OPP_OUT_EWISE_FUSABLE = 4,
  OPP_TUPLE = 7,
  OPP_OPAQUE = 8,
} OpPattern;

struct OpDef {
  int id;                    /* the row's OpId (ops/ops.h) */
  const char *name;          /* "nn.conv2d" */
  int nargs;                 /* number of call arguments (a tuple counts as one) */
  const AttrsClass *attrs;   /* NULL: the op takes no attributes */
  OpPattern pattern;
};

/* The default of field f as a fresh value in m's arena (None if required). */
AttrValue *attr_default_value(Module *m, const AttrField *f);
/* True when v equals f's default (printing omits such fields). Required
** fields are never "default": they are always printed. */
bool attr_is_default(const AttrField *f, const AttrValue *v);

#endif
