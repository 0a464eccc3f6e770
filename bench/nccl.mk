# SPDX-License-Identifier: MIT
# NCCL profiler callback costs (bench/progs/bench_nccl.c, run by
# bench/figures/nccl.py): `make bench-nccl` alone, also run by `make bench`.
build/bench/bench_nccl: bench/progs/bench_nccl.c libtrace/sources/nccl_abi.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(LIB_CPPFLAGS) -O2 -g -std=gnu11 -Wall -Wextra -Werror $< -o $@ -ldl

bench-nccl: build/bench/bench_nccl $(LIB)
	$(Q)$(PYTHON) bench/figures/nccl.py

bench: build/bench/bench_nccl

.PHONY: bench-nccl

# The NCCL wrappers' cost (bench/progs/bench_nccl_err.c, bench/figures/
# nccl_err.py), linked against the tests' fake libnccl.so.2.
build/bench/bench_nccl_err: bench/progs/bench_nccl_err.c bench/progs/bench_common.h $(NCCL_FAKE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(BENCH_CFLAGS) $< -o $@ $(NCCL_FAKE) -Wl,-rpath,'$$ORIGIN/../tests/progs/nccl_fake'

bench-nccl-err: build/bench/bench_nccl_err $(LIB)
	$(Q)$(PYTHON) bench/figures/nccl_err.py

bench: build/bench/bench_nccl_err

.PHONY: bench-nccl-err
