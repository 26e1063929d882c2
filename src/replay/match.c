/*
 * pario replay: the point-to-point matching of a trace's records (docs/trace.md, "Replay"),
 * built into libpario_replay.so and called by pario.trace.match through ctypes.
 *
 * It computes what pario.trace.match's NumPy code computes (_requests, _match_messages), in
 * two passes over the records instead of some forty, for the traces the runtime writes: in
 * each rank, the nonblocking calls' request ids (aux) grow with every post.  For any other
 * trace it returns MATCH_OTHER and the NumPy code matches it.
 *
 * Records are every rank's events one after the other (rank slot s: rec_ptr[s] to
 * rec_ptr[s+1]-1, in the rank's order); world[s] is slot s's rank.
 *
 * Requests: a nonblocking post (FLAG_NONBLOCKING, not COMPLETE, aux > 0) and the COMPLETE
 * records of its rank naming its request id (aux) belong together: post_of[complete] and
 * complete_of[post] (the last such complete), -1 elsewhere.
 *
 * Messages: a send (SEND, SSEND, ISEND, ISSEND with a peer and a known communicator) goes
 * from its rank to its peer; a receive (RECV or IRECV with a known communicator) takes the
 * source and tag of its status (an IRECV: its COMPLETE's), and is left out without a source,
 * or without a tag unless completed or blocking.  Within a stream (source, destination,
 * tag, member set), the i-th receive matches the i-th send (MPI's non-overtaking rule):
 * recv_of_send[send] and send_of_recv[receive], -1 where unmatched.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { MATCH_OK = 0, MATCH_OTHER = 1, MATCH_NOMEM = 2 };

/* the kinds pario.trace.format.Kind gives, in this order, from the caller */
enum { K_SEND, K_SSEND, K_ISEND, K_ISSEND, K_RECV, K_IRECV, K_COMPLETE, K_COUNT };

int pario_match_p2p(int64_t n, const uint16_t *kind, const uint16_t *flags, const int32_t *peer,
                    const int32_t *tag, const int64_t *aux, const int64_t *setid, int64_t nslots,
                    const int64_t *rec_ptr, const int64_t *world, const int32_t *kinds,
                    int32_t nonblocking, int64_t *post_of, int64_t *complete_of,
                    int64_t *recv_of_send, int64_t *send_of_recv);

/* ---- requests ------------------------------------------------------------------------ */

/* The first of posts[lo..hi) whose aux is `want` (their aux grow), or -1. */
static int64_t find_post(const int64_t *posts, const int64_t *aux, int64_t lo, int64_t hi, int64_t want)
{
    int64_t end = hi;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (aux[posts[mid]] < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < end && aux[posts[lo]] == want) ? posts[lo] : -1;
}

static int match_requests(int64_t n, const uint16_t *kind, const uint16_t *flags, const int64_t *aux,
                          int64_t nslots, const int64_t *rec_ptr, const int32_t *kinds, int32_t nonblocking,
                          int64_t *post_of, int64_t *complete_of)
{
    int64_t *posts = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    if (!posts)
        return MATCH_NOMEM;
    int status = MATCH_OK;
    for (int64_t s = 0; s < nslots && status == MATCH_OK; s++) {
        /* the slot's posts, in order: their request ids must grow */
        int64_t first = rec_ptr[s], count = 0;
        for (int64_t i = rec_ptr[s]; i < rec_ptr[s + 1]; i++) {
            if ((flags[i] & nonblocking) && kind[i] != kinds[K_COMPLETE] && aux[i] > 0) {
                if (count && aux[i] <= aux[posts[first + count - 1]]) {
                    status = MATCH_OTHER;
                    break;
                }
                posts[first + count++] = i;
            }
        }
        if (status != MATCH_OK || !count)
            continue;
        for (int64_t i = rec_ptr[s]; i < rec_ptr[s + 1]; i++) {
            if (kind[i] == kinds[K_COMPLETE] && aux[i] > 0) {
                int64_t p = find_post(posts, aux, first, first + count, aux[i]);
                if (p >= 0) {
                    post_of[i] = p;
                    complete_of[p] = i;
                }
            }
        }
    }
    free(posts);
    return status;
}

/* ---- messages ------------------------------------------------------------------------ */

struct stream {
    int64_t key[4]; /* source, destination, tag, member set */
    int64_t live;   /* 0: an empty entry */
    int64_t first;  /* its first send's place in `by_stream` */
    int64_t nsends; /* its sends */
    int64_t recvs;  /* its receives matched or not, so far */
};

/* An open-addressing table of streams: few in a real trace (pairs of ranks x tags), so it
 * stays in the cache. */
struct streams {
    struct stream *entry;
    int64_t cap, used;
};

static uint64_t hash_key(const int64_t *k)
{
    uint64_t h = 0;
    for (int i = 0; i < 4; i++) {
        h = (h ^ (uint64_t)k[i]) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    return h;
}

static struct stream *probe(struct stream *entry, int64_t cap, const int64_t *k)
{
    uint64_t j = hash_key(k) & (uint64_t)(cap - 1);
    while (entry[j].live && memcmp(entry[j].key, k, sizeof entry[j].key) != 0)
        j = (j + 1) & (uint64_t)(cap - 1);
    return &entry[j];
}

/* The entry of key `k` (added when absent), or NULL when memory runs out. */
static struct stream *add_stream(struct streams *t, const int64_t *k)
{
    if (2 * (t->used + 1) > t->cap) {
        int64_t cap = t->cap ? 2 * t->cap : 1024;
        struct stream *grown = calloc((size_t)cap, sizeof *grown);
        if (!grown)
            return NULL;
        for (int64_t i = 0; i < t->cap; i++)
            if (t->entry[i].live)
                *probe(grown, cap, t->entry[i].key) = t->entry[i];
        free(t->entry);
        t->entry = grown;
        t->cap = cap;
    }
    struct stream *e = probe(t->entry, t->cap, k);
    if (!e->live) {
        memcpy(e->key, k, sizeof e->key);
        e->live = 1;
        t->used++;
    }
    return e;
}

/* The entry of key `k`, NULL when absent. */
static struct stream *find_stream(const struct streams *t, const int64_t *k)
{
    if (!t->cap)
        return NULL;
    struct stream *e = probe(t->entry, t->cap, k);
    return e->live ? e : NULL;
}

/* Whether record i is a send the messages' matching takes: a send kind, a peer, a known member set. */
static int stream_send(int64_t i, const uint16_t *kind, const int32_t *peer, const int64_t *setid,
                       const int32_t *kinds)
{
    uint16_t k = kind[i];
    return (k == kinds[K_SEND] || k == kinds[K_SSEND] || k == kinds[K_ISEND] || k == kinds[K_ISSEND]) &&
           peer[i] >= 0 && setid[i] >= 0;
}

/* The slot of record i, from `slot`, the slot of a record before it. */
static int64_t slot_at(int64_t i, int64_t slot, int64_t nslots, const int64_t *rec_ptr)
{
    while (slot + 1 < nslots && i >= rec_ptr[slot + 1])
        slot++;
    return slot;
}

int pario_match_p2p(int64_t n, const uint16_t *kind, const uint16_t *flags, const int32_t *peer,
                    const int32_t *tag, const int64_t *aux, const int64_t *setid, int64_t nslots,
                    const int64_t *rec_ptr, const int64_t *world, const int32_t *kinds,
                    int32_t nonblocking, int64_t *post_of, int64_t *complete_of,
                    int64_t *recv_of_send, int64_t *send_of_recv)
{
    for (int64_t i = 0; i < n; i++)
        post_of[i] = complete_of[i] = recv_of_send[i] = send_of_recv[i] = -1;
    int status = match_requests(n, kind, flags, aux, nslots, rec_ptr, kinds, nonblocking, post_of,
                                complete_of);
    if (status != MATCH_OK)
        return status;

    struct streams t = {NULL, 0, 0};
    int64_t nsends = 0;
    for (int64_t i = 0; i < n; i++)
        nsends += stream_send(i, kind, peer, setid, kinds);
    int64_t *ordinal = malloc(sizeof(int64_t) * (size_t)(nsends > 0 ? nsends : 1));
    int64_t *by_stream = malloc(sizeof(int64_t) * (size_t)(nsends > 0 ? nsends : 1));
    if (!ordinal || !by_stream) {
        status = MATCH_NOMEM;
        goto out;
    }
    /* pass 1: each send's stream and its place among the stream's sends; then each stream's
     * sends side by side in `by_stream`, in order */
    int64_t slot = 0, sent = 0;
    for (int64_t i = 0; i < n; i++) {
        slot = slot_at(i, slot, nslots, rec_ptr);
        if (!stream_send(i, kind, peer, setid, kinds))
            continue;
        int64_t key[4] = {world[slot], peer[i], tag[i], setid[i]};
        struct stream *e = add_stream(&t, key);
        if (!e) {
            status = MATCH_NOMEM;
            goto out;
        }
        ordinal[sent++] = e->nsends++;
    }
    int64_t at = 0;
    for (int64_t j = 0; j < t.cap; j++) {
        if (t.entry[j].live) {
            t.entry[j].first = at;
            at += t.entry[j].nsends;
        }
    }
    /* (the table grows while sends come in: each send's entry is found again, not kept) */
    slot = 0;
    sent = 0;
    for (int64_t i = 0; i < n && sent < nsends; i++) {
        slot = slot_at(i, slot, nslots, rec_ptr);
        if (stream_send(i, kind, peer, setid, kinds)) {
            int64_t key[4] = {world[slot], peer[i], tag[i], setid[i]};
            by_stream[find_stream(&t, key)->first + ordinal[sent]] = i;
            sent++;
        }
    }
    /* pass 2: the receives, in order, each taking its stream's next send */
    slot = 0;
    for (int64_t i = 0; i < n; i++) {
        slot = slot_at(i, slot, nslots, rec_ptr);
        uint16_t k = kind[i];
        if (!(k == kinds[K_RECV] || k == kinds[K_IRECV]) || setid[i] < 0)
            continue;
        int64_t src = peer[i], rtag = tag[i], done = complete_of[i];
        if (done >= 0) {
            src = peer[done];
            rtag = tag[done];
        }
        if (src < 0 || !(rtag >= 0 || done >= 0 || k == kinds[K_RECV]))
            continue;
        int64_t key[4] = {src, world[slot], rtag, setid[i]};
        struct stream *e = find_stream(&t, key);
        if (!e)
            continue;
        int64_t r = e->recvs++;
        if (r < e->nsends) {
            int64_t s = by_stream[e->first + r];
            send_of_recv[i] = s;
            recv_of_send[s] = i;
        }
    }
out:
    free(t.entry);
    free(ordinal);
    free(by_stream);
    return status;
}

int pario_p2p_deps(int64_t n, const uint16_t *kind, const int32_t *peer, const int32_t *kinds,
                   const int64_t *post_of, const int64_t *recv_of_send, const int64_t *send_of_recv,
                   const int64_t *call_of, int64_t *calls, int64_t *nodes, int64_t *count);

/* The point-to-point dependencies, as (call, node) pairs in pario.trace.match._p2p_deps's
 * order: a blocking receive (RECV with a source), then a completed IRECV (its COMPLETE's
 * call), waits for the matching send's call; a synchronous send (SSEND), then a completed
 * ISSEND, for the matching receive's post.  `calls` and `nodes` hold up to n pairs; *count
 * says how many.  MATCH_OTHER when one of them has no match (the NumPy code then says
 * which). */
int pario_p2p_deps(int64_t n, const uint16_t *kind, const int32_t *peer, const int32_t *kinds,
                   const int64_t *post_of, const int64_t *recv_of_send, const int64_t *send_of_recv,
                   const int64_t *call_of, int64_t *calls, int64_t *nodes, int64_t *count)
{
    /* the four kinds of pairs, each in record order, one after the other */
    int64_t sizes[4] = {0, 0, 0, 0};
    for (int pass = 0; pass < 2; pass++) {
        int64_t at[4] = {0, sizes[0], sizes[0] + sizes[1], sizes[0] + sizes[1] + sizes[2]};
        for (int64_t i = 0; i < n; i++) {
            uint16_t k = kind[i];
            int which = -1;
            int64_t post = i;
            if (k == kinds[K_RECV] && peer[i] >= 0) {
                which = 0;
            } else if (k == kinds[K_SSEND] && peer[i] >= 0) {
                which = 2;
            } else if (k == kinds[K_COMPLETE] && post_of[i] >= 0) {
                post = post_of[i];
                if (kind[post] == kinds[K_IRECV] && peer[i] >= 0)
                    which = 1;
                else if (kind[post] == kinds[K_ISSEND] && peer[post] >= 0)
                    which = 3;
            }
            if (which < 0)
                continue;
            if (pass == 0) {
                sizes[which]++;
                continue;
            }
            int64_t other = which < 2 ? send_of_recv[post] : recv_of_send[post];
            if (other < 0)
                return MATCH_OTHER;
            calls[at[which]] = call_of[i];
            nodes[at[which]++] = call_of[other];
        }
    }
    *count = sizes[0] + sizes[1] + sizes[2] + sizes[3];
    return MATCH_OK;
}
