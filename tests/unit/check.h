/* check.h: the few assertions unit tests need. Each failure prints
** file:line and what differed; main returns check_report(). */
#ifndef RLY_CHECK_H
#define RLY_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures, check_count;

#define CHECK(c)                                                             \
  do {                                                                       \
    check_count++;                                                           \
    if (!(c)) {                                                              \
      check_failures++;                                                      \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c);  \
    }                                                                        \
  } while (0)

#define CHECK_EQ(a, b)                                                       \
  do {                                                                       \
    long long a_ = (long long)(a), b_ = (long long)(b);                      \
    check_count++;                                                           \
    if (a_ != b_) {                                                          \
      check_failures++;                                                      \
      fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__,   \
              __LINE__, #a, #b, a_, b_);                                     \
    }                                                                        \
  } while (0)

#define CHECK_STR(a, b)                                                      \
  do {                                                                       \
    const char *a_ = (a), *b_ = (b);                                         \
    check_count++;                                                           \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                 \
      check_failures++;                                                      \
      fprintf(stderr, "%s:%d: %s == %s failed:\n  got:      \"%s\"\n"        \
              "  expected: \"%s\"\n", __FILE__, __LINE__, #a, #b,            \
              a_ ? a_ : "(null)", b_ ? b_ : "(null)");                       \
    }                                                                        \
  } while (0)

static int check_report(const char *name) {
  printf("%s: %d passed, %d failed\n", name, check_count - check_failures, check_failures);
  return check_failures ? 1 : 0;
}

#endif
