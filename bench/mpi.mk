# SPDX-License-Identifier: MIT
# What the mpi source adds to an MPI call (bench/progs/mpi/bench_mpi.c, run
# by bench/figures/mpi.py): built with Open MPI's mpicc and MPICH's where
# each is installed. `make bench-mpi` alone, also run by `make bench`.
MPI_BENCH := $(if $(shell command -v $(MPICC) 2>/dev/null),build/bench/openmpi/bench_mpi) \
	$(if $(shell command -v $(MPICH_CC) 2>/dev/null),build/bench/mpich/bench_mpi)

build/bench/openmpi/bench_mpi: bench/progs/mpi/bench_mpi.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MPICC   $<")
	$(Q)$(MPICC) $(BENCH_CFLAGS) $< -o $@

build/bench/mpich/bench_mpi: bench/progs/mpi/bench_mpi.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MPICC   $< (MPICH)")
	$(Q)$(MPICH_CC) $(BENCH_CFLAGS) -Wno-stringop-overflow $< -o $@

bench-mpi: $(MPI_BENCH) $(LIB) $(MPI_LIB)
	$(Q)$(PYTHON) bench/figures/mpi.py

bench: $(MPI_BENCH)

.PHONY: bench-mpi
