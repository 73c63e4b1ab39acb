/* pass.h: the pass registry, the driver that runs a pipeline of passes, and
** the few helpers every pass shares.
**
** A pass transforms one root at a time: the function of each `def` and the
** expression of an expression module. Its entry point is
**   Expr *pass_<id>(PassCtx *ctx, Expr *root);
** which returns the new root (root itself when nothing changed; for a def,
** always an EXPR_FUNC). Nodes are never changed in place: a pass builds new
** nodes in the module's arena and shares what it did not touch. A pass
** reports errors in the user's program to ctx->d; pass_run stops after the
** first pass that reported any.
**
** Module passes (PASS_MODULE) change several roots at once, such as a
** global and every call of it: pass_<id>(ctx, NULL) runs once, with
** ctx->def NULL, sets m's defs' functions and m->expr to the new roots
** itself (new nodes, as above) and returns NULL.
**
** Types. A pass declares in passes.def whether it needs typed input
** (PASS_NEEDS_TYPES) and whether every node it builds gets its type
** (PASS_KEEPS_TYPES: it copies the type of the node it replaces, or of the
** value a new variable binds). pass_run re-infers the module's types before
** a pass that needs them when an earlier pass did not keep them, and at the
** end when the input was typed. Re-inference starts from scratch
** (pass_retype): ty_infer_module skips nodes that already carry a type, so
** a partly typed module is never handed to it.
**
** Debug builds (NDEBUG not defined) run ir_verify after every pass and
** check that a pass with PASS_KEEPS_TYPES left no node untyped. */
#ifndef RLY_PASS_H
#define RLY_PASS_H

#include "base/diag.h"
#include "ir/ir.h"
#include "ir/walk.h"

typedef enum PassFlags {
  PASS_NEEDS_TYPES = 1, /* the input must be fully typed */
  PASS_KEEPS_TYPES = 2, /* a typed input gives a fully typed output */
  PASS_MODULE = 4,      /* runs once on the whole module (below) */
} PassFlags;

typedef struct PassInfo PassInfo;

/* What a pass sees while it transforms one root. */
typedef struct PassCtx {
  Module *m;             /* where new nodes go */
  Diag *d;               /* errors in the user's program */
  const PassInfo *pass;  /* the pass running */
  GlobalDef *def;        /* the definition whose function is the root; NULL
                         ** for the expression of an expression module */
} PassCtx;

typedef Expr *(*PassFn)(PassCtx *ctx, Expr *root);

struct PassInfo {
  const char *id;    /* short name: "anf" */
  const char *name;  /* TVM's name: "ToANormalForm" */
  unsigned flags;    /* PassFlags */
  PassFn run;
};

typedef enum PassId {
#define PASS(id, name, flags) PASS_ID_##id,
#include "passes/passes.def"
#undef PASS
  PASS_COUNT
} PassId;

/* The entry points, one per row of passes.def. */
#define PASS(id, name, flags) Expr *pass_##id(PassCtx *ctx, Expr *root);
#include "passes/passes.def"
#undef PASS

/* Every pass, in passes.def order. */
extern const PassInfo pass_table[PASS_COUNT];

/* The pass whose short name or TVM name is name (exact, case-sensitive),
** or NULL. */
const PassInfo *pass_find(const char *name);

/* Runs the passes named by names[0..n-1] (pass_find names), in order, on
** every def of m and on m's expression. Checks the diagnostics after each
** pass, re-infers types where the flags above ask for it, and in debug
** builds verifies the IR after each pass. Returns true when no error was
** reported; false after reporting to d (an unknown pass name, an error a
** pass found in the program, or a failed check). On false, m may be
** partly transformed: still a valid module, but do not rely on which
** passes ran. */
bool pass_run(Module *m, const char *const *names, int n, Diag *d);

/* Forgets every expression's type in m and infers them again from the
** annotations (ty_infer_module). Returns its result. */
bool pass_retype(Module *m, Diag *d);

/* True when every expression reachable from m's defs and expression
** (binders included, attribute expressions excluded) has a type. */
bool pass_module_typed(const Module *m);

/* {==== Helpers shared by passes ====}
** Children, rebuilding and post-orders are ir/walk.h's (ir_kids,
** ir_rebuild, ir_postorder): a pass that walks the whole tree uses
** IR_KIDS_INNER. */

/* Atoms: the expressions A-normal form never binds to a variable
** (ir_is_atom). */
bool pass_is_atom(const Expr *e);

/* Shorthands of the whole-tree traversals: ir_kids(e, IR_KIDS_INNER, out)
** (children in evaluation order, inner scopes included, binders and
** attribute expressions excluded) and ir_postorder(root, IR_KIDS_INNER,
** out) (every node, children first, each once). */
void pass_kids(const Expr *e, ExprVec *out);
void pass_postorder(Expr *root, ExprVec *out);

/* A node like e whose children, in ir_kids(e, IR_KIDS_INNER) order, are
** kids: e itself when every kid is the same pointer and force is false,
** else ir_rebuild's fresh node (new id, e's span) with e's type. Binders,
** patterns, attrs and types are e's. Not for atoms. */
Expr *pass_rebuild(Module *m, Expr *e, Expr *const *kids, bool force);

#endif
