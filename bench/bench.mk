# SPDX-License-Identifier: MIT
# Benchmarks (bench/): `make bench` builds the programs and runs every
# driver of bench/figures/ (bench/run.sh); figures are printed one per line
# with target and PASS/MISS, and their table replaces bench/RESULTS.md.
# BENCH_RUNS=N sets the runs per figure (default 5).

BENCH_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Iinclude -isystem $(CUDA_HOME)/include -D_GNU_SOURCE
BENCH_PROGS := $(patsubst bench/progs/%.c,build/bench/%,$(wildcard bench/progs/bench_*.c))

build/bench/%: bench/progs/%.c bench/progs/bench_common.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(BENCH_CFLAGS) $< -o $@ -pthread -ldl

build/bench/peak_rss: bench/progs/peak_rss.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(BENCH_CFLAGS) $< -o $@

# bench/figures/gpu.py's CUDA program (where nvcc is; run only where a GPU is).
build/bench/gpu_launch: bench/progs/gpu_launch.cu
	@mkdir -p $(dir $@)
	@if [ -x "$(NVCC)" ]; then \
		$(if $(Q),echo "  NVCC    $<";) \
		$(NVCC) -O2 -isystem $(CUDA_HOME)/include $< -o $@; \
	else echo "  NVCC    skipped: no nvcc at $(NVCC); bench/figures/gpu.py will skip"; fi

bench-progs: $(BENCH_PROGS) build/bench/peak_rss build/bench/gpu_launch

# cupti.mk, nccl.mk and python_shim/python.mk add what their drivers need
# to the prerequisites; the drivers run one after another, never at once.
bench: all bench-progs test-progs
	$(Q)PYTHON=$(PYTHON) sh bench/run.sh
	$(Q)cp build/bench/RESULTS.md bench/RESULTS.md

.PHONY: bench bench-progs
