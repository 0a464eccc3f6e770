# SPDX-License-Identifier: MIT
# Fuzzing of every reader entry point: a corrupt or crafted file gives a
# clear error, never a crash, and `make test` replays the corpus.
# Targets (tests/fuzz/):
#   fuzz_file    any bytes as a .ctr file (ct_file_open, ct_file_next)
#   fuzz_header  any bytes as header TLV fields (ct_header_parse)
#   fuzz_items   any bytes as block contents, wrapped in valid zstd blocks
#                (reaches the item decoder, which checksums hide from fuzz_file)
#
#   make test-fuzz               replays tests/fuzz/corpus/<target>/* once
#                                (replay.c, any compiler, ASan+UBSan, one
#                                process per input with an RSS limit)
#   make fuzz FUZZ_SECONDS=60    fuzzes each target that long, adding new
#                                inputs to its corpus directory
#   make fuzz-merge              shrinks each corpus to the inputs that add
#                                coverage (run before committing a corpus)
#   make fuzz-corpus             rewrites the seed files from gen_corpus.c
# A crash found by `make fuzz` lands in build/fuzz/crash-<target>-*; once it
# is fixed, copy it into the target's corpus as a regression input.

CLANG ?= clang
FUZZ_SECONDS ?= 60
# Memory limits: a reader's memory is bounded by the file's size (16 MB +
# 16x the file for its tables, plus one block's buffers); more is a finding.
# Fuzzing adds libFuzzer's and ASan's own (quarantine, corpus) to the RSS.
FUZZ_RSS_MB ?= 512
FUZZ_REPLAY_RSS_MB ?= 256
FUZZ_MALLOC_MB ?= 256
FUZZ_OUT := build/fuzz
FUZZ_TARGETS := fuzz_file fuzz_header fuzz_items
FUZZ_CORPUS := tests/fuzz/corpus
SCHEMA_SRC := libtrace/format/schema.c libtrace/format/schema_cupti.c libtrace/format/schema_nccl.c \
	libtrace/format/schema_torch.c libtrace/format/schema_mpi.c
FUZZ_DEC_SRC := libtrace/format/dec.c libtrace/format/dec_block.c libtrace/format/peek.c $(SCHEMA_SRC)
FUZZ_DEPS := $(FUZZ_DEC_SRC) tests/fuzz/read_all.h libtrace/format/dec.h libtrace/format/dec_int.h libtrace/format/varint.h \
	libtrace/format/crc32c.h libtrace/format/peek.h \
	include/cuptrace/format.h tests/fuzz/fuzz.mk
FUZZ_CPPFLAGS := -std=gnu11 -Iinclude -Ilibtrace/format -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# libFuzzer binaries (clang): fuzzing and replay.
$(FUZZ_OUT)/lf/%: tests/fuzz/%.c $(FUZZ_DEPS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CLANG   $<")
	$(Q)$(CLANG) $(FUZZ_CPPFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) $< $(FUZZ_DEC_SRC) -o $@ -lzstd

# Replay-only binaries (any C compiler): the entry point plus a main().
$(FUZZ_OUT)/replay/%: tests/fuzz/%.c tests/fuzz/replay.c $(FUZZ_DEPS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (replay)")
	$(Q)$(CC) $(FUZZ_CPPFLAGS) $(FUZZ_SAN) $< tests/fuzz/replay.c $(FUZZ_DEC_SRC) -o $@ -lzstd

fuzz-build-lf: $(addprefix $(FUZZ_OUT)/lf/,$(FUZZ_TARGETS))
fuzz-build-replay: $(addprefix $(FUZZ_OUT)/replay/,$(FUZZ_TARGETS))

# The replay runs each input in a process of its own and fails on a crash,
# a hang or a peak RSS over FUZZ_REPLAY_RSS_MB: a corpus input that blows
# memory up is a finding like a crash.
test-fuzz: fuzz-build-replay
	$(Q)set -e; \
	for t in $(FUZZ_TARGETS); do \
		n=$$(ls $(FUZZ_CORPUS)/$$t | wc -l); \
		echo "  FUZZ    $$t: replaying $$n inputs (RSS limit $(FUZZ_REPLAY_RSS_MB) MB)"; \
		if ! $(FUZZ_OUT)/replay/$$t -timeout=20 -rss_limit_mb=$(FUZZ_REPLAY_RSS_MB) \
				$(FUZZ_CORPUS)/$$t/* > $(FUZZ_OUT)/$$t.log 2>&1; then \
			tail -40 $(FUZZ_OUT)/$$t.log; echo "  FUZZ    $$t FAILED (log: $(FUZZ_OUT)/$$t.log)"; exit 1; \
		fi; \
	done

fuzz: fuzz-build-lf
	$(Q)set -e; for t in $(FUZZ_TARGETS); do \
		echo "  FUZZ    $$t for $(FUZZ_SECONDS) s"; \
		$(FUZZ_OUT)/lf/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=20 \
			-rss_limit_mb=$(FUZZ_RSS_MB) -malloc_limit_mb=$(FUZZ_MALLOC_MB) \
			-dict=tests/fuzz/ctr.dict -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_OUT)/crash-$$t- $(FUZZ_CORPUS)/$$t; \
	done

fuzz-merge: fuzz-build-lf
	$(Q)set -e; for t in $(FUZZ_TARGETS); do \
		rm -rf $(FUZZ_OUT)/merge-$$t; mkdir -p $(FUZZ_OUT)/merge-$$t; \
		$(FUZZ_OUT)/lf/$$t -merge=1 $(FUZZ_OUT)/merge-$$t $(FUZZ_CORPUS)/$$t 2>&1 | tail -1; \
		for f in $(FUZZ_CORPUS)/$$t/*; do \
			case $$f in *.ctr|*.bin|*/crash-*) ;; *) \
				[ -e $(FUZZ_OUT)/merge-$$t/$$(basename $$f) ] || rm -f $$f;; esac; \
		done; \
	done

$(FUZZ_OUT)/gen_corpus: tests/fuzz/gen_corpus.c libtrace/format/enc.c libtrace/format/strtab.c \
		$(SCHEMA_SRC) libtrace/format/enc.h libtrace/format/crc32c.h
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(FUZZ_CPPFLAGS) $< libtrace/format/enc.c libtrace/format/strtab.c \
		$(SCHEMA_SRC) -o $@ -lzstd

fuzz-corpus: $(FUZZ_OUT)/gen_corpus
	$(Q)mkdir -p $(FUZZ_CORPUS) && $< $(FUZZ_CORPUS)

.PHONY: test-fuzz fuzz fuzz-merge fuzz-corpus fuzz-build-lf fuzz-build-replay
