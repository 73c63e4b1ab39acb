/* test_passes.c: the passes (src/passes) on the interpreter corpus and on
** long chains.
**
** For every program of tests/run/ (run from the repository root; the
** programs of tests/corpus/, examples/ and the golden folders get the same
** checks except running):
** - the interpreter runs it before and after `anf,dce`, and the results
**   (printed with rlyrt_value_print) or the run-time errors (status and
**   message) must be identical. Arguments come from NAME.args as the CLI
**   reads them: `--function NAME` picks the global, `--input NAME=FILE.npy`
**   binds a parameter (loaded with rlyrt_npy_load). A program whose inputs
**   cannot be bound (the CLI's own input-error cases) is still transformed
**   and checked, just not run;
** - after anf: the module verifies, every root is in A-normal form (operands
**   are atoms, bodies are let chains ending in an atom, non-atomic nodes
**   have one parent), the printed text parses back to an equal module and
**   type-checks, anf is idempotent on the printed text, and re-inferring
**   the types from scratch gives the types the pass kept.
** - the interpreter runs it before and after `simplify_inference,
**   graph_form,fold_constant,fuse_ops` (and again after `dce,anf,primitive` on top,
**   the rest of the compiler's pipeline), on a fresh
**   parse: the results must agree within a float tolerance (the
**   simplified batch_norm rounds differently from its kernel) and errors
**   exactly; the module verifies, stays typed with the types re-inference
**   gives, prints and re-parses to an equal module, and every Primitive
**   function's body is dataflow only (op calls, tuples, projections,
**   parameters, constants).
** Then: 100,000-long let chains (live and dead) and a 100,000-deep graph
** chain go through anf+dce on a 1 MiB thread stack (and a 100,000-deep
** chain through fuse_ops and fold_constant, and a 100,000-long let chain
** through graph_form and fuse_ops), and pass_run rejects unknown
** names. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/file.h"
#include "base/strbuf.h"
#include "base/vec.h"
#include "check.h"
#include "interp/interp.h"
#include "ir/ir.h"
#include "passes/pass.h"
#include "relayc/runtime.h"
#include "syntax/parser.h"
#include "types/infer.h"

static const char *const ANF[] = {"anf"};
static const char *const ANF_DCE[] = {"anf", "dce"};
static const char *const OPTIMIZE[] = {"simplify_inference", "graph_form", "fold_constant", "fuse_ops"};

/* {==== Helpers ====} */

static Module *parse_text(SourceMap *sm, Diag *d, const char *name, const char *text, size_t len) {
  char *copy = rly_xmalloc(len + 1);
  memcpy(copy, text, len);
  copy[len] = 0;
  uint32_t f = srcmap_add(sm, name, copy, len);
  return parse_module(sm, f, d);
}

static char *print_module(const Module *m, bool types) {
  StrBuf sb = {0};
  PrintOptions opt = {.show_types = types, .show_metadata = true};
  ir_print_module(&sb, m, &opt);
  char *s = rly_xmalloc(sb.len + 1);
  memcpy(s, sb_str(&sb), sb.len + 1);
  sb_free(&sb);
  return s;
}

/* {==== A-normal form checks ====} */

typedef struct AnfCheck {
  const char *where;
  uint8_t *parents;
  size_t n;
  int bad;
} AnfCheck;

static void anf_fail(AnfCheck *c, const Expr *e, const char *what) {
  if (c->bad++ < 5) fprintf(stderr, "%s: not in A-normal form: %s (a %s)\n", c->where, what, expr_kind_names[e->kind]);
}

/* ToANormalForm's atoms: those of pass_is_atom, and Primitive function
** literals (fused groups), which it leaves as they are. */
static bool anf_atom(const Expr *e) { return pass_is_atom(e) || ir_is_primitive(e); }

static void want_atom(AnfCheck *c, const Expr *e, const char *what) {
  if (!anf_atom(e)) anf_fail(c, e, what);
}

/* A body: a let chain ending in an atom; each let value is not a let. */
static void want_body(AnfCheck *c, const Expr *e, const char *what) {
  while (e->kind == EXPR_LET) {
    if (e->u.let.value->kind == EXPR_LET) anf_fail(c, e->u.let.value, "a let value is a let");
    e = e->u.let.body;
  }
  if (!anf_atom(e)) anf_fail(c, e, what);
}

static void check_root(AnfCheck *c, Expr *root, bool is_def) {
  ExprVec all = {0}, kids = {0};
  ir_postorder(root, IR_KIDS_INNER | IR_KIDS_OPAQUE_PRIMITIVE, &all);
  if (is_def) {
    if (root->kind != EXPR_FUNC) anf_fail(c, root, "a def is not a function");
  } else {
    want_body(c, root, "the expression is not a body");
  }
  for (int i = 0; i < all.len; i++) {
    Expr *e = all.data[i];
    kids.len = 0;
    ir_kids(e, IR_KIDS_INNER | IR_KIDS_OPAQUE_PRIMITIVE, &kids);
    for (int k = 0; k < kids.len; k++) {
      Expr *x = kids.data[k];
      if (anf_atom(x)) continue;
      RLY_ASSERT(x->id < c->n);
      if (c->parents[x->id]++) anf_fail(c, x, "a non-atomic node has two parents");
    }
    switch (e->kind) {
    case EXPR_TUPLE:
    case EXPR_GET_ITEM:
    case EXPR_CALL:
    case EXPR_REF_NEW:
    case EXPR_REF_READ:
    case EXPR_REF_WRITE:
      for (int k = 0; k < kids.len; k++) want_atom(c, kids.data[k], "an operand is not an atom");
      break;
    case EXPR_IF:
      want_atom(c, e->u.if_.cond, "an if condition is not an atom");
      want_body(c, e->u.if_.then_, "a then branch is not a body");
      want_body(c, e->u.if_.else_, "an else branch is not a body");
      break;
    case EXPR_MATCH:
      want_atom(c, e->u.match.scrut, "a match scrutinee is not an atom");
      for (int k = 0; k < e->u.match.nclauses; k++) want_body(c, e->u.match.clauses[k].body, "a clause is not a body");
      break;
    case EXPR_FUNC:
      if (!ir_is_primitive(e)) want_body(c, e->u.func.body, "a function body is not a body");
      break;
    default: break;
    }
  }
  VEC_FREE(&all);
  VEC_FREE(&kids);
}

static bool in_anf(const Module *m, const char *where) {
  AnfCheck c = {where, rly_xcalloc(m->nexprs + 1, 1), m->nexprs + 1, 0};
  for (int i = 0; i < m->ndefs; i++) check_root(&c, m->defs[i]->func, true);
  if (m->expr) check_root(&c, m->expr, false);
  free(c.parents);
  return c.bad == 0;
}

/* {==== Running a program ====} */

typedef struct RunSpec {
  char function[256];  /* "" = main (or the expression) */
  char *inputs[64];    /* NAME=FILE, owned */
  int ninputs;
} RunSpec;

static void spec_free(RunSpec *s) {
  for (int i = 0; i < s->ninputs; i++) free(s->inputs[i]);
  s->ninputs = 0;
}

/* Reads NAME.args (shell words separated by blanks, no quoting). */
static void read_args(const char *relay_path, RunSpec *s) {
  memset(s, 0, sizeof *s);
  char path[1024];
  snprintf(path, sizeof path, "%.*s.args", (int)(strlen(relay_path) - 6), relay_path);
  char err[256];
  size_t len;
  char *text = file_read_all(path, &len, err, sizeof err);
  if (!text) return;
  char *save = NULL;
  const char *prev = NULL;
  for (char *w = strtok_r(text, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
    if (prev && strcmp(prev, "--function") == 0)
      snprintf(s->function, sizeof s->function, "%s", w[0] == '@' ? w + 1 : w);
    if (prev && strcmp(prev, "--input") == 0 && s->ninputs < 64) {
      size_t n = strlen(w);
      s->inputs[s->ninputs] = rly_xmalloc(n + 1);
      memcpy(s->inputs[s->ninputs++], w, n + 1);
    }
    prev = w;
  }
  free(text);
}

static bool fits(const rlyrt_tensor *t, const Type *ty) {
  if (!ty || ty->kind != TYPE_TENSOR) return false;
  const DType *dt = &ty->u.tensor.dtype;
  if (t->dl.dtype.code != dt->code || t->dl.dtype.bits != dt->bits || t->dl.dtype.lanes != dt->lanes) return false;
  if (t->dl.ndim != ty->u.tensor.ndim) return false;
  for (int i = 0; i < t->dl.ndim; i++)
    if (ty->u.tensor.shape[i] != RLY_DIM_ANY && ty->u.tensor.shape[i] != t->dl.shape[i]) return false;
  return true;
}

/* The parameters to bind and the global to call (NULL: the expression). */
static bool entry(Module *m, const RunSpec *s, const GlobalDef **g, Expr ***params, int *nparams) {
  *g = NULL;
  if (m->expr && !s->function[0]) {
    *params = m->free_vars;
    *nparams = m->nfree_vars;
    return true;
  }
  *g = module_find_def(m, sym_intern_cstr(&m->syms, s->function[0] ? s->function : "main"));
  if (!*g) return false;
  *params = (*g)->func->u.func.params;
  *nparams = (*g)->func->u.func.nparams;
  return true;
}

/* Loads the inputs for params (by name). Returns false when they cannot
** all be bound (missing, unknown, unreadable, wrong dtype or shape). */
static bool load_inputs(const RunSpec *s, Expr **params, int nparams, rlyrt_object **vals) {
  bool ok = true;
  for (int k = 0; k < s->ninputs; k++) {
    const char *eq = strchr(s->inputs[k], '=');
    if (!eq) return false;
    size_t nlen = (size_t)(eq - s->inputs[k]);
    int j = -1;
    for (int i = 0; i < nparams; i++) {
      const Symbol *nm = params[i]->u.var.name;
      if (nm && nm->len == nlen && memcmp(nm->text, s->inputs[k], nlen) == 0) j = i;
    }
    if (j < 0 || vals[j]) {
      ok = false;
      continue;
    }
    rlyrt_tensor *t = NULL;
    if (rlyrt_npy_load(eq + 1, &t) != RLYRT_OK) {
      ok = false;
      continue;
    }
    if (!fits(t, params[j]->type)) {
      rlyrt_release(&t->obj);
      ok = false;
      continue;
    }
    vals[j] = &t->obj;
  }
  for (int i = 0; i < nparams; i++)
    if (!vals[i]) ok = false;
  return ok;
}

/* Runs the program; returns a malloc'd description of the outcome ("ok:
** VALUE" or "error STATUS: MESSAGE"), or NULL when it cannot be run. */
static char *run_program(Module *m, const SourceMap *sm, const RunSpec *s) {
  const GlobalDef *g;
  Expr **params;
  int nparams;
  if (!entry(m, s, &g, &params, &nparams)) return NULL;
  rlyrt_object **vals = rly_xcalloc((size_t)nparams + 1, sizeof(rlyrt_object *));
  char *outcome = NULL;
  if (load_inputs(s, params, nparams, vals)) {
    Interp *I = interp_new(m, sm);
    rlyrt_object *result = NULL;
    rlyrt_status st = g ? interp_call(I, g, vals, nparams, &result) : interp_eval_expr(I, vals, &result);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (st == RLYRT_OK) {
      fputs("ok: ", f);
      rlyrt_value_print(f, result);
    } else {
      fprintf(f, "error %s: %s", rlyrt_status_name(st), rlyrt_last_error());
    }
    fclose(f);
    outcome = buf;
    rlyrt_release(result);
    interp_free(I);
  }
  for (int i = 0; i < nparams; i++) rlyrt_release(vals[i]);
  free(vals);
  return outcome;
}


/* Runs the program like run_program, keeping the result: returns false
** when it cannot be run; else *out is the value (owned) or NULL with the
** error text in *err (malloc'd). The value may point into the
** interpreter (constants): *interp is the interpreter, for the caller to
** free (interp_free) after the value. */
static bool run_value(Module *m, const SourceMap *sm, const RunSpec *s, rlyrt_object **out, char **err,
                      Interp **interp) {
  const GlobalDef *g;
  Expr **params;
  int nparams;
  *out = NULL;
  *err = NULL;
  if (!entry(m, s, &g, &params, &nparams)) return false;
  rlyrt_object **vals = rly_xcalloc((size_t)nparams + 1, sizeof(rlyrt_object *));
  bool ran_it = load_inputs(s, params, nparams, vals);
  if (ran_it) {
    Interp *I = interp_new(m, sm);
    rlyrt_status st = g ? interp_call(I, g, vals, nparams, out) : interp_eval_expr(I, vals, out);
    if (st != RLYRT_OK) {
      const char *msg = rlyrt_last_error();
      *err = rly_xmalloc(strlen(msg) + 64);
      sprintf(*err, "error %s: %s", rlyrt_status_name(st), msg);
      *out = NULL;
    }
    *interp = I;
  }
  for (int i = 0; i < nparams; i++) rlyrt_release(vals[i]);
  free(vals);
  return ran_it;
}

/* a and b are the same value, floats within a relative 1e-5 (float16:
** 1e-2) plus the same absolute slack. */
static bool close_values(const rlyrt_object *a, const rlyrt_object *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case RLYRT_TENSOR: {
    const rlyrt_tensor *x = (const rlyrt_tensor *)a, *y = (const rlyrt_tensor *)b;
    if (!rlyrt_dtype_eq(x->dl.dtype, y->dl.dtype) || x->dl.ndim != y->dl.ndim) return false;
    for (int i = 0; i < x->dl.ndim; i++)
      if (x->dl.shape[i] != y->dl.shape[i]) return false;
    bool fl = rlyrt_dtype_is_float(x->dl.dtype);
    double tol = x->dl.dtype.bits == 16 ? 1e-2 : 1e-5;
    for (int64_t i = 0, n = rlyrt_tensor_numel(x); i < n; i++) {
      if (!fl) {
        if (rlyrt_get_i64(x, i) != rlyrt_get_i64(y, i)) return false;
        continue;
      }
      double u = rlyrt_get_f64(x, i), v = rlyrt_get_f64(y, i);
      if (u != u || v != v) {
        if ((u != u) != (v != v)) return false;
        continue;
      }
      if (u == v) continue;
      double d = u > v ? u - v : v - u, s = v < 0 ? -v : v;
      if (d > tol + tol * s) return false;
    }
    return true;
  }
  case RLYRT_REF: return close_values(rlyrt_ref_get(a), rlyrt_ref_get(b));
  default: {
    int32_t n = rlyrt_num_fields(a);
    if (n != rlyrt_num_fields(b)) return false;
    const char *ca = rlyrt_adt_ctor(a), *cb = rlyrt_adt_ctor(b);
    if ((ca == NULL) != (cb == NULL) || (ca && strcmp(ca, cb) != 0)) return false;
    for (int32_t i = 0; i < n; i++)
      if (!close_values(rlyrt_field(a, i), rlyrt_field(b, i))) return false;
    return true;
  }
  }
}

static bool is_primitive(const Expr *f) {
  const Attrs *a = f->u.func.attrs;
  for (int i = 0; a && !a->cls && i < a->n; i++)
    if (a->keys[i] && strcmp(a->keys[i]->text, "Primitive") == 0) return true;
  return false;
}

/* Every Primitive function's body is dataflow over its parameters.
** *count: how many Primitive functions there are. */
static bool primitive_bodies_ok(const Module *m, int *count) {
  bool ok = true;
  *count = 0;
  for (int d = 0; d <= m->ndefs; d++) {
    Expr *root = d < m->ndefs ? m->defs[d]->func : m->expr;
    if (!root) continue;
    ExprVec all = {0}, inner = {0};
    pass_postorder(root, &all);
    for (int i = 0; i < all.len; i++) {
      Expr *f = all.data[i];
      if (f->kind != EXPR_FUNC || !is_primitive(f)) continue;
      ++*count;
      inner.len = 0;
      pass_postorder(f->u.func.body, &inner);
      for (int k = 0; k < inner.len; k++) {
        Expr *e = inner.data[k];
        bool good = e->kind == EXPR_CONST || e->kind == EXPR_OP || e->kind == EXPR_TUPLE || e->kind == EXPR_GET_ITEM ||
                    (e->kind == EXPR_CALL && e->u.call.callee->kind == EXPR_OP);
        if (e->kind == EXPR_VAR)
          for (int p = 0; p < f->u.func.nparams; p++) good = good || f->u.func.params[p] == e;
        if (e->kind == EXPR_LET) good = true; /* written so in the input (anf'd kernels) */
        if (!good) ok = false;
      }
    }
    VEC_FREE(&all);
    VEC_FREE(&inner);
  }
  return ok;
}

/* The optimizing passes on path: see the file comment. */
static void check_optimize(const char *path, bool run) {
  char err[512];
  size_t len;
  char *text = file_read_all(path, &len, err, sizeof err);
  CHECK(text != NULL);
  if (!text) return;
  SourceMap sm = {0};
  Diag d;
  diag_init(&d, &sm);
  Module *m = parse_text(&sm, &d, path, text, len), *m2 = NULL;
  free(text);
  RunSpec spec;
  if (run) read_args(path, &spec);
  else memset(&spec, 0, sizeof spec);
  rlyrt_object *before = NULL, *after = NULL;
  Interp *ib = NULL, *ia = NULL;
  char *err_before = NULL, *err_after = NULL, *printed = NULL, *typed1 = NULL, *typed2 = NULL;
  bool can_run = false;
  bool ok = m && ty_infer_module(m, &d);
  CHECK(ok);
  if (!ok) goto done;
  if (run) can_run = run_value(m, &sm, &spec, &before, &err_before, &ib);
  /* Primitive functions of the input may read outer variables; the
  ** groups fuse_ops makes read their parameters only. */
  int input_primitives = 0, primitives = 0;
  primitive_bodies_ok(m, &input_primitives);
  ok = pass_run(m, OPTIMIZE, (int)RLY_COUNTOF(OPTIMIZE), &d) && ir_verify(m, &d);
  CHECK(ok);
  if (!ok) {
    fprintf(stderr, "%s: simplify_inference,graph_form,fold_constant,fuse_ops failed\n", path);
    goto done;
  }
  CHECK(pass_module_typed(m));
  CHECK(primitive_bodies_ok(m, &primitives) || input_primitives > 0);
  printed = print_module(m, false);
  m2 = parse_text(&sm, &d, "<printed after fuse_ops>", printed, strlen(printed));
  CHECK(m2 != NULL);
  if (m2 && !ir_module_equal(m, m2)) {
    CHECK(!"the printed result re-parses to an equal module");
    fprintf(stderr, "%s: printed after fuse_ops:\n%s\n", path, printed);
  }
  CHECK(!m2 || ty_infer_module(m2, &d));
  typed1 = print_module(m, true);
  CHECK(pass_retype(m, &d));
  typed2 = print_module(m, true);
  if (strcmp(typed1, typed2) != 0) {
    CHECK(!"graph_form, fold_constant and fuse_ops keep the types inference gives");
    fprintf(stderr, "%s: kept:\n%s\nre-inferred:\n%s\n", path, typed1, typed2);
  }
  for (int round = 0; round < 2; round++) {
    if (round == 1) {
      /* The rest of the compiler's pipeline after fusion. */
      static const char *const REST[] = {"dce", "anf", "primitive"};
      CHECK(pass_run(m, REST, 2, &d) && ir_verify(m, &d));
      CHECK(in_anf(m, path));
      CHECK(pass_run(m, REST + 2, 1, &d) && ir_verify(m, &d));
    }
    if (!can_run) continue;
    rlyrt_release(after);
    interp_free(ia);
    free(err_after);
    after = NULL, ia = NULL, err_after = NULL;
    CHECK(run_value(m, &sm, &spec, &after, &err_after, &ia));
    bool same = err_before || err_after ? err_before && err_after && strcmp(err_before, err_after) == 0
                                        : close_values(before, after);
    if (!same) {
      CHECK(!"the same result before and after simplify_inference,graph_form,fold_constant,fuse_ops");
      fprintf(stderr, "%s (round %d):\n  before: ", path, round);
      if (before) rlyrt_value_print(stderr, before);
      else fputs(err_before ? err_before : "?", stderr);
      fputs("\n  after:  ", stderr);
      if (after) rlyrt_value_print(stderr, after);
      else fputs(err_after ? err_after : "?", stderr);
      fputs("\n", stderr);
    }
  }

done:
  if (diag_count(&d)) diag_print(&d, stderr);
  spec_free(&spec);
  rlyrt_release(before);
  rlyrt_release(after);
  interp_free(ib);
  interp_free(ia);
  free(err_before);
  free(err_after);
  free(printed);
  free(typed1);
  free(typed2);
  module_free(m);
  module_free(m2);
  diag_free(&d);
  srcmap_free(&sm);
}

/* {==== The corpus ====} */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int ran, not_run;

static void check_program(const char *path, bool run) {
  char err[512];
  size_t len;
  char *text = file_read_all(path, &len, err, sizeof err);
  CHECK(text != NULL);
  if (!text) return;
  SourceMap sm = {0};
  Diag d;
  diag_init(&d, &sm);
  Module *m = parse_text(&sm, &d, path, text, len), *m2 = NULL;
  free(text);
  char *before = NULL, *after = NULL, *printed = NULL, *typed1 = NULL, *typed2 = NULL, *printed3 = NULL;
  RunSpec spec;
  if (run) read_args(path, &spec);
  else memset(&spec, 0, sizeof spec);
  bool ok = m && ty_infer_module(m, &d);
  CHECK(ok);
  if (!ok) {
    fprintf(stderr, "%s: does not type-check\n", path);
    goto done;
  }
  if (run) before = run_program(m, &sm, &spec);

  /* anf alone: shape, verification, printing, types. */
  ok = pass_run(m, ANF, 1, &d) && ir_verify(m, &d);
  CHECK(ok);
  if (!ok) {
    fprintf(stderr, "%s: anf failed\n", path);
    goto done;
  }
  CHECK(pass_module_typed(m));
  CHECK(in_anf(m, path));
  printed = print_module(m, false);
  m2 = parse_text(&sm, &d, "<printed after anf>", printed, strlen(printed));
  CHECK(m2 != NULL);
  if (m2) {
    if (!ir_module_equal(m, m2)) {
      CHECK(!"the printed result re-parses to an equal module");
      fprintf(stderr, "%s: printed after anf:\n%s\n", path, printed);
    }
    CHECK(ty_infer_module(m2, &d));
    /* Idempotent: anf of the re-parsed result prints the same text. */
    CHECK(pass_run(m2, ANF, 1, &d));
    printed3 = print_module(m2, false);
    CHECK_STR(printed3, printed);
  }
  /* The types anf kept are the types inference gives. */
  typed1 = print_module(m, true);
  CHECK(pass_retype(m, &d));
  typed2 = print_module(m, true);
  if (strcmp(typed1, typed2) != 0) {
    CHECK(!"anf keeps the types inference gives");
    fprintf(stderr, "%s: kept:\n%s\nre-inferred:\n%s\n", path, typed1, typed2);
  }

  /* then dce */
  ok = pass_run(m, ANF_DCE + 1, 1, &d) && ir_verify(m, &d);
  CHECK(ok);
  if (!ok) goto done;
  CHECK(pass_module_typed(m));
  CHECK(in_anf(m, path));
  if (!run) goto done;
  after = run_program(m, &sm, &spec);
  CHECK((before == NULL) == (after == NULL));
  if (before && after) {
    ran++;
    if (strcmp(before, after) != 0) {
      CHECK(!"the same result before and after anf,dce");
      fprintf(stderr, "%s:\n  before: %s\n  after:  %s\n", path, before, after);
    }
  } else {
    not_run++;
  }

done:
  if (diag_count(&d)) diag_print(&d, stderr);
  spec_free(&spec);
  free(before);
  free(after);
  free(printed);
  free(printed3);
  free(typed1);
  free(typed2);
  module_free(m);
  module_free(m2);
  diag_free(&d);
  srcmap_free(&sm);
}

/* Every .relay file of dir, in name order; run: compare the interpreter's
** results too. Returns how many files there were. */
static int test_dir(const char *dir, bool run) {
  DIR *dp = opendir(dir);
  CHECK(dp != NULL);
  if (!dp) return 0;
  Vec(char *) files = {0};
  struct dirent *de;
  while ((de = readdir(dp))) {
    size_t n = strlen(de->d_name);
    if (n > 6 && strcmp(de->d_name + n - 6, ".relay") == 0) {
      char *p = rly_xmalloc(strlen(dir) + n + 2);
      sprintf(p, "%s/%s", dir, de->d_name);
      VEC_PUSH(&files, p);
    }
  }
  closedir(dp);
  qsort(files.data, (size_t)files.len, sizeof(char *), cmp_str);
  int count = files.len;
  for (int i = 0; i < files.len; i++) {
    check_program(files.data[i], run);
    check_optimize(files.data[i], run);
    free(files.data[i]);
  }
  VEC_FREE(&files);
  return count;
}

static void test_corpus(void) {
  CHECK(test_dir("tests/run", true) > 40);
  printf("test_passes: %d programs compared, %d transformed but not run (inputs the CLI rejects)\n", ran, not_run);
  CHECK(ran > 40);
  /* The parser and type-checker corpus, the examples and the typed
  ** golden files: transformed and checked, not run. */
  CHECK(test_dir("tests/corpus", false) > 30);
  CHECK(test_dir("examples", false) > 0);
  CHECK(test_dir("tests/golden/types", false) > 0);
  CHECK(test_dir("tests/golden/passes", false) >= 10);
}

/* {==== Long chains ====} */

enum { CHAIN = 100000 };

/* Parses text, infers, runs anf,dce, verifies; returns the module (NULL
** after a failed check). */
static Module *through_passes(SourceMap *sm, Diag *d, const char *name, const char *text) {
  Module *m = parse_text(sm, d, name, text, strlen(text));
  CHECK(m != NULL);
  if (!m) return NULL;
  bool ok = ty_infer_module(m, d) && pass_run(m, ANF_DCE, 2, d) && ir_verify(m, d);
  CHECK(ok);
  CHECK(in_anf(m, name));
  if (!ok) {
    module_free(m);
    return NULL;
  }
  return m;
}

static char *run_main(Module *m, const SourceMap *sm) {
  RunSpec s;
  memset(&s, 0, sizeof s);
  return run_program(m, sm, &s);
}

static void *chains(void *arg) {
  (void)arg;
  SourceMap sm = {0};
  Diag d;
  diag_init(&d, &sm);
  StrBuf sb = {0};

  /* A live let chain: each let uses the previous one. */
  sb_puts(&sb, "#[version = \"0.0.5\"]\ndef @main() -> int32 {\n  let %v0 = 0;\n");
  for (int i = 1; i < CHAIN; i++) sb_printf(&sb, "  let %%v%d = add(%%v%d, 1);\n", i, i - 1);
  sb_printf(&sb, "  %%v%d\n}\n", CHAIN - 1);
  Module *m = through_passes(&sm, &d, "<let chain>", sb_str(&sb));
  if (m) {
    char *r = run_main(m, &sm);
    CHECK_STR(r, "ok: 99999");
    free(r);
    module_free(m);
  }

  /* A dead let chain: nothing is used; dce removes every let. */
  sb_clear(&sb);
  sb_puts(&sb, "#[version = \"0.0.5\"]\ndef @main(%x: int32) -> int32 {\n  let %v0 = add(%x, 1);\n");
  for (int i = 1; i < CHAIN; i++) sb_printf(&sb, "  let %%v%d = add(%%v%d, 1);\n", i, i - 1);
  sb_puts(&sb, "  %x\n}\n");
  m = through_passes(&sm, &d, "<dead chain>", sb_str(&sb));
  if (m) {
    Expr *body = m->defs[0]->func->u.func.body;
    CHECK(body->kind == EXPR_VAR);
    module_free(m);
  }

  /* A graph chain: one 100,000-deep dataflow expression. */
  sb_clear(&sb);
  sb_puts(&sb, "#[version = \"0.0.5\"]\ndef @main() -> int32 {\n  %0 = add(0, 1);\n");
  for (int i = 1; i < CHAIN; i++) sb_printf(&sb, "  %%%d = add(%%%d, 1);\n", i, i - 1);
  sb_printf(&sb, "  %%%d\n}\n", CHAIN - 1);
  m = through_passes(&sm, &d, "<graph chain>", sb_str(&sb));
  if (m) {
    char *r = run_main(m, &sm);
    CHECK_STR(r, "ok: 100000");
    free(r);
    char *text = print_module(m, false);
    CHECK(strstr(text, "let %t_99999 = add(%t_99998, 1);") != NULL);
    free(text);
    module_free(m);
  }

  /* A graph chain of shared nodes: each node used twice by the next. */
  sb_clear(&sb);
  sb_puts(&sb, "#[version = \"0.0.5\"]\ndef @main() -> int32 {\n  %0 = add(0, 0);\n");
  for (int i = 1; i < CHAIN; i++) sb_printf(&sb, "  %%%d = add(%%%d, %%%d);\n", i, i - 1, i - 1);
  sb_printf(&sb, "  %%%d\n}\n", CHAIN - 1);
  m = through_passes(&sm, &d, "<shared chain>", sb_str(&sb));
  if (m) {
    char *r = run_main(m, &sm);
    CHECK_STR(r, "ok: 0");
    free(r);
    module_free(m);
  }

  /* A 100,000-deep elementwise chain through fuse_ops: groups of 256 (on a
  ** 1-element tensor: calls on 0-d tensors only are not fused). */
  sb_clear(&sb);
  sb_puts(&sb, "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1), int32]) -> Tensor[(1), int32] {\n  %0 = add(%x, 1);\n");
  for (int i = 1; i < CHAIN; i++) sb_printf(&sb, "  %%%d = add(%%%d, 1);\n", i, i - 1);
  sb_printf(&sb, "  %%%d\n}\n", CHAIN - 1);
  m = parse_text(&sm, &d, "<fused chain>", sb.data, sb.len);
  CHECK(m && ty_infer_module(m, &d));
  const char *const fuse[] = {"fuse_ops"};
  if (m && pass_run(m, fuse, 1, &d)) {
    CHECK(ir_verify(m, &d));
    char *text = print_module(m, false);
    int groups = 0;
    for (const char *p = text; (p = strstr(p, "Primitive=1")); p++) groups++;
    CHECK_EQ(groups, (CHAIN + 255) / 256);
    free(text);
    const GlobalDef *g = m->defs[0];
    static const int64_t one[1] = {1};
    rlyrt_tensor *x = rlyrt_tensor_new((DLDataType){kDLInt, 32, 1}, 1, one, true);
    Interp *I = interp_new(m, &sm);
    rlyrt_object *xo = &x->obj, *r = NULL;
    CHECK(interp_call(I, g, &xo, 1, &r) == RLYRT_OK);
    CHECK(r && r->kind == RLYRT_TENSOR && rlyrt_get_i64((rlyrt_tensor *)r, 0) == CHAIN);
    rlyrt_release(r);
    rlyrt_release(xo);
    interp_free(I);
  } else {
    CHECK(!"fuse_ops on a deep chain");
  }
  module_free(m);

  /* The same chain written as 100,000 lets: graph_form makes it the graph
  ** chain (no let left), so fuse_ops groups it as above. */
  sb_clear(&sb);
  sb_puts(&sb, "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1), int32]) -> Tensor[(1), int32] {\n  let %v0 = add(%x, 1);\n");
  for (int i = 1; i < CHAIN; i++) sb_printf(&sb, "  let %%v%d = add(%%v%d, 1);\n", i, i - 1);
  sb_printf(&sb, "  %%v%d\n}\n", CHAIN - 1);
  m = parse_text(&sm, &d, "<let chain to fuse>", sb.data, sb.len);
  CHECK(m && ty_infer_module(m, &d));
  const char *const graph_fuse[] = {"graph_form", "fuse_ops"};
  if (m && pass_run(m, graph_fuse, 1, &d)) {
    CHECK(ir_verify(m, &d));
    CHECK(m->defs[0]->func->u.func.body->kind == EXPR_CALL);
    CHECK(pass_run(m, graph_fuse + 1, 1, &d));
    char *text = print_module(m, false);
    int groups = 0;
    for (const char *p = text; (p = strstr(p, "Primitive=1")); p++) groups++;
    CHECK_EQ(groups, (CHAIN + 255) / 256);
    CHECK(strstr(text, "let ") == NULL);
    free(text);
  } else {
    CHECK(!"graph_form on a deep let chain");
  }
  module_free(m);

  /* The same chain of constants folds to one constant. */
  sb_clear(&sb);
  sb_puts(&sb, "#[version = \"0.0.5\"]\ndef @main() -> int32 {\n  %0 = add(0, 1);\n");
  for (int i = 1; i < CHAIN; i++) sb_printf(&sb, "  %%%d = add(%%%d, 1);\n", i, i - 1);
  sb_printf(&sb, "  %%%d\n}\n", CHAIN - 1);
  m = parse_text(&sm, &d, "<folded chain>", sb.data, sb.len);
  CHECK(m && ty_infer_module(m, &d));
  const char *const fold[] = {"fold_constant"};
  if (m && pass_run(m, fold, 1, &d)) {
    Expr *body = m->defs[0]->func->u.func.body;
    CHECK(body->kind == EXPR_CONST && *(int32_t *)body->u.constant.value->data == CHAIN);
  } else {
    CHECK(!"fold_constant on a deep chain");
  }
  module_free(m);

  if (diag_count(&d)) diag_print(&d, stderr);
  sb_free(&sb);
  diag_free(&d);
  srcmap_free(&sm);
  return NULL;
}

/* The chains run on a 1 MiB stack: recursion per node would overflow it. */
static void test_chains(void) {
  pthread_attr_t attr;
  pthread_t t;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, (size_t)1 << 20);
  int rc = pthread_create(&t, &attr, chains, NULL);
  CHECK_EQ(rc, 0);
  if (rc == 0) pthread_join(t, NULL);
  pthread_attr_destroy(&attr);
}

/* {==== graph_form ====} */

/* A let whose variable is used in its own value (or is its value) cannot
** run: graph_form keeps it for anf to report (the golden files hold only
** programs that run). */
static void test_graph_form_self(void) {
  static const char *const srcs[] = {
      "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(3), float32]) {\n"
      "  let %s: Tensor[(3), float32] = add(%s, %x);\n  %s\n}\n",
      "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(3), float32]) {\n"
      "  let %s: Tensor[(3), float32] = %s;\n  add(%s, %x)\n}\n",
  };
  const char *const gf[] = {"graph_form"};
  for (size_t i = 0; i < RLY_COUNTOF(srcs); i++) {
    SourceMap sm = {0};
    Diag d;
    diag_init(&d, &sm);
    Module *m = parse_text(&sm, &d, "<self>", srcs[i], strlen(srcs[i]));
    CHECK(m && ty_infer_module(m, &d));
    CHECK(m && pass_run(m, gf, 1, &d) && ir_verify(m, &d));
    CHECK(m && m->defs[0]->func->u.func.body->kind == EXPR_LET);
    if (diag_count(&d)) diag_print(&d, stderr);
    module_free(m);
    diag_free(&d);
    srcmap_free(&sm);
  }
}

/* {==== The driver ====} */

static void test_driver(void) {
  CHECK(pass_find("anf") == &pass_table[PASS_ID_anf]);
  CHECK(pass_find("ToANormalForm") == &pass_table[PASS_ID_anf]);
  CHECK(pass_find("DeadCodeElimination") == &pass_table[PASS_ID_dce]);
  CHECK(pass_find("nope") == NULL);
  SourceMap sm = {0};
  Diag d;
  diag_init(&d, &sm);
  const char *src = "#[version = \"0.0.5\"]\ndef @main(%x: int32) -> int32 { add(%x, 1) }\n";
  Module *m = parse_text(&sm, &d, "<driver>", src, strlen(src));
  CHECK(m && ty_infer_module(m, &d));
  const char *const bad[] = {"anf", "nope"};
  CHECK(!pass_run(m, bad, 2, &d));
  CHECK_EQ(diag_count(&d), 1);
  /* Nothing ran: the module is unchanged. */
  CHECK(m->defs[0]->func->u.func.body->kind == EXPR_CALL);
  module_free(m);
  diag_free(&d);
  srcmap_free(&sm);
}

/* A let variable used in its own value outside a function cannot be
** evaluated: anf reports it for each definition, and leaves those
** definitions as they were (the module stays valid). */
static void test_self_use(void) {
  SourceMap sm = {0};
  Diag d;
  diag_init(&d, &sm);
  const char *src =
      "#[version = \"0.0.5\"]\n"
      "def @a(%n: int32) -> int32 { let %x = add(multiply(%x, 2), %n); %x }\n"
      "def @b() -> (fn () -> int32, int32) { let %f = (fn () -> int32 { %f.1 }, 1); %f }\n"
      "def @c(%n: int32) -> int32 { let %g = fn (%k: int32) -> int32 { %g(%k) }; %g(%n) }\n";
  Module *m = parse_text(&sm, &d, "<self use>", src, strlen(src));
  CHECK(m && ty_infer_module(m, &d));
  if (!m) return;
  Expr *before_a = module_find_def(m, sym_intern_cstr(&m->syms, "a"))->func;
  CHECK(!pass_run(m, ANF, 1, &d));
  CHECK_EQ(diag_count(&d), 2);
  CHECK(d.items.len == 2 && strstr(d.items.data[0].msg, "%x is used in its own definition") != NULL);
  CHECK(d.items.len == 2 && strstr(d.items.data[1].msg, "%f is used in its own definition") != NULL);
  CHECK(module_find_def(m, sym_intern_cstr(&m->syms, "a"))->func == before_a);
  Diag d2;
  diag_init(&d2, &sm);
  CHECK(ir_verify(m, &d2));
  diag_free(&d2);
  module_free(m);
  diag_free(&d);
  srcmap_free(&sm);
}

int main(void) {
  test_driver();
  test_self_use();
  test_graph_form_self();
  test_corpus();
  test_chains();
  return check_report("test_passes");
}
