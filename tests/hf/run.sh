#!/usr/bin/env bash
# tests/hf/run.sh: kgen --hf and --emit-spec from the command line.
#   - every tests/hf/MODEL/config.json gives a pack, byte-identical under
#     LuaJIT and Lua 5.4, and what the model needs (ops, shapes, offsets)
#   - --emit-spec writes a spec that regenerates the very same pack, and
#     the shipped specs/{qwen3-0.6b,llama-3-8b,gpt2}.lua are exactly what
#     --hf derives from those models' configs
#   - every tests/hf/bad/CASE.json fails with exit status 2 and exactly the
#     one line in CASE.err, writing nothing
#   - the pack name: _name_or_path, file name, folder, Hugging Face cache
#     layout, model_type; --name; options that do not apply
# Usage: tests/hf/run.sh (from anywhere; runs in a temp folder).
set -u
# shellcheck source=tests/hf/checks.sh
. "$(dirname -- "$0")/checks.sh"
cd "$root" || exit 1
KGEN=gen/kgen

luas="luajit lua5.4"

# --- good configs: both interpreters, same bytes -------------------------
for cfg in tests/hf/*/config.json; do
  model=$(basename "$(dirname "$cfg")")
  [ "$model" = bad ] && continue
  for lua in $luas; do
    if ! KGEN_LUA=$lua $KGEN --hf "$cfg" -o "$tmp/$lua/$model" >/dev/null 2>"$tmp/err"; then
      fail "$model ($lua): kgen --hf failed: $(cat "$tmp/err")"
      continue
    fi
    KGEN_LUA=$lua $KGEN --hf "$cfg" --emit-spec "$tmp/$lua/$model.lua" 2>/dev/null \
      || fail "$model ($lua): --emit-spec failed"
  done
  if diff -r "$tmp/luajit/$model" "$tmp/lua5.4/$model" >/dev/null \
      && cmp -s "$tmp/luajit/$model.lua" "$tmp/lua5.4/$model.lua"; then
    pass
  else
    fail "$model: luajit and lua5.4 output differ"
  fi
  # the emitted spec regenerates the same pack, byte for byte
  if $KGEN "$tmp/luajit/$model.lua" -o "$tmp/re/$model" >/dev/null \
      && diff -r "$tmp/luajit/$model" "$tmp/re/$model" >/dev/null; then
    pass
  else
    fail "$model: the --emit-spec spec does not regenerate the --hf pack"
  fi
done

# --- what each model needs (from the generated headers) ------------------
# expect MODEL PACK FILE-GLOB-PATTERN...: lines that must be in PACK.h
expect() {
  local model=$1 name=$2; shift 2
  local h="$tmp/luajit/$model/$name/$name.h"
  if [ ! -f "$h" ]; then fail "$model: no $h"; return; fi
  for want in "$@"; do
    if grep -qFx -- "$want" "$h"; then pass; else fail "$model: $name.h lacks '$want'"; fi
  done
}
forbid() {
  local model=$1 name=$2 pat=$3
  if grep -qF -- "$pat" "$tmp/luajit/$model/$name/$name.h"; then
    fail "$model: $name.h has '$pat'"
  else pass; fi
}
expect qwen3-0.6b qwen3_0_6b "#define QWEN3_0_6B_RMSNORM_DIM 1024" \
  "#define QWEN3_0_6B_QK_NORM_HEAD_DIM 128" "#define QWEN3_0_6B_QK_NORM_NUM_HEADS 16" \
  "#define QWEN3_0_6B_QK_NORM_NUM_KV_HEADS 8" \
  "/* rmsnorm: op rmsnorm, bf16, rounding \"single\" */"
forbid qwen3-0.6b qwen3_0_6b WEIGHT_OFFSET
expect Qwen3-30B-A3B qwen3_30b_a3b "#define QWEN3_30B_A3B_RMSNORM_DIM 2048" \
  "#define QWEN3_30B_A3B_QK_NORM_NUM_HEADS 32" "#define QWEN3_30B_A3B_QK_NORM_NUM_KV_HEADS 4"
expect llama-3-8b llama_3_8b "#define LLAMA_3_8B_RMSNORM_DIM 4096"
forbid llama-3-8b llama_3_8b QK_NORM
expect mistral-7b mistral_7b "#define MISTRAL_7B_RMSNORM_DIM 4096"
expect gemma-3-1b-it gemma_3_1b_it "#define GEMMA_3_1B_IT_RMSNORM_WEIGHT_OFFSET 1.0f" \
  "#define GEMMA_3_1B_IT_QK_NORM_WEIGHT_OFFSET 1.0f" "#define GEMMA_3_1B_IT_QK_NORM_HEAD_DIM 256" \
  "#define GEMMA_3_1B_IT_QK_NORM_NUM_KV_HEADS 1" "#define GEMMA_3_1B_IT_RMSNORM_DIM 1152"
expect gemma-3-4b-it gemma_3_4b_it "#define GEMMA_3_4B_IT_RMSNORM_DIM 2560" \
  "#define GEMMA_3_4B_IT_QK_NORM_NUM_HEADS 8" "#define GEMMA_3_4B_IT_QK_NORM_NUM_KV_HEADS 4" \
  "#define GEMMA_3_4B_IT_QK_NORM_HEAD_DIM 256" "#define GEMMA_3_4B_IT_RMSNORM_WEIGHT_OFFSET 1.0f"
expect gpt2 gpt2 "#define GPT2_LAYERNORM_DIM 768" \
  "/* layernorm: op layernorm, f32, rounding \"single\" */"
expect synthetic-qwen3 synthetic_qwen3 "#define SYNTHETIC_QWEN3_QK_NORM_HEAD_DIM 128" \
  "#define SYNTHETIC_QWEN3_QK_NORM_NUM_KV_HEADS 16" "#define SYNTHETIC_QWEN3_RMSNORM_DIM 2048" \
  "/* rmsnorm: op rmsnorm, f16, rounding \"single\" */"
expect bert-base-uncased bert_base_uncased "#define BERT_BASE_UNCASED_LAYERNORM_DIM 768"
# eps as the config writes it (in the emitted spec: the header rounds to f32)
eps_is() {
  if grep -qF "eps = $2" "$tmp/luajit/$1.lua"; then pass; else fail "$1: eps is not $2"; fi
}
eps_is qwen3-0.6b 1e-06
eps_is llama-3-8b 1e-05
eps_is gpt2 1e-05
eps_is bert-base-uncased 1e-12
eps_is gemma-3-4b-it 1e-06

# --- the shipped specs are what --hf derives -----------------------------
for m in qwen3-0.6b llama-3-8b gpt2; do
  if $KGEN "specs/$m.lua" -o "$tmp/shipped" >/dev/null \
      && name=$(ls "$tmp/luajit/$m") \
      && diff -r "$tmp/luajit/$m/$name" "$tmp/shipped/$name" >/dev/null; then
    pass
  else
    fail "specs/$m.lua does not give the pack of kgen --hf tests/hf/$m/config.json"
  fi
done

# --- bad configs: exit 2, exactly the expected line, nothing written -----
for cfg in tests/hf/bad/*.json; do
  want="${cfg%.json}.err"
  out="$tmp/bad/$(basename "$cfg" .json)"
  $KGEN --hf "$cfg" -o "$out" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" != 2 ]; then fail "$cfg: exit status $rc, want 2"; continue; fi
  # a .err line ending in "..." matches by prefix (library wording varies)
  w=$(cat "$want")
  if [ "${w%...}" != "$w" ]; then
    case "$(cat "$tmp/err")" in "${w%...}"*) [ "$(wc -l <"$tmp/err")" = 1 ] && ok=1 || ok=0 ;;
      *) ok=0 ;; esac
  else
    cmp -s "$tmp/err" "$want" && ok=1 || ok=0
  fi
  if [ "$ok" = 0 ]; then
    fail "$cfg: stderr differs from $want:"; diff "$want" "$tmp/err" | sed 's/^/    /'
    continue
  fi
  if [ -e "$out" ] || [ -s "$tmp/out" ]; then fail "$cfg: wrote something"; continue; fi
  pass
done

# --- a failed run leaves the previous pack untouched ---------------------
$KGEN --hf tests/hf/qwen3-8b/config.json -o "$tmp/keep" >/dev/null 2>&1
cp -R "$tmp/keep/qwen3_8b" "$tmp/keep.before"
$KGEN --hf tests/hf/bad/kv-heads-not-divisor.json --name qwen3_8b -o "$tmp/keep" >/dev/null 2>&1
if [ $? = 2 ] && diff -r "$tmp/keep.before" "$tmp/keep/qwen3_8b" >/dev/null; then pass
else fail "a failed --hf run touched the previous pack"; fi

# --- command line --------------------------------------------------------
# one_line_2 DESC CMD...: exit status 2 and one line on stderr
one_line_2() {
  local desc=$1; shift
  "$@" >/dev/null 2>"$tmp/err"
  local rc=$?
  if [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ]; then pass
  else fail "$desc: exit $rc, stderr: $(cat "$tmp/err")"; fi
}
q=tests/hf/qwen3-0.6b/config.json
one_line_2 "--hf with --dim" $KGEN --hf $q --dim 64 -o "$tmp/x"
one_line_2 "--hf with a spec file" $KGEN --hf $q specs/gpt2.lua -o "$tmp/x"
one_line_2 "--hf of a missing file" $KGEN --hf "$tmp/none.json" -o "$tmp/x"
one_line_2 "--hf --name not an identifier" $KGEN --hf $q --name qwen-3 -o "$tmp/x"
one_line_2 "--hf --isa unknown" $KGEN --hf $q --isa sse9 -o "$tmp/x"
one_line_2 "--emit-spec into a missing folder" $KGEN --hf $q --emit-spec "$tmp/no/such/dir/s.lua"
[ -e "$tmp/x" ] && fail "a refused command wrote $tmp/x" || pass

# --name, --isa, --dtype go into the spec
$KGEN --hf $q --name my_qwen --isa avx2 --dtype f32 --emit-spec "$tmp/opt.lua" 2>/dev/null
if grep -q 'name = "my_qwen"' "$tmp/opt.lua" && grep -q 'dtype = "f32"' "$tmp/opt.lua" \
    && grep -q 'isa = { "scalar", "avx2" }' "$tmp/opt.lua"; then pass
else fail "--name/--isa/--dtype not in the emitted spec: $(cat "$tmp/opt.lua")"; fi
# --emit-spec - writes to stdout, notes stay on stderr
if $KGEN --hf $q --emit-spec - 2>/dev/null | grep -q '^return {$'; then pass
else fail "--emit-spec - did not write the spec to stdout"; fi

# --- the derived pack name -----------------------------------------------
# name_is WANT CONFIG-PATH [in DIR]
name_is() {
  local want=$1 cfg=$2 dir=${3:-.}
  local got
  got=$(cd "$dir" && "$root/$KGEN" --hf "$cfg" --emit-spec - 2>/dev/null | sed -n 's/^  name = "\(.*\)",$/\1/p')
  if [ "$got" = "$want" ]; then pass; else fail "pack name of $cfg: '$got', want '$want'"; fi
}
mkdir -p "$tmp/names/models--Qwen--Qwen3-0.6B/snapshots/0123456789abcdef0123456789abcdef01234567"
cp $q "$tmp/names/models--Qwen--Qwen3-0.6B/snapshots/0123456789abcdef0123456789abcdef01234567/config.json"
name_is qwen3_0_6b "$tmp/names/models--Qwen--Qwen3-0.6B/snapshots/0123456789abcdef0123456789abcdef01234567/config.json"
cp $q "$tmp/names/My-Model.v2.json"
name_is my_model_v2 "$tmp/names/My-Model.v2.json"
cp $q "$tmp/names/config.json"
name_is qwen3 config.json "$tmp/names"
name_is names "$tmp/names/config.json"
sed 's/^{/{ "_name_or_path": "Qwen\/Qwen3-0.6B-Base",/' $q >"$tmp/names/np.json"
name_is qwen3_0_6b_base "$tmp/names/np.json"

summary tests/hf/run.sh
