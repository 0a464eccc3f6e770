#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the Debian packages cuptrace builds and tests with, if missing.
# Run by `make test`, `make demo` and CI; does nothing when all are there.
set -e
PKGS="build-essential libzstd-dev zlib1g-dev libsqlite3-dev sqlite3 zstd python3 python3-pytest python3-venv python3-pip python3-torch libtorch-dev python3-dev python3-setuptools python3-wheel openmpi-bin libopenmpi-dev mpich libmpich-dev python3-mpi4py clang"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
# The packages of the list $1 that are not installed yet.
missing() {
	for p in $1; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || printf ' %s' "$p"
	done
}
# Installs the packages named (apt-get update first: a fresh machine has no lists).
install() {
	echo "installing:$*"
	$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@"
}
need=$(missing "$PKGS")
if [ -n "$need" ]; then
	install $need >/dev/null
fi
# The HTML report's tests: headless Chromium renders the page, html5lib
# parses it as HTML5. Best effort: where they cannot be installed, those
# tests say they are skipped.
opt=$(missing "chromium python3-html5lib")
if [ -n "$opt" ]; then
	install $opt >/dev/null 2>&1 ||
		echo "warning: could not install$opt; the report's browser tests will be skipped" >&2
fi
if [ ! -d /usr/local/cuda/include/nvtx3 ] && [ ! -d "${CUDA_HOME:-/usr/local/cuda}/include/nvtx3" ]; then
	echo "warning: no CUDA toolkit at \${CUDA_HOME:-/usr/local/cuda}; NVTX headers are needed" >&2
fi

# Python packages for the tests: NVIDIA's nvtx annotations, Holistic Trace
# Analysis (HTA 0.5 needs pandas < 3), TensorBoard's profiler plugin
# (torch-tb-profiler, which reads the PyTorch operators of our Kineto JSON)
# and perfetto (its generated protobuf classes decode .pftrace files), in a
# venv that also sees Debian's packages (pytest; its own torch below). Best
# effort: without network the tests that need them say they are skipped.
root=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -x "$root/build/venv/bin/python" ] || ! "$root/build/venv/bin/python" -c "import nvtx, perfetto" 2>/dev/null; then
	mkdir -p "$root/build"
	/usr/bin/python3 -m venv --system-site-packages "$root/build/venv" &&
		"$root/build/venv/bin/pip" install -q nvtx perfetto ||
		echo "warning: could not install the nvtx or perfetto package; their tests will be skipped" >&2
fi
if [ -x "$root/build/venv/bin/python" ] && ! "$root/build/venv/bin/python" -c "import hta" 2>/dev/null; then
	"$root/build/venv/bin/pip" install -q holistictraceanalysis 'pandas<3' ||
		echo "warning: could not install holistictraceanalysis; the HTA tests will be skipped" >&2
fi
if [ -x "$root/build/venv/bin/python" ] && ! "$root/build/venv/bin/python" -c "import torch_tb_profiler" 2>/dev/null; then
	"$root/build/venv/bin/pip" install -q torch-tb-profiler tensorboard ||
		echo "warning: could not install torch-tb-profiler; the TensorBoard plugin tests will be skipped" >&2
fi
# PyPI's torch 2.x (its CUDA build: about 4.6 GB with NVIDIA's wheels, a few
# minutes) in the same venv, where it shadows Debian's 1.13: that venv's
# Python is torch 2.x, /usr/bin/python3 keeps 1.13, and `make test` runs the
# Python tests under both (tests/tests.mk).
if [ -x "$root/build/venv/bin/python" ] && ! "$root/build/venv/bin/python" -c \
	'import sys, torch; sys.exit(int(torch.__version__.split(".")[0]) < 2)' 2>/dev/null; then
	"$root/build/venv/bin/pip" install -q 'torch>=2' ||
		echo "warning: could not install torch 2.x into build/venv; the Python tests under it will be skipped" >&2
fi
