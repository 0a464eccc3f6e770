# SPDX-License-Identifier: MIT
# The CUPTI simulator and the programs that drive it (tests/cupti_sim).
# Test-only: nothing here is linked into libcuptrace.so or the tools.
SIM_DIR := tests/cupti_sim
SIM_OUT := build/tests/cupti_sim
SIM_SRC := $(SIM_DIR)/cupti_api.c $(SIM_DIR)/driver.c $(SIM_DIR)/sync.c $(SIM_DIR)/names.c
SIM_HDR := $(SIM_DIR)/sim.h $(SIM_DIR)/cupti_sim.h $(SIM_DIR)/driver.h
SIM_LIB := $(SIM_OUT)/libcupti_sim.so
# The same without what CUPTI before 12.4/13 lacks (timestamp callback,
# cuptiSubscribe_v2, per-call enabling); preloaded in place of the above.
SIM_OLD := $(SIM_OUT)/old/libcupti_sim.so
SIM_PROGS := $(SIM_OUT)/sim_train $(SIM_OUT)/nccl_harness_sim $(SIM_OUT)/torch_ops_sim

$(SIM_LIB): $(SIM_SRC) $(SIM_HDR)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(TEST_CFLAGS) -fPIC -shared -fvisibility=hidden -Wl,-soname,libcupti_sim.so \
		-o $@ $(SIM_SRC) -ldl

$(SIM_OLD): $(SIM_SRC) $(SIM_HDR)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(TEST_CFLAGS) -DSIM_OLD_CUPTI -fPIC -shared -fvisibility=hidden \
		-Wl,-soname,libcupti_sim.so -o $@ $(SIM_SRC) -ldl

$(SIM_OUT)/%: $(SIM_DIR)/%.c $(SIM_LIB) tests/progs/truth.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(TEST_CFLAGS) $< -o $@ -L$(SIM_OUT) -lcupti_sim -Wl,-rpath,'$$ORIGIN' -ldl -lm

# The NCCL harness launching its kernels on the simulated GPU.
$(SIM_OUT)/nccl_harness_sim: tests/progs/nccl_harness.c $(SIM_LIB) $(wildcard tests/progs/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(TEST_CFLAGS) -DHARNESS_SIM $< -o $@ -L$(SIM_OUT) -lcupti_sim -Wl,-rpath,'$$ORIGIN' -ldl -lm

# torch_ops launching kernels inside its operators on the simulated GPU.
$(SIM_OUT)/torch_ops_sim: tests/progs/torch_ops.c $(SIM_LIB) $(wildcard tests/progs/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(TEST_CFLAGS) -DTORCH_SIM $< -o $@ -L$(SIM_OUT) -lcupti_sim -Wl,-rpath,'$$ORIGIN' -ldl -lm

test-progs: $(SIM_LIB) $(SIM_OLD) $(SIM_PROGS)

# The record-translation unit test walks buffers with the real libcupti
# (no GPU needed for that); without a toolkit CUPTI it says it skipped.
CUPTI_REAL_DIR := $(firstword $(patsubst %/libcupti.so,%,$(wildcard \
	$(CUDA_HOME)/lib64/libcupti.so $(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so)))
build/tests/unit/test_cupti_records: tests/unit/test_cupti_records.c $(UNIT_OBJ) tests/unit/check.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(LIB_CPPFLAGS) $(CFLAGS) $(if $(CUPTI_REAL_DIR),-DHAVE_REAL_CUPTI) $< $(UNIT_OBJ) -o $@ \
		$(LDFLAGS) $(if $(CUPTI_REAL_DIR),-L$(CUPTI_REAL_DIR) -lcupti -Wl$(comma)-rpath$(comma)$(CUPTI_REAL_DIR)) \
		-lzstd -lpthread -ldl -lm
