/* consts.c: a shared module's big constants in memory of their own.
**
** A module's constants are one blob in the library's read-only data: file
** pages of the page cache, mapped 4 KiB at a time. A model whose weights
** are larger than the caches reads all of them from memory at every call
** (ResNet-50: 118 MB), and on the virtual machines measured its calls then
** ran in two modes, some 20-50% slower than the rest, where the same
** weights copied into anonymous memory (huge pages where the kernel gives
** them) ran evenly: bench/README.md, "The same Zen 5: weights in memory
** of their own". So a shared module whose constants reach 4 MiB copies
** them at load (its constructor) and points its constant tensors at the
** copy. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS, madvise */
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relayc/runtime.h"

#if defined(__linux__) || defined(__APPLE__) || defined(__FreeBSD__)
#include <sys/mman.h>
#include <unistd.h>
#define HAVE_MMAP 1
#endif

enum { HUGE_PAGE = 2 << 20 };

/* The mapping of a copy of n bytes: whole huge pages, plus one more so that
** the copy can start on a huge-page boundary. */
static size_t map_len(size_t n) { return ((n + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1)) + HUGE_PAGE; }

static int copy_disabled(void) {
  const char *e = getenv("RLYRT_CONSTS_COPY");
  return e && strcmp(e, "0") == 0;
}

void *rlyrt_consts_copy(const void *blob, size_t n) {
#ifdef HAVE_MMAP
  if (!blob || n == 0 || n > SIZE_MAX / 2 || copy_disabled()) return NULL;
  size_t len = map_len(n);
  unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  unsigned char *at = (unsigned char *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
  /* Give back what the alignment skipped and what the copy does not reach,
  ** so that the mapping starts at the copy (rlyrt_consts_free unmaps from
  ** there, knowing only n). */
  if (at > p) munmap(p, (size_t)(at - p));
  size_t keep = (n + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
  if ((size_t)(at - p) + keep < len) munmap(at + keep, len - (size_t)(at - p) - keep);
#ifdef MADV_HUGEPAGE
  (void)madvise(at, keep, MADV_HUGEPAGE); /* advice: without it, small pages */
#endif
  /* Copied a huge page at a time, each part's whole pages of the blob then
  ** leaving this process's mappings (they stay in the page cache and come
  ** back from the file if read): the process holds the constants once,
  ** not twice, even while it copies them. */
  long pg = sysconf(_SC_PAGESIZE);
  const unsigned char *from = blob;
  for (size_t off = 0; off < n; off += HUGE_PAGE) {
    size_t m = n - off < HUGE_PAGE ? n - off : HUGE_PAGE;
    memcpy(at + off, from + off, m);
#ifdef MADV_DONTNEED
    if (pg > 0) {
      uintptr_t lo = ((uintptr_t)(from + off) + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);
      uintptr_t hi = (uintptr_t)(from + off + m) & ~(uintptr_t)(pg - 1);
      if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
    }
#endif
  }
  /* Read-only from now on, as the blob was: a stray store faults. */
  (void)mprotect(at, keep, PROT_READ);
  return at;
#else
  (void)blob;
  (void)n;
  return NULL;
#endif
}

void rlyrt_consts_free(void *copy, size_t n) {
#ifdef HAVE_MMAP
  if (copy) munmap(copy, (n + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1));
#else
  (void)copy;
  (void)n;
#endif
}
