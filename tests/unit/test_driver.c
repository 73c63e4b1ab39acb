/* test_driver.c: the driver (src/driver): running programs without a
** shell, temporary directories, the runtime embedded in relayc, and real
** builds with the system C compiler into every kind of artifact.
**
** usage: test_driver DLPACK_HEADER RUNTIME_LIBRARY
** (run from the source tree: include/relayc/runtime.h is read from there).
** The embedded files must equal those two files and the runtime header byte
** for byte. Every build runs with TMPDIR set to a private directory, which
** must hold no relayc-* directory afterwards. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/file.h"
#include "base/strbuf.h"
#include "check.h"
#include "driver/driver.h"
#include "driver/embedded.h"
#include "relayc/runtime.h"

static char *private_tmp;  /* TMPDIR for everything the driver creates */
static char *work;         /* private_tmp/work: the test's own files */

/* dir/NAME, in a rotation of 8 static buffers: copy a result that must
** outlive the next few calls. */
static const char *path_in(const char *dir, const char *name) {
  static char bufs[8][4096];
  static int next;
  char *b = bufs[next++ % 8];
  snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
  return b;
}

static const char *wpath(const char *name) { return path_in(work, name); }

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static bool exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

/* Number of relayc-* entries in the private TMPDIR: 0 after every build. */
static int leftover_tmpdirs(void) {
  DIR *d = opendir(private_tmp);
  int n = 0;
  struct dirent *de;
  if (!d) return -1;
  while ((de = readdir(d)))
    if (strncmp(de->d_name, "relayc-", 7) == 0) n++;
  closedir(d);
  return n;
}

/* The single diagnostic of d (or "" when there is not exactly one). */
static const char *only_msg(const Diag *d) {
  return d->items.len == 1 ? d->items.data[0].msg : "";
}

static bool starts_with(const char *s, const char *prefix) {
  return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* {==== Running programs ====} */

static void test_spawn(void) {
  char err[256] = "";
  StrBuf out = {0};
  const char *t[] = {"true", NULL};
  const char *f[] = {"false", NULL};
  CHECK_EQ(driver_spawn(t, &out, err, sizeof err), 0);
  CHECK_EQ(out.len, 0);
  CHECK_EQ(driver_spawn(f, NULL, err, sizeof err), 1);

  const char *missing[] = {"relayc-no-such-program", "x", NULL};
  CHECK_EQ(driver_spawn(missing, &out, err, sizeof err), -1);
  CHECK_STR(err, "cannot run 'relayc-no-such-program': No such file or directory");
  const char *missing_path[] = {"/nonexistent/cc", NULL};
  CHECK_EQ(driver_spawn(missing_path, &out, err, sizeof err), -1);
  CHECK_STR(err, "cannot run '/nonexistent/cc': No such file or directory");

  /* Both streams, the exit status, and arguments passed as they are
  ** (no shell in between: quotes, spaces and $ reach the program). */
  const char *both[] = {"sh", "-c", "printf 'out\\n'; printf 'err\\n' >&2; printf '%s|' \"$@\"; exit 3",
                        "sh", "a b", "\"q\"", "$HOME", "", NULL};
  sb_clear(&out);
  CHECK_EQ(driver_spawn(both, &out, err, sizeof err), 3);
  CHECK_STR(sb_str(&out), "out\nerr\na b|\"q\"|$HOME||");

  /* Standard input is /dev/null: cat ends at once. */
  const char *cat[] = {"cat", NULL};
  sb_clear(&out);
  CHECK_EQ(driver_spawn(cat, &out, err, sizeof err), 0);
  CHECK_EQ(out.len, 0);

  /* 1 MiB on stdout and 1 MiB on stderr: far more than a pipe holds. */
  const char *big[] = {"sh", "-c",
                       "i=0; while [ $i -lt 16384 ]; do echo "
                       "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"; "
                       "echo \"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\" >&2; "
                       "i=$((i+1)); done",
                       NULL};
  sb_clear(&out);
  CHECK_EQ(driver_spawn(big, &out, err, sizeof err), 0);
  CHECK_EQ(out.len, 2 * 16384 * 64);
  size_t as = 0, bs = 0;
  for (size_t i = 0; i < out.len; i++) {
    as += out.data[i] == 'a';
    bs += out.data[i] == 'b';
  }
  CHECK_EQ(as, 16384 * 63);
  CHECK_EQ(bs, 16384 * 63);
  /* The same amount, discarded. */
  CHECK_EQ(driver_spawn(big, NULL, err, sizeof err), 0);

  /* Killed by a signal: 128 + N. */
  const char *killed[] = {"sh", "-c", "kill -9 $$", NULL};
  CHECK_EQ(driver_spawn(killed, NULL, err, sizeof err), 128 + 9);
  sb_free(&out);
}

static void test_split_args(void) {
  char err[256] = "";
  ArgList l = {0};
  CHECK(driver_split_args(NULL, &l, err, sizeof err));
  CHECK(driver_split_args("  \t ", &l, err, sizeof err));
  CHECK_EQ(l.len, 0);
  CHECK(driver_split_args(" -O3  -DX=1\t'-DY=a b' \"-DZ=\\\"q\\\" \\\\\" a\\ b '' -DW='\"s t\"'x", &l, err,
                          sizeof err));
  CHECK_EQ(l.len, 7);
  if (l.len == 7) {
    CHECK_STR(l.data[0], "-O3");
    CHECK_STR(l.data[1], "-DX=1");
    CHECK_STR(l.data[2], "-DY=a b");
    CHECK_STR(l.data[3], "-DZ=\"q\" \\");
    CHECK_STR(l.data[4], "a b");
    CHECK_STR(l.data[5], "");
    CHECK_STR(l.data[6], "-DW=\"s t\"x");
  }
  arglist_free(&l);
  CHECK(!driver_split_args("-DX='abc", &l, err, sizeof err));
  CHECK_STR(err, "unterminated ' quote in \"-DX='abc\"");
  arglist_free(&l);
  CHECK(!driver_split_args("a \"b", &l, err, sizeof err));
  CHECK_STR(err, "unterminated \" quote in \"a \"b\"");
  arglist_free(&l);
  CHECK(!driver_split_args("a\\", &l, err, sizeof err));
  arglist_free(&l);
}

static void test_emit_kinds(void) {
  EmitKind k = EMIT_C;
  CHECK(driver_emit_parse("so", &k) && k == EMIT_SO);
  CHECK(driver_emit_parse("a", &k) && k == EMIT_A);
  CHECK(driver_emit_parse("obj", &k) && k == EMIT_OBJ);
  CHECK(driver_emit_parse("c", &k) && k == EMIT_C);
  CHECK(!driver_emit_parse("exe", &k));
  CHECK(driver_emit_from_path("out/libm.so", &k) && k == EMIT_SO);
  CHECK(driver_emit_from_path("m.a", &k) && k == EMIT_A);
  CHECK(driver_emit_from_path("dir.x/m.o", &k) && k == EMIT_OBJ);
  CHECK(driver_emit_from_path("m.c", &k) && k == EMIT_C);
  CHECK(!driver_emit_from_path("m.so.1", &k));
  CHECK(!driver_emit_from_path("dir.so/m", &k));
  CHECK(!driver_emit_from_path(".so", &k));
  CHECK_STR(driver_emit_name(EMIT_OBJ), "obj");
}

/* {==== Temporary directories ====} */

static void test_tmpdir(void) {
  char err[512] = "";
  char *dir = driver_tmpdir_new(err, sizeof err);
  CHECK(dir != NULL);
  if (!dir) return;
  CHECK(starts_with(dir, path_in(private_tmp, "relayc-")));
  struct stat st;
  CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
  CHECK_EQ(leftover_tmpdirs(), 1);

  /* Nested files, an empty directory, and links that point out of the
  ** tree: removal takes the links, never what they point to. */
  CHECK(driver_mkdirs(path_in(dir, "a/b/c"), err, sizeof err));
  CHECK(driver_mkdirs(path_in(dir, "a/b/c"), err, sizeof err));  /* exists: fine */
  CHECK(driver_mkdirs(path_in(dir, "empty"), err, sizeof err));
  write_text(path_in(dir, "top.txt"), "top\n");
  write_text(path_in(dir, "a/b/c/deep.txt"), "deep\n");
  write_text(path_in(dir, "a/mid.txt"), "mid\n");
  CHECK(driver_mkdirs(wpath("outside/sub"), err, sizeof err));
  write_text(wpath("outside/keep.txt"), "keep\n");
  write_text(wpath("outside/sub/keep2.txt"), "keep\n");
  CHECK(symlink(wpath("outside"), path_in(dir, "a/link_to_dir")) == 0);
  CHECK(symlink(wpath("outside/keep.txt"), path_in(dir, "a/b/link_to_file")) == 0);
  CHECK(symlink("/nonexistent", path_in(dir, "dangling")) == 0);
  CHECK(driver_rmtree(dir, err, sizeof err));
  CHECK(!exists(dir));
  CHECK(exists(wpath("outside/keep.txt")));
  CHECK(exists(wpath("outside/sub/keep2.txt")));
  CHECK_EQ(leftover_tmpdirs(), 0);

  /* A link to a directory is not removed through. */
  CHECK(symlink(wpath("outside"), path_in(private_tmp, "relayc-link")) == 0);
  CHECK(!driver_rmtree(path_in(private_tmp, "relayc-link"), err, sizeof err));
  CHECK(exists(wpath("outside/keep.txt")));
  CHECK(unlink(path_in(private_tmp, "relayc-link")) == 0);
  CHECK(!driver_rmtree(path_in(private_tmp, "relayc-missing"), err, sizeof err));
  free(dir);

  /* mkdirs over a file is an error. */
  CHECK(!driver_mkdirs(wpath("outside/keep.txt/x"), err, sizeof err));
  CHECK(!driver_mkdirs(wpath("outside/keep.txt"), err, sizeof err));
}

/* {==== The embedded runtime ====} */

static const RlyEmbeddedFile *embedded(const char *path) {
  for (const RlyEmbeddedFile *f = rly_embedded_files; f->path; f++)
    if (strcmp(f->path, path) == 0) return f;
  return NULL;
}

/* The file at path equals the embedded file name, byte for byte. */
static void check_same(const char *name, const char *path) {
  char err[512];
  size_t len = 0;
  const RlyEmbeddedFile *f = embedded(name);
  char *bytes = file_read_all(path, &len, err, sizeof err);
  CHECK(f != NULL);
  CHECK(bytes != NULL);
  if (f && bytes) {
    CHECK_EQ(f->len, len);
    CHECK(f->len == len && memcmp(f->bytes, bytes, len) == 0);
  }
  if (!bytes) fprintf(stderr, "  %s\n", err);
  free(bytes);
}

static void test_embedded(const char *dlpack, const char *runtime_lib) {
  int n = 0;
  for (const RlyEmbeddedFile *f = rly_embedded_files; f->path; f++) n++;
  CHECK_EQ(n, 3);
  check_same("include/relayc/runtime.h", "include/relayc/runtime.h");
  check_same("include/dlpack/dlpack.h", dlpack);
  check_same("lib/librelayc_runtime.a", runtime_lib);
  const RlyEmbeddedFile *lib = embedded("lib/librelayc_runtime.a");
  CHECK(lib && lib->len > 8 && memcmp(lib->bytes, "!<arch>\n", 8) == 0);

  char err[512] = "";
  char *dir = driver_tmpdir_new(err, sizeof err);
  CHECK(dir != NULL);
  if (!dir) return;
  CHECK(driver_write_runtime(dir, err, sizeof err));
  check_same("include/relayc/runtime.h", path_in(dir, "include/relayc/runtime.h"));
  check_same("include/dlpack/dlpack.h", path_in(dir, "include/dlpack/dlpack.h"));
  check_same("lib/librelayc_runtime.a", path_in(dir, "lib/librelayc_runtime.a"));
  CHECK(driver_write_runtime(dir, err, sizeof err));  /* again: replaces */
  check_same("lib/librelayc_runtime.a", path_in(dir, "lib/librelayc_runtime.a"));
  CHECK(driver_rmtree(dir, err, sizeof err));
  free(dir);
  CHECK_EQ(leftover_tmpdirs(), 0);
}

/* {==== Building ====} */

/* Uses the runtime (a tensor, the kernel table) so linking it matters.
** Shared libraries are built with -fvisibility=hidden: what a test looks
** up with dlsym is marked visible, as generated code marks its entry. */
static const char model_c[] =
    "#include <relayc/runtime.h>\n"
    "#include \"model.h\"\n"
    "\n"
    "__attribute__((visibility(\"default\"))) long model_numel(void) {\n"
    "  int64_t shape[2] = {2, 3};\n"
    "  rlyrt_tensor *t = rlyrt_tensor_new((DLDataType){kDLFloat, 32, 1}, 2, shape, true);\n"
    "  if (!t) return -1;\n"
    "  long n = (long)rlyrt_tensor_numel(t);\n"
    "  rlyrt_release(&t->obj);\n"
    "  return rlyrt_kernel_lookup(\"add\") ? n + 100 : n;\n"
    "}\n";
static const char model_h[] = "long model_numel(void);\n";
static const char main_c[] =
    "#include <stdio.h>\n"
    "#include \"model.h\"\n"
    "int main(void) {\n"
    "  long n = model_numel();\n"
    "  printf(\"%ld\\n\", n);\n"
    "  return n == 106 ? 0 : 1;\n"
    "}\n";

/* Builds c_file into out; expects success with no diagnostic at all
** (the generated-code warning flags must stay quiet on clean code). */
static bool build_ok(const BuildOptions *o, const char *c_file, const char *out) {
  Diag d;
  diag_init(&d, NULL);
  bool ok = driver_build(o, c_file, out, &d);
  CHECK(ok);
  CHECK_EQ(d.items.len, 0);
  if (d.items.len) diag_print(&d, stderr);
  diag_free(&d);
  CHECK_EQ(leftover_tmpdirs(), 0);
  return ok;
}

/* Runs argv and expects exit status 0; prints the output otherwise. */
static void run_ok(const char *const argv[], const char *expect_output) {
  char err[512] = "";
  StrBuf out = {0};
  int status = driver_spawn(argv, &out, err, sizeof err);
  CHECK_EQ(status, 0);
  if (status != 0) fprintf(stderr, "  %s%s\n", err, sb_str(&out));
  if (expect_output) CHECK_STR(sb_str(&out), expect_output);
  sb_free(&out);
}

static void test_build_so(void) {
  BuildOptions o;
  driver_options_init(&o);
  StrBuf cmds = {0};
  o.commands = &cmds;
  if (!build_ok(&o, wpath("model.c"), wpath("libmodel.so"))) return;
  CHECK(strstr(sb_str(&cmds), " -shared ") != NULL);
  CHECK(strstr(sb_str(&cmds), " -fvisibility=hidden ") != NULL);
  CHECK(strstr(sb_str(&cmds), " -DRLYRT_SHARED_MODULE ") != NULL);
  CHECK(strstr(sb_str(&cmds), " -std=c11 -Wall -Wextra -Wno-misleading-indentation -O2 -fPIC ") != NULL);
  CHECK(strstr(sb_str(&cmds), "-Werror") == NULL);
  sb_free(&cmds);
  void *h = dlopen(wpath("libmodel.so"), RTLD_NOW | RTLD_LOCAL);
  CHECK(h != NULL);
  if (!h) {
    fprintf(stderr, "  dlopen: %s\n", dlerror());
    return;
  }
  long (*fn)(void);
  *(void **)&fn = dlsym(h, "model_numel");
  CHECK(fn != NULL);
  if (fn) CHECK_EQ(fn(), 106);
  dlclose(h);
}

static void test_build_a(void) {
  BuildOptions o;
  driver_options_init(&o);
  o.emit = EMIT_A;
  o.opt_level = 1;
  if (!build_ok(&o, wpath("model.c"), wpath("libmodel.a"))) return;
  /* The archive holds the generated object and the runtime's objects. */
  char err[512] = "";
  StrBuf out = {0};
  const char *list[] = {"ar", "t", wpath("libmodel.a"), NULL};
  CHECK_EQ(driver_spawn(list, &out, err, sizeof err), 0);
  CHECK(strncmp(sb_str(&out), "model.o\nrlyrt_00_", 17) == 0);
  int members = 0;
  for (size_t i = 0; i < out.len; i++) members += out.data[i] == '\n';
  CHECK(members > 2);
  /* Building again replaces the archive rather than adding to it. */
  if (build_ok(&o, wpath("model.c"), wpath("libmodel.a"))) {
    StrBuf again = {0};
    CHECK_EQ(driver_spawn(list, &again, err, sizeof err), 0);
    CHECK_STR(sb_str(&again), sb_str(&out));
    sb_free(&again);
  }
  sb_free(&out);
  /* One library is all a program needs (and libm). */
  const char *link[] = {"cc", "-o", wpath("prog_a"), "-I", work, wpath("main.c"), wpath("libmodel.a"), "-lm", NULL};
  run_ok(link, "");
  const char *prog[] = {wpath("prog_a"), NULL};
  run_ok(prog, "106\n");
}

static void test_build_obj(void) {
  BuildOptions o;
  driver_options_init(&o);
  o.emit = EMIT_OBJ;
  o.opt_level = 0;
  if (!build_ok(&o, wpath("model.c"), wpath("model.o"))) return;
  /* The object alone needs the runtime library: take it from relayc. */
  char err[512] = "";
  CHECK(driver_write_runtime(wpath("rt"), err, sizeof err));
  const char *link[] = {"cc",          "-o", wpath("prog_o"), "-I", work, wpath("main.c"), wpath("model.o"),
                        wpath("rt/lib/librelayc_runtime.a"), "-lm", NULL};
  run_ok(link, "");
  const char *prog[] = {wpath("prog_o"), NULL};
  run_ok(prog, "106\n");
}

static void test_build_c(void) {
  BuildOptions o;
  driver_options_init(&o);
  o.emit = EMIT_C;
  char kept_dir[4096], err[512] = "";
  snprintf(kept_dir, sizeof kept_dir, "%s", wpath("kept/deeper"));
  o.keep_source = kept_dir;
  CHECK(driver_mkdirs(wpath("copy"), err, sizeof err));
  if (!build_ok(&o, wpath("model.c"), wpath("copy/copied.c"))) return;
  size_t a = 0, b = 0, c = 0;
  char *copied = file_read_all(wpath("copy/copied.c"), &a, err, sizeof err);
  char *header = file_read_all(wpath("copy/model.h"), &b, err, sizeof err);
  char *kept = file_read_all(wpath("kept/deeper/model.c"), &c, err, sizeof err);
  CHECK_STR(copied, model_c);
  CHECK_STR(header, model_h);
  CHECK_STR(kept, model_c);
  CHECK(exists(wpath("kept/deeper/model.h")));
  free(copied);
  free(header);
  free(kept);
  /* Copying a file onto itself leaves it intact. */
  if (build_ok(&o, wpath("copy/copied.c"), wpath("copy/copied.c"))) {
    copied = file_read_all(wpath("copy/copied.c"), &a, err, sizeof err);
    CHECK_STR(copied, model_c);
    free(copied);
  }
}

static void test_build_errors(void) {
  BuildOptions o;
  Diag d;

  /* The C compiler's own message, verbatim. */
  write_text(wpath("bad.c"), "int broken(void) { return }\n");
  driver_options_init(&o);
  diag_init(&d, NULL);
  CHECK(!driver_build(&o, wpath("bad.c"), wpath("bad.so"), &d));
  CHECK_EQ(d.nerrors, 1);
  const char *msg = only_msg(&d);
  CHECK(starts_with(msg, "the C compiler failed with exit status 1:\n"));
  CHECK(strstr(msg, "bad.c:1:") != NULL);
  CHECK(msg[0] && msg[strlen(msg) - 1] != '\n');
  CHECK(!exists(wpath("bad.so")));
  diag_free(&d);
  CHECK_EQ(leftover_tmpdirs(), 0);

  /* Each kind fails cleanly, and keep_source still keeps the source. */
  EmitKind kinds[] = {EMIT_A, EMIT_OBJ};
  for (int i = 0; i < 2; i++) {
    driver_options_init(&o);
    o.emit = kinds[i];
    char kept_dir[4096];
    snprintf(kept_dir, sizeof kept_dir, "%s", wpath("kept_bad"));
    o.keep_source = kept_dir;
    diag_init(&d, NULL);
    CHECK(!driver_build(&o, wpath("bad.c"), wpath("bad.out"), &d));
    CHECK(starts_with(only_msg(&d), "the C compiler failed with exit status 1:\n"));
    CHECK(!exists(wpath("bad.out")));
    CHECK(exists(wpath("kept_bad/bad.c")));
    diag_free(&d);
    CHECK_EQ(leftover_tmpdirs(), 0);
  }

  /* A C compiler that does not exist. */
  driver_options_init(&o);
  o.cc = "relayc-no-such-cc";
  diag_init(&d, NULL);
  CHECK(!driver_build(&o, wpath("model.c"), wpath("never.so"), &d));
  CHECK_STR(only_msg(&d), "cannot run 'relayc-no-such-cc': No such file or directory");
  diag_free(&d);
  CHECK_EQ(leftover_tmpdirs(), 0);

  /* An archiver that does not exist: no half-made archive is left. */
  driver_options_init(&o);
  o.emit = EMIT_A;
  o.ar = "relayc-no-such-ar";
  diag_init(&d, NULL);
  CHECK(!driver_build(&o, wpath("model.c"), wpath("never.a"), &d));
  CHECK_STR(only_msg(&d), "cannot run 'relayc-no-such-ar': No such file or directory");
  CHECK(!exists(wpath("never.a")));
  diag_free(&d);
  CHECK_EQ(leftover_tmpdirs(), 0);

  /* Bad options. */
  driver_options_init(&o);
  o.cflags = "-DX='y";
  diag_init(&d, NULL);
  CHECK(!driver_build(&o, wpath("model.c"), wpath("never.so"), &d));
  CHECK_STR(only_msg(&d), "C compiler flags: unterminated ' quote in \"-DX='y\"");
  diag_free(&d);
  driver_options_init(&o);
  o.opt_level = 5;
  diag_init(&d, NULL);
  CHECK(!driver_build(&o, wpath("model.c"), wpath("never.so"), &d));
  CHECK_STR(only_msg(&d), "the optimisation level must be 0 to 3, or -Os, not 5");
  diag_free(&d);
  /* A missing C file: the compiler says so. */
  driver_options_init(&o);
  diag_init(&d, NULL);
  CHECK(!driver_build(&o, wpath("missing.c"), wpath("never.so"), &d));
  CHECK(starts_with(only_msg(&d), "the C compiler failed with exit status"));
  CHECK(strstr(only_msg(&d), "missing.c") != NULL);
  diag_free(&d);
  /* Copy of a missing file (EMIT_C). */
  driver_options_init(&o);
  o.emit = EMIT_C;
  diag_init(&d, NULL);
  CHECK(!driver_build(&o, wpath("missing.c"), wpath("never.c"), &d));
  CHECK(starts_with(only_msg(&d), "cannot open '"));
  diag_free(&d);
  CHECK_EQ(leftover_tmpdirs(), 0);
}

/* Extra flags with quotes reach the compiler as single words; the
** compiler's warnings on success come back as a warning. */
static void test_build_cflags(void) {
  write_text(wpath("flags.c"),
             "#if ANSWER != 42\n"
             "#error ANSWER\n"
             "#endif\n"
             "static const char greeting[] = GREETING;\n"
             "int flags_len(void);\n"
             "__attribute__((visibility(\"default\"))) int flags_len(void) { return (int)sizeof greeting - 1; }\n");
  BuildOptions o;
  driver_options_init(&o);
  o.cflags = " -DGREETING='\"hi there\"'  \"-DANSWER=42\" -O3 ";
  o.opt_level = 0;
  StrBuf cmds = {0};
  o.commands = &cmds;
  if (build_ok(&o, wpath("flags.c"), wpath("libflags.so"))) {
    CHECK(strstr(sb_str(&cmds), " '-DGREETING=\"hi there\"' -DANSWER=42 -O3 ") != NULL);
    void *h = dlopen(wpath("libflags.so"), RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL);
    if (h) {
      int (*fn)(void);
      *(void **)&fn = dlsym(h, "flags_len");
      CHECK(fn != NULL);
      if (fn) CHECK_EQ(fn(), 8);
      dlclose(h);
    }
  }
  sb_free(&cmds);

  write_text(wpath("warn.c"), "int warn(int x);\nint warn(int x) { int unused; return x; }\n");
  Diag d;
  diag_init(&d, NULL);
  driver_options_init(&o);
  o.emit = EMIT_OBJ;
  CHECK(driver_build(&o, wpath("warn.c"), wpath("warn.o"), &d));
  CHECK_EQ(d.nerrors, 0);
  CHECK_EQ(d.items.len, 1);
  if (d.items.len == 1) {
    CHECK_EQ(d.items.data[0].level, DIAG_WARNING);
    CHECK(starts_with(d.items.data[0].msg, "the C compiler printed:\n"));
    CHECK(strstr(d.items.data[0].msg, "unused") != NULL);
  }
  diag_free(&d);
  CHECK_EQ(leftover_tmpdirs(), 0);
}

/* {==== What a build is for, where the time went (report.c) ====} */

/* The profile table: kernels that ran, most expensive first, with their
** means, fastest calls and shares; the control flow is the rest of the whole time. */
static void test_print_profile(void) {
  rlyrt_kernel_record k0 = {"K0", "add", "(2, 3)", "elementwise chain", 4, 2000000, 400000};
  rlyrt_kernel_record k1 = {"K1", "nn.dense, nn.bias_add", "(1, 16)", "GEMV float32", 2, 5000000, 2250000};
  rlyrt_kernel_record k2 = {"K2", "split", "(1, 8) x4", "reference", 0, 0, 0}; /* never ran: no row */
  rlyrt_kernel_record *recs[] = {&k0, &k1, &k2};
  rlyrt_module_build b = {sizeof b, "0.1.0", "", "", "", 1, 3, recs};
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  driver_print_profile(f, &b, 10.0, 2);
  fclose(f);
  /* Checked by content rather than spacing: the order, the numbers. */
  CHECK(text && strncmp(text, "profile: 2 runs, 10.000 ms in all, 7.000 ms in 2 kernels\n", 57) == 0);
  const char *r1 = text ? strstr(text, "\nK1 ") : NULL, *r0 = text ? strstr(text, "\nK0 ") : NULL;
  CHECK(r1 && r0 && r1 < r0);
  CHECK(text && !strstr(text, "K2"));
  CHECK(r1 && strstr(r1, "nn.dense, nn.bias_add") && strstr(r1, "GEMV float32"));
  CHECK(text && strstr(text, "       2       5.000    2500.000    2250.000   50.0%\n"));
  CHECK(text && strstr(text, "       4       2.000     500.000     400.000   20.0%\n"));
  const char *cf = text ? strstr(text, "\n-       control flow between kernels ") : NULL;
  CHECK(cf && strstr(cf, "       3.000                           30.0%\n"));
  CHECK(cf && strstr(cf, "\n        total ") && strstr(cf, "      10.000                          100.0%\n"));
  free(text);
  /* Kernel time above the whole (clock noise): the control flow is 0. */
  text = NULL;
  f = open_memstream(&text, &len);
  driver_print_profile(f, &b, 6.0, 1);
  fclose(f);
  CHECK(text && strstr(text, "profile: 1 run, 6.000 ms in all"));
  CHECK(text && strstr(text, "       0.000                            0.0%\n"));
  free(text);
}

/* The CPU check of native modules, and the extensions of -march=native. */
static void test_cpu_check(void) {
  unsetenv("RLYRT_CPU_DISABLE");
  CHECK_EQ(rlyrt_cpu_check("", "m"), RLYRT_OK);
  CHECK_EQ(rlyrt_cpu_check(NULL, "m"), RLYRT_OK);
#if defined(__x86_64__)
  /* Every x86-64 CPU has SSE2. */
  CHECK_EQ(rlyrt_cpu_check(" sse2 ", "m"), RLYRT_OK);
  setenv("RLYRT_CPU_DISABLE", "avx512f,sse2", 1);
  CHECK_EQ(rlyrt_cpu_check("sse sse2 ", "the module m"), RLYRT_E_UNSUPPORTED);
  CHECK_STR(rlyrt_last_error(), "the module m was built for CPUs with sse sse2 (--target native); this CPU lacks "
                                "sse2: rebuild it without --target native, or on this machine");
  unsetenv("RLYRT_CPU_DISABLE");
  StrBuf isa = {0};
  if (driver_native_isa("cc", NULL, &isa)) {
    CHECK(strstr(sb_str(&isa), "sse3") != NULL);
    /* The compiler's own answer matches this CPU. */
    CHECK_EQ(rlyrt_cpu_check(sb_str(&isa), "m"), RLYRT_OK);
    /* The user's flags count: without AVX there is no AVX2 either. */
    StrBuf no_avx = {0};
    CHECK(driver_native_isa("cc", "-mno-avx", &no_avx));
    CHECK(strstr(sb_str(&no_avx), "avx") == NULL);
    sb_free(&no_avx);
  }
  sb_free(&isa);
#endif
  CHECK_EQ(rlyrt_cpu_check("nosuchextension", "m"), RLYRT_E_UNSUPPORTED);
  CHECK(strstr(rlyrt_last_error(), "this CPU lacks nosuchextension") != NULL);
  StrBuf none = {0};
  CHECK(!driver_native_isa("/nonexistent/cc", NULL, &none));
  CHECK_EQ(none.len, 0);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_driver DLPACK_HEADER RUNTIME_LIBRARY\n");
    return 2;
  }
  const char *base = getenv("TMPDIR");
  char tmpl[4096];
  snprintf(tmpl, sizeof tmpl, "%s/test_driver-XXXXXX", base && base[0] ? base : "/tmp");
  private_tmp = mkdtemp(tmpl);
  if (!private_tmp) {
    fprintf(stderr, "test_driver: cannot create %s: %s\n", tmpl, strerror(errno));
    return 1;
  }
  setenv("TMPDIR", private_tmp, 1);
  work = strdup(path_in(private_tmp, "work"));
  mkdir(work, 0700);
  write_text(wpath("model.c"), model_c);
  write_text(wpath("model.h"), model_h);
  write_text(wpath("main.c"), main_c);

  test_spawn();
  test_split_args();
  test_emit_kinds();
  test_tmpdir();
  test_embedded(argv[1], argv[2]);
  test_build_so();
  test_build_a();
  test_build_obj();
  test_build_c();
  test_build_errors();
  test_build_cflags();
  test_print_profile();
  test_cpu_check();

  CHECK_EQ(leftover_tmpdirs(), 0);
  char err[512] = "";
  CHECK(driver_rmtree(private_tmp, err, sizeof err));
  free(work);
  return check_report("test_driver");
}
