# Tests. `make test` runs everything; the parts:
#   test-unit         C unit tests of the library and format code (tests/unit)
#   test-integration  real programs traced and checked (tests/integration, pytest)
#   test-fuzz         replays the fuzz corpus through every reader entry point
#   test-tsan         the ring and writer tests under ThreadSanitizer
#   test-san          the whole suite under ASan/UBSan
#   test-gpu          GPU smoke test (skips plainly without a GPU)

TEST_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-missing-field-initializers -isystem $(CUDA_HOME)/include -Iinclude -Ilibtrace \
	-D_GNU_SOURCE -pthread
PROG_SRC := $(wildcard tests/progs/*.c)
PROGS := $(patsubst tests/progs/%.c,build/tests/progs/%,$(PROG_SRC))

# Programs that link the library directly (control API from C).
LINKS_LIB := build/tests/progs/control_api

build/tests/progs/%: tests/progs/%.c tests/progs/truth.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TEST_CFLAGS) $< -o $@ -ldl -lm

$(LINKS_LIB): build/tests/progs/%: tests/progs/%.c tests/progs/truth.h $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TEST_CFLAGS) $< -o $@ -Lbuild/lib -lcuptrace -Wl,-rpath,'$$ORIGIN/../../lib' -ldl -lm

test-progs: $(PROGS)

# ---- unit tests (tests/unit/test_*.c), each linked with the objects it tests
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNITS := $(patsubst tests/unit/%.c,build/tests/unit/%,$(UNIT_SRC))
UNIT_OBJ := $(filter-out $(OBJ)/libtrace/init.o,$(LIB_OBJ)) $(OBJ)/libtrace/common/dec.o \
	$(OBJ)/libtrace/unit_init.o

$(OBJ)/libtrace/unit_init.o: tests/unit/unit_init.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

build/tests/unit/%: tests/unit/%.c $(UNIT_OBJ) tests/unit/check.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $< $(UNIT_OBJ) -o $@ $(LDFLAGS) -lzstd -lpthread -ldl -lm

test-unit: $(UNITS)
	@set -e; for t in $(UNITS); do echo "  UNIT    $$t"; $$t; done

# ---- integration tests
test-integration: all test-progs
	$(Q)CT_TEST_SAN=$(SAN) $(PYTHON) -m pytest -q -p no:cacheprovider tests/integration

# ---- fuzzing (clang/libFuzzer); the corpus is replayed in every test run
-include tests/fuzz/fuzz.mk

test: deps all test-progs test-unit test-integration test-fuzz

test-tsan:
	$(Q)$(MAKE) --no-print-directory SAN=thread test-unit

test-san:
	$(Q)$(MAKE) --no-print-directory SAN=address,undefined test-unit test-integration

.PHONY: test test-progs test-unit test-integration test-tsan test-san

# The CUPTI simulator, its driver programs, the unit test on real libcupti
include tests/cupti_sim/sim.mk
# GPU smoke test: built by `make test`, run by `make test-gpu`
include tests/gpu/gpu.mk
