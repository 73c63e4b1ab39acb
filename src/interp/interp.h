/* interp.h: the reference interpreter. It evaluates a type-checked Module
** with the runtime's values and reference kernels; every compiled result is
** compared with it, so it is written to be obviously right, not fast.
**
** Evaluation uses an explicit work stack on the heap, not C recursion:
** tail calls (self and mutual) run in constant space and non-tail
** recursion is bounded by memory only. A node shared by several uses (a
** graph binding `%0 = e;`) is evaluated once per activation of the
** innermost function holding all its uses; a closure that uses a shared
** node of the enclosing function captures its value. Closures capture the values of their free variables; a
** closure bound by a recursive `let` refers to itself through a self slot,
** not a reference cycle. */
#ifndef RLY_INTERP_H
#define RLY_INTERP_H

#include "base/diag.h"
#include "ir/ir.h"
#include "relayc/runtime.h"

typedef struct Interp Interp;

/* An interpreter for m (type-checked; borrowed, must outlive it). sm (may
** be NULL) names source positions in run-time error messages. */
Interp *interp_new(Module *m, const SourceMap *sm);
void interp_free(Interp *I);

/* Calls global g with args (borrowed) and stores the result in *out
** (owned by the caller). On failure (a kernel error, a match? with no
** clause, wrong arguments) returns the status with rlyrt_last_error() set,
** leaking nothing. */
rlyrt_status interp_call(Interp *I, const GlobalDef *g, rlyrt_object *const *args, int nargs, rlyrt_object **out)
    RLYRT_MUST_CHECK;

/* Evaluates the expression of an expression module with its free
** variables bound to vals (borrowed, m->nfree_vars of them). */
rlyrt_status interp_eval_expr(Interp *I, rlyrt_object *const *vals, rlyrt_object **out) RLYRT_MUST_CHECK;

#endif
