# SPDX-License-Identifier: MIT
# GPU (CUPTI) benchmarks: `make bench-cupti` alone, also run by `make bench`.
# cupti_bench links the library's objects (like the unit tests) to time the
# translation of CUPTI buffers directly, walking them with the real
# libcupti; bench/figures/cupti.py runs it and converts the result.
CUPTI_BENCH := build/bench/cupti_bench
CUPTI_REAL_DIR ?= $(firstword $(patsubst %/libcupti.so,%,$(wildcard \
	$(CUDA_HOME)/lib64/libcupti.so $(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so)))

$(CUPTI_BENCH): bench/progs/cupti_bench.c $(UNIT_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(LIB_CPPFLAGS) $(CFLAGS) $< $(UNIT_OBJ) -o $@ $(LDFLAGS) \
		-L$(CUPTI_REAL_DIR) -lcupti -Wl,-rpath,$(CUPTI_REAL_DIR) -lzstd -lpthread -ldl -lm

bench-cupti: all $(if $(CUPTI_REAL_DIR),$(CUPTI_BENCH))
	$(Q)$(if $(CUPTI_REAL_DIR),$(PYTHON) bench/figures/cupti.py,echo "bench-cupti: skipped: no libcupti in the CUDA toolkit")

bench: $(if $(CUPTI_REAL_DIR),$(CUPTI_BENCH))

# The benchmark programs are built (not run) by `make test`, so that a change
# of the library's internal interfaces cannot leave `make bench` broken.
bench-build: bench-progs build/bench/bench_nccl $(if $(CUPTI_REAL_DIR),$(CUPTI_BENCH))

.PHONY: bench bench-cupti bench-build
