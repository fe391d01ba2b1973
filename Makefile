# kgen: generate, build and test specialized normalization kernels.
#   make demo   generate specs/qwen3-8b.lua, build it, run every variant
#   make test   the whole test suite (installs missing Debian packages)
#   make clean  remove out/ and build/
# Parts of the suite live in mk/*.mk fragments; each appends its test
# targets to TEST_TARGETS.

SHELL := /bin/bash
KGEN := gen/kgen
OUT := out
BUILD := build
CC ?= cc
CSTD := -std=c11
WARN := -Wall -Wextra -Werror
# a pack's files also under warnings embedding builds often add
PACK_WARN := $(WARN) -Wshadow -Wcast-align -Wdouble-promotion
CFLAGS ?= -O2 -g
CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)
GEN_DEPS := $(wildcard gen/*.lua gen/*/*.lua gen/kgen templates/*.tpl templates/*/*.tpl runtime/*.c runtime/*.h)
RUNTIME_SRC := runtime/kg_cpu.c runtime/kg_dispatch.c
DEMO_SPEC := specs/qwen3-8b.lua
DEMO_NAME := qwen3_8b

TEST_TARGETS :=
CLEAN_FILES :=

.PHONY: all deps demo test clean lint busted test-runtime test-kernels test-kernels-nt test-kernels-nobf16 test-kernels-lf \
        test-packs-compile
.DELETE_ON_ERROR:

all: $(OUT)/$(DEMO_NAME)/$(DEMO_NAME).h

# Why: every entry point installs what is missing first (apt-get as root,
# otherwise the exact command is printed).
deps:
	@sh .ci/deps.sh

$(BUILD):
	@mkdir -p $(BUILD)

# --- packs -----------------------------------------------------------------
$(OUT)/$(DEMO_NAME)/$(DEMO_NAME).h: $(DEMO_SPEC) $(GEN_DEPS)
	$(KGEN) $(DEMO_SPEC) -o $(OUT)

$(OUT)/kgt/kgt.h: tests/specs/kgt.lua $(GEN_DEPS)
	$(KGEN) tests/specs/kgt.lua -o $(OUT)

# --- demo ------------------------------------------------------------------
$(BUILD)/demo: tests/demo.c tests/ref.c tests/ref.h $(OUT)/$(DEMO_NAME)/$(DEMO_NAME).h | $(BUILD)
	$(CC) $(CSTD) $(CFLAGS) $(WARN) -I$(OUT)/$(DEMO_NAME) -Itests \
	  -DKG_PACK_HEADER='"$(DEMO_NAME).h"' -DKG_PACK_VARIANTS=$(DEMO_NAME)_variants \
	  -DKG_PACK_NUM=$(DEMO_NAME)_num_variants \
	  tests/demo.c tests/ref.c $(OUT)/$(DEMO_NAME)/*.c -lm -o $@

# a second table: one kernel per op x dtype (f32, bf16, f16) from the
# dispatch-proof pack, so the demo shows every op and storage type
$(BUILD)/demo_ops: tests/demo.c tests/ref.c tests/ref.h $(OUT)/kgd/kgd.h | $(BUILD)
	$(CC) $(CSTD) $(CFLAGS) $(WARN) -I$(OUT)/kgd -Itests \
	  -DKG_PACK_HEADER='"kgd.h"' -DKG_PACK_VARIANTS=kgd_variants -DKG_PACK_NUM=kgd_num_variants \
	  tests/demo.c tests/ref.c $(OUT)/kgd/*.c -lm -o $@

demo: deps $(BUILD)/demo $(BUILD)/demo_ops
	@echo "== $(DEMO_SPEC): pack $(DEMO_NAME) =="
	$(BUILD)/demo
	@echo "== every op x dtype (tests/specs/kgd.lua) =="
	$(BUILD)/demo_ops

# --- tests -----------------------------------------------------------------
lint:
	luacheck -q gen tests/lua
	@echo "luacheck: clean"

busted:
	busted --lua=luajit tests/lua
	busted --lua=lua5.4 tests/lua

$(BUILD)/test_runtime: tests/test_runtime.c $(RUNTIME_SRC) runtime/*.h | $(BUILD)
	$(CC) $(CSTD) $(CFLAGS) $(WARN) -Iruntime $(CHECK_CFLAGS) tests/test_runtime.c \
	  $(RUNTIME_SRC) $(CHECK_LIBS) -lm -o $@

test-runtime: $(BUILD)/test_runtime
	$(BUILD)/test_runtime

KT_SRC = tests/test_kernels.c tests/ref.c $(wildcard tests/kt_*.c)
$(BUILD)/test_kernels: $(KT_SRC) $(wildcard tests/*.h) $(OUT)/kgt/kgt.h | $(BUILD)
	$(CC) $(CSTD) $(CFLAGS) $(WARN) -I$(OUT)/kgt -Itests $(CHECK_CFLAGS) $(KT_SRC) \
	  $(OUT)/kgt/*.c $(CHECK_LIBS) -lm -o $@

test-kernels: $(BUILD)/test_kernels
	$(BUILD)/test_kernels

# Why: the non-temporal row path (outputs >= 16 MiB, with the next row's
# prefetch) is reached by no test-sized call; the same suite built with a
# 1-byte limit sends every aligned out-of-place RMSNorm/LayerNorm call there,
# and with a 2-row limit for the aligned copy of weights off line alignment
# (KG_WALIGN_ROWS) KT-LINES' 5- and 9-row calls take that copy.  KGEN_STREAM_RELOAD=1
# sends KT-QKN-LONG's AVX-512 calls of f32 heads of 256 through the rows
# loaded twice (kg_cpu_stream_reload) on any AVX-512 CPU, and KT-LINES runs
# LayerNorm's line-frame rows both in pairs and one at a time
# (KGEN_LN_FRAME_PAIRS, kg_cpu_ln_frame_pairs).  KGEN_NT_SPLIT=1 reads
# and writes AVX-512 RMSNorm rows as two streams on any AVX-512 CPU
# (kg_cpu_nt_split, kg_cpu_nt_split4k); KT-LINES and KT-RMS-ROWS run both
# ways, and KT-RMS-ROWS with this CPU's own choice, and both with
# KGEN_NT_SPLIT=4k (Zen 5's mix on any AVX-512 CPU: streams only for rows
# in parts 3-4 KiB apart, aligned or in the line frame); KT-LN-ROWS
# (LayerNorm's pairs, in halves under 1) once more under 0.
# KGEN_QK_PIPE=1 sends KT-QKN-LONG's AVX-512 bf16 calls through the
# pipeline of heads (kg_cpu_qk_pipe, gen/kernels/pipe.lua); it runs both
# ways.
$(BUILD)/test_kernels_nt: $(KT_SRC) $(wildcard tests/*.h) $(OUT)/kgt/kgt.h | $(BUILD)
	$(CC) $(CSTD) $(CFLAGS) $(WARN) -DKG_NT_BYTES=1 -DKG_WALIGN_ROWS=2 -I$(OUT)/kgt -Itests $(CHECK_CFLAGS) $(KT_SRC) \
	  $(OUT)/kgt/*.c $(CHECK_LIBS) -lm -o $@

test-kernels-nt: $(BUILD)/test_kernels_nt
	KGEN_STREAM_RELOAD=1 KGEN_LN_FRAME_PAIRS=1 KGEN_NT_SPLIT=1 KGEN_QK_PIPE=1 $(BUILD)/test_kernels_nt
	KGEN_LN_FRAME_PAIRS=0 KGEN_NT_SPLIT=0 KT_ONLY=KT-LINES $(BUILD)/test_kernels_nt
	KGEN_NT_SPLIT=0 KT_ONLY=KT-RMS-ROWS $(BUILD)/test_kernels_nt
	KGEN_NT_SPLIT=0 KT_ONLY=KT-LN-ROWS $(BUILD)/test_kernels_nt
	env -u KGEN_NT_SPLIT KT_ONLY=KT-RMS-ROWS $(BUILD)/test_kernels_nt
	KGEN_NT_SPLIT=4k KT_ONLY=KT-LINES $(BUILD)/test_kernels_nt
	KGEN_NT_SPLIT=4k KT_ONLY=KT-RMS-ROWS $(BUILD)/test_kernels_nt
	KGEN_QK_PIPE=0 KT_ONLY=KT-QKN-LONG $(BUILD)/test_kernels_nt

# Why: where the CPU has AVX512_BF16, test-kernels runs the vdpbf16ps twin
# of the avx512 bf16 RMSNorm kernels for every call; the same suite with
# the extension turned off checks their plain bodies.
test-kernels-nobf16: $(BUILD)/test_kernels
	KGEN_AVX512_BF16=0 $(BUILD)/test_kernels

# Why: whether avx512 bf16 QK-norm heads off line alignment take the line
# frame depends on the CPU's vendor (kg_cpu_bf16_line_frame); KT-LINES
# runs both ways on any AVX-512 machine, and with both sum bodies.
test-kernels-lf: $(BUILD)/test_kernels
	@set -e; for lf in 0 1; do for dot in 0 1; do \
	  KGEN_BF16_LINE_FRAME=$$lf KGEN_AVX512_BF16=$$dot KT_ONLY=KT-LINES \
	    $(BUILD)/test_kernels > $(BUILD)/kt_lf.log 2>&1 || { cat $(BUILD)/kt_lf.log; exit 1; }; \
	  if ! grep -q '^avx512 bf16 QK-norm' $(BUILD)/kt_lf.log; then \
	    echo "SKIPPED test-kernels-lf: this CPU runs no avx512 variant, and the variables change nothing else"; \
	    exit 0; fi; \
	  echo "test-kernels-lf: KGEN_BF16_LINE_FRAME=$$lf KGEN_AVX512_BF16=$$dot:" \
	    $$(grep -E '^(avx512 bf16 QK|kgt:)' $(BUILD)/kt_lf.log) $$(grep -oE '[0-9]+%: Checks: .*' $(BUILD)/kt_lf.log); \
	done; done

# Why: the pack's promise to embedders: every file compiles warning-free
# under gcc and clang (-Wall -Wextra -Wshadow -Wcast-align
# -Wdouble-promotion), and with a plain `cc -O2 -c` (no target flags).
# And no masked vdpbf16ps in the objects: the generator writes none, as
# GCC gives its mask 8 bits and may load it with kmovb, dropping lanes
# 8-15 (line_terms in gen/kernels/lines.lua).  And no vcvtps2ph storing
# to memory in clang's AVX2 objects: clang folds every f16 store into that
# form (half the throughput on a Zen 3 core) unless kgi_avx2_to_f16's
# KG_REG stops it (isa/avx2.lua).  gcc folds a few, in RMSNorm and
# LayerNorm row loops, where it measured no slower (RESULTS run 38).
# And no vpand reading data memory (not the stack, not a constant) in
# gcc's x86 objects: gcc reads each bf16 vector a second time for the
# and of its split unless KG_ONE_LOAD stops it (isa_file.c.tpl; run 39).
test-packs-compile: $(OUT)/kgt/kgt.h $(OUT)/$(DEMO_NAME)/$(DEMO_NAME).h | $(BUILD)
	@set -e; for p in $(OUT)/kgt $(OUT)/$(DEMO_NAME); do \
	  for f in $$p/*.c; do \
	    for c in gcc clang; do $$c $(CSTD) -O2 $(PACK_WARN) -c $$f -o $(BUILD)/cc_check.o; \
	      if objdump -d $(BUILD)/cc_check.o | grep -q 'vdpbf16ps.*{%k'; then \
	        echo "$$f ($$c): a masked vdpbf16ps (see line_terms in gen/kernels/lines.lua)"; exit 1; fi; \
	      case $$c$$f in clang*_avx2.c) if objdump -d $(BUILD)/cc_check.o | grep -qE 'vcvtps2ph +[^ ]*,%ymm[0-9]+,[^%]'; then \
	        echo "$$f ($$c): vcvtps2ph storing to memory (see kgi_avx2_to_f16 in gen/isa/avx2.lua)"; exit 1; fi ;; esac; \
	      case $$c$$f in gcc*_avx2.c | gcc*_avx512.c) if objdump -d $(BUILD)/cc_check.o | grep -qE 'vpand[dq]? +[-0-9a-fx]*\(%(r[0-9]+|r[a-d]x|r[sd]i)[,)]'; then \
	        echo "$$f ($$c): vpand reading a vector again from memory (see KG_ONE_LOAD in templates/isa_file.c.tpl)"; exit 1; fi ;; esac; \
	    done; \
	    cc -O2 -c $$f -o $(BUILD)/cc_check.o; \
	  done; \
	done; echo "packs compile: gcc, clang -Wall -Wextra -Wshadow -Wcast-align -Wdouble-promotion -Werror and plain cc -O2 -c, no masked vdpbf16ps, no vcvtps2ph to memory in clang's AVX2, no second bf16 loads in gcc's x86: ok"

TEST_TARGETS += lint busted test-runtime test-kernels test-kernels-nt test-kernels-nobf16 test-kernels-lf test-packs-compile

-include $(sort $(wildcard mk/*.mk))

# Why: the suite's targets are independent (each writes its own files in
# build/ and its own packs in out/), so they run as many at once as the
# machine has cores; -O keeps each target's output together.  KG_JOBS=1
# runs them one after another.
KG_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
test: deps
	@$(MAKE) --no-print-directory -j$(KG_JOBS) -O $(TEST_TARGETS)

clean:
	rm -rf $(OUT) $(BUILD) $(CLEAN_FILES)
