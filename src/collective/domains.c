/*
 * Aggregators, file domains and requests (ROMIO keeps these in
 * ad_aggregate.c): which ranks write, which part of the call's file range
 * each one owns, and which pieces every rank sends to each.
 */
#include "cw_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- aggregators: cb_nodes spread over the nodes, as cb_config_list allows --*/

/* How many aggregators cb_config_list allows on the node named 'host':
 * entries "name:count" or "*:count", count "*" for all; first match wins.
 * -1: no limit (the list was not given). */
static int config_cap(const char *list, const char *host)
{
    if (!list[0])
        return -1;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    char *save = NULL;
    for (char *e = strtok_r(copy, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
        while (*e == ' ')
            e++;
        char *colon = strchr(e, ':');
        int count = 1;
        if (colon) {
            *colon = '\0';
            count = strcmp(colon + 1, "*") == 0 ? INT_MAX : atoi(colon + 1);
        }
        if (strcmp(e, "*") == 0 || strcmp(e, host) == 0)
            return count < 0 ? 0 : count;
    }
    return 0;
}

#define AUTO_AGGREGATORS_PER_NODE 4

/* Where a rank sits, as every rank learns it (allgather of ints). */
struct cw_placement {
    int leader;               /* the lowest rank of its node */
    int local;                /* its rank on the node */
    int cap;                  /* aggregators cb_config_list allows on its node, -1: no limit */
};
#define CW_PLACEMENT_INTS ((int)(sizeof(struct cw_placement) / sizeof(int)))

int cw_choose_aggregators(struct cw_file *f)
{
    int np = f->nprocs, rc;
    cw_free_buffers(f); /* sized for the old aggregators (collective if a window exists) */
    MPI_Comm node;
    rc = NEXT(PMPI_Comm_split_type)(f->comm, MPI_COMM_TYPE_SHARED, f->rank, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS)
        return rc;
    int local = 0, leader = f->rank;
    NEXT(PMPI_Comm_rank)(node, &local);
    NEXT(PMPI_Bcast)(&leader, 1, MPI_INT, 0, node);
    NEXT(PMPI_Comm_free)(&node);
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    int hlen = 0;
    NEXT(PMPI_Get_processor_name)(host, &hlen);
    struct cw_placement mine = {leader, local, config_cap(f->hints.cb_config_list, host)};
    struct cw_placement *all = malloc((size_t)np * sizeof *all);
    int *aggs = malloc((size_t)np * sizeof *aggs);
    if (!all || !aggs) {
        free(all);
        free(aggs);
        return MPI_ERR_NO_MEM;
    }
    rc = NEXT(PMPI_Allgather)(&mine, CW_PLACEMENT_INTS, MPI_INT, all, CW_PLACEMENT_INTS, MPI_INT, f->comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        free(aggs);
        return rc;
    }
    int nnodes = 0;
    for (int r = 0; r < np; r++)
        nnodes += all[r].leader == r;
    int want = f->hints.cb_nodes > 0 ? f->hints.cb_nodes : nnodes;
    /* auto, left to choose: one aggregator's write stream bounds a node's
     * bandwidth, so more per node, up to half its ranks (docs/performance.md,
     * "auto's aggregators") */
    if (f->hints.algorithm == CW_AUTO && f->hints.cb_nodes <= 0 && !f->hints.cb_config_list[0]) {
        int per_node = np / nnodes / 2;
        want = nnodes * (per_node < 1 ? 1 : per_node > AUTO_AGGREGATORS_PER_NODE ? AUTO_AGGREGATORS_PER_NODE
                                                                                 : per_node);
    }
    if (want > np)
        want = np;
    /* round robin over the nodes: every node's local rank 0, then 1, ... */
    int n = 0;
    for (int lr = 0; lr < np && n < want; lr++)
        for (int r = 0; r < np && n < want; r++)
            if (all[r].local == lr && (all[r].cap < 0 || lr < all[r].cap))
                aggs[n++] = r;
    if (n == 0)
        aggs[n++] = 0; /* a list that allows none: ROMIO keeps one */
    free(all);
    free(f->aggs);
    f->aggs = aggs;
    f->naggs = n;
    f->my_agg = -1;
    for (int i = 0; i < n; i++)
        if (aggs[i] == f->rank)
            f->my_agg = i;
    f->aggs_valid = 1;
    return MPI_SUCCESS;
}

/* ---- file domains and requests ---------------------------------------------*/

/* Domains: [min, max) split in naggs, boundaries on striping_unit multiples. */
int cw_file_domains(struct cw_ctx *call, int64_t min_st, int64_t max_end)
{
    int na = call->f->naggs;
    call->fd_hi = malloc((size_t)na * sizeof *call->fd_hi);
    if (!call->fd_hi)
        return -1;
    int64_t span = max_end - min_st, size = (span + na - 1) / na;
    /* the stripe (hint, or what the MPI library reports on Lustre/GPFS), else the block
     * size: no two aggregators write into one stripe or file-system block */
    int64_t su = call->f->hints.striping_unit > 0 ? call->f->hints.striping_unit : call->f->fs_block;
    int64_t base = min_st;
    if (su > 0) {
        size = (size + su - 1) / su * su;
        base = min_st / su * su;
    }
    for (int a = 0; a < na; a++) {
        int64_t hi = base + (a + 1) * size; /* domain a ends here, the next starts here */
        call->fd_hi[a] = hi > max_end ? max_end : (hi < min_st ? min_st : hi);
    }
    call->fd_hi[na - 1] = max_end;
    return 0;
}

/* Split my pieces at the domain boundaries; my_first[a] indexes them. */
int cw_split_at_domains(struct cw_ctx *call)
{
    int na = call->f->naggs;
    call->my_first = calloc((size_t)na + 1, sizeof *call->my_first);
    call->my_cur = calloc((size_t)na, sizeof *call->my_cur);
    call->my_skip = calloc((size_t)na, sizeof *call->my_skip);
    if (!call->my_first || !call->my_cur || !call->my_skip)
        return -1;
    int64_t extra = 0;
    for (int64_t i = 0, a = 0; i < call->nmine; i++) {
        int64_t end = call->mine[i].off + call->mine[i].len;
        while (a < na - 1 && call->fd_hi[a] <= call->mine[i].off)
            a++;
        for (int64_t b = a; b < na - 1 && call->fd_hi[b] < end; b++)
            extra++;
    }
    struct cw_piece *out = malloc((size_t)(call->nmine + extra + 1) * sizeof *out);
    if (!out)
        return -1;
    int64_t n = 0;
    int a = 0;
    for (int64_t i = 0; i < call->nmine; i++) {
        struct cw_piece p = call->mine[i];
        while (p.len > 0) {
            while (a < na - 1 && call->fd_hi[a] <= p.off)
                call->my_first[++a] = n;
            int64_t cut = a < na - 1 && p.off + p.len > call->fd_hi[a] ? call->fd_hi[a] - p.off : p.len;
            out[n++] = (struct cw_piece){p.off, cut, p.pos};
            p.off += cut;
            p.pos += cut;
            p.len -= cut;
        }
    }
    while (a < na)
        call->my_first[++a] = n;
    free(call->mine);
    call->mine = out;
    call->nmine = n;
    return 0;
}

/* One piece of a request as its aggregator learns it: the pair datatype of
 * cw_exchange_requests. */
struct cw_request {
    int64_t off, len;
};
_Static_assert(sizeof(struct cw_request) == 2 * sizeof(int64_t), "a request is two MPI_INT64_Ts");
_Static_assert(sizeof(struct cw_range) == 2 * sizeof(int64_t), "a range is two MPI_INT64_Ts");

/* Alltoall of counts, alltoallv of (offset, length) to the aggregators; the
 * aggregators' data ranges, then everyone learns them (allgather). */
int cw_exchange_requests(struct cw_ctx *call)
{
    struct cw_file *f = call->f;
    int np = f->nprocs, na = f->naggs, rc;
    int *scnt = calloc((size_t)np, sizeof *scnt), *sdsp = calloc((size_t)np, sizeof *sdsp);
    int *rcnt = calloc((size_t)np, sizeof *rcnt), *rdsp = calloc((size_t)np, sizeof *rdsp);
    struct cw_request *sbuf = malloc((size_t)(call->nmine + 1) * sizeof *sbuf), *rbuf = NULL;
    struct cw_range range = {0, 0}, *all = malloc((size_t)np * sizeof *all);
    MPI_Datatype pair = MPI_DATATYPE_NULL;
    rc = MPI_ERR_NO_MEM;
    if (!scnt || !sdsp || !rcnt || !rdsp || !sbuf || !all)
        goto out;
    for (int a = 0; a < na; a++) {
        scnt[f->aggs[a]] = (int)(call->my_first[a + 1] - call->my_first[a]);
        sdsp[f->aggs[a]] = (int)call->my_first[a];
    }
    for (int64_t i = 0; i < call->nmine; i++)
        sbuf[i] = (struct cw_request){call->mine[i].off, call->mine[i].len};
    if ((rc = NEXT(PMPI_Alltoall)(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, f->comm)) != MPI_SUCCESS)
        goto out;
    int64_t total = 0;
    for (int r = 0; r < np; r++) {
        rdsp[r] = (int)total;
        total += rcnt[r];
    }
    rc = MPI_ERR_NO_MEM;
    rbuf = malloc((size_t)(total + 1) * sizeof *rbuf);
    call->peer_pieces = malloc((size_t)(total + 1) * sizeof *call->peer_pieces);
    call->peer_first = calloc((size_t)np + 1, sizeof *call->peer_first);
    call->peer_cur = calloc((size_t)np, sizeof *call->peer_cur);
    call->peer_skip = calloc((size_t)np, sizeof *call->peer_skip);
    if (!rbuf || !call->peer_pieces || !call->peer_first || !call->peer_cur || !call->peer_skip)
        goto out;
    if ((rc = NEXT(PMPI_Type_contiguous)(2, MPI_INT64_T, &pair)) != MPI_SUCCESS || (rc = NEXT(PMPI_Type_commit)(&pair)) != MPI_SUCCESS)
        goto out;
    if ((rc = NEXT(PMPI_Alltoallv)(sbuf, scnt, sdsp, pair, rbuf, rcnt, rdsp, pair, f->comm)) != MPI_SUCCESS)
        goto out;
    int64_t st = INT64_MAX, end = 0;
    for (int r = 0; r < np; r++) {
        call->peer_first[r + 1] = call->peer_first[r] + rcnt[r];
        call->peer_cur[r] = call->peer_first[r];
    }
    for (int64_t i = 0; i < total; i++) {
        call->peer_pieces[i] = (struct cw_piece){rbuf[i].off, rbuf[i].len, 0};
        if (rbuf[i].off < st)
            st = rbuf[i].off;
        if (rbuf[i].off + rbuf[i].len > end)
            end = rbuf[i].off + rbuf[i].len;
    }
    if (total > 0) {
        range.lo = st;
        range.hi = end;
    }
    if ((rc = NEXT(PMPI_Allgather)(&range, 2, MPI_INT64_T, all, 2, MPI_INT64_T, f->comm)) != MPI_SUCCESS)
        goto out;
    rc = MPI_ERR_NO_MEM;
    call->agg_start = malloc((size_t)na * sizeof *call->agg_start);
    call->agg_end = malloc((size_t)na * sizeof *call->agg_end);
    if (!call->agg_start || !call->agg_end)
        goto out;
    for (int a = 0; a < na; a++) {
        call->agg_start[a] = all[f->aggs[a]].lo;
        call->agg_end[a] = all[f->aggs[a]].hi;
    }
    for (int a = 0; a < na; a++)
        call->my_cur[a] = call->my_first[a];
    rc = MPI_SUCCESS;
out:
    if (pair != MPI_DATATYPE_NULL)
        NEXT(PMPI_Type_free)(&pair);
    free(scnt);
    free(sdsp);
    free(rcnt);
    free(rdsp);
    free(sbuf);
    free(rbuf);
    free(all);
    return rc;
}
