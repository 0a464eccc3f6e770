#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds cuptrace from the source tree SRC and installs it under PREFIX:
# PREFIX/bin/cuptrace, PREFIX/lib/libcuptrace.so (where `cuptrace run`
# finds it: ../lib beside the program) and PREFIX/include/cuptrace/, then
# checks that what was installed runs. The Containerfile beside this script
# runs it, and so does the test suite (tests/integration/tools/
# test_container.py), so that the image's build is the one tested.
#   usage: build.sh SRC PREFIX
#   JOBS=N: make's jobs (default: every CPU); CUDA_HOME (default
#   /usr/local/cuda): the toolkit whose NVTX and CUPTI headers the library
#   is built with.
set -eu
if [ $# -ne 2 ]; then
	echo "usage: $0 SRC PREFIX" >&2
	exit 2
fi
src=$1
prefix=$2
cuda=${CUDA_HOME:-/usr/local/cuda}
jobs=${JOBS:-$(nproc)}

# CUPTI's headers are in the toolkit's include/, or apart in
# extras/CUPTI/include where an installation keeps them there.
extra=
if [ ! -e "$cuda/include/cupti.h" ] && [ -e "$cuda/extras/CUPTI/include/cupti.h" ]; then
	extra="-isystem $cuda/extras/CUPTI/include"
fi
make -C "$src" -j"$jobs" CUDA_HOME="$cuda" EXTRA_CFLAGS="$extra" all

install -d "$prefix/bin" "$prefix/lib" "$prefix/include/cuptrace"
install -m 755 "$src/build/bin/cuptrace" "$prefix/bin/cuptrace"
install -m 755 "$src/build/lib/libcuptrace.so" "$prefix/lib/libcuptrace.so"
install -m 644 "$src"/include/cuptrace/*.h "$prefix/include/cuptrace/"

# The installed program runs, and `cuptrace run` finds the installed
# library and preloads it (a program that records nothing writes no file).
"$prefix/bin/cuptrace" --version
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
"$prefix/bin/cuptrace" run -o "$probe/%p.ctr" -- true
echo "installed under $prefix"
