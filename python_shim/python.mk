# SPDX-License-Identifier: MIT
# The Python package (python_shim/): its C extension built in place, so that
# PYTHONPATH=python_shim works from the source tree (the tests do this), and
# `make wheel`, the package as pip builds it (python_shim/setup.py runs this
# Makefile for the library and the program it carries).
PY_EXT_SUFFIX := $(shell $(PYTHON) -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))" 2>/dev/null)
PY_INCLUDE := $(shell $(PYTHON) -c "import sysconfig; print(sysconfig.get_paths()['include'])" 2>/dev/null)
PY_EXT := python_shim/cuptrace/_cuptrace$(PY_EXT_SUFFIX)
PY_EXT_SRC := python_shim/cuptrace/_cuptrace.c python_shim/cuptrace/_torch.c libtrace/config/config.c libtrace/config/pattern.c
# The extension sees the configuration parser and the public headers (the
# C++ torch modules: include/cuptrace/torch_abi.h), nothing else of the tree
# (docs/LAYOUT.md; tests/layers/check_layers.py reads these flags).
PY_CPPFLAGS := -D_GNU_SOURCE -Ilibtrace/config -Iinclude

# SAN=...: the extension with the sanitizers too (make test-san runs the
# Python tests with it; the interpreter then needs the sanitizer's runtime
# preloaded, as tests/integration/pyshim.py does). build/.variant: switching
# SAN rebuilds it.
$(PY_EXT): $(PY_EXT_SRC) python_shim/cuptrace/_cuptrace.h libtrace/config/config.h libtrace/config/pattern.h build/.variant
	@$(if $(Q),echo "  PYEXT   $@")
	$(Q)$(CC) -shared -fPIC -std=gnu11 -O2 -Wall -Wextra -Werror -Wno-missing-field-initializers \
		-Wno-cast-function-type -fvisibility=hidden $(PY_CPPFLAGS) -isystem $(PY_INCLUDE) \
		$(SANFLAGS) $(PY_EXT_SRC) -o $@ -ldl -lm

# The C++ modules for torch, cuptrace._torchops (the torch source's operator
# observer) and cuptrace._torchhooks (the backward ranges' hooks on autograd
# nodes), built in place against the headers of the torch $(PYTHON) imports
# by python_shim/cuptrace/_torchbuild.py, the builder the package uses at
# run time for another torch (python_shim/README.md); where that torch has
# none, nothing is built here and the package builds them at first use. The
# stamp keeps make from importing torch on every run.
PY_TORCH_MODS := _torchops _torchhooks
PY_TORCH_SRC := $(wildcard python_shim/cuptrace/_torchops*.cpp python_shim/cuptrace/_torchops*.c python_shim/cuptrace/_torchops.h \
	python_shim/cuptrace/_torchhooks.cpp python_shim/cuptrace/_torchhooks.h) \
	python_shim/cuptrace/_torchbuild.py include/cuptrace/torch_abi.h
PY_TORCH_STAMP := build/torchext.stamp

$(PY_TORCH_STAMP): $(PY_TORCH_SRC) build/.variant
	@$(if $(Q),echo "  PYEXT   $(PY_TORCH_MODS:%=python_shim/cuptrace/%$(PY_EXT_SUFFIX))")
	$(Q)mkdir -p build
	$(Q)$(PYTHON) python_shim/cuptrace/_torchbuild.py --prebuild python_shim/cuptrace \
		--cflags "-Wall -Wextra -Werror $(SANFLAGS)"; rc=$$?; \
	if [ $$rc = 1 ]; then echo "  (no torch C++ headers for $(PYTHON): the package builds them at first use)"; \
	elif [ $$rc != 0 ]; then exit $$rc; fi
	$(Q)touch $@

pyext: $(PY_EXT) $(PY_TORCH_STAMP)

test-progs: pyext

wheel: all
	$(Q)mkdir -p build/wheel
	$(Q)$(PYTHON) -m pip wheel -q --no-build-isolation --no-deps --no-index -w build/wheel ./python_shim
	@ls build/wheel/cuptrace-*.whl

.PHONY: pyext wheel

# The Python figures alone (bench/figures/python.py); `make bench` runs them
# with the others, once the extension is built.
bench-python: all pyext bench-progs
	$(Q)$(PYTHON) bench/figures/python.py

# The torch source's figures alone (bench/figures/torch_ops.py, torch_train.py).
bench-torch-ops: all pyext build/bench/bench_torch
	$(Q)$(PYTHON) bench/figures/torch_ops.py
	$(Q)$(PYTHON) bench/figures/torch_train.py

bench: pyext

.PHONY: bench-python bench-torch-ops

clean: clean-python
clean-python:
	rm -rf $(PY_EXT) $(PY_TORCH_MODS:%=python_shim/cuptrace/%$(PY_EXT_SUFFIX)) \
		$(PY_TORCH_MODS:%=python_shim/cuptrace/%.version) $(PY_TORCH_STAMP) build/torchhooks.stamp \
		python_shim/build python_shim/cuptrace.egg-info

.PHONY: clean-python
