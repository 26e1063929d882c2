/*
 * The hook interface: what the collective-write engine needs from the
 * program it runs in (pario's runtime), its settings included, so that it
 * does not know it.  The
 * runtime fills a struct cw_hooks once, before the first open; every hook is
 * optional.  Engine files read the hooks through cw_hooks and cw_now();
 * nothing else in the engine calls back into the runtime.
 */
#ifndef PARIO_CW_HOOKS_H
#define PARIO_CW_HOOKS_H

#include <stdint.h>

struct cw_hooks {
    uint64_t (*now)(void);                 /* clock for the stats; NULL: CLOCK_MONOTONIC in ns */
    void (*writer_thread_started)(void);   /* a writer thread's I/O is the call's, not the rank's */
    void (*warn)(const char *fmt, ...);    /* one-line warning on stderr; NULL: say nothing */
    /* the program's settings for the engine (NULL: none) */
    const char *algorithm;                 /* ALGO[:SHUFFLE] for every file (PARIO_COLL) */
    const char *calls_path;                /* a line per call served, to this file (PARIO_COLL_CALLS) */
};

/* Install the hooks (copied; a NULL 'now' keeps the default clock). */
void cw_set_hooks(const struct cw_hooks *hooks);

/* The hooks in effect, for the engine's files. */
extern struct cw_hooks cw_hooks;

/* The hooks' clock: the ticks every time in struct cw_stats is counted in. */
uint64_t cw_now(void);

#endif
