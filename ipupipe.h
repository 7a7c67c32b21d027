/* ipupipe.h - v0.5.0 - bit-identical multi-IPU pipeline emulator - MIT licence (see end of file)

   Static pools, lock-free channels, two runners.

   Part of ipupipe: train a network the way Graphcore IPU systems do. Builds on
   ipupipe_kernels.h (what an op computes) and ipupipe_sched.h (when each op runs).

   USAGE
     In exactly ONE C or C++ file:
         #define IPUPIPE_IMPLEMENTATION
         #include "ipupipe.h"          (includes ipupipe_kernels.h and ipupipe_sched.h)
     Everywhere else just #include "ipupipe.h". Every public function is declared with
     IPUPIPE_DEF: extern, or static with IPUPIPE_STATIC (the same block in all three
     headers; define IPUPIPE_DEF yourself to override). IPUPIPE_VERSION_MAJOR / _MINOR /
     _PATCH / _STRING give the version (0.5.0), the same in all three headers.
     Compile-time switches (define before the include):
       IPUPIPE_NO_THREADS   no threaded runner: <pthread.h> and <stdatomic.h> are not
                            included (implies IPUPIPE_NO_ATOMICS unless IPUPIPE_ATOMICS). For
                            firmware.
       IPUPIPE_ATOMICS      with IPUPIPE_NO_THREADS: keep <stdatomic.h> and the atomic rings,
                            for ipup_run_device on the cores of a microcontroller (no OS).
       IPUPIPE_NO_ATOMICS   rings use plain loads/stores (single-threaded builds only).
       IPUP_MAX_LAYERS (32) IPUP_MAX_DEVICES (16) IPUP_MAX_REPLICAS (8) IPUP_MAX_IPUS (32)
                            size the fixed arrays of ipup_emu (sizeof(ipup_emu) follows).
       IPUPIPE_HAPPENS_BEFORE(addr) / IPUPIPE_HAPPENS_AFTER(addr) / IPUPIPE_SYNC_VAR(addr,n):
                            hooks for race checkers that do not understand atomics (helgrind:
                            ANNOTATE_HAPPENS_BEFORE/AFTER, VALGRIND_HG_DISABLE_CHECKING).
                            Default: nothing.

   WHAT IT DOES
     A program declares
       - a model: an ordered list of built-in layers (ipup_model_desc; ipup_model_parse()
         reads "dense256,relu,dense10,xent"), with string ids naming its tensors;
       - a split of the layers into S stages (or ipup_balance_stages' split, which evens
         out the FLOPs), a stage -> IPU mapping, a schedule kind;
       - training settings: micro-batch size B, gradient accumulation count M, repeat
         count, replicas R, optimizer, recomputation, offload, seed, runner;
       - per IPU a caller-owned byte pool (static uint8_t ipu0[N]); ipup_plan_config() says
         how many bytes each pool needs, so pools can be sized exactly;
       - an infeed callback that fills one micro-batch (x, and labels, or float targets for
         an mse model) for a global sample index, and optionally an outfeed callback
         receiving (loss, correct) per micro-batch.
     Layers marked frozen ("dense64:frozen") keep their weights: no gradients, no optimizer
     state, no weight-gradient work (fine-tuning a pre-trained body).
     ipup_init() checks everything, generates the schedule table, carves every buffer out
     of the pools (weights, gradient accumulators, optimizer state, stash FIFOs, exchange
     rings, scratch), initialises the weights, starts the threads (threaded runner), and
     FREEZES the pools. From then on nothing allocates: no heap call ever, no pool call;
     ipup_init or ipup_plan_config on the live emulator is IPUP_ERR_FROZEN (and changes
     nothing) until ipup_shutdown releases the pools. Start from a zeroed ipup_emu (static
     storage, or memset): that check reads it.
     ipup_run() runs `repeat` steps of M micro-batches per replica, one optimizer update
     per step. ipup_evaluate() runs forward only (test accuracy).

   DEVICES AND POOLS
     IPU index i = replica * devices + device. Pool i (cfg.ipu[i]) holds that IPU's stages'
     weights, gradients, optimizer state (unless offloaded to cfg.stream[i], the IPU's
     "streaming memory": cfg.offload's IPUP_OFFLOAD_* bits move the optimizer state, the
     weights, the stash), stash FIFOs, the receive sides of its exchange rings and scratch.
     cfg.ipu_bytes caps each IPU's pool: a plan over it is IPUP_ERR_OOM with the remedies.
     cfg.host holds the schedule table, infeed/outfeed rings and outfeed records.
     Pools should be 64-byte aligned (IPUP_ALIGN64 static uint8_t ipu0[N];); ipup_plan's
     byte counts assume that (an unaligned pool needs up to 63 bytes more).

   DATA FLOW (docs/architecture.md; ops and dependencies: docs/schedules.md §1-§2)
     infeed -> F(0,m) -> ring -> F(1,m) ... F(S-1,m) computes the loss -> outfeed ring
     (F(0,m) has the infeed callback write the micro-batch straight into its stash entry);
     B(S-1,m) -> ring -> ... -> B(0,m). Each stage adds its weight gradients into its
     accumulator in micro-batch order; after M micro-batches (and the replica all-reduce,
     summed in replica order 0..R-1) each IPU applies the optimizer to its own stages with
     scale 1/(M*R). A stage stashes, per micro-batch in flight, the inputs its backward
     needs (FIFO depth = the schedule's peak in-flight count); with recomputation only its
     input (+ labels) and the forward is re-run before the backward. Split backward
     (zero-bubble): I = input gradients (dense/conv with dw, db NULL; the layer output
     gradients dy are kept in a second FIFO), W = weight gradients (dx NULL).

   DETERMINISM
     Every built-in schedule accumulates gradients in micro-batch order, so all schedules,
     both runners, with or without recomputation, give the bits of the plain loop:
        for m in 0..M-1: forward all layers, backward all layers (dw += ...); update.
     Dropout layer l of sample j (j = (replica*M + m)*B + i, the sample's index within the
     step) at global step t uses ipup_dropout_fwd_f32(..., ipup_layer_seed(seed, l), t,
     j * features, ...): keys depend on (seed, step, sample) only, never on the schedule,
     the runner or the replica count. Weights are initialised with
     ipup_glorot_uniform_f32(fan_in, fan_out, n, seed, stream = 2*l, w), biases zero.

   THREADS
     Cooperative runner (IPUP_RUNNER_COOP): one thread (the caller's), steps the table
     column by column (compute, sync, exchange), no OS service; usable in firmware.
     Threaded runner (IPUP_RUNNER_THREADS): one POSIX thread per IPU per replica, created
     by ipup_init and reused by every run (pthread_create allocates, so it only happens at
     startup); each follows its own row of the table and blocks only on its rings. A
     waiting IPU thread spins IPUPIPE_SPIN (500) times, then sleeps on its own condition
     variable until the partner that commits or releases the slot it waits for wakes it:
     no core is burnt when there are more IPUs than cores, and no syscall happens in the
     hot path when nobody waits. The calling thread acts as the host: it drains the
     outfeed and runs the outfeed callback, during the run and in (step, replica, mb)
     order, in every runner (threaded: while the IPU threads run, so the callback runs
     concurrently with them and with the infeed; it reads only its record, whose rows stay
     valid until it returns, as the IPU thread cannot reuse the ring slot before; a slow
     callback holds the last stage back once that replica's ring, a step's records, is
     full). The callback must not call back into the emulator. The infeed callback is called by whoever runs
     F(0,m): the calling thread in the cooperative runner; in the threaded runner each
     replica's stage-0 thread, for its own micro-batches, in (step, micro-batch) order,
     never ahead of the computation. So with R > 1 replicas and threads the infeed may run
     on R threads at once (distinct replicas, distinct x and labels): it must be safe to
     call concurrently for different replicas (a pure function of its arguments and
     read-only data is), and it must not call back into the emulator.
     Thread safety: every ipup_* function on one ipup_emu must be called from one thread
     at a time (the "host"). Distinct ipup_emu objects are independent.

   ERRORS
     Functions return IPUP_OK (0) or a negative ipup_result code (ipupipe_sched.h); the
     emulator's message (what was wrong, what would fix it) is in ipup_last_error(emu).
     Every error returned on a non-NULL emulator sets it, argument errors included (a call
     before ipup_init, or after a failed one, says so and replaces the old text). The
     schedule's warnings of the last ipup_init are in ipup_warnings(emu).
     A NaN/inf loss or gradient stops the run with IPUP_ERR_NUMERIC naming step and stage;
     the weights stay those of the previous step.

   TEXT
     No libc stdio: every message and document is formatted by ipup_vsnprintf /
     ipup_snprintf of ipupipe_sched.h (standard conversions, heap-free). Documents (the
     memory report ipup_memory_report_write, the Chrome trace ipup_trace_write) go through
     a write callback, ipup_write_fn write(user, data, len) returning 0 on success: they
     return IPUP_OK, or IPUP_ERR_IO as soon as write returns non-zero. ipup_buf /
     ipup_buf_write (ipupipe_sched.h) collect a document in memory.

   COST MODEL
     Simulated IPU time from FLOPs per op, bytes per exchange, link bandwidth, sync cost and
     a clock. Defaults follow a Mk2 GC200 IPU (Graphcore IPU-M2000 / GC200 datasheet and
     "IPU Programmer's Guide"): 1472 tiles at 1.33 GHz, 62.5 TFLOP/s fp32 peak (= 47104
     flop/cycle), of which an assumed 25 % is achieved; IPU-Links 32 GB/s each, 2 links
     between neighbouring IPUs (64 GB/s); streaming memory (DDR behind the gateway)
     20 GB/s; host infeed 16 GB/s (PCIe Gen4 x16 ~ 32 GB/s, halved); an inter-IPU sync of
     1000 cycles (an assumption of this emulator, not a measured number).
     A step's table is timed bulk-synchronously (docs/schedules.md §4): each column costs its
     longest op + its longest exchange + one sync; ops cost FLOPs / (clock * flop/cycle *
     efficiency) (recomputation adds the stage's forward to B/I/W; F of stage 0 adds the
     infeed bytes over the host link); then the update phase: optimizer FLOPs, the ring
     all-reduce 2(R-1)/R * gradient bytes over the link, offload traffic 2 * state bytes
     over the streaming-memory link (offloaded weights: a stage's weight bytes per op and
     2x per update; offloaded activations: a stash entry's bytes per op). Phases as the
     tutorials define them (ipup_sched_phases, the same steps as ipupipe-sched): ramp-up
     until every IPU in use is busy in one column, main while they all are, ramp-down
     after (no main when the pipeline never fills), timed from the start of their columns;
     utilisation = busy time / (phase time * IPUs).
     The host loop: each ipup_run / ipup_run_steps call adds cost.launch_seconds once (the
     host launching the on-device loop of cfg.repeat steps: TF's repeat_count, Keras's
     steps_per_execution), so a step costs step_seconds + launch_seconds / repeat. The
     default is fitted to the Keras IPU tutorial's two figures, about 3 ms per step at
     steps_per_execution = 1 and 175 us per step at 937: t(spe) = L / spe + c through both
     gives L = (3e-3 - 175e-6) * 937 / 936 = 2.828e-3 s (and c = 172 us, that model's
     step). The launch is in sim_seconds, samples_per_second and idle_seconds (the IPUs
     wait for it); the phases and the trace are those of one step and leave it out.
     cost.synthetic_data drops the infeed's host transfer (no infeed cost). The outfeed's
     outputs (cfg.outfeed_mode IPUP_OUTFEED_OUTPUTS, _BOTH) cross the host link in F(S-1,m);
     the loss records are too small to count.

   MEMORY OF THE EMULATOR ITSELF
     sizeof(ipup_emu) follows the IPUP_MAX_* limits and IPUPIPE_NO_THREADS: `make -s sizes`
     prints it for the default and the firmware's limits (docs/embedded.md, "Sizes");
     declare it static. ipup_plan_config keeps up to
     IPUP_PLAN_STACK_OPS (512) ops = 8 KB on the stack unless cfg.host is given.
     ipup_plan_pools plans without an ipup_emu, in IPUP_PLAN_SCRATCH_BYTES(S, M) bytes
     (a fixed part, printed by `make -s sizes`, + 48 bytes per stage x micro-batch);
     build/ipupipe-plan writes
     its figures as a header of #defines for static pools sized in the same build.
*/
#define IPUPIPE_VERSION_MAJOR 0
#define IPUPIPE_VERSION_MINOR 5
#define IPUPIPE_VERSION_PATCH 0
#define IPUPIPE_VERSION_STRING "0.5.0"

/* CONTENTS. The declarations (D) and the implementation (I) follow one order of
   sections. A section starts with a one-line comment ">>tag: what is under it", with the
   same tag in both halves, so that grep -n '>>tag' ipupipe.h finds both. The tags, in order:
     build-options       D I  includes, switches, sizes, IPUPIPE_DEF; the hooks' defaults
     helpers               I  messages into a buffer, a text builder, ids, numbers, sizes
     errors              D I  ipup_last_error, ipup_warnings; every failed call's message
     ring                D I  the atomics and the lock-free SPSC ring
     model               D I  layer kinds, ipup_model_parse, ipup_model_info (shapes, FLOPs)
     partition           D I  ipup_balance_stages, ipup_replicas_for_ipus
     cost-model          D I  simulated IPU time; ipup_run_stats, ipup_predict_stats
     config              D I  ipup_config and its parts (optimizer, runner, pools, feeds)
     memory              D I  memory categories, the carving arena, ipup_memory_report
     concurrent-setup    D I  stages split over IPUs (lanes): checks, sizes, carving, weights
     setup               D I  the core (what ipup_init decides before it carves) from a config
     plan                D I  ipup_plan_config, ipup_host_bytes, ipup_plan_pools
     threads             D I  parking, notifying, waiting on rings, barriers, error slots
     init                D I  ipup_init, ipup_shutdown
     compute               I  a stage's forward, backward and weight-gradient walks
     concurrent-runtime  D I  lane ops, fan-out and fan-in, the lanes' sums and updates
     transport           D I  the seam of a runner with one IPU per process (ipupipe_mpi.h)
     devices             D I  ipup_run_device: one IPU per core or thread the caller runs
     emulator            D    struct ipup_emu
     runtime             D I  ipup__exec, the all-reduce, the runners, ipup_run, ipup_evaluate
     predict             D I  ipup_predict: pipelined inference
     tensors             D I  tensors, replicas, the step, the learning rate
     state               D I  ipup_state_save / ipup_state_load
     trace               D I  ipup_trace_write (Chrome trace) */

#ifndef IPUPIPE_H
#define IPUPIPE_H

/* >>build-options: includes, compile-time switches, array sizes, IPUPIPE_DEF */
#include "ipupipe_kernels.h"
#include "ipupipe_sched.h"
#include <stddef.h>
#include <stdint.h>

#if defined(IPUPIPE_NO_THREADS) && !defined(IPUPIPE_NO_ATOMICS) && !defined(IPUPIPE_ATOMICS)
#define IPUPIPE_NO_ATOMICS
#endif

#if !defined(IPUPIPE_NO_ATOMICS) && !defined(__cplusplus)
#include <stdatomic.h>
#endif
/* private: the waiting machinery of the threaded runner and of the device runner */
#if !defined(IPUPIPE_NO_THREADS) || !defined(IPUPIPE_NO_ATOMICS)
#define IPUP__WAITS 1
#endif
#ifndef IPUPIPE_NO_THREADS
#include <pthread.h>
#endif

#ifndef IPUP_MAX_LAYERS
#define IPUP_MAX_LAYERS 32
#endif
#ifndef IPUP_MAX_DEVICES
#define IPUP_MAX_DEVICES 16 /* IPUs per replica */
#endif
#ifndef IPUP_MAX_REPLICAS
#define IPUP_MAX_REPLICAS 8
#endif
#ifndef IPUP_MAX_IPUS
#define IPUP_MAX_IPUS 32 /* replicas * devices */
#endif
#define IPUP_ID_MAX 24           /* layer id, including the terminating 0 */
#define IPUP_TENSOR_NAME_MAX 40  /* "<id>.w.m" */
#ifndef IPUP_MSG_MAX
#define IPUP_MSG_MAX 1024        /* ipup_last_error() text */
#endif
#ifndef IPUPIPE_STAGING_FLOATS
#define IPUPIPE_STAGING_FLOATS 1024 /* chunk of offloaded state streamed for the update */
#endif
#if IPUPIPE_STAGING_FLOATS < 16 || IPUPIPE_STAGING_FLOATS % 16
#error "IPUPIPE_STAGING_FLOATS must be a positive multiple of 16"
#endif
#ifndef IPUP_WARN_MAX
#define IPUP_WARN_MAX 512        /* ipup_warnings() text */
#endif
#ifndef IPUP_PLAN_STACK_OPS
#define IPUP_PLAN_STACK_OPS 512  /* ipup_plan_config without cfg.host: table on the stack */
#endif
#define IPUP_POOL_ALIGN 64

#ifndef IPUP_CACHE_LINE
#ifdef IPUPIPE_NO_THREADS
#define IPUP_CACHE_LINE 8
#else
#define IPUP_CACHE_LINE 64
#endif
#endif

#ifdef __cplusplus
#define IPUP_ALIGN64 alignas(64)
#else
#define IPUP_ALIGN64 _Alignas(64)
#endif

#ifndef IPUPIPE_DEF
#ifdef IPUPIPE_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define IPUPIPE_DEF static __attribute__((unused))
#else
#define IPUPIPE_DEF static
#endif
#else
#define IPUPIPE_DEF extern
#endif
#endif
#ifndef IPUP__UNUSED          /* for private static helpers that some builds do not call */
#if defined(__GNUC__) || defined(__clang__)
#define IPUP__UNUSED __attribute__((unused))
#else
#define IPUP__UNUSED
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ipup_emu ipup_emu; /* the emulator state (defined below) */

/* >>errors: ipup_last_error and ipup_warnings, the texts an emulator keeps */
/* Text of the last error ("" when none). */
IPUPIPE_DEF const char *ipup_last_error(const ipup_emu *e);

/* The warnings ipup_sched_generate gave for the emulator's table at the last ipup_init
   (Graphcore's per-schedule rules, docs/schedules.md §5, when cfg.strict is 0; "the
   pipeline never fills"; an idle device), one per line, each ending in '\n'; "" when
   there were none, before the first ipup_init and for a NULL e. Kept in the ipup_emu
   (IPUP_WARN_MAX bytes, cut after the last whole line that fits); each ipup_init clears
   them first and sets them once it has built its table. */
IPUPIPE_DEF const char *ipup_warnings(const ipup_emu *e);

/* >>ring: the atomics and the lock-free single-producer single-consumer ring */
#if defined(IPUPIPE_NO_ATOMICS)
typedef uint32_t ipup_atomic_u32;
#define IPUP__LOAD_ACQ(p) (*(p))
#define IPUP__STORE_REL(p, v) (*(p) = (v))
#define IPUP__FETCH_ADD(p, v) ((*(p) += (v)) - (v))
#elif defined(__cplusplus)
typedef uint32_t ipup_atomic_u32; /* accessed only through __atomic builtins */
#define IPUP__LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define IPUP__STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define IPUP__FETCH_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#else
typedef _Atomic uint32_t ipup_atomic_u32;
#define IPUP__LOAD_ACQ(p) atomic_load_explicit((p), memory_order_acquire)
#define IPUP__STORE_REL(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define IPUP__FETCH_ADD(p, v) atomic_fetch_add_explicit((p), (v), memory_order_acq_rel)
#endif

/* Single producer, single consumer; capacity a power of two; head and tail are
   free-running 32-bit counters (count = head - tail, modulo 2^32, so they may wrap).
   The producer publishes a slot with a release store of head, the consumer frees it
   with a release store of tail; each side reads the other's counter with acquire.
   Thread safety: one producer thread and one consumer thread at a time. */
typedef struct ipup_ring {
    ipup_atomic_u32 head; /* written by the producer only */
    uint8_t pad0_[IPUP_CACHE_LINE - sizeof(uint32_t)];
    ipup_atomic_u32 tail; /* written by the consumer only */
    uint8_t pad1_[IPUP_CACHE_LINE - sizeof(uint32_t)];
    uint8_t *buf;         /* cap * slot_bytes */
    size_t slot_bytes;    /* rounded up to 64 */
    uint32_t cap, mask;
    uint32_t peak;        /* highest occupancy the producer saw (statistics) */
    uint32_t pad2_;
} ipup_ring;

/* bytes of buffer a ring of `cap` slots of `slot_bytes` needs (slots rounded to 64) */
IPUPIPE_DEF size_t ipup_ring_bytes(uint32_t cap, size_t slot_bytes);
/* buf (ipup_ring_bytes(cap, slot_bytes) bytes); cap a power of two >= 1; start: initial
   value of both counters (tests start near 2^32 to cross the wrap). Not thread-safe. */
IPUPIPE_DEF int ipup_ring_init(ipup_ring *r, void *buf, size_t buf_bytes, uint32_t cap,
                           size_t slot_bytes, uint32_t start);
/* producer: the next free slot, or NULL when full; ipup_ring_commit publishes it */
IPUPIPE_DEF void *ipup_ring_reserve(ipup_ring *r);
IPUPIPE_DEF void ipup_ring_commit(ipup_ring *r);
/* consumer: the oldest full slot, or NULL when empty; ipup_ring_release frees it */
IPUPIPE_DEF void *ipup_ring_peek(ipup_ring *r);
IPUPIPE_DEF void ipup_ring_release(ipup_ring *r);
/* occupancy as seen by the caller (exact when the ring is quiescent) */
IPUPIPE_DEF uint32_t ipup_ring_count(ipup_ring *r);

/* >>model: layers and models: kinds, parsing, shapes and FLOPs */
typedef enum ipup_layer_kind {
    IPUP_LAYER_NONE = 0,
    IPUP_LAYER_DENSE,        /* units = output features; params w (IN, OUT), b (OUT) */
    IPUP_LAYER_RELU,
    IPUP_LAYER_GELU,         /* tanh approximation */
    IPUP_LAYER_CONV3X3,      /* units = output channels; valid, stride 1; w (3,3,CI,CO), b (CO) */
    IPUP_LAYER_MAXPOOL2,     /* 2x2 stride 2, floor */
    IPUP_LAYER_FLATTEN,      /* (H, W, C) -> (H*W*C); a view */
    IPUP_LAYER_DROPOUT,      /* rate = drop probability; identity in ipup_evaluate */
    IPUP_LAYER_SOFTMAX_XENT, /* softmax cross-entropy loss; must be the last layer */
    IPUP_LAYER_MSE,          /* mean squared error against float targets (the mean over all
                                elements, ipup_mse_f32); must be the last layer */
    IPUP_LAYER_CONV2D,       /* units = CO; kh x kw, strides sh, sw, same or valid (Keras);
                                w (KH,KW,CI,CO), b (CO) */
    IPUP_LAYER_DWCONV,       /* depthwise, multiplier 1: kh x kw, sh, sw, same or valid;
                                w (KH,KW,C), b (C) */
    IPUP_LAYER_BATCHNORM,    /* per channel: w = gamma (C), b = beta (C); running mean and
                                variance (C each, non-trainable); momentum, eps */
    IPUP_LAYER_AVGPOOL,      /* kh x kw, strides sh, sw, valid */
    IPUP_LAYER_GAVGPOOL,     /* global average pool: (H, W, C) -> (1, 1, C) */
    IPUP_LAYER_SIGMOID,
    IPUP_LAYER_TANH,
    IPUP_LAYER_LEAKY_RELU,   /* alpha: the slope below 0 (0.3 as Keras' LeakyReLU) */
    IPUP_LAYER_HSWISH,       /* x relu6(x + 3) / 6 */
    IPUP_LAYER_BCE,          /* binary cross-entropy on logits against float targets in [0, 1]
                                as wide as its input (the mean over all elements); last */
    IPUP_LAYER_RES_BEGIN,    /* a residual block's start: its input is the block input */
    IPUP_LAYER_RES_SHORTCUT, /* the end of the main branch; the shortcut branch (layers up to
                                IPUP_LAYER_RES_END) starts again from the block input */
    IPUP_LAYER_RES_END       /* the add: main output + shortcut output (or the block input) */
} ipup_layer_kind;

typedef struct ipup_layer {
    ipup_layer_kind kind;
    int32_t units;           /* dense: output features; conv3x3, conv2d: output channels */
    float rate;              /* dropout: drop probability in [0, 1) */
    char id[IPUP_ID_MAX];    /* e.g. "dense256"; "" = derived; made unique by ipup_init */
    int32_t frozen;          /* layers with parameters only: 1 = not trained ("dense64:frozen"):
                                no gradient accumulators, no optimizer state, no weight
                                gradients; a frozen batch norm runs in inference mode */
    int32_t kh, kw, sh, sw;  /* conv2d, dwconv, avgpool: kernel and strides (0: 1; avgpool's
                                strides 0: the kernel's) */
    int32_t same;            /* conv2d, dwconv: 1 = Keras 'same' padding, 0 = 'valid' */
    float alpha;             /* leaky: the slope below 0 (0: 0.3) */
    float momentum, eps;     /* batch norm: 0: Keras' 0.99 and 1e-3 */
} ipup_layer;

/* A model: input shape of ONE sample (NHWC without the batch; a flat vector of N features
   is 1, 1, N) and an ordered list of layers ending with a loss: IPUP_LAYER_SOFTMAX_XENT
   (integer labels) or IPUP_LAYER_MSE (float targets as wide as the loss layer's input). */
typedef struct ipup_model_desc {
    int32_t in_h, in_w, in_c;
    int32_t n_layers;
    ipup_layer layers[IPUP_MAX_LAYERS];
} ipup_model_desc;

/* What a layer is once shapes are known (per sample unless said otherwise). */
typedef struct ipup_layer_info {
    ipup_layer_kind kind;
    int32_t in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t in_n, out_n;          /* features per sample in and out */
    int32_t n_w, n_b;             /* parameter counts (0 for parameter-free layers) */
    int64_t flops_fwd;            /* per sample (approximate for elementwise layers) */
    int64_t flops_bwd_dx;         /* input-gradient part of the backward (I op) */
    int64_t flops_bwd_dw;         /* weight-gradient part (W op) */
    int32_t stash_floats;         /* floats per sample the backward needs (its input) */
    int32_t frozen;               /* the layer's ipup_layer.frozen (flops_bwd_dw is then 0) */
    int32_t n_nontrain;           /* non-trainable values besides n_w, n_b: a batch norm's
                                     running mean and variance (2 C); a frozen layer's n_w and
                                     n_b are non-trainable too (Keras counts them so) */
    int64_t macs;                 /* multiply-accumulates of a forward per sample: dense,
                                     conv and depthwise weights only (as MLPerf Tiny counts) */
    int32_t kh, kw, sh, sw;       /* conv2d, dwconv, avgpool, gavgpool: kernel and strides */
    int32_t pad_top, pad_left;    /* conv2d, dwconv: Keras 'same' padding before (0: valid) */
} ipup_layer_info;

/* Parse "dense256,relu,conv8,maxpool2,flatten,dropout0.25,gelu,dense10,xent" (also
   "conv3x3_8", "maxpool", "softmax_xent"/"loss"; "mse" for the mean-squared-error loss),
   and "conv64k10x4s2same", "dw3s1same", "bn", "avgpool2", "gavgpool",
   "sigmoid", "tanh", "leaky0.1", "hswish", "bce", "res(LAYERS)" and "res(LAYERS|SHORTCUT)"
   (the grammar: docs/api.md). A dense, conv, dw or bn layer followed by ":frozen"
   ("dense64:frozen") is not trained (ipup_layer.frozen); the suffix on any other layer, or
   another suffix, is IPUP_ERR_PARSE. Fills model->layers with ids such as "dense256",
   "dense256_2" (unique; the suffix is not part of the id; a block's markers are "res",
   "shortcut", "add"), keeps in_h/in_w/in_c as they are. msg gets the error, naming the
   character position and the token of a malformed text. */
IPUPIPE_DEF int ipup_model_parse(const char *text, ipup_model_desc *model, char *msg,
                                 size_t msg_len);
/* Shapes, parameter counts, FLOPs of every layer into info[n_info] (n_info >= n_layers). */
IPUPIPE_DEF int ipup_model_info(const ipup_model_desc *model, ipup_layer_info *info, int32_t n_info,
                            char *msg, size_t msg_len);
/* the dropout seed of layer l (see DETERMINISM) */
IPUPIPE_DEF uint64_t ipup_layer_seed(uint64_t seed, int32_t layer);
IPUPIPE_DEF const char *ipup_layer_kind_name(ipup_layer_kind kind);

/* >>partition: how layers split into stages, how many replicas an IPU count gives */
/* Contiguous split of model's layers into `stages` stages that minimises the largest
   stage cost, and among those the sum of squared stage costs (exact: two dynamic
   programmes). split gets stages-1 ascending layer indices where stages 1..stages-1
   begin (split may be NULL when stages is 1). The cost of a stage is the sum over its
   layers of flops_fwd + flops_bwd_dw (0 for a frozen layer) + flops_bwd_dx (the last only
   when an earlier layer has parameters that train, so the input gradient is computed) + 1
   (ipup_model_info's per-sample FLOPs). The emulator's default split (cfg.split NULL) is
   this one. A stage never starts inside a residual block (after its res_begin, up to its
   res_end). IPUP_ERR_ARG (NULL model, stages < 1, NULL split), IPUP_ERR_CONFIG (stages >
   layers, or more than the places outside blocks allow; a model ipup_model_info refuses);
   msg gets the text. */
IPUPIPE_DEF int ipup_balance_stages(const ipup_model_desc *model, int32_t stages, int32_t *split,
                                    char *msg, size_t msg_len);
/* Replication from the IPU count (Graphcore's auto_select_ipus, TF IPU user guide §6.4.1:
   a graph sharded over 2 IPUs run on 8 IPUs is replicated 4 times): the replicas that
   `total_ipus` IPUs give a pipeline of `ipus_per_replica` IPUs (ipup_plan.devices of a plan
   with replicas 1), into *replicas. IPUP_ERR_CONFIG with a message when total_ipus is not a
   multiple of ipus_per_replica or gives more than IPUP_MAX_REPLICAS replicas; IPUP_ERR_ARG
   when a count is < 1 or replicas is NULL. */
IPUPIPE_DEF int ipup_replicas_for_ipus(int32_t total_ipus, int32_t ipus_per_replica,
                                       int32_t *replicas, char *msg, size_t msg_len);

/* >>cost-model: what the simulated IPUs cost; what ipup_run and ipup_predict report */
/* Cost model; zero fields take the Mk2 defaults of the manual comment. */
typedef struct ipup_cost_model {
    double clock_hz;           /* 1.33e9 */
    double flops_per_cycle;    /* 47104 (62.5 TFLOP/s fp32 peak) */
    double efficiency;         /* 0.25 of peak achieved */
    double link_bytes_per_s;   /* 64e9 between two IPUs */
    double stream_bytes_per_s; /* 20e9 streaming memory (offloaded optimizer state) */
    double host_bytes_per_s;   /* 16e9 infeed / outfeed */
    double sync_cycles;        /* 1000 per inter-IPU sync */
    double launch_seconds;     /* 2.828e-3 per ipup_run / ipup_run_steps call (the host loop's
                                  launch of cfg.repeat steps: the Keras tutorial's figures,
                                  see COST MODEL); negative or NaN: IPUP_ERR_CONFIG; a value
                                  below 1e-12 (IPUP_LAUNCH_OFF) counts as none */
    int32_t synthetic_data;    /* 1: the micro-batches are already on the IPUs (the TF user
                                  guide's synthetic-data mode): F(0,m) has no host infeed
                                  time and the trace no infeed event; the infeed callback
                                  still fills them */
} ipup_cost_model;
/* cfg.cost.launch_seconds for no launch cost (0 means the default; any value below 1e-12
   s counts as none) */
#define IPUP_LAUNCH_OFF 1e-300

enum {
    IPUP_PHASE_RAMP_UP = 0,
    IPUP_PHASE_MAIN,
    IPUP_PHASE_RAMP_DOWN,
    IPUP_PHASE_UPDATE,
    IPUP_PHASES
};
typedef struct ipup_run_stats {
    int64_t steps;                  /* optimizer steps done by the run */
    int64_t microbatches, samples;  /* summed over replicas */
    double loss_mean;               /* mean of the micro-batch losses, fixed order */
    int64_t correct;
    /* cost model (simulated IPU time) */
    double sim_seconds;             /* of the run */
    double step_seconds;            /* of one step (the launch not included) */
    double launch_seconds;          /* of the run: cfg.cost.launch_seconds, once per call;
                                       in sim_seconds (and idle_seconds), not in a step */
    double busy_seconds[IPUP_MAX_IPUS], idle_seconds[IPUP_MAX_IPUS]; /* of the run, per IPU */
    double phase_seconds[IPUP_PHASES];     /* per step */
    double phase_utilisation[IPUP_PHASES]; /* busy / (phase time * devices) */
    double samples_per_second;      /* simulated throughput */
    size_t mem_used[IPUP_MAX_IPUS];       /* pool bytes carved per IPU */
    size_t mem_high_water[IPUP_MAX_IPUS]; /* peak bytes touched per IPU (ipup_memory_report) */
    int64_t skipped_steps;          /* dynamic loss scaling: steps skipped on overflow, since
                                       ipup_init */
    float loss_scale;               /* the loss scale after the run (ipup_loss_scale) */
} ipup_run_stats;
/* ipup_predict's figures (ipup_predict_figures, under predict) */
typedef struct ipup_predict_stats {
    ipup_sched_kind schedule;        /* the kind whose forward-only table runs */
    int32_t steps;                   /* steps of that table (one wave); 0 with concurrent stages,
                                        which have no forward-only table: ipup_predict runs them
                                        stage after stage on the host and every figure is 0 */
    int32_t microbatches;            /* micro-batches per wave (cfg.microbatches) */
    int32_t inflight[IPUP_MAX_LAYERS]; /* inputs of stage s alive at once (ring slots; no stash) */
    double latency_seconds;          /* one micro-batch from the start of F(0,m)'s step to the
                                        end of F(S-1,m)'s, the longest over m */
    double wave_seconds;             /* one run of the table */
    double samples_per_second;       /* steady state: B x (M-1) / (end of F(S-1,M-1)'s step -
                                        end of F(S-1,0)'s); B / latency when M = 1 */
    int64_t last_samples;            /* samples of the last ipup_predict call */
    double last_seconds;             /* its simulated time: waves x wave_seconds */
} ipup_predict_stats;

/* >>config: ipup_config and its parts: optimizer, runner, pools, feeds, hooks */
typedef enum ipup_optimizer_kind {
    IPUP_OPT_SGD = 0,
    IPUP_OPT_MOMENTUM,
    IPUP_OPT_ADAM
} ipup_optimizer_kind;
typedef struct ipup_optimizer {
    ipup_optimizer_kind kind;
    float lr;                /* 0: 0.01 */
    float momentum;          /* momentum mu; 0: 0.9 (IPUP_OPT_MOMENTUM) */
    float beta1, beta2, eps; /* Adam; 0: 0.9, 0.999, 1e-8 */
    float weight_decay;      /* Adam: decoupled (AdamW, as PopXL's adam_updater):
                                w -= lr * (update + weight_decay * w); 0: none */
    int32_t no_bias_correction; /* Adam: 1 = PopXL's bias_correction=False (m, v as they
                                   are); 0 = corrected by 1 - beta^t (the default) */
    int32_t first_moment_dtype; /* Adam's m: IPUP_DTYPE_F32 (0) or IPUP_DTYPE_F16 (PopXL's
                                   first_order_dtype): m is rounded to binary16 after every
                                   update (kept in an fp32 slot; see docs/api.md) */
} ipup_optimizer;
/* sgd|momentum|adam */
IPUPIPE_DEF int ipup_optimizer_parse(const char *name, ipup_optimizer_kind *out);

/* Storage types (cfg.dtype, cfg.accum_dtype, cfg.opt.first_moment_dtype): IEEE binary32 or
   binary16 (ipup_f32_to_f16: round to nearest even). Arithmetic is always fp32. */
enum { IPUP_DTYPE_F32 = 0, IPUP_DTYPE_F16 = 1 };
/* float32|float16 (also fp32|fp16) */
IPUPIPE_DEF int ipup_dtype_parse(const char *name, int32_t *out);
IPUPIPE_DEF const char *ipup_dtype_name(int32_t dtype); /* "float32", "float16" */

typedef enum ipup_runner_kind { IPUP_RUNNER_COOP = 0, IPUP_RUNNER_THREADS } ipup_runner_kind;
IPUPIPE_DEF int ipup_runner_parse(const char *name, ipup_runner_kind *out); /* coop|threads */
/* A byte count: digits with an optional suffix K, M or G (powers of 1024, case-insensitive,
   an optional trailing B or iB: "256K", "1M", "4MB", "65536"). IPUP_ERR_PARSE on anything
   else or past SIZE_MAX; IPUP_ERR_ARG on NULL. */
IPUPIPE_DEF int ipup_bytes_parse(const char *text, size_t *out);
/* cfg.offload bits from a comma list of optimizer, weights, activations ("all": every one,
   "none": 0); IPUP_ERR_PARSE names nothing else. */
IPUPIPE_DEF int ipup_offload_parse(const char *list, int32_t *out);
/* cfg.recompute_stages from a comma list of stage indices 0..31 ("0,1" -> 3);
   IPUP_ERR_PARSE on an empty item, a repeat or an index past 31. */
IPUPIPE_DEF int ipup_stage_mask_parse(const char *list, uint32_t *out);

typedef struct ipup_pool {
    void *mem;               /* caller-owned, 64-byte aligned preferably */
    size_t bytes;
} ipup_pool;

/* One micro-batch to fill, as the infeed callback sees it: x (n rows of `row` floats,
   row = in_h*in_w*in_c) and, for a class loss (softmax_xent), labels (n, each in
   0..classes-1), or, for a regression loss (mse), targets (n rows of target_width floats:
   the width of the loss layer's input). The pointer a model does not use is NULL and its
   width 0. sample0 = ((step * R + replica) * M + mb) * n is the global index of the
   micro-batch's first sample (the trainer maps it to a shuffled dataset index). x, labels
   and targets are the stage-0 stash entry itself: write exactly n*row, n and
   n*target_width values. */
typedef struct ipup_feed {
    int64_t step;
    int32_t replica, mb;
    int64_t sample0;
    int32_t n;                /* samples in the micro-batch (cfg.microbatch) */
    int32_t row;              /* floats per sample in x */
    int32_t classes;          /* class loss: labels lie in 0..classes-1; else 0 */
    int32_t target_width;     /* regression loss: floats per sample in targets; else 0 */
    float *x;
    int32_t *labels;          /* class loss, else NULL */
    float *targets;           /* regression loss, else NULL */
} ipup_feed;
/* Return 0, anything else aborts the run with IPUP_ERR_IO. Called by the thread that runs
   F(0, mb): the host (cooperative runner) or replica `replica`'s stage-0 thread (threaded
   runner: concurrently for distinct replicas, so it must be safe to call so; see
   THREADS). */
typedef int (*ipup_infeed_fn)(void *user, const ipup_feed *feed);
/* One outfeed record per micro-batch: mean loss over its n samples (mse: the mean over all
   its n * target_width elements) and the number of correct arg-max predictions (always 0
   with mse); with cfg.outfeed_mode IPUP_OUTFEED_OUTPUTS or _BOTH, the callback's record also
   carries the last stage's outputs: the loss layer's input rows of the micro-batch (n rows
   of width floats, the rows ipup_predict gives), valid during the call only.
   The callback (cfg.outfeed) runs DURING ipup_run, as the micro-batches leave the last
   stage, in (step, replica, mb) order, always on the thread that called ipup_run (the
   host; see THREADS): a record may so belong to a step that then fails (IPUP_ERR_NUMERIC:
   ipup_run_stats.steps says which steps were applied). It must not call ipup_* functions
   on the emulator. ipup_outfeed_records gives the loss records of the last run after it. */
enum {
    IPUP_OUTFEED_LOSS = 0, /* loss and correct; outputs NULL (the default) */
    IPUP_OUTFEED_OUTPUTS,  /* the rows; loss and correct read 0 (TF1's outfeed_loss = False) */
    IPUP_OUTFEED_BOTH      /* both */
};
typedef struct ipup_outfeed_rec {
    int64_t step;
    int32_t replica, mb;
    float loss;
    int32_t correct;
    const float *outputs;         /* n x width floats (the outputs modes), else NULL */
    int32_t n, width;             /* micro-batch samples and the loss layer's input width */
} ipup_outfeed_rec;
typedef void (*ipup_outfeed_fn)(void *user, const ipup_outfeed_rec *rec);
/* Optional hook called by the runners just before each op (tests inject delays here).
   ipu = replica * devices + device. Called on the IPU's own thread (threaded runner). */
typedef void (*ipup_op_hook_fn)(void *user, int32_t ipu, const ipup_op *op);
/* ipup_write_fn (ipupipe_sched.h): the write callback of ipup_trace_write and
   ipup_memory_report_write; return 0 on success. */

/* cfg.offload bits: what moves to the IPU's streaming memory (cfg.stream[i]) */
enum {
    IPUP_OFFLOAD_OPTIMIZER = 1,   /* optimizer state, staged in chunks for the update */
    IPUP_OFFLOAD_WEIGHTS = 2,     /* weights, streamed in layer by layer for F/B/W ops */
    IPUP_OFFLOAD_ACTIVATIONS = 4  /* stash entries, streamed back for the backward */
};
#define IPUP_OFFLOAD_ALL 7
typedef struct ipup_config {  /* zero = default for every field */
    const ipup_model_desc *model;  /* required */
    int32_t stages;                /* S; 0: 1 */
    const int32_t *split;          /* S-1 ascending layer indices where stages 1..S-1 begin;
                                      NULL: ipup_balance_stages (FLOPs fwd + bwd) */
    const int16_t *stage_device;   /* S entries; NULL: the schedule's default (stage s on IPU s) */
    int32_t devices;               /* IPUs per replica; 0: as many as the mapping needs */
    ipup_sched_kind schedule;      /* default grouped */
    int32_t virtual_stages;        /* interleaved-1f1b */
    int32_t strict;                /* Graphcore API rules of the schedule as errors */
    int32_t microbatch;            /* B samples per micro-batch; 0: 1 */
    int32_t microbatches;          /* M gradient accumulation count; 0: 1 */
    int32_t repeat;                /* steps per ipup_run call; 0: 1 */
    int32_t replicas;              /* R; 0: 1 */
    ipup_optimizer opt;
    /* Half precision (docs/api.md, "Half precision"). dtype: what the IPUs store:
       IPUP_DTYPE_F16 rounds every op's output (activations, gradients of activations,
       dlogits) to binary16, keeps the stash FIFOs and exchange rings as binary16 and stores
       the weights (and batch norms' running statistics) as binary16, each update rounded
       stochastically (ipup_f32_to_f16_sr); the arithmetic is fp32. fp32_weights != 0 keeps
       the weights fp32 (master weights) under float16. accum_dtype: the gradient
       accumulators' type (TF1's gradient_accumulation_dtype); F16 rounds them after every
       micro-batch and after the replica sum. loss_scale: dloss is multiplied by it and the
       gradients divided before the update (0: none, 1.0); loss_scale_dynamic != 0: start
       at loss_scale (0: 32768), halve it and skip the step when a gradient overflows
       (ipup_run_stats.skipped_steps), double it after loss_scale_period clean steps
       (0: 2000). */
    int32_t dtype, accum_dtype, fp32_weights;
    float loss_scale;
    int32_t loss_scale_dynamic, loss_scale_period;
    int32_t recompute;             /* stash only stage inputs, re-run forwards: 1 with
                                      recompute_stages 0 = every stage but the last */
    int32_t offload;               /* IPUP_OFFLOAD_* bits: what lives in cfg.stream[i]
                                      (1 = IPUP_OFFLOAD_OPTIMIZER) */
    size_t ipu_bytes;              /* on-chip bytes per IPU; 0: unlimited. Over it
                                      ipup_init / ipup_plan_* return IPUP_ERR_OOM */
    uint32_t recompute_stages;     /* bit s: stage s recomputes; 0: see recompute */
    uint64_t seed;
    ipup_runner_kind runner;
    ipup_infeed_fn infeed;         /* required for ipup_run */
    void *infeed_user;
    ipup_outfeed_fn outfeed;       /* optional; called during the run (ipup_outfeed_rec) */
    void *outfeed_user;
    int32_t outfeed_mode;          /* IPUP_OUTFEED_LOSS (0) | _OUTPUTS | _BOTH: what the
                                      outfeed carries; a set callback or an outputs mode
                                      bounds each replica's outfeed ring to a step's
                                      micro-batches (in the host pool, ipup_host_bytes) */
    ipup_op_hook_fn op_hook;       /* optional */
    void *op_hook_user;
    ipup_cost_model cost;
    ipup_pool ipu[IPUP_MAX_IPUS];    /* per IPU (replica * devices + device) */
    ipup_pool stream[IPUP_MAX_IPUS]; /* per IPU streaming memory (offload only) */
    ipup_pool host;                  /* schedule table, feeds, outfeed records */
    const ipup_stage_map *concurrent; /* NULL, or the stage -> IPUs mapping as
                                      ipup_sched_map_parse reads it ("0,1,0"); then
                                      stage_device is NULL. A bracket ("0,[1,2],2,3") is a
                                      concurrent stage: one dense or conv3x3 layer (and the
                                      relu/gelu/dropout after it) split by output units, a
                                      branch per IPU (docs/schedules.md §9; at most
                                      IPUP_MAX_BRANCH_LANES branches in all) */
    int32_t popxl;                 /* 1: PopXL's convention (ipup_sched_config.popxl): its rule
                                      M >= 2 x its 2S-1 pipeline stages, a warning in
                                      ipup_warnings, an error under strict */
} ipup_config;

/* >>memory: memory categories and the per-IPU memory report */
typedef enum ipup_mem_category {
    IPUP_MEM_WEIGHTS = 0, IPUP_MEM_GRADS, IPUP_MEM_OPTIMIZER, IPUP_MEM_STASH,
    IPUP_MEM_EXCHANGE, IPUP_MEM_SCRATCH, IPUP_MEM_CATEGORIES
} ipup_mem_category;
IPUPIPE_DEF const char *ipup_mem_category_name(int cat); /* "weights", "grads", ... */

/* Per IPU memory; the same numbers for every replica. */
typedef struct ipup_mem_report {
    size_t capacity;                         /* pool bytes given (0 in a plan) */
    size_t used;                             /* carved at startup, incl. alignment */
    size_t high_water;                       /* peak bytes actually touched: carved bytes
                                                minus stash / exchange slots never used */
    size_t by_category[IPUP_MEM_CATEGORIES];   /* carved */
    size_t peak_by_category[IPUP_MEM_CATEGORIES]; /* high-water per category */
    size_t stream_capacity, stream_used;     /* streaming memory (offload) */
    size_t recompute_saved;                  /* stash bytes recomputation saves (or would) */
    size_t offload_saved;                    /* optimizer bytes offload moves (or would) */
    size_t frozen_saved;                     /* gradient + optimizer-state bytes the frozen
                                                layers do not have (ipup_layer.frozen) */
} ipup_mem_report;

/* Memory of IPU ipu (replica * devices + device): carved, high-water, by category. */
IPUPIPE_DEF int ipup_memory_report(const ipup_emu *e, int32_t ipu, ipup_mem_report *out);
/* The same as a text table for every IPU of replica 0, written through write(user, data,
   len) line by line: IPUP_OK, IPUP_ERR_IO as soon as write returns non-zero, IPUP_ERR_ARG
   (NULL e or write, or e not initialised). ipup_buf / ipup_buf_write collect it in memory. */
IPUPIPE_DEF int ipup_memory_report_write(const ipup_emu *e, ipup_write_fn write, void *user);

/* >>concurrent-setup: a stage split over IPUs runs as lanes, one per branch */
/* A concurrent stage (cfg.concurrent with a bracket, docs/schedules.md §9) runs as
   branches, one per IPU: a "lane" each, with its slice [first_unit, first_unit +
   slice_units) of the output units of
   the stage's one weight layer (dense: output features, conv3x3: output channels), its
   slice of the weights, gradients and optimizer state, its own stash FIFO and four rings:
   in (from stage s-1), out (to stage s+1), dy (from stage s+1), dx (to stage s-1). */
#ifndef IPUP_MAX_BRANCH_LANES
#define IPUP_MAX_BRANCH_LANES IPUP_MAX_DEVICES /* branches of all concurrent stages together */
#endif
typedef struct ipup__lane {    /* static facts of a lane (internal) */
    int32_t stage, branch, device;
    int32_t first_unit, slice_units; /* its units [first_unit, first_unit + slice_units) */
    int32_t n_w;                  /* weights of the slice (in_rows x slice_units) */
    int32_t spatial;              /* output pixels per sample (dense: 1) */
    int32_t units;                /* output units of the stage's weight layer (all lanes) */
    size_t out_floats;            /* floats of its output per micro-batch: B x spatial x slice */
    size_t bias_off;              /* offset of b in its parameter block: n_w rounded up to 16 */
    size_t n_params, n_state, entry_floats, conv_floats;
    int64_t flops_f, flops_b, flops_opt;
    uint32_t in_cap, out_cap, dy_cap, dx_cap;
} ipup__lane;

/* >>setup: what ipup_init decides before it carves: layer and stage facts, the core */
typedef struct ipup__layer_facts { /* static facts of a layer (internal) */
    ipup_layer_info info;
    int32_t stage;
    int32_t stash_off; /* offset (floats) of its input in a stash entry, -1: not kept */
    int32_t dy_off;    /* offset (floats) of its output gradient in a W-stash entry, -1 */
    int32_t param_off; /* offset (floats) of w in its stage's parameter block; b follows */
    int32_t need_dx;   /* backward must produce its input gradient */
    int32_t pool_idx;  /* a max-pool that keeps its arg-max bytes at stash_off, not its input */
    uint64_t seed;     /* dropout seed */
    int32_t run_off;   /* batch norm: offset of its running mean in the parameter block (the
                          frozen part); the running variance follows at +round16(C); -1 */
    int32_t stat_off;  /* a trained batch norm: offset in the gradient block of its batch
                          statistics, R x M slots (global micro-batch r M + m) of (mean,
                          invstd), round16(C) floats each; -1 */
    int32_t res_sc;    /* res_begin, res_end: 1 when the block has a shortcut branch */
} ipup__layer_facts;

typedef struct ipup__stage {      /* static facts of a stage (internal) */
    int32_t first, last;          /* layers [first, last) */
    int32_t device;
    int32_t in_n, out_n;
    int32_t depth, wstash_depth;  /* stash and W-stash FIFO depths */
    int32_t label_off, dloss_off; /* labels and dlogits offsets in an entry (floats), -1 */
    size_t entry_floats;          /* a stash entry (full layout) */
    size_t rentry_floats;         /* a stash entry with recomputation: input and labels */
    size_t wentry_floats;         /* a W-stash entry: the output gradients of trained layers */
    size_t wentry_n;              /* of which used: B x the trained layers' outputs */
    size_t hentry_floats, hrentry_floats, hwentry_floats; /* the same three as binary16 (in
                                     float units; cfg.dtype float16: ipup__entry_regions) */
    size_t pingpong_floats, conv_floats;
    size_t chunk_floats;          /* the activation chunk before an arg-max pool, or 0 */
    size_t res_floats;            /* each of the two buffers of its residual blocks, or 0 */
    size_t n_params, n_state, max_tensor;
    uint32_t fwd_cap, bwd_cap;    /* capacity of the rings into this stage */
    int64_t flops_f, flops_i, flops_w, flops_opt; /* per micro-batch / per update */
    size_t n_grads;               /* floats of the trained layers' parameters: they come first
                                     in the parameter block, frozen layers' after; the size
                                     of the gradient block (n_state = slots * n_grads) */
} ipup__stage;

/* What ipup_init decides before it carves a byte (internal): the configuration with its
   defaults, the model, layers, stages, counts, the schedule table, the cost model and the
   message. The plan (ipup_plan_pools) works on an ipup__core alone; an ipup_emu holds one
   as its member core (e->core.S): the setup code takes an ipup__core, the runners an
   ipup_emu. */
typedef struct ipup__core {
    ipup_config cfg;
    ipup_model_desc model;
    ipup__layer_facts layers[IPUP_MAX_LAYERS];
    ipup__stage stages[IPUP_MAX_LAYERS];
    int32_t S, P, R, M, B, n_layers, in_n, classes, n_ipus;
    ipup_table table;
    ipup_op *ops;
    int32_t *row;                 /* op indices grouped by device, table order */
    int32_t row_start[IPUP_MAX_DEVICES + 1];
    ipup_cost_model cost_model;   /* cfg.cost with its defaults */
    char msg[IPUP_MSG_MAX];
    ipup_table pred_table;        /* ipup_predict's forward-only table (host pool) */
    ipup_op *pred_ops;
    int32_t *pred_row;            /* its op indices grouped by device */
    int32_t pred_row_start[IPUP_MAX_DEVICES + 1];
    ipup_predict_stats pred_stats;
    int16_t plain_stage_device[IPUP_MAX_LAYERS]; /* cfg.concurrent without brackets */
    int32_t has_concurrent;       /* 1 when some stage runs as branches (lanes) */
    int32_t n_lanes;              /* the lanes of all concurrent stages */
    int8_t n_branches[IPUP_MAX_LAYERS];  /* branches of stage s (0 or 1: a plain stage) */
    int16_t first_lane[IPUP_MAX_LAYERS]; /* the first lane of stage s */
    ipup__lane lanes[IPUP_MAX_BRANCH_LANES];
} ipup__core;

/* >>plan: pool sizes without pools: ipup_plan_config, ipup_host_bytes, ipup_plan_pools */
typedef struct ipup_plan {
    int32_t stages, devices, replicas, ipus;  /* ipus = replicas * devices */
    int32_t split[IPUP_MAX_LAYERS];           /* first layer of each stage */
    int16_t stage_device[IPUP_MAX_LAYERS];
    int32_t stash_depth[IPUP_MAX_LAYERS];     /* FIFO depth per stage */
    size_t ipu_bytes[IPUP_MAX_DEVICES];       /* pool bytes each IPU needs (per device) */
    size_t stream_bytes[IPUP_MAX_DEVICES];    /* streaming-memory bytes (offload) */
    size_t host_bytes;
    ipup_mem_report mem[IPUP_MAX_DEVICES];
    int64_t params;                           /* parameters of the model */
    double step_seconds;                      /* the cost model's prediction without running:
                                                 ipup_run_stats.step_seconds, */
    double samples_per_second;                /* and samples_per_second of one ipup_run
                                                 (cfg.repeat steps of R x M x B samples) */
} ipup_plan;

/* Everything ipup_init would decide, without pools: stages, mapping, stash depths and
   the exact pool sizes. `work` is scratch (overwritten; pass the ipup_emu you will init
   later, zeroed or shut down: IPUP_ERR_FROZEN on a live one); the error text is in
   ipup_last_error(work). cfg.ipu / cfg.stream are ignored;
   the schedule table is built in cfg.host when given (ipup_host_bytes(cfg) bytes), else
   on the stack (at most IPUP_PLAN_STACK_OPS ops). An IPU over cfg.ipu_bytes is
   IPUP_ERR_OOM, the message naming it, its stages, its bytes by category and the remedies
   in the tutorials' order with what each saves there (ipup_init says the same). */
IPUPIPE_DEF int ipup_plan_config(ipup_emu *work, const ipup_config *cfg, ipup_plan *plan);
/* Bytes the host pool needs (no table needed to know it); 0 on a bad configuration. */
IPUPIPE_DEF size_t ipup_host_bytes(const ipup_config *cfg);

/* ipup_plan_pools is ipup_plan_config without an ipup_emu: the same plan, the same code
   (the byte counts are exactly what ipup_init carves), in a caller's scratch of
   IPUP_PLAN_SCRATCH_BYTES(S, M) bytes (any alignment): the plan's working state (an
   ipup__core, whose size follows the IPUP_MAX_* limits: `make -s sizes` prints it)
   plus the schedule table, at most IPUP_SCHED_MAX_OPS(S, M) =
   3*S*M ops of 16 bytes, for S = cfg.stages and M = cfg.microbatches (0 counts as 1);
   with concurrent stages (cfg.concurrent) S counts each branch as a stage: S =
   ipup_sched_map_lanes(cfg.concurrent). The table may use all the scratch given.
   cfg.ipu, cfg.stream and cfg.host are ignored. No heap, no stack beyond a few hundred
   bytes and ipup_sched_generate's. Returns ipup_plan_config's codes, and
   IPUP_ERR_CAPACITY when the scratch is too small (msg gives the bytes to provide);
   msg gets the error text, or on success the schedule's warnings, one per line ("" when
   none), as ipup_warnings would show them after ipup_init. */
#define IPUP_PLAN_SCRATCH_BYTES(stages, microbatches) \
    (sizeof(ipup__core) + (size_t)IPUP_POOL_ALIGN + \
     (size_t)3 * (size_t)(stages) * (size_t)(microbatches) * sizeof(ipup_op))
IPUPIPE_DEF int ipup_plan_pools(const ipup_config *cfg, ipup_plan *plan, void *scratch,
                                size_t scratch_bytes, char *msg, size_t msg_len);

/* The automatic plan: the configuration that fits the given bytes per IPU and has the
   highest samples/s of the cost model (ipup_plan.samples_per_second), over this space:
   - stage counts S = 1..max_stages (0: min(layers, ipus)), each with EVERY contiguous
     split of the layers into S stages (not only ipup_balance_stages' one: under a memory
     limit the fastest split that fits is often not the balanced one);
   - the schedules of `schedules` (bit 1u << kind; 0: IPUP_AUTO_SCHEDULES_DEFAULT, the
     seven that put one stage on each IPU: grouped, interleaved, sequential, gpipe, 1f1b,
     zb-h1, zb-h2) with their default mapping and virtual stages (the V and looped kinds
     put S stages on S / 2 IPUs: give them with max_stages up to 2 x ipus); dualpipe,
     which runs two model copies, is never searched; a plan uses devices x replicas <= ipus;
   - replicas R = 1..ipus / devices (IPUP_AUTO_REPLICAS in knobs; else 1);
   - micro-batch size B over the powers of two 1..max_microbatch (0: 64), and micro-batch
     count M: samples_per_step / (R x B) when samples_per_step is given (every plan then
     trains on the same R x M x B samples per optimizer step), else the powers of two
     1..max_microbatches (0: 64); M is always at most max_microbatches;
   - recomputation: every cfg.recompute_stages mask (IPUP_AUTO_RECOMPUTE);
   - offload: every subset of the IPUP_OFFLOAD_* bits that knobs allow
     (IPUP_AUTO_OFFLOAD_OPTIMIZER, _WEIGHTS, _ACTIVATIONS).
   The search is exact over that space (tests/test_plan_auto.c compares it with a plain
   exhaustive search): it plans each (S, schedule, R, B, M, split) without recomputation
   or offload first; a knob only adds time in the cost model (recomputed forwards,
   streaming), so that time bounds every variant: one slower than the best so far is
   dropped, one that fits is the variant. Otherwise it tries each offload subset with the
   recompute masks that are minimal (by inclusion) among those that fit, IPU by IPU (an
   IPU's bytes depend only on its own stages' bits): any other fitting mask contains one
   of them and is no faster (with activation offload, where a recomputing stage streams
   its smaller entry, every fitting mask is tried). Gradients and exchange buffers, which
   no knob moves, drop a point whose IPU they alone overfill. Ties (equal samples/s) go to
   the fewer IPUs, then fewer stages, lower schedule kind, fewer replicas, smaller B,
   smaller M, the split that is first lexicographically, the lower offload bits (as a
   number), the smaller mask.
   *best gets req->base with stages, split (pointing into plan->split: keep *plan while
   *best is used), stage_device NULL, devices 0, schedule, virtual_stages 0, microbatch,
   microbatches, replicas, recompute 0 with recompute_stages, offload, ipu_bytes =
   req->ipu_bytes; *plan gets its plan (ipup_plan_pools). scratch: at least
   IPUP_PLAN_SCRATCH_BYTES(max_stages, max_microbatches) bytes; no heap. When nothing fits:
   IPUP_ERR_OOM, and msg names the smallest bytes per IPU that would fit and its plan.
   IPUP_ERR_ARG / IPUP_ERR_CONFIG / IPUP_ERR_CAPACITY (scratch) with a message otherwise. */
#define IPUP_AUTO_SCHEDULES_DEFAULT                                                          \
    ((1u << IPUP_SCHED_GROUPED) | (1u << IPUP_SCHED_INTERLEAVED) |                          \
     (1u << IPUP_SCHED_SEQUENTIAL) | (1u << IPUP_SCHED_GPIPE) | (1u << IPUP_SCHED_1F1B) |   \
     (1u << IPUP_SCHED_ZBH1) | (1u << IPUP_SCHED_ZBH2))
enum {
    IPUP_AUTO_RECOMPUTE = 1,
    IPUP_AUTO_OFFLOAD_OPTIMIZER = 2,
    IPUP_AUTO_OFFLOAD_WEIGHTS = 4,
    IPUP_AUTO_OFFLOAD_ACTIVATIONS = 8,
    IPUP_AUTO_REPLICAS = 16,
    IPUP_AUTO_ALL = 31
};
typedef struct ipup_plan_request {
    const ipup_config *base;  /* model (required), optimizer, cost model, repeat, runner,
                                 seed, feeds: what the plan does not choose */
    int32_t ipus;             /* IPUs available (>= 1) */
    size_t ipu_bytes;         /* on-chip bytes of each IPU; 0: unlimited */
    int32_t samples_per_step; /* R x M x B of every plan; 0: not fixed (M over powers of 2) */
    int32_t max_microbatch;   /* B <= this; 0: 64 */
    int32_t max_microbatches; /* M <= this; 0: 64 */
    int32_t max_stages;       /* 0: min(layers, ipus) */
    uint32_t schedules;       /* 1u << ipup_sched_kind per kind; 0: IPUP_AUTO_SCHEDULES_DEFAULT */
    uint32_t knobs;           /* IPUP_AUTO_* bits the search may vary; 0: IPUP_AUTO_ALL */
} ipup_plan_request;
IPUPIPE_DEF int ipup_plan_auto(const ipup_plan_request *req, ipup_config *best, ipup_plan *plan,
                               void *scratch, size_t scratch_bytes, char *msg, size_t msg_len);

/* >>threads: where an IPU thread sleeps, its handle, its error slot */
#ifndef IPUPIPE_NO_THREADS
typedef struct ipup__park {       /* where one thread sleeps when it has nothing to do */
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int waiting;                  /* protected by mutex */
    int init;
} ipup__park;
#endif
typedef struct ipup__thread {
    struct ipup_emu *emu;
    int32_t ipu;
    int32_t started;
#ifndef IPUPIPE_NO_THREADS
    pthread_t handle;
#endif
} ipup__thread;

typedef struct ipup__ipu_err {        /* per IPU, written by its thread during a step */
    int32_t code, stage, mb, layer;
    int32_t overflow;                 /* a gradient overflow dynamic loss scaling skips */
    int64_t step;
} ipup__ipu_err;

/* >>init: ipup_init and ipup_shutdown */
/* Check cfg, generate the table, carve the pools, initialise the weights (glorot/zeros
   from cfg.seed), start the threads (threaded runner), freeze the pools. e is fully
   overwritten; start from a zeroed ipup_emu (static storage, or memset), since ipup_init
   and ipup_plan_config first look whether e is live: on an emulator whose pools are frozen
   (ipup_init returned IPUP_OK, ipup_shutdown not called yet) both refuse with
   IPUP_ERR_FROZEN and leave it untouched. On error the message is in ipup_last_error(e).
   Not thread-safe. */
IPUPIPE_DEF int ipup_init(ipup_emu *e, const ipup_config *cfg);
/* Join the threads (threaded runner) and release the pools: ipup_init or ipup_plan_config
   may use e (and the pools) again. Safe to call twice. Tensors, reports and ipup_evaluate
   stay usable until then; ipup_run needs a new ipup_init. */
IPUPIPE_DEF void ipup_shutdown(ipup_emu *e);

/* >>concurrent-runtime: a lane's runtime per replica; the buffers of its neighbours */
typedef struct ipup__lane_rt { /* runtime of a lane on one replica (internal) */
    float *params, *grads, *state, *stash, *pingpong[2], *conv, *staging;
    uint32_t stash_head, stash_count, stash_peak, pad_;
    float *reserved_in;           /* the slot stage s-1 reserved in the in ring */
    float *reserved_dy;           /* the slot stage s+1 reserved in the dy ring */
    ipup_ring in, out, dy, dx;
} ipup__lane_rt;
typedef struct ipup__fanout_bufs { /* a plain stage next to a concurrent one (internal) */
    float *out;                   /* its output (and labels) before the fan-out */
    float *dy_sum;                /* its dy: the branches' dx summed */
    float *dx;                    /* its dx before the scatter to the branches */
} ipup__fanout_bufs;

/* >>transport: the seam of a runner that runs one IPU per process (ipupipe_mpi.h) */
/* A runner outside this header in which each process runs one IPU (ipupipe_mpi.h: one
   MPI rank per IPU) gives this table to ipup_set_transport after ipup_init; from then on
   ipup_run / ipup_run_steps run only the row of IPU `ipu` (replica ipu / devices, device
   ipu % devices) of every step, with the cooperative runner's ops, and call the hooks:
   - the ring hooks on every ring operation of that row (the rings of e->fwd, e->bwd,
     e->infeed, e->outfeed). A ring whose two ends are both on this IPU needs nothing;
     for a ring whose other end is another process, `peek` (the ring is empty) waits for
     the next message, commits it and returns ipup_ring_peek, `reserve` (the ring is
     full) waits until the oldest slot has left, releases it and returns
     ipup_ring_reserve; `commit` and `release` run after each ipup_ring_commit /
     ipup_ring_release. NULL from peek or reserve stops the run with IPUP_ERR_IO and the
     message the transport left in ipup_last_error's buffer (e->core.msg).
   - `step_begin` before the row of step `step`; `reduce` after it when replicas > 1: sum
     this IPU's gradient blocks (e->stage_rt[replica][s].grads of its stages) over the
     replicas in order 0..R-1 and leave the sum in every replica's block, with the bits
     of the cooperative runner's per-element loop; `step_end` before the update: every
     IPU's error slot of the step (e->ipu_errors[step & 1][ipu]) and the outfeed records
     of the step (k-th of this run, e->records) must be the same on every process
     afterwards.
   Non-zero from a step hook stops the run with that code and e->core.msg. The hooks run on
   the host thread. ipup_set_transport(e, NULL) returns to cfg.runner. */
typedef struct ipup_transport {
    void *user;
    int32_t ipu;
    void *(*peek)(void *user, ipup_ring *ring);
    void *(*reserve)(void *user, ipup_ring *ring);
    void (*commit)(void *user, ipup_ring *ring);
    void (*release)(void *user, ipup_ring *ring);
    int (*step_begin)(void *user, int64_t step);
    int (*reduce)(void *user, int64_t step);
    int (*step_end)(void *user, int64_t step, int32_t k);
} ipup_transport;
/* The transport seam (above): tp (kept by pointer, NULL: back to cfg.runner) runs IPU
   tp->ipu's row per process. IPUP_ERR_ARG with a message when e is not initialised, the
   runner is not cooperative, tp->ipu is out of range or a hook is missing. */
IPUPIPE_DEF int ipup_set_transport(ipup_emu *e, const ipup_transport *tp);

/* >>devices: one IPU per core or thread that the caller runs (ipup_run_device) */
/* The device runner: the threaded runner's protocol (rings, barriers, the job) on cores or
   threads the caller starts, with no OS: after ipup_init (cfg.runner = IPUP_RUNNER_COOP)
   ipup_set_devices(e, sync) gives the two things a platform must do, and from then on
   - every IPU q >= 1 runs on its own core or thread, in ipup_run_device(e, q): it waits for
     a job, runs IPU q's row of every step of it, waits for the next job, ..., and returns
     once ipup_shutdown has been called;
   - ipup_run / ipup_run_steps on the host (the caller of ipup_init) publish the job, run
     IPU 0's row of it on the calling core, drain the outfeed, wait for the other IPUs and
     return the cooperative runner's bits, records and statistics.
   sync->wait(user, ipu) is called over and over while IPU ipu (ipu = e->core.n_ipus: the
   host) has nothing to do: sleep until woken or briefly (Arm: WFE; a host: a yield or a
   short sleep); the caller checks again after each return. sync->wake(user, ipu) is
   called after every release store that IPU ipu may be waiting for (Arm: DSB then SEV). A
   spurious return from wait is harmless; a missed wake is not (WFE's event register keeps
   an SEV sent before the WFE). Synchronisation is by C11 atomics (acquire loads, release
   stores, one acq_rel fetch-add per barrier), so the build needs them: not IPUPIPE_NO_ATOMICS
   (with IPUPIPE_NO_THREADS, define IPUPIPE_ATOMICS). ipup_predict, ipup_evaluate and the
   state functions stay on the host alone. sync (kept by pointer) NULL returns to the
   cooperative runner; ipup_init and ipup_shutdown forget it. IPUP_ERR_ARG when e is not
   initialised or shut down, the runner is not cooperative, a transport is set, a hook is missing, or atomics are compiled
   out; IPUP_ERR_UNSUPPORTED for concurrent stages. */
typedef struct ipup_device_sync {
    void *user;
    void (*wait)(void *user, int32_t ipu);
    void (*wake)(void *user, int32_t ipu);
} ipup_device_sync;
IPUPIPE_DEF int ipup_set_devices(ipup_emu *e, const ipup_device_sync *sync);
/* IPU ipu's side of the device runner (above), 1 <= ipu < e->core.n_ipus, on its own core
   or thread: serves the host's jobs until ipup_shutdown, then returns IPUP_OK. Each of these
   IPUs calls it once after ipup_set_devices (once per ipup_init); ipup_shutdown waits until
   every one has returned. IPUP_ERR_ARG when ipup_set_devices was not called or ipu is out of
   range. */
IPUPIPE_DEF int ipup_run_device(ipup_emu *e, int32_t ipu);

/* >>emulator: struct ipup_emu: the core, every replica's runtime, rings, threads */
typedef struct ipup__stage_rt { /* runtime of one stage of one replica (internal) */
    float *stash, *wstash, *work, *pingpong[2], *conv, *staging, *chunk;
    float *res[2];                /* a residual block's saved tensors (res_floats each) */
    float *params, *grads, *state;
    float *wstage;                /* weights offloaded or binary16: the IPU's staging of one
                                     layer's block (ipup__layer_params) */
    size_t wstage_floats;         /* its floats */
    uint16_t *hparams;            /* binary16 weights (ipup__w16): the parameter block, params
                                     NULL */
    uint32_t stash_head, stash_count, stash_peak;    /* the stash FIFO */
    uint32_t wstash_head, wstash_count, wstash_peak; /* the W-stash FIFO */
    float *pred;                  /* last stage: ipup_predict's output rows (B x width) */
    float *xb, *wwork;            /* cfg.dtype float16: fp32 scratch of a ring message in (and
                                     dx out), a W-stash entry; the message out and dy in use the
                                     ping-pong buffers */
} ipup__stage_rt;

struct ipup_emu {
    ipup__core core;              /* what ipup_init decided (setup) */
    ipup__stage_rt stage_rt[IPUP_MAX_REPLICAS][IPUP_MAX_LAYERS];
    ipup_ring fwd[IPUP_MAX_REPLICAS][IPUP_MAX_LAYERS]; /* into stage s from s-1 (s >= 1) */
    ipup_ring bwd[IPUP_MAX_REPLICAS][IPUP_MAX_LAYERS]; /* into stage s from s+1 */
    ipup_ring infeed[IPUP_MAX_REPLICAS], outfeed[IPUP_MAX_REPLICAS];
    ipup_outfeed_rec *records;    /* repeat * R * M, in (step, replica, mb) order */
    int64_t out_next;             /* streaming outfeed: the next record to deliver (of the run) */
    const float *loss_in[IPUP_MAX_REPLICAS]; /* the loss layer's input of the last forward */
    ipup_mem_report mem[IPUP_MAX_IPUS];
    int64_t step;                 /* global step counter (updates done) */
    /* cost model per step */
    double step_seconds, busy_seconds[IPUP_MAX_DEVICES];
    double phase_seconds[IPUP_PHASES], phase_busy_seconds[IPUP_PHASES];
    const struct ipup_emu *frozen; /* e itself from a successful ipup_init to ipup_shutdown:
                                      the pools are carved, nothing may carve them again */
    int32_t initialised;
    /* threaded runner */
    ipup__thread threads[IPUP_MAX_IPUS];
#ifndef IPUPIPE_NO_THREADS
    ipup__park park[IPUP_MAX_IPUS + 1]; /* one per IPU thread, the last for the host */
#endif
    ipup_atomic_u32 job_gen;      /* generation counter: a new job */
    uint8_t pad0_[IPUP_CACHE_LINE - sizeof(uint32_t)];
    ipup_atomic_u32 threads_done; /* threads finished with the job */
    uint8_t pad1_[IPUP_CACHE_LINE - sizeof(uint32_t)];
    ipup_atomic_u32 abort_;       /* host asks threads to stop the job */
    ipup_atomic_u32 fault_;       /* an IPU thread stopped early: every thread stops the job */
    uint8_t pad2_[IPUP_CACHE_LINE - sizeof(uint32_t)];
    ipup_atomic_u32 barrier_count, barrier_gen;
    uint8_t pad3_[IPUP_CACHE_LINE];
    int32_t job_steps, quit, threads_started, n_records;
    int64_t job_step0, job_stop;
    ipup__ipu_err ipu_errors[2][IPUP_MAX_IPUS]; /* per step parity, per IPU */
    const ipup_transport *transport; /* ipup_set_transport: one IPU's row per process */
    const ipup_device_sync *devices; /* ipup_set_devices: IPUs on the caller's cores */
    ipup_atomic_u32 devices_out;  /* ipup_run_device calls that have returned */
    ipup_atomic_u32 stop_claim;   /* device runner: the first failing infeed sets job_stop */
    /* ipup_predict: its job; the table and figures are in the core */
    double *pred_start;           /* cost model scratch: BSP start of each F(0,m) */
    int32_t job_kind;             /* threads: 0 training steps, 1 ipup_predict */
    int32_t pred_n, pred_waves;
    const float *pred_x;
    float *pred_out;
    int32_t *pred_cls;
    char warnings[IPUP_WARN_MAX]; /* the schedule's warnings of the last ipup_init */
    /* concurrent stages: the lanes' runtime (their static facts are in the core) */
    ipup__lane_rt lane_rt[IPUP_MAX_REPLICAS][IPUP_MAX_BRANCH_LANES];
    ipup__fanout_bufs fanout[IPUP_MAX_REPLICAS][IPUP_MAX_LAYERS];
    /* loss scaling, one copy per IPU (each IPU's thread updates its own at the end of a
       step from what every IPU saw, so all copies agree and no thread waits for another) */
    float ls_scale[IPUP_MAX_IPUS];
    int32_t ls_clean[IPUP_MAX_IPUS];
    int64_t ls_skipped[IPUP_MAX_IPUS];
};

/* >>runtime: ipup_run, ipup_run_steps, ipup_evaluate, the outfeed records */
/* Run cfg.repeat steps (each: M micro-batches per replica, all-reduce, one update). stats
   may be NULL. Returns IPUP_OK, IPUP_ERR_NUMERIC (NaN/inf: step not applied), IPUP_ERR_IO
   (the infeed callback failed), IPUP_ERR_ARG. Host thread only. */
IPUPIPE_DEF int ipup_run(ipup_emu *e, ipup_run_stats *stats);
/* Like ipup_run with an explicit step count, 1 <= steps <= cfg.repeat (e.g. a shorter last
   execution of an epoch); the host pool (ipup_host_bytes) holds outfeed records for
   cfg.repeat steps, which covers every such call. */
IPUPIPE_DEF int ipup_run_steps(ipup_emu *e, int32_t steps, ipup_run_stats *stats);
/* Forward only on replica 0, in chunks of at most B samples, dropout off.
   x (n, in_features), labels (n) or NULL; *loss_sum (or NULL) += sum of per-sample losses
   (chunk mean * chunk size); *correct (or NULL) += correct predictions. A model whose loss
   is mse is refused (IPUP_ERR_ARG, with a message): see ipup_evaluate_targets. */
IPUPIPE_DEF int ipup_evaluate(ipup_emu *e, int32_t n, const float *x, const int32_t *labels,
                          double *loss_sum, int64_t *correct);
/* ipup_evaluate for a model whose loss is mse (ipup_evaluate refuses those: its labels are
   integers): targets (n, target_width = the mse layer's input width); *loss_sum (or NULL)
   += chunk loss * chunk size, so *loss_sum / n is the mean squared error over all n *
   target_width elements (chunk sizes times their means: equal chunks give the exact mean).
   IPUP_ERR_ARG with a message (NULL e, x or targets, n < 0, not initialised, a class loss). */
IPUPIPE_DEF int ipup_evaluate_targets(ipup_emu *e, int32_t n, const float *x, const float *targets,
                                      double *loss_sum);
/* The outfeed records of the last run, in (step, replica, mb) order; *n gets the count. */
IPUPIPE_DEF const ipup_outfeed_rec *ipup_outfeed_records(const ipup_emu *e, int32_t *n);

/* >>predict: pipelined inference on the current weights */
/* Forward only on the current weights (replica 0's), dropout off, no stash, no backward,
   no heap. ipup_predict works after ipup_init, after ipup_run, after weights were written
   with ipup_tensor_find + ipup_replicas_sync (or a state restore), and after
   ipup_shutdown (then always on the host thread). Its results are the bits of the
   training forward: the same kernel calls, micro-batch by micro-batch. */
/* floats per sample that ipup_predict writes to out: the loss layer's input width
   (softmax_xent: the number of classes); 0 when e is NULL or not initialised */
IPUPIPE_DEF int32_t ipup_output_width(const ipup_emu *e);
/* Forward only on the current weights (replica 0's), dropout off, for n samples
   x (n rows of in_h*in_w*in_c floats). out (n rows of ipup_output_width floats) or NULL
   gets the loss layer's input (softmax_xent: the logits); cls (n) or NULL gets the
   arg-max class (first on ties; a NaN never wins). The samples go through the pipeline
   in micro-batches of cfg.microbatch (the last one may be shorter), cfg.microbatches of
   them at a time, following the forward-only table of the schedule (ipup_predict_stats).
   cls is for a class loss only: with a loss layer that is not a class score (e.g. a
   regression loss) a non-NULL cls is refused (IPUP_ERR_ARG) and out is the output.
   Returns IPUP_OK; IPUP_ERR_ARG with a message for NULL e, e not initialised, n < 0,
   NULL x when n > 0, or cls with a non-class loss; nothing is written then. n = 0 does
   nothing. Host thread only. Under a transport (ipupipe_mpi.h) it runs in this process
   alone on the weights it holds (bring every stage's weights here first). */
IPUPIPE_DEF int ipup_predict(ipup_emu *e, int32_t n, const float *x, float *out, int32_t *cls);
/* What the pipelined inference costs on the IPUs (the cost model of ipup_run_stats, BSP
   timing: a step lasts its slowest op plus its slowest exchange plus sync). ipup_predict
   runs the forward-only table (docs/schedules.md §8) of cfg.schedule over the pipeline's
   IPUs in waves of cfg.microbatches micro-batches of cfg.microbatch samples; interleaved
   and zb-h1 have no forward-only form and run gpipe's (the same mapping). */
/* The figures above into *out: IPUP_OK, IPUP_ERR_ARG (NULL e or out, e not initialised; a
   message when e is there). */
IPUPIPE_DEF int ipup_predict_figures(const ipup_emu *e, ipup_predict_stats *out);

/* >>tensors: parameter and optimizer-state tensors, replicas, step, learning rate */
typedef enum ipup_tensor_kind {
    IPUP_TENSOR_PARAM = 0,
    IPUP_TENSOR_OPT_STATE,
    IPUP_TENSOR_GRAD
} ipup_tensor_kind;
typedef struct ipup_tensor_info {
    /* "dense256.w", "dense256.b", "dense256.w.m", "dense256.w.v" */
    char name[IPUP_TENSOR_NAME_MAX];
    ipup_tensor_kind kind;
    int32_t layer, stage, device;
    int32_t ndim, shape[4];
    int32_t n;                       /* elements */
    float *data;                     /* replica 0's copy; NULL when stored as binary16 */
    uint16_t *data_f16;              /* replica 0's copy as binary16 (cfg.dtype float16
                                        weights and running statistics), else NULL */
} ipup_tensor_info;

/* Checkpoints: every parameter tensor then every optimizer-state tensor (replica 0's
   copies); write into data and call ipup_replicas_sync to copy them to every replica.
   A frozen layer has its parameter tensors (kind PARAM) but no optimizer state and no
   gradient. */
IPUPIPE_DEF int32_t ipup_tensor_count(const ipup_emu *e);
IPUPIPE_DEF int ipup_tensor_get(ipup_emu *e, int32_t index, ipup_tensor_info *out);
IPUPIPE_DEF int ipup_tensor_find(ipup_emu *e, const char *name, ipup_tensor_info *out);
/* Elements [first, first + n) of tensor t (from ipup_tensor_get / _find of e) as fp32 into
   out, whichever type stores them (binary16 converts exactly); ipup_tensor_write stores
   them from in (binary16: rounded to nearest even). Then ipup_replicas_sync copies them to
   every replica. IPUP_ERR_ARG (with the message) on a NULL pointer or a range outside
   0..t->n. */
IPUPIPE_DEF int ipup_tensor_read(ipup_emu *e, const ipup_tensor_info *t, int32_t first,
                                 int32_t n, float *out);
IPUPIPE_DEF int ipup_tensor_write(ipup_emu *e, const ipup_tensor_info *t, int32_t first,
                                  int32_t n, const float *in);
IPUPIPE_DEF int ipup_replicas_sync(ipup_emu *e);
IPUPIPE_DEF int64_t ipup_get_step(const ipup_emu *e);
/* The global step counter = updates done; Adam's bias correction uses step + 1 and dropout
   keys use it, so restoring it with a checkpoint resumes bit-identically. */
IPUPIPE_DEF int ipup_set_step(ipup_emu *e, int64_t step);
/* Learning rate of the following updates (read at every update; e.g. per-epoch schedules).
   IPUP_ERR_ARG (and no change) unless lr is a finite number > 0. */
IPUPIPE_DEF int ipup_set_learning_rate(ipup_emu *e, float lr);
/* The loss scale the next step uses (cfg.loss_scale, or the dynamic one); 1 without loss
   scaling, 0 for NULL or an emulator not initialised. */
IPUPIPE_DEF float ipup_loss_scale(const ipup_emu *e);

/* >>state: the training state as one checked byte stream */
/* The training state (every parameter and optimizer-state tensor of replica 0 and the
   step counter) as one byte stream, format and guarantees in docs/state.md: magic
   "IPUPSTAT", format version, a descriptor of the model, optimizer and stage split with
   its fingerprint, one record per tensor (name, kind, shape, little-endian binary32
   values), CRC-32. Streamed through callbacks in chunks of at most IPUP_STATE_CHUNK bytes
   from a small stack buffer: no heap, no buffer of the whole state anywhere. */
#define IPUP_STATE_VERSION 1u   /* the format version ipup_state_save writes */
#define IPUP_STATE_CHUNK 256u   /* the largest piece given to a callback */
#define IPUP_STATE_END 1        /* ipup_read_fn: the stream ends before offset + len */
/* Fills data[len] with the bytes at `offset` of the stream. Returns 0 when all len bytes
   were filled, IPUP_STATE_END when the stream is shorter than offset + len, any other
   value for a read error. Random access (a flash region, pread on a file), because
   ipup_state_load reads the stream more than once: once to check all of it, once to apply
   it (docs/state.md). */
typedef int (*ipup_read_fn)(void *user, uint64_t offset, void *data, size_t len);
/* The exact number of bytes ipup_state_save writes for e; 0 when e is NULL or not
   initialised. */
IPUPIPE_DEF size_t ipup_state_bytes(const ipup_emu *e);
/* Writes the state through write(user, data, len) in order, ipup_state_bytes(e) bytes in
   all, at most IPUP_STATE_CHUNK per call. IPUP_OK; IPUP_ERR_IO as soon as write returns
   non-zero; IPUP_ERR_ARG (NULL arguments, e not initialised). Host thread, between runs. */
IPUPIPE_DEF int ipup_state_save(ipup_emu *e, ipup_write_fn write, void *user);
/* Loads a state written by ipup_state_save into replica 0, copies it to every replica and
   restores the step. Everything is checked before the first byte is applied: the magic,
   the version, the CRC-32 of the whole stream (IPUP_ERR_CORRUPT for a damaged or truncated
   stream), then the descriptor and every record against e (IPUP_ERR_MISMATCH naming the
   first difference: another model, optimizer, stage split, tensor name or shape; another
   format version), every value finite (IPUP_ERR_CORRUPT). A refused stream leaves the
   weights, optimizer state and step untouched. Only a source whose bytes change between
   the checking and the applying pass (the final CRC then differs: IPUP_ERR_CORRUPT, "changed
   while it was read") leaves the state partly loaded. IPUP_ERR_IO when read fails,
   IPUP_ERR_ARG (NULL arguments, e not initialised). The message is in ipup_last_error. */
IPUPIPE_DEF int ipup_state_load(ipup_emu *e, ipup_read_fn read, void *user);

/* >>trace: the Chrome trace of one step */
/* Chrome trace JSON ({"traceEvents":[...]}) of one step as the cost model sees it: one
   track per IPU, ops as boxes ("X"), exchanges as flow arrows ("s"/"f"), the update.
   Written through write(user, data, len); no stdio needed. */
IPUPIPE_DEF int ipup_trace_write(const ipup_emu *e, ipup_write_fn write, void *user);

#ifdef __cplusplus
}
#endif
#endif /* IPUPIPE_H */

/* ======================================================================== */

#ifdef IPUPIPE_IMPLEMENTATION
#ifndef IPUPIPE_EMU_IMPLEMENTED
#define IPUPIPE_EMU_IMPLEMENTED

/* >>build-options: the defaults of the race-checker hooks and of IPUPIPE_RING_START */
#include <stdarg.h>

#ifndef IPUPIPE_HAPPENS_BEFORE
#define IPUPIPE_HAPPENS_BEFORE(addr) ((void)0)
#endif
#ifndef IPUPIPE_HAPPENS_AFTER
#define IPUPIPE_HAPPENS_AFTER(addr) ((void)0)
#endif
#ifndef IPUPIPE_SYNC_VAR
#define IPUPIPE_SYNC_VAR(addr, n) ((void)0)
#endif
/* libc string functions: IPUPIPE_MEMCPY / IPUPIPE_MEMSET come from ipupipe_kernels.h
   (included above; defaults memcpy / memset, <string.h> only for the defaults) */
/* initial value of the emulator's ring counters (tests start them just below 2^32 so that
   every run crosses the wrap) */
#ifndef IPUPIPE_RING_START
#define IPUPIPE_RING_START 0u
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* >>helpers: messages into a buffer, a text builder, ids, numbers, size arithmetic */
/* Every message and document is formatted by ipup_vsnprintf / ipup_snprintf
   (ipupipe_sched.h: standard conversions, no heap, no libc stdio). */
#if defined(__GNUC__) || defined(__clang__)
#define IPUP__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define IPUP__PRINTF(f, a)
#endif

/* msg[len] gets the message (when msg && len); returns code */
static IPUP__PRINTF(4, 5) int ipup__fail(char *msg, size_t len, int code, const char *f, ...) {
    va_list ap;
    if (!msg || !len) return code;
    va_start(ap, f);
    ipup_vsnprintf(msg, len, f, ap);
    va_end(ap);
    return code;
}
/* a text built piece by piece into buf[cap] (cut short, NUL-terminated, when it does not
   fit); len counts every byte offered, like snprintf's return */
typedef struct ipup__textbuf { char *buf; size_t cap, len; } ipup__textbuf;
static IPUP__PRINTF(2, 3) void ipup__textbuf_add(ipup__textbuf *b, const char *f, ...) {
    va_list ap;
    int n;
    va_start(ap, f);
    n = b->len < b->cap ? ipup_vsnprintf(b->buf + b->len, b->cap - b->len, f, ap)
                        : ipup_vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    if (n > 0) b->len += (size_t)n;
}
/* exact equality of two ids or tensor names (option names use ipup__name_eq) */
static int ipup__id_eq(const char *a, const char *b) {
    while (*a && *a == *b) { a++; b++; }
    return *a == *b;
}
static void ipup__id_copy(char *d, size_t n, const char *s) {
    size_t i = 0;
    if (!n) return;
    while (s[i] && i + 1 < n) { d[i] = s[i]; i++; }
    d[i] = 0;
}
/* a double for messages into out[cap] (cap >= 32): nan, inf, -inf, "huge" beyond 1e18, else
   fixed point rounded to 6 decimals with trailing zeros (and a bare point) dropped:
   "0.25", "-0.5", "1.5", "3" */
static const char *ipup__num(char *out, size_t cap, double v) {
    const char *sign = "";
    unsigned long long ip, fp;
    int k;
    if (v != v) return "nan";
    if (v < 0.0) { sign = "-"; v = -v; }
    if (v > 1e18) {
        ipup_snprintf(out, cap, "%s%s", sign, v > 1.7e308 ? "inf" : "huge");
        return out;
    }
    ip = (unsigned long long)v;
    fp = (unsigned long long)((v - (double)ip) * 1e6 + 0.5);
    if (fp >= 1000000ull) { ip++; fp -= 1000000ull; }
    k = ipup_snprintf(out, cap, "%s%llu.%06llu", sign, ip, fp);
    if (k < 0 || (size_t)k >= cap) return out;
    while (out[k - 1] == '0') out[--k] = 0;
    if (out[k - 1] == '.') out[--k] = 0;
    return out;
}
/* a non-negative time in micro-seconds with 3 decimals into out[cap] (cap >= 32), rounded
   half up: "12.345" */
static const char *ipup__us3(char *out, size_t cap, double v) {
    long long t = (long long)(v * 1000.0 + 0.5);
    if (t < 0) t = 0;
    ipup_snprintf(out, cap, "%lld.%03lld", t / 1000, t % 1000);
    return out;
}

static size_t ipup__round64(size_t n) { return (n + 63u) & ~(size_t)63u; }
/* x * y, or SIZE_MAX when it overflows size_t (every size below goes through this or
   ipup__alloc, so a saturated size ends as an overflow of the arena, never a wrap) */
static size_t ipup__mulz(size_t x, size_t y) {
    return (y && x > (size_t)-1 / y) ? (size_t)-1 : x * y;
}
static size_t ipup__round16(int32_t n) { return ((size_t)n + 15u) & ~(size_t)15u; }
static size_t ipup__round16z(size_t n) { return (n + 15u) & ~(size_t)15u; }

/* The outfeed streams (records delivered in order during the run, ipup__drain_stream) when
   there is a callback or the outputs travel; out_fl: floats of outputs a record carries (B x
   the loss layer's input width W in an outputs mode, else 0); a ring slot is the record
   (IPUP__REC_BYTES) then those floats. */
#define IPUP__REC_BYTES ((sizeof(ipup_outfeed_rec) + 63u) / 64u * 64u)
static int ipup__out_stream(const ipup_config *c) {
    return c->outfeed != NULL || c->outfeed_mode != IPUP_OUTFEED_LOSS;
}
static size_t ipup__out_floats(const ipup_config *c, int32_t B, int32_t W) {
    return c->outfeed_mode == IPUP_OUTFEED_LOSS ? 0u : ipup__mulz((size_t)B, (size_t)W);
}
static size_t ipup__out_slot(size_t out_fl) {
    size_t rows = ipup__mulz(out_fl, sizeof(float));
    if (!out_fl) return sizeof(ipup_outfeed_rec);
    return rows > (size_t)-1 - IPUP__REC_BYTES ? (size_t)-1 : IPUP__REC_BYTES + rows;
}
static size_t ipup__core_out(const ipup__core *e) {
    return ipup__out_floats(&e->cfg, e->B, e->classes);
}

#if defined(__cplusplus)
#define IPUP__RESTRICT __restrict
#else
#define IPUP__RESTRICT restrict
#endif

/* vectorised */
static int ipup__finite(const float *x, size_t n) { return ipup__finite_f32(n, x); }

/* >>errors: the message every failed call leaves; the guard of frozen pools */
/* Every public call on an emulator that returns an error code leaves a message in
   e->core.msg first (only a NULL e has nowhere to put one). The report calls take a const
   ipup_emu to promise that they change nothing of its state; the message buffer is the
   one exception, written through ipup__emsg. An ipup_emu is never a const object
   (ipup_init writes all of it), so writing there is defined. */
static char *ipup__emsg(const ipup_emu *e) { return (char *)(uintptr_t)e->core.msg; }
static IPUP__PRINTF(3, 4) int ipup__efail(const ipup_emu *e, int code, const char *f, ...) {
    va_list ap;
    if (!e) return code;
    va_start(ap, f);
    ipup__msgv(ipup__emsg(e), sizeof e->core.msg, 0, f, ap);
    va_end(ap);
    return code;
}
/* The largest value the step counter may hold in this configuration: Adam's bias
   correction takes the step count as an int (t + 1 <= INT32_MAX), and the global sample
   index ((t x R + r) x M + mb) x B of every step must fit 64 bits. A run refuses steps past
   it, ipup_set_step and ipup_state_load refuse a counter above it. */
static int64_t ipup__step_cap(const ipup__core *c) {
    int64_t by_samples = INT64_MAX / c->R / c->M / c->B; /* floor(INT64_MAX / (R M B)) */
    return by_samples < (int64_t)INT32_MAX ? by_samples : (int64_t)INT32_MAX;
}
/* IPUP_ERR_ARG with a message unless e is initialised (ipup_init succeeded) */
static int ipup__need_init(const ipup_emu *e, const char *what) {
    if (!e) return IPUP_ERR_ARG;
    if (e->initialised) return IPUP_OK;
    return ipup__efail(e, IPUP_ERR_ARG,
                       "%s: the emulator is not initialised (ipup_init has not succeeded on it); "
                       "call ipup_init first and check that it returns IPUP_OK",
                       what);
}

/* IPUP_ERR_FROZEN when e's pools are frozen (a successful ipup_init, no ipup_shutdown
   since): `what` would overwrite the live emulator and carve its pools again */
static int ipup__refuse_frozen(ipup_emu *e, const char *what, const char *instead) {
    if (e->frozen != e) return IPUP_OK;
    return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_FROZEN,
                      "%s on an emulator that is already initialised: its pools are frozen (carved "
                      "by ipup_init, in use); %scall ipup_shutdown first",
                      what, instead);
}
IPUPIPE_DEF const char *ipup_last_error(const ipup_emu *e) {
    return e ? e->core.msg : "NULL emulator";
}

IPUPIPE_DEF const char *ipup_warnings(const ipup_emu *e) { return e ? e->warnings : ""; }

/* >>ring: the ring's operations */
static uint32_t ipup__ring_cap(uint32_t n) {
    uint32_t c = 1;
    while (c < n) c <<= 1;
    return c;
}

IPUPIPE_DEF size_t ipup_ring_bytes(uint32_t cap, size_t slot_bytes) {
    if (slot_bytes > (size_t)-1 - 63u) return (size_t)-1; /* saturates: no buffer is that large */
    return ipup__mulz((size_t)cap, ipup__round64(slot_bytes));
}
IPUPIPE_DEF int ipup_ring_init(ipup_ring *r, void *buf, size_t buf_bytes, uint32_t cap,
                           size_t slot_bytes, uint32_t start) {
    if (!r || cap == 0 || (cap & (cap - 1)) != 0) return IPUP_ERR_ARG;
    if (buf_bytes < ipup_ring_bytes(cap, slot_bytes) || (!buf && slot_bytes))
        return IPUP_ERR_CAPACITY;
    IPUPIPE_MEMSET((void *)r, 0, sizeof *r);
    r->buf = (uint8_t *)buf;
    r->slot_bytes = ipup__round64(slot_bytes);
    r->cap = cap;
    r->mask = cap - 1;
    IPUP__STORE_REL(&r->head, start);
    IPUP__STORE_REL(&r->tail, start);
    IPUPIPE_SYNC_VAR(&r->head, sizeof(uint32_t));
    IPUPIPE_SYNC_VAR(&r->tail, sizeof(uint32_t));
    return IPUP_OK;
}
IPUPIPE_DEF void *ipup_ring_reserve(ipup_ring *r) {
    uint32_t h = IPUP__LOAD_ACQ(&r->head);
    uint32_t t = IPUP__LOAD_ACQ(&r->tail);
    uint32_t n = h - t;
    if (n >= r->cap) return NULL;
    IPUPIPE_HAPPENS_AFTER(&r->tail);
    if (n + 1 > r->peak) r->peak = n + 1;
    return r->buf + (size_t)(h & r->mask) * r->slot_bytes;
}
IPUPIPE_DEF void ipup_ring_commit(ipup_ring *r) {
    uint32_t h = IPUP__LOAD_ACQ(&r->head);
    IPUPIPE_HAPPENS_BEFORE(&r->head);
    IPUP__STORE_REL(&r->head, h + 1u);
}
IPUPIPE_DEF void *ipup_ring_peek(ipup_ring *r) {
    uint32_t t = IPUP__LOAD_ACQ(&r->tail);
    uint32_t h = IPUP__LOAD_ACQ(&r->head);
    if (h == t) return NULL;
    IPUPIPE_HAPPENS_AFTER(&r->head);
    return r->buf + (size_t)(t & r->mask) * r->slot_bytes;
}
IPUPIPE_DEF void ipup_ring_release(ipup_ring *r) {
    uint32_t t = IPUP__LOAD_ACQ(&r->tail);
    IPUPIPE_HAPPENS_BEFORE(&r->tail);
    IPUP__STORE_REL(&r->tail, t + 1u);
}
IPUPIPE_DEF uint32_t ipup_ring_count(ipup_ring *r) {
    uint32_t h = IPUP__LOAD_ACQ(&r->head);
    uint32_t t = IPUP__LOAD_ACQ(&r->tail);
    return h - t;
}

static void ipup__ring_reset(ipup_ring *r) {
    IPUP__STORE_REL(&r->head, (uint32_t)IPUPIPE_RING_START);
    IPUP__STORE_REL(&r->tail, (uint32_t)IPUPIPE_RING_START);
}

/* >>model: layer names, the model parser, shapes and FLOPs, the label region */
IPUPIPE_DEF const char *ipup_layer_kind_name(ipup_layer_kind kind) {
    switch (kind) {
    case IPUP_LAYER_DENSE: return "dense";
    case IPUP_LAYER_RELU: return "relu";
    case IPUP_LAYER_GELU: return "gelu";
    case IPUP_LAYER_CONV3X3: return "conv";
    case IPUP_LAYER_MAXPOOL2: return "maxpool2";
    case IPUP_LAYER_FLATTEN: return "flatten";
    case IPUP_LAYER_DROPOUT: return "dropout";
    case IPUP_LAYER_SOFTMAX_XENT: return "xent";
    case IPUP_LAYER_MSE: return "mse";
    case IPUP_LAYER_CONV2D: return "conv2d";
    case IPUP_LAYER_DWCONV: return "dw";
    case IPUP_LAYER_BATCHNORM: return "bn";
    case IPUP_LAYER_AVGPOOL: return "avgpool";
    case IPUP_LAYER_GAVGPOOL: return "gavgpool";
    case IPUP_LAYER_SIGMOID: return "sigmoid";
    case IPUP_LAYER_TANH: return "tanh";
    case IPUP_LAYER_LEAKY_RELU: return "leaky";
    case IPUP_LAYER_HSWISH: return "hswish";
    case IPUP_LAYER_BCE: return "bce";
    case IPUP_LAYER_RES_BEGIN: return "res_begin";
    case IPUP_LAYER_RES_SHORTCUT: return "res_shortcut";
    case IPUP_LAYER_RES_END: return "res_end";
    default: return "none";
    }
}
static int ipup__ascii_lower(int c) { return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c; }
IPUPIPE_DEF uint64_t ipup_layer_seed(uint64_t seed, int32_t layer) {
    return ipup_rng_u64(seed, 0x64726f706f7574ull /* "dropout" */, (uint64_t)(uint32_t)layer);
}

/* token [start, end) starts with prefix (case-insensitive); returns length of prefix or 0 */
static size_t ipup__token_prefix(const char *s, size_t n, const char *p) {
    const size_t len = ipup__strlen(p);
    size_t i;
    if (len > n) return 0;
    for (i = 0; i < len; i++)
        if (ipup__ascii_lower((unsigned char)s[i]) != p[i]) return 0;
    return len;
}
static int ipup__token_uint(const char *s, size_t n, int32_t *out) {
    long long v = 0;
    size_t i;
    if (n == 0) return 0;
    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (s[i] - '0');
        if (v > 0x7fffffffLL) return 0;
    }
    *out = (int32_t)v;
    return 1;
}
static int ipup__token_rate(const char *s, size_t n, float *out) {
    /* "0.25", ".5", "0" */
    long long ip = 0, fp = 0, div = 1;
    size_t i = 0;
    int digits = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        ip = ip * 10 + (s[i] - '0');
        i++;
        digits++;
        if (ip > 1) return 0;
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (div < 100000000LL) { fp = fp * 10 + (s[i] - '0'); div *= 10; }
            i++; digits++;
        }
    }
    if (i != n || !digits) return 0;
    *out = (float)ip + (float)fp / (float)div;
    return 1;
}

/* The model text's parser (the grammar: docs/api.md, "Model text"). A token is scanned
   from its start to the next ',', '|', ')' or the end; ipup__pt holds what an error
   message names: the 1-based character position and the token. */
typedef struct ipup__pt {
    const char *text;      /* the whole model text */
    const char *tok;       /* the token being parsed */
    size_t len;            /* its length without the ":..." suffix */
    char *msg;
    size_t msg_len;
    int32_t layer;         /* the index of the layer the token makes, or -1 (a bracket) */
} ipup__pt;
static int ipup__pt_fail(const ipup__pt *P, const char *tok, size_t len, const char *what) {
    char lay[24] = "";
    if (P->layer >= 0) ipup_snprintf(lay, sizeof lay, " (layer %d)", (int)P->layer);
    return ipup__fail(P->msg, P->msg_len, IPUP_ERR_PARSE,
                      "model \"%s\": at character %d, \"%.*s\"%s %s", P->text,
                      (int)(tok - P->text) + 1, (int)(len > 40 ? 40 : len), tok, lay, what);
}
/* digits at s[*i] (< n) into *v (1..2^31-1); advances *i; 0 when there are none */
static int ipup__scan_uint(const char *s, size_t n, size_t *i, int32_t *v) {
    size_t j = *i;
    if (j >= n || s[j] < '0' || s[j] > '9') return 0;
    while (j < n && s[j] >= '0' && s[j] <= '9') j++;
    if (!ipup__token_uint(s + *i, j - *i, v) || *v <= 0) return 0;
    *i = j;
    return 1;
}
/* "<A>[x<B>]" at s[*i]: *a = A, *b = B (or A) */
static int ipup__scan_pair(const char *s, size_t n, size_t *i, int32_t *a, int32_t *b) {
    if (!ipup__scan_uint(s, n, i, a)) return 0;
    *b = *a;
    if (*i < n && ipup__ascii_lower((unsigned char)s[*i]) == 'x') {
        (*i)++;
        if (!ipup__scan_uint(s, n, i, b)) return 0;
    }
    return 1;
}
/* the geometry after conv<N> / dw / avgpool: [k<KH>[x<KW>]][s<SH>[x<SW>]][same|valid];
   with_k: the kernel comes with 'k' (conv), else first and bare (dw, avgpool);
   with_pad: same|valid allowed. Returns 1 when the rest of the token is that. */
static int ipup__scan_geom(const char *s, size_t n, size_t i, ipup_layer *L, int with_k,
                           int with_pad) {
    if (with_k && i < n && ipup__ascii_lower((unsigned char)s[i]) == 'k') {
        i++;
        if (!ipup__scan_pair(s, n, &i, &L->kh, &L->kw)) return 0;
    } else if (!with_k && !ipup__scan_pair(s, n, &i, &L->kh, &L->kw)) {
        return 0;
    }
    if (i < n && ipup__ascii_lower((unsigned char)s[i]) == 's' &&
        !ipup__token_prefix(s + i, n - i, "same")) {
        i++;
        if (!ipup__scan_pair(s, n, &i, &L->sh, &L->sw)) return 0;
    }
    if (with_pad && ipup__token_prefix(s + i, n - i, "same") == 4) { L->same = 1; i += 4; }
    else if (with_pad && ipup__token_prefix(s + i, n - i, "valid") == 5) i += 5;
    return i == n;
}
static const char ipup__grammar_hint[] =
    "dense<N>, conv<N> (3x3), conv<N>k<KH>[x<KW>][s<SH>[x<SW>]][same|valid], "
    "dw<KH>[x<KW>][s<SH>[x<SW>]][same|valid], bn, relu, gelu, sigmoid, tanh, leaky[<alpha>], "
    "hswish, maxpool2, avgpool<KH>[x<KW>][s<SH>[x<SW>]], gavgpool, flatten, dropout[<rate>], "
    "res(LAYERS) or res(LAYERS|SHORTCUT), xent, mse, bce (\":frozen\" after a layer with "
    "parameters)";
/* one layer token P->tok (P->len characters, no suffix) into *L; 0 when not understood */
static int ipup__parse_token(const ipup__pt *P, ipup_layer *L) {
    const char *p = P->tok;
    size_t len = P->len, k = 0, i;
    if ((k = ipup__token_prefix(p, len, "dense")) != 0) {
        L->kind = IPUP_LAYER_DENSE;
        return ipup__token_uint(p + k, len - k, &L->units) && L->units > 0;
    }
    if ((k = ipup__token_prefix(p, len, "conv3x3_")) != 0 ||
        (k = ipup__token_prefix(p, len, "conv3x3")) != 0 ||
        (k = ipup__token_prefix(p, len, "conv")) != 0) {
        i = k;
        L->kind = IPUP_LAYER_CONV3X3;
        if (!ipup__scan_uint(p, len, &i, &L->units)) return 0;
        if (i == len) return 1;
        if (k != 4) return 0; /* conv3x3_<N> takes no geometry */
        L->kind = IPUP_LAYER_CONV2D;
        L->kh = L->kw = 1;
        return ipup__scan_geom(p, len, i, L, 1, 1);
    }
    if ((k = ipup__token_prefix(p, len, "dw")) != 0 && len > k && p[k] >= '0' && p[k] <= '9') {
        L->kind = IPUP_LAYER_DWCONV;
        return ipup__scan_geom(p, len, k, L, 0, 1);
    }
    if ((k = ipup__token_prefix(p, len, "avgpool")) != 0) {
        L->kind = IPUP_LAYER_AVGPOOL;
        return ipup__scan_geom(p, len, k, L, 0, 0);
    }
    if ((k = ipup__token_prefix(p, len, "leaky")) != 0) {
        L->kind = IPUP_LAYER_LEAKY_RELU;
        L->alpha = 0.3f;
        return len == k || (ipup__token_rate(p + k, len - k, &L->alpha) && L->alpha >= 0.0f);
    }
    if ((k = ipup__token_prefix(p, len, "dropout")) != 0) {
        L->kind = IPUP_LAYER_DROPOUT;
        L->rate = 0.5f;
        return len == k || (ipup__token_rate(p + k, len - k, &L->rate) && L->rate < 1.0f);
    }
    {
        static const struct { const char *name; ipup_layer_kind kind; } words[] = {
            {"relu", IPUP_LAYER_RELU}, {"gelu", IPUP_LAYER_GELU},
            {"maxpool", IPUP_LAYER_MAXPOOL2}, {"maxpool2", IPUP_LAYER_MAXPOOL2},
            {"flatten", IPUP_LAYER_FLATTEN}, {"xent", IPUP_LAYER_SOFTMAX_XENT},
            {"softmax_xent", IPUP_LAYER_SOFTMAX_XENT}, {"loss", IPUP_LAYER_SOFTMAX_XENT},
            {"mse", IPUP_LAYER_MSE}, {"bce", IPUP_LAYER_BCE}, {"bn", IPUP_LAYER_BATCHNORM},
            {"batchnorm", IPUP_LAYER_BATCHNORM}, {"gavgpool", IPUP_LAYER_GAVGPOOL},
            {"sigmoid", IPUP_LAYER_SIGMOID}, {"tanh", IPUP_LAYER_TANH},
            {"hswish", IPUP_LAYER_HSWISH}, {"hard_swish", IPUP_LAYER_HSWISH}};
        size_t w;
        for (w = 0; w < sizeof words / sizeof words[0]; w++) {
            size_t m = ipup__token_prefix(p, len, words[w].name);
            if (m && m == len && !words[w].name[m]) { L->kind = words[w].kind; return 1; }
        }
    }
    return 0;
}
static int ipup__has_params(ipup_layer_kind k) {
    return k == IPUP_LAYER_DENSE || k == IPUP_LAYER_CONV3X3 || k == IPUP_LAYER_CONV2D ||
           k == IPUP_LAYER_DWCONV || k == IPUP_LAYER_BATCHNORM;
}
/* the suffix sfx (sfx[0] == ':', sfx_len bytes) of the token P->tok: ":frozen" on a layer
   with parameters marks it frozen; anything else is refused with a message */
static int ipup__layer_suffix(const ipup__pt *P, const char *sfx, size_t sfx_len,
                              ipup_layer *L) {
    if (sfx_len != 7 || !ipup__token_prefix(sfx + 1, sfx_len - 1, "frozen"))
        return ipup__pt_fail(P, P->tok, P->len + sfx_len,
                             "has an unknown suffix: expected \":frozen\" (on a dense, conv, dw "
                             "or bn layer) or none");
    if (!ipup__has_params(L->kind))
        return ipup__pt_fail(P, P->tok, P->len + sfx_len,
                             "has no parameters to freeze: \":frozen\" goes on a dense, conv, "
                             "dw or bn layer only");
    L->frozen = 1;
    return IPUP_OK;
}
/* append L to model with a unique id: id (lowercased, cut to fit), then id_2, id_3 ... */
static int ipup__parse_add(const ipup__pt *P, ipup_model_desc *model, int32_t *n, ipup_layer *L,
                           const char *id, size_t id_len) {
    char base[IPUP_ID_MAX];
    size_t c = id_len < IPUP_ID_MAX - 4 ? id_len : IPUP_ID_MAX - 4, j;
    int32_t i;
    int dup = 1;
    if (*n >= IPUP_MAX_LAYERS)
        return ipup__fail(P->msg, P->msg_len, IPUP_ERR_CAPACITY,
                          "model \"%s\": more than IPUP_MAX_LAYERS (%d) layers (a res( block "
                          "adds 2 or 3 markers); define IPUP_MAX_LAYERS larger before the "
                          "include",
                          P->text, (int)IPUP_MAX_LAYERS);
    for (j = 0; j < c; j++) base[j] = (char)ipup__ascii_lower((unsigned char)id[j]);
    base[c] = 0;
    ipup__id_copy(L->id, sizeof L->id, base);
    for (;;) {
        int clash = 0;
        for (i = 0; i < *n; i++) if (ipup__id_eq(model->layers[i].id, L->id)) clash = 1;
        if (!clash) break;
        dup++;
        ipup_snprintf(L->id, sizeof L->id, "%s_%d", base, dup);
    }
    model->layers[(*n)++] = *L;
    return IPUP_OK;
}
/* a marker layer of a residual block */
static int ipup__parse_marker(const ipup__pt *P, ipup_model_desc *model, int32_t *n,
                              ipup_layer_kind kind, const char *id) {
    ipup_layer L;
    size_t len = 0;
    IPUPIPE_MEMSET(&L, 0, sizeof L);
    L.kind = kind;
    while (id[len]) len++;
    return ipup__parse_add(P, model, n, &L, id, len);
}

IPUPIPE_DEF int ipup_model_parse(const char *text, ipup_model_desc *model, char *msg,
                                 size_t msg_len) {
    const char *p;
    int32_t n = 0;
    int in_block = 0, shortcut = 0, rc;
    ipup__pt P;
    if (!text || !model)
        return ipup__fail(msg, msg_len, IPUP_ERR_ARG, "ipup_model_parse: NULL text or model");
    P.text = text; P.msg = msg; P.msg_len = msg_len; P.layer = -1;
    p = text;
    while (*p) {
        const char *q;
        size_t len, k, sfx;
        ipup_layer L;
        while (*p == ' ') p++;
        P.layer = -1;
        if (ipup__token_prefix(p, 4, "res(") == 4) {
            if (in_block)
                return ipup__pt_fail(&P, p, 4, "opens a residual block inside another: blocks "
                                               "do not nest; close the first with ')'");
            if ((rc = ipup__parse_marker(&P, model, &n, IPUP_LAYER_RES_BEGIN, "res")) != 0)
                return rc;
            in_block = 1; shortcut = 0;
            p += 4;
            while (*p == ' ') p++;
        }
        for (q = p; *q && *q != ',' && *q != '|' && *q != ')' && *q != '('; q++) {}
        len = (size_t)(q - p);
        while (len && p[len - 1] == ' ') len--;
        for (k = 0; k < len && p[k] != ':'; k++) {}
        sfx = len - k;
        P.tok = p; P.len = k; P.layer = n;
        IPUPIPE_MEMSET(&L, 0, sizeof L);
        if (*q == '(' || !ipup__parse_token(&P, &L)) {
            const char *what = len ? "is not understood" : "is empty (no layer)";
            char hint[640];
            ipup_snprintf(hint, sizeof hint, "%s: expected one of %s", what, ipup__grammar_hint);
            return ipup__pt_fail(&P, p, *q == '(' ? len + 1 : len, hint);
        }
        if (sfx && (rc = ipup__layer_suffix(&P, p + k, sfx, &L)) != IPUP_OK) return rc;
        if ((rc = ipup__parse_add(&P, model, &n, &L, p, k)) != IPUP_OK) return rc;
        P.layer = -1;
        p = q;
        while (*p == ')' || *p == '|') { /* a block's shortcut or end */
            if (!in_block || (*p == '|' && shortcut))
                return ipup__pt_fail(&P, p, 1, !in_block ? "is outside a residual block: "
                                                           "expected ',' between layers"
                                                         : "starts a second shortcut: a block "
                                                           "has at most one '|'");
            if (*p == '|') {
                if ((rc = ipup__parse_marker(&P, model, &n, IPUP_LAYER_RES_SHORTCUT,
                                             "shortcut")) != 0)
                    return rc;
                shortcut = 1;
                p++;
                break; /* the shortcut's first layer follows (no ',') */
            }
            if ((rc = ipup__parse_marker(&P, model, &n, IPUP_LAYER_RES_END, "add")) != 0)
                return rc;
            in_block = 0;
            p++;
            while (*p == ' ') p++;
            if (*p && *p != ',')
                return ipup__pt_fail(&P, p, 1, "follows a residual block: expected ',' or the "
                                               "end of the text");
        }
        if (*p == ',' && p[-1] != '|') {
            p++;
            if (!*p) return ipup__pt_fail(&P, p - 1, 1, "ends the text: expected a layer after it");
        }
    }
    if (in_block)
        return ipup__fail(msg, msg_len, IPUP_ERR_PARSE,
                          "model \"%s\": a residual block \"res(\" is not closed: expected ')' "
                          "at character %d (the end)",
                          text, (int)(p - text) + 1);
    if (n == 0)
        return ipup__fail(msg, msg_len, IPUP_ERR_PARSE,
                          "empty model text: give layers such as \"dense256,relu,dense10,xent\"");
    model->n_layers = n;
    if (msg && msg_len) msg[0] = 0;
    return IPUP_OK;
}

/* ipup_model_info's last checks: the frozen flags (layers with parameters only; a frozen
   layer computes no weight gradient, so flops_bwd_dw = 0), at least one trained layer, and
   a loss as the last layer */
static int ipup__info_final(const ipup_model_desc *m, ipup_layer_info *info, int32_t n_param_layers,
                            char *msg, size_t msg_len) {
    int32_t l, trained = 0;
    ipup_layer_kind last = m->layers[m->n_layers - 1].kind;
    for (l = 0; l < m->n_layers; l++) {
        ipup_layer_info *I = &info[l];
        if (m->layers[l].frozen && !I->n_w)
            return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                              "layer %d (%s): %s has no parameters to "
                              "freeze; set frozen on dense, conv, dw or bn layers only",
                              (int)l, m->layers[l].id, ipup_layer_kind_name(m->layers[l].kind));
        I->frozen = m->layers[l].frozen ? 1 : 0;
        if (I->frozen) I->flops_bwd_dw = 0;
        else if (I->n_w) trained++;
    }
    if (last != IPUP_LAYER_SOFTMAX_XENT && last != IPUP_LAYER_MSE && last != IPUP_LAYER_BCE)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "the last layer must be a loss: softmax cross-entropy (xent), mean "
                          "squared error (mse) or binary cross-entropy (bce); add one to the "
                          "model");
    if (!n_param_layers)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "the model has no dense or conv layer: nothing to train");
    if (!trained)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "every dense and conv layer of the model is frozen: nothing to train; "
                          "drop \":frozen\" (frozen = 0) from at least one");
    if (msg && msg_len) msg[0] = 0;
    return IPUP_OK;
}

/* ipup_model_info's dense or conv3x3 layer l (L): its parameter counts, FLOPs and stash
   floats into I, its output shape into *h, *w, *c (its input's on entry, n = their
   product) */
static int ipup__weight_layer_info(const ipup_layer *L, int32_t l, int64_t n, int32_t *h,
                                   int32_t *w, int32_t *c, ipup_layer_info *I, char *msg,
                                   size_t msg_len) {
    int64_t big;
    if (L->kind == IPUP_LAYER_DENSE) {
        if (L->units <= 0)
            return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                              "layer %d (%s): dense needs units >= 1", (int)l, L->id);
        big = n * L->units;
        if (big > 0x7fffffff)
            return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                              "layer %d (%s): weight matrix %lld x %d is too large",
                              (int)l, L->id, (long long)n, (int)L->units);
        *h = 1; *w = 1; *c = L->units;
        I->n_w = (int32_t)big; I->n_b = L->units;
        I->macs = big;
        I->flops_fwd = 2 * big + L->units;
        I->flops_bwd_dx = 2 * big;
        I->flops_bwd_dw = 2 * big + L->units;
        I->stash_floats = (int32_t)n;
        return IPUP_OK;
    }
    if (L->units <= 0)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "layer %d (%s): conv needs channels >= 1", (int)l, L->id);
    if (*h < 3 || *w < 3)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "layer %d (%s): conv3x3 needs an input of at least 3x3, "
                          "it gets %dx%d", (int)l, L->id, (int)*h, (int)*w);
    big = (int64_t)9 * *c * L->units;
    if (big > 0x7fffffff)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "layer %d (%s): conv weights too large", (int)l, L->id);
    if ((int64_t)(*h - 2) * (*w - 2) > (INT64_MAX / 4) / big) /* FLOPs must fit 64 bits */
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "layer %d (%s): conv of %d x %d positions x %lld weights is too large "
                          "(its FLOPs pass 2^61); use fewer channels or a smaller input",
                          (int)l, L->id, (int)(*h - 2), (int)(*w - 2), (long long)big);
    I->n_w = (int32_t)big; I->n_b = L->units;
    *h -= 2; *w -= 2; *c = L->units;
    I->macs = big * *h * *w;
    I->kh = 3; I->kw = 3; I->sh = 1; I->sw = 1;
    I->flops_fwd = 2 * big * *h * *w + (int64_t)*h * *w * *c;
    I->flops_bwd_dx = 2 * big * *h * *w;
    I->flops_bwd_dw = 2 * big * *h * *w + (int64_t)*h * *w * *c;
    I->stash_floats = (int32_t)n;
    return IPUP_OK;
}

/* Keras' output size and 'same' padding before (tf.nn.conv2d's rule: out = ceil(in / s),
   padding in total max((out - 1) s + k - in, 0), the smaller half first); valid: out =
   (in - k) / s + 1. 0 when the kernel does not fit. */
static int32_t ipup__conv_out(int32_t in, int32_t k, int32_t st, int same, int32_t *pad) {
    int64_t out, tot;
    *pad = 0;
    if (!same) return in < k ? 0 : (in - k) / st + 1;
    out = ((int64_t)in + st - 1) / st;
    tot = (out - 1) * st + k - in;
    *pad = tot > 0 ? (int32_t)(tot / 2) : 0;
    return (int32_t)out;
}
/* a residual block being read by ipup_model_info: its input shape, its main branch's
   output shape, where it began */
typedef struct ipup__blk {
    int32_t open, begin, shortcut;
    int32_t h, w, c;       /* the block input */
    int32_t mh, mw, mc;    /* the main branch's output (at the shortcut marker) */
} ipup__blk;
static int ipup__geom_info(const ipup_layer *L, int32_t l, int64_t n, int32_t *h, int32_t *w,
                           int32_t *c, ipup_layer_info *I, char *msg, size_t msg_len) {
    const int conv = L->kind == IPUP_LAYER_CONV2D, dw = L->kind == IPUP_LAYER_DWCONV;
    const int32_t co = conv ? L->units : *c;
    int32_t oh, ow;
    int64_t k, big;
    I->kh = L->kh > 0 ? L->kh : 1; I->kw = L->kw > 0 ? L->kw : 1;
    if (L->kind == IPUP_LAYER_GAVGPOOL) { I->kh = *h; I->kw = *w; }
    I->sh = L->sh > 0 ? L->sh : (L->kind == IPUP_LAYER_AVGPOOL ? I->kh : 1);
    I->sw = L->sw > 0 ? L->sw : (L->kind == IPUP_LAYER_AVGPOOL ? I->kw : 1);
    if (L->kind == IPUP_LAYER_GAVGPOOL) { I->sh = *h; I->sw = *w; }
    if (conv && L->units <= 0)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "layer %d (%s): conv needs channels >= 1", (int)l, L->id);
    oh = ipup__conv_out(*h, I->kh, I->sh, (conv || dw) && L->same, &I->pad_top);
    ow = ipup__conv_out(*w, I->kw, I->sw, (conv || dw) && L->same, &I->pad_left);
    if (oh <= 0 || ow <= 0)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "layer %d (%s): a %dx%d kernel does not fit its %dx%d input with "
                          "'valid' padding; use a smaller kernel, 'same' padding or a larger "
                          "input",
                          (int)l, L->id, (int)I->kh, (int)I->kw, (int)*h, (int)*w);
    k = (int64_t)I->kh * I->kw;
    big = conv ? k * *c * co : dw ? k * *c : 0;
    if (big > 0x7fffffff || k > 0x7fffffff / (conv ? 1 : *c) ||
        (int64_t)oh * ow > (INT64_MAX / 4) / (big + k * *c + 1))
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "layer %d (%s): its weights or FLOPs are too large; use fewer channels "
                          "or a smaller input", (int)l, L->id);
    *h = oh; *w = ow; *c = co;
    if (conv || dw) {
        I->n_w = (int32_t)big; I->n_b = co;
        I->macs = big * oh * ow;
        I->flops_fwd = 2 * I->macs + (int64_t)oh * ow * co;
        I->flops_bwd_dx = 2 * I->macs;
        I->flops_bwd_dw = 2 * I->macs + (int64_t)oh * ow * co;
        I->stash_floats = (int32_t)n;
    } else { /* average pools: one add per input element, a scale per output */
        I->flops_fwd = n + (int64_t)oh * ow * co;
        I->flops_bwd_dx = n + (int64_t)oh * ow * co;
    }
    return IPUP_OK;
}
/* the marker layers of a residual block: shapes and the checks of ipup_model_info */
static int ipup__res_info(const ipup_layer *L, int32_t l, int64_t n, int32_t *h, int32_t *w,
                          int32_t *c, ipup_layer_info *I, ipup__blk *b, char *msg,
                          size_t msg_len) {
    if (L->kind == IPUP_LAYER_RES_BEGIN) {
        if (b->open)
            return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                              "layer %d (%s): a residual block inside the block of layer %d; "
                              "blocks do not nest", (int)l, L->id, (int)b->begin);
        b->open = 1; b->begin = l; b->shortcut = 0;
        b->h = *h; b->w = *w; b->c = *c;
        return IPUP_OK;
    }
    if (!b->open || (L->kind == IPUP_LAYER_RES_SHORTCUT && b->shortcut))
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "layer %d (%s): %s without an open residual block (res_begin first, "
                          "at most one shortcut, then res_end)",
                          (int)l, L->id, ipup_layer_kind_name(L->kind));
    if (l == b->begin + 1)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "layer %d (%s): the residual block of layer %d has no layer in its "
                          "main branch", (int)l, L->id, (int)b->begin);
    if (L->kind == IPUP_LAYER_RES_SHORTCUT) {
        b->shortcut = l;
        b->mh = *h; b->mw = *w; b->mc = *c;
        *h = b->h; *w = b->w; *c = b->c;
        return IPUP_OK;
    }
    if (b->shortcut && b->shortcut == l - 1)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "layer %d (%s): the shortcut branch is empty; leave out '|' for an "
                          "identity shortcut", (int)l, L->id);
    {
        const int32_t eh = b->shortcut ? b->mh : b->h, ew = b->shortcut ? b->mw : b->w,
                      ec = b->shortcut ? b->mc : b->c;
        if (eh != *h || ew != *w || ec != *c)
            return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                              "layer %d (%s): the residual block of layer %d adds its main "
                              "branch's %dx%dx%d output to %s %dx%dx%d; make the shapes equal "
                              "(a strided 1x1 conv shortcut: res(LAYERS|conv<C>k1s<S>))",
                              (int)l, L->id, (int)b->begin, (int)(b->shortcut ? b->mh : *h),
                              (int)(b->shortcut ? b->mw : *w), (int)(b->shortcut ? b->mc : *c),
                              b->shortcut ? "the shortcut's" : "the block input's",
                              (int)(b->shortcut ? *h : b->h), (int)(b->shortcut ? *w : b->w),
                              (int)(b->shortcut ? *c : b->c));
    }
    b->open = 0;
    I->flops_fwd = n; /* the add; its backward is a copy and an add */
    I->flops_bwd_dx = n;
    return IPUP_OK;
}
/* ipup_model_info's layers of the kinds from IPUP_LAYER_CONV2D on */
static int ipup__more_info(const ipup_model_desc *m, int32_t l, int64_t n, int32_t *h,
                           int32_t *w, int32_t *c, ipup_layer_info *I, ipup__blk *b, char *msg,
                           size_t msg_len) {
    const ipup_layer *L = &m->layers[l];
    switch (L->kind) {
    case IPUP_LAYER_CONV2D:
    case IPUP_LAYER_DWCONV:
    case IPUP_LAYER_AVGPOOL:
    case IPUP_LAYER_GAVGPOOL:
        return ipup__geom_info(L, l, n, h, w, c, I, msg, msg_len);
    case IPUP_LAYER_BATCHNORM: /* normalise, scale, shift; the backward's two sums */
        I->n_w = *c; I->n_b = *c; I->n_nontrain = 2 * *c;
        I->flops_fwd = 4 * n; I->flops_bwd_dx = 6 * n; I->flops_bwd_dw = 3 * n;
        I->stash_floats = (int32_t)n;
        return IPUP_OK;
    case IPUP_LAYER_SIGMOID: /* exp, add, divide; y (1 - y) dy */
    case IPUP_LAYER_TANH:
        I->flops_fwd = 4 * n; I->flops_bwd_dx = 7 * n; I->stash_floats = (int32_t)n;
        return IPUP_OK;
    case IPUP_LAYER_LEAKY_RELU:
        I->flops_fwd = 2 * n; I->flops_bwd_dx = 2 * n; I->stash_floats = (int32_t)n;
        return IPUP_OK;
    case IPUP_LAYER_HSWISH:
        I->flops_fwd = 5 * n; I->flops_bwd_dx = 5 * n; I->stash_floats = (int32_t)n;
        return IPUP_OK;
    case IPUP_LAYER_BCE:
        if (l != m->n_layers - 1)
            return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                              "layer %d (%s): the binary cross-entropy loss (bce) must be the "
                              "last layer", (int)l, L->id);
        *h = 1; *w = 1; *c = 1;
        I->flops_fwd = 12 * n; I->flops_bwd_dx = 0;
        I->stash_floats = (int32_t)n; /* dlogits */
        return IPUP_OK;
    case IPUP_LAYER_RES_BEGIN:
    case IPUP_LAYER_RES_SHORTCUT:
    case IPUP_LAYER_RES_END:
        return ipup__res_info(L, l, n, h, w, c, I, b, msg, msg_len);
    default:
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG, "layer %d: unknown kind %d", (int)l,
                          (int)L->kind);
    }
}

/* 1 when an h x w x c tensor (each >= 1) holds at most 2^31-1 values; computed without
   overflow, so a shape whose product would wrap is refused too */
static int ipup__shape_fits(int32_t h, int32_t w, int32_t c) {
    int64_t hw = (int64_t)h * (int64_t)w; /* < 2^62: no overflow */
    return hw <= 0x7fffffff && hw * (int64_t)c <= 0x7fffffff;
}

IPUPIPE_DEF int ipup_model_info(const ipup_model_desc *m, ipup_layer_info *info, int32_t n_info,
                            char *msg, size_t msg_len) {
    int32_t h, w, c, l, n_param_layers = 0;
    ipup__blk blk;
    int rc;
    IPUPIPE_MEMSET(&blk, 0, sizeof blk);
    if (!m || !info)
        return ipup__fail(msg, msg_len, IPUP_ERR_ARG, "ipup_model_info: NULL model or info");
    if (m->n_layers <= 0 || m->n_layers > IPUP_MAX_LAYERS)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "the model has %d layers; it needs 1..%d (IPUP_MAX_LAYERS)",
                          (int)m->n_layers, (int)IPUP_MAX_LAYERS);
    if (n_info < m->n_layers)
        return ipup__fail(msg, msg_len, IPUP_ERR_CAPACITY,
                          "ipup_model_info: info has %d entries, the model %d layers", (int)n_info,
                          (int)m->n_layers);
    h = m->in_h; w = m->in_w; c = m->in_c;
    if (h <= 0 || w <= 0 || c <= 0)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "model input shape (%d, %d, %d) is invalid: all three must be >= 1 (a "
                          "flat vector of N features is 1, 1, N)",
                          (int)h, (int)w, (int)c);
    if (!ipup__shape_fits(h, w, c))
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "model input shape (%d, %d, %d) is more than 2^31-1 values; give a "
                          "smaller input",
                          (int)h, (int)w, (int)c);
    for (l = 0; l < m->n_layers; l++) {
        const ipup_layer *L = &m->layers[l];
        ipup_layer_info *I = &info[l];
        int64_t n;
        IPUPIPE_MEMSET(I, 0, sizeof *I);
        I->kind = L->kind;
        I->in_h = h; I->in_w = w; I->in_c = c;
        n = (int64_t)h * w * c;
        I->in_n = (int32_t)n;
        switch (L->kind) {
        case IPUP_LAYER_DENSE:
        case IPUP_LAYER_CONV3X3:
            rc = ipup__weight_layer_info(L, l, n, &h, &w, &c, I, msg, msg_len);
            if (rc) return rc;
            break;
        case IPUP_LAYER_RELU:
            I->flops_fwd = n; I->flops_bwd_dx = n; I->stash_floats = (int32_t)n;
            break;
        case IPUP_LAYER_GELU: /* tanh form: ~8 flops + tanh forward, ~14 backward (estimate) */
            I->flops_fwd = 8 * n; I->flops_bwd_dx = 14 * n; I->stash_floats = (int32_t)n;
            break;
        case IPUP_LAYER_MAXPOOL2:
            if (h < 2 || w < 2)
                return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                                  "layer %d (%s): maxpool2 needs an "
                                  "input of at least 2x2, it gets %dx%d",
                                  (int)l, L->id, (int)h, (int)w);
            h /= 2; w /= 2;
            I->flops_fwd = n; I->flops_bwd_dx = n; I->stash_floats = (int32_t)n;
            break;
        case IPUP_LAYER_FLATTEN:
            h = 1; w = 1; c = (int32_t)n;
            break;
        case IPUP_LAYER_DROPOUT:
            if (!(L->rate >= 0.0f && L->rate < 1.0f))
                return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                                  "layer %d (%s): dropout rate must be in [0, 1)", (int)l, L->id);
            I->flops_fwd = 2 * n; I->flops_bwd_dx = 2 * n;
            break;
        case IPUP_LAYER_SOFTMAX_XENT:
            if (l != m->n_layers - 1)
                return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                                  "layer %d (%s): the softmax "
                                  "cross-entropy loss must be the last layer",
                                  (int)l, L->id);
            if (n < 2)
                return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                                  "layer %d (%s): the loss needs at least 2 classes, it gets %lld",
                                  (int)l, L->id, (long long)n);
            h = 1; w = 1; c = 1;
            I->flops_fwd = 6 * n; I->flops_bwd_dx = 0;
            I->stash_floats = (int32_t)n; /* dlogits */
            break;
        case IPUP_LAYER_MSE: /* difference, square, add; the gradient too, in the forward */
            if (l != m->n_layers - 1)
                return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                                  "layer %d (%s): the "
                                  "mean-squared-error loss (mse) must be the last layer",
                                  (int)l, L->id);
            h = 1; w = 1; c = 1;
            I->flops_fwd = 5 * n; I->flops_bwd_dx = 0;
            I->stash_floats = (int32_t)n; /* dpred */
            break;
        default:
            rc = ipup__more_info(m, l, n, &h, &w, &c, I, &blk, msg, msg_len);
            if (rc) return rc;
            break;
        }
        I->out_h = h; I->out_w = w; I->out_c = c;
        if (!ipup__shape_fits(h, w, c))
            return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                              "layer %d (%s): its output %d x %d x %d is more than 2^31-1 values; "
                              "use fewer units or channels",
                              (int)l, L->id, (int)h, (int)w, (int)c);
        I->out_n = h * w * c;
        if (I->n_w) n_param_layers++;
    }
    if (blk.open)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "layer %d (%s): its residual block is not closed; add a res_end "
                          "(')' in the model text)",
                          (int)blk.begin, m->layers[blk.begin].id);
    return ipup__info_final(m, info, n_param_layers, msg, msg_len);
}
/* The label region of a stash entry and of a forward ring slot holds, per sample, one int32
   label (softmax cross-entropy) or target_width float targets (mse: the loss layer's input
   width); ipup__target_w is 0 for a class loss. */
static int32_t ipup__target_w(const ipup__core *e) {
    const ipup_layer_kind k = e->layers[e->n_layers - 1].info.kind;
    return (k == IPUP_LAYER_MSE || k == IPUP_LAYER_BCE) ? e->classes : 0;
}
static int32_t ipup__lab_w(const ipup__core *e) {
    return ipup__target_w(e) ? ipup__target_w(e) : 1;
}
static size_t ipup__lab_bytes(const ipup__core *e) {
    return (size_t)e->B * (size_t)ipup__lab_w(e) * sizeof(float);
}
static int ipup__is_loss(ipup_layer_kind k) {
    return k == IPUP_LAYER_SOFTMAX_XENT || k == IPUP_LAYER_MSE || k == IPUP_LAYER_BCE;
}

/* >>partition: the balanced split (two dynamic programmes), replicas from IPUs */
/* need_dx[l]: the backward of layer l must produce its input gradient (an earlier layer
   has parameters that train) */
static void ipup__need_dx(const ipup_layer_info *info, int32_t L, int32_t *need_dx) {
    int32_t l, any = 0;
    for (l = 0; l < L; l++) {
        need_dx[l] = any;
        if (info[l].n_w && !info[l].frozen) any = 1; /* a frozen layer needs no gradient */
    }
}

/* the cost of layer l in a stage (ipup_balance_stages): its forward, weight-gradient and,
   when an earlier layer has parameters, input-gradient FLOPs, + 1 (no layer is free) */
static int64_t ipup__layer_cost(const ipup_layer_info *I, int32_t need_dx) {
    return I->flops_fwd + I->flops_bwd_dw + (need_dx ? I->flops_bwd_dx : 0) + 1;
}
/* sums of squared stage costs, exact: each square < 2^126 (a cost fits int64) and so is
   their sum (at most the square of the total cost) */
typedef struct ipup__u128 { uint64_t hi, lo; } ipup__u128;
static ipup__u128 ipup__u128_add_sq(ipup__u128 a, uint64_t c) {
    uint64_t c0 = c & 0xffffffffu, c1 = c >> 32;
    uint64_t p00 = c0 * c0, p01 = c0 * c1, p11 = c1 * c1;
    uint64_t lo = p00 + (p01 << 33);                      /* c^2 = p11 2^64 + p01 2^33 + p00 */
    uint64_t hi = p11 + (p01 >> 31) + (lo < p00 ? 1u : 0u);
    a.lo += lo;
    a.hi += hi + (a.lo < lo ? 1u : 0u);
    return a;
}
static int ipup__u128_less(ipup__u128 a, ipup__u128 b) {
    return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

/* A stage may not start at layer q when q falls inside a residual block (after its
   res_begin, at or before its res_end): the block's skip tensor stays on one IPU. Returns
   the block's res_begin, or -1 when q may start a stage. */
static int32_t ipup__split_in_block(const ipup_layer_kind *kind, int32_t L, int32_t q) {
    int32_t l, open = -1;
    for (l = 0; l < q && l < L; l++) {
        if (kind[l] == IPUP_LAYER_RES_BEGIN) open = l;
        else if (kind[l] == IPUP_LAYER_RES_END) open = -1;
    }
    return open;
}
/* cost[j] = cost of layers 0..j-1; returns the smallest possible largest stage cost of
   `stages` contiguous non-empty stages (dynamic programme over prefixes) whose starts q
   have bad[q] == 0; -1 when there is none */
static int64_t ipup__minmax_stage_cost(const int64_t *cost, int32_t L, int32_t stages,
                                       const int8_t *bad) {
    int64_t row[2][IPUP_MAX_LAYERS + 1];
    int32_t k, j, q;
    for (j = 0; j <= L; j++) row[1][j] = cost[j]; /* one stage: layers 0..j-1 */
    for (k = 2; k <= stages; k++) {
        int64_t *prev = row[(k - 1) & 1], *cur = row[k & 1];
        for (j = 0; j <= L; j++) {
            cur[j] = -1;
            for (q = k - 1; q < j; q++) {
                int64_t v;
                if (bad[q] || prev[q] < 0) continue;
                v = prev[q] > cost[j] - cost[q] ? prev[q] : cost[j] - cost[q];
                if (cur[j] < 0 || v < cur[j]) cur[j] = v;
            }
        }
    }
    return row[stages & 1][L];
}

IPUPIPE_DEF int ipup_balance_stages(const ipup_model_desc *model, int32_t stages, int32_t *split,
                                    char *msg, size_t msg_len) {
    ipup_layer_info info[IPUP_MAX_LAYERS];
    int32_t need_dx[IPUP_MAX_LAYERS], arg[IPUP_MAX_LAYERS + 1][IPUP_MAX_LAYERS + 1], L, l, k, j, q;
    int64_t cost[IPUP_MAX_LAYERS + 1], top;
    ipup_layer_kind kind[IPUP_MAX_LAYERS];
    int8_t bad[IPUP_MAX_LAYERS + 1];
    ipup__u128 row[2][IPUP_MAX_LAYERS + 1];
    const ipup__u128 none = {~(uint64_t)0, ~(uint64_t)0}; /* no split of the prefix fits */
    int rc;
    if (!model) return ipup__fail(msg, msg_len, IPUP_ERR_ARG, "ipup_balance_stages: model is NULL");
    if (stages < 1)
        return ipup__fail(msg, msg_len, IPUP_ERR_ARG,
                          "ipup_balance_stages: %d stages; give 1 or more (at most one per layer)",
                          (int)stages);
    if (!split && stages > 1)
        return ipup__fail(msg, msg_len, IPUP_ERR_ARG,
                          "ipup_balance_stages: split is NULL; it needs stages - 1 = %d entries",
                          (int)(stages - 1));
    if ((rc = ipup_model_info(model, info, IPUP_MAX_LAYERS, msg, msg_len)) != IPUP_OK) return rc;
    L = model->n_layers;
    if (stages > L)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "%d stages but the model has only %d layers: every stage needs at least "
                          "one layer; use at most %d stages",
                          (int)stages, (int)L, (int)L);
    ipup__need_dx(info, L, need_dx);
    cost[0] = 0;
    for (l = 0; l < L; l++) cost[l + 1] = cost[l] + ipup__layer_cost(&info[l], need_dx[l]);
    for (l = 0; l < L; l++) kind[l] = info[l].kind;
    for (l = 0, j = 0; l <= L; l++) {
        bad[l] = (int8_t)(ipup__split_in_block(kind, L, l) >= 0);
        j += l > 0 && l < L && !bad[l];
    }
    if (stages - 1 > j)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "%d stages: the model has only %d places to split between layers "
                          "outside its residual blocks (a split never falls inside a block); "
                          "use at most %d stages",
                          (int)stages, (int)j, (int)(j + 1));
    /* 1: the smallest largest stage cost; 2: among the splits whose every stage costs at
       most that (so whose largest stage is exactly that), the smallest sum of squares */
    top = ipup__minmax_stage_cost(cost, L, stages, bad);
    for (j = 0; j <= L; j++) {
        ipup__u128 zero = {0, 0};
        row[1][j] = (j >= 1 && cost[j] <= top) ? ipup__u128_add_sq(zero, (uint64_t)cost[j]) : none;
    }
    for (k = 2; k <= stages; k++) {
        ipup__u128 *prev = row[(k - 1) & 1], *cur = row[k & 1];
        for (j = 0; j <= L; j++) {
            cur[j] = none;
            arg[k][j] = -1;
            for (q = k - 1; q < j; q++) {
                ipup__u128 v;
                if (bad[q] || cost[j] - cost[q] > top ||
                    (prev[q].hi == none.hi && prev[q].lo == none.lo))
                    continue;
                v = ipup__u128_add_sq(prev[q], (uint64_t)(cost[j] - cost[q]));
                if (arg[k][j] < 0 || ipup__u128_less(v, cur[j])) { cur[j] = v; arg[k][j] = q; }
            }
        }
    }
    for (k = stages, j = L; k >= 2; k--) {
        split[k - 2] = arg[k][j];
        j = arg[k][j];
    }
    if (msg && msg_len) msg[0] = 0;
    return IPUP_OK;
}

IPUPIPE_DEF int ipup_replicas_for_ipus(int32_t total_ipus, int32_t ipus_per_replica,
                                       int32_t *replicas, char *msg, size_t msg_len) {
    int32_t r, k, n = 0;
    char alts[96] = "none: raise IPUP_MAX_IPUS";
    if (!replicas)
        return ipup__fail(msg, msg_len, IPUP_ERR_ARG, "ipup_replicas_for_ipus: replicas is NULL");
    if (total_ipus < 1 || ipus_per_replica < 1)
        return ipup__fail(msg, msg_len, IPUP_ERR_ARG,
                          "ipup_replicas_for_ipus: %d IPUs, %d per replica: both must be >= 1",
                          (int)total_ipus, (int)ipus_per_replica);
    for (k = 1; k <= IPUP_MAX_REPLICAS && (int64_t)k * ipus_per_replica <= IPUP_MAX_IPUS &&
                n < (int32_t)sizeof alts - 16; k++)
        n += ipup_snprintf(alts + n, sizeof alts - (size_t)n, "%s%d", k > 1 ? ", " : "",
                           (int)(k * ipus_per_replica));
    if (total_ipus % ipus_per_replica != 0)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "%d IPUs: the model is sharded over %d IPU%s per replica, so the IPU "
                          "count must be a multiple of %d "
                          "(it is replicated IPUs / %d times); use one of %s",
                          (int)total_ipus, (int)ipus_per_replica, ipus_per_replica == 1 ? "" : "s",
                          (int)ipus_per_replica, (int)ipus_per_replica, alts);
    r = total_ipus / ipus_per_replica;
    if (r > IPUP_MAX_REPLICAS || total_ipus > IPUP_MAX_IPUS)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "%d IPUs of %d per replica would be %d replicas: at most "
                          "IPUP_MAX_REPLICAS = %d and IPUP_MAX_IPUS = %d "
                          "(define them larger before the include); use one of %s",
                          (int)total_ipus, (int)ipus_per_replica, (int)r, (int)IPUP_MAX_REPLICAS,
                          (int)IPUP_MAX_IPUS, alts);
    *replicas = r;
    if (msg && msg_len) msg[0] = 0;
    return IPUP_OK;
}

/* >>cost-model: op, exchange, sync and update times per step; predict's figures */
static void ipup__cost_defaults(ipup_cost_model *c, const ipup_cost_model *in) {
    *c = *in;
    if (!(c->clock_hz > 0)) c->clock_hz = 1.33e9;
    if (!(c->flops_per_cycle > 0)) c->flops_per_cycle = 47104.0;
    if (!(c->efficiency > 0)) c->efficiency = 0.25;
    if (!(c->link_bytes_per_s > 0)) c->link_bytes_per_s = 64e9;
    if (!(c->stream_bytes_per_s > 0)) c->stream_bytes_per_s = 20e9;
    if (!(c->host_bytes_per_s > 0)) c->host_bytes_per_s = 16e9;
    if (!(c->sync_cycles > 0)) c->sync_cycles = 1000.0;
    /* the Keras tutorial's fit (COST MODEL): L = (3 ms - 175 us) * 937 / 936 */
    if (c->launch_seconds == 0.0) c->launch_seconds = (3e-3 - 175e-6) * 937.0 / 936.0;
    else if (c->launch_seconds < 1e-12) c->launch_seconds = 0.0; /* IPUP_LAUNCH_OFF */
}
/* cfg.cost's fields that are refused rather than defaulted (the launch cost: a negative
   one would be a sentinel nobody documented) */
static int ipup__check_cost(const ipup_cost_model *c, char *msg, size_t ml) {
    char num[48];
    if (!(c->launch_seconds >= 0.0 && c->launch_seconds <= 1e9))
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "the launch cost cfg.cost.launch_seconds is %s: it must be a finite "
                          "number >= 0 (0 means the default 2.828e-3 s; IPUP_LAUNCH_OFF, or any "
                          "value below 1e-12, means no launch cost)",
                          ipup__num(num, sizeof num, c->launch_seconds));
    if (c->synthetic_data != 0 && c->synthetic_data != 1)
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "cfg.cost.synthetic_data is %d: it must be 0 (the infeed crosses the "
                          "host link) or 1 (synthetic data, no infeed cost)",
                          (int)c->synthetic_data);
    return IPUP_OK;
}

static double ipup__rate(const ipup__core *e) {
    return e->cost_model.clock_hz * e->cost_model.flops_per_cycle *
           e->cost_model.efficiency;
}

/* duration of an op and the time of the exchange it produces (at the end of its step) */
/* host infeed of one micro-batch (images + labels over the host link), part of F(0,m) */
static double ipup__infeed_s(const ipup__core *e) {
    if (e->cost_model.synthetic_data) return 0.0; /* already on the IPUs */
    return (double)e->B * ((double)e->in_n + (double)ipup__lab_w(e)) * 4.0 /
           e->cost_model.host_bytes_per_s;
}

/* cost of a branch op (its share of the stage's FLOPs; what it sends), 0 for other ops */
static int ipup__conc_op_cost(const ipup__core *e, const ipup_op *o, double *dur, double *xfer) {
    const ipup__lane *c;
    double B = (double)e->B;
    if (ipup_op_branch(o) < 0 || e->n_branches[o->stage] <= 1) return 0;
    c = &e->lanes[e->first_lane[o->stage] + ipup_op_branch(o)];
    if (o->kind == IPUP_OP_F) {
        *dur = (double)c->flops_f * B / ipup__rate(e);
        if (e->stages[c->stage + 1].device != c->device)
            *xfer = ((double)c->out_floats + B) * 4.0 / e->cost_model.link_bytes_per_s;
    } else {
        *dur = (double)c->flops_b * B / ipup__rate(e);
        if (e->stages[c->stage - 1].device != c->device)
            *xfer = B * (double)e->stages[c->stage].in_n * 4.0 /
                    e->cost_model.link_bytes_per_s;
    }
    return 1;
}
/* stage s recomputes its forward before its backward (cfg.recompute_stages, resolved by
   ipup__setup_memory_options; stages past 31 never do) */
static int ipup__rec(const ipup__core *c, int32_t s) {
    return s >= 0 && s < 32 && ((c->cfg.recompute_stages >> s) & 1u);
}
static size_t ipup__woff(const ipup__core *e, int32_t d); /* setup */
static int ipup__act_off(const ipup__core *e, int32_t s);
/* seconds of streaming-memory traffic of an op of plain stage s: its weights streamed in
   (weights offloaded), its stash entry streamed out (F) or back (B, I, W) */
/* cfg.dtype float16 stores the weights as binary16 (not cfg.fp32_weights) */
static int ipup__w16(const ipup__core *e) {
    return e->cfg.dtype == IPUP_DTYPE_F16 && !e->cfg.fp32_weights;
}
/* bytes of one stored weight */
static double ipup__wsize(const ipup__core *e) { return ipup__w16(e) ? 2.0 : 4.0; }
static double ipup__op_stream_s(const ipup__core *e, int32_t s) {
    const ipup__stage *st = &e->stages[s];
    double bytes = 0.0;
    if (ipup__woff(e, st->device)) bytes += (double)st->n_params * ipup__wsize(e);
    if (ipup__act_off(e, s))
        bytes += (double)(ipup__rec(e, s) ? st->rentry_floats : st->entry_floats) * 4.0;
    return bytes / e->cost_model.stream_bytes_per_s;
}
static void ipup__op_cost(const ipup__core *e, const ipup_op *o, double *dur, double *xfer) {
    const ipup__stage *st = &e->stages[o->stage];
    double B = (double)e->B, rate = ipup__rate(e);
    double rec = ipup__rec(e, o->stage) ? (double)st->flops_f : 0.0, f = 0.0;
    const double esz = e->cfg.dtype == IPUP_DTYPE_F16 ? 2.0 : 4.0; /* bytes a value sent */
    int32_t s = o->stage;
    *xfer = 0.0;
    *dur = 0.0;
    /* a branch of a concurrent stage */
    if (e->has_concurrent && ipup__conc_op_cost(e, o, dur, xfer)) return;
    switch (o->kind) {
    case IPUP_OP_F:
        f = (double)st->flops_f;
        if (s == 0) *dur += ipup__infeed_s(e);
        if (s == e->S - 1 && e->cfg.outfeed_mode != IPUP_OUTFEED_LOSS)
            *dur += (double)ipup__core_out(e) * 4.0 / e->cost_model.host_bytes_per_s;
        if (s < e->S - 1 && e->stages[s + 1].device != st->device)
            *xfer = B * ((double)st->out_n + (double)ipup__lab_w(e)) * esz /
                    e->cost_model.link_bytes_per_s;
        break;
    case IPUP_OP_B: f = (double)(st->flops_i + st->flops_w) + rec; break;
    case IPUP_OP_I: f = (double)st->flops_i + rec; break;
    case IPUP_OP_W: f = (double)st->flops_w + rec; break;
    default: break;
    }
    if ((o->kind == IPUP_OP_B || o->kind == IPUP_OP_I) && s > 0 &&
        e->stages[s - 1].device != st->device)
        *xfer = B * (double)st->in_n * esz / e->cost_model.link_bytes_per_s;
    *dur += f * B / rate;
    if (e->cfg.offload & (IPUP_OFFLOAD_WEIGHTS | IPUP_OFFLOAD_ACTIVATIONS))
        *dur += ipup__op_stream_s(e, s);
}
static double ipup__sync_s(const ipup__core *e) {
    return e->P > 1 || e->R > 1
               ? e->cost_model.sync_cycles / e->cost_model.clock_hz
               : 0.0;
}
static double ipup__conc_update_cost(const ipup__core *e, int32_t d) {
    double t = 0.0;
    int32_t k;
    for (k = 0; k < e->n_lanes; k++) {
        const ipup__lane *c = &e->lanes[k];
        if (c->device != d) continue;
        t += (double)c->flops_opt / ipup__rate(e);
        if (e->R > 1)
            t += 2.0 * (double)(e->R - 1) / (double)e->R * (double)c->n_params * 4.0 /
                 e->cost_model.link_bytes_per_s;
        if (e->cfg.offload & IPUP_OFFLOAD_OPTIMIZER)
            t += 2.0 * (double)c->n_state * 4.0 / e->cost_model.stream_bytes_per_s;
    }
    return t;
}
/* optimizer (+ all-reduce, + offload streaming) time of device d per step */
static double ipup__update_cost(const ipup__core *e, int32_t d) {
    double t = 0.0;
    int32_t s;
    if (e->has_concurrent) t += ipup__conc_update_cost(e, d); /* lanes on d */
    for (s = 0; s < e->S; s++) {
        const ipup__stage *st = &e->stages[s];
        if (st->device != d || e->n_branches[s] > 1) continue;
        t += (double)st->flops_opt / ipup__rate(e);
        if (e->R > 1)
            t += 2.0 * (double)(e->R - 1) / (double)e->R * (double)st->n_grads * 4.0 /
                 e->cost_model.link_bytes_per_s;
        if (e->cfg.offload & IPUP_OFFLOAD_OPTIMIZER)
            t += 2.0 * (double)st->n_state * 4.0 / e->cost_model.stream_bytes_per_s;
        if (ipup__woff(e, d)) /* the weights in and out for the update */
            t += 2.0 * (double)st->n_params * ipup__wsize(e) / e->cost_model.stream_bytes_per_s;
    }
    return t;
}
/* The cost model's time of one step of core e (BSP: a table step lasts its longest op,
   then its longest exchange, then a sync; the update after the last step), returned;
   busy[d] gets device d's busy seconds, phase[p] and phase_busy[p] each phase's seconds and
   busy seconds (arrays of IPUP_MAX_DEVICES and IPUP_PHASES). ipup_init (ipup__cost_setup)
   and the plan (ipup_plan.step_seconds) both take their figures from here. */
static double ipup__step_times(const ipup__core *e, double *busy, double *phase,
                               double *phase_busy) {
    double now = 0.0, tup = 0.0, tdown = 0.0, upd = 0.0;
    int32_t i = 0, d, P = e->P, p;
    double sync = ipup__sync_s(e);
    int32_t ph[6]; /* the tutorials' phases in steps (ipup_sched_phases), timed below */
    int set_up = 0, set_down = 0;
    if (ipup_sched_phases(&e->table, ph)) { ph[2] = 0; ph[4] = 0; }
    for (d = 0; d < P; d++) busy[d] = 0.0;
    for (p = 0; p < IPUP_PHASES; p++) { phase[p] = 0.0; phase_busy[p] = 0.0; }
    /* pass 1: column times, busy, the start times of the main and ramp-down steps */
    while (i < e->table.n_ops) {
        int32_t t = e->ops[i].step, k;
        double mx = 0.0, mxx = 0.0;
        if (!set_up && t >= ph[2]) { tup = now; set_up = 1; }
        if (!set_down && t >= ph[4]) { tdown = now; set_down = 1; }
        for (k = i; k < e->table.n_ops && e->ops[k].step == t; k++) {
            double du, xf;
            d = e->ops[k].device;
            ipup__op_cost(e, &e->ops[k], &du, &xf);
            if (du > mx) mx = du;
            if (xf > mxx) mxx = xf;
            busy[d] += du;
        }
        now += mx + mxx + sync;
        i = k;
    }
    if (!set_up) tup = now;
    if (!set_down) tdown = now;
    phase[IPUP_PHASE_RAMP_UP] = tup;
    phase[IPUP_PHASE_MAIN] = tdown - tup;
    phase[IPUP_PHASE_RAMP_DOWN] = now - tdown;
    /* pass 2: busy time per phase (overlap of op boxes with the phase windows) */
    {
        double t0 = 0.0;
        i = 0;
        while (i < e->table.n_ops) {
            int32_t t = e->ops[i].step, k;
            double mx = 0.0, mxx = 0.0;
            for (k = i; k < e->table.n_ops && e->ops[k].step == t; k++) {
                double du, xf, a, b, lo, hi;
                ipup__op_cost(e, &e->ops[k], &du, &xf);
                if (du > mx) mx = du;
                if (xf > mxx) mxx = xf;
                a = t0; b = t0 + du;
                lo = a; hi = b < tup ? b : tup;
                if (hi > lo) phase_busy[IPUP_PHASE_RAMP_UP] += hi - lo;
                lo = a > tup ? a : tup; hi = b < tdown ? b : tdown;
                if (hi > lo) phase_busy[IPUP_PHASE_MAIN] += hi - lo;
                lo = a > tdown ? a : tdown; hi = b;
                if (hi > lo) phase_busy[IPUP_PHASE_RAMP_DOWN] += hi - lo;
            }
            t0 += mx + mxx + sync;
            i = k;
        }
    }
    for (d = 0; d < P; d++) {
        double u = ipup__update_cost(e, d);
        if (u > upd) upd = u;
        phase_busy[IPUP_PHASE_UPDATE] += u;
        busy[d] += u;
    }
    phase[IPUP_PHASE_UPDATE] = upd + sync;
    return now + upd + sync;
}

static void ipup__cost_setup(ipup_emu *e) {
    e->step_seconds = ipup__step_times(&e->core, e->busy_seconds, e->phase_seconds,
                                       e->phase_busy_seconds);
}

/* latency, wave time and steady-state rate of the forward-only table (BSP, the training
   cost model's op costs: ipup__op_cost) */
static void ipup__pred_cost_setup(ipup_emu *e) {
    const ipup_table *t = &e->core.pred_table;
    double now = 0.0, first_end = 0.0, last_end = 0.0, sync = ipup__sync_s(&e->core);
    int32_t i = 0, k, S = e->core.S, M = e->core.M;
    e->core.pred_stats.latency_seconds = 0.0;
    while (i < t->n_ops) {
        double mx = 0.0, mxx = 0.0, end;
        for (k = i; k < t->n_ops && t->ops[k].step == t->ops[i].step; k++) {
            double du, xf;
            ipup__op_cost(&e->core, &t->ops[k], &du, &xf);
            if (du > mx) mx = du;
            if (xf > mxx) mxx = xf;
        }
        end = now + mx + mxx + sync;
        for (k = i; k < t->n_ops && t->ops[k].step == t->ops[i].step; k++) {
            const ipup_op *o = &t->ops[k];
            if (o->stage == 0) e->pred_start[o->mb] = now;
            if (o->stage != S - 1) continue;
            if (end - e->pred_start[o->mb] > e->core.pred_stats.latency_seconds)
                e->core.pred_stats.latency_seconds = end - e->pred_start[o->mb];
            if (o->mb == 0) first_end = end;
            if (o->mb == M - 1) last_end = end;
        }
        now = end;
        i = k;
    }
    e->core.pred_stats.wave_seconds = now;
    if (M > 1 && last_end > first_end)
        e->core.pred_stats.samples_per_second =
            (double)e->core.B * (double)(M - 1) / (last_end - first_end);
    else
        e->core.pred_stats.samples_per_second =
            e->core.pred_stats.latency_seconds > 0.0
                ? (double)e->core.B / e->core.pred_stats.latency_seconds
                : 0.0;
}

/* >>config: the option parsers; the optimizer's state slots */
IPUPIPE_DEF int ipup_optimizer_parse(const char *name, ipup_optimizer_kind *out) {
    if (!name || !out) return IPUP_ERR_ARG;
    if (ipup__name_eq(name, "sgd")) *out = IPUP_OPT_SGD;
    else if (ipup__name_eq(name, "momentum")) *out = IPUP_OPT_MOMENTUM;
    else if (ipup__name_eq(name, "adam")) *out = IPUP_OPT_ADAM;
    else return IPUP_ERR_PARSE;
    return IPUP_OK;
}
IPUPIPE_DEF int ipup_runner_parse(const char *name, ipup_runner_kind *out) {
    if (!name || !out) return IPUP_ERR_ARG;
    if (ipup__name_eq(name, "coop") || ipup__name_eq(name, "cooperative")) *out = IPUP_RUNNER_COOP;
    else if (ipup__name_eq(name, "threads") || ipup__name_eq(name, "threaded"))
        *out = IPUP_RUNNER_THREADS;
    else return IPUP_ERR_PARSE;
    return IPUP_OK;
}

IPUPIPE_DEF int ipup_bytes_parse(const char *text, size_t *out) {
    size_t v = 0, mul = 1;
    const char *p = text;
    if (!text || !out) return IPUP_ERR_ARG;
    if (*p < '0' || *p > '9') return IPUP_ERR_PARSE;
    for (; *p >= '0' && *p <= '9'; p++) {
        size_t dgt = (size_t)(*p - '0');
        if (v > ((size_t)-1 - dgt) / 10u) return IPUP_ERR_PARSE;
        v = v * 10u + dgt;
    }
    if (*p == 'k' || *p == 'K') { mul = (size_t)1 << 10; p++; }
    else if (*p == 'm' || *p == 'M') { mul = (size_t)1 << 20; p++; }
    else if (*p == 'g' || *p == 'G') { mul = (size_t)1 << 30; p++; }
    if (mul > 1 && (*p == 'i' || *p == 'I') && (p[1] == 'b' || p[1] == 'B')) p++;
    if (*p == 'b' || *p == 'B') p++;
    if (*p || (v && mul > (size_t)-1 / v)) return IPUP_ERR_PARSE;
    *out = v * mul;
    return IPUP_OK;
}
/* the length of the item of a comma list at p, and whether it equals word */
static int ipup__item_is(const char *p, size_t n, const char *word) {
    size_t i;
    for (i = 0; i < n; i++) if (!word[i] || word[i] != p[i]) return 0;
    return word[n] == 0;
}
IPUPIPE_DEF int ipup_offload_parse(const char *list, int32_t *out) {
    static const char *const names[3] = {"optimizer", "weights", "activations"};
    int32_t v = 0;
    const char *p = list;
    if (!list || !out) return IPUP_ERR_ARG;
    for (;;) {
        size_t n = 0;
        int i, hit = 0;
        while (p[n] && p[n] != ',') n++;
        for (i = 0; i < 3; i++)
            if (ipup__item_is(p, n, names[i])) { v |= (int32_t)1 << i; hit = 1; }
        if (ipup__item_is(p, n, "all")) { v = IPUP_OFFLOAD_ALL; hit = 1; }
        if (ipup__item_is(p, n, "none")) hit = 1;
        if (!hit) return IPUP_ERR_PARSE;
        if (!p[n]) break;
        p += n + 1;
    }
    *out = v;
    return IPUP_OK;
}
IPUPIPE_DEF int ipup_stage_mask_parse(const char *list, uint32_t *out) {
    uint32_t v = 0;
    const char *p = list;
    if (!list || !out) return IPUP_ERR_ARG;
    for (;;) {
        int32_t s = 0, nd = 0;
        for (; *p >= '0' && *p <= '9' && nd < 3; p++, nd++) s = s * 10 + (*p - '0');
        if (!nd || s > 31 || (*p && *p != ',') || (v >> s) & 1u) return IPUP_ERR_PARSE;
        v |= (uint32_t)1 << s;
        if (!*p++) break;
    }
    *out = v;
    return IPUP_OK;
}
IPUPIPE_DEF int ipup_dtype_parse(const char *name, int32_t *out) {
    if (!name || !out) return IPUP_ERR_ARG;
    if (ipup__name_eq(name, "float32") || ipup__name_eq(name, "fp32")) *out = IPUP_DTYPE_F32;
    else if (ipup__name_eq(name, "float16") || ipup__name_eq(name, "fp16")) *out = IPUP_DTYPE_F16;
    else return IPUP_ERR_PARSE;
    return IPUP_OK;
}
IPUPIPE_DEF const char *ipup_dtype_name(int32_t dtype) {
    return dtype == IPUP_DTYPE_F16 ? "float16" : dtype == IPUP_DTYPE_F32 ? "float32" : "?";
}

static int32_t ipup__state_slots(const ipup_config *c) {
    return c->opt.kind == IPUP_OPT_ADAM ? 2 : c->opt.kind == IPUP_OPT_MOMENTUM ? 1 : 0;
}

/* >>memory: the carving arena (counts, or hands out 64-byte blocks); memory reports */
IPUPIPE_DEF const char *ipup_mem_category_name(int cat) {
    static const char *const names[IPUP_MEM_CATEGORIES] = {"weights", "grads", "optimizer",
                                                            "stash", "exchange", "scratch"};
    return (cat >= 0 && cat < IPUP_MEM_CATEGORIES) ? names[cat] : "?";
}

typedef struct ipup__arena {
    uint8_t *base;      /* NULL: counting only */
    size_t cap, used;
    size_t by_category[IPUP_MEM_CATEGORIES];
    int oom;
    int overflow;       /* a size overflowed size_t (the sizes are then meaningless) */
} ipup__arena;

static void ipup__arena_init(ipup__arena *a, void *mem, size_t bytes) {
    size_t pad = 0;
    IPUPIPE_MEMSET(a, 0, sizeof *a);
    if (mem) {
        pad = (size_t)((0u - (uintptr_t)mem) & (IPUP_POOL_ALIGN - 1));
        a->base = (uint8_t *)mem + pad;
        a->cap = bytes > pad ? bytes - pad : 0;
    } else {
        a->cap = (size_t)-1;
    }
}
static void *ipup__alloc(ipup__arena *a, size_t bytes, int cat) {
    size_t off = ipup__round64(a->used);
    if (a->overflow || bytes > (size_t)-1 / 4 || a->used > (size_t)-1 / 4 ||
        a->by_category[cat] > (size_t)-1 / 4) {
        a->overflow = a->oom = 1; /* stays so: ipup__round64 below never wraps */
        a->used = (size_t)-1 / 4;
        return NULL;
    }
    a->by_category[cat] += ipup__round64(bytes);
    a->used = off + ipup__round64(bytes);
    if (!a->base) return NULL;
    if (a->used > a->cap) { a->oom = 1; return NULL; }
    return a->base + off;
}
static float *ipup__allocf(ipup__arena *a, size_t n, int cat) {
    return (float *)ipup__alloc(a, ipup__mulz(n, sizeof(float)), cat);
}

static size_t ipup__slot_floats(const ipup__core *e, int32_t s);  /* setup */
static size_t ipup__wslot_floats(const ipup__core *e, int32_t s); /* setup */
static void ipup__conc_mem_peaks(const ipup_emu *e, int32_t r, int32_t d, size_t *stash,
                                 size_t *ex) {
    int32_t k;
    for (k = 0; k < e->core.n_lanes; k++) {
        const ipup__lane *c = &e->core.lanes[k];
        const ipup__lane_rt *rt = &e->lane_rt[r][k];
        if (c->device == d) {
            *stash += ipup__round64((size_t)rt->stash_peak * c->entry_floats * sizeof(float));
            *ex +=
                (size_t)rt->in.peak * rt->in.slot_bytes + (size_t)rt->dy.peak * rt->dy.slot_bytes;
        }
        if (e->core.stages[c->stage + 1].device == d)
            *ex += (size_t)rt->out.peak * rt->out.slot_bytes;
        if (e->core.stages[c->stage - 1].device == d)
            *ex += (size_t)rt->dx.peak * rt->dx.slot_bytes;
    }
}

static void ipup__mem_runtime(const ipup_emu *e, int32_t ipu, ipup_mem_report *m) {
    int32_t r = ipu / e->core.P, d = ipu % e->core.P, s;
    size_t stash = 0, ex = 0;
    *m = e->mem[ipu];
    for (s = 0; s < e->core.S; s++) {
        const ipup__stage *st = &e->core.stages[s];
        const ipup__stage_rt *rt = &e->stage_rt[r][s];
        if (st->device != d) continue;
        if (!ipup__act_off(&e->core, s)) /* else in streaming memory */
            stash += ipup__round64((size_t)rt->stash_peak *
                                   (ipup__rec(&e->core, s) ? st->rentry_floats : st->entry_floats) *
                                   sizeof(float));
        if (st->wstash_depth)
            stash += ipup__round64((size_t)rt->wstash_peak * ipup__wslot_floats(&e->core, s) *
                                   sizeof(float));
        if (s > 0) ex += (size_t)e->fwd[r][s].peak * e->fwd[r][s].slot_bytes;
        if (s < e->core.S - 1) ex += (size_t)e->bwd[r][s].peak * e->bwd[r][s].slot_bytes;
    }
    if (e->core.has_concurrent) ipup__conc_mem_peaks(e, r, d, &stash, &ex); /* lanes on d */
    m->peak_by_category[IPUP_MEM_STASH] = stash;
    m->peak_by_category[IPUP_MEM_EXCHANGE] = ex;
    m->high_water =
        m->used - m->by_category[IPUP_MEM_STASH] - m->by_category[IPUP_MEM_EXCHANGE] + stash + ex;
}

IPUPIPE_DEF int ipup_memory_report(const ipup_emu *e, int32_t ipu, ipup_mem_report *out) {
    int rc = ipup__need_init(e, "ipup_memory_report");
    if (rc) return rc;
    if (!out)
        return ipup__efail(e, IPUP_ERR_ARG,
                           "ipup_memory_report: out is NULL; give an ipup_mem_report to fill");
    if (ipu < 0 || ipu >= e->core.n_ipus)
        return ipup__efail(e, IPUP_ERR_ARG,
                           "ipup_memory_report: IPU %d is outside 0..%d (replicas x devices - 1)",
                           (int)ipu, (int)(e->core.n_ipus - 1));
    ipup__mem_runtime(e, ipu, out);
    return IPUP_OK;
}
/* one line (cut to 511 bytes) through write: IPUP_OK or IPUP_ERR_IO */
static int ipup__write_line(ipup_write_fn write, void *user, const ipup__textbuf *b) {
    size_t n = b->len < b->cap ? b->len : b->cap - 1;
    return write(user, b->buf, n) != 0 ? IPUP_ERR_IO : IPUP_OK;
}
IPUPIPE_DEF int ipup_memory_report_write(const ipup_emu *e, ipup_write_fn write, void *user) {
    char line[512];
    ipup__textbuf b;
    int32_t i, c;
    int rc = ipup__need_init(e, "ipup_memory_report_write");
    if (rc) return rc;
    if (!write)
        return ipup__efail(e, IPUP_ERR_ARG,
                           "ipup_memory_report_write: write is NULL; give a write callback "
                           "(ipup_buf_write collects the text in memory)");
    b.buf = line; b.cap = sizeof line; b.len = 0;
    ipup__textbuf_add(&b, "IPU  ");
    for (c = 0; c < IPUP_MEM_CATEGORIES; c++)
        ipup__textbuf_add(&b, " %s", ipup_mem_category_name(c));
    ipup__textbuf_add(&b, " | used high-water capacity | stream | recompute-saves offload-saves "
                          "frozen-saves (bytes)\n");
    if (ipup__write_line(write, user, &b))
        return ipup__efail(e, IPUP_ERR_IO,
                           "ipup_memory_report_write: the write callback failed (returned "
                           "non-zero) on the header line");
    for (i = 0; i < e->core.P; i++) {
        ipup_mem_report m;
        ipup__mem_runtime(e, i, &m);
        b.len = 0;
        ipup__textbuf_add(&b, "IPU%d", (int)i);
        for (c = 0; c < IPUP_MEM_CATEGORIES; c++) ipup__textbuf_add(&b, " %zu", m.by_category[c]);
        ipup__textbuf_add(&b, " | %zu %zu %zu | %zu | %zu %zu %zu\n", m.used, m.high_water,
                          m.capacity, m.stream_used, m.recompute_saved, m.offload_saved,
                          m.frozen_saved);
        if (ipup__write_line(write, user, &b))
            return ipup__efail(e, IPUP_ERR_IO,
                               "ipup_memory_report_write: the write callback failed (returned "
                               "non-zero) on the line of IPU%d",
                               (int)i);
    }
    return IPUP_OK;
}

/* >>concurrent-setup: cfg.concurrent checked; lane sizes, ring capacities, carving */
/* cfg.concurrent (docs/schedules.md §9). A mapping without brackets is the plain mapping
   (copied into e->plain_stage_device, which e->cfg.stage_device then points to). A concurrent
   stage holds one weight layer (dense or conv3x3) and the element-wise layers after it
   (relu, gelu, dropout), and is neither the first stage (the infeed) nor the last (the
   loss), nor next to another concurrent stage; it is split by output units into one lane
   per branch (their ops: concurrent-runtime). */
static int ipup__emu_conc_stage(ipup__core *e, int32_t s, int32_t n) {
    const ipup__stage *st = &e->stages[s];
    const ipup_stage_map *mp = e->cfg.concurrent;
    int32_t l, b, U;
    const ipup_layer_info *I0 = &e->layers[st->first].info;
    if (s == 0 || s == e->S - 1)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                          "cfg.concurrent: stage %d is the %s stage and cannot be concurrent (it "
                          "%s); split another stage, "
                          "or add a stage before or after it",
                          (int)s, s == 0 ? "first" : "last",
                          s == 0 ? "reads the infeed" : "holds the loss");
    if (mp->n_dev[s - 1] > 1 || mp->n_dev[s + 1] > 1)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                          "cfg.concurrent: stages %d and %d are both concurrent; a concurrent "
                          "stage needs plain stages on "
                          "both sides (put a plain stage between them)",
                          (int)(mp->n_dev[s - 1] > 1 ? s - 1 : s),
                          (int)(mp->n_dev[s - 1] > 1 ? s : s + 1));
    for (l = st->first; l < st->last; l++) {
        ipup_layer_kind k = e->layers[l].info.kind;
        int ok = l == st->first
                     ? (k == IPUP_LAYER_DENSE || k == IPUP_LAYER_CONV3X3)
                     : (k == IPUP_LAYER_RELU || k == IPUP_LAYER_GELU || k == IPUP_LAYER_DROPOUT);
        if (!ok)
            return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                              "cfg.concurrent: stage %d holds layer %d (%s, %s); a concurrent "
                              "stage holds one weight layer "
                              "(dense or conv3x3) and the element-wise layers after it (relu, "
                              "gelu, dropout): move the split "
                              "(cfg.split) so that stage %d starts at a dense or conv layer",
                              (int)s, (int)l, e->model.layers[l].id, ipup_layer_kind_name(k),
                              (int)s);
    }
    if (I0->frozen)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_UNSUPPORTED,
                          "cfg.concurrent: stage %d's layer %s is frozen; a concurrent stage's "
                          "branches train their slices "
                          "(unfreeze it, or map stage %d to one IPU)",
                          (int)s, e->model.layers[st->first].id, (int)s);
    if (e->layers[e->n_layers - 1].info.kind != IPUP_LAYER_SOFTMAX_XENT)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_UNSUPPORTED,
                          "cfg.concurrent: concurrent stages carry one class label per sample; a "
                          "model with the %s loss "
                          "needs its stages on one IPU each",
                          ipup_layer_kind_name(e->layers[e->n_layers - 1].info.kind));
    U = I0->kind == IPUP_LAYER_DENSE ? I0->out_n : I0->out_c;
    if (U < n)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                          "cfg.concurrent: stage %d splits %s's %d output units over %d IPUs; "
                          "every branch needs at least "
                          "one unit (use fewer IPUs for it)",
                          (int)s, e->model.layers[st->first].id, (int)U, (int)n);
    if (e->n_lanes + n > IPUP_MAX_BRANCH_LANES)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                          "cfg.concurrent: more than IPUP_MAX_BRANCH_LANES = %d "
                          "branches in all; define it larger before the include",
                          (int)IPUP_MAX_BRANCH_LANES);
    e->n_branches[s] = (int8_t)n;
    e->first_lane[s] = (int16_t)e->n_lanes;
    for (b = 0; b < n; b++) {
        ipup__lane *c = &e->lanes[e->n_lanes++];
        c->stage = s; c->branch = b; c->device = mp->dev[s][b];
        c->units = U;
        c->first_unit = (int32_t)((int64_t)b * U / n);
        c->slice_units = (int32_t)((int64_t)(b + 1) * U / n) - c->first_unit;
        c->spatial = I0->kind == IPUP_LAYER_DENSE ? 1 : I0->out_h * I0->out_w;
    }
    e->has_concurrent = 1;
    return IPUP_OK;
}

static int ipup__emu_conc_config(ipup__core *e) {
    const ipup_stage_map *mp = e->cfg.concurrent;
    int32_t s;
    int rc;
    if (!mp) return IPUP_OK;
    if (e->cfg.stage_device)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                          "give the stage -> IPU mapping once: "
                          "cfg.stage_device or cfg.concurrent, not both");
    if (mp->stages != e->S)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                          "cfg.concurrent maps %d stages, but the model is split into %d "
                          "(cfg.stages); give one entry per stage",
                          (int)mp->stages, (int)e->S);
    for (s = 0; s < e->S; s++) {
        if (mp->n_dev[s] < 1 || mp->n_dev[s] > IPUP_SCHED_MAX_BRANCHES)
            return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                              "cfg.concurrent gives stage %d %d IPUs (1..%d)", (int)s,
                              (int)mp->n_dev[s], IPUP_SCHED_MAX_BRANCHES);
        e->plain_stage_device[s] = mp->dev[s][0];
        if (mp->n_dev[s] > 1 && (rc = ipup__emu_conc_stage(e, s, mp->n_dev[s])) != IPUP_OK)
            return rc;
    }
    if (!e->has_concurrent) e->cfg.stage_device = e->plain_stage_device;
    else if (e->cfg.recompute)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_UNSUPPORTED,
                          "cfg.concurrent with recomputation: a concurrent stage's branches keep "
                          "their stash (set recompute "
                          "to 0, or map each stage to one IPU)");
    return IPUP_OK;
}

/* Table steps are a stage count for the ops arrays: enough for 2 x lanes x M ops. */
static int32_t ipup__conc_ops_stages(const ipup_stage_map *mp, int32_t S) {
    int32_t lanes;
    if (!mp || !mp->concurrent) return S;
    lanes = ipup_sched_map_lanes(mp);
    return (2 * lanes + 2) / 3 > S ? (2 * lanes + 2) / 3 : S;
}
/* offset (floats) in a lane's stash entry of the input of layer l (first + 1 ..); the
   entry is x (B x in_n), labels (B), then those inputs */
static size_t ipup__lane_act_off(const ipup__core *e, int32_t k, int32_t l) {
    const ipup__stage *st = &e->stages[e->lanes[k].stage];
    return (size_t)e->B * ((size_t)st->in_n + 1u) +
           (size_t)(l - st->first - 1) * e->lanes[k].out_floats;
}

/* ring capacity from the table: the most messages in flight between the producing ops
   (stage ps, branch pb; -1 a plain stage) and the consuming ops, productions of a step
   first, as ipup__setup_table counts */
static uint32_t ipup__conc_cap(const ipup__core *e, int32_t ps, int32_t pb, int pf, int32_t cs,
                               int32_t cb, int cf) {
    int32_t i = 0, prod = 0, cons = 0, mx = 1;
    while (i < e->table.n_ops) {
        int32_t t = e->ops[i].step, k;
        for (k = i; k < e->table.n_ops && e->ops[k].step == t; k++) {
            const ipup_op *o = &e->ops[k];
            if (o->stage == ps && ipup_op_branch(o) == pb && (o->kind == IPUP_OP_F) == pf) prod++;
        }
        if (prod - cons > mx) mx = prod - cons;
        for (k = i; k < e->table.n_ops && e->ops[k].step == t; k++) {
            const ipup_op *o = &e->ops[k];
            if (o->stage == cs && ipup_op_branch(o) == cb && (o->kind == IPUP_OP_F) == cf) cons++;
        }
        i = k;
    }
    return ipup__ring_cap((uint32_t)mx);
}

static void ipup__conc_setup(ipup__core *e) {
    int32_t k, l, kslots = ipup__state_slots(&e->cfg);
    for (k = 0; k < e->n_lanes; k++) {
        ipup__lane *c = &e->lanes[k];
        const ipup__stage *st = &e->stages[c->stage];
        const ipup_layer_info *I0 = &e->layers[st->first].info;
        int32_t in_rows = I0->kind == IPUP_LAYER_DENSE ? I0->in_n : 9 * I0->in_c, s = c->stage;
        c->out_floats = (size_t)e->B * (size_t)c->spatial * (size_t)c->slice_units;
        c->n_w = in_rows * c->slice_units;
        c->bias_off = ipup__round16(c->n_w);
        c->n_params = c->bias_off + ipup__round16(c->slice_units);
        c->n_state = (size_t)kslots * c->n_params;
        c->entry_floats = (ipup__lane_act_off(e, k, st->last - 1 + 1) + 15u) & ~(size_t)15u;
        c->conv_floats =
            I0->kind == IPUP_LAYER_CONV3X3
                ? (size_t)9 * (size_t)I0->in_c *
                      ((size_t)c->slice_units + (size_t)(I0->in_h - 2) * (size_t)(I0->in_w - 2))
                : 0;
        c->flops_f = c->flops_b = 0;
        for (l = st->first; l < st->last; l++) { /* each branch does its share of every layer */
            const ipup_layer_info *I = &e->layers[l].info;
            c->flops_f += I->flops_fwd * c->slice_units / c->units;
            c->flops_b += ((e->layers[l].need_dx ? I->flops_bwd_dx : 0) + I->flops_bwd_dw) *
                          c->slice_units / c->units;
        }
        c->flops_opt = (int64_t)c->n_params * (kslots == 2 ? 12 : kslots == 1 ? 4 : 2);
        c->in_cap = ipup__conc_cap(e, s - 1, -1, 1, s, c->branch, 1);
        c->out_cap = ipup__conc_cap(e, s, c->branch, 1, s + 1, -1, 1);
        c->dy_cap = ipup__conc_cap(e, s + 1, -1, 0, s, c->branch, 0);
        c->dx_cap = ipup__conc_cap(e, s, c->branch, 0, s - 1, -1, 0);
    }
}

/* the rings of lane k into device d (receive sides), initialised when carved for real */
static void ipup__conc_rings(const ipup__core *e, ipup__arena *a, int32_t d, int32_t k,
                             ipup__lane_rt *rt) {
    const ipup__lane *c = &e->lanes[k];
    const ipup__stage *st = &e->stages[c->stage];
    size_t B = (size_t)e->B;
    struct { ipup_ring *ring; uint32_t cap; size_t floats; int32_t dev; } q[4];
    int i;
    q[0].ring = &rt->in;
    q[0].cap = c->in_cap;
    q[0].floats = B * (size_t)st->in_n + B;
    q[0].dev = c->device;
    q[1].ring = &rt->dy; q[1].cap = c->dy_cap; q[1].floats = c->out_floats; q[1].dev = c->device;
    q[2].ring = &rt->out;
    q[2].cap = c->out_cap;
    q[2].floats = c->out_floats + B;
    q[2].dev = e->stages[c->stage + 1].device;
    q[3].ring = &rt->dx;
    q[3].cap = c->dx_cap;
    q[3].floats = B * (size_t)st->in_n;
    q[3].dev = e->stages[c->stage - 1].device;
    for (i = 0; i < 4; i++) {
        size_t slot = q[i].floats * sizeof(float), bytes = ipup_ring_bytes(q[i].cap, slot);
        void *buf;
        if (q[i].dev != d) continue;
        buf = ipup__alloc(a, bytes, IPUP_MEM_EXCHANGE);
        if (a->base && !a->oom)
            ipup_ring_init(q[i].ring, buf, bytes, q[i].cap, slot, IPUPIPE_RING_START);
    }
}

static void ipup__conc_carve(const ipup__core *e, ipup__arena *a, ipup__arena *stream, int32_t d,
                             ipup__lane_rt *lane_rt, ipup__fanout_bufs *fanout) {
    int32_t k, s, kslots = ipup__state_slots(&e->cfg);
    size_t B = (size_t)e->B;
    for (k = 0; k < e->n_lanes; k++) {
        const ipup__lane *c = &e->lanes[k];
        ipup__lane_rt count_only, *rt;
        IPUPIPE_MEMSET(&count_only, 0, sizeof count_only);
        rt = lane_rt ? &lane_rt[k] : &count_only;
        ipup__conc_rings(e, a, d, k, rt);
        if (c->device != d) continue;
        rt->params = ipup__allocf(a, c->n_params, IPUP_MEM_WEIGHTS);
        rt->grads = ipup__allocf(a, c->n_params, IPUP_MEM_GRADS);
        rt->state = !kslots
                        ? NULL
                        : ipup__allocf((e->cfg.offload & IPUP_OFFLOAD_OPTIMIZER) ? stream : a,
                                       c->n_state, IPUP_MEM_OPTIMIZER);
        rt->stash = ipup__allocf(a, ipup__mulz((size_t)e->stages[c->stage].depth, c->entry_floats),
                                 IPUP_MEM_STASH);
        rt->pingpong[0] = ipup__allocf(a, c->out_floats, IPUP_MEM_SCRATCH);
        rt->pingpong[1] = ipup__allocf(a, c->out_floats, IPUP_MEM_SCRATCH);
        rt->conv = c->conv_floats ? ipup__allocf(a, c->conv_floats, IPUP_MEM_SCRATCH) : NULL;
        rt->staging =
            (kslots && (e->cfg.offload & IPUP_OFFLOAD_OPTIMIZER))
                ? ipup__allocf(a, ipup__mulz((size_t)kslots, c->bias_off), IPUP_MEM_SCRATCH)
                : NULL;
    }
    for (s = 0; s < e->S; s++) { /* a plain stage next to a concurrent one */
        const ipup__stage *st = &e->stages[s];
        ipup__fanout_bufs count_nb, *nb;
        IPUPIPE_MEMSET(&count_nb, 0, sizeof count_nb);
        nb = fanout ? &fanout[s] : &count_nb;
        if (st->device != d || e->n_branches[s] > 1) continue;
        if (s + 1 < e->S && e->n_branches[s + 1] > 1) {
            nb->out = ipup__allocf(a, B * (size_t)st->out_n + B, IPUP_MEM_SCRATCH);
            nb->dy_sum = ipup__allocf(a, B * (size_t)st->out_n, IPUP_MEM_SCRATCH);
        }
        if (s > 0 && e->n_branches[s - 1] > 1)
            nb->dx = ipup__allocf(a, B * (size_t)st->in_n, IPUP_MEM_SCRATCH);
    }
}

/* the weights of every lane: the unsplit tensor's elements (ipup_glorot_uniform_f32 of
   the whole layer, element by element), sliced; zero bias, gradients and state */
static void ipup__conc_init_weights(ipup_emu *e) {
    int32_t r, k, i, j;
    for (r = 0; r < e->core.R; r++)
        for (k = 0; k < e->core.n_lanes; k++) {
            const ipup__lane *c = &e->core.lanes[k];
            ipup__lane_rt *rt = &e->lane_rt[r][k];
            int32_t l = e->core.stages[c->stage].first;
            const ipup_layer_info *I = &e->core.layers[l].info;
            int conv = I->kind == IPUP_LAYER_CONV3X3;
            int32_t rows = conv ? 9 * I->in_c : I->in_n, fi = conv ? 9 * I->in_c : I->in_n,
                    fo = conv ? 9 * I->out_c : I->out_n;
            float limit = IPUPIPE_SQRTF(6.0f / (float)(fi + fo));
            IPUPIPE_MEMSET(rt->params, 0, c->n_params * sizeof(float));
            IPUPIPE_MEMSET(rt->grads, 0, c->n_params * sizeof(float));
            if (rt->state && c->n_state) IPUPIPE_MEMSET(rt->state, 0, c->n_state * sizeof(float));
            for (i = 0; i < rows; i++)
                for (j = 0; j < c->slice_units; j++) {
                    float u = ipup_rng_uniform_f32(e->core.cfg.seed, (uint64_t)(2 * l),
                                                   (uint64_t)i * (uint64_t)c->units +
                                                       (uint64_t)(c->first_unit + j));
                    rt->params[(size_t)i * (size_t)c->slice_units + (size_t)j] =
                        (2.0f * u - 1.0f) * limit;
                }
        }
}

/* >>setup: the core from a configuration: counts, split, tables, layouts, carving */
/* e->model's layer ids made unique ("dense16", "dense16_2"; "" = derived from the kind) */
static void ipup__setup_ids(ipup__core *e) {
    int32_t l, i;
    for (l = 0; l < e->model.n_layers; l++) {
        ipup_layer *Ly = &e->model.layers[l];
        char base[IPUP_ID_MAX];
        int dup = 1;
        if (!Ly->id[0]) {
            if (Ly->kind == IPUP_LAYER_DENSE || Ly->kind == IPUP_LAYER_CONV3X3)
                ipup_snprintf(Ly->id, sizeof Ly->id, "%s%d", ipup_layer_kind_name(Ly->kind),
                              (int)Ly->units);
            else
                ipup_snprintf(Ly->id, sizeof Ly->id, "%s", ipup_layer_kind_name(Ly->kind));
        }
        Ly->id[IPUP_ID_MAX - 1] = 0;
        ipup__id_copy(base, IPUP_ID_MAX - 4, Ly->id);
        for (;;) {
            int clash = 0;
            for (i = 0; i < l; i++) if (ipup__id_eq(e->model.layers[i].id, Ly->id)) clash = 1;
            if (!clash) break;
            dup++;
            ipup_snprintf(Ly->id, sizeof Ly->id, "%s_%d", base, dup);
        }
    }
}

/* S, M, B, R and repeat from cfg (0 means 1), checked against the model and the limits */
static int ipup__setup_counts(ipup__core *e, const ipup_config *cfg) {
    char *msg = e->msg;
    size_t ml = sizeof e->msg;
    int32_t S = e->S = cfg->stages ? cfg->stages : 1, L = e->n_layers;
    e->M = cfg->microbatches ? cfg->microbatches : 1;
    e->B = cfg->microbatch ? cfg->microbatch : 1;
    e->R = cfg->replicas ? cfg->replicas : 1;
    if (e->cfg.repeat <= 0) e->cfg.repeat = 1;
    if (S < 1 || e->M < 1 || e->B < 1 || e->R < 1 || cfg->microbatches < 0 || cfg->microbatch < 0 ||
        cfg->replicas < 0)
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "stages (%d), microbatch (%d), microbatches "
                          "(%d) and replicas (%d) must be >= 1 (0 means 1)",
                          (int)cfg->stages, (int)cfg->microbatch, (int)cfg->microbatches,
                          (int)cfg->replicas);
    if (S > L)
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "%d stages but the model has only %d layers: every stage needs at least "
                          "one layer; use at most %d stages",
                          (int)S, (int)L, (int)L);
    if (e->R > IPUP_MAX_REPLICAS)
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "%d replicas: at most IPUP_MAX_REPLICAS "
                          "(%d); define it larger before the include",
                          (int)e->R, (int)IPUP_MAX_REPLICAS);
    if ((int64_t)e->B * e->M > 0x7fffffff / 4 || (int64_t)e->B * e->in_n > 0x7fffffff / 4)
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "micro-batch %d x %d micro-batches is too large", (int)e->B, (int)e->M);
    return IPUP_OK;
}

/* cfg.offload's bits checked; cfg.recompute_stages checked against the stage count and
   resolved: cfg.recompute with mask 0 is every stage but the last (Graphcore's pipelining
   does not recompute the last stage: its backward runs right after its forward, TF1
   pipelining tutorial, "Recomputation"); afterwards e->cfg.recompute_stages is the mask
   the emulator follows and e->cfg.recompute says whether any stage recomputes. */
static int ipup__setup_memory_options(ipup__core *e, const ipup_config *cfg) {
    uint32_t mask = cfg->recompute_stages;
    int32_t s;
    if (cfg->offload < 0 || cfg->offload > IPUP_OFFLOAD_ALL)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                          "cfg.offload is %d: it is a set of IPUP_OFFLOAD_* bits (optimizer 1, "
                          "weights 2, activations 4), 0..7",
                          (int)cfg->offload);
    for (s = e->S; s < 32; s++)
        if ((mask >> s) & 1u)
            return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                              "cfg.recompute_stages has bit %d set but the model has %d stages "
                              "(0..%d); clear it",
                              (int)s, (int)e->S, (int)(e->S - 1));
    if (!mask && cfg->recompute)
        for (s = 0; s < e->S - 1 && s < 32; s++) mask |= (uint32_t)1 << s;
    e->cfg.recompute_stages = mask;
    e->cfg.recompute = mask != 0;
    return IPUP_OK;
}

/* cfg.dtype, accum_dtype, opt.first_moment_dtype and the loss scaling fields checked, their
   defaults set */
static int ipup__setup_half(ipup__core *e, const ipup_config *cfg) {
    char *msg = e->msg, num[48];
    size_t ml = sizeof e->msg;
    const int32_t t[3] = {cfg->dtype, cfg->accum_dtype, cfg->opt.first_moment_dtype};
    static const char *const what[3] = {"cfg.dtype", "cfg.accum_dtype",
                                        "cfg.opt.first_moment_dtype"};
    int i;
    for (i = 0; i < 3; i++)
        if (t[i] != IPUP_DTYPE_F32 && t[i] != IPUP_DTYPE_F16)
            return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                              "%s is %d: use IPUP_DTYPE_F32 (0, float32) or IPUP_DTYPE_F16 (1, "
                              "float16)", what[i], (int)t[i]);
    if (!(cfg->loss_scale >= 0.0f && cfg->loss_scale <= 65504.0f * 65504.0f))
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "the loss scale cfg.loss_scale is %s: it must be a finite number > 0 "
                          "(0 means none, or 32768 with cfg.loss_scale_dynamic)",
                          ipup__num(num, sizeof num, (double)cfg->loss_scale));
    if (cfg->loss_scale_period < 0)
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "cfg.loss_scale_period is %d: it must be >= 1 clean steps before the "
                          "scale doubles (0 means the default 2000)",
                          (int)cfg->loss_scale_period);
    if ((cfg->dtype || cfg->accum_dtype || cfg->opt.first_moment_dtype || cfg->loss_scale > 0.0f ||
         cfg->loss_scale_dynamic) &&
        cfg->concurrent && cfg->concurrent->concurrent)
        return ipup__fail(msg, ml, IPUP_ERR_UNSUPPORTED,
                          "float16 storage and loss scaling are not supported with concurrent "
                          "stages (a bracket in cfg.concurrent); use float32 without loss "
                          "scaling, or a plain stage map");
    if (e->cfg.loss_scale == 0.0f) e->cfg.loss_scale = cfg->loss_scale_dynamic ? 32768.0f : 1.0f;
    if (e->cfg.loss_scale_period == 0) e->cfg.loss_scale_period = 2000;
    return IPUP_OK;
}

/* optimizer kind and hyper-parameters (0 means the default, anything else must make
   sense), runner kind, cost model defaults */
static int ipup__setup_options(ipup__core *e, const ipup_config *cfg) {
    const ipup_optimizer *o = &cfg->opt;
    char *msg = e->msg, num[48];
    size_t ml = sizeof e->msg;
    int k_opt = (int)o->kind, k_run = (int)cfg->runner;
    if (k_opt < 0 || k_opt > (int)IPUP_OPT_ADAM)
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "unknown optimizer kind %d; use sgd, momentum or adam", k_opt);
    if (!(o->lr >= 0.0f && o->lr <= 3.4e38f))
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "the learning rate cfg.opt.lr is %s: it must be "
                          "a finite number > 0 (0 means the default 0.01)",
                          ipup__num(num, sizeof num, (double)o->lr));
    if (!(o->momentum >= 0.0f && o->momentum < 1.0f))
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "the momentum cfg.opt.momentum is %s: it "
                          "must be in [0, 1) (0 means the default 0.9)",
                          ipup__num(num, sizeof num, (double)o->momentum));
    if (!(o->beta1 >= 0.0f && o->beta1 < 1.0f))
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "Adam's beta1 cfg.opt.beta1 is %s: it "
                          "must be in [0, 1) (0 means the default 0.9)",
                          ipup__num(num, sizeof num, (double)o->beta1));
    if (!(o->beta2 >= 0.0f && o->beta2 < 1.0f))
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "Adam's beta2 cfg.opt.beta2 is %s: it "
                          "must be in [0, 1) (0 means the default 0.999)",
                          ipup__num(num, sizeof num, (double)o->beta2));
    if (!(o->eps >= 0.0f && o->eps <= 3.4e38f))
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "Adam's eps cfg.opt.eps is %s: it must be a "
                          "finite number > 0 (0 means the default 1e-8)",
                          ipup__num(num, sizeof num, (double)o->eps));
    if (!(o->weight_decay >= 0.0f && o->weight_decay <= 3.4e38f))
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "Adam's weight decay cfg.opt.weight_decay is %s: it must be a "
                          "finite number >= 0 (0: no weight decay)",
                          ipup__num(num, sizeof num, (double)o->weight_decay));
    if (o->no_bias_correction != 0 && o->no_bias_correction != 1)
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "cfg.opt.no_bias_correction is %d: use 0 (Adam's bias correction, "
                          "the default) or 1 (none, PopXL's bias_correction=False)",
                          (int)o->no_bias_correction);
    if (e->cfg.opt.lr == 0.0f) e->cfg.opt.lr = 0.01f;
    if (e->cfg.opt.momentum == 0.0f) e->cfg.opt.momentum = 0.9f;
    if (e->cfg.opt.beta1 == 0.0f) e->cfg.opt.beta1 = 0.9f;
    if (e->cfg.opt.beta2 == 0.0f) e->cfg.opt.beta2 = 0.999f;
    if (e->cfg.opt.eps == 0.0f) e->cfg.opt.eps = 1e-8f;
    if (k_run != (int)IPUP_RUNNER_COOP && k_run != (int)IPUP_RUNNER_THREADS)
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG, "unknown runner %d; use coop or threads",
                          k_run);
#if defined(IPUPIPE_NO_THREADS) || defined(IPUPIPE_NO_ATOMICS)
    if (e->cfg.runner == IPUP_RUNNER_THREADS)
        return ipup__fail(msg, ml, IPUP_ERR_UNSUPPORTED,
                          "the threaded runner is compiled out (IPUPIPE_NO_THREADS or "
                          "IPUPIPE_NO_ATOMICS); use the cooperative runner");
#endif
    if (ipup__check_cost(&cfg->cost, msg, ml) != IPUP_OK) return IPUP_ERR_CONFIG;
    if (cfg->outfeed_mode < IPUP_OUTFEED_LOSS || cfg->outfeed_mode > IPUP_OUTFEED_BOTH)
        return ipup__fail(msg, ml, IPUP_ERR_CONFIG,
                          "cfg.outfeed_mode is %d: use IPUP_OUTFEED_LOSS (0), IPUP_OUTFEED_OUTPUTS "
                          "(1) or IPUP_OUTFEED_BOTH (2)",
                          (int)cfg->outfeed_mode);
    ipup__cost_defaults(&e->cost_model, &cfg->cost);
    {
        const int rc = ipup__setup_memory_options(e, cfg);
        if (rc != IPUP_OK) return rc;
    }
    return ipup__setup_half(e, cfg);
}

/* the stages' first/last layers: cfg.split checked, or ipup_balance_stages; then each
   stage's layers, input and output widths */
static int ipup__setup_split(ipup__core *e, const ipup_config *cfg) {
    int32_t s, l, S = e->S, L = e->n_layers;
    if (cfg->split) {
        e->stages[0].first = 0;
        for (s = 1; s < S; s++) {
            int32_t b = cfg->split[s - 1];
            if (b <= e->stages[s - 1].first || b >= L)
                return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                                  "split[%d] = %d: stage %d would be empty or out of range; stage "
                                  "starts must be strictly increasing layer indices in 1..%d",
                                  (int)(s - 1), (int)b,
                                  (int)(b <= e->stages[s - 1].first ? s - 1 : s), (int)(L - 1));
            e->stages[s].first = b;
        }
        for (s = 1; s < S; s++) {
            ipup_layer_kind kind[IPUP_MAX_LAYERS];
            int32_t b = e->stages[s].first, open;
            for (l = 0; l < L; l++) kind[l] = e->layers[l].info.kind;
            open = ipup__split_in_block(kind, L, b);
            if (open >= 0)
                return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                                  "split[%d] = %d: stage %d would start inside the residual "
                                  "block of layer %d (%s); a split never falls inside a block: "
                                  "start the stage at layer %d or after the block's res_end",
                                  (int)(s - 1), (int)b, (int)s, (int)open,
                                  e->model.layers[open].id, (int)open);
        }
    } else {
        int32_t split[IPUP_MAX_LAYERS];
        int rc = ipup_balance_stages(&e->model, S, split, e->msg, sizeof e->msg);
        if (rc) return rc;
        e->stages[0].first = 0;
        for (s = 1; s < S; s++) e->stages[s].first = split[s - 1];
    }
    for (s = 0; s < S; s++) {
        e->stages[s].last = (s + 1 < S) ? e->stages[s + 1].first : L;
        for (l = e->stages[s].first; l < e->stages[s].last; l++) e->layers[l].stage = s;
        e->stages[s].in_n = e->layers[e->stages[s].first].info.in_n;
        e->stages[s].out_n = e->layers[e->stages[s].last - 1].info.out_n;
    }
    return IPUP_OK;
}

/* stash layouts, sizes, FLOPs per stage. Offsets in a stash entry are int32 and the
   kernels index with int: every offset and every buffer of a stage is at most 2^31-1
   floats, checked as it grows (each term is < 2^62, so the int64 sums never wrap). */
#define IPUP__MAXF ((int64_t)0x7fffffff)
static int ipup__layout_big(ipup__core *e, int32_t s, const char *what, int64_t n,
                            const char *fix) {
    return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CAPACITY,
                      "stage %d: %s needs %lld floats with micro-batch %d, more than 2^31-1 "
                      "(offsets and kernel indices are int32); %s",
                      (int)s, what, (long long)n, (int)e->B, fix);
}
/* floats of IPUP_CONV3X3_BWD_SCRATCH in int64_t, or -1 past 2^31-1 */
static int64_t ipup__conv_scratch(const ipup_layer_info *I) {
    int64_t a = (int64_t)9 * I->in_c,
            b = (int64_t)I->out_c + (int64_t)(I->in_h - 2) * (I->in_w - 2);
    return (b > IPUP__MAXF / a) ? -1 : a * b;
}
/* Layer l is a ReLU that ends plain stage s, and the next plain stage starts with a
   max-pool of its output: that pool's backward applies the ReLU's mask (its input
   x = relu(z) > 0 exactly when z > 0: ipup_maxpool2_relu_bwd_f32, the bits of the two
   passes), so the gradient stage s receives is already dL/dz. The ReLU then keeps no
   input, its backward is the identity, and the layer before it writes relu(z) straight
   into the exchange (the fused kernel): two passes over the activation fewer per
   micro-batch, the same bits as when both layers share a stage. */
static int ipup__relu_to_pool(const ipup__core *e, int32_t s, int32_t l) {
    const ipup__stage *st = &e->stages[s];
    return s + 1 < e->S && l == st->last - 1 && e->layers[l].info.kind == IPUP_LAYER_RELU &&
           e->layers[l].need_dx && e->n_branches[s] <= 1 && e->n_branches[s + 1] <= 1 &&
           e->stages[s + 1].first == l + 1 && e->layers[l + 1].info.kind == IPUP_LAYER_MAXPOOL2;
}
/* Layer l of plain stage s is a max-pool whose backward is needed and whose input is
   relu(z): after a ReLU and a dense or conv of the same stage, or first in the stage after
   ipup__relu_to_pool. It keeps, instead of its input, one byte per output element: the
   arg-max with the ReLU's mask (ipup_maxpool2_fwd_idx_f32); its backward
   (ipup_maxpool2_bwd_idx_f32) gives the bits of ipup_maxpool2_relu_bwd_f32 on relu(z). A
   ReLU before it in the stage keeps nothing, and in training the layer, the ReLU and the
   pool run chunk by chunk (ipup__fwd_pooled): the activation never leaves the cache. A
   sixteenth of the stash, and no pass over the activation. */
static int ipup__pool_idx_at(const ipup__core *e, int32_t s, int32_t l) {
    const ipup__stage *st = &e->stages[s];
    if (l < st->first || l >= st->last || e->n_branches[s] > 1 ||
        e->layers[l].info.kind != IPUP_LAYER_MAXPOOL2 || !e->layers[l].need_dx)
        return 0;
    if (l == st->first) return s > 0 && ipup__relu_to_pool(e, s - 1, l - 1);
    return l >= st->first + 2 && e->layers[l - 1].info.kind == IPUP_LAYER_RELU &&
           e->layers[l - 1].need_dx &&
           (e->layers[l - 2].info.kind == IPUP_LAYER_DENSE ||
            e->layers[l - 2].info.kind == IPUP_LAYER_CONV3X3);
}
/* Stage s reads its input straight from the ring slot: its first layer keeps no input
   (an arg-max pool) and nothing else needs the stage input in the stash entry, which then
   has no region for it (not with recomputation: the entry is the input). */
static int ipup__direct_in(const ipup__core *e, int32_t s) {
    return !ipup__rec(e, s) && ipup__pool_idx_at(e, s, e->stages[s].first);
}
/* IPUPIPE_CHUNK_BYTES: the bytes of activation a chunk of ipup__fwd_pooled leaves in the
   cache (256 KB, a quarter of the smallest L2 of current x86 server cores). The samples of
   a chunk of layer l's output: at least 1, at most the micro-batch. */
#ifndef IPUPIPE_CHUNK_BYTES
#define IPUPIPE_CHUNK_BYTES 262144
#endif
static int32_t ipup__chunk_rows(const ipup_layer_info *I, int32_t B) {
    size_t c = (size_t)IPUPIPE_CHUNK_BYTES / ((size_t)I->out_n * sizeof(float));
    return c < 1 ? 1 : c > (size_t)B ? B : (int32_t)c;
}

/* The frozen layers of stage st take their place in its parameter block after the trained
   ones' (which end at par): the gradient and optimizer-state blocks cover only the trained
   part. Returns the block's size. */
static int64_t ipup__frozen_params(ipup__core *e, const ipup__stage *st, int64_t par) {
    int32_t l;
    for (l = st->first; l < st->last; l++) {
        const ipup_layer_info *I = &e->layers[l].info;
        if (!I->n_w || !I->frozen) continue;
        e->layers[l].param_off = (int32_t)par;
        par += (((int64_t)I->n_w + 15) & ~(int64_t)15) + (((int64_t)I->n_b + 15) & ~(int64_t)15);
        if (par > IPUP__MAXF) break;
    }
    for (l = st->first; l < st->last && par <= IPUP__MAXF; l++) { /* running statistics */
        const ipup_layer_info *I = &e->layers[l].info;
        if (I->kind != IPUP_LAYER_BATCHNORM) continue;
        e->layers[l].run_off = (int32_t)par;
        par += 2 * (int64_t)ipup__round16(I->out_c);
    }
    return par;
}

/* Layer l of stage s keeps its input in the stash entry for its backward: it trains, or
   it is a parameterless layer whose input gradient is needed and which reads its input
   (not a loss, not a ReLU whose mask a pool applies, not the ReLU before an arg-max pool).
   A ReLU whose output the next layer keeps reads that instead (relu(z) > 0 exactly when
   z > 0), so it keeps nothing either. */
static int ipup__keeps_input(const ipup__core *e, int32_t s, int32_t l) {
    const ipup__layer_facts *Ly = &e->layers[l];
    const ipup_layer_info *I = &Ly->info;
    const int trains = I->n_w && !I->frozen; /* a frozen dense or conv reads only w for dx */
    if (I->stash_floats <= 0 || ipup__is_loss(I->kind) || !(trains || (Ly->need_dx && !I->n_w)) ||
        ipup__relu_to_pool(e, s, l) || ipup__pool_idx_at(e, s, l + 1))
        return 0;
    return !(I->kind == IPUP_LAYER_RELU && l + 1 < e->stages[s].last &&
             ipup__keeps_input(e, s, l + 1));
}

/* schedule table into ops (cap), rows, depths, ring capacities */
/* warnings (ipup_sched_generate's, one per line) into warn (warn_len bytes), cut after
   the last whole line that fits */
static void ipup__keep_warnings(char *warn, size_t warn_len, const char *w) {
    size_t n = 0, keep = 0;
    if (!warn || !warn_len) return;
    while (w[n] && n + 1 < warn_len) {
        if (w[n] == '\n') keep = n + 1;
        n++;
    }
    if (!w[n]) keep = n;
    IPUPIPE_MEMCPY(warn, w, keep);
    warn[keep] = 0;
}

/* The forward-only table of cfg.schedule (gpipe's for interleaved, zb-h1 and the later
   kinds, which have none) with the training table's mapping into ops (cap); rows by
   device (row NULL: a plan); every ring into a stage gets room for the inputs the table
   keeps in flight. */
static int ipup__setup_pred_table(ipup__core *e, ipup_op *ops, int32_t cap, int32_t *row) {
    ipup_sched_config sc;
    char wmsg[IPUP_MSG_MAX];
    int32_t peak[IPUP_MAX_LAYERS], s, d, i, pos = 0;
    int rc;
    IPUPIPE_MEMSET(&sc, 0, sizeof sc);
    if (e->has_concurrent) {
        /* concurrent stages have no forward-only table: predict runs stage after stage */
        IPUPIPE_MEMSET(&e->pred_table, 0, sizeof e->pred_table);
        e->pred_stats.microbatches = e->M;
        return IPUP_OK;
    }
    sc.kind = e->cfg.schedule == IPUP_SCHED_INTERLEAVED || e->cfg.schedule >= IPUP_SCHED_ZBH1
                  ? IPUP_SCHED_GPIPE /* the schedules with no forward-only form */
                  : e->cfg.schedule;
    sc.stages = e->S;
    sc.microbatches = e->M;
    sc.devices = e->cfg.devices;
    sc.virtual_stages = e->cfg.virtual_stages;
    sc.stage_device = e->cfg.stage_device;
    if (e->cfg.schedule > IPUP_SCHED_ZBH1) { /* gpipe on the training table's V or loop */
        sc.stage_device = e->table.stage_device;
        sc.virtual_stages = 0;
    }
    sc.strict = e->cfg.strict;
    sc.forward_only = 1;
    rc = ipup_sched_generate(&sc, ops, cap, &e->pred_table, wmsg, sizeof wmsg);
    if (rc == IPUP_OK && e->pred_table.devices != e->P) rc = IPUP_ERR_CONFIG;
    if (rc)
        return ipup__fail(e->msg, sizeof e->msg, rc,
                          "the forward-only table of ipup_predict (%s, %d stages, %d "
                          "micro-batches, %d IPUs): %s",
                          ipup_sched_kind_name(sc.kind), (int)e->S, (int)e->M, (int)e->P, wmsg);
    ipup_sched_peak_inflight(&e->pred_table, peak, IPUP_MAX_LAYERS);
    for (s = 1; s < e->S; s++)
        if ((uint32_t)peak[s] > e->stages[s].fwd_cap)
            e->stages[s].fwd_cap = ipup__ring_cap((uint32_t)peak[s]);
    e->pred_stats.schedule = sc.kind;
    e->pred_stats.steps = e->pred_table.steps;
    e->pred_stats.microbatches = e->M;
    for (s = 0; s < e->S; s++) e->pred_stats.inflight[s] = peak[s];
    if (!row) return IPUP_OK;
    for (d = 0; d < e->P; d++) {
        e->pred_row_start[d] = pos;
        for (i = 0; i < e->pred_table.n_ops; i++) if (ops[i].device == d) row[pos++] = i;
    }
    e->pred_row_start[e->P] = pos;
    return IPUP_OK;
}

/* Stage s's stash and W-stash FIFO depths and the capacities of the rings into it, from
   the table in ops (ipup__setup_table); IPUP_ERR_CONFIG when the table runs its ops out of
   micro-batch order */
static int ipup__stage_depths(ipup__core *e, const ipup_op *ops, int32_t s) {
    int32_t nf = 0, nbw = 0, ni = 0, nw = 0, depth = 0, wdepth = 0;
    int32_t last_f = -1, last_g = -1, last_i = -1;
    int32_t fprod = 0, fcons = 0, fcap = 0, bprod = 0, bcons = 0, bcap = 0;
    int32_t i = 0;
    while (i < e->table.n_ops) {
        int32_t t = ops[i].step, k;
        int32_t j0 = i;
        /* productions of this step first */
        for (k = j0; k < e->table.n_ops && ops[k].step == t; k++) {
            const ipup_op *o = &ops[k];
            /* concurrent stages: branch 0 counts (lanes: ipup__conc_setup) */
            if (ipup_op_branch(o) > 0) continue;
            if (o->stage == s - 1 && o->kind == IPUP_OP_F) fprod++;
            if (o->stage == s + 1 && (o->kind == IPUP_OP_B || o->kind == IPUP_OP_I)) bprod++;
        }
        if (fprod - fcons > fcap) fcap = fprod - fcons;
        if (bprod - bcons > bcap) bcap = bprod - bcons;
        for (k = j0; k < e->table.n_ops && ops[k].step == t; k++) {
            const ipup_op *o = &ops[k];
            if (o->stage != s || ipup_op_branch(o) > 0) continue;
            switch (o->kind) {
            case IPUP_OP_F:
                if (o->mb != last_f + 1) goto order;
                last_f = o->mb; nf++; fcons++;
                break;
            case IPUP_OP_B:
                if (o->mb != last_g + 1 || o->mb != last_i + 1) goto order;
                last_g = o->mb; last_i = o->mb; nbw++; bcons++;
                break;
            case IPUP_OP_I:
                if (o->mb != last_i + 1) goto order;
                last_i = o->mb; ni++; bcons++;
                break;
            case IPUP_OP_W:
                if (o->mb != last_g + 1) goto order;
                last_g = o->mb; nw++;
                break;
            default: goto order;
            }
            if (nf - nbw - nw > depth) depth = nf - nbw - nw;
            if (ni - nw > wdepth) wdepth = ni - nw;
        }
        i = k;
    }
    e->stages[s].depth = depth > 0 ? depth : 1;
    e->stages[s].wstash_depth = wdepth;
    e->stages[s].fwd_cap = ipup__ring_cap((uint32_t)(fcap > 0 ? fcap : 1));
    e->stages[s].bwd_cap = ipup__ring_cap((uint32_t)(bcap > 0 ? bcap : 1));
    return IPUP_OK;
order:
    return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                      "schedule %s runs the ops of stage %d out of micro-batch order; the "
                      "emulator's FIFO stash needs in-order schedules (every built-in one is)",
                      ipup_sched_kind_name(e->cfg.schedule), (int)s);
}

/* schedule table into ops (cap), rows, depths, ring capacities; the generator's warnings
   into warn (may be NULL) */
/* the ipup_sched_config of the training table of e (after ipup__emu_conc_config) */
static void ipup__train_sched_config(const ipup__core *e, ipup_sched_config *sc) {
    IPUPIPE_MEMSET(sc, 0, sizeof *sc);
    sc->kind = e->cfg.schedule;
    sc->stages = e->S;
    sc->microbatches = e->M;
    sc->devices = e->cfg.devices;
    sc->virtual_stages = e->cfg.virtual_stages;
    sc->stage_device = e->cfg.stage_device;
    sc->strict = e->cfg.strict;
    sc->popxl = e->cfg.popxl;
    if (e->has_concurrent) sc->concurrent = e->cfg.concurrent; /* concurrent stages */
}

static int ipup__setup_table(ipup__core *e, ipup_op *ops, int32_t cap, int32_t *row, char *warn,
                             size_t warn_len) {
    ipup_sched_config sc;
    char wmsg[IPUP_MSG_MAX];
    int32_t S = e->S, M = e->M, i, s, d, P;
    int rc;
    if ((rc = ipup__emu_conc_config(e)) != IPUP_OK) return rc; /* cfg.concurrent */
    ipup__train_sched_config(e, &sc);
    if (e->cfg.stage_device) {
        for (s = 0; s < S; s++) {
            int32_t dv = e->cfg.stage_device[s];
            if (dv < 0 || dv >= IPUP_MAX_DEVICES || (e->cfg.devices > 0 && dv >= e->cfg.devices))
                return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                                  "stage %d is mapped to IPU %d, which does not exist (devices per "
                                  "replica: %d, at most IPUP_MAX_DEVICES = %d); map it to 0..%d",
                                  (int)s, (int)dv, (int)e->cfg.devices, (int)IPUP_MAX_DEVICES,
                                  (int)((e->cfg.devices > 0 ? e->cfg.devices : IPUP_MAX_DEVICES) -
                                        1));
        }
    }
    if (sc.kind == IPUP_SCHED_DUALPIPE) /* a dual table: two model copies (§3) */
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                          "schedule dualpipe runs two model copies, which the emulator runs as "
                          "2 replicas of M/2 micro-batches each (parameters 2x, the same bits): "
                          "set replicas = 2, microbatches = M/2 and another schedule (1f1b)");
    rc = ipup_sched_generate(&sc, ops, cap, &e->table, wmsg, sizeof wmsg);
    if (rc)
        return ipup__fail(e->msg, sizeof e->msg, rc,
                          "schedule %s with %d stages and %d micro-batches: %s",
                          ipup_sched_kind_name(sc.kind), (int)S, (int)M, wmsg);
    ipup__keep_warnings(warn, warn_len, wmsg);
    P = e->P = e->table.devices;
    if (P > IPUP_MAX_DEVICES)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                          "the schedule uses %d IPUs per replica; at most IPUP_MAX_DEVICES = %d",
                          (int)P, (int)IPUP_MAX_DEVICES);
    if ((int64_t)P * e->R > IPUP_MAX_IPUS)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CONFIG,
                          "%d replicas x %d IPUs = %d IPUs; at most IPUP_MAX_IPUS = %d; define it "
                          "larger before the include",
                          (int)e->R, (int)P, (int)(P * e->R), (int)IPUP_MAX_IPUS);
    e->n_ipus = P * e->R;
    e->ops = ops;
    for (s = 0; s < S; s++) e->stages[s].device = e->table.stage_device[s];
    /* rows */
    if (row) {
        int32_t pos = 0;
        for (d = 0; d < P; d++) {
            e->row_start[d] = pos;
            for (i = 0; i < e->table.n_ops; i++) if (ops[i].device == d) row[pos++] = i;
        }
        e->row_start[P] = pos;
        e->row = row;
    }
    /* FIFO depths, in-order check, ring capacities */
    for (s = 0; s < S; s++)
        if ((rc = ipup__stage_depths(e, ops, s)) != IPUP_OK) return rc;
    /* ipup_predict's forward-only table: into its own host-pool block, or (a plan) over
       the training table, which is no longer needed */
    return ipup__setup_pred_table(e, row ? e->pred_ops : ops, row ? S * M : cap,
                                  row ? e->pred_row : NULL);
}

/* cfg.dtype float16: the regions of a stash entry (offsets in the fp32 entry, in floats) that
   a binary16 slot keeps, in slot order: the stage input (when held), each kept layer input
   (fp16) or arg-max bytes (raw words), the labels (uint16 class indices; mse: fp16 targets),
   the dlogits (fp16). rec: the slot of a recomputing stage (input and labels only). */
typedef struct ipup__region {
    size_t off, n;
    int kind; /* 0 floats as fp16, 1 raw 32-bit words (2 halves each), 2 the labels */
} ipup__region;
static int ipup__entry_regions(const ipup__core *e, int32_t s, int rec, ipup__region *rg) {
    const ipup__stage *st = &e->stages[s];
    const size_t B = (size_t)e->B;
    int n = 0;
    int32_t l;
    if (rec || !ipup__direct_in(e, s)) {
        rg[n].off = 0; rg[n].n = B * (size_t)st->in_n; rg[n++].kind = 0;
    }
    for (l = st->first; l < st->last && !rec; l++) {
        const ipup__layer_facts *Ly = &e->layers[l];
        if (Ly->stash_off < 0 || (l == st->first && !Ly->pool_idx)) continue;
        rg[n].off = (size_t)Ly->stash_off;
        if (Ly->pool_idx) { rg[n].n = (B * (size_t)Ly->info.out_n + 3u) / 4u; rg[n++].kind = 1; }
        else { rg[n].n = B * (size_t)Ly->info.in_n; rg[n++].kind = 0; }
    }
    rg[n].off = (size_t)st->label_off; rg[n].n = B * (size_t)ipup__lab_w(e); rg[n++].kind = 2;
    if (st->dloss_off >= 0 && !rec) {
        rg[n].off = (size_t)st->dloss_off; rg[n].n = B * (size_t)e->classes; rg[n++].kind = 0;
    }
    return n;
}
static size_t ipup__halves_floats(const ipup__region *rg, int n) {
    size_t h = 0;
    int i;
    for (i = 0; i < n; i++) h += rg[i].kind == 1 ? 2u * rg[i].n : rg[i].n;
    return ((h + 1u) / 2u + 15u) & ~(size_t)15u;
}
static void ipup__half_layout(ipup__core *e, int32_t s) {
    ipup__stage *st = &e->stages[s];
    ipup__region rg[IPUP_MAX_LAYERS + 3];
    int n = ipup__entry_regions(e, s, 0, rg); /* filled first, then read */
    st->hentry_floats = ipup__halves_floats(rg, n);
    n = ipup__entry_regions(e, s, 1, rg);
    st->hrentry_floats = ipup__halves_floats(rg, n);
    st->hwentry_floats = ((st->wentry_n + 1u) / 2u + 15u) & ~(size_t)15u;
}
/* the floats of one stash slot and of one W-stash slot of stage s as carved */
static size_t ipup__slot_floats(const ipup__core *e, int32_t s) {
    const ipup__stage *st = &e->stages[s];
    if (e->cfg.dtype == IPUP_DTYPE_F16)
        return ipup__rec(e, s) ? st->hrentry_floats : st->hentry_floats;
    return ipup__rec(e, s) ? st->rentry_floats : st->entry_floats;
}
static size_t ipup__wslot_floats(const ipup__core *e, int32_t s) {
    return e->cfg.dtype == IPUP_DTYPE_F16 ? e->stages[s].hwentry_floats
                                          : e->stages[s].wentry_floats;
}
/* the parts of a stage's layout that the kinds from IPUP_LAYER_CONV2D on add (layer l):
   a trained batch norm's batch statistics in the gradient block after its
   gamma and beta (par: the block so far), the scratch of a general convolution (*conv), the
   residual blocks' buffers (*res), the markers' res_sc */
static void ipup__layout_more(ipup__core *e, int32_t l, int64_t *par, int64_t *conv,
                              int64_t *res) {
    ipup__layer_facts *Ly = &e->layers[l];
    const ipup_layer_info *I = &Ly->info;
    const int64_t B = e->B;
    Ly->stat_off = -1;
    Ly->run_off = -1;
    Ly->res_sc = 0;
    if (I->kind == IPUP_LAYER_BATCHNORM && !I->frozen) {
        Ly->stat_off = (int32_t)*par;
        *par += (int64_t)e->R * e->M * 2 * (int64_t)ipup__round16(I->out_c);
    }
    if (I->kind == IPUP_LAYER_CONV2D) {
        ipup_conv2d_shape sh;
        int64_t f;
        ipup_conv2d_shape_init(&sh, I->in_h, I->in_w, I->in_c, I->out_c, I->kh, I->kw, I->sh,
                               I->sw, e->model.layers[l].same);
        f = (int64_t)ipup_conv2d_scratch_floats(&sh, e->B);
        if (f > *conv) *conv = f;
    }
    if (I->kind == IPUP_LAYER_RES_BEGIN || I->kind == IPUP_LAYER_RES_SHORTCUT ||
        I->kind == IPUP_LAYER_RES_END) {
        int64_t m = B * (I->in_n > I->out_n ? I->in_n : I->out_n);
        int32_t j;
        if (m > *res) *res = m;
        for (j = l; j < e->n_layers && I->kind == IPUP_LAYER_RES_BEGIN; j++) {
            if (e->layers[j].info.kind == IPUP_LAYER_RES_SHORTCUT) Ly->res_sc = 1;
            if (e->layers[j].info.kind == IPUP_LAYER_RES_END) break;
        }
        for (j = l; j >= 0 && I->kind == IPUP_LAYER_RES_END; j--) {
            if (e->layers[j].info.kind == IPUP_LAYER_RES_SHORTCUT) Ly->res_sc = 1;
            if (e->layers[j].info.kind == IPUP_LAYER_RES_BEGIN) break;
        }
    }
}

static int ipup__setup_layout(ipup__core *e) {
    static const char lower[] = "lower the micro-batch (cfg.microbatch) or put fewer layers in "
                                "this stage (more stages)";
    int32_t s, l, B = e->B;
    int32_t k = ipup__state_slots(&e->cfg);
    if (e->cfg.dtype == IPUP_DTYPE_F16 && !ipup__target_w(e) && e->classes > 65536)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_UNSUPPORTED,
                          "cfg.dtype float16 keeps class labels as 16-bit integers: %d classes "
                          "are too many; use float32", (int)e->classes);
    for (s = 0; s < e->S; s++) {
        ipup__stage *st = &e->stages[s];
        int64_t cur, pp = 0, conv = 0, par = 0, maxt = 0, wcur = 0, res = 0;
        size_t chunk = 0;
        cur = ipup__direct_in(e, s) ? 0 : (int64_t)B * st->in_n; /* a0: the stage input */
        st->flops_f = st->flops_i = st->flops_w = 0;
        for (l = st->first; l < st->last; l++) {
            ipup__layer_facts *Ly = &e->layers[l];
            const ipup_layer_info *I = &Ly->info;
            int64_t mx = (int64_t)(I->in_n > I->out_n ? I->in_n : I->out_n) * B;
            const int trains = I->n_w && !I->frozen, keep = ipup__keeps_input(e, s, l);
            if (mx > pp) pp = mx;
            Ly->stash_off = -1;
            Ly->pool_idx = ipup__pool_idx_at(e, s, l);
            if (keep) {
                if (l == st->first && !Ly->pool_idx) Ly->stash_off = 0;
                else {
                    Ly->stash_off = (int32_t)cur;
                    cur += Ly->pool_idx ? ((int64_t)B * I->out_n + 3) / 4 : (int64_t)B * I->in_n;
                }
            }
            if (Ly->pool_idx && l > st->first) {
                const ipup_layer_info *C = &e->layers[l - 2].info;
                size_t f = (size_t)ipup__chunk_rows(C, B) * (size_t)C->out_n;
                if (f > chunk) chunk = f;
            }
            if (cur > IPUP__MAXF || pp > IPUP__MAXF)
                return ipup__layout_big(e, s,
                                        cur > pp ? "a stash entry (the inputs kept for the "
                                                   "backward)"
                                                 : "an activation buffer",
                                        cur > pp ? cur : pp, lower);
            Ly->dy_off = -1;
            Ly->param_off = -1;
            if (trains) { /* frozen layers: ipup__frozen_params */
                int64_t tw = ((int64_t)I->n_w + 15) & ~(int64_t)15,
                        tb = ((int64_t)I->n_b + 15) & ~(int64_t)15;
                Ly->param_off = (int32_t)par;
                par += tw + tb;
                if (tw > maxt) maxt = tw;
                Ly->dy_off = (int32_t)wcur;
                wcur += (int64_t)B * I->out_n;
                if (par > IPUP__MAXF)
                    return ipup__layout_big(e, s, "the weights", par,
                                            "put fewer layers in this stage "
                                            "(more stages) or use smaller layers");
                if (wcur > IPUP__MAXF)
                    return ipup__layout_big(e, s, "a weight-gradient stash entry", wcur, lower);
            }
            ipup__layout_more(e, l, &par, &conv, &res);
            if (par > IPUP__MAXF || conv > IPUP__MAXF || res > IPUP__MAXF)
                return ipup__layout_big(e, s,
                                        par > IPUP__MAXF    ? "the weights"
                                        : conv > IPUP__MAXF ? "a convolution's scratch"
                                                            : "a residual block's buffer",
                                        par > conv ? (par > res ? par : res)
                                                   : (conv > res ? conv : res),
                                        lower);
            if (I->kind == IPUP_LAYER_CONV3X3) {
                int64_t f2 = ipup__conv_scratch(I);
                if (f2 < 0)
                    return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CAPACITY,
                                      "layer %d (%s): the conv3x3 backward's "
                                      "scratch (IPUP_CONV3X3_BWD_SCRATCH: 9 x %d "
                                      "channels x (%d + %d x %d)) is more than "
                                      "2^31-1 floats; lower the input size or the channels",
                                      (int)l, e->model.layers[l].id, (int)I->in_c, (int)I->out_c,
                                      (int)(I->in_h - 2), (int)(I->in_w - 2));
                if (f2 > conv) conv = f2; /* the forward needs 1 (IPUP_CONV3X3_FWD_SCRATCH) */
            }
            st->flops_f += I->flops_fwd;
            st->flops_i += Ly->need_dx ? I->flops_bwd_dx : 0;
            st->flops_w += I->flops_bwd_dw;
        }
        st->n_grads = (size_t)par;
        par = ipup__frozen_params(e, st, par);
        if (par > IPUP__MAXF)
            return ipup__layout_big(e, s, "the weights", par,
                                    "put fewer layers in this stage "
                                    "(more stages) or use smaller layers");
        st->label_off = (int32_t)cur;
        cur += (int64_t)B * ipup__lab_w(e);
        st->dloss_off = -1;
        if (s == e->S - 1) { st->dloss_off = (int32_t)cur; cur += (int64_t)B * e->classes; }
        if (cur > IPUP__MAXF - 15)
            return ipup__layout_big(e, s,
                                    "a stash entry (the inputs kept "
                                    "for the backward and the labels)",
                                    cur, lower);
        st->entry_floats = (size_t)((cur + 15) & ~(int64_t)15);
        st->rentry_floats =
            (size_t)(((int64_t)B * st->in_n + (int64_t)B * ipup__lab_w(e) + 15) & ~(int64_t)15);
        st->wentry_floats = (size_t)((wcur + 15) & ~(int64_t)15);
        st->wentry_n = (size_t)wcur;
        ipup__half_layout(e, s);
        st->pingpong_floats = (size_t)((pp + 15) & ~(int64_t)15);
        st->conv_floats = (size_t)conv;
        st->chunk_floats = (chunk + 15u) & ~(size_t)15u;
        st->res_floats = (size_t)((res + 15) & ~(int64_t)15);
        st->n_params = (size_t)par;
        st->n_state = ipup__mulz((size_t)k, st->n_grads);
        st->max_tensor = (size_t)maxt;
        st->flops_opt = (int64_t)st->n_grads * (k == 2 ? 12 : k == 1 ? 4 : 2);
    }
    if (e->has_concurrent) ipup__conc_setup(e); /* the lanes of concurrent stages */
    return IPUP_OK;
}

/* bytes of stash recomputation would save on stage x (0 when its entries are smaller than
   the stage input: an arg-max pool first, ipup__direct_in) */
/* stage s recomputes, or would by default (every stage but the last) when no stage does:
   the stages recompute_saved counts */
static int ipup__rec_would(const ipup__core *e, int32_t s) {
    return e->cfg.recompute_stages ? ipup__rec(e, s) : s < e->S - 1;
}
static size_t ipup__recompute_saves(const ipup__stage *x) {
    return x->entry_floats > x->rentry_floats
               ? (size_t)x->depth * (x->entry_floats - x->rentry_floats) * sizeof(float)
               : 0;
}
/* the same in the storage type of the stash (cfg.dtype) */
static size_t ipup__recompute_saves_of(const ipup__core *e, const ipup__stage *x) {
    if (e->cfg.dtype != IPUP_DTYPE_F16) return ipup__recompute_saves(x);
    return x->hentry_floats > x->hrentry_floats
               ? (size_t)x->depth * (x->hentry_floats - x->hrentry_floats) * sizeof(float)
               : 0;
}

/* cfg.dtype float16: the fp32 scratch of stage s's ring messages and W-stash entry */
static void ipup__half_carve(const ipup__core *e, ipup__arena *a, int32_t s, ipup__stage_rt *rt) {
    const ipup__stage *st = &e->stages[s];
    const size_t B = (size_t)e->B;
    /* stage 0 reads the infeed (evaluating: its ping-pong buffer) and sends no dx */
    rt->xb = s > 0 ? ipup__allocf(a, B * (size_t)st->in_n, IPUP_MEM_SCRATCH) : NULL;
    rt->wwork = st->wstash_depth ? ipup__allocf(a, st->wentry_floats, IPUP_MEM_SCRATCH) : NULL;
}

/* IPUPIPE_STAGING_FLOATS (build-options): the chunk in which offloaded optimizer state
   (and, with the weights offloaded, the weights the update reads) is streamed through the
   IPU for the update: 1024 floats = 4 KB per state slot (8 KB for Adam), one buffer per
   IPU. The optimizers are element-wise, so a chunk is updated exactly as the whole tensor
   would be; a multiple of 16 floats starting at multiples of 16, so every chunk starts
   where the kernels' vector blocks start and the bits do not change. 4 KB is about 1 % of
   the state of a layer of 100 K parameters (the mlp's 784 x 256 layer has 200 K), and the
   chunk never exceeds the IPU's largest tensor, whose state is part of what moves: the
   staging never costs more than the offload saves. The stream time counts the bytes, not
   the chunks. */
/* floats of one chunk of the optimizer staging on device d: IPUPIPE_STAGING_FLOATS, or
   the largest tensor of its stages when smaller (rounded up to 16) */
static size_t ipup__opt_chunk(const ipup__core *e, int32_t d) {
    size_t m = 0;
    int32_t s;
    for (s = 0; s < e->S; s++)
        if (e->stages[s].device == d && e->n_branches[s] <= 1 &&
            ((e->stages[s].max_tensor + 15u) & ~(size_t)15u) > m)
            m = (e->stages[s].max_tensor + 15u) & ~(size_t)15u;
    return m < (size_t)IPUPIPE_STAGING_FLOATS ? m : (size_t)IPUPIPE_STAGING_FLOATS;
}
/* floats of layer l's parameter block as ipup__layer_params streams it */
static size_t ipup__layer_block(const ipup__core *e, int32_t l) {
    const ipup_layer_info *I = &e->layers[l].info;
    return I->n_w ? ipup__round16(I->n_w) + ipup__round16(I->n_b) : 0;
}
/* floats of the staging of a dense layer (IN, OUT) unpacked R rows at a time for B rows of
   activations (ipup__wchunk_of's layout: the rows' weights, the bias, the rows' columns of
   x, a product) */
static size_t ipup__wchunk_floats(size_t R, size_t OUT, size_t B) {
    return ipup__round16z(R * OUT) + ipup__round16z(OUT) + ipup__round16z(B * R) +
           ipup__round16z(B * (OUT > R ? OUT : R));
}
/* Binary16 weights are unpacked into the IPU's staging (fp32) for an op, a layer at a time,
   and a dense layer of 4096 weights or more a chunk of its rows at a time when that takes
   less staging than the whole layer: a quarter of its rows, at most 16384 floats (64 KB),
   so that the staging costs well under what storing the layer as binary16 saves (the mlp's
   784 x 256 layer: 13 chunks of 64 rows, 105 KB of staging against 392 KB saved). The rows
   of a chunk of dense layer l, all its inputs when it is one chunk; they depend on the
   layer's shape and the micro-batch alone, so the bits do not depend on the split. */
static int32_t ipup__w16_rows(const ipup__core *e, int32_t l) {
    const ipup_layer_info *I = &e->layers[l].info;
    int32_t R;
    if (!ipup__w16(e) || I->kind != IPUP_LAYER_DENSE || I->out_n <= 0 ||
        (int64_t)I->in_n * I->out_n < 4096)
        return I->in_n;
    R = 16384 / I->out_n < I->in_n / 4 ? 16384 / I->out_n : I->in_n / 4;
    if (R < 1) R = 1;
    return ipup__wchunk_floats((size_t)R, (size_t)I->out_n, (size_t)e->B) <
                   ipup__layer_block(e, l)
               ? R
               : I->in_n;
}
/* floats of layer l's weights as ipup__layer_params gives them: its block, and under
   binary16 weights a batch norm's running statistics after it */
static size_t ipup__layer_unpacked(const ipup__core *e, int32_t l) {
    const ipup_layer_info *I = &e->layers[l].info;
    const size_t R = (size_t)ipup__w16_rows(e, l), OUT = (size_t)I->out_n, B = (size_t)e->B;
    if (R < (size_t)I->in_n) return ipup__wchunk_floats(R, OUT, B);
    return ipup__layer_block(e, l) + (ipup__w16(e) && I->kind == IPUP_LAYER_BATCHNORM
                                          ? 2 * ipup__round16(I->out_c)
                                          : 0);
}
/* floats of the weight staging of device d (its largest layer, ipup__layer_unpacked); *all:
   the bytes of the weights of its plain stages */
static size_t ipup__wstage_floats(const ipup__core *e, int32_t d, size_t *all) {
    size_t stage = 0, sum = 0;
    int32_t s, l;
    for (s = 0; s < e->S; s++) {
        if (e->stages[s].device != d || e->n_branches[s] > 1) continue;
        sum += ipup__round64(e->stages[s].n_params * (ipup__w16(e) ? 2u : 4u));
        for (l = e->stages[s].first; l < e->stages[s].last; l++)
            if (ipup__layer_unpacked(e, l) > stage) stage = ipup__layer_unpacked(e, l);
    }
    if (all) *all = sum;
    return stage;
}
/* The weights of device d are offloaded: floats of its staging buffer (its largest layer's
   block: a dense or conv kernel needs a layer's weights whole), 0 when not. Offloaded only
   when that saves on-chip bytes: the weights of its plain stages exceed the staging (binary16
   weights have the staging anyway). */
static size_t ipup__woff(const ipup__core *e, int32_t d) {
    size_t all, stage;
    if (!(e->cfg.offload & IPUP_OFFLOAD_WEIGHTS)) return 0;
    stage = ipup__wstage_floats(e, d, &all);
    if (ipup__w16(e)) return all ? stage : 0;
    return all > ipup__round64(stage * sizeof(float)) ? stage : 0;
}
/* Plain stage s keeps its stash in streaming memory (IPUP_OFFLOAD_ACTIVATIONS): entries
   are written there by F and streamed back into the on-chip work entry (the one
   recomputation has anyway; else one entry of staging) for B, I and W. Only when that
   saves on-chip bytes: the stash is larger than the staging it needs. */
static int ipup__act_off(const ipup__core *e, int32_t s) {
    const ipup__stage *st = &e->stages[s];
    size_t stash;
    if (!(e->cfg.offload & IPUP_OFFLOAD_ACTIVATIONS) || e->n_branches[s] > 1) return 0;
    stash = ipup__round64(ipup__mulz((size_t)st->depth, ipup__slot_floats(e, s)) * sizeof(float));
    /* recomputation and float16 have the on-chip work entry anyway */
    return ipup__rec(e, s) || e->cfg.dtype == IPUP_DTYPE_F16
               ? stash > 0
               : stash > ipup__round64(st->entry_floats * sizeof(float));
}

/* carve one IPU's pool (device d of a replica whose stage runtimes are stage_rt, rings fwd,
   bwd: IPUP_MAX_LAYERS each, lane runtimes lane_rt and fan-out buffers fanout); stage_rt,
   fwd, bwd, lane_rt and fanout NULL: counting only */
static void ipup__carve_ipu(const ipup__core *e, ipup__arena *a, ipup__arena *stream, int32_t d,
                            ipup__stage_rt *stage_rt, ipup_ring *fwd, ipup_ring *bwd,
                            ipup__lane_rt *lane_rt, ipup__fanout_bufs *fanout) {
    int32_t s;
    int32_t k = ipup__state_slots(&e->cfg);
    const size_t woff = ipup__woff(e, d);
    const size_t wst = ipup__w16(e) ? ipup__wstage_floats(e, d, NULL) : woff;
    float *staging = NULL, *wstage = NULL; /* one of each per IPU, shared by its stages */
    const int f16 = e->cfg.dtype == IPUP_DTYPE_F16;
    const size_t esz = f16 ? sizeof(uint16_t) : sizeof(float); /* a ring element */
    ipup__stage_rt count_only;
    IPUPIPE_MEMSET(&count_only, 0, sizeof count_only);
    if (k && (e->cfg.offload & IPUP_OFFLOAD_OPTIMIZER) && ipup__opt_chunk(e, d))
        staging = ipup__allocf(a, ipup__mulz((size_t)k, ipup__opt_chunk(e, d)), IPUP_MEM_SCRATCH);
    if (wst) wstage = ipup__allocf(a, wst, IPUP_MEM_SCRATCH);
    for (s = 0; s < e->S; s++) {
        const ipup__stage *st = &e->stages[s];
        ipup__stage_rt *rt = stage_rt ? &stage_rt[s] : &count_only;
        /* a concurrent stage: its lanes (ipup__conc_carve) */
        if (st->device != d || e->n_branches[s] > 1) continue;
        if (ipup__w16(e)) {
            rt->params = NULL;
            rt->hparams = (uint16_t *)ipup__alloc(woff ? stream : a,
                                                  ipup__mulz(st->n_params, sizeof(uint16_t)),
                                                  IPUP_MEM_WEIGHTS);
        } else {
            rt->params = ipup__allocf(woff ? stream : a, st->n_params, IPUP_MEM_WEIGHTS);
            rt->hparams = NULL;
        }
        rt->wstage = wstage;
        rt->wstage_floats = wst;
        rt->grads = ipup__allocf(a, st->n_grads, IPUP_MEM_GRADS);
        rt->state = NULL;
        if (k) {
            if (e->cfg.offload & IPUP_OFFLOAD_OPTIMIZER)
                rt->state = ipup__allocf(stream, st->n_state, IPUP_MEM_OPTIMIZER);
            else rt->state = ipup__allocf(a, st->n_state, IPUP_MEM_OPTIMIZER);
        }
        rt->stash = ipup__allocf(ipup__act_off(e, s) ? stream : a,
                                 ipup__mulz((size_t)st->depth, ipup__slot_floats(e, s)),
                                 IPUP_MEM_STASH);
        rt->wstash = st->wstash_depth
                         ? ipup__allocf(a, ipup__mulz((size_t)st->wstash_depth,
                                                      ipup__wslot_floats(e, s)),
                                        IPUP_MEM_STASH)
                         : NULL;
        rt->work = ipup__rec(e, s) || ipup__act_off(e, s) || f16
                       ? ipup__allocf(a, st->entry_floats, IPUP_MEM_SCRATCH)
                       : NULL;
        if (f16) ipup__half_carve(e, a, s, rt);
        rt->pingpong[0] = ipup__allocf(a, st->pingpong_floats, IPUP_MEM_SCRATCH);
        rt->pingpong[1] = ipup__allocf(a, st->pingpong_floats, IPUP_MEM_SCRATCH);
        rt->conv = st->conv_floats ? ipup__allocf(a, st->conv_floats, IPUP_MEM_SCRATCH) : NULL;
        rt->chunk = st->chunk_floats ? ipup__allocf(a, st->chunk_floats, IPUP_MEM_SCRATCH) : NULL;
        rt->res[0] = st->res_floats ? ipup__allocf(a, st->res_floats, IPUP_MEM_SCRATCH) : NULL;
        rt->res[1] = st->res_floats ? ipup__allocf(a, st->res_floats, IPUP_MEM_SCRATCH) : NULL;
        rt->staging = staging;
        /* receive sides of the rings into this stage */
        if (s > 0 && e->n_branches[s - 1] <= 1) {
            size_t slot =
                ((size_t)e->B * (size_t)st->in_n + (size_t)e->B * (size_t)ipup__lab_w(e)) * esz;
            void *buf = ipup__alloc(a, ipup_ring_bytes(st->fwd_cap, slot), IPUP_MEM_EXCHANGE);
            if (fwd && a->base && !a->oom)
                ipup_ring_init(&fwd[s], buf, ipup_ring_bytes(st->fwd_cap, slot), st->fwd_cap, slot,
                               IPUPIPE_RING_START);
        }
        if (s < e->S - 1 && e->n_branches[s + 1] <= 1) {
            size_t slot = (size_t)e->B * (size_t)st->out_n * esz;
            void *buf = ipup__alloc(a, ipup_ring_bytes(st->bwd_cap, slot), IPUP_MEM_EXCHANGE);
            if (bwd && a->base && !a->oom)
                ipup_ring_init(&bwd[s], buf, ipup_ring_bytes(st->bwd_cap, slot), st->bwd_cap, slot,
                               IPUPIPE_RING_START);
        }
        rt->pred = s == e->S - 1
                       ? ipup__allocf(a,
                                      ipup__mulz((size_t)e->B,
                                                 (size_t)e->layers[e->n_layers - 1].info.in_n),
                                      IPUP_MEM_SCRATCH)
                       : NULL;
    }
    /* lanes and their neighbours' buffers */
    if (e->has_concurrent) ipup__conc_carve(e, a, stream, d, lane_rt, fanout);
}

/* Slots of a replica's outfeed ring. The cooperative runner drains it every step: a step's
   records. The threaded runner's IPU threads wake the host when the ring is half full, and
   a woken host takes a core from an IPU thread (the replicas then wait for it at their
   barrier): room for the whole job's records (up to 1024, or a step's), so the host wakes
   about once per job instead of twice per step (the mlp's 2 replicas: 1.86x -> 1.91x). */
static uint32_t ipup__outfeed_cap(int32_t M, int32_t repeat, int threads, int stream) {
    uint64_t n = (uint64_t)M;
    if (threads && repeat > 1 && !stream) { /* streamed records: a step's (ipup__drain_stream) */
        n *= (uint64_t)repeat;
        if (n > 1024u) n = M > 1024 ? (uint64_t)M : 1024u;
    }
    return ipup__ring_cap((uint32_t)n);
}

/* host pool: ops, rows, infeed/outfeed rings, outfeed records. e may be NULL (sizes only).
   stream, out_fl: ipup__out_stream, ipup__out_floats. */
static size_t ipup__carve_host(ipup_emu *e, ipup__arena *a, int32_t S, int32_t M, int32_t R,
                               int32_t B, int32_t in_n, int32_t repeat, int threads, int stream,
                               size_t out_fl, ipup_op **ops, int32_t **row) {
    int32_t cap = IPUP_SCHED_MAX_OPS(S, M), r;
    uint32_t fc = ipup__ring_cap((uint32_t)M), fo = ipup__outfeed_cap(M, repeat, threads, stream);
    size_t islot = ipup__mulz(ipup__mulz((size_t)B, (size_t)in_n + 1u), sizeof(float));
    size_t oslot = ipup__out_slot(out_fl);
    void *p;
    p = ipup__alloc(a, ipup__mulz((size_t)cap, sizeof(ipup_op)), IPUP_MEM_SCRATCH);
    if (ops) *ops = (ipup_op *)p;
    p = ipup__alloc(a, ipup__mulz((size_t)cap, sizeof(int32_t)), IPUP_MEM_SCRATCH);
    if (row) *row = (int32_t *)p;
    for (r = 0; r < R; r++) {
        size_t b1 = ipup_ring_bytes(fc, islot);
        size_t b2 = ipup_ring_bytes(fo, oslot);
        void *p1 = ipup__alloc(a, b1, IPUP_MEM_EXCHANGE);
        void *p2 = ipup__alloc(a, b2, IPUP_MEM_EXCHANGE);
        if (e && a->base && !a->oom) {
            ipup_ring_init(&e->infeed[r], p1, b1, fc, islot, IPUPIPE_RING_START);
            ipup_ring_init(&e->outfeed[r], p2, b2, fo, oslot, IPUPIPE_RING_START);
        }
    }
    p = ipup__alloc(a,
                    ipup__mulz(ipup__mulz(ipup__mulz((size_t)repeat, (size_t)R), (size_t)M),
                               sizeof(ipup_outfeed_rec)),
                    IPUP_MEM_SCRATCH);
    if (e) e->records = (ipup_outfeed_rec *)p;
    /* ipup_predict: the forward-only table (S x M ops), its rows, the cost model's scratch */
    p = ipup__alloc(a, ipup__mulz(ipup__mulz((size_t)S, (size_t)M), sizeof(ipup_op)),
                    IPUP_MEM_SCRATCH);
    if (e) e->core.pred_ops = (ipup_op *)p;
    p = ipup__alloc(a, ipup__mulz(ipup__mulz((size_t)S, (size_t)M), sizeof(int32_t)),
                    IPUP_MEM_SCRATCH);
    if (e) e->core.pred_row = (int32_t *)p;
    p = ipup__alloc(a, ipup__mulz((size_t)M, sizeof(double)), IPUP_MEM_SCRATCH);
    if (e) e->pred_start = (double *)p;
    return a->used;
}

static void ipup__fill_report(const ipup__core *e, ipup__arena *a, ipup__arena *sa, int32_t d,
                              ipup_mem_report *m) {
    int32_t s, c;
    IPUPIPE_MEMSET(m, 0, sizeof *m);
    m->capacity = a->base ? a->cap : 0;
    m->used = a->used;
    for (c = 0; c < IPUP_MEM_CATEGORIES; c++) m->by_category[c] = a->by_category[c];
    m->stream_capacity = sa->base ? sa->cap : 0;
    m->stream_used = sa->used;
    for (s = 0; s < e->S; s++) {
        const ipup__stage *x = &e->stages[s];
        if (x->device != d || e->n_branches[s] > 1) continue;
        if (ipup__rec_would(e, s)) m->recompute_saved += ipup__recompute_saves_of(e, x);
        m->offload_saved += x->n_state * sizeof(float);
        m->frozen_saved +=
            (x->n_params - x->n_grads) * (size_t)(1 + ipup__state_slots(&e->cfg)) * sizeof(float);
    }
    for (c = 0; c < IPUP_MEM_CATEGORIES; c++) m->peak_by_category[c] = m->by_category[c];
    m->peak_by_category[IPUP_MEM_STASH] = 0;
    m->peak_by_category[IPUP_MEM_EXCHANGE] = 0;
    m->high_water = m->used - m->by_category[IPUP_MEM_STASH] - m->by_category[IPUP_MEM_EXCHANGE];
}
/* the host pool's size fits in size_t (the outfeed records: repeat x replicas x micro-batches) */
static int ipup__host_size_ok(ipup__core *e) {
    ipup__arena h;
    ipup__arena_init(&h, NULL, 0);
    ipup__carve_host(NULL, &h, e->S, e->M, e->R, e->B, e->in_n, e->cfg.repeat,
                     e->cfg.runner == IPUP_RUNNER_THREADS, ipup__out_stream(&e->cfg),
                     ipup__core_out(e), NULL, NULL);
    if (!h.overflow) return IPUP_OK;
    return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CAPACITY,
                      "the host pool's size overflows size_t: cfg.repeat %d x %d replicas x %d "
                      "micro-batches outfeed records; lower cfg.repeat",
                      (int)e->cfg.repeat, (int)e->R, (int)e->M);
}
/* every IPU's pool size (and streaming memory) fits in size_t */
static int ipup__ipu_sizes_ok(ipup__core *e) {
    int32_t d;
    for (d = 0; d < e->P; d++) {
        ipup__arena a, sa;
        ipup__arena_init(&a, NULL, 0);
        ipup__arena_init(&sa, NULL, 0);
        ipup__carve_ipu(e, &a, &sa, d, NULL, NULL, NULL, NULL, NULL);
        if (a.overflow || sa.overflow)
            return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CAPACITY,
                              "device %d's pool size overflows size_t (micro-batch %d, stash "
                              "depths up to %d micro-batches); lower the micro-batch or the "
                              "micro-batches, or use more stages",
                              (int)d, (int)e->B, (int)e->M);
    }
    return IPUP_OK;
}

/* resolve defaults into e->cfg / counts, shapes, split; no table yet */
static int ipup__setup_model(ipup__core *e, const ipup_config *cfg) {
    ipup_layer_info info[IPUP_MAX_LAYERS];
    int32_t need_dx[IPUP_MAX_LAYERS], l;
    int rc;
    if (!cfg || !cfg->model)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_ARG,
                          "the configuration has no model (cfg.model is NULL)");
    e->cfg = *cfg;
    e->model = *cfg->model;
    rc = ipup_model_info(&e->model, info, IPUP_MAX_LAYERS, e->msg, sizeof e->msg);
    if (rc) return rc;
    e->n_layers = e->model.n_layers;
    ipup__setup_ids(e);
    ipup__need_dx(info, e->n_layers, need_dx);
    for (l = 0; l < e->n_layers; l++) {
        e->layers[l].info = info[l];
        e->layers[l].seed = ipup_layer_seed(cfg->seed, l);
        e->layers[l].need_dx = need_dx[l];
    }
    e->in_n = info[0].in_n;
    e->classes = info[e->n_layers - 1].in_n;
    if ((rc = ipup__setup_counts(e, cfg)) != IPUP_OK) return rc;
    if ((rc = ipup__setup_options(e, cfg)) != IPUP_OK) return rc;
    if ((rc = ipup__host_size_ok(e)) != IPUP_OK) return rc;
    return ipup__setup_split(e, cfg);
}

/* out of memory: the message, with the remedies and what each saves */
/* line appended to the warnings warn (warn_len bytes, NUL-terminated) when it fits whole */
static void ipup__warn_line(char *warn, size_t warn_len, const char *line) {
    size_t len = ipup__strlen(warn);
    if (len + ipup__strlen(line) < warn_len) ipup_snprintf(warn + len, warn_len - len, "%s", line);
}
/* Warnings of an offload asked for but not applied (it would not save on-chip bytes),
   appended to warn (warn_len bytes) a whole line at a time, as ipup__keep_warnings keeps
   the schedule's */
static void ipup__offload_warnings(const ipup__core *e, char *warn, size_t warn_len) {
    char line[IPUP_MSG_MAX];
    int32_t d, s;
    if (!warn || !warn_len) return;
    for (d = 0; d < e->P; d++) {
        size_t stage, all;
        if (!(e->cfg.offload & IPUP_OFFLOAD_WEIGHTS) || ipup__woff(e, d)) continue;
        stage = ipup__wstage_floats(e, d, &all);
        if (!all) continue;
        ipup_snprintf(line, sizeof line,
                      "offload: IPU%d keeps its weights on chip: the staging of its largest layer "
                      "(%zu bytes) would not be smaller than its weights (%zu bytes)\n",
                      (int)d, ipup__round64(stage * sizeof(float)), all);
        ipup__warn_line(warn, warn_len, line);
    }
    for (s = 0; s < e->S; s++) {
        const ipup__stage *st = &e->stages[s];
        if (!(e->cfg.offload & IPUP_OFFLOAD_ACTIVATIONS) || e->n_branches[s] > 1 ||
            ipup__act_off(e, s) || !st->depth)
            continue;
        ipup_snprintf(line, sizeof line,
                      "offload: stage %d keeps its stash on chip: one entry of staging (%zu bytes) "
                      "would not be smaller than its stash of %d (%zu bytes)\n",
                      (int)s, ipup__round64(st->entry_floats * sizeof(float)), (int)st->depth,
                      ipup__round64((size_t)st->depth * st->entry_floats * sizeof(float)));
        ipup__warn_line(warn, warn_len, line);
    }
}
/* on-chip bytes device d carves with the offload bits `off` (counting only) */
static size_t ipup__need_with(ipup__core *e, int32_t d, int32_t off) {
    ipup__arena a, sa;
    int32_t keep = e->cfg.offload;
    e->cfg.offload = off;
    ipup__arena_init(&a, NULL, 0);
    ipup__arena_init(&sa, NULL, 0);
    ipup__carve_ipu(e, &a, &sa, d, NULL, NULL, NULL, NULL, NULL);
    e->cfg.offload = keep;
    return a.used;
}
/* the on-chip work entry recomputation adds to stage x (float16 has one anyway) */
static size_t ipup__rec_cost(const ipup__core *e, const ipup__stage *x) {
    return e->cfg.dtype == IPUP_DTYPE_F16 ? 0 : ipup__round64(x->entry_floats * sizeof(float));
}
/* The remedies of an IPU over its memory, in the tutorials' order (TF1 pipelining
   tutorial: recomputation, then offloading, then more pipeline stages, then a smaller
   micro-batch), each with the on-chip bytes it saves on this IPU (net of its staging) */
static void ipup__oom_fixes(ipup__core *e, int32_t d, const ipup__arena *a, ipup__textbuf *b) {
    static const char *const what[3] = {"the optimizer state", "the weights", "the activations"};
    size_t rs = 0, sz;
    int32_t s, i, n = 0, nr = 0;
    for (s = 0; s < e->S; s++) { /* the stages whose recomputation saves more than its entry */
        const ipup__stage *x = &e->stages[s];
        nr += x->device == d && e->n_branches[s] <= 1 && !ipup__rec(e, s) &&
              ipup__recompute_saves_of(e, x) > ipup__rec_cost(e, x);
    }
    for (s = 0; s < e->S; s++) {
        const ipup__stage *x = &e->stages[s];
        size_t cost = ipup__rec_cost(e, x);
        if (x->device != d || e->n_branches[s] > 1 || ipup__rec(e, s) ||
            ipup__recompute_saves_of(e, x) <= cost)
            continue;
        ipup__textbuf_add(b, "%s%d", n++ ? "," : nr > 1 ? ". Fix, in the tutorials' order: "
                                                         "recomputation of stages "
                                               : ". Fix, in the tutorials' order: "
                                                 "recomputation of stage ",
                          (int)s);
        rs += ipup__recompute_saves_of(e, x) - cost;
    }
    if (n) ipup__textbuf_add(b, " (cfg.recompute_stages; saves %zu bytes)", rs);
    for (i = 0; i < 3; i++) {
        int32_t bit = (int32_t)1 << i;
        if ((e->cfg.offload & bit) || (sz = ipup__need_with(e, d, e->cfg.offload | bit)) >= a->used)
            continue;
        ipup__textbuf_add(b, "%s offload %s (IPUP_OFFLOAD_%s; saves %zu bytes)",
                          n++ ? "," : ". Fix, in the tutorials' order:", what[i],
                          i == 0 ? "OPTIMIZER" : i == 1 ? "WEIGHTS" : "ACTIVATIONS", a->used - sz);
    }
    ipup__textbuf_add(b,
                      "%s split the model over more stages and IPUs, or use a smaller micro-batch "
                      "(stash, exchange and scratch, %zu bytes here, shrink with it)",
                      n ? "," : ". Fix, in the tutorials' order:",
                      a->by_category[IPUP_MEM_STASH] + a->by_category[IPUP_MEM_EXCHANGE] +
                          a->by_category[IPUP_MEM_SCRATCH]);
}
/* A layer that no remedy fits under the limit: its weights (or, offloaded, their staging:
   the kernels need a layer whole) and its gradients stay on one IPU whatever the plan */
static void ipup__oom_layer(const ipup__core *e, size_t limit, ipup__textbuf *b) {
    int32_t l, big = -1;
    size_t most = 0;
    for (l = 0; l < e->n_layers; l++) {
        const ipup_layer_info *I = &e->layers[l].info;
        size_t n = ipup__round64(ipup__layer_block(e, l) * sizeof(float)) *
                   (I->n_w && !I->frozen ? 2u : 1u);
        if (n > most) { most = n; big = l; }
    }
    if (big >= 0 && most > limit)
        ipup__textbuf_add(b,
                          ". No plan fits: layer %s alone needs %zu bytes on its IPU (its weights, "
                          "or their staging when offloaded, and its gradients)",
                          e->model.layers[big].id, most);
}
/* IPUP_ERR_OOM with the message of IPU ipu: its pool (limit 0) or cfg.ipu_bytes (limit)
   is smaller than the a->used bytes it carves */
static int ipup__oom_core(ipup__core *e, int32_t ipu, const ipup__arena *a, size_t limit) {
    int32_t r = ipu / e->P, d = ipu % e->P, s;
    ipup__textbuf b;
    b.buf = e->msg; b.cap = sizeof e->msg; b.len = 0;
    ipup__textbuf_add(&b, "IPU%d (replica %d, device %d) out of memory: stage", (int)ipu, (int)r,
                      (int)d);
    for (s = 0; s < e->S; s++)
        if (e->stages[s].device == d)
            ipup__textbuf_add(&b, " %d (layers %d..%d)", (int)s, (int)e->stages[s].first,
                              (int)(e->stages[s].last - 1));
    ipup__textbuf_add(&b,
                      " needs %zu bytes (weights %zu, grads %zu, optimizer %zu, stash %zu, "
                      "exchange %zu, scratch %zu) but ",
                      a->used, a->by_category[IPUP_MEM_WEIGHTS], a->by_category[IPUP_MEM_GRADS],
                      a->by_category[IPUP_MEM_OPTIMIZER], a->by_category[IPUP_MEM_STASH],
                      a->by_category[IPUP_MEM_EXCHANGE], a->by_category[IPUP_MEM_SCRATCH]);
    if (limit) {
        int32_t dd;
        ipup__textbuf_add(&b, "the IPU has %zu (cfg.ipu_bytes)", limit);
        for (dd = d + 1; dd < e->P; dd++) { /* the other IPUs over it */
            size_t need = ipup__need_with(e, dd, e->cfg.offload);
            if (need > limit)
                ipup__textbuf_add(&b, "; IPU%d needs %zu", (int)(r * e->P + dd), need);
        }
    } else
        ipup__textbuf_add(&b, "the pool has %zu. Give cfg.ipu[%d] >= %zu bytes (ipup_plan_config)",
                          a->cap, (int)ipu, a->used);
    ipup__oom_fixes(e, d, a, &b);
    if (limit) ipup__oom_layer(e, limit, &b);
    return IPUP_ERR_OOM;
}
/* >>plan: the plan of a configuration, in an ipup_emu or a small scratch */
/* the loss layer's input width (0: the model does not parse); an outputs mode only */
static int32_t ipup__loss_width(const ipup_model_desc *m) {
    ipup_layer_info info[IPUP_MAX_LAYERS];
    if (ipup_model_info(m, info, IPUP_MAX_LAYERS, NULL, 0) != IPUP_OK) return 0;
    return info[m->n_layers - 1].in_n;
}
IPUPIPE_DEF size_t ipup_host_bytes(const ipup_config *cfg) {
    ipup__arena a;
    int32_t S, M, R, B, rep, W = 0;
    int64_t in_n;
    size_t n;
    if (!cfg || !cfg->model) return 0;
    S = cfg->stages > 0 ? cfg->stages : 1;
    M = cfg->microbatches > 0 ? cfg->microbatches : 1;
    R = cfg->replicas > 0 ? cfg->replicas : 1;
    B = cfg->microbatch > 0 ? cfg->microbatch : 1;
    rep = cfg->repeat > 0 ? cfg->repeat : 1;
    if (cfg->model->in_h <= 0 || cfg->model->in_w <= 0 || cfg->model->in_c <= 0) return 0;
    in_n = (int64_t)cfg->model->in_h * cfg->model->in_w; /* < 2^62 */
    if (in_n > 0x7fffffff) return 0;
    in_n *= cfg->model->in_c;
    if (in_n > 0x7fffffff || (int64_t)S * M > 0x7fffffff / 3) return 0;
    ipup__arena_init(&a, NULL, 0);
    if (cfg->outfeed_mode != IPUP_OUTFEED_LOSS && !(W = ipup__loss_width(cfg->model))) return 0;
    n = ipup__carve_host(NULL, &a, ipup__conc_ops_stages(cfg->concurrent, S), M, R, B,
                         (int32_t)in_n, rep, cfg->runner == IPUP_RUNNER_THREADS,
                         ipup__out_stream(cfg), ipup__out_floats(cfg, B, W), NULL, NULL);
    return a.overflow ? 0 : n;
}

/* the cost model's step time and samples/s of a core with its table and layout, as
   ipup_run reports them for a run of cfg.repeat steps (the same ipup__step_times, the
   same arithmetic as ipup_run_steps' figures) */
static int ipup__plan_rate(ipup__core *e, ipup_op *ops, int32_t cap, ipup_plan *plan) {
    double busy[IPUP_MAX_DEVICES], phase[IPUP_PHASES], phase_busy[IPUP_PHASES], sim;
    int64_t samples = (int64_t)e->cfg.repeat * e->R * e->M * e->B;
    ipup_sched_config sc;
    char wmsg[IPUP_MSG_MAX];
    int rc;
    /* the forward-only table of ipup__setup_table lies over the training table: again */
    ipup__train_sched_config(e, &sc);
    rc = ipup_sched_generate(&sc, ops, cap, &e->table, wmsg, sizeof wmsg);
    if (rc != IPUP_OK) /* it was generated once with the same inputs: not expected */
        return ipup__fail(e->msg, sizeof e->msg, rc, "the plan's schedule table: %s", wmsg);
    e->ops = ops;
    plan->step_seconds = ipup__step_times(e, busy, phase, phase_busy);
    sim = plan->step_seconds * (double)e->cfg.repeat + /* ipup_run_steps' sim_seconds */
          e->cost_model.launch_seconds;
    plan->samples_per_second = sim > 0.0 ? (double)samples / sim : 0.0;
    return IPUP_OK;
}

/* the plan of a core whose model is set up (ipup__setup_model): the table into ops
   (cap ops), the layout, then every figure of the plan */
static int ipup__plan_fill(ipup__core *e, ipup_op *ops, int32_t cap, const ipup_config *cfg,
                           ipup_plan *plan, char *warn, size_t warn_len, int rate) {
    int32_t d, s;
    int rc = ipup__setup_table(e, ops, cap, NULL, warn, warn_len);
    if (rc) return rc;
    if ((rc = ipup__setup_layout(e)) != IPUP_OK || (rc = ipup__ipu_sizes_ok(e)) != IPUP_OK)
        return rc;
    ipup__offload_warnings(e, warn, warn_len);
    plan->stages = e->S; plan->devices = e->P; plan->replicas = e->R; plan->ipus = e->n_ipus;
    for (s = 0; s < e->S; s++) {
        plan->split[s] = e->stages[s].first;
        plan->stage_device[s] = (int16_t)e->stages[s].device;
        plan->stash_depth[s] = e->stages[s].depth;
    }
    for (d = 0; d < e->P; d++) {
        ipup__arena a, sa;
        ipup__arena_init(&a, NULL, 0);
        ipup__arena_init(&sa, NULL, 0);
        ipup__carve_ipu(e, &a, &sa, d, NULL, NULL, NULL, NULL, NULL);
        if (e->cfg.ipu_bytes && a.used > e->cfg.ipu_bytes)
            return ipup__oom_core(e, d, &a, e->cfg.ipu_bytes);
        plan->ipu_bytes[d] = a.used;
        plan->stream_bytes[d] = sa.used;
        ipup__fill_report(e, &a, &sa, d, &plan->mem[d]);
    }
    plan->params = 0;
    for (d = 0; d < e->n_layers; d++)
        plan->params += (int64_t)e->layers[d].info.n_w + e->layers[d].info.n_b;
    plan->host_bytes = ipup_host_bytes(cfg);
    if (rate && (rc = ipup__plan_rate(e, ops, cap, plan)) != IPUP_OK) return rc;
    e->msg[0] = 0;
    return IPUP_OK;
}

IPUPIPE_DEF int ipup_plan_config(ipup_emu *work, const ipup_config *cfg, ipup_plan *plan) {
    ipup_op stack_ops[IPUP_PLAN_STACK_OPS];
    ipup_op *ops = stack_ops;
    ipup__core *e;
    int32_t cap = IPUP_PLAN_STACK_OPS;
    int rc;
    if (!work) return IPUP_ERR_ARG; /* no emulator: nowhere to put a message */
    if ((rc = ipup__refuse_frozen(work, "ipup_plan_config",
                                  "plan with another (scratch) ipup_emu, or ")) != IPUP_OK)
        return rc;
    IPUPIPE_MEMSET((void *)work, 0, sizeof *work);
    e = &work->core;
    if (!plan)
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_ARG,
                          "ipup_plan_config: plan is NULL; give an ipup_plan to fill");
    IPUPIPE_MEMSET(plan, 0, sizeof *plan);
    rc = ipup__setup_model(e, cfg);
    if (rc) return rc;
    /* from here on the configuration is e->cfg: cfg with its defaults */
    if (e->cfg.host.mem) {
        ipup__arena h;
        ipup__arena_init(&h, e->cfg.host.mem, e->cfg.host.bytes);
        ipup__carve_host(NULL, &h, ipup__conc_ops_stages(e->cfg.concurrent, e->S), e->M, e->R, e->B,
                         e->in_n, e->cfg.repeat, e->cfg.runner == IPUP_RUNNER_THREADS,
                         ipup__out_stream(&e->cfg), ipup__core_out(e), &ops, NULL);
        if (h.oom)
            return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CAPACITY,
                              "host pool too small: needs %zu "
                              "bytes (ipup_host_bytes), cfg.host has %zu",
                              h.used, e->cfg.host.bytes);
        cap = IPUP_SCHED_MAX_OPS(ipup__conc_ops_stages(e->cfg.concurrent, e->S), e->M);
    } else if ((int64_t)IPUP_SCHED_MAX_OPS(ipup__conc_ops_stages(e->cfg.concurrent, e->S), e->M) >
               IPUP_PLAN_STACK_OPS) {
        return ipup__fail(e->msg, sizeof e->msg, IPUP_ERR_CAPACITY,
                          "ipup_plan_config: the table of %d stages x %d micro-batches needs up to "
                          "%d ops, more than IPUP_PLAN_STACK_OPS (%d); give cfg.host "
                          "(ipup_host_bytes(cfg) = %zu bytes)",
                          (int)e->S, (int)e->M, (int)IPUP_SCHED_MAX_OPS(e->S, e->M),
                          (int)IPUP_PLAN_STACK_OPS, ipup_host_bytes(&e->cfg));
    }
    return ipup__plan_fill(e, ops, cap, &e->cfg, plan, NULL, 0, 1);
}

/* the scratch bytes for a configuration of S stages and M micro-batches, 0 when that
   many does not fit size_t (IPUP_PLAN_SCRATCH_BYTES without the overflow) */
static size_t ipup__plan_scratch_need(int64_t S, int64_t M) {
    size_t fixed = IPUP_PLAN_SCRATCH_BYTES(0, 0);
    if (S < 1) S = 1;
    if (M < 1) M = 1;
    if ((uint64_t)S * (uint64_t)M > ((size_t)-1 - fixed) / (3 * sizeof(ipup_op))) return 0;
    return fixed + (size_t)3 * (size_t)S * (size_t)M * sizeof(ipup_op);
}

/* ipup_plan_pools; rate 0: without step_seconds and samples_per_second (0) */
static int ipup__plan_pools_x(const ipup_config *cfg, ipup_plan *plan, void *scratch,
                              size_t scratch_bytes, char *msg, size_t msg_len, int rate) {
    size_t pad, need;
    ipup__core *e;
    int rc;
    if (msg && msg_len) msg[0] = 0;
    if (!plan)
        return ipup__fail(msg, msg_len, IPUP_ERR_ARG,
                          "ipup_plan_pools: plan is NULL; give an ipup_plan to fill");
    IPUPIPE_MEMSET(plan, 0, sizeof *plan);
    if (!cfg || !cfg->model)
        return ipup__fail(msg, msg_len, IPUP_ERR_ARG,
                          "the configuration has no model (cfg.model is NULL)");
    need = ipup__plan_scratch_need(cfg->stages, cfg->microbatches);
    pad = scratch ? (size_t)((0u - (uintptr_t)scratch) & (IPUP_POOL_ALIGN - 1)) : 0;
    if (need == 0)
        return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                          "ipup_plan_pools: %d stages x %d micro-batches: the schedule table's "
                          "size overflows size_t; lower cfg.microbatches",
                          (int)cfg->stages, (int)cfg->microbatches);
    if (!scratch || scratch_bytes < need)
        return ipup__fail(msg, msg_len, IPUP_ERR_CAPACITY,
                          "ipup_plan_pools: the scratch has %zu bytes%s; the plan of %d stages x "
                          "%d micro-batches needs IPUP_PLAN_SCRATCH_BYTES(%d, %d) = %zu",
                          scratch ? scratch_bytes : (size_t)0, scratch ? "" : " (scratch is NULL)",
                          (int)(cfg->stages > 0 ? cfg->stages : 1),
                          (int)(cfg->microbatches > 0 ? cfg->microbatches : 1),
                          (int)(cfg->stages > 0 ? cfg->stages : 1),
                          (int)(cfg->microbatches > 0 ? cfg->microbatches : 1), need);
    e = (ipup__core *)(void *)((uint8_t *)scratch + pad);
    IPUPIPE_MEMSET((void *)e, 0, sizeof *e);
    rc = ipup__setup_model(e, cfg);
    if (rc == IPUP_OK) { /* the table gets all the scratch after the core: >= 3*S*M ops */
        size_t ops = (scratch_bytes - pad - sizeof *e) / sizeof(ipup_op);
        rc = ipup__plan_fill(e, (ipup_op *)(void *)(e + 1),
                             ops > (size_t)INT32_MAX ? INT32_MAX : (int32_t)ops, cfg, plan, msg,
                             msg_len, rate);
    }
    if (rc != IPUP_OK) {
        IPUPIPE_MEMSET(plan, 0, sizeof *plan);
        if (msg && msg_len) ipup_snprintf(msg, msg_len, "%s", e->msg);
    }
    return rc;
}
IPUPIPE_DEF int ipup_plan_pools(const ipup_config *cfg, ipup_plan *plan, void *scratch,
                                size_t scratch_bytes, char *msg, size_t msg_len) {
    return ipup__plan_pools_x(cfg, plan, scratch, scratch_bytes, msg, msg_len, 1);
}

/* ipup_plan_auto: one point of its space, and the search's state */
typedef struct ipup__auto_pt {
    double rate;                     /* samples/s; < 0: no point */
    size_t bytes;                    /* the largest IPU's pool */
    int32_t ipus, S, kind, R, B, M, offload;
    uint32_t rec;                    /* cfg.recompute_stages */
    int32_t split[IPUP_MAX_LAYERS];  /* first layers of stages 1..S-1 */
} ipup__auto_pt;
#define IPUP__AUTO_MAXK 4 /* stages per IPU whose recompute subsets are searched one by one */
typedef struct ipup__auto {
    const ipup_plan_request *req;
    ipup_config cfg;                 /* the configuration being planned */
    ipup_plan *plan;                 /* the caller's, as working space */
    void *scratch;
    size_t scratch_bytes, budget;    /* budget: bytes per IPU (SIZE_MAX: unlimited) */
    int32_t ipus, L, Smax, Bmax, Mmax, smallest; /* smallest: the pass for the OOM message */
    int32_t phase;                   /* 0: no knobs; 1: all knobs at once; 2: the search */
    uint32_t kinds, knobs;
    ipup__auto_pt best;              /* the best that fits (pass 1), the smallest (pass 2) */
    int32_t devs[IPUP_SCHED_KIND_COUNT][IPUP_MAX_LAYERS + 1]; /* IPUs of (kind, S); -1 none */
} ipup__auto;

/* a better than b: more samples/s (or, in the smallest pass, fewer bytes), then the
   documented tie order */
static int ipup__auto_better(const ipup__auto *A, const ipup__auto_pt *a,
                             const ipup__auto_pt *b) {
    int32_t s;
    if (b->rate < 0.0) return a->rate >= 0.0;
    if (A->smallest && a->bytes != b->bytes) return a->bytes < b->bytes;
    if (a->rate != b->rate) return a->rate > b->rate;
#define IPUP__AUTO_KEY(f) if (a->f != b->f) return a->f < b->f
    IPUP__AUTO_KEY(ipus); IPUP__AUTO_KEY(S); IPUP__AUTO_KEY(kind); IPUP__AUTO_KEY(R);
    IPUP__AUTO_KEY(B); IPUP__AUTO_KEY(M);
    for (s = 0; s < a->S - 1; s++) IPUP__AUTO_KEY(split[s]);
    IPUP__AUTO_KEY(offload); IPUP__AUTO_KEY(rec);
#undef IPUP__AUTO_KEY
    return 0;
}

/* plan point p (its bytes, IPUs and rate into *p); IPUP_OK or ipup_plan_pools' code */
static int ipup__auto_plan_x(ipup__auto *A, ipup__auto_pt *p, int rate) {
    ipup_config *c = &A->cfg;
    int32_t d;
    int rc;
    c->stages = p->S;
    c->split = p->S > 1 ? p->split : NULL;
    c->schedule = (ipup_sched_kind)p->kind;
    c->replicas = p->R;
    c->microbatch = p->B;
    c->microbatches = p->M;
    c->offload = p->offload;
    c->recompute = 0;
    c->recompute_stages = p->rec;
    rc = ipup__plan_pools_x(c, A->plan, A->scratch, A->scratch_bytes, NULL, 0, rate);
    if (rc != IPUP_OK) return rc;
    if (A->plan->ipus > A->ipus) return IPUP_ERR_CONFIG; /* more IPUs than there are */
    p->bytes = 0;
    for (d = 0; d < A->plan->devices; d++)
        if (A->plan->ipu_bytes[d] > p->bytes) p->bytes = A->plan->ipu_bytes[d];
    p->ipus = A->plan->ipus;
    p->rate = A->plan->samples_per_second;
    return IPUP_OK;
}
static int ipup__auto_plan(ipup__auto *A, ipup__auto_pt *p) { return ipup__auto_plan_x(A, p, 1); }

/* p planned: the best so far when it fits (pass 1), or when it is smaller (pass 2) */
static void ipup__auto_offer(ipup__auto *A, const ipup__auto_pt *p) {
    if ((A->smallest || p->bytes <= A->budget) && ipup__auto_better(A, p, &A->best))
        A->best = *p;
}

/* the recompute mask of point p that gives IPU d the stages of subset `sub` (bit i: the
   i-th stage of d, list[d][i]) for every d, sub = j restricted to d's stages */
static uint32_t ipup__auto_mask(const int32_t *cnt, int16_t list[][IPUP__AUTO_MAXK],
                                int32_t P, const int32_t *sub) {
    uint32_t m = 0;
    int32_t d, i;
    for (d = 0; d < P; d++)
        for (i = 0; i < cnt[d]; i++)
            if ((sub[d] >> i) & 1) m |= (uint32_t)1 << list[d][i];
    return m;
}

/* the recompute masks of point p (its offload as given) worth planning: per IPU, the
   subsets of its stages that fit and have no fitting proper subset (pass 1; every subset
   that fits when activations are offloaded), or its smallest subset (pass 2); every
   combination over the IPUs planned and offered */
static void ipup__auto_masks(ipup__auto *A, ipup__auto_pt *p) {
    int16_t list[IPUP_MAX_DEVICES][IPUP__AUTO_MAXK];
    int32_t cnt[IPUP_MAX_DEVICES], sub[IPUP_MAX_DEVICES], pick[IPUP_MAX_DEVICES];
    int32_t nch[IPUP_MAX_DEVICES], ch[IPUP_MAX_DEVICES][1 << IPUP__AUTO_MAXK];
    size_t mem[1 << IPUP__AUTO_MAXK][IPUP_MAX_DEVICES];
    int32_t P, k = 0, j, d, s, t;
    p->rec = 0;
    if (ipup__auto_plan_x(A, p, 0) != IPUP_OK) return;
    P = A->plan->devices;
    for (d = 0; d < IPUP_MAX_DEVICES; d++) cnt[d] = sub[d] = pick[d] = nch[d] = 0;
    for (s = 0; s < p->S; s++) {
        d = A->plan->stage_device[s];
        if (cnt[d] == IPUP__AUTO_MAXK) return; /* more stages on one IPU than searched */
        list[d][cnt[d]++] = (int16_t)s;
        if (cnt[d] > k) k = cnt[d];
    }
    for (j = 0; j < (1 << k); j++) { /* pattern j: subset j of every IPU's stages */
        for (d = 0; d < P; d++) sub[d] = j & ((1 << cnt[d]) - 1);
        p->rec = ipup__auto_mask(cnt, list, P, sub);
        for (d = 0; d < P; d++) mem[j][d] = (size_t)-1;
        if (ipup__auto_plan_x(A, p, 0) != IPUP_OK) continue; /* bytes only */
        for (d = 0; d < P; d++) mem[j][d] = A->plan->ipu_bytes[d];
    }
    for (d = 0; d < P; d++) { /* the choices of IPU d */
        nch[d] = 0;
        for (j = 0; j < (1 << cnt[d]); j++) {
            int minimal = mem[j][d] <= A->budget;
            if (A->smallest) {
                if (!nch[d] || mem[j][d] < mem[ch[d][0]][d]) { ch[d][0] = j; nch[d] = 1; }
                continue;
            }
            /* a fitting proper subset of j is no slower, except with activation offload,
               where recomputing streams the smaller entry: then every fitting subset */
            for (t = 0; t < j && minimal && !(p->offload & IPUP_OFFLOAD_ACTIVATIONS); t++)
                if ((t & j) == t && mem[t][d] <= A->budget) minimal = 0;
            if (minimal) ch[d][nch[d]++] = j;
        }
        if (!nch[d]) return;
        pick[d] = 0;
    }
    for (;;) { /* every combination of the IPUs' choices */
        for (d = 0; d < P; d++) sub[d] = ch[d][pick[d]];
        p->rec = ipup__auto_mask(cnt, list, P, sub);
        if (ipup__auto_plan_x(A, p, !A->smallest) == IPUP_OK) ipup__auto_offer(A, p);
        for (d = 0; d < P && ++pick[d] == nch[d]; d++) pick[d] = 0;
        if (d == P) break;
    }
}

/* one point (S, schedule, R, B, M, split): without knobs, then with them when it does not
   fit and could still win (in the smallest pass: when it could be smaller) */
static void ipup__auto_point(ipup__auto *A, ipup__auto_pt *p) {
    int32_t off, allowed = 0, d;
    p->offload = 0;
    p->rec = 0;
    if (A->phase == 1) { /* every knob at once: an early point that fits, to prune with */
        p->offload = (int32_t)(A->knobs >> 1) & IPUP_OFFLOAD_ALL;
        p->rec = (A->knobs & IPUP_AUTO_RECOMPUTE) && p->S < 32 ? (1u << p->S) - 1u : 0u;
        if (ipup__auto_plan(A, p) == IPUP_OK) ipup__auto_offer(A, p);
        return;
    }
    if (ipup__auto_plan_x(A, p, !A->smallest) != IPUP_OK) return; /* pass 2: bytes only */
    if (A->devs[p->kind][p->S] == 0) A->devs[p->kind][p->S] = A->plan->devices;
    ipup__auto_offer(A, p);
    if (A->phase == 0) return;
    if (!A->smallest && (p->bytes <= A->budget ||
                         (A->best.rate >= 0.0 && p->rate < A->best.rate)))
        return; /* it fits: knobs only add time; or even without them it is slower */
    for (d = 0; d < A->plan->devices; d++) { /* bytes no knob moves: gradients, exchange */
        const ipup_mem_report *r = &A->plan->mem[d];
        size_t fixed = r->by_category[IPUP_MEM_GRADS] + r->by_category[IPUP_MEM_EXCHANGE];
        if (A->smallest ? A->best.rate >= 0.0 && fixed >= A->best.bytes : fixed > A->budget)
            return;
    }
    allowed = (int32_t)(A->knobs >> 1) & IPUP_OFFLOAD_ALL; /* IPUP_AUTO_OFFLOAD_* */
    for (off = 0; off <= allowed; off++) {
        ipup__auto_pt q;
        if ((off & allowed) != off) continue;
        q = *p;
        q.offload = off;
        if (A->knobs & IPUP_AUTO_RECOMPUTE) ipup__auto_masks(A, &q);
        else if (off && ipup__auto_plan_x(A, &q, !A->smallest) == IPUP_OK) ipup__auto_offer(A, &q);
    }
}

/* every contiguous split of the L layers into p->S stages (first layers ascending in
   1..L-1), each a point */
static void ipup__auto_splits(ipup__auto *A, ipup__auto_pt *p) {
    int32_t n = p->S - 1, i;
    for (i = 0; i < n; i++) p->split[i] = i + 1;
    for (;;) {
        ipup__auto_point(A, p);
        for (i = n - 1; i >= 0 && p->split[i] == A->L - n + i; i--) continue;
        if (i < 0) return;
        p->split[i]++;
        for (i++; i < n; i++) p->split[i] = p->split[i - 1] + 1;
    }
}

/* the (B, M) pairs of replicas R and what follows them */
static void ipup__auto_batches(ipup__auto *A, ipup__auto_pt *p) {
    int32_t N = A->req->samples_per_step, B, M;
    for (B = 1; B <= A->Bmax; B = N ? B + 1 : 2 * B) {
        if (N) {
            if (N % (p->R * B)) continue;
            M = N / (p->R * B);
            if (M <= A->Mmax) { p->B = B; p->M = M; ipup__auto_splits(A, p); }
            continue;
        }
        for (M = 1; M <= A->Mmax; M *= 2) { p->B = B; p->M = M; ipup__auto_splits(A, p); }
    }
}

/* the whole space, in the order S, schedule, R, (B, M), split */
static void ipup__auto_search(ipup__auto *A) {
    ipup__auto_pt p;
    int32_t S, kind, R;
    IPUPIPE_MEMSET(&p, 0, sizeof p);
    if (A->phase == 0) A->best.rate = -1.0;
    for (S = 1; S <= A->Smax; S++)
        for (kind = 0; kind < IPUP_SCHED_KIND_COUNT; kind++) {
            if (!((A->kinds >> kind) & 1u)) continue;
            for (R = 1; R <= ((A->knobs & IPUP_AUTO_REPLICAS) ? A->ipus : 1); R++) {
                if ((int64_t)A->devs[kind][S] * R > A->ipus) break;
                p.S = S;
                p.kind = kind;
                p.R = R;
                ipup__auto_batches(A, &p);
            }
        }
}

/* a point as text: "2 stages (split at layers 7), 1f1b, 1 replica, B 32 x M 16, recompute
   stages 0x1, offload 1" */
static void ipup__auto_text(const ipup__auto_pt *p, char *buf, size_t cap) {
    size_t n;
    int32_t s;
    n = (size_t)ipup_snprintf(buf, cap, "%d stage%s", (int)p->S, p->S == 1 ? "" : "s");
    for (s = 0; s < p->S - 1 && n < cap; s++)
        n += (size_t)ipup_snprintf(buf + n, cap - n, "%s%d", s ? "," : " (split at layers ",
                                   (int)p->split[s]);
    if (n < cap)
        ipup_snprintf(buf + n, cap - n,
                      "%s, schedule %s, %d replica%s, micro-batch %d x %d, recompute_stages "
                      "0x%x, offload %d",
                      p->S > 1 ? ")" : "", ipup_sched_kind_name((ipup_sched_kind)p->kind),
                      (int)p->R, p->R == 1 ? "" : "s", (int)p->B, (int)p->M, (unsigned)p->rec,
                      (int)p->offload);
}

/* the request checked and its defaults into A; IPUP_OK or a failure with msg */
static int ipup__auto_setup(ipup__auto *A, const ipup_plan_request *req, char *msg,
                            size_t msg_len) {
    const ipup_model_desc *m = req && req->base ? req->base->model : NULL;
    int32_t lim;
    if (!req || !req->base || !m)
        return ipup__fail(msg, msg_len, IPUP_ERR_ARG,
                          "ipup_plan_auto: req, req->base or req->base->model is NULL; give the "
                          "base configuration with its model");
    if (req->ipus < 1 || req->ipus > IPUP_MAX_IPUS || req->samples_per_step < 0 ||
        req->max_microbatch < 0 || req->max_microbatches < 0 || req->max_stages < 0 ||
        m->n_layers < 1 || m->n_layers > IPUP_MAX_LAYERS)
        return ipup__fail(msg, msg_len, IPUP_ERR_ARG,
                          "ipup_plan_auto: ipus %d (give 1..IPUP_MAX_IPUS = %d), "
                          "samples_per_step %d, max_microbatch %d, max_microbatches %d, "
                          "max_stages %d (each >= 0), a model of %d layers (1..%d)",
                          (int)req->ipus, (int)IPUP_MAX_IPUS, (int)req->samples_per_step,
                          (int)req->max_microbatch, (int)req->max_microbatches,
                          (int)req->max_stages, (int)m->n_layers, (int)IPUP_MAX_LAYERS);
    A->req = req;
    A->cfg = *req->base;
    A->cfg.ipu_bytes = 0;
    A->cfg.stage_device = NULL;
    A->cfg.concurrent = NULL;
    A->cfg.devices = 0;
    A->cfg.virtual_stages = 0;
    A->ipus = req->ipus;
    A->L = m->n_layers;
    lim = req->ipus < IPUP_MAX_DEVICES ? req->ipus : IPUP_MAX_DEVICES;
    A->Smax = req->max_stages ? req->max_stages : lim;
    if (A->Smax > A->L) A->Smax = A->L;
    A->Bmax = req->max_microbatch ? req->max_microbatch : 64;
    A->Mmax = req->max_microbatches ? req->max_microbatches : 64;
    A->kinds = req->schedules ? req->schedules : IPUP_AUTO_SCHEDULES_DEFAULT;
    A->knobs = req->knobs ? req->knobs : (uint32_t)IPUP_AUTO_ALL;
    A->budget = req->ipu_bytes ? req->ipu_bytes : (size_t)-1;
    if (A->Smax > IPUP_MAX_DEVICES * 4 || A->Mmax > 1 << 16)
        return ipup__fail(msg, msg_len, IPUP_ERR_ARG,
                          "ipup_plan_auto: max_stages %d or max_microbatches %d too large",
                          (int)A->Smax, (int)A->Mmax);
    return IPUP_OK;
}

IPUPIPE_DEF int ipup_plan_auto(const ipup_plan_request *req, ipup_config *best, ipup_plan *plan,
                               void *scratch, size_t scratch_bytes, char *msg, size_t msg_len) {
    ipup__auto A;
    char text[256];
    size_t need;
    int rc;
    if (msg && msg_len) msg[0] = 0;
    IPUPIPE_MEMSET(&A, 0, sizeof A);
    if (!best || !plan)
        return ipup__fail(msg, msg_len, IPUP_ERR_ARG,
                          "ipup_plan_auto: best or plan is NULL; give both to fill");
    if ((rc = ipup__auto_setup(&A, req, msg, msg_len)) != IPUP_OK) return rc;
    need = ipup__plan_scratch_need(A.Smax, A.Mmax);
    if (!scratch || scratch_bytes < need)
        return ipup__fail(msg, msg_len, IPUP_ERR_CAPACITY,
                          "ipup_plan_auto: the scratch has %zu bytes; the search needs "
                          "IPUP_PLAN_SCRATCH_BYTES(%d, %d) = %zu",
                          scratch ? scratch_bytes : (size_t)0, (int)A.Smax, (int)A.Mmax, need);
    A.plan = plan;
    A.scratch = scratch;
    A.scratch_bytes = scratch_bytes;
    for (A.phase = 0; A.phase < 3; A.phase++) /* the best so far survives each phase */
        if (A.phase != 1 || A.best.rate < 0.0) ipup__auto_search(&A);
    if (A.best.rate < 0.0) { /* nothing fits: the smallest bytes per IPU that would */
        A.smallest = 1;
        A.phase = 0;
        ipup__auto_search(&A);
        A.phase = 2;
        ipup__auto_search(&A);
        if (A.best.rate < 0.0)
            return ipup__fail(msg, msg_len, IPUP_ERR_CONFIG,
                              "ipup_plan_auto: no configuration of the search space plans "
                              "(ipup_plan_pools refuses each); check the base configuration");
        ipup__auto_text(&A.best, text, sizeof text);
        IPUPIPE_MEMSET(plan, 0, sizeof *plan);
        return ipup__fail(msg, msg_len, IPUP_ERR_OOM,
                          "no plan fits %zu bytes per IPU on %d IPU%s; the smallest memory "
                          "that fits is %zu bytes per IPU (%s)",
                          A.budget, (int)A.ipus, A.ipus == 1 ? "" : "s", A.best.bytes, text);
    }
    if ((rc = ipup__auto_plan(&A, &A.best)) != IPUP_OK) /* the best into *plan */
        return ipup__fail(msg, msg_len, rc, "ipup_plan_auto: the chosen plan fails again");
    *best = A.cfg;
    best->split = A.best.S > 1 ? &plan->split[1] : NULL;
    best->ipu_bytes = req->ipu_bytes;
    return IPUP_OK;
}

/* >>threads: parking and notifying threads, waiting on rings, barriers, error slots */
/* (with atomics: the threaded runner's pthreads, or the device runner's cores) */
#ifdef IPUP__WAITS
/* Waiting: spin IPUPIPE_SPIN times (a few tens of microseconds, cheaper than a sleep when
   the partner is about to deliver), then sleep on the thread's own condition variable
   until a partner notifies it. Notifications take the sleeper's mutex, so no wake-up is
   lost; a notifier that finds nobody asleep costs one uncontended lock. */
#ifndef IPUPIPE_SPIN
#define IPUPIPE_SPIN 500
#endif
static IPUP__UNUSED void ipup__relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}
/* the host aborted the job from step e->job_stop on (written before the release of abort_) */
static int ipup__aborted(ipup_emu *e, int64_t t) {
    if (IPUP__LOAD_ACQ(&e->fault_)) {
        IPUPIPE_HAPPENS_AFTER(&e->fault_);
        return 1; /* the threads are all in the faulting step (a barrier ends each step) */
    }
    if (!IPUP__LOAD_ACQ(&e->abort_)) return 0;
    IPUPIPE_HAPPENS_AFTER(&e->abort_);
    return t >= e->job_stop;
}
typedef void *(*ipup__probe_fn)(ipup_emu *e, void *arg);
static void ipup__notify(ipup_emu *e, int32_t who) {
#ifndef IPUPIPE_NO_THREADS
    ipup__park *p = &e->park[who];
#endif
    if (e->devices) { /* the device runner: after the release store, the platform's wake */
        e->devices->wake(e->devices->user, who);
        return;
    }
#ifndef IPUPIPE_NO_THREADS
    pthread_mutex_lock(&p->mutex);
    if (p->waiting) pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->mutex);
#endif
}
static void ipup__notify_all(ipup_emu *e) {
    int32_t i;
    for (i = 0; i <= e->core.n_ipus; i++) ipup__notify(e, i);
}
/* IPU thread `ipu` ends its job early at step t (op o found no data or no room where it
   never waits): the error is its step's record, then every other thread and the host
   are stopped, so ipup_run returns this first error instead of waiting forever */
static void ipup__fault(ipup_emu *e, int32_t ipu, int64_t t, const ipup_op *o) {
    ipup__ipu_err *er = &e->ipu_errors[t & 1][ipu];
    er->code = IPUP_ERR_INVALID_TABLE;
    er->step = t; er->stage = o->stage; er->mb = o->mb; er->layer = (int32_t)o->kind;
    IPUPIPE_HAPPENS_BEFORE(&e->fault_);
    IPUP__STORE_REL(&e->fault_, 1u);
    ipup__notify_all(e);
}
static int ipup__drain(ipup_emu *e, int64_t step0, int32_t nsteps, int threaded); /* runtime */
/* the device runner's wait: the platform's wait until probe() gives non-NULL or the job is
   aborted from step t; IPU 0 is also the host, it drains the outfeed while it waits */
static void *ipup__dev_wait(ipup_emu *e, int32_t self, ipup__probe_fn probe, void *arg,
                            int64_t t) {
    void *v;
    while ((v = probe(e, arg)) == NULL) {
        if (t >= 0 && ipup__aborted(e, t)) break;
        if (self == 0 && e->job_kind == 0) ipup__drain(e, e->job_step0, e->job_steps, 1);
        if ((v = probe(e, arg)) != NULL) break;
        e->devices->wait(e->devices->user, self);
    }
    return v;
}
/* until probe() gives non-NULL (returned), or the job is aborted from step t (t >= 0) */
static void *ipup__wait(ipup_emu *e, int32_t self, ipup__probe_fn probe, void *arg, int64_t t) {
#ifndef IPUPIPE_NO_THREADS
    ipup__park *p = &e->park[self];
    uint32_t i;
#endif
    void *v = NULL;
    if (e->devices) return ipup__dev_wait(e, self, probe, arg, t);
#ifndef IPUPIPE_NO_THREADS
    /* the host never spins: it is not on the critical path, and a third spinning thread
       on a 2-core machine takes a core from the IPUs */
    for (i = 0; self < e->core.n_ipus && i < IPUPIPE_SPIN; i++) {
        if ((v = probe(e, arg)) != NULL) return v;
        ipup__relax();
    }
    pthread_mutex_lock(&p->mutex);
    for (;;) {
        if ((v = probe(e, arg)) != NULL) break;
        if (t >= 0 && ipup__aborted(e, t)) break;
        p->waiting = 1;
        pthread_cond_wait(&p->cond, &p->mutex);
        p->waiting = 0;
    }
    pthread_mutex_unlock(&p->mutex);
#else
    (void)self; (void)probe; (void)arg; (void)t;
#endif
    return v;
}
static void *ipup__probe_peek(ipup_emu *e, void *ring) {
    (void)e;
    return ipup_ring_peek((ipup_ring *)ring);
}
static void *ipup__probe_reserve(ipup_emu *e, void *ring) {
    (void)e;
    return ipup_ring_reserve((ipup_ring *)ring);
}
typedef struct ipup__genwait { ipup_atomic_u32 *var; uint32_t old; } ipup__genwait;
/* non-NULL once *var moved on from old */
static void *ipup__probe_gen(ipup_emu *e, void *arg) {
    ipup__genwait *g = (ipup__genwait *)arg;
    (void)e;
    return IPUP__LOAD_ACQ(g->var) != g->old ? (void *)g : NULL;
}

/* barrier over all IPU threads; returns 0, or 1 when the host aborted the job at step t */
static int ipup__barrier(ipup_emu *e, int32_t self, int64_t t) {
    ipup__genwait g;
    g.var = &e->barrier_gen;
    g.old = IPUP__LOAD_ACQ(&e->barrier_gen);
    IPUPIPE_HAPPENS_BEFORE(&e->barrier_count);
    if (IPUP__FETCH_ADD(&e->barrier_count, 1u) + 1u == (uint32_t)e->core.n_ipus) {
        IPUPIPE_HAPPENS_AFTER(&e->barrier_count);
        IPUP__STORE_REL(&e->barrier_count, 0u);
        IPUPIPE_HAPPENS_BEFORE(&e->barrier_gen);
        IPUP__STORE_REL(&e->barrier_gen, g.old + 1u);
        { /* the IPU threads only: the host never waits on a barrier (waking it costs a core) */
            int32_t q;
            for (q = 0; q < e->core.n_ipus; q++) ipup__notify(e, q);
        }
        return 0;
    }
    if (!ipup__wait(e, self, ipup__probe_gen, &g, t)) return 1;
    IPUPIPE_HAPPENS_AFTER(&e->barrier_gen);
    IPUPIPE_HAPPENS_AFTER(&e->barrier_count);
    return 0;
}
#endif

#define IPUP__ABORTED 1 /* private: a threaded wait gave up because the host aborted */
static int32_t ipup__ipu_of(const ipup_emu *e, int32_t r, int32_t s) {
    return r * e->core.P + e->core.stages[s].device;
}

static void *ipup__wait_peek(ipup_emu *e, ipup_ring *ring, int threaded, int64_t t, int32_t self) {
    void *p = ipup_ring_peek(ring);
    if (!p && e->transport) return e->transport->peek(e->transport->user, ring);
#ifdef IPUP__WAITS
    if (!p && threaded) p = ipup__wait(e, self, ipup__probe_peek, ring, t);
#else
    (void)e; (void)threaded; (void)t; (void)self;
#endif
    return p;
}
static void *ipup__wait_reserve(ipup_emu *e, ipup_ring *ring, int threaded, int64_t t,
                                int32_t self) {
    void *p = ipup_ring_reserve(ring);
    if (!p && e->transport) return e->transport->reserve(e->transport->user, ring);
#ifdef IPUP__WAITS
    if (!p && threaded) p = ipup__wait(e, self, ipup__probe_reserve, ring, t);
#else
    (void)e; (void)threaded; (void)t; (void)self;
#endif
    return p;
}
/* ring operations of the runners: commit / release, then wake the other side (threads) */
static void ipup__commit(ipup_emu *e, ipup_ring *ring, int threaded, int32_t consumer) {
    ipup_ring_commit(ring);
    if (e->transport) e->transport->commit(e->transport->user, ring);
#ifdef IPUP__WAITS
    if (threaded) ipup__notify(e, consumer);
#else
    (void)e; (void)threaded; (void)consumer;
#endif
}
static void ipup__release(ipup_emu *e, ipup_ring *ring, int threaded, int32_t producer) {
    ipup_ring_release(ring);
    if (e->transport) e->transport->release(e->transport->user, ring);
#ifdef IPUP__WAITS
    if (threaded) ipup__notify(e, producer);
#else
    (void)e; (void)threaded; (void)producer;
#endif
}
/* a NaN or infinity IPU ipu found at step t (stage s, micro-batch mb, the loss when layer
   is -1, else tensor layer = 2 x layer index + (1 for b)): the step's first one stays */
static void ipup__set_err(ipup_emu *e, int32_t ipu, int64_t t, int32_t s, int32_t mb,
                          int32_t layer) {
    ipup__ipu_err *er = &e->ipu_errors[t & 1][ipu];
    if (er->code) return;
    er->code = IPUP_ERR_NUMERIC;
    er->step = t; er->stage = s; er->mb = mb; er->layer = layer;
}

/* >>init: the weights, out-of-memory messages, ipup_init, ipup_shutdown */
#ifndef IPUPIPE_NO_THREADS
static void *ipup__thread_main(void *arg); /* runtime */
#endif

/* elements [first, first + n) of layer l's initial weights (Glorot uniform; the biases
   are zero) into p; a batch norm: gamma 1 into p and its running statistics into run
   (zeroed): mean 0, variance 1, as Keras' */
static void ipup__init_layer(const ipup_emu *e, int32_t l, int32_t first, int32_t n, float *p,
                             float *run) {
    const ipup_layer_info *I = &e->core.layers[l].info;
    int fi, fo, i;
    if (I->kind == IPUP_LAYER_BATCHNORM) {
        for (i = 0; i < I->out_c; i++) p[i] = run[ipup__round16(I->out_c) + (size_t)i] = 1.0f;
        return;
    }
    if (I->kind == IPUP_LAYER_CONV3X3) { fi = 9 * I->in_c; fo = 9 * I->out_c; }
    else if (I->kind == IPUP_LAYER_CONV2D || I->kind == IPUP_LAYER_DWCONV) {
        /* Keras' fans of a (KH, KW, CI, CO) kernel; depthwise: (KH, KW, C, 1) */
        fi = I->kh * I->kw * I->in_c;
        fo = I->kh * I->kw * (I->kind == IPUP_LAYER_DWCONV ? 1 : I->out_c);
    } else { fi = I->in_n; fo = I->out_n; }
    ipup_glorot_uniform_range_f32(fi, fo, first, n, e->core.cfg.seed, (uint64_t)(2 * l), p);
}
/* the initial weights of plain stage s of replica r: in place, or under binary16 weights
   through the IPU's staging and rounded to nearest */
static void ipup__init_stage_weights(ipup_emu *e, ipup__stage_rt *rt, int32_t s) {
    const ipup__stage *st = &e->core.stages[s];
    int32_t l;
    if (rt->hparams) IPUPIPE_MEMSET(rt->hparams, 0, st->n_params * sizeof(uint16_t));
    else IPUPIPE_MEMSET(rt->params, 0, st->n_params * sizeof(float));
    for (l = st->first; l < st->last; l++) {
        const ipup__layer_facts *Ly = &e->core.layers[l];
        const size_t nrun = Ly->run_off >= 0 ? 2 * ipup__round16(Ly->info.out_c) : 0;
        const int32_t c = (int32_t)(rt->wstage_floats & ~(size_t)15u);
        int32_t i0;
        if (!Ly->info.n_w) continue;
        if (!rt->hparams) {
            ipup__init_layer(e, l, 0, Ly->info.n_w, rt->params + Ly->param_off,
                             nrun ? rt->params + Ly->run_off : NULL);
            continue;
        }
        if (Ly->info.kind == IPUP_LAYER_BATCHNORM) { /* small: whole */
            const size_t block = ipup__layer_block(&e->core, l);
            IPUPIPE_MEMSET(rt->wstage, 0, (block + nrun) * sizeof(float));
            ipup__init_layer(e, l, 0, Ly->info.n_w, rt->wstage, rt->wstage + block);
            ipup_f32_to_f16((int)block, rt->wstage, rt->hparams + Ly->param_off);
            ipup_f32_to_f16((int)nrun, rt->wstage + block, rt->hparams + Ly->run_off);
            continue;
        }
        for (i0 = 0; i0 < Ly->info.n_w; i0 += c) { /* the staging holds a chunk (the update's) */
            const int32_t k = Ly->info.n_w - i0 < c ? Ly->info.n_w - i0 : c;
            ipup__init_layer(e, l, i0, k, rt->wstage, NULL);
            ipup_f32_to_f16(k, rt->wstage, rt->hparams + Ly->param_off + i0);
        }
    }
}
static void ipup__init_weights(ipup_emu *e) {
    int32_t r, s, k = ipup__state_slots(&e->core.cfg);
    for (r = 0; r < e->core.R; r++) {
        for (s = 0; s < e->core.S; s++) {
            ipup__stage_rt *rt = &e->stage_rt[r][s];
            const ipup__stage *st = &e->core.stages[s];
            if (e->core.n_branches[s] > 1) continue; /* its lanes: ipup__conc_init_weights */
            ipup__init_stage_weights(e, rt, s);
            IPUPIPE_MEMSET(rt->grads, 0, st->n_grads * sizeof(float));
            /* a stage without weights has no state: NULL when offloaded to an empty stream pool */
            if (k && st->n_state) IPUPIPE_MEMSET(rt->state, 0, st->n_state * sizeof(float));
        }
    }
}
static void ipup__reset_transient(ipup_emu *e) {
    int32_t r, s;
    for (r = 0; r < e->core.R; r++) {
        for (s = 0; s < e->core.S; s++) {
            ipup__stage_rt *rt = &e->stage_rt[r][s];
            rt->stash_head = rt->stash_count = rt->wstash_head = rt->wstash_count = 0;
            IPUPIPE_MEMSET(rt->grads, 0, e->core.stages[s].n_grads * sizeof(float));
            if (s > 0) ipup__ring_reset(&e->fwd[r][s]);
            if (s < e->core.S - 1) ipup__ring_reset(&e->bwd[r][s]);
        }
        ipup__ring_reset(&e->infeed[r]);
        ipup__ring_reset(&e->outfeed[r]);
    }
    IPUP__STORE_REL(&e->barrier_count, 0u);
    IPUP__STORE_REL(&e->abort_, 0u);
    IPUP__STORE_REL(&e->fault_, 0u);
}

static int ipup__oom_msg(ipup_emu *e, int32_t ipu, const ipup__arena *a, const ipup__arena *sa,
                         int stream) {
    int32_t r = ipu / e->core.P, d = ipu % e->core.P;
    ipup__textbuf b;
    b.buf = e->core.msg; b.cap = sizeof e->core.msg; b.len = 0;
    if (stream) {
        ipup__textbuf_add(&b,
                          "IPU%d (replica %d, device %d): streaming memory too small for the "
                          "offloaded %s: needs %zu bytes, cfg.stream[%d] has %zu; "
                          "give it >= %zu bytes (ipup_plan_config)",
                          (int)ipu, (int)r, (int)d,
                          e->core.cfg.offload == IPUP_OFFLOAD_OPTIMIZER ? "optimizer state"
                                                                        : "tensors",
                          sa->used, (int)ipu, sa->cap, sa->used);
        return IPUP_ERR_OOM;
    }
    return ipup__oom_core(&e->core, ipu, a, 0);
}

IPUPIPE_DEF int ipup_init(ipup_emu *e, const ipup_config *cfg) {
    ipup__core *core;
    ipup__arena h;
    ipup_op *ops = NULL;
    int32_t *row = NULL;
    int32_t i;
    int rc;
    if (!e) return IPUP_ERR_ARG;
    if ((rc = ipup__refuse_frozen(e, "ipup_init", "")) != IPUP_OK) return rc;
    IPUPIPE_MEMSET((void *)e, 0, sizeof *e);
    core = &e->core;
    rc = ipup__setup_model(core, cfg);
    if (rc) return rc;
    /* from here on the configuration is core->cfg: cfg with its defaults */
    if (!core->cfg.host.mem)
        return ipup__fail(core->msg, sizeof core->msg, IPUP_ERR_ARG,
                          "cfg.host is not set: give the host "
                          "pool ipup_host_bytes(cfg) = %zu bytes",
                          ipup_host_bytes(&core->cfg));
    ipup__arena_init(&h, core->cfg.host.mem, core->cfg.host.bytes);
    ipup__carve_host(e, &h, ipup__conc_ops_stages(core->cfg.concurrent, core->S), core->M, core->R,
                     core->B, core->in_n, core->cfg.repeat, core->cfg.runner == IPUP_RUNNER_THREADS,
                     ipup__out_stream(&core->cfg), ipup__core_out(core), &ops, &row);
    if (h.oom)
        return ipup__fail(core->msg, sizeof core->msg, IPUP_ERR_CAPACITY,
                          "host pool too small: needs %zu bytes "
                          "(ipup_host_bytes(cfg)), cfg.host has %zu",
                          h.used, core->cfg.host.bytes);
    rc = ipup__setup_table(core, ops,
                           IPUP_SCHED_MAX_OPS(ipup__conc_ops_stages(core->cfg.concurrent, core->S),
                                              core->M),
                           row, e->warnings, sizeof e->warnings);
    if (rc) return rc;
    if ((rc = ipup__setup_layout(core)) != IPUP_OK || (rc = ipup__ipu_sizes_ok(core)) != IPUP_OK)
        return rc;
    ipup__offload_warnings(core, e->warnings, sizeof e->warnings);
    for (i = 0; i < core->n_ipus; i++) {
        ipup__arena a, sa;
        int32_t r = i / core->P, d = i % core->P;
        if (!core->cfg.ipu[i].mem) {
            ipup__arena_init(&a, NULL, 0);
            ipup__arena_init(&sa, NULL, 0);
            ipup__carve_ipu(core, &a, &sa, d, NULL, NULL, NULL, NULL, NULL);
            return ipup__fail(core->msg, sizeof core->msg, IPUP_ERR_ARG,
                              "IPU%d (replica %d, device %d) has no pool: set cfg.ipu[%d] to >= "
                              "%zu bytes (ipup_plan_config)",
                              (int)i, (int)r, (int)d, (int)i, a.used);
        }
        ipup__arena_init(&a, core->cfg.ipu[i].mem, core->cfg.ipu[i].bytes);
        ipup__arena_init(&sa, core->cfg.stream[i].mem, core->cfg.stream[i].bytes);
        ipup__carve_ipu(core, &a, &sa, d, e->stage_rt[r], e->fwd[r], e->bwd[r], e->lane_rt[r],
                        e->fanout[r]);
        if (core->cfg.ipu_bytes && a.used > core->cfg.ipu_bytes)
            return ipup__oom_core(core, i, &a, core->cfg.ipu_bytes);
        if (a.oom) return ipup__oom_msg(e, i, &a, &sa, 0);
        if (sa.oom || (!sa.base && sa.used)) { sa.cap = 0; return ipup__oom_msg(e, i, &a, &sa, 1); }
        ipup__fill_report(core, &a, &sa, d, &e->mem[i]);
    }
    ipup__init_weights(e);
    for (i = 0; i < IPUP_MAX_IPUS; i++) e->ls_scale[i] = core->cfg.loss_scale;
    if (core->has_concurrent) ipup__conc_init_weights(e);
    ipup__cost_setup(e);
    ipup__pred_cost_setup(e);
    IPUPIPE_SYNC_VAR(&e->job_gen, sizeof(uint32_t));
    IPUPIPE_SYNC_VAR(&e->threads_done, sizeof(uint32_t));
    IPUPIPE_SYNC_VAR(&e->abort_, sizeof(uint32_t));
    IPUPIPE_SYNC_VAR(&e->fault_, sizeof(uint32_t));
    IPUPIPE_SYNC_VAR(&e->barrier_count, sizeof(uint32_t));
    IPUPIPE_SYNC_VAR(&e->barrier_gen, sizeof(uint32_t));
    e->frozen = e;
    e->initialised = 1;
#ifndef IPUPIPE_NO_THREADS
    if (core->cfg.runner == IPUP_RUNNER_THREADS) {
        for (i = 0; i <= core->n_ipus; i++) {
            pthread_mutex_init(&e->park[i].mutex, NULL);
            pthread_cond_init(&e->park[i].cond, NULL);
            e->park[i].init = 1;
        }
        for (i = 0; i < core->n_ipus; i++) {
            e->threads[i].emu = e;
            e->threads[i].ipu = i;
            if (pthread_create(&e->threads[i].handle, NULL, ipup__thread_main, &e->threads[i]) !=
                0) {
                ipup_shutdown(e);
                e->initialised = 0;
                return ipup__fail(core->msg, sizeof core->msg, IPUP_ERR_THREAD,
                                  "pthread_create failed for IPU%d; the threaded runner needs %d "
                                  "threads (or use the cooperative runner)",
                                  (int)i, (int)core->n_ipus);
            }
            e->threads[i].started = 1;
        }
        e->threads_started = 1;
    }
#endif
    core->msg[0] = 0;
    return IPUP_OK;
}

#ifdef IPUP__WAITS
static void ipup__devices_quit(ipup_emu *e); /* runtime */
#endif
IPUPIPE_DEF void ipup_shutdown(ipup_emu *e) {
#ifndef IPUPIPE_NO_THREADS
    int32_t i;
#endif
#ifdef IPUP__WAITS
    if (e && e->devices) ipup__devices_quit(e); /* every ipup_run_device returns first */
#endif
#ifndef IPUPIPE_NO_THREADS
    if (!e) return;
    e->frozen = NULL;
    if (!e->threads_started && !e->park[0].init) return;
    e->quit = 1;
    IPUPIPE_HAPPENS_BEFORE(&e->job_gen);
    IPUP__STORE_REL(&e->job_gen, IPUP__LOAD_ACQ(&e->job_gen) + 1u);
    ipup__notify_all(e);
    for (i = 0; i < e->core.n_ipus; i++) {
        if (e->threads[i].started) pthread_join(e->threads[i].handle, NULL);
        e->threads[i].started = 0;
    }
    e->threads_started = 0;
    for (i = 0; i <= e->core.n_ipus; i++) {
        if (!e->park[i].init) continue;
        pthread_cond_destroy(&e->park[i].cond);
        pthread_mutex_destroy(&e->park[i].mutex);
        e->park[i].init = 0;
    }
#else
    if (e) e->frozen = NULL;
#endif
}

/* >>compute: a stage's forward, backward and weight-gradient walks; the stash front */
/* layer l's parameter block (w, then b at round16(n_w)) for an op of its stage: in the
   pool, or with the weights offloaded (rt->wstage set) streamed into the IPU's staging
   buffer first (a copy: the same bits) */
static float *ipup__layer_params(ipup_emu *e, ipup__stage_rt *rt, int32_t l) {
    const ipup__layer_facts *Ly = &e->core.layers[l];
    const ipup_layer_info *I = &Ly->info;
    const size_t n = ipup__round16(I->n_w) + (size_t)I->n_b;
    float *p;
    if (rt->hparams) { /* binary16: unpacked, a batch norm's running statistics after it */
        ipup_f16_to_f32((int)n, rt->hparams + Ly->param_off, rt->wstage);
        if (Ly->run_off >= 0)
            ipup_f16_to_f32((int)(2 * ipup__round16(I->out_c)), rt->hparams + Ly->run_off,
                            rt->wstage + ipup__layer_block(&e->core, l));
        return rt->wstage;
    }
    p = rt->params + Ly->param_off;
    if (!rt->wstage) return p;
    IPUPIPE_MEMCPY(rt->wstage, p, n * sizeof(float));
    return rt->wstage;
}
/* A tensor's weights for the update: fp32 (f) or binary16 (h, ipup__w16), the layer and
   which of its tensors (0 w, 1 b) they are */
typedef struct ipup__wref {
    float *f;
    uint16_t *h;
    size_t chunk; /* h: floats of the staging, rounded down to 16 */
    int32_t layer, which;
} ipup__wref;
/* n updated values v into binary16 weights h: stochastic rounding (ipup_f32_to_f16_sr)
   keyed by the step t, the layer l, the tensor (0 w, 1 b, 2 running statistics) and the
   element (first + i): the same bits whatever the schedule, runner, replica or chunk */
static void ipup__w16_store(const ipup_emu *e, const float *v, int n, uint16_t *h, int64_t t,
                            int32_t l, int32_t which, uint64_t first) {
    ipup_f32_to_f16_sr(n, v, h, e->core.cfg.seed ^ UINT64_C(0x73746f6368617374),
                       ((uint64_t)t << 12) | (uint64_t)(4 * l + which), first);
}
/* dense layer l's weights are unpacked a chunk of rows at a time (ipup__w16_rows) */
static int ipup__wchunked(const ipup_emu *e, const ipup__stage_rt *rt, int32_t l) {
    return rt->hparams && ipup__w16_rows(&e->core, l) < e->core.layers[l].info.in_n;
}
/* the staging of a chunked dense layer l (ipup__layer_unpacked): the chunk's weights, the
   bias, the chunk's columns of x, a product */
typedef struct ipup__wchunk {
    float *w, *bias, *xc, *tmp;
    int32_t rows;
} ipup__wchunk;
static ipup__wchunk ipup__wchunk_of(const ipup_emu *e, const ipup__stage_rt *rt, int32_t l) {
    const ipup_layer_info *I = &e->core.layers[l].info;
    ipup__wchunk c;
    c.rows = ipup__w16_rows(&e->core, l);
    c.w = rt->wstage;
    c.bias = c.w + ipup__round16z((size_t)c.rows * (size_t)I->out_n);
    c.xc = c.bias + ipup__round16(I->out_n);
    c.tmp = c.xc + ipup__round16z((size_t)e->core.B * (size_t)c.rows);
    return c;
}
/* columns [i0, i0 + k) of x (B, n) into xc (B, k), and back into x */
static void ipup__cols_get(int32_t B, int32_t n, int32_t i0, int32_t k, const float *x, float *xc) {
    int32_t b;
    for (b = 0; b < B; b++)
        IPUPIPE_MEMCPY(xc + (size_t)b * (size_t)k, x + (size_t)b * (size_t)n + (size_t)i0,
                       (size_t)k * sizeof(float));
}
static void ipup__cols_put(int32_t B, int32_t n, int32_t i0, int32_t k, const float *xc, float *x) {
    int32_t b;
    for (b = 0; b < B; b++)
        IPUPIPE_MEMCPY(x + (size_t)b * (size_t)n + (size_t)i0, xc + (size_t)b * (size_t)k,
                       (size_t)k * sizeof(float));
}
/* Dense layer l's forward of Bn rows x into y (then ReLU when relu): the kernel on w, b
   (ipup__layer_params), or with w NULL (ipup__wchunked) on W's rows a chunk at a time,
   y = x[:, chunk 0] W0 + b + x[:, chunk 1] W1 + ..., summed in chunk order */
static void ipup__dense_fwd_l(ipup_emu *e, ipup__stage_rt *rt, int32_t l, int32_t Bn,
                              const float *x, const float *w, const float *b, float *y,
                              int relu) {
    const ipup__layer_facts *Ly = &e->core.layers[l];
    const int32_t IN = Ly->info.in_n, OUT = Ly->info.out_n;
    ipup__wchunk c;
    int32_t i0, j;
    if (w) {
        if (relu) ipup_dense_relu_fwd_f32(Bn, IN, OUT, x, w, b, y);
        else ipup_dense_fwd_f32(Bn, IN, OUT, x, w, b, y);
        return;
    }
    IPUPIPE_ASSERT(Bn <= e->core.B);
    c = ipup__wchunk_of(e, rt, l);
    ipup_f16_to_f32(OUT, rt->hparams + Ly->param_off + ipup__round16(Ly->info.n_w), c.bias);
    for (i0 = 0; i0 < IN; i0 += c.rows) {
        const int32_t k = IN - i0 < c.rows ? IN - i0 : c.rows;
        ipup_f16_to_f32(k * OUT, rt->hparams + Ly->param_off + (size_t)i0 * (size_t)OUT, c.w);
        ipup__cols_get(Bn, IN, i0, k, x, c.xc);
        ipup_dense_fwd_f32(Bn, k, OUT, c.xc, c.w, i0 ? NULL : c.bias, i0 ? c.tmp : y);
        if (i0)
            for (j = 0; j < Bn * OUT; j++) y[j] += c.tmp[j];
    }
    if (relu) ipup_relu_fwd_f32(Bn * OUT, y, y);
}
/* Dense layer l's backward: dx = dy W^T (dx NULL: skip), gw += x^T dy, gb += the column
   sums of dy (NULL: skip): the kernel on w, or with w NULL on W's rows a chunk at a time
   (chunk i gives dx's columns i and gw's rows i whole) */
static void ipup__dense_bwd_l(ipup_emu *e, ipup__stage_rt *rt, int32_t l, int32_t Bn,
                              const float *x, const float *w, const float *dy, float *dx,
                              float *gw, float *gb) {
    const ipup__layer_facts *Ly = &e->core.layers[l];
    const int32_t IN = Ly->info.in_n, OUT = Ly->info.out_n;
    ipup__wchunk c;
    int32_t i0;
    if (w || !dx || !ipup__wchunked(e, rt, l)) { /* without dx the kernel reads no w */
        ipup_dense_bwd_f32(Bn, IN, OUT, x, w, dy, dx, gw, gb);
        return;
    }
    IPUPIPE_ASSERT(Bn <= e->core.B);
    c = ipup__wchunk_of(e, rt, l);
    for (i0 = 0; i0 < IN; i0 += c.rows) {
        const int32_t k = IN - i0 < c.rows ? IN - i0 : c.rows;
        ipup_f16_to_f32(k * OUT, rt->hparams + Ly->param_off + (size_t)i0 * (size_t)OUT, c.w);
        if (gw) ipup__cols_get(Bn, IN, i0, k, x, c.xc);
        ipup_dense_bwd_f32(Bn, k, OUT, c.xc, c.w, dy, c.tmp,
                           gw ? gw + (size_t)i0 * (size_t)OUT : NULL, i0 ? NULL : gb);
        ipup__cols_put(Bn, IN, i0, k, c.tmp, dx);
    }
}
/* a batch norm's running mean (then its variance at round16(C)) for an op of its stage,
   after ipup__layer_params gave its block w */
static const float *ipup__layer_running(const ipup_emu *e, const ipup__stage_rt *rt, int32_t l,
                                        const float *w) {
    if (rt->hparams) return w + ipup__layer_block(&e->core, l);
    return rt->params + e->core.layers[l].run_off;
}
/* cfg.dtype float16: x (n) rounded to binary16 in place (what storing it as fp16 keeps) */
static void ipup__h_round(float *x, size_t n) {
    uint16_t h[256];
    size_t i;
    for (i = 0; i < n; i += 256) {
        const int k = n - i < 256 ? (int)(n - i) : 256;
        ipup_f32_to_f16(k, x + i, h);
        ipup_f16_to_f32(k, h, x + i);
    }
}
static int ipup__f16(const ipup_emu *e) { return e->core.cfg.dtype == IPUP_DTYPE_F16; }
/* an fp32 stash entry E of stage s into its binary16 slot h (rec: a recomputing stage's
   slot), and back (ipup__entry_regions) */
static void ipup__entry_pack(const ipup_emu *e, int32_t s, int rec, const float *E, uint16_t *h) {
    ipup__region rg[IPUP_MAX_LAYERS + 3];
    const int n = ipup__entry_regions(&e->core, s, rec, rg), xent = !ipup__target_w(&e->core);
    int i;
    size_t j;
    for (i = 0; i < n; i++) {
        const float *src = E + rg[i].off;
        if (rg[i].kind == 1) {
            IPUPIPE_MEMCPY(h, src, rg[i].n * sizeof(float));
            h += 2u * rg[i].n;
            continue;
        }
        if (rg[i].kind == 2 && xent) {
            const int32_t *lab = (const int32_t *)(const void *)src;
            for (j = 0; j < rg[i].n; j++) h[j] = (uint16_t)lab[j];
        } else ipup_f32_to_f16((int)rg[i].n, src, h);
        h += rg[i].n;
    }
}
static void ipup__entry_unpack(const ipup_emu *e, int32_t s, int rec, const uint16_t *h, float *E) {
    ipup__region rg[IPUP_MAX_LAYERS + 3];
    const int n = ipup__entry_regions(&e->core, s, rec, rg), xent = !ipup__target_w(&e->core);
    int i;
    size_t j;
    for (i = 0; i < n; i++) {
        float *dst = E + rg[i].off;
        if (rg[i].kind == 1) {
            IPUPIPE_MEMCPY(dst, h, rg[i].n * sizeof(float));
            h += 2u * rg[i].n;
            continue;
        }
        if (rg[i].kind == 2 && xent) {
            int32_t *lab = (int32_t *)(void *)dst;
            for (j = 0; j < rg[i].n; j++) lab[j] = (int32_t)h[j];
        } else ipup_f16_to_f32((int)rg[i].n, h, dst);
        h += rg[i].n;
    }
}
/* a forward ring message: x (rows of n floats) and the labels region lab into slot h */
static void ipup__msg_pack(const ipup_emu *e, int32_t Bn, int32_t n, const float *x,
                           const float *lab, uint16_t *h) {
    const size_t nx = (size_t)Bn * (size_t)n,
                 nl = (size_t)e->core.B * (size_t)ipup__lab_w(&e->core);
    size_t j;
    ipup_f32_to_f16((int)nx, x, h);
    if (!lab) return;
    h += (size_t)e->core.B * (size_t)n;
    if (ipup__target_w(&e->core)) ipup_f32_to_f16((int)nl, lab, h);
    else
        for (j = 0; j < nl; j++) h[j] = (uint16_t)((const int32_t *)(const void *)lab)[j];
}
static void ipup__msg_unpack(const ipup_emu *e, int32_t Bn, int32_t n, const uint16_t *h,
                             float *x, float *lab) {
    const size_t nx = (size_t)Bn * (size_t)n,
                 nl = (size_t)e->core.B * (size_t)ipup__lab_w(&e->core);
    size_t j;
    ipup_f16_to_f32((int)nx, h, x);
    if (!lab) return;
    h += (size_t)e->core.B * (size_t)n;
    if (ipup__target_w(&e->core)) ipup_f16_to_f32((int)nl, h, lab);
    else
        for (j = 0; j < nl; j++) ((int32_t *)(void *)lab)[j] = (int32_t)h[j];
}
/* cfg.dtype float16: the input of stage s (Bn rows) in fp32 as the IPU stores it: a ring
   message (packed) unpacked, or the caller's rows (stage 0) rounded, in the stage's scratch */
static const float *ipup__half_in(ipup_emu *e, int32_t s, int32_t Bn, const float *in,
                                  int packed) {
    float *x = s ? e->stage_rt[0][s].xb : e->stage_rt[0][0].pingpong[0];
    const size_t n = (size_t)Bn * (size_t)e->core.stages[s].in_n;
    if (packed) {
        ipup_f16_to_f32((int)n, (const uint16_t *)(const void *)in, x);
        return x;
    }
    IPUPIPE_MEMCPY(x, in, n * sizeof(float));
    ipup__h_round(x, n);
    return x;
}

/* the loss scale of IPU ipu's next update (1 without loss scaling) */
static float ipup__ls(const ipup_emu *e, int32_t ipu) {
    return e->ls_scale[ipu] > 0.0f ? e->ls_scale[ipu] : 1.0f;
}
static float *ipup__pick(ipup__stage_rt *rt, const float *cur) {
    return cur == rt->pingpong[0] ? rt->pingpong[1] : rt->pingpong[0];
}

/* A ReLU's output stashed as the input of the next layer of its stage: its backward reads
   that (relu(z) > 0 exactly when z > 0: the same mask as from its input z). */
static int ipup__relu_out_kept(const ipup_emu *e, const ipup__stage *st, int32_t l) {
    return e->core.layers[l].info.kind == IPUP_LAYER_RELU && l + 1 < st->last &&
           e->core.layers[l + 1].stash_off > 0 && !e->core.layers[l + 1].pool_idx;
}
/* Dense or conv at l followed by a ReLU whose input no backward reads (evaluation, or the
   ReLU's output is kept): run both as one fused kernel. */
static int ipup__fuse_relu(const ipup_emu *e, const ipup__stage *st, int32_t l, const float *E,
                           int train) {
    const ipup_layer_kind k = e->core.layers[l].info.kind;
    if ((k != IPUP_LAYER_DENSE && k != IPUP_LAYER_CONV3X3) || l + 1 >= st->last ||
        e->core.layers[l + 1].info.kind != IPUP_LAYER_RELU)
        return 0;
    return !E || !train || e->core.layers[l + 1].stash_off < 0 || ipup__relu_out_kept(e, st, l + 1);
}

/* Where the forward of stage st writes layer l's output (l + fuse when a ReLU is fused):
   the ring slot out for the stage's last layer, the stash where the next layer's input is
   kept, else the ping-pong buffer that is not cur. *needed: 0 for that scratch buffer. */
static float *ipup__fwd_dest(ipup_emu *e, const ipup__stage *st, ipup__stage_rt *rt, int32_t l,
                             int fuse, float *E, float *out, const float *cur, int *needed) {
    *needed = 1;
    if (l + fuse == st->last - 1 && out) return out;
    if (E && l + fuse + 1 < st->last && e->core.layers[l + fuse + 1].stash_off > 0 &&
        !e->core.layers[l + fuse + 1].pool_idx)
        return E + e->core.layers[l + fuse + 1].stash_off;
    *needed = 0;
    return ipup__pick(rt, cur);
}

/* A dense or conv with its ReLU fused (layer l, l + 1), then a max-pool (l + 2), run a few
   samples at a time: each chunk's activation is pooled while it is still in the core's
   cache instead of being written out whole and read back (a conv's output is MBs per
   micro-batch). Every element has the same chain whatever the rows of a call, so the
   bits are those of the whole-batch calls. A pool that keeps arg-max bytes (training,
   ipup__pool_idx_at) pools each chunk from the stage's chunk buffer: the activation never
   leaves the cache. Otherwise only when the pool's output does not overwrite the layer's
   input, the chunks written where the pool's input is kept. Returns the pool's output, or
   NULL (not this case: nothing done). */
static const float *ipup__fwd_pooled(ipup_emu *e, const ipup__stage *st, ipup__stage_rt *rt,
                                     int32_t l, int32_t Bn, const float *cur, float *dest, float *E,
                                     float *out) {
    const ipup_layer_info *I = &e->core.layers[l].info, *P;
    const float *w = ipup__wchunked(e, rt, l) ? NULL : ipup__layer_params(e, rt, l);
    const float *b = w ? w + ipup__round16(I->n_w) : NULL;
    const int idx = l + 2 < st->last && e->core.layers[l + 2].pool_idx;
    uint8_t *keep = idx ? (uint8_t *)(void *)(E + e->core.layers[l + 2].stash_off) : NULL;
    float *y;
    int32_t i, c;
    int needed;
    if (l + 2 >= st->last || e->core.layers[l + 2].info.kind != IPUP_LAYER_MAXPOOL2) return NULL;
    P = &e->core.layers[l + 2].info;
    y = ipup__fwd_dest(e, st, rt, l + 2, 0, E, out, idx ? cur : dest, &needed);
    if (!idx && (y == cur || y == dest)) return NULL;
    c = ipup__chunk_rows(I, Bn);
    for (i = 0; i < Bn; i += c) {
        const int32_t n = Bn - i < c ? Bn - i : c;
        float *d = idx ? rt->chunk : dest + (size_t)i * (size_t)I->out_n;
        if (I->kind == IPUP_LAYER_DENSE)
            ipup__dense_fwd_l(e, rt, l, n, cur + (size_t)i * (size_t)I->in_n, w, b, d, 1);
        else
            ipup_conv3x3_relu_fwd_f32(n, I->in_h, I->in_w, I->in_c, I->out_c,
                                      cur + (size_t)i * (size_t)I->in_n, w, b, d, rt->conv);
        if (ipup__f16(e)) ipup__h_round(d, (size_t)n * (size_t)I->out_n); /* as stored */
        if (idx)
            ipup_maxpool2_fwd_idx_f32(n, P->in_h, P->in_w, P->in_c, d,
                                      y + (size_t)i * (size_t)P->out_n,
                                      keep + (size_t)i * (size_t)P->out_n, 1);
        else
            ipup_maxpool2_fwd_f32(n, P->in_h, P->in_w, P->in_c, d,
                                  y + (size_t)i * (size_t)P->out_n);
    }
    return y;
}

/* dloss (n) times the loss scale of the stage's IPU, rounded to binary16 under float16 */
static void ipup__dloss_scaled(ipup_emu *e, int32_t r, int32_t s, size_t n, float *dl) {
    const float ls = ipup__ls(e, r * e->core.P + e->core.stages[s].device);
    size_t i;
    if (ls != 1.0f)
        for (i = 0; i < n; i++) dl[i] *= ls;
    if (ipup__f16(e)) ipup__h_round(dl, n);
}
/* the geometry of conv2d or depthwise layer l for the kernels */
static void ipup__conv_geom(const ipup_emu *e, int32_t l, ipup_conv2d_shape *sh) {
    const ipup_layer_info *I = &e->core.layers[l].info;
    ipup_conv2d_shape_init(sh, I->in_h, I->in_w, I->in_c, I->out_c, I->kh, I->kw, I->sh, I->sw,
                           e->core.model.layers[l].same);
}
static float ipup__bn_eps(const ipup_emu *e, int32_t l) {
    const float eps = e->core.model.layers[l].eps;
    return eps > 0.0f ? eps : 1e-3f;
}
static float ipup__bn_momentum(const ipup_emu *e, int32_t l) {
    const float mo = e->core.model.layers[l].momentum;
    return mo > 0.0f ? mo : 0.99f;
}
/* a trained batch norm's statistics of global micro-batch g (r M + m): mean, invstd
   follows at +round16(C) */
static float *ipup__bn_stats(const ipup_emu *e, const ipup__stage_rt *rt, int32_t l, int64_t g) {
    const ipup__layer_facts *Ly = &e->core.layers[l];
    return rt->grads + Ly->stat_off + (size_t)g * 2u * ipup__round16(Ly->info.out_c);
}
/* The forward of layer l (a kind from IPUP_LAYER_CONV2D on) from cur into dest (needed: 0
   when dest is a scratch buffer a view may skip). bn_train: a batch norm in training mode
   (the forward of a training step), whose statistics go to the slot of global micro-batch
   g. Returns where the output is. */
static const float *ipup__fwd_more(ipup_emu *e, ipup__stage_rt *rt, int32_t l, int32_t Bn,
                                   const float *cur, float *dest, int needed, int bn_train,
                                   int64_t g) {
    const ipup__layer_facts *Ly = &e->core.layers[l];
    const ipup_layer_info *I = &Ly->info;
    const float *w = I->n_w ? ipup__layer_params(e, rt, l) : NULL;
    const float *b = I->n_w ? w + ipup__round16(I->n_w) : NULL;
    const int n = Bn * I->in_n;
    ipup_conv2d_shape sh;
    switch (I->kind) {
    case IPUP_LAYER_CONV2D:
        ipup__conv_geom(e, l, &sh);
        ipup_conv2d_fwd_f32(Bn, &sh, cur, w, b, dest, rt->conv);
        break;
    case IPUP_LAYER_DWCONV:
        ipup__conv_geom(e, l, &sh);
        ipup_dwconv2d_fwd_f32(Bn, &sh, cur, w, b, dest);
        break;
    case IPUP_LAYER_BATCHNORM: {
        const int N = Bn * I->in_h * I->in_w, C = I->in_c;
        const float *rm = ipup__layer_running(e, rt, l, w);
        if (bn_train && !I->frozen) {
            float *st = ipup__bn_stats(e, rt, l, g);
            ipup_batchnorm_fwd_train_f32(N, C, cur, w, b, ipup__bn_eps(e, l), dest, st,
                                         st + ipup__round16(C));
        } else {
            ipup_batchnorm_fwd_infer_f32(N, C, cur, w, b, rm, rm + ipup__round16(C),
                                         ipup__bn_eps(e, l), dest);
        }
        break;
    }
    case IPUP_LAYER_AVGPOOL:
    case IPUP_LAYER_GAVGPOOL:
        ipup_avgpool_fwd_f32(Bn, I->in_h, I->in_w, I->in_c, I->kh, I->kw, I->sh, I->sw, cur, dest);
        break;
    case IPUP_LAYER_SIGMOID: ipup_sigmoid_fwd_f32(n, cur, dest); break;
    case IPUP_LAYER_TANH: ipup_tanh_fwd_f32(n, cur, dest); break;
    case IPUP_LAYER_LEAKY_RELU:
        ipup_leaky_relu_fwd_f32(n, e->core.model.layers[l].alpha, cur, dest);
        break;
    case IPUP_LAYER_HSWISH: ipup_hard_swish_fwd_f32(n, cur, dest); break;
    case IPUP_LAYER_RES_BEGIN: /* keep the block input for the shortcut and the add */
        IPUPIPE_MEMCPY(rt->res[0], cur, (size_t)n * sizeof(float));
        if (!needed) return cur;
        IPUPIPE_MEMCPY(dest, cur, (size_t)n * sizeof(float));
        break;
    case IPUP_LAYER_RES_SHORTCUT: /* keep the main output; the shortcut reads the input */
        IPUPIPE_MEMCPY(rt->res[1], cur, (size_t)n * sizeof(float));
        if (!needed) return rt->res[0];
        IPUPIPE_MEMCPY(dest, rt->res[0], (size_t)Bn * (size_t)I->out_n * sizeof(float));
        break;
    case IPUP_LAYER_RES_END: { /* main + shortcut: cur is the shortcut's output or the main's */
        const float *a = Ly->res_sc ? rt->res[1] : cur, *c = Ly->res_sc ? cur : rt->res[0];
        int i;
        for (i = 0; i < n; i++) dest[i] = a[i] + c[i];
        break;
    }
    default: break;
    }
    return dest;
}
/* The backward of a residual block's marker (res_end, res_shortcut) of layer l with the
   gradient cur: res_end keeps the gradient of the block output for the main branch (the
   shortcut's backward, if any, comes first in this walk); res_shortcut keeps the
   shortcut's input gradient and gives the main branch the kept one. Returns the new cur. */
static const float *ipup__res_bwd_mark(const ipup_emu *e, ipup__stage_rt *rt, int32_t l,
                                       int32_t Bn, const float *cur) {
    const ipup_layer_info *I = &e->core.layers[l].info;
    if (I->kind == IPUP_LAYER_RES_END) {
        IPUPIPE_MEMCPY(rt->res[0], cur, (size_t)Bn * (size_t)I->out_n * sizeof(float));
        return cur;
    }
    IPUPIPE_MEMCPY(rt->res[1], cur, (size_t)Bn * (size_t)I->out_n * sizeof(float));
    return rt->res[0];
}
/* The backward of layer l (a kind from IPUP_LAYER_CONV2D on but the markers above): x its
   kept input, cur the output gradient, dest the input gradient or NULL, gw/gb the
   gradients (a trained layer) or NULL; wentry: an I op (weight gradients later, from the
   W-stash entry); g the global micro-batch (a batch norm's statistics). */
static void ipup__bwd_more(ipup_emu *e, ipup__stage_rt *rt, int32_t l, int32_t Bn,
                           const float *x, const float *cur, float *dest, float *gw, float *gb,
                           float *wentry, int64_t g) {
    const ipup__layer_facts *Ly = &e->core.layers[l];
    const ipup_layer_info *I = &Ly->info;
    const float *w = I->n_w ? ipup__layer_params(e, rt, l) : NULL;
    const int n = Bn * I->in_n;
    ipup_conv2d_shape sh;
    if (wentry && gw) { /* an I op: the W op computes the weight gradients */
        IPUPIPE_MEMCPY(wentry + Ly->dy_off, cur, (size_t)Bn * (size_t)I->out_n * sizeof(float));
        gw = gb = NULL;
        if (!dest) return;
    }
    switch (I->kind) {
    case IPUP_LAYER_CONV2D:
        ipup__conv_geom(e, l, &sh);
        ipup_conv2d_bwd_f32(Bn, &sh, x, w, cur, dest, gw, gb, rt->conv);
        break;
    case IPUP_LAYER_DWCONV:
        ipup__conv_geom(e, l, &sh);
        ipup_dwconv2d_bwd_f32(Bn, &sh, x, w, cur, dest, gw, gb);
        break;
    case IPUP_LAYER_BATCHNORM: {
        const int N = Bn * I->in_h * I->in_w, C = I->in_c;
        if (I->frozen) { /* inference mode: a per-channel scale */
            ipup_batchnorm_bwd_infer_f32(N, C, w,
                                         ipup__layer_running(e, rt, l, w) + ipup__round16(C),
                                         ipup__bn_eps(e, l), cur, dest);
        } else {
            const float *st = ipup__bn_stats(e, rt, l, g);
            ipup_batchnorm_bwd_f32(N, C, x, w, st, st + ipup__round16(C), cur, dest, gw, gb);
        }
        break;
    }
    case IPUP_LAYER_AVGPOOL:
    case IPUP_LAYER_GAVGPOOL:
        ipup_avgpool_bwd_f32(Bn, I->in_h, I->in_w, I->in_c, I->kh, I->kw, I->sh, I->sw, cur, dest);
        break;
    case IPUP_LAYER_SIGMOID: /* the output again from the kept input (the forward's bits) */
        ipup_sigmoid_fwd_f32(n, x, dest);
        ipup_sigmoid_bwd_f32(n, dest, cur, dest);
        break;
    case IPUP_LAYER_TANH:
        ipup_tanh_fwd_f32(n, x, dest);
        ipup_tanh_bwd_f32(n, dest, cur, dest);
        break;
    case IPUP_LAYER_LEAKY_RELU:
        ipup_leaky_relu_bwd_f32(n, e->core.model.layers[l].alpha, x, cur, dest);
        break;
    case IPUP_LAYER_HSWISH: ipup_hard_swish_bwd_f32(n, x, cur, dest); break;
    case IPUP_LAYER_RES_BEGIN: { /* the main branch's input gradient + the shortcut's */
        const float *c = rt->res[Ly->res_sc ? 1 : 0];
        int i;
        for (i = 0; i < n; i++) dest[i] = cur[i] + c[i];
        break;
    }
    default: break;
    }
}
/* The W op's weight gradients of layer l (conv2d, depthwise, batch norm) from its kept
   input x and its output gradient dy */
static void ipup__w_more(ipup_emu *e, ipup__stage_rt *rt, int32_t l, int32_t Bn, const float *x,
                         const float *dy, float *gw, float *gb, int64_t g) {
    const ipup__layer_facts *Ly = &e->core.layers[l];
    const ipup_layer_info *I = &Ly->info;
    const float *w = ipup__layer_params(e, rt, l);
    ipup_conv2d_shape sh;
    if (I->kind == IPUP_LAYER_BATCHNORM) {
        const float *st = ipup__bn_stats(e, rt, l, g);
        ipup_batchnorm_bwd_f32(Bn * I->in_h * I->in_w, I->in_c, x, w, st,
                               st + ipup__round16(I->in_c), dy, NULL, gw, gb);
        return;
    }
    ipup__conv_geom(e, l, &sh);
    if (I->kind == IPUP_LAYER_CONV2D)
        ipup_conv2d_bwd_f32(Bn, &sh, x, w, dy, NULL, gw, gb, rt->conv);
    else
        ipup_dwconv2d_bwd_f32(Bn, &sh, x, w, dy, NULL, gw, gb);
}
/* the running statistics of stage s's trained batch norms after a step (ipup__update_stage):
   every global micro-batch's statistics in the order r M + m (all replicas' slots hold all
   of them after the all-reduce: each replica wrote only its own, the others were 0) */
static void ipup__bn_running(ipup_emu *e, ipup__stage_rt *rt, int32_t s, int64_t t) {
    const ipup__stage *st = &e->core.stages[s];
    int32_t l;
    int64_t g;
    for (l = st->first; l < st->last; l++) {
        const ipup__layer_facts *Ly = &e->core.layers[l];
        const int32_t C = Ly->info.out_c;
        const int n = (int)(2 * ipup__round16(C));
        float *rm = rt->hparams ? rt->wstage : rt->params + Ly->run_off;
        if (Ly->stat_off < 0) continue;
        if (rt->hparams) ipup_f16_to_f32(n, rt->hparams + Ly->run_off, rm);
        for (g = 0; g < (int64_t)e->core.R * e->core.M; g++) {
            const float *sg = ipup__bn_stats(e, rt, l, g);
            ipup_batchnorm_running_f32(C, e->core.B * Ly->info.in_h * Ly->info.in_w,
                                       ipup__bn_momentum(e, l), sg, sg + ipup__round16(C),
                                       ipup__bn_eps(e, l), rm, rm + ipup__round16(C));
        }
        if (rt->hparams) ipup__w16_store(e, rm, n, rt->hparams + Ly->run_off, t, l, 2, 0);
    }
}

/* Forward through stage s on replica r. in (Bn, in_n); labels (Bn); E: a stash entry (full
   layout, in == E) or NULL (evaluation); out (Bn, out_n) or NULL (discard). loss NULL
   (ipup_predict): the model's last stage stops before the loss layer and writes the loss
   layer's input (Bn, its in_n) into out. Returns where the stage's output is (out, or with
   out NULL a ping-pong buffer, or a view of in). */
static const float *ipup__stage_fwd(ipup_emu *e, int32_t r, int32_t s, int32_t Bn, const float *in,
                            const int32_t *labels, float *E, float *out, int train, int64_t t,
                            int64_t sample0, float *loss, int *correct) {
    const ipup__stage *st = &e->core.stages[s];
    ipup__stage_rt *rt = &e->stage_rt[r][s];
    const float *cur = in;
    int32_t l;
    for (l = st->first; l < st->last; l++) {
        const ipup__layer_facts *Ly = &e->core.layers[l];
        const ipup_layer_info *I = &Ly->info;
        float *dest;
        const float *w = NULL, *b = NULL;
        int n = Bn * I->in_n, needed, fuse;
        if (I->n_w && !ipup__wchunked(e, rt, l)) {
            w = ipup__layer_params(e, rt, l);
            b = w + ipup__round16(I->n_w);
        }
        if (!loss && l == e->core.n_layers - 1) {
            /* ipup_predict: the loss layer's input is the result */
            if (out != cur) IPUPIPE_MEMCPY(out, cur, (size_t)n * sizeof(float));
            break;
        }
        if (I->kind == IPUP_LAYER_SOFTMAX_XENT) {
            float *dl = (E && train) ? E + st->dloss_off : NULL;
            e->loss_in[r] = cur; /* the outputs an outfeed carries (IPUP_OUTFEED_OUTPUTS) */
            *loss = ipup_softmax_xent_f32(Bn, I->in_n, cur, labels, dl, correct);
            if (dl) ipup__dloss_scaled(e, r, s, (size_t)Bn * (size_t)I->in_n, dl);
            break;
        }
        if (I->kind == IPUP_LAYER_MSE || I->kind == IPUP_LAYER_BCE) { /* float targets */
            float *dl = (E && train) ? E + st->dloss_off : NULL;
            e->loss_in[r] = cur;
            const float *tg = (const float *)(const void *)labels;
            *loss = I->kind == IPUP_LAYER_MSE ? ipup_mse_f32(Bn, I->in_n, cur, tg, dl)
                                              : ipup_bce_logits_f32(Bn, I->in_n, cur, tg, dl);
            *correct = 0;
            if (dl) ipup__dloss_scaled(e, r, s, (size_t)Bn * (size_t)I->in_n, dl);
            break;
        }
        fuse = ipup__fuse_relu(e, st, l, E, train); /* then l + 1 is the ReLU: its output */
        dest = ipup__fwd_dest(e, st, rt, l, fuse, E, out, cur, &needed);
        if (fuse && E) { /* training (evaluation keeps the whole-batch calls export_c.h writes) */
            const float *pooled = ipup__fwd_pooled(e, st, rt, l, Bn, cur, dest, E, out);
            if (pooled) { cur = pooled; l += 2; continue; }
        }
        switch (I->kind) {
        case IPUP_LAYER_DENSE:
            ipup__dense_fwd_l(e, rt, l, Bn, cur, w, b, dest, fuse);
            break;
        case IPUP_LAYER_CONV3X3:
            if (fuse)
                ipup_conv3x3_relu_fwd_f32(Bn, I->in_h, I->in_w, I->in_c, I->out_c, cur, w, b, dest,
                                          rt->conv);
            else
                ipup_conv3x3_fwd_f32(Bn, I->in_h, I->in_w, I->in_c, I->out_c, cur, w, b, dest,
                                     rt->conv);
            break;
        case IPUP_LAYER_RELU: ipup_relu_fwd_f32(n, cur, dest); break;
        case IPUP_LAYER_GELU: ipup_gelu_fwd_f32(n, cur, dest); break;
        case IPUP_LAYER_MAXPOOL2:
            if (Ly->pool_idx && E)
                ipup_maxpool2_fwd_idx_f32(Bn, I->in_h, I->in_w, I->in_c, cur, dest,
                                          (uint8_t *)(void *)(E + Ly->stash_off), 1);
            else ipup_maxpool2_fwd_f32(Bn, I->in_h, I->in_w, I->in_c, cur, dest);
            break;
        default: /* flatten; dropout: identity unless training with rate > 0 */
            if (I->kind >= IPUP_LAYER_CONV2D) {
                const float *o = ipup__fwd_more(e, rt, l, Bn, cur, dest, needed, train && E,
                                                sample0 / e->core.B);
                if (ipup__f16(e) && o == dest) /* stored as binary16 (a view already is) */
                    ipup__h_round(dest, (size_t)Bn * (size_t)I->out_n);
                cur = o;
                continue;
            }
            if (I->kind == IPUP_LAYER_DROPOUT && train && e->core.model.layers[l].rate > 0.0f) {
                ipup_dropout_fwd_f32(n, e->core.model.layers[l].rate, Ly->seed, (uint64_t)t,
                                     (uint64_t)sample0 * (uint64_t)I->in_n, cur, dest);
                break;
            }
            if (!needed) continue; /* a view: no copy */
            IPUPIPE_MEMCPY(dest, cur, (size_t)n * sizeof(float));
            break;
        }
        if (ipup__f16(e)) /* every op's output is stored as binary16 */
            ipup__h_round(dest, (size_t)Bn * (size_t)e->core.layers[l + fuse].info.out_n);
        cur = dest;
        l += fuse;
    }
    return cur;
}

/* Backward (B, or I when wentry != NULL) through stage s. E: the stash entry (full layout),
   dy (B, out_n) from stage s+1 or NULL for the last stage (dlogits in E), dx (B, in_n)
   to stage s-1 or NULL. */
static void ipup__stage_bwd(ipup_emu *e, int32_t r, int32_t s, const float *E, const float *dy,
                            float *dx, float *wentry, int64_t t, int64_t sample0) {
    const ipup__stage *st = &e->core.stages[s];
    ipup__stage_rt *rt = &e->stage_rt[r][s];
    int32_t l, Bn = e->core.B;
    const float *cur = (s == e->core.S - 1) ? E + st->dloss_off : dy;
    int wrote_dx = 0;
    for (l = st->last - 1; l >= st->first; l--) {
        const ipup__layer_facts *Ly = &e->core.layers[l];
        const ipup_layer_info *I = &Ly->info;
        const float *x = ipup__relu_out_kept(e, st, l) ? E + e->core.layers[l + 1].stash_off
                         : Ly->stash_off >= 0          ? E + Ly->stash_off
                                                       : NULL;
        float *dest = NULL, *gw = NULL, *gb = NULL;
        const float *w = NULL;
        int n = Bn * I->in_n, trains = I->n_w && !I->frozen;
        if (!Ly->need_dx && !trains) break; /* nothing below needs a gradient */
        if (ipup__is_loss(I->kind)) continue; /* dlogits already in E */
        if (I->kind == IPUP_LAYER_RES_END || I->kind == IPUP_LAYER_RES_SHORTCUT) {
            cur = ipup__res_bwd_mark(e, rt, l, Bn, cur);
            continue;
        }
        if (I->n_w && !ipup__wchunked(e, rt, l)) w = ipup__layer_params(e, rt, l);
        if (trains) { /* a frozen layer: input gradient only */
            gw = rt->grads + Ly->param_off;
            gb = gw + ipup__round16(I->n_w);
        }
        if (Ly->need_dx) dest = (l == st->first && dx) ? dx : ipup__pick(rt, cur);
        if (!dest && !I->n_w) break; /* (unreachable: caught above) */
        switch (I->kind) {
        case IPUP_LAYER_DENSE:
            if (wentry) {
                if (dest) ipup__dense_bwd_l(e, rt, l, Bn, x, w, cur, dest, NULL, NULL);
                if (trains)
                    IPUPIPE_MEMCPY(wentry + Ly->dy_off, cur,
                                   (size_t)Bn * (size_t)I->out_n * sizeof(float));
            } else {
                ipup__dense_bwd_l(e, rt, l, Bn, x, w, cur, dest, gw, gb);
            }
            break;
        case IPUP_LAYER_CONV3X3:
            if (wentry) {
                if (dest)
                    ipup_conv3x3_bwd_f32(Bn, I->in_h, I->in_w, I->in_c, I->out_c, x, w, cur, dest,
                                         NULL, NULL, rt->conv);
                if (trains)
                    IPUPIPE_MEMCPY(wentry + Ly->dy_off, cur,
                                   (size_t)Bn * (size_t)I->out_n * sizeof(float));
            } else {
                ipup_conv3x3_bwd_f32(Bn, I->in_h, I->in_w, I->in_c, I->out_c, x, w, cur, dest, gw,
                                     gb, rt->conv);
            }
            break;
        case IPUP_LAYER_RELU:
            if (ipup__relu_to_pool(&e->core, s, l)) { /* cur is dL/dz already: the identity */
                if (dest != dx) continue; /* a view */
                IPUPIPE_MEMCPY(dest, cur, (size_t)n * sizeof(float));
                break;
            }
            ipup_relu_bwd_f32(n, x, cur, dest);
            break;
        case IPUP_LAYER_GELU: ipup_gelu_bwd_f32(n, x, cur, dest); break;
        case IPUP_LAYER_MAXPOOL2:
            if (l == st->first && s > 0 && ipup__relu_to_pool(&e->core, s - 1, l - 1)) {
                /* the previous stage's ReLU */
                if (Ly->pool_idx)
                    ipup_maxpool2_bwd_idx_f32(Bn, I->in_h, I->in_w, I->in_c,
                                              (const uint8_t *)(const void *)x, cur, dest);
                else ipup_maxpool2_relu_bwd_f32(Bn, I->in_h, I->in_w, I->in_c, x, cur, dest);
            } else if (l > st->first && e->core.layers[l - 1].info.kind == IPUP_LAYER_RELU &&
                       e->core.layers[l - 1].need_dx) {
                /* ReLU's backward fused into the pool's (one pass, the same bits): x = relu(z),
                   or the arg-max bytes with its mask */
                l--;
                if (l == st->first && dx) dest = dx;
                if (Ly->pool_idx)
                    ipup_maxpool2_bwd_idx_f32(Bn, I->in_h, I->in_w, I->in_c,
                                              (const uint8_t *)(const void *)x, cur, dest);
                else ipup_maxpool2_relu_bwd_f32(Bn, I->in_h, I->in_w, I->in_c, x, cur, dest);
            } else {
                ipup_maxpool2_bwd_f32(Bn, I->in_h, I->in_w, I->in_c, x, cur, dest);
            }
            break;
        default: /* flatten; dropout */
            if (I->kind >= IPUP_LAYER_CONV2D) {
                ipup__bwd_more(e, rt, l, Bn, x, cur, dest, gw, gb, wentry, sample0 / Bn);
                break;
            }
            if (I->kind == IPUP_LAYER_DROPOUT && e->core.model.layers[l].rate > 0.0f) {
                ipup_dropout_bwd_f32(n, e->core.model.layers[l].rate, Ly->seed, (uint64_t)t,
                                     (uint64_t)sample0 * (uint64_t)I->in_n, cur, dest);
                break;
            }
            if (!dest || dest != dx) continue; /* a view */
            IPUPIPE_MEMCPY(dest, cur, (size_t)n * sizeof(float));
            break;
        }
        if (!dest) break;
        if (ipup__f16(e)) /* the input gradient is stored as binary16 */
            ipup__h_round(dest, (size_t)Bn * (size_t)e->core.layers[l].info.in_n);
        if (dest == dx) wrote_dx = 1;
        cur = dest;
    }
    if (dx && !wrote_dx) {
        /* nothing upstream needs a gradient (no parameters before this stage): send zeros
           so the ring protocol stays the same, or the stage's only layer was a view */
        if (cur && cur != dx && st->first == st->last - 1 && e->core.layers[st->first].need_dx)
            IPUPIPE_MEMCPY(dx, cur, (size_t)Bn * (size_t)st->in_n * sizeof(float));
        else
            IPUPIPE_MEMSET(dx, 0, (size_t)Bn * (size_t)st->in_n * sizeof(float));
    }
}

static void ipup__stage_w(ipup_emu *e, int32_t r, int32_t s, const float *E, const float *wentry,
                          int64_t g) {
    const ipup__stage *st = &e->core.stages[s];
    ipup__stage_rt *rt = &e->stage_rt[r][s];
    int32_t l, Bn = e->core.B;
    for (l = st->last - 1; l >= st->first; l--) {
        const ipup__layer_facts *Ly = &e->core.layers[l];
        const ipup_layer_info *I = &Ly->info;
        float *gw, *gb;
        if (!I->n_w || I->frozen) continue;
        gw = rt->grads + Ly->param_off;
        gb = gw + ipup__round16(I->n_w);
        if (I->kind == IPUP_LAYER_DENSE) /* no dx: the weights are not read */
            ipup_dense_bwd_f32(Bn, I->in_n, I->out_n, E + Ly->stash_off,
                               rt->hparams ? NULL : ipup__layer_params(e, rt, l),
                               wentry + Ly->dy_off, NULL, gw, gb);
        else if (I->kind != IPUP_LAYER_CONV3X3)
            ipup__w_more(e, rt, l, Bn, E + Ly->stash_off, wentry + Ly->dy_off, gw, gb, g);
        else
            ipup_conv3x3_bwd_f32(Bn, I->in_h, I->in_w, I->in_c, I->out_c, E + Ly->stash_off,
                                 ipup__layer_params(e, rt, l), wentry + Ly->dy_off, NULL, gw, gb,
                                 rt->conv);
    }
}

static size_t ipup__entry_floats(const ipup_emu *e, int32_t s) {
    return ipup__slot_floats(&e->core, s);
}

/* stash entry `pos` places behind the front of stage s (the oldest micro-batch whose
   weight gradients are pending) as a full entry, recomputing the forward if needed.
   B and I ops of micro-batch m use pos = wstash_count (entries before it wait for their W). */
static float *ipup__front(ipup_emu *e, int32_t r, int32_t s, int64_t t, int32_t m, uint32_t pos) {
    const ipup__stage *st = &e->core.stages[s];
    ipup__stage_rt *rt = &e->stage_rt[r][s];
    float *slot = rt->stash +
                  (size_t)((rt->stash_head + pos) % (uint32_t)st->depth) * ipup__entry_floats(e, s);
    float *E;
    float loss;
    int corr;
    if (!ipup__rec(&e->core, s) && !ipup__f16(e)) {
        if (!ipup__act_off(&e->core, s)) return slot;
        IPUPIPE_MEMCPY(rt->work, slot, st->entry_floats * sizeof(float)); /* stream in */
        return rt->work;
    }
    E = rt->work;
    if (ipup__f16(e)) { /* the binary16 slot into the fp32 work entry */
        ipup__entry_unpack(e, s, ipup__rec(&e->core, s), (const uint16_t *)(const void *)slot,
                           E);
        if (!ipup__rec(&e->core, s)) return E;
    } else {
        IPUPIPE_MEMCPY(E, slot, (size_t)e->core.B * (size_t)st->in_n * sizeof(float));
        IPUPIPE_MEMCPY(E + st->label_off, slot + (size_t)e->core.B * (size_t)st->in_n,
                       ipup__lab_bytes(&e->core));
    }
    ipup__stage_fwd(e, r, s, e->core.B, E, (const int32_t *)(const void *)(E + st->label_off), E,
                    NULL, 1, t, ((int64_t)r * e->core.M + m) * e->core.B, &loss, &corr);
    return E;
}

/* the Adam update of one tensor with cfg.opt's switches (global step t: the bias
   correction uses t + 1, none with no_bias_correction; weight_decay decoupled) */
static void ipup__adam_update(const ipup_optimizer *o, int64_t t, int32_t n, float scale, float *w,
                              float *m, float *v, const float *g) {
    ipup_adamw_f32(n, o->lr, o->beta1, o->beta2, o->eps, o->weight_decay,
                   o->no_bias_correction ? 0 : (int)(t + 1), scale, w, m, v, g);
}

/* >>concurrent-runtime: lane ops, fan-out and fan-in, the lanes' sums and updates */
/* The lanes of concurrent stages (their setup: concurrent-setup). Branch b of stage s owns
   the units [u0, u0+sl) (u0 = first_unit, sl = slice_units) of the stage's weight layer:
   w (IN, sl) or (3,3,CI,sl) and b (sl), sliced from the unsplit tensor, so its initial
   bits are the unsplit model's. Its forward writes (B, spatial, sl); stage s+1 takes the
   concatenation along the units (NHWC: along the channels of every pixel). Its backward
   gets its slice of dy and sends a whole dx (B, in_n), which stage s-1 sums over the
   branches in the order 0, 1, ... (the only difference from the unsplit model's
   dx = dy W^T). */

/* stash entry `pos` places behind the front of lane k's FIFO */
static float *ipup__lane_entry(const ipup_emu *e, const ipup__lane_rt *rt, int32_t k,
                               uint32_t pos) {
    return rt->stash + (size_t)((rt->stash_head + pos) %
                                (uint32_t)e->core.stages[e->core.lanes[k].stage].depth) *
                           e->core.lanes[k].entry_floats;
}

/* dropout over a lane's (n_px pixels x sl) block: each element keyed as in the unsplit
   layer, (sample) x features + pixel x units + first_unit + unit */
static void ipup__lane_dropout(const ipup_emu *e, int32_t k, int32_t l, int32_t Bn, int64_t t,
                               int64_t sample0, const float *x, float *y, int bwd) {
    const ipup__lane *c = &e->core.lanes[k];
    const ipup_layer_info *I = &e->core.layers[l].info;
    float rate = e->core.model.layers[l].rate;
    int32_t j, p;
    for (j = 0; j < Bn; j++)
        for (p = 0; p < c->spatial; p++) {
            size_t at = ((size_t)j * (size_t)c->spatial + (size_t)p) * (size_t)c->slice_units;
            uint64_t off = (uint64_t)(sample0 + j) * (uint64_t)I->in_n +
                           (uint64_t)p * (uint64_t)c->units + (uint64_t)c->first_unit;
            if (bwd)
                ipup_dropout_bwd_f32(c->slice_units, rate, e->core.layers[l].seed, (uint64_t)t, off,
                                     x + at, y + at);
            else
                ipup_dropout_fwd_f32(c->slice_units, rate, e->core.layers[l].seed, (uint64_t)t, off,
                                     x + at, y + at);
        }
}

/* forward of lane k on replica r: x (Bn, in_n) -> out (Bn, spatial, sl). E: its stash
   entry (the inputs of the element-wise layers are kept there) or NULL (evaluation:
   the lane's ping-pong buffers; out NULL returns where the result is) */
static const float *ipup__lane_fwd(ipup_emu *e, int32_t r, int32_t k, int32_t Bn, const float *x,
                                   float *E, float *out, int train, int64_t t, int64_t sample0) {
    const ipup__lane *c = &e->core.lanes[k];
    ipup__lane_rt *rt = &e->lane_rt[r][k];
    const ipup__stage *st = &e->core.stages[c->stage];
    const float *cur = x;
    int32_t l, tog = 0;
    for (l = st->first; l < st->last; l++) {
        const ipup_layer_info *I = &e->core.layers[l].info;
        int n = Bn * c->spatial * c->slice_units;
        float *dest = (l == st->last - 1 && out) ? out
                      : E                        ? E + ipup__lane_act_off(&e->core, k, l + 1)
                                                 : rt->pingpong[tog ^= 1];
        switch (I->kind) {
        case IPUP_LAYER_DENSE:
            ipup_dense_fwd_f32(Bn, I->in_n, c->slice_units, cur, rt->params,
                               rt->params + c->bias_off, dest);
            break;
        case IPUP_LAYER_CONV3X3:
            ipup_conv3x3_fwd_f32(Bn, I->in_h, I->in_w, I->in_c, c->slice_units, cur, rt->params,
                                 rt->params + c->bias_off, dest, rt->conv);
            break;
        case IPUP_LAYER_RELU: ipup_relu_fwd_f32(n, cur, dest); break;
        case IPUP_LAYER_GELU: ipup_gelu_fwd_f32(n, cur, dest); break;
        default: /* dropout */
            if (train && e->core.model.layers[l].rate > 0.0f)
                ipup__lane_dropout(e, k, l, Bn, t, sample0, cur, dest, 0);
            else IPUPIPE_MEMCPY(dest, cur, (size_t)n * sizeof(float));
            break;
        }
        cur = dest;
    }
    return cur;
}

/* backward of lane k: dy (B, spatial, sl) -> dx (B, in_n) written (zeros when no earlier
   layer has weights); its weight gradients added */
static void ipup__lane_bwd(ipup_emu *e, int32_t r, int32_t k, const float *E, const float *dy,
                           float *dx, int64_t t, int64_t sample0) {
    const ipup__lane *c = &e->core.lanes[k];
    ipup__lane_rt *rt = &e->lane_rt[r][k];
    const ipup__stage *st = &e->core.stages[c->stage];
    const ipup_layer_info *I0 = &e->core.layers[st->first].info;
    const float *cur = dy;
    float *dxw = e->core.layers[st->first].need_dx ? dx : NULL;
    int32_t l, tog = 0, B = e->core.B;
    int n = B * c->spatial * c->slice_units;
    for (l = st->last - 1; l > st->first; l--) {
        const float *x = E + ipup__lane_act_off(&e->core, k, l);
        float *dest = rt->pingpong[tog ^= 1];
        switch (e->core.layers[l].info.kind) {
        case IPUP_LAYER_RELU: ipup_relu_bwd_f32(n, x, cur, dest); break;
        case IPUP_LAYER_GELU: ipup_gelu_bwd_f32(n, x, cur, dest); break;
        default: /* dropout */
            if (e->core.model.layers[l].rate > 0.0f)
                ipup__lane_dropout(e, k, l, B, t, sample0, cur, dest, 1);
            else IPUPIPE_MEMCPY(dest, cur, (size_t)n * sizeof(float));
            break;
        }
        cur = dest;
    }
    if (I0->kind == IPUP_LAYER_DENSE)
        ipup_dense_bwd_f32(B, I0->in_n, c->slice_units, E, rt->params, cur, dxw, rt->grads,
                           rt->grads + c->bias_off);
    else
        ipup_conv3x3_bwd_f32(B, I0->in_h, I0->in_w, I0->in_c, c->slice_units, E, rt->params, cur,
                             dxw, rt->grads, rt->grads + c->bias_off, rt->conv);
    if (!dxw) IPUPIPE_MEMSET(dx, 0, (size_t)B * (size_t)st->in_n * sizeof(float));
}

/* a branch op of a concurrent stage (ipup__exec's path for them); 1: stall */
static int ipup__conc_exec(ipup_emu *e, int32_t r, const ipup_op *o, int64_t t, int threaded) {
    int32_t s = o->stage, k = e->core.first_lane[s] + ipup_op_branch(o),
            ipu = r * e->core.P + o->device;
    const ipup__lane *c = &e->core.lanes[k];
    ipup__lane_rt *rt = &e->lane_rt[r][k];
    size_t xin = (size_t)e->core.B * (size_t)e->core.stages[s].in_n;
    int64_t sample0 = ((int64_t)r * e->core.M + o->mb) * e->core.B;
    if (o->kind == IPUP_OP_F) {
        float *E, *msg, *out;
        if (rt->stash_count >= (uint32_t)e->core.stages[s].depth) return 1;
        E = ipup__lane_entry(e, rt, k, rt->stash_count);
        if (!(msg = (float *)ipup__wait_peek(e, &rt->in, threaded, t, ipu))) return 1;
        IPUPIPE_MEMCPY(E, msg, (xin + (size_t)e->core.B) * sizeof(float)); /* x and labels */
        ipup__release(e, &rt->in, threaded, ipup__ipu_of(e, r, s - 1));
        if (!(out = (float *)ipup__wait_reserve(e, &rt->out, threaded, t, ipu))) return 1;
        ipup__lane_fwd(e, r, k, e->core.B, E, E, out, 1, t, sample0);
        IPUPIPE_MEMCPY(out + c->out_floats, E + xin, (size_t)e->core.B * sizeof(int32_t));
        ipup__commit(e, &rt->out, threaded, ipup__ipu_of(e, r, s + 1));
        if (++rt->stash_count > rt->stash_peak) rt->stash_peak = rt->stash_count;
        return 0;
    } else {
        const float *dy;
        float *dx;
        if (rt->stash_count == 0) return 1;
        if (!(dy = (const float *)ipup__wait_peek(e, &rt->dy, threaded, t, ipu))) return 1;
        if (!(dx = (float *)ipup__wait_reserve(e, &rt->dx, threaded, t, ipu))) return 1;
        ipup__lane_bwd(e, r, k, ipup__lane_entry(e, rt, k, 0), dy, dx, t, sample0);
        ipup__release(e, &rt->dy, threaded, ipup__ipu_of(e, r, s + 1));
        ipup__commit(e, &rt->dx, threaded, ipup__ipu_of(e, r, s - 1));
        rt->stash_head = (rt->stash_head + 1u) % (uint32_t)e->core.stages[s].depth;
        rt->stash_count--;
        return 0;
    }
}

/* stage s-1 (plain) before concurrent stage s: one slot reserved in every branch's in
   ring; the buffer stage s-1 writes its output into (NULL when a wait gave up) */
static float *ipup__conc_reserve_in(ipup_emu *e, int32_t r, int32_t s, int64_t t, int threaded,
                                    int32_t self) {
    int32_t b;
    for (b = 0; b < e->core.n_branches[s]; b++) {
        ipup__lane_rt *rt = &e->lane_rt[r][e->core.first_lane[s] + b];
        if (!(rt->reserved_in = (float *)ipup__wait_reserve(e, &rt->in, threaded, t, self)))
            return NULL;
    }
    return e->fanout[r][s - 1].out;
}
/* ... then the output and labels (src) copied to every branch */
static void ipup__conc_commit_in(ipup_emu *e, int32_t r, int32_t s, const float *src,
                                 int threaded) {
    int32_t b;
    size_t n = (size_t)e->core.B * ((size_t)e->core.stages[s].in_n + 1u);
    for (b = 0; b < e->core.n_branches[s]; b++) {
        int32_t k = e->core.first_lane[s] + b;
        IPUPIPE_MEMCPY(e->lane_rt[r][k].reserved_in, src, n * sizeof(float));
        ipup__commit(e, &e->lane_rt[r][k].in, threaded, r * e->core.P + e->core.lanes[k].device);
    }
}
/* stage s (plain) after concurrent stage s-1: the branches' outputs concatenated along the
   units into E, the labels after them; 0 when a wait gave up */
static int ipup__conc_gather(ipup_emu *e, int32_t r, int32_t s, float *E, int64_t t, int threaded,
                             int32_t self) {
    int32_t b, q, c0 = e->core.first_lane[s - 1];
    for (b = 0; b < e->core.n_branches[s - 1]; b++) {
        const ipup__lane *c = &e->core.lanes[c0 + b];
        ipup__lane_rt *rt = &e->lane_rt[r][c0 + b];
        const float *m = (const float *)ipup__wait_peek(e, &rt->out, threaded, t, self);
        if (!m) return 0;
        for (q = 0; q < e->core.B * c->spatial; q++)
            IPUPIPE_MEMCPY(E + (size_t)q * (size_t)c->units + (size_t)c->first_unit,
                           m + (size_t)q * (size_t)c->slice_units,
                           (size_t)c->slice_units * sizeof(float));
        if (b == 0)
            IPUPIPE_MEMCPY(E + e->core.stages[s].label_off, m + c->out_floats,
                           (size_t)e->core.B * sizeof(int32_t));
        ipup__release(e, &rt->out, threaded, r * e->core.P + c->device);
    }
    return 1;
}
/* stage s (plain) before concurrent stage s+1: its dy, the branches' dx summed in branch
   order 0, 1, ...; NULL when a wait gave up */
static const float *ipup__conc_sum_dx(ipup_emu *e, int32_t r, int32_t s, int64_t t, int threaded,
                                      int32_t self) {
    int32_t b, c0 = e->core.first_lane[s + 1];
    size_t n = (size_t)e->core.B * (size_t)e->core.stages[s].out_n;
    float *dy = e->fanout[r][s].dy_sum;
    for (b = 0; b < e->core.n_branches[s + 1]; b++) {
        ipup__lane_rt *rt = &e->lane_rt[r][c0 + b];
        const float *m = (const float *)ipup__wait_peek(e, &rt->dx, threaded, t, self);
        if (!m) return NULL;
        if (b == 0) IPUPIPE_MEMCPY(dy, m, n * sizeof(float));
        else ipup_add_f32((int)n, dy, m);
        ipup__release(e, &rt->dx, threaded, r * e->core.P + e->core.lanes[c0 + b].device);
    }
    return dy;
}
/* stage s (plain) after concurrent stage s-1: one slot reserved in every branch's dy ring;
   the buffer stage s writes its dx into (NULL when a wait gave up) */
static float *ipup__conc_reserve_dy(ipup_emu *e, int32_t r, int32_t s, int64_t t, int threaded,
                                    int32_t self) {
    int32_t b;
    for (b = 0; b < e->core.n_branches[s - 1]; b++) {
        ipup__lane_rt *rt = &e->lane_rt[r][e->core.first_lane[s - 1] + b];
        if (!(rt->reserved_dy = (float *)ipup__wait_reserve(e, &rt->dy, threaded, t, self)))
            return NULL;
    }
    return e->fanout[r][s].dx;
}
/* ... then dx (B, in_n) cut along the units into every branch's slice */
static void ipup__conc_scatter_dx(ipup_emu *e, int32_t r, int32_t s, const float *dx,
                                  int threaded) {
    int32_t b, q, c0 = e->core.first_lane[s - 1];
    for (b = 0; b < e->core.n_branches[s - 1]; b++) {
        const ipup__lane *c = &e->core.lanes[c0 + b];
        ipup__lane_rt *rt = &e->lane_rt[r][c0 + b];
        for (q = 0; q < e->core.B * c->spatial; q++)
            IPUPIPE_MEMCPY(rt->reserved_dy + (size_t)q * (size_t)c->slice_units,
                           dx + (size_t)q * (size_t)c->units + (size_t)c->first_unit,
                           (size_t)c->slice_units * sizeof(float));
        ipup__commit(e, &rt->dy, threaded, r * e->core.P + c->device);
    }
}

/* the gradient sum over replicas (order 0..R-1), the NaN check and the update of the lanes
   on device d, as ipup__allreduce, ipup__check_grads_of and ipup__update_stage do for a
   stage; the same kernels element by element */
static IPUP__UNUSED void ipup__conc_allreduce(ipup_emu *e, int32_t d, int32_t part, int32_t parts) {
    int32_t k, q;
    for (k = 0; k < e->core.n_lanes && e->core.R > 1; k++) {
        size_t n = e->core.lanes[k].n_params, lo = n * (size_t)part / (size_t)parts,
               hi = n * (size_t)(part + 1) / (size_t)parts, i;
        if (e->core.lanes[k].device != d) continue;
        for (i = lo; i < hi; i++) {
            float acc = e->lane_rt[0][k].grads[i];
            for (q = 1; q < e->core.R; q++) acc += e->lane_rt[q][k].grads[i];
            for (q = 0; q < e->core.R; q++) e->lane_rt[q][k].grads[i] = acc;
        }
    }
}
static void ipup__conc_check(ipup_emu *e, int32_t gr, int32_t r, int32_t d, int64_t t, int32_t part,
                             int32_t parts) {
    int32_t k;
    for (k = 0; k < e->core.n_lanes; k++) {
        size_t n = e->core.lanes[k].n_params, lo = n * (size_t)part / (size_t)parts,
               hi = n * (size_t)(part + 1) / (size_t)parts;
        if (e->core.lanes[k].device != d || lo >= hi) continue;
        if (!ipup__finite(e->lane_rt[gr][k].grads + lo, hi - lo)) {
            /* padding is zero: a non-finite value is in w or b */
            int32_t l = e->core.stages[e->core.lanes[k].stage].first;
            ipup__set_err(e, r * e->core.P + d, t, e->core.lanes[k].stage, -1,
                          2 * l + (lo >= e->core.lanes[k].bias_off ? 1 : 0));
            return;
        }
    }
}
static void ipup__conc_update(ipup_emu *e, int32_t r, int32_t d, int64_t t) {
    const ipup_optimizer *o = &e->core.cfg.opt;
    float scale = 1.0f / (float)(e->core.M * e->core.R);
    int32_t k, j;
    for (k = 0; k < e->core.n_lanes; k++) {
        const ipup__lane *c = &e->core.lanes[k];
        ipup__lane_rt *rt = &e->lane_rt[r][k];
        if (c->device != d) continue;
        for (j = 0; j < 2; j++) {
            size_t off = j ? c->bias_off : 0;
            int cnt = j ? c->slice_units : c->n_w;
            float *w = rt->params + off, *g = rt->grads + off, *s1 = NULL, *s2 = NULL;
            if (o->kind != IPUP_OPT_SGD) {
                s1 = rt->state + off;
                s2 = rt->state + c->n_params + off;
                if (e->core.cfg.offload & IPUP_OFFLOAD_OPTIMIZER) {
                    IPUPIPE_MEMCPY(rt->staging, s1, (size_t)cnt * sizeof(float));
                    if (o->kind == IPUP_OPT_ADAM)
                        IPUPIPE_MEMCPY(rt->staging + c->bias_off, s2, (size_t)cnt * sizeof(float));
                    s1 = rt->staging;
                    s2 = rt->staging + c->bias_off;
                }
            }
            switch (o->kind) {
            case IPUP_OPT_MOMENTUM:
                ipup_momentum_f32(cnt, o->lr, o->momentum, scale, w, s1, g);
                break;
            case IPUP_OPT_ADAM:
                ipup__adam_update(o, t, cnt, scale, w, s1, s2, g);
                break;
            default: ipup_sgd_f32(cnt, o->lr, scale, w, g); break;
            }
            if (o->kind != IPUP_OPT_SGD && (e->core.cfg.offload & IPUP_OFFLOAD_OPTIMIZER)) {
                IPUPIPE_MEMCPY(rt->state + off, rt->staging, (size_t)cnt * sizeof(float));
                if (o->kind == IPUP_OPT_ADAM)
                    IPUPIPE_MEMCPY(rt->state + c->n_params + off, rt->staging + c->bias_off,
                                   (size_t)cnt * sizeof(float));
            }
        }
        IPUPIPE_MEMSET(rt->grads, 0, c->n_params * sizeof(float));
    }
}

/* ipup_evaluate through concurrent stage s: every branch, concatenated into out */
static void ipup__conc_eval(ipup_emu *e, int32_t s, int32_t Bn, const float *in, float *out) {
    int32_t b, q;
    for (b = 0; b < e->core.n_branches[s]; b++) {
        int32_t k = e->core.first_lane[s] + b;
        const ipup__lane *c = &e->core.lanes[k];
        const float *y = ipup__lane_fwd(e, 0, k, Bn, in, NULL, NULL, 0, 0, 0);
        for (q = 0; q < Bn * c->spatial; q++)
            IPUPIPE_MEMCPY(out + (size_t)q * (size_t)c->units + (size_t)c->first_unit,
                           y + (size_t)q * (size_t)c->slice_units,
                           (size_t)c->slice_units * sizeof(float));
    }
}

/* >>transport: ipup_set_transport (its runner, ipup__run_xport, is under runtime) */
IPUPIPE_DEF int ipup_set_transport(ipup_emu *e, const ipup_transport *tp) {
    int rc = ipup__need_init(e, "ipup_set_transport");
    if (rc) return rc;
    if (tp && e->core.cfg.runner != IPUP_RUNNER_COOP)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_set_transport: the emulator runs the threaded runner; initialise "
                          "it with runner = IPUP_RUNNER_COOP");
    if (tp && e->core.has_concurrent)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_UNSUPPORTED,
                          "ipup_set_transport: the model has concurrent stages "
                          "(cfg.concurrent), whose branch rings the transport "
                          "does not carry; use the cooperative or threaded runner");
    if (tp && e->core.cfg.outfeed_mode != IPUP_OUTFEED_LOSS)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_UNSUPPORTED,
                          "ipup_set_transport: cfg.outfeed_mode carries the outputs, which only "
                          "the last stage's process has; use IPUP_OUTFEED_LOSS (the transport "
                          "brings every process the loss records)");
    if (tp && (tp->ipu < 0 || tp->ipu >= e->core.n_ipus))
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_set_transport: ipu %d is outside 0..%d (replicas x devices - 1)",
                          (int)tp->ipu, (int)(e->core.n_ipus - 1));
    if (tp && (!tp->peek || !tp->reserve || !tp->commit || !tp->release || !tp->step_begin ||
               !tp->reduce || !tp->step_end))
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_set_transport: every hook of the transport must be set");
    e->transport = tp;
    return IPUP_OK;
}

/* >>runtime: ipup__exec, all-reduce and update, the runners, ipup_run, evaluation */
/* The infeed of micro-batch m of replica r failed (the callback returned non-zero: bad =
   -1, or sample i gave label lab outside the classes). Cooperative runner: the message,
   IPUP_ERR_IO. Threaded runner (the replica's stage-0 thread calls the infeed): the
   failure goes into the IPU's error slot of step t (code IPUP_ERR_IO, stage = the sample
   or -1, layer = the label), the first failing thread stops the job from step t on, and
   the host writes the message once the threads are done (ipup__feed_msg). */
static int ipup__feed_fail(ipup_emu *e, int32_t r, int64_t t, int32_t m, int threaded, int32_t ipu,
                           int32_t bad, int32_t lab) {
    int64_t sample0 = (((int64_t)t * e->core.R + r) * e->core.M + m) * e->core.B;
#ifdef IPUP__WAITS
    if (threaded) {
        ipup__ipu_err *er = &e->ipu_errors[t & 1][ipu];
        er->code = IPUP_ERR_IO; er->step = t; er->stage = bad; er->mb = m; er->layer = lab;
        if (e->devices) { /* one writer of job_stop: the first core that fails */
            if (IPUP__FETCH_ADD(&e->stop_claim, 1u) == 0u) {
                e->job_stop = t;
                IPUPIPE_HAPPENS_BEFORE(&e->abort_);
                IPUP__STORE_REL(&e->abort_, 1u);
            }
        }
#ifndef IPUPIPE_NO_THREADS
        else {
            ipup__park *h = &e->park[e->core.n_ipus];
            pthread_mutex_lock(&h->mutex); /* one writer of job_stop: the first thread that fails */
            if (!IPUP__LOAD_ACQ(&e->abort_)) {
                e->job_stop = t;
                IPUPIPE_HAPPENS_BEFORE(&e->abort_);
                IPUP__STORE_REL(&e->abort_, 1u);
            }
            pthread_mutex_unlock(&h->mutex);
        }
#endif
        ipup__notify_all(e);
        return IPUP__ABORTED;
    }
#else
    (void)threaded; (void)ipu;
#endif
    if (bad < 0)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_IO,
                          "step %lld: the infeed callback failed for "
                          "replica %d, micro-batch %d (samples %lld..%lld)",
                          (long long)t, (int)r, (int)m, (long long)sample0,
                          (long long)(sample0 + e->core.B - 1));
    return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_IO,
                      "step %lld: the infeed gave label %d for sample "
                      "%lld, outside 0..%d (the model has %d classes)",
                      (long long)t, (int)lab, (long long)(sample0 + bad),
                      (int)(e->core.classes - 1), (int)e->core.classes);
}

/* Micro-batch m of replica r, step t, straight from the infeed callback into x (B, in_n)
   and lab (B): the stash entry of stage 0 (no ring, no copy). Called by whoever runs
   F(0, m): the host (cooperative runner) or replica r's stage-0 thread (threaded runner). */
static int ipup__feed(ipup_emu *e, int32_t r, int64_t t, int32_t m, float *x, int32_t *lab,
                      int threaded, int32_t ipu) {
    int64_t sample0 = (((int64_t)t * e->core.R + r) * e->core.M + m) * e->core.B;
    int32_t i;
    ipup_feed f;
    IPUPIPE_MEMSET(&f, 0, sizeof f);
    f.step = t; f.replica = r; f.mb = m; f.sample0 = sample0; f.n = e->core.B;
    f.row = e->core.in_n; f.classes = e->core.classes; f.x = x; f.labels = lab;
    if (ipup__target_w(&e->core)) { /* mse: float targets in the label region */
        f.classes = 0; f.labels = NULL;
        f.target_width = ipup__target_w(&e->core); f.targets = (float *)(void *)lab;
    }
    if (e->core.cfg.infeed(e->core.cfg.infeed_user, &f) != 0)
        return ipup__feed_fail(e, r, t, m, threaded, ipu, -1, 0);
    for (i = 0; i < e->core.B && !f.targets; i++)
        if (lab[i] < 0 || lab[i] >= e->core.classes)
            return ipup__feed_fail(e, r, t, m, threaded, ipu, i, lab[i]);
    return IPUP_OK;
}

/* The last stage's outfeed record of micro-batch m, in the slot F(S-1,m) reserved before
   its forward (its outputs, when they travel, copied there already): filled and committed;
   a non-finite loss sets the IPU's error slot */
static void ipup__outfeed_put(ipup_emu *e, ipup_outfeed_rec *rec, int32_t r, int64_t t,
                              int32_t m, float loss, int correct, int threaded, int32_t ipu) {
    rec->step = t; rec->replica = r; rec->mb = m; rec->loss = loss; rec->correct = correct;
    rec->outputs = NULL; rec->n = e->core.B; rec->width = e->core.classes;
    ipup_ring_commit(&e->outfeed[r]);
#ifdef IPUP__WAITS
    /* the host drains the whole ring once woken: wake it once the ring is at least half
       full (the end of the job wakes it for the rest); a streamed outfeed wakes it for each
       record, as the host takes them in (step, replica, mb) order only */
    if (threaded && (ipup__out_stream(&e->core.cfg) ||
                     2u * ipup_ring_count(&e->outfeed[r]) >= e->outfeed[r].cap))
        ipup__notify(e, e->core.n_ipus);
#else
    (void)threaded;
#endif
    if (!(loss - loss == 0.0f)) ipup__set_err(e, ipu, t, e->core.S - 1, m, -1);
}

/* The forward's output slot of stage s < S-1: in the ring to stage s+1, or in every branch
   of concurrent stage s+1; NULL: none free */
static float *ipup__reserve_out(ipup_emu *e, int32_t r, int32_t s, int64_t t, int threaded,
                                int32_t ipu) {
    if (e->core.n_branches[s + 1] > 1) return ipup__conc_reserve_in(e, r, s + 1, t, threaded, ipu);
    return (float *)ipup__wait_reserve(e, &e->fwd[r][s + 1], threaded, t, ipu);
}

/* What ipup__exec's op functions return when a ring, a FIFO or the outfeed has no data or
   no room for the op (a stall: ipup__exec reports it) */
#define IPUP__STALL 2

/* F(stage, mb) of a replica at global step `step`: IPUP_OK, IPUP__STALL, or the infeed's
   code (an error, or IPUP__ABORTED) */
static int ipup__exec_f(ipup_emu *e, int32_t replica, const ipup_op *op, int64_t step,
                        int threaded) {
    int32_t stage = op->stage, mb = op->mb, B = e->core.B, ipu = replica * e->core.P + op->device;
    const ipup__stage *facts = &e->core.stages[stage];
    ipup__stage_rt *runtime = &e->stage_rt[replica][stage];
    int64_t sample0 = ((int64_t)replica * e->core.M + mb) * B;
    size_t xin = (size_t)B * (size_t)facts->in_n;
    float *msg = NULL, *entry, *slot, *out = NULL;
    const float *in, *res;
    float loss = 0.0f;
    int correct = 0, rc;
    const int direct = ipup__direct_in(&e->core, stage), f16 = ipup__f16(e);
    ipup_outfeed_rec *orec = NULL;
    if (runtime->stash_count >= (uint32_t)facts->depth) return IPUP__STALL;
    if (stage == e->core.S - 1) { /* the outfeed slot, before anything is held */
        orec = (ipup_outfeed_rec *)ipup__wait_reserve(e, &e->outfeed[replica], threaded, step, ipu);
        if (!orec) return IPUP__STALL;
    }
    slot = runtime->stash +
           (size_t)((runtime->stash_head + runtime->stash_count) % (uint32_t)facts->depth) *
               ipup__entry_floats(e, stage);
    entry = ipup__rec(&e->core, stage) || ipup__act_off(&e->core, stage) || f16 ? runtime->work
                                                                                : slot;
    in = entry;
    if (stage < e->core.S - 1 && direct) {
        /* before the input is held: nothing is held while this waits */
        out = ipup__reserve_out(e, replica, stage, step, threaded, ipu);
        if (!out) return IPUP__STALL;
    }
    if (stage == 0) { /* the infeed writes the stash entry in place */
        rc = ipup__feed(e, replica, step, mb, entry, (int32_t *)(void *)(entry + facts->label_off),
                        threaded, ipu);
        if (rc) return rc;
        if (f16) { /* the micro-batch as the IPU stores it */
            ipup__h_round(entry, xin);
            if (ipup__target_w(&e->core))
                ipup__h_round(entry + facts->label_off,
                              (size_t)B * (size_t)ipup__target_w(&e->core));
        }
    } else if (e->core.n_branches[stage - 1] > 1) {
        /* the branches of concurrent stage s-1, concatenated */
        if (!ipup__conc_gather(e, replica, stage, entry, step, threaded, ipu)) return IPUP__STALL;
    } else {
        msg = (float *)ipup__wait_peek(e, &e->fwd[replica][stage], threaded, step, ipu);
        if (!msg) return IPUP__STALL;
        if (f16) {
            ipup__msg_unpack(e, B, facts->in_n, (const uint16_t *)(const void *)msg,
                             direct ? runtime->xb : entry, entry + facts->label_off);
            if (direct) in = runtime->xb;
        } else {
            if (direct) in = msg; /* released after the forward */
            else IPUPIPE_MEMCPY(entry, msg, xin * sizeof(float));
            IPUPIPE_MEMCPY(entry + facts->label_off, msg + xin, ipup__lab_bytes(&e->core));
        }
        if (!direct)
            ipup__release(e, &e->fwd[replica][stage], threaded,
                          ipup__ipu_of(e, replica, stage - 1));
    }
    if (stage < e->core.S - 1 && !out) {
        out = ipup__reserve_out(e, replica, stage, step, threaded, ipu);
        if (!out) return IPUP__STALL;
    }
    res = ipup__stage_fwd(e, replica, stage, B, in,
                          (const int32_t *)(const void *)(entry + facts->label_off), entry,
                          out && f16 ? NULL : out, 1, step, sample0, &loss, &correct);
    if (orec && e->core.cfg.outfeed_mode != IPUP_OUTFEED_LOSS) /* before its input may go */
        IPUPIPE_MEMCPY((uint8_t *)orec + IPUP__REC_BYTES, e->loss_in[replica],
                       (size_t)B * (size_t)e->core.classes * sizeof(float));
    if (direct)
        ipup__release(e, &e->fwd[replica][stage], threaded, ipup__ipu_of(e, replica, stage - 1));
    if (out && f16)
        ipup__msg_pack(e, B, facts->out_n, res, entry + facts->label_off,
                       (uint16_t *)(void *)out);
    else if (out)
        IPUPIPE_MEMCPY(out + (size_t)B * (size_t)facts->out_n, entry + facts->label_off,
                       ipup__lab_bytes(&e->core));
    if (out) {
        if (e->core.n_branches[stage + 1] > 1)
            ipup__conc_commit_in(e, replica, stage + 1, out, threaded);
        else
            ipup__commit(e, &e->fwd[replica][stage + 1], threaded,
                         ipup__ipu_of(e, replica, stage + 1));
    }
    if (f16)
        ipup__entry_pack(e, stage, ipup__rec(&e->core, stage), entry, (uint16_t *)(void *)slot);
    else if (ipup__rec(&e->core, stage)) {
        IPUPIPE_MEMCPY(slot, entry, xin * sizeof(float));
        IPUPIPE_MEMCPY(slot + xin, entry + facts->label_off, ipup__lab_bytes(&e->core));
    } else if (ipup__act_off(&e->core, stage)) { /* stream out */
        IPUPIPE_MEMCPY(slot, entry, facts->entry_floats * sizeof(float));
    }
    runtime->stash_count++;
    if (runtime->stash_count > runtime->stash_peak) runtime->stash_peak = runtime->stash_count;
    if (orec) ipup__outfeed_put(e, orec, replica, step, mb, loss, correct, threaded, ipu);
    return IPUP_OK;
}

/* ipup__stage_bwd under cfg.dtype float16: dy (a binary16 ring message) unpacked into the
   stage's scratch, dx and the W-stash entry written in fp32 scratch, then packed */
static void ipup__bwd_half(ipup_emu *e, int32_t r, int32_t s, const float *E, const float *dy,
                           float *dx, float *wentry, int64_t t, int64_t sample0) {
    ipup__stage_rt *rt = &e->stage_rt[r][s];
    const ipup__stage *st = &e->core.stages[s];
    const size_t B = (size_t)e->core.B;
    if (dy && !(s < e->core.S - 1 && e->core.n_branches[s + 1] > 1)) {
        /* into a ping-pong buffer: the first layer's backward writes the other one, and dy
           is read by then (a recomputing stage's forward has used them already) */
        ipup_f16_to_f32((int)(B * (size_t)st->out_n), (const uint16_t *)(const void *)dy,
                        rt->pingpong[0]);
        dy = rt->pingpong[0];
    }
    ipup__stage_bwd(e, r, s, E, dy, dx ? rt->xb : NULL, wentry ? rt->wwork : NULL, t, sample0);
    if (dx) ipup_f32_to_f16((int)(B * (size_t)st->in_n), rt->xb, (uint16_t *)(void *)dx);
    if (wentry) ipup_f32_to_f16((int)st->wentry_n, rt->wwork, (uint16_t *)(void *)wentry);
}

/* B(stage, mb) or I(stage, mb) of a replica at global step `step`: IPUP_OK or IPUP__STALL */
static int ipup__exec_bi(ipup_emu *e, int32_t replica, const ipup_op *op, int64_t step,
                         int threaded) {
    int32_t stage = op->stage, mb = op->mb, B = e->core.B, ipu = replica * e->core.P + op->device;
    const ipup__stage *facts = &e->core.stages[stage];
    ipup__stage_rt *runtime = &e->stage_rt[replica][stage];
    int64_t sample0 = ((int64_t)replica * e->core.M + mb) * B;
    float *entry, *dx = NULL, *wentry = NULL;
    const float *dy = NULL;
    if (runtime->stash_count <= runtime->wstash_count) return IPUP__STALL;
    if (stage < e->core.S - 1) {
        /* from stage s+1, or the dx of concurrent stage s+1's branches summed */
        dy = e->core.n_branches[stage + 1] > 1
                 ? ipup__conc_sum_dx(e, replica, stage, step, threaded, ipu)
                 : (const float *)ipup__wait_peek(e, &e->bwd[replica][stage], threaded, step, ipu);
        if (!dy) return IPUP__STALL;
    }
    if (stage > 0) { /* to stage s-1, or sliced to every branch of concurrent stage s-1 */
        dx = e->core.n_branches[stage - 1] > 1
                 ? ipup__conc_reserve_dy(e, replica, stage, step, threaded, ipu)
                 : (float *)ipup__wait_reserve(e, &e->bwd[replica][stage - 1], threaded, step, ipu);
        if (!dx) return IPUP__STALL;
    }
    if (op->kind == IPUP_OP_I) {
        if (runtime->wstash_count >= (uint32_t)facts->wstash_depth) return IPUP__STALL;
        wentry = runtime->wstash + (size_t)((runtime->wstash_head + runtime->wstash_count) %
                                            (uint32_t)facts->wstash_depth) *
                                       ipup__wslot_floats(&e->core, stage);
    }
    entry = ipup__front(e, replica, stage, step, mb, runtime->wstash_count);
    if (ipup__f16(e))
        ipup__bwd_half(e, replica, stage, entry, dy, dx, wentry, step, sample0);
    else ipup__stage_bwd(e, replica, stage, entry, dy, dx, wentry, step, sample0);
    if (op->kind == IPUP_OP_B && e->core.cfg.accum_dtype == IPUP_DTYPE_F16)
        ipup__h_round(runtime->grads, facts->n_grads); /* the fp16 accumulator */
    if (dy && !(stage < e->core.S - 1 && e->core.n_branches[stage + 1] > 1))
        ipup__release(e, &e->bwd[replica][stage], threaded, ipup__ipu_of(e, replica, stage + 1));
    if (dx && e->core.n_branches[stage - 1] > 1)
        ipup__conc_scatter_dx(e, replica, stage, dx, threaded);
    else if (dx)
        ipup__commit(e, &e->bwd[replica][stage - 1], threaded, ipup__ipu_of(e, replica, stage - 1));
    if (op->kind == IPUP_OP_B) {
        runtime->stash_head = (runtime->stash_head + 1u) % (uint32_t)facts->depth;
        runtime->stash_count--;
    } else {
        runtime->wstash_count++;
        if (runtime->wstash_count > runtime->wstash_peak)
            runtime->wstash_peak = runtime->wstash_count;
    }
    return IPUP_OK;
}

/* W(stage, mb) of a replica at global step `step`: IPUP_OK or IPUP__STALL */
static int ipup__exec_w(ipup_emu *e, int32_t replica, const ipup_op *op, int64_t step) {
    int32_t stage = op->stage;
    const ipup__stage *facts = &e->core.stages[stage];
    ipup__stage_rt *runtime = &e->stage_rt[replica][stage];
    float *entry, *wentry;
    if (runtime->stash_count == 0 || runtime->wstash_count == 0) return IPUP__STALL;
    entry = ipup__front(e, replica, stage, step, op->mb, 0);
    wentry = runtime->wstash + (size_t)runtime->wstash_head * ipup__wslot_floats(&e->core, stage);
    if (ipup__f16(e)) {
        ipup_f16_to_f32((int)facts->wentry_n, (const uint16_t *)(const void *)wentry,
                        runtime->wwork);
        wentry = runtime->wwork;
    }
    ipup__stage_w(e, replica, stage, entry, wentry, (int64_t)replica * e->core.M + op->mb);
    if (e->core.cfg.accum_dtype == IPUP_DTYPE_F16)
        ipup__h_round(runtime->grads, facts->n_grads); /* the fp16 accumulator */
    runtime->wstash_head = (runtime->wstash_head + 1u) % (uint32_t)facts->wstash_depth;
    runtime->wstash_count--;
    runtime->stash_head = (runtime->stash_head + 1u) % (uint32_t)facts->depth;
    runtime->stash_count--;
    return IPUP_OK;
}

/* Run one op of a replica at global step `step`. Returns IPUP_OK, IPUP__ABORTED, or an
   error. */
static int ipup__exec(ipup_emu *e, int32_t replica, const ipup_op *op, int64_t step, int threaded) {
    int32_t ipu = replica * e->core.P + op->device;
    int rc;
    if (e->core.cfg.op_hook) e->core.cfg.op_hook(e->core.cfg.op_hook_user, ipu, op);
    if (e->core.n_branches[op->stage] > 1) /* a branch of a concurrent stage */
        rc = ipup__conc_exec(e, replica, op, step, threaded) ? IPUP__STALL : IPUP_OK;
    else if (op->kind == IPUP_OP_F) rc = ipup__exec_f(e, replica, op, step, threaded);
    else if (op->kind == IPUP_OP_B || op->kind == IPUP_OP_I)
        rc = ipup__exec_bi(e, replica, op, step, threaded);
    else if (op->kind == IPUP_OP_W) rc = ipup__exec_w(e, replica, op, step);
    else rc = IPUP__STALL;
    if (rc != IPUP__STALL) return rc;
#ifdef IPUP__WAITS
    if (threaded) {
        if (!ipup__aborted(e, step)) ipup__fault(e, ipu, step, op);
        return IPUP__ABORTED;
    }
#endif
    if (e->transport) return IPUP_ERR_IO; /* the transport's message is in e->core.msg */
    return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_INVALID_TABLE,
                      "internal: op %c(%d,%d) of replica %d at table step %d found no data or no "
                      "room (a bug of the emulator or the table)",
                      (op->kind >= 1 && op->kind <= 4) ? "?FBIW"[op->kind] : '?', (int)op->stage,
                      (int)op->mb, (int)replica, (int)op->step);
}

/* all-reduce (sum, replica order 0..R-1) of part `part` of `parts` of device d's gradients */
static void ipup__allreduce(ipup_emu *e, int32_t d, int32_t part, int32_t parts) {
#if IPUP_MAX_REPLICAS > 1
    int32_t s, q;
    if (e->core.R < 2) return;
    if (e->core.has_concurrent) ipup__conc_allreduce(e, d, part, parts); /* lanes on d */
    for (s = 0; s < e->core.S; s++) {
        size_t n = e->core.stages[s].n_grads, lo, hi, i;
        if (e->core.stages[s].device != d || e->core.n_branches[s] > 1) continue;
        lo = n * (size_t)part / (size_t)parts;
        hi = n * (size_t)(part + 1) / (size_t)parts;
        if (e->core.R == 2) { /* the common case, vectorised: the same single add per element */
            ipup__add2_f32((int)(hi - lo), e->stage_rt[0][s].grads + lo,
                           e->stage_rt[1][s].grads + lo);
            continue;
        }
        for (i = lo; i < hi; i++) {
            float acc = e->stage_rt[0][s].grads[i];
            for (q = 1; q < e->core.R; q++) acc += e->stage_rt[q][s].grads[i];
            for (q = 0; q < e->core.R; q++) e->stage_rt[q][s].grads[i] = acc;
        }
    }
#else
    (void)e; (void)d; (void)part; (void)parts;
#endif
}

/* gradient check of the stages of (r, d), part `part` of `parts` of each stage's gradient
   block (with replicas the all-reduced sums are equal everywhere, so each replica checks
   the part it reduced); sets the error slot of the IPU */
static void ipup__check_grads_of(ipup_emu *e, int32_t gr, int32_t r, int32_t d, int64_t t,
                                 int32_t part, int32_t parts) {
    int32_t s, l, j;
    if (e->core.has_concurrent) ipup__conc_check(e, gr, r, d, t, part, parts); /* lanes on d */
    for (s = 0; s < e->core.S; s++) {
        size_t n = e->core.stages[s].n_grads, lo, hi;
        if (e->core.stages[s].device != d || e->core.n_branches[s] > 1) continue;
        lo = n * (size_t)part / (size_t)parts;
        hi = n * (size_t)(part + 1) / (size_t)parts;
        for (l = e->core.stages[s].first; l < e->core.stages[s].last; l++) {
            const ipup_layer_info *I = &e->core.layers[l].info;
            if (!I->n_w || I->frozen) continue;
            for (j = 0; j < 2; j++) {
                size_t a = (size_t)e->core.layers[l].param_off + (j ? ipup__round16(I->n_w) : 0);
                size_t b = a + (size_t)(j ? I->n_b : I->n_w);
                if (a < lo) a = lo;
                if (b > hi) b = hi;
                if (a < b && !ipup__finite(e->stage_rt[gr][s].grads + a, b - a)) {
                    ipup__set_err(e, r * e->core.P + d, t, s, -1, 2 * l + j);
                    if (e->core.cfg.loss_scale_dynamic) /* skipped, not an error */
                        e->ipu_errors[t & 1][r * e->core.P + d].overflow = 1;
                    return;
                }
            }
        }
    }
}

static void ipup__check_grads(ipup_emu *e, int32_t r, int32_t d, int64_t t, int32_t part,
                              int32_t parts) {
    ipup__check_grads_of(e, r, r, d, t, part, parts);
}

/* One tensor's update (n floats at w, g; state s1, s2) with what is offloaded streamed
   through the IPU's staging in chunks of `chunk` floats (ipup__opt_chunk): the state into
   staging[0..chunk) and [chunk..2 chunk), the weights (offloaded, or unpacked from
   binary16) into wstage; each chunk streamed back (or stored as binary16) after. The optimizers are element-wise: the bits of one call on the whole
   tensor. */
static void ipup__update_tensor(const ipup_emu *e, int n, ipup__wref w, float *g, float *s1,
                                float *s2, float *staging, float *wstage, size_t chunk,
                                float scale, int64_t t) {
    const ipup_optimizer *o = &e->core.cfg.opt;
    int c0, c = n, k = ipup__state_slots(&e->core.cfg);
    if ((staging && k) || wstage) c = staging && k && (size_t)n > chunk ? (int)chunk : n;
    if (w.h && (size_t)c > w.chunk) c = (int)w.chunk; /* what the staging holds */
    for (c0 = 0; c0 < n; c0 += c) {
        int cnt = n - c0 < c ? n - c0 : c;
        float *ww = w.f ? w.f + c0 : NULL, *a1 = s1 ? s1 + c0 : NULL, *a2 = s2 ? s2 + c0 : NULL;
        size_t bytes = (size_t)cnt * sizeof(float);
        if (staging && k) { /* stream in */
            IPUPIPE_MEMCPY(staging, a1, bytes);
            if (k == 2) IPUPIPE_MEMCPY(staging + chunk, a2, bytes);
            a1 = staging;
            a2 = staging + chunk;
        }
        if (w.h) ipup_f16_to_f32(cnt, w.h + c0, wstage); /* binary16 weights */
        else if (wstage) IPUPIPE_MEMCPY(wstage, ww, bytes);
        if (wstage) ww = wstage;
        switch (o->kind) {
        case IPUP_OPT_MOMENTUM:
            ipup_momentum_f32(cnt, o->lr, o->momentum, scale, ww, a1, g + c0);
            break;
        case IPUP_OPT_ADAM:
            ipup__adam_update(o, t, cnt, scale, ww, a1, a2, g + c0);
            if (o->first_moment_dtype == IPUP_DTYPE_F16) ipup__h_round(a1, (size_t)cnt);
            break;
        default: ipup_sgd_f32(cnt, o->lr, scale, ww, g + c0); break;
        }
        if (staging && k) { /* stream out */
            IPUPIPE_MEMCPY(s1 + c0, a1, bytes);
            if (k == 2) IPUPIPE_MEMCPY(s2 + c0, a2, bytes);
        }
        if (w.h) ipup__w16_store(e, ww, cnt, w.h + c0, t, w.layer, w.which, (uint64_t)c0);
        else if (wstage) IPUPIPE_MEMCPY(w.f + c0, ww, bytes);
    }
}

/* optimizer step of stage s of replica r (global step t: Adam uses t + 1) */
static void ipup__update_stage(ipup_emu *e, int32_t r, int32_t s, int64_t t) {
    const ipup__stage *st = &e->core.stages[s];
    ipup__stage_rt *rt = &e->stage_rt[r][s];
    float scale = 1.0f / (float)(e->core.M * e->core.R);
    const float ls = ipup__ls(e, r * e->core.P + st->device);
    size_t chunk = rt->staging ? ipup__opt_chunk(&e->core, st->device) : 0;
    int32_t l, j, k = ipup__state_slots(&e->core.cfg);
    /* a concurrent stage: its lanes update on their IPUs (ipup__conc_update) */
    if (e->core.n_branches[s] > 1) return;
    if (ls != 1.0f) scale = 1.0f / ((float)(e->core.M * e->core.R) * ls); /* unscale */
    for (l = st->first; l < st->last; l++) {
        const ipup_layer_info *I = &e->core.layers[l].info;
        if (!I->n_w || I->frozen) continue;
        for (j = 0; j < 2; j++) {
            size_t off = (size_t)e->core.layers[l].param_off + (j ? ipup__round16(I->n_w) : 0);
            ipup__wref w;
            w.f = rt->params ? rt->params + off : NULL;
            w.h = rt->hparams ? rt->hparams + off : NULL;
            w.chunk = rt->wstage_floats & ~(size_t)15u;
            w.layer = l;
            w.which = j;
            ipup__update_tensor(e, j ? I->n_b : I->n_w, w, rt->grads + off,
                                k ? rt->state + off : NULL,
                                k == 2 ? rt->state + st->n_grads + off : NULL, rt->staging,
                                rt->wstage, chunk, scale, t);
        }
    }
    ipup__bn_running(e, rt, s, t);
    IPUPIPE_MEMSET(rt->grads, 0, st->n_grads * sizeof(float));
}

/* the callback's copy of record rec (its outputs at `rows`) in cfg.outfeed_mode's shape */
static void ipup__deliver(ipup_emu *e, const ipup_outfeed_rec *rec, const float *rows) {
    ipup_outfeed_rec d = *rec;
    if (e->core.cfg.outfeed_mode != IPUP_OUTFEED_LOSS) d.outputs = rows;
    if (e->core.cfg.outfeed_mode == IPUP_OUTFEED_OUTPUTS) { d.loss = 0.0f; d.correct = 0; }
    e->core.cfg.outfeed(e->core.cfg.outfeed_user, &d);
}
/* host, streamed outfeed (ipup__out_stream): the records of the run in (step, replica, mb)
   order, each as soon as it is in its replica's ring (a replica's records come in (step, mb)
   order: the last stage's forwards run in micro-batch order, its stash being a FIFO), into
   e->records and the callback, the outputs straight from the ring slot, which is released
   after the call. A record waits in its ring until the ones before it are in: each ring
   holds a step's records and a replica is at most one step ahead of another (the barrier of
   each step), so the host never waits for a record that waits for it. */
static int ipup__drain_stream(ipup_emu *e, int64_t step0, int32_t nsteps, int threaded) {
    int32_t R = e->core.R, M = e->core.M, got = 0;
    int64_t end = (int64_t)nsteps * R * M;
    (void)step0;
    while (e->out_next < end) {
        int32_t r = (int32_t)((e->out_next / M) % R);
        const ipup_outfeed_rec *rec = (const ipup_outfeed_rec *)ipup_ring_peek(&e->outfeed[r]);
        if (!rec) break;
        e->records[e->out_next] = *rec;
        if (e->core.cfg.outfeed)
            ipup__deliver(e, rec,
                          (const float *)(const void *)((const uint8_t *)rec + IPUP__REC_BYTES));
        ipup__release(e, &e->outfeed[r], threaded, ipup__ipu_of(e, r, e->core.S - 1));
        e->out_next++;
        got++;
    }
    return got;
}
/* host: move outfeed records into e->records (indexed by step - step0, replica, mb) */
static int ipup__drain(ipup_emu *e, int64_t step0, int32_t nsteps, int threaded) {
    int32_t r, got = 0;
    if (ipup__out_stream(&e->core.cfg) && !e->transport)
        return ipup__drain_stream(e, step0, nsteps, threaded);
    for (r = 0; r < e->core.R; r++) {
        const ipup_outfeed_rec *rec;
        while ((rec = (const ipup_outfeed_rec *)ipup_ring_peek(&e->outfeed[r])) != NULL) {
            int64_t k = rec->step - step0;
            if (k >= 0 && k < nsteps && rec->mb >= 0 && rec->mb < e->core.M)
                e->records[((size_t)k * (size_t)e->core.R + (size_t)r) * (size_t)e->core.M +
                           (size_t)rec->mb] = *rec;
            ipup__release(e, &e->outfeed[r], threaded, ipup__ipu_of(e, r, e->core.S - 1));
            got++;
        }
    }
    return got;
}

static int ipup__any_err(const ipup_emu *e, int64_t t) {
    int32_t q;
    /* the step too: a slot holds step t or t - 2 (or t + 2 when a thread stopped early) */
    for (q = 0; q < e->core.n_ipus; q++)
        if (e->ipu_errors[t & 1][q].code && e->ipu_errors[t & 1][q].step == t &&
            !e->ipu_errors[t & 1][q].overflow)
            return 1;
    return 0;
}
/* dynamic loss scaling at the end of step t on IPU ipu (every IPU decides alike from the
   error slots every IPU wrote): a gradient overflowed somewhere -> halve the scale, skip the
   update (returns 1; the caller zeroes the gradients); loss_scale_period clean steps in a
   row -> double it (NVIDIA's and Graphcore's dynamic loss scaling; the scale stays within
   [1, 2^24]) */
static int ipup__ls_step(ipup_emu *e, int32_t ipu, int64_t t) {
    int32_t q;
    int over = 0;
    if (!e->core.cfg.loss_scale_dynamic) return 0;
    for (q = 0; q < e->core.n_ipus; q++)
        if (e->ipu_errors[t & 1][q].overflow && e->ipu_errors[t & 1][q].step == t) over = 1;
    if (over) {
        if (e->ls_scale[ipu] > 1.0f) e->ls_scale[ipu] *= 0.5f;
        e->ls_clean[ipu] = 0;
        e->ls_skipped[ipu]++;
        return 1;
    }
    if (++e->ls_clean[ipu] >= e->core.cfg.loss_scale_period) {
        if (e->ls_scale[ipu] < 16777216.0f) e->ls_scale[ipu] *= 2.0f;
        e->ls_clean[ipu] = 0;
    }
    return 0;
}
/* a skipped step: the gradients of the stages on (r, d) zeroed, nothing updated */
static void ipup__skip_update(ipup_emu *e, int32_t r, int32_t d) {
    int32_t s;
    for (s = 0; s < e->core.S; s++)
        if (e->core.stages[s].device == d && e->core.n_branches[s] <= 1)
            IPUPIPE_MEMSET(e->stage_rt[r][s].grads, 0,
                           e->core.stages[s].n_grads * sizeof(float));
}
static int ipup__err_msg(ipup_emu *e, int64_t t) {
    int32_t q, best = -1;
    const ipup__ipu_err *b = NULL;
    /* the loss first (layer -1), then the lowest stage, then the lowest IPU */
    for (q = 0; q < e->core.n_ipus; q++) {
        const ipup__ipu_err *x = &e->ipu_errors[t & 1][q];
        if (!x->code) continue;
        if (!b || (x->layer < 0 && b->layer >= 0) ||
            ((x->layer < 0) == (b->layer < 0) && x->stage < b->stage)) {
            b = x;
            best = q;
        }
    }
    if (!b) return IPUP_OK;
    for (q = 0; q < e->core.n_ipus; q++) {
        const ipup__ipu_err *x = &e->ipu_errors[t & 1][q];
        if (x->code != IPUP_ERR_INVALID_TABLE) continue;
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_INVALID_TABLE,
                          "internal: op %c(%d,%d) of replica %d (IPU%d) at step %lld found no data "
                          "or no room (a bug of the emulator or the table); the other IPU threads "
                          "stopped, the update of step %lld was not applied",
                          (x->layer >= 1 && x->layer <= 4) ? "?FBIW"[x->layer] : '?', (int)x->stage,
                          (int)x->mb, (int)(q / e->core.P), (int)q, (long long)x->step,
                          (long long)x->step);
    }
    if (b->layer < 0)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_NUMERIC,
                          "step %lld, stage %d (IPU%d): the loss of micro-batch %d (replica %d) is "
                          "NaN or infinite; the update of step %lld was not applied. Lower the "
                          "learning rate or check the input data",
                          (long long)b->step, (int)b->stage, (int)best, (int)b->mb,
                          (int)(best / e->core.P), (long long)b->step);
    return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_NUMERIC,
                      "step %lld, stage %d (IPU%d): the gradient of %s.%s is NaN or infinite; the "
                      "update of step %lld was not applied. Lower the learning rate",
                      (long long)b->step, (int)b->stage, (int)best,
                      e->core.model.layers[b->layer / 2].id, (b->layer & 1) ? "b" : "w",
                      (long long)b->step);
}

/* the update of the stages of (r, d) at the end of step t (or the skip of dynamic loss
   scaling), with the fp16 accumulators' rounding of the replica sums */
static void ipup__end_step(ipup_emu *e, int32_t r, int32_t d, int64_t t) {
    int32_t s;
    const int skip = ipup__ls_step(e, r * e->core.P + d, t);
    for (s = 0; s < e->core.S; s++) {
        if (e->core.stages[s].device != d) continue;
        if (e->core.cfg.accum_dtype == IPUP_DTYPE_F16 && e->core.R > 1)
            ipup__h_round(e->stage_rt[r][s].grads, e->core.stages[s].n_grads);
        if (!skip) ipup__update_stage(e, r, s, t);
    }
    if (skip) ipup__skip_update(e, r, d);
}

static int ipup__run_coop(ipup_emu *e, int32_t steps, int32_t *done) {
    int32_t k, i, r, d, s;
    int rc, skip;
    int64_t step0 = e->step;
    *done = 0;
    for (k = 0; k < steps; k++) {
        int64_t t = step0 + k;
        IPUPIPE_MEMSET(e->ipu_errors[t & 1], 0, sizeof e->ipu_errors[0]);
        for (i = 0; i < e->core.table.n_ops; i++) {
            for (r = 0; r < e->core.R; r++) {
                rc = ipup__exec(e, r, &e->core.ops[i], t, 0);
                if (rc) return rc;
            }
            if (e->core.ops[i].stage == e->core.S - 1 && e->core.ops[i].kind == IPUP_OP_F)
                ipup__drain(e, step0, steps, 0);
        }
        if (e->core.R > 1) for (d = 0; d < e->core.P; d++) ipup__allreduce(e, d, 0, 1);
        for (r = 0; r < e->core.R; r++)
            for (d = 0; d < e->core.P; d++) ipup__check_grads(e, r, d, t, r, e->core.R);
        if (ipup__any_err(e, t)) return ipup__err_msg(e, t);
        skip = 0;
        for (i = 0; i < e->core.n_ipus; i++) skip = ipup__ls_step(e, i, t);
        if (e->core.cfg.accum_dtype == IPUP_DTYPE_F16 && e->core.R > 1)
            for (r = 0; r < e->core.R; r++)
                for (s = 0; s < e->core.S; s++)
                    ipup__h_round(e->stage_rt[r][s].grads, e->core.stages[s].n_grads);
        for (r = 0; r < e->core.R; r++)
            for (s = 0; s < e->core.S; s++)
                if (!skip) ipup__update_stage(e, r, s, t);
        for (r = 0; r < e->core.R && skip; r++)
            for (d = 0; d < e->core.P; d++) ipup__skip_update(e, r, d);
        if (e->core.has_concurrent)
            for (r = 0; r < e->core.R; r++)
                for (d = 0; d < e->core.P; d++) ipup__conc_update(e, r, d, t);
        e->step = t + 1;
        *done = k + 1;
    }
    return IPUP_OK;
}

/* the transport runner's outfeed: the k-th step's records (in e->records on every process
   after step_end) to the callback, in (replica, mb) order; loss records only */
static void ipup__deliver_step(ipup_emu *e, int32_t k) {
    size_t i, n = (size_t)e->core.R * (size_t)e->core.M;
    for (i = 0; i < n; i++) ipup__deliver(e, &e->records[(size_t)k * n + i], NULL);
}
/* the transport runner: IPU tp->ipu's row of every step, then its replica sum, the
   exchange of error slots and records, and the update of its stages */
static int ipup__run_xport(ipup_emu *e, int32_t steps, int32_t *done) {
    const ipup_transport *tp = e->transport;
    int32_t r = tp->ipu / e->core.P, d = tp->ipu % e->core.P, k, j;
    int64_t step0 = e->step;
    int rc;
    *done = 0;
    for (k = 0; k < steps; k++) {
        int64_t t = step0 + k;
        IPUPIPE_MEMSET(e->ipu_errors[t & 1], 0, sizeof e->ipu_errors[0]);
        if ((rc = tp->step_begin(tp->user, t)) != IPUP_OK) return rc;
        for (j = e->core.row_start[d]; j < e->core.row_start[d + 1]; j++) {
            const ipup_op *o = &e->core.ops[e->core.row[j]];
            if ((rc = ipup__exec(e, r, o, t, 0)) != IPUP_OK) return rc;
            if (o->stage == e->core.S - 1 && o->kind == IPUP_OP_F) ipup__drain(e, step0, steps, 0);
        }
        if (e->core.R > 1 && (rc = tp->reduce(tp->user, t)) != IPUP_OK) return rc;
        ipup__check_grads(e, r, d, t, r, e->core.R);
        if ((rc = tp->step_end(tp->user, t, k)) != IPUP_OK) return rc;
        if (e->core.cfg.outfeed) ipup__deliver_step(e, k); /* the step's records, everywhere */
        if (ipup__any_err(e, t)) return ipup__err_msg(e, t);
        ipup__end_step(e, r, d, t);
        e->step = t + 1;
        *done = k + 1;
    }
    return IPUP_OK;
}

#ifdef IPUP__WAITS
/* IPU ipu's row of every step of the job (threaded runner: its thread; device runner: its
   core, IPU 0 on the host's) */
static void ipup__thread_job(ipup_emu *e, int32_t ipu) {
    int32_t r = ipu / e->core.P, d = ipu % e->core.P, k, j;
    for (k = 0; k < e->job_steps; k++) {
        int64_t t = e->job_step0 + k;
        IPUPIPE_MEMSET(&e->ipu_errors[t & 1][ipu], 0, sizeof(ipup__ipu_err));
        if (ipup__aborted(e, t)) return;
        for (j = e->core.row_start[d]; j < e->core.row_start[d + 1]; j++)
            if (ipup__exec(e, r, &e->core.ops[e->core.row[j]], t, 1)) return;
        /* With replicas each thread sums part r of its IPU's gradients over the replicas
           into every replica's block and checks that part; after the barrier it updates
           its own replica only, from its own block: no thread writes another replica's
           weights, so the next step needs no barrier before it starts. */
        if (e->core.R > 1) {
            if (ipup__barrier(e, ipu, t)) return;
            ipup__allreduce(e, d, r, e->core.R);
            /* concurrent lanes: all sums before the checks */
            if (e->core.has_concurrent && ipup__barrier(e, ipu, t)) return;
        }
        ipup__check_grads(e, r, d, t, r, e->core.R);
        if (ipup__barrier(e, ipu, t)) return; /* every part summed and checked */
        if (ipup__any_err(e, t)) return;
        ipup__end_step(e, r, d, t);
        if (e->core.has_concurrent) ipup__conc_update(e, r, d, t); /* the lanes on this IPU */
    }
}
#ifndef IPUPIPE_NO_THREADS
static void ipup__pred_thread_job(ipup_emu *e, int32_t ipu); /* predict */
static void *ipup__thread_main(void *arg) {
    ipup__thread *th = (ipup__thread *)arg;
    ipup_emu *e = th->emu;
    ipup__genwait g;
    g.var = &e->job_gen;
    g.old = 0;
    for (;;) {
        ipup__wait(e, th->ipu, ipup__probe_gen, &g, -1);
        IPUPIPE_HAPPENS_AFTER(&e->job_gen);
        g.old = IPUP__LOAD_ACQ(&e->job_gen);
        if (e->quit) break;
        if (e->job_kind) ipup__pred_thread_job(e, th->ipu); /* ipup_predict */
        else ipup__thread_job(e, th->ipu);
        IPUPIPE_HAPPENS_BEFORE(&e->threads_done);
        (void)IPUP__FETCH_ADD(&e->threads_done, 1u);
        ipup__notify(e, e->core.n_ipus);
    }
    return NULL;
}
#endif

/* the host has something to do: a record in an outfeed ring, or every thread is done */
static void *ipup__probe_host(ipup_emu *e, void *arg) {
    int32_t r;
    if (IPUP__LOAD_ACQ(&e->threads_done) == (uint32_t)e->core.n_ipus) return arg;
    if (ipup__out_stream(&e->core.cfg)) /* only the next record in order can be taken */
        return ipup_ring_count(&e->outfeed[(e->out_next / e->core.M) % e->core.R]) > 0 ? arg
                                                                                     : NULL;
    for (r = 0; r < e->core.R; r++)
        if (ipup_ring_count(&e->outfeed[r]) > 0) return arg;
    return NULL;
}

/* the message of an infeed failure at step t (the lowest replica's), once the threads are done */
static int ipup__job_result(ipup_emu *e, int64_t step0, int32_t *done);
static int ipup__feed_msg(ipup_emu *e, int64_t t) {
    int32_t r;
    for (r = 0; r < e->core.R; r++) {
        const ipup__ipu_err *x = &e->ipu_errors[t & 1][ipup__ipu_of(e, r, 0)];
        if (x->code == IPUP_ERR_IO && x->step == t)
            return ipup__feed_fail(e, r, t, x->mb, 0, 0, x->stage, x->layer);
    }
    return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_IO, "step %lld: the infeed failed",
                      (long long)t);
}

#ifndef IPUPIPE_NO_THREADS
/* The host starts the job and drains the outfeed while the IPU threads run; each
   replica's stage-0 thread calls the infeed itself (ipup__feed), so the host takes no
   core from them. */
static int ipup__run_threads(ipup_emu *e, int32_t steps, int32_t *done) {
    int64_t step0 = e->step;
    IPUPIPE_MEMSET(e->ipu_errors, 0, sizeof e->ipu_errors);
    e->job_steps = steps;
    e->job_step0 = step0;
    e->job_stop = step0 + steps;
    IPUP__STORE_REL(&e->threads_done, 0u);
    IPUPIPE_HAPPENS_BEFORE(&e->job_gen);
    IPUP__STORE_REL(&e->job_gen, IPUP__LOAD_ACQ(&e->job_gen) + 1u);
    ipup__notify_all(e);
    for (;;) {
        ipup__drain(e, step0, steps, 1);
        if (IPUP__LOAD_ACQ(&e->threads_done) == (uint32_t)e->core.n_ipus) {
            IPUPIPE_HAPPENS_AFTER(&e->threads_done);
            ipup__drain(e, step0, steps, 1);
            break;
        }
        ipup__wait(e, e->core.n_ipus, ipup__probe_host, e, -1);
    }
    return ipup__job_result(e, step0, done);
}
#endif

/* the job of both runners is over: the first infeed failure or error of its steps, the
   steps done, e->step */
static int ipup__job_result(ipup_emu *e, int64_t step0, int32_t *done) {
    int64_t t;
    if (IPUP__LOAD_ACQ(&e->abort_)) {
        /* an infeed failure at step job_stop: every step before it was applied (a NaN in
           one of them would have stopped the threads there, before this infeed) */
        IPUPIPE_HAPPENS_AFTER(&e->abort_);
        *done = (int32_t)(e->job_stop - step0);
        e->step = e->job_stop;
        return ipup__feed_msg(e, e->job_stop);
    }
    for (t = step0; t < e->job_stop; t++) {
        if (ipup__any_err(e, t)) {
            *done = (int32_t)(t - step0);
            e->step = t;
            return ipup__err_msg(e, t);
        }
    }
    *done = (int32_t)(e->job_stop - step0);
    e->step = e->job_stop;
    return IPUP_OK;
}

/* the device runner's host side (ipup_set_devices): publish the job like the threaded
   runner, run IPU 0's row on this core (its waits drain the outfeed), wait for the others */
static int ipup__run_devices(ipup_emu *e, int32_t steps, int32_t *done) {
    int64_t step0 = e->step;
    IPUPIPE_MEMSET(e->ipu_errors, 0, sizeof e->ipu_errors);
    e->job_kind = 0;
    e->job_steps = steps;
    e->job_step0 = step0;
    e->job_stop = step0 + steps;
    IPUP__STORE_REL(&e->stop_claim, 0u);
    IPUP__STORE_REL(&e->threads_done, 0u);
    IPUPIPE_HAPPENS_BEFORE(&e->job_gen);
    IPUP__STORE_REL(&e->job_gen, IPUP__LOAD_ACQ(&e->job_gen) + 1u);
    ipup__notify_all(e);
    ipup__thread_job(e, 0);
    IPUPIPE_HAPPENS_BEFORE(&e->threads_done);
    (void)IPUP__FETCH_ADD(&e->threads_done, 1u);
    for (;;) {
        ipup__drain(e, step0, steps, 1);
        if (IPUP__LOAD_ACQ(&e->threads_done) == (uint32_t)e->core.n_ipus) break;
        (void)ipup__wait(e, 0, ipup__probe_host, e, -1);
    }
    IPUPIPE_HAPPENS_AFTER(&e->threads_done);
    ipup__drain(e, step0, steps, 1);
    return ipup__job_result(e, step0, done);
}
/* the host waits for every ipup_run_device to return (ipup_shutdown) */
static void *ipup__probe_left(ipup_emu *e, void *arg) {
    return IPUP__LOAD_ACQ(&e->devices_out) == (uint32_t)(e->core.n_ipus - 1) ? arg : NULL;
}
static void ipup__devices_quit(ipup_emu *e) {
    e->quit = 1;
    IPUPIPE_HAPPENS_BEFORE(&e->job_gen);
    IPUP__STORE_REL(&e->job_gen, IPUP__LOAD_ACQ(&e->job_gen) + 1u);
    ipup__notify_all(e);
    (void)ipup__wait(e, e->core.n_ipus, ipup__probe_left, e, -1);
    IPUPIPE_HAPPENS_AFTER(&e->devices_out); /* the devices' last touch of e came before */
    e->devices = NULL;
}
#endif

/* >>devices: ipup_set_devices, ipup_run_device */
IPUPIPE_DEF int ipup_set_devices(ipup_emu *e, const ipup_device_sync *sync) {
    int rc = ipup__need_init(e, "ipup_set_devices");
    if (rc) return rc;
#ifdef IPUPIPE_NO_ATOMICS
    if (sync)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_set_devices: atomics are compiled out (IPUPIPE_NO_ATOMICS, or "
                          "IPUPIPE_NO_THREADS without IPUPIPE_ATOMICS); the device runner "
                          "needs them");
#endif
    if (sync && e->frozen != e)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_set_devices after ipup_shutdown: call ipup_init again first");
    if (sync && e->core.cfg.runner != IPUP_RUNNER_COOP)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_set_devices: the emulator runs the threaded runner; initialise "
                          "it with runner = IPUP_RUNNER_COOP");
    if (sync && e->transport)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_set_devices: a transport is set (ipup_set_transport); remove "
                          "it first with ipup_set_transport(e, NULL)");
    if (sync && e->core.has_concurrent)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_UNSUPPORTED,
                          "ipup_set_devices: the model has concurrent stages (cfg.concurrent); "
                          "use the cooperative or threaded runner");
    if (sync && (!sync->wait || !sync->wake))
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_set_devices: sync->wait and sync->wake must both be set");
    e->devices = sync;
    return IPUP_OK;
}

IPUPIPE_DEF int ipup_run_device(ipup_emu *e, int32_t ipu) {
#ifdef IPUP__WAITS
    ipup__genwait g;
    const ipup_device_sync *sync;
    int32_t host;
#endif
    if (!e) return IPUP_ERR_ARG;
    if (!e->devices)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_run_device: call ipup_set_devices first (after ipup_init)");
    if (ipu < 1 || ipu >= e->core.n_ipus)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_run_device: ipu %d is outside 1..%d (IPU 0 runs in ipup_run on "
                          "the host)", (int)ipu, (int)(e->core.n_ipus - 1));
#ifdef IPUP__WAITS
    /* read now: once devices_out counts this call, ipup_shutdown may clear e */
    sync = e->devices;
    host = e->core.n_ipus;
    g.var = &e->job_gen;
    g.old = 0; /* ipup_init zeroes job_gen; a job waits for every IPU, so none is missed */
    for (;;) {
        (void)ipup__wait(e, ipu, ipup__probe_gen, &g, -1);
        IPUPIPE_HAPPENS_AFTER(&e->job_gen);
        g.old = IPUP__LOAD_ACQ(&e->job_gen);
        if (e->quit) break;
        ipup__thread_job(e, ipu);
        IPUPIPE_HAPPENS_BEFORE(&e->threads_done);
        (void)IPUP__FETCH_ADD(&e->threads_done, 1u);
        ipup__notify(e, 0);
    }
    IPUPIPE_HAPPENS_BEFORE(&e->devices_out);
    (void)IPUP__FETCH_ADD(&e->devices_out, 1u);
    sync->wake(sync->user, host); /* e is not touched after the count */
#endif
    return IPUP_OK;
}

IPUPIPE_DEF int ipup_run_steps(ipup_emu *e, int32_t steps, ipup_run_stats *stats) {
    int32_t done = 0, i, n, d, p;
    int rc;
    ipup_run_stats S;
    double lsum = 0.0;
    if ((rc = ipup__need_init(e, "ipup_run_steps")) != IPUP_OK) return rc;
    if (steps <= 0 || steps > e->core.cfg.repeat)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_run_steps: steps = %d; it must be 1..repeat (%d), the outfeed "
                          "records are sized by cfg.repeat",
                          (int)steps, (int)e->core.cfg.repeat);
    if (!e->core.cfg.infeed)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "cfg.infeed is NULL: the emulator needs "
                          "an infeed callback to get micro-batches");
    if (e->step > ipup__step_cap(&e->core) - steps)
        return ipup__efail(e, IPUP_ERR_CAPACITY,
                           "ipup_run_steps: the step counter is %lld; %d more steps pass %lld, "
                           "the last step this configuration can count (Adam counts steps in "
                           "an int; the sample index step x R x M x B must fit 64 bits)",
                           (long long)e->step, (int)steps, (long long)ipup__step_cap(&e->core));
    e->core.msg[0] = 0;
    e->out_next = 0; /* the streamed outfeed's first record */
#ifndef IPUPIPE_NO_THREADS
    if (e->core.cfg.runner == IPUP_RUNNER_THREADS && !e->threads_started)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_run after ipup_shutdown: the IPU "
                          "threads are gone; call ipup_init again");
    if (e->core.cfg.runner == IPUP_RUNNER_THREADS) rc = ipup__run_threads(e, steps, &done);
    else
#endif
#ifdef IPUP__WAITS
    if (e->devices) rc = ipup__run_devices(e, steps, &done);
    else
#endif
    if (e->transport) rc = ipup__run_xport(e, steps, &done);
    else rc = ipup__run_coop(e, steps, &done);
    if (rc) ipup__reset_transient(e);
    /* statistics over the completed steps */
    IPUPIPE_MEMSET(&S, 0, sizeof S);
    S.steps = done;
    n = done * e->core.R * e->core.M;
    S.microbatches = n;
    S.samples = (int64_t)n * e->core.B;
    for (i = 0; i < n; i++) {
        lsum += (double)e->records[i].loss;
        S.correct += e->records[i].correct; /* cfg.outfeed had them during the run */
    }
    S.loss_mean = n ? lsum / (double)n : 0.0;
    S.step_seconds = e->step_seconds;
    S.launch_seconds = e->core.cost_model.launch_seconds; /* once per call: the host loop */
    S.sim_seconds = e->step_seconds * (double)done + S.launch_seconds;
    for (i = 0; i < e->core.n_ipus; i++) {
        ipup_mem_report mr;
        ipup__mem_runtime(e, i, &mr);
        S.mem_used[i] = mr.used;
        S.mem_high_water[i] = mr.high_water;
        d = i % e->core.P;
        S.busy_seconds[i] = e->busy_seconds[d] * (double)done;
        S.idle_seconds[i] = S.sim_seconds - S.busy_seconds[i];
    }
    for (p = 0; p < IPUP_PHASES; p++) {
        S.phase_seconds[p] = e->phase_seconds[p];
        S.phase_utilisation[p] =
            e->phase_seconds[p] > 0.0
                ? e->phase_busy_seconds[p] / (e->phase_seconds[p] * (double)e->core.P)
                : 0.0;
    }
    S.samples_per_second = S.sim_seconds > 0.0 ? (double)S.samples / S.sim_seconds : 0.0;
    S.skipped_steps = e->ls_skipped[0];
    S.loss_scale = ipup__ls(e, 0);
    e->n_records = n;
    if (stats) *stats = S;
    return rc;
}

IPUPIPE_DEF int ipup_run(ipup_emu *e, ipup_run_stats *stats) {
    int rc = ipup__need_init(e, "ipup_run");
    if (rc) return rc;
    return ipup_run_steps(e, e->core.cfg.repeat, stats);
}

IPUPIPE_DEF const ipup_outfeed_rec *ipup_outfeed_records(const ipup_emu *e, int32_t *n) {
    if (n) *n = e ? e->n_records : 0;
    return e ? e->records : NULL;
}

IPUPIPE_DEF int ipup_evaluate(ipup_emu *e, int32_t n, const float *x, const int32_t *labels,
                          double *loss_sum, int64_t *correct) {
    int32_t i, s;
    int rc = ipup__need_init(e, "ipup_evaluate");
    if (rc) return rc;
    e->core.msg[0] = 0;
    if (n < 0)
        return ipup__efail(e, IPUP_ERR_ARG, "ipup_evaluate: n = %d samples; give n >= 0", (int)n);
    if (n && !x)
        return ipup__efail(e, IPUP_ERR_ARG,
                           "ipup_evaluate: x is NULL; give the n = %d samples, %d floats each",
                           (int)n, (int)e->core.in_n);
    if (n && !labels)
        return ipup__efail(e, IPUP_ERR_ARG,
                           "ipup_evaluate: labels is NULL; give the n = %d labels of x (each in "
                           "0..%d): the loss and the correct count need them",
                           (int)n, (int)(e->core.classes - 1));
    if (ipup__target_w(&e->core))
        return ipup__efail(e, IPUP_ERR_ARG,
                           "ipup_evaluate: the model's loss is mse, which needs float targets, not "
                           "labels; call ipup_evaluate_targets");
    for (i = 0; i < n; i += e->core.B) {
        int32_t Bn = n - i < e->core.B ? n - i : e->core.B, j;
        int c = 0;
        const float *in = x + (size_t)i * (size_t)e->core.in_n;
        float loss = 0.0f;
        for (j = 0; j < Bn; j++)
            if (labels[i + j] < 0 || labels[i + j] >= e->core.classes)
                return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                                  "ipup_evaluate: label %d of sample %d is outside 0..%d",
                                  (int)labels[i + j], (int)(i + j), (int)(e->core.classes - 1));
        for (s = 0; s < e->core.S; s++) {
            float *out = s < e->core.S - 1
                             ? (e->core.n_branches[s + 1] > 1 ? e->fanout[0][s].out
                                                              : e->stage_rt[0][s + 1].pingpong[0])
                             : NULL;
            /* the branches, concatenated */
            if (e->core.n_branches[s] > 1) ipup__conc_eval(e, s, Bn, in, out);
            else {
                if (s == 0 && ipup__f16(e)) in = ipup__half_in(e, 0, Bn, in, 0);
                ipup__stage_fwd(e, 0, s, Bn, in, labels + i, NULL, out, 0, 0, 0, &loss, &c);
            }
            in = out;
        }
        if (loss_sum) *loss_sum += (double)loss * (double)Bn;
        if (correct) *correct += c;
    }
    return IPUP_OK;
}

IPUPIPE_DEF int ipup_evaluate_targets(ipup_emu *e, int32_t n, const float *x, const float *targets,
                                      double *loss_sum) {
    int32_t i, s, tw;
    if (!e) return IPUP_ERR_ARG;
    if (!e->initialised || n < 0 || (n && (!x || !targets)))
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_evaluate_targets: %s",
                          !e->initialised ? "the emulator is not initialised; call ipup_init first"
                          : n < 0         ? "n is negative"
                                  : "x or targets is NULL; give n rows of inputs and of targets");
    tw = ipup__target_w(&e->core);
    if (!tw)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_evaluate_targets: the model's loss is softmax cross-entropy "
                          "(integer labels); call ipup_evaluate");
    for (i = 0; i < n; i += e->core.B) {
        int32_t Bn = n - i < e->core.B ? n - i : e->core.B;
        int c = 0;
        const float *in = x + (size_t)i * (size_t)e->core.in_n;
        const int32_t *tg = (const int32_t *)(const void *)(targets + (size_t)i * (size_t)tw);
        float loss = 0.0f;
        for (s = 0; s < e->core.S; s++) {
            float *out = s < e->core.S - 1 ? e->stage_rt[0][s + 1].pingpong[0] : NULL;
            if (s == 0 && ipup__f16(e)) in = ipup__half_in(e, 0, Bn, in, 0);
            ipup__stage_fwd(e, 0, s, Bn, in, tg, NULL, out, 0, 0, 0, &loss, &c);
            in = out;
        }
        if (loss_sum) *loss_sum += (double)loss * (double)Bn;
    }
    return IPUP_OK;
}

/* >>predict: ipup_predict on the forward-only table, waves of micro-batches */
IPUPIPE_DEF int32_t ipup_output_width(const ipup_emu *e) {
    if (!e || !e->initialised || e->core.n_layers < 1) return 0;
    return e->core.layers[e->core.n_layers - 1].info.in_n;
}

/* the loss layer gives class scores (arg-max makes sense) */
static int ipup__class_loss(const ipup_emu *e) {
    return e->core.layers[e->core.n_layers - 1].info.kind == IPUP_LAYER_SOFTMAX_XENT;
}

static int ipup__predict_args(ipup_emu *e, int32_t n, const float *x, const int32_t *cls) {
    if (!e) return IPUP_ERR_ARG; /* no emulator: nowhere to put a message */
    if (!e->initialised)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_predict: the emulator is not initialised; call ipup_init first "
                          "(and check that it returned IPUP_OK)");
    if (n < 0)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_predict: n = %d samples; give n >= 0", (int)n);
    if (n > 0 && !x)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_predict: x is NULL for %d samples; give n rows of %d floats",
                          (int)n, (int)e->core.in_n);
    if (cls && !ipup__class_loss(e))
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_predict: cls asks for arg-max classes, but the loss layer %s (%s) "
                          "does not score classes; pass cls = NULL and read out",
                          e->core.model.layers[e->core.n_layers - 1].id,
                          ipup_layer_kind_name(e->core.layers[e->core.n_layers - 1].info.kind));
    return IPUP_OK;
}

/* the arg-max of each of the Bn rows of z (Bn, W): the first maximum; NaN never wins */
static void ipup__argmax_rows(int32_t Bn, int32_t W, const float *z, int32_t *cls) {
    int32_t i, j;
    for (i = 0; i < Bn; i++) {
        const float *row = z + (size_t)i * (size_t)W;
        int32_t best = 0;
        for (j = 1; j < W; j++)
            if (row[j] > row[best] || (row[best] != row[best] && row[j] == row[j])) best = j;
        cls[i] = best;
    }
}

/* chunk c (samples c*B .. c*B+Bn-1): the last stage's result rows, into out or the
   scratch rows, then the classes */
static float *ipup__pred_rows(ipup_emu *e, int32_t c, float *out) {
    return out ? out + (size_t)c * (size_t)e->core.B * (size_t)ipup_output_width(e)
               : e->stage_rt[0][e->core.S - 1].pred;
}
static void ipup__pred_classes(ipup_emu *e, int32_t c, int32_t Bn, const float *rows,
                               int32_t *cls) {
    if (cls) ipup__argmax_rows(Bn, ipup_output_width(e), rows, cls + (size_t)c * (size_t)e->core.B);
}

/* F(s, m) of wave w of the forward-only table on replica 0: micro-batch c = w*M + m
   (empty past n: every stage skips it), its input from x (stage 0) or the ring from
   stage s-1, its output into the ring to s+1 or the result rows (the last stage) */
static int ipup__pred_exec(ipup_emu *e, const ipup_op *o, int32_t w, int threaded) {
    int32_t s = o->stage, ipu = o->device, Bn;
    int64_t c = (int64_t)w * e->core.M + o->mb, left = (int64_t)e->pred_n - c * e->core.B;
    const float *in;
    float *msg = NULL, *out;
    if (left <= 0) return IPUP_OK;
    Bn = (int32_t)(left < e->core.B ? left : e->core.B);
    if (e->core.cfg.op_hook) e->core.cfg.op_hook(e->core.cfg.op_hook_user, ipu, o);
    if (s == 0) in = e->pred_x + (size_t)c * (size_t)e->core.B * (size_t)e->core.in_n;
    else {
        msg = (float *)ipup__wait_peek(e, &e->fwd[0][s], threaded, 0, ipu);
        if (!msg) goto stall;
        in = msg;
    }
    if (ipup__f16(e)) in = ipup__half_in(e, s, Bn, in, s > 0);
    if (s < e->core.S - 1) {
        out = (float *)ipup__wait_reserve(e, &e->fwd[0][s + 1], threaded, 0, ipu);
        if (!out) goto stall;
    } else out = ipup__pred_rows(e, (int32_t)c, e->pred_out);
    if (ipup__f16(e) && s < e->core.S - 1) {
        const float *res = ipup__stage_fwd(e, 0, s, Bn, in, NULL, NULL, NULL, 0, 0, 0, NULL, NULL);
        ipup__msg_pack(e, Bn, e->core.stages[s].out_n, res, NULL,
                       (uint16_t *)(void *)out);
    } else ipup__stage_fwd(e, 0, s, Bn, in, NULL, NULL, out, 0, 0, 0, NULL, NULL);
    if (msg) ipup__release(e, &e->fwd[0][s], threaded, ipup__ipu_of(e, 0, s - 1));
    if (s < e->core.S - 1) ipup__commit(e, &e->fwd[0][s + 1], threaded, ipup__ipu_of(e, 0, s + 1));
    else ipup__pred_classes(e, (int32_t)c, Bn, out, e->pred_cls);
    return IPUP_OK;
stall:
#ifndef IPUPIPE_NO_THREADS
    if (threaded) {
        if (!ipup__aborted(e, 0)) ipup__fault(e, ipu, 0, o);
        return IPUP__ABORTED;
    }
#endif
    return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_INVALID_TABLE,
                      "internal: ipup_predict's F(%d,%d) found no data or no room in its ring (a "
                      "bug of the emulator or the table)",
                      (int)s, (int)o->mb);
}

/* With concurrent stages (no forward-only table): chunk after chunk, stage after stage on
   the host thread, the branches of a concurrent stage one after another (as ipup_evaluate) */
static int ipup__pred_serial(ipup_emu *e) {
    int32_t c, s, Bn, chunks = (int32_t)(((int64_t)e->pred_n + e->core.B - 1) / e->core.B);
    for (c = 0; c < chunks; c++) {
        const float *in = e->pred_x + (size_t)c * (size_t)e->core.B * (size_t)e->core.in_n;
        float *out = NULL;
        Bn = e->pred_n - c * e->core.B < e->core.B ? e->pred_n - c * e->core.B : e->core.B;
        for (s = 0; s < e->core.S; s++) {
            out = s < e->core.S - 1
                      ? (e->core.n_branches[s + 1] > 1 ? e->fanout[0][s].out
                                                       : e->stage_rt[0][s + 1].pingpong[0])
                      : ipup__pred_rows(e, c, e->pred_out);
            if (e->core.n_branches[s] > 1) ipup__conc_eval(e, s, Bn, in, out);
            else ipup__stage_fwd(e, 0, s, Bn, in, NULL, NULL, out, 0, 0, 0, NULL, NULL);
            in = out;
        }
        ipup__pred_classes(e, c, Bn, out, e->pred_cls);
    }
    return IPUP_OK;
}

/* the cooperative walk: every wave, the table in order (also after ipup_shutdown) */
static int ipup__pred_coop(ipup_emu *e) {
    int32_t w, i;
    int rc;
    for (w = 0; w < e->pred_waves; w++)
        for (i = 0; i < e->core.pred_table.n_ops; i++)
            if ((rc = ipup__pred_exec(e, &e->core.pred_ops[i], w, 0)) != IPUP_OK) return rc;
    return IPUP_OK;
}

#ifndef IPUPIPE_NO_THREADS
/* IPU thread `ipu`: replica 0's devices run their row of every wave; the others rest */
static void ipup__pred_thread_job(ipup_emu *e, int32_t ipu) {
    int32_t w, j;
    if (ipu >= e->core.P) return;
    for (w = 0; w < e->pred_waves; w++)
        for (j = e->core.pred_row_start[ipu]; j < e->core.pred_row_start[ipu + 1]; j++)
            if (ipup__pred_exec(e, &e->core.pred_ops[e->core.pred_row[j]], w, 1)) return;
}

static int ipup__pred_threads(ipup_emu *e) {
    e->job_kind = 1;
    e->job_step0 = 0;
    e->job_stop = INT64_MAX;
    IPUP__STORE_REL(&e->threads_done, 0u);
    IPUPIPE_HAPPENS_BEFORE(&e->job_gen);
    IPUP__STORE_REL(&e->job_gen, IPUP__LOAD_ACQ(&e->job_gen) + 1u);
    ipup__notify_all(e);
    while (IPUP__LOAD_ACQ(&e->threads_done) != (uint32_t)e->core.n_ipus)
        ipup__wait(e, e->core.n_ipus, ipup__probe_host, e, -1);
    IPUPIPE_HAPPENS_AFTER(&e->threads_done);
    e->job_kind = 0;
    if (!IPUP__LOAD_ACQ(&e->fault_)) return IPUP_OK;
    IPUPIPE_HAPPENS_AFTER(&e->fault_);
    return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_INVALID_TABLE,
                      "internal: an IPU thread of ipup_predict found no data or no room in a ring "
                      "(a bug of the emulator or the table)");
}
#endif

IPUPIPE_DEF int ipup_predict(ipup_emu *e, int32_t n, const float *x, float *out, int32_t *cls) {
    int rc = ipup__predict_args(e, n, x, cls);
    if (rc) return rc;
    e->core.msg[0] = 0;
    e->pred_n = n; e->pred_x = x; e->pred_out = out; e->pred_cls = cls;
    e->pred_waves = (int32_t)(((int64_t)n + (int64_t)e->core.B * e->core.M - 1) /
                              ((int64_t)e->core.B * e->core.M));
    e->core.pred_stats.last_samples = n;
    e->core.pred_stats.last_seconds = (double)e->pred_waves * e->core.pred_stats.wave_seconds;
    if (n == 0) return IPUP_OK;
    if (e->core.has_concurrent) return ipup__pred_serial(e);
#ifndef IPUPIPE_NO_THREADS
    if (e->core.cfg.runner == IPUP_RUNNER_THREADS && e->threads_started) rc = ipup__pred_threads(e);
    else
#endif
    { /* under a transport: this process alone, on the weights it holds, no hook called */
        const ipup_transport *tp = e->transport;
        e->transport = NULL;
        rc = ipup__pred_coop(e);
        e->transport = tp;
    }
    if (rc) ipup__reset_transient(e);
    return rc;
}

IPUPIPE_DEF int ipup_predict_figures(const ipup_emu *e, ipup_predict_stats *out) {
    if (!e || !out || !e->initialised) return IPUP_ERR_ARG;
    *out = e->core.pred_stats;
    return IPUP_OK;
}

/* >>tensors: the tensors, replicas_sync, the step, the learning rate */
/* (w, b) pairs of tensors: one per layer with weights, one per branch in a concurrent stage */
/* layers with parameters (trained_only: those that train, i.e. not frozen) */
static int32_t ipup__param_layers_of(const ipup_emu *e, int trained_only) {
    int32_t l, n = 0;
    for (l = 0; l < e->core.n_layers; l++)
        if (e->core.layers[l].info.n_w && !(trained_only && e->core.layers[l].info.frozen))
            n += e->core.n_branches[e->core.layers[l].stage] > 1
                     ? e->core.n_branches[e->core.layers[l].stage]
                     : 1;
    return n;
}
/* a tensor of branch br of the concurrent stage of layer l: "dense256.w#1", its slice */
static int ipup__conc_tensor(ipup_emu *e, int32_t l, int32_t br, int which, int32_t slot, int32_t k,
                             ipup_tensor_info *out) {
    int32_t lane = e->core.first_lane[e->core.layers[l].stage] + br;
    const ipup__lane *c = &e->core.lanes[lane];
    const ipup__lane_rt *rt = &e->lane_rt[0][lane];
    const ipup_layer_info *I = &e->core.layers[l].info;
    size_t off = which ? c->bias_off : 0;
    out->kind = slot == 0 ? IPUP_TENSOR_PARAM : IPUP_TENSOR_OPT_STATE;
    out->layer = l;
    out->stage = c->stage;
    out->device = c->device;
    out->n = which ? c->slice_units : c->n_w;
    out->data = slot == 0 ? rt->params + off : rt->state + (size_t)(slot - 1) * c->n_params + off;
    if (which) { out->ndim = 1; out->shape[0] = c->slice_units;
    } else if (I->kind == IPUP_LAYER_CONV3X3) {
        out->ndim = 4;
        out->shape[0] = 3;
        out->shape[1] = 3;
        out->shape[2] = I->in_c;
        out->shape[3] = c->slice_units;
    } else {
        out->ndim = 2;
        out->shape[0] = I->in_n;
        out->shape[1] = c->slice_units;
    }
    ipup_snprintf(out->name, sizeof out->name, "%s.%s%s#%d", e->core.model.layers[l].id,
                  which ? "b" : "w",
                  slot == 0               ? ""
                  : (k == 1 || slot == 2) ? ".v"
                                          : ".m",
                  (int)br);
    return IPUP_OK;
}
static int32_t ipup__param_layers(const ipup_emu *e) { return ipup__param_layers_of(e, 0); }
/* the batch norms: their running mean and variance follow the parameter tensors */
static int32_t ipup__bn_layers(const ipup_emu *e, int32_t upto) {
    int32_t l, n = 0;
    for (l = 0; l < upto && l < e->core.n_layers; l++)
        n += e->core.layers[l].info.kind == IPUP_LAYER_BATCHNORM;
    return n;
}
IPUPIPE_DEF int32_t ipup_tensor_count(const ipup_emu *e) {
    if (!e || !e->initialised) return 0;
    return ipup__param_layers(e) * 2 + ipup__bn_layers(e, e->core.n_layers) * 2 +
           ipup__param_layers_of(e, 1) * 2 * ipup__state_slots(&e->core.cfg);
}
/* tensor i (0 .. 2 x batch norms - 1) of the running statistics: "bn.mean", "bn.var" */
static int ipup__running_tensor(ipup_emu *e, int32_t i, ipup_tensor_info *out) {
    int32_t l, k = i / 2;
    for (l = 0; l < e->core.n_layers; l++) {
        const ipup__layer_facts *Ly = &e->core.layers[l];
        if (Ly->info.kind != IPUP_LAYER_BATCHNORM || k-- > 0) continue;
        IPUPIPE_MEMSET(out, 0, sizeof *out);
        out->kind = IPUP_TENSOR_PARAM;
        out->layer = l;
        out->stage = Ly->stage;
        out->device = e->core.stages[Ly->stage].device;
        out->n = Ly->info.out_c;
        out->ndim = 1;
        out->shape[0] = Ly->info.out_c;
        {
            const ipup__stage_rt *rt = &e->stage_rt[0][Ly->stage];
            const size_t at = (size_t)Ly->run_off + (i % 2 ? ipup__round16(Ly->info.out_c) : 0);
            out->data = rt->params ? rt->params + at : NULL;
            out->data_f16 = rt->hparams ? rt->hparams + at : NULL;
        }
        ipup_snprintf(out->name, sizeof out->name, "%s.%s", e->core.model.layers[l].id,
                      i % 2 ? "var" : "mean");
        return IPUP_OK;
    }
    return ipup__efail(e, IPUP_ERR_ARG, "ipup_tensor_get: internal: no batch norm for %d",
                       (int)i);
}
/* the shape of layer I's weight tensor */
static void ipup__w_shape(const ipup_layer_info *I, int32_t units, ipup_tensor_info *out) {
    if (I->kind == IPUP_LAYER_CONV3X3 || I->kind == IPUP_LAYER_CONV2D) {
        out->ndim = 4;
        out->shape[0] = I->kh; out->shape[1] = I->kw; out->shape[2] = I->in_c;
        out->shape[3] = units;
    } else if (I->kind == IPUP_LAYER_DWCONV) {
        out->ndim = 3;
        out->shape[0] = I->kh; out->shape[1] = I->kw; out->shape[2] = I->in_c;
    } else if (I->kind == IPUP_LAYER_BATCHNORM) {
        out->ndim = 1;
        out->shape[0] = I->n_w;
    } else {
        out->ndim = 2;
        out->shape[0] = I->in_n;
        out->shape[1] = units;
    }
}
IPUPIPE_DEF int ipup_tensor_get(ipup_emu *e, int32_t index, ipup_tensor_info *out) {
    int32_t npl, ntl, slot, within, pl, which, l, k, nbn;
    const ipup__layer_facts *Ly = NULL;
    const ipup_layer_info *I;
    ipup__stage_rt *rt;
    size_t off;
    int rc = ipup__need_init(e, "ipup_tensor_get");
    if (rc) return rc;
    if (!out)
        return ipup__efail(e, IPUP_ERR_ARG,
                           "ipup_tensor_get: out is NULL; give an ipup_tensor_info to fill");
    if (index < 0 || index >= ipup_tensor_count(e))
        return ipup__efail(e, IPUP_ERR_ARG,
                           "ipup_tensor_get: index %d is outside 0..%d (ipup_tensor_count - 1)",
                           (int)index, (int)(ipup_tensor_count(e) - 1));
    e->core.msg[0] = 0;
    npl = ipup__param_layers(e);
    ntl = ipup__param_layers_of(e, 1);
    k = ipup__state_slots(&e->core.cfg);
    nbn = 2 * ipup__bn_layers(e, e->core.n_layers);
    if (index >= 2 * npl && index < 2 * npl + nbn)
        return ipup__running_tensor(e, index - 2 * npl, out);
    if (index >= 2 * npl) index -= nbn;
    /* the parameters of every layer, then per state slot those of the trained layers */
    slot = index < 2 * npl ? 0 : 1 + (index - 2 * npl) / (2 * ntl);
    within = slot == 0 ? index : (index - 2 * npl) % (2 * ntl);
    pl = within / 2;
    which = within % 2;
    for (l = 0; l < e->core.n_layers; l++) {
        /* branches of a concurrent stage */
        int32_t nb = e->core.n_branches[e->core.layers[l].stage] > 1
                         ? e->core.n_branches[e->core.layers[l].stage]
                         : 1;
        if (!e->core.layers[l].info.n_w || (slot > 0 && e->core.layers[l].info.frozen)) continue;
        if (pl < nb) { Ly = &e->core.layers[l]; break; }
        pl -= nb;
    }
    if (!Ly)
        return ipup__efail(e, IPUP_ERR_ARG, "ipup_tensor_get: internal: no layer for tensor %d",
                           (int)index);
    I = &Ly->info;
    IPUPIPE_MEMSET(out, 0, sizeof *out);
    if (e->core.n_branches[Ly->stage] > 1) return ipup__conc_tensor(e, l, pl, which, slot, k, out);
    rt = &e->stage_rt[0][Ly->stage];
    off = (size_t)Ly->param_off + (which ? ipup__round16(I->n_w) : 0);
    out->kind = slot == 0 ? IPUP_TENSOR_PARAM : IPUP_TENSOR_OPT_STATE;
    out->layer = l;
    out->stage = Ly->stage;
    out->device = e->core.stages[Ly->stage].device;
    out->n = which ? I->n_b : I->n_w;
    if (slot == 0) {
        out->data = rt->params ? rt->params + off : NULL;
        out->data_f16 = rt->hparams ? rt->hparams + off : NULL;
    } else {
        out->data = rt->state + (size_t)(slot - 1) * e->core.stages[Ly->stage].n_grads + off;
    }
    if (which) { out->ndim = 1; out->shape[0] = I->n_b;
    } else {
        ipup__w_shape(I, I->kind == IPUP_LAYER_DENSE ? I->out_n : I->out_c, out);
    }
    ipup_snprintf(out->name, sizeof out->name, "%s.%s%s", e->core.model.layers[l].id,
                  which ? "b" : "w",
                  slot == 0               ? ""
                  : (k == 1 || slot == 2) ? ".v"
                                          : ".m");
    return IPUP_OK;
}
IPUPIPE_DEF int ipup_tensor_find(ipup_emu *e, const char *name, ipup_tensor_info *out) {
    int32_t i, n = ipup_tensor_count(e);
    int rc = ipup__need_init(e, "ipup_tensor_find");
    if (rc) return rc;
    if (!name || !out)
        return ipup__efail(e, IPUP_ERR_ARG,
                           "ipup_tensor_find: %s is NULL; give a tensor name (such as "
                           "\"dense64.w\") and an ipup_tensor_info to fill",
                           !name ? "name" : "out");
    for (i = 0; i < n; i++) {
        if (ipup_tensor_get(e, i, out) == IPUP_OK && ipup__id_eq(out->name, name)) return IPUP_OK;
    }
    return ipup__efail(e, IPUP_ERR_MISMATCH,
                       "no tensor named \"%s\" in this model "
                       "(ipup_tensor_get lists the %d tensors)",
                       name, (int)n);
}
/* t and [first, first + n) checked for ipup_tensor_read (verb "read") / _write */
static int ipup__tensor_range(ipup_emu *e, const ipup_tensor_info *t, int32_t first,
                              int32_t n, const void *buf, const char *fn) {
    int rc = ipup__need_init(e, fn);
    if (rc) return rc;
    if (!t || !buf || (!t->data && !t->data_f16))
        return ipup__efail(e, IPUP_ERR_ARG,
                           "%s: %s is NULL; give a tensor from ipup_tensor_get and a buffer of "
                           "n floats",
                           fn, !t ? "the tensor" : !buf ? "the buffer" : "the tensor's storage");
    if (first < 0 || n < 0 || first > t->n || n > t->n - first)
        return ipup__efail(e, IPUP_ERR_ARG,
                           "%s: elements %d..%d are outside tensor %s's 0..%d; give first >= 0 "
                           "and first + n <= %d",
                           fn, (int)first, (int)first + (int)n - 1, t->name, (int)t->n - 1,
                           (int)t->n);
    return IPUP_OK;
}
IPUPIPE_DEF int ipup_tensor_read(ipup_emu *e, const ipup_tensor_info *t, int32_t first,
                                 int32_t n, float *out) {
    int rc = ipup__tensor_range(e, t, first, n, out, "ipup_tensor_read");
    if (rc) return rc;
    if (t->data) IPUPIPE_MEMCPY(out, t->data + first, (size_t)n * sizeof(float));
    else ipup_f16_to_f32((int)n, t->data_f16 + first, out);
    return IPUP_OK;
}
IPUPIPE_DEF int ipup_tensor_write(ipup_emu *e, const ipup_tensor_info *t, int32_t first,
                                  int32_t n, const float *in) {
    int rc = ipup__tensor_range(e, t, first, n, in, "ipup_tensor_write");
    if (rc) return rc;
    if (t->data && t->data + first != in)
        IPUPIPE_MEMCPY(t->data + first, in, (size_t)n * sizeof(float));
    else if (!t->data) ipup_f32_to_f16((int)n, in, t->data_f16 + first);
    return IPUP_OK;
}
IPUPIPE_DEF int ipup_replicas_sync(ipup_emu *e) {
    int32_t r, s;
    int rc = ipup__need_init(e, "ipup_replicas_sync");
    if (rc) return rc;
    for (r = 1; r < e->core.R; r++) {
        for (s = 0; s < e->core.S; s++) {
            if (e->core.n_branches[s] > 1) continue; /* its lanes: below */
            if (e->stage_rt[0][s].hparams)
                IPUPIPE_MEMCPY(e->stage_rt[r][s].hparams, e->stage_rt[0][s].hparams,
                               e->core.stages[s].n_params * sizeof(uint16_t));
            else
                IPUPIPE_MEMCPY(e->stage_rt[r][s].params, e->stage_rt[0][s].params,
                               e->core.stages[s].n_params * sizeof(float));
            if (e->core.stages[s].n_state)
                IPUPIPE_MEMCPY(e->stage_rt[r][s].state, e->stage_rt[0][s].state,
                               e->core.stages[s].n_state * sizeof(float));
        }
        for (s = 0; s < e->core.n_lanes; s++) { /* the branches of concurrent stages */
            IPUPIPE_MEMCPY(e->lane_rt[r][s].params, e->lane_rt[0][s].params,
                           e->core.lanes[s].n_params * sizeof(float));
            if (e->core.lanes[s].n_state)
                IPUPIPE_MEMCPY(e->lane_rt[r][s].state, e->lane_rt[0][s].state,
                               e->core.lanes[s].n_state * sizeof(float));
        }
    }
    return IPUP_OK;
}
IPUPIPE_DEF int64_t ipup_get_step(const ipup_emu *e) { return e ? e->step : 0; }
IPUPIPE_DEF int ipup_set_step(ipup_emu *e, int64_t step) {
    int rc = ipup__need_init(e, "ipup_set_step");
    if (rc) return rc;
    if (step < 0 || step > ipup__step_cap(&e->core))
        return ipup__efail(e, IPUP_ERR_ARG,
                           "ipup_set_step: step %lld is outside 0..%lld, the steps this "
                           "configuration can count (Adam counts steps in an int; the sample "
                           "index step x R x M x B must fit 64 bits)",
                           (long long)step, (long long)ipup__step_cap(&e->core));
    e->step = step;
    return IPUP_OK;
}
IPUPIPE_DEF int ipup_set_learning_rate(ipup_emu *e, float lr) {
    char num[48];
    if (!e) return IPUP_ERR_ARG;
    if (!(lr > 0.0f && lr <= 3.4e38f))
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_set_learning_rate: the learning "
                          "rate is %s: it must be a finite number > 0",
                          ipup__num(num, sizeof num, (double)lr));
    e->core.cfg.opt.lr = lr;
    return IPUP_OK;
}
IPUPIPE_DEF float ipup_loss_scale(const ipup_emu *e) {
    if (!e || !e->initialised) return 0.0f;
    return ipup__ls(e, 0);
}

/* >>state: the state stream: writer, reader, checks (docs/state.md) */
/* Stream layout and guarantees: docs/state.md. Every integer and float little-endian. */
#define IPUP__ST_HEAD 48u                        /* header bytes; the descriptor follows */
#define IPUP__ST_MAX ((uint64_t)1 << 40)          /* a larger total is damage */
#define IPUP__ST_NOT \
    " (the state was saved from another model, optimizer, stage split or map of concurrent " \
    "stages (the tools' --map): load it into an emulator configured as the saving one was)"

/* CRC-32 of IEEE 802.3 (also zlib's and PNG's): reflected polynomial 0xEDB88320, initial
   value and final xor 0xFFFFFFFF. Four bits at a time from a 16-entry table. */
static uint32_t ipup__crc32(uint32_t crc, const unsigned char *p, size_t n) {
    static const uint32_t t[16] = { 0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu,
                                    0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
                                    0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
                                    0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu };
    size_t i;
    for (i = 0; i < n; i++) {
        crc ^= p[i];
        crc = (crc >> 4) ^ t[crc & 15u];
        crc = (crc >> 4) ^ t[crc & 15u];
    }
    return crc;
}
static void ipup__le32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}
static uint32_t ipup__get32(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t ipup__get64(const unsigned char *p) {
    return (uint64_t)ipup__get32(p) | ((uint64_t)ipup__get32(p + 4) << 32);
}
static uint32_t ipup__fbits(float f) { uint32_t u; IPUPIPE_MEMCPY(&u, &f, 4); return u; }
static float ipup__bitsf(uint32_t u) { float f; IPUPIPE_MEMCPY(&f, &u, 4); return f; }

/* "784x256" into out[cap] */
static const char *ipup__shape_str(char *out, size_t cap, int32_t ndim, const uint32_t *dims) {
    size_t k = 0;
    int32_t d;
    out[0] = 0;
    for (d = 0; d < ndim && k < cap; d++)
        k += (size_t)ipup_snprintf(out + k, cap - k, "%s%u", d ? "x" : "", (unsigned)dims[d]);
    return out;
}

/* The writer: a chunk buffer in front of write, the CRC and the count of every byte.
   write == NULL only counts (ipup_state_bytes). */
typedef struct ipup__state_writer {
    ipup_write_fn write;
    void *user;
    uint64_t n;
    uint32_t crc;
    int failed;
    size_t len;
    unsigned char buf[IPUP_STATE_CHUNK];
} ipup__state_writer;
static void ipup__save_flush(ipup__state_writer *w) {
    if (w->len && w->write && !w->failed && w->write(w->user, w->buf, w->len) != 0) w->failed = 1;
    w->len = 0;
}
static void ipup__save_put(ipup__state_writer *w, const void *src, size_t n) {
    const unsigned char *p = (const unsigned char *)src;
    w->crc = ipup__crc32(w->crc, p, n);
    w->n += n;
    if (!w->write) return;
    while (n) {
        size_t k = IPUP_STATE_CHUNK - w->len < n ? IPUP_STATE_CHUNK - w->len : n;
        IPUPIPE_MEMCPY(w->buf + w->len, p, k);
        w->len += k;
        p += k;
        n -= k;
        if (w->len == IPUP_STATE_CHUNK) ipup__save_flush(w);
    }
}
static void ipup__save_u32(ipup__state_writer *w, uint32_t v) {
    unsigned char b[4];
    ipup__le32(b, v);
    ipup__save_put(w, b, 4);
}
static void ipup__save_u8(ipup__state_writer *w, uint32_t v) {
    unsigned char b = (unsigned char)v;
    ipup__save_put(w, &b, 1);
}

/* The kinds from IPUP_LAYER_CONV2D on add to their descriptor entry a CRC-32 of what else
   decides their values: kernel, strides, padding, leaky's alpha, batch norm's momentum and eps (the
   layers before them have none, so their descriptors keep their bytes). */
static uint32_t ipup__geom_word(const ipup_layer *L) {
    unsigned char b[32];
    ipup__le32(b, (uint32_t)L->kh); ipup__le32(b + 4, (uint32_t)L->kw);
    ipup__le32(b + 8, (uint32_t)L->sh); ipup__le32(b + 12, (uint32_t)L->sw);
    ipup__le32(b + 16, (uint32_t)L->same); ipup__le32(b + 20, ipup__fbits(L->alpha));
    ipup__le32(b + 24, ipup__fbits(L->momentum)); ipup__le32(b + 28, ipup__fbits(L->eps));
    return ipup__crc32(0xFFFFFFFFu, b, sizeof b) ^ 0xFFFFFFFFu;
}
/* The descriptor: what decides the tensors and what their values mean. */
static void ipup__st_desc(const ipup_emu *e, ipup__state_writer *w) {
    int32_t l, s;
    ipup__save_u32(w, (uint32_t)e->core.model.in_h);
    ipup__save_u32(w, (uint32_t)e->core.model.in_w);
    ipup__save_u32(w, (uint32_t)e->core.model.in_c);
    ipup__save_u32(w, (uint32_t)e->core.n_layers);
    for (l = 0; l < e->core.n_layers; l++) {
        const ipup_layer *L = &e->core.model.layers[l];
        size_t n = 0;
        while (L->id[n]) n++;
        ipup__save_u8(w, (uint32_t)L->kind);
        ipup__save_u32(w, (uint32_t)L->units);
        ipup__save_u8(w, (uint32_t)n);
        ipup__save_put(w, L->id, n);
        if (L->kind >= IPUP_LAYER_CONV2D) ipup__save_u32(w, ipup__geom_word(L));
    }
    ipup__save_u32(w, (uint32_t)e->core.cfg.opt.kind);
    if (e->core.cfg.opt.kind == IPUP_OPT_MOMENTUM)
        ipup__save_u32(w, ipup__fbits(e->core.cfg.opt.momentum));
    if (e->core.cfg.opt.kind == IPUP_OPT_ADAM) {
        ipup__save_u32(w, ipup__fbits(e->core.cfg.opt.beta1));
        ipup__save_u32(w, ipup__fbits(e->core.cfg.opt.beta2));
    }
    ipup__save_u32(w, (uint32_t)e->core.S);
    for (s = 0; s < e->core.S; s++) ipup__save_u32(w, (uint32_t)e->core.stages[s].first);
}

/* The tensor records; their values only counted when w only counts. */
static void ipup__st_records(const ipup_emu *e, ipup__state_writer *w) {
    int32_t i, j, d, n = ipup_tensor_count(e);
    for (i = 0; i < n; i++) {
        ipup_tensor_info ti;
        size_t L = 0;
        ipup_tensor_get((ipup_emu *)(uintptr_t)e, i, &ti);
        while (ti.name[L]) L++;
        ipup__save_u8(w, (uint32_t)L);
        ipup__save_put(w, ti.name, L);
        ipup__save_u8(w, ti.kind == IPUP_TENSOR_PARAM ? 0u : 1u);
        ipup__save_u8(w, (uint32_t)ti.ndim);
        for (d = 0; d < ti.ndim; d++) ipup__save_u32(w, (uint32_t)ti.shape[d]);
        if (!w->write) { w->n += 4u * (uint64_t)ti.n; continue; }
        for (j = 0; j < ti.n && !w->failed; j++) {
            float v;
            if (ti.data) v = ti.data[j];
            else ipup_f16_to_f32(1, ti.data_f16 + j, &v);
            ipup__save_u32(w, ipup__fbits(v));
        }
    }
}

/* bytes of the descriptor and their CRC-32 (the fingerprint) */
static uint64_t ipup__st_desc_bytes(const ipup_emu *e, uint32_t *fingerprint) {
    ipup__state_writer w;
    w.write = NULL; w.n = 0; w.crc = 0xFFFFFFFFu; w.failed = 0; w.len = 0;
    ipup__st_desc(e, &w);
    if (fingerprint) *fingerprint = w.crc ^ 0xFFFFFFFFu;
    return w.n;
}
IPUPIPE_DEF size_t ipup_state_bytes(const ipup_emu *e) {
    ipup__state_writer w;
    if (!e || !e->initialised) return 0;
    w.write = NULL; w.n = 0; w.crc = 0xFFFFFFFFu; w.failed = 0; w.len = 0;
    ipup__st_records(e, &w);
    return (size_t)(IPUP__ST_HEAD + ipup__st_desc_bytes(e, NULL) + w.n + 4u);
}

IPUPIPE_DEF int ipup_state_save(ipup_emu *e, ipup_write_fn write, void *user) {
    ipup__state_writer w;
    unsigned char h[IPUP__ST_HEAD];
    uint32_t fp = 0;
    uint64_t D, total;
    if (!e) return IPUP_ERR_ARG;
    if (!write)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_state_save: the write callback is NULL");
    if (!e->initialised)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_state_save: the emulator is "
                          "not initialised (call ipup_init first)");
    D = ipup__st_desc_bytes(e, &fp);
    total = (uint64_t)ipup_state_bytes(e);
    IPUPIPE_MEMSET(h, 0, sizeof h);
    IPUPIPE_MEMCPY(h, "IPUPSTAT", 8);
    ipup__le32(h + 8, IPUP_STATE_VERSION);
    ipup__le32(h + 16, (uint32_t)total);
    ipup__le32(h + 20, (uint32_t)(total >> 32));
    ipup__le32(h + 24, (uint32_t)(uint64_t)e->step);
    ipup__le32(h + 28, (uint32_t)((uint64_t)e->step >> 32));
    ipup__le32(h + 32, fp);
    ipup__le32(h + 36, (uint32_t)D);
    ipup__le32(h + 40, (uint32_t)ipup_tensor_count(e));
    w.write = write; w.user = user; w.n = 0; w.crc = 0xFFFFFFFFu; w.failed = 0; w.len = 0;
    ipup__save_put(&w, h, sizeof h);
    ipup__st_desc(e, &w);
    ipup__st_records(e, &w);
    ipup__save_u32(&w, w.crc ^ 0xFFFFFFFFu);
    ipup__save_flush(&w);
    if (w.failed)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_IO,
                          "ipup_state_save: the write callback failed (%llu of %llu bytes "
                          "offered); the state is not saved",
                          (unsigned long long)w.n, (unsigned long long)total);
    e->core.msg[0] = 0;
    return IPUP_OK;
}

/* The reader: bytes [0, end) of the stream through read, a chunk at a time, with the
   CRC-32 of every byte delivered. */
typedef struct ipup__state_reader {
    ipup_read_fn read;
    void *user;
    uint64_t at, end;   /* offset of the next byte to fetch; the stream's length */
    uint32_t crc;
    int rc;             /* the failing read's return value (IPUP_STATE_END or other) */
    size_t pos, len;
    unsigned char buf[IPUP_STATE_CHUNK];
} ipup__state_reader;
static void ipup__load_init(ipup__state_reader *r, ipup_read_fn read, void *user, uint64_t end) {
    r->read = read;
    r->user = user;
    r->at = 0;
    r->end = end;
    r->crc = 0xFFFFFFFFu;
    r->rc = 0;
    r->pos = r->len = 0;
}
/* n bytes into dst (NULL: skipped, still in the CRC): 0, or -1 (r->rc: the read's code,
   IPUP_STATE_END also when the structure runs past end) */
static int ipup__load_get(ipup__state_reader *r, void *dst, size_t n) {
    unsigned char *p = (unsigned char *)dst;
    while (n) {
        size_t k;
        if (r->pos == r->len) {
            uint64_t left = r->end - r->at;
            size_t want = left < IPUP_STATE_CHUNK ? (size_t)left : IPUP_STATE_CHUNK;
            int rc;
            if (!want) { r->rc = IPUP_STATE_END; return -1; }
            if ((rc = r->read(r->user, r->at, r->buf, want)) != 0) { r->rc = rc; return -1; }
            r->at += want;
            r->pos = 0;
            r->len = want;
        }
        k = r->len - r->pos < n ? r->len - r->pos : n;
        r->crc = ipup__crc32(r->crc, r->buf + r->pos, k);
        if (p) { IPUPIPE_MEMCPY(p, r->buf + r->pos, k); p += k; }
        r->pos += k;
        n -= k;
    }
    return 0;
}
/* the message of a failed read at what */
static int ipup__load_fail(ipup_emu *e, const ipup__state_reader *r, const char *what) {
    if (r->rc == IPUP_STATE_END)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_CORRUPT,
                          "ipup_state_load: the stream is truncated: it ends in %s, before byte "
                          "%llu of the %llu its header gives (damaged or incomplete state)",
                          what,
                          (unsigned long long)(r->at + IPUP_STATE_CHUNK < r->end
                                                   ? r->at + IPUP_STATE_CHUNK
                                                   : r->end),
                          (unsigned long long)r->end);
    return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_IO,
                      "ipup_state_load: the read callback failed (returned %d) at byte %llu, in %s",
                      r->rc, (unsigned long long)r->at, what);
}

static int ipup__st_magic(const unsigned char *h) {
    static const char m[8] = {'I', 'P', 'U', 'P', 'S', 'T', 'A', 'T'};
    int i;
    for (i = 0; i < 8; i++) if (h[i] != (unsigned char)m[i]) return 0;
    return 1;
}
/* Pass 1: the header (magic, version, length) and the CRC-32 of the whole stream. */
static int ipup__st_integrity(ipup_emu *e, ipup_read_fn read, void *user, uint64_t *total,
                              uint32_t *body_crc) {
    ipup__state_reader r;
    unsigned char h[IPUP__ST_HEAD], b[4];
    uint32_t v, crc;
    ipup__load_init(&r, read, user, IPUP__ST_HEAD);
    if (ipup__load_get(&r, h, sizeof h) != 0) return ipup__load_fail(e, &r, "the header");
    if (!ipup__st_magic(h))
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_CORRUPT,
                          "ipup_state_load: not an ipupipe state: the magic is not IPUPSTAT "
                          "(another file, or a damaged stream)");
    if ((v = ipup__get32(h + 8)) != IPUP_STATE_VERSION)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_MISMATCH,
                          "ipup_state_load: the stream has format version %u, this library reads "
                          "version %u (save it again with this version of ipupipe)",
                          (unsigned)v, (unsigned)IPUP_STATE_VERSION);
    *total = ipup__get64(h + 16);
    if (*total < IPUP__ST_HEAD + 4u || *total > IPUP__ST_MAX || ipup__get32(h + 12) != 0 ||
        ipup__get32(h + 44) != 0 || (int64_t)ipup__get64(h + 24) < 0)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_CORRUPT,
                          "ipup_state_load: the header is damaged (length %llu, step %lld, "
                          "reserved fields %u and %u)",
                          (unsigned long long)*total, (long long)ipup__get64(h + 24),
                          (unsigned)ipup__get32(h + 12), (unsigned)ipup__get32(h + 44));
    ipup__load_init(&r, read, user, *total);
    if (ipup__load_get(&r, NULL, (size_t)(*total - 4u)) != 0)
        return ipup__load_fail(e, &r, "the body");
    crc = *body_crc = r.crc ^ 0xFFFFFFFFu;
    if (ipup__load_get(&r, b, 4) != 0) return ipup__load_fail(e, &r, "the CRC-32");
    if (ipup__get32(b) != crc)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_CORRUPT,
                          "ipup_state_load: the CRC-32 is %08x in the "
                          "stream but its bytes give %08x (damaged stream)",
                          (unsigned)ipup__get32(b), (unsigned)crc);
    return IPUP_OK;
}

/* a mismatch: "ipup_state_load: <what> (the state was saved from ...)" */
static int ipup__st_mismatch(ipup_emu *e, const char *what) {
    return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_MISMATCH, "ipup_state_load: %s%s",
                      what, IPUP__ST_NOT);
}
static int ipup__st_damaged(ipup_emu *e, const char *what) {
    return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_CORRUPT,
                      "ipup_state_load: %s (a damaged stream that passed its CRC-32, or not "
                      "written by ipup_state_save)",
                      what);
}
/* 1 when the n bytes are printable ASCII (names and ids) */
static int ipup__st_printable(const char *s, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e) return 0;
    return 1;
}
static const char *ipup__opt_name(uint32_t k) {
    return k == IPUP_OPT_SGD        ? "sgd"
           : k == IPUP_OPT_MOMENTUM ? "momentum"
           : k == IPUP_OPT_ADAM     ? "adam"
                                    : "unknown";
}
/* "dense256 (dense, 256 units)" or "relu1 (relu)" into out[cap] */
static const char *ipup__st_layer_str(char *out, size_t cap, const char *id, uint32_t kind,
                                      uint32_t units) {
    const char *k = ipup_layer_kind_name((ipup_layer_kind)kind);
    if (kind == IPUP_LAYER_DENSE || kind == IPUP_LAYER_CONV3X3)
        ipup_snprintf(out, cap, "%s (%s, %u units)", id, k, (unsigned)units);
    else ipup_snprintf(out, cap, "%s (%s)", id, k);
    return out;
}

/* The model part of the descriptor against e: the first difference. */
static int ipup__st_cmp_model(ipup_emu *e, ipup__state_reader *r) {
    unsigned char b[16];
    char what[300], fa[80], fb[80], id[IPUP_ID_MAX];
    uint32_t l, kind, units, L;
    if (ipup__load_get(r, b, 16) != 0) return ipup__load_fail(e, r, "the descriptor");
    if (ipup__get32(b) != (uint32_t)e->core.model.in_h ||
        ipup__get32(b + 4) != (uint32_t)e->core.model.in_w ||
        ipup__get32(b + 8) != (uint32_t)e->core.model.in_c) {
        ipup_snprintf(what, sizeof what,
                      "the model's input is %ux%ux%u in the file, %dx%dx%d in this emulator",
                      (unsigned)ipup__get32(b), (unsigned)ipup__get32(b + 4),
                      (unsigned)ipup__get32(b + 8), (int)e->core.model.in_h,
                      (int)e->core.model.in_w, (int)e->core.model.in_c);
        return ipup__st_mismatch(e, what);
    }
    if (ipup__get32(b + 12) != (uint32_t)e->core.n_layers) {
        ipup_snprintf(what, sizeof what, "the model has %u layers in the file, %d in this emulator",
                      (unsigned)ipup__get32(b + 12), (int)e->core.n_layers);
        return ipup__st_mismatch(e, what);
    }
    for (l = 0; l < (uint32_t)e->core.n_layers; l++) {
        const ipup_layer *Ly = &e->core.model.layers[l];
        if (ipup__load_get(r, b, 6) != 0) return ipup__load_fail(e, r, "the descriptor");
        kind = b[0];
        units = ipup__get32(b + 1);
        L = b[5];
        if (L == 0 || L >= IPUP_ID_MAX)
            return ipup__st_damaged(e, "a layer id of the descriptor has a bad length");
        if (ipup__load_get(r, id, L) != 0) return ipup__load_fail(e, r, "the descriptor");
        if (!ipup__st_printable(id, L))
            return ipup__st_damaged(e, "a layer id of the descriptor is not printable");
        id[L] = 0;
        if (kind != (uint32_t)Ly->kind || units != (uint32_t)Ly->units ||
            !ipup__id_eq(id, Ly->id)) {
            ipup_snprintf(what, sizeof what, "layer %u is %s in the file, %s in this emulator",
                          (unsigned)l, ipup__st_layer_str(fa, sizeof fa, id, kind, units),
                          ipup__st_layer_str(fb, sizeof fb, Ly->id, (uint32_t)Ly->kind,
                                             (uint32_t)Ly->units));
            return ipup__st_mismatch(e, what);
        }
        if (kind >= (uint32_t)IPUP_LAYER_CONV2D) {
            if (ipup__load_get(r, b, 4) != 0) return ipup__load_fail(e, r, "the descriptor");
            if (ipup__get32(b) != ipup__geom_word(Ly)) {
                ipup_snprintf(what, sizeof what,
                              "layer %u (%s) has another kernel, stride, padding, alpha, "
                              "momentum or eps in the file than in this emulator",
                              (unsigned)l, Ly->id);
                return ipup__st_mismatch(e, what);
            }
        }
    }
    return IPUP_OK;
}

/* The optimizer and the stage split of the descriptor against e. */
static int ipup__st_cmp_train(ipup_emu *e, ipup__state_reader *r) {
    unsigned char b[8];
    char what[300], na[48], nb[48];
    const ipup_optimizer *o = &e->core.cfg.opt;
    uint32_t k, s, n;
    if (ipup__load_get(r, b, 4) != 0) return ipup__load_fail(e, r, "the descriptor");
    if ((k = ipup__get32(b)) != (uint32_t)o->kind) {
        ipup_snprintf(what, sizeof what, "the optimizer is %s in the file, %s in this emulator",
                      ipup__opt_name(k), ipup__opt_name((uint32_t)o->kind));
        return ipup__st_mismatch(e, what);
    }
    n = k == IPUP_OPT_MOMENTUM ? 1u : k == IPUP_OPT_ADAM ? 2u : 0u;
    for (s = 0; s < n; s++) {
        float want = k == IPUP_OPT_MOMENTUM ? o->momentum : s == 0 ? o->beta1 : o->beta2;
        if (ipup__load_get(r, b, 4) != 0) return ipup__load_fail(e, r, "the descriptor");
        if (ipup__get32(b) != ipup__fbits(want)) {
            ipup_snprintf(what, sizeof what,
                          "the optimizer's %s is %s in the file, %s in this emulator",
                          k == IPUP_OPT_MOMENTUM ? "momentum"
                          : s == 0               ? "beta1"
                                                 : "beta2",
                          ipup__num(na, sizeof na, (double)ipup__bitsf(ipup__get32(b))),
                          ipup__num(nb, sizeof nb, (double)want));
            return ipup__st_mismatch(e, what);
        }
    }
    if (ipup__load_get(r, b, 4) != 0) return ipup__load_fail(e, r, "the descriptor");
    if ((n = ipup__get32(b)) != (uint32_t)e->core.S) {
        ipup_snprintf(what, sizeof what,
                      "the layers are split into %u stages in the file, %d in this emulator",
                      (unsigned)n, (int)e->core.S);
        return ipup__st_mismatch(e, what);
    }
    for (s = 0; s < n; s++) {
        if (ipup__load_get(r, b, 4) != 0) return ipup__load_fail(e, r, "the descriptor");
        if (ipup__get32(b) != (uint32_t)e->core.stages[s].first) {
            ipup_snprintf(what, sizeof what,
                          "stage %u begins at layer %u in the "
                          "file, at layer %d (%s) in this emulator",
                          (unsigned)s, (unsigned)ipup__get32(b), (int)e->core.stages[s].first,
                          e->core.model.layers[e->core.stages[s].first].id);
            return ipup__st_mismatch(e, what);
        }
    }
    return IPUP_OK;
}

/* The values of tensor ti through r: checked finite (check pass) or stored (apply). */
static int ipup__st_values(ipup_emu *e, ipup__state_reader *r, const ipup_tensor_info *ti,
                           int apply) {
    unsigned char b[4 * 64];
    char what[200];
    int32_t j = 0, k, c;
    while (j < ti->n) {
        c = ti->n - j < 64 ? ti->n - j : 64;
        if (ipup__load_get(r, b, 4 * (size_t)c) != 0)
            return ipup__load_fail(e, r, "a tensor's values");
        for (k = 0; k < c; k++, j++) {
            float v = ipup__bitsf(ipup__get32(b + 4 * k));
            if (apply && ti->data) ti->data[j] = v;
            else if (apply) ipup_f32_to_f16(1, &v, ti->data_f16 + j);
            else if (!(v - v == 0.0f)) {
                ipup_snprintf(what, sizeof what,
                              "tensor %s holds %s at element %d (a run that diverged was saved)",
                              ti->name, v != v ? "NaN" : "an infinity", (int)j);
                return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_CORRUPT,
                                  "ipup_state_load: %s", what);
            }
        }
    }
    return IPUP_OK;
}

/* Two optimizer-state records that differ where the layers agree: the descriptor has no
   frozen flags, so say that the frozen layers may differ, and which are frozen here. */
static const char *ipup__st_frozen_hint(const ipup_emu *e, char *h, size_t cap) {
    static const char lead[] = "; a layer frozen on one side and trained on the other has no "
                               "optimizer state on the frozen side (frozen in this emulator:";
    size_t k = 0;
    int32_t l, any = 0;
    k += (size_t)ipup_snprintf(h, cap, "%s", lead);
    for (l = 0; l < e->core.n_layers && k < cap; l++)
        if (e->core.layers[l].info.n_w && e->core.layers[l].info.frozen) {
            k += (size_t)ipup_snprintf(h + k, cap - k, "%s %s", any ? "," : "",
                                       e->core.model.layers[l].id);
            any = 1;
        }
    if (k < cap) ipup_snprintf(h + k, cap - k, "%s)", any ? "" : " none");
    return h;
}

/* A tensor name "w#k" is branch k of a concurrent stage (cfg.concurrent): when the
   records that differ have such names, the map of concurrent stages differs, and the
   hint says so and which side has the branches. */
static const char *ipup__st_branch_hint(const char *file_name, const char *mine) {
    int a = 0, b = 0;
    while (*file_name) a |= *file_name++ == '#';
    while (*mine) b |= *mine++ == '#';
    if (a && b)
        return "; a name ending #k is branch k of a concurrent stage: the file splits the stage "
               "over another set of IPUs (saved with another --map, cfg.concurrent)";
    if (a)
        return "; a name ending #k is branch k of a concurrent stage: the file was saved with "
               "that stage split over IPUs, this emulator has it whole (saved with another "
               "--map, cfg.concurrent, e.g. 0,[1,2],2,3)";
    if (b)
        return "; a name ending #k is branch k of a concurrent stage: this emulator splits the "
               "stage over IPUs, the file has it whole (saved with another --map, "
               "cfg.concurrent)";
    return "";
}

/* Record i's head (name, kind, shape) against tensor ti of e. */
static int ipup__st_cmp_record(ipup_emu *e, ipup__state_reader *r, int32_t i,
                               const ipup_tensor_info *ti) {
    unsigned char b[4 * 4];
    char name[IPUP_TENSOR_NAME_MAX], what[600], sa[64], sb[64], hint[192];
    uint32_t L, kind, rank, d, dims[4], mine[4];
    int differ;
    if (ipup__load_get(r, b, 1) != 0) return ipup__load_fail(e, r, "a tensor record");
    if ((L = b[0]) == 0 || L >= IPUP_TENSOR_NAME_MAX)
        return ipup__st_damaged(e, "a tensor name has a bad length");
    if (ipup__load_get(r, name, L) != 0 || ipup__load_get(r, b, 2) != 0)
        return ipup__load_fail(e, r, "a tensor record");
    if (!ipup__st_printable(name, L)) return ipup__st_damaged(e, "a tensor name is not printable");
    name[L] = 0;
    kind = b[0];
    rank = b[1];
    if (kind > 1 || rank < 1 || rank > 4)
        return ipup__st_damaged(e, "a tensor record has a bad kind or rank");
    if (ipup__load_get(r, b, 4 * (size_t)rank) != 0)
        return ipup__load_fail(e, r, "a tensor record");
    differ = !ipup__id_eq(name, ti->name) || kind != (ti->kind == IPUP_TENSOR_PARAM ? 0u : 1u) ||
             rank != (uint32_t)ti->ndim;
    for (d = 0; d < 4; d++) {
        dims[d] = d < rank ? ipup__get32(b + 4 * d) : 0;
        mine[d] = (uint32_t)ti->shape[d];
        if (d < rank && dims[d] != mine[d]) differ = 1;
    }
    if (!differ) return IPUP_OK;
    ipup_snprintf(what, sizeof what,
                  "tensor %d is %s (%s) in the file, %s (%s) in this emulator%s%s",
                  (int)i, name, ipup__shape_str(sa, sizeof sa, (int32_t)rank, dims), ti->name,
                  ipup__shape_str(sb, sizeof sb, ti->ndim, mine),
                  ipup__st_branch_hint(name, ti->name),
                  kind == 1u && ti->kind != IPUP_TENSOR_PARAM
                      ? ipup__st_frozen_hint(e, hint, sizeof hint)
                      : "");
    return ipup__st_mismatch(e, what);
}

/* One pass over [0, total - 4): header, descriptor and records against e, values
   checked (apply 0) or stored into replica 0 (apply 1). *crc: CRC-32 of those bytes,
   *step: the header's step. */
static int ipup__st_walk(ipup_emu *e, ipup_read_fn read, void *user, uint64_t total, int apply,
                         uint32_t *crc, uint64_t *step) {
    ipup__state_reader r;
    unsigned char h[IPUP__ST_HEAD];
    char what[200];
    uint32_t fp = 0, nf, i;
    int32_t ne = ipup_tensor_count(e);
    uint64_t D = ipup__st_desc_bytes(e, &fp), used;
    int rc;
    ipup__load_init(&r, read, user, total - 4u);
    if (ipup__load_get(&r, h, sizeof h) != 0) return ipup__load_fail(e, &r, "the header");
    if ((rc = ipup__st_cmp_model(e, &r)) != IPUP_OK || (rc = ipup__st_cmp_train(e, &r)) != IPUP_OK)
        return rc;
    if (ipup__get32(h + 36) != (uint32_t)D || ipup__get32(h + 32) != fp)
        return ipup__st_damaged(e, "the descriptor's length or fingerprint field disagrees with "
                                   "the descriptor");
    nf = ipup__get32(h + 40);
    for (i = 0; i < nf && (int32_t)i < ne; i++) {
        ipup_tensor_info ti;
        ipup_tensor_get(e, (int32_t)i, &ti);
        if ((rc = ipup__st_cmp_record(e, &r, (int32_t)i, &ti)) != IPUP_OK ||
            (rc = ipup__st_values(e, &r, &ti, apply)) != IPUP_OK)
            return rc;
    }
    if (nf != (uint32_t)ne) {
        ipup_snprintf(what, sizeof what,
                      "the file holds %u tensors, this emulator %d (the first %u agree)",
                      (unsigned)nf, (int)ne, (unsigned)i);
        return ipup__st_mismatch(e, what);
    }
    used = r.at - (uint64_t)(r.len - r.pos);
    if (used != total - 4u) {
        ipup_snprintf(what, sizeof what, "%llu bytes follow the last tensor record",
                      (unsigned long long)(total - 4u - used));
        return ipup__st_damaged(e, what);
    }
    *crc = r.crc ^ 0xFFFFFFFFu;
    *step = ipup__get64(h + 24);
    return IPUP_OK;
}

IPUPIPE_DEF int ipup_state_load(ipup_emu *e, ipup_read_fn read, void *user) {
    uint64_t total = 0;
    uint64_t step = 0;
    uint32_t crc0 = 0, crc1 = 0, crc2 = 0;
    int rc;
    if (!e) return IPUP_ERR_ARG;
    if (!read)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_state_load: the read callback is NULL");
    if (!e->initialised)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_ARG,
                          "ipup_state_load: the emulator is not initialised (call ipup_init with "
                          "the configuration the state was saved from first)");
    if ((rc = ipup__st_integrity(e, read, user, &total, &crc0)) != IPUP_OK) return rc;
    if ((rc = ipup__st_walk(e, read, user, total, 0, &crc1, &step)) != IPUP_OK) return rc;
    if (crc1 != crc0)
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_CORRUPT,
                          "ipup_state_load: the stream changed while it "
                          "was read (nothing was loaded); load it again");
    if (step > (uint64_t)ipup__step_cap(&e->core))
        return ipup__fail(e->core.msg, sizeof e->core.msg, IPUP_ERR_CORRUPT,
                          "ipup_state_load: the stream's step counter is %llu, above %lld, the "
                          "last step this configuration can count (a forged or damaged stream; "
                          "nothing was loaded)",
                          (unsigned long long)step, (long long)ipup__step_cap(&e->core));
    /* everything checked: from here on the state is written */
    rc = ipup__st_walk(e, read, user, total, 1, &crc2, &step);
    if (rc != IPUP_OK || crc2 != crc0)
        return ipup__fail(e->core.msg, sizeof e->core.msg,
                          rc == IPUP_ERR_IO ? IPUP_ERR_IO : IPUP_ERR_CORRUPT,
                          "ipup_state_load: the stream changed or failed while it was applied "
                          "(CRC-32 %08x, then %08x): the state is partly loaded; load a sound "
                          "state again or re-initialise",
                          (unsigned)crc0, (unsigned)crc2);
    ipup_replicas_sync(e);
    e->step = (int64_t)step;
    e->core.msg[0] = 0;
    return IPUP_OK;
}

/* >>trace: the Chrome trace of one step as the cost model sees it */
typedef struct ipup__trace_writer {   /* one trace event at a time into buf, then through write */
    ipup_write_fn write;
    void *user;
    int rc, first;
    char buf[512];
} ipup__trace_writer;
static void ipup__trace_emit(ipup__trace_writer *w, const char *text, size_t n) {
    if (w->rc == 0 && w->write(w->user, text, n) != 0) w->rc = IPUP_ERR_IO;
}
/* one event, preceded by ",\n" unless it is the first */
static IPUP__PRINTF(2, 3) void ipup__trace_event(ipup__trace_writer *w, const char *f, ...) {
    ipup__textbuf b;
    va_list ap;
    int n;
    b.buf = w->buf; b.cap = sizeof w->buf; b.len = 0;
    if (!w->first) ipup__textbuf_add(&b, ",\n");
    w->first = 0;
    va_start(ap, f);
    n = ipup_vsnprintf(w->buf + b.len, b.cap - b.len, f, ap);
    va_end(ap);
    if (n > 0) b.len += (size_t)n;
    if (w->rc == 0 && ipup__write_line(w->write, w->user, &b)) w->rc = IPUP_ERR_IO;
}
/* the events of op o of replica r (at `now`, for du seconds): its box, the exchange it
   starts at its end (xf > 0), the end of the exchange it consumes */
/* the layers of a stage op as events on the row under its box (tid 1): forward in layer
   order, backward in reverse (a recomputed forward first), each as long as its FLOPs */
static void ipup__trace_layers(const ipup_emu *e, ipup__trace_writer *w, const ipup_op *o,
                               int32_t pid, double t) {
    const ipup__stage *st = &e->core.stages[o->stage];
    double per = (double)e->core.B / ipup__rate(&e->core);
    char t0[32], t1[32];
    int32_t l, k, n = st->last - st->first;
    if (o->kind != IPUP_OP_F && ipup__rec(&e->core, o->stage)) {
        ipup__trace_event(w,
                          "{\"name\":\"recompute\",\"cat\":\"layer\",\"ph\":\"X\",\"pid\":%d,"
                          "\"tid\":1,\"ts\":%s,\"dur\":%s}",
                          (int)pid, ipup__us3(t0, sizeof t0, t * 1e6),
                          ipup__us3(t1, sizeof t1, (double)st->flops_f * per * 1e6));
        t += (double)st->flops_f * per;
    }
    for (k = 0; k < n; k++) {
        const ipup_layer_info *I;
        double f;
        l = o->kind == IPUP_OP_F ? st->first + k : st->last - 1 - k;
        I = &e->core.layers[l].info;
        f = o->kind == IPUP_OP_F   ? (double)I->flops_fwd
            : o->kind == IPUP_OP_W ? (double)I->flops_bwd_dw
                                   : (e->core.layers[l].need_dx ? (double)I->flops_bwd_dx : 0.0) +
                                         (o->kind == IPUP_OP_B ? (double)I->flops_bwd_dw : 0.0);
        if (f <= 0.0) continue;
        ipup__trace_event(w,
                          "{\"name\":\"%s\",\"cat\":\"layer\",\"ph\":\"X\",\"pid\":%d,\"tid\":1,"
                          "\"ts\":%s,\"dur\":%s}",
                          e->core.model.layers[l].id, (int)pid, ipup__us3(t0, sizeof t0, t * 1e6),
                          ipup__us3(t1, sizeof t1, f * per * 1e6));
        t += f * per;
    }
}

static void ipup__trace_op(const ipup_emu *e, ipup__trace_writer *w, const ipup_op *o, int32_t r,
                           double now, double du, double xf) {
    static const char *const cname[4] = { "thread_state_running", "thread_state_iowait", "terrible",
                                          "olive" };
    int32_t pid = r * e->core.P + o->device, ps = -1, fwd = 0;
    const char *kn = o->kind == IPUP_OP_F   ? "F"
                     : o->kind == IPUP_OP_B ? "B"
                     : o->kind == IPUP_OP_I ? "I"
                                            : "W";
    char t0[32], t1[32], tok[48];
    double in = o->kind == IPUP_OP_F && o->stage == 0 ? ipup__infeed_s(&e->core) : 0.0;
    ipup_sched_op_str(o, tok, sizeof tok); /* the CSV's name, as ipupipe-sched's trace */
    if (in > 0.0) /* the host infeed of the micro-batch, an event of its own before F(0,m) */
        ipup__trace_event(w,
                          "{\"name\":\"infeed\",\"cat\":\"infeed\",\"ph\":\"X\",\"pid\":%d,\"tid\":"
                          "0,\"ts\":%s,\"dur\":%s,"
                          "\"cname\":\"grey\",\"args\":{\"mb\":%d,\"step\":%d}}",
                          (int)pid, ipup__us3(t0, sizeof t0, now * 1e6),
                          ipup__us3(t1, sizeof t1, in * 1e6), (int)o->mb, (int)o->step);
    ipup__trace_event(w,
                      "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,\"ts\":%s,"
                      "\"dur\":%s,"
                      "\"cname\":\"%s\",\"args\":{\"stage\":%d,\"mb\":%d,\"step\":%d}}",
                      tok, kn, (int)pid, ipup__us3(t0, sizeof t0, (now + in) * 1e6),
                      ipup__us3(t1, sizeof t1, (du - in) * 1e6), cname[(o->kind - 1) & 3],
                      (int)o->stage, (int)o->mb, (int)o->step);
    ipup__trace_layers(e, w, o, pid, now + in);
    /* flows: start at the end of a producing op, finish at the consuming op */
    if (xf > 0.0) {
        int f = o->kind == IPUP_OP_F;
        long long id =
            (((long long)r * e->core.S + o->stage) * e->core.M + o->mb) * 2 + (f ? 0 : 1) + 1;
        ipup__trace_event(w,
                          "{\"name\":\"%s\",\"cat\":\"exchange\",\"ph\":\"s\",\"id\":%lld,\"pid\":%"
                          "d,\"tid\":0,\"ts\":%s}",
                          f ? "activations" : "gradients", id, (int)pid,
                          ipup__us3(t0, sizeof t0, (now + du) * 1e6));
    }
    if (o->kind == IPUP_OP_F && o->stage > 0 && e->core.stages[o->stage - 1].device != o->device) {
        ps = o->stage - 1;
        fwd = 1;
    }
    if ((o->kind == IPUP_OP_B || o->kind == IPUP_OP_I) && o->stage < e->core.S - 1 &&
        e->core.stages[o->stage + 1].device != o->device)
        ps = o->stage + 1;
    if (ps >= 0) {
        long long id =
            (((long long)r * e->core.S + ps) * e->core.M + o->mb) * 2 + (fwd ? 0 : 1) + 1;
        ipup__trace_event(w,
                          "{\"name\":\"%s\",\"cat\":\"exchange\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%"
                          "lld,\"pid\":%d,\"tid\":0,\"ts\":%s}",
                          fwd ? "activations" : "gradients", id, (int)pid,
                          ipup__us3(t0, sizeof t0, now * 1e6));
    }
}

IPUPIPE_DEF int ipup_trace_write(const ipup_emu *e, ipup_write_fn write, void *user) {
    ipup__trace_writer w;
    int32_t i = 0, r, q;
    double now = 0.0, sync;
    char t0[32], t1[32];
    int rc = ipup__need_init(e, "ipup_trace_write");
    if (rc) return rc;
    if (!write)
        return ipup__efail(e, IPUP_ERR_ARG,
                           "ipup_trace_write: write is NULL; give a write callback (ipup_buf_write "
                           "collects the text in memory)");
    w.write = write; w.user = user; w.rc = 0; w.first = 1;
    sync = ipup__sync_s(&e->core);
    ipup__trace_emit(&w, "{\"traceEvents\":[\n", 17);
    for (q = 0; q < e->core.n_ipus; q++)
        ipup__trace_event(&w,
                          "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":"
                          "\"IPU%d (replica %d, device %d)\"}}",
                          (int)q, (int)q, (int)(q / e->core.P), (int)(q % e->core.P));
    while (i < e->core.table.n_ops) {
        int32_t t = e->core.ops[i].step, k;
        double mx = 0.0, mxx = 0.0;
        for (k = i; k < e->core.table.n_ops && e->core.ops[k].step == t; k++) {
            double du, xf;
            ipup__op_cost(&e->core, &e->core.ops[k], &du, &xf);
            if (du > mx) mx = du;
            if (xf > mxx) mxx = xf;
            for (r = 0; r < e->core.R; r++) ipup__trace_op(e, &w, &e->core.ops[k], r, now, du, xf);
        }
        now += mx + mxx + sync;
        i = k;
    }
    for (q = 0; q < e->core.n_ipus; q++)
        ipup__trace_event(&w,
                          "{\"name\":\"update\",\"cat\":\"U\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,"
                          "\"ts\":%s,\"dur\":%s}",
                          (int)q, ipup__us3(t0, sizeof t0, now * 1e6),
                          ipup__us3(t1, sizeof t1, ipup__update_cost(&e->core, q % e->core.P) * 1e6));
    ipup__trace_emit(&w, "\n]}\n", 4);
    if (w.rc)
        return ipup__efail(e, w.rc,
                           "ipup_trace_write: the write callback failed "
                           "(returned non-zero); the trace is incomplete");
    return IPUP_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* IPUPIPE_EMU_IMPLEMENTED */
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
