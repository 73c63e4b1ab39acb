/* error.c: status names and the thread-local last-error message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "relayc/runtime.h"

static _Thread_local char last_error[1024];

const char *rlyrt_status_name(rlyrt_status s) {
  switch (s) {
  case RLYRT_OK: return "RLYRT_OK";
  case RLYRT_E_ARG: return "RLYRT_E_ARG";
  case RLYRT_E_NOMEM: return "RLYRT_E_NOMEM";
  case RLYRT_E_IO: return "RLYRT_E_IO";
  case RLYRT_E_MATCH: return "RLYRT_E_MATCH";
  case RLYRT_E_RUNTIME: return "RLYRT_E_RUNTIME";
  case RLYRT_E_UNSUPPORTED: return "RLYRT_E_UNSUPPORTED";
  case RLYRT_E_INTERNAL: return "RLYRT_E_INTERNAL";
  }
  return "RLYRT_E_UNKNOWN";
}

const char *rlyrt_last_error(void) { return last_error; }

rlyrt_status rlyrt_error(rlyrt_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return s;
}

void rlyrt_clear_error(void) { last_error[0] = 0; }

rlyrt_status rlyrt_error_at(rlyrt_status s, const char *where) {
  char msg[sizeof last_error];
  memcpy(msg, last_error, sizeof msg);
  size_t n = strlen(where);
  if (n > sizeof last_error / 2) n = sizeof last_error / 2;
  memcpy(last_error, where, n);
  last_error[n] = ':';
  last_error[n + 1] = ' ';
  size_t m = strnlen(msg, sizeof msg - 1);
  if (m > sizeof last_error - n - 3) m = sizeof last_error - n - 3;
  memcpy(last_error + n + 2, msg, m);
  last_error[n + 2 + m] = 0;
  return s;
}
