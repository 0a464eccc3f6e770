# SPDX-License-Identifier: MIT
# GPU smoke test (tests/gpu): a CUDA program built with nvcc, traced and
# checked by check.py on a real GPU. `make test` only builds it (so that
# it keeps compiling); `make test-gpu` runs it, and says "skipped: no GPU"
# (exit 0) where there is none.
NVCC ?= $(CUDA_HOME)/bin/nvcc
GPU_SMOKE := build/tests/gpu/gpu_smoke

$(GPU_SMOKE): tests/gpu/gpu_smoke.cu
	@mkdir -p $(dir $@)
	@if [ -x "$(NVCC)" ]; then \
		$(if $(Q),echo "  NVCC    $<";) \
		$(NVCC) -O2 -std=c++17 -isystem $(CUDA_HOME)/include $< -o $@ -ldl; \
	else \
		echo "  NVCC    skipped: no nvcc at $(NVCC); the GPU smoke test is not built"; \
	fi

test-gpu-build: $(GPU_SMOKE)

test-gpu: all test-gpu-build
	$(Q)$(PYTHON) tests/gpu/check.py

test: test-gpu-build

.PHONY: test-gpu test-gpu-build
