/* walk.h: generic traversals of expression DAGs.
**
** - ir_walk: read-only pre-order walk with a visit callback (analyses).
** - ir_rewrite: memoized post-order rewrite that rebuilds only what changed
**   and keeps sharing (passes).
** - ir_postorder: the nodes of one scope's dataflow graph, children first
**   (graph-binding numbering in the printer, use counts).
**
** All three keep their stack on the heap, so a 100,000-long let chain or a
** 100,000-deep call nest does not recurse in C. Their tables are heap arrays
** indexed by Expr.id (grown on demand, so ids created during the walk are
** fine) and are freed before they return.
**
** Children, in the order every traversal here uses ("evaluation order"):
**   TUPLE     fields
**   GET_ITEM  tuple
**   CALL      callee, args (then the expressions inside attrs: ir_walk only)
**   LET       var (the binder), value, body
**   IF        cond, then_, else_
**   FUNC      params (binders), (attrs expressions: ir_walk only), body
**   MATCH     scrut, then per clause: the pattern's vars (binders, left to
**             right), the clause body
**   REF_NEW value; REF_READ ref; REF_WRITE ref, value
**   VAR, GLOBAL, CONST, OP, CTOR: none.
** A binder is the same EXPR_VAR node as every use of its variable, so a walk
** meets a variable first at its binder (well-formed IR) and never again. */
#ifndef RLY_WALK_H
#define RLY_WALK_H

#include "ir/ir.h"

/* A growable array of nodes on the heap (the Vec(Expr *) layout of
** base/vec.h, so VEC_PUSH / VEC_FREE apply). The owner frees it with
** VEC_FREE. */
typedef struct ExprVec {
  Expr **data;
  int len, cap;
} ExprVec;

/* {==== Read-only walker ====} */

typedef enum {
  WALK_CONTINUE,  /* visit e's children */
  WALK_PRUNE,     /* skip e's children (they may still be reached another way) */
  WALK_ABORT,     /* stop the walk; ir_walk returns false */
} WalkResult;

typedef struct Walker Walker;
struct Walker {
  WalkResult (*visit)(Walker *w, Expr *e);
  void *data;  /* the caller's per-walk state */
};

/* Visits every expression reachable from root in pre-order (a node before
** its children, children in the order listed above), each DAG node once
** (by id), descending into function bodies, if branches, match clauses
** (pattern vars, then body), let vars and the AV_EXPR values of call and
** function attributes. Returns false if visit returned WALK_ABORT, true
** otherwise. root may be NULL (nothing visited); NULL children are skipped. */
bool ir_walk(Walker *w, Expr *root);

/* {==== Rewriter ====} */

typedef struct Rewriter Rewriter;
struct Rewriter {
  Module *m;  /* where rebuilt nodes are allocated */
  /* Optional; called when a node is first reached, before its children.
  ** Returns e to descend into it, REWRITE_SKIP to keep e as it is (neither
  ** its children nor post are visited), or a replacement for e (not visited
  ** further; post is not called on it). */
  Expr *(*pre)(Rewriter *rw, Expr *e);
  /* Optional; called once per node after its children were rewritten, with
  ** the node rebuilt from the rewritten children (or the original node when
  ** no child changed). Returns its replacement: e itself for none. Never
  ** NULL. */
  Expr *(*post)(Rewriter *rw, Expr *e);
  void *data;  /* the caller's per-rewrite state */
};

/* pre's answer "keep this node and everything under it unchanged". */
#define REWRITE_SKIP ((Expr *)1)

/* Rewrites the DAG under root in post-order and returns the new root
** (root itself when nothing changed; NULL for NULL).
** - Each node is rewritten once (memoized by id): a node shared by several
**   parents has one replacement, and the rebuilt parents share it.
** - A parent is rebuilt only when one of its children changed. The rebuilt
**   node has a fresh id in rw->m, the same span, type NULL, and shares
**   every part that did not change (ret type, tparams, attrs, patterns with
**   unchanged vars).
** - Binder positions (let vars, params, pattern vars) take a child's
**   replacement only when it is an EXPR_VAR; otherwise the binder keeps the
**   original var and only the uses see the replacement (e.g. substituting
**   a constant for a variable).
** - The expressions inside attributes (AV_EXPR) are not rewritten.
** - A pass that changes a bound variable must change it everywhere at once:
**   since a use is the binder's own node, replacing the var node does. */
Expr *ir_rewrite(Rewriter *rw, Expr *root);

/* {==== Dataflow post-order ====} */

/* Appends to out every node reachable from root through "dataflow" edges,
** in post-order (each node after all its children, children in the order
** listed above), each node once (by id), root last. Dataflow edges are:
**   TUPLE fields; GET_ITEM tuple; CALL callee and args; LET value and body
**   (not the binder); IF cond; MATCH scrut; REF_NEW value; REF_READ ref;
**   REF_WRITE ref and value.
** Not followed: function params and bodies, if branches, match clauses,
** attribute expressions, let binders. A FUNC, VAR, GLOBAL, CONST, OP or CTOR
** node is a leaf here (it is appended, its insides are not): these are the
** nodes evaluated in the scope of root. A caller that prints or analyses
** inner scopes calls ir_postorder again on each function body, branch and
** clause body. The vector is the caller's (VEC_FREE); nothing else is
** allocated past the call. */
void ir_postorder(Expr *root, ExprVec *out);

#endif
