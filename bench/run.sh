#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the benchmark drivers of bench/figures/ (make bench runs them all).
# Usage: sh bench/run.sh [NAME...] with NAME among: hotpath size convert
# memory writer flight ranks pftrace reports report_html cupti nccl nccl_err mpi torch
# python torch_ops torch_train gpu gpu_torch (those that need what is not here, a GPU
# or a program not built, say so and skip). Each figure is printed, and recorded in
# build/bench/figures.jsonl; the table of this run is written to
# build/bench/RESULTS.md (make bench copies it to bench/RESULTS.md).
set -e
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
names=${*:-hotpath size convert memory writer flight ranks pftrace reports report_html cupti nccl nccl_err mpi torch python torch_ops torch_train gpu gpu_torch}
mkdir -p build/bench
BENCH_RECORD="$PWD/build/bench/figures.jsonl"
export BENCH_RECORD
: >"$BENCH_RECORD"
model=$(lscpu | sed -n 's/^Model name: *//p')
echo "machine: $model, $(nproc) cores, $(uname -sr); BENCH_RUNS=${BENCH_RUNS:-5}"
# Other load on the machine (other users, a shared VM) moves the figures:
# the load average is printed, and recorded, before and after.
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "load average: $(load)"
printf '{"load_before": "%s", "runs": "%s"}\n' "$(load)" "${BENCH_RUNS:-5}" >>"$BENCH_RECORD"
for n in $names; do
	$PY "bench/figures/$n.py"
done
echo "load average: $(load)"
printf '{"load_after": "%s"}\n' "$(load)" >>"$BENCH_RECORD"
$PY bench/figures/results.py "$BENCH_RECORD" >build/bench/RESULTS.md
echo "table of this run: build/bench/RESULTS.md"
