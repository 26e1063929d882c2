/*
 * The auto policy: the variant of each call, from the file's earlier calls.
 *
 * Calls of a file fall in two classes: one buffer cycle (nothing to overlap:
 * only the shuffle matters) and several.  Each class has a list of candidate
 * variants.  The first is the static choice, fitted on the 16-core bench runs
 * of docs/performance.md ("auto's static choice and aggregators"): for
 * several cycles write:rma-lock, the best geometric mean over the kernels;
 * for one cycle none:p2p (an RMA window is not worth creating for one cycle).
 * A shuffle named by the hints or PARIO_COLL replaces the static choice's.
 * The other candidates are the variants that were fastest in some
 * configuration of those runs, and no others: each try of a slower one costs
 * a call.  The first call of a class runs the static choice.  Later calls run
 * the best measured so far, except that a call tries a candidate not yet
 * measured (or, every AUTO_RECHECK calls, the runner-up again) when the time
 * such tries cost beyond the best stays within AUTO_EXPLORE_SHARE of the
 * class's time, counting the try as if it took twice the best's time: a file
 * written a few times runs the static choice only.  The cost of a call is the
 * slowest rank's time per byte of the call's file range, and every rank sees
 * the same slowest time (the allreduce that ends the call), so all ranks make
 * the same choices without a message of their own.
 */

#include "cw_internal.h"

#include <string.h>

/* Overridable at compile time (-D), for bench/auto_sim.py's variants of the policy. */
#ifndef AUTO_EXPLORE_SHARE
#define AUTO_EXPLORE_SHARE 0.1
#endif
#ifndef AUTO_RECHECK
#define AUTO_RECHECK 16
#endif

struct cw_variant {
    int algorithm, shuffle;
};

static const struct cw_variant many_cycles[] = {
    {CW_WRITE, CW_RMA_LOCK}, {CW_COMM, CW_RMA_LOCK}, {CW_WRITE_COMM, CW_RMA_LOCK}, {CW_NONE, CW_RMA_LOCK}};
static const struct cw_variant one_cycle[] = {{CW_NONE, CW_P2P}, {CW_NONE, CW_RMA_LOCK}, {CW_NONE, CW_RMA_FENCE}};

/* The candidates of a class, the static choice first; returns how many. */
static int candidates(const struct cw_file *f, int cls, struct cw_variant *out)
{
    const struct cw_variant *list = cls ? many_cycles : one_cycle;
    int n = cls ? (int)(sizeof many_cycles / sizeof *many_cycles) : (int)(sizeof one_cycle / sizeof *one_cycle);
    struct cw_variant first = list[0];
    if (f->hints.shuffle)
        first.shuffle = f->hints.shuffle;
    int k = 0;
    out[k++] = first;
    for (int i = 0; i < n && k < CW_AUTO_MAX_CANDIDATES; i++)
        if (list[i].algorithm != first.algorithm || list[i].shuffle != first.shuffle)
            out[k++] = list[i];
    return k;
}

/* The candidate this call runs, and whether it runs to be measured. */
static int auto_choose(const struct cw_auto *a, int n, int64_t span, int *explore)
{
    *explore = 0;
    if (a->best < 0)
        return 0;
    double est = a->measured[a->best].cost * (double)span; /* what the best would take */
    if (a->excess_ns + est > AUTO_EXPLORE_SHARE * (a->total_ns + est))
        return a->best;
    for (int i = 0; i < n; i++)
        if (a->measured[i].calls == 0) {
            *explore = 1;
            return i;
        }
    if (a->calls - a->last_try < AUTO_RECHECK)
        return a->best;
    int runner = -1;
    for (int i = 0; i < n; i++)
        if (i != a->best && (runner < 0 || a->measured[i].cost < a->measured[runner].cost))
            runner = i;
    if (runner < 0)
        return a->best;
    *explore = 1;
    return runner;
}

/* The file's auto state for calls of this class, taken over from the least
 * recently used class when the file has no room left. */
static int auto_class_of(struct cw_file *f, int cycles, int size_log2)
{
    int slot = 0;
    for (int i = 0; i < CW_AUTO_CLASSES; i++) {
        struct cw_auto *a = &f->autos[i];
        if (a->used && a->cycles == cycles && a->size_log2 == size_log2)
            return i;
        if (!a->used || (f->autos[slot].used && a->last_call < f->autos[slot].last_call))
            slot = i;
    }
    struct cw_auto *a = &f->autos[slot];
    memset(a, 0, sizeof *a);
    a->used = 1;
    a->cycles = cycles;
    a->size_log2 = size_log2;
    a->best = -1;
    return slot;
}

void cw_auto_pick(struct cw_ctx *call)
{
    struct cw_file *f = call->f;
    int cycles = cw_count_cycles(call, f->hints.cb_buffer_size) > 1, size_log2 = 0;
    for (int64_t s = call->span; s > 1; s >>= 1)
        size_log2++;
    int c = auto_class_of(f, cycles, size_log2), explore = 0;
    struct cw_auto *a = &f->autos[c];
    a->last_call = f->auto_calls++;
    struct cw_variant list[CW_AUTO_MAX_CANDIDATES];
    int i = auto_choose(a, candidates(f, cycles, list), call->span, &explore);
    struct cw_variant v = list[i];
    call->auto_class = c;
    call->auto_candidate = i;
    call->auto_explored = explore;
    call->shuffle = v.shuffle;
    cw_set_schedule(call, v.algorithm);
}

/* After the call: its slowest rank's time, on every rank. */
void cw_auto_learn(struct cw_file *f, const struct cw_ctx *call, uint64_t t_call)
{
    if (call->auto_class < 0 || call->span <= 0)
        return;
    struct cw_auto *a = &f->autos[call->auto_class];
    int i = call->auto_candidate;
    double cost = (double)t_call / (double)call->span;
    if (call->auto_explored) {
        double over = (double)t_call - a->measured[a->best].cost * (double)call->span;
        a->excess_ns += over > 0 ? over : 0;
        a->last_try = a->calls;
    }
    a->measured[i].cost = a->measured[i].calls ? 0.5 * a->measured[i].cost + 0.5 * cost : cost;
    a->measured[i].calls++;
    a->measured[i].last = a->calls;
    a->calls++;
    a->total_ns += (double)t_call;
    int best = -1;
    struct cw_variant list[CW_AUTO_MAX_CANDIDATES];
    int n = candidates(f, a->cycles, list);
    for (int j = 0; j < n; j++)
        if (a->measured[j].calls && (best < 0 || a->measured[j].cost < a->measured[best].cost))
            best = j;
    a->best = best;
}

/* auto's best variant of the class of this call, as the log keeps it. */
int cw_auto_kept(const struct cw_file *f, const struct cw_ctx *call)
{
    if (call->auto_class < 0 || f->autos[call->auto_class].best < 0)
        return 0;
    const struct cw_auto *a = &f->autos[call->auto_class];
    struct cw_variant list[CW_AUTO_MAX_CANDIDATES];
    candidates(f, a->cycles, list);
    return cw_variant_code(list[a->best].algorithm, list[a->best].shuffle);
}
