/*
 * My pieces: the file view and the caller's memory type, flattened
 * (flatten.c), and the call's bytes as (file offset, length, stream
 * position) pieces of the view.
 */
#include "cw_internal.h"

#include <stdlib.h>
#include <string.h>

void cw_view_free(struct cw_view *v)
{
    pario_flat_free(&v->ft);
    free(v->prefix);
    memset(v, 0, sizeof *v);
}

int cw_view_load(struct cw_file *f, MPI_File fh)
{
    struct cw_view *v = &f->view;
    MPI_Offset disp;
    MPI_Datatype etype, ftype;
    char rep[MPI_MAX_DATAREP_STRING + 1];
    int rc = NEXT(PMPI_File_get_view)(fh, &disp, &etype, &ftype, rep);
    if (rc != MPI_SUCCESS)
        return rc;
    cw_view_free(v);
    v->valid = 1;
    v->native = strcmp(rep, "native") == 0;
    v->disp = disp;
    int esize = 0;
    NEXT(PMPI_Type_size)(etype, &esize);
    v->etype_size = esize;
    const struct pario_flat *flat = NULL;
    if (v->native && esize > 0 && pario_flatten(ftype, CW_MAX_PIECES, &flat) == MPI_SUCCESS &&
        pario_flat_count(flat, 1, CW_MAX_PIECES, &v->ft) == MPI_SUCCESS && v->ft.size > 0) {
        v->prefix = malloc((size_t)(v->ft.nseg + 1) * sizeof *v->prefix);
        v->usable = v->prefix != NULL;
        int64_t reach = INT64_MIN;
        for (int64_t i = 0; v->usable && i < v->ft.nseg; i++) {
            /* MPI: a filetype's displacements are non-negative and
             * monotonically non-decreasing; tiles must not overlap */
            if (v->ft.off[i] < 0 || v->ft.off[i] < reach)
                v->usable = 0;
            reach = v->ft.off[i] + v->ft.len[i];
            v->prefix[i] = i ? v->prefix[i - 1] + v->ft.len[i - 1] : 0;
        }
        if (v->usable) {
            v->prefix[v->ft.nseg] = v->ft.size;
            if (v->ft.nseg > 0 && reach - v->ft.off[0] > v->ft.extent)
                v->usable = 0;
        }
    }
    int comb, ni, na, nd;
    if (NEXT(PMPI_Type_get_envelope)(etype, &ni, &na, &nd, &comb) == MPI_SUCCESS && comb != MPI_COMBINER_NAMED)
        NEXT(PMPI_Type_free)(&etype);
    if (NEXT(PMPI_Type_get_envelope)(ftype, &ni, &na, &nd, &comb) == MPI_SUCCESS && comb != MPI_COMBINER_NAMED)
        NEXT(PMPI_Type_free)(&ftype);
    return MPI_SUCCESS;
}

/* The file pieces of data bytes [p0, p0 + nbytes) of the view, merged. */
int cw_view_pieces(const struct cw_view *v, int64_t p0, int64_t nbytes, struct cw_piece **out, int64_t *n)
{
    const struct pario_flat *ft = &v->ft;
    *out = NULL;
    *n = 0;
    if (nbytes == 0)
        return 0;
    if (ft->nseg == 1 && ft->len[0] == ft->extent) { /* contiguous view */
        struct cw_piece *p = malloc(sizeof *p);
        if (!p)
            return -1;
        int64_t t = p0 / ft->size, r = p0 % ft->size;
        *p = (struct cw_piece){v->disp + t * ft->extent + ft->off[0] + r, nbytes, 0};
        *out = p;
        *n = 1;
        return 0;
    }
    /* count first, bounded */
    int64_t t = p0 / ft->size, r = p0 % ft->size;
    int64_t lo = cw_segment_at(v->prefix, ft->nseg, r);
    int64_t cap = 16, cnt = 0, left = nbytes, j = lo, skip = r - v->prefix[lo], pos = 0;
    struct cw_piece *p = malloc((size_t)cap * sizeof *p);
    if (!p)
        return -1;
    while (left > 0) {
        int64_t off = v->disp + t * ft->extent + ft->off[j] + skip;
        int64_t len = ft->len[j] - skip < left ? ft->len[j] - skip : left;
        if (cnt > 0 && p[cnt - 1].off + p[cnt - 1].len == off) {
            p[cnt - 1].len += len;
        } else {
            if (cnt == CW_MAX_PIECES) {
                free(p);
                return -1;
            }
            if (cnt == cap) {
                cap = cap * 2 > CW_MAX_PIECES ? CW_MAX_PIECES : cap * 2;
                struct cw_piece *q = realloc(p, (size_t)cap * sizeof *q);
                if (!q) {
                    free(p);
                    return -1;
                }
                p = q;
            }
            p[cnt++] = (struct cw_piece){off, len, pos};
        }
        pos += len;
        left -= len;
        skip = 0;
        if (++j == ft->nseg) {
            j = 0;
            t++;
        }
    }
    *out = p;
    *n = cnt;
    return 0;
}

/* The caller's data: contiguous (call->mbase) or its segments with stream positions. */
int cw_memory_layout(struct cw_ctx *call, const void *buf, int count, MPI_Datatype type)
{
    const struct pario_flat *m;
    call->buf = buf;
    if (count == 0)
        return 0;
    if (pario_flatten(type, CW_MAX_PIECES, &m) != MPI_SUCCESS)
        return -1;
    if (m->nseg == 1 && (count == 1 || m->len[0] == m->extent)) {
        call->mbase = (const char *)buf + m->off[0];
        return 0;
    }
    if (pario_flat_count(m, count, CW_MAX_PIECES, &call->mem) != MPI_SUCCESS)
        return -1;
    if (call->mem.nseg == 1) {
        call->mbase = (const char *)buf + call->mem.off[0];
        return 0;
    }
    call->mpos = malloc((size_t)(call->mem.nseg + 1) * sizeof *call->mpos);
    if (!call->mpos)
        return -1;
    call->mpos[0] = 0;
    for (int64_t i = 0; i < call->mem.nseg; i++)
        call->mpos[i + 1] = call->mpos[i] + call->mem.len[i];
    return 0;
}
