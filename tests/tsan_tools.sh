#!/bin/sh
# SPDX-License-Identifier: MIT
# Part of `make test-tsan`, on the SAN=thread build: a traced multi-threaded
# run (library, CUPTI simulator, writer thread) and conversions that split
# one file among several workers, and stats/report reading files on
# several threads, with ThreadSanitizer watching. Any
# report fails (TSan exits 66 on a report; the output is also searched).
set -e
cd "$(dirname "$0")/.."
TSAN=$(gcc -print-file-name=libtsan.so)
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
LD_PRELOAD="$TSAN:build/lib/libcuptrace.so" CUPTRACE_OUTPUT="$D/o/t.ctr" \
	CUPTRACE_TRACE=cuda,memory,nvtx build/tests/cupti_sim/sim_train train 900 >"$D/log" 2>&1
# Rotation while four threads record (cuptrace_rotate, writer_file.c).
LD_PRELOAD="$TSAN:build/lib/libcuptrace.so" CUPTRACE_OUTPUT="$D/r/r.ctr" \
	build/tests/progs/rotate_threads 4 4 >>"$D/log" 2>&1
[ "$(ls "$D/r" | wc -l)" -eq 5 ] || { cat "$D/log"; echo "tsan_tools: expected 5 rotated files"; exit 1; }
build/bin/cuptrace convert -j 4 -o "$D/t.json" "$D/o/t.ctr" >>"$D/log" 2>&1
build/bin/cuptrace convert -j 5 -o "$D/t.json.gz" "$D/o/t.ctr" "$D/o/t.ctr" >>"$D/log" 2>&1
build/bin/cuptrace convert -j 4 -o "$D/t.pftrace" "$D/o/t.ctr" >>"$D/log" 2>&1
# a worker per file, three files of ~20 MB of JSON: the later files'
# chunks wait in the sink's memory and spill files (sink_spill.c)
build/bin/cuptrace convert -j 2 -o "$D/t3.json" "$D/o/t.ctr" "$D/o/t.ctr" "$D/o/t.ctr" >>"$D/log" 2>&1
# stats and report: files read on 3 threads, parts merged in file order
# (the GPU run and the five window files of the rotation: six inputs)
build/bin/cuptrace stats -j 3 --by step,time "$D/o/t.ctr" "$D/r" >"$D/stats" 2>>"$D/log"
build/bin/cuptrace report -j 3 -o "$D/r.html" "$D/o/t.ctr" "$D/r" >>"$D/log" 2>&1
if grep -q "ThreadSanitizer" "$D/log"; then
	cat "$D/log"
	exit 1
fi
blocks=$(build/bin/cuptrace info "$D/o/t.ctr" | sed -n 's/^blocks: *\([0-9]*\).*/\1/p')
[ "$blocks" -ge 3 ] || { echo "tsan_tools: expected several blocks, got $blocks"; exit 1; }
grep -q "breakdown" "$D/stats" || { echo "tsan_tools: stats printed no breakdown"; exit 1; }
echo "  TSAN    traced sim_train, rotate_threads, convert -j 4 of one file (3 shares, .json and .pftrace) and -j 2 of three (spilled), stats/report -j 3: no reports"
