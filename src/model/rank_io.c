/*
 * pario model: per-rank I/O time and bytes of one layer's file records (docs/metrics.md,
 * "Shared files"), built into libpario_model.so and called by pario.model.rankio through cffi.
 *
 * It computes what rank_io's NumPy code computes, in a few passes over the records instead of
 * some two hundred NumPy calls (a log of ten records spent 0.2 ms a layer in them).  Every
 * value comes from the same IEEE operations in the same order, so the results are the NumPy
 * code's bit for bit; the one sum NumPy does its own way, the sum over the shared records of
 * every rank, is left to the caller: phase 0 writes the terms, the caller sums each row with
 * NumPy, and phase 1 adds the sums and everything after them.
 *
 * Columns (cols[i], NULL when the records lack it; kinds[i]: COL_I64, COL_F64 or COL_U64):
 * rank, the five counters (read, write and metadata time, bytes read and written), then
 * fastest_rank, slowest_rank, fastest_rank_time, slowest_rank_time, fastest_rank_bytes,
 * slowest_rank_bytes.  A counter is 0 where negative or not finite (Darshan's -1: not
 * recorded); a rank column holds -1 where missing.
 *
 * A shared record (rank < 0) has its members in member_ranks[member_at[i] ..] (member_n[i] of
 * them) where known[i] (NULL: none known), else every rank.  Indices i count shared records.
 *
 * out: the 7 quantities (read, write, meta time, time, bytes read, bytes written, bytes), a
 * row of nprocs values each.  Phase 0 fills rows 0-2 and 4-5 with the records of one rank,
 * counts the shared records and those of every rank (state[0], state[1]) and, per quantity,
 * the records with a positive value (state[2..8]), and writes, per counter c, the share of each
 * rank from each shared record of every rank (terms[c * n + j], j = 0 .. state[1] - 1).
 * Phase 1 adds sums[c] (NumPy's sum of those terms, where there are any) to every rank, then
 * the known members' shares, then the fastest and slowest ranks' differences, and fills rows
 * 3 and 6; per quantity, whether every per-rank value is exact (state[9..15], 1 or 0) and
 * whether, alone, its maximum would be (state[16..22]).  Returns 0, or -1 out of memory.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { COL_I64 = 0, COL_F64 = 1, COL_U64 = 2 };
enum { C_RANK, C_READ_T, C_WRITE_T, C_META_T, C_READ_B, C_WRITE_B,
       C_FAST, C_SLOW, C_FAST_T, C_SLOW_T, C_FAST_B, C_SLOW_B, C_COUNT };
enum { NQ = 7, NC = 5 };

int pario_rank_io(int32_t phase, int64_t n, int64_t nprocs, const void *const *cols,
                  const int32_t *kinds, const uint8_t *known, const int64_t *member_n,
                  const int64_t *member_at, const int64_t *member_ranks, double *out,
                  double *terms, const double *sums, int64_t *state);

/* a counter as rank_io reads it: 0 where missing, negative or not finite */
static double counter(const void *col, int32_t kind, int64_t i)
{
    if (!col)
        return 0.0;
    if (kind == COL_F64) {
        double v = ((const double *)col)[i];
        return (isfinite(v) && v > 0.0) ? v : 0.0;
    }
    if (kind == COL_U64)
        return (double)((const uint64_t *)col)[i];
    int64_t v = ((const int64_t *)col)[i];
    return v > 0 ? (double)v : 0.0;
}

/* a float as NumPy's astype(int64) makes it on x86-64: out of range -> INT64_MIN */
static int64_t truncated(double v)
{
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
        return INT64_MIN;
    return (int64_t)v;
}

/* a rank column as rank_io reads it: -1 where missing, through a float as NumPy converts it */
static int64_t rank_of(const void *col, int32_t kind, int64_t i)
{
    if (!col)
        return -1;
    if (kind == COL_F64) {
        double v = ((const double *)col)[i];
        return isnan(v) ? -1 : truncated(v);
    }
    if (kind == COL_U64)
        return truncated((double)((const uint64_t *)col)[i]);
    return truncated((double)((const int64_t *)col)[i]);
}

static double larger(double a, double b) /* np.maximum: a where a >= b or a is NaN */
{
    return (a >= b || isnan(a)) ? a : b;
}

static int is_member(int64_t r, const int64_t *m, int64_t count)
{
    for (int64_t j = 0; j < count; j++)
        if (m[j] == r)
            return 1;
    return 0;
}

/* a group of counters: the times (3) or the bytes (2) */
struct group {
    int first, count;        /* counters first .. first + count - 1 */
    int rows[3], total_row;  /* their rows in out, their total's */
    int fast_col, slow_col;  /* the fastest and slowest rank's value of the group */
};

static const struct group GROUPS[2] = {
    {0, 3, {0, 1, 2}, 3, C_FAST_T, C_SLOW_T},
    {3, 2, {4, 5, 0}, 6, C_FAST_B, C_SLOW_B},
};

static const int ROW_OF[NC] = {0, 1, 2, 4, 5};

/* the shared records, in their order */
struct shared {
    int64_t count;
    double *val;           /* NC rows of count */
    double *vfast, *vslow; /* 2 rows (times, bytes) of count */
    int64_t *fast, *slow, *size;
    const uint8_t *known;  /* per shared record, or NULL */
    const int64_t *member_n, *member_at, *member_ranks;
};

/* how one shared record's group is spread: its total, what each rank but the fastest and
 * slowest gets (rest), whether the fastest and slowest are placed exactly (valid) */
struct placement {
    double total, rest;
    int valid;
};

static struct placement place(const struct shared *S, const struct group *G, int g, int64_t s,
                              int64_t nprocs)
{
    int64_t ns = S->count, m = S->size[s], fast = S->fast[s], slow = S->slow[s];
    double vf = S->vfast[g * ns + s], vs = S->vslow[g * ns + s];
    double total = S->val[G->first * ns + s];
    for (int c = 1; c < G->count; c++)
        total += S->val[(G->first + c) * ns + s];
    double tol = 1e-9 * larger(total, 1.0);
    int valid = m >= 2 && fast >= 0 && fast < nprocs && slow >= 0 && slow < nprocs && fast != slow;
    valid = valid && vf <= vs + tol && vf + vs <= total + tol;
    valid = valid && (m != 2 || fabs(vf + vs - total) <= tol);
    double others = (double)(m - 2 > 1 ? m - 2 : 1);
    double between = (total - vf - vs) / others;
    valid = valid && (m <= 2 || (between >= vf - tol && between <= vs + tol));
    if (valid && S->known && S->known[s]) {
        const int64_t *members = S->member_ranks + S->member_at[s];
        valid = is_member(fast, members, m) && is_member(slow, members, m);
    }
    struct placement p = {total, 0.0, valid};
    p.rest = valid ? larger(total - vf - vs, 0.0) / others : total / (double)(m > 1 ? m : 1);
    return p;
}

static double fraction(double v, double total)
{
    return total > 0.0 ? v / total : 0.0;
}

static void own_records(int64_t n, int64_t nprocs, const void *const *cols, const int32_t *kinds,
                        double *out, int64_t *counts, int64_t *contributors)
{
    memset(out, 0, sizeof(double) * (size_t)(NQ * nprocs));
    memset(contributors, 0, sizeof(int64_t) * NQ);
    counts[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        double v[NC];
        for (int c = 0; c < NC; c++)
            v[c] = counter(cols[C_READ_T + c], kinds[C_READ_T + c], i);
        double q[NQ] = {v[0], v[1], v[2], v[0] + v[1] + v[2], v[3], v[4], v[3] + v[4]};
        for (int k = 0; k < NQ; k++)
            contributors[k] += q[k] > 0.0;
        int64_t r = rank_of(cols[C_RANK], kinds[C_RANK], i);
        if (r >= 0 && r < nprocs)
            for (int c = 0; c < NC; c++)
                out[ROW_OF[c] * nprocs + r] += v[c];
        counts[0] += r < 0;
    }
}

static int gather(struct shared *S, int64_t n, int64_t nprocs, const void *const *cols,
                  const int32_t *kinds)
{
    size_t ns = (size_t)S->count;
    S->val = malloc(sizeof(double) * ns * NC);
    S->vfast = malloc(sizeof(double) * ns * 2);
    S->vslow = malloc(sizeof(double) * ns * 2);
    S->fast = malloc(sizeof(int64_t) * ns * 3);
    if (!S->val || !S->vfast || !S->vslow || !S->fast)
        return -1;
    S->slow = S->fast + ns;
    S->size = S->fast + 2 * ns;
    int both = cols[C_FAST] && cols[C_SLOW];
    for (int64_t i = 0, s = 0; i < n; i++) {
        if (rank_of(cols[C_RANK], kinds[C_RANK], i) >= 0)
            continue;
        for (int c = 0; c < NC; c++)
            S->val[c * (int64_t)ns + s] = counter(cols[C_READ_T + c], kinds[C_READ_T + c], i);
        S->fast[s] = both ? rank_of(cols[C_FAST], kinds[C_FAST], i) : -1;
        S->slow[s] = both ? rank_of(cols[C_SLOW], kinds[C_SLOW], i) : -1;
        for (int g = 0; g < 2; g++) {
            S->vfast[g * (int64_t)ns + s] = counter(cols[GROUPS[g].fast_col], kinds[GROUPS[g].fast_col], i);
            S->vslow[g * (int64_t)ns + s] = counter(cols[GROUPS[g].slow_col], kinds[GROUPS[g].slow_col], i);
        }
        S->size[s] = (S->known && S->known[s]) ? S->member_n[s] : nprocs;
        s++;
    }
    return 0;
}

/* phase 0: the terms of every rank's share, per counter, of the shared records of every rank */
static int64_t write_terms(const struct shared *S, int64_t n, int64_t nprocs, double *terms)
{
    int64_t e = 0;
    for (int64_t s = 0; s < S->count; s++) {
        if (S->known && S->known[s])
            continue;
        for (int g = 0; g < 2; g++) {
            const struct group *G = &GROUPS[g];
            struct placement p = place(S, G, g, s, nprocs);
            for (int c = 0; c < G->count; c++)
                terms[(G->first + c) * n + e] = p.rest * fraction(S->val[(G->first + c) * S->count + s], p.total);
        }
        e++;
    }
    return e;
}

/* phase 1: one counter's shares added to its row of out, as rank_io's NumPy code adds them */
static void spread(const struct shared *S, const struct group *G, int g, int c, int64_t nprocs,
                   const struct placement *p, int64_t n_everyone, double sum, double *tmp, double *row)
{
    int64_t ns = S->count;
    const double *val = S->val + (G->first + c) * ns;
    if (n_everyone > 0)
        for (int64_t r = 0; r < nprocs; r++)
            row[r] += sum;
    if (S->known) {  /* one bincount of the known members' shares, added to the row */
        int64_t placed = 0;
        memset(tmp, 0, sizeof(double) * (size_t)nprocs);
        for (int64_t s = 0; s < ns; s++) {
            double amount = p[s].rest * fraction(val[s], p[s].total);
            if (!S->known[s] || amount == 0.0)
                continue;
            const int64_t *members = S->member_ranks + S->member_at[s];
            for (int64_t j = 0; j < S->member_n[s]; j++)
                tmp[members[j]] += amount;
            placed += S->member_n[s];
        }
        if (placed)
            for (int64_t r = 0; r < nprocs; r++)
                row[r] += tmp[r];
    }
    const double *vf = S->vfast + g * ns, *vs = S->vslow + g * ns;
    for (int64_t s = 0; s < ns; s++)
        if (p[s].valid && S->size[s] != 1)
            row[S->fast[s]] += (vf[s] - p[s].rest) * fraction(val[s], p[s].total);
    for (int64_t s = 0; s < ns; s++)
        if (p[s].valid && S->size[s] != 1)
            row[S->slow[s]] += (vs[s] - p[s].rest) * fraction(val[s], p[s].total);
}

/* phase 1: per quantity, whether its shared records' per-rank values (and maximum) are exact */
static void exactness(const struct shared *S, const struct group *G, const struct placement *p,
                      int64_t *flags)
{
    int64_t ns = S->count;
    for (int64_t s = 0; s < ns; s++) {
        int single = S->size[s] == 1, valid = p[s].valid, pair = S->size[s] == 2;
        int nonzero = 0;
        for (int c = 0; c < G->count; c++)
            nonzero += S->val[(G->first + c) * ns + s] > 0.0;
        for (int k = 0; k <= G->count; k++) {
            int whole = k == G->count || nonzero <= 1;
            int q = k < G->count ? G->rows[k] : G->total_row;
            double value = k < G->count ? S->val[(G->first + k) * ns + s] : p[s].total;
            if (value > 0.0) {
                flags[q] &= single || (valid && pair && whole);
                flags[NQ + q] &= single || (valid && whole);
            }
        }
    }
}

int pario_rank_io(int32_t phase, int64_t n, int64_t nprocs, const void *const *cols,
                  const int32_t *kinds, const uint8_t *known, const int64_t *member_n,
                  const int64_t *member_at, const int64_t *member_ranks, double *out,
                  double *terms, const double *sums, int64_t *state)
{
    int64_t *counts = state, *contributors = state + 2, *flags = state + 2 + NQ;
    if (phase == 0) {
        own_records(n, nprocs, cols, kinds, out, counts, contributors);
        counts[1] = 0;
    }
    struct shared S = {counts[0], NULL, NULL, NULL, NULL, NULL, NULL, known, member_n, member_at,
                       member_ranks};
    struct placement *p = NULL;
    double *tmp = NULL;
    int rc = 0;
    if (phase == 1)
        for (int k = 0; k < 2 * NQ; k++)
            flags[k] = 1;
    if (S.count > 0 && nprocs > 0) {
        if (gather(&S, n, nprocs, cols, kinds) != 0) {
            rc = -1;
            goto done;
        }
        if (phase == 0) {
            counts[1] = write_terms(&S, n, nprocs, terms);
            goto done;
        }
        p = malloc(sizeof(struct placement) * (size_t)S.count);
        tmp = known ? malloc(sizeof(double) * (size_t)nprocs) : NULL;
        if (!p || (known && !tmp)) {
            rc = -1;
            goto done;
        }
        for (int g = 0; g < 2; g++) {
            const struct group *G = &GROUPS[g];
            for (int64_t s = 0; s < S.count; s++)
                p[s] = place(&S, G, g, s, nprocs);
            for (int c = 0; c < G->count; c++)
                spread(&S, G, g, c, nprocs, p, counts[1], sums[G->first + c], tmp,
                       out + G->rows[c] * nprocs);
            exactness(&S, G, p, flags);
        }
    }
    if (phase == 1)
        for (int64_t r = 0; r < nprocs; r++) {
            out[3 * nprocs + r] = out[r] + out[nprocs + r] + out[2 * nprocs + r];
            out[6 * nprocs + r] = out[4 * nprocs + r] + out[5 * nprocs + r];
        }
done:
    free(S.val);
    free(S.vfast);
    free(S.vslow);
    free(S.fast);
    free(p);
    free(tmp);
    return rc;
}
