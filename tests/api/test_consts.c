/* test_consts.c: a shared module's big constants copied at load
** (rlyrt_consts_copy, runtime/src/consts.c).
**
** usage: test_consts MODULE.so copy|file
**
** MODULE.so is tests/api/consts.relay built by `relayc build`: @main(%x)
** returns (C, x + C) for a folded constant C of 1025 x 1024 floats (4 MiB
** and more: the module copies it when loaded). The result's first field is
** the module's constant tensor itself, so its data pointer shows where the
** module reads its constants:
**   copy: in an anonymous mapping (no file), on a 2 MiB boundary (C is the
**         first constant of the copy); after rlyrt_module_free that address
**         is no longer mapped (the module's destructor unmapped the copy),
**         and the module loaded again computes the same bytes;
**         the module's own mapping then holds under 1 MiB (the blob's
**         pages were dropped from it once copied);
**   file: in the mapping of MODULE.so itself (RLYRT_CONSTS_COPY=0 is set by
**         the caller), which holds the 4 MiB read.
** Either way x + C must equal the returned C plus x, float by float. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/check.h"
#include "relayc/runtime.h"

enum { ROWS = 1025, COLS = 1024, N = ROWS * COLS };

/* The mapping of /proc/self/maps holding address a: 1 and its path (""
** for an anonymous one) in path, 0 when a is not mapped. */
static int mapping_of(uintptr_t a, char *path, size_t len) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) {
    fprintf(stderr, "test_consts: cannot read /proc/self/maps\n");
    exit(2);
  }
  char line[4096];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    int at = 0;
    if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) < 2 || at == 0) continue;
    if (a < lo || a >= hi) continue;
    found = 1;
    char *p = line + at;
    p[strcspn(p, "\n")] = 0;
    snprintf(path, len, "%s", p);
  }
  fclose(f);
  return found;
}

/* The resident kB of the mappings of /proc/self/smaps whose path ends
** with base. */
static long rss_of(const char *base) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) {
    fprintf(stderr, "test_consts: cannot read /proc/self/smaps\n");
    exit(2);
  }
  char line[4096];
  long kb = 0, v;
  int in = 0;
  size_t bl = strlen(base);
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    int at = 0;
    if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) >= 2 && at > 0) {
      char *p = line + at;
      p[strcspn(p, "\n")] = 0;
      size_t pl = strlen(p);
      in = pl >= bl && strcmp(p + pl - bl, base) == 0;
    } else if (in && sscanf(line, "Rss: %ld kB", &v) == 1) {
      kb += v;
    }
  }
  fclose(f);
  return kb;
}

/* Calls @main with x[i] = i / 8 and checks its result; returns the
** constant's data pointer and keeps a copy of the constant's bytes in c. */
static const float *call_main(rlyrt_module *m, float *c) {
  rlyrt_tensor *x = rlyrt_tensor_new((DLDataType){kDLFloat, 32, 1}, 1, (const int64_t[]){COLS}, false);
  if (!x) exit(2);
  float *xd = x->dl.data;
  for (int i = 0; i < COLS; i++) xd[i] = (float)i / 8;
  rlyrt_object *args[] = {&x->obj}, *out = NULL;
  rlyrt_status s = rlyrt_module_call(m, "main", args, 1, &out);
  CHECK_EQ(s, RLYRT_OK);
  if (s != RLYRT_OK) {
    fprintf(stderr, "test_consts: @main failed: %s\n", rlyrt_last_error());
    exit(1);
  }
  CHECK(out->kind == RLYRT_TUPLE && RLYRT_AS_TUPLE(out)->n == 2);
  const rlyrt_tensor *ct = RLYRT_AS_TENSOR(RLYRT_AS_TUPLE(out)->fields[0]);
  const rlyrt_tensor *st = RLYRT_AS_TENSOR(RLYRT_AS_TUPLE(out)->fields[1]);
  CHECK_EQ(rlyrt_tensor_numel(ct), N);
  CHECK_EQ(rlyrt_tensor_numel(st), N);
  const float *cd = ct->dl.data, *sd = st->dl.data;
  int bad = 0;
  for (int i = 0; i < N; i++)
    if (memcmp(&(float){cd[i] + xd[i % COLS]}, &sd[i], sizeof(float)) != 0) bad++;
  CHECK_EQ(bad, 0);
  /* sin(1), sin(2), ...: the constant is not all zeros. */
  CHECK(cd[0] > 0.84f && cd[0] < 0.85f && cd[1] > 0.90f && cd[1] < 0.91f);
  memcpy(c, cd, sizeof(float) * N);
  rlyrt_release(out);
  rlyrt_release(&x->obj);
  return cd;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[2], "copy") != 0 && strcmp(argv[2], "file") != 0)) {
    fprintf(stderr, "usage: test_consts MODULE.so copy|file\n");
    return 2;
  }
  int copy = strcmp(argv[2], "copy") == 0;
  float *first = malloc(sizeof(float) * N), *again = malloc(sizeof(float) * N);
  if (!first || !again) return 2;
  rlyrt_module *m = NULL;
  if (rlyrt_module_load(argv[1], &m) != RLYRT_OK) {
    fprintf(stderr, "test_consts: %s\n", rlyrt_last_error());
    return 1;
  }
  const float *cd = call_main(m, first);
  char path[4096];
  CHECK(mapping_of((uintptr_t)cd, path, sizeof path));
  const char *base = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
  size_t pl = strlen(path), bl = strlen(base);
  int in_module = pl >= bl && strcmp(path + pl - bl, base) == 0;
  if (copy) {
    if (path[0] != 0) fprintf(stderr, "test_consts: the constants are in '%s', not in a copy\n", path);
    CHECK(path[0] == 0);
    CHECK_EQ((uintptr_t)cd % (2u << 20), 0);
    /* The blob's pages left the module's mapping once copied: the
    ** constants are held once. */
    long kb = rss_of(base);
    if (kb >= 1024) fprintf(stderr, "test_consts: %s still has %ld kB resident\n", base, kb);
    CHECK(kb < 1024);
  } else {
    if (!in_module) fprintf(stderr, "test_consts: the constants are in '%s', not in %s\n", path, base);
    CHECK(in_module);
    CHECK(rss_of(base) >= 4096); /* the constants, read where they are */
  }
  rlyrt_module_free(m);
  if (copy) CHECK(!mapping_of((uintptr_t)cd, path, sizeof path)); /* the copy went with the module */
  /* Loaded again: a new copy, the same bytes. */
  if (rlyrt_module_load(argv[1], &m) != RLYRT_OK) {
    fprintf(stderr, "test_consts: %s\n", rlyrt_last_error());
    return 1;
  }
  call_main(m, again);
  CHECK(memcmp(first, again, sizeof(float) * N) == 0);
  rlyrt_module_free(m);
  free(first);
  free(again);
  /* The runtime's own edges: nothing to copy, nothing to free. */
  CHECK(rlyrt_consts_copy(NULL, 16) == NULL);
  static const unsigned char byte[1];
  CHECK(rlyrt_consts_copy(byte, 0) == NULL);
  rlyrt_consts_free(NULL, 16);
  return check_report(copy ? "test_consts copy" : "test_consts file");
}
