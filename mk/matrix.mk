# mk/matrix.mk: the x86 dispatch proof and the ISA matrix.
#   make test-dispatch  tests/dispatch_proof.c (pack kgd), built static, run
#                       natively and under qemu-x86_64 -cpu Haswell (AVX2, no
#                       AVX-512) and -cpu Nehalem (neither): right ISA, right
#                       results, a KGEN_ISA the CPU lacks exits 2 (no SIGILL);
#                       natively also with KGEN_F16_AVX2 0 and 1 (f16 kernels
#                       on AVX-512 or AVX2)
#   make matrix         every op x dtype x shape x ISA of tests/specs/kgm.lua:
#                       table on stdout, out/matrix.md and out/matrix.json
#   make test-models    the same matrix over the pack of every model config
#                       in tests/hf/ (kgen --hf), natively, NEON under
#                       qemu-aarch64 and AVX-512 on SIMDe (tests/models.sh;
#                       MODELS="qwen3-8b gpt2" for some of them)
# All three are in TEST_TARGETS (the matrix takes seconds, the models
# about three minutes).

.PHONY: matrix test-dispatch test-models

MATRIX_PACK := kgm
DISPATCH_PACK := kgd
# Why: the proof must be a static binary (qemu-user runs it with no guest
# loader or libraries); the brief's toolchain for that is gcc.
STATIC_CC := gcc
AARCH64_CC := aarch64-linux-gnu-gcc
QEMU_X86 := qemu-x86_64

$(OUT)/$(MATRIX_PACK)/$(MATRIX_PACK).h: tests/specs/$(MATRIX_PACK).lua $(GEN_DEPS)
	$(KGEN) tests/specs/$(MATRIX_PACK).lua -o $(OUT)

$(OUT)/$(DISPATCH_PACK)/$(DISPATCH_PACK).h: tests/specs/$(DISPATCH_PACK).lua $(GEN_DEPS)
	$(KGEN) tests/specs/$(DISPATCH_PACK).lua -o $(OUT)

# Why: the matrix (and the dispatch proof, which includes it) takes its
# float64 reference from tests/ref.c, linked into every binary below.
MATRIX_SRC := tests/matrix.c tests/ref.c tests/ref.h

MATRIX_FLAGS = -I$(OUT)/$(MATRIX_PACK) -Itests \
  -DKG_PACK_HEADER='"$(MATRIX_PACK).h"' \
  -DKG_PACK_VARIANTS=$(MATRIX_PACK)_variants \
  -DKG_PACK_NUM=$(MATRIX_PACK)_num_variants

# --- dispatch proof ------------------------------------------------------------
DP := $(BUILD)/dispatch_proof

$(DP): tests/dispatch_proof.c $(MATRIX_SRC) $(OUT)/$(DISPATCH_PACK)/$(DISPATCH_PACK).h | $(BUILD)
	$(STATIC_CC) -static $(CSTD) $(CFLAGS) $(WARN) -I$(OUT)/$(DISPATCH_PACK) -Itests \
	  tests/dispatch_proof.c tests/ref.c $(OUT)/$(DISPATCH_PACK)/*.c -lm -o $@

# Why: every leg runs even when one fails, so one run shows the whole proof.
# leg LABEL EXPECT CMD...: the proof must pass with --expect EXPECT.
# reject LABEL ISA CMD...: KGEN_ISA=ISA must end it with status 2 and the
# runtime's message, before any kernel runs.  qemu's warnings on stderr
# (features TCG cannot emulate) are ignored.
test-dispatch: $(DP)
	@fail=0; \
	leg() { label=$$1; want=$$2; shift 2; printf '  %-44s ' "$$label:"; \
	  "$$@" $(DP) --expect $$want >$(DP).out 2>$(DP).err; rc=$$?; \
	  if [ $$rc = 0 ]; then tail -n 1 $(DP).out; \
	  else echo "FAIL (exit status $$rc)"; sed 's/^/      /' $(DP).out; \
	    grep -v '^qemu-x86_64: warning' $(DP).err | sed 's/^/      /'; fail=1; fi; }; \
	reject() { label=$$1; isa=$$2; shift 2; printf '  %-44s ' "$$label:"; \
	  "$$@" $(DP) --expect scalar >$(DP).out 2>$(DP).err; rc=$$?; \
	  msg=$$(grep '^kgen: ' $(DP).err | head -n 1); \
	  if [ $$rc = 2 ] && [ "$$(grep -c ' -> ' $(DP).out)" = 0 ] && \
	     echo "$$msg" | grep -q "KGEN_ISA=$$isa: this CPU lacks $$isa"; then \
	    echo "exit status 2, $$msg"; \
	  else \
	    if [ $$rc -gt 128 ]; then echo "FAIL: killed by signal $$((rc - 128))"; \
	    else echo "FAIL: exit status $$rc, want 2 and 'kgen: KGEN_ISA=$$isa: this CPU lacks $$isa'"; fi; \
	    sed 's/^/      /' $(DP).out; fail=1; fi; }; \
	flags=$$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null); \
	has() { for f in "$$@"; do case " $$flags " in *" $$f "*) ;; *) return 1;; esac; done; }; \
	echo "dispatch proof ($(DP), pack $(DISPATCH_PACK)):"; \
	if [ "$$(uname -m)" != x86_64 ]; then \
	  echo "  SKIPPED: not an x86_64 host"; exit 0; fi; \
	if has avx512f avx512bw avx512dq avx512vl; then \
	  leg "native, AVX-512 CPU" avx512 env; \
	  leg "native, KGEN_F16_AVX2=0 (f16 on AVX-512)" avx512 env KGEN_F16_AVX2=0; \
	  leg "native, KGEN_F16_AVX2=1 (f16 on AVX2)" avx512 env KGEN_F16_AVX2=1; \
	  leg "native, KGEN_ISA=avx2" avx2 env KGEN_ISA=avx2; \
	else \
	  printf '  %-44s SKIPPED: this CPU lacks AVX-512\n' "native, AVX-512 CPU:"; fi; \
	if command -v $(QEMU_X86) >/dev/null 2>&1; then \
	  leg "$(QEMU_X86) -cpu Haswell" avx2 env $(QEMU_X86) -cpu Haswell; \
	  leg "$(QEMU_X86) -cpu Nehalem" scalar env $(QEMU_X86) -cpu Nehalem; \
	  leg "$(QEMU_X86) -cpu Haswell, KGEN_ISA=scalar" scalar env KGEN_ISA=scalar $(QEMU_X86) -cpu Haswell; \
	  reject "$(QEMU_X86) -cpu Haswell, KGEN_ISA=avx512" avx512 env KGEN_ISA=avx512 $(QEMU_X86) -cpu Haswell; \
	  reject "$(QEMU_X86) -cpu Nehalem, KGEN_ISA=avx2" avx2 env KGEN_ISA=avx2 $(QEMU_X86) -cpu Nehalem; \
	else \
	  echo "  qemu legs SKIPPED: $(QEMU_X86) not installed (Debian: qemu-user)"; fi; \
	if [ $$fail = 0 ]; then echo "dispatch proof: PASS"; else echo "dispatch proof: FAIL"; fi; \
	exit $$fail

# --- ISA matrix ----------------------------------------------------------------
$(BUILD)/matrix: $(MATRIX_SRC) $(OUT)/$(MATRIX_PACK)/$(MATRIX_PACK).h | $(BUILD)
	$(CC) $(CSTD) $(CFLAGS) $(WARN) $(MATRIX_FLAGS) tests/matrix.c tests/ref.c \
	  $(OUT)/$(MATRIX_PACK)/*.c -lm -o $@

# Why static: dynamic binaries that fork hang under qemu-aarch64 (DESIGN).
$(BUILD)/matrix-aarch64: $(MATRIX_SRC) $(OUT)/$(MATRIX_PACK)/$(MATRIX_PACK).h | $(BUILD)
	$(AARCH64_CC) -static $(CSTD) -O2 $(WARN) $(MATRIX_FLAGS) tests/matrix.c tests/ref.c \
	  $(OUT)/$(MATRIX_PACK)/*.c -lm -o $@

# Why: the cross build is optional; without the cross compiler the script
# reports the aarch64 cells as skipped, with that reason.
MATRIX_BINS = $(BUILD)/matrix \
  $(if $(shell command -v $(AARCH64_CC) 2>/dev/null),$(BUILD)/matrix-aarch64)

matrix: $(MATRIX_BINS)
	sh tests/matrix.sh $(OUT)/$(MATRIX_PACK) $(BUILD) $(OUT)

# Why: what a user runs is a pack from a model's config.json, with that
# model's head counts, dims, dtypes and weight offsets; the matrix of the
# test pack alone does not cover them all.
test-models: | $(BUILD)
	CC="$(CC)" CFLAGS="$(CSTD) $(CFLAGS) $(WARN)" AARCH64_CC="$(AARCH64_CC)" \
	  EMU512_CC="$(EMU512_CC)" EMU512_FLAGS="$(EMU512_FLAGS)" sh tests/models.sh $(BUILD)

TEST_TARGETS += test-dispatch matrix test-models
