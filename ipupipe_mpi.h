/* ipupipe_mpi.h - v0.5.0 - ipupipe's MPI runner: one rank per IPU - MIT licence (see end of file)

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
   - The replica reduction is a fixed-order sum, not MPI_Allreduce (which promises no
     order): each of the R ranks of one device sums 1/R of the gradients, adding the R
     ranks' parts in replica order 0..R-1 (acc = g0; acc += g1; ..., the cooperative
     runner's arithmetic), and sends its sum back to the others; chunked and pipelined,
     on persistent requests (ipup_mpi_sum_*, usable on its own, with a chain variant).
   - After each step one MPI_Allgather gives every rank every IPU's error slot and the
     step's outfeed records (loss records reach every rank in (step, replica, mb)
     order), so every rank takes the same decision and computes the same statistics.
   - ipup_mpi_init checks, collectively, that the communicator has replicas x devices
     ranks and that every rank has the same configuration fingerprint (table, stages,
     optimizer, parameters, step and a fingerprint the application adds); a failed MPI
     call prints the rank, the call and MPI's error string, then MPI_Abort ends the job.
     The fingerprint does not see the data: ipup_mpi_agree_inputs compares a digest of
     what each rank read (the MNIST trainer's IDX headers and samples) across the ranks.
   - No heap call in this file. OpenMPI itself allocates in MPI_Init, in the
     communicator set-up and in the request creation of ipup_mpi_init; see the README
     ("Beyond one machine") for the heap calls it makes per step.

   Every rank holds the whole ipup_emu and its pools (the emulator is one struct), but a
   step touches only the pool of its own IPU and replica 0's copies are brought to every
   rank only by ipup_mpi_share_state (before an evaluation or a checkpoint).

   CONTENTS
     Each section starts with a one-line comment that opens with ">>TAG:"; grep -n '>>TAG'
     ipupipe_mpi.h finds its declarations, then its implementation. The sections, in order
     (* implementation only; + declarations only):
       limits+       the compile-time limits
       calls*        message tags; a failed MPI call ends the job
       sum           the fixed-order sum over ranks (ipup_mpi_sum)
       transport*    rings that cross ranks, the exchange after each step
       runner        ipup_mpi_init, ipup_mpi_share_state, ipup_mpi_free, ipup_mpi_hash,
                     ipup_mpi_agree_inputs

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

/* >>limits: the compile-time limits of the MPI runner, each overridable */
#ifndef IPUP_MPI_CHUNK
#define IPUP_MPI_CHUNK 32768 /* floats per message of the replica reduction (128 KB) */
#endif
#ifndef IPUP_MPI_MAX_CHUNKS
/* chunks of one rank's gradient blocks (64 MB at the default chunk) */
#define IPUP_MPI_MAX_CHUNKS 512
#endif
#ifndef IPUP_MPI_MAX_PEERS
/* other ranks of one scatter sum: up to 4 replicas (2 x 3 x 128 KB staged) */
#define IPUP_MPI_MAX_PEERS 3
#endif
#ifndef IPUP_MPI_MAX_SLOTS
#define IPUP_MPI_MAX_SLOTS 64 /* ring capacity */
#endif
#ifndef IPUP_MPI_MAX_MB
#define IPUP_MPI_MAX_MB 256 /* micro-batches per step (records exchanged per step) */
#endif
#ifndef IPUP_MPI_MAX_INPUTS
#define IPUP_MPI_MAX_INPUTS 16 /* inputs compared by one ipup_mpi_agree_inputs */
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* >>sum: the fixed-order sum over ranks, usable on its own */
/* How ipup_mpi_sum adds. Both give, in every rank's buffers, the sum over the ranks of the
   communicator added in rank order 0..size-1 (acc = x0; acc += x1; ...), the bits of the
   cooperative runner's replica reduction; they differ in the traffic:
   - SCATTER (default): the buffers are cut into size parts; rank q gathers part q of every
     rank's buffers, adds them in rank order, and sends the sum back to every rank. Each
     rank sends 2 (size-1)/size of the buffer bytes, as a ring all-reduce does.
   - CHAIN: rank q adds its buffers to the partial sum of ranks 0..q-1 and passes it on;
     the last rank sends the sum down a second chain. Each rank sends up to 2x the
     buffer bytes, in about 2 size messages per chunk; kept for comparison. */
typedef enum { IPUP_MPI_SUM_SCATTER = 0, IPUP_MPI_SUM_CHAIN = 1 } ipup_mpi_sum_algo;

typedef struct ipup_mpi_sum {
    MPI_Comm comm;
    int rank, size;
    int n_chunks; /* chunks of all the buffers */
    int algo;     /* ipup_mpi_sum_algo */
    int n_owned;  /* scatter: the chunks this rank owns */
    /* chain: the sum's second pass, R-1 -> 0 -> 1 -> ... -> R-2: the ranks before and after
       this one in it (-1: none) and its position */
    int sum_prev, sum_next, sum_pos;
    float *chunk[IPUP_MPI_MAX_CHUNKS];    /* the chunk's first float in its buffer */
    int chunk_len[IPUP_MPI_MAX_CHUNKS];   /* its floats */
    int owner[IPUP_MPI_MAX_CHUNKS];       /* scatter: the rank that adds it up */
    int owned[IPUP_MPI_MAX_CHUNKS];       /* scatter: the chunks this rank owns, in order */
    /* per chunk. chain: receive of the partial sum, send of it (part_*), the second pass
       (sum_*); scatter: send of this rank's part to the chunk's owner (part_send), receive
       of the sum (sum_recv) */
    MPI_Request part_recv[IPUP_MPI_MAX_CHUNKS], part_send[IPUP_MPI_MAX_CHUNKS];
    MPI_Request sum_recv[IPUP_MPI_MAX_CHUNKS], sum_send[IPUP_MPI_MAX_CHUNKS];
    /* scatter, per (chunk this rank owns, other rank): receive of the part, send of the sum */
    MPI_Request owner_recv[IPUP_MPI_MAX_CHUNKS], owner_send[IPUP_MPI_MAX_CHUNKS];
    float parts[2][IPUP_MPI_MAX_PEERS][IPUP_MPI_CHUNK]; /* received parts, two chunks deep */
} ipup_mpi_sum;

/* Collective over comm. Prepares the fixed-order sum (algo: ipup_mpi_sum_algo) over
   comm's ranks of the nbufs buffers bufs[i] of ns[i] floats (the same sizes on every
   rank): the requests are created here, once. IPUP_ERR_CAPACITY (message in msg) when
   they need more than IPUP_MPI_MAX_CHUNKS chunks of IPUP_MPI_CHUNK floats, or (scatter)
   comm has more than IPUP_MPI_MAX_PEERS + 1 ranks; IPUP_ERR_ARG for an unknown algo. */
IPUPIPE_DEF int ipup_mpi_sum_init(ipup_mpi_sum *c, MPI_Comm comm, int algo, int nbufs,
                                  float *const *bufs, const size_t *ns, char *msg, size_t msg_len);
/* Collective: every rank's buffers become the sum over ranks 0..size-1, added in that order. */
IPUPIPE_DEF int ipup_mpi_sum_run(ipup_mpi_sum *c);
IPUPIPE_DEF void ipup_mpi_sum_free(ipup_mpi_sum *c);

/* >>runner: the MPI runner: one rank per IPU, through the transport seam of ipupipe.h */
/* one ring with one end on this rank's IPU and the other on another rank */
typedef struct ipup__mpi_ring {
    ipup_ring *ring;
    int peer, tag, consumer;
    uint32_t base, posted, got, sent, freed;
    MPI_Request req[IPUP_MPI_MAX_SLOTS];
} ipup__mpi_ring;

typedef struct ipup_mpi {
    ipup_emu *e;
    MPI_Comm comm, dev_comm;
    int rank, size;
    int replica, device; /* this rank's IPU: rank = replica * devices + device */
    int n_rings;
    int xchg_bytes;      /* one rank's block of the exchange after each step */
    /* ring (fwd, bwd) into stage s of this replica -> rings[], -1 */
    int8_t ring_index[2][IPUP_MAX_LAYERS];
    ipup__mpi_ring rings[2 * IPUP_MAX_LAYERS];
    ipup_mpi_sum sum;
    ipup_transport transport;
    uint64_t fingerprint;
    /* the exchange after each step: every IPU's error slot and the step's outfeed records */
    uint8_t xchg[IPUP_MAX_IPUS *
                 (sizeof(ipup__ipu_err) + IPUP_MPI_MAX_MB * sizeof(ipup_outfeed_rec))];
} ipup_mpi;

/* Collective over comm (replicas x devices ranks), after ipup_init of e (cooperative
   runner) and any checkpoint load. app_fingerprint is mixed into the check that every
   rank runs the same configuration (e.g. a hash of the options). IPUP_OK, or
   IPUP_ERR_CONFIG / IPUP_ERR_MISMATCH / IPUP_ERR_CAPACITY / IPUP_ERR_UNSUPPORTED (concurrent
   stages) with the same message on every rank in ipup_last_error(e). */
IPUPIPE_DEF int ipup_mpi_init(ipup_mpi *m, ipup_emu *e, MPI_Comm comm, uint64_t app_fingerprint);
/* Collective: replica 0's parameters and optimizer state of every stage, from the rank
   that trains it, on every rank (for ipup_evaluate, ipup_tensor_get, checkpoints). */
IPUPIPE_DEF int ipup_mpi_share_state(ipup_mpi *m);
/* Releases the requests and communicators; e returns to the cooperative runner. */
IPUPIPE_DEF void ipup_mpi_free(ipup_mpi *m);
/* FNV-1a 64 of n bytes, continuing h (start with 0). */
IPUPIPE_DEF uint64_t ipup_mpi_hash(uint64_t h, const void *data, size_t n);
/* Collective over comm: that every rank read the same inputs. Each rank passes the same
   n (0..IPUP_MPI_MAX_INPUTS) names, the inputs as the command line names them (e.g. the
   path of a file), and a digest of each: what the rank read of it (e.g. ipup_mpi_hash of
   the bytes it uses). IPUP_OK when every rank's digests equal rank 0's; otherwise, with
   the same verdict on every rank, IPUP_ERR_MISMATCH and msg names the first rank and
   input that differ (as the calling rank names it), IPUP_ERR_ARG when a rank passed a bad
   n or NULL arrays, IPUP_ERR_CONFIG for more than IPUP_MAX_IPUS ranks. A rank with other
   inputs trains on other data: its gradients enter the replica sum or its activations
   the next stage, and the run ends as if nothing were wrong. */
IPUPIPE_DEF int ipup_mpi_agree_inputs(MPI_Comm comm, int n, const char *const *names,
                                      const uint64_t *digests, char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif
#endif /* IPUPIPE_MPI_H */

/* ================================================================== implementation */
#ifdef IPUPIPE_IMPLEMENTATION
#ifndef IPUPIPE_MPI_IMPLEMENTED
#define IPUPIPE_MPI_IMPLEMENTED
#include <stdio.h>

/* >>calls: message tags; a failed MPI call ends the job */
/* message tags, disjoint ranges: every chunk and ring has its own */
/* + chunk: a part (scatter) or partial sum (chain) */
#define IPUP__MPI_TAG_PART 1000
/* + chunk: the sum going back */
#define IPUP__MPI_TAG_SUM (IPUP__MPI_TAG_PART + IPUP_MPI_MAX_CHUNKS)
#define IPUP__MPI_TAG_RING (IPUP__MPI_TAG_SUM + IPUP_MPI_MAX_CHUNKS) /* + ring */
#if IPUP__MPI_TAG_RING + 2 * IPUP_MAX_LAYERS > 32767
#error "IPUP_MPI_MAX_CHUNKS is too large: the message tags must stay below 32768 (MPI's \
guaranteed MPI_TAG_UB)"
#endif

/* A failed MPI call: the rank, the call and MPI's reason on stderr, then the whole job
   ends (MPI_Abort), so no rank waits for one that cannot answer. */
static void ipup__mpi_die(const char *what, int rc) {
    char err[MPI_MAX_ERROR_STRING], line[MPI_MAX_ERROR_STRING + 256];
    int len = 0, rank = -1;
    err[0] = 0;
    MPI_Error_string(rc, err, &len);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    ipup_snprintf(line, sizeof line, "ipupipe_mpi: rank %d: %s failed: %s; ending the job\n", rank,
                  what, err);
    fputs(line, stderr);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
}
#define IPUP__MPI(call)                                   \
    do {                                                  \
        int ipup__mrc = (call);                           \
        if (ipup__mrc != MPI_SUCCESS) ipup__mpi_die(#call, ipup__mrc); \
    } while (0)

/* >>sum: ipup_mpi_sum: the chunks, their persistent requests, the two ways to add */
static void ipup__mpi_chain_requests(ipup_mpi_sum *c) {
    int i, q = c->rank, R = c->size;
    for (i = 0; i < c->n_chunks; i++) {
        if (q > 0)
            IPUP__MPI(MPI_Recv_init(c->parts[i & 1][0], c->chunk_len[i], MPI_FLOAT, q - 1,
                                    IPUP__MPI_TAG_PART + i, c->comm, &c->part_recv[i]));
        if (q < R - 1)
            IPUP__MPI(MPI_Send_init(c->chunk[i], c->chunk_len[i], MPI_FLOAT, q + 1,
                                    IPUP__MPI_TAG_PART + i, c->comm, &c->part_send[i]));
        if (c->sum_pos > 0)
            IPUP__MPI(MPI_Recv_init(c->chunk[i], c->chunk_len[i], MPI_FLOAT, c->sum_prev,
                                    IPUP__MPI_TAG_SUM + i, c->comm, &c->sum_recv[i]));
        if (c->sum_pos < R - 1)
            IPUP__MPI(MPI_Send_init(c->chunk[i], c->chunk_len[i], MPI_FLOAT, c->sum_next,
                                    IPUP__MPI_TAG_SUM + i, c->comm, &c->sum_send[i]));
    }
}

/* scatter: a chunk owned elsewhere is sent to its owner and its sum comes back into it; a
   chunk this rank owns gets every other rank's part into part[j & 1][peer index], where j
   counts the owned chunks, and its sum goes to every other rank */
static void ipup__mpi_scatter_requests(ipup_mpi_sum *c) {
    int i, j = 0, p, k = 0;
    for (i = 0; i < c->n_chunks; i++) {
        if (c->owner[i] != c->rank) {
            IPUP__MPI(MPI_Send_init(c->chunk[i], c->chunk_len[i], MPI_FLOAT, c->owner[i],
                                    IPUP__MPI_TAG_PART + i, c->comm, &c->part_send[i]));
            IPUP__MPI(MPI_Recv_init(c->chunk[i], c->chunk_len[i], MPI_FLOAT, c->owner[i],
                                    IPUP__MPI_TAG_SUM + i, c->comm, &c->sum_recv[i]));
            continue;
        }
        for (p = 0; p < c->size; p++) {
            if (p == c->rank) continue;
            IPUP__MPI(MPI_Recv_init(c->parts[j & 1][p - (p > c->rank)], c->chunk_len[i], MPI_FLOAT,
                                    p, IPUP__MPI_TAG_PART + i, c->comm, &c->owner_recv[k]));
            IPUP__MPI(MPI_Send_init(c->chunk[i], c->chunk_len[i], MPI_FLOAT, p,
                                    IPUP__MPI_TAG_SUM + i, c->comm, &c->owner_send[k]));
            k++;
        }
        c->owned[j++] = i;
    }
    c->n_owned = j;
}

static int ipup__mpi_sum_full(ipup_mpi_sum *c, char *msg, size_t msg_len) {
    c->n_chunks = 0;
    ipup_snprintf(msg, msg_len,
                  "the gradients need more than IPUP_MPI_MAX_CHUNKS (%d) chunks of IPUP_MPI_CHUNK "
                  "(%d) floats; define either larger before including ipupipe_mpi.h",
                  (int)IPUP_MPI_MAX_CHUNKS, (int)IPUP_MPI_CHUNK);
    return IPUP_ERR_CAPACITY;
}

/* the chunks: at most IPUP_MPI_CHUNK floats, inside one buffer and (scatter) inside one
   of the size equal parts of the buffers laid end to end; owner = that part's rank */
static int ipup__mpi_sum_chunks(ipup_mpi_sum *c, int nbufs, float *const *bufs, const size_t *ns,
                                char *msg, size_t msg_len) {
    size_t total = 0, pos = 0, off, parts = c->algo == IPUP_MPI_SUM_SCATTER ? (size_t)c->size : 1u;
    int b, part = 0, n_mine = 0;
    for (b = 0; b < nbufs; b++) total += ns[b];
    for (b = 0; b < nbufs; b++)
        for (off = 0; off < ns[b];) {
            size_t end = ns[b] - off < IPUP_MPI_CHUNK ? ns[b] : off + IPUP_MPI_CHUNK, hi;
            while (part + 1 < (int)parts && pos >= total * (size_t)(part + 1) / parts) part++;
            hi = total * (size_t)(part + 1) / parts; /* the end of that part, counted as pos is */
            if (end - off > hi - pos) end = off + (hi - pos);
            if (c->n_chunks >= IPUP_MPI_MAX_CHUNKS) return ipup__mpi_sum_full(c, msg, msg_len);
            c->chunk[c->n_chunks] = bufs[b] + off;
            c->chunk_len[c->n_chunks] = (int)(end - off);
            c->owner[c->n_chunks] = part;
            n_mine += part == c->rank;
            c->n_chunks++;
            pos += end - off;
            off = end;
        }
    if (c->algo == IPUP_MPI_SUM_SCATTER &&
        (size_t)n_mine * (size_t)(c->size - 1) > IPUP_MPI_MAX_CHUNKS)
        return ipup__mpi_sum_full(c, msg, msg_len);
    return IPUP_OK;
}

IPUPIPE_DEF int ipup_mpi_sum_init(ipup_mpi_sum *c, MPI_Comm comm, int algo, int nbufs,
                                  float *const *bufs, const size_t *ns, char *msg, size_t msg_len) {
    int i, R, rc;
    IPUPIPE_MEMSET(c, 0, sizeof *c);
    c->comm = comm;
    c->algo = algo;
    IPUP__MPI(MPI_Comm_rank(comm, &c->rank));
    IPUP__MPI(MPI_Comm_size(comm, &c->size));
    R = c->size;
    for (i = 0; i < IPUP_MPI_MAX_CHUNKS; i++)
        c->part_recv[i] = c->part_send[i] = c->sum_recv[i] = c->sum_send[i] = c->owner_recv[i] =
            c->owner_send[i] = MPI_REQUEST_NULL;
    if (algo != IPUP_MPI_SUM_SCATTER && algo != IPUP_MPI_SUM_CHAIN)
        return ipup__fail(
            msg, msg_len, IPUP_ERR_ARG,
            "ipup_mpi_sum_init: algo %d is neither IPUP_MPI_SUM_SCATTER nor IPUP_MPI_SUM_CHAIN",
            algo);
    if (algo == IPUP_MPI_SUM_SCATTER && R > IPUP_MPI_MAX_PEERS + 1)
        return ipup__fail(
            msg, msg_len, IPUP_ERR_CAPACITY,
            "the scatter sum over %d ranks needs IPUP_MPI_MAX_PEERS >= %d (it is %d): define it "
            "larger before including ipupipe_mpi.h, or use IPUP_MPI_SUM_CHAIN",
            R, R - 1, (int)IPUP_MPI_MAX_PEERS);
    if ((rc = ipup__mpi_sum_chunks(c, nbufs, bufs, ns, msg, msg_len)) != IPUP_OK) return rc;
    if (R < 2) {
        c->n_chunks = 0; /* one rank: nothing to add, no request */
        return IPUP_OK;
    }
    if (algo == IPUP_MPI_SUM_SCATTER) {
        ipup__mpi_scatter_requests(c);
        return IPUP_OK;
    }
    /* the chain's sum travels R-1 -> 0 -> 1 -> ... -> R-2: position of each rank in that chain */
    c->sum_pos = c->rank == R - 1 ? 0 : c->rank + 1;
    c->sum_prev = c->sum_pos == 0 ? -1 : (c->sum_pos == 1 ? R - 1 : c->rank - 1);
    c->sum_next = c->sum_pos == R - 1 ? -1 : (c->sum_pos == 0 ? 0 : c->rank + 1);
    ipup__mpi_chain_requests(c);
    return IPUP_OK;
}

/* chain, rank q > 0: the partial sum of ranks 0..q-1 arrives chunk by chunk; acc = partial + own */
static void ipup__mpi_chain_add(ipup_mpi_sum *c) {
    int i, last = c->rank == c->size - 1;
    IPUP__MPI(MPI_Start(&c->part_recv[0]));
    if (c->n_chunks > 1) IPUP__MPI(MPI_Start(&c->part_recv[1]));
    for (i = 0; i < c->n_chunks; i++) {
        float *own = c->chunk[i], *part = c->parts[i & 1][0];
        IPUP__MPI(MPI_Wait(&c->part_recv[i], MPI_STATUS_IGNORE));
        ipup_add_f32(c->chunk_len[i], part, own); /* partial + own: the order of the plain sum */
        IPUPIPE_MEMCPY(own, part, (size_t)c->chunk_len[i] * sizeof(float));
        if (i + 2 < c->n_chunks) IPUP__MPI(MPI_Start(&c->part_recv[i + 2]));
        if (!last) IPUP__MPI(MPI_Start(&c->part_send[i]));
    }
    if (!last) IPUP__MPI(MPI_Waitall(c->n_chunks, c->part_send, MPI_STATUSES_IGNORE));
}

static void ipup__mpi_chain_run(ipup_mpi_sum *c) {
    int i;
    if (c->rank == 0) {
        IPUP__MPI(MPI_Startall(c->n_chunks, c->part_send));
        IPUP__MPI(MPI_Waitall(c->n_chunks, c->part_send, MPI_STATUSES_IGNORE));
    } else {
        ipup__mpi_chain_add(c);
    }
    if (c->sum_pos == 0) {
        IPUP__MPI(MPI_Startall(c->n_chunks, c->sum_send));
        IPUP__MPI(MPI_Waitall(c->n_chunks, c->sum_send, MPI_STATUSES_IGNORE));
        return;
    }
    IPUP__MPI(MPI_Startall(c->n_chunks, c->sum_recv));
    for (i = 0; i < c->n_chunks; i++) {
        IPUP__MPI(MPI_Wait(&c->sum_recv[i], MPI_STATUS_IGNORE));
        if (c->sum_pos < c->size - 1) IPUP__MPI(MPI_Start(&c->sum_send[i]));
    }
    if (c->sum_pos < c->size - 1)
        IPUP__MPI(MPI_Waitall(c->n_chunks, c->sum_send, MPI_STATUSES_IGNORE));
}

/* scatter: the sum of owned chunk i from the parts in part[slot] (rank order; this rank's
   own part at its place), into ptr[i] */
static void ipup__mpi_scatter_add(ipup_mpi_sum *c, int i, int slot) {
    float *own = c->chunk[i], *acc = c->rank == 0 ? own : c->parts[slot][0];
    int p, n = c->chunk_len[i];
    for (p = 1; p < c->size; p++) /* acc already holds rank 0's part */
        ipup_add_f32(n, acc, p == c->rank ? own : c->parts[slot][p - (p > c->rank)]);
    if (acc != own) IPUPIPE_MEMCPY(own, acc, (size_t)n * sizeof(float));
}

static void ipup__mpi_scatter_run(ipup_mpi_sum *c) {
    int i, j, P = c->size - 1, lead = c->n_owned < 2 ? c->n_owned : 2;
    for (i = 0; i < c->n_chunks; i++) /* this rank's parts of the chunks other ranks own */
        if (c->owner[i] != c->rank) IPUP__MPI(MPI_Start(&c->part_send[i]));
    if (lead) IPUP__MPI(MPI_Startall(lead * P, c->owner_recv));
    for (j = 0; j < c->n_owned; j++) { /* two owned chunks in flight: part[j & 1] */
        IPUP__MPI(MPI_Waitall(P, &c->owner_recv[j * P], MPI_STATUSES_IGNORE));
        ipup__mpi_scatter_add(c, c->owned[j], j & 1);
        if (j + 2 < c->n_owned) IPUP__MPI(MPI_Startall(P, &c->owner_recv[(j + 2) * P]));
        IPUP__MPI(MPI_Startall(P, &c->owner_send[j * P]));
    }
    /* a part has left before its sum may land in the same bytes */
    for (i = 0; i < c->n_chunks; i++)
        if (c->owner[i] != c->rank) {
            IPUP__MPI(MPI_Wait(&c->part_send[i], MPI_STATUS_IGNORE));
            IPUP__MPI(MPI_Start(&c->sum_recv[i]));
        }
    for (i = 0; i < c->n_chunks; i++)
        if (c->owner[i] != c->rank) IPUP__MPI(MPI_Wait(&c->sum_recv[i], MPI_STATUS_IGNORE));
    if (c->n_owned) IPUP__MPI(MPI_Waitall(c->n_owned * P, c->owner_send, MPI_STATUSES_IGNORE));
}

IPUPIPE_DEF int ipup_mpi_sum_run(ipup_mpi_sum *c) {
    if (c->size < 2 || c->n_chunks == 0) return IPUP_OK;
    if (c->algo == IPUP_MPI_SUM_SCATTER) ipup__mpi_scatter_run(c);
    else ipup__mpi_chain_run(c);
    return IPUP_OK;
}

IPUPIPE_DEF void ipup_mpi_sum_free(ipup_mpi_sum *c) {
    int i;
    for (i = 0; i < IPUP_MPI_MAX_CHUNKS; i++) {
        MPI_Request *r[6];
        int k;
        r[0] = &c->part_recv[i]; r[1] = &c->part_send[i]; r[2] = &c->sum_recv[i];
        r[3] = &c->sum_send[i]; r[4] = &c->owner_recv[i]; r[5] = &c->owner_send[i];
        for (k = 0; k < 6; k++)
            if (*r[k] != MPI_REQUEST_NULL) MPI_Request_free(r[k]);
    }
    c->n_chunks = c->n_owned = 0;
}

/* >>transport: rings that cross ranks, and the exchange at the end of each step */
/* the slot the next commit fills (ring not full) */
static uint32_t ipup__mpi_next_slot(ipup_ring *ring) {
    uint8_t *p = (uint8_t *)ipup_ring_reserve(ring);
    return p ? (uint32_t)((size_t)(p - ring->buf) / ring->slot_bytes) : 0u;
}

static ipup__mpi_ring *ipup__mpi_ring_of(ipup_mpi *m, ipup_ring *ring) {
    ipup_emu *e = m->e;
    ipup_ring *f0 = &e->fwd[m->replica][0], *b0 = &e->bwd[m->replica][0];
    int k = -1;
    if (ring >= f0 && ring < f0 + IPUP_MAX_LAYERS) k = m->ring_index[0][ring - f0];
    else if (ring >= b0 && ring < b0 + IPUP_MAX_LAYERS) k = m->ring_index[1][ring - b0];
    return k < 0 ? NULL : &m->rings[k];
}

static void *ipup__mpi_peek(void *user, ipup_ring *ring) {
    ipup_mpi *m = (ipup_mpi *)user;
    ipup__mpi_ring *x = ipup__mpi_ring_of(m, ring);
    uint32_t slot;
    if (!x || !x->consumer || x->got >= x->posted) {
        ipup_snprintf(m->e->core.msg, sizeof m->e->core.msg,
                      "rank %d: a ring ran empty with no message expected from another rank (a bug "
                      "of the MPI runner or the table)",
                      m->rank);
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
    ipup__mpi_ring *x = ipup__mpi_ring_of(m, ring);
    if (!x || x->consumer || x->freed >= x->sent) {
        ipup_snprintf(m->e->core.msg, sizeof m->e->core.msg,
                      "rank %d: a ring is full with no message in flight (a bug of the MPI runner "
                      "or the table)",
                      m->rank);
        return NULL;
    }
    IPUP__MPI(MPI_Wait(&x->req[(x->base + x->freed) & ring->mask], MPI_STATUS_IGNORE));
    x->freed++;
    ipup_ring_release(ring);
    return ipup_ring_reserve(ring);
}

static void ipup__mpi_commit(void *user, ipup_ring *ring) {
    ipup_mpi *m = (ipup_mpi *)user;
    ipup__mpi_ring *x = ipup__mpi_ring_of(m, ring);
    if (!x || x->consumer) return;
    IPUP__MPI(MPI_Start(&x->req[(x->base + x->sent) & ring->mask]));
    x->sent++;
}

static void ipup__mpi_release(void *user, ipup_ring *ring) {
    ipup_mpi *m = (ipup_mpi *)user;
    ipup__mpi_ring *x = ipup__mpi_ring_of(m, ring);
    if (!x || !x->consumer) return;
    /* the slot just freed takes the next receive: messages match receives in posting order */
    if (x->posted < (uint32_t)m->e->core.M) {
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
        x->base = ipup__mpi_next_slot(x->ring);
        x->posted = x->got = x->sent = x->freed = 0;
        if (!x->consumer) continue;
        while (x->posted < x->ring->cap && x->posted < (uint32_t)m->e->core.M) {
            IPUP__MPI(MPI_Start(&x->req[(x->base + x->posted) & x->ring->mask]));
            x->posted++;
        }
    }
    return IPUP_OK;
}

static int ipup__mpi_reduce(void *user, int64_t step) {
    (void)step;
    return ipup_mpi_sum_run(&((ipup_mpi *)user)->sum);
}

/* the sends of the step complete; every IPU's error slot and the step's records everywhere */
static int ipup__mpi_step_end(void *user, int64_t step, int32_t k) {
    ipup_mpi *m = (ipup_mpi *)user;
    ipup_emu *e = m->e;
    int i, q, r;
    size_t err_bytes = sizeof(ipup__ipu_err);
    size_t rec_bytes = (size_t)e->core.M * sizeof(ipup_outfeed_rec);
    uint8_t *my_block = m->xchg + (size_t)m->rank * (size_t)m->xchg_bytes;
    for (i = 0; i < m->n_rings; i++) {
        ipup__mpi_ring *x = &m->rings[i];
        while (!x->consumer && x->freed < x->sent) {
            IPUP__MPI(MPI_Wait(&x->req[(x->base + x->freed) & x->ring->mask], MPI_STATUS_IGNORE));
            x->freed++;
            ipup_ring_release(x->ring);
        }
    }
    IPUPIPE_MEMCPY(my_block, &e->ipu_errors[step & 1][m->rank], err_bytes);
    IPUPIPE_MEMCPY(my_block + err_bytes,
                   &e->records[((size_t)k * (size_t)e->core.R + (size_t)m->replica)
                               * (size_t)e->core.M],
                   rec_bytes);
    IPUP__MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_BYTE, m->xchg, m->xchg_bytes, MPI_BYTE, m->comm));
    for (q = 0; q < m->size; q++)
        IPUPIPE_MEMCPY(&e->ipu_errors[step & 1][q], m->xchg + (size_t)q * (size_t)m->xchg_bytes,
                       err_bytes);
    for (r = 0; r < e->core.R; r++) {
        /* the rank of replica r's last stage */
        q = r * e->core.P + e->core.stages[e->core.S - 1].device;
        IPUPIPE_MEMCPY(&e->records[((size_t)k * (size_t)e->core.R + (size_t)r) * (size_t)e->core.M],
                       m->xchg + (size_t)q * (size_t)m->xchg_bytes + err_bytes, rec_bytes);
    }
    return IPUP_OK;
}

/* one cross-rank ring into stage s (dir 0: forward from s-1, 1: backward from s+1) */
static void ipup__mpi_add_ring(ipup_mpi *m, int dir, int32_t s, int consumer, int32_t other_stage) {
    ipup_emu *e = m->e;
    ipup__mpi_ring *x = &m->rings[m->n_rings];
    uint32_t i;
    x->ring = dir ? &e->bwd[m->replica][s] : &e->fwd[m->replica][s];
    x->peer = m->replica * e->core.P + e->core.stages[other_stage].device;
    x->tag = IPUP__MPI_TAG_RING + dir * IPUP_MAX_LAYERS + s;
    x->consumer = consumer;
    for (i = 0; i < x->ring->cap; i++) {
        void *slot = x->ring->buf + (size_t)i * x->ring->slot_bytes;
        int n = (int)x->ring->slot_bytes;
        if (consumer)
            IPUP__MPI(MPI_Recv_init(slot, n, MPI_BYTE, x->peer, x->tag, m->comm, &x->req[i]));
        else IPUP__MPI(MPI_Send_init(slot, n, MPI_BYTE, x->peer, x->tag, m->comm, &x->req[i]));
    }
    m->ring_index[dir][s] = (int8_t)m->n_rings++;
}

/* the rings with one end on this rank's IPU and the other on another rank */
static void ipup__mpi_rings(ipup_mpi *m) {
    ipup_emu *e = m->e;
    int32_t s, d = m->device;
    IPUPIPE_MEMSET(m->ring_index, -1, sizeof m->ring_index);
    for (s = 0; s < e->core.S; s++) {
        if (s > 0 && e->core.stages[s].device == d && e->core.stages[s - 1].device != d)
            ipup__mpi_add_ring(m, 0, s, 1, s - 1);
        if (s > 0 && e->core.stages[s - 1].device == d && e->core.stages[s].device != d)
            ipup__mpi_add_ring(m, 0, s, 0, s);
        if (s < e->core.S - 1 && e->core.stages[s].device == d && e->core.stages[s + 1].device != d)
            ipup__mpi_add_ring(m, 1, s, 1, s + 1);
        if (s < e->core.S - 1 && e->core.stages[s + 1].device == d && e->core.stages[s].device != d)
            ipup__mpi_add_ring(m, 1, s, 0, s);
    }
}

/* >>runner: the collective set-up, the state shared from replica 0, the release, the hash */
/* everything every rank must agree on: shapes, table, stages, optimizer, weights, step */
static uint64_t ipup__mpi_fingerprint(const ipup_emu *e, uint64_t app) {
    int32_t shape[8], i, s;
    uint64_t h = ipup_mpi_hash(0, &app, sizeof app);
    float opt[5];
    shape[0] = e->core.S; shape[1] = e->core.P; shape[2] = e->core.R; shape[3] = e->core.M;
    shape[4] = e->core.B;
    shape[5] = e->core.n_layers;
    shape[6] = (int32_t)e->core.cfg.opt.kind;
    /* the stages that recompute (ipup_init resolved the mask) and what is offloaded */
    shape[7] = (int32_t)(e->core.cfg.recompute_stages & 0xffffffu) * 8 + e->core.cfg.offload;
    h = ipup_mpi_hash(h, shape, sizeof shape);
    opt[0] = e->core.cfg.opt.lr; opt[1] = e->core.cfg.opt.momentum; opt[2] = e->core.cfg.opt.beta1;
    opt[3] = e->core.cfg.opt.beta2; opt[4] = e->core.cfg.opt.eps;
    h = ipup_mpi_hash(h, opt, sizeof opt);
    h = ipup_mpi_hash(h, &e->step, sizeof e->step);
    h = ipup_mpi_hash(h, &e->core.cfg.seed, sizeof e->core.cfg.seed);
    for (i = 0; i < e->core.table.n_ops; i++) {
        int32_t w[5];
        w[0] = e->core.ops[i].step; w[1] = e->core.ops[i].mb; w[2] = e->core.ops[i].stage;
        w[3] = e->core.ops[i].device;
        w[4] = e->core.ops[i].kind;
        h = ipup_mpi_hash(h, w, sizeof w);
    }
    for (s = 0; s < e->core.S; s++) {
        int32_t w[4];
        w[0] = e->core.stages[s].first; w[1] = e->core.stages[s].last;
        w[2] = e->core.stages[s].device; w[3] = e->core.n_branches[s];
        h = ipup_mpi_hash(h, w, sizeof w);
        /* a concurrent stage's weights are in its lanes: refused after the check */
        if (e->core.n_branches[s] > 1) continue;
        if (e->stage_rt[0][s].hparams) /* cfg.dtype float16: binary16 weights */
            h = ipup_mpi_hash(h, e->stage_rt[0][s].hparams,
                              e->core.stages[s].n_params * sizeof(uint16_t));
        else
            h = ipup_mpi_hash(h, e->stage_rt[0][s].params,
                              e->core.stages[s].n_params * sizeof(float));
        if (e->core.stages[s].n_state)
            h = ipup_mpi_hash(h, e->stage_rt[0][s].state,
                              e->core.stages[s].n_state * sizeof(float));
    }
    return h;
}

/* collective: the same verdict on every rank (rank count, fingerprints, limits) */
static int ipup__mpi_agree(ipup_mpi *m) {
    ipup_emu *e = m->e;
    uint64_t all[2 * IPUP_MAX_IPUS + 2], mine[2];
    int q;
    mine[0] = m->fingerprint;
    mine[1] = (uint64_t)e->core.n_ipus;
    if (m->size > IPUP_MAX_IPUS)
        return ipup__fail(
            e->core.msg, sizeof e->core.msg, IPUP_ERR_CONFIG,
            "mpirun started %d ranks; the MPI runner takes at most IPUP_MAX_IPUS (%d)", m->size,
            (int)IPUP_MAX_IPUS);
    IPUP__MPI(MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, m->comm));
    for (q = 0; q < m->size; q++) {
        if (all[2 * q + 1] != (uint64_t)m->size)
            return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_CONFIG,
                              "rank %d's configuration has %d IPUs (replicas x IPUs per replica) "
                              "but mpirun started %d ranks; run mpirun -np %d, one rank per IPU",
                              q, (int)all[2 * q + 1], m->size, (int)all[2 * q + 1]);
        if (all[2 * q] != all[0])
            return ipup__fail(
                e->core.msg, sizeof e->core.msg, IPUP_ERR_MISMATCH,
                "rank %d's configuration differs from rank 0's (fingerprint %016llx, rank 0 "
                "%016llx: model, schedule, stages, replicas, batch, optimizer, seed, weights or "
                "options); start every rank with the same command and files",
                q, (unsigned long long)all[2 * q], (unsigned long long)all[0]);
    }
    if (e->core.M > IPUP_MPI_MAX_MB)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_CAPACITY,
                          "%d micro-batches per step; the MPI runner takes at most IPUP_MPI_MAX_MB "
                          "(%d): define it larger before including ipupipe_mpi.h",
                          (int)e->core.M, (int)IPUP_MPI_MAX_MB);
    for (q = 0; q < e->core.S; q++)
        if ((q > 0 && e->fwd[0][q].cap > IPUP_MPI_MAX_SLOTS) ||
            (q < e->core.S - 1 && e->bwd[0][q].cap > IPUP_MPI_MAX_SLOTS))
            return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_CAPACITY,
                              "a ring of stage %d has more than IPUP_MPI_MAX_SLOTS (%d) slots: "
                              "define it larger before including ipupipe_mpi.h",
                              (int)q, (int)IPUP_MPI_MAX_SLOTS);
    return IPUP_OK;
}

static int ipup__mpi_setup_sum(ipup_mpi *m) {
    ipup_emu *e = m->e;
    float *bufs[IPUP_MAX_LAYERS];
    size_t ns[IPUP_MAX_LAYERS];
    int n_bufs = 0, rc, algo;
    int32_t s;
    IPUP__MPI(MPI_Comm_split(m->comm, m->device, m->replica, &m->dev_comm));
    for (s = 0; s < e->core.S; s++) {
        if (e->core.stages[s].device != m->device || e->core.stages[s].n_grads == 0) continue;
        bufs[n_bufs] = e->stage_rt[m->replica][s].grads;
        /* the trained layers' part (frozen layers have none) */
        ns[n_bufs++] = e->core.stages[s].n_grads;
    }
    /* more replicas than the scatter's staging takes: the chain, which stages one rank */
    algo = e->core.R <= IPUP_MPI_MAX_PEERS + 1 ? IPUP_MPI_SUM_SCATTER : IPUP_MPI_SUM_CHAIN;
    rc = ipup_mpi_sum_init(&m->sum, m->dev_comm, algo, n_bufs, bufs, ns, e->core.msg,
                           sizeof e->core.msg);
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
    if (e->core.cfg.runner != IPUP_RUNNER_COOP)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_CONFIG,
                          "the MPI runner needs an emulator initialised with the cooperative "
                          "runner (runner = IPUP_RUNNER_COOP)");
    m->fingerprint = ipup__mpi_fingerprint(e, app_fingerprint);
    if ((rc = ipup__mpi_agree(m)) != IPUP_OK) return rc;
    /* the same verdict on every rank: they agree on the configuration */
    if (e->core.has_concurrent)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_UNSUPPORTED,
                          "the model has concurrent stages (cfg.concurrent, a map such as "
                          "0,[1,2],2), whose branch rings the MPI runner does not carry; give each "
                          "stage one IPU, or use the cooperative or threaded runner");
    m->replica = m->rank / e->core.P;
    m->device = m->rank % e->core.P;
    m->xchg_bytes = (int)(sizeof(ipup__ipu_err) + (size_t)e->core.M * sizeof(ipup_outfeed_rec));
    ipup__mpi_rings(m);
    if ((rc = ipup__mpi_setup_sum(m)) != IPUP_OK) return rc;
    m->transport.user = m;
    m->transport.ipu = m->rank;
    m->transport.peek = ipup__mpi_peek;
    m->transport.reserve = ipup__mpi_reserve;
    m->transport.commit = ipup__mpi_commit;
    m->transport.release = ipup__mpi_release;
    m->transport.step_begin = ipup__mpi_step_begin;
    m->transport.reduce = ipup__mpi_reduce;
    m->transport.step_end = ipup__mpi_step_end;
    return ipup_set_transport(e, &m->transport);
}

IPUPIPE_DEF int ipup_mpi_share_state(ipup_mpi *m) {
    ipup_emu *e = m->e;
    int32_t s;
    for (s = 0; s < e->core.S; s++) {
        int owner = e->core.stages[s].device; /* replica 0, device of stage s */
        if (e->core.stages[s].n_params && e->stage_rt[0][s].hparams)
            IPUP__MPI(MPI_Bcast(e->stage_rt[0][s].hparams, (int)e->core.stages[s].n_params,
                                MPI_UINT16_T, owner, m->comm));
        else if (e->core.stages[s].n_params)
            IPUP__MPI(
                MPI_Bcast(e->stage_rt[0][s].params, (int)e->core.stages[s].n_params, MPI_FLOAT,
                          owner, m->comm));
        if (e->core.stages[s].n_state)
            IPUP__MPI(
                MPI_Bcast(e->stage_rt[0][s].state, (int)e->core.stages[s].n_state, MPI_FLOAT,
                          owner, m->comm));
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
    ipup_mpi_sum_free(&m->sum);
    if (m->dev_comm != MPI_COMM_NULL) MPI_Comm_free(&m->dev_comm);
    MPI_Comm_free(&m->comm);
    m->e = NULL;
}

IPUPIPE_DEF int ipup_mpi_agree_inputs(MPI_Comm comm, int n, const char *const *names,
                                      const uint64_t *digests, char *msg, size_t msg_len) {
    /* per rank: the count of inputs (UINT64_MAX: bad arguments), then the digests; every
       rank takes part in the one exchange whatever its arguments, so none waits alone */
    enum { W = IPUP_MPI_MAX_INPUTS + 1 };
    uint64_t mine[W], all[IPUP_MAX_IPUS * W];
    int size = 0, q, i, ok = n >= 0 && n <= IPUP_MPI_MAX_INPUTS && (!n || (names && digests));
    IPUP__MPI(MPI_Comm_size(comm, &size));
    if (size > IPUP_MAX_IPUS)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "mpirun started %d ranks; the MPI runner takes at most "
                          "IPUP_MAX_IPUS (%d)",
                          size, (int)IPUP_MAX_IPUS);
    IPUPIPE_MEMSET(mine, 0, sizeof mine);
    mine[0] = ok ? (uint64_t)n : UINT64_MAX;
    for (i = 0; ok && i < n; i++) mine[1 + i] = digests[i];
    IPUP__MPI(MPI_Allgather(mine, W, MPI_UINT64_T, all, W, MPI_UINT64_T, comm));
    for (q = 0; q < size; q++)
        if (all[(size_t)q * W] == UINT64_MAX)
            return ipup__fail(msg, msg_len, IPUP_ERR_ARG,
                              "ipup_mpi_agree_inputs: rank %d passed a count outside "
                              "0..IPUP_MPI_MAX_INPUTS (%d) or NULL names or digests",
                              q, (int)IPUP_MPI_MAX_INPUTS);
    for (q = 1; q < size; q++) {
        const uint64_t *theirs = all + (size_t)q * W;
        if (theirs[0] != all[0])
            return ipup__fail(msg, msg_len, IPUP_ERR_MISMATCH,
                              "rank %d compares %d inputs, rank 0 %d; start every rank with the "
                              "same command",
                              q, (int)theirs[0], (int)all[0]);
        for (i = 0; i < (int)all[0]; i++)
            if (theirs[1 + i] != all[1 + i])
                return ipup__fail(
                    msg, msg_len, IPUP_ERR_MISMATCH,
                    "rank %d's %s differs from rank 0's (digest %016llx, rank 0 %016llx): the "
                    "ranks would train on different data; give every rank the same files (a "
                    "relative path names another file on a rank started in another directory, "
                    "e.g. with mpirun -wdir, or on a node with another copy)",
                    q, names[i], (unsigned long long)theirs[1 + i], (unsigned long long)all[1 + i]);
    }
    return IPUP_OK;
}

IPUPIPE_DEF uint64_t ipup_mpi_hash(uint64_t h, const void *data, size_t n) {
    const uint8_t *p = (const uint8_t *)data;
    size_t i;
    if (!h) h = 1469598103934665603ull;
    for (i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
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
