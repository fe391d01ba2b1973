/* kb_ceil.c: memcpy, non-temporal copy and in-place RMW ceilings.  The
 * vector paths carry their own target attributes (like the packs), so the
 * file builds with plain -O2 and picks its path at run time. */
#include "kb_ceil.h"

#include <string.h>

#include "kg_cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KB_X86 1
#else
#define KB_X86 0
#endif

static int kb_ceil_level = KG_ISA_SCALAR;

/* Why: resolve the CPU once, outside every timed region. */
void kb_ceil_init(void)
{
  kb_ceil_level = kg_cpu_best();
  if (kb_ceil_level != KG_ISA_AVX512 && kb_ceil_level != KG_ISA_AVX2)
    kb_ceil_level = KG_ISA_SCALAR;
}

/* Why: the report says which vector width the ceilings ran with. */
const char *kb_ceil_flavor(void)
{
  return kg_cpu_isa_name(kb_ceil_level);
}

/* Why: a contiguous region is one memcpy, as a caller would write it. */
void kb_ceil_memcpy(unsigned char *dst, const unsigned char *src, size_t r0,
                    size_t r1, size_t row_bytes, size_t stride)
{
  if (stride == row_bytes) {
    memcpy(dst + r0 * stride, src + r0 * stride, (r1 - r0) * row_bytes);
    return;
  }
  for (size_t r = r0; r < r1; r++)
    memcpy(dst + r * stride, src + r * stride, row_bytes);
}

#if KB_X86
/* Why: 4 zmm in flight per iteration saturates the load ports; streaming
 * stores need a 64-byte aligned destination (the caller aligns it). */
__attribute__((target("avx512f"))) static void kb_nt_512(unsigned char *d, const unsigned char *s, size_t n)
{
  size_t i = 0;
  for (; i + 256 <= n; i += 256) {
    __m512i a = _mm512_loadu_si512((const void *)(s + i));
    __m512i b = _mm512_loadu_si512((const void *)(s + i + 64));
    __m512i c = _mm512_loadu_si512((const void *)(s + i + 128));
    __m512i e = _mm512_loadu_si512((const void *)(s + i + 192));
    _mm512_stream_si512((void *)(d + i), a);
    _mm512_stream_si512((void *)(d + i + 64), b);
    _mm512_stream_si512((void *)(d + i + 128), c);
    _mm512_stream_si512((void *)(d + i + 192), e);
  }
  for (; i + 64 <= n; i += 64)
    _mm512_stream_si512((void *)(d + i), _mm512_loadu_si512((const void *)(s + i)));
  memcpy(d + i, s + i, n - i);
}

/* Why: the AVX2 machine's best streaming copy (32-byte aligned stores). */
__attribute__((target("avx2"))) static void kb_nt_256(unsigned char *d, const unsigned char *s, size_t n)
{
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
    __m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 32));
    __m256i c = _mm256_loadu_si256((const __m256i *)(s + i + 64));
    __m256i e = _mm256_loadu_si256((const __m256i *)(s + i + 96));
    _mm256_stream_si256((__m256i *)(d + i), a);
    _mm256_stream_si256((__m256i *)(d + i + 32), b);
    _mm256_stream_si256((__m256i *)(d + i + 64), c);
    _mm256_stream_si256((__m256i *)(d + i + 96), e);
  }
  for (; i + 32 <= n; i += 32)
    _mm256_stream_si256((__m256i *)(d + i), _mm256_loadu_si256((const __m256i *)(s + i)));
  memcpy(d + i, s + i, n - i);
}

/* Why: SSE2 is the x86-64 baseline, so this always runs. */
static void kb_nt_128(unsigned char *d, const unsigned char *s, size_t n)
{
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm_stream_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
  memcpy(d + i, s + i, n - i);
}

/* Why: align the destination to 64 with a short memcpy head, then stream. */
static void kb_nt_row(unsigned char *d, const unsigned char *s, size_t n)
{
  size_t head = (64 - ((uintptr_t)d & 63)) & 63;
  if (head > n) head = n;
  memcpy(d, s, head);
  d += head, s += head, n -= head;
  if (kb_ceil_level == KG_ISA_AVX512) kb_nt_512(d, s, n);
  else if (kb_ceil_level == KG_ISA_AVX2) kb_nt_256(d, s, n);
  else kb_nt_128(d, s, n);
}
#endif

/* Why: the copy that writes around the caches: the bound for a kernel
 * that streams its output (no read-for-ownership of the destination). */
void kb_ceil_ntcopy(unsigned char *dst, const unsigned char *src, size_t r0,
                    size_t r1, size_t row_bytes, size_t stride)
{
#if KB_X86
  if (stride == row_bytes) {
    kb_nt_row(dst + r0 * stride, src + r0 * stride, (r1 - r0) * row_bytes);
  } else {
    for (size_t r = r0; r < r1; r++)
      kb_nt_row(dst + r * stride, src + r * stride, row_bytes);
  }
  _mm_sfence();
#else
  kb_ceil_memcpy(dst, src, r0, r1, row_bytes, stride);
#endif
}

#if KB_X86
/* Why: xor with a non-zero mask is a real store of every line (no silent
 * store), costs one uop, and flipping sign bits keeps the data finite. */
__attribute__((target("avx512f"))) static size_t kb_rmw_512(unsigned char *p, size_t n, uint64_t mask)
{
  const __m512i m = _mm512_set1_epi64((long long)mask);
  size_t i = 0;
  for (; i + 256 <= n; i += 256) {
    __m512i a = _mm512_xor_si512(_mm512_loadu_si512((const void *)(p + i)), m);
    __m512i b = _mm512_xor_si512(_mm512_loadu_si512((const void *)(p + i + 64)), m);
    __m512i c = _mm512_xor_si512(_mm512_loadu_si512((const void *)(p + i + 128)), m);
    __m512i e = _mm512_xor_si512(_mm512_loadu_si512((const void *)(p + i + 192)), m);
    _mm512_storeu_si512((void *)(p + i), a);
    _mm512_storeu_si512((void *)(p + i + 64), b);
    _mm512_storeu_si512((void *)(p + i + 128), c);
    _mm512_storeu_si512((void *)(p + i + 192), e);
  }
  for (; i + 64 <= n; i += 64)
    _mm512_storeu_si512((void *)(p + i), _mm512_xor_si512(_mm512_loadu_si512((const void *)(p + i)), m));
  return i;
}

/* Why: the same pass with ymm registers for AVX2 machines. */
__attribute__((target("avx2"))) static size_t kb_rmw_256(unsigned char *p, size_t n, uint64_t mask)
{
  const __m256i m = _mm256_set1_epi64x((long long)mask);
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    __m256i a = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(p + i)), m);
    __m256i b = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(p + i + 32)), m);
    __m256i c = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(p + i + 64)), m);
    __m256i e = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(p + i + 96)), m);
    _mm256_storeu_si256((__m256i *)(p + i), a);
    _mm256_storeu_si256((__m256i *)(p + i + 32), b);
    _mm256_storeu_si256((__m256i *)(p + i + 64), c);
    _mm256_storeu_si256((__m256i *)(p + i + 96), e);
  }
  for (; i + 32 <= n; i += 32)
    _mm256_storeu_si256((__m256i *)(p + i), _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(p + i)), m));
  return i;
}
#endif

/* Why: one row of the pass: the vector body, then 8-byte words, then the
 * last bytes (the mask's low byte pattern repeats every 2 bytes). */
static void kb_rmw_row(unsigned char *p, size_t n, uint64_t mask)
{
  size_t i = 0;
#if KB_X86
  if (kb_ceil_level == KG_ISA_AVX512) i = kb_rmw_512(p, n, mask);
  else if (kb_ceil_level == KG_ISA_AVX2) i = kb_rmw_256(p, n, mask);
#endif
  for (; i + 8 <= n; i += 8) {
    uint64_t v;
    memcpy(&v, p + i, 8);
    v ^= mask;
    memcpy(p + i, &v, 8);
  }
  for (; i < n; i++) p[i] ^= (unsigned char)(mask >> (8 * (i & 7)));
}

/* Why: the bound for an in-place kernel: each byte read once and written
 * back, strided rows as the q|k heads of a fused QKV buffer are. */
void kb_ceil_rmw(unsigned char *p, size_t r0, size_t r1, size_t row_bytes,
                 size_t stride, uint64_t mask)
{
  if (stride == row_bytes) {
    kb_rmw_row(p + r0 * stride, (r1 - r0) * row_bytes, mask);
    return;
  }
  for (size_t r = r0; r < r1; r++) kb_rmw_row(p + r * stride, row_bytes, mask);
}
