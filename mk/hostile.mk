# mk/hostile.mk: hostile input, fuzzing, sanitizers, size_t edge cases.
#   make fuzz          every libFuzzer target (one per op, clang
#                      -fsanitize=fuzzer,address,undefined) for FUZZ_SECONDS
#                      each over pack kgf (tests/fuzz/fuzz.lua), then
#                      FUZZ_SPEC_RUNS spec-loader runs (tests/fuzz/spec_fuzz.lua);
#                      new corpus units stay in build/fuzz/, crashes too
#   make fuzz-short    the same, a few seconds per target (in TEST_TARGETS)
#   make sanitize      runtime, packs and the Check suites built with
#                      -fsanitize=address,undefined -fno-sanitize-recover=all
#                      and run clean; the runtime suite under valgrind memcheck
#                      (in TEST_TARGETS)
#   make test-edge     tests/test_edge.c: rows beyond 4 GiB of byte offset in a
#                      sparse mapping (in TEST_TARGETS)
# The hostile spec corpus (tests/specs/bad/) runs in `make busted`.

.PHONY: fuzz fuzz-short fuzz-build fuzz-spec sanitize test-edge

FUZZ_PACK := kgf
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SHORT_SECONDS ?= 3
FUZZ_SPEC_RUNS ?= 300
FUZZ_SPEC_SEED ?= 1
FUZZ_OPS := rmsnorm qk_norm layernorm
FUZZ_FLAGS := -std=c11 -g -O1 -Wall -Wextra -Werror -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_RUN_FLAGS = -max_len=4096 -timeout=30 -rss_limit_mb=2048 -print_final_stats=0 \
  -artifact_prefix=$(BUILD)/fuzz/
SAN_CC ?= clang
SAN_FLAGS := -std=c11 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
  -fno-sanitize-recover=all
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
VALGRIND := valgrind --quiet --error-exitcode=1 --leak-check=full \
  --errors-for-leak-kinds=definite,indirect

$(OUT)/$(FUZZ_PACK)/$(FUZZ_PACK).h: tests/fuzz/fuzz.lua $(GEN_DEPS)
	$(KGEN) tests/fuzz/fuzz.lua -o $(OUT)

# --- fuzzing ------------------------------------------------------------------
$(BUILD)/fuzz:
	@mkdir -p $@

# Why: the pack is compiled once (coverage + sanitizers, no libFuzzer main),
# then linked into one target per op built from one source (-DFUZZ_OP is
# enum kg_op).
FUZZ_PACK_FLAGS := $(subst fuzzer,fuzzer-no-link,$(FUZZ_FLAGS))
$(BUILD)/fuzz/libkgf.a: $(OUT)/$(FUZZ_PACK)/$(FUZZ_PACK).h | $(BUILD)/fuzz
	@rm -rf $(BUILD)/fuzz/obj && mkdir -p $(BUILD)/fuzz/obj
	set -e; for f in $(OUT)/$(FUZZ_PACK)/*.c; do \
	  $(FUZZ_CC) $(FUZZ_PACK_FLAGS) -c $$f -o $(BUILD)/fuzz/obj/$$(basename $$f .c).o; \
	done
	rm -f $@ && ar rcs $@ $(BUILD)/fuzz/obj/*.o

$(BUILD)/fuzz/fuzz_rmsnorm: FUZZ_OP := 0
$(BUILD)/fuzz/fuzz_qk_norm: FUZZ_OP := 1
$(BUILD)/fuzz/fuzz_layernorm: FUZZ_OP := 2
# The float64 reference is tests/ref.c's, compiled into each target.
$(addprefix $(BUILD)/fuzz/fuzz_,$(FUZZ_OPS)): tests/fuzz/fuzz_kernels.c tests/ref.c tests/ref.h \
    $(BUILD)/fuzz/libkgf.a
	$(FUZZ_CC) $(FUZZ_FLAGS) -DFUZZ_OP=$(FUZZ_OP) -I$(OUT)/$(FUZZ_PACK) -Itests \
	  tests/fuzz/fuzz_kernels.c tests/ref.c $(BUILD)/fuzz/libkgf.a -lm -o $@

fuzz-build: $(addprefix $(BUILD)/fuzz/fuzz_,$(FUZZ_OPS))

# Why: libFuzzer writes new units into the first corpus folder only, so the
# seeds in tests/fuzz/corpus/ stay as they are.
define fuzz_run
	@set -e; for op in $(FUZZ_OPS); do \
	  mkdir -p $(BUILD)/fuzz/corpus_$$op; \
	  echo "fuzz: $$op for $(1) s"; \
	  $(BUILD)/fuzz/fuzz_$$op $(FUZZ_RUN_FLAGS) -max_total_time=$(1) \
	    $(BUILD)/fuzz/corpus_$$op tests/fuzz/corpus/$$op 2>$(BUILD)/fuzz/$$op.log \
	    || { tail -n 40 $(BUILD)/fuzz/$$op.log; exit 1; }; \
	  grep -h '^Done' $(BUILD)/fuzz/$$op.log || true; \
	done
endef

fuzz-spec: | $(BUILD)/fuzz
	luajit tests/fuzz/spec_fuzz.lua $(FUZZ_SPEC_RUNS) $(FUZZ_SPEC_SEED) $(BUILD)/fuzz

fuzz: deps fuzz-build
	$(call fuzz_run,$(FUZZ_SECONDS))
	@$(MAKE) --no-print-directory fuzz-spec

fuzz-short: fuzz-build
	$(call fuzz_run,$(FUZZ_SHORT_SECONDS))
	@$(MAKE) --no-print-directory fuzz-spec

# --- size_t edge cases ----------------------------------------------------------
$(BUILD)/test_edge: tests/test_edge.c $(OUT)/$(FUZZ_PACK)/$(FUZZ_PACK).h | $(BUILD)
	$(CC) $(CSTD) $(CFLAGS) $(WARN) -I$(OUT)/$(FUZZ_PACK) $(CHECK_CFLAGS) tests/test_edge.c \
	  $(OUT)/$(FUZZ_PACK)/*.c $(CHECK_LIBS) -lm -o $@

test-edge: $(BUILD)/test_edge
	$(BUILD)/test_edge

# --- sanitizers -------------------------------------------------------------------
$(BUILD)/san:
	@mkdir -p $@

$(BUILD)/san/test_runtime: tests/test_runtime.c $(RUNTIME_SRC) runtime/*.h | $(BUILD)/san
	$(SAN_CC) $(SAN_FLAGS) $(WARN) -Iruntime $(CHECK_CFLAGS) tests/test_runtime.c \
	  $(RUNTIME_SRC) $(CHECK_LIBS) -lm -o $@

$(BUILD)/san/test_kernels: $(KT_SRC) $(wildcard tests/*.h) $(OUT)/kgt/kgt.h | $(BUILD)/san
	$(SAN_CC) $(SAN_FLAGS) $(WARN) -I$(OUT)/kgt -Itests $(CHECK_CFLAGS) $(KT_SRC) \
	  $(OUT)/kgt/*.c $(CHECK_LIBS) -lm -o $@

$(BUILD)/san/test_edge: tests/test_edge.c $(OUT)/$(FUZZ_PACK)/$(FUZZ_PACK).h | $(BUILD)/san
	$(SAN_CC) $(SAN_FLAGS) $(WARN) -I$(OUT)/$(FUZZ_PACK) $(CHECK_CFLAGS) tests/test_edge.c \
	  $(OUT)/$(FUZZ_PACK)/*.c $(CHECK_LIBS) -lm -o $@

# Why: the demo pack compiles under the sanitizers too (the kgt and kgf
# packs are compiled into the suites above).
$(BUILD)/san/packs.stamp: $(OUT)/$(DEMO_NAME)/$(DEMO_NAME).h | $(BUILD)/san
	@set -e; for f in $(OUT)/$(DEMO_NAME)/*.c; do \
	  $(SAN_CC) $(SAN_FLAGS) $(WARN) -c $$f -o $(BUILD)/san/pack.o; \
	done; touch $@

# Why: the kernel suite runs in one process (CK_FORK=no): forking an ASan
# process per test case costs minutes.  Leak checking stays on for all
# three suites (the kernel suite frees its test names after the runner).
define san_run
	@echo "sanitize: $(1)"
	@$(SAN_ENV) $(2) $(1) >$(1).log 2>&1 || { tail -n 60 $(1).log; exit 1; }
	@tail -n 1 $(1).log

endef

sanitize: $(BUILD)/san/test_runtime $(BUILD)/san/test_edge $(BUILD)/san/packs.stamp \
    $(BUILD)/test_runtime $(if $(wildcard tests/test_kernels.c),$(BUILD)/san/test_kernels)
	$(call san_run,$(BUILD)/san/test_runtime,)
	$(call san_run,$(BUILD)/san/test_edge,)
	$(if $(wildcard tests/test_kernels.c),$(call san_run,$(BUILD)/san/test_kernels,CK_FORK=no))
	@echo "sanitize: valgrind memcheck $(BUILD)/test_runtime"
	@$(VALGRIND) $(BUILD)/test_runtime >$(BUILD)/san/valgrind.log 2>&1 \
	  || { tail -n 60 $(BUILD)/san/valgrind.log; exit 1; }
	@tail -n 1 $(BUILD)/san/valgrind.log
	@echo "sanitize: ASan+UBSan suites and valgrind memcheck clean"

TEST_TARGETS += fuzz-short sanitize test-edge
