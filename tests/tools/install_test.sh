#!/bin/sh
# install_test.sh BUILD [CMAKE [CC [BINDIR [LIBDIR [INCLUDEDIR]]]]]: installs
# the build tree BUILD (cmake --install) into a temporary prefix and uses it
# from an unrelated directory, as another C project would:
#   - relayc --version;
#   - a C program on the runtime (tensors, printing, .npy), built with
#     pkg-config and with a CMake project (find_package(relayc CONFIG));
#   - a shared library that links the static runtime (it is position
#     independent);
#   - the same after moving the prefix elsewhere (nothing refers to the
#     place it was installed at);
#   - once `relayc build` exists: a model built by the installed relayc,
#     loaded as a .so and linked as a .a.
# BINDIR, LIBDIR and INCLUDEDIR are the build's CMAKE_INSTALL_* directories
# (default bin, lib, include). Outputs are compared with exact expected text.
# pkg-config is required (scripts/deps.sh installs it): without it the test
# fails.
set -eu

[ $# -ge 1 ] || { echo "usage: install_test.sh BUILD [CMAKE [CC [BINDIR [LIBDIR [INCLUDEDIR]]]]]" >&2; exit 2; }
build=$(cd "$1" && pwd)
cmake=${2:-cmake}
cc=${3:-cc}
bindir=${4:-bin}
libdir=${5:-lib}
incdir=${6:-include}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
# Nothing from the environment may redirect the install or the compilers.
unset DESTDIR CPATH C_INCLUDE_PATH LIBRARY_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR CFLAGS LDFLAGS

checks=0
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
ok() {
  checks=$((checks + 1))
  echo "ok: $*"
}
# run LOG CMD...: runs CMD with its output in LOG; on failure shows it and fails.
run() {
  log=$1
  shift
  "$@" >"$log" 2>&1 || {
    status=$?
    sed 's/^/  /' "$log" >&2
    fail "$* (exit status $status)"
  }
}
# same WHAT EXPECTED GOT: the files are identical, or a diff and a failure.
same() {
  if ! diff -u "$2" "$3" >&2; then
    fail "$1: output differs from the expected text (diff above: - expected, + got)"
  fi
  ok "$1"
}

command -v pkg-config >/dev/null 2>&1 ||
  fail "pkg-config not found: scripts/deps.sh installs it (Debian package pkgconf)"

# {==== Install ====}
prefix=$tmp/prefix
run "$tmp/install.log" "$cmake" --install "$build" --prefix "$prefix"
(cd "$prefix" && find . -type f | sort | grep -v '^\./'"$incdir"'/relayc/') >"$tmp/files"
cat >"$tmp/files.expected" <<EOF
./$bindir/relayc
./$incdir/dlpack/dlpack.h
./$libdir/cmake/relayc/relaycConfig.cmake
./$libdir/cmake/relayc/relaycConfigVersion.cmake
./$libdir/librelayc_runtime.a
./$libdir/pkgconfig/relayc-runtime.pc
EOF
sort "$tmp/files.expected" -o "$tmp/files.expected"
same "installed files" "$tmp/files.expected" "$tmp/files"
[ -f "$prefix/$incdir/relayc/runtime.h" ] || fail "$incdir/relayc/runtime.h not installed"
[ -x "$prefix/$bindir/relayc" ] || fail "$bindir/relayc not executable"
# No installed text file names the prefix or the build tree.
if grep -rlF -e "$prefix" -e "$build" "$prefix/$libdir/pkgconfig" "$prefix/$libdir/cmake" >"$tmp/abs"; then
  cat "$tmp/abs" >&2
  fail "installed package files contain absolute paths"
fi
ok "package files hold no absolute path"

mkdir "$tmp/work"
cd "$tmp/work"

# {==== The programs ====}
cat >app.c <<'EOF'
/* A program on the installed runtime: a tensor, printed, saved and read back. */
#include <relayc/runtime.h>
#include <stdio.h>
#include <string.h>

static void describe(const rlyrt_tensor *t) {
  char buf[32];
  printf("%s (", rlyrt_dtype_name(t->dl.dtype, buf));
  for (int32_t i = 0; i < t->dl.ndim; i++) printf("%s%lld", i ? ", " : "", (long long)t->dl.shape[i]);
  printf(") %lld elements\n", (long long)rlyrt_tensor_numel(t));
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: app FILE.npy\n");
    return 2;
  }
  DLDataType f32 = {kDLFloat, 32, 1};
  int64_t shape[2] = {2, 3};
  rlyrt_tensor *t = rlyrt_tensor_new(f32, 2, shape, false);
  if (!t) {
    fprintf(stderr, "rlyrt_tensor_new: %s\n", rlyrt_last_error());
    return 1;
  }
  for (int64_t i = 0; i < 6; i++) rlyrt_set_f64(t, i, 0.5 * (double)i);
  describe(t);
  rlyrt_value_print(stdout, &t->obj);
  printf("\n");
  rlyrt_status s = rlyrt_npy_save(argv[1], t);
  if (s != RLYRT_OK) {
    fprintf(stderr, "rlyrt_npy_save: %s\n", rlyrt_last_error());
    return 1;
  }
  rlyrt_tensor *u = NULL;
  s = rlyrt_npy_load(argv[1], &u);
  if (s != RLYRT_OK) {
    fprintf(stderr, "rlyrt_npy_load: %s\n", rlyrt_last_error());
    return 1;
  }
  printf("read back: ");
  describe(u);
  rlyrt_value_print(stdout, &u->obj);
  printf("\nsame data: %s\n", memcmp(t->dl.data, u->dl.data, rlyrt_tensor_nbytes(t)) == 0 ? "yes" : "no");
  rlyrt_tensor *v = NULL;
  s = rlyrt_npy_load("no-such-file.npy", &v);
  printf("missing file: %s\n", rlyrt_status_name(s));
  rlyrt_release(&u->obj);
  rlyrt_release(&t->obj);
  return 0;
}
EOF
cat >"$tmp/app.expected" <<'EOF'
float32 (2, 3) 6 elements
[[0.  0.5 1. ]
 [1.5 2.  2.5]]
read back: float32 (2, 3) 6 elements
[[0.  0.5 1. ]
 [1.5 2.  2.5]]
same data: yes
missing file: RLYRT_E_IO
EOF

# A shared library that links the static runtime, and a program using it.
cat >user.c <<'EOF'
#include <relayc/runtime.h>

double user_sum(void);
double user_sum(void) {
  DLDataType f64 = {kDLFloat, 64, 1};
  int64_t n = 4;
  rlyrt_tensor *t = rlyrt_tensor_new(f64, 1, &n, false);
  if (!t) return -1;
  double sum = 0;
  for (int64_t i = 0; i < n; i++) rlyrt_set_f64(t, i, (double)(i + 1));
  for (int64_t i = 0; i < n; i++) sum += rlyrt_get_f64(t, i);
  rlyrt_release(&t->obj);
  return sum;
}
EOF
cat >useapp.c <<'EOF'
#include <stdio.h>
double user_sum(void);
int main(void) {
  printf("sum %g\n", user_sum());
  return 0;
}
EOF

# The C compiler, strict: warnings in the installed headers fail the test.
ccs() {
  "$cc" -std=c11 -Wall -Wextra -Werror "$@"
}

# pkg_config_checks PREFIX: builds and runs the programs with pkg-config.
pkg_config_checks() {
  p=$1
  PKG_CONFIG_PATH=$p/$libdir/pkgconfig
  export PKG_CONFIG_PATH
  run "$tmp/pc.log" pkg-config --exists --print-errors relayc-runtime
  # The headers come from the prefix, DLPack's included.
  # shellcheck disable=SC2046 # pkg-config's output is meant to be split
  "$cc" -M app.c $(pkg-config --cflags relayc-runtime) | tr ' ' '\n' | grep -E '/(relayc/runtime|dlpack/dlpack)\.h$' |
    sed "s|^$p/.*/\(.*/.*\)|PREFIX/\1|" | sort >"$tmp/headers"
  printf 'PREFIX/dlpack/dlpack.h\nPREFIX/relayc/runtime.h\n' >"$tmp/headers.expected"
  same "headers from $p" "$tmp/headers.expected" "$tmp/headers"
  rm -f app x.npy
  # shellcheck disable=SC2046
  run "$tmp/cc.log" ccs -o app app.c $(pkg-config --cflags --libs relayc-runtime)
  ./app x.npy >"$tmp/app.out"
  same "pkg-config program" "$tmp/app.expected" "$tmp/app.out"
  [ "$(dd if=x.npy bs=1 skip=1 count=5 2>/dev/null)" = NUMPY ] || fail "x.npy is not a .npy file"
  rm -f libuser.so useapp
  # shellcheck disable=SC2046
  run "$tmp/cc.log" ccs -shared -fPIC -o libuser.so user.c $(pkg-config --cflags --libs relayc-runtime)
  run "$tmp/cc.log" ccs -o useapp useapp.c -L. -luser "-Wl,-rpath,$tmp/work"
  ./useapp >"$tmp/useapp.out"
  echo "sum 10" >"$tmp/useapp.expected"
  same "shared library linking the runtime" "$tmp/useapp.expected" "$tmp/useapp.out"
}

# cmake_checks PREFIX DIR: a CMake project in DIR that finds the package in
# PREFIX and builds app.c against relayc::runtime.
cmake_checks() {
  p=$1 dir=$2
  mkdir "$dir"
  cp app.c "$dir/"
  cat >"$dir/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(relayc REQUIRED CONFIG)
add_executable(app app.c)
set_target_properties(app PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON)
target_compile_options(app PRIVATE -Wall -Wextra -Werror)
target_link_libraries(app PRIVATE relayc::runtime)
get_target_property(relayc_exe relayc::relayc IMPORTED_LOCATION)
execute_process(COMMAND ${relayc_exe} --version OUTPUT_VARIABLE relayc_says RESULT_VARIABLE rc)
file(WRITE ${CMAKE_BINARY_DIR}/found.txt
     "version ${relayc_VERSION}\nconfig ${relayc_DIR}\nrelayc ${relayc_exe}\nrelayc --version: ${rc} ${relayc_says}")
EOF
  run "$tmp/cmake.log" "$cmake" -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_C_COMPILER=$cc" "-DCMAKE_PREFIX_PATH=$p"
  run "$tmp/cmake.log" "$cmake" --build "$dir/build"
  cat >"$tmp/found.expected" <<EOF
version $version
config $p/$libdir/cmake/relayc
relayc $p/$bindir/relayc
relayc --version: 0 relayc $version
EOF
  same "find_package(relayc) in $p" "$tmp/found.expected" "$dir/build/found.txt"
  "$dir/build/app" x.npy >"$tmp/app.out"
  same "CMake program" "$tmp/app.expected" "$tmp/app.out"
}

# relayc_checks PREFIX: the installed compiler runs and says its version,
# the one of the package files.
relayc_checks() {
  p=$1
  "$p/$bindir/relayc" --version >"$tmp/version.out" || fail "$p/$bindir/relayc --version failed"
  version=$(PKG_CONFIG_PATH=$p/$libdir/pkgconfig pkg-config --modversion relayc-runtime)
  echo "$version" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$' || fail "pkg-config --modversion: '$version'"
  echo "relayc $version" >"$tmp/version.expected"
  same "relayc --version from $p" "$tmp/version.expected" "$tmp/version.out"
}

relayc_checks "$prefix"
pkg_config_checks "$prefix"
cmake_checks "$prefix" "$tmp/consumer1"

# {==== Relocation ====}
mkdir "$tmp/elsewhere"
mv "$prefix" "$tmp/elsewhere/moved"
moved=$tmp/elsewhere/moved
[ ! -e "$prefix" ] || fail "the prefix was not moved"
relayc_checks "$moved"
pkg_config_checks "$moved"
cmake_checks "$moved" "$tmp/consumer2"

# {==== A model built by the installed relayc ====}
relayc=$moved/$bindir/relayc
if ! "$relayc" build --help >/dev/null 2>&1; then
  echo "SKIP model part: relayc build not available"
  echo "install test: $checks checks passed"
  exit 0
fi

printf '#[version = "0.0.5"]\ndef @main(%%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n  add(%%x, %%x)\n}\n' >model.relay

# Calls @main of a module; shared by the .so and the .a programs.
cat >call.h <<'EOF'
#include <relayc/runtime.h>
#include <stdio.h>

static rlyrt_tensor *vector(int64_t n, double first) {
  DLDataType f32 = {kDLFloat, 32, 1};
  rlyrt_tensor *t = rlyrt_tensor_new(f32, 1, &n, false);
  if (!t) return NULL;
  for (int64_t i = 0; i < n; i++) rlyrt_set_f64(t, i, first + (double)i);
  return t;
}

static int call_main(rlyrt_module *m) {
  const rlyrt_module_info *info = rlyrt_module_get_info(m);
  printf("module %s, abi %s\n", info->name, info->abi == RLYRT_ABI_VERSION ? "ok" : "wrong");
  const rlyrt_function_info *f = rlyrt_module_find(m, "main");
  if (!f) {
    printf("no main\n");
    return 1;
  }
  printf("main: %d parameter(s), @main %s\n", (int)f->nparams,
         rlyrt_module_find(m, "@main") == f ? "the same" : "different");
  printf("nope: %s\n", rlyrt_module_find(m, "nope") ? "found" : "not found");
  rlyrt_tensor *x = vector(3, 1), *y = vector(2, 1);
  if (!x || !y) return 1;
  rlyrt_object *arg = &x->obj, *out = NULL;
  rlyrt_status s = rlyrt_module_call(m, "main", &arg, 1, &out);
  if (s != RLYRT_OK) {
    printf("main failed: %s: %s\n", rlyrt_status_name(s), rlyrt_last_error());
    return 1;
  }
  rlyrt_value_print(stdout, out);
  printf("\n");
  rlyrt_release(out);
  out = NULL;
  arg = &y->obj;
  s = rlyrt_module_call(m, "main", &arg, 1, &out);
  printf("wrong shape: %s\n", rlyrt_status_name(s));
  rlyrt_release(out);
  out = NULL;
  s = rlyrt_module_call(m, "main", NULL, 0, &out);
  printf("no argument: %s\n", rlyrt_status_name(s));
  rlyrt_release(out);
  rlyrt_release(&x->obj);
  rlyrt_release(&y->obj);
  rlyrt_module_free(m);
  return 0;
}
EOF
cat >"$tmp/model.expected" <<'EOF'
module model, abi ok
main: 1 parameter(s), @main the same
nope: not found
[2. 4. 6.]
wrong shape: RLYRT_E_ARG
no argument: RLYRT_E_ARG
EOF

# model.so, loaded at run time by a program linked through pkg-config.
run "$tmp/build.log" "$relayc" build model.relay -o model.so --name model
cat >load.c <<'EOF'
#include "call.h"

int main(int argc, char **argv) {
  rlyrt_module *m = NULL;
  rlyrt_status s = rlyrt_module_load(argc > 1 ? argv[1] : "", &m);
  if (s != RLYRT_OK) {
    printf("rlyrt_module_load: %s: %s\n", rlyrt_status_name(s), rlyrt_last_error());
    return 1;
  }
  return call_main(m);
}
EOF
# shellcheck disable=SC2046
run "$tmp/cc.log" ccs -o load load.c $(pkg-config --cflags --libs relayc-runtime)
./load "$tmp/work/model.so" >"$tmp/load.out" || { cat "$tmp/load.out" >&2; fail "./load model.so"; }
same "model.so loaded with rlyrt_module_load" "$tmp/model.expected" "$tmp/load.out"

# libmodel.a and model.h, linked into a program.
run "$tmp/build.log" "$relayc" build model.relay -o libmodel.a --name model
[ -f model.h ] || fail "relayc build -o libmodel.a --name model wrote no model.h"
cat >link.c <<'EOF'
#include "call.h"
#include "model.h"

int main(void) {
  rlyrt_module *m = NULL;
  rlyrt_status s = rlyrt_module_wrap(model_module(), &m);
  if (s != RLYRT_OK) {
    printf("rlyrt_module_wrap: %s: %s\n", rlyrt_status_name(s), rlyrt_last_error());
    return 1;
  }
  return call_main(m);
}
EOF
# shellcheck disable=SC2046
run "$tmp/cc.log" ccs -o link link.c libmodel.a $(pkg-config --cflags --libs relayc-runtime)
./link >"$tmp/link.out" || { cat "$tmp/link.out" >&2; fail "./link"; }
same "libmodel.a linked with model_module()" "$tmp/model.expected" "$tmp/link.out"

echo "install test: $checks checks passed"
