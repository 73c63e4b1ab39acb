/* infer.h: whole-module Relay type inference.
** Input: a parsed Module. Output: every expression's Expr.type set to its
** fully resolved type, or errors in the Diag.
**
** Unification over incomplete types; tensor types with static and `?`
** dims; tuple, function, reference and ADT types; polymorphic globals (with
** explicit type parameters) instantiated at each use; ADT constructors with
** type parameters; recursive and mutually recursive globals (inferred one
** strongly connected component at a time, callees first); annotations
** checked against what is inferred; operator calls through the operator
** table's type relations, deferred until their arguments are known. `let`
** is not generalised (as in Relay). Also checks `if` conditions, branch
** agreement, patterns against scrutinees, exhaustiveness of `match`,
** arities of calls and constructors, and references. */
#ifndef RLY_INFER_H
#define RLY_INFER_H

#include "base/diag.h"
#include "ir/ir.h"

/* Infers and checks m. Returns true when no error was reported. Several
** independent errors are reported in one run. */
bool ty_infer_module(Module *m, Diag *d);

#endif
