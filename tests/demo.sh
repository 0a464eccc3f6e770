#!/bin/sh
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
echo "Open $out/trace.json in https://ui.perfetto.dev (Open trace file) or chrome://tracing."
