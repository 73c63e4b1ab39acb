/* test_lower.c: lower_loops (lower/loops.c) against the reference
** kernels' case tables (the .txt files of tests/kernels, format: test_kernels.c).
** Run from the repository root.
**
** Every case whose op lower_loops accepts becomes a kernel: the case's
** `def @t(%a0: T0, ...) { OP(...) }` is parsed and type-checked, and its
** function (the op call on the parameters) is lowered. All kernels go into
** one C file with a table of them, built once into a shared library with
** -Wall -Wextra -Werror (the compiler is $RLY_TEST_CC when set), loaded
** with dlopen, and each kernel runs on its case's inputs: integers and
** bools must match the expected .npy exactly, floats within the case's
** tolerance, and the result must be bit-identical to the reference
** kernel's on the same inputs (NaN payloads aside), except float32 dense
** and batch_matmul, softmax and sum/mean/max/min, which accumulate in
** float32 and must be within that accumulation's error of it
** (close_to_ref, with the length of the reduction or of the row). The library is built once
** per vector ISA of the GEMM kernels that the CPU runs. A case where the
** reference kernel must fail may not be lowered (loops cannot fail but for
** memory); every case of lower.txt must be lowered. The test fails unless
** at least MIN_OPS distinct ops were lowered.
**
** Fused groups (test_fused): hand-written multi-call functions on random
** inputs (some with NaN and infinities sprinkled in) against the calls
** evaluated one by one, through lower_loops and lower_reference both.
**
** Every kernel runs a second time with *out preset to a zeroed result of
** the right type (a tuple of them for split): it must write the same bytes
** there and keep *out. Kernels that call the float32 exp/tanh/sigmoid of
** lower/fastmath.c are compared within FAST_ULPS of the reference kernel
** instead of to the bit, and those functions are swept against libm in
** double (specials, subnormals, every exponent) in every ISA build.
**
** Direct checks: what lower_loops refuses (dynamic shapes, float16,
** integer division, ...) appends nothing; the text is deterministic; the
** loop nest is flat for equal shapes and absent for scalars; a failed
** allocation returns RLYRT_E_NOMEM with the message prefixed by `where`. */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/strbuf.h"
#include "cases.h"
#include "check.h"
#include "kernel_check.h"
#include "lower/lower.h"
#include "driver/driver.h"
#include "interp/kcall.h"
#include "ops/ops.h"
#include "relayc/runtime.h"
#include "syntax/parser.h"
#include "types/infer.h"

enum { MIN_OPS = 25, MAX_CASES = 4096, MAX_ARGS = 8 };

typedef rlyrt_status (*KernelFn)(rlyrt_object *const *args, rlyrt_object **out);

/* A lowered case: kernel k<index> of the generated file. */
typedef struct Case {
  char where[600];
  rlyrt_object *args[MAX_ARGS];
  int nargs;
  rlyrt_tensor *want;   /* the expected values (within rtol, atol) */
  rlyrt_tensor *ref;    /* the reference kernel's result (to the bit, or within red_tol) */
  double rtol, atol;
  int64_t red_len;      /* > 0: a float32 reduction of that length accumulated in float32 */
  rlyrt_object *tuple_ref; /* a tuple result: the reference's, compared field by field */
  bool fast;            /* float32 exp/tanh/sigmoid (lower/fastmath.c): near the reference, not its bits */
  const double *exact;  /* the sweep of fastmath: libm's values in double, within FAST_ULPS */
  bool loops;           /* a loop kernel: it writes into a preset tuple too (the reference kernels do not) */
  bool fails;           /* the reference kernel fails on these arguments (an index out of range): so must it */
} Case;

static Case cases[MAX_CASES];
static int ncases;
static StrBuf kernels;           /* the generated kernels */
static StrBuf decls;             /* the reference kernels' prototypes */
static Lowering *lowering;
static bool op_lowered[OP_COUNT];

/* The weird `where` of the allocation-failure kernel: every character
** class the string escape handles. */
static const char nomem_where[] = "we\"ird\\ ?\?=/\n\t\xc3\xa9.relay:1:2";

/* {==== Programs ====} */

typedef struct Program {
  SourceMap sm;
  Diag d;
  Module *m;
} Program;

/* Parses and type-checks src; NULL m (and the messages in *msg) on error. */
static void program_open(Program *p, const char *name, const char *src, StrBuf *msg) {
  memset(&p->sm, 0, sizeof p->sm);
  char *text = strdup(src);
  uint32_t f = srcmap_add(&p->sm, name, text, strlen(text));
  diag_init(&p->d, &p->sm);
  p->m = parse_module(&p->sm, f, &p->d);
  if (p->m && !ty_infer_module(p->m, &p->d)) {
    module_free(p->m);
    p->m = NULL;
  }
  if (!p->m)
    for (int i = 0; i < p->d.items.len; i++) sb_printf(msg, "%s; ", p->d.items.data[i].msg);
}

static void program_close(Program *p) {
  module_free(p->m);
  diag_free(&p->d);
  srcmap_free(&p->sm);
}

/* The function of the program's only def. */
static const Expr *program_fn(const Program *p) { return p->m->defs[0]->func; }

/* {==== Reading the cases ====} */

static void release_args(rlyrt_object **args, int n) {
  for (int i = 0; i < n; i++) rlyrt_release(args[i]);
}

/* The reference kernel's result for the call fn makes on args (a tensor,
** or a tuple when tuple is not NULL: stored there); NULL after reporting a
** failure. */
static rlyrt_tensor *reference(const char *where, Module *m, const Expr *fn, rlyrt_object **args, int nargs,
                               rlyrt_object **tuple) {
  const Expr *call = fn->u.func.body;
  rlyrt_kernel_fn kernel = rlyrt_kernel_lookup(call->u.call.callee->u.op.op->name);
  rlyrt_kernel_call kc;
  char err[256];
  if (!kernel || !kcall_prepare(m->arena, call, &kc, err, sizeof err)) {
    fail(where, "cannot call the reference kernel", kernel ? err : NULL);
    return NULL;
  }
  kc.args = args;
  kc.nargs = nargs;
  if (kernel(&kc) != RLYRT_OK) {
    fail(where, "the reference kernel failed", rlyrt_last_error());
    return NULL;
  }
  if (kc.result->kind == RLYRT_TENSOR) return RLYRT_AS_TENSOR(kc.result);
  if (tuple && kc.result->kind == RLYRT_TUPLE) {
    *tuple = kc.result;
    return NULL;
  }
  fail(where, "the reference kernel's result is not a tensor", NULL);
  rlyrt_release(kc.result);
  return NULL;
}

/* The reduction length of the float32 GEMM-like calls in fn's body (the
** largest), or 0: such kernels accumulate in float32 and are compared with
** the reference kernels within a tolerance that grows with it. */
static int64_t reduction_len(const Expr *e) {
  if (!e) return 0;
  int64_t k = 0;
  if (e->kind == EXPR_LET) {
    int64_t a = reduction_len(e->u.let.value), b = reduction_len(e->u.let.body);
    return a > b ? a : b;
  }
  if (e->kind != EXPR_CALL || e->u.call.callee->kind != EXPR_OP) return 0;
  for (int i = 0; i < e->u.call.nargs; i++) {
    int64_t a = reduction_len(e->u.call.args[i]);
    if (a > k) k = a;
  }
  const char *op = e->u.call.callee->u.op.op->name;
  const Type *t = e->type, *a0 = e->u.call.args[0]->type;
  if (!t || t->kind != TYPE_TENSOR || t->u.tensor.dtype.code != DT_FLOAT || t->u.tensor.dtype.bits != 32) return k;
  int64_t here = 0;
  if (strcmp(op, "nn.dense") == 0) here = a0->u.tensor.shape[a0->u.tensor.ndim - 1];
  /* float32 softmax and reductions (lower/reduce.c) accumulate in float32 too: the length of a row */
  if (!strcmp(op, "nn.softmax") || !strcmp(op, "nn.fast_softmax") || !strcmp(op, "nn.log_softmax")) {
    int f = e->u.call.attrs && e->u.call.attrs->cls ? attrs_class_field(e->u.call.attrs->cls, "axis", 4) : -1;
    int64_t axis = f >= 0 && e->u.call.attrs->values[f]->kind == AV_INT ? e->u.call.attrs->values[f]->u.i.v : -1;
    if (axis < 0) axis += a0->u.tensor.ndim;
    if (axis >= 0 && axis < a0->u.tensor.ndim) here = a0->u.tensor.shape[axis];
  }
  if (!strcmp(op, "sum") || !strcmp(op, "mean") || !strcmp(op, "max") || !strcmp(op, "min")) {
    int64_t nin = 1, nout = 1;
    for (int d = 0; d < a0->u.tensor.ndim; d++) nin *= a0->u.tensor.shape[d];
    for (int d = 0; d < t->u.tensor.ndim; d++) nout *= t->u.tensor.shape[d];
    here = nout ? nin / nout : 0;
  }
  /* float32 conv2d (lower/conv.c) too: C / groups * KH * KW per output */
  if (strcmp(op, "nn.conv2d") == 0 && e->u.call.nargs == 2) {
    const Type *w = e->u.call.args[1]->type;
    here = 1;
    for (int d = 1; d < w->u.tensor.ndim; d++) here *= w->u.tensor.shape[d];
  }
  if (strcmp(op, "nn.batch_matmul") == 0) {
    const Attrs *at = e->u.call.attrs;
    int f = at && at->cls ? attrs_class_field(at->cls, "transpose_a", 11) : -1;
    bool ta = f >= 0 && at->values[f]->kind == AV_BOOL && at->values[f]->u.b;
    here = a0->u.tensor.shape[ta ? 1 : 2];
  }
  return here > k ? here : k;
}

/* Lowers one case line; keeps it in cases[] when lower_loops accepts it.
** The cases of lower.txt are there for lower_loops: each must be lowered. */
static void collect(const char *where, char *line) {
  char *arrow = strstr(line, " => ");
  if (!arrow) return; /* test_kernels reports malformed lines */
  *arrow = 0;
  char *rhs = cases_trim(arrow + 4);
  double rtol = 1e-5, atol = 1e-6;
  char *tol = strchr(rhs, '|');
  if (tol) {
    *tol = 0;
    char *r = strstr(tol + 1, "rtol="), *a = strstr(tol + 1, "atol=");
    if (r) rtol = strtod(r + 5, NULL);
    if (a) atol = strtod(a + 5, NULL);
    rhs = cases_trim(rhs);
  }
  char *parts[64] = {0};
  int np = 0;
  for (char *s = strtok(line, "|"); s && np < 64; s = strtok(NULL, "|")) parts[np++] = cases_trim(s);
  if (np < 1) return;
  const char *attrs = NULL;
  rlyrt_object *args[MAX_ARGS];
  int nargs = 0;
  StrBuf src = {0};
  sb_printf(&src, "#[version = \"0.0.5\"]\ndef @t(");
  for (int i = 1; i < np; i++) {
    if (strncmp(parts[i], "attrs:", 6) == 0) {
      attrs = cases_trim(parts[i] + 6);
      continue;
    }
    rlyrt_tensor *t = NULL;
    if (parts[i][0] == '(' || nargs == MAX_ARGS || !(t = load(where, parts[i]))) {
      /* Tuple arguments: no op that takes one has loops. */
      release_args(args, nargs);
      sb_free(&src);
      return;
    }
    sb_printf(&src, "%s%%a%d: ", nargs ? ", " : "", nargs);
    type_text(&src, t);
    args[nargs++] = &t->obj;
  }
  sb_printf(&src, ") {\n  %s(", parts[0]);
  for (int i = 0; i < nargs; i++) sb_printf(&src, "%s%%a%d", i ? ", " : "", i);
  if (attrs && *attrs) sb_printf(&src, "%s%s", nargs ? ", " : "", attrs);
  sb_puts(&src, ")\n}\n");

  Program p;
  StrBuf msg = {0};
  program_open(&p, where, sb_str(&src), &msg);
  if (!p.m) {
    fail(where, "does not type-check", sb_str(&msg));
  } else {
    char name[32];
    snprintf(name, sizeof name, "k%d", ncases);
    size_t before = kernels.len;
    const Expr *fn = program_fn(&p);
    if (!lower_loops(&kernels, name, fn, where)) {
      CHECK_EQ(kernels.len, before); /* nothing appended */
      if (strstr(where, "/lower.txt:")) fail(where, "not lowered", NULL);
    } else if ((strncmp(rhs, "error:", 6) == 0 && strcmp(parts[0], "scatter_nd") != 0) || ncases == MAX_CASES) {
      /* a loop kernel fails only where its arguments' values say so
      ** (scatter_nd's indices), never for its types alone */
      fail(where, ncases == MAX_CASES ? "too many cases" : "lowered, but the reference kernel fails", rhs);
      kernels.len = before; /* the name is used again */
      kernels.data[before] = 0;
    } else if (strncmp(rhs, "error:", 6) == 0) {
      sb_putc(&kernels, '\n');
      Case *c = &cases[ncases++];
      snprintf(c->where, sizeof c->where, "%s", where);
      memcpy(c->args, args, sizeof args[0] * (size_t)nargs);
      c->nargs = nargs;
      c->fails = true;
      nargs = 0; /* the case keeps them */
    } else {
      StrBuf again = {0};
      CHECK(lower_loops(&again, name, fn, where));
      CHECK(again.len == kernels.len - before && !memcmp(again.data, kernels.data + before, again.len));
      sb_free(&again);
      sb_putc(&kernels, '\n');
      Case *c = &cases[ncases++];
      snprintf(c->where, sizeof c->where, "%s", where);
      memcpy(c->args, args, sizeof args[0] * (size_t)nargs);
      c->nargs = nargs;
      bool tuple = fn->u.func.body->type->kind == TYPE_TUPLE; /* split: to the reference kernel's bits */
      c->want = strchr(rhs, ' ') || tuple ? NULL : load(where, rhs);
      if (!c->want && !tuple) fail(where, "expected one result file", rhs);
      c->ref = reference(where, p.m, fn, args, nargs, tuple ? &c->tuple_ref : NULL);
      c->loops = true;
      if (tuple && !c->tuple_ref) fail(where, "the reference kernel's result is not a tuple", NULL);
      c->rtol = rtol;
      c->atol = atol;
      c->red_len = reduction_len(fn->u.func.body);
      c->fast = strstr(kernels.data + before, "rlyk_") != NULL;
      op_lowered[fn->u.func.body->u.call.callee->u.op.op->id] = true;
      nargs = 0; /* the case keeps them */
    }
  }
  program_close(&p);
  release_args(args, nargs);
  sb_free(&msg);
  sb_free(&src);
}

/* {==== Running the kernels ====} */

/* got and ref hold the same bytes (NaNs may differ in their payload). */
static bool identical(const char *where, const rlyrt_tensor *got, const rlyrt_tensor *ref) {
  if (!rlyrt_dtype_eq(got->dl.dtype, ref->dl.dtype) || got->dl.ndim != ref->dl.ndim) {
    fail(where, "dtype or rank differs from the reference kernel's", NULL);
    return false;
  }
  for (int i = 0; i < got->dl.ndim; i++)
    if (got->dl.shape[i] != ref->dl.shape[i]) {
      fail(where, "shape differs from the reference kernel's", NULL);
      return false;
    }
  size_t size = rlyrt_dtype_bytes(got->dl.dtype);
  bool is_float = rlyrt_dtype_is_float(got->dl.dtype);
  int64_t n = rlyrt_tensor_numel(got);
  const char *g = got->dl.data, *r = ref->dl.data;
  for (int64_t i = 0; i < n; i++) {
    if (!memcmp(g + i * (int64_t)size, r + i * (int64_t)size, size)) continue;
    if (is_float && isnan(rlyrt_get_f64(got, i)) && isnan(rlyrt_get_f64(ref, i))) continue;
    char msg[256];
    if (is_float)
      snprintf(msg, sizeof msg, "element %lld is %a, the reference kernel's %a", (long long)i, rlyrt_get_f64(got, i),
               rlyrt_get_f64(ref, i));
    else
      snprintf(msg, sizeof msg, "element %lld is %lld, the reference kernel's %lld", (long long)i,
               (long long)rlyrt_get_i64(got, i), (long long)rlyrt_get_i64(ref, i));
    fail(where, "not bit-identical", msg);
    return false;
  }
  return true;
}

/* The float32 functions of lower/fastmath.c err by at most 3 ulps (an
** exhaustive run over all 2^32 floats found 1, 1.4 and 2.9 for exp, tanh and
** sigmoid); a few more leave room for a chain's rounding. */
enum { FAST_ULPS = 4 };

/* |got - want| in units of the spacing of floats at want rounded to float
** (the subnormal spacing below FLT_MIN); 0 for the same value, infinity
** for a wrong inf, NaN or sign of zero. */
static double ulps_off(float got, double want) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got) ? 0 : INFINITY;
  float w = (float)want;
  if (isinf(w) || isinf(got)) return got == w ? 0 : INFINITY;
  if (got == w) return signbit(got) == signbit(w) ? 0 : INFINITY;
  double spacing = fabsf(w) < 0x1p-126f ? 0x1p-149 : (double)nextafterf(fabsf(w), INFINITY) - fabsf(w);
  return fabs((double)got - want) / spacing;
}

/* got within FAST_ULPS of ref (the reference kernel's float32 result, one
** rounding off the double value) element by element, or, where a chain
** subtracts (c * f + i * g of the LSTM cell), within that error of the
** terms' scale: the inputs are in [-1, 1), so 1e-6 of max(1, max|ref|). */
static bool near_ref(const char *where, const rlyrt_tensor *got, const rlyrt_tensor *ref) {
  if (!rlyrt_dtype_eq(got->dl.dtype, ref->dl.dtype) || rlyrt_tensor_numel(got) != rlyrt_tensor_numel(ref)) {
    fail(where, "dtype or size differs from the reference kernel's", NULL);
    return false;
  }
  if (got->dl.dtype.code != kDLFloat || got->dl.dtype.bits != 32) return identical(where, got, ref);
  int64_t n = rlyrt_tensor_numel(got);
  double scale = 1;
  for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(((const float *)ref->dl.data)[i]));
  for (int64_t i = 0; i < n; i++) {
    float x = ((const float *)got->dl.data)[i], y = ((const float *)ref->dl.data)[i];
    if (ulps_off(x, y) <= FAST_ULPS + 1 || fabs((double)x - y) <= 1e-6 * scale) continue; /* + 1: ref is rounded too */
    char msg[256];
    snprintf(msg, sizeof msg, "element %lld is %a, the reference kernel's %a", (long long)i, x, y);
    fail(where, "not within the fast functions' error", msg);
    return false;
  }
  return true;
}

/* The fastmath sweep: got within FAST_ULPS of libm's double values. */
static bool near_exact(const char *where, const rlyrt_tensor *got, const double *exact, const rlyrt_tensor *x) {
  int64_t n = rlyrt_tensor_numel(got);
  for (int64_t i = 0; i < n; i++) {
    float v = ((const float *)got->dl.data)[i];
    if (ulps_off(v, exact[i]) <= FAST_ULPS) continue;
    char msg[256];
    snprintf(msg, sizeof msg, "at x = %a: %a, libm's %a (%g ulps)", ((const float *)x->dl.data)[i], v, exact[i],
             ulps_off(v, exact[i]));
    fail(where, "not within FAST_ULPS of libm", msg);
    return false;
  }
  return true;
}

/* got is within float32 accumulation error of ref: a reduction of length k
** in float32 errs by about k * 2^-24 times the sum of the magnitudes of its
** terms; the tensor's largest magnitude stands for that sum's scale. An
** index or a tile written wrong is off by far more. */
static bool close_to_ref(const char *where, const rlyrt_tensor *got, const rlyrt_tensor *ref, int64_t k) {
  if (!rlyrt_dtype_eq(got->dl.dtype, ref->dl.dtype) || got->dl.ndim != ref->dl.ndim) {
    fail(where, "dtype or rank differs from the reference kernel's", NULL);
    return false;
  }
  int64_t n = rlyrt_tensor_numel(got);
  double scale = 0;
  for (int64_t i = 0; i < n; i++)
    if (isfinite(rlyrt_get_f64(ref, i))) scale = fmax(scale, fabs(rlyrt_get_f64(ref, i)));
  for (int64_t i = 0; i < n; i++) {
    double x = rlyrt_get_f64(got, i), y = rlyrt_get_f64(ref, i);
    if (x == y || (isnan(x) && isnan(y)) || fabs(x - y) <= 1e-5 * fabs(y) + 1e-7 * (double)(k + 4) * scale) continue;
    char msg[256];
    snprintf(msg, sizeof msg, "element %lld is %.9g, the reference kernel's %.9g (reduction of %lld)", (long long)i, x,
             y, (long long)k);
    fail(where, "not within float32 accumulation error", msg);
    return false;
  }
  return true;
}

/* Runs fn again with *out preset to a tensor of the result's type, as a
** caller with a workspace does: the kernel must write there, the same
** bytes, and keep *out. */
static void check_preset_out(const Case *c, KernelFn fn, const rlyrt_tensor *first) {
  rlyrt_tensor *buf = rlyrt_tensor_new(first->dl.dtype, first->dl.ndim, first->dl.shape, true);
  rlyrt_object *out = &buf->obj;
  check_count++;
  rlyrt_status s = fn(c->args, &out);
  size_t n = rlyrt_tensor_nbytes(first);
  if (s != RLYRT_OK) fail(c->where, "the kernel failed with *out preset", rlyrt_status_name(s));
  else if (out != &buf->obj) fail(c->where, "the kernel replaced a preset *out", NULL);
  else if (n && memcmp(buf->dl.data, first->dl.data, n)) fail(c->where, "a preset *out holds other bytes", NULL);
  rlyrt_release(&buf->obj);
}

/* The same with a preset tuple of tensors (a tuple result). */
static void check_preset_tuple(const Case *c, KernelFn fn, const rlyrt_tuple *first) {
  rlyrt_tuple *buf = rlyrt_tuple_new(first->n);
  for (int i = 0; i < first->n; i++) {
    const rlyrt_tensor *f = RLYRT_AS_TENSOR(first->fields[i]);
    rlyrt_tuple_set_take(buf, i, &rlyrt_tensor_new(f->dl.dtype, f->dl.ndim, f->dl.shape, true)->obj);
  }
  rlyrt_object *out = &buf->obj;
  check_count++;
  rlyrt_status s = fn(c->args, &out);
  if (s != RLYRT_OK) {
    fail(c->where, "the kernel failed with *out preset", rlyrt_status_name(s));
  } else if (out != &buf->obj) {
    fail(c->where, "the kernel replaced a preset *out", NULL);
    rlyrt_release(out);
  } else {
    for (int i = 0; i < first->n; i++) {
      const rlyrt_tensor *f = RLYRT_AS_TENSOR(first->fields[i]), *g = RLYRT_AS_TENSOR(buf->fields[i]);
      size_t n = rlyrt_tensor_nbytes(f);
      if (n && memcmp(g->dl.data, f->dl.data, n)) fail(c->where, "a preset *out holds other bytes", NULL);
    }
  }
  rlyrt_release(&buf->obj);
}

static void run_case(const Case *c, KernelFn fn) {
  rlyrt_object *out = NULL;
  check_count++;
  rlyrt_status s = fn(c->args, &out);
  if (c->fails) {
    if (s != RLYRT_E_RUNTIME) fail(c->where, "the kernel did not fail as the reference kernel does", rlyrt_status_name(s));
    if (out) fail(c->where, "a failed kernel set *out", NULL);
    if (s == RLYRT_OK) rlyrt_release(out);
    return;
  }
  if (s == RLYRT_OK && out && out->kind == RLYRT_TENSOR) check_preset_out(c, fn, RLYRT_AS_TENSOR(out));
  if (s == RLYRT_OK && out && out->kind == RLYRT_TUPLE && c->loops) check_preset_tuple(c, fn, RLYRT_AS_TUPLE(out));
  if (s != RLYRT_OK) fail(c->where, "the kernel failed", rlyrt_status_name(s));
  else if (c->exact) near_exact(c->where, RLYRT_AS_TENSOR(out), c->exact, RLYRT_AS_TENSOR(c->args[0]));
  else if (c->tuple_ref) {
    const rlyrt_tuple *want = RLYRT_AS_TUPLE(c->tuple_ref), *got = RLYRT_AS_TUPLE(out);
    if (!out || out->kind != RLYRT_TUPLE || got->n != want->n) fail(c->where, "the result is not the tuple expected", NULL);
    else
      for (int i = 0; i < got->n; i++)
        identical(c->where, RLYRT_AS_TENSOR(got->fields[i]), RLYRT_AS_TENSOR(want->fields[i]));
  }
  else if (!out || out->kind != RLYRT_TENSOR) fail(c->where, "the result is not a tensor", NULL);
  else if (c->red_len) { /* float32 accumulation: near the reference kernel (and the case's file) */
    if (c->ref && close_to_ref(c->where, RLYRT_AS_TENSOR(out), c->ref, c->red_len) && c->want != c->ref)
      same(c->where, RLYRT_AS_TENSOR(out), c->want, c->rtol, c->atol);
  } else if (c->want && c->ref && same(c->where, RLYRT_AS_TENSOR(out), c->want, c->rtol, c->atol)) {
    if (c->fast) near_ref(c->where, RLYRT_AS_TENSOR(out), c->ref);
    else identical(c->where, RLYRT_AS_TENSOR(out), c->ref);
  }
  rlyrt_release(out);
}

/* The library's own runtime: a shared library carries a private copy. */
typedef struct LibRuntime {
  void (*set_allocator)(const rlyrt_allocator *a);
  const char *(*last_error)(void);
} LibRuntime;

static void *failing_alloc(void *ctx, size_t size, size_t align) {
  (void)ctx, (void)size, (void)align;
  return NULL;
}

static void failing_free(void *ctx, void *p) { (void)ctx, (void)p; }

/* Kernel k_nomem with its allocator failing: RLYRT_E_NOMEM, "where: ...". */
static void check_nomem(const LibRuntime *rt, KernelFn fn) {
  static const rlyrt_allocator failing = {failing_alloc, failing_free, NULL};
  rlyrt_tensor *x = rlyrt_tensor_new((DLDataType){kDLFloat, 32, 1}, 1, (const int64_t[]){4}, true);
  rlyrt_object *out = NULL;
  rt->set_allocator(&failing);
  rlyrt_status s = fn((rlyrt_object *const[]){&x->obj}, &out);
  rt->set_allocator(NULL);
  CHECK_EQ(s, RLYRT_E_NOMEM);
  CHECK(out == NULL);
  const char *msg = rt->last_error();
  size_t n = strlen(nomem_where);
  CHECK(strncmp(msg, nomem_where, n) == 0 && strncmp(msg + n, ": ", 2) == 0);
  rlyrt_release(&x->obj);
}

/* Builds the kernels (and k_nomem) into one library and runs them all. */
static void build_and_run(const char *nomem_kernel, const char *isa_flags, int opt_level) {
  char err[512];
  char *dir = driver_tmpdir_new(err, sizeof err);
  if (!dir) {
    fail("test_lower", "no temporary directory", err);
    return;
  }
  StrBuf c = {0};
  sb_puts(&c, "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n#include \"relayc/runtime.h\"\n\n");
  sb_puts(&c, sb_str(&decls));
  sb_puts(&c, sb_str(&kernels));
  sb_puts(&c, nomem_kernel);
  /* A shared library exports only what says so; its runtime is private. */
  sb_puts(&c, "\n#define EXPORT __attribute__((visibility(\"default\")))\n"
              "typedef rlyrt_status (*test_kernel)(rlyrt_object *const *args, rlyrt_object **out);\n"
              "EXPORT void test_set_allocator(const rlyrt_allocator *a) { rlyrt_set_allocator(a); }\n"
              "EXPORT const char *test_last_error(void) { return rlyrt_last_error(); }\n"
              "EXPORT const test_kernel test_kernels[] = {\n");
  for (int i = 0; i < ncases; i++) sb_printf(&c, "  k%d,\n", i);
  sb_puts(&c, "  k_nomem,\n};\n");
  StrBuf path = {0}, lib = {0};
  sb_printf(&path, "%s/kernels.c", dir);
  sb_printf(&lib, "%s/libkernels.so", dir);
  FILE *f = fopen(sb_str(&path), "w");
  bool written = f && fwrite(c.data, 1, c.len, f) == c.len;
  if (f && fclose(f) != 0) written = false;
  BuildOptions o;
  driver_options_init(&o);
  o.emit = EMIT_SO;
  o.opt_level = opt_level;
  char cflags[200];
  snprintf(cflags, sizeof cflags, "-Werror -Wshadow -Wvla -Wpointer-arith -Wstrict-prototypes %s", isa_flags);
  o.cflags = cflags;
  const char *cc = getenv("RLY_TEST_CC");
  if (cc && *cc) o.cc = cc;
  o.keep_source = getenv("RLY_TEST_KEEP");
  Diag d;
  diag_init(&d, NULL);
  check_count++;
  if (!written) {
    fail("test_lower", "cannot write", sb_str(&path));
  } else if (!driver_build(&o, sb_str(&path), sb_str(&lib), &d) || d.nerrors) {
    for (int i = 0; i < d.items.len; i++) fprintf(stderr, "%s\n", d.items.data[i].msg);
    fail("test_lower", "the generated kernels do not build", NULL);
  } else {
    void *h = dlopen(sb_str(&lib), RTLD_NOW | RTLD_LOCAL);
    const KernelFn *table = h ? (const KernelFn *)dlsym(h, "test_kernels") : NULL;
    LibRuntime rt;
    *(void **)&rt.set_allocator = h ? dlsym(h, "test_set_allocator") : NULL;
    *(void **)&rt.last_error = h ? dlsym(h, "test_last_error") : NULL;
    if (!table || !rt.set_allocator || !rt.last_error) {
      fail("test_lower", "cannot load the kernels", h ? "missing symbols" : dlerror());
    } else {
      for (int i = 0; i < ncases; i++) run_case(&cases[i], table[i]);
      check_nomem(&rt, table[ncases]);
    }
    if (h) dlclose(h);
  }
  diag_free(&d);
  if (!driver_rmtree(dir, err, sizeof err)) fail("test_lower", "cannot remove the temporary directory", err);
  free(dir);
  sb_free(&c);
  sb_free(&path);
  sb_free(&lib);
}

/* {==== Direct checks ====} */

/* Lowers the one def of src (NAME k_direct); the text, or NULL. */
static char *lower_src(const char *src) {
  Program p;
  StrBuf msg = {0}, out = {0};
  program_open(&p, "direct.relay", src, &msg);
  char *text = NULL;
  if (!p.m) {
    fail(src, "does not type-check", sb_str(&msg));
  } else if (lower_loops(&out, "k_direct", program_fn(&p), "direct.relay:2:3")) {
    text = strdup(sb_str(&out));
  } else {
    CHECK_EQ(out.len, 0);
  }
  program_close(&p);
  sb_free(&msg);
  sb_free(&out);
  return text;
}

static int count_of(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

#define DEF(params, body) "#[version = \"0.0.5\"]\ndef @t(" params ") {\n  " body "\n}\n"

/* What lower_loops must refuse. */
static void test_refused(void) {
  static const char *const refused[] = {
      DEF("%a: Tensor[(?, 3), float32], %b: Tensor[(3), float32]", "add(%a, %b)"), /* dynamic shape */
      DEF("%a: Tensor[(3), float16], %b: Tensor[(3), float16]", "add(%a, %b)"),     /* float16 */
      DEF("%a: Tensor[(3), int32], %b: Tensor[(3), int32]", "divide(%a, %b)"),      /* may divide by zero */
      DEF("%a: Tensor[(3), int32], %b: Tensor[(3), int32]", "floor_mod(%a, %b)"),
      DEF("%a: Tensor[(3), int32], %b: Tensor[(3), int32]", "power(%a, %b)"),
      DEF("%a: Tensor[(3), int32]", "exp(%a)"),                                      /* float math on ints */
      DEF("%a: Tensor[(3), float32]", "cast(%a, dtype=\"float16\")"),
      DEF("%a: Tensor[(3), float32]", "prod(%a)"),                                   /* no schedule */
      DEF("%a: Tensor[(3), int8x4]", "negative(%a)"),                                /* vector lanes */
      DEF("%x: Tensor[(6, 3), float32], %i: int32", "take(%x, %i, axis=0, mode=\"fast\")"), /* may fail */
      DEF("%x: Tensor[(0, 3), float32], %i: int32", "take(%x, %i, axis=0)"),         /* always fails */
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    char *text = lower_src(refused[i]);
    if (text) fail(refused[i], "lowered, but must be refused", NULL);
    check_count++;
    free(text);
  }
}

/* The shape of the loop nest. */
static void test_loop_nest(void) {
  static const struct {
    const char *src;
    int loops;
  } nests[] = {
      {DEF("%a: Tensor[(2, 3, 4), float32], %b: Tensor[(2, 3, 4), float32]", "add(%a, %b)"), 1},
      {DEF("%a: float32, %b: float32", "add(%a, %b)"), 0},
      {DEF("%a: Tensor[(1, 1), int32]", "negative(%a)"), 0},
      {DEF("%a: Tensor[(2, 3, 4), float32], %b: float32", "add(%a, %b)"), 1},
      {DEF("%a: Tensor[(2, 1, 4), float32], %b: Tensor[(2, 4), float32]", "add(%a, %b)"), 3},
      {DEF("%a: Tensor[(2, 3, 4), float32], %b: Tensor[(1, 1, 4), float32]", "add(%a, %b)"), 2},
      {DEF("%a: Tensor[(2, 3, 4), float32], %b: Tensor[(3, 1), float32]", "add(%a, %b)"), 3},
      {DEF("%a: Tensor[(5, 3, 4), float32], %b: Tensor[(3, 4), float32]", "add(%a, %b)"), 2},
      {DEF("%a: Tensor[(0, 3), float32]", "exp(%a)"), 0},
  };
  for (size_t i = 0; i < sizeof nests / sizeof nests[0]; i++) {
    char *text = lower_src(nests[i].src);
    CHECK(text != NULL);
    if (!text) continue;
    if (count_of(text, "for (") != nests[i].loops) {
      fail(nests[i].src, "unexpected loop nest", text);
    }
    check_count++;
    free(text);
  }
  /* Scalars: one assignment, no loop, the operands read once. */
  char *text = lower_src(DEF("%a: int32, %b: int32", "less(%a, %b)"));
  CHECK(text && strstr(text, "o[0] = (uint8_t)((x0 < x1) != 0);") && count_of(text, "p0[0]") == 1);
  free(text);
}

/* The allocation-failure kernel, with a `where` that needs escapes. */
static char *nomem_kernel(void) {
  Program p;
  StrBuf msg = {0}, out = {0};
  program_open(&p, "nomem.relay", DEF("%a: Tensor[(4), float32]", "exp(%a)"), &msg);
  CHECK(p.m != NULL);
  CHECK(p.m && lower_loops(&out, "k_nomem", program_fn(&p), nomem_where));
  program_close(&p);
  sb_free(&msg);
  char *text = strdup(sb_str(&out));
  sb_free(&out);
  return text;
}

/* {==== Fused groups ====}
** Hand-written multi-call functions (what FuseOps makes: nested calls,
** `%0 = ...;` bindings, let), on random inputs, compared with the calls
** evaluated one by one with the reference kernels. Each is lowered twice:
** lower_loops (which must take exactly the cases marked so) and
** lower_reference (which must take every one, and match to the bit). */

typedef struct Env {
  const Expr *key[256];
  rlyrt_object *val[256];
  int n;
} Env;

static rlyrt_object *env_find(const Env *env, const Expr *e) {
  for (int i = env->n - 1; i >= 0; i--)
    if (env->key[i] == e) return rlyrt_retain(env->val[i]);
  return NULL;
}

static void env_put(Env *env, const Expr *e, rlyrt_object *v) {
  if (env->n == 256) return;
  env->key[env->n] = e;
  env->val[env->n++] = rlyrt_retain(v);
}

/* e's value, the calls evaluated one at a time by the reference kernels;
** NULL on failure (reported). */
static rlyrt_object *eval(const char *where, Module *m, const Expr *fn, rlyrt_object **args, const Expr *e, Env *env) {
  rlyrt_object *v = env_find(env, e);
  if (v) return v;
  switch (e->kind) {
  case EXPR_VAR:
    for (int i = 0; i < fn->u.func.nparams; i++)
      if (fn->u.func.params[i] == e) return rlyrt_retain(args[i]);
    fail(where, "unbound variable", NULL);
    return NULL;
  case EXPR_LET: {
    rlyrt_object *x = eval(where, m, fn, args, e->u.let.value, env);
    if (!x) return NULL;
    env_put(env, e->u.let.var, x);
    rlyrt_release(x);
    return eval(where, m, fn, args, e->u.let.body, env);
  }
  case EXPR_CONST: {
    const ConstData *c = e->u.constant.value;
    rlyrt_tensor *t = rlyrt_tensor_new(kcall_dtype(c->dtype), c->ndim, c->shape, false);
    if (t && c->nbytes) memcpy(t->dl.data, c->data, c->nbytes);
    v = t ? &t->obj : NULL;
    break;
  }
  case EXPR_TUPLE: {
    rlyrt_tuple *tp = rlyrt_tuple_new(e->u.tuple.n);
    for (int i = 0; i < e->u.tuple.n; i++) {
      rlyrt_object *x = eval(where, m, fn, args, e->u.tuple.fields[i], env);
      if (!x) {
        rlyrt_release(&tp->obj);
        return NULL;
      }
      rlyrt_tuple_set_take(tp, i, x);
    }
    v = &tp->obj;
    break;
  }
  case EXPR_GET_ITEM: {
    rlyrt_object *x = eval(where, m, fn, args, e->u.get_item.tuple, env);
    if (!x) return NULL;
    v = rlyrt_retain(RLYRT_AS_TUPLE(x)->fields[e->u.get_item.index]);
    rlyrt_release(x);
    break;
  }
  case EXPR_CALL: {
    rlyrt_object *argv[16];
    int n = e->u.call.nargs;
    for (int i = 0; i < n; i++) {
      argv[i] = eval(where, m, fn, args, e->u.call.args[i], env);
      if (!argv[i]) {
        release_args(argv, i);
        return NULL;
      }
    }
    rlyrt_kernel_fn kernel = rlyrt_kernel_lookup(e->u.call.callee->u.op.op->name);
    rlyrt_kernel_call kc;
    char err[256];
    if (!kernel || !kcall_prepare(m->arena, e, &kc, err, sizeof err)) {
      fail(where, "cannot call the reference kernel", kernel ? err : NULL);
      release_args(argv, n);
      return NULL;
    }
    kc.args = argv;
    kc.nargs = n;
    if (kernel(&kc) != RLYRT_OK) fail(where, "the reference kernel failed", rlyrt_last_error());
    release_args(argv, n);
    v = kc.result;
    break;
  }
  default: fail(where, "unexpected expression", NULL); return NULL;
  }
  if (v) env_put(env, e, v);
  return v;
}

/* A tensor of type t with deterministic pseudo-random values: floats in
** [-1, 1), integers in [-5, 5] (unsigned [0, 10]), bools 0 or 1. */
static rlyrt_tensor *random_tensor(const Type *t, uint32_t *seed) {
  DType d = t->u.tensor.dtype;
  rlyrt_tensor *x = rlyrt_tensor_new(kcall_dtype(d), t->u.tensor.ndim, t->u.tensor.shape, false);
  int64_t n = rlyrt_tensor_numel(x);
  for (int64_t i = 0; i < n; i++) {
    *seed = *seed * 1664525u + 1013904223u;
    uint32_t r = *seed >> 8;
    if (d.code == DT_FLOAT) rlyrt_set_f64(x, i, (double)r / (double)(1u << 23) - 1.0);
    else if (dtype_is_bool(d)) rlyrt_set_i64(x, i, r & 1);
    else rlyrt_set_i64(x, i, (int64_t)(r % 11) - (d.code == DT_INT ? 5 : 0));
  }
  return x;
}

/* A random value of type t: a tensor, or a tuple of random values. */
static rlyrt_object *random_value(const Type *t, uint32_t *seed) {
  if (t->kind != TYPE_TUPLE) return &random_tensor(t, seed)->obj;
  rlyrt_tuple *tp = rlyrt_tuple_new(t->u.tuple.n);
  for (int i = 0; i < t->u.tuple.n; i++) rlyrt_tuple_set_take(tp, i, random_value(t->u.tuple.fields[i], seed));
  return &tp->obj;
}

static void add_case(const char *where, rlyrt_object **args, int nargs, rlyrt_tensor *ref, int64_t red_len,
                     bool fast) {
  Case *c = &cases[ncases++];
  snprintf(c->where, sizeof c->where, "%s", where);
  for (int i = 0; i < nargs; i++) c->args[i] = rlyrt_retain(args[i]);
  c->nargs = nargs;
  c->want = RLYRT_AS_TENSOR(rlyrt_retain(&ref->obj));
  c->ref = RLYRT_AS_TENSOR(rlyrt_retain(&ref->obj));
  c->rtol = 1e-5;
  c->atol = 1e-6;
  c->red_len = red_len;
  c->fast = fast;
  check_count++;
}

/* A tuple of tensors: field by field, to the bit. */
static void add_tuple_case(const char *where, rlyrt_object **args, int nargs, rlyrt_object *r, bool loops) {
  Case *c = &cases[ncases++];
  snprintf(c->where, sizeof c->where, "%s", where);
  for (int k = 0; k < nargs; k++) c->args[k] = rlyrt_retain(args[k]);
  c->nargs = nargs;
  c->tuple_ref = rlyrt_retain(r);
  c->loops = loops;
  check_count++;
}

/* Sets about one float element in `every` of x to NaN, +inf or -inf. */
static void sprinkle(rlyrt_tensor *x, uint32_t *seed, int every) {
  if (x->dl.dtype.code != kDLFloat) return;
  int64_t n = rlyrt_tensor_numel(x);
  for (int64_t i = 0; i < n; i++) {
    *seed = *seed * 1664525u + 1013904223u;
    uint32_t r = (*seed >> 8) % (uint32_t)every;
    if (r < 3) rlyrt_set_f64(x, i, r == 0 ? NAN : r == 1 ? INFINITY : -INFINITY);
  }
}

/* One fused group on random inputs (specials > 0: with NaN and infinities
** sprinkled, see sprinkle), lowered both ways against the reference
** kernels called one by one; loops: lower_loops must take it. */
static void fused_case(const char *where, const char *params, const char *body, bool loops, uint32_t *seed,
                       int specials) {
  StrBuf src = {0}, msg = {0};
  sb_printf(&src, "#[version = \"0.0.5\"]\ndef @t(%s) {\n  %s\n}\n", params, body);
  Program p;
  program_open(&p, where, sb_str(&src), &msg);
  if (!p.m) {
    fail(where, "does not type-check", sb_str(&msg));
    sb_free(&src);
    sb_free(&msg);
    return;
  }
  const Expr *fn = program_fn(&p);
  rlyrt_object *args[MAX_ARGS];
  int nargs = fn->u.func.nparams;
  for (int k = 0; k < nargs; k++) {
    args[k] = random_value(fn->u.func.params[k]->type, seed);
    if (specials && args[k]->kind == RLYRT_TENSOR) sprinkle(RLYRT_AS_TENSOR(args[k]), seed, specials);
  }
  Env env = {0};
  rlyrt_object *r = eval(where, p.m, fn, args, fn->u.func.body, &env);
  for (int k = 0; k < env.n; k++) rlyrt_release(env.val[k]);
  char name[32], err[256];
  /* loops */
  snprintf(name, sizeof name, "k%d", ncases);
  size_t before = kernels.len;
  bool lowered = lower_loops(&kernels, name, fn, where);
  check_count++;
  if (lowered != loops) fail(where, lowered ? "lowered as loops, but must not be" : "not lowered as loops", NULL);
  if (!lowered) CHECK_EQ(kernels.len, before);
  if (lowered) {
    StrBuf again = {0};
    CHECK(lower_loops(&again, name, fn, where));
    CHECK(again.len == kernels.len - before && !memcmp(again.data, kernels.data + before, again.len));
    sb_free(&again);
    sb_putc(&kernels, '\n');
    if (r && r->kind == RLYRT_TENSOR)
      add_case(where, args, nargs, RLYRT_AS_TENSOR(r), reduction_len(fn->u.func.body),
               strstr(kernels.data + before, "rlyk_") != NULL);
    else if (r)
      add_tuple_case(where, args, nargs, r, true);
  }
  /* reference calls */
  snprintf(name, sizeof name, "k%d", ncases);
  if (!lower_reference(lowering, &decls, &kernels, name, fn, where, err, sizeof err)) {
    fail(where, "lower_reference refused it", err);
  } else {
    sb_putc(&kernels, '\n');
    if (r && r->kind == RLYRT_TENSOR) {
      add_case(where, args, nargs, RLYRT_AS_TENSOR(r), 0, false);
    } else if (r) {
      add_tuple_case(where, args, nargs, r, false);
    }
  }
  rlyrt_release(r);
  release_args(args, nargs);
  program_close(&p);
  sb_free(&src);
  sb_free(&msg);
}

static void test_fused(void) {
#define T(shape) "Tensor[(" shape "), float32]"
  /* 200 calls in one group (FuseOps puts up to 256 in one function) */
  static char long_chain[16384];
  size_t len = 0;
  len += (size_t)snprintf(long_chain, sizeof long_chain, "%%0 = add(%%a, %%b);\n  ");
  for (int i = 1; i < 200; i++)
    len += (size_t)snprintf(long_chain + len, sizeof long_chain - len, "%%%d = %s(%%%d, %%%c);\n  ", i,
                            i % 2 ? "subtract" : "add", i - 1, i % 2 ? 'a' : 'b');
  snprintf(long_chain + len, sizeof long_chain - len, "nn.relu(%%199)");
  const struct {
    const char *params, *body;
    bool loops; /* lower_loops must take it */
  } groups[] = {
      /* GEMV (dense, 1..4 rows), with and without epilogues */
      {"%x: " T("1, 784") ", %w: " T("512, 784"), "nn.dense(%x, %w, units=512)", true},
      {"%x: " T("1, 37") ", %w: " T("29, 37") ", %b: " T("29"), "nn.relu(nn.bias_add(nn.dense(%x, %w), %b))", true},
      {"%x: " T("3, 131") ", %w: " T("17, 131") ", %y: " T("3, 17"), "tanh(add(nn.dense(%x, %w), %y))", true},
      {"%x: " T("2, 5") ", %w: " T("7, 5"), "sigmoid(nn.dense(%x, %w))", true},
      {"%x: " T("4, 33") ", %w: " T("9, 33") ", %b: " T("9"), "clip(nn.bias_add(nn.dense(%x, %w), %b), a_min=-0.5f, a_max=0.5f)", true},
      {"%x: " T("33") ", %w: " T("9, 33"), "nn.dense(%x, %w)", true},
      /* packed GEMM: odd sizes, two K blocks, two row and two column blocks */
      {"%x: " T("37, 300") ", %w: " T("45, 300") ", %b: " T("45"),
       "clip(nn.bias_add(nn.dense(%x, %w), %b), a_min=-0.5f, a_max=0.5f)", true},
      {"%x: " T("130, 70") ", %w: " T("1100, 70"), "nn.dense(%x, %w)", true},
      {"%x: " T("2, 5, 19") ", %w: " T("11, 19") ", %b: " T("11"),
       "multiply(nn.bias_add(nn.dense(%x, %w), %b, axis=-1), 2f)", true},
      {"%x: " T("5, 1") ", %w: " T("3, 1"), "nn.dense(%x, %w)", true},
      {"%x: " T("6, 16") ", %w: " T("16, 16"), "let %y = nn.dense(%x, %w); nn.relu(%y)", true},
      {"%x: " T("8, 24") ", %w: " T("40, 24"), "%0 = nn.dense(%x, %w);\n  multiply(%0, sigmoid(%0))", true},
      /* batch_matmul: transposes, a batch of 1 broadcast, broadcast epilogue operands */
      {"%a: " T("3, 7, 13") ", %b: " T("3, 13, 9") ", %c: " T("3, 7, 9"),
       "add(nn.batch_matmul(%a, %b, transpose_b=False), %c)", true},
      {"%a: " T("1, 13, 7") ", %b: " T("4, 9, 13") ", %c: " T("4, 1, 9"),
       "add(nn.batch_matmul(%a, %b, transpose_a=True, transpose_b=True), %c)", true},
      {"%a: " T("2, 20, 300") ", %b: " T("1, 300, 17"),
       "%0 = nn.batch_matmul(%a, %b, transpose_b=False);\n  %1 = nn.relu(%0);\n  multiply(%1, %0)", true},
      /* elementwise and broadcast chains: one loop, the same bits */
      {"%a: " T("4, 5") ", %b: " T("5") ", %c: " T("4, 1"), "nn.relu(add(multiply(%a, %b), %c))", true},
      {"%a: Tensor[(6), int32], %b: Tensor[(6), int32], %c: int32", "subtract(add(%a, %b), %c)", true},
      {"%a: " T("3, 4") ", %b: " T("4"), "multiply(cast(greater(%a, %b), dtype=\"float32\"), %a)", true},
      {"%x: " T("2, 3, 4, 5") ", %b: " T("3"), "tanh(nn.bias_add(%x, %b, axis=1))", true},
      {"%a: " T("7") ", %b: " T("7"), "where(less(%a, %b), clip(exp(%a), a_min=0.1f, a_max=2f), negative(%b))", true},
      {"%a: " T("3, 1, 5") ", %b: " T("4, 1"), "let %s = add(%a, %b); let %t = multiply(%s, %s); subtract(%t, 1f)", true},
      /* one call not on the parameters in order: a chain of one call */
      {"%a: " T("4") ", %b: " T("4"), "add(%b, %a)", true},
      {"%a: " T("3, 4"), "multiply(%a, %a)", true},
      {"%a: " T("5"), "subtract(2f, %a)", true},
      /* injective chains (lower/inject.c): layout ops among elementwise calls */
      {"%a: " T("2, 3, 4") ", %b: " T("2"), "add(transpose(%a, axes=[1, 2, 0]), %b)", true},
      {"%a: " T("2, 6") ", %b: " T("4"), "tanh(add(reshape(%a, newshape=[3, 4]), %b))", true},
      {"%a: " T("6, 5"), "negative(strided_slice(%a, begin=[5, 1], end=[0, 5], strides=[-2, 3]))", true},
      {"%a: " T("2, 3") ", %b: " T("2, 2"), "multiply(concatenate((%a, exp(%b), %a), axis=1), 3f)", true},
      {"%a: " T("2, 3") ", %b: " T("2, 2"), "transpose(concatenate((sigmoid(%a), %b), axis=1))", true},
      {"%p: (" T("1, 2, 3") ", " T("1, 1, 3") "), %s: " T("3, 1"), "nn.relu(multiply(concatenate(%p, axis=1), %s))", true},
      {"%a: Tensor[(2, 3, 1), int32]", "add(squeeze(transpose(%a, axes=[2, 0, 1]), axis=[0]), 5)", true},
      {"%a: " T("12"), "reshape(%a, newshape=[3, 4])", true},
      {"%a: " T("2, 3") ", %v: float32", "add(nn.pad(%a, %v, pad_width=[[1, 2], [0, 1]]), 1f)", true},
      {"%a: " T("3, 4"), "nn.pad(%a, 0f, pad_width=[[2, -1], [1, 3]], pad_mode=\"edge\")", true},
      {"%a: " T("2, 3") ", %b: " T("3"), long_chain, true},
      {"%x: " T("5")", %b: " T("5"), "let %y = %x; nn.relu(add(%y, %b))", true},
      /* softmax rows (float32: in float32, vector lanes, within its error), and an epilogue */
      {"%x: " T("3, 8") ", %y: " T("3, 8"), "add(nn.softmax(%x), %y)", true},
      {"%x: " T("4, 5, 3") ", %y: " T("3"), "multiply(nn.log_softmax(%x, axis=1), %y)", true},
      {"%x: Tensor[(2, 9), float64]", "nn.fast_softmax(%x, axis=0)", true},
      /* softmax: long rows (not multiples of the lanes), inner axes, computed operands */
      {"%x: " T("2, 1000"), "nn.softmax(%x)", true},
      {"%x: " T("3, 4097"), "nn.log_softmax(%x)", true},
      {"%x: " T("2, 37, 5"), "nn.fast_softmax(%x, axis=1)", true},
      {"%x: " T("7, 70"), "nn.softmax(%x, axis=0)", true},
      {"%x: " T("3, 40, 2") ", %y: " T("2"), "add(nn.log_softmax(%x, axis=1), %y)", true},
      {"%x: " T("4, 1000"), "nn.softmax(multiply(%x, 2f))", true},
      {"%x: " T("3, 1000") ", %b: " T("1000"), "nn.softmax(add(%x, %b))", true},
      {"%x: " T("1, 4097"), "nn.softmax(divide(%x, 3f), axis=-1)", true},
      {"%x: " T("2, 9, 5") ", %y: " T("9, 1"), "nn.log_softmax(tanh(add(%x, %y)), axis=1)", true},
      {"%x: " T("6, 33") ", %b: " T("33") ", %c: " T("6, 1"), "multiply(nn.softmax(nn.bias_add(%x, %b, axis=1)), %c)",
       true},
      {"%x: " T("5, 8") ", %y: " T("5, 8"), "let %s = subtract(%x, %y); nn.fast_softmax(exp(%s), axis=0)", true},
      {"%x: Tensor[(3, 7), float64]", "nn.softmax(multiply(%x, 2f64))", false}, /* float64: a parameter only */
      {"%x: " T("4, 6"), "%0 = multiply(%x, 2f);\n  add(nn.softmax(%0), %0)", false}, /* %0 twice */
      {"%x: " T("0, 5"), "nn.softmax(%x)", false},                                    /* empty */
      /* reductions (float32: in float32, vector lanes, within its error; float64: the reference's bits) */
      {"%x: " T("3, 4, 5") ", %y: " T("1, 4, 1"), "sqrt(add(mean(%x, axis=[0, 2], keepdims=True), %y))", true},
      {"%x: " T("3, 4, 5"), "max(%x, axis=1)", true},
      {"%x: " T("3, 4, 5"), "negative(min(%x, axis=[-1], exclude=True))", true},
      {"%x: Tensor[(6, 7), float64]", "sum(%x)", true},
      /* reductions of an elementwise chain: computed in the reduction's loop, no intermediate tensor */
      {"%x: " T("5, 6"), "add(sum(exp(%x), axis=[1]), 1f)", true},
      {"%x: " T("5, 6"), "let %u = negative(%x); let %dead = exp(%x); sum(%u, axis=[0])", true},
      {"%x: " T("3, 4, 5") ", %y: " T("4, 1"), "sqrt(mean(sigmoid(multiply(%x, %y)), axis=[0, 2], keepdims=True))", true},
      {"%x: " T("4, 1, 6") ", %y: " T("6"), "max(subtract(%x, %y), axis=-1)", true},
      {"%x: Tensor[(3, 5), float64], %p: (Tensor[(5), float64], Tensor[(3, 5), float64])",
       "min(add(tanh(%x), multiply(%p.0, %p.1)), axis=0, exclude=True)", true},
      {"%x: " T("5, 6"), "%0 = negative(%x);\n  multiply(sum(%0, axis=[1], keepdims=True), %0)", false}, /* %0 twice */
      /* long rows, outer axes, keepdims, exclude, chains with broadcast leaves */
      {"%x: " T("4, 1000"), "sum(%x, axis=-1)", true},
      {"%x: " T("3, 4097"), "mean(%x, axis=[1])", true},
      {"%x: " T("5, 1000"), "max(%x, axis=-1)", true},
      {"%x: " T("2, 4097"), "min(%x, axis=1, keepdims=True)", true},
      {"%x: " T("300, 70"), "sum(%x, axis=0)", true},
      {"%x: " T("5, 40, 33"), "max(%x, axis=[0, 1])", true},
      {"%x: " T("4, 50, 37"), "mean(%x, axis=1, keepdims=True)", true},
      {"%x: " T("3, 5, 40"), "sum(%x, axis=[2], exclude=True)", true},
      {"%x: " T("3, 5, 40"), "min(%x, axis=[0], exclude=True, keepdims=True)", true},
      {"%x: " T("37, 41"), "mean(%x)", true},
      {"%x: " T("6, 1, 1"), "sum(%x, axis=[1, 2])", true},
      {"%x: " T("4, 1000") ", %y: " T("1000"), "sum(exp(multiply(%x, %y)), axis=-1)", true},
      {"%x: " T("300, 70") ", %y: " T("1, 70"), "negative(max(add(%x, %y), axis=0))", true},
      {"%x: " T("3, 64") ", %y: " T("3, 1"), "mean(multiply(%x, %y), axis=1, keepdims=True)", true},
      {"%x: " T("3, 0"), "sum(%x, axis=1)", false},                                   /* empty */
      {"%x: " T("0, 4"), "max(%x, axis=0)", false},
      /* float32 exp, tanh, sigmoid (lower/fastmath.c), alone and in chains: within FAST_ULPS */
      {"%a: " T("3, 37"), "sigmoid(%a)", true},
      {"%a: " T("37"), "fast_exp(multiply(%a, 80f))", true},
      {"%a: " T("5, 7") ", %b: " T("7"), "multiply(tanh(add(%a, %b)), exp(negative(%a)))", true},
      /* fields of tuple parameters (what FuseOps makes for split or a tuple argument) read in place */
      {"%p: (" T("2, 8") ", " T("2, 8") ", " T("2, 8") ")", "sigmoid(%p.1)", true},
      {"%p: (" T("1, 16") ", " T("1, 16") ", " T("1, 16") ", " T("1, 16") "), %c: " T("1, 16"),
       "add(multiply(sigmoid(%p.1), %c), multiply(sigmoid(%p.0), tanh(%p.2)))", true},
      {"%p: (" T("4") ", " T("3, 4") "), %b: " T("4"), "multiply(%p.1, add(%p.0, %b))", true},
      {"%x: " T("2, 5") ", %w: " T("7, 5") ", %p: (" T("2, 7") ", " T("7") ")",
       "multiply(add(nn.dense(%x, %w), %p.0), %p.1)", true},
      {"%p: ((" T("3") ", " T("3") "), " T("3") ")", "add(%p.0.0, %p.1)", false}, /* a field of a field */
      /* take with a scalar index (random in [-5, 5]: clamped or wrapped), split: slice copies */
      {"%x: " T("6, 3, 4") ", %i: int32", "take(%x, %i, axis=1)", true},
      {"%x: " T("2, 7") ", %i: int64", "take(%x, %i, axis=-1, mode=\"wrap\")", true},
      {"%x: Tensor[(5, 2), int64], %i: uint8", "take(%x, %i, axis=0)", true},
      {"%x: Tensor[(4, 3), bool], %i: int16", "take(%x, %i, axis=0, mode=\"wrap\")", true},
      {"%x: " T("6, 3") ", %i: Tensor[(2), int32]", "take(%x, %i, axis=0)", false},    /* not a scalar index */
      {"%x: " T("4, 6"), "split(%x, indices_or_sections=3, axis=1)", true},
      {"%x: Tensor[(5, 3), int8]", "split(%x, indices_or_sections=[1, 4])", true},
      {"%x: " T("2, 8, 3"), "split(%x, indices_or_sections=[2, 3, 7], axis=-2)", true},
      {"%a: " T("2, 3") ", %b: " T("2, 4"), "concatenate((exp(%a), %b), axis=1)", true},
      /* lowered as reference calls only */
      {"%x: " T("3, 8") ", %y: " T("3, 1, 8"), "add(nn.softmax(%x), %y)", false},
      {"%x: " T("4, 6"), "%0 = split(%x, indices_or_sections=2, axis=1);\n  add(%0.0, %0.1)", false},
      {"%x: " T("4, 6"), "%0 = split(%x, indices_or_sections=2, axis=1);\n  (%0.0, exp(%0.1))", false},
  };
  /* NaN and infinities in about one element in `every` (some rows clean):
  ** max and min keep the reference kernel's NaN semantics */
  const struct {
    const char *params, *body;
    bool loops;
    int every;
  } special_groups[] = {
      {"%x: " T("8, 1000"), "nn.softmax(%x)", true, 4000},
      {"%x: " T("300, 5"), "nn.log_softmax(%x, axis=0)", true, 1500},
      {"%x: " T("8, 1000"), "max(%x, axis=-1)", true, 3000},
      {"%x: " T("1000, 8"), "min(%x, axis=0)", true, 3000},
      {"%x: " T("8, 1000"), "min(%x, axis=1)", true, 3000},
      {"%x: " T("8, 1000"), "sum(%x, axis=-1)", true, 3000},
      {"%x: " T("4, 5, 300"), "mean(%x, axis=[0, 2])", true, 6000},
      {"%x: " T("4, 4097"), "nn.softmax(multiply(%x, 2f))", true, 12000},
      {"%x: " T("6, 100"), "max(%x, axis=-1)", true, 30},
      /* pools (lower/pool.c): the reference's bits, strided taps vectorized */
      {"%x: " T("2, 3, 9, 11"), "nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])", true, 40},
      {"%x: " T("1, 4, 20, 70"), "nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])", true, 400},
      {"%x: " T("1, 2, 17, 37"),
       "nn.avg_pool2d(%x, pool_size=[2, 3], strides=[1, 2], dilation=[1, 2], padding=[0, 1, 1, 2])", true, 300},
      {"%x: " T("1, 3, 15, 45"),
       "nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 3], padding=[1, 1, 1, 1], count_include_pad=True)", true, 300},
      {"%x: " T("2, 5, 7, 9"), "nn.global_max_pool2d(%x)", true, 50},
  };
#undef T
  uint32_t seed = 12345;
  for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
    char where[64];
    snprintf(where, sizeof where, "fused group %zu", i);
    fused_case(where, groups[i].params, groups[i].body, groups[i].loops, &seed, 0);
  }
  for (size_t i = 0; i < sizeof special_groups / sizeof special_groups[0]; i++) {
    char where[64];
    snprintf(where, sizeof where, "fused group with NaN and inf %zu", i);
    fused_case(where, special_groups[i].params, special_groups[i].body, special_groups[i].loops, &seed,
               special_groups[i].every);
  }
}

/* {==== The float32 functions (lower/fastmath.c) ====}
** exp, tanh and sigmoid of float32 loops against libm in double, over
** special values (signed zeros, subnormals, the overflow and saturation
** edges, infinities, NaN), a spread of bit patterns over the whole float
** range and a dense sweep of [-20, 20]; in every ISA build. And the text:
** float32 uses the functions, float64 keeps libm. */

enum { SWEEP_SPECIAL = 40, SWEEP_SPREAD = 1 << 17, SWEEP_DENSE = 40001 };
enum { SWEEP_N = SWEEP_SPECIAL + SWEEP_SPREAD + SWEEP_DENSE };

static float sweep_value(int i) {
  static const float special[SWEEP_SPECIAL] = {
      0.0f, -0.0f, 0x1p-149f, -0x1p-149f, 0x1.8p-140f, -0x1p-130f, 0x1.fffffcp-127f, 0x1p-126f, -0x1p-126f, 1e-30f,
      -1e-30f, 1e-8f, 0.625f, -0.625f, 0x1.3ffffep-1f, -0x1.3ffffep-1f, 8.0f, 9.0f, 9.1f, -9.1f,
      88.72f, 88.7228f, 88.7229f, 88.73f, 89.0f, 89.5f, -87.33f, -87.34f, -103.9f, -104.0f,
      -104.5f, -150.0f, 1e10f, -1e10f, 0x1.fffffep+127f, -0x1.fffffep+127f, INFINITY, -INFINITY, NAN, -NAN};
  if (i < SWEEP_SPECIAL) return special[i];
  i -= SWEEP_SPECIAL;
  if (i < SWEEP_SPREAD) { /* bit patterns 32771 apart: every exponent, both signs, NaNs too */
    uint32_t u = (uint32_t)i * 32771u;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  i -= SWEEP_SPREAD;
  return (float)(-20.0 + 40.0 * (double)i / (SWEEP_DENSE - 1));
}

static double sweep_exact(const char *op, float x) {
  double d = x;
  if (!strcmp(op, "exp")) return exp(d);
  if (!strcmp(op, "tanh")) return tanh(d);
  return 1.0 / (1.0 + exp(-d));
}

static void test_fast_sweep(void) {
  static const char *const ops[] = {"exp", "tanh", "sigmoid"};
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
    char src[256], where[64], name[32];
    snprintf(src, sizeof src, "#[version = \"0.0.5\"]\ndef @t(%%a: Tensor[(%d), float32]) {\n  %s(%%a)\n}\n", SWEEP_N,
             ops[o]);
    snprintf(where, sizeof where, "fastmath sweep of %s", ops[o]);
    snprintf(name, sizeof name, "k%d", ncases);
    Program p;
    StrBuf msg = {0};
    program_open(&p, where, src, &msg);
    size_t before = kernels.len;
    check_count++;
    if (!p.m) {
      fail(where, "does not type-check", sb_str(&msg));
    } else if (!lower_loops(&kernels, name, program_fn(&p), where)) {
      fail(where, "not lowered as loops", NULL);
    } else if (!strstr(kernels.data + before, "rlyk_")) {
      fail(where, "does not use the float32 functions", NULL);
    } else {
      sb_putc(&kernels, '\n');
      rlyrt_tensor *x = rlyrt_tensor_new((DLDataType){kDLFloat, 32, 1}, 1, (const int64_t[]){SWEEP_N}, false);
      double *exact = malloc(sizeof *exact * SWEEP_N);
      for (int i = 0; i < SWEEP_N; i++) {
        ((float *)x->dl.data)[i] = sweep_value(i);
        exact[i] = sweep_exact(ops[o], sweep_value(i));
      }
      Case *c = &cases[ncases++];
      snprintf(c->where, sizeof c->where, "%s", where);
      c->args[0] = &x->obj;
      c->nargs = 1;
      c->exact = exact;
    }
    program_close(&p);
    sb_free(&msg);
  }
  /* float64 keeps libm's double functions: no float32 approximation */
  char *text = lower_src(DEF("%a: Tensor[(8), float64]", "multiply(sigmoid(%a), tanh(%a))"));
  CHECK(text && !strstr(text, "rlyk_") && strstr(text, "exp(") && strstr(text, "tanh("));
  free(text);
  text = lower_src(DEF("%a: Tensor[(8), float32]", "multiply(sigmoid(%a), tanh(%a))"));
  CHECK(text && strstr(text, "rlyk_sigmoidf(") && strstr(text, "rlyk_tanhf(") && !strstr(text, "tanh((double)"));
  CHECK(text && count_of(text, "#ifndef RLYK_FASTMATH") == 1);
  free(text);
}

int main(void) {
  lowering = lowering_new();
  test_refused();
  test_loop_nest();
  if (!cases_run("tests/kernels", "", collect)) return 1;
  test_fused();
  test_fast_sweep();
  char *nomem = nomem_kernel();
  /* Every version of the GEMM kernels that this CPU runs: the portable
  ** one (capped), the best one (no cap: every version compiled, at -O2
  ** where gcc warns most), AVX2+FMA alone (capped, in a file compiled for
  ** AVX2+FMA, as --target native makes it: no test at run time) and the
  ** file compiled for AVX-512 (only that version). */
  build_and_run(nomem, "-DRLYRT_ISA_MAX=0", 1);
  build_and_run(nomem, "", 2);
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    build_and_run(nomem, "-DRLYRT_ISA_MAX=1 -mavx2 -mfma", 3);
  if (__builtin_cpu_supports("avx512f")) build_and_run(nomem, "-mavx512f -mavx2 -mfma", 2);
#endif
  free(nomem);
  lowering_free(lowering);
  sb_free(&decls);
  int nops = 0;
  for (int id = 0; id < OP_COUNT; id++) nops += op_lowered[id];
  printf("test_lower: %d cases lowered, %d distinct ops\n", ncases, nops);
  check_count++;
  if (nops < MIN_OPS) fail("test_lower", "too few ops lowered", NULL);
  for (int i = 0; i < ncases; i++) {
    release_args(cases[i].args, cases[i].nargs);
    rlyrt_release(cases[i].want ? &cases[i].want->obj : NULL);
    rlyrt_release(cases[i].ref ? &cases[i].ref->obj : NULL);
    rlyrt_release(cases[i].tuple_ref);
    free((void *)cases[i].exact);
  }
  sb_free(&kernels);
  return check_report("test_lower");
}
