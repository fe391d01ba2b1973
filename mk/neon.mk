# mk/neon.mk: the aarch64 leg of the suite.  The Check suites and the NEON
# variants are cross-built static (aarch64-linux-gnu-gcc -static, against
# Debian's check:arm64) and run under qemu-aarch64: static because
# qemu-user has no guest loader or libraries, and dynamic binaries that
# fork hang there.
#   test-neon-compile  every .c of the test pack (kgt) and the demo pack
#                      compiles for aarch64 with gcc and clang -Wall -Wextra
#                      -Wshadow -Wcast-align -Wdouble-promotion -Werror and
#                      with a plain `-O2 -c`; the guards hold:
#                      the x86 files define no function on aarch64, the neon
#                      file defines none on this host unless it is aarch64,
#                      and defines every neon kernel on aarch64
#   test-neon-runtime  tests/test_runtime.c (conversions, CPU detection via
#                      getauxval, KGEN_ISA) under qemu-aarch64
#   test-neon-kernels  tests/test_kernels.c + pack kgt under qemu-aarch64:
#                      every neon variant, the scalar ones and the
#                      dispatcher against the float64 reference
#   test-neon          all three (in TEST_TARGETS)
# A missing qemu-aarch64 is a failure, never a silent pass.

.PHONY: test-neon test-neon-compile test-neon-runtime test-neon-kernels

A64_CC := aarch64-linux-gnu-gcc
A64_CLANG := clang --target=aarch64-linux-gnu
A64_NM := aarch64-linux-gnu-nm
QEMU_A64 := qemu-aarch64
A64_BUILD := $(BUILD)/aarch64
A64_LIBS := -lcheck -lm -lpthread -lrt -lsubunit
A64_PACKS := $(OUT)/kgt $(OUT)/$(DEMO_NAME)

$(A64_BUILD):
	@mkdir -p $(A64_BUILD)

$(A64_BUILD)/test_runtime: tests/test_runtime.c $(RUNTIME_SRC) runtime/*.h | $(A64_BUILD)
	$(A64_CC) -static $(CSTD) $(CFLAGS) $(WARN) -Iruntime tests/test_runtime.c \
	  $(RUNTIME_SRC) $(A64_LIBS) -o $@

# Why: the same sources as the native test_kernels rule (KT_SRC), so the
# aarch64 run checks exactly what the x86 run checks.
$(A64_BUILD)/test_kernels: $(KT_SRC) $(wildcard tests/*.h) $(OUT)/kgt/kgt.h | $(A64_BUILD)
	$(A64_CC) -static $(CSTD) $(CFLAGS) $(WARN) -I$(OUT)/kgt -Itests $(KT_SRC) \
	  $(OUT)/kgt/*.c $(A64_LIBS) -o $@

# Why: a pack is copied as a whole into aarch64 builds too: x86 files must
# compile there (guarded out), and the guard must not hide the NEON code.
test-neon-compile: $(OUT)/kgt/kgt.h $(OUT)/$(DEMO_NAME)/$(DEMO_NAME).h | $(A64_BUILD)
	@set -e; o=$(A64_BUILD)/cc_check.o; \
	defs() { $(A64_NM) --defined-only "$$1" | grep -c ' T ' || true; }; \
	for p in $(A64_PACKS); do \
	  for f in $$p/*.c; do \
	    $(A64_CC) $(CSTD) -O2 $(PACK_WARN) -c $$f -o $$o; \
	    $(A64_CLANG) $(CSTD) -O2 $(PACK_WARN) -c $$f -o $$o; \
	    $(A64_CC) -O2 -c $$f -o $$o; \
	    case $$f in \
	      *_avx2.c|*_avx512.c) n=$$(defs $$o); if [ "$$n" != 0 ]; then \
	        echo "$$f: defines $$n functions on aarch64 (guard missing)" >&2; exit 1; fi;; \
	      *_neon.c) n=$$(defs $$o); \
	        want=$$(grep -Eo '"symbol": *"[A-Za-z0-9_]*_neon"' $$p/manifest.json | wc -l); \
	        if [ "$$n" -lt "$$want" ] || [ "$$want" = 0 ]; then \
	          echo "$$f: $$n functions on aarch64, want the $$want neon kernels" >&2; exit 1; fi; \
	        if [ "$$(uname -m)" != aarch64 ]; then \
	          $(CC) $(CSTD) -O2 $(WARN) -c $$f -o $(A64_BUILD)/host_check.o; \
	          n=$$(nm --defined-only $(A64_BUILD)/host_check.o | grep -c ' T ' || true); \
	          if [ "$$n" != 0 ]; then \
	            echo "$$f: defines $$n functions on $$(uname -m) (guard missing)" >&2; exit 1; fi; \
	        fi;; \
	    esac; \
	  done; \
	done; \
	echo "neon compile: aarch64 gcc, clang -Wall -Wextra -Wshadow -Wcast-align -Wdouble-promotion -Werror and plain -O2 -c: ok; guards: ok"

# Why: fail loudly when the emulator is missing (an aarch64 leg that did not
# run must not read as passed).
A64_RUN = @if ! command -v $(QEMU_A64) >/dev/null 2>&1; then \
	  echo "$(QEMU_A64) not found: the aarch64 leg cannot run (Debian: qemu-user)" >&2; \
	  exit 1; fi; echo "$(QEMU_A64) $(1)"; $(QEMU_A64) $(1)

test-neon-runtime: $(A64_BUILD)/test_runtime
	$(call A64_RUN,$(A64_BUILD)/test_runtime)

test-neon-kernels: $(A64_BUILD)/test_kernels
	$(call A64_RUN,$(A64_BUILD)/test_kernels)

test-neon: test-neon-compile test-neon-runtime test-neon-kernels

TEST_TARGETS += test-neon
