# mk/cuda.mk: the CUDA backend's build and tests (pack kgtc of
# tests/specs/kgt_cuda.lua: isa scalar + cuda, every op, dtype, rounding,
# layout and path the generator has).
#   make test-cuda-gen      the pack is byte-identical under LuaJIT and Lua 5.4
#   make test-cuda-compile  nvcc builds every CUDA variant (kgtc and the demo
#                           pack) for sm_80, sm_90 and compute_90 PTX with all
#                           warnings as errors, plus tests/cuda/test_cuda and
#                           build/cuda_bench; a SKIPPED line without nvcc
#   make test-cuda          runs test_cuda: every CUDA variant against the
#                           CPU scalar one and a float64 reference on a GPU;
#                           SKIPPED per variant (exit 0) without a GPU
#   make test-cuda-emu      the same tests on a host emulation of the CUDA
#                           kernels (tests/cuda/emu; g++, no GPU, no nvcc):
#                           checks the generated kernels' logic, labelled
#                           "cuda-emu", never "cuda"
#   make bench-cuda         build/cuda_bench on a GPU (not in make test)
# nvcc: NVCC=..., else nvcc on PATH, else /usr/local/cuda/bin/nvcc.

.PHONY: test-cuda-gen test-cuda-compile test-cuda test-cuda-emu bench-cuda

CUDA_PACK := kgtc
CUDA_SPEC := tests/specs/kgt_cuda.lua
CUDA_BUILD := $(BUILD)/cuda
ifeq ($(origin NVCC),undefined)
NVCC := $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
endif
# the toolkit's headers, for C files that call the runtime API: where nvcc
# itself looks (its --dryrun INCLUDES line; toolkits differ: include/ may be
# only under targets/<arch>/), else next to nvcc
CUDA_INC = $(or $(shell $(NVCC) --dryrun -c -x cu /dev/null -o /dev/null 2>&1 | \
  sed -n 's/^\#\$$ INCLUDES=//p' | tr -d '"'),-I$(abspath $(dir $(NVCC))../include))
NVCC_GENCODE := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
  -gencode arch=compute_90,code=compute_90
NVCC_FLAGS := -O3 -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror $(NVCC_GENCODE)
CUDA_PACK_DEFS := -DKG_PACK_HEADER='"$(CUDA_PACK).h"' -DKG_PACK_VARIANTS=$(CUDA_PACK)_variants \
  -DKG_PACK_NUM=$(CUDA_PACK)_num_variants -DKG_PACK_CUDA_VARIANTS=$(CUDA_PACK)_cuda_variants \
  -DKG_PACK_CUDA_NUM=$(CUDA_PACK)_cuda_num_variants
CUDA_NO_NVCC := no nvcc (not on PATH, not in /usr/local/cuda/bin; set NVCC=/path/to/nvcc)
# emulation: a small grid cap makes every kernel's grid-stride loop run,
# a small few-rows bound sends its small cases to both kernels of a twin;
# UBSan catches misaligned vector accesses (uint2/uint4 are aligned there)
ifeq ($(origin EMU_CXX),undefined)
EMU_CXX := $(shell command -v g++ 2>/dev/null || command -v clang++ 2>/dev/null)
endif
EMU_CXXFLAGS := -std=c++17 -O2 -Wall -Wextra -Werror -Wno-unknown-pragmas \
  -fsanitize=undefined -fno-sanitize-recover=all

$(OUT)/$(CUDA_PACK)/$(CUDA_PACK).h: $(CUDA_SPEC) $(GEN_DEPS)
	$(KGEN) $(CUDA_SPEC) -o $(OUT)

$(CUDA_BUILD):
	@mkdir -p $(CUDA_BUILD)

# Why: the generator's promise: one spec, one output, whichever Lua runs it.
test-cuda-gen: $(GEN_DEPS) $(CUDA_SPEC) | $(CUDA_BUILD)
	@rm -rf $(CUDA_BUILD)/gen-luajit $(CUDA_BUILD)/gen-lua54
	@KGEN_LUA=luajit $(KGEN) $(CUDA_SPEC) -o $(CUDA_BUILD)/gen-luajit >/dev/null
	@KGEN_LUA=lua5.4 $(KGEN) $(CUDA_SPEC) -o $(CUDA_BUILD)/gen-lua54 >/dev/null
	@diff -r $(CUDA_BUILD)/gen-luajit $(CUDA_BUILD)/gen-lua54 >/dev/null || \
	  { echo "test-cuda-gen: FAIL: luajit and lua5.4 packs differ:"; \
	    diff -r $(CUDA_BUILD)/gen-luajit $(CUDA_BUILD)/gen-lua54 | head -20; exit 1; }
	@echo "test-cuda-gen: $(CUDA_PACK) (with $(CUDA_PACK)_cuda.cu) byte-identical under luajit and lua5.4"

ifneq ($(NVCC),)
# One object per pack's .cu: the compile check and what the test links.
# A pack whose spec leaves cuda out has no .cu: said, and an empty marker.
define CUDA_OBJ_RULE
$$(CUDA_BUILD)/$(1)_cuda.o: $$(OUT)/$(1)/$(1).h | $$(CUDA_BUILD)
	@if [ ! -f $$(OUT)/$(1)/$(1)_cuda.cu ]; then \
	  echo "nvcc: pack $(1) has no CUDA variants (its spec's isa leaves cuda out)"; \
	  : > $$@; exit 0; fi; \
	t0=$$$$(date +%s%N); \
	$$(NVCC) $$(NVCC_FLAGS) -I$$(OUT)/$(1) -c $$(OUT)/$(1)/$(1)_cuda.cu -o $$@ && \
	t1=$$$$(date +%s%N) && \
	echo "nvcc $(1)_cuda.cu (sm_80, sm_90, compute_90 PTX, warnings are errors): ok in $$$$(( (t1 - t0) / 1000000 )) ms"
endef
$(foreach p,$(CUDA_PACK) $(DEMO_NAME),$(eval $(call CUDA_OBJ_RULE,$(p))))

# Why: the CPU side (scalar reference, runtime) is built like every other
# test, with the C compiler and the project's warnings; nvcc links.
$(CUDA_BUILD)/test_cuda: tests/cuda/test_cuda.c $(CUDA_BUILD)/$(CUDA_PACK)_cuda.o | $(CUDA_BUILD)
	@rm -rf $(CUDA_BUILD)/cpu && mkdir -p $(CUDA_BUILD)/cpu
	@set -e; for f in $(OUT)/$(CUDA_PACK)/*.c tests/cuda/test_cuda.c; do \
	  o=$(CUDA_BUILD)/cpu/$$(basename $${f%.c}).o; \
	  $(CC) $(CSTD) $(CFLAGS) $(WARN) -I$(OUT)/$(CUDA_PACK) $(CUDA_INC) $(CUDA_PACK_DEFS) \
	    -c $$f -o $$o; done
	$(NVCC) -o $@ $(CUDA_BUILD)/cpu/*.o $(CUDA_BUILD)/$(CUDA_PACK)_cuda.o -lm

$(BUILD)/cuda_bench: bench/cuda_bench.cu $(CUDA_BUILD)/$(CUDA_PACK)_cuda.o | $(CUDA_BUILD)
	$(NVCC) $(NVCC_FLAGS) -I$(OUT)/$(CUDA_PACK) $(CUDA_PACK_DEFS) -c bench/cuda_bench.cu \
	  -o $(CUDA_BUILD)/cuda_bench.o
	$(NVCC) -o $@ $(CUDA_BUILD)/cuda_bench.o $(CUDA_BUILD)/$(CUDA_PACK)_cuda.o

test-cuda-compile: $(CUDA_BUILD)/$(CUDA_PACK)_cuda.o $(CUDA_BUILD)/$(DEMO_NAME)_cuda.o \
    $(CUDA_BUILD)/test_cuda $(BUILD)/cuda_bench
	@echo "test-cuda-compile: every CUDA variant of $(CUDA_PACK) and $(DEMO_NAME) built by $(NVCC)"

test-cuda: $(CUDA_BUILD)/test_cuda
	$(CUDA_BUILD)/test_cuda

bench-cuda: $(BUILD)/cuda_bench
	$(BUILD)/cuda_bench --md $(OUT)/cuda_bench.md --json $(OUT)/cuda_bench.json
else
test-cuda-compile:
	@echo "SKIPPED test-cuda-compile: $(CUDA_NO_NVCC)"

# Why: one line per variant, as a run without a GPU gives, from the header.
test-cuda: $(OUT)/$(CUDA_PACK)/$(CUDA_PACK).h
	@for s in $$(sed -n 's/^int \($(CUDA_PACK)_[A-Za-z0-9_]*_cuda\)(.*/\1/p' $<); do \
	  echo "SKIPPED cuda: $$s: $(CUDA_NO_NVCC), so it was not built"; done

bench-cuda:
	@echo "SKIPPED bench-cuda: $(CUDA_NO_NVCC)"
endif

# Host emulation: the generated .cu compiled as C++ against tests/cuda/emu.
ifneq ($(EMU_CXX),)
EMU_SRC := tests/cuda/test_cuda.c $(wildcard tests/cuda/emu/*)
$(CUDA_BUILD)/test_cuda_emu: $(EMU_SRC) $(OUT)/$(CUDA_PACK)/$(CUDA_PACK).h | $(CUDA_BUILD)
	@rm -rf $(CUDA_BUILD)/emu && mkdir -p $(CUDA_BUILD)/emu
	$(EMU_CXX) $(EMU_CXXFLAGS) -DKG_CU_MAX_GRID=5 -DKG_CU_FEW_ROWS=64 -DKG_CU_FEW_WIDE_ROWS=9 -Itests/cuda/emu -I$(OUT)/$(CUDA_PACK) \
	  -x c++ -c $(OUT)/$(CUDA_PACK)/$(CUDA_PACK)_cuda.cu -o $(CUDA_BUILD)/emu/pack_cuda.o
	$(EMU_CXX) $(EMU_CXXFLAGS) -Itests/cuda/emu -I$(OUT)/$(CUDA_PACK) -c tests/cuda/emu/kg_emu.cpp \
	  -o $(CUDA_BUILD)/emu/kg_emu.o
	@set -e; for f in $(OUT)/$(CUDA_PACK)/*.c tests/cuda/test_cuda.c; do \
	  o=$(CUDA_BUILD)/emu/$$(basename $${f%.c}).o; \
	  $(CC) $(CSTD) $(CFLAGS) $(WARN) -Itests/cuda/emu -I$(OUT)/$(CUDA_PACK) $(CUDA_PACK_DEFS) \
	    -c $$f -o $$o; done
	$(EMU_CXX) -fsanitize=undefined -o $@ $(CUDA_BUILD)/emu/*.o -lm

test-cuda-emu: $(CUDA_BUILD)/test_cuda_emu
	@echo "test-cuda-emu: host emulation of the CUDA kernels (no GPU involved)"
	$(CUDA_BUILD)/test_cuda_emu
else
test-cuda-emu:
	@echo "SKIPPED test-cuda-emu: no C++ compiler (g++ or clang++)"
endif

TEST_TARGETS += test-cuda-gen test-cuda-compile test-cuda test-cuda-emu
