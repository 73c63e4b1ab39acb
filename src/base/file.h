/* file.h: reading and writing whole files. */
#ifndef RLY_FILE_H
#define RLY_FILE_H

#include "base/common.h"

/* Reads the file at path ("-" = standard input) into a malloc'd buffer
** with a NUL appended; *len receives its length. On failure returns NULL
** and writes a message (with the system's reason) into err. */
char *file_read_all(const char *path, size_t *len, char *err, size_t errlen);

/* Writes the n bytes at data to path (created or truncated). On failure
** returns false and writes a message into err. */
bool file_write_all(const char *path, const void *data, size_t n, char *err, size_t errlen);

#endif
