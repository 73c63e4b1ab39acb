/* kcall.h: from a typed operator call in the IR to a runtime kernel call:
** the attributes as the runtime sees them and the result's static types.
** Used by the interpreter (and the kernel tests). */
#ifndef RLY_KCALL_H
#define RLY_KCALL_H

#include "ir/ir.h"
#include "relayc/runtime.h"

/* The runtime's view of IR attributes (NULL or class-less attrs give an
** empty list), allocated in arena. */
rlyrt_attrs *kcall_attrs(Arena *arena, const Attrs *attrs);
/* DLPack dtype of an IR dtype. */
DLDataType kcall_dtype(DType t);
/* Fills kc for the typed call e (an EXPR_CALL of an EXPR_OP, Expr.type
** set): op name, attrs, output types. Arguments and result are the
** caller's. Returns false (message in err) when the result type is not a
** tensor or a tuple of tensors. */
bool kcall_prepare(Arena *arena, const Expr *e, rlyrt_kernel_call *kc, char *err, size_t errlen);

#endif
