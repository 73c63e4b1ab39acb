/* codegen.c: the program part of the back end (see codegen.h).
**
** Input: a module after ToANormalForm and WrapPrimitives, typed. Every
** function body is a let chain whose values are atoms, tuples,
** projections, calls of atoms (or of Primitive function literals), if,
** match, function literals and reference operations.
**
** C conventions of the generated code:
** - a value is an rlyrt_object *; every variable of a function is a C
**   local v<ID> (ID: the binder's expression id) holding one reference;
**   all locals are released when the function returns (and before a tail
**   call jumps back to the top); arguments are borrowed and retained into
**   the parameters' locals on entry;
** - captured variables are read from self->env[i] (borrowed); the closure
**   itself (a recursive let) is `self`;
** - `st` holds the status; `goto fail` releases everything and returns it.
**
** Analyses per C function (lambda lifting without rewriting the IR): its
** locals (binders in its body outside nested functions) and its free
** variables (variables used in its body, nested functions included, and
** bound outside it), in order of first use. Traversals keep an explicit
** stack: let chains of any length do not recurse in C. */
#include "codegen/codegen.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "lower/lower.h"
#include "ops/ops.h"
#include "passes/pass.h"
#include "types/infer.h"

typedef Vec(Expr *) EVec;

/* One C function: a global, or a function literal (closure code). */
typedef struct CFunc {
  Expr *fn;           /* EXPR_FUNC */
  GlobalDef *g;       /* the global, or NULL */
  int index;          /* in Cg.funcs */
  int group;          /* globals: the index of its group in Cg.groups; closures: -1 */
  int member;         /* its index in its group */
  Expr *self_var;     /* closures: the let variable bound to this closure when used inside it */
  EVec fvs;           /* closures: captured variables, in order of first use */
  EVec locals;        /* parameters and every binder of the body outside nested functions */
  bool closure_used;  /* globals: used as a value (its static closure is needed) */
  int64_t plan_size;  /* bytes of its workspace (0: no static memory plan) */
  char cname[96];     /* C name of its rlyrt_fn */
  char where[256];    /* "fn at FILE:L:C" or "@name" */
} CFunc;

typedef struct Group {
  Vec(CFunc *) members;
  char cname[100];
} Group;

typedef struct Cg {
  Module *m;
  const CodegenOptions *o;
  Diag *d;
  Vec(CFunc *) funcs;
  Vec(Group *) groups;
  int *func_of;       /* expr id -> 1 + index in funcs (FUNC nodes and global defs' funcs) */
  uint32_t nids;
  /* Output sections, assembled in this order. */
  StrBuf kdecls, protos, consts, kernels, checkers, code, info;
  Vec(const ConstData *) constdata;
  Vec(char *) kernel_texts; /* kernel i as made with the placeholder name (for dedupe) */
  Vec(const char *) checker_keys; /* type text of each checker */
  Vec(const Type *) checker_types;
  int nchecked;       /* checkers whose bodies are out */
  Lowering *L;
  Vec(const Ctor *) ctor_values; /* constructors used as values */
  Vec(const Ctor *) nullary;     /* constructors without fields built: their static values */
  bool used_unit;
  bool failed;
  /* Per function being emitted. */
  CFunc *cur;
  Group *curgroup;
  bool used_fail, *used_label;
  int tmp;            /* counter for C temporaries */
  uint32_t *mark;     /* per expr id: generation stamps */
  uint32_t gen;
  /* Liveness within one let chain (emit_block): per variable id, the block
  ** that may release it early (a stamp) and the statement of its last use. */
  uint32_t *cand;
  int *last;
  uint32_t bgen;
  int64_t *plan_off;  /* per variable id: its offset in the workspace, or -1 */
  uint8_t *uvar;      /* per variable id: 1 when it also lives unboxed, as a C scalar s<ID> */
  EVec uvars;         /* the unboxed variables of the group being emitted */
} Cg;

static void cg_error(Cg *cg, Span at, const char *fmt, const char *arg) {
  if (!cg->failed || cg->d->nerrors < 20) diag_error(cg->d, at, fmt, arg);
  cg->failed = true;
}

static void where_text(Cg *cg, Span s, char *buf, size_t n) {
  const Source *src = cg->o->sm && s.file ? srcmap_get(cg->o->sm, s.file) : NULL;
  if (src && s.line) snprintf(buf, n, "%s:%u:%u", src->name, s.line, s.col);
  else snprintf(buf, n, "%s", cg->o->name);
}

static bool is_primitive(const Expr *f) {
  const Attrs *a = f->u.func.attrs;
  if (!a || a->cls) return false;
  for (int i = 0; i < a->n; i++)
    if (a->keys[i] && strcmp(a->keys[i]->text, "Primitive") == 0) return true;
  return false;
}

static void grow_ids(Cg *cg) {
  uint32_t n = cg->m->nexprs;
  if (n <= cg->nids) return;
  cg->func_of = rly_xrealloc(cg->func_of, n * sizeof(int));
  cg->mark = rly_xrealloc(cg->mark, n * sizeof(uint32_t));
  cg->cand = rly_xrealloc(cg->cand, n * sizeof(uint32_t));
  cg->last = rly_xrealloc(cg->last, n * sizeof(int));
  cg->plan_off = rly_xrealloc(cg->plan_off, n * sizeof(int64_t));
  cg->uvar = rly_xrealloc(cg->uvar, n);
  memset(cg->uvar + cg->nids, 0, n - cg->nids);
  for (uint32_t i = cg->nids; i < n; i++) cg->plan_off[i] = -1;
  memset(cg->func_of + cg->nids, 0, (n - cg->nids) * sizeof(int));
  memset(cg->mark + cg->nids, 0, (n - cg->nids) * sizeof(uint32_t));
  memset(cg->cand + cg->nids, 0, (n - cg->nids) * sizeof(uint32_t));
  memset(cg->last + cg->nids, 0, (n - cg->nids) * sizeof(int));
  cg->nids = n;
}

/* {==== Traversal ====}
** Children of a node in the ANF tree, binders included, with a flag for
** binder positions. Calls back for every (child, is_binder). */

typedef void (*ChildFn)(void *ud, Expr *child, bool binder);

static void pattern_binders(Pattern *p, ChildFn fn, void *ud) {
  switch (p->kind) {
  case PAT_VAR: fn(ud, p->u.var.var, true); break;
  case PAT_CTOR:
    for (int i = 0; i < p->u.ctor.n; i++) pattern_binders(p->u.ctor.args[i], fn, ud);
    break;
  case PAT_TUPLE:
    for (int i = 0; i < p->u.tuple.n; i++) pattern_binders(p->u.tuple.fields[i], fn, ud);
    break;
  default: break;
  }
}

static void children(Expr *e, ChildFn fn, void *ud) {
  switch (e->kind) {
  case EXPR_TUPLE:
    for (int i = 0; i < e->u.tuple.n; i++) fn(ud, e->u.tuple.fields[i], false);
    break;
  case EXPR_GET_ITEM: fn(ud, e->u.get_item.tuple, false); break;
  case EXPR_CALL:
    fn(ud, e->u.call.callee, false);
    for (int i = 0; i < e->u.call.nargs; i++) fn(ud, e->u.call.args[i], false);
    break;
  case EXPR_LET:
    fn(ud, e->u.let.var, true);
    fn(ud, e->u.let.value, false);
    fn(ud, e->u.let.body, false);
    break;
  case EXPR_IF:
    fn(ud, e->u.if_.cond, false);
    fn(ud, e->u.if_.then_, false);
    fn(ud, e->u.if_.else_, false);
    break;
  case EXPR_FUNC:
    for (int i = 0; i < e->u.func.nparams; i++) fn(ud, e->u.func.params[i], true);
    fn(ud, e->u.func.body, false);
    break;
  case EXPR_MATCH:
    fn(ud, e->u.match.scrut, false);
    for (int i = 0; i < e->u.match.nclauses; i++) {
      pattern_binders(e->u.match.clauses[i].pat, fn, ud);
      fn(ud, e->u.match.clauses[i].body, false);
    }
    break;
  case EXPR_REF_NEW: fn(ud, e->u.ref_new.value, false); break;
  case EXPR_REF_READ: fn(ud, e->u.ref_read.ref, false); break;
  case EXPR_REF_WRITE:
    fn(ud, e->u.ref_write.ref, false);
    fn(ud, e->u.ref_write.value, false);
    break;
  default: break;
  }
}

/* A work item: a node, whether it sits in a binder position, and its
** function-nesting depth relative to the root. */
typedef struct Item {
  Expr *e;
  bool binder;
  int depth;
} Item;

typedef struct Walk {
  Vec(Item) stack;
  Vec(Item) kids; /* scratch: children of one node, reversed onto the stack */
  int depth;
} Walk;

static void collect_kid(void *ud, Expr *child, bool binder) {
  Walk *w = ud;
  Item it = {child, binder, w->depth};
  VEC_PUSH(&w->kids, it);
}

/* Pushes e's children in reverse so that they pop in order. */
static void push_children(Walk *w, Item it) {
  w->kids.len = 0;
  w->depth = it.depth + (it.e->kind == EXPR_FUNC ? 1 : 0);
  children(it.e, collect_kid, w);
  for (int i = w->kids.len - 1; i >= 0; i--) VEC_PUSH(&w->stack, w->kids.data[i]);
}

/* Analyses of one function: locals (depth 0 binders) and free variables. */
static void analyse(Cg *cg, CFunc *F) {
  grow_ids(cg);
  uint32_t bound = ++cg->gen; /* stamps: bound inside F (any depth) */
  Walk w = {0};
  for (int i = 0; i < F->fn->u.func.nparams; i++) {
    Expr *p = F->fn->u.func.params[i];
    VEC_PUSH(&F->locals, p);
    cg->mark[p->id] = bound;
  }
  Item root = {F->fn->u.func.body, false, 0};
  VEC_PUSH(&w.stack, root);
  EVec uses = {0};
  while (w.stack.len) {
    Item it = VEC_POP(&w.stack);
    Expr *e = it.e;
    if (e->kind == EXPR_VAR) {
      if (it.binder) {
        cg->mark[e->id] = bound;
        if (it.depth == 0) VEC_PUSH(&F->locals, e);
      } else {
        VEC_PUSH(&uses, e);
      }
      continue;
    }
    if (e->kind == EXPR_FUNC && is_primitive(e)) continue; /* its params and body are the kernel's */
    push_children(&w, it);
  }
  /* Uses are in pre-order; a use is free when its binder was not met in F.
  ** A use always comes after its binder in pre-order when both are in F. */
  uint32_t seen = ++cg->gen;
  for (int i = 0; i < uses.len; i++) {
    Expr *v = uses.data[i];
    if (cg->mark[v->id] == bound || cg->mark[v->id] == seen) continue;
    cg->mark[v->id] = seen;
    if (v == F->self_var) continue;
    VEC_PUSH(&F->fvs, v);
  }
  VEC_FREE(&uses);
  VEC_FREE(&w.stack);
  VEC_FREE(&w.kids);
}

static CFunc *new_func(Cg *cg, Expr *fn, GlobalDef *g) {
  CFunc *F = rly_xcalloc(1, sizeof *F);
  F->fn = fn;
  F->g = g;
  F->index = cg->funcs.len;
  F->group = -1;
  VEC_PUSH(&cg->funcs, F);
  grow_ids(cg);
  cg->func_of[fn->id] = F->index + 1;
  return F;
}

static CFunc *func_of(Cg *cg, const Expr *fn) {
  if (fn->id >= cg->nids || !cg->func_of[fn->id]) return NULL;
  return cg->funcs.data[cg->func_of[fn->id] - 1];
}

static void sanitize(const char *s, char *out, size_t n) {
  size_t k = 0;
  for (; *s && k + 1 < n; s++) {
    char c = *s;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out[k++] = ok ? c : '_';
  }
  out[k] = 0;
}

/* Finds every non-primitive function literal under the defs, and the let
** variables bound to them (candidate self references). */
static void collect_funcs(Cg *cg) {
  for (int d = 0; d < cg->m->ndefs; d++) {
    GlobalDef *g = cg->m->defs[d];
    CFunc *F = new_func(cg, g->func, g);
    char nm[80];
    sanitize(g->name->text, nm, sizeof nm);
    snprintf(F->cname, sizeof F->cname, "G%d_%s", d, nm);
    snprintf(F->where, sizeof F->where, "@%s", g->name->text);
  }
  Walk w = {0};
  for (int d = 0; d < cg->m->ndefs; d++) {
    Item root = {cg->m->defs[d]->func->u.func.body, false, 0};
    VEC_PUSH(&w.stack, root);
    while (w.stack.len) {
      Item it = VEC_POP(&w.stack);
      Expr *e = it.e;
      if (e->kind == EXPR_FUNC) {
        if (is_primitive(e)) continue;
        CFunc *F = new_func(cg, e, NULL);
        char at[200];
        where_text(cg, e->span, at, sizeof at);
        snprintf(F->cname, sizeof F->cname, "F%d", F->index);
        snprintf(F->where, sizeof F->where, "fn at %s", at);
      }
      push_children(&w, it);
    }
  }
  /* Self variables: `let %f = fn ... %f ...`. */
  for (int d = 0; d < cg->m->ndefs; d++) {
    Item root = {cg->m->defs[d]->func->u.func.body, false, 0};
    VEC_PUSH(&w.stack, root);
    while (w.stack.len) {
      Item it = VEC_POP(&w.stack);
      Expr *e = it.e;
      if (e->kind == EXPR_FUNC && is_primitive(e)) continue;
      if (e->kind == EXPR_LET && e->u.let.value->kind == EXPR_FUNC) {
        CFunc *F = func_of(cg, e->u.let.value);
        if (F) F->self_var = e->u.let.var;
      }
      push_children(&w, it);
    }
  }
  VEC_FREE(&w.stack);
  VEC_FREE(&w.kids);
  for (int i = 0; i < cg->funcs.len; i++) analyse(cg, cg->funcs.data[i]);
}

/* {==== Groups of globals that tail-call each other ====} */

/* Appends the globals called in tail position in body. */
static void tail_calls(Expr *body, EVec *out) {
  EVec todo = {0};
  VEC_PUSH(&todo, body);
  while (todo.len) {
    Expr *e = VEC_POP(&todo);
    while (e->kind == EXPR_LET && e->u.let.body != e->u.let.var) e = e->u.let.body;
    if (e->kind != EXPR_LET) continue;
    Expr *v = e->u.let.value;
    if (v->kind == EXPR_CALL && v->u.call.callee->kind == EXPR_GLOBAL) VEC_PUSH(out, v->u.call.callee);
    else if (v->kind == EXPR_IF) {
      VEC_PUSH(&todo, v->u.if_.else_);
      VEC_PUSH(&todo, v->u.if_.then_);
    } else if (v->kind == EXPR_MATCH) {
      for (int i = v->u.match.nclauses - 1; i >= 0; i--) VEC_PUSH(&todo, v->u.match.clauses[i].body);
    } else if (v->kind == EXPR_LET) {
      VEC_PUSH(&todo, v);
    }
  }
  VEC_FREE(&todo);
}

typedef struct Tarjan {
  Cg *cg;
  int *index, *low, *onstack, next;
  Vec(int) stack;
  EVec *edges; /* per def: tail-called globals */
} Tarjan;

static void strongconnect(Tarjan *T, int v) {
  T->index[v] = T->low[v] = T->next++;
  VEC_PUSH(&T->stack, v);
  T->onstack[v] = 1;
  for (int k = 0; k < T->edges[v].len; k++) {
    GlobalDef *g = T->edges[v].data[k]->u.global.def;
    CFunc *F = g ? func_of(T->cg, g->func) : NULL;
    if (!F) continue;
    int w = F->index;
    if (T->index[w] < 0) {
      strongconnect(T, w);
      if (T->low[w] < T->low[v]) T->low[v] = T->low[w];
    } else if (T->onstack[w] && T->index[w] < T->low[v]) {
      T->low[v] = T->index[w];
    }
  }
  if (T->low[v] == T->index[v]) {
    Group *G = rly_xcalloc(1, sizeof *G);
    int gi = T->cg->groups.len;
    VEC_PUSH(&T->cg->groups, G);
    int w;
    do {
      w = VEC_POP(&T->stack);
      T->onstack[w] = 0;
      CFunc *F = T->cg->funcs.data[w];
      F->group = gi;
      VEC_PUSH(&G->members, F);
    } while (w != v);
    /* Members in def order (deterministic). */
    for (int i = 1; i < G->members.len; i++)
      for (int j = i; j > 0 && G->members.data[j - 1]->index > G->members.data[j]->index; j--) {
        CFunc *t = G->members.data[j];
        G->members.data[j] = G->members.data[j - 1];
        G->members.data[j - 1] = t;
      }
    for (int i = 0; i < G->members.len; i++) G->members.data[i]->member = i;
    if (G->members.len == 1) snprintf(G->cname, sizeof G->cname, "%s", G->members.data[0]->cname);
    else snprintf(G->cname, sizeof G->cname, "GRP%d", gi);
  }
}

static void make_groups(Cg *cg) {
  int n = cg->m->ndefs;
  Tarjan T = {cg, rly_xcalloc((size_t)n + 1, sizeof(int)), rly_xcalloc((size_t)n + 1, sizeof(int)),
              rly_xcalloc((size_t)n + 1, sizeof(int)), 0, {0}, rly_xcalloc((size_t)n + 1, sizeof(EVec))};
  for (int i = 0; i < n; i++) {
    T.index[i] = -1;
    tail_calls(cg->m->defs[i]->func->u.func.body, &T.edges[i]);
  }
  for (int i = 0; i < n; i++)
    if (T.index[i] < 0) strongconnect(&T, i);
  for (int i = 0; i < n; i++) VEC_FREE(&T.edges[i]);
  free(T.edges);
  free(T.index);
  free(T.low);
  free(T.onstack);
  VEC_FREE(&T.stack);
}

/* {==== Constants ====} */

static void blob_bytes(StrBuf *b, const unsigned char *p, size_t n) {
  /* 32 bytes per source line; every non-printable byte as a 3-digit octal
  ** escape (never absorbs a following digit). */
  for (size_t i = 0; i < n; i += 32) {
    sb_puts(b, "  \"");
    for (size_t k = i; k < n && k < i + 32; k++) {
      unsigned char c = p[k];
      if (c >= 32 && c < 127 && c != '"' && c != '\\' && c != '?') sb_putc(b, (char)c);
      else sb_printf(b, "\\%03o", c);
    }
    sb_puts(b, "\"\n");
  }
}

static size_t blob_len(const Cg *cg) {
  size_t n = 0;
  for (int i = 0; i < cg->constdata.len; i++) n = ((n + 63) & ~(size_t)63) + cg->constdata.data[i]->nbytes;
  return n;
}

/* The C expression of constant e: a static tensor object. */
static void const_ref(Cg *cg, StrBuf *out, const Expr *e) {
  const ConstData *c = e->u.constant.value;
  int k = -1;
  for (int i = 0; i < cg->constdata.len && k < 0; i++)
    if (cg->constdata.data[i] == c) k = i;
  if (k < 0) {
    size_t off = (blob_len(cg) + 63) & ~(size_t)63;
    k = cg->constdata.len;
    VEC_PUSH(&cg->constdata, c);
    int nd = c->ndim;
    /* A real rlyrt_tensor (generated code reads every object through its
    ** own type), its shape in an array of its own. */
    if (nd) {
      sb_printf(&cg->consts, "static const int64_t C%d_shape[] = {", k);
      for (int i = 0; i < nd; i++) sb_printf(&cg->consts, "%s%lld", i ? ", " : "", (long long)c->shape[i]);
      sb_puts(&cg->consts, "};\n");
    }
    sb_printf(&cg->consts,
              "static const rlyrt_tensor C%d = {{RLYRT_REFCOUNT_STATIC, RLYRT_TENSOR, 0}, "
              "{(void *)(RC_blob + %zu), {kDLCPU, 0}, %d, {%u, %u, %u}, ",
              k, off, nd, c->dtype.code, c->dtype.bits, c->dtype.lanes);
    if (nd) sb_printf(&cg->consts, "(int64_t *)C%d_shape, NULL, 0}};\n", k);
    else sb_puts(&cg->consts, "NULL, NULL, 0}};\n");
  }
  sb_printf(out, "(rlyrt_object *)&C%d.obj", k);
}

/* {==== Argument checkers ====} */

static int checker_for(Cg *cg, const Type *t);

/* t with the type parameters of adt replaced by args. */
static Type *subst(Cg *cg, Type *t, Type **tparams, Type **args, int n) {
  if (!t) return t;
  switch (t->kind) {
  case TYPE_VAR:
    for (int i = 0; i < n; i++)
      if (tparams[i] == t || (tparams[i]->u.var.name == t->u.var.name)) return args[i];
    return t;
  case TYPE_TUPLE: {
    Type *r = ir_type_new(cg->m, TYPE_TUPLE, t->span);
    r->u.tuple.n = t->u.tuple.n;
    r->u.tuple.fields = ARENA_ARRAY(cg->m->arena, Type *, t->u.tuple.n ? t->u.tuple.n : 1);
    for (int i = 0; i < t->u.tuple.n; i++) r->u.tuple.fields[i] = subst(cg, t->u.tuple.fields[i], tparams, args, n);
    return r;
  }
  case TYPE_CALL: {
    Type *r = ir_type_new(cg->m, TYPE_CALL, t->span);
    r->u.call = t->u.call;
    r->u.call.args = ARENA_ARRAY(cg->m->arena, Type *, t->u.call.nargs ? t->u.call.nargs : 1);
    for (int i = 0; i < t->u.call.nargs; i++) r->u.call.args[i] = subst(cg, t->u.call.args[i], tparams, args, n);
    return r;
  }
  case TYPE_REF: {
    Type *r = ir_type_new(cg->m, TYPE_REF, t->span);
    r->u.ref.elem = subst(cg, t->u.ref.elem, tparams, args, n);
    return r;
  }
  case TYPE_FUNC: {
    Type *r = ir_type_new(cg->m, TYPE_FUNC, t->span);
    r->u.func = t->u.func;
    r->u.func.params = ARENA_ARRAY(cg->m->arena, Type *, t->u.func.nparams ? t->u.func.nparams : 1);
    for (int i = 0; i < t->u.func.nparams; i++)
      r->u.func.params[i] = subst(cg, t->u.func.params[i], tparams, args, n);
    r->u.func.ret = subst(cg, t->u.func.ret, tparams, args, n);
    return r;
  }
  default: return t;
  }
}

static char *type_string(const Type *t) {
  StrBuf sb = {0};
  if (t) ir_print_type(&sb, t);
  else sb_puts(&sb, "?");
  char *s = rly_xmalloc(sb.len + 1);
  memcpy(s, sb.data ? sb.data : "", sb.len);
  s[sb.len] = 0;
  sb_free(&sb);
  return s;
}

/* Does t mention a type variable (or a type not known)? */
static bool has_type_var(const Type *t) {
  if (!t) return true;
  switch (t->kind) {
  case TYPE_TENSOR: return false;
  case TYPE_TUPLE:
    for (int i = 0; i < t->u.tuple.n; i++)
      if (has_type_var(t->u.tuple.fields[i])) return true;
    return false;
  case TYPE_FUNC:
    if (t->u.func.ntparams) return true;
    for (int i = 0; i < t->u.func.nparams; i++)
      if (has_type_var(t->u.func.params[i])) return true;
    return has_type_var(t->u.func.ret);
  case TYPE_CALL:
    for (int i = 0; i < t->u.call.nargs; i++)
      if (has_type_var(t->u.call.args[i])) return true;
    return false;
  case TYPE_REF: return has_type_var(t->u.ref.elem);
  default: return true;
  }
}

static int checker_for(Cg *cg, const Type *t) {
  char *key = type_string(t);
  for (int i = 0; i < cg->checker_keys.len; i++)
    if (strcmp(cg->checker_keys.data[i], key) == 0) {
      free(key);
      return i;
    }
  VEC_PUSH(&cg->checker_keys, key);
  VEC_PUSH(&cg->checker_types, t);
  sb_printf(&cg->protos, "static rlyrt_status CHK%d(const rlyrt_object *v, const char *what);\n",
            cg->checker_keys.len - 1);
  return cg->checker_keys.len - 1;
}

static void emit_checker(Cg *cg, int k) {
  const Type *t = cg->checker_types.data[k];
  StrBuf *o = &cg->checkers;
  const char *key = cg->checker_keys.data[k];
  sb_printf(o, "static rlyrt_status CHK%d(const rlyrt_object *v, const char *what) {\n", k);
  sb_puts(o, "  static const char expected[] = ");
  lower_cstring(o, key, strlen(key));
  sb_puts(o, ";\n");
  switch (t ? t->kind : TYPE_INCOMPLETE) {
  case TYPE_TENSOR: {
    DType dt = t->u.tensor.dtype;
    if (t->u.tensor.ndim) {
      sb_puts(o, "  static const int64_t shape[] = {");
      for (int i = 0; i < t->u.tensor.ndim; i++)
        sb_printf(o, "%s%lld", i ? ", " : "", (long long)t->u.tensor.shape[i]);
      sb_puts(o, "};\n");
    }
    sb_printf(o, "  return rlyrt_check_tensor(v, (DLDataType){%u, %u, %u}, %d, %s, what, expected);\n", dt.code,
              dt.bits, dt.lanes, t->u.tensor.ndim, t->u.tensor.ndim ? "shape" : "NULL");
    break;
  }
  case TYPE_TUPLE: {
    sb_printf(o, "  rlyrt_status s = rlyrt_check_kind(v, RLYRT_TUPLE, %d, what, expected);\n", t->u.tuple.n);
    for (int i = 0; i < t->u.tuple.n; i++) {
      int c = checker_for(cg, t->u.tuple.fields[i]);
      sb_printf(o, "  if (s == RLYRT_OK) s = CHK%d(RLYRT_AS_TUPLE(v)->fields[%d], what);\n", c, i);
    }
    sb_puts(o, "  return s;\n");
    break;
  }
  case TYPE_FUNC:
    if (has_type_var(t)) sb_puts(o, "  (void)expected;\n");
    sb_printf(o, "  return rlyrt_check_closure(v, %d, %s, what);\n", t->u.func.nparams,
              has_type_var(t) ? "NULL" : "expected");
    break;
  case TYPE_REF: {
    int c = checker_for(cg, t->u.ref.elem);
    sb_puts(o, "  rlyrt_status s = rlyrt_check_kind(v, RLYRT_REF, -1, what, expected);\n");
    sb_printf(o, "  return s == RLYRT_OK ? CHK%d(RLYRT_AS_REF(v)->value, what) : s;\n", c);
    break;
  }
  case TYPE_CALL: {
    const TypeDef *adt = t->u.call.adt;
    if (!adt || adt->is_extern || adt->nctors == 0) {
      sb_puts(o, "  return rlyrt_check_kind(v, RLYRT_ADT, -1, what, expected);\n");
      break;
    }
    /* Loop along the last field when it has this very type (lists). */
    sb_puts(o, "  for (;;) {\n    rlyrt_status s = rlyrt_check_kind(v, RLYRT_ADT, -1, what, expected);\n");
    sb_puts(o, "    if (s != RLYRT_OK) return s;\n    const rlyrt_adt *a = RLYRT_AS_ADT(v);\n");
    sb_puts(o, "    switch (a->tag) {\n");
    for (int c = 0; c < adt->nctors; c++) {
      const Ctor *ct = adt->ctors[c];
      sb_printf(o, "    case %d:\n", c);
      sb_printf(o, "      if (a->n != %d) return rlyrt_error(RLYRT_E_ARG, \"%%s expects %%s, got %%s with %%d fields\", "
                   "what, expected, a->ctor, (int)a->n);\n", ct->nfields);
      int loop_field = -1;
      for (int f = 0; f < ct->nfields; f++) {
        Type *ft = subst(cg, ct->fields[f], adt->tparams, t->u.call.args,
                         t->u.call.nargs < adt->ntparams ? t->u.call.nargs : adt->ntparams);
        int ck = checker_for(cg, ft);
        if (f == ct->nfields - 1 && ck == k) {
          loop_field = f;
          break;
        }
        sb_printf(o, "      if ((s = CHK%d(a->fields[%d], what)) != RLYRT_OK) return s;\n", ck, f);
      }
      if (loop_field >= 0) sb_printf(o, "      v = a->fields[%d];\n      continue;\n", loop_field);
      else sb_puts(o, "      return RLYRT_OK;\n");
    }
    sb_puts(o, "    default:\n      return rlyrt_error(RLYRT_E_ARG, \"%s expects %s, got an ADT value of another type\", "
               "what, expected);\n    }\n  }\n");
    break;
  }
  default: /* type variables and anything else: any value */
    sb_puts(o, "  if (!v) return rlyrt_error(RLYRT_E_ARG, \"%s expects %s, got NULL\", what, expected);\n");
    sb_puts(o, "  return RLYRT_OK;\n");
    break;
  }
  sb_puts(o, "}\n\n");
}

/* The argument checker of function F: "static rlyrt_status NAME_check(...)". */
static void emit_function_checker(Cg *cg, CFunc *F) {
  StrBuf body = {0};
  for (int i = 0; i < F->fn->u.func.nparams; i++) {
    Expr *p = F->fn->u.func.params[i];
    int c = checker_for(cg, p->type);
    char what[512];
    snprintf(what, sizeof what, "argument %d (%%%s) of %s", i + 1, p->u.var.name ? p->u.var.name->text : "_",
             F->where);
    sb_printf(&body, "  if ((s = CHK%d(args[%d], ", c, i);
    lower_cstring(&body, what, strlen(what));
    sb_puts(&body, ")) != RLYRT_OK) return s;\n");
  }
  sb_printf(&cg->checkers, "static rlyrt_status %s_check(rlyrt_object *const *args, int32_t nargs) {\n", F->cname);
  sb_puts(&cg->checkers, "  (void)args;\n  (void)nargs;\n");
  if (F->fn->u.func.nparams) sb_puts(&cg->checkers, "  rlyrt_status s;\n");
  sb_putn(&cg->checkers, body.data ? body.data : "", body.len);
  sb_puts(&cg->checkers, "  return RLYRT_OK;\n}\n\n");
  sb_free(&body);
}

/* {==== Kernels ====} */

/* The kernel of Primitive function prim: its name in name. Identical
** kernels (same operator, attributes and types) are emitted once: the text
** is made with a placeholder name, compared with the kernels so far, and
** the placeholder replaced by the kernel's name. */
static void kernel_for(Cg *cg, Expr *prim, char *name, size_t n) {
  static const char placeholder[] = "K__X";
  char where[256], err[256];
  where_text(cg, prim->span, where, sizeof where);
  StrBuf text = {0};
  if (!lower_loops(&text, placeholder, prim, where) &&
      !lower_reference(cg->L, &cg->kdecls, &text, placeholder, prim, where, err, sizeof err)) {
    cg_error(cg, prim->span, "cannot compile this operator call: %s", err);
    sb_free(&text);
    snprintf(name, n, "K_none");
    return;
  }
  const char *s = sb_str(&text);
  for (int i = 0; i < cg->kernel_texts.len; i++)
    if (strcmp(cg->kernel_texts.data[i], s) == 0) {
      snprintf(name, n, "K%d", i);
      sb_free(&text);
      return;
    }
  snprintf(name, n, "K%d", cg->kernel_texts.len);
  for (const char *p = s, *q; *p; p = q + strlen(placeholder)) {
    q = strstr(p, placeholder);
    if (!q) {
      sb_puts(&cg->kernels, p);
      break;
    }
    sb_putn(&cg->kernels, p, (size_t)(q - p));
    sb_puts(&cg->kernels, name);
  }
  sb_puts(&cg->kernels, "\n");
  VEC_PUSH(&cg->kernel_texts, text.data); /* owned by the table now */
}

/* {==== Function bodies ====} */

static int type_index(const Cg *cg, const TypeDef *td) {
  for (int i = 0; i < cg->m->ntypes; i++)
    if (cg->m->types[i] == td) return i;
  return -1;
}

/* The C expression (borrowed rlyrt_object *) of atom e in the current function. */
static void atom(Cg *cg, StrBuf *out, Expr *e) {
  CFunc *F = cg->cur;
  switch (e->kind) {
  case EXPR_VAR:
    if (F->self_var == e) {
      sb_puts(out, "(rlyrt_object *)self");
      return;
    }
    for (int i = 0; i < F->fvs.len; i++)
      if (F->fvs.data[i] == e) {
        sb_printf(out, "self->env[%d]", i);
        return;
      }
    sb_printf(out, "v%u", e->id);
    return;
  case EXPR_CONST: const_ref(cg, out, e); return;
  case EXPR_GLOBAL: {
    CFunc *G = e->u.global.def ? func_of(cg, e->u.global.def->func) : NULL;
    if (!G) {
      cg_error(cg, e->span, "unknown global @%s", e->u.global.name->text);
      sb_puts(out, "NULL");
      return;
    }
    G->closure_used = true;
    sb_printf(out, "(rlyrt_object *)&%s_closure", G->cname);
    return;
  }
  case EXPR_CTOR: {
    const Ctor *c = e->u.ctor.ctor;
    bool have = false;
    for (int i = 0; i < cg->ctor_values.len && !have; i++) have = cg->ctor_values.data[i] == c;
    if (!have) VEC_PUSH(&cg->ctor_values, c);
    sb_printf(out, "(rlyrt_object *)&CT%d_%d_closure", type_index(cg, c->adt), c->tag);
    return;
  }
  case EXPR_OP:
    cg_error(cg, e->span, "the operator %s is used as a value: the compiler only calls operators", e->u.op.op->name);
    sb_puts(out, "NULL");
    return;
  default:
    cg_error(cg, e->span, "internal error: %s where the A-normal form has an atom", expr_kind_names[e->kind]);
    sb_puts(out, "NULL");
    return;
  }
}

static void indent(StrBuf *o, int n) {
  for (int i = 0; i < n; i++) sb_puts(o, "  ");
}

/* {==== Unboxed scalars ====}
** A variable holding a 0-d tensor of a dtype loops handle can also live as
** a C scalar s<ID>: parameters of such types (read once on entry; a tail
** call jumping back assigns the scalar, no tensor), and let variables whose
** value is an elementwise operator on scalars (computed in C, no kernel
** call, no allocation). Its tensor v<ID> is then made only when a use needs
** a value object (a kernel argument, a tuple field, a call, the result),
** once: RC_BOX leaves an existing one alone. */

static const char *scalar_ctype(const Type *t) {
  if (!t || t->kind != TYPE_TENSOR || t->u.tensor.ndim != 0) return NULL;
  return lower_scalar_ctype(t->u.tensor.dtype);
}

/* Is var read from the current function's own locals (not its
** environment or self)? */
static bool is_local(const Cg *cg, const Expr *var) {
  const CFunc *F = cg->cur;
  if (var == F->self_var) return false;
  for (int i = 0; i < F->fvs.len; i++)
    if (F->fvs.data[i] == var) return false;
  return true;
}

static bool unboxed(const Cg *cg, const Expr *a) {
  return a->kind == EXPR_VAR && cg->uvar[a->id] && is_local(cg, a);
}

static void make_unboxed(Cg *cg, Expr *v) {
  if (cg->uvar[v->id]) return;
  cg->uvar[v->id] = 1;
  VEC_PUSH(&cg->uvars, v);
}

static void atom(Cg *cg, StrBuf *out, Expr *e);

/* The value of the 0-d atom a as a C scalar. */
static void scalar_of(Cg *cg, StrBuf *o, Expr *a) {
  if (unboxed(cg, a)) {
    sb_printf(o, "s%u", a->id);
    return;
  }
  sb_printf(o, "(*(const %s *)RLYRT_AS_TENSOR(", scalar_ctype(a->type));
  atom(cg, o, a);
  sb_puts(o, ")->dl.data)");
}

/* Makes sure atom a has its tensor when it is an unboxed variable. */
static void need_boxed(Cg *cg, StrBuf *o, int ind, Expr *a) {
  if (!unboxed(cg, a)) return;
  DType dt = a->type->u.tensor.dtype;
  indent(o, ind);
  sb_printf(o, "RC_BOX(v%u, s%u, %s, %u, %u);\n", a->id, a->id, scalar_ctype(a->type), dt.code, dt.bits);
  cg->used_fail = true;
}

static void need_boxed_all(Cg *cg, StrBuf *o, int ind, Expr **as, int n) {
  for (int i = 0; i < n; i++) need_boxed(cg, o, ind, as[i]);
}

/* Integer division and modulo on scalars, as the reference kernels do them
** (computed in 64 bits, a zero divisor an error). */
static bool int_division(Cg *cg, StrBuf *o, int ind, Expr *call, const char *dest) {
  const Expr *fn = call->u.call.callee;
  const Expr *body = fn->u.func.body;
  if (body->kind != EXPR_CALL || body->u.call.callee->kind != EXPR_OP || call->u.call.nargs != 2) return false;
  const char *op = body->u.call.callee->u.op.op->name;
  bool is_div = strcmp(op, "divide") == 0 || strcmp(op, "trunc_divide") == 0 || strcmp(op, "floor_divide") == 0;
  bool is_mod = strcmp(op, "mod") == 0 || strcmp(op, "trunc_mod") == 0 || strcmp(op, "floor_mod") == 0;
  if (!is_div && !is_mod) return false;
  const Type *ta = call->u.call.args[0]->type, *tb = call->u.call.args[1]->type, *tr = call->type;
  if (!scalar_ctype(ta) || !scalar_ctype(tb) || !scalar_ctype(tr)) return false;
  DType da = ta->u.tensor.dtype;
  if (!dtype_eq(da, tb->u.tensor.dtype) || !dtype_eq(da, tr->u.tensor.dtype) || dtype_is_bool(da)) return false;
  if (da.code != DT_INT && da.code != DT_UINT) return false;
  bool sg = da.code == DT_INT;
  const char *w = sg ? "int64_t" : "uint64_t";
  char where[256];
  where_text(cg, call->span, where, sizeof where);
  indent(o, ind);
  sb_printf(o, "{\n");
  indent(o, ind + 1);
  sb_printf(o, "const %s x = (%s)", w, w);
  scalar_of(cg, o, call->u.call.args[0]);
  sb_printf(o, ", y = (%s)", w);
  scalar_of(cg, o, call->u.call.args[1]);
  sb_puts(o, ";\n");
  indent(o, ind + 1);
  sb_printf(o, "if (y == 0) { st = rlyrt_error(RLYRT_E_RUNTIME, \"%%s: %s: division by zero\", ", op);
  lower_cstring(o, where, strlen(where));
  sb_puts(o, "); goto fail; }\n");
  cg->used_fail = true;
  indent(o, ind + 1);
  if (!sg) {
    sb_printf(o, "%s = (%s)(x %s y);\n", dest, scalar_ctype(tr), is_div ? "/" : "%");
  } else {
    bool floor = op[0] == 'f';
    sb_puts(o, "int64_t r;\n");
    indent(o, ind + 1);
    sb_printf(o, "if (y == -1) r = %s;\n", is_div ? "(int64_t)(0 - (uint64_t)x)" : "0");
    indent(o, ind + 1);
    if (!floor) {
      sb_printf(o, "else r = x %s y;\n", is_div ? "/" : "%");
    } else if (is_div) {
      sb_puts(o, "else {\n");
      indent(o, ind + 2);
      sb_puts(o, "int64_t q = x / y, m = x % y;\n");
      indent(o, ind + 2);
      sb_puts(o, "r = m != 0 && ((m < 0) != (y < 0)) ? q - 1 : q;\n");
      indent(o, ind + 1);
      sb_puts(o, "}\n");
    } else {
      sb_puts(o, "else {\n");
      indent(o, ind + 2);
      sb_puts(o, "int64_t m = x % y;\n");
      indent(o, ind + 2);
      sb_puts(o, "r = m != 0 && ((m < 0) != (y < 0)) ? m + y : m;\n");
      indent(o, ind + 1);
      sb_puts(o, "}\n");
    }
    indent(o, ind + 1);
    sb_printf(o, "%s = (%s)r;\n", dest, scalar_ctype(tr));
  }
  indent(o, ind);
  sb_puts(o, "}\n");
  return true;
}

/* Emits let var = call (a Primitive call) unboxed when it is elementwise
** on scalars. Returns false (emitting nothing) otherwise. */
static bool emit_scalar_let(Cg *cg, StrBuf *o, int ind, Expr *var, Expr *v) {
  if (v->kind != EXPR_CALL || v->u.call.callee->kind != EXPR_FUNC || !is_primitive(v->u.call.callee)) return false;
  if (!scalar_ctype(var->type)) return false;
  int n = v->u.call.nargs;
  if (n > 3) return false;
  for (int i = 0; i < n; i++)
    if (!scalar_ctype(v->u.call.args[i]->type)) return false;
  char dest[32];
  snprintf(dest, sizeof dest, "s%u", var->id);
  StrBuf ops[3] = {{0}, {0}, {0}};
  const char *opv[3] = {NULL, NULL, NULL};
  for (int i = 0; i < n; i++) {
    scalar_of(cg, &ops[i], v->u.call.args[i]);
    opv[i] = sb_str(&ops[i]);
  }
  bool ok = lower_scalar(o, v->u.call.callee, opv, dest, 2 * ind) || int_division(cg, o, ind, v, dest);
  for (int i = 0; i < 3; i++) sb_free(&ops[i]);
  if (ok) make_unboxed(cg, var);
  return ok;
}

/* "rlyrt_object *aN[] = {...};" for the arguments; returns N or -1 for none. */
static int args_array(Cg *cg, StrBuf *o, int ind, Expr **args, int n) {
  if (n == 0) return -1;
  int k = cg->tmp++;
  indent(o, ind);
  sb_printf(o, "rlyrt_object *a%d[] = {", k);
  for (int i = 0; i < n; i++) {
    sb_puts(o, i ? ", " : "");
    atom(cg, o, args[i]);
  }
  sb_puts(o, "};\n");
  return k;
}

/* Can argument i of a direct call of D, the atom a, go in a box on the
** caller's stack? D's parameter must be a scalar (it keeps only the value)
** and a an unboxed local. */
static bool stack_boxable(const Cg *cg, const CFunc *D, int i, const Expr *a) {
  return i < D->fn->u.func.nparams && scalar_ctype(D->fn->u.func.params[i]->type) && unboxed(cg, a);
}

/* args_array for a direct call of D: unboxed scalars without their tensor
** go in stack boxes. */
static int args_array_direct(Cg *cg, StrBuf *o, int ind, Expr **args, int n, const CFunc *D) {
  if (n == 0) return -1;
  int k = cg->tmp++;
  for (int i = 0; i < n; i++) {
    if (!stack_boxable(cg, D, i, args[i])) continue;
    DType dt = args[i]->type->u.tensor.dtype;
    indent(o, ind);
    sb_printf(o, "rlyrt_tensor b%d_%d = {{RLYRT_REFCOUNT_STATIC, RLYRT_TENSOR, 0}, {&s%u, {kDLCPU, 0}, 0, {%u, %u, 1}, "
                 "NULL, NULL, 0}};\n", k, i, args[i]->id, dt.code, dt.bits);
  }
  indent(o, ind);
  sb_printf(o, "rlyrt_object *a%d[] = {", k);
  for (int i = 0; i < n; i++) {
    sb_puts(o, i ? ", " : "");
    if (stack_boxable(cg, D, i, args[i])) sb_printf(o, "v%u ? v%u : &b%d_%d.obj", args[i]->id, args[i]->id, k, i);
    else atom(cg, o, args[i]);
  }
  sb_puts(o, "};\n");
  return k;
}

static void args_name(StrBuf *o, int k) {
  if (k < 0) sb_puts(o, "NULL");
  else sb_printf(o, "a%d", k);
}

static void try_call(Cg *cg, StrBuf *o, int ind) {
  indent(o, ind);
  sb_puts(o, "if (st != RLYRT_OK) goto fail;\n");
  cg->used_fail = true;
}

static void emit_block(Cg *cg, StrBuf *o, int ind, Expr *body, const char *dest, bool tail);

/* Releases every local of the current group and clears it. */
static void release_all(Cg *cg, StrBuf *o, int ind) {
  Group *G = cg->curgroup;
  for (int m = 0; m < G->members.len; m++) {
    CFunc *F = G->members.data[m];
    for (int i = 0; i < F->locals.len; i++) {
      indent(o, ind);
      sb_printf(o, "RC_DROP(v%u);\n", F->locals.data[i]->id);
    }
  }
}

/* The tail call of member T of the current group with args: a jump. */
static void emit_jump(Cg *cg, StrBuf *o, int ind, CFunc *T, Expr **args, int n) {
  /* A parameter that lives unboxed takes the scalar (and the tensor if
  ** there is one); the others need their argument's tensor. */
  for (int i = 0; i < n; i++)
    if (!cg->uvar[T->fn->u.func.params[i]->id]) need_boxed(cg, o, ind, args[i]);
  indent(o, ind);
  sb_puts(o, "{\n");
  for (int i = 0; i < n; i++) {
    Expr *p = T->fn->u.func.params[i];
    indent(o, ind + 1);
    sb_printf(o, "rlyrt_object *n%d = RC_retain(", i);
    atom(cg, o, args[i]);
    sb_puts(o, ");\n");
    if (cg->uvar[p->id]) {
      indent(o, ind + 1);
      sb_printf(o, "const %s ns%d = ", scalar_ctype(p->type), i);
      scalar_of(cg, o, args[i]);
      sb_puts(o, ";\n");
    }
  }
  release_all(cg, o, ind + 1);
  for (int i = 0; i < n; i++) {
    Expr *p = T->fn->u.func.params[i];
    indent(o, ind + 1);
    sb_printf(o, "v%u = n%d;\n", p->id, i);
    if (cg->uvar[p->id]) {
      indent(o, ind + 1);
      sb_printf(o, "s%u = ns%d;\n", p->id, i);
    }
  }
  indent(o, ind + 1);
  sb_printf(o, "goto L%d;\n", T->member);
  cg->used_label[T->member] = true;
  indent(o, ind);
  sb_puts(o, "}\n");
}

/* Is the call e (in tail position of the current function) a call of a
** member of the current group? Returns the member or NULL. */
static CFunc *jump_target(Cg *cg, const Expr *e) {
  const Expr *callee = e->u.call.callee;
  CFunc *F = cg->cur;
  if (callee->kind == EXPR_VAR && F->self_var && callee == F->self_var) return F;
  if (callee->kind == EXPR_GLOBAL && callee->u.global.def) {
    CFunc *T = func_of(cg, callee->u.global.def->func);
    if (T && F->g && T->group == F->group) return T;
  }
  return NULL;
}

/* Pattern test of p against the C expression v (a borrowed object); appends
** "cond && cond" (or "1") to o. */
static void pattern_test(StrBuf *o, const Pattern *p, const char *v, bool *any) {
  char sub[512];
  switch (p->kind) {
  case PAT_CTOR:
    sb_printf(o, "%sRLYRT_AS_ADT(%s)->tag == %d", *any ? " && " : "", v, p->u.ctor.ctor->tag);
    *any = true;
    for (int i = 0; i < p->u.ctor.n; i++) {
      snprintf(sub, sizeof sub, "RLYRT_AS_ADT(%s)->fields[%d]", v, i);
      pattern_test(o, p->u.ctor.args[i], sub, any);
    }
    break;
  case PAT_TUPLE:
    for (int i = 0; i < p->u.tuple.n; i++) {
      snprintf(sub, sizeof sub, "RLYRT_AS_TUPLE(%s)->fields[%d]", v, i);
      pattern_test(o, p->u.tuple.fields[i], sub, any);
    }
    break;
  default: break;
  }
}

static void pattern_bind(StrBuf *o, int ind, const Pattern *p, const char *v) {
  char sub[512];
  switch (p->kind) {
  case PAT_VAR:
    indent(o, ind);
    sb_printf(o, "v%u = RC_retain(%s);\n", p->u.var.var->id, v);
    break;
  case PAT_CTOR:
    for (int i = 0; i < p->u.ctor.n; i++) {
      snprintf(sub, sizeof sub, "RLYRT_AS_ADT(%s)->fields[%d]", v, i);
      pattern_bind(o, ind, p->u.ctor.args[i], sub);
    }
    break;
  case PAT_TUPLE:
    for (int i = 0; i < p->u.tuple.n; i++) {
      snprintf(sub, sizeof sub, "RLYRT_AS_TUPLE(%s)->fields[%d]", v, i);
      pattern_bind(o, ind, p->u.tuple.fields[i], sub);
    }
    break;
  default: break;
  }
}

/* The clauses of e that can match constructor tag (or all when tag < 0),
** tested in order. */
static void emit_clauses(Cg *cg, StrBuf *o, int ind, Expr *e, const char *m, int tag, const char *dest, bool tail) {
  bool first = true;
  bool closed = false;
  for (int i = 0; i < e->u.match.nclauses && !closed; i++) {
    const Pattern *p = e->u.match.clauses[i].pat;
    if (tag >= 0 && p->kind == PAT_CTOR && p->u.ctor.ctor->tag != tag) continue;
    /* Top-level constructor test is done by the switch. */
    StrBuf cond = {0};
    bool any = false;
    if (tag >= 0 && p->kind == PAT_CTOR) {
      char sub[512];
      for (int k = 0; k < p->u.ctor.n; k++) {
        snprintf(sub, sizeof sub, "RLYRT_AS_ADT(%s)->fields[%d]", m, k);
        pattern_test(&cond, p->u.ctor.args[k], sub, &any);
      }
    } else {
      pattern_test(&cond, p, m, &any);
    }
    indent(o, ind);
    if (any) sb_printf(o, "%sif (%s) {\n", first ? "" : "else ", sb_str(&cond));
    else {
      sb_printf(o, "%s{\n", first ? "" : "else ");
      closed = true; /* matches always: later clauses are unreachable here */
    }
    sb_free(&cond);
    pattern_bind(o, ind + 1, p, m);
    emit_block(cg, o, ind + 1, e->u.match.clauses[i].body, dest, tail);
    indent(o, ind);
    sb_puts(o, "}\n");
    first = false;
  }
  if (!closed) {
    char where[256];
    where_text(cg, e->span, where, sizeof where);
    indent(o, ind);
    sb_printf(o, "%s{\n", first ? "" : "else ");
    indent(o, ind + 1);
    sb_puts(o, "st = rlyrt_error(RLYRT_E_MATCH, \"%s: match");
    sb_puts(o, e->u.match.complete ? "" : "?");
    sb_puts(o, " found no clause\", ");
    lower_cstring(o, where, strlen(where));
    sb_puts(o, ");\n");
    indent(o, ind + 1);
    sb_puts(o, "goto fail;\n");
    cg->used_fail = true;
    indent(o, ind);
    sb_puts(o, "}\n");
  }
}

static const TypeDef *match_adt(const Expr *e) {
  for (int i = 0; i < e->u.match.nclauses; i++) {
    const Pattern *p = e->u.match.clauses[i].pat;
    if (p->kind == PAT_CTOR) return p->u.ctor.ctor->adt;
  }
  return NULL;
}

/* Emits the evaluation of value into dest (an owned reference). */
static void emit_value(Cg *cg, StrBuf *o, int ind, Expr *v, const char *dest, bool tail) {
  switch (v->kind) {
  case EXPR_VAR:
  case EXPR_CONST:
  case EXPR_GLOBAL:
  case EXPR_CTOR:
  case EXPR_OP:
    need_boxed(cg, o, ind, v);
    indent(o, ind);
    sb_printf(o, "%s = RC_retain(", dest);
    atom(cg, o, v);
    sb_puts(o, ");\n");
    return;
  case EXPR_TUPLE: {
    need_boxed_all(cg, o, ind, v->u.tuple.fields, v->u.tuple.n);
    int k = cg->tmp++;
    indent(o, ind);
    sb_printf(o, "rlyrt_tuple *t%d = rlyrt_tuple_new(%d);\n", k, v->u.tuple.n);
    indent(o, ind);
    sb_printf(o, "if (!t%d) { st = RLYRT_E_NOMEM; goto fail; }\n", k);
    cg->used_fail = true;
    for (int i = 0; i < v->u.tuple.n; i++) {
      indent(o, ind);
      sb_printf(o, "t%d->fields[%d] = RC_retain(", k, i);
      atom(cg, o, v->u.tuple.fields[i]);
      sb_puts(o, ");\n");
    }
    indent(o, ind);
    sb_printf(o, "%s = &t%d->obj;\n", dest, k);
    return;
  }
  case EXPR_GET_ITEM:
    indent(o, ind);
    sb_printf(o, "%s = RC_retain(RLYRT_AS_TUPLE(", dest);
    atom(cg, o, v->u.get_item.tuple);
    sb_printf(o, ")->fields[%d]);\n", v->u.get_item.index);
    return;
  case EXPR_CALL: {
    Expr *callee = v->u.call.callee;
    int n = v->u.call.nargs;
    CFunc *T = tail ? jump_target(cg, v) : NULL;
    if (T) {
      emit_jump(cg, o, ind, T, v->u.call.args, n);
      return;
    }
    /* A direct call (a global, or the closure itself) takes the unboxed
    ** scalars of its scalar parameters in boxes on this stack. */
    CFunc *D = NULL;
    if (callee->kind == EXPR_GLOBAL && callee->u.global.def) D = func_of(cg, callee->u.global.def->func);
    else if (callee->kind == EXPR_VAR && callee == cg->cur->self_var) D = cg->cur;
    need_boxed(cg, o, ind, callee);
    for (int i = 0; i < n; i++)
      if (!(D && stack_boxable(cg, D, i, v->u.call.args[i]))) need_boxed(cg, o, ind, v->u.call.args[i]);
    if (callee->kind == EXPR_FUNC && is_primitive(callee)) {
      char kname[32];
      kernel_for(cg, callee, kname, sizeof kname);
      indent(o, ind);
      sb_puts(o, "{\n");
      int a = args_array(cg, o, ind + 1, v->u.call.args, n);
      indent(o, ind + 1);
      sb_printf(o, "st = %s(", kname);
      args_name(o, a);
      sb_printf(o, ", &%s);\n", dest);
      try_call(cg, o, ind + 1);
      indent(o, ind);
      sb_puts(o, "}\n");
      return;
    }
    if (callee->kind == EXPR_CTOR && n == 0) {
      /* A constructor without fields: one immutable static value. */
      const Ctor *c = callee->u.ctor.ctor;
      bool have = false;
      for (int i = 0; i < cg->nullary.len && !have; i++) have = cg->nullary.data[i] == c;
      if (!have) {
        VEC_PUSH(&cg->nullary, c);
        sb_printf(&cg->consts, "static const rlyrt_adt CN%d_%d = {{RLYRT_REFCOUNT_STATIC, RLYRT_ADT, 0}, %d, 0, ",
                  type_index(cg, c->adt), c->tag, c->tag);
        lower_cstring(&cg->consts, c->name->text, c->name->len);
        sb_puts(&cg->consts, "};\n");
      }
      indent(o, ind);
      sb_printf(o, "%s = (rlyrt_object *)&CN%d_%d;\n", dest, type_index(cg, c->adt), c->tag);
      return;
    }
    if (callee->kind == EXPR_CTOR) {
      const Ctor *c = callee->u.ctor.ctor;
      int k = cg->tmp++;
      indent(o, ind);
      sb_printf(o, "rlyrt_adt *d%d = rlyrt_adt_new(%d, ", k, c->tag);
      lower_cstring(o, c->name->text, c->name->len);
      sb_printf(o, ", %d);\n", n);
      indent(o, ind);
      sb_printf(o, "if (!d%d) { st = RLYRT_E_NOMEM; goto fail; }\n", k);
      cg->used_fail = true;
      for (int i = 0; i < n; i++) {
        indent(o, ind);
        sb_printf(o, "d%d->fields[%d] = RC_retain(", k, i);
        atom(cg, o, v->u.call.args[i]);
        sb_puts(o, ");\n");
      }
      indent(o, ind);
      sb_printf(o, "%s = &d%d->obj;\n", dest, k);
      return;
    }
    indent(o, ind);
    sb_puts(o, "{\n");
    int a = D ? args_array_direct(cg, o, ind + 1, v->u.call.args, n, D) : args_array(cg, o, ind + 1, v->u.call.args, n);
    indent(o, ind + 1);
    if (callee->kind == EXPR_GLOBAL && callee->u.global.def && func_of(cg, callee->u.global.def->func)) {
      sb_printf(o, "st = %s(NULL, ", func_of(cg, callee->u.global.def->func)->cname);
    } else if (callee->kind == EXPR_VAR && callee == cg->cur->self_var) {
      sb_printf(o, "st = %s(self, ", cg->cur->cname);
    } else if (callee->kind == EXPR_FUNC) {
      /* A function literal called on the spot: build the closure, call it. */
      int k = cg->tmp++;
      char cv[32];
      snprintf(cv, sizeof cv, "c%d", k);
      sb_printf(o, "rlyrt_object *%s = NULL;\n", cv);
      emit_value(cg, o, ind + 1, callee, cv, false);
      indent(o, ind + 1);
      sb_printf(o, "st = RC_CALL(%s, ", cv);
      args_name(o, a);
      sb_printf(o, ", &%s);\n", dest);
      indent(o, ind + 1);
      sb_printf(o, "rlyrt_release(%s);\n", cv);
      try_call(cg, o, ind + 1);
      indent(o, ind);
      sb_puts(o, "}\n");
      return;
    } else {
      /* A closure value: its code may belong to another module, whose
      ** copy of the runtime holds the message of a failure. */
      sb_puts(o, "st = RC_CALL(");
      atom(cg, o, callee);
      sb_puts(o, ", ");
      args_name(o, a);
      sb_printf(o, ", &%s);\n", dest);
      indent(o, ind + 1);
      sb_puts(o, "if (st != RLYRT_OK) {\n");
      indent(o, ind + 2);
      sb_puts(o, "st = rlyrt_closure_failed(");
      atom(cg, o, callee);
      sb_puts(o, ", st);\n");
      indent(o, ind + 2);
      sb_puts(o, "goto fail;\n");
      indent(o, ind + 1);
      sb_puts(o, "}\n");
      cg->used_fail = true;
      indent(o, ind);
      sb_puts(o, "}\n");
      return;
    }
    args_name(o, a);
    sb_printf(o, ", &%s);\n", dest);
    try_call(cg, o, ind + 1);
    indent(o, ind);
    sb_puts(o, "}\n");
    return;
  }
  case EXPR_IF:
    indent(o, ind);
    sb_puts(o, "if (");
    if (scalar_ctype(v->u.if_.cond->type)) {
      scalar_of(cg, o, v->u.if_.cond);
    } else {
      sb_puts(o, "RC_TRUE(");
      atom(cg, o, v->u.if_.cond);
      sb_puts(o, ")");
    }
    sb_puts(o, " != 0) {\n");
    emit_block(cg, o, ind + 1, v->u.if_.then_, dest, tail);
    indent(o, ind);
    sb_puts(o, "} else {\n");
    emit_block(cg, o, ind + 1, v->u.if_.else_, dest, tail);
    indent(o, ind);
    sb_puts(o, "}\n");
    return;
  case EXPR_MATCH: {
    need_boxed(cg, o, ind, v->u.match.scrut);
    int k = cg->tmp++;
    char m[32];
    snprintf(m, sizeof m, "m%d", k);
    indent(o, ind);
    sb_puts(o, "{\n");
    indent(o, ind + 1);
    sb_printf(o, "rlyrt_object *%s = ", m);
    atom(cg, o, v->u.match.scrut);
    sb_puts(o, ";\n");
    const TypeDef *adt = match_adt(v);
    if (adt) {
      indent(o, ind + 1);
      sb_printf(o, "switch (RLYRT_AS_ADT(%s)->tag) {\n", m);
      for (int c = 0; c < adt->nctors; c++) {
        indent(o, ind + 1);
        sb_printf(o, "case %d: /* %s */\n", c, adt->ctors[c]->name->text);
        emit_clauses(cg, o, ind + 2, v, m, c, dest, tail);
        indent(o, ind + 2);
        sb_puts(o, "break;\n");
      }
      indent(o, ind + 1);
      sb_puts(o, "default:\n");
      emit_clauses(cg, o, ind + 2, v, m, 1 << 30, dest, tail);
      indent(o, ind + 2);
      sb_puts(o, "break;\n");
      indent(o, ind + 1);
      sb_puts(o, "}\n");
    } else {
      indent(o, ind + 1); /* clauses of only `_` test nothing */
      sb_printf(o, "(void)%s;\n", m);
      emit_clauses(cg, o, ind + 1, v, m, -1, dest, tail);
    }
    indent(o, ind);
    sb_puts(o, "}\n");
    return;
  }
  case EXPR_FUNC: {
    CFunc *F = func_of(cg, v);
    if (!F) {
      cg_error(cg, v->span, "internal error: a function literal was not lifted%s", "");
      return;
    }
    need_boxed_all(cg, o, ind, F->fvs.data, F->fvs.len);
    int k = cg->tmp++;
    indent(o, ind);
    sb_printf(o, "rlyrt_closure *f%d = rlyrt_closure_new(&%s_code, %d);\n", k, F->cname, F->fvs.len);
    indent(o, ind);
    sb_printf(o, "if (!f%d) { st = RLYRT_E_NOMEM; goto fail; }\n", k);
    cg->used_fail = true;
    indent(o, ind);
    sb_printf(o, "f%d->obj.flags = RLYRT_CLOSURE_NATIVE;\n", k);
    for (int i = 0; i < F->fvs.len; i++) {
      indent(o, ind);
      sb_printf(o, "f%d->env[%d] = RC_retain(", k, i);
      atom(cg, o, F->fvs.data[i]);
      sb_puts(o, ");\n");
    }
    indent(o, ind);
    sb_printf(o, "%s = &f%d->obj;\n", dest, k);
    return;
  }
  case EXPR_REF_NEW: {
    need_boxed(cg, o, ind, v->u.ref_new.value);
    int k = cg->tmp++;
    indent(o, ind);
    sb_printf(o, "rlyrt_ref *r%d = rlyrt_ref_new_take(RC_retain(", k);
    atom(cg, o, v->u.ref_new.value);
    sb_puts(o, "));\n");
    indent(o, ind);
    sb_printf(o, "if (!r%d) { st = RLYRT_E_NOMEM; goto fail; }\n", k);
    cg->used_fail = true;
    indent(o, ind);
    sb_printf(o, "%s = &r%d->obj;\n", dest, k);
    return;
  }
  case EXPR_REF_READ:
    indent(o, ind);
    sb_printf(o, "%s = RC_retain(RLYRT_AS_REF(", dest);
    atom(cg, o, v->u.ref_read.ref);
    sb_puts(o, ")->value);\n");
    return;
  case EXPR_REF_WRITE:
    need_boxed(cg, o, ind, v->u.ref_write.value);
    indent(o, ind);
    sb_puts(o, "rlyrt_ref_write_take(RLYRT_AS_REF(");
    atom(cg, o, v->u.ref_write.ref);
    sb_puts(o, "), RC_retain(");
    atom(cg, o, v->u.ref_write.value);
    sb_puts(o, "));\n");
    indent(o, ind);
    sb_printf(o, "%s = (rlyrt_object *)&RC_unit;\n", dest);
    cg->used_unit = true;
    return;
  case EXPR_LET: emit_block(cg, o, ind, v, dest, tail); return;
  case EXPR_KIND_COUNT: RLY_UNREACHABLE();
  }
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Records statement i as the last use of every candidate variable used
** under e (nested blocks and functions included). */
static void note_uses(Cg *cg, Walk *w, Expr *e, uint32_t stamp, int i) {
  w->stack.len = 0;
  Item root = {e, false, 0};
  VEC_PUSH(&w->stack, root);
  while (w->stack.len) {
    Item it = VEC_POP(&w->stack);
    if (it.e->kind == EXPR_VAR) {
      if (!it.binder && cg->cand[it.e->id] == stamp) cg->last[it.e->id] = i;
      continue;
    }
    if (it.e->kind == EXPR_FUNC && is_primitive(it.e)) continue;
    push_children(w, it);
  }
}

/* Emits a let chain. Its statements are in order; a variable the chain
** binds (and, in a function's top block, a parameter) is released right
** after the statement that uses it last, so large intermediates do not
** live until the function returns. */
static void emit_block(Cg *cg, StrBuf *o, int ind, Expr *body, const char *dest, bool tail) {
  EVec chain = {0};
  Expr *end = body;
  while (end->kind == EXPR_LET && end->u.let.body != end->u.let.var) {
    VEC_PUSH(&chain, end);
    end = end->u.let.body;
  }
  uint32_t stamp = ++cg->bgen;
  int n = chain.len;
  if (body == cg->cur->fn->u.func.body)
    for (int i = 0; i < cg->cur->fn->u.func.nparams; i++) {
      Expr *p = cg->cur->fn->u.func.params[i];
      cg->cand[p->id] = stamp;
      cg->last[p->id] = -1;
    }
  for (int i = 0; i < n; i++) {
    Expr *v = chain.data[i]->u.let.var;
    cg->cand[v->id] = stamp;
    cg->last[v->id] = i;
  }
  Walk w = {0};
  for (int i = 0; i < n; i++) note_uses(cg, &w, chain.data[i]->u.let.value, stamp, i);
  note_uses(cg, &w, end, stamp, n); /* the result: never released early */
  VEC_FREE(&w.stack);
  VEC_FREE(&w.kids);
  /* Releases in statement order: (statement, id) pairs sorted. */
  Vec(int64_t) rel = {0};
  if (body == cg->cur->fn->u.func.body)
    for (int k = 0; k < cg->cur->fn->u.func.nparams; k++) {
      Expr *p = cg->cur->fn->u.func.params[k];
      if (cg->cand[p->id] == stamp && cg->last[p->id] >= 0 && cg->last[p->id] < n)
        VEC_PUSH(&rel, ((int64_t)cg->last[p->id] << 32) | p->id);
    }
  for (int k = 0; k < n; k++) {
    Expr *v = chain.data[k]->u.let.var;
    if (cg->last[v->id] < n) VEC_PUSH(&rel, ((int64_t)cg->last[v->id] << 32) | v->id);
  }
  if (rel.len) qsort(rel.data, (size_t)rel.len, sizeof(int64_t), cmp_i64);
  int r = 0;
  for (int i = 0; i < n; i++) {
    Expr *var = chain.data[i]->u.let.var;
    char vname[32];
    snprintf(vname, sizeof vname, "v%u", var->id);
    if (cg->cur->plan_size && cg->plan_off[var->id] >= 0) { /* the kernel writes into the workspace */
      indent(o, ind);
      sb_printf(o, "v%u = &w%u.obj;\n", var->id, var->id);
    }
    if (!emit_scalar_let(cg, o, ind, var, chain.data[i]->u.let.value))
      emit_value(cg, o, ind, chain.data[i]->u.let.value, vname, false);
    for (; r < rel.len && (rel.data[r] >> 32) == i; r++) {
      uint32_t id = (uint32_t)(rel.data[r] & 0xffffffff);
      indent(o, ind);
      sb_printf(o, "RC_DROP(v%u);\n", id);
    }
  }
  VEC_FREE(&rel);
  VEC_FREE(&chain);
  if (end->kind == EXPR_LET) { /* let %x = value; %x: value goes to dest */
    Expr *var = end->u.let.var;
    if (emit_scalar_let(cg, o, ind, var, end->u.let.value)) { /* computed in C, boxed once */
      need_boxed(cg, o, ind, var);
      indent(o, ind);
      sb_printf(o, "%s = RC_retain(v%u);\n", dest, var->id);
      return;
    }
    emit_value(cg, o, ind, end->u.let.value, dest, tail);
    return;
  }
  emit_value(cg, o, ind, end, dest, false);
}

/* {==== Static memory plan ====}
** A global whose body is straight-line (operator calls, tuples,
** projections, atoms: no control flow, no calls of functions) gets a
** workspace: every intermediate tensor of static type that does not escape
** (is not the result, not put in a tuple, not bound to another variable)
** lives at a fixed offset in it, and the offsets are reused once a
** tensor's last use has passed. Greedy first fit in definition order; a
** tensor never shares bytes with the operands of the call that makes it.
** The function allocates its workspace with one rlyrt_alloc per call; a
** typed entry point takes the caller's. */

static int64_t tensor_bytes(const Type *t) {
  if (!t || t->kind != TYPE_TENSOR || t->u.tensor.dtype.lanes != 1) return -1;
  int64_t n = (int64_t)dtype_bytes(t->u.tensor.dtype);
  for (int i = 0; i < t->u.tensor.ndim; i++) {
    if (t->u.tensor.shape[i] < 0) return -1;
    if (t->u.tensor.shape[i] && n > (INT64_C(1) << 40) / t->u.tensor.shape[i]) return -1;
    n *= t->u.tensor.shape[i];
  }
  return n;
}

typedef struct Block {
  int64_t off, size;
  int last;
} Block;

static void plan_function(Cg *cg, CFunc *F) {
  if (!F->g || cg->groups.data[F->group]->members.len != 1) return;
  EVec chain = {0};
  Expr *e = F->fn->u.func.body;
  for (; e->kind == EXPR_LET; e = e->u.let.body) VEC_PUSH(&chain, e);
  int n = chain.len;
  bool ok = pass_is_atom(e) && e->kind != EXPR_OP;
  for (int i = 0; i < n && ok; i++) {
    Expr *v = chain.data[i]->u.let.value;
    ok = (v->kind == EXPR_CALL && v->u.call.callee->kind == EXPR_FUNC && is_primitive(v->u.call.callee)) ||
         v->kind == EXPR_TUPLE || v->kind == EXPR_GET_ITEM || (pass_is_atom(v) && v->kind != EXPR_OP);
  }
  if (!ok) {
    VEC_FREE(&chain);
    return;
  }
  /* Escaping variables, and last uses (statement index; n = the result). */
  uint32_t esc = ++cg->gen;
  int *last = rly_xcalloc((size_t)(n ? n : 1), sizeof(int));
  for (int i = 0; i < n; i++) last[i] = i;
  /* The statement binding each variable of the chain (cand/last are free
  ** before emission). */
  uint32_t bind = ++cg->bgen;
  for (int i = 0; i < n; i++) {
    cg->cand[chain.data[i]->u.let.var->id] = bind;
    cg->last[chain.data[i]->u.let.var->id] = i;
  }
  for (int i = 0; i <= n; i++) {
    Expr *v = i < n ? chain.data[i]->u.let.value : e;
    Expr **ops = NULL;
    int nops = 0;
    bool escapes = false;
    Expr *one[1];
    if (v->kind == EXPR_CALL) {
      ops = v->u.call.args;
      nops = v->u.call.nargs;
    } else if (v->kind == EXPR_TUPLE) {
      ops = v->u.tuple.fields;
      nops = v->u.tuple.n;
      escapes = true;
    } else if (v->kind == EXPR_GET_ITEM) {
      one[0] = v->u.get_item.tuple;
      ops = one;
      nops = 1;
      escapes = true;
    } else {
      one[0] = v;
      ops = one;
      nops = 1;
      escapes = true;
    }
    if (i == n) escapes = true;
    for (int k = 0; k < nops; k++) {
      if (ops[k]->kind != EXPR_VAR) continue;
      if (escapes) cg->mark[ops[k]->id] = esc;
      if (cg->cand[ops[k]->id] == bind) {
        int j = cg->last[ops[k]->id];
        if (last[j] < i) last[j] = i;
      }
    }
  }
  Vec(Block) live = {0};
  int64_t top = 0;
  for (int i = 0; i < n; i++) {
    Expr *var = chain.data[i]->u.let.var;
    Expr *v = chain.data[i]->u.let.value;
    if (v->kind != EXPR_CALL || cg->mark[var->id] == esc) continue;
    if (i == n - 1 && chain.data[i]->u.let.body == var) continue;
    int64_t bytes = tensor_bytes(v->type);
    if (bytes <= 0 || v->type->u.tensor.ndim == 0) continue; /* scalars may live unboxed instead */
    int64_t size = (bytes + 63) & ~(int64_t)63;
    /* Drop blocks whose tensors are dead before statement i. */
    int w = 0;
    for (int k = 0; k < live.len; k++)
      if (live.data[k].last >= i) live.data[w++] = live.data[k];
    live.len = w;
    /* Lowest gap that fits (blocks sorted by offset). */
    int64_t off = 0;
    int at = 0;
    for (; at < live.len; at++) {
      if (live.data[at].off - off >= size) break;
      off = live.data[at].off + live.data[at].size;
    }
    Block b = {off, size, last[i]};
    VEC_PUSH(&live, b);
    for (int k = live.len - 1; k > at; k--) live.data[k] = live.data[k - 1];
    live.data[at] = b;
    cg->plan_off[var->id] = off;
    if (off + size > top) top = off + size;
  }
  F->plan_size = top;
  VEC_FREE(&live);
  free(last);
  VEC_FREE(&chain);
}

/* {==== Functions and groups ====} */

static void emit_group(Cg *cg, Group *G) {
  bool multi = G->members.len > 1;
  CFunc *F0 = G->members.data[0];
  cg->curgroup = G;
  cg->used_fail = false;
  cg->used_label = rly_xcalloc((size_t)G->members.len, sizeof(bool));
  cg->tmp = 0;
  for (int i = 0; i < cg->uvars.len; i++) cg->uvar[cg->uvars.data[i]->id] = 0;
  cg->uvars.len = 0;
  /* Scalar parameters live unboxed too (decided before any body: a jump
  ** from one member assigns another member's parameters). */
  for (int m = 0; m < G->members.len; m++) {
    CFunc *F = G->members.data[m];
    for (int i = 0; i < F->fn->u.func.nparams; i++)
      if (scalar_ctype(F->fn->u.func.params[i]->type)) make_unboxed(cg, F->fn->u.func.params[i]);
  }
  StrBuf body = {0};
  for (int m = 0; m < G->members.len; m++) {
    CFunc *F = G->members.data[m];
    cg->cur = F;
    if (multi) {
      sb_printf(&body, "L%d:; /* %s */\n", m, F->where);
    } else {
      sb_puts(&body, "L0:;\n");
    }
    emit_block(cg, &body, 1, F->fn->u.func.body, "ret", true);
    sb_puts(&body, "  goto done;\n");
  }
  StrBuf *o = &cg->code;
  bool planned = !multi && F0->plan_size > 0;
  if (multi)
    sb_printf(o, "static rlyrt_status %s(int which, rlyrt_object *const *args, rlyrt_object **out) {\n", G->cname);
  else if (planned)
    sb_printf(o, "static rlyrt_status %s_ws(const rlyrt_closure *self, rlyrt_object *const *args, rlyrt_object **out, "
                 "void *ws) {\n", G->cname);
  else
    sb_printf(o, "static rlyrt_status %s(const rlyrt_closure *self, rlyrt_object *const *args, rlyrt_object **out) {\n",
              G->cname);
  if (!multi) sb_puts(o, "  (void)self;\n");
  sb_puts(o, "  (void)args;\n");
  if (cg->used_fail) sb_puts(o, "  rlyrt_status st = RLYRT_OK;\n");
  sb_puts(o, "  rlyrt_object *ret = NULL;\n");
  for (int m = 0; m < G->members.len; m++) {
    CFunc *F = G->members.data[m];
    for (int i = 0; i < F->locals.len; i++) sb_printf(o, "  rlyrt_object *v%u = NULL;\n", F->locals.data[i]->id);
  }
  /* (void): a scalar parameter is read on entry even when the body never
  ** uses it, and a scalar let may be dead after A-normal form (a pure
  ** operator on the result of a call or a ref_read; dce runs before anf
  ** only, as the re-inference after primitive needs the dead lets'
  ** annotations). */
  for (int i = 0; i < cg->uvars.len; i++)
    sb_printf(o, "  %s s%u = 0;\n  (void)s%u;\n", scalar_ctype(cg->uvars.data[i]->type), cg->uvars.data[i]->id,
              cg->uvars.data[i]->id);
  if (planned) /* the workspace's tensors: static refcount, data at their planned offsets */
    for (int i = 0; i < F0->locals.len; i++) {
      const Expr *var = F0->locals.data[i];
      int64_t off = cg->plan_off[var->id];
      if (off < 0) continue;
      const Type *t = var->type;
      DType dt = t->u.tensor.dtype;
      if (t->u.tensor.ndim) {
        sb_printf(&cg->consts, "static const int64_t RC_sh%u[] = {", var->id);
        for (int k = 0; k < t->u.tensor.ndim; k++)
          sb_printf(&cg->consts, "%s%lld", k ? ", " : "", (long long)t->u.tensor.shape[k]);
        sb_puts(&cg->consts, "};\n");
      }
      sb_printf(o, "  rlyrt_tensor w%u = {{RLYRT_REFCOUNT_STATIC, RLYRT_TENSOR, 0}, {(char *)ws + %lld, {kDLCPU, 0}, %d, "
                   "{%u, %u, %u}, ", var->id, (long long)off, t->u.tensor.ndim, dt.code, dt.bits, dt.lanes);
      if (t->u.tensor.ndim) sb_printf(o, "(int64_t *)RC_sh%u, NULL, 0}};\n", var->id);
      else sb_puts(o, "NULL, NULL, 0}};\n");
    }
  if (multi) {
    sb_puts(o, "  switch (which) {\n");
    for (int m = 0; m < G->members.len; m++) {
      CFunc *F = G->members.data[m];
      sb_printf(o, "  case %d:\n", m);
      for (int i = 0; i < F->fn->u.func.nparams; i++) {
        const Expr *p = F->fn->u.func.params[i];
        if (cg->uvar[p->id])
          sb_printf(o, "    s%u = *(const %s *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", p->id, scalar_ctype(p->type), i);
        else
          sb_printf(o, "    v%u = RC_retain(args[%d]);\n", p->id, i);
      }
      sb_printf(o, "    goto L%d;\n", m);
    }
    sb_puts(o, "  default:\n    *out = NULL;\n    return rlyrt_error(RLYRT_E_INTERNAL, \"bad entry\");\n  }\n");
  } else {
    /* A scalar parameter keeps only its value, never the argument object:
    ** callers may pass a box on their stack (direct calls). */
    for (int i = 0; i < F0->fn->u.func.nparams; i++) {
      const Expr *p = F0->fn->u.func.params[i];
      if (cg->uvar[p->id])
        sb_printf(o, "  s%u = *(const %s *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", p->id, scalar_ctype(p->type), i);
      else
        sb_printf(o, "  v%u = RC_retain(args[%d]);\n", p->id, i);
    }
    if (!cg->used_label[0]) {
      /* No jump back: drop the label. */
      const char *lab = "L0:;\n";
      size_t ll = strlen(lab);
      if (body.len >= ll && memcmp(body.data, lab, ll) == 0) {
        memmove(body.data, body.data + ll, body.len - ll + 1);
        body.len -= ll;
      }
    }
  }
  sb_putn(o, body.data ? body.data : "", body.len);
  sb_free(&body);
  sb_puts(o, "done:\n");
  release_all(cg, o, 1);
  sb_puts(o, "  *out = ret;\n  return RLYRT_OK;\n");
  if (cg->used_fail) {
    sb_puts(o, "fail:\n");
    release_all(cg, o, 1);
    sb_puts(o, "  rlyrt_release(ret);\n  *out = NULL;\n  return st;\n");
  }
  sb_puts(o, "}\n\n");
  if (multi)
    for (int m = 0; m < G->members.len; m++) {
      CFunc *F = G->members.data[m];
      sb_printf(o, "static rlyrt_status %s(const rlyrt_closure *self, rlyrt_object *const *args, rlyrt_object **out) {\n"
                   "  (void)self;\n  return %s(%d, args, out);\n}\n\n", F->cname, G->cname, m);
    }
  if (planned)
    sb_printf(o, "static rlyrt_status %s(const rlyrt_closure *self, rlyrt_object *const *args, rlyrt_object **out) {\n"
                 "  void *ws = rlyrt_alloc(%lld, 64);\n"
                 "  if (!ws) {\n    *out = NULL;\n    return RLYRT_E_NOMEM;\n  }\n"
                 "  rlyrt_status st = %s_ws(self, args, out, ws);\n"
                 "  rlyrt_free(ws);\n  return st;\n}\n\n",
              G->cname, (long long)F0->plan_size, G->cname);
  free(cg->used_label);
  cg->used_label = NULL;
}

/* Every C function: prototypes, code descriptors, closures of globals. */
static void emit_descriptors(Cg *cg) {
  for (int i = 0; i < cg->funcs.len; i++) {
    CFunc *F = cg->funcs.data[i];
    sb_printf(&cg->protos, "static rlyrt_status %s(const rlyrt_closure *self, rlyrt_object *const *args, rlyrt_object **out);\n",
              F->cname);
    sb_printf(&cg->protos, "static rlyrt_status %s_check(rlyrt_object *const *args, int32_t nargs);\n", F->cname);
    if (F->plan_size)
      sb_printf(&cg->protos, "static rlyrt_status %s_ws(const rlyrt_closure *self, rlyrt_object *const *args, "
                             "rlyrt_object **out, void *ws);\n", F->cname);
    sb_printf(&cg->info, "static const rlyrt_code %s_code = {%s, %s_check, %d, ", F->cname, F->cname, F->cname,
              F->fn->u.func.nparams);
    lower_cstring(&cg->info, F->where, strlen(F->where));
    sb_puts(&cg->info, ", &RC_module, ");
    if (has_type_var(F->fn->type) || F->fn->u.func.ntparams) {
      sb_puts(&cg->info, "NULL};\n");
    } else {
      char *ty = type_string(F->fn->type);
      lower_cstring(&cg->info, ty, strlen(ty));
      free(ty);
      sb_puts(&cg->info, "};\n");
    }
  }
  for (int i = 0; i < cg->groups.len; i++)
    if (cg->groups.data[i]->members.len > 1)
      sb_printf(&cg->protos, "static rlyrt_status %s(int which, rlyrt_object *const *args, rlyrt_object **out);\n",
                cg->groups.data[i]->cname);
}

/* Constructors used as values: a function building the value, and its
** closure. */
static void emit_ctor_values(Cg *cg) {
  for (int k = 0; k < cg->ctor_values.len; k++) {
    const Ctor *ct = cg->ctor_values.data[k];
    char base[64];
    snprintf(base, sizeof base, "CT%d_%d", type_index(cg, ct->adt), ct->tag);
    sb_printf(&cg->code, "static rlyrt_status %s(const rlyrt_closure *self, rlyrt_object *const *args, rlyrt_object **out) {\n"
                         "  (void)self;\n  (void)args;\n  rlyrt_adt *d = rlyrt_adt_new(%d, ", base, ct->tag);
    lower_cstring(&cg->code, ct->name->text, ct->name->len);
    sb_printf(&cg->code, ", %d);\n  if (!d) { *out = NULL; return RLYRT_E_NOMEM; }\n", ct->nfields);
    for (int i = 0; i < ct->nfields; i++) sb_printf(&cg->code, "  d->fields[%d] = RC_retain(args[%d]);\n", i, i);
    sb_puts(&cg->code, "  *out = &d->obj;\n  return RLYRT_OK;\n}\n");
    sb_printf(&cg->code, "static const rlyrt_code %s_code = {%s, NULL, %d, ", base, base, ct->nfields);
    lower_cstring(&cg->code, ct->name->text, ct->name->len);
    sb_puts(&cg->code, ", &RC_module, NULL};\n");
    sb_printf(&cg->code,
              "static const rlyrt_closure %s_closure = {{RLYRT_REFCOUNT_STATIC, RLYRT_CLOSURE, RLYRT_CLOSURE_NATIVE}, "
              "&%s_code, 0};\n\n", base, base);
  }
}

/* {==== Module description and typed entry points ====} */

static int cmp_defs(const void *a, const void *b) {
  const GlobalDef *x = *(const GlobalDef *const *)a, *y = *(const GlobalDef *const *)b;
  return strcmp(x->name->text, y->name->text);
}

static bool static_tensor(const Type *t) {
  if (!t || t->kind != TYPE_TENSOR || t->u.tensor.dtype.lanes != 1) return false;
  for (int i = 0; i < t->u.tensor.ndim; i++)
    if (t->u.tensor.shape[i] < 0) return false;
  return true;
}

static const char *const c_keywords[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
    "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "out",
    "bool", "true", "false", "NULL"};

static void param_cname(const Expr *p, int i, char *buf, size_t n) {
  const char *s = p->u.var.name ? p->u.var.name->text : "";
  sanitize(s, buf, n);
  bool ok = buf[0] && !(buf[0] >= '0' && buf[0] <= '9') && strncmp(buf, "out", 3) != 0 && buf[0] != '_' &&
            strncmp(buf, "rc_", 3) != 0;
  for (size_t k = 0; ok && k < RLY_COUNTOF(c_keywords); k++)
    if (strcmp(buf, c_keywords[k]) == 0) ok = false;
  if (!ok) snprintf(buf, n, "arg%d", i);
}

static void emit_typed_entry(Cg *cg, StrBuf *h, CFunc *F, const char *entry) {
  const Expr *fn = F->fn;
  const Type *ft = fn->type;
  const Type *rt = ft && ft->kind == TYPE_FUNC ? ft->u.func.ret : NULL;
  int np = fn->u.func.nparams;
  for (int i = 0; i < np; i++)
    if (!static_tensor(fn->u.func.params[i]->type)) return;
  int nouts = 0;
  if (static_tensor(rt)) nouts = 1;
  else if (rt && rt->kind == TYPE_TUPLE && rt->u.tuple.n > 0) {
    for (int i = 0; i < rt->u.tuple.n; i++)
      if (!static_tensor(rt->u.tuple.fields[i])) return;
    nouts = rt->u.tuple.n;
  } else {
    return;
  }
  /* Unique parameter names. */
  char (*names)[64] = rly_xcalloc((size_t)(np ? np : 1), 64);
  for (int i = 0; i < np; i++) {
    param_cname(fn->u.func.params[i], i, names[i], 64);
    for (int j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0) snprintf(names[i], 64, "arg%d", i);
  }
  StrBuf sig = {0};
  sb_printf(&sig, "rlyrt_status %s(", entry);
  for (int i = 0; i < np; i++) sb_printf(&sig, "%sconst DLTensor *%s", i ? ", " : "", names[i]);
  for (int i = 0; i < nouts; i++) {
    sb_printf(&sig, "%sDLTensor *out", np || i ? ", " : "");
    if (nouts > 1) sb_printf(&sig, "%d", i);
  }
  sb_puts(&sig, ", void *workspace)");
  char *ty = type_string(ft);
  char macro[200];
  size_t ml = 0;
  for (const char *p = entry; *p && ml + 1 < sizeof macro; p++)
    macro[ml++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
  macro[ml] = 0;
  sb_printf(h, "/* %s: %s\n** Inputs and outputs are CPU tensors of exactly these dtypes and shapes\n"
               "** (compact, row-major); the outputs' data is written. workspace: NULL, or\n"
               "** %s_WORKSPACE_SIZE bytes aligned to 64 for the intermediate tensors\n"
               "** (one per concurrent call; 0 when the function has no static memory plan:\n"
               "** its intermediates then come from the runtime's allocator). */\n"
               "#define %s_WORKSPACE_SIZE %lld\n%s;\n\n",
            F->where, ty, macro, macro, (long long)F->plan_size, sb_str(&sig));
  free(ty);
  StrBuf *o = &cg->info;
  sb_printf(o, "%s {\n  rlyrt_status rc_s;\n  rlyrt_object *rc_r = NULL;\n", sb_str(&sig));
  sb_free(&sig);
  for (int i = 0; i < np; i++) {
    sb_printf(o, "  if (!%s) return rlyrt_error(RLYRT_E_ARG, \"%s: %s is NULL\");\n", names[i], entry, names[i]);
    sb_printf(o, "  rlyrt_tensor rc_w%d = {{RLYRT_REFCOUNT_STATIC, RLYRT_TENSOR, 0}, *%s};\n", i, names[i]);
  }
  if (np) {
    sb_puts(o, "  rlyrt_object *rc_args[] = {");
    for (int i = 0; i < np; i++) sb_printf(o, "%s&rc_w%d.obj", i ? ", " : "", i);
    sb_puts(o, "};\n");
  }
  for (int i = 0; i < nouts; i++) {
    const char *on = nouts > 1 ? "out%d" : "out";
    char oname[16];
    snprintf(oname, sizeof oname, on, i);
    sb_printf(o, "  if (!%s) return rlyrt_error(RLYRT_E_ARG, \"%s: %s is NULL\");\n", oname, entry, oname);
    sb_printf(o, "  rlyrt_tensor rc_o%d = {{RLYRT_REFCOUNT_STATIC, RLYRT_TENSOR, 0}, *%s};\n", i, oname);
    const Type *ot = nouts > 1 ? rt->u.tuple.fields[i] : rt;
    int c = checker_for(cg, ot);
    sb_printf(o, "  if ((rc_s = CHK%d(&rc_o%d.obj, \"%s: %s\")) != RLYRT_OK) return rc_s;\n", c, i, entry, oname);
  }
  sb_printf(o, "  if ((rc_s = %s_check(%s, %d)) != RLYRT_OK) return rc_s;\n", F->cname, np ? "rc_args" : "NULL", np);
  if (F->plan_size) {
    sb_printf(o, "  if ((uintptr_t)workspace %% 64)\n"
                 "    return rlyrt_error(RLYRT_E_ARG, \"%s: the workspace is not aligned to 64 bytes\");\n", entry);
    sb_printf(o, "  void *rc_ws = workspace ? workspace : rlyrt_alloc(%lld, 64);\n", (long long)F->plan_size);
    sb_puts(o, "  if (!rc_ws) return RLYRT_E_NOMEM;\n");
    sb_printf(o, "  rc_s = %s_ws(NULL, %s, &rc_r, rc_ws);\n", F->cname, np ? "rc_args" : "NULL");
    sb_puts(o, "  if (!workspace) rlyrt_free(rc_ws);\n  if (rc_s != RLYRT_OK) return rc_s;\n");
  } else {
    sb_puts(o, "  (void)workspace;\n");
    sb_printf(o, "  if ((rc_s = %s(NULL, %s, &rc_r)) != RLYRT_OK) return rc_s;\n", F->cname, np ? "rc_args" : "NULL");
  }
  for (int i = 0; i < nouts; i++) {
    const char *on = nouts > 1 ? "out%d" : "out";
    char oname[16];
    snprintf(oname, sizeof oname, on, i);
    if (nouts > 1)
      sb_printf(o, "  { const rlyrt_tensor *rc_t = RLYRT_AS_TENSOR(RLYRT_AS_TUPLE(rc_r)->fields[%d]);\n", i);
    else
      sb_puts(o, "  { const rlyrt_tensor *rc_t = RLYRT_AS_TENSOR(rc_r);\n");
    sb_printf(o, "    size_t rc_n = rlyrt_tensor_nbytes(rc_t);\n    if (rc_n) memcpy(%s->data, rc_t->dl.data, rc_n); }\n", oname);
  }
  sb_puts(o, "  rlyrt_release(rc_r);\n  return RLYRT_OK;\n}\n\n");
  free(names);
}

static void emit_info(Cg *cg, StrBuf *h) {
  const char *name = cg->o->name;
  int n = cg->m->ndefs;
  GlobalDef **sorted = rly_xcalloc((size_t)(n ? n : 1), sizeof *sorted);
  memcpy(sorted, cg->m->defs, sizeof *sorted * (size_t)n);
  qsort(sorted, (size_t)n, sizeof *sorted, cmp_defs);
  StrBuf *o = &cg->info;
  StrBuf table = {0};
  for (int i = 0; i < n; i++) {
    CFunc *F = func_of(cg, sorted[i]->func);
    const Expr *fn = F->fn;
    int np = fn->u.func.nparams;
    if (np) {
      sb_printf(o, "static const char *const %s_pnames[] = {", F->cname);
      for (int k = 0; k < np; k++) {
        const Symbol *s = fn->u.func.params[k]->u.var.name;
        sb_puts(o, k ? ", " : "");
        lower_cstring(o, s ? s->text : "", s ? s->len : 0);
      }
      sb_puts(o, "};\n");
      sb_printf(o, "static const char *const %s_ptypes[] = {", F->cname);
      for (int k = 0; k < np; k++) {
        char *ty = type_string(fn->u.func.params[k]->type);
        sb_puts(o, k ? ", " : "");
        lower_cstring(o, ty, strlen(ty));
        free(ty);
      }
      sb_puts(o, "};\n");
    }
    sb_puts(&table, "  {");
    lower_cstring(&table, sorted[i]->name->text, sorted[i]->name->len);
    sb_puts(&table, ", ");
    char *ty = type_string(fn->type);
    lower_cstring(&table, ty, strlen(ty));
    free(ty);
    if (np) sb_printf(&table, ", %d, %s_pnames, %s_ptypes, ", np, F->cname, F->cname);
    else sb_puts(&table, ", 0, NULL, NULL, ");
    ty = type_string(fn->type && fn->type->kind == TYPE_FUNC ? fn->type->u.func.ret : NULL);
    lower_cstring(&table, ty, strlen(ty));
    free(ty);
    sb_printf(&table, ", &%s_code},\n", F->cname);
  }
  if (n) sb_printf(o, "static const rlyrt_function_info RC_functions[] = {\n%s};\n", sb_str(&table));
  sb_free(&table);
  int nctors = 0;
  for (int t = 0; t < cg->m->ntypes; t++) {
    const TypeDef *td = cg->m->types[t];
    for (int c = 0; c < td->nctors; c++) {
      sb_puts(&table, "  {");
      lower_cstring(&table, td->ctors[c]->name->text, td->ctors[c]->name->len);
      sb_puts(&table, ", ");
      lower_cstring(&table, td->name->text, td->name->len);
      sb_printf(&table, ", %d, %d},\n", c, td->ctors[c]->nfields);
      nctors++;
    }
  }
  if (nctors) sb_printf(o, "static const rlyrt_ctor_info RC_ctors[] = {\n%s};\n", sb_str(&table));
  sb_free(&table);
  sb_puts(o, "static const rlyrt_module_info RC_module = {RLYRT_ABI_VERSION, ");
  lower_cstring(o, name, strlen(name));
  sb_printf(o, ", %d, %s, %d, %s, rlyrt_last_error, rlyrt_set_allocator};\n\n", n, n ? "RC_functions" : "NULL", nctors,
            nctors ? "RC_ctors" : "NULL");
  sb_printf(o, "const rlyrt_module_info *%s_module(void) { return &RC_module; }\n\n", name);
  sb_puts(o, "#ifdef RLYRT_SHARED_MODULE\n#if defined(__GNUC__) || defined(__clang__)\n"
             "__attribute__((visibility(\"default\")))\n#endif\n"
             "const rlyrt_module_info *rlyrt_module_entry(void);\n"
             "#if defined(__GNUC__) || defined(__clang__)\n__attribute__((visibility(\"default\")))\n#endif\n"
             "const rlyrt_module_info *rlyrt_module_entry(void) { return &RC_module; }\n#endif\n\n");
  /* Header and typed entry points. */
  sb_printf(h, "/* %s.h: generated by relayc; the interface of the compiled module %s. */\n", name, name);
  sb_printf(h, "#ifndef RELAYC_MODULE_%s_H\n#define RELAYC_MODULE_%s_H\n\n#include \"relayc/runtime.h\"\n\n", name, name);
  sb_puts(h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  sb_printf(h, "/* The module's description: pass it to rlyrt_module_wrap to call any\n** function by name with values. */\n"
               "const rlyrt_module_info *%s_module(void);\n\n", name);
  char (*used)[160] = rly_xcalloc((size_t)(n ? n : 1), 160);
  for (int i = 0; i < n; i++) {
    CFunc *F = func_of(cg, sorted[i]->func);
    char s[80], entry[160];
    sanitize(sorted[i]->name->text, s, sizeof s);
    snprintf(entry, sizeof entry, "%s_%s", name, s);
    for (int j = 0; j < i; j++)
      if (strcmp(used[j], entry) == 0) snprintf(entry, sizeof entry, "%s_%s_%d", name, s, i);
    if (strcmp(entry + strlen(name), "_module") == 0) snprintf(entry, sizeof entry, "%s_%s_%d", name, s, i);
    snprintf(used[i], 160, "%s", entry);
    emit_typed_entry(cg, h, F, entry);
  }
  free(used);
  sb_puts(h, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
  free(sorted);
}

/* {==== Driver ====} */

bool codegen_name_ok(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n > 64 || (name[0] >= '0' && name[0] <= '9')) return false;
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  if (strncmp(name, "rlyrt", 5) == 0) return false;
  return true;
}

/* An expression module becomes `def @main(free vars) { expr }`. */
static void expr_to_main(Module *m) {
  if (!m->expr) return;
  GlobalDef *g = ARENA_NEW(m->arena, GlobalDef);
  g->name = sym_intern_cstr(&m->syms, "main");
  g->span = m->expr->span;
  Expr *fn = ir_expr_new(m, EXPR_FUNC, m->expr->span);
  fn->u.func.params = m->free_vars;
  fn->u.func.nparams = m->nfree_vars;
  fn->u.func.body = m->expr;
  g->func = fn;
  GlobalDef **defs = ARENA_ARRAY(m->arena, GlobalDef *, m->ndefs + 1);
  for (int i = 0; i < m->ndefs; i++) defs[i] = m->defs[i];
  defs[m->ndefs++] = g;
  m->defs = defs;
  m->expr = NULL;
  m->free_vars = NULL;
  m->nfree_vars = 0;
}

static void put(StrBuf *c, const StrBuf *part) { sb_putn(c, part->data ? part->data : "", part->len); }

/* The C file: prelude, constants, prototypes, kernels, code, checkers,
** descriptors and the module description. Objects defined late and used
** early are declared first (tentative definitions). */
static void assemble(Cg *cg, StrBuf *c) {
  const char *name = cg->o->name;
  sb_printf(c, "/* %s.c: generated by relayc from Relay; do not edit. */\n", name);
  sb_puts(c, "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n\n");
  sb_printf(c, "#include \"%s.h\"\n\n", name);
  sb_puts(c, "#define RC_TRUE(x) (*(const uint8_t *)RLYRT_AS_TENSOR(x)->dl.data != 0)\n"
             "#define RC_CALL(c, a, out) \\\n"
             "  (((const rlyrt_code *)RLYRT_AS_CLOSURE(c)->code)->fn(RLYRT_AS_CLOSURE(c), (a), (out)))\n"
                          "#define RC_retain rlyrt_retain_inline\n"
             "/* Drops the reference x holds (NULL: nothing) and clears x. */\n"
             "#define RC_DROP(x) \\\n"
             "  do { \\\n"
             "    rlyrt_release_inline(x); \\\n"
             "    (x) = NULL; \\\n"
             "  } while (0)\n"
             "/* The tensor v of the unboxed scalar s, made when first needed. */\n"
             "#define RC_BOX(v, s, T, code, bits) \\\n"
             "  do { \\\n"
             "    if (!(v)) { \\\n"
             "      rlyrt_tensor *bx_ = rlyrt_tensor_new((DLDataType){code, bits, 1}, 0, NULL, false); \\\n"
             "      if (!bx_) { st = RLYRT_E_NOMEM; goto fail; } \\\n"
             "      *(T *)bx_->dl.data = (s); \\\n"
             "      (v) = &bx_->obj; \\\n"
             "    } \\\n"
             "  } while (0)\n");
  if (cg->used_unit) sb_puts(c, "static const rlyrt_tuple RC_unit = {{RLYRT_REFCOUNT_STATIC, RLYRT_TUPLE, 0}, 0};\n");
  sb_puts(c, "static const rlyrt_module_info RC_module;\n\n");
  size_t bl = blob_len(cg);
  sb_printf(c, "/* Constants: %zu bytes. */\n", bl);
  if (bl) {
    sb_printf(c, "static _Alignas(64) const unsigned char RC_blob[%zu] =\n", bl);
    size_t off = 0;
    static const unsigned char zeros[64];
    for (int i = 0; i < cg->constdata.len; i++) {
      const ConstData *cd = cg->constdata.data[i];
      size_t start = (off + 63) & ~(size_t)63;
      if (start > off) blob_bytes(c, zeros, start - off);
      blob_bytes(c, cd->data, cd->nbytes);
      off = start + cd->nbytes;
    }
    sb_puts(c, ";\n");
  }
  put(c, &cg->consts);
  if (cg->kdecls.len) {
    sb_puts(c, "\n/* Reference kernels of the runtime. */\n");
    put(c, &cg->kdecls);
  }
  sb_puts(c, "\n/* Functions, argument checkers and their descriptors. */\n");
  put(c, &cg->protos);
  for (int i = 0; i < cg->funcs.len; i++) {
    CFunc *F = cg->funcs.data[i];
    sb_printf(c, "static const rlyrt_code %s_code;\n", F->cname);
    if (F->g && F->closure_used) sb_printf(c, "static const rlyrt_closure %s_closure;\n", F->cname);
  }
  for (int k = 0; k < cg->ctor_values.len; k++)
    sb_printf(c, "static const rlyrt_closure CT%d_%d_closure;\n", type_index(cg, cg->ctor_values.data[k]->adt),
              cg->ctor_values.data[k]->tag);
  sb_puts(c, "\n/* Kernels. */\n");
  put(c, &cg->kernels);
  sb_puts(c, "/* Code. */\n");
  put(c, &cg->code);
  sb_puts(c, "/* Argument checkers. */\n");
  put(c, &cg->checkers);
  sb_puts(c, "/* The module. */\n");
  put(c, &cg->info);
}

/* Primitive functions written in the input (a module printed after TVM's
** FuseOps) lose the attribute: they become ordinary functions, and
** WrapPrimitives makes one kernel per operator call inside them. The
** module belongs to the back end from here on, so the attributes are
** replaced in place. */
static WalkResult unfuse(Walker *w, Expr *e) {
  if (e->kind != EXPR_FUNC || !is_primitive(e)) return WALK_CONTINUE;
  Module *m = w->data;
  const Attrs *a = e->u.func.attrs;
  Attrs *b = ARENA_NEW(m->arena, Attrs);
  b->keys = ARENA_ARRAY(m->arena, Symbol *, a->n);
  b->values = ARENA_ARRAY(m->arena, AttrValue *, a->n);
  for (int i = 0; i < a->n; i++)
    if (!a->keys[i] || strcmp(a->keys[i]->text, "Primitive") != 0) {
      b->keys[b->n] = a->keys[i];
      b->values[b->n++] = a->values[i];
    }
  e->u.func.attrs = b->n ? b : NULL;
  return WALK_CONTINUE;
}

bool codegen_module(Module *m, const CodegenOptions *o, StrBuf *c, StrBuf *h, Diag *d) {
  if (!ty_infer_module(m, d)) return false;
  expr_to_main(m);
  Walker uw = {unfuse, m};
  for (int i = 0; i < m->ndefs; i++) ir_walk(&uw, m->defs[i]->func);
  static const char *const pipeline[] = {"dce", "anf", "primitive"};
  if (!pass_run(m, pipeline, (int)RLY_COUNTOF(pipeline), d)) return false;
  if (!pass_module_typed(m) && !pass_retype(m, d)) return false;
  Cg cg = {0};
  cg.m = m;
  cg.o = o;
  cg.d = d;
  cg.L = lowering_new();
  collect_funcs(&cg);
  make_groups(&cg);
  for (int i = 0; i < cg.funcs.len; i++) plan_function(&cg, cg.funcs.data[i]);
  emit_descriptors(&cg);
  for (int i = 0; i < cg.groups.len; i++) emit_group(&cg, cg.groups.data[i]);
  for (int i = 0; i < cg.funcs.len; i++) {
    CFunc *F = cg.funcs.data[i];
    if (F->g) continue;
    Group G = {0};
    VEC_PUSH(&G.members, F);
    snprintf(G.cname, sizeof G.cname, "%s", F->cname);
    F->member = 0;
    emit_group(&cg, &G);
    VEC_FREE(&G.members);
  }
  emit_ctor_values(&cg);
  for (int i = 0; i < cg.funcs.len; i++) emit_function_checker(&cg, cg.funcs.data[i]);
  StrBuf hdr = {0};
  emit_info(&cg, &hdr);
  while (cg.nchecked < cg.checker_keys.len) emit_checker(&cg, cg.nchecked++);
  for (int i = 0; i < cg.funcs.len; i++) {
    CFunc *F = cg.funcs.data[i];
    if (F->g && F->closure_used)
      sb_printf(&cg.info,
                "static const rlyrt_closure %s_closure = {{RLYRT_REFCOUNT_STATIC, RLYRT_CLOSURE, RLYRT_CLOSURE_NATIVE}, "
                "&%s_code, 0};\n", F->cname, F->cname);
  }
  bool ok = !cg.failed;
  if (ok) assemble(&cg, c);
  if (ok) sb_putn(h, hdr.data ? hdr.data : "", hdr.len);
  sb_free(&hdr);
  for (int i = 0; i < cg.funcs.len; i++) {
    VEC_FREE(&cg.funcs.data[i]->fvs);
    VEC_FREE(&cg.funcs.data[i]->locals);
    free(cg.funcs.data[i]);
  }
  VEC_FREE(&cg.funcs);
  for (int i = 0; i < cg.groups.len; i++) {
    VEC_FREE(&cg.groups.data[i]->members);
    free(cg.groups.data[i]);
  }
  VEC_FREE(&cg.groups);
  for (int i = 0; i < cg.kernel_texts.len; i++) free(cg.kernel_texts.data[i]);
  VEC_FREE(&cg.kernel_texts);
  for (int i = 0; i < cg.checker_keys.len; i++) free((char *)cg.checker_keys.data[i]);
  VEC_FREE(&cg.checker_keys);
  VEC_FREE(&cg.checker_types);
  VEC_FREE(&cg.constdata);
  sb_free(&cg.kdecls);
  sb_free(&cg.protos);
  sb_free(&cg.consts);
  sb_free(&cg.kernels);
  sb_free(&cg.checkers);
  sb_free(&cg.code);
  sb_free(&cg.info);
  VEC_FREE(&cg.ctor_values);
  VEC_FREE(&cg.nullary);
  lowering_free(cg.L);
  free(cg.func_of);
  free(cg.mark);
  free(cg.cand);
  free(cg.last);
  free(cg.plan_off);
  free(cg.uvar);
  VEC_FREE(&cg.uvars);
  return ok;
}
