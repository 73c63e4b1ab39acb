/* embedded.h: files compiled into the relayc binary.
**
** The build runs tools/bin2c over the runtime's public header, the DLPack
** header it includes and the runtime's static library (built position
** independent and without sanitizers, for user code), and compiles the
** result (embedded_runtime.c in the build tree) into the relayc_embedded
** library. The driver writes these files into a temporary directory before
** it runs the C compiler, so relayc needs no environment variable and no
** path fixed at build time to find them: the binary carries them. */
#ifndef RLY_EMBEDDED_H
#define RLY_EMBEDDED_H

#include <stddef.h>

typedef struct RlyEmbeddedFile {
  const char *path;            /* relative, '/'-separated: "include/relayc/runtime.h" */
  const unsigned char *bytes;  /* the file's contents (static storage) */
  size_t len;                  /* number of bytes */
} RlyEmbeddedFile;

/* Every embedded file, in the order bin2c was given them, terminated by an
** entry whose path is NULL. Defined by the generated embedded_runtime.c:
**   "include/relayc/runtime.h"   include/relayc/runtime.h of the source tree
**   "include/dlpack/dlpack.h"    the system's DLPack header
**   "lib/librelayc_runtime.a"    the runtime library (PIC, no sanitizers) */
extern const RlyEmbeddedFile rly_embedded_files[];

#endif
