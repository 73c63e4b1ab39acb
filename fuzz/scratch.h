/* scratch.h: scratch files for the fuzz targets whose readers and writers
** take a path (rlyrt_npy_load/save, params_read/write).
**
** A scratch file is an anonymous in-memory file (memfd_create) that the
** readers open by the name /proc/self/fd/N: nothing touches the disk,
** nothing is left behind when the process dies, and reopening the name
** (fopen "wb" truncates, open + mmap reads) sees the same contents. Each
** target includes this once; the file needs _GNU_SOURCE for memfd_create,
** defined before any system header. */
#ifndef RLY_FUZZ_SCRATCH_H
#define RLY_FUZZ_SCRATCH_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct Scratch {
  int fd;         /* -1 until opened */
  char path[64];  /* "/proc/self/fd/N" */
} Scratch;

/* Creates the file (once); aborts when the system has no memfd, since the
** target would silently test less otherwise. */
static inline void scratch_open(Scratch *s, const char *name) {
  s->fd = memfd_create(name, 0);
  if (s->fd < 0) {
    perror("fuzz: memfd_create");
    abort();
  }
  snprintf(s->path, sizeof s->path, "/proc/self/fd/%d", s->fd);
}

/* Replaces the contents with p[0..n). */
static inline void scratch_write(const Scratch *s, const void *p, size_t n) {
  if (ftruncate(s->fd, 0) != 0) {
    perror("fuzz: ftruncate");
    abort();
  }
  const unsigned char *b = p;
  size_t done = 0;
  while (done < n) {
    ssize_t k = pwrite(s->fd, b + done, n - done, (off_t)done);
    if (k <= 0) {
      perror("fuzz: pwrite");
      abort();
    }
    done += (size_t)k;
  }
}

#endif
