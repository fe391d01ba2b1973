# mk/bench.mk: speed, measured, never asserted by a test.
#   make bench        generate bench/specs/bench.lua (pack kgb) into out/,
#                     build build/bench (-O2), run it: the report on stdout,
#                     out/bench.md, out/bench.json, out/bench.png (gnuplot);
#                     BENCH_ARGS passes options (e.g. --filter qk_prefill)
#   make bench-smoke  in TEST_TARGETS: the harness builds and runs --quick on
#                     one small shape and writes well-formed reports, and on
#                     QK-norm decode with q and k at different offsets, and
#                     --no-rotate; no speed is asserted
# Copy figures worth keeping into bench/RESULTS.md by hand (machine, date,
# commit come with the report).

.PHONY: bench bench-smoke bench-spec

BENCH_SPEC := bench/specs/bench.lua
BENCH_PACK := kgb
BENCH_CFLAGS ?= -O2 -g
BENCH_ARGS ?=
# the compiler and flags bench/build.sh and bench/ab.sh build with
AB_FLAGS = CC="$(CC)" CFLAGS="$(CSTD) $(BENCH_CFLAGS) $(WARN)"
# the harness is bench.c + its kb_* helpers (other files in bench/ are not it)
BENCH_SRC := bench/bench.c $(wildcard bench/kb_*.c)
BENCH_COMMIT = $(shell git describe --always --dirty 2>/dev/null || echo unknown)

$(OUT)/$(BENCH_PACK)/$(BENCH_PACK).h: $(BENCH_SPEC) $(GEN_DEPS)
	$(KGEN) $(BENCH_SPEC) -o $(OUT)

# Why: `make bench CC=clang` after a gcc build must time clang's code:
# the compile line is kept in a file rewritten only when it changes, and
# the harness depends on it.
BENCH_CC_LINE = $(CC) $(CSTD) $(BENCH_CFLAGS) $(WARN)
$(BUILD)/bench.cc: FORCE | $(BUILD)
	@echo '$(BENCH_CC_LINE)' | cmp -s - $@ || echo '$(BENCH_CC_LINE)' > $@
.PHONY: FORCE
FORCE:

# Why: fixed -O2 (not $(CFLAGS)): the figures must not depend on how the
# test suite was configured.
$(BUILD)/bench: $(BENCH_SRC) $(wildcard bench/kb_*.h) $(OUT)/$(BENCH_PACK)/$(BENCH_PACK).h $(BUILD)/bench.cc | $(BUILD)
	$(CC) $(CSTD) $(BENCH_CFLAGS) $(WARN) '-DKB_CFLAGS="$(CSTD) $(BENCH_CFLAGS)"' -pthread -I$(OUT)/$(BENCH_PACK) -Ibench \
	  $(BENCH_SRC) $(OUT)/$(BENCH_PACK)/*.c -lm -o $@

bench: deps $(BUILD)/bench
	$(BUILD)/bench --md $(OUT)/bench.md --json $(OUT)/bench.json --dat $(OUT)/bench.dat \
	  --commit "$(BENCH_COMMIT)" $(BENCH_ARGS)
	gnuplot -e "datafile='$(OUT)/bench.dat'; outfile='$(OUT)/bench.png'" bench/plot.gp
	@echo "bench: wrote $(OUT)/bench.md $(OUT)/bench.json $(OUT)/bench.png"

# Why: the same harness for any pack (another model's spec): the pack's
# own header and variant table.  $(call kb_bench_build,GENDIR,BINARY), where
# GENDIR holds one generated pack (its folder's name is the pack's name).
define kb_bench_build
$(AB_FLAGS) sh bench/build.sh $(1) $(2)
endef

# Why: a user's question is how fast the kernels of *their* model run.
# SPEC is anything gen/kgen takes (a spec file, --hf config.json, a
# command-line kernel); the pack is generated under build/ (out/ is left
# alone), and its kernels are timed on the standard shapes they fit and on
# shapes made from their own numbers (bench/README.md).
bench-spec: deps | $(BUILD)
	@if [ -z "$(SPEC)" ]; then echo 'bench-spec: say which pack: make bench-spec SPEC=specs/qwen3-0.6b.lua (or SPEC="--hf config.json": any gen/kgen arguments)' >&2; exit 2; fi
	rm -rf $(BUILD)/bench-spec && mkdir -p $(BUILD)/bench-spec
	$(KGEN) $(SPEC) -o $(BUILD)/bench-spec/gen
	$(call kb_bench_build,$(BUILD)/bench-spec/gen,$(BUILD)/bench-spec/bench)
	p=$$(ls $(BUILD)/bench-spec/gen) && mkdir -p $(OUT) && \
	$(BUILD)/bench-spec/bench --md $(OUT)/bench-$$p.md --json $(OUT)/bench-$$p.json --dat $(OUT)/bench-$$p.dat \
	  --commit "$(BENCH_COMMIT)" $(BENCH_ARGS) && \
	gnuplot -e "datafile='$(OUT)/bench-$$p.dat'; outfile='$(OUT)/bench-$$p.png'" bench/plot.gp && \
	echo "bench-spec: wrote $(OUT)/bench-$$p.md $(OUT)/bench-$$p.json $(OUT)/bench-$$p.png"

# Why: proves the harness (variant lookup, argument wiring, ceilings, timing
# loop, all three writers) works on every `make test`, in well under a
# second of running; the JSON is parsed, every variant must agree with the
# scalar one on its first rows, timings need only be positive.
bench-smoke: $(BUILD)/bench
	$(BUILD)/bench --quick --filter rmsnorm_4096x1/f32 --md $(BUILD)/bench-smoke.md \
	  --json $(BUILD)/bench-smoke.json --dat $(BUILD)/bench-smoke.dat >/dev/null
	python3 -c 'import json, sys, platform; d = json.load(open(sys.argv[1])); r = d["results"]; \
	  k = [x for x in r if x["kind"] == "kernel"]; c = {x["what"] for x in r if x["kind"] == "ceiling"}; \
	  assert k and all(x["ns_median"] > 0 and x["gbps"] > 0 for x in r), "no timings"; \
	  assert c == {"memcpy", "nt-copy", "rmw"}, c; \
	  g = [d["meta"]["core_ghz_start"], d["meta"]["core_ghz_end"]] + [x["core_ghz"] for x in r]; \
	  assert all(0.3 < x < 10 for x in g) if platform.machine() in ("x86_64", "aarch64") else g, g; \
	  a = [x["core_adds_per_cycle"] for x in r] + [x["other_core_adds_per_cycle"] for x in r if x["other_cpu"] >= 0]; \
	  assert all(x is not None and 0.5 < x < 16 for x in a) if platform.machine() in ("x86_64", "aarch64") else a, a; \
	  sh = [x["core_cpu_share"] for x in r] + [x["other_cpu_share"] for x in r if x["other_cpu"] >= 0]; \
	  assert all(x is not None and 0.0 < x <= 1.0 for x in sh), sh; \
	  assert all(x["check_vs_scalar"] == "agrees" for x in k), "a variant differs from scalar"; \
	  assert d["meta"]["cflags"] == sys.argv[2], (d["meta"]["cflags"], sys.argv[2]); \
	  print("bench-smoke: %d kernel variants and 3 ceilings timed (speed not asserted), built with %s" % (len(k), sys.argv[2]))' \
	  $(BUILD)/bench-smoke.json '$(CSTD) $(BENCH_CFLAGS)'
	awk '/^"/ { $$(NF - 7) = "NaN" } { print }' $(BUILD)/bench-smoke.dat > $(BUILD)/bench-smoke-noscalar.dat
	for d in bench-smoke bench-smoke-noscalar; do rm -f $(BUILD)/$$d.png && \
	  gnuplot -e "datafile='$(BUILD)/$$d.dat'; outfile='$(BUILD)/$$d.png'" bench/plot.gp && \
	  test -s $(BUILD)/$$d.png || exit 1; done
	@echo "bench-smoke: the plot draws, also with no scalar column (as --filter avx512 leaves it)"
	$(BUILD)/bench --quick --no-2t --filter qk_decode_h64/f32,rmsnorm_1024x64/bf16,layernorm_768x512/f32 \
	  --offset 16 --k-shift 16 --w-offset 16 --json $(BUILD)/bench-smoke-k.json >/dev/null
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); \
	  k = [x for x in d["results"] if x["kind"] == "kernel"]; m = d["meta"]; \
	  assert m["offset_bytes"] == 16 and m["k_shift_bytes"] == 16 and m["w_offset_bytes"] == 16, m; \
	  assert k and all(x["check_vs_scalar"] == "agrees" for x in k), "q/k or weights off alignment: a variant differs"; \
	  print("bench-smoke: q and k at different offsets (--k-shift), weights 16 bytes in (--w-offset): %d variants agree" % len(k))' \
	  $(BUILD)/bench-smoke-k.json
	$(BUILD)/bench --quick --no-2t --no-rotate --filter qk_decode_h64/bf16,rmsnorm_4096x8192/f32 \
	  --json $(BUILD)/bench-smoke-nr.json >/dev/null
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); r = d["results"]; \
	  k = [x for x in r if x["kind"] == "kernel"]; \
	  assert d["meta"]["no_rotate"] is True, d["meta"]; \
	  assert all(x["sets"] == 2 and x["data_in"] == "1 set" for x in r if x["shape"] == "qk_decode_h64"), r; \
	  assert all(x["data_in"] == "DRAM" for x in r if x["shape"] == "rmsnorm_4096x8192"), r; \
	  assert k and all(x["check_vs_scalar"] == "agrees" and x["ns_median"] > 0 for x in k), "a variant differs"; \
	  print("bench-smoke: --no-rotate keeps decode on one set and DRAM shapes rotating: %d variants" % len(k))' \
	  $(BUILD)/bench-smoke-nr.json
	rm -rf $(BUILD)/bench-odd && $(KGEN) bench/specs/odd.lua -o $(BUILD)/bench-odd/gen >/dev/null
	$(call kb_bench_build,$(BUILD)/bench-odd/gen,$(BUILD)/bench-odd/bench)
	$(BUILD)/bench-odd/bench --quick --no-2t --offset 16 --k-shift 16 \
	  --filter decode,rmsnorm_100x1_,rmsnorm_100x64_,layernorm_200x512/ --json $(BUILD)/bench-odd.json >/dev/null
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"]; \
	  k = [x for x in r if x["kind"] == "kernel"]; s = {x["shape"] for x in k}; \
	  want = {"qk_decode_12x2x96_hm", "qk_decode_2x1x16", "qk_decode_4x1x64_hf", "rmsnorm_100x1_off1", \
	          "rmsnorm_100x64_off1", "layernorm_200x512"}; \
	  assert s == want, s ^ want; \
	  assert all(x["check_vs_scalar"] == "agrees" and x["ns_median"] > 0 for x in k), "a variant differs"; \
	  print("bench-smoke: another pack (bench/specs/odd.lua): %d variants on %d shapes of its own agree" % (len(k), len(s)))' \
	  $(BUILD)/bench-odd.json

TEST_TARGETS += bench-smoke

# Why: a generator change is kept on paired figures: BASE's kernels and the
# working tree's, the same harness and shapes, run alternately AB_RUNS
# times each (bench/ab.sh; bench/README.md).
AB_RUNS ?= 5
.PHONY: bench-ab bench-ab-smoke
bench-ab: deps
	@if [ -z "$(BASE)" ]; then echo 'bench-ab: say which revision to compare with: make bench-ab BASE=HEAD~1 [SPEC=...] [AB_RUNS=5]' >&2; exit 2; fi
	$(AB_FLAGS) sh bench/ab.sh "$(BASE)" "$(or $(SPEC),$(BENCH_SPEC))" "$(AB_RUNS)" $(BUILD)/bench-ab $(BENCH_ARGS)
	@echo "bench-ab: wrote $(BUILD)/bench-ab/ab.md"

# Why: the A/B script builds both sides and pairs their rows (HEAD against
# the working tree, one tiny kernel, --quick); no speed is asserted.
bench-ab-smoke:
	@if ! git rev-parse --verify --quiet HEAD >/dev/null 2>&1; then \
	  echo "bench-ab-smoke: SKIPPED (not a git checkout: no revision to compare with)"; exit 0; fi; \
	rm -rf $(BUILD)/bench-ab-smoke && \
	$(AB_FLAGS) sh bench/ab.sh HEAD "--op qk_norm --head-dim 64 --num-heads 4 --num-kv-heads 2 --dtype f32" 1 \
	  $(BUILD)/bench-ab-smoke --quick --filter qk_decode >/dev/null && \
	python3 -c 'import sys; t = open(sys.argv[1]).read().splitlines(); \
	  rows = [l for l in t if l.startswith("| QK-norm decode")]; \
	  assert len(rows) >= 2 and all(float(l.split("|")[6]) > 0 for l in rows), t; \
	  print("bench-ab-smoke: %d kernels timed on both sides (speed not asserted)" % len(rows))' \
	  $(BUILD)/bench-ab-smoke/ab.md

TEST_TARGETS += bench-ab-smoke
