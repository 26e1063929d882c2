/*
 * pario replay engine: the discrete-event replay of a trace (docs/trace.md, "Replay").
 *
 * Built into libpario_replay.so (no MPI) and called by pario.trace.replay through ctypes
 * with NumPy arrays prepared by pario.trace.match:
 *
 *   calls      0..ncalls-1, rank r's calls are rank_ptr[r]..rank_ptr[r+1]-1, in order;
 *   gap[c]     the computation before call c (measured), transfer[c] its transfer time;
 *   deps       call c waits for the nodes dep_idx[dep_ptr[c]..dep_ptr[c+1]-1]: a node
 *              n < ncalls is call n's start, a node ncalls+g is collective group g, whose
 *              time is the latest start of the calls grp_idx[grp_ptr[g]..grp_ptr[g+1]-1].
 *
 * Replay of call c: start = previous end (the rank's start for the first) + gap,
 * end = max(start, dependencies) + transfer * factor (io_factor for I/O calls,
 * net_factor for the others).
 *
 * The event loop sweeps over the ranks, advancing each as far as its dependencies allow;
 * a rank blocked on a call resumes its scan of that call's dependencies where it stopped,
 * and a group remembers how many of its members have arrived, so every dependency edge is
 * looked at a bounded number of times.  A sweep that changes nothing while calls remain is
 * a deadlock: blocked[r] is then the call rank r is stuck in (-1 for a finished rank).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

int pario_replay(int64_t nranks, const int64_t *rank_ptr, const double *rank_start, const double *tail,
                 int64_t ncalls, const double *gap, const double *transfer, const uint8_t *is_io,
                 double net_factor, double io_factor,
                 const int64_t *dep_ptr, const int64_t *dep_idx,
                 int64_t ngroups, const int64_t *grp_ptr, const int64_t *grp_idx,
                 double *start, double *end, double *rank_end, double *busy, int64_t *blocked);

enum { REPLAY_OK = 0, REPLAY_DEADLOCK = 1, REPLAY_NOMEM = 2 };

int pario_replay(int64_t nranks, const int64_t *rank_ptr, const double *rank_start, const double *tail,
                 int64_t ncalls, const double *gap, const double *transfer, const uint8_t *is_io,
                 double net_factor, double io_factor,
                 const int64_t *dep_ptr, const int64_t *dep_idx,
                 int64_t ngroups, const int64_t *grp_ptr, const int64_t *grp_idx,
                 double *start, double *end, double *rank_end, double *busy, int64_t *blocked)
{
    uint8_t *started = calloc((size_t)(ncalls > 0 ? ncalls : 1), 1);
    int64_t *next = malloc(sizeof(int64_t) * (size_t)(nranks > 0 ? nranks : 1));
    int64_t *dpos = malloc(sizeof(int64_t) * (size_t)(nranks > 0 ? nranks : 1));
    double *dmax = malloc(sizeof(double) * (size_t)(nranks > 0 ? nranks : 1));
    double *clock = malloc(sizeof(double) * (size_t)(nranks > 0 ? nranks : 1));
    int64_t *gpos = malloc(sizeof(int64_t) * (size_t)(ngroups > 0 ? ngroups : 1));
    double *gmax = malloc(sizeof(double) * (size_t)(ngroups > 0 ? ngroups : 1));
    int status = REPLAY_OK;
    if (!started || !next || !dpos || !dmax || !clock || !gpos || !gmax) {
        status = REPLAY_NOMEM;
        goto out;
    }
    for (int64_t r = 0; r < nranks; r++) {
        next[r] = rank_ptr[r];
        clock[r] = rank_start[r];
        busy[r] = 0.0;
        blocked[r] = -1;
    }
    for (int64_t g = 0; g < ngroups; g++) {
        gpos[g] = grp_ptr[g];
        gmax[g] = -INFINITY;
    }

    int64_t remaining = nranks;
    for (int64_t r = 0; r < nranks; r++)
        if (next[r] == rank_ptr[r + 1])
            remaining--;
    int progress = 1;
    while (remaining > 0 && progress) {
        progress = 0;
        for (int64_t r = 0; r < nranks; r++) {
            int64_t last = rank_ptr[r + 1];
            while (next[r] < last) {
                int64_t c = next[r];
                if (!started[c]) {
                    double g = gap[c] > 0.0 ? gap[c] : 0.0;
                    start[c] = clock[r] + g;
                    started[c] = 1;
                    dpos[r] = dep_ptr[c];
                    dmax[r] = -INFINITY;
                    progress = 1;
                }
                int64_t p = dpos[r], stop = dep_ptr[c + 1];
                double m = dmax[r];
                for (; p < stop; p++) {
                    int64_t n = dep_idx[p];
                    double t;
                    if (n < ncalls) {
                        if (!started[n])
                            break;
                        t = start[n];
                    } else {
                        int64_t g = n - ncalls, q = gpos[g], qstop = grp_ptr[g + 1];
                        double gm = gmax[g];
                        for (; q < qstop && started[grp_idx[q]]; q++)
                            if (start[grp_idx[q]] > gm)
                                gm = start[grp_idx[q]];
                        gpos[g] = q;
                        gmax[g] = gm;
                        if (q < qstop)
                            break;
                        t = gm;
                    }
                    if (t > m)
                        m = t;
                }
                dpos[r] = p;
                dmax[r] = m;
                if (p < stop)
                    break; /* blocked: resume here on the next sweep */
                double s = start[c] > m ? start[c] : m;
                double e = s + transfer[c] * (is_io[c] ? io_factor : net_factor);
                end[c] = e;
                busy[r] += e - start[c];
                clock[r] = e;
                next[r] = c + 1;
                progress = 1;
                if (next[r] == last)
                    remaining--;
            }
        }
    }
    for (int64_t r = 0; r < nranks; r++) {
        rank_end[r] = clock[r] + (tail[r] > 0.0 ? tail[r] : 0.0);
        if (next[r] < rank_ptr[r + 1]) {
            blocked[r] = next[r];
            status = REPLAY_DEADLOCK;
        }
    }
out:
    free(started);
    free(next);
    free(dpos);
    free(dmax);
    free(clock);
    free(gpos);
    free(gmax);
    return status;
}

void pario_rank_sums(int64_t nranks, const int64_t *rank_ptr, const double *gap, const double *transfer,
                     const double *duration, const uint8_t *is_io, double *useful, double *io_time,
                     double *io_wait, double *mpi_time);

/* Per rank r (calls rank_ptr[r]..rank_ptr[r+1]-1): the sum of gap over its calls, of transfer
 * and of duration - transfer over its I/O calls, and of duration over its other calls, each
 * added in call order from 0.0 (as numpy.bincount adds, so the sums are the same to the
 * last bit), in one pass instead of four. */
void pario_rank_sums(int64_t nranks, const int64_t *rank_ptr, const double *gap, const double *transfer,
                     const double *duration, const uint8_t *is_io, double *useful, double *io_time,
                     double *io_wait, double *mpi_time)
{
    for (int64_t r = 0; r < nranks; r++) {
        double u = 0.0, t = 0.0, w = 0.0, m = 0.0;
        for (int64_t c = rank_ptr[r]; c < rank_ptr[r + 1]; c++) {
            u += gap[c];
            if (is_io[c]) {
                t += transfer[c];
                w += duration[c] - transfer[c];
            } else {
                m += duration[c];
            }
        }
        useful[r] = u;
        io_time[r] = t;
        io_wait[r] = w;
        mpi_time[r] = m;
    }
}
