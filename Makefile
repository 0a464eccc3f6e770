# cuptrace build. `make` builds build/lib/libcuptrace.so and build/bin/cuptrace.
#   make test     all tests (installs missing Debian packages first)
#   make demo     traces the example program and shows the result
#   make bench    benchmarks; figures go to bench/RESULTS.md by hand
# Switches: V=1 verbose, DEBUG=1, SAN=address,undefined or SAN=thread,
#           CUDA_HOME (default /usr/local/cuda).

CUDA_HOME ?= /usr/local/cuda
CC ?= cc
ifeq ($(CC),cc)
CC := gcc
endif
PYTHON ?= /usr/bin/python3

Q := $(if $(V),,@)
VARIANT := $(if $(SAN),san-$(subst $(comma),-,$(SAN)),$(if $(DEBUG),debug,release))
comma := ,
OBJ := build/obj/$(VARIANT)

OPT := $(if $(DEBUG),-O0 -g3,-O2 -g)
SANFLAGS := $(if $(SAN),-fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all,)
CPPFLAGS := -Iinclude -Ilibtrace -Ilibtrace/sources -Itools -isystem $(CUDA_HOME)/include -D_GNU_SOURCE
CFLAGS := -std=gnu11 $(OPT) -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wno-missing-field-initializers -fPIC $(SANFLAGS) $(EXTRA_CFLAGS)
LDFLAGS := $(SANFLAGS)

LIB := build/lib/libcuptrace.so
TOOL := build/bin/cuptrace

# Shared by the library and the tools (docs/LAYOUT.md says which folder may use which).
COMMON_LIB := config io pattern rankenv schema schema_cupti schema_nccl strtab enc
COMMON_TOOL := config io pattern rankenv schema schema_cupti schema_nccl strtab dec dec_block
LIB_SRC := $(wildcard libtrace/*.c libtrace/sources/*.c) $(addprefix libtrace/common/,$(addsuffix .c,$(COMMON_LIB)))
TOOL_SRC := $(wildcard tools/*.c tools/*/*.c) $(addprefix libtrace/common/,$(addsuffix .c,$(COMMON_TOOL)))

LIB_OBJ := $(patsubst %.c,$(OBJ)/%.o,$(LIB_SRC))
TOOL_OBJ := $(patsubst %.c,$(OBJ)/%.o,$(TOOL_SRC))

# zstd is linked in statically and hidden so that the traced program's own
# zstd (PyTorch ships one) can never clash with ours.
ZSTD_STATIC := $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/libzstd.a /usr/lib/aarch64-linux-gnu/libzstd.a /usr/lib64/libzstd.a /usr/lib/libzstd.a))
LIB_ZSTD := $(if $(ZSTD_STATIC),$(ZSTD_STATIC),-lzstd)

all: $(LIB) $(TOOL)

# Relink when the variant changes (objects of each variant live apart).
build/.variant: FORCE
	@mkdir -p build; echo $(VARIANT) | cmp -s - $@ || echo $(VARIANT) > $@

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -fvisibility=hidden -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJ) build/.variant libtrace/exports.map
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -o $@ $(LIB_OBJ) $(LDFLAGS) -Wl,--version-script=libtrace/exports.map \
		-Wl,--exclude-libs,ALL -Wl,-z,defs -Wl,-z,now -Wl,-z,nodelete $(LIB_ZSTD) -lpthread -ldl -lm

$(TOOL): $(TOOL_OBJ) build/.variant
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $(TOOL_OBJ) $(LDFLAGS) -lsqlite3 -lzstd -lz -lpthread -lm -lstdc++

-include $(LIB_OBJ:.o=.d) $(TOOL_OBJ:.o=.d)

include tests/tests.mk
include bench/bench.mk
-include bench/nccl.mk
include bench/cupti.mk
include python_shim/python.mk

deps:
	$(Q)sh tests/install-deps.sh

demo: deps all test-progs
	$(Q)sh tests/demo.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build

.PHONY: all deps demo format clean FORCE
