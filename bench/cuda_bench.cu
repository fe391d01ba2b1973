/* cuda_bench.cu: GPU timings of a pack's CUDA variants (make bench-cuda).
 *
 * Shapes, found in the pack's CUDA variant table by their baked constants:
 *   qk_decode   QK-norm, head_dim 128 or 64, 32 Q + 8 K heads, 1 token
 *   qk_prefill  the same kernel, 2048 tokens
 *   rms_4096x1 / rms_4096x8192 / rms_8192x4096   RMSNorm (dim x rows)
 *   ln_8192x1 / ln_8192x4096                       LayerNorm
 * for every dtype the pack has them in.  Each is timed with CUDA events
 * around single launches: the median of many after a warm-up, input
 * buffers rotated so that the footprint is several times the L2 (a
 * one-token decode stays L2-resident, as in a real decode step).  Bytes
 * moved (x read, y written, weights once; QK-norm: q and k read and
 * written) over the median time is compared with a device-to-device
 * cudaMemcpyAsync of the same number of bytes (half read, half written),
 * timed the same way in the same run; and the decode shape with an empty
 * kernel's launch.  Small shapes (decode, one row) also get the time per
 * call in 1000 back-to-back launches, eager ("eager us") and replayed
 * from a captured CUDA graph ("graph us"): what a decode step that
 * launches its kernels one after another pays.  Targets:
 * large shapes >= 85 % of the copy's bandwidth, decode <= 1.5 x the empty
 * launch.  Exit status 1 when a target is
 * missed, 0 otherwise (also when there is no GPU: SKIPPED is printed).
 *
 * Options: --reps N (default 200), --md FILE, --json FILE. */
#include <cuda_runtime.h>

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include KG_PACK_HEADER

#define BCK(call)                                                                  \
  do {                                                                             \
    cudaError_t bck_e_ = (call);                                                   \
    if (bck_e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "cuda_bench: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,    \
              cudaGetErrorString(bck_e_));                                         \
      exit(2);                                                                     \
    }                                                                              \
  } while (0)

static __global__ void kg_bench_empty(void) {}

namespace {

struct result {
  char name[64];
  char variant[128];
  double bytes;      /* moved per call */
  double us;         /* median per call */
  double eager_us;   /* small shapes: per call in STREAM_N eager launches, else 0 */
  double graph_us;   /* small shapes: per call in a graph of STREAM_N, else 0 */
  double gbps;
  double copy_us;    /* the copy of the same bytes */
  double ratio;      /* of the copy's bandwidth, or empty launch time / time */
  const char *target;
  int met;           /* 1 met, 0 missed, -1 no target */
};

int g_reps = 200;
const int WARMUP = 20;
const int STREAM_N = 1000;
size_t g_l2 = 0;
cudaStream_t g_stream; /* every call and event: a stream that can be captured */

/* Why: the GPU time of what `work` enqueues on g_stream, between two
 * events, in ms. */
template <class F>
float event_ms(cudaEvent_t a, cudaEvent_t b, F work)
{
  float ms;
  BCK(cudaEventRecord(a, g_stream));
  work();
  BCK(cudaEventRecord(b, g_stream));
  BCK(cudaEventSynchronize(b));
  BCK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

float median(std::vector<float> t)
{
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/* Why: events around each call give GPU time without host jitter; the
 * median of many drops the outliers (clock changes, other tenants). */
template <class F>
double median_us(F call, int reps)
{
  cudaEvent_t a, b;
  std::vector<float> t;
  BCK(cudaEventCreate(&a));
  BCK(cudaEventCreate(&b));
  for (int i = 0; i < WARMUP; i++) call(i);
  BCK(cudaDeviceSynchronize());
  for (int i = 0; i < reps; i++) t.push_back(event_ms(a, b, [&] { call(WARMUP + i); }) * 1000.0f);
  BCK(cudaEventDestroy(a));
  BCK(cudaEventDestroy(b));
  return median(t);
}

/* Why: a decode step launches its kernels back to back, eagerly or as a
 * captured CUDA graph.  Per call, median of 5 runs of `n` calls: *eager is
 * host launches with no wait between them (launch gaps included: for
 * small shapes far below one launch between two events), *graph the same
 * calls captured once into a graph and replayed (what engines that
 * capture their decode step pay). */
template <class F>
void small_us(F call, int n, double *eager, double *graph)
{
  cudaEvent_t a, b;
  cudaGraph_t g;
  cudaGraphExec_t ge;
  std::vector<float> te, tg;
  BCK(cudaEventCreate(&a));
  BCK(cudaEventCreate(&b));
  for (int i = 0; i < WARMUP; i++) call(i);
  BCK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < n; i++) call(WARMUP + i);
  BCK(cudaStreamEndCapture(g_stream, &g));
  BCK(cudaGraphInstantiate(&ge, g, 0));
  BCK(cudaGraphLaunch(ge, g_stream));
  BCK(cudaStreamSynchronize(g_stream));
  for (int k = 0; k < 5; k++) {
    te.push_back(event_ms(a, b, [&] { for (int i = 0; i < n; i++) call(WARMUP + i); }) * 1000.0f / (float)n);
    tg.push_back(event_ms(a, b, [&] { BCK(cudaGraphLaunch(ge, g_stream)); }) * 1000.0f / (float)n);
  }
  BCK(cudaGraphExecDestroy(ge));
  BCK(cudaGraphDestroy(g));
  BCK(cudaEventDestroy(a));
  BCK(cudaEventDestroy(b));
  *eager = median(te);
  *graph = median(tg);
}

/* How many copies of a `bytes` working set keep the rotation out of L2
 * (at least 4 x L2 in all, at most 64 copies and 8 GiB). */
int rotation(size_t bytes, bool rotate)
{
  if (!rotate) return 1;
  size_t n = (4 * g_l2 + bytes - 1) / bytes;
  if (n < 1) n = 1;
  if (n > 64) n = 64;
  while (n > 1 && n * bytes > ((size_t)8 << 30)) n--;
  return (int)n;
}

void *dalloc(size_t bytes, int fill)
{
  void *p;
  BCK(cudaMalloc(&p, bytes));
  BCK(cudaMemset(p, fill, bytes));
  return p;
}

/* Why: the ceiling: a D2D copy of the same bytes (bytes/2 read, bytes/2
 * written), rotated the same way. */
double copy_us(double bytes, int nrot)
{
  const size_t half = (size_t)(bytes / 2);
  std::vector<void *> src(nrot), dst(nrot);
  for (int i = 0; i < nrot; i++) {
    src[i] = dalloc(half, 1);
    dst[i] = dalloc(half, 0);
  }
  const double us = median_us(
      [&](int i) { BCK(cudaMemcpyAsync(dst[i % nrot], src[i % nrot], half, cudaMemcpyDeviceToDevice, g_stream)); },
      g_reps);
  for (int i = 0; i < nrot; i++) {
    BCK(cudaFree(src[i]));
    BCK(cudaFree(dst[i]));
  }
  return us;
}

/* 0x3c00 (f16 1.0) / 0x3f80 (bf16 1.0) pairs; 0x3f800000 for f32: inputs of
 * ones keep every row on the fast path. */
void *dalloc_ones(size_t n, int dtype)
{
  std::vector<uint32_t> h;
  const size_t es = dtype == KG_F32 ? 4 : 2;
  const size_t words = (n * es + 3) / 4;
  const uint32_t w = dtype == KG_F32 ? 0x3f800000u : dtype == KG_BF16 ? 0x3f803f80u : 0x3c003c00u;
  h.assign(words, w);
  void *p;
  BCK(cudaMalloc(&p, words * 4));
  BCK(cudaMemcpy(p, h.data(), words * 4, cudaMemcpyHostToDevice));
  return p;
}

const char *dt_name(int dt) { return dt == KG_F32 ? "f32" : dt == KG_BF16 ? "bf16" : "f16"; }

result bench_rows(const kg_variant *v, size_t rows, bool large)
{
  const size_t d = v->dim, es = v->dtype == KG_F32 ? 4 : 2;
  const double bytes = 2.0 * (double)(rows * d * es) + (v->op == KG_OP_LAYERNORM ? 2.0 : 1.0) * (double)(d * es);
  const int nrot = rotation((size_t)bytes, true);
  std::vector<void *> x(nrot), y(nrot);
  void *w = dalloc_ones(d, v->dtype), *b = dalloc(d * es, 0);
  for (int i = 0; i < nrot; i++) {
    x[i] = dalloc_ones(rows * d, v->dtype);
    y[i] = dalloc(rows * d * es, 0);
  }
  result r;
  memset(&r, 0, sizeof r);
  snprintf(r.name, sizeof r.name, "%s_%zux%zu/%s", v->op == KG_OP_LAYERNORM ? "ln" : "rms", d, rows,
           dt_name(v->dtype));
  snprintf(r.variant, sizeof r.variant, "%s", v->symbol);
  r.bytes = bytes;
  auto call = [&](int i) {
    int e = v->op == KG_OP_LAYERNORM
                ? v->fn.layernorm_cuda(rows, x[i % nrot], d, w, b, y[i % nrot], d, NULL, NULL, g_stream)
                : v->fn.rmsnorm_cuda(rows, x[i % nrot], d, w, y[i % nrot], d, NULL, g_stream);
    BCK((cudaError_t)e);
  };
  r.us = median_us(call, g_reps);
  if (!large) small_us(call, STREAM_N, &r.eager_us, &r.graph_us);
  r.copy_us = copy_us(bytes, nrot);
  r.gbps = bytes / r.us * 1e-3;
  r.ratio = r.copy_us / r.us;
  r.target = large ? ">= 85 % of copy" : "";
  r.met = large ? (r.ratio >= 0.85) : -1;
  for (int i = 0; i < nrot; i++) {
    BCK(cudaFree(x[i]));
    BCK(cudaFree(y[i]));
  }
  BCK(cudaFree(w));
  BCK(cudaFree(b));
  return r;
}

/* QK-norm in place on a fused QKV buffer (token-major) or separate Q/K
 * buffers (head-major). */
result bench_qk(const kg_variant *v, size_t tokens, double empty_us)
{
  const size_t d = v->dim, nh = v->num_heads, nkv = v->num_kv_heads;
  const size_t es = v->dtype == KG_F32 ? 4 : 2;
  const bool tm = v->layout == KG_TOKEN_MAJOR;
  const size_t qs = tm ? (nh + 2 * nkv) * d : tokens * d;
  const size_t ks = tm ? qs : tokens * d;
  const size_t nq = tm ? tokens * qs : nh * qs, nk = tm ? 0 : nkv * ks;
  const double bytes = 2.0 * (double)(tokens * (nh + nkv) * d * es) + 2.0 * (double)(d * es);
  const bool decode = tokens == 1;
  const int nrot = rotation((size_t)((nq + nk) * es), !decode);
  std::vector<void *> q(nrot), k(nrot);
  void *w = dalloc_ones(2 * d, v->dtype);
  for (int i = 0; i < nrot; i++) {
    q[i] = dalloc_ones(nq, v->dtype);
    k[i] = tm ? (char *)q[i] + nh * d * es : dalloc_ones(nk, v->dtype);
  }
  result r;
  memset(&r, 0, sizeof r);
  snprintf(r.name, sizeof r.name, "qk_%s_%zux(%zu+%zu)x%zu/%s", decode ? "decode" : "prefill", tokens,
           nh, nkv, d, dt_name(v->dtype));
  snprintf(r.variant, sizeof r.variant, "%s", v->symbol);
  r.bytes = bytes;
  auto call = [&](int i) {
    BCK((cudaError_t)v->fn.qk_norm_cuda(tokens, q[i % nrot], qs, k[i % nrot], ks, w, (char *)w + d * es,
                                        g_stream));
  };
  r.us = median_us(call, decode ? 10 * g_reps : g_reps);
  if (decode) small_us(call, STREAM_N, &r.eager_us, &r.graph_us);
  r.gbps = bytes / r.us * 1e-3;
  if (decode) {
    r.copy_us = 0;
    r.ratio = r.us / empty_us;
    r.target = "<= 1.5 x empty launch";
    r.met = r.ratio <= 1.5;
  } else {
    r.copy_us = copy_us(bytes, nrot);
    r.ratio = r.copy_us / r.us;
    r.target = ">= 85 % of copy";
    r.met = r.ratio >= 0.85;
  }
  for (int i = 0; i < nrot; i++) {
    BCK(cudaFree(q[i]));
    if (!tm) BCK(cudaFree(k[i]));
  }
  BCK(cudaFree(w));
  return r;
}

/* Why: one Markdown table for the terminal and the --md file alike. */
void print_table(FILE *f, const std::vector<result> &res, double empty_us, double empty_stream_us,
                 double empty_graph_us)
{
  fprintf(f, "| shape | variant | MB moved | median us | eager us | graph us | GB/s | copy us | ratio | target |\n");
  fprintf(f, "|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
  fprintf(f, "| empty kernel launch | kg_bench_empty | 0 | %.2f | %.2f | %.2f | | | | |\n", empty_us,
          empty_stream_us, empty_graph_us);
  for (const result &r : res) {
    char st[32] = "", gr[32] = "";
    if (r.eager_us > 0) snprintf(st, sizeof st, "%.2f", r.eager_us);
    if (r.graph_us > 0) snprintf(gr, sizeof gr, "%.2f", r.graph_us);
    fprintf(f, "| %s | %s | %.3f | %.2f | %s | %s | %.0f | %.2f | %.3f | %s%s |\n", r.name, r.variant,
            r.bytes * 1e-6, r.us, st, gr, r.gbps, r.copy_us, r.ratio, r.target,
            r.met < 0 ? "" : r.met ? ": met" : ": MISSED");
  }
}

} // namespace

int main(int argc, char **argv)
{
  const char *md = NULL, *json = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) g_reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--md") && i + 1 < argc) md = argv[++i];
    else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--reps N] [--md FILE] [--json FILE]\n", argv[0]);
      return 2;
    }
  }
  if (g_reps < 1) g_reps = 1;
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    printf("SKIPPED cuda bench: %s\n",
           e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    return 0;
  }
  cudaDeviceProp prop;
  BCK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major < 8) {
    printf("SKIPPED cuda bench: device %s is sm_%d%d; the pack is built for sm_80+\n", prop.name,
           prop.major, prop.minor);
    return 0;
  }
  g_l2 = (size_t)prop.l2CacheSize;
  char devline[512];
  snprintf(devline, sizeof devline, "%s, sm_%d%d, %d SMs, L2 %zu MiB", prop.name, prop.major,
           prop.minor, prop.multiProcessorCount, g_l2 >> 20);
  printf("cuda bench: %s; median of %d timed launches after %d warm-up\n", devline, g_reps, WARMUP);

  BCK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  auto empty = [&](int) {
    kg_bench_empty<<<1, 32, 0, g_stream>>>();
    BCK(cudaGetLastError());
  };
  const double empty_us = median_us(empty, 10 * g_reps);
  double empty_stream_us, empty_graph_us;
  small_us(empty, STREAM_N, &empty_stream_us, &empty_graph_us);

  std::vector<result> res;
  for (size_t i = 0; i < KG_PACK_CUDA_NUM; i++) {
    const kg_variant *v = &KG_PACK_CUDA_VARIANTS[i];
    if (v->op == KG_OP_QK_NORM && (v->dim == 128 || v->dim == 64) && v->num_heads == 32 && v->num_kv_heads == 8 &&
        v->rounding == KG_ROUND_SINGLE) {
      res.push_back(bench_qk(v, 1, empty_us));
      res.push_back(bench_qk(v, 2048, empty_us));
    } else if (v->op == KG_OP_RMSNORM && v->dim == 4096 && v->rounding == KG_ROUND_SINGLE &&
               v->weight_offset == 0.0f) {
      res.push_back(bench_rows(v, 1, false));
      res.push_back(bench_rows(v, 8192, true));
    } else if ((v->op == KG_OP_RMSNORM || v->op == KG_OP_LAYERNORM) && v->dim == 8192 &&
               v->rounding == KG_ROUND_SINGLE) {
      if (v->op == KG_OP_LAYERNORM) res.push_back(bench_rows(v, 1, false));
      res.push_back(bench_rows(v, 4096, true));
    }
  }

  int missed = 0, targets = 0;
  for (const result &r : res) {
    if (r.met == 0) missed++;
    if (r.met >= 0) targets++;
  }
  printf("\n");
  print_table(stdout, res, empty_us, empty_stream_us, empty_graph_us);
  if (md) {
    FILE *f = fopen(md, "w");
    if (!f) {
      perror(md);
      return 2;
    }
    fprintf(f, "# CUDA bench\n\n%s; median of %d launches.\n\n", devline, g_reps);
    print_table(f, res, empty_us, empty_stream_us, empty_graph_us);
    fclose(f);
  }
  if (json) {
    FILE *f = fopen(json, "w");
    if (!f) {
      perror(json);
      return 2;
    }
    fprintf(f, "{\n  \"device\": \"%s\",\n  \"reps\": %d,\n  \"empty_launch_us\": %.4f,\n"
            "  \"empty_eager_us\": %.4f,\n  \"empty_graph_us\": %.4f,\n  \"results\": [\n", devline, g_reps,
            empty_us, empty_stream_us, empty_graph_us);
    for (size_t i = 0; i < res.size(); i++) {
      const result &r = res[i];
      fprintf(f, "    {\"shape\": \"%s\", \"variant\": \"%s\", \"bytes\": %.0f, \"us_median\": %.4f, "
              "\"eager_us\": %.4f, \"graph_us\": %.4f, \"gbps\": %.2f, \"copy_us\": %.4f, \"ratio\": %.4f, \"target\": \"%s\", \"met\": %s}%s\n",
              r.name, r.variant, r.bytes, r.us, r.eager_us, r.graph_us, r.gbps, r.copy_us, r.ratio, r.target,
              r.met < 0 ? "null" : r.met ? "true" : "false", i + 1 < res.size() ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    fclose(f);
  }
  if (res.empty()) {
    printf("cuda bench: no variant of the pack has a benchmark shape\n");
    return 1;
  }
  printf("\ncuda bench: %d of %d targets missed\n", missed, targets);
  return missed ? 1 : 0;
}
