# SPDX-License-Identifier: MIT
# cuptrace build. `make` builds build/lib/libcuptrace.so and build/bin/cuptrace.
#   make test     all tests (installs missing Debian packages first)
#   make demo     traces the example program and shows the result
#   make bench    benchmarks; writes their table to bench/RESULTS.md
# Switches: V=1 verbose, DEBUG=1, SAN=address,undefined or SAN=thread,
#           CUDA_HOME (default /usr/local/cuda).

# The one place the version is written: the library, the tool and the
# Python package (python_shim/setup.py reads this line) take it from here.
CT_VERSION := 0.1.0

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
# Each binary sees only the folders it may use (docs/LAYOUT.md): the shared
# file format and configuration by name, the library its own folders and the
# CUDA headers, the tools their own folders.
SHARED_CPPFLAGS := -Iinclude -Ilibtrace/format -Ilibtrace/config -D_GNU_SOURCE -DCT_VERSION='"$(CT_VERSION)"'
LIB_CPPFLAGS := $(SHARED_CPPFLAGS) -Ilibtrace -Ilibtrace/sources -isystem $(CUDA_HOME)/include
TOOL_CPPFLAGS := $(SHARED_CPPFLAGS) -Itools
CFLAGS := -std=gnu11 $(OPT) -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wno-missing-field-initializers -fPIC $(SANFLAGS) $(EXTRA_CFLAGS)
LDFLAGS := $(SANFLAGS)

LIB := build/lib/libcuptrace.so
TOOL := build/bin/cuptrace
# The mpi source's MPI_* wrappers, a library of their own that `cuptrace run
# -t mpi` preloads beside LIB (libtrace/mpi/mpiw.h): without mpi, nothing of
# it is in the process. It links no MPI and no part of LIB.
MPI_LIB := build/lib/libcuptrace-mpi.so
MPIW_CPPFLAGS := -Iinclude -Ilibtrace/mpi -D_GNU_SOURCE
MPIW_SRC := $(wildcard libtrace/mpi/*.c)
MPIW_OBJ := $(patsubst %.c,$(OBJ)/%.o,$(MPIW_SRC))
$(MPIW_OBJ): CPPFLAGS := $(MPIW_CPPFLAGS)

# The file format and configuration, shared by the library and the tools:
# the library encodes, the tools decode.
CONFIG_SRC := $(wildcard libtrace/config/*.c)
SCHEMA_SRC := libtrace/format/schema.c libtrace/format/schema_cupti.c libtrace/format/schema_nccl.c \
	libtrace/format/schema_torch.c libtrace/format/schema_mpi.c libtrace/format/strtab.c
SHARED_LIB_SRC := $(CONFIG_SRC) $(SCHEMA_SRC) libtrace/format/enc.c libtrace/format/peek.c
SHARED_TOOL_SRC := $(CONFIG_SRC) $(SCHEMA_SRC) libtrace/format/dec.c libtrace/format/dec_block.c
LIB_OWN_SRC := $(wildcard libtrace/*.c libtrace/sources/*.c)
TOOL_OWN_SRC := $(wildcard tools/*.c tools/*/*.c tools/*/*/*.c)
LIB_SRC := $(LIB_OWN_SRC) $(SHARED_LIB_SRC)
TOOL_SRC := $(TOOL_OWN_SRC) $(SHARED_TOOL_SRC)

LIB_OBJ := $(patsubst %.c,$(OBJ)/%.o,$(LIB_SRC))
TOOL_OBJ := $(patsubst %.c,$(OBJ)/%.o,$(TOOL_SRC))
SHARED_OBJ := $(patsubst %.c,$(OBJ)/%.o,$(sort $(SHARED_LIB_SRC) $(SHARED_TOOL_SRC)))
$(patsubst %.c,$(OBJ)/%.o,$(LIB_OWN_SRC)): CPPFLAGS := $(LIB_CPPFLAGS)
$(patsubst %.c,$(OBJ)/%.o,$(TOOL_OWN_SRC)): CPPFLAGS := $(TOOL_CPPFLAGS)
$(SHARED_OBJ): CPPFLAGS := $(SHARED_CPPFLAGS)

# zstd is linked in statically and hidden so that the traced program's own
# zstd (PyTorch ships one) can never clash with ours.
ZSTD_STATIC := $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/libzstd.a /usr/lib/aarch64-linux-gnu/libzstd.a /usr/lib64/libzstd.a /usr/lib/libzstd.a))
LIB_ZSTD := $(if $(ZSTD_STATIC),$(ZSTD_STATIC),-lzstd)

all: $(LIB) $(TOOL) $(MPI_LIB)

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

$(MPI_LIB): $(MPIW_OBJ) build/.variant libtrace/mpi/exports.map
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -o $@ $(MPIW_OBJ) $(LDFLAGS) -Wl,--version-script=libtrace/mpi/exports.map \
		-Wl,-z,defs -Wl,-z,now -lpthread -ldl

$(TOOL): $(TOOL_OBJ) build/.variant
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $(TOOL_OBJ) $(LDFLAGS) -lsqlite3 -lzstd -lz -lpthread -ldl -lm -lstdc++

-include $(LIB_OBJ:.o=.d) $(TOOL_OBJ:.o=.d) $(MPIW_OBJ:.o=.d)

include tests/tests.mk
include bench/bench.mk
-include bench/nccl.mk
include bench/mpi.mk
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
