# mk/emu512.mk: the AVX-512 variants checked on a CPU without AVX-512.
#   test-avx512-emu  tests/test_kernels.c against pack kgt, its AVX-512
#                    file compiled on SIMDe's portable AVX-512 (Debian's
#                    libsimde-dev, through tests/emu512/immintrin.h) with
#                    its target attributes rewritten to AVX2: every avx512
#                    variant and the dispatchers, twice (the AVX512_BF16
#                    and line-frame twins on, then both plain bodies).
# It checks the kernels' logic and numerics wherever no AVX-512 core is at
# hand; it says nothing about speed, and on an AVX-512 CPU test-kernels
# runs the same variants for real.  Needs x86-64 with AVX2, FMA and F16C
# (the emulation's own code): elsewhere it says SKIPPED and why.

.PHONY: test-avx512-emu

EMU512_BUILD := $(BUILD)/emu512
EMU512_CC := gcc
# -O1: the emulated file takes 6 minutes to compile at -O2 -g, 1.5 at -O1
EMU512_FLAGS := $(CSTD) -O1 $(WARN) -Wno-psabi -mavx2 -mfma -mf16c
EMU512_HOST := $(shell uname -m 2>/dev/null)/$(shell grep -m1 -wo avx2 /proc/cpuinfo 2>/dev/null)$(shell grep -m1 -wo fma /proc/cpuinfo 2>/dev/null)$(shell grep -m1 -wo f16c /proc/cpuinfo 2>/dev/null)
EMU512_KT_OBJ := $(patsubst tests/%.c,$(EMU512_BUILD)/%.o,$(KT_SRC))

$(EMU512_BUILD):
	@mkdir -p $(EMU512_BUILD)

# Why: the generated file, with every AVX-512 target attribute made an
# AVX2 one; a target string the rewrite missed fails the build here
# rather than running real AVX-512 code.
$(EMU512_BUILD)/kgt_avx512_emu.c: $(OUT)/kgt/kgt.h | $(EMU512_BUILD)
	sed -E 's/target\("avx512[^"]*"\)/target("avx2,fma,f16c")/g' $(OUT)/kgt/kgt_avx512.c > $@
	@if grep -n 'avx512[a-z0-9]*[,"]' $@ | grep -v '^[0-9]*: *[*/]' | grep -q 'target'; then \
	  echo "test-avx512-emu: an AVX-512 target attribute is left in $@" >&2; rm -f $@; exit 1; fi

$(EMU512_BUILD)/kgt_avx512_emu.o: $(EMU512_BUILD)/kgt_avx512_emu.c tests/emu512/immintrin.h
	$(EMU512_CC) $(EMU512_FLAGS) -Itests/emu512 -I$(OUT)/kgt -c $< -o $@

$(EMU512_BUILD)/%.o: tests/%.c $(wildcard tests/*.h) $(OUT)/kgt/kgt.h | $(EMU512_BUILD)
	@mkdir -p $(dir $@)
	$(EMU512_CC) $(CSTD) $(CFLAGS) $(WARN) -I$(OUT)/kgt -Itests $(CHECK_CFLAGS) -c $< -o $@

# the pack's other files as they are (its runtime's CPU answers are weak:
# tests/emu512/kg_cpu_emu.c overrides them)
$(EMU512_BUILD)/test_kernels: $(EMU512_KT_OBJ) $(EMU512_BUILD)/kgt_avx512_emu.o $(EMU512_BUILD)/emu512/kg_cpu_emu.o
	$(EMU512_CC) $(CSTD) $(CFLAGS) $(WARN) -I$(OUT)/kgt $(filter-out %_avx512.c,$(wildcard $(OUT)/kgt/*.c)) \
	  $^ $(CHECK_LIBS) -lm -o $@

ifeq ($(EMU512_HOST),x86_64/avx2fmaf16c)
test-avx512-emu: $(EMU512_BUILD)/test_kernels
	@if ! echo '#include <simde/x86/avx512.h>' | $(EMU512_CC) -E -x c - >/dev/null 2>&1; then \
	  echo "test-avx512-emu: SIMDe's headers are missing (Debian package libsimde-dev; make deps)" >&2; exit 1; fi
	@set -e; for on in 1 0; do \
	  echo "test-avx512-emu: avx512 variants on SIMDe emulation (no AVX-512 core involved)," \
	    "KGEN_AVX512_BF16=$$on KGEN_BF16_LINE_FRAME=$$on"; \
	  KT_ISA=avx512 KGEN_AVX512_BF16=$$on KGEN_BF16_LINE_FRAME=$$on \
	    $(EMU512_BUILD)/test_kernels > $(EMU512_BUILD)/kt_$$on.log 2>&1 || { cat $(EMU512_BUILD)/kt_$$on.log; exit 1; }; \
	  grep -E '^(KT_ISA|kgt:|avx512 bf16)|Checks:' $(EMU512_BUILD)/kt_$$on.log; \
	done
else
test-avx512-emu:
	@echo "SKIPPED test-avx512-emu: the emulation needs an x86-64 CPU with AVX2, FMA and F16C (this one: $(EMU512_HOST))"
endif

TEST_TARGETS += test-avx512-emu
