/*
 * auto's policy outside the engine, for bench/auto_sim.py: src/collective/auto.c
 * itself, compiled into a shared library with the two engine functions it
 * calls replaced: cw_count_cycles answers the recorded buffer cycles of the
 * call, cw_set_schedule keeps the algorithm.  The simulator gives each call
 * its file range and cycles (sim_pick), runs the variant auto picked in its
 * recording, and tells auto the recorded time (sim_learn).  Build (auto_sim.py
 * does): mpicc -shared -fPIC -I src/collective [-DAUTO_RECHECK=8 ...]
 * bench/auto_sim.c -o auto_sim.so
 */
#include "auto.c"

#include <stdlib.h>

static int64_t sim_cycles; /* the call's cycles at cb_buffer_size, as recorded */

int64_t cw_count_cycles(const struct cw_ctx *call, int64_t buf_bytes)
{
    (void)call;
    (void)buf_bytes;
    return sim_cycles;
}

void cw_set_schedule(struct cw_ctx *call, int alg) { call->algorithm = alg; }

/* One file under auto, and its call in progress. */
struct sim {
    struct cw_file f;
    struct cw_ctx call;
};

/* A file written under auto with the hints' shuffle (0: none named). */
struct sim *sim_new(int hint_shuffle)
{
    struct sim *s = calloc(1, sizeof *s);
    if (s)
        s->f.hints.shuffle = hint_shuffle;
    return s;
}

void sim_free(struct sim *s) { free(s); }

/* auto's choice for a call of span bytes and cycles buffer cycles: its
 * variant (cw_variant_code), candidate index, whether it explores, and its
 * class slot. */
int sim_pick(struct sim *s, int64_t span, int64_t cycles, int *candidate, int *explored, int *slot)
{
    memset(&s->call, 0, sizeof s->call);
    s->call.f = &s->f;
    s->call.span = span;
    sim_cycles = cycles;
    cw_auto_pick(&s->call);
    *candidate = s->call.auto_candidate;
    *explored = s->call.auto_explored;
    *slot = s->call.auto_class;
    return cw_variant_code(s->call.algorithm, s->call.shuffle);
}

/* The slowest rank's time of the call sim_pick chose for, in ticks. */
void sim_learn(struct sim *s, uint64_t ticks) { cw_auto_learn(&s->f, &s->call, ticks); }

/* The candidates of a class (0 one cycle, 1 several) as variant codes, the
 * static choice first, under the hints' shuffle; returns how many. */
int sim_candidates(int cls, int hint_shuffle, int *codes)
{
    struct cw_file f;
    memset(&f, 0, sizeof f);
    f.hints.shuffle = hint_shuffle;
    struct cw_variant list[CW_AUTO_MAX_CANDIDATES];
    int n = candidates(&f, cls, list);
    for (int i = 0; i < n; i++)
        codes[i] = cw_variant_code(list[i].algorithm, list[i].shuffle);
    return n;
}

/* The policy's constants this library was built with. */
double sim_explore_share(void) { return AUTO_EXPLORE_SHARE; }
int sim_recheck(void) { return AUTO_RECHECK; }
