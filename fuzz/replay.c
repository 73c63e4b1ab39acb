/* replay.c: runs a libFuzzer target on fixed inputs, without libFuzzer.
**
**   replay_<target> PATH...
**
** Linked with one fuzz_<target>.c in every build (not only with RLY_FUZZ),
** so that CTest runs each target's checks on its seeds and on the inputs
** that once failed (fuzz/seeds/, fuzz/regressions/, the repository's own
** files). Each PATH is a file or a directory whose regular files are all
** read (not recursively, in name order). A failing input aborts, as under
** libFuzzer; otherwise prints how many inputs ran and exits 0. */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Runs the target on the file at path; false when it cannot be read. */
static bool run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return false;
  }
  size_t cap = 4096, len = 0;
  unsigned char *buf = malloc(cap);
  for (;;) {
    if (!buf) {
      fprintf(stderr, "%s: out of memory\n", path);
      fclose(f);
      return false;
    }
    len += fread(buf + len, 1, cap - len, f);
    if (len < cap) break;
    unsigned char *bigger = realloc(buf, cap *= 2);
    if (!bigger) free(buf);
    buf = bigger;
  }
  bool ok = !ferror(f);
  fclose(f);
  if (!ok) {
    perror(path);
  } else {
    /* An exact-size copy, so that reading past the input is caught by
    ** AddressSanitizer builds as it is under libFuzzer. */
    unsigned char *exact = malloc(len ? len : 1);
    if (!exact) abort();
    if (len) memcpy(exact, buf, len);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
  }
  free(buf);
  return ok;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Runs every regular file of dir, in name order; counts into *ran. */
static bool run_dir(const char *dir, int *ran) {
  DIR *dp = opendir(dir);
  if (!dp) {
    perror(dir);
    return false;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir(dp)) != NULL) {
    if (de->d_name[0] == '.') continue;
    if (n == cap) {
      char **bigger = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
      if (!bigger) abort();
      names = bigger;
    }
    size_t len = strlen(dir) + strlen(de->d_name) + 2;
    names[n] = malloc(len);
    if (!names[n]) abort();
    snprintf(names[n++], len, "%s/%s", dir, de->d_name);
  }
  closedir(dp);
  if (n) qsort(names, n, sizeof *names, cmp_str);
  bool ok = true;
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
      ok = run_file(names[i]) && ok;
      (*ran)++;
    }
    free(names[i]);
  }
  free(names);
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PATH...\n", argv[0]);
    return 2;
  }
  LLVMFuzzerInitialize(&argc, &argv);
  bool ok = true;
  int ran = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      perror(argv[i]);
      ok = false;
    } else if (S_ISDIR(st.st_mode)) {
      ok = run_dir(argv[i], &ran) && ok;
    } else {
      ok = run_file(argv[i]) && ok;
      ran++;
    }
  }
  printf("%s: %d inputs, %s\n", argv[0], ran, ok ? "all passed" : "some could not be read");
  return ok ? 0 : 1;
}
