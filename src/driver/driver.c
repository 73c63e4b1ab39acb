/* driver.c: running programs, temporary directories, the embedded runtime,
** and building artifacts with the system C compiler (see driver.h for the
** contracts).
**
** Invariants: every program runs through driver_spawn (posix_spawnp, no
** shell); every file the build creates, other than `out` (and the copies
** keep_source asks for), lives in one private temporary directory that
** driver_build removes before it returns; paths handed to a program never
** start with '-' (a "./" is put in front), so no file name is read as an
** option. */
#include "driver/driver.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/vec.h"
#include "driver/embedded.h"

extern char **environ;

/* No source location: driver errors are about files and programs. */
static const Span nowhere = {0, 0, 0, 0};

/* {==== Running programs ====} */

/* Moves fd to a descriptor >= 3 (so dup2 onto 1 and 2 in the child never
** meets itself) and sets FD_CLOEXEC on it. Returns the descriptor or -1. */
static int high_cloexec(int fd) {
  if (fd >= 3) {
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return -1;
    return fd;
  }
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  int saved = errno;
  close(fd);
  errno = saved;
  return moved;
}

int driver_spawn(const char *const argv[], StrBuf *output, char *err, size_t errlen) {
  const char *prog = argv && argv[0] ? argv[0] : "";
  if (!argv || !argv[0] || !argv[0][0]) {
    snprintf(err, errlen, "cannot run '%s': no program given", prog);
    return -1;
  }
  int fds[2];
  if (pipe(fds) != 0) {
    snprintf(err, errlen, "cannot run '%s': cannot create a pipe: %s", prog, strerror(errno));
    return -1;
  }
  int rd = high_cloexec(fds[0]);
  int wr = high_cloexec(fds[1]);
  if (rd < 0 || wr < 0) {
    snprintf(err, errlen, "cannot run '%s': cannot set up a pipe: %s", prog, strerror(errno));
    if (rd >= 0) close(rd);
    if (wr >= 0) close(wr);
    return -1;
  }

  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  int rc = posix_spawn_file_actions_init(&fa);
  if (rc == 0) {
    rc = posix_spawnattr_init(&attr);
    if (rc != 0) posix_spawn_file_actions_destroy(&fa);
  }
  if (rc != 0) {
    snprintf(err, errlen, "cannot run '%s': %s", prog, strerror(rc));
    close(rd);
    close(wr);
    return -1;
  }
  /* stdin from /dev/null (a compiler must never wait for input); stdout and
  ** stderr into the pipe. Both pipe ends are FD_CLOEXEC, so the child keeps
  ** only the copies on 1 and 2. The child starts with no blocked signals
  ** and the default SIGPIPE action, whatever the caller set. */
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  if (rc == 0) rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa, wr, 1);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa, wr, 2);
  if (rc == 0) rc = posix_spawnattr_setsigmask(&attr, &none);
  if (rc == 0) rc = posix_spawnattr_setsigdefault(&attr, &defaults);
  if (rc == 0) rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  /* posix_spawnp's argv is char *const[] for historical reasons; it does
  ** not modify the strings. */
  if (rc == 0) rc = posix_spawnp(&pid, prog, &fa, &attr, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(wr);
  if (rc != 0) {
    snprintf(err, errlen, "cannot run '%s': %s", prog, strerror(rc));
    close(rd);
    return -1;
  }

  /* Read to end of file before waiting: a child blocked on a full pipe
  ** would otherwise never exit. */
  int read_errno = 0;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(rd, buf, sizeof buf);
    if (n > 0) {
      if (output) sb_putn(output, buf, (size_t)n);
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      read_errno = errno;
      break;
    }
  }
  close(rd);

  int wstatus = 0;
  pid_t w;
  do {
    w = waitpid(pid, &wstatus, 0);
  } while (w < 0 && errno == EINTR);
  if (w < 0) {
    snprintf(err, errlen, "cannot wait for '%s': %s", prog, strerror(errno));
    return -1;
  }
  if (read_errno) {
    snprintf(err, errlen, "cannot read the output of '%s': %s", prog, strerror(read_errno));
    return -1;
  }
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  snprintf(err, errlen, "'%s' ended in an unexpected way (wait status %d)", prog, wstatus);
  return -1;
}

/* {==== Argument lists ====} */

void arglist_push(ArgList *l, const char *s) {
  size_t n = strlen(s) + 1;
  char *copy = rly_xmalloc(n);
  memcpy(copy, s, n);
  VEC_PUSH(l, copy);
}

void arglist_free(ArgList *l) {
  for (int i = 0; i < l->len; i++) free(l->data[i]);
  VEC_FREE(l);
}

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool driver_split_args(const char *s, ArgList *out, char *err, size_t errlen) {
  if (!s) return true;
  StrBuf word = {0};
  bool in_word = false, ok = true;
  const char *p = s;
  while (*p) {
    if (is_space(*p)) {
      if (in_word) arglist_push(out, sb_str(&word));
      sb_clear(&word);
      in_word = false;
      p++;
      continue;
    }
    in_word = true;
    if (*p == '\'') {
      const char *end = strchr(p + 1, '\'');
      if (!end) {
        snprintf(err, errlen, "unterminated ' quote in \"%s\"", s);
        ok = false;
        break;
      }
      sb_putn(&word, p + 1, (size_t)(end - p - 1));
      p = end + 1;
    } else if (*p == '"') {
      p++;
      while (*p && *p != '"') {
        if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;
        sb_putc(&word, *p++);
      }
      if (!*p) {
        snprintf(err, errlen, "unterminated \" quote in \"%s\"", s);
        ok = false;
        break;
      }
      p++;
    } else if (*p == '\\') {
      if (!p[1]) {
        snprintf(err, errlen, "a backslash ends \"%s\"", s);
        ok = false;
        break;
      }
      sb_putc(&word, p[1]);
      p += 2;
    } else {
      sb_putc(&word, *p++);
    }
  }
  if (ok && in_word) arglist_push(out, sb_str(&word));
  sb_free(&word);
  return ok;
}

/* {==== Files and directories ====} */

char *driver_tmpdir_new(char *err, size_t errlen) {
  const char *base = getenv("TMPDIR");
  if (!base || !base[0]) base = "/tmp";
  size_t n = strlen(base);
  while (n > 1 && base[n - 1] == '/') n--;
  StrBuf path = {0};
  sb_putn(&path, base, n);
  sb_puts(&path, "/relayc-XXXXXX");
  if (!mkdtemp(path.data)) {
    snprintf(err, errlen, "cannot create a temporary directory in '%.*s': %s", (int)n, base,
             strerror(errno));
    sb_free(&path);
    return NULL;
  }
  return path.data;  /* mkdtemp made it mode 0700 */
}

enum { RMTREE_MAX_DEPTH = 256 };

/* Records the first failure of a removal. */
static void rm_fail(bool *ok, char *err, size_t errlen, const char *what, const char *name, int e) {
  if (*ok) snprintf(err, errlen, "cannot %s '%s': %s", what, name, strerror(e));
  *ok = false;
}

/* Removes everything inside the directory open as fd (consumed: closed
** before returning). Names are read first, then removed, so removal never
** disturbs the directory stream. Each entry is examined with fstatat
** (AT_SYMLINK_NOFOLLOW) and subdirectories are opened with O_NOFOLLOW
** relative to their parent's descriptor, so a symbolic link is never
** followed, even one that replaces a directory while we work. */
static void rm_inside(int fd, int depth, bool *ok, char *err, size_t errlen) {
  DIR *dir = fdopendir(fd);
  if (!dir) {
    rm_fail(ok, err, errlen, "read directory", "", errno);
    close(fd);
    return;
  }
  ArgList names = {0};
  struct dirent *de;
  for (;;) {
    errno = 0;
    de = readdir(dir);
    if (!de) break;
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    arglist_push(&names, de->d_name);
  }
  if (errno) rm_fail(ok, err, errlen, "read directory", "", errno);
  int dfd = dirfd(dir);
  for (int i = 0; i < names.len; i++) {
    const char *name = names.data[i];
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) rm_fail(ok, err, errlen, "examine", name, errno);
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      if (depth >= RMTREE_MAX_DEPTH) {
        rm_fail(ok, err, errlen, "remove", name, ELOOP);
        continue;
      }
      int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) {
        rm_fail(ok, err, errlen, "open directory", name, errno);
        continue;
      }
      rm_inside(sub, depth + 1, ok, err, errlen);
      if (unlinkat(dfd, name, AT_REMOVEDIR) != 0) rm_fail(ok, err, errlen, "remove", name, errno);
    } else if (unlinkat(dfd, name, 0) != 0 && errno != ENOENT) {
      rm_fail(ok, err, errlen, "remove", name, errno);
    }
  }
  arglist_free(&names);
  closedir(dir);
}

bool driver_rmtree(const char *dir, char *err, size_t errlen) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, errlen, "cannot remove '%s': %s", dir, strerror(errno));
    return false;
  }
  bool ok = true;
  rm_inside(fd, 1, &ok, err, errlen);
  if (rmdir(dir) != 0) rm_fail(&ok, err, errlen, "remove", dir, errno);
  return ok;
}

/* Writes all of buf to fd, retrying short writes. Returns 0 or an errno. */
static int write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Creates or truncates path and writes bytes into it. */
static bool write_file(const char *path, const void *bytes, size_t len, char *err, size_t errlen) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
    return false;
  }
  int e = write_all(fd, bytes, len);
  if (close(fd) != 0 && !e) e = errno;
  if (e) {
    snprintf(err, errlen, "cannot write '%s': %s", path, strerror(e));
    return false;
  }
  return true;
}

bool driver_copy_file(const char *src, const char *dst, char *err, size_t errlen) {
  int in = open(src, O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    snprintf(err, errlen, "cannot open '%s': %s", src, strerror(errno));
    return false;
  }
  struct stat sst, dst_st;
  if (fstat(in, &sst) != 0) {
    snprintf(err, errlen, "cannot read '%s': %s", src, strerror(errno));
    close(in);
    return false;
  }
  if (S_ISDIR(sst.st_mode)) {
    snprintf(err, errlen, "cannot read '%s': it is a directory", src);
    close(in);
    return false;
  }
  /* Copying a file onto itself would truncate it first: nothing to do. */
  if (stat(dst, &dst_st) == 0 && dst_st.st_dev == sst.st_dev && dst_st.st_ino == sst.st_ino) {
    close(in);
    return true;
  }
  int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (out < 0) {
    snprintf(err, errlen, "cannot write '%s': %s", dst, strerror(errno));
    close(in);
    return false;
  }
  bool ok = true;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      snprintf(err, errlen, "cannot read '%s': %s", src, strerror(errno));
      ok = false;
      break;
    }
    int e = write_all(out, buf, (size_t)n);
    if (e) {
      snprintf(err, errlen, "cannot write '%s': %s", dst, strerror(e));
      ok = false;
      break;
    }
  }
  close(in);
  if (close(out) != 0 && ok) {
    snprintf(err, errlen, "cannot write '%s': %s", dst, strerror(errno));
    ok = false;
  }
  return ok;
}

bool driver_mkdirs(const char *path, char *err, size_t errlen) {
  if (!path[0]) {
    snprintf(err, errlen, "cannot create a directory with an empty name");
    return false;
  }
  StrBuf p = {0};
  sb_puts(&p, path);
  char *s = p.data;
  bool ok = true;
  /* Create each prefix that ends before a '/', then the whole path. */
  for (size_t i = 1; ok; i++) {
    char c = s[i];
    if (c != '/' && c != 0) continue;
    if (i > 0 && s[i - 1] == '/') {  /* "a//b": nothing new ends here */
      if (!c) break;
      continue;
    }
    s[i] = 0;
    struct stat st;
    if (mkdir(s, 0777) != 0) {
      int e = errno;
      if (e != EEXIST || stat(s, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot create directory '%s': %s", s,
                 e == EEXIST ? "a file of that name exists" : strerror(e));
        ok = false;
      }
    }
    s[i] = c;
    if (!c) break;
  }
  sb_free(&p);
  return ok;
}

/* A relative path with no "." or ".." component and no empty one. */
static bool is_plain_relative(const char *p) {
  if (!p[0] || p[0] == '/') return false;
  for (const char *c = p; *c;) {
    const char *slash = strchr(c, '/');
    size_t n = slash ? (size_t)(slash - c) : strlen(c);
    if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) return false;
    c += n;
    if (*c == '/') c++;
    else break;
  }
  return p[strlen(p) - 1] != '/';
}

bool driver_write_runtime(const char *dir, char *err, size_t errlen) {
  bool ok = true;
  StrBuf path = {0};
  for (const RlyEmbeddedFile *f = rly_embedded_files; ok && f->path; f++) {
    if (!is_plain_relative(f->path)) {
      snprintf(err, errlen, "embedded file '%s' has a bad path", f->path);
      ok = false;
      break;
    }
    sb_clear(&path);
    sb_printf(&path, "%s/%s", dir, f->path);
    char *slash = strrchr(path.data, '/');
    *slash = 0;
    ok = driver_mkdirs(path.data, err, errlen);
    *slash = '/';
    if (ok) ok = write_file(path.data, f->bytes, f->len, err, errlen);
  }
  sb_free(&path);
  return ok;
}

/* The embedded file at path, or NULL. */
static const RlyEmbeddedFile *embedded_find(const char *path) {
  for (const RlyEmbeddedFile *f = rly_embedded_files; f->path; f++)
    if (strcmp(f->path, path) == 0) return f;
  return NULL;
}

/* {==== Static library members ====} */

/* Reads a decimal field of an ar header (digits, then space padding). */
static bool ar_number(const unsigned char *field, int width, size_t *value) {
  size_t v = 0;
  int i = 0;
  while (i < width && field[i] == ' ') i++;
  if (i == width || field[i] < '0' || field[i] > '9') return false;
  for (; i < width && field[i] >= '0' && field[i] <= '9'; i++) {
    if (v > (SIZE_MAX - 9) / 10) return false;
    v = v * 10 + (size_t)(field[i] - '0');
  }
  for (; i < width; i++)
    if (field[i] != ' ') return false;
  *value = v;
  return true;
}

/* Writes every object of the ar archive a[0..n) into dir, as
** dir/rlyrt_NN_NAME (NN: the member's position, so names are unique even
** when two members share a name; NAME: its name, characters other than
** letters, digits, '.', '_' and '-' replaced by '_'), and appends the paths
** to paths in archive order. Understands the common format with GNU long
** names ("//" table, "/N" references) and BSD long names ("#1/N"); symbol
** tables ("/", "/SYM64/", "__.SYMDEF") are skipped, since `ar s` makes a
** new one. Returns false with a message in err for a malformed archive
** or a failed write. */
static bool ar_extract(const unsigned char *a, size_t n, const char *dir, ArgList *paths, char *err,
                       size_t errlen) {
  if (n < 8 || memcmp(a, "!<arch>\n", 8) != 0) {
    snprintf(err, errlen, "the embedded runtime library is not an ar archive");
    return false;
  }
  const unsigned char *longnames = NULL;
  size_t longnames_len = 0, pos = 8;
  int index = 0;
  StrBuf name = {0}, path = {0};
  bool ok = true;
  while (ok && pos < n) {
    if (a[pos] == '\n' && pos + 1 == n) break;  /* stray padding at the end */
    size_t size;
    if (n - pos < 60 || a[pos + 58] != '`' || a[pos + 59] != '\n' || !ar_number(a + pos + 48, 10, &size) ||
        size > n - pos - 60) {
      snprintf(err, errlen, "the embedded runtime library is malformed at byte %zu", pos);
      ok = false;
      break;
    }
    const unsigned char *h = a + pos, *data = h + 60;
    size_t data_len = size;
    pos += 60 + size + (size & 1);
    int field_len = 16;
    while (field_len > 0 && h[field_len - 1] == ' ') field_len--;
    sb_clear(&name);
    if ((field_len == 1 && h[0] == '/') || (field_len == 7 && memcmp(h, "/SYM64/", 7) == 0) ||
        (field_len >= 9 && memcmp(h, "__.SYMDEF", 9) == 0)) {
      continue;
    } else if (field_len == 2 && memcmp(h, "//", 2) == 0) {
      longnames = data;
      longnames_len = data_len;
      continue;
    } else if (field_len > 1 && h[0] == '/' && h[1] >= '0' && h[1] <= '9') {
      size_t off;
      if (!longnames || !ar_number(h + 1, field_len - 1, &off) || off >= longnames_len) {
        snprintf(err, errlen, "the embedded runtime library has a bad long name");
        ok = false;
        break;
      }
      size_t end = off;
      while (end < longnames_len && longnames[end] != '/' && longnames[end] != '\n') end++;
      sb_putn(&name, (const char *)longnames + off, end - off);
    } else if (field_len > 3 && memcmp(h, "#1/", 3) == 0) {
      size_t len;
      if (!ar_number(h + 3, field_len - 3, &len) || len > data_len) {
        snprintf(err, errlen, "the embedded runtime library has a bad long name");
        ok = false;
        break;
      }
      size_t k = 0;
      while (k < len && data[k]) k++;  /* the name is NUL-padded */
      sb_putn(&name, (const char *)data, k);
      if (k >= 9 && memcmp(data, "__.SYMDEF", 9) == 0) continue;
      data += len;
      data_len -= len;
    } else {
      int len = field_len;
      if (len > 0 && h[len - 1] == '/') len--;
      sb_putn(&name, (const char *)h, (size_t)len);
    }
    sb_clear(&path);
    sb_printf(&path, "%s/rlyrt_%02d_", dir, index++);
    const char *nm = sb_str(&name);
    for (size_t i = 0; nm[i] && i < 100; i++) {
      char c = nm[i];
      bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '_' || c == '-';
      sb_putc(&path, keep ? c : '_');
    }
    ok = write_file(sb_str(&path), data, data_len, err, errlen);
    if (ok) arglist_push(paths, sb_str(&path));
  }
  sb_free(&name);
  sb_free(&path);
  return ok;
}

/* {==== Building ====} */

void driver_options_init(BuildOptions *o) {
  memset(o, 0, sizeof *o);
  o->emit = EMIT_SO;
  o->cc = "cc";
  o->ar = "ar";
  o->opt_level = 2;
}

static const char *const emit_names[] = {"so", "a", "obj", "c"};
_Static_assert(RLY_COUNTOF(emit_names) == EMIT_C + 1, "update emit_names with EmitKind");

bool driver_emit_parse(const char *name, EmitKind *kind) {
  for (int k = 0; k <= EMIT_C; k++) {
    if (strcmp(name, emit_names[k]) == 0) {
      *kind = (EmitKind)k;
      return true;
    }
  }
  return false;
}

bool driver_emit_from_path(const char *path, EmitKind *kind) {
  static const char *const exts[] = {".so", ".a", ".o", ".c"};
  _Static_assert(RLY_COUNTOF(exts) == EMIT_C + 1, "update exts with EmitKind");
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  const char *dot = strrchr(base, '.');
  if (!dot || dot == base) return false;
  for (int k = 0; k <= EMIT_C; k++) {
    if (strcmp(dot, exts[k]) == 0) {
      *kind = (EmitKind)k;
      return true;
    }
  }
  return false;
}

const char *driver_emit_name(EmitKind kind) {
  return (unsigned)kind <= EMIT_C ? emit_names[kind] : "?";
}

/* Appends path to argv, with "./" in front when it starts with '-' (so the
** program does not read it as an option). */
static void push_path(ArgList *argv, const char *path) {
  if (path[0] != '-') {
    arglist_push(argv, path);
    return;
  }
  StrBuf p = {0};
  sb_printf(&p, "./%s", path);
  arglist_push(argv, sb_str(&p));
  sb_free(&p);
}

/* Appends one word to sb, quoted for a POSIX shell when needed. */
static void put_shell_word(StrBuf *sb, const char *w) {
  bool plain = w[0] != 0;
  for (const char *c = w; *c; c++) {
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-", *c)) plain = false;
  }
  if (plain) {
    sb_puts(sb, w);
    return;
  }
  sb_putc(sb, '\'');
  for (const char *c = w; *c; c++) {
    if (*c == '\'') sb_puts(sb, "'\\''");
    else sb_putc(sb, *c);
  }
  sb_putc(sb, '\'');
}

/* The message a program wrote, less its trailing newlines (the diagnostic
** printer adds one). */
static void trim_newlines(StrBuf *sb) {
  while (sb->len > 0 && (sb->data[sb->len - 1] == '\n' || sb->data[sb->len - 1] == '\r')) sb->data[--sb->len] = 0;
}

/* Reports a program's end (driver_spawn's status, its output, its error)
** into d as run_tool does, and frees output. */
static bool report_tool(int status, StrBuf *output, const char *err, const char *what, Diag *d) {
  trim_newlines(output);
  bool ok = status == 0;
  if (status < 0) {
    diag_error(d, nowhere, "%s", err);
  } else if (status > 0) {
    if (output->len) diag_error(d, nowhere, "%s failed with exit status %d:\n%s", what, status, sb_str(output));
    else diag_error(d, nowhere, "%s failed with exit status %d", what, status);
  } else if (output->len) {
    diag_warning(d, nowhere, "%s printed:\n%s", what, sb_str(output));
  }
  sb_free(output);
  return ok;
}

/* Writes argv into the command log, if any. */
static void log_command(const BuildOptions *o, const ArgList *argv) {
  if (!o->commands) return;
  for (int i = 0; i < argv->len; i++) {
    if (i) sb_putc(o->commands, ' ');
    put_shell_word(o->commands, argv->data[i]);
  }
  sb_putc(o->commands, '\n');
}

/* Runs argv (what: "the C compiler", "the archiver") and reports into d.
** A program that succeeds but prints something (warnings) is a warning. */
static bool run_tool(const BuildOptions *o, const ArgList *argv, const char *what, Diag *d) {
  const char **vec = rly_xmalloc(((size_t)argv->len + 1) * sizeof *vec);
  for (int i = 0; i < argv->len; i++) vec[i] = argv->data[i];
  vec[argv->len] = NULL;
  log_command(o, argv);
  StrBuf output = {0};
  char err[512];
  int status = driver_spawn(vec, &output, err, sizeof err);
  free(vec);
  return report_tool(status, &output, err, what, d);
}

/* {==== Compiling in parts ====}
** A C file whose second line says "relayc-parts: N, B bytes" (codegen.c:
** N kernel bodies of B bytes of C in all) compiles as parts 0 .. n-1 with
** -DRC_PART=i -DRC_PARTS=n, up to one C compiler per CPU at a time, and the
** objects are then linked or archived together. The C compiler's time on a
** big model (ResNet-50: 25 to 28 kernel bodies of 700 to 1,600 lines, in
** three ISA versions each) is most of a build, and one compile uses one
** core; but each part reads the headers again (immintrin.h: about 0.5 s),
** so a part takes PART_MIN_BYTES of bodies at least (about 2 s of
** compile): n is at most N, B / PART_MIN_BYTES, the CPUs and PARTS_MAX.
** GCC holds a whole file's functions until its end (ResNet-50 whole: 360
** to 400 MB, half of its 1.2 MB of bodies 280 MB, a body alone under 160
** MB; relayc itself 250 to 270 MB), so a file of more than PART_MAX_BYTES
** is split further, into a multiple of the CPUs, the parts queued for
** them; each part costs CPU time (ResNet-50 on a Zen 5: 11.5 s of CPU in
** 2 parts, 13 s in 4). RELAYC_JOBS=J sets the
** CPUs and, set, drops the PART_MIN_BYTES rule; RLY_PART_BYTES=B sets
** PART_MAX_BYTES (tests). */
enum { PARTS_MAX = 16, PART_MIN_BYTES = 128 * 1024, PART_MAX_BYTES = 768 * 1024 };

/* The parts to compile c_file in (1: whole) and the CPUs to use. */
static int build_parts(const char *c_file, int *cpus_out) {
  FILE *f = fopen(c_file, "r");
  *cpus_out = 1;
  if (!f) return 1;
  char line[256];
  int nb = 1;
  long long bytes = 0;
  if (!fgets(line, sizeof line, f) || !fgets(line, sizeof line, f) ||
      sscanf(line, "/* relayc-parts: %d, %lld bytes */", &nb, &bytes) != 2)
    nb = 1;
  fclose(f);
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const char *jobs = getenv("RELAYC_JOBS");
  bool forced = jobs && jobs[0];
  if (forced) cpus = strtol(jobs, NULL, 10);
  if (cpus <= 1 || nb <= 1) return 1;
  long long n = cpus;
  if (!forced && bytes / PART_MIN_BYTES < n) n = bytes / PART_MIN_BYTES;
  const char *most = getenv("RLY_PART_BYTES"); /* a test hook: PART_MAX_BYTES */
  long long max_bytes = most && atoll(most) > 0 ? atoll(most) : PART_MAX_BYTES;
  if ((bytes + max_bytes - 1) / max_bytes > n) {
    /* more parts than CPUs: whole rounds of them (ResNet-50's 1.2 MB of
    ** bodies in 3 parts on 2 CPUs took 7.6 s, the third part alone at the
    ** end; in 4, 6.9 s) */
    n = (bytes + max_bytes - 1) / max_bytes;
    if (n > cpus) n = (n + cpus - 1) / cpus * cpus;
  }
  if (n > nb) n = nb;
  if (n > PARTS_MAX) n = PARTS_MAX;
  if (n < 2) return 1;
  *cpus_out = cpus < n ? (int)cpus : (int)n;
  return (int)n;
}

typedef struct PartJob {
  const char **argv;
  StrBuf output;
  char err[512];
  int status;
} PartJob;

/* A worker: the parts not yet taken, one after the other. */
typedef struct PartQueue {
  PartJob *jobs;
  int n, next;
} PartQueue;

static void *part_main(void *arg) {
  PartQueue *q = arg;
  for (int i; (i = __atomic_fetch_add(&q->next, 1, __ATOMIC_RELAXED)) < q->n;)
    q->jobs[i].status = driver_spawn(q->jobs[i].argv, &q->jobs[i].output, q->jobs[i].err, sizeof q->jobs[i].err);
  return NULL;
}

/* Compiles the n parts of c_file (flags: the compile command up to the
** file) into dir/partI.o, `cpus` at a time; their paths into objs. */
static bool compile_parts(const BuildOptions *o, const ArgList *flags, const ArgList *cflags, const char *c_file,
                          const char *dir, int n, int cpus, ArgList *objs, Diag *d) {
  ArgList *argv = rly_xcalloc((size_t)n, sizeof *argv);
  PartJob *jobs = rly_xcalloc((size_t)n, sizeof *jobs);
  pthread_t *th = rly_xcalloc((size_t)cpus, sizeof *th);
  bool *started = rly_xcalloc((size_t)cpus, sizeof *started);
  PartQueue q = {jobs, n, 0};
  for (int i = 0; i < n; i++) {
    StrBuf w = {0};
    for (int k = 0; k < flags->len; k++) arglist_push(&argv[i], flags->data[k]);
    arglist_push(&argv[i], "-c");
    sb_printf(&w, "-DRC_PART=%d", i);
    arglist_push(&argv[i], sb_str(&w));
    sb_clear(&w);
    sb_printf(&w, "-DRC_PARTS=%d", n);
    arglist_push(&argv[i], sb_str(&w));
    sb_clear(&w);
    sb_printf(&w, "%s/part%d.o", dir, i);
    arglist_push(objs, sb_str(&w));
    arglist_push(&argv[i], "-o");
    push_path(&argv[i], sb_str(&w));
    sb_free(&w);
    push_path(&argv[i], c_file);
    for (int k = 0; k < cflags->len; k++) arglist_push(&argv[i], cflags->data[k]);
    log_command(o, &argv[i]);
    jobs[i].argv = rly_xmalloc(((size_t)argv[i].len + 1) * sizeof *jobs[i].argv);
    for (int k = 0; k < argv[i].len; k++) jobs[i].argv[k] = argv[i].data[k];
    jobs[i].argv[argv[i].len] = NULL;
  }
  /* cpus - 1 threads and this one take the parts from the queue */
  for (int w = 0; w + 1 < cpus; w++) started[w] = pthread_create(&th[w], NULL, part_main, &q) == 0;
  part_main(&q);
  for (int w = 0; w + 1 < cpus; w++)
    if (started[w]) pthread_join(th[w], NULL);
  bool ok = true;
  for (int i = 0; i < n; i++) {
    if (!report_tool(jobs[i].status, &jobs[i].output, jobs[i].err, "the C compiler", d)) ok = false;
    free(jobs[i].argv);
    arglist_free(&argv[i]);
  }
  free(argv);
  free(jobs);
  free(th);
  free(started);
  return ok;
}

static void push_all(ArgList *argv, const ArgList *words) {
  for (int i = 0; i < words->len; i++) arglist_push(argv, words->data[i]);
}

/* {==== A faster linker for big constants ====}
** GNU ld copies a big model's constants slowly: ResNet-50's 153 MB take it
** 1.3 to 1.6 s, gold 0.4 to 0.5 s and lld 0.3 s. A shared library with
** more than FAST_LINK_BYTES of constants is linked by gold, else lld,
** where PATH has one, the C compiler is the host's (no --target) and the
** flags choose no linker; should that link fail, the C compiler's own
** linker links again. RELAYC_LD=default keeps the C compiler's own;
** RLY_FAST_LINK_BYTES=B sets FAST_LINK_BYTES (tests). */
enum { FAST_LINK_BYTES = 16 << 20 };

static bool on_path(const char *prog) {
  const char *path = getenv("PATH");
  if (!path || !path[0]) return false;
  StrBuf f = {0};
  bool found = false;
  for (const char *p = path; !found;) {
    const char *colon = strchr(p, ':');
    size_t n = colon ? (size_t)(colon - p) : strlen(p);
    sb_clear(&f);
    if (n) sb_putn(&f, p, n);
    else sb_putc(&f, '.');
    sb_printf(&f, "/%s", prog);
    found = access(sb_str(&f), X_OK) == 0;
    if (!colon) break;
    p = colon + 1;
  }
  sb_free(&f);
  return found;
}

/* "-fuse-ld=gold" or "-fuse-ld=lld" for linking a library with the
** constants in blob, or NULL (the C compiler's own linker). */
static const char *fast_linker(const BuildOptions *o, const ArgList *cflags, const char *blob) {
  struct stat st;
  const char *hook = getenv("RLY_FAST_LINK_BYTES");
  long long least = hook && hook[0] ? atoll(hook) : FAST_LINK_BYTES;
  if (!blob || stat(blob, &st) != 0 || (long long)st.st_size <= least) return NULL;
  if (o->target && o->target[0] && strcmp(o->target, "native") != 0) return NULL;
  for (int i = 0; i < cflags->len; i++)
    if (strncmp(cflags->data[i], "-fuse-ld", 8) == 0 || strncmp(cflags->data[i], "--ld-path", 9) == 0) return NULL;
  const char *want = getenv("RELAYC_LD");
  if (want && strcmp(want, "default") == 0) return NULL;
  if (on_path("ld.gold")) return "-fuse-ld=gold";
  if (on_path("ld.lld")) return "-fuse-ld=lld";
  return NULL;
}

/* Links argv with the linker flag fast (if any), else, or should that
** fail, as argv says. */
static bool run_link(const BuildOptions *o, const ArgList *argv, const char *fast, Diag *d) {
  if (fast) {
    ArgList a = {0};
    push_all(&a, argv);
    arglist_push(&a, fast);
    const char **vec = rly_xmalloc(((size_t)a.len + 1) * sizeof *vec);
    for (int i = 0; i < a.len; i++) vec[i] = a.data[i];
    vec[a.len] = NULL;
    log_command(o, &a);
    StrBuf output = {0};
    char err[512];
    int status = driver_spawn(vec, &output, err, sizeof err);
    free(vec);
    arglist_free(&a);
    if (status == 0) return report_tool(status, &output, err, "the C compiler", d);
    sb_free(&output);
    if (o->commands) sb_printf(o->commands, "# %s failed; linking again with the C compiler's own linker\n", fast);
  }
  return run_tool(o, argv, "the C compiler", d);
}

/* The file next to a C file with the extension ext instead of "c"
** (model.c -> model.h, model.blob), or NULL when there is none. Returns a
** malloc'd path. */
static char *sibling_file(const char *c_file, const char *ext) {
  size_t n = strlen(c_file);
  if (n < 2 || strcmp(c_file + n - 2, ".c") != 0) return NULL;
  char *h = rly_xmalloc(n - 1 + strlen(ext) + 1);
  memcpy(h, c_file, n - 1);
  strcpy(h + n - 1, ext);
  struct stat st;
  if (stat(h, &st) != 0 || !S_ISREG(st.st_mode)) {
    free(h);
    return NULL;
  }
  return h;
}

static char *sibling_header(const char *c_file) { return sibling_file(c_file, "h"); }

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* Copies file into directory dir under its own name. */
static bool copy_into(const char *file, const char *dir, char *err, size_t errlen) {
  StrBuf dst = {0};
  sb_printf(&dst, "%s/%s", dir, base_name(file));
  bool ok = driver_copy_file(file, sb_str(&dst), err, errlen);
  sb_free(&dst);
  return ok;
}

/* The directory part of path ("." when it has none); malloc'd. */
static char *dir_name(const char *path) {
  const char *slash = strrchr(path, '/');
  StrBuf d = {0};
  if (!slash) sb_putc(&d, '.');
  else if (slash == path) sb_putc(&d, '/');
  else sb_putn(&d, path, (size_t)(slash - path));
  return d.data;
}

/* The flags every compile starts with. */
static void push_compile_flags(const BuildOptions *o, const char *tmp, ArgList *argv) {
  char opt[8];
  arglist_push(argv, o->cc && o->cc[0] ? o->cc : "cc");
  arglist_push(argv, "-std=c11");
  arglist_push(argv, "-Wall");
  arglist_push(argv, "-Wextra");
  /* Large generated files (weights) make gcc note that it stops checking
  ** indentation; the generated code is indented by the generator. */
  arglist_push(argv, "-Wno-misleading-indentation");
  if (o->opt_level == DRIVER_OPT_SIZE) snprintf(opt, sizeof opt, "-Os");
  else snprintf(opt, sizeof opt, "-O%d", o->opt_level);
  arglist_push(argv, opt);
  if (o->target && strcmp(o->target, "native") == 0) {
    arglist_push(argv, "-march=native");
  } else if (o->target && o->target[0]) {
    StrBuf t = {0};
    sb_printf(&t, "--target=%s", o->target);
    arglist_push(argv, sb_str(&t));
    sb_free(&t);
  }
  arglist_push(argv, "-fPIC");
  StrBuf inc = {0};
  sb_printf(&inc, "-I%s/include", tmp);
  arglist_push(argv, sb_str(&inc));
  sb_free(&inc);
}

bool driver_build(const BuildOptions *o, const char *c_file, const char *out, Diag *d) {
  char err[1024];
  bool ok = false;
  char *tmp = NULL, *header = sibling_header(c_file), *blob = sibling_file(c_file, "blob");
  ArgList cflags = {0}, argv = {0}, members = {0}, objs = {0};
  StrBuf path = {0}, object = {0};

  if (o->opt_level < 0 || o->opt_level > DRIVER_OPT_SIZE) {
    diag_error(d, nowhere, "the optimisation level must be 0 to 3, or -Os, not %d", o->opt_level);
    goto done;
  }
  if ((unsigned)o->emit > EMIT_C) {
    diag_error(d, nowhere, "unknown kind of output (%d)", (int)o->emit);
    goto done;
  }
  if (!driver_split_args(o->cflags, &cflags, err, sizeof err)) {
    diag_error(d, nowhere, "C compiler flags: %s", err);
    goto done;
  }
  /* The kept source is written first: it is most useful when the build
  ** fails. */
  if (o->keep_source) {
    if (!driver_mkdirs(o->keep_source, err, sizeof err) || !copy_into(c_file, o->keep_source, err, sizeof err) ||
        (header && !copy_into(header, o->keep_source, err, sizeof err)) ||
        (blob && !copy_into(blob, o->keep_source, err, sizeof err))) {
      diag_error(d, nowhere, "%s", err);
      goto done;
    }
  }
  if (o->emit == EMIT_C) {
    ok = driver_copy_file(c_file, out, err, sizeof err);
    if (ok && (header || blob)) {
      char *out_dir = dir_name(out);
      if (header) ok = copy_into(header, out_dir, err, sizeof err);
      if (ok && blob) ok = copy_into(blob, out_dir, err, sizeof err);
      free(out_dir);
    }
    if (!ok) diag_error(d, nowhere, "%s", err);
    goto done;
  }

  tmp = driver_tmpdir_new(err, sizeof err);
  if (!tmp || !driver_write_runtime(tmp, err, sizeof err)) {
    diag_error(d, nowhere, "%s", err);
    goto done;
  }
  push_compile_flags(o, tmp, &argv);
  if (blob) {
    /* The C file includes its constants with .incbin "NAME.blob": the
    ** assembler looks for it in the C file's directory. */
    char *c_dir = dir_name(c_file);
    if (strchr(c_dir, ',')) {
      diag_error(d, nowhere, "cannot pass the directory '%s' to the assembler: it contains a comma", c_dir);
      free(c_dir);
      goto done;
    }
    StrBuf inc = {0};
    sb_printf(&inc, "-Wa,-I%s", c_dir);
    arglist_push(&argv, sb_str(&inc));
    sb_free(&inc);
    free(c_dir);
  }
  int cpus = 1, parts = build_parts(c_file, &cpus);
  if (o->emit == EMIT_SO) {
    /* The library keeps its copy of the runtime to itself: only
    ** rlyrt_module_entry is exported, so two models never clash. */
    arglist_push(&argv, "-DRLYRT_SHARED_MODULE");
    arglist_push(&argv, "-fvisibility=hidden");
    /* with a fast linker, the link is a command of its own (run_link) */
    const char *fast = fast_linker(o, &cflags, blob);
    if ((parts > 1 || fast) && !compile_parts(o, &argv, &cflags, c_file, tmp, parts, cpus, &objs, d)) goto done;
    arglist_push(&argv, "-Wl,--exclude-libs,ALL");
    arglist_push(&argv, "-shared");
    arglist_push(&argv, "-o");
    push_path(&argv, out);
    if (parts > 1 || fast)
      for (int i = 0; i < objs.len; i++) push_path(&argv, objs.data[i]);
    else push_path(&argv, c_file);
    push_all(&argv, &cflags);
    sb_printf(&path, "%s/lib/librelayc_runtime.a", tmp);
    push_path(&argv, sb_str(&path));
    arglist_push(&argv, "-lm");
    ok = run_link(o, &argv, fast, d);
  } else if (o->emit == EMIT_OBJ && parts > 1) {
    /* the parts, then one relocatable object of them */
    if (!compile_parts(o, &argv, &cflags, c_file, tmp, parts, cpus, &objs, d)) goto done;
    ArgList ld = {0};
    arglist_push(&ld, o->cc && o->cc[0] ? o->cc : "cc");
    arglist_push(&ld, "-r");
    arglist_push(&ld, "-nostdlib");
    arglist_push(&ld, "-o");
    push_path(&ld, out);
    for (int i = 0; i < objs.len; i++) push_path(&ld, objs.data[i]);
    ok = run_tool(o, &ld, "the C compiler", d);
    arglist_free(&ld);
  } else if (o->emit == EMIT_OBJ) {
    arglist_push(&argv, "-c");
    arglist_push(&argv, "-o");
    push_path(&argv, out);
    push_path(&argv, c_file);
    push_all(&argv, &cflags);
    ok = run_tool(o, &argv, "the C compiler", d);
  } else {
    /* EMIT_A: compile, unpack the runtime's objects, archive them all. */
    sb_printf(&path, "%s/obj", tmp);
    if (mkdir(sb_str(&path), 0700) != 0) {
      diag_error(d, nowhere, "cannot create directory '%s': %s", sb_str(&path), strerror(errno));
      goto done;
    }
    const char *base = base_name(c_file);
    const char *dot = strrchr(base, '.');
    size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    if (parts > 1) {
      if (!compile_parts(o, &argv, &cflags, c_file, sb_str(&path), parts, cpus, &objs, d)) goto done;
    } else {
      sb_printf(&object, "%s/", sb_str(&path));
      sb_putn(&object, base, stem);
      sb_puts(&object, ".o");
      arglist_push(&argv, "-c");
      arglist_push(&argv, "-o");
      push_path(&argv, sb_str(&object));
      push_path(&argv, c_file);
      push_all(&argv, &cflags);
      if (!run_tool(o, &argv, "the C compiler", d)) goto done;
      arglist_push(&objs, sb_str(&object));
    }

    const RlyEmbeddedFile *lib = embedded_find("lib/librelayc_runtime.a");
    sb_clear(&path);
    sb_printf(&path, "%s/rt", tmp);
    if (!lib) {
      diag_error(d, nowhere, "relayc carries no runtime library (lib/librelayc_runtime.a)");
      goto done;
    }
    if (mkdir(sb_str(&path), 0700) != 0) {
      diag_error(d, nowhere, "cannot create directory '%s': %s", sb_str(&path), strerror(errno));
      goto done;
    }
    if (!ar_extract(lib->bytes, lib->len, sb_str(&path), &members, err, sizeof err)) {
      diag_error(d, nowhere, "%s", err);
      goto done;
    }
    /* `ar r` would add to an existing archive: start from nothing. */
    if (unlink(out) != 0 && errno != ENOENT) {
      diag_error(d, nowhere, "cannot replace '%s': %s", out, strerror(errno));
      goto done;
    }
    ArgList ar = {0};
    arglist_push(&ar, o->ar && o->ar[0] ? o->ar : "ar");
    arglist_push(&ar, "rcs");
    push_path(&ar, out);
    for (int i = 0; i < objs.len; i++) push_path(&ar, objs.data[i]);
    push_all(&ar, &members);
    ok = run_tool(o, &ar, "the archiver", d);
    arglist_free(&ar);
    if (!ok) unlink(out);
  }

  /* A static library or an object is linked into a C program: its header
  ** goes next to it. */
  if (ok && header && (o->emit == EMIT_A || o->emit == EMIT_OBJ)) {
    char *out_dir = dir_name(out);
    ok = copy_into(header, out_dir, err, sizeof err);
    if (!ok) diag_error(d, nowhere, "%s", err);
    free(out_dir);
  }

done:
  if (tmp) {
    if (!driver_rmtree(tmp, err, sizeof err))
      diag_warning(d, nowhere, "cannot remove the temporary directory '%s': %s", tmp, err);
    free(tmp);
  }
  free(header);
  free(blob);
  arglist_free(&cflags);
  arglist_free(&argv);
  arglist_free(&members);
  arglist_free(&objs);
  sb_free(&path);
  sb_free(&object);
  return ok;
}
