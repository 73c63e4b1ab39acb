/* test_kernels.c: every reference kernel against independently computed
** values. Reads the .txt files of tests/kernels/ (run from the repository root). Each
** case:
**   OP | IN | IN ... [| attrs: KEY=VALUE, ...] => OUT [OUT ...] [| rtol=R, atol=A]
** IN is a .npy file under tests/kernels/data/, or `(a.npy, b.npy)` for a
** tuple argument (concatenate, stack); OUT the expected .npy file(s) (one
** per field of a tuple result), or `error: TEXT` when the kernel must fail
** with TEXT in its message. The case becomes `def @t(%a0: T0, ...) { OP(...) }`
** with the inputs' types, is parsed and type-checked by the compiler, and
** the op's kernel runs on the loaded inputs. Integers and bools must match
** exactly, floats within rtol/atol (defaults 1e-5 and 1e-6; NaN equals
** NaN). Every op of the table needs a kernel and at least one case. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/strbuf.h"
#include "cases.h"
#include "check.h"
#include "kernel_check.h"
#include "interp/kcall.h"
#include "ops/ops.h"
#include "syntax/parser.h"
#include "types/infer.h"

static int cases_of[OP_COUNT];

static void run_case(const char *where, char *line) {
  check_count++;
  char *arrow = strstr(line, " => ");
  if (!arrow) {
    fail(where, "no ' => '", NULL);
    return;
  }
  *arrow = 0;
  char *rhs = cases_trim(arrow + 4);
  double rtol = 1e-5, atol = 1e-6;
  char *tolpart = strstr(rhs, "|");
  if (tolpart) {
    *tolpart = 0;
    char *r = strstr(tolpart + 1, "rtol=");
    char *a = strstr(tolpart + 1, "atol=");
    if (r) rtol = strtod(r + 5, NULL);
    if (a) atol = strtod(a + 5, NULL);
    rhs = cases_trim(rhs);
  }
  char *parts[64] = {0};
  int np = 0;
  for (char *p = strtok(line, "|"); p && np < 64; p = strtok(NULL, "|")) parts[np++] = cases_trim(p);
  if (np < 1) {
    fail(where, "no operator", NULL);
    return;
  }
  const char *opname = parts[0];
  const char *attrs = NULL;
  rlyrt_object *args[64];
  int nargs = 0;
  StrBuf src = {0};
  sb_puts(&src, "#[version = \"0.0.5\"]\ndef @t(");
  bool ok = true;
  for (int i = 1; i < np && ok; i++) {
    if (strncmp(parts[i], "attrs:", 6) == 0) {
      attrs = cases_trim(parts[i] + 6);
      continue;
    }
    sb_printf(&src, "%s%%a%d: ", nargs ? ", " : "", nargs);
    if (parts[i][0] == '(') {
      /* A tuple of tensors. */
      char *inner = parts[i] + 1;
      char *close = strrchr(inner, ')');
      if (close) *close = 0;
      rlyrt_tensor *fields[32];
      int nf = 0;
      for (char *f = strtok_r(inner, ",", &close); f && nf < 32; f = strtok_r(NULL, ",", &close)) {
        fields[nf] = load(where, cases_trim(f));
        if (!fields[nf]) ok = false;
        else nf++;
      }
      rlyrt_tuple *t = rlyrt_tuple_new(nf);
      sb_putc(&src, '(');
      for (int k = 0; k < nf; k++) {
        if (k) sb_puts(&src, ", ");
        type_text(&src, fields[k]);
        rlyrt_tuple_set_take(t, k, &fields[k]->obj);
      }
      sb_puts(&src, nf == 1 ? ",)" : ")");
      args[nargs++] = &t->obj;
    } else {
      rlyrt_tensor *t = load(where, parts[i]);
      if (!t) {
        ok = false;
        break;
      }
      type_text(&src, t);
      args[nargs++] = &t->obj;
    }
  }
  sb_printf(&src, ") {\n  %s(", opname);
  for (int i = 0; i < nargs; i++) sb_printf(&src, "%s%%a%d", i ? ", " : "", i);
  if (attrs && *attrs) sb_printf(&src, "%s%s", nargs ? ", " : "", attrs);
  sb_puts(&src, ")\n}\n");

  SourceMap sm = {0};
  char *text = strdup(sb_str(&src));
  uint32_t f = srcmap_add(&sm, where, text, strlen(text));
  Diag d;
  diag_init(&d, &sm);
  Module *m = ok ? parse_module(&sm, f, &d) : NULL;
  if (ok && (!m || !ty_infer_module(m, &d))) {
    StrBuf msg = {0};
    for (int i = 0; i < d.items.len; i++) sb_printf(&msg, "%s; ", d.items.data[i].msg);
    fail(where, "does not type-check", sb_str(&msg));
    sb_free(&msg);
    ok = false;
  }
  if (ok) {
    Expr *call = m->defs[0]->func->u.func.body;
    const OpDef *op = call->u.call.callee->u.op.op;
    rlyrt_kernel_fn fn = rlyrt_kernel_lookup(op->name);
    rlyrt_kernel_call kc;
    char err[256];
    if (!fn) {
      fail(where, "no kernel for", op->name);
    } else if (!kcall_prepare(m->arena, call, &kc, err, sizeof err)) {
      fail(where, "cannot prepare the call", err);
    } else {
      kc.args = args;
      kc.nargs = nargs;
      rlyrt_status s = fn(&kc);
      bool want_error = strncmp(rhs, "error:", 6) == 0;
      if (s != RLYRT_OK) {
        if (!want_error) fail(where, "the kernel failed", rlyrt_last_error());
        else if (!strstr(rlyrt_last_error(), cases_trim(rhs + 6))) fail(where, "different error", rlyrt_last_error());
        else cases_of[op->id]++;
      } else if (want_error) {
        fail(where, "expected an error", rhs);
      } else {
        /* Expected files: one, or one per field of a tuple result. */
        char *outs[32];
        int no = 0;
        for (char *o = strtok(rhs, " "); o && no < 32; o = strtok(NULL, " ")) outs[no++] = o;
        rlyrt_object *res = kc.result;
        bool good = true;
        if (kc.tuple_result) {
          if (!res || res->kind != RLYRT_TUPLE || RLYRT_AS_TUPLE(res)->n != no) {
            fail(where, "the result is not a tuple of the expected size", NULL);
            good = false;
          }
          for (int k = 0; good && k < no; k++) {
            rlyrt_tensor *want = load(where, outs[k]);
            rlyrt_object *g = RLYRT_AS_TUPLE(res)->fields[k];
            good = want && g && g->kind == RLYRT_TENSOR && same(where, RLYRT_AS_TENSOR(g), want, rtol, atol);
            rlyrt_release(want ? &want->obj : NULL);
          }
        } else {
          rlyrt_tensor *want = no == 1 ? load(where, outs[0]) : NULL;
          good = want && res && res->kind == RLYRT_TENSOR && same(where, RLYRT_AS_TENSOR(res), want, rtol, atol);
          if (no != 1) fail(where, "expected one result file", NULL);
          rlyrt_release(want ? &want->obj : NULL);
        }
        if (good) cases_of[op->id]++;
        rlyrt_release(res);
      }
    }
  }
  for (int i = 0; i < nargs; i++) rlyrt_release(args[i]);
  module_free(m);
  diag_free(&d);
  srcmap_free(&sm);
  sb_free(&src);
}

int main(void) {
  if (!cases_run("tests/kernels", "", run_case)) return 1;
  for (int id = 0; id < OP_COUNT; id++) {
    const OpDef *op = op_get((OpId)id);
    check_count++;
    if (!rlyrt_kernel_lookup(op->name)) {
      check_failures++;
      fprintf(stderr, "op %s has no reference kernel\n", op->name);
    } else if (!cases_of[id]) {
      check_failures++;
      fprintf(stderr, "op %s needs a passing case in tests/kernels\n", op->name);
    }
  }
  return check_report("test_kernels");
}
