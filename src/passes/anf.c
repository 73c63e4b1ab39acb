/* anf.c: ToANormalForm.
** Requires: nothing (types are optional). Preserves: types, spans; sharing
** becomes explicit (one let per shared node). Fails only on a let variable
** used in its own value outside a function (see "Recursive lets").
**
** Input: any module (typed or not). Output: every root in full A-normal
** form:
**   body  = "let" var "=" value ";" body | atom
**   value = atom | call(atom, atom...) | (atom, ...) | atom.i | ref(atom)
**         | ref_read(atom) | ref_write(atom, atom)
**         | if (atom) { body } else { body } | match (atom) { p => body, ... }
**         | fn (params) { body }
**   atom  = variable | global | constant | operator | constructor
**         | a Primitive function literal (not entered)
** A def's function stays a function literal whose body has that shape; an
** expression module's expression becomes a body. The result is a tree
** except for atoms: every non-atomic node has one parent, so a code
** generator can emit one statement per let.
**
** Sharing. A node with several parents (a graph binding `%0 = e;` used more
** than once) is evaluated once: it is bound by one let in its home, the
** innermost scope holding all its uses (scopes: function bodies, if
** branches, match clause bodies), placed where evaluation order first
** needs it. Within a scope, bindings follow evaluation order: children
** before parents, a let's value before its variable, its body after. A
** node used only inside a function literal but shared with the enclosing
** scope is bound in the enclosing scope before the literal (the closure
** captures it), as the interpreter does. Input lets keep their variables
** (`let %x = add(...)` stays one let); nested lets are flattened
** (`let %a = (let %b = v; e); f` becomes `let %b = v; let %a = e; f`); the
** value of a let that is shared is bound to that let's variable when the
** let is where it is first needed.
**
** Recursive lets. A let variable used in its own value (a recursive
** closure) is bound only once the let is: a shared node that mentions it
** and would be hoisted above the let is bound where it is used inside the
** closure instead, with its parts, and again after the let where it is
** used there (the second copy binds fresh copies of the variables it
** binds, so no variable is bound twice). A use of the variable
** that cannot be placed after its let (`let %x = add(%x, 1)`, or a closure
** capturing %x built before %x is bound) is an error in the program: it
** cannot be evaluated (the interpreter fails on it at run time too).
**
** New variables are named `t` (the printer makes names distinct: %t,
** %t_1, ...). Types: kept. A rebuilt node copies the type of the node it
** replaces; a new variable takes the type of the node it binds; a let
** takes the type of its body. Spans: kept (new lets and variables take the span of the
** node they bind). Attribute expressions are not touched.
**
** Algorithm, per root:
** 1. analysis over the full post-order (ir_postorder): parent counts, the
**    static scope tree and every node's home (ir_homes: the least common
**    ancestor of the scopes of its uses); a walk marking let variables
**    used in their own value;
** 2. emission with an explicit task stack and value stack: each task
**    converts one node; statements are appended to the open scope where the
**    node is placed; closing a scope folds its statements into a let chain.
** Nothing recurses in C on program data (only on a pattern's nesting):
** 100,000-long let chains and 100,000-deep graph chains take heap memory
** only.
**
** Evaluation order note: a shared node whose uses are in a branch and
** after the if (or in both branches) is evaluated before the if, after its
** condition, once, as the printer binds it and as TVM's ToANormalForm
** does, also when that branch does not run; the interpreter evaluates it
** at the same place (interp.c, plan_hoists), so effects between the if
** and a later use are not seen by the node in either. */
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "passes/pass.h"

/* {==== State ====} */

typedef struct Stmt {
  Expr *var;
  Expr *value;
  Span span;
} Stmt;

/* A scope being emitted: its static scope and its statements so far. */
typedef struct Open {
  int scope;
  Vec(Stmt) stmts;
} Open;

/* What emission knows of a static scope of the analysis (IrHomes.scopes,
** same index). */
typedef struct Scope {
  int pos;        /* position in the open stack while open, else -1 */
  uint32_t inst;  /* how many times it was opened (an instance number) */
} Scope;

/* What a converted node became: valid while its scope instance is open. */
typedef struct Memo {
  Expr *atom;
  int scope;
  uint32_t inst;
} Memo;

/* A recursive let whose value is being converted. */
typedef struct Pending {
  Expr *let;
  int pos;        /* open-stack position of the let's statement */
  bool reported;  /* a bad use was reported */
} Pending;

typedef enum { WANT_ATOM, WANT_VALUE } Want;

typedef struct Task {
  Expr *e;       /* an input node */
  Expr *letvar;  /* WANT_VALUE: the variable of the let whose value e is */
  int pos;       /* phase 0: where the parent is placed; later: where e is */
  int vbase;     /* value-stack height when e's children started */
  int phase;     /* 0: start */
  uint8_t want;  /* Want */
  int moved;     /* e's home, when e is placed below it (see start), else -1 */
  int moved_pos; /* the home's own position, restored when e is done */
} Task;

typedef struct Anf {
  PassCtx *ctx;
  Module *m;
  uint32_t n;          /* ids below n are input nodes (table size) */
  uint8_t *nparents;   /* per id, saturating at 2 */
  int *home;           /* per id: static scope (H.home) */
  int *first_scope;    /* per id: first static scope the node opens (H.base) */
  IrHomes H;           /* the static scope tree and every node's home */
  uint8_t *recursive;  /* per let-var id: used in its own value */
  uint8_t *converted;  /* per id: converted once already (copies must be fresh) */
  uint8_t *mark;       /* per id, scratch of placement: 1 a pending let var to
                       ** look for, 2 visited by the mention walk */
  Memo *memo;          /* per id */
  Expr **rename;       /* per var id: the copy binding it in a repeated
                       ** conversion (see "Copies"), NULL: the var itself */
  Vec(Scope) scopes;
  Vec(Open) open;
  Vec(Pending) pending;
  Vec(Task) tasks;
  ExprVec vals;
  ExprVec kids;        /* scratch */
  Symbol *fresh_name;
} Anf;

/* An atom of the grammar above, or a Primitive function literal (a fused
** group): it has no free variables and no effect, and code generation
** wants it in place as the callee of its call, its body left as FuseOps
** wrote it (the kernel lowering reads nested calls). */
static bool anf_atom(const Expr *e) { return pass_is_atom(e) || ir_is_primitive(e); }

/* {==== Analysis ====} */

/* Parent counts, scopes and homes (ir_homes). order is the full
** post-order of root. */
static void analyse(Anf *A, Expr *root, const ExprVec *order) {
  ir_homes(&A->H, A->n, &root, 1, order);
  A->home = A->H.home;
  A->first_scope = A->H.base;
  A->scopes.len = 0;
  for (int i = 0; i < A->H.scopes.len; i++) {
    Scope s = {-1, 0};
    VEC_PUSH(&A->scopes, s);
  }
  for (int i = 0; i < order->len; i++) A->nparents[order->data[i]->id] = 0;
  for (int i = 0; i < order->len; i++) {
    Expr *e = order->data[i];
    A->kids.len = 0;
    ir_kids(e, IR_KIDS_INNER, &A->kids);
    for (int k = 0; k < A->kids.len; k++) {
      Expr *c = A->kids.data[k];
      if (!anf_atom(c) && A->nparents[c->id] < 2) A->nparents[c->id]++;
    }
  }
}

typedef struct RecFrame {
  Expr *e;
  bool leave;  /* e is a LET whose value is finished */
} RecFrame;

/* Marks the let variables used in their own value. Pre-order walk; a var
** is "active" while its let's value is walked. A node reachable from a
** let's value that mentions the let's variable can only be reached through
** that let, so visiting each node once is exact. */
static void find_recursive(Anf *A, Expr *root) {
  Vec(RecFrame) stack = {0};
  uint8_t *seen = rly_xcalloc(A->n ? A->n : 1, 1);
  uint8_t *active = rly_xcalloc(A->n ? A->n : 1, 1);
  RecFrame top = {root, false};
  VEC_PUSH(&stack, top);
  while (stack.len) {
    RecFrame f = VEC_POP(&stack);
    Expr *e = f.e;
    if (f.leave) {
      active[e->u.let.var->id] = 0;
      continue;
    }
    if (seen[e->id]) continue;
    seen[e->id] = 1;
    if (e->kind == EXPR_LET) active[e->u.let.var->id] = 1;
    A->kids.len = 0;
    ir_kids(e, IR_KIDS_INNER, &A->kids);
    for (int k = 0; k < A->kids.len; k++) {
      Expr *c = A->kids.data[k];
      if (c->kind == EXPR_VAR && c->id < A->n && active[c->id]) {
        /* A LET's body is not part of its value. */
        if (!(e->kind == EXPR_LET && k == 1 && c == e->u.let.var)) A->recursive[c->id] = 1;
      }
    }
    if (e->kind == EXPR_LET) {
      RecFrame body = {e->u.let.body, false}, leave = {e, true}, value = {e->u.let.value, false};
      VEC_PUSH(&stack, body);
      VEC_PUSH(&stack, leave);
      VEC_PUSH(&stack, value);
      continue;
    }
    for (int k = A->kids.len; k-- > 0;) {
      Expr *c = A->kids.data[k];
      if (anf_atom(c)) continue;
      RecFrame cf = {c, false};
      VEC_PUSH(&stack, cf);
    }
  }
  VEC_FREE(&stack);
  free(seen);
  free(active);
}

/* {==== Emission ====} */

/* Copies. A node converted a second time (only where a node mentioning a
** recursive let's variable is bound at each use, see placement) must not
** bind the same variables twice: its binders (let vars, params, pattern
** vars) get fresh copies, and the uses converted after that see the copy.
** All uses of a binder are inside the node that binds it, so the copy
** stays valid until the binder is copied again. */
static Expr *copy_binder(Anf *A, Expr *v) {
  Expr *c = ir_var(A->m, v->span, v->u.var.name, v->u.var.annot);
  c->type = v->type;
  A->rename[v->id] = c;
  return c;
}

static Expr *renamed(const Anf *A, Expr *v) {
  return v->kind == EXPR_VAR && v->id < A->n && A->rename[v->id] ? A->rename[v->id] : v;
}

static void copy_pattern_binders(Anf *A, const Pattern *p) {
  A->kids.len = 0;
  ir_pattern_vars(p, &A->kids);
  for (int i = 0; i < A->kids.len; i++) copy_binder(A, A->kids.data[i]);
}

/* p with its variables renamed (shares the parts that keep theirs). */
static Pattern *renamed_pattern(Anf *A, Pattern *p) {
  A->kids.len = 0;
  ir_pattern_vars(p, &A->kids);
  for (int i = 0; i < A->kids.len; i++) A->kids.data[i] = renamed(A, A->kids.data[i]);
  int pos = 0;
  return ir_pattern_rebuild(A->m, p, A->kids.data, &pos);
}

static int open_scope(Anf *A, int scope) {
  Open o = {scope, {0}};
  VEC_PUSH(&A->open, o);
  Scope *s = &A->scopes.data[scope];
  RLY_ASSERT(s->pos < 0);
  s->pos = A->open.len - 1;
  s->inst++;
  return s->pos;
}

/* Closes the innermost open scope: its statements around tail. */
static Expr *close_scope(Anf *A, Expr *tail) {
  Open o = VEC_POP(&A->open);
  A->scopes.data[o.scope].pos = -1;
  Expr *body = tail;
  for (int i = o.stmts.len; i-- > 0;) {
    Stmt *s = &o.stmts.data[i];
    Expr *let = ir_let(A->m, s->span, s->var, s->value, body);
    let->type = body->type;
    body = let;
  }
  VEC_FREE(&o.stmts);
  return body;
}

static void emit(Anf *A, int pos, Expr *var, Expr *value, Span span) {
  Stmt s = {var, value, span};
  VEC_PUSH(&A->open.data[pos].stmts, s);
}

static bool memo_valid(const Anf *A, const Memo *me, int pos) {
  if (!me->atom) return false;
  const Scope *s = &A->scopes.data[me->scope];
  return s->pos >= 0 && s->pos <= pos && s->inst == me->inst;
}

static void remember(Anf *A, Expr *e, Expr *atom, int pos) {
  int scope = A->open.data[pos].scope;
  Memo me = {atom, scope, A->scopes.data[scope].inst};
  A->memo[e->id] = me;
}

static void push_task(Anf *A, Expr *e, int pos, Want want, Expr *letvar) {
  Task t = {e, letvar, pos, 0, 0, (uint8_t)want, -1, -1};
  VEC_PUSH(&A->tasks, t);
}

static void report_self_use(Anf *A, Pending *p) {
  if (p->reported) return;
  p->reported = true;
  const Expr *var = p->let->u.let.var;
  diag_error(A->ctx->d, p->let->span,
             "%%%s is used in its own definition where it has no value yet (only a function bound by the let "
             "may refer to its variable)",
             var->u.var.name ? var->u.var.name->text : "_");
}

/* A use of atom e by a node placed at pos. */
static void check_atom(Anf *A, Expr *e, int pos) {
  if (e->kind != EXPR_VAR || !A->pending.len || e->id >= A->n || !A->recursive[e->id]) return;
  for (int i = 0; i < A->pending.len; i++) {
    Pending *p = &A->pending.data[i];
    if (p->let->u.let.var == e && p->pos >= pos) report_self_use(A, p);
  }
}

/* Does the subtree of e (function bodies, branches and clauses included)
** use a variable marked in A->mark? Returns the first found, or NULL.
** A part already bound at open-stack position limit or above (nearer the
** root) cannot mention one (it would have been placed below its let), so
** it is not walked. */
static Expr *mentions_marked(Anf *A, Expr *e, int limit) {
  ExprVec stack = {0}, kids = {0}, seen_list = {0};
  Expr *found = NULL;
  VEC_PUSH(&stack, e);
  while (stack.len && !found) {
    Expr *x = VEC_POP(&stack);
    if (x->id < A->n) {
      if (A->mark[x->id] & 2) continue;
      if (x != e && memo_valid(A, &A->memo[x->id], limit)) continue;
      A->mark[x->id] |= 2;
      VEC_PUSH(&seen_list, x);
    }
    kids.len = 0;
    ir_kids(x, IR_KIDS_INNER, &kids);
    for (int k = 0; k < kids.len && !found; k++) {
      Expr *c = kids.data[k];
      if (c->kind == EXPR_VAR) {
        if (c->id < A->n && (A->mark[c->id] & 1)) found = c;
      } else if (!anf_atom(c)) {
        VEC_PUSH(&stack, c);
      }
    }
  }
  for (int i = 0; i < seen_list.len; i++) A->mark[seen_list.data[i]->id] &= (uint8_t)~2u;
  VEC_FREE(&stack);
  VEC_FREE(&kids);
  VEC_FREE(&seen_list);
  return found;
}

/* Where node e, used by a node placed at pos c, is placed: its home when
** that is open (and not deeper than c), else c (always c when fixed: e is
** its let's own value). When e mentions the variable of a recursive let
** whose value is being converted (other than the let whose own value e
** is: letvar) and its home is not below that let, it goes to c. A mention
** that cannot be placed after its let is reported. */
static int placement(Anf *A, Expr *e, int c, Expr *letvar, bool fixed) {
  int hp = A->scopes.data[A->home[e->id]].pos;
  int p = !fixed && hp >= 0 && hp < c ? hp : c;
  bool any = false;
  int limit = c;
  for (int i = 0; i < A->pending.len; i++) {
    Pending *q = &A->pending.data[i];
    if (q->pos >= p && q->let->u.let.var != letvar) {
      A->mark[q->let->u.let.var->id] |= 1;
      any = true;
      if (q->pos < limit) limit = q->pos;
    }
  }
  if (!any) return p;
  /* When it mentions one, its home is above that let: it is bound where
  ** it is used instead (and again at each use outside that scope). That
  ** is after the let only when the use is inside a function of the let's
  ** value; otherwise the program cannot be evaluated. */
  bool moved = false;
  for (Expr *v; (v = mentions_marked(A, e, limit)) != NULL;) {
    A->mark[v->id] &= (uint8_t)~1u;
    moved = true;
    for (int i = 0; i < A->pending.len; i++) {
      Pending *q = &A->pending.data[i];
      if (q->let->u.let.var == v && q->pos >= c) report_self_use(A, q);
    }
  }
  if (moved) p = c;
  for (int i = 0; i < A->pending.len; i++) A->mark[A->pending.data[i].let->u.let.var->id] &= (uint8_t)~1u;
  return p;
}

/* e is converted: its home stands where it is again. */
static void done(Anf *A, const Task *t) {
  A->converted[t->e->id] = 1;
  if (t->moved >= 0) A->scopes.data[t->moved].pos = t->moved_pos;
}

/* Binds the converted node (or passes it on) and pushes its result. */
static void finish(Anf *A, const Task *t, Expr *node) {
  Expr *e = t->e;
  done(A, t);
  if (t->want == WANT_VALUE) {
    if (A->nparents[e->id] >= 2 && t->letvar) remember(A, e, renamed(A, t->letvar), t->pos);
    VEC_PUSH(&A->vals, node);
    return;
  }
  Expr *atom = node;
  if (!anf_atom(node)) {
    atom = ir_var(A->m, e->span, A->fresh_name, NULL);
    atom->type = node->type;
    emit(A, t->pos, atom, node, e->span);
  }
  remember(A, e, atom, t->pos);
  VEC_PUSH(&A->vals, atom);
}

/* Phase 0 of e: an atom or a remembered node gives its result at once;
** otherwise the node's placement is chosen and its children scheduled. */
static void start(Anf *A, Task t) {
  Expr *e = t.e;
  if (anf_atom(e)) {
    check_atom(A, e, t.pos);
    VEC_PUSH(&A->vals, renamed(A, e));
    return;
  }
  Memo *me = &A->memo[e->id];
  if (memo_valid(A, me, t.pos)) {
    VEC_PUSH(&A->vals, me->atom);
    return;
  }
  /* A let's own value stays with its let unless it is shared: then it
  ** goes to its home, and the let binds its atom. */
  bool fixed = t.want == WANT_VALUE && A->nparents[e->id] < 2;
  int p = placement(A, e, t.pos, t.want == WANT_VALUE ? t.letvar : NULL, fixed);
  if (t.want == WANT_VALUE && p != t.pos) t.want = WANT_ATOM;
  t.pos = p;
  /* Placed below its open home (at a use, see placement): the parts of e
  ** that share that home belong to this copy of e, so while e is converted
  ** the home stands at e's position. */
  int home = A->home[e->id], hp = A->scopes.data[home].pos;
  if (hp >= 0 && p > hp) {
    t.moved = home;
    t.moved_pos = hp;
    A->scopes.data[home].pos = p;
  }
  t.vbase = A->vals.len;
  t.phase = 1;
  switch (e->kind) {
  case EXPR_LET: {
    Expr *var = e->u.let.var;
    if (A->converted[e->id]) copy_binder(A, var);
    if (var->id < A->n && A->recursive[var->id]) {
      Pending q = {e, t.pos, false};
      VEC_PUSH(&A->pending, q);
    }
    VEC_PUSH(&A->tasks, t);
    push_task(A, e->u.let.value, t.pos, WANT_VALUE, var);
    return;
  }
  case EXPR_IF:
    VEC_PUSH(&A->tasks, t);
    push_task(A, e->u.if_.cond, t.pos, WANT_ATOM, NULL);
    return;
  case EXPR_MATCH:
    VEC_PUSH(&A->tasks, t);
    push_task(A, e->u.match.scrut, t.pos, WANT_ATOM, NULL);
    return;
  case EXPR_FUNC: {
    if (A->converted[e->id])
      for (int i = 0; i < e->u.func.nparams; i++) copy_binder(A, e->u.func.params[i]);
    int q = open_scope(A, A->first_scope[e->id]);
    VEC_PUSH(&A->tasks, t);
    push_task(A, e->u.func.body, q, WANT_ATOM, NULL);
    return;
  }
  default: {
    VEC_PUSH(&A->tasks, t);
    A->kids.len = 0;
    ir_kids(e, IR_KIDS_INNER, &A->kids);
    for (int k = A->kids.len; k-- > 0;) push_task(A, A->kids.data[k], t.pos, WANT_ATOM, NULL);
    return;
  }
  }
}

/* Builds e from the values pushed since t->vbase and finishes it. */
static void build(Anf *A, const Task *t) {
  Expr *e = t->e;
  Expr **kids = A->vals.data ? A->vals.data + t->vbase : NULL; /* () may come first */
  bool copy = A->converted[e->id] != 0;
  Expr *node = pass_rebuild(A->m, e, kids, copy);
  if (copy && e->kind == EXPR_FUNC && e->u.func.nparams) {
    node->u.func.params = ARENA_ARRAY(A->m->arena, Expr *, e->u.func.nparams);
    for (int i = 0; i < e->u.func.nparams; i++) node->u.func.params[i] = renamed(A, e->u.func.params[i]);
  }
  if (copy && e->kind == EXPR_MATCH)
    for (int i = 0; i < e->u.match.nclauses; i++)
      node->u.match.clauses[i].pat = renamed_pattern(A, e->u.match.clauses[i].pat);
  A->vals.len = t->vbase;
  finish(A, t, node);
}

/* Closes the scope of a finished branch, clause or function body: replaces
** its tail atom on the value stack by the let chain. */
static void close_body(Anf *A) {
  Expr *tail = VEC_POP(&A->vals);
  VEC_PUSH(&A->vals, close_scope(A, tail));
}

/* Phases after 0. */
static void step(Anf *A, Task t) {
  Expr *e = t.e;
  switch (e->kind) {
  case EXPR_LET:
    if (t.phase == 1) {
      Expr *value = VEC_POP(&A->vals);
      Expr *var = e->u.let.var;
      if (var->id < A->n && A->recursive[var->id]) {
        Pending p = VEC_POP(&A->pending);
        RLY_ASSERT(p.let == e);
      }
      emit(A, t.pos, renamed(A, var), value, e->span);
      t.phase = 2;
      VEC_PUSH(&A->tasks, t);
      push_task(A, e->u.let.body, t.pos, (Want)t.want, t.letvar);
    } else {
      Expr *result = VEC_POP(&A->vals);
      done(A, &t);
      if (t.want == WANT_ATOM) remember(A, e, result, t.pos);
      else if (A->nparents[e->id] >= 2 && t.letvar) remember(A, e, renamed(A, t.letvar), t.pos);
      VEC_PUSH(&A->vals, result);
    }
    return;
  case EXPR_IF:
    if (t.phase > 1) close_body(A);
    if (t.phase <= 2) {
      int q = open_scope(A, A->first_scope[e->id] + t.phase - 1);
      Expr *branch = t.phase == 1 ? e->u.if_.then_ : e->u.if_.else_;
      t.phase++;
      VEC_PUSH(&A->tasks, t);
      push_task(A, branch, q, WANT_ATOM, NULL);
      return;
    }
    build(A, &t);
    return;
  case EXPR_MATCH:
    if (t.phase > 1) close_body(A);
    if (t.phase <= e->u.match.nclauses) {
      if (A->converted[e->id]) copy_pattern_binders(A, e->u.match.clauses[t.phase - 1].pat);
      int q = open_scope(A, A->first_scope[e->id] + t.phase - 1);
      Expr *body = e->u.match.clauses[t.phase - 1].body;
      t.phase++;
      VEC_PUSH(&A->tasks, t);
      push_task(A, body, q, WANT_ATOM, NULL);
      return;
    }
    build(A, &t);
    return;
  case EXPR_FUNC:
    close_body(A);
    build(A, &t);
    return;
  default: build(A, &t); return;
  }
}

static void run_tasks(Anf *A) {
  while (A->tasks.len) {
    Task t = VEC_POP(&A->tasks);
    if (t.phase == 0) start(A, t);
    else step(A, t);
  }
}

Expr *pass_anf(PassCtx *ctx, Expr *root) {
  Anf A;
  memset(&A, 0, sizeof A);
  A.ctx = ctx;
  A.m = ctx->m;
  A.n = ctx->m->nexprs;
  size_t n = A.n ? A.n : 1;
  A.nparents = rly_xcalloc(n, 1);
  A.recursive = rly_xcalloc(n, 1);
  A.converted = rly_xcalloc(n, 1);
  A.mark = rly_xcalloc(n, 1);
  A.memo = rly_xcalloc(n, sizeof(Memo));
  A.rename = rly_xcalloc(n, sizeof(Expr *));
  A.fresh_name = sym_intern_cstr(&ctx->m->syms, "t");

  ExprVec order = {0};
  ir_postorder(root, IR_KIDS_INNER, &order);
  analyse(&A, root, &order);
  VEC_FREE(&order);
  find_recursive(&A, root);

  /* The root scope: a def's function literal is converted as a value (it
  ** stays a function); an expression becomes a body. */
  bool is_def = ctx->def != NULL;
  open_scope(&A, A.home[root->id]);
  push_task(&A, root, 0, is_def ? WANT_VALUE : WANT_ATOM, NULL);
  run_tasks(&A);
  Expr *result = VEC_POP(&A.vals);
  RLY_ASSERT(A.vals.len == 0 && A.open.len == 1);
  if (is_def) {
    RLY_ASSERT(A.open.data[0].stmts.len == 0);
    VEC_FREE(&A.open.data[0].stmts);
    A.open.len = 0;
  } else {
    result = close_scope(&A, result);
  }

  free(A.nparents);
  ir_homes_free(&A.H);
  free(A.recursive);
  free(A.converted);
  free(A.mark);
  free(A.memo);
  free(A.rename);
  VEC_FREE(&A.scopes);
  VEC_FREE(&A.open);
  VEC_FREE(&A.pending);
  VEC_FREE(&A.tasks);
  VEC_FREE(&A.vals);
  VEC_FREE(&A.kids);
  return result;
}
