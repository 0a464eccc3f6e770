#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs every benchmark driver (make bench). Usage: sh bench/run.sh [NAME...]
# with NAME among: hotpath size convert memory writer ranks pftrace reports
# report_html gpu gpu_torch (the last two skip where there is no GPU).
set -e
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
names=${*:-hotpath size convert memory writer ranks pftrace reports report_html gpu gpu_torch}
model=$(lscpu | sed -n 's/^Model name: *//p')
echo "machine: $model, $(nproc) cores, $(uname -sr); BENCH_RUNS=${BENCH_RUNS:-5}"
# Other load on the machine (other users, a shared VM) moves the figures:
# the load average is printed before and after.
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $names; do
	$PY bench/figures/$n.py
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
