/* rel.h: operator type relations.
** A relation computes the type of an operator call from the types of its
** arguments and its attributes. The type checker (src/types) calls it with
** the arguments' types as far as they are known: a top-level TYPE_INCOMPLETE
** (or one inside a tuple argument) means "not known yet", and the relation
** then answers REL_DEFER and is asked again later.
**
** Each op family keeps its relations in src/ops/rel_<family>.c and lists
** them in rel_<family>.def as REL(OP_ID, function); rel.c gathers the lists
** into one table indexed by OpId. A test checks that every op has one.
**
** Error messages start with the op name and quote what was expected next to
** what was found, e.g. "add: shapes (1, 3) and (4,) do not broadcast",
** "nn.conv2d: weight has 3 input channels, but data has 4 (groups=1)". */
#ifndef RLY_REL_H
#define RLY_REL_H

#include <stdarg.h>

#include "ops/ops.h"

typedef enum { REL_OK, REL_DEFER, REL_ERROR } RelResult;

typedef struct RelCtx {
  Module *m;          /* output types are allocated in m's arena */
  Diag *d;            /* errors go here, at span */
  Span span;          /* the call */
  const OpDef *op;
} RelCtx;

/* args[i]: the type of argument i (nargs = op->nargs); attrs: the call's
** attributes (NULL when the op has no attrs class). On REL_OK *out is the
** result type. On REL_ERROR the relation has reported one error. */
typedef RelResult (*TypeRel)(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out);

/* The relation of op (never NULL for an op of the table). */
TypeRel op_type_rel(const OpDef *op);

/* {==== Helpers for writing relations (rel_util.c) ====} */

/* Reports "OPNAME: message" at the call. Returns REL_ERROR. */
RelResult rel_error(RelCtx *rc, const char *fmt, ...) RLY_PRINTF(2, 3);

/* Argument i as a tensor type: REL_OK with *t set, REL_DEFER when its type
** is not known yet, REL_ERROR (reported: "nn.conv2d: argument 1 (weight)
** must be a tensor, found (int32, int32)") otherwise. `what` names the
** argument in messages ("data", "weight"; NULL = "argument N"). */
RelResult rel_tensor_arg(RelCtx *rc, Type *const *args, int i, const char *what, const Type **t);

/* Arguments 0..n-1 as tensors (names[i] names argument i in messages, or
** names is NULL): the first answer that is not REL_OK, else REL_OK. */
RelResult rel_tensor_args(RelCtx *rc, Type *const *args, int n, const char *const *names, const Type **ts);

/* Argument i as a tuple of tensors (concatenate, stack, einsum): REL_OK
** with *fields and *n set (fields are tensor types), REL_DEFER if the tuple or
** any field is not known yet, REL_ERROR otherwise. */
RelResult rel_tuple_arg(RelCtx *rc, Type *const *args, int i, const char *what, Type *const **fields, int *n);

/* A tensor type in m's arena (shape copied). */
Type *rel_tensor(RelCtx *rc, DType dt, int ndim, const int64_t *shape);
/* A tuple type in m's arena (fields array copied). */
Type *rel_tuple(RelCtx *rc, Type *const *fields, int n);

/* NumPy broadcasting of two shapes (right-aligned; equal dims or 1; `?`
** with 1 gives the other, `?` with anything else gives `?`). Writes the
** result into out (room for max(na, nb) dims) and its rank into *nout;
** returns false when they do not broadcast. */
bool rel_broadcast(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out, int *nout);

/* Formats a shape the way messages quote it: "(1, 3)", "(4,)", "()",
** "(?, 3)". Returns buf. */
const char *rel_shape_str(const int64_t *shape, int ndim, char *buf, size_t n);
/* Formats a type for messages (Tensor[(1, 3), float32], (A, B), ...). The
** text is valid until the next call with the same buf. */
const char *rel_type_str(const Type *t, char *buf, size_t n);

/* Normalises axis into [0, ndim) (negative counts from the end); false when
** out of range. */
bool rel_norm_axis(int64_t axis, int ndim, int64_t *out);

/* {==== Attribute access ====}
** field must be a field of the op's attrs class (a bug otherwise). */

/* The value of field (never NULL when the op has an attrs class). */
const AttrValue *rel_attr(const Attrs *attrs, const char *field);
/* True when the value is None. */
bool rel_attr_is_none(const Attrs *attrs, const char *field);
/* An integer (or bool) field. Returns false (without reporting) when None
** or not an integer. */
bool rel_attr_int(const Attrs *attrs, const char *field, int64_t *out);
bool rel_attr_bool(const Attrs *attrs, const char *field);
double rel_attr_double(const Attrs *attrs, const char *field);
/* A string field; "" when None. *len may be NULL. */
const char *rel_attr_str(const Attrs *attrs, const char *field, size_t *len);
/* A dtype field ("" = none): false when empty, else *out set. */
bool rel_attr_dtype(const Attrs *attrs, const char *field, DType *out);
/* An array-of-integers field (a single integer counts as a one-element
** array). Returns the number of elements (up to max, written to out), or
** -1 when None, or -2 when an element is not an integer (symbolic). */
int rel_attr_ints(const Attrs *attrs, const char *field, int64_t *out, int max);

#endif
