#!/bin/sh
# SPDX-License-Identifier: MIT
# `make demo`: trace the example training program, convert, summarise.
set -e
cd "$(dirname "$0")/.."
out=build/demo
rm -rf "$out"
mkdir -p "$out"
echo "== tracing: build/bin/cuptrace run -o $out/%h-%p.ctr -- build/tests/progs/demo_train 200"
build/bin/cuptrace run -o "$out/%h-%p.ctr" -- build/tests/progs/demo_train 200
echo
echo "== cuptrace info $out"
build/bin/cuptrace info "$out"
echo
echo "== cuptrace convert -o $out/trace.json $out"
build/bin/cuptrace convert -o "$out/trace.json" "$out"
echo
echo "== cuptrace stats --report nvtx_sum $out   (top 10 ranges)"
build/bin/cuptrace stats --report nvtx_sum "$out" | head -14
echo
# The HTML report of a 4-rank job: the NCCL harness launching its kernels on
# the CUPTI simulator (no GPU here: simulated kernels, NCCL through the real
# profiler-plugin ABI), rank 2 late at every 10th collective.
job="$out/job"
echo "== 4 ranks of build/tests/cupti_sim/nccl_harness_sim (CUPTI simulator), rank 2 late"
t0=$(( $(date +%s%N) + 500000000 ))
for r in 0 1 2 3; do
	CUPTRACE_STEP_RANGE=step RANK=$r WORLD_SIZE=4 HARNESS_PACE_US=6000 HARNESS_T0=$t0 HARNESS_GEMM_US=40000 \
		HARNESS_LATE=2:4000:10 HARNESS_STEP_LATE=1:3000 \
		build/bin/cuptrace run -o "$job/rank%r.ctr" -t cuda,nvtx,nccl -- \
		build/tests/cupti_sim/nccl_harness_sim 12 >/dev/null &
done
wait
echo "== cuptrace report -o $out/report.html $job"
build/bin/cuptrace report -o "$out/report.html" "$job"
if command -v chromium >/dev/null 2>&1; then
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,2600 \
		--screenshot="$out/report.png" "file://$(pwd)/$out/report.html" >/dev/null 2>&1 &&
		echo "screenshot: $out/report.png (as docs/report.png)"
fi
echo
echo "Open $out/report.html in any browser (offline, one file)."
echo "Open $out/trace.json in https://ui.perfetto.dev (Open trace file) or chrome://tracing."
