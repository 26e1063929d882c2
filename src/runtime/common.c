/* Counter updates shared by the layers: request-size histogram and the
 * access-pattern bookkeeping of one read or write. */
#include "core.h"

int pario_size_bucket(int64_t size)
{
    /* Darshan's boundaries: 100, 1K, 10K, 100K, 1M, 4M, 10M, 100M, 1G. */
    static const int64_t upper[9] = {100,       1024,      10240,      102400,    1048576,
                                     4194304,   10485760,  104857600,  1073741824};
    for (int i = 0; i < 9; i++)
        if (size <= upper[i])
            return i;
    return 9;
}

/*
 * Record one read (is_write = 0) or write of `size` bytes at `offset` that
 * took [t0, t1) (offset < 0: unknown).  The caller holds the record.
 * Sequential: starts at or after the end of the previous same-direction
 * access; consecutive: starts exactly there.
 */
void pario_rec_access(struct pario_record *r, int is_write, int64_t offset, int64_t size,
                      uint64_t t0, uint64_t t1)
{
    const struct pario_layer_desc *d = pario_layers[r->layer];
    int64_t *c = r->counters;
    double *f = r->fcounters;
    double dt = (double)(t1 - t0);
    int dir = is_write ? 1 : 0;
    int c_seq = d->c_seq_reads, c_consec = d->c_consec_reads, c_rw_switch = d->c_rw_switches;

    if (offset >= 0) {
        if (r->last_end[dir] >= 0) {
            if (offset == r->last_end[dir] && c_consec >= 0)
                c[c_consec + dir]++;
            if (offset >= r->last_end[dir] && c_seq >= 0)
                c[c_seq + dir]++;
        }
        r->last_end[dir] = offset + size;
        int c_max_byte = is_write ? d->c_max_byte_written : d->c_max_byte_read;
        if (size > 0 && c_max_byte >= 0 && offset + size - 1 > c[c_max_byte])
            c[c_max_byte] = offset + size - 1;
    }
    if (c_rw_switch >= 0 && r->last_op != 0 && r->last_op != dir + 1)
        c[c_rw_switch]++;
    r->last_op = dir + 1;

    c[is_write ? d->c_bytes_written : d->c_bytes_read] += size;
    c[(is_write ? d->c_size_write0 : d->c_size_read0) + pario_size_bucket(size)]++;
    int c_max_size = is_write ? d->c_max_write_size : d->c_max_read_size;
    if (c_max_size >= 0 && size > c[c_max_size])
        c[c_max_size] = size;
    f[is_write ? d->f_write_time : d->f_read_time] += dt;
    int f_max = is_write ? d->f_max_write_time : d->f_max_read_time;
    if (f_max >= 0 && dt > f[f_max])
        f[f_max] = dt;
}

void pario_rec_meta(struct pario_record *r, int counter, enum pario_meta_kind kind, uint64_t t0, uint64_t t1)
{
    const struct pario_layer_desc *d = pario_layers[r->layer];
    pario_rec_lock(r);
    if (counter >= 0)
        r->counters[counter]++;
    r->fcounters[kind == PARIO_META_WRITE ? d->f_write_time : d->f_meta_time] += (double)(t1 - t0);
    if (kind == PARIO_META_OPEN && r->fcounters[d->f_open_start] == 0)
        r->fcounters[d->f_open_start] = (double)t0;
    else if (kind == PARIO_META_CLOSE)
        r->fcounters[d->f_close_end] = (double)t1;
    pario_rec_unlock(r);
}
