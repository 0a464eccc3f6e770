#!/bin/sh
# SPDX-License-Identifier: MIT
# mpiexec -n N cuptrace COMMAND against the serial command on the same files
# (docs/parallel-tools.md): best of REPS wall times, peak RSS (the largest
# rank's under mpiexec), and whether the output is the same, byte for byte.
# Usage:
#   bench/mpi_tools.sh DIR [N] [REPS] [WHAT...]
# DIR: a job's .ctr files; WHAT: stats report split json gz pftrace (all by
# default).
set -e
dir=$1 n=${2:-2} reps=${3:-3}
shift $(($# < 3 ? $# : 3))
what=${*:-stats report split json gz pftrace}
tool=$(realpath "${CUPTRACE:-build/bin/cuptrace}")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d "${BENCH_TMP:-/tmp}/mpitools.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
run() { # label, output, command...: the best wall time of reps, the largest peak RSS
	label=$1 out=$2; shift 2
	for i in $(seq "$reps"); do
		rm -rf "$tmp/$out"
		"$@" >"$tmp/$label.stdout" 2>/dev/null
		sort -n "$tmp/rss" | tail -1 | tr '\n' ' '
		cat "$tmp/wall"
	done | sort -k2 -n | head -1 >"$tmp/$label.t"
	rm -rf "$tmp/$label.out"
	[ -e "$tmp/$out" ] && mv "$tmp/$out" "$tmp/$label.out" || cp "$tmp/$label.stdout" "$tmp/$label.out"
	echo "  $label: $(cut -d' ' -f2 "$tmp/$label.t") s, peak RSS $(cut -d' ' -f1 "$tmp/$label.t") KB"
}
timed() { # the command's wall time and each process's peak RSS
	rm -f "$tmp/rss"
	s=$(date +%s.%N)
	"$@"
	printf '%.3f\n' "$(echo "$(date +%s.%N) - $s" | bc)" >"$tmp/wall"
}
rss() { /usr/bin/time -a -o "$tmp/rss" -f %M "$@"; }
echo "files: $(ls "$dir" | wc -l), $(du -sh "$dir" | cut -f1); $(nproc) CPUs; $n ranks"
for w in $what; do
	case $w in
	stats) args="stats" out=none ;;
	report) args="report -o $tmp/o.html" out=o.html ;;
	split) args="convert --split-ranks $tmp/o" out=o ;;
	json) args="convert -o $tmp/o.json" out=o.json ;;
	gz) args="convert -o $tmp/o.json.gz" out=o.json.gz ;;
	pftrace) args="convert -o $tmp/o.pftrace" out=o.pftrace ;;
	esac
	echo "$w:"
	# shellcheck disable=SC2086
	run serial_j1 "$out" timed rss "$tool" $args -j 1 "$dir"
	# shellcheck disable=SC2086
	run "serial_j$n" "$out" timed rss "$tool" $args -j "$n" "$dir"
	# shellcheck disable=SC2086
	run "mpi_n${n}_j1" "$out" timed mpiexec --oversubscribe -n "$n" \
		/usr/bin/time -a -o "$tmp/rss" -f %M "$tool" $args -j 1 "$dir"
	diff -r "$tmp/serial_j1.out" "$tmp/mpi_n${n}_j1.out" >/dev/null && echo "  output: the same" ||
		echo "  output: DIFFERS"
done
