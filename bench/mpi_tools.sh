#!/bin/sh
# SPDX-License-Identifier: MIT
# mpiexec -n N cuptrace stats against the serial command on the same files
# (docs/parallel-tools.md): best of REPS wall times, peak RSS of the serial
# run, and whether the output is the same. Usage:
#   bench/mpi_tools.sh DIR [N] [REPS]     (DIR: a job's .ctr files)
set -e
dir=$1 n=${2:-2} reps=${3:-3}
tool=${CUPTRACE:-build/bin/cuptrace}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
best() { sort -n | head -1; }
run() { # label, command...: the best wall time of reps
	label=$1; shift
	for i in $(seq "$reps"); do
		/usr/bin/time -f "%e %M" -o "$tmp/t" "$@" >"$tmp/$label.out" 2>/dev/null
		cat "$tmp/t"
	done | sort -n | head -1 >"$tmp/$label.t"
	echo "$label: $(cut -d' ' -f1 "$tmp/$label.t") s, peak RSS $(cut -d' ' -f2 "$tmp/$label.t") KB"
}
echo "files: $(ls "$dir" | wc -l), $(du -sh "$dir" | cut -f1); $(nproc) CPUs"
run launch mpiexec --oversubscribe -n "$n" /bin/true
run serial_j1 "$tool" stats -j 1 "$dir"
run "serial_j$n" "$tool" stats -j "$n" "$dir"
run "mpi_n${n}_j1" mpiexec --oversubscribe -n "$n" "$tool" stats -j 1 "$dir"
cmp -s "$tmp/serial_j1.out" "$tmp/mpi_n${n}_j1.out" && echo "output: the same" || echo "output: DIFFERS"
