# mk/bench.mk: speed, measured, never asserted by a test.
#   make bench        generate bench/specs/bench.lua (pack kgb) into out/,
#                     build build/bench (-O2), run it: the report on stdout,
#                     out/bench.md, out/bench.json, out/bench.png (gnuplot);
#                     BENCH_ARGS passes options (e.g. --filter qk_prefill)
#   make bench-smoke  in TEST_TARGETS: the harness builds and runs --quick on
#                     one small shape and writes well-formed reports, and on
#                     QK-norm decode with q and k at different offsets; no
#                     speed is asserted
# Copy figures worth keeping into bench/RESULTS.md by hand (machine, date,
# commit come with the report).

.PHONY: bench bench-smoke

BENCH_SPEC := bench/specs/bench.lua
BENCH_PACK := kgb
BENCH_CFLAGS ?= -O2 -g
BENCH_ARGS ?=
# the harness is bench.c + its kb_* helpers (other files in bench/ are not it)
BENCH_SRC := bench/bench.c $(wildcard bench/kb_*.c)
BENCH_COMMIT = $(shell git describe --always --dirty 2>/dev/null || echo unknown)

$(OUT)/$(BENCH_PACK)/$(BENCH_PACK).h: $(BENCH_SPEC) $(GEN_DEPS)
	$(KGEN) $(BENCH_SPEC) -o $(OUT)

# Why: fixed -O2 (not $(CFLAGS)): the figures must not depend on how the
# test suite was configured.
$(BUILD)/bench: $(BENCH_SRC) $(wildcard bench/kb_*.h) $(OUT)/$(BENCH_PACK)/$(BENCH_PACK).h | $(BUILD)
	$(CC) $(CSTD) $(BENCH_CFLAGS) $(WARN) -pthread -I$(OUT)/$(BENCH_PACK) -Ibench \
	  $(BENCH_SRC) $(OUT)/$(BENCH_PACK)/*.c -lm -o $@

bench: deps $(BUILD)/bench
	$(BUILD)/bench --md $(OUT)/bench.md --json $(OUT)/bench.json --dat $(OUT)/bench.dat \
	  --commit "$(BENCH_COMMIT)" $(BENCH_ARGS)
	gnuplot -e "datafile='$(OUT)/bench.dat'; outfile='$(OUT)/bench.png'" bench/plot.gp
	@echo "bench: wrote $(OUT)/bench.md $(OUT)/bench.json $(OUT)/bench.png"

# Why: proves the harness (variant lookup, argument wiring, ceilings, timing
# loop, all three writers) works on every `make test`, in well under a
# second of running; the JSON is parsed, every variant must agree with the
# scalar one on its first rows, timings need only be positive.
bench-smoke: $(BUILD)/bench
	$(BUILD)/bench --quick --filter rmsnorm_4096x1/f32 --md $(BUILD)/bench-smoke.md \
	  --json $(BUILD)/bench-smoke.json --dat $(BUILD)/bench-smoke.dat >/dev/null
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"]; \
	  k = [x for x in r if x["kind"] == "kernel"]; c = {x["what"] for x in r if x["kind"] == "ceiling"}; \
	  assert k and all(x["ns_median"] > 0 and x["gbps"] > 0 for x in r), "no timings"; \
	  assert c == {"memcpy", "nt-copy", "rmw"}, c; \
	  assert all(x["check_vs_scalar"] == "agrees" for x in k), "a variant differs from scalar"; \
	  print("bench-smoke: %d kernel variants and 3 ceilings timed (speed not asserted)" % len(k))' \
	  $(BUILD)/bench-smoke.json
	$(BUILD)/bench --quick --no-2t --filter qk_decode_h64/f32 --offset 16 --k-shift 16 \
	  --json $(BUILD)/bench-smoke-k.json >/dev/null
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); \
	  k = [x for x in d["results"] if x["kind"] == "kernel"]; \
	  assert d["meta"]["offset_bytes"] == 16 and d["meta"]["k_shift_bytes"] == 16, d["meta"]; \
	  assert k and all(x["check_vs_scalar"] == "agrees" for x in k), "q/k at different offsets: a variant differs"; \
	  print("bench-smoke: q and k at different offsets (--k-shift): %d variants agree" % len(k))' \
	  $(BUILD)/bench-smoke-k.json

TEST_TARGETS += bench-smoke
