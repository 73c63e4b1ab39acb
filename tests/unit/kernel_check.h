/* kernel_check.h: what the kernel tests share (test_kernels checks the
** reference kernels, test_lower the loop kernels, on the same case tables
** the .txt files of tests/kernels): reporting a failure, loading a case's .npy file,
** comparing a result with the expected tensor. Include after check.h. */
#ifndef RLY_KERNEL_CHECK_H
#define RLY_KERNEL_CHECK_H

#include <math.h>
#include <stdio.h>

#include "base/strbuf.h"
#include "relayc/runtime.h"

static void fail(const char *where, const char *why, const char *detail) {
  check_failures++;
  fprintf(stderr, "%s: %s%s%s\n", where, why, detail ? ": " : "", detail ? detail : "");
}

static void type_text(StrBuf *sb, const rlyrt_tensor *t) {
  char text[1024];
  sb_puts(sb, rlyrt_tensor_type_text(t, text, sizeof text));
}

/* tests/kernels/data/FILE (run from the repository root). */
static rlyrt_tensor *load(const char *where, const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "tests/kernels/data/%s", file);
  rlyrt_tensor *t = NULL;
  if (rlyrt_npy_load(path, &t) != RLYRT_OK) {
    fail(where, "cannot load", rlyrt_last_error());
    return NULL;
  }
  return t;
}

/* Compares a result tensor with the expected one: integers and bools
** exactly, floats within rtol/atol (NaN equals NaN). */
static bool same(const char *where, const rlyrt_tensor *got, const rlyrt_tensor *want, double rtol, double atol) {
  char a[32], b[32], msg[512];
  if (!rlyrt_dtype_eq(got->dl.dtype, want->dl.dtype)) {
    snprintf(msg, sizeof msg, "dtype %s, expected %s", rlyrt_dtype_name(got->dl.dtype, a),
             rlyrt_dtype_name(want->dl.dtype, b));
    fail(where, "different result", msg);
    return false;
  }
  bool shape_ok = got->dl.ndim == want->dl.ndim;
  for (int i = 0; shape_ok && i < got->dl.ndim; i++) shape_ok = got->dl.shape[i] == want->dl.shape[i];
  if (!shape_ok) {
    char g[256], w[256];
    snprintf(msg, sizeof msg, "%s, expected %s", rlyrt_tensor_type_text(got, g, sizeof g),
             rlyrt_tensor_type_text(want, w, sizeof w));
    fail(where, "different shape", msg);
    return false;
  }
  int64_t n = rlyrt_tensor_numel(got);
  bool is_float = rlyrt_dtype_is_float(got->dl.dtype);
  for (int64_t i = 0; i < n; i++) {
    bool ok;
    if (is_float) {
      double x = rlyrt_get_f64(got, i), y = rlyrt_get_f64(want, i);
      ok = (isnan(x) && isnan(y)) || x == y || fabs(x - y) <= atol + rtol * fabs(y);
      if (!ok) snprintf(msg, sizeof msg, "element %lld is %.17g, expected %.17g", (long long)i, x, y);
    } else {
      int64_t x = rlyrt_get_i64(got, i), y = rlyrt_get_i64(want, i);
      ok = x == y;
      if (!ok) snprintf(msg, sizeof msg, "element %lld is %lld, expected %lld", (long long)i, (long long)x, (long long)y);
    }
    if (!ok) {
      fail(where, "different values", msg);
      return false;
    }
  }
  return true;
}


#endif
