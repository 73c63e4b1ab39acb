/* common.h: macros and small helpers shared by every layer of the compiler.
** RLY_ASSERT / RLY_UNREACHABLE are for bugs in relayc itself, never for
** user input: user input gets a diagnostic (diag.h). */
#ifndef RLY_COMMON_H
#define RLY_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define RLY_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define RLY_NORETURN __attribute__((noreturn))
#else
#define RLY_PRINTF(fmt, args)
#define RLY_NORETURN
#endif

/* Aborts with file:line and the failed condition. */
RLY_NORETURN void rly_assert_fail(const char *file, int line, const char *cond);

#define RLY_ASSERT(c) ((c) ? (void)0 : rly_assert_fail(__FILE__, __LINE__, #c))
#define RLY_UNREACHABLE() rly_assert_fail(__FILE__, __LINE__, "unreachable")
#define RLY_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

/* malloc/realloc that abort on exhaustion (the compiler treats running out of
** memory as fatal; the runtime does not). */
void *rly_xmalloc(size_t n);
void *rly_xrealloc(void *p, size_t n);
void *rly_xcalloc(size_t n, size_t size);

#endif
