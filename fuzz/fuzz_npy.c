/* fuzz_npy.c: libFuzzer target for the runtime's .npy reader and writer
** (runtime/src/npy.c).
**
** For each input (arbitrary bytes):
**   1. rlyrt_npy_parse reads it from memory;
**   2. rlyrt_npy_load reads the same bytes from a file, and from a pipe
**      (fed by a thread), and both must agree with the first: the same
**      status and the same message after the name (npy.c promises it),
**      and when they read it, the same tensor;
**   3. a tensor that was read is printed (to /dev/null), written with
**      rlyrt_npy_save, read again, and must come back with the same dtype,
**      shape and bytes.
** A disagreement calls abort() after describing it on stderr, so libFuzzer
** keeps the input. Every tensor is released: LeakSanitizer sees any leak.
**
** Build: cmake -DRLY_FUZZ=ON -DRLY_SANITIZE=ON with CC=clang (make
** fuzz-smoke); without RLY_FUZZ, the replay_npy test runs the same code on
** the seeds and regression inputs of fuzz/. */
#define _GNU_SOURCE /* memfd_create, for scratch.h */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relayc/runtime.h"
#include "scratch.h"

#define FUZZ_MAX_INPUT (1u << 20) /* larger inputs are ignored */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static Scratch g_in;   /* the input, for rlyrt_npy_load */
static Scratch g_out;  /* what rlyrt_npy_save writes */
static FILE *g_null;   /* tensors are printed here */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  scratch_open(&g_in, "fuzz-in.npy");
  scratch_open(&g_out, "fuzz-out.npy");
  signal(SIGPIPE, SIG_IGN); /* the pipe's writer may outlive a failed read */
  g_null = fopen("/dev/null", "w");
  if (!g_null) abort();
  return 0;
}

/* Describes a disagreement and aborts (libFuzzer saves the input as crash-*). */
static _Noreturn void fail(const char *fmt, ...) RLYRT_PRINTF(1, 2);
static _Noreturn void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fuzz_npy: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  abort();
}

/* Why a and b differ ("" when they do not): dtype, shape or bytes. */
static const char *tensor_diff(const rlyrt_tensor *a, const rlyrt_tensor *b) {
  if (!rlyrt_dtype_eq(a->dl.dtype, b->dl.dtype)) return "dtypes differ";
  if (a->dl.ndim != b->dl.ndim) return "ranks differ";
  for (int32_t i = 0; i < a->dl.ndim; i++)
    if (a->dl.shape[i] != b->dl.shape[i]) return "shapes differ";
  size_t n = rlyrt_tensor_nbytes(a);
  if (n != rlyrt_tensor_nbytes(b)) return "sizes differ";
  const char *pa = (const char *)a->dl.data + a->dl.byte_offset;
  const char *pb = (const char *)b->dl.data + b->dl.byte_offset;
  if (n && memcmp(pa, pb, n) != 0) return "element bytes differ";
  return "";
}

/* {==== Reading through a pipe ====} */

typedef struct PipeFeed {
  int fd;  /* the write end, closed by the writer */
  const uint8_t *data;
  size_t size;
} PipeFeed;

static void *feed(void *arg) {
  PipeFeed *pf = arg;
  size_t done = 0;
  while (done < pf->size) {
    ssize_t k = write(pf->fd, pf->data + done, pf->size - done);
    if (k <= 0) break; /* the reader is gone */
    done += (size_t)k;
  }
  close(pf->fd);
  return NULL;
}

/* rlyrt_npy_load on data arriving through a pipe, named
** /proc/self/fd/<read end> (*name receives it). */
static rlyrt_status load_piped(const uint8_t *data, size_t size, char *name, size_t cap, rlyrt_tensor **out) {
  int fds[2];
  if (pipe(fds) != 0) {
    perror("fuzz_npy: pipe");
    abort();
  }
  snprintf(name, cap, "/proc/self/fd/%d", fds[0]);
  PipeFeed pf = {fds[1], data, size};
  pthread_t writer;
  if (pthread_create(&writer, NULL, feed, &pf) != 0) abort();
  rlyrt_status st = rlyrt_npy_load(name, out);
  close(fds[0]); /* a writer still blocked now fails and ends */
  pthread_join(writer, NULL);
  return st;
}

/* The message of the last error after "<name>: ", or NULL when it does not
** start so. */
static const char *after_name(const char *msg, const char *name) {
  size_t n = strlen(name);
  return strncmp(msg, name, n) == 0 && msg[n] == ':' ? msg + n : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  char msg[1024], type[256];
  rlyrt_tensor *t = NULL, *f = NULL, *back = NULL;

  /* Both readers name the input by the scratch file's path, so that their
  ** messages can be compared as they are. */
  rlyrt_status st = rlyrt_npy_parse(data, size, g_in.path, &t);
  snprintf(msg, sizeof msg, "%s", st ? rlyrt_last_error() : "");
  if ((st == RLYRT_OK) != (t != NULL)) fail("rlyrt_npy_parse: status %s and result disagree", rlyrt_status_name(st));

  scratch_write(&g_in, data, size);
  rlyrt_status fst = rlyrt_npy_load(g_in.path, &f);
  if (fst != st) {
    fprintf(stderr, "buffer: %s\nfile:   %s\n", msg, fst ? rlyrt_last_error() : "");
    fail("the buffer reader says %s, the file reader %s", rlyrt_status_name(st), rlyrt_status_name(fst));
  }
  if (st && strcmp(msg, rlyrt_last_error()) != 0)
    fail("the two readers give different messages:\n  buffer: %s\n  file:   %s", msg, rlyrt_last_error());

  char pname[64];
  rlyrt_tensor *pt = NULL;
  rlyrt_status pst = load_piped(data, size, pname, sizeof pname, &pt);
  if (pst != st) {
    fprintf(stderr, "buffer: %s\npipe:   %s\n", msg, pst ? rlyrt_last_error() : "");
    fail("the buffer reader says %s, the pipe reader %s", rlyrt_status_name(st), rlyrt_status_name(pst));
  }
  if (st) {
    const char *a = after_name(msg, g_in.path), *b = after_name(rlyrt_last_error(), pname);
    if (!a || !b || strcmp(a, b) != 0)
      fail("the buffer and pipe readers give different messages:\n  buffer: %s\n  pipe:   %s", msg,
           rlyrt_last_error());
    return 0;
  }
  const char *why = tensor_diff(t, f);
  if (*why) fail("the buffer and file readers read different tensors: %s", why);
  why = tensor_diff(t, pt);
  if (*why) fail("the buffer and pipe readers read different tensors: %s", why);

  rlyrt_value_print(g_null, &t->obj);
  rlyrt_tensor_type_text(t, type, sizeof type);

  if (rlyrt_npy_save(g_out.path, t) != RLYRT_OK)
    fail("a tensor that was read (%s) cannot be saved: %s", type, rlyrt_last_error());
  if (rlyrt_npy_load(g_out.path, &back) != RLYRT_OK)
    fail("a saved tensor (%s) cannot be read again: %s", type, rlyrt_last_error());
  why = tensor_diff(t, back);
  if (*why) fail("saving and reading again changed the tensor (%s): %s", type, why);

  rlyrt_release(&t->obj);
  rlyrt_release(&f->obj);
  rlyrt_release(&pt->obj);
  rlyrt_release(&back->obj);
  return 0;
}
