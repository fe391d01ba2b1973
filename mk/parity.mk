# parity.mk: bit-parity with PyTorch and exhaustive small-domain tests.
#   test-parity      tests/torch_parity.py on build/libkgp.so (pack
#                    tests/specs/kgp.lua): the transformers RMSNorm formula
#                    computed by torch; "hf" must be >= 99.9 % bit-identical
#                    and within 2 ULP, "single" is reported
#   test-exhaustive  tests/test_exhaustive.c on pack tests/specs/kge.lua:
#                    every bf16/f16 bit pattern through every variant, the
#                    contract invariants checked on every row (KANI-*)

PYTHON ?= /usr/bin/python3

.PHONY: test-parity test-exhaustive

$(OUT)/kgp/kgp.h: tests/specs/kgp.lua $(GEN_DEPS)
	$(KGEN) tests/specs/kgp.lua -o $(OUT)

$(OUT)/kge/kge.h: tests/specs/kge.lua $(GEN_DEPS)
	$(KGEN) tests/specs/kge.lua -o $(OUT)

# Why a shared library: ctypes loads the pack as an embedder would link it.
$(BUILD)/libkgp.so: $(OUT)/kgp/kgp.h | $(BUILD)
	$(CC) $(CSTD) -O2 -fPIC -shared $(WARN) -I$(OUT)/kgp $(OUT)/kgp/*.c -lm -o $@

test-parity: $(BUILD)/libkgp.so tests/torch_parity.py
	$(PYTHON) tests/torch_parity.py $(BUILD)/libkgp.so

$(BUILD)/test_exhaustive: tests/test_exhaustive.c $(OUT)/kge/kge.h | $(BUILD)
	$(CC) $(CSTD) $(CFLAGS) $(WARN) -I$(OUT)/kge $(CHECK_CFLAGS) tests/test_exhaustive.c \
	  $(OUT)/kge/*.c $(CHECK_LIBS) -lm -o $@

test-exhaustive: $(BUILD)/test_exhaustive
	$(BUILD)/test_exhaustive

TEST_TARGETS += test-parity test-exhaustive
