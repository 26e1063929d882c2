/* The data pattern the kernels write and verify (kernel_common.h). */
#define _POSIX_C_SOURCE 200809L
#include "kernel_common.h"
#include "kernel_parts.h"

#include <stdint.h>
#include <string.h>

/* ==== data pattern ============================================================== */

uint64_t kc_pattern_word(uint64_t w, uint64_t seed)
{
    uint64_t z = w + (seed + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void kc_pattern_fill(unsigned char *dst, uint64_t off, size_t len, uint64_t seed)
{
    while (len > 0 && (off & 7)) {
        *dst++ = (unsigned char)(kc_pattern_word(off >> 3, seed) >> (8 * (off & 7)));
        off++;
        len--;
    }
    while (len >= 8) {
        uint64_t z = kc_pattern_word(off >> 3, seed);
        for (int b = 0; b < 8; b++)
            dst[b] = (unsigned char)(z >> (8 * b));
        dst += 8;
        off += 8;
        len -= 8;
    }
    if (len > 0) {
        uint64_t z = kc_pattern_word(off >> 3, seed);
        for (size_t b = 0; b < len; b++)
            dst[b] = (unsigned char)(z >> (8 * b));
    }
}
