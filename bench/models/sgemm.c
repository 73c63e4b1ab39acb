/* sgemm.c: the dense benchmark's OpenBLAS peer. Reads the two float32
** (N, N) inputs A.npy and B.npy that bench/models/gen.py writes, computes
** C = A * B^T (Relay's nn.dense) with cblas_sgemm on one thread, and
**
**   sgemm check A.npy B.npy OUT.npy     writes C to OUT.npy
**   sgemm time A.npy B.npy REPEAT       one warm-up call, then REPEAT timed
**                                       calls: "time_ms: median=M min=A
**                                       max=B n=REPEAT" (relayc's format)
**   sgemm core                          prints the core (kernel set) that
**                                       OpenBLAS chose for this CPU
**
** check and time print OpenBLAS's core name and build configuration on
** stderr. Only
** little-endian C-order float32 .npy files of two dimensions are read.
** Build: cc -O2 sgemm.c $(pkg-config --cflags --libs openblas) */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Reads a 2-d float32 .npy file; returns malloc'd data or NULL (message
** printed). */
static float *npy_read(const char *path, long *rows, long *cols) {
  FILE *f = fopen(path, "rb");
  unsigned char pre[10];
  char head[1024];
  float *data = NULL;
  if (!f) {
    perror(path);
    return NULL;
  }
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0 || pre[6] != 1) {
    fprintf(stderr, "%s: not a version 1 .npy file\n", path);
    goto fail;
  }
  size_t hlen = pre[8] | (size_t)pre[9] << 8;
  if (hlen >= sizeof head || fread(head, 1, hlen, f) != hlen) {
    fprintf(stderr, "%s: bad .npy header\n", path);
    goto fail;
  }
  head[hlen] = 0;
  const char *shape = strstr(head, "'shape': (");
  if (!strstr(head, "'descr': '<f4'") || !strstr(head, "'fortran_order': False") || !shape ||
      sscanf(shape, "'shape': (%ld, %ld)", rows, cols) != 2) {
    fprintf(stderr, "%s: not a 2-d C-order float32 array: %s\n", path, head);
    goto fail;
  }
  size_t n = (size_t)*rows * (size_t)*cols;
  data = malloc(n * sizeof *data);
  if (!data || fread(data, sizeof *data, n, f) != n) {
    fprintf(stderr, "%s: short read\n", path);
    free(data);
    data = NULL;
  }
fail:
  fclose(f);
  return data;
}

/* Writes a 2-d float32 .npy file (version 1, header padded to 64 bytes). */
static int npy_write(const char *path, const float *data, long rows, long cols) {
  char head[128];
  int len = snprintf(head, sizeof head, "{'descr': '<f4', 'fortran_order': False, 'shape': (%ld, %ld), }",
                     rows, cols);
  int total = (10 + len + 1 + 63) / 64 * 64;
  memset(head + len, ' ', (size_t)(total - 10 - len - 1));
  head[total - 10 - 1] = '\n';
  FILE *f = fopen(path, "wb");
  if (!f) {
    perror(path);
    return -1;
  }
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                           (unsigned char)((total - 10) & 255), (unsigned char)((total - 10) >> 8)};
  size_t n = (size_t)rows * (size_t)cols;
  int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(head, 1, (size_t)(total - 10), f) == (size_t)(total - 10) &&
           fwrite(data, sizeof *data, n, f) == n;
  ok = (fclose(f) == 0) && ok;
  if (!ok) fprintf(stderr, "%s: write failed\n", path);
  return ok ? 0 : -1;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void dense(const float *a, const float *b, float *c, int n) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "core") == 0) {
    printf("%s\n", openblas_get_corename());
    return 0;
  }
  if (argc != 5 || (strcmp(argv[1], "check") != 0 && strcmp(argv[1], "time") != 0)) {
    fprintf(stderr, "usage: sgemm check A.npy B.npy OUT.npy | sgemm time A.npy B.npy REPEAT | sgemm core\n");
    return 2;
  }
  openblas_set_num_threads(1);
  fprintf(stderr, "sgemm: OpenBLAS %s, core %s\n", openblas_get_config(), openblas_get_corename());
  long ar, ac, br, bc;
  float *a = npy_read(argv[2], &ar, &ac);
  float *b = a ? npy_read(argv[3], &br, &bc) : NULL;
  if (!a || !b) return 1;
  if (ar != ac || br != bc || ar != br) {
    fprintf(stderr, "sgemm: expected two square arrays of one size\n");
    return 1;
  }
  int n = (int)ar;
  float *c = malloc((size_t)n * (size_t)n * sizeof *c);
  if (!c) return 1;
  if (strcmp(argv[1], "check") == 0) {
    dense(a, b, c, n);
    return npy_write(argv[4], c, n, n) ? 1 : 0;
  }
  long repeat = strtol(argv[4], NULL, 10);
  if (repeat < 1) {
    fprintf(stderr, "sgemm: REPEAT must be at least 1\n");
    return 2;
  }
  double *t = malloc((size_t)repeat * sizeof *t);
  if (!t) return 1;
  dense(a, b, c, n);
  for (long i = 0; i < repeat; i++) {
    double t0 = now_ms();
    dense(a, b, c, n);
    t[i] = now_ms() - t0;
  }
  qsort(t, (size_t)repeat, sizeof *t, cmp_double);
  double med = repeat % 2 ? t[repeat / 2] : (t[repeat / 2 - 1] + t[repeat / 2]) / 2;
  printf("time_ms: median=%.3f min=%.3f max=%.3f n=%ld\n", med, t[0], t[repeat - 1], repeat);
  free(t);
  free(c);
  free(a);
  free(b);
  return 0;
}
