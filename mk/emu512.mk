# mk/emu512.mk: the AVX-512 variants checked on a CPU without AVX-512.
#   test-avx512-emu  tests/test_kernels.c against pack kgt, its AVX-512
#                    file compiled on SIMDe's portable AVX-512 (Debian's
#                    libsimde-dev, through tests/emu512/immintrin.h) with
#                    its target attributes rewritten to AVX2: every avx512
#                    variant and the dispatchers, twice (the AVX512_BF16
#                    and line-frame twins and the pipeline of bf16 heads
#                    on, then the plain bodies);
#                    then tests/test_exhaustive.c against pack kge the
#                    same way (every bf16 and f16 pattern, all variants).
# It checks the kernels' logic and numerics wherever no AVX-512 core is at
# hand; it says nothing about speed, and on an AVX-512 CPU test-kernels
# runs the same variants for real.  Needs x86-64 with AVX2, FMA and F16C
# (the emulation's own code): elsewhere it says SKIPPED and why.

.PHONY: test-avx512-emu

EMU512_BUILD := $(BUILD)/emu512
EMU512_CC := gcc
# -O1: the emulated file takes 6 minutes to compile at -O2 -g, 1.5 at -O1
EMU512_FLAGS := $(CSTD) -O1 $(WARN) -Wno-psabi -mavx2 -mfma -mf16c
EMU512_WHY := $(shell sh tests/emu512/emu512.sh why $(EMU512_CC))
EMU512_KT_OBJ := $(patsubst tests/%.c,$(EMU512_BUILD)/%.o,$(KT_SRC))

$(EMU512_BUILD):
	@mkdir -p $(EMU512_BUILD)

# Why: a pack's AVX-512 file with every AVX-512 target attribute made an
# AVX2 one; a target string the rewrite missed fails the build here rather
# than running real AVX-512 code.  $(call emu512_pack,PACK)
define emu512_pack
$(EMU512_BUILD)/$(1)_avx512_emu.c: $(OUT)/$(1)/$(1).h tests/emu512/emu512.sh | $(EMU512_BUILD)
	sh tests/emu512/emu512.sh rewrite $(OUT)/$(1)/$(1)_avx512.c $$@

$(EMU512_BUILD)/$(1)_avx512_emu.o: $(EMU512_BUILD)/$(1)_avx512_emu.c tests/emu512/immintrin.h
	$(EMU512_CC) $(EMU512_FLAGS) -Itests/emu512 -I$(OUT)/$(1) -c $$< -o $$@
endef
$(eval $(call emu512_pack,kgt))
$(eval $(call emu512_pack,kge))

# the test sources as the native rules build them
$(EMU512_BUILD)/%.o: tests/%.c $(wildcard tests/*.h) $(OUT)/kgt/kgt.h $(OUT)/kge/kge.h | $(EMU512_BUILD)
	@mkdir -p $(dir $@)
	$(EMU512_CC) $(CSTD) $(CFLAGS) $(WARN) -I$(OUT)/kgt -I$(OUT)/kge -Itests $(CHECK_CFLAGS) -c $< -o $@

# a pack's other files as they are (its runtime's CPU answers are weak:
# tests/emu512/kg_cpu_emu.c overrides them), listed by the shell, as make's
# own listing of out/ may predate the pack's regeneration
EMU512_OTHERS = $$(ls $(OUT)/$(1)/*.c | grep -v '_avx512\.c$$')

$(EMU512_BUILD)/test_kernels: $(EMU512_KT_OBJ) $(EMU512_BUILD)/kgt_avx512_emu.o $(EMU512_BUILD)/emu512/kg_cpu_emu.o
	$(EMU512_CC) $(CSTD) $(CFLAGS) $(WARN) -I$(OUT)/kgt $(call EMU512_OTHERS,kgt) $^ $(CHECK_LIBS) -lm -o $@

$(EMU512_BUILD)/test_exhaustive: $(EMU512_BUILD)/test_exhaustive.o $(EMU512_BUILD)/kge_avx512_emu.o $(EMU512_BUILD)/emu512/kg_cpu_emu.o
	$(EMU512_CC) $(CSTD) $(CFLAGS) $(WARN) -I$(OUT)/kge $(call EMU512_OTHERS,kge) $^ $(CHECK_LIBS) -lm -o $@

ifeq ($(EMU512_WHY),)
test-avx512-emu: $(EMU512_BUILD)/test_kernels $(EMU512_BUILD)/test_exhaustive
	@set -e; for on in 1 0; do \
	  echo "test-avx512-emu: avx512 variants on SIMDe emulation (no AVX-512 core involved)," \
	    "KGEN_AVX512_BF16=$$on KGEN_BF16_LINE_FRAME=$$on KGEN_QK_PIPE=$$on"; \
	  KT_ISA=avx512 KGEN_AVX512_BF16=$$on KGEN_BF16_LINE_FRAME=$$on KGEN_QK_PIPE=$$on \
	    $(EMU512_BUILD)/test_kernels > $(EMU512_BUILD)/kt_$$on.log 2>&1 || { cat $(EMU512_BUILD)/kt_$$on.log; exit 1; }; \
	  grep -E '^(KT_ISA|kgt:|avx512 bf16)|Checks:' $(EMU512_BUILD)/kt_$$on.log; \
	done
	@echo "test-avx512-emu: every bf16 and f16 pattern through the exhaustive pack (tests/specs/kge.lua), avx512 on SIMDe"
	@$(EMU512_BUILD)/test_exhaustive > $(EMU512_BUILD)/exhaustive.log 2>&1 || { cat $(EMU512_BUILD)/exhaustive.log; exit 1; }
	@grep -E '^test_exhaustive:|Checks:' $(EMU512_BUILD)/exhaustive.log
else
test-avx512-emu:
	@echo "SKIPPED test-avx512-emu: $(EMU512_WHY)"
endif

TEST_TARGETS += test-avx512-emu
