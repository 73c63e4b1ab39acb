/* walk.h: the IR traversal library. Every pass, analysis and back end
** enumerates children, binders and scopes through these functions, so the
** shape of each node kind is written down once (walk.c, scope.c, scc.c).
**
** - ir_kids / ir_kids_info: a node's children in evaluation order, with
**   flags choosing binders, inner scopes and attribute expressions.
** - ir_rebuild: a node of the same kind with other children.
** - ir_pattern_vars / ir_pattern_rebuild: the variables a pattern binds.
** - ir_walk: read-only pre-order walk with a visit callback (analyses).
** - ir_rewrite: memoized post-order rewrite that rebuilds only what changed
**   and keeps sharing (passes).
** - ir_postorder / ir_postorder_roots: the nodes of a DAG, children first,
**   each once.
** - ir_free_vars: the variables an expression uses and does not bind.
** - IrScopes / ir_homes: the static scope tree (function bodies, if
**   branches, match clauses) and each node's home, the innermost scope
**   holding all its uses (their least common ancestor).
** - ir_scc: Tarjan's strongly connected components (call graphs).
**
** Nothing here recurses in C on program data: stacks are heap arrays, so a
** 100,000-long let chain or a 100,000-deep call nest only takes heap
** memory. (Patterns and attribute values are walked recursively: their
** depth is that of the source text, which the parser bounds.) Tables are
** heap arrays indexed by Expr.id, grown on demand (ids created during a
** traversal are fine), and freed before a function returns unless its
** contract says otherwise.
**
** Children, in evaluation order, with the scope each one is in ("slot":
** -1 for the scope of the node itself, k >= 0 for the k-th scope the node
** opens) and its role (B: binder, A: attribute expression; flags below):
**   TUPLE     fields
**   GET_ITEM  tuple
**   CALL      callee, args, then the expressions inside attrs (A)
**   LET       var (B), value, body                       all slot -1
**   IF        cond (-1), then_ (0), else_ (1)
**   FUNC      params (B, 0), attrs expressions (A, -1), body (0)
**   MATCH     scrut (-1), then per clause i: the pattern's vars (B, i, left
**             to right), the clause body (i)
**   REF_NEW value; REF_READ ref; REF_WRITE ref, value
**   VAR, GLOBAL, CONST, OP, CTOR: none.
** A binder is the same EXPR_VAR node as every use of its variable, so a walk
** that includes binders meets a variable first at its binder (well-formed
** IR) and never again. NULL children (IR under construction) are listed
** like others; traversals skip them. */
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

/* {==== Children ====} */

/* Which children ir_kids lists. With none of the flags: the children
** evaluated in the node's own scope ("dataflow" children: TUPLE fields,
** GET_ITEM tuple, CALL callee and args, LET value and body, IF cond, MATCH
** scrut, the REF_* operands; a FUNC has none). */
enum {
  IR_KIDS_INNER = 1,    /* also the children in the scopes the node opens:
                        ** if branches, function body, clause bodies */
  IR_KIDS_BINDERS = 2,  /* also binders: let vars; with IR_KIDS_INNER,
                        ** function params and pattern vars too */
  IR_KIDS_ATTRS = 4,    /* also the AV_EXPR values of call and function
                        ** attributes (nested arrays included) */
  IR_KIDS_OPAQUE_PRIMITIVE = 8, /* a function literal with the attribute
                        ** Primitive has no children (a kernel's insides) */
  IR_KIDS_ALL = IR_KIDS_INNER | IR_KIDS_BINDERS | IR_KIDS_ATTRS,
};

/* The role of a child (IrKid.role). */
enum { IR_KID_VALUE, IR_KID_BINDER, IR_KID_ATTR };

typedef struct IrKid {
  Expr *e;
  int slot;      /* -1: in the node's scope; k: in the k-th scope it opens */
  uint8_t role;  /* IR_KID_* */
} IrKid;

/* A growable array of IrKid (Vec layout; the owner frees it with VEC_FREE). */
typedef struct IrKidVec {
  IrKid *data;
  int len, cap;
} IrKidVec;

/* Appends to out the children of e chosen by flags (IR_KIDS_*), in the
** order of the table above. */
void ir_kids(const Expr *e, unsigned flags, ExprVec *out);

/* The same children as ir_kids, each with its slot and role. */
void ir_kids_info(const Expr *e, unsigned flags, IrKidVec *out);

/* How many scopes e opens: IF 2 (then, else), FUNC 1 (body), MATCH one per
** clause; 0 for every other kind. */
int ir_nscopes(const Expr *e);

/* Atoms: variables, globals, constants, operators, constructors (the nodes
** without children; A-normal form never binds them to a variable). */
bool ir_is_atom(const Expr *e);

/* Is fn a function literal with the attribute Primitive (a kernel)? False
** for any other node. */
bool ir_is_primitive(const Expr *fn);

/* A fresh node (new id in m, e's span, type NULL) of e's kind whose
** children are kids, in the order ir_kids(e, flags) lists them. flags is
** IR_KIDS_INNER, optionally with IR_KIDS_BINDERS (then kids holds the
** binders too: a pattern whose vars changed is rebuilt with
** ir_pattern_rebuild; without it, params and patterns are e's). Every part
** that is not a child (types, attrs, index, tparams) is e's. e must have
** children (not an atom). */
Expr *ir_rebuild(Module *m, const Expr *e, unsigned flags, Expr *const *kids);

/* {==== Patterns ====} */

/* Appends the variables p binds, left to right (p may be NULL). */
void ir_pattern_vars(const Pattern *p, ExprVec *out);

/* p with its variables replaced, in order, by vars[*pos], vars[*pos + 1],
** ... (*pos advances past them). Returns p itself when no variable
** changed; otherwise new patterns in m for the parts that changed, sharing
** the others. */
Pattern *ir_pattern_rebuild(Module *m, Pattern *p, Expr *const *vars, int *pos);

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
** its children, children in ir_kids(IR_KIDS_ALL) order), each DAG node
** once (by id): function bodies, if branches, match clauses (pattern vars,
** then body), let vars and the AV_EXPR values of call and function
** attributes. Returns false if visit returned WALK_ABORT, true otherwise.
** root may be NULL (nothing visited); NULL children are skipped. */
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
** - A parent is rebuilt only when one of its children changed
**   (ir_rebuild with binders: fresh id in rw->m, same span, type NULL,
**   every part that did not change shared).
** - Binder positions (let vars, params, pattern vars) take a child's
**   replacement only when it is an EXPR_VAR; otherwise the binder keeps the
**   original var and only the uses see the replacement (e.g. substituting
**   a constant for a variable).
** - The expressions inside attributes (AV_EXPR) are not rewritten.
** - A pass that changes a bound variable must change it everywhere at once:
**   since a use is the binder's own node, replacing the var node does. */
Expr *ir_rewrite(Rewriter *rw, Expr *root);

/* {==== Post-order ====} */

/* Appends to out every node reachable from root through ir_kids(flags)
** edges, in post-order (each node after all its children, children in
** ir_kids order), each node once (by id), root last. With flags 0 (the
** dataflow edges) a FUNC is a leaf and if branches and match clauses are
** not followed: the nodes evaluated in the scope of root; a caller that
** prints or analyses inner scopes calls it again on each body. With
** IR_KIDS_INNER: every node of the DAG, inner scopes included. NULL root
** or children: skipped. The vector is the caller's (VEC_FREE); nothing else
** is allocated past the call. */
void ir_postorder(Expr *root, unsigned flags, ExprVec *out);

/* ir_postorder of roots[0], roots[1], ... in turn, each node once over all
** of them (a node reached from an earlier root is not repeated). */
void ir_postorder_roots(Expr *const *roots, int nroots, unsigned flags, ExprVec *out);

/* {==== Free variables (scope.c) ====} */

/* Appends the variables that e uses and does not bind, in order of first
** use (pre-order, children in ir_kids order), each once: a use inside a
** nested function, branch or clause counts; a variable bound anywhere in e
** (let var, function param, pattern var, e's own params) does not. flags
** may hold IR_KIDS_ATTRS (uses inside attribute expressions count) and
** IR_KIDS_OPAQUE_PRIMITIVE (Primitive functions are not looked into); the
** traversal always includes inner scopes and binders. For a function
** literal these are the variables its closure captures (a recursive
** closure's own let variable among them: the caller tells it apart). */
void ir_free_vars(Expr *e, unsigned flags, ExprVec *out);

/* {==== Scopes and homes (scope.c) ====} */

/* A static scope: the body of a function, a branch of an if, a clause of a
** match, or a top scope (a root). */
typedef struct IrScope {
  int parent;        /* -1 for a top scope */
  int depth;         /* 0 for a top scope */
  Expr *owner;       /* the IF, FUNC or MATCH that opens it (NULL: top) */
  int slot;          /* which of owner's scopes it is (0 for a top scope) */
} IrScope;

/* A scope tree (Vec layout; the owner frees it with VEC_FREE). */
typedef struct IrScopes {
  IrScope *data;
  int len, cap;
} IrScopes;

/* Adds a scope under parent (-1: a new top scope) and returns its index. */
int ir_scope_new(IrScopes *s, int parent, Expr *owner, int slot);

/* The innermost scope holding both a and b (their least common ancestor).
** -1 stands for "no scope yet": the other is returned. -1 as well when a
** and b are in different trees. */
int ir_scope_lca(const IrScopes *s, int a, int b);

/* Where each node of a DAG is evaluated. Every root gets a top scope; a
** node in scope H that opens scopes (ir_nscopes) gets them as children of
** H; a node's home is the least common ancestor of the scopes of its uses
** (the scope of each IR_KIDS_INNER edge to it: the parent's home for slot
** -1, the parent's slot-th scope otherwise): the innermost scope holding
** all its uses, where a node shared by several scopes is evaluated once. */
typedef struct IrHomes {
  IrScopes scopes;
  int *home;    /* per id < n: the node's home scope; -1: not reached */
  int *base;    /* per id < n: the first of the scopes the node opens
                ** (its slot k is base + k); -1: none */
  uint32_t n;
} IrHomes;

/* Fills h for the nodes reachable from roots (NULL roots skipped) over ids
** below n (every reachable id must be below n). order must be
** ir_postorder_roots(roots, nroots, IR_KIDS_INNER). Root i's home is a new
** top scope. The arrays are the caller's: ir_homes_free. */
void ir_homes(IrHomes *h, uint32_t n, Expr *const *roots, int nroots, const ExprVec *order);

void ir_homes_free(IrHomes *h);

/* {==== Strongly connected components (scc.c) ====} */

/* Tarjan's strongly connected components of the graph with vertices
** 0..n-1 whose edges from v are adj[start[v] .. start[v + 1] - 1]
** (duplicates and self edges allowed). Iterative. The depth-first search
** starts from vertices 0, 1, ... in order and takes edges in the order
** given, so the result is deterministic: components are numbered in the
** order they are completed (a component after every component it reaches:
** callees first); comp[v] is v's number; order (n entries) lists the
** vertices component by component, each component's members in the order
** they leave Tarjan's stack (the component's first-visited vertex last).
** comp and order are the caller's arrays. Returns the number of
** components. */
int ir_scc(int n, const int *start, const int *adj, int *comp, int *order);

#endif
