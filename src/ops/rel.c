/* rel.c: the table from operator to type relation, gathered from the
** per-family lists rel_<family>.def. */
#include "ops/rel.h"

#define REL(id, fn) RelResult fn(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out);
#include "ops/rel_elemwise.def"
#include "ops/rel_nn.def"
#include "ops/rel_transform.def"
#undef REL

static const TypeRel rel_table[OP_COUNT] = {
#define REL(id, fn) [OP_##id] = fn,
#include "ops/rel_elemwise.def"
#include "ops/rel_nn.def"
#include "ops/rel_transform.def"
#undef REL
};

TypeRel op_type_rel(const OpDef *op) { return rel_table[op->id]; }
