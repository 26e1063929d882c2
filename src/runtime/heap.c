/*
 * The heap the runtime uses to write its log (log.c, shared.c): every
 * allocation carries its size, so that the runtime knows how much of it it
 * holds and the most it held, and a test can check that what a rank holds
 * at MPI_Finalize does not grow with the number of ranks.
 */
#include "internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The size header, padded so that what follows keeps malloc's alignment. */
#define HEADER (sizeof(max_align_t))

static _Atomic size_t held, peak;

static void *account(unsigned char *p, size_t n)
{
    if (!p)
        return NULL;
    memcpy(p, &n, sizeof n);
    size_t now = atomic_fetch_add(&held, n) + n, top = atomic_load(&peak);
    while (now > top && !atomic_compare_exchange_weak(&peak, &top, now))
        ;
    return p + HEADER;
}

void *pario_malloc(size_t n)
{
    return n > SIZE_MAX - HEADER ? NULL : account(malloc(n + HEADER), n);
}

void *pario_calloc(size_t count, size_t size)
{
    if (size && count > (SIZE_MAX - HEADER) / size)
        return NULL;
    return account(calloc(1, count * size + HEADER), count * size);
}

void pario_free(void *p)
{
    if (!p)
        return;
    unsigned char *h = (unsigned char *)p - HEADER;
    size_t n;
    memcpy(&n, h, sizeof n);
    atomic_fetch_sub(&held, n);
    free(h);
}

void *pario_realloc(void *p, size_t n)
{
    if (!p)
        return pario_malloc(n);
    if (n > SIZE_MAX - HEADER)
        return NULL;
    unsigned char *h = (unsigned char *)p - HEADER;
    size_t old;
    memcpy(&old, h, sizeof old);
    unsigned char *q = realloc(h, n + HEADER);
    if (!q)
        return NULL;
    atomic_fetch_sub(&held, old);
    return account(q, n);
}

size_t pario_heap_held(void) { return atomic_load(&held); }

size_t pario_heap_peak(void) { return atomic_load(&peak); }

void pario_heap_reset_peak(void) { atomic_store(&peak, atomic_load(&held)); }
