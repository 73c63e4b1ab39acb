/* npycmp.c: compares two .npy files (or two directories of them, file by
** file) within a tolerance: npycmp [--rtol R] [--atol A] [--bits] GOT WANT
** Integers and bools must be equal; floats |got - want| <= atol + rtol*|want|
** (NaN equals NaN), or with --bits the same bits (-0 is not +0; any NaN
** equals any NaN). Exit status 0 when equal, 1 otherwise (with the first
** difference printed). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "relayc/runtime.h"

static double rel_tol = 1e-5, abs_tol = 1e-6;
static bool bits;

static bool same_float(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  if (bits) return x == y && signbit(x) == signbit(y);
  return x == y || fabs(x - y) <= abs_tol + rel_tol * fabs(y);
}

static int compare_files(const char *got_path, const char *want_path) {
  rlyrt_tensor *got = NULL, *want = NULL;
  if (rlyrt_npy_load(got_path, &got) != RLYRT_OK || rlyrt_npy_load(want_path, &want) != RLYRT_OK) {
    fprintf(stderr, "npycmp: %s\n", rlyrt_last_error());
    rlyrt_release(got ? &got->obj : NULL);
    return 1;
  }
  int rc = 0;
  char a[32], b[32];
  if (!rlyrt_dtype_eq(got->dl.dtype, want->dl.dtype)) {
    fprintf(stderr, "npycmp: %s has dtype %s, expected %s\n", got_path, rlyrt_dtype_name(got->dl.dtype, a),
            rlyrt_dtype_name(want->dl.dtype, b));
    rc = 1;
  } else if (got->dl.ndim != want->dl.ndim || memcmp(got->dl.shape, want->dl.shape, sizeof(int64_t) * (size_t)got->dl.ndim)) {
    fprintf(stderr, "npycmp: %s has a different shape than %s\n", got_path, want_path);
    rc = 1;
  } else {
    int64_t n = rlyrt_tensor_numel(got);
    bool is_float = rlyrt_dtype_is_float(got->dl.dtype);
    for (int64_t i = 0; i < n && !rc; i++) {
      if (is_float) {
        double x = rlyrt_get_f64(got, i), y = rlyrt_get_f64(want, i);
        if (!same_float(x, y)) {
          fprintf(stderr, "npycmp: %s: element %lld is %.9g, expected %.9g\n", got_path, (long long)i, x, y);
          rc = 1;
        }
      } else if (rlyrt_get_i64(got, i) != rlyrt_get_i64(want, i)) {
        fprintf(stderr, "npycmp: %s: element %lld is %lld, expected %lld\n", got_path, (long long)i,
                (long long)rlyrt_get_i64(got, i), (long long)rlyrt_get_i64(want, i));
        rc = 1;
      }
    }
  }
  rlyrt_release(&got->obj);
  rlyrt_release(&want->obj);
  return rc;
}

int main(int argc, char **argv) {
  int i = 1;
  for (; i + 1 < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
    if (strcmp(argv[i], "--bits") == 0) bits = true;
    else if (strcmp(argv[i], "--rtol") == 0) rel_tol = strtod(argv[++i], NULL);
    else if (strcmp(argv[i], "--atol") == 0) abs_tol = strtod(argv[++i], NULL);
    else break;
  }
  if (argc - i != 2) {
    fprintf(stderr, "usage: npycmp [--rtol R] [--atol A] [--bits] GOT WANT\n");
    return 2;
  }
  struct stat st;
  if (stat(argv[i + 1], &st) == 0 && S_ISDIR(st.st_mode)) {
    DIR *d = opendir(argv[i + 1]);
    int rc = 0, n = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) {
      if (de->d_name[0] == '.') continue;
      char g[4096], w[4096];
      snprintf(g, sizeof g, "%s/%s", argv[i], de->d_name);
      snprintf(w, sizeof w, "%s/%s", argv[i + 1], de->d_name);
      rc |= compare_files(g, w);
      n++;
    }
    if (d) closedir(d);
    if (!n) {
      fprintf(stderr, "npycmp: %s holds no files\n", argv[i + 1]);
      rc = 1;
    }
    return rc;
  }
  return compare_files(argv[i], argv[i + 1]);
}
