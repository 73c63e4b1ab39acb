/* ops.h: the operator table. Every operator relayc knows is one row of
** ops.def; its attribute schema (an AttrsClass) is declared in attrs.def.
** The parser resolves operator names and builds call attributes here; the
** type checker, the interpreter and code generation will hang their
** per-operator functions off the same rows. The shape of a row (OpDef,
** AttrsClass, AttrField) is the IR's: ir/schema.h. */
#ifndef RLY_OPS_H
#define RLY_OPS_H

#include "ir/schema.h"

typedef enum {
#define OP(ID, name, nargs, attrs, pattern) OP_##ID,
#include "ops/ops.def"
#undef OP
  OP_COUNT
} OpId;

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

#endif
