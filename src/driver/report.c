/* report.c: what a build is for (the C compiler's native extensions) and
** where a profiled module's time went (see driver.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "codegen/codegen.h"
#include "driver/driver.h"
#include "relayc/runtime.h"

bool driver_native_isa(const char *cc, const char *cflags, StrBuf *out) {
  ArgList argv = {0};
  char err[512];
  arglist_push(&argv, cc && cc[0] ? cc : "cc");
  arglist_push(&argv, "-march=native");
  /* The user's flags may add or remove extensions (-mno-avx512f). */
  bool ok = driver_split_args(cflags, &argv, err, sizeof err);
  arglist_push(&argv, "-dM");
  arglist_push(&argv, "-E");
  arglist_push(&argv, "-x");
  arglist_push(&argv, "c");
  arglist_push(&argv, "/dev/null");
  StrBuf macros = {0};
  if (ok) {
    const char **vec = rly_xmalloc(((size_t)argv.len + 1) * sizeof *vec);
    for (int i = 0; i < argv.len; i++) vec[i] = argv.data[i];
    vec[argv.len] = NULL;
    ok = driver_spawn(vec, &macros, err, sizeof err) == 0 && strstr(sb_str(&macros), "#define __x86_64__ ");
    free(vec);
  }
  if (ok) {
    StrBuf isa = {0};
    codegen_isa_names(sb_str(&macros), &isa);
    sb_puts(out, sb_str(&isa));
    sb_free(&isa);
  }
  sb_free(&macros);
  arglist_free(&argv);
  return ok;
}

/* {==== The profile table ====} */

static int by_time(const void *a, const void *b) {
  const rlyrt_kernel_record *x = *(const rlyrt_kernel_record *const *)a, *y = *(const rlyrt_kernel_record *const *)b;
  if (x->ns != y->ns) return x->ns < y->ns ? 1 : -1;
  return strcmp(x->name, y->name);
}

static int max_int(int a, int b) { return a > b ? a : b; }

void driver_print_profile(FILE *f, const struct rlyrt_module_build *b, double total_ms, long runs) {
  int n = 0;
  const rlyrt_kernel_record **rows = rly_xcalloc((size_t)(b->nkernels > 0 ? b->nkernels : 1), sizeof *rows);
  for (int32_t i = 0; i < b->nkernels; i++)
    if (b->kernels[i]->calls) rows[n++] = b->kernels[i];
  qsort(rows, (size_t)n, sizeof *rows, by_time);
  /* Column widths: the text columns as wide as their longest entry. */
  int wk = 6, wo = 3, ws = 5, wsch = 8;
  for (int i = 0; i < n; i++) {
    wk = max_int(wk, (int)strlen(rows[i]->name));
    wo = max_int(wo, (int)strlen(rows[i]->ops));
    ws = max_int(ws, (int)strlen(rows[i]->shape));
    wsch = max_int(wsch, (int)strlen(rows[i]->schedule));
  }
  wo = max_int(wo, (int)strlen("control flow between kernels"));
  double kernel_ms = 0;
  for (int i = 0; i < n; i++) kernel_ms += (double)rows[i]->ns / 1e6;
  double rest = total_ms > kernel_ms ? total_ms - kernel_ms : 0;
  double whole = kernel_ms + rest > 0 ? kernel_ms + rest : 1;
  fprintf(f, "profile: %ld run%s, %.3f ms in all, %.3f ms in %d kernel%s\n", runs, runs == 1 ? "" : "s", total_ms,
          kernel_ms, n, n == 1 ? "" : "s");
  fprintf(f, "%-*s  %-*s  %-*s  %-*s  %9s  %10s  %10s  %10s  %6s\n", wk, "kernel", wo, "ops", ws, "shape", wsch,
          "schedule", "calls", "total ms", "mean us", "min us", "share");
  for (int i = 0; i < n; i++) {
    const rlyrt_kernel_record *r = rows[i];
    double ms = (double)r->ns / 1e6;
    fprintf(f, "%-*s  %-*s  %-*s  %-*s  %9llu  %10.3f  %10.3f  %10.3f  %5.1f%%\n", wk, r->name, wo, r->ops, ws,
            r->shape, wsch, r->schedule, (unsigned long long)r->calls, ms, ms * 1e3 / (double)r->calls,
            (double)r->min_ns / 1e3, 100.0 * ms / whole);
  }
  fprintf(f, "%-*s  %-*s  %-*s  %-*s  %9s  %10.3f  %10s  %10s  %5.1f%%\n", wk, "-", wo, "control flow between kernels",
          ws, "", wsch, "", "", rest, "", "", 100.0 * rest / whole);
  fprintf(f, "%-*s  %-*s  %-*s  %-*s  %9s  %10.3f  %10s  %10s  %5.1f%%\n", wk, "", wo, "total", ws, "", wsch, "", "",
          kernel_ms + rest, "", "", 100.0);
  free(rows);
}
