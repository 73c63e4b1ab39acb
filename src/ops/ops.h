/* ops.h: the operator table. Every operator relayc knows is one row of
** ops.def; its attribute schema (an AttrsClass) is declared in attrs.def.
** The parser resolves operator names and builds call attributes here; the
** type checker, the interpreter and code generation will hang their
** per-operator functions off the same rows. */
#ifndef RLY_OPS_H
#define RLY_OPS_H

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

typedef enum {
#define OP(ID, name, nargs, attrs, pattern) OP_##ID,
#include "ops/ops.def"
#undef OP
  OP_COUNT
} OpId;

struct OpDef {
  OpId id;
  const char *name;          /* "nn.conv2d" */
  int nargs;                 /* number of call arguments (a tuple counts as one) */
  const AttrsClass *attrs;   /* NULL: the op takes no attributes */
  OpPattern pattern;
};

/* The row of op id. */
const OpDef *op_get(OpId id);
/* Looks an operator up by its full name; NULL if unknown. */
const OpDef *op_lookup(const char *name, size_t len);
/* The known operator name nearest to name (edit distance), or NULL when
** nothing is close enough to suggest. */
const OpDef *op_suggest(const char *name, size_t len);
/* Looks an attrs class up by name ("Conv2DAttrs" or "relay.attrs.Conv2DAttrs"). */
const AttrsClass *attrs_class_lookup(const char *name, size_t len);
/* Index of field name in cls, or -1. */
int attrs_class_field(const AttrsClass *cls, const char *name, size_t len);

/* Builds the attributes of a call of op from the keyword pairs as written
** (keys[i] = values[i], spans of the keys in key_spans). Checks that every
** key is a field of the op's class (else "nn.conv2d has no attribute 'foo'"
** with the nearest field suggested), that no key is repeated, and that each
** value has the field's kind (else "attribute 'strides' of nn.conv2d expects
** an array of integers, found a string"); normalises values (ints to floats
** for double fields, 0/1 to bools); fills defaults for missing fields
** (missing required fields become None). An op without an attrs class given
** any keyword is an error. Reports to d; returns NULL on error. For an op
** without attrs and no keywords, returns NULL without error. */
Attrs *op_make_attrs(Module *m, const OpDef *op, Symbol **keys, AttrValue **values,
                     const Span *key_spans, int n, Diag *d);

/* What a value is, for messages: "an integer", "a string", "None", ... */
const char *attr_value_desc(const AttrValue *v);

/* The default of field f as a fresh value in m's arena (None if required). */
AttrValue *attr_default_value(Module *m, const AttrField *f);
/* True when v equals f's default (printing omits such fields). Required
** fields are never "default": they are always printed. */
bool attr_is_default(const AttrField *f, const AttrValue *v);

#endif
