# SPDX-License-Identifier: MIT
# Fuzzing the NCCL log parser. `make fuzz-nccl-log` runs libFuzzer (clang)
# for FUZZ_TIME seconds on tests/fuzz/corpus/nccl_log; `make
# test-fuzz-nccl` (part of make test) replays the corpus with the normal
# compiler through tests/fuzz/replay.c (one process per input, the timeout
# and RSS limit of fuzz.mk), so it runs everywhere.
FUZZ_TIME ?= 60
NCCL_FUZZ_SRC := tests/fuzz/fuzz_nccl_log.c tools/read/nccl_log.c

build/fuzz/fuzz_nccl_log: $(NCCL_FUZZ_SRC) tools/read/nccl_log.h
	@mkdir -p $(dir $@)
	$(Q)clang -g -O1 -fsanitize=fuzzer,address,undefined -Itools -D_GNU_SOURCE $(NCCL_FUZZ_SRC) -o $@

build/tests/fuzz/replay_nccl_log: $(NCCL_FUZZ_SRC) tests/fuzz/replay.c tools/read/nccl_log.h
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(TOOL_CPPFLAGS) $(CFLAGS) $(FUZZ_SAN) $(NCCL_FUZZ_SRC) tests/fuzz/replay.c -o $@ $(LDFLAGS)

fuzz-nccl-log: build/fuzz/fuzz_nccl_log
	build/fuzz/fuzz_nccl_log -max_total_time=$(FUZZ_TIME) -max_len=4096 tests/fuzz/corpus/nccl_log

test-fuzz-nccl: build/tests/fuzz/replay_nccl_log
	@echo "  FUZZ    nccl_log: replaying $$(ls tests/fuzz/corpus/nccl_log | wc -l) inputs (RSS limit $(FUZZ_REPLAY_RSS_MB) MB)"
	$(Q)build/tests/fuzz/replay_nccl_log -timeout=20 -rss_limit_mb=$(FUZZ_REPLAY_RSS_MB) tests/fuzz/corpus/nccl_log/*

.PHONY: fuzz-nccl-log test-fuzz-nccl
