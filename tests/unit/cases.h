/* cases.h: the loop shared by the table-driven tests (test_rel,
** test_kernels): every line of every DIR/PREFIX*.txt file, in file-name
** order, trimmed, comments (#) and blank lines skipped, is handed to run
** with its "FILE:LINE" location. Returns false if a file cannot be read. */
#ifndef RLY_CASES_H
#define RLY_CASES_H

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"

static char *cases_trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = 0;
  return s;
}

static int cases_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool cases_run(const char *dir, const char *prefix, void (*run)(const char *where, char *line)) {
  DIR *d = opendir(dir);
  if (!d) {
    perror(dir);
    return false;
  }
  char *names[64];
  int nn = 0;
  struct dirent *de;
  size_t plen = strlen(prefix);
  while ((de = readdir(d)) && nn < 64) {
    size_t n = strlen(de->d_name);
    if (strncmp(de->d_name, prefix, plen) == 0 && n > 4 && strcmp(de->d_name + n - 4, ".txt") == 0)
      names[nn++] = strdup(de->d_name);
  }
  closedir(d);
  qsort(names, (size_t)nn, sizeof names[0], cases_cmp);
  bool ok = true;
  for (int k = 0; k < nn; k++) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, names[k]);
    size_t len;
    char *text = file_read_all(path, &len, err, sizeof err);
    free(names[k]);
    if (!text) {
      fprintf(stderr, "%s\n", err);
      ok = false;
      continue;
    }
    int lineno = 0;
    for (char *line = text; line && *line;) {
      char *nl = strchr(line, '\n');
      if (nl) *nl = 0;
      lineno++;
      char *t = cases_trim(line);
      if (*t && *t != '#') {
        char where[600];
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        run(where, t);
      }
      line = nl ? nl + 1 : NULL;
    }
    free(text);
  }
  return ok;
}

#endif
