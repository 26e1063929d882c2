/*
 * Selection: which files the collective-write engine serves and how.
 * PARIO_COLL=ALGO[:SHUFFLE] sets the default for every file; a file's hints
 * (pario_cb_algorithm, pario_cb_shuffle, cb_buffer_size, cb_nodes,
 * cb_config_list, striping_unit) are parsed once per open, set_info and
 * set_view into the typed struct cw_hints the rest of the engine reads.
 */
#include "cw_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ----------------------------------------------------------------*/

static const char *const algorithm_names[] = {
    [CW_OFF] = "mpi", [CW_NONE] = "none", [CW_COMM] = "comm", [CW_WRITE] = "write",
    [CW_WRITE_COMM] = "write-comm", [CW_WRITE_COMM_2] = "write-comm-2", [CW_AUTO] = "auto",
    [CW_DIRECT] = "direct",
};
static const char *const shuffle_names[] = {
    [CW_P2P] = "p2p", [CW_RMA_FENCE] = "rma-fence", [CW_RMA_LOCK] = "rma-lock",
};

int cw_algorithm_from_name(const char *name)
{
    for (int i = 0; i <= CW_AUTO; i++)
        if (strcmp(name, algorithm_names[i]) == 0)
            return i;
    return -1;
}

int cw_shuffle_from_name(const char *name)
{
    for (int i = CW_P2P; i <= CW_RMA_LOCK; i++)
        if (strcmp(name, shuffle_names[i]) == 0)
            return i;
    return -1;
}


/* ---- selection: PARIO_COLL, then the file's hints --------------------------*/

/* env_shuffle 0: PARIO_COLL named no shuffle (p2p, or auto's own choice) */
static int env_algorithm = CW_OFF, env_shuffle = 0;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void read_env(void)
{
    const char *v = cw_hooks.algorithm;
    if (!v)
        return;
    char alg[64];
    snprintf(alg, sizeof alg, "%s", v);
    char *colon = strchr(alg, ':');
    if (colon)
        *colon++ = '\0';
    int a = cw_algorithm_from_name(alg), s = colon ? cw_shuffle_from_name(colon) : 0;
    if (a < 0 || s < 0) {
        if (cw_hooks.warn)
            cw_hooks.warn("PARIO_COLL=%s is not ALGO[:SHUFFLE] (ALGO none, comm, write, write-comm, "
                          "write-comm-2, auto or mpi; SHUFFLE p2p, rma-fence or rma-lock); the MPI library "
                          "does the collective writes",
                          v);
        return;
    }
    env_algorithm = a;
    env_shuffle = s;
}

static int64_t parse_bytes(const char *s, int64_t fallback)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v <= 0)
        return fallback;
    if (*end == 'k' || *end == 'K')
        v <<= 10;
    else if (*end == 'm' || *end == 'M')
        v <<= 20;
    return v;
}

static int info_get(MPI_Info info, const char *key, char *val, int len)
{
    int flag = 0;
    if (info == MPI_INFO_NULL || NEXT(PMPI_Info_get)(info, key, len - 1, val, &flag) != MPI_SUCCESS)
        return 0;
    return flag;
}

void cw_hints_parse(struct cw_hints *h, MPI_Info info)
{
    char v[256];
    if (info_get(info, "pario_cb_algorithm", v, sizeof v)) {
        int a = cw_algorithm_from_name(v);
        if (a >= 0)
            h->algorithm = a;
    }
    if (info_get(info, "pario_cb_shuffle", v, sizeof v)) {
        int s = cw_shuffle_from_name(v);
        if (s > 0)
            h->shuffle = s;
    }
    if (info_get(info, "cb_buffer_size", v, sizeof v)) {
        int64_t b = parse_bytes(v, h->cb_buffer_size);
        h->cb_buffer_size = b > CW_MAX_BUFFER ? CW_MAX_BUFFER : b;
    }
    if (info_get(info, "cb_nodes", v, sizeof v))
        h->cb_nodes = (int)parse_bytes(v, h->cb_nodes);
    if (info_get(info, "cb_config_list", v, sizeof v))
        snprintf(h->cb_config_list, sizeof h->cb_config_list, "%s", v);
    if (info_get(info, "striping_unit", v, sizeof v))
        h->striping_unit = parse_bytes(v, h->striping_unit);
}

void cw_hints_default(struct cw_hints *h)
{
    pthread_once(&env_once, read_env);
    memset(h, 0, sizeof *h);
    h->algorithm = env_algorithm;
    h->shuffle = env_shuffle;
    h->cb_buffer_size = (int64_t)16 << 20;
}

void cw_hints_stripe(struct cw_hints *h, MPI_File fh, MPI_Info info)
{
    /* the stripe the MPI library found (Lustre/GPFS) as the default; the
     * caller's hints, parsed again, still win */
    MPI_Info effect = MPI_INFO_NULL;
    if (NEXT(PMPI_File_get_info)(fh, &effect) == MPI_SUCCESS && effect != MPI_INFO_NULL) {
        char v[64];
        if (info_get(effect, "striping_unit", v, sizeof v)) {
            h->striping_unit = parse_bytes(v, 0);
            cw_hints_parse(h, info);
        }
        NEXT(PMPI_Info_free)(&effect);
    }
}
