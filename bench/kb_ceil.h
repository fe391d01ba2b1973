/* kb_ceil.h: the bandwidth ceilings a kernel is measured against, moving
 * the same bytes through the same buffers: memcpy, a copy with
 * non-temporal stores, and an in-place read-modify-write pass.
 *
 * A region is `rows` rows of `row_bytes` bytes, `stride` bytes apart (the
 * q|k heads of a fused QKV buffer are rows with gaps; a contiguous tensor
 * is one row). */
#ifndef KB_CEIL_H
#define KB_CEIL_H

#include <stddef.h>
#include <stdint.h>

/* Call once: picks the widest vector code this CPU runs. */
void kb_ceil_init(void);

/* What the NT copy and the RMW pass run with ("avx512", "avx2", ...). */
const char *kb_ceil_flavor(void);

/* dst[r] = src[r] for rows [r0, r1) with the C library's memcpy. */
void kb_ceil_memcpy(unsigned char *dst, const unsigned char *src, size_t r0,
                    size_t r1, size_t row_bytes, size_t stride);

/* The same copy, stores going around the caches (then one sfence). */
void kb_ceil_ntcopy(unsigned char *dst, const unsigned char *src, size_t r0,
                    size_t r1, size_t row_bytes, size_t stride);

/* p[r] ^= mask (64 bits, repeated) for rows [r0, r1), in place: one read
 * and one write of every byte, as an in-place kernel does. */
void kb_ceil_rmw(unsigned char *p, size_t r0, size_t r1, size_t row_bytes,
                 size_t stride, uint64_t mask);

#endif
