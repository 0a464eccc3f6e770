# SPDX-License-Identifier: MIT
# Tests. `make test` runs everything; the parts:
#   test-unit         C unit tests of the library and format code (tests/unit)
#   test-integration  real programs traced and checked (tests/integration, pytest)
#   test-fuzz         replays the fuzz corpus through every reader entry point
#   test-tsan         the ring and writer tests, a traced run and a parallel
#                     conversion under ThreadSanitizer
#   test-san          the whole suite under ASan/UBSan (the Python extension too:
#                     python_shim/python.mk, tests/integration/pyshim.py)
#   test-gpu          GPU smoke test (skips plainly without a GPU)
#   check-layers      the folder rules of docs/LAYOUT.md on every include and
#                     on the symbols between the built objects; no circle

TEST_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-missing-field-initializers -isystem $(CUDA_HOME)/include -Iinclude -Ilibtrace -Ilibtrace/format -Ilibtrace/config \
	-D_GNU_SOURCE -pthread
PROG_SRC := $(wildcard tests/progs/*.c)
PROGS := $(patsubst tests/progs/%.c,build/tests/progs/%,$(PROG_SRC))

# Programs that link the library directly (control API from C).
LINKS_LIB := build/tests/progs/control_api build/tests/progs/rotate_threads build/tests/progs/flight

build/tests/progs/%: tests/progs/%.c $(wildcard tests/progs/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TEST_CFLAGS) $< -o $@ -ldl -lm

$(LINKS_LIB): build/tests/progs/%: tests/progs/%.c $(wildcard tests/progs/*.h) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TEST_CFLAGS) $< -o $@ -Lbuild/lib -lcuptrace -Wl,-rpath,'$$ORIGIN/../../lib' -ldl -lm

# A test-only libnccl.so.2 (tests/progs/nccl_fake) and nccl_poll, linked
# against it ahead of the library: untraced, its NCCL calls go to the fake.
NCCL_FAKE := build/tests/progs/nccl_fake/libnccl.so.2
$(NCCL_FAKE): tests/progs/nccl_fake/fake_nccl.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TEST_CFLAGS) -shared -fPIC -Wl,-soname,libnccl.so.2 $< -o $@

build/tests/progs/nccl_poll: tests/progs/nccl_poll.c $(NCCL_FAKE) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TEST_CFLAGS) $< -o $@ $(NCCL_FAKE) -Lbuild/lib -lcuptrace \
		-Wl,-rpath,'$$ORIGIN/nccl_fake:$$ORIGIN/../../lib' -ldl -lm

# The same program as a plugin that nccl_dlopen loads with RTLD_LOCAL.
build/tests/progs/libnccl_poll.so: tests/progs/nccl_poll.c $(NCCL_FAKE) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TEST_CFLAGS) -DNCCL_POLL_PLUGIN -shared -fPIC $< -o $@ $(NCCL_FAKE) \
		-Lbuild/lib -lcuptrace -Wl,-rpath,'$$ORIGIN/nccl_fake:$$ORIGIN/../../lib'

# Every record of a .ctr file as JSON lines, through the format's decoder:
# tests read the fields of kinds that no output shows yet.
CTR_DEC_SRC := libtrace/format/dec.c libtrace/format/dec_block.c libtrace/format/peek.c $(SCHEMA_SRC)
build/tests/progs/ctr_records: tests/progs/ctr_records.c $(CTR_DEC_SRC) $(wildcard libtrace/format/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TEST_CFLAGS) $< $(CTR_DEC_SRC) -o $@ -lzstd

# MPI programs (tests/progs/mpi), built with mpicc when it is there.
MPICC ?= mpicc
MPI_SRC := $(wildcard tests/progs/mpi/*.c)
MPI_PROGS := $(if $(shell command -v $(MPICC) 2>/dev/null),$(patsubst tests/progs/mpi/%.c,build/tests/progs/%,$(MPI_SRC)))

build/tests/progs/mpi_%: tests/progs/mpi/mpi_%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MPICC   $<")
	$(Q)$(MPICC) $(TEST_CFLAGS) $< -o $@ -ldl

# An MPI program in a plugin loaded with dlopen(RTLD_LOCAL), as mpi4py is
# (tests/progs/mpi/plugin): the loader built without MPI, the plugin with
# mpicc.
MPI_PLUGIN := $(if $(MPI_PROGS),build/tests/progs/mpi_dlopen build/tests/progs/libmpi_plugin.so)

build/tests/progs/mpi_dlopen: tests/progs/mpi/plugin/mpi_dlopen.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TEST_CFLAGS) $< -o $@ -ldl

build/tests/progs/libmpi_plugin.so: tests/progs/mpi/plugin/mpi_plugin.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MPICC   $<")
	$(Q)$(MPICC) $(TEST_CFLAGS) -shared -fPIC $< -o $@

# The same programs built with MPICH's mpicc where it is installed (Debian's
# mpich package, beside Open MPI): build/tests/progs/mpich/.
MPICH_CC ?= mpicc.mpich
MPICH_PROGS := $(if $(shell command -v $(MPICH_CC) 2>/dev/null),$(patsubst tests/progs/mpi/%.c,build/tests/progs/mpich/%,$(MPI_SRC)))

build/tests/progs/mpich/mpi_%: tests/progs/mpi/mpi_%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MPICC   $< (MPICH)")
	$(Q)$(MPICH_CC) $(TEST_CFLAGS) $< -o $@ -ldl

# Libraries preloaded ahead of libcuptrace.so by some tests (tests/progs/preload).
PRELOAD_SRC := $(wildcard tests/progs/preload/*.c)
PRELOADS := $(patsubst tests/progs/preload/%.c,build/tests/progs/lib%.so,$(PRELOAD_SRC))

build/tests/progs/lib%.so: tests/progs/preload/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TEST_CFLAGS) -shared -fPIC $< -o $@ -ldl

test-progs: $(PROGS) $(MPI_PROGS) $(MPI_PLUGIN) $(MPICH_PROGS) $(PRELOADS) build/tests/progs/libnccl_poll.so

# ---- unit tests (tests/unit/test_*.c), each linked with the objects it tests
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNITS := $(patsubst tests/unit/%.c,build/tests/unit/%,$(UNIT_SRC))
UNIT_OBJ := $(filter-out $(OBJ)/libtrace/init.o,$(LIB_OBJ)) $(OBJ)/libtrace/format/dec.o $(OBJ)/libtrace/format/dec_block.o \
	$(OBJ)/libtrace/unit_init.o

# (-MMD: rebuilt when the headers it includes change, struct ct above all)
$(OBJ)/libtrace/unit_init.o: tests/unit/unit_init.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LIB_CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
-include $(OBJ)/libtrace/unit_init.d

build/tests/unit/%: tests/unit/%.c $(UNIT_OBJ) tests/unit/check.h build/.variant
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(LIB_CPPFLAGS) $(CFLAGS) $< $(UNIT_OBJ) -o $@ $(LDFLAGS) -lzstd -lpthread -ldl -lm

# test_ring stops producers between their stores: it links a copy of ring.c
# built with the test hooks (libtrace/ring.h) in place of the library's.
RING_HOOK_OBJ := $(OBJ)/tests/unit/ring_hooks.o
RING_UNIT_OBJ := $(filter-out $(OBJ)/libtrace/ring.o,$(UNIT_OBJ)) $(RING_HOOK_OBJ)

$(RING_HOOK_OBJ): libtrace/ring.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (test hooks)")
	$(Q)$(CC) $(LIB_CPPFLAGS) $(CFLAGS) -DCT_RING_TEST_HOOKS -MMD -MP -c $< -o $@
-include $(RING_HOOK_OBJ:.o=.d)

build/tests/unit/test_ring: tests/unit/test_ring.c $(RING_UNIT_OBJ) tests/unit/check.h build/.variant
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(LIB_CPPFLAGS) $(CFLAGS) -DCT_RING_TEST_HOOKS $< $(RING_UNIT_OBJ) -o $@ $(LDFLAGS) \
		-lzstd -lpthread -ldl -lm

# ---- unit tests of the tools (tests/unit/tool_test_*.c), linked with the
# tool's objects but its main, and the encoder (tests that write a trace)
TOOL_UNIT_SRC := $(wildcard tests/unit/tool_test_*.c)
TOOL_UNITS := $(patsubst tests/unit/%.c,build/tests/unit/%,$(TOOL_UNIT_SRC))
TOOL_UNIT_OBJ := $(filter-out $(OBJ)/tools/main.o,$(TOOL_OBJ)) $(OBJ)/libtrace/format/enc.o

build/tests/unit/tool_test_%: tests/unit/tool_test_%.c $(TOOL_UNIT_OBJ) tests/unit/check.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TOOL_CPPFLAGS) $(CFLAGS) $< $(TOOL_UNIT_OBJ) -o $@ $(LDFLAGS) -lsqlite3 -lzstd -lz -lpthread -lm -lstdc++

test-unit: $(UNITS) $(TOOL_UNITS)
	@set -e; for t in $(UNITS) $(TOOL_UNITS); do echo "  UNIT    $$t"; $$t; done

# ---- integration tests
# First the Python package under build/venv's Python, whose torch is PyPI's
# 2.x (tests/install-deps.sh): the wheel built and installed for it, and the
# Python tests that use torch run against it (test_python_install.py with
# CT_TEST_PYTHON); then everything under $(PYTHON) (Debian's torch 1.13),
# where test_python_torch_ops.py runs under build/venv's Python too (so not
# here). Not under a sanitizer: pip builds the package without it.
TORCH2_PY := build/venv/bin/python
TORCH2_CHECK := import sys, torch; sys.exit(int(torch.__version__.split(".")[0]) < 2)

test-integration: all test-progs
	$(Q)if [ -n "$(SAN)" ]; then :; \
	elif $(TORCH2_PY) -c '$(TORCH2_CHECK)' 2>/dev/null; then \
		echo "  PYTEST  tests/integration/python/test_python_install.py under $(TORCH2_PY)"; \
		CT_TEST_PYTHON=$(CURDIR)/$(TORCH2_PY) $(TORCH2_PY) -m pytest -q -p no:cacheprovider \
			tests/integration/python/test_python_install.py; \
	else echo "  (no torch 2.x in $(TORCH2_PY), tests/install-deps.sh: the Python tests under torch 2.x skipped)"; fi
	$(Q)CT_TEST_SAN=$(SAN) $(PYTHON) -m pytest -q -p no:cacheprovider tests/integration

# ---- fuzzing (clang/libFuzzer); the corpus is replayed in every test run
-include tests/fuzz/fuzz.mk
-include tests/fuzz/fuzz_nccl.mk

# ---- the map of docs/LAYOUT.md held against the includes and the objects
check-layers: all
	$(Q)$(PYTHON) tests/layers/check_layers.py --obj $(OBJ)

test: deps all test-progs bench-build check-layers test-unit test-integration test-fuzz test-fuzz-nccl

test-tsan:
	$(Q)$(MAKE) --no-print-directory SAN=thread test-unit all build/tests/cupti_sim/sim_train \
		build/tests/progs/rotate_threads
	$(Q)sh tests/tsan_tools.sh

test-san:
	$(Q)$(MAKE) --no-print-directory SAN=address,undefined test-unit test-integration

.PHONY: test test-progs test-unit test-integration test-tsan test-san check-layers

# The CUPTI simulator, its driver programs, the unit test on real libcupti
include tests/cupti_sim/sim.mk
# GPU smoke test: built by `make test`, run by `make test-gpu`
include tests/gpu/gpu.mk
