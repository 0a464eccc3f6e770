# SPDX-License-Identifier: MIT
# NCCL profiler callback costs (bench/progs/bench_nccl.c). `make bench-nccl`
# prints them; hook into `make bench` with `bench: bench-nccl`.
build/bench/bench_nccl: bench/progs/bench_nccl.c libtrace/sources/nccl_abi.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(LIB_CPPFLAGS) -O2 -g -std=gnu11 -Wall -Wextra -Werror $< -o $@ -ldl

bench-nccl: build/bench/bench_nccl $(LIB)
	$(Q)rm -rf /tmp/cuptrace-bench-nccl
	$(Q)build/bench/bench_nccl $(LIB)
	$(Q)rm -rf /tmp/cuptrace-bench-nccl

.PHONY: bench-nccl
