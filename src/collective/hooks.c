/*
 * The hook interface (hooks.h): the default clock and the hooks in effect.
 */
#include "hooks.h"

#include <time.h>

static uint64_t default_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct cw_hooks cw_hooks = {.now = default_now};

void cw_set_hooks(const struct cw_hooks *h)
{
    cw_hooks = *h;
    if (!cw_hooks.now)
        cw_hooks.now = default_now;
}

uint64_t cw_now(void) { return cw_hooks.now(); }
