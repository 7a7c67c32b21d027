/* ipupipe_mpi.h - v0.4.0 - the MPI runner of ipupipe: one MPI rank per IPU - MIT licence (see end of file)

   The only file of ipupipe that includes <mpi.h>. Each rank of a communicator of
   replicas x devices ranks is one IPU (rank = replica * devices + device) and runs its
   own row of the same schedule table through the transport seam of ipupipe.h
   (ipup_set_transport), with the same bits as the cooperative runner:

   - Rings that cross ranks (activations forward, gradients backward) travel with MPI
     point-to-point messages on persistent requests, one per ring slot, created once by
     ipup_mpi_init (MPI_Send_init / MPI_Recv_init on the slot's own bytes); a step only
     starts them (MPI_Start) and waits on them (MPI_Wait). The receiver posts at most
     the ring's capacity of receives, and a producer waits for its oldest send before it
     reuses a slot, so the ring capacities of the table bound the data in flight as in
     the threaded runner.
   - The replica reduction is a fixed-order chain, not MPI_Allreduce (which promises no
     order): the ranks of one device, in replica order 0..R-1, each add their gradient
     to the partial sum of the ranks before them (acc = partial + own, the cooperative
     runner's per-element acc += g[q]) chunk by chunk, pipelined; the last replica then
     sends the sum down a second chain (R-1, 0, 1, ..., R-2), which copies bits only
     (ipup_mpi_chain_*, usable on its own).
   - After each step one MPI_Allgather gives every rank every IPU's error slot and the
     step's outfeed records (loss records reach every rank in (step, replica, mb)
     order), so every rank takes the same decision and computes the same statistics.
   - ipup_mpi_init checks, collectively, that the communicator has replicas x devices
     ranks and that every rank has the same configuration fingerprint (table, stages,
     optimizer, parameters, step and a fingerprint the application adds); a failed MPI
     call prints the rank, the call and MPI's error string, then MPI_Abort ends the job.
   - No heap call in this file. OpenMPI itself allocates in MPI_Init, in the
     communicator set-up and in the request creation of ipup_mpi_init; see the README
     ("Beyond one machine") for the heap calls it makes per step.

   Every rank holds the whole ipup_emu and its pools (the emulator is one struct), but a
   step touches only the pool of its own IPU and replica 0's copies are brought to every
   rank only by ipup_mpi_share_state (before an evaluation or a checkpoint).

   Usage (in exactly one file, after MPI_Init):
       #define IPUPIPE_IMPLEMENTATION
       #include "ipupipe_mpi.h"
       static ipup_emu emu; static ipup_mpi mp;
       ipup_init(&emu, &cfg);                                  runner IPUP_RUNNER_COOP
       if (ipup_mpi_init(&mp, &emu, MPI_COMM_WORLD, 0) != IPUP_OK) -> ipup_last_error(&emu)
       ipup_run(&emu, &stats);                                 this rank's row, MPI between rows
       ipup_mpi_share_state(&mp);                              replica 0's weights everywhere
       ipup_mpi_free(&mp); ipup_shutdown(&emu);
*/
#ifndef IPUPIPE_MPI_H
#define IPUPIPE_MPI_H

#include "ipupipe.h"
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1 /* the C API only, also from C++ (OpenMPI's C++ bindings warn) */
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#ifndef IPUP_MPI_CHUNK
#define IPUP_MPI_CHUNK 16384 /* floats per message of the reduction chains */
#endif
#ifndef IPUP_MPI_MAX_CHUNKS
#define IPUP_MPI_MAX_CHUNKS 256 /* chunks of one rank's gradient blocks */
#endif
#ifndef IPUP_MPI_MAX_SLOTS
#define IPUP_MPI_MAX_SLOTS 64 /* ring capacity */
#endif
#ifndef IPUP_MPI_MAX_MB
#define IPUP_MPI_MAX_MB 256 /* micro-batches per step (records exchanged per step) */
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The fixed-order sum over the ranks of a communicator (rank order 0..size-1) of
   nbufs float buffers, left in every rank's buffers. */
typedef struct ipup_mpi_chain {
    MPI_Comm comm;
    int rank, size, n;
    int prev_b, next_b, pos_b;
    float *ptr[IPUP_MPI_MAX_CHUNKS];
    int cnt[IPUP_MPI_MAX_CHUNKS];
    MPI_Request rrecv[IPUP_MPI_MAX_CHUNKS], rsend[IPUP_MPI_MAX_CHUNKS];
    MPI_Request brecv[IPUP_MPI_MAX_CHUNKS], bsend[IPUP_MPI_MAX_CHUNKS];
    float part[2][IPUP_MPI_CHUNK];
} ipup_mpi_chain;

typedef struct ipup__mpi_ring {
    ipup_ring *ring;
    int peer, tag, consumer;
    uint32_t base, posted, got, sent, freed;
    MPI_Request req[IPUP_MPI_MAX_SLOTS];
} ipup__mpi_ring;

typedef struct ipup_mpi {
    ipup_emu *e;
    MPI_Comm comm, dev_comm;
    int rank, size, r, d, n_rings, blk;
    int8_t map[2][IPUP_MAX_LAYERS]; /* ring (fwd, bwd) into stage s of this replica -> rings[] */
    ipup__mpi_ring rings[2 * IPUP_MAX_LAYERS];
    ipup_mpi_chain chain;
    ipup_transport tp;
    uint64_t fingerprint;
    uint8_t xbuf[IPUP_MAX_IPUS * (sizeof(ipup__ipu_err) + IPUP_MPI_MAX_MB * sizeof(ipup_outfeed_rec))];
} ipup_mpi;

/* Collective over comm. The chain over comm's ranks for the nbufs buffers bufs[i] of ns[i]
   floats (the same sizes on every rank); IPUP_ERR_CAPACITY (message in msg) when they
   need more than IPUP_MPI_MAX_CHUNKS chunks of IPUP_MPI_CHUNK floats. */
IPUPIPE_DEF int ipup_mpi_chain_init(ipup_mpi_chain *c, MPI_Comm comm, int nbufs, float *const *bufs, const size_t *ns,
                                    char *msg, size_t msg_len);
/* Collective: every rank's buffers become the sum over ranks 0..size-1, added in that order. */
IPUPIPE_DEF int ipup_mpi_chain_run(ipup_mpi_chain *c);
IPUPIPE_DEF void ipup_mpi_chain_free(ipup_mpi_chain *c);

/* Collective over comm (replicas x devices ranks), after ipup_init of e (cooperative
   runner) and any checkpoint load. app_fingerprint is mixed into the check that every
   rank runs the same configuration (e.g. a hash of the options). IPUP_OK, or
   IPUP_ERR_CONFIG / IPUP_ERR_MISMATCH / IPUP_ERR_CAPACITY with the same message on every
   rank in ipup_last_error(e). */
IPUPIPE_DEF int ipup_mpi_init(ipup_mpi *m, ipup_emu *e, MPI_Comm comm, uint64_t app_fingerprint);
/* Collective: replica 0's parameters and optimizer state of every stage, from the rank
   that trains it, on every rank (for ipup_evaluate, ipup_tensor_get, checkpoints). */
IPUPIPE_DEF int ipup_mpi_share_state(ipup_mpi *m);
/* Releases the requests and communicators; e returns to the cooperative runner. */
IPUPIPE_DEF void ipup_mpi_free(ipup_mpi *m);
/* FNV-1a 64 of n bytes, continuing h (start with 0). */
IPUPIPE_DEF uint64_t ipup_mpi_hash(uint64_t h, const void *data, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* IPUPIPE_MPI_H */

/* ================================================================== implementation */
#ifdef IPUPIPE_IMPLEMENTATION
#ifndef IPUPIPE_MPI_IMPLEMENTED
#define IPUPIPE_MPI_IMPLEMENTED
#include <stdio.h>

#define IPUP__MPI_TAG_RED 7001
#define IPUP__MPI_TAG_BC 7002
#define IPUP__MPI_TAG_RING 7100

/* A failed MPI call: the rank, the call and MPI's reason on stderr, then the whole job
   ends (MPI_Abort), so no rank waits for one that cannot answer. */
static void ipup__mpi_die(const char *what, int rc) {
    char err[MPI_MAX_ERROR_STRING], line[MPI_MAX_ERROR_STRING + 256];
    int len = 0, rank = -1;
    err[0] = 0;
    MPI_Error_string(rc, err, &len);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    ipup_snprintf(line, sizeof line, "ipupipe_mpi: rank %d: %s failed: %s; ending the job\n", rank, what, err);
    fputs(line, stderr);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
}
#define IPUP__MPI(call)                                   \
    do {                                                  \
        int ipup__mrc = (call);                           \
        if (ipup__mrc != MPI_SUCCESS) ipup__mpi_die(#call, ipup__mrc); \
    } while (0)

IPUPIPE_DEF uint64_t ipup_mpi_hash(uint64_t h, const void *data, size_t n) {
    const uint8_t *p = (const uint8_t *)data;
    size_t i;
    if (!h) h = 1469598103934665603ull;
    for (i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* ------------------------------------------------------------------ the chain */
static void ipup__mpi_chain_requests(ipup_mpi_chain *c) {
    int i, q = c->rank, R = c->size;
    for (i = 0; i < c->n; i++) {
        c->rrecv[i] = c->rsend[i] = c->brecv[i] = c->bsend[i] = MPI_REQUEST_NULL;
        if (q > 0) IPUP__MPI(MPI_Recv_init(c->part[i & 1], c->cnt[i], MPI_FLOAT, q - 1, IPUP__MPI_TAG_RED, c->comm, &c->rrecv[i]));
        if (q < R - 1) IPUP__MPI(MPI_Send_init(c->ptr[i], c->cnt[i], MPI_FLOAT, q + 1, IPUP__MPI_TAG_RED, c->comm, &c->rsend[i]));
        if (c->pos_b > 0) IPUP__MPI(MPI_Recv_init(c->ptr[i], c->cnt[i], MPI_FLOAT, c->prev_b, IPUP__MPI_TAG_BC, c->comm, &c->brecv[i]));
        if (c->pos_b < R - 1) IPUP__MPI(MPI_Send_init(c->ptr[i], c->cnt[i], MPI_FLOAT, c->next_b, IPUP__MPI_TAG_BC, c->comm, &c->bsend[i]));
    }
}

IPUPIPE_DEF int ipup_mpi_chain_init(ipup_mpi_chain *c, MPI_Comm comm, int nbufs, float *const *bufs, const size_t *ns,
                                    char *msg, size_t msg_len) {
    int b, R;
    size_t off;
    c->comm = comm;
    c->n = 0;
    IPUP__MPI(MPI_Comm_rank(comm, &c->rank));
    IPUP__MPI(MPI_Comm_size(comm, &c->size));
    R = c->size;
    for (b = 0; b < nbufs; b++) {
        for (off = 0; off < ns[b]; off += IPUP_MPI_CHUNK) {
            if (c->n >= IPUP_MPI_MAX_CHUNKS) {
                c->n = 0;
                ipup_snprintf(msg, msg_len, "the gradients need more than IPUP_MPI_MAX_CHUNKS (%d) chunks of IPUP_MPI_CHUNK (%d) floats; define either larger before including ipupipe_mpi.h",
                              (int)IPUP_MPI_MAX_CHUNKS, (int)IPUP_MPI_CHUNK);
                return IPUP_ERR_CAPACITY;
            }
            c->ptr[c->n] = bufs[b] + off;
            c->cnt[c->n] = (int)(ns[b] - off < IPUP_MPI_CHUNK ? ns[b] - off : IPUP_MPI_CHUNK);
            c->n++;
        }
    }
    /* the sum travels R-1 -> 0 -> 1 -> ... -> R-2: position of each rank in that chain */
    c->pos_b = c->rank == R - 1 ? 0 : c->rank + 1;
    c->prev_b = c->pos_b == 0 ? -1 : (c->pos_b == 1 ? R - 1 : c->rank - 1);
    c->next_b = c->pos_b == R - 1 ? -1 : (c->pos_b == 0 ? 0 : c->rank + 1);
    if (R > 1) ipup__mpi_chain_requests(c);
    else c->n = 0; /* one rank: nothing to add, no request */
    return IPUP_OK;
}

/* rank q > 0: partial sum of ranks 0..q-1 arrives chunk by chunk; acc = partial + own */
static void ipup__mpi_chain_add(ipup_mpi_chain *c) {
    int i, last = c->rank == c->size - 1;
    IPUP__MPI(MPI_Start(&c->rrecv[0]));
    if (c->n > 1) IPUP__MPI(MPI_Start(&c->rrecv[1]));
    for (i = 0; i < c->n; i++) {
        float *own = c->ptr[i];
        const float *part = c->part[i & 1];
        int j;
        IPUP__MPI(MPI_Wait(&c->rrecv[i], MPI_STATUS_IGNORE));
        for (j = 0; j < c->cnt[i]; j++) own[j] = part[j] + own[j];
        if (i + 2 < c->n) IPUP__MPI(MPI_Start(&c->rrecv[i + 2]));
        if (!last) IPUP__MPI(MPI_Start(&c->rsend[i]));
    }
    if (!last) IPUP__MPI(MPI_Waitall(c->n, c->rsend, MPI_STATUSES_IGNORE));
}

IPUPIPE_DEF int ipup_mpi_chain_run(ipup_mpi_chain *c) {
    int i;
    if (c->size < 2 || c->n == 0) return IPUP_OK;
    if (c->rank == 0) {
        IPUP__MPI(MPI_Startall(c->n, c->rsend));
        IPUP__MPI(MPI_Waitall(c->n, c->rsend, MPI_STATUSES_IGNORE));
    } else {
        ipup__mpi_chain_add(c);
    }
    if (c->pos_b == 0) {
        IPUP__MPI(MPI_Startall(c->n, c->bsend));
        IPUP__MPI(MPI_Waitall(c->n, c->bsend, MPI_STATUSES_IGNORE));
        return IPUP_OK;
    }
    IPUP__MPI(MPI_Startall(c->n, c->brecv));
    for (i = 0; i < c->n; i++) {
        IPUP__MPI(MPI_Wait(&c->brecv[i], MPI_STATUS_IGNORE));
        if (c->pos_b < c->size - 1) IPUP__MPI(MPI_Start(&c->bsend[i]));
    }
    if (c->pos_b < c->size - 1) IPUP__MPI(MPI_Waitall(c->n, c->bsend, MPI_STATUSES_IGNORE));
    return IPUP_OK;
}

IPUPIPE_DEF void ipup_mpi_chain_free(ipup_mpi_chain *c) {
    int i;
    for (i = 0; i < c->n; i++) {
        if (c->rrecv[i] != MPI_REQUEST_NULL) MPI_Request_free(&c->rrecv[i]);
        if (c->rsend[i] != MPI_REQUEST_NULL) MPI_Request_free(&c->rsend[i]);
        if (c->brecv[i] != MPI_REQUEST_NULL) MPI_Request_free(&c->brecv[i]);
        if (c->bsend[i] != MPI_REQUEST_NULL) MPI_Request_free(&c->bsend[i]);
    }
    c->n = 0;
}

/* ------------------------------------------------------------------ rings */
static uint32_t ipup__mpi_slot(ipup_ring *ring) { /* the slot the next commit fills (ring not full) */
    uint8_t *p = (uint8_t *)ipup_ring_reserve(ring);
    return p ? (uint32_t)((size_t)(p - ring->buf) / ring->slot_bytes) : 0u;
}

static ipup__mpi_ring *ipup__mpi_find(ipup_mpi *m, ipup_ring *ring) {
    ipup_emu *e = m->e;
    ipup_ring *f0 = &e->fwd[m->r][0], *b0 = &e->bwd[m->r][0];
    int k = -1;
    if (ring >= f0 && ring < f0 + IPUP_MAX_LAYERS) k = m->map[0][ring - f0];
    else if (ring >= b0 && ring < b0 + IPUP_MAX_LAYERS) k = m->map[1][ring - b0];
    return k < 0 ? NULL : &m->rings[k];
}

static void *ipup__mpi_peek(void *user, ipup_ring *ring) {
    ipup_mpi *m = (ipup_mpi *)user;
    ipup__mpi_ring *x = ipup__mpi_find(m, ring);
    uint32_t slot;
    if (!x || !x->consumer || x->got >= x->posted) {
        ipup_snprintf(m->e->msg, sizeof m->e->msg, "rank %d: a ring ran empty with no message expected from another rank (a bug of the MPI runner or the table)", m->rank);
        return NULL;
    }
    slot = (x->base + x->got) & ring->mask;
    IPUP__MPI(MPI_Wait(&x->req[slot], MPI_STATUS_IGNORE));
    x->got++;
    ipup_ring_commit(ring); /* the message is in the slot the ring reserves next */
    return ipup_ring_peek(ring);
}

static void *ipup__mpi_reserve(void *user, ipup_ring *ring) {
    ipup_mpi *m = (ipup_mpi *)user;
    ipup__mpi_ring *x = ipup__mpi_find(m, ring);
    if (!x || x->consumer || x->freed >= x->sent) {
        ipup_snprintf(m->e->msg, sizeof m->e->msg, "rank %d: a ring is full with no message in flight (a bug of the MPI runner or the table)", m->rank);
        return NULL;
    }
    IPUP__MPI(MPI_Wait(&x->req[(x->base + x->freed) & ring->mask], MPI_STATUS_IGNORE));
    x->freed++;
    ipup_ring_release(ring);
    return ipup_ring_reserve(ring);
}

static void ipup__mpi_commit(void *user, ipup_ring *ring) {
    ipup_mpi *m = (ipup_mpi *)user;
    ipup__mpi_ring *x = ipup__mpi_find(m, ring);
    if (!x || x->consumer) return;
    IPUP__MPI(MPI_Start(&x->req[(x->base + x->sent) & ring->mask]));
    x->sent++;
}

static void ipup__mpi_release(void *user, ipup_ring *ring) {
    ipup_mpi *m = (ipup_mpi *)user;
    ipup__mpi_ring *x = ipup__mpi_find(m, ring);
    if (!x || !x->consumer) return;
    /* the slot just freed takes the next receive: messages match receives in posting order */
    if (x->posted < (uint32_t)m->e->M) {
        IPUP__MPI(MPI_Start(&x->req[(x->base + x->posted) & ring->mask]));
        x->posted++;
    }
}

static int ipup__mpi_step_begin(void *user, int64_t step) {
    ipup_mpi *m = (ipup_mpi *)user;
    int i;
    (void)step;
    for (i = 0; i < m->n_rings; i++) {
        ipup__mpi_ring *x = &m->rings[i];
        x->base = ipup__mpi_slot(x->ring);
        x->posted = x->got = x->sent = x->freed = 0;
        if (!x->consumer) continue;
        while (x->posted < x->ring->cap && x->posted < (uint32_t)m->e->M) {
            IPUP__MPI(MPI_Start(&x->req[(x->base + x->posted) & x->ring->mask]));
            x->posted++;
        }
    }
    return IPUP_OK;
}

static int ipup__mpi_reduce(void *user, int64_t step) {
    (void)step;
    return ipup_mpi_chain_run(&((ipup_mpi *)user)->chain);
}

/* the sends of the step complete; every IPU's error slot and the step's records everywhere */
static int ipup__mpi_step_end(void *user, int64_t step, int32_t k) {
    ipup_mpi *m = (ipup_mpi *)user;
    ipup_emu *e = m->e;
    int i, q, r;
    size_t er = sizeof(ipup__ipu_err), rb = (size_t)e->M * sizeof(ipup_outfeed_rec);
    uint8_t *mine = m->xbuf + (size_t)m->rank * (size_t)m->blk;
    for (i = 0; i < m->n_rings; i++) {
        ipup__mpi_ring *x = &m->rings[i];
        while (!x->consumer && x->freed < x->sent) {
            IPUP__MPI(MPI_Wait(&x->req[(x->base + x->freed) & x->ring->mask], MPI_STATUS_IGNORE));
            x->freed++;
            ipup_ring_release(x->ring);
        }
    }
    IPUPIPE_MEMCPY(mine, &e->err[step & 1][m->rank], er);
    IPUPIPE_MEMCPY(mine + er, &e->recs[((size_t)k * (size_t)e->R + (size_t)m->r) * (size_t)e->M], rb);
    IPUP__MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_BYTE, m->xbuf, m->blk, MPI_BYTE, m->comm));
    for (q = 0; q < m->size; q++) IPUPIPE_MEMCPY(&e->err[step & 1][q], m->xbuf + (size_t)q * (size_t)m->blk, er);
    for (r = 0; r < e->R; r++) {
        q = r * e->P + e->st[e->S - 1].device; /* the rank of replica r's last stage */
        IPUPIPE_MEMCPY(&e->recs[((size_t)k * (size_t)e->R + (size_t)r) * (size_t)e->M], m->xbuf + (size_t)q * (size_t)m->blk + er, rb);
    }
    return IPUP_OK;
}

/* one cross-rank ring into stage s (dir 0: forward from s-1, 1: backward from s+1) */
static void ipup__mpi_add_ring(ipup_mpi *m, int dir, int32_t s, int consumer, int32_t other_stage) {
    ipup_emu *e = m->e;
    ipup__mpi_ring *x = &m->rings[m->n_rings];
    uint32_t i;
    x->ring = dir ? &e->bwd[m->r][s] : &e->fwd[m->r][s];
    x->peer = m->r * e->P + e->st[other_stage].device;
    x->tag = IPUP__MPI_TAG_RING + dir * IPUP_MAX_LAYERS + s;
    x->consumer = consumer;
    for (i = 0; i < x->ring->cap; i++) {
        void *slot = x->ring->buf + (size_t)i * x->ring->slot_bytes;
        int n = (int)x->ring->slot_bytes;
        if (consumer) IPUP__MPI(MPI_Recv_init(slot, n, MPI_BYTE, x->peer, x->tag, m->comm, &x->req[i]));
        else IPUP__MPI(MPI_Send_init(slot, n, MPI_BYTE, x->peer, x->tag, m->comm, &x->req[i]));
    }
    m->map[dir][s] = (int8_t)m->n_rings++;
}

/* the rings with one end on this rank's IPU and the other on another rank */
static void ipup__mpi_rings(ipup_mpi *m) {
    ipup_emu *e = m->e;
    int32_t s, d = m->d;
    IPUPIPE_MEMSET(m->map, -1, sizeof m->map);
    for (s = 0; s < e->S; s++) {
        if (s > 0 && e->st[s].device == d && e->st[s - 1].device != d) ipup__mpi_add_ring(m, 0, s, 1, s - 1);
        if (s > 0 && e->st[s - 1].device == d && e->st[s].device != d) ipup__mpi_add_ring(m, 0, s, 0, s);
        if (s < e->S - 1 && e->st[s].device == d && e->st[s + 1].device != d) ipup__mpi_add_ring(m, 1, s, 1, s + 1);
        if (s < e->S - 1 && e->st[s + 1].device == d && e->st[s].device != d) ipup__mpi_add_ring(m, 1, s, 0, s);
    }
}

/* everything every rank must agree on: shapes, table, stages, optimizer, weights, step */
static uint64_t ipup__mpi_fingerprint(const ipup_emu *e, uint64_t app) {
    int32_t v[8], i, s;
    uint64_t h = ipup_mpi_hash(0, &app, sizeof app);
    float o[5];
    v[0] = e->S; v[1] = e->P; v[2] = e->R; v[3] = e->M; v[4] = e->B; v[5] = e->n_layers;
    v[6] = (int32_t)e->cfg.opt.kind; v[7] = e->cfg.recompute * 2 + e->cfg.offload;
    h = ipup_mpi_hash(h, v, sizeof v);
    o[0] = e->cfg.opt.lr; o[1] = e->cfg.opt.momentum; o[2] = e->cfg.opt.beta1; o[3] = e->cfg.opt.beta2; o[4] = e->cfg.opt.eps;
    h = ipup_mpi_hash(h, o, sizeof o);
    h = ipup_mpi_hash(h, &e->step, sizeof e->step);
    h = ipup_mpi_hash(h, &e->cfg.seed, sizeof e->cfg.seed);
    for (i = 0; i < e->table.n_ops; i++) {
        int32_t w[5];
        w[0] = e->ops[i].step; w[1] = e->ops[i].mb; w[2] = e->ops[i].stage; w[3] = e->ops[i].device; w[4] = e->ops[i].kind;
        h = ipup_mpi_hash(h, w, sizeof w);
    }
    for (s = 0; s < e->S; s++) {
        int32_t w[3];
        w[0] = e->st[s].first; w[1] = e->st[s].last; w[2] = e->st[s].device;
        h = ipup_mpi_hash(h, w, sizeof w);
        h = ipup_mpi_hash(h, e->srt[0][s].params, e->st[s].n_params * sizeof(float));
        if (e->st[s].n_state) h = ipup_mpi_hash(h, e->srt[0][s].state, e->st[s].n_state * sizeof(float));
    }
    return h;
}

/* collective: the same verdict on every rank (rank count, fingerprints, limits) */
static int ipup__mpi_agree(ipup_mpi *m) {
    ipup_emu *e = m->e;
    uint64_t all[2 * IPUP_MAX_IPUS + 2], mine[2];
    int q;
    mine[0] = m->fingerprint;
    mine[1] = (uint64_t)e->nipus;
    if (m->size > IPUP_MAX_IPUS)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG, "mpirun started %d ranks; the MPI runner takes at most IPUP_MAX_IPUS (%d)", m->size, (int)IPUP_MAX_IPUS);
    IPUP__MPI(MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, m->comm));
    for (q = 0; q < m->size; q++) {
        if (all[2 * q + 1] != (uint64_t)m->size)
            return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG, "rank %d's configuration has %d IPUs (replicas x IPUs per replica) but mpirun started %d ranks; run mpirun -np %d, one rank per IPU",
                              q, (int)all[2 * q + 1], m->size, (int)all[2 * q + 1]);
        if (all[2 * q] != all[0])
            return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_MISMATCH, "rank %d's configuration differs from rank 0's (fingerprint %016llx, rank 0 %016llx: model, schedule, stages, replicas, batch, optimizer, seed, weights or options); start every rank with the same command and files",
                              q, (unsigned long long)all[2 * q], (unsigned long long)all[0]);
    }
    if (e->M > IPUP_MPI_MAX_MB)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CAPACITY, "%d micro-batches per step; the MPI runner takes at most IPUP_MPI_MAX_MB (%d): define it larger before including ipupipe_mpi.h", (int)e->M, (int)IPUP_MPI_MAX_MB);
    for (q = 0; q < e->S; q++)
        if ((q > 0 && e->fwd[0][q].cap > IPUP_MPI_MAX_SLOTS) || (q < e->S - 1 && e->bwd[0][q].cap > IPUP_MPI_MAX_SLOTS))
            return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CAPACITY, "a ring of stage %d has more than IPUP_MPI_MAX_SLOTS (%d) slots: define it larger before including ipupipe_mpi.h", (int)q, (int)IPUP_MPI_MAX_SLOTS);
    return IPUP_OK;
}

static int ipup__mpi_setup_chain(ipup_mpi *m) {
    ipup_emu *e = m->e;
    float *bufs[IPUP_MAX_LAYERS];
    size_t ns[IPUP_MAX_LAYERS];
    int nb = 0, rc;
    int32_t s;
    IPUP__MPI(MPI_Comm_split(m->comm, m->d, m->r, &m->dev_comm));
    for (s = 0; s < e->S; s++) {
        if (e->st[s].device != m->d || e->st[s].n_grads == 0) continue;
        bufs[nb] = e->srt[m->r][s].grads;
        ns[nb++] = e->st[s].n_grads; /* the trained layers' part (frozen layers have none) */
    }
    rc = ipup_mpi_chain_init(&m->chain, m->dev_comm, nb, bufs, ns, e->msg, sizeof e->msg);
    /* every rank of a device has the same chunks: the verdict is the same on all of them */
    return rc;
}

IPUPIPE_DEF int ipup_mpi_init(ipup_mpi *m, ipup_emu *e, MPI_Comm comm, uint64_t app_fingerprint) {
    int rc;
    if (!m || !e || !e->initialised) return IPUP_ERR_ARG;
    IPUPIPE_MEMSET(m, 0, sizeof *m);
    m->e = e;
    m->dev_comm = MPI_COMM_NULL;
    IPUP__MPI(MPI_Comm_dup(comm, &m->comm));
    IPUP__MPI(MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN));
    IPUP__MPI(MPI_Comm_rank(m->comm, &m->rank));
    IPUP__MPI(MPI_Comm_size(m->comm, &m->size));
    if (e->cfg.runner != IPUP_RUNNER_COOP)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG, "the MPI runner needs an emulator initialised with the cooperative runner (runner = IPUP_RUNNER_COOP)");
    m->fingerprint = ipup__mpi_fingerprint(e, app_fingerprint);
    if ((rc = ipup__mpi_agree(m)) != IPUP_OK) return rc;
    m->r = m->rank / e->P;
    m->d = m->rank % e->P;
    m->blk = (int)(sizeof(ipup__ipu_err) + (size_t)e->M * sizeof(ipup_outfeed_rec));
    ipup__mpi_rings(m);
    if ((rc = ipup__mpi_setup_chain(m)) != IPUP_OK) return rc;
    m->tp.user = m;
    m->tp.ipu = m->rank;
    m->tp.peek = ipup__mpi_peek;
    m->tp.reserve = ipup__mpi_reserve;
    m->tp.commit = ipup__mpi_commit;
    m->tp.release = ipup__mpi_release;
    m->tp.step_begin = ipup__mpi_step_begin;
    m->tp.reduce = ipup__mpi_reduce;
    m->tp.step_end = ipup__mpi_step_end;
    return ipup_set_transport(e, &m->tp);
}

IPUPIPE_DEF int ipup_mpi_share_state(ipup_mpi *m) {
    ipup_emu *e = m->e;
    int32_t s;
    for (s = 0; s < e->S; s++) {
        int owner = e->st[s].device; /* replica 0, device of stage s */
        if (e->st[s].n_params)
            IPUP__MPI(MPI_Bcast(e->srt[0][s].params, (int)e->st[s].n_params, MPI_FLOAT, owner, m->comm));
        if (e->st[s].n_state)
            IPUP__MPI(MPI_Bcast(e->srt[0][s].state, (int)e->st[s].n_state, MPI_FLOAT, owner, m->comm));
    }
    return IPUP_OK;
}

IPUPIPE_DEF void ipup_mpi_free(ipup_mpi *m) {
    int i;
    uint32_t j;
    if (!m || !m->e) return;
    ipup_set_transport(m->e, NULL);
    for (i = 0; i < m->n_rings; i++)
        for (j = 0; j < m->rings[i].ring->cap; j++) MPI_Request_free(&m->rings[i].req[j]);
    m->n_rings = 0;
    ipup_mpi_chain_free(&m->chain);
    if (m->dev_comm != MPI_COMM_NULL) MPI_Comm_free(&m->dev_comm);
    MPI_Comm_free(&m->comm);
    m->e = NULL;
}

#endif /* IPUPIPE_MPI_IMPLEMENTED */
#endif /* IPUPIPE_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
MIT License
Copyright (c) 2026 the ipupipe authors
Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:
The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
