#!/bin/sh
# deps.sh [test|fuzz]: installs the Debian packages the build needs, only
# those that are missing. With "test", also what the tests use: clang (the
# generated C is compiled with gcc and clang) and python3 (the random
# program generator of tests/diff) with python3-onnx and python3-numpy (the
# ONNX backend node tests, tests/onnx/node_suite.py). With "fuzz", clang and its libFuzzer
# runtime.
set -e
need=""
[ -f /usr/include/cjson/cJSON.h ] || need="$need libcjson-dev"
[ -f /usr/include/dlpack/dlpack.h ] || need="$need libdlpack-dev"
[ -f /usr/include/protobuf-c/protobuf-c.h ] || need="$need libprotobuf-c-dev"
command -v protoc-c >/dev/null 2>&1 || need="$need protobuf-c-compiler"
command -v cmake >/dev/null 2>&1 || need="$need cmake"
command -v pkg-config >/dev/null 2>&1 || need="$need pkgconf"
if [ "${1:-}" = test ]; then
  command -v clang >/dev/null 2>&1 || need="$need clang"
  [ -x /usr/bin/python3 ] || need="$need python3"
  /usr/bin/python3 -c 'import numpy' >/dev/null 2>&1 || need="$need python3-numpy"
  /usr/bin/python3 -c 'import onnx' >/dev/null 2>&1 || need="$need python3-onnx"
fi
if [ "${1:-}" = fuzz ]; then
  command -v clang >/dev/null 2>&1 || need="$need clang"
  ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1 || need="$need libclang-rt-dev"
fi
[ -z "$need" ] && exit 0
echo "relayc: installing missing packages:$need"
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need
