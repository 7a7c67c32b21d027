#!/usr/bin/env bash
# tests/test_plan_tool.sh - build/ipupipe-plan: the header it writes compiles (included
# before ipupipe.h, so its IPUP_MAX_* limits shrink ipup_emu), its sizes are those of
# ipup_plan_config and ipup_plan_pools, a program inits with exactly those pools and is
# refused (IPUP_ERR_OOM, with a message) with one byte less in any IPU pool, the
# streaming pool or the host pool (IPUP_ERR_CAPACITY); -o writes complete files only;
# a named MNIST model gives the sizes of its own text; warnings; bad flags' messages.
# The header also carries the configuration: a program built from the header alone
# (pools declared IPUP_ALIGN64 from its sizes, ipup_config filled from its defines only)
# inits and runs one ipup_run. --help lists the tool's own options only; the recipes of
# the named models (examples/plan/plan_models.h) are the trainer's (mnist_models.h).
. "$(dirname "$0")/lib.sh"
tool=build/ipupipe-plan
make_tmp plan_tool
need_bin "$tool"
CC=${CC:-gcc}
WARN="-std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion -Wstrict-prototypes -Werror"


# The check program: the configuration comes as -D flags, the pools from the header.
cat >"$tmp/check.c" <<'EOF'
#include "plan.h" /* first: its IPUP_MAX_* limits size ipup_emu */
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h"
#include <stdio.h>
#include <string.h>
#define STR_(x) #x
#define STR(x) STR_(x)
static ipup_emu emu;
static ipup_model_desc model;
IPUP_ALIGN64 static uint8_t pool[IPUP_PLAN_IPUS][1u << 18];
IPUP_ALIGN64 static uint8_t stream[IPUP_PLAN_IPUS][1u << 18];
IPUP_ALIGN64 static uint8_t host[IPUP_PLAN_HOST_BYTES];
static uint8_t scratch[IPUP_PLAN_SCRATCH_BYTES(IPUP_PLAN_STAGES, CK_M)];
static const size_t ipu_bytes[] = IPUP_PLAN_IPU_BYTES_LIST;   /* per IPU */
static const size_t stream_bytes[] = IPUP_PLAN_STREAM_BYTES_LIST;
static const size_t ipu0 = IPUP_PLAN_IPU0_BYTES, stream0 = IPUP_PLAN_STREAM0_BYTES;
static int feed(void *u, const ipup_feed *f) { (void)u; (void)f; return 0; }
static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; printf("check failed: " __VA_ARGS__); printf("\n"); } } while (0)
/* init with every pool exactly as planned except `short_ipu` (or the stream pool, or the
   host pool) one byte less; the code */
static int try_init(ipup_config *c, int short_ipu, int short_stream, int short_host) {
    int i, rc;
    for (i = 0; i < IPUP_PLAN_IPUS; i++) {
        c->ipu[i].mem = pool[i];
        c->ipu[i].bytes = ipu_bytes[i] - (size_t)(i == short_ipu);
        c->stream[i].mem = stream_bytes[i] ? stream[i] : NULL;
        c->stream[i].bytes = stream_bytes[i] - (size_t)(i == short_stream);
    }
    c->host.mem = host;
    c->host.bytes = sizeof host - (size_t)short_host;
    memset(&emu, 0, sizeof emu);
    rc = ipup_init(&emu, c);
    if (rc != IPUP_OK && !ipup_last_error(&emu)[0]) CHECK(0, "refusal %d without a message", rc);
    ipup_shutdown(&emu);
    return rc;
}
int main(void) {
    static const int32_t split[] = {CK_SPLIT};
    ipup_config c;
    ipup_plan p1, p2;
    char msg[IPUP_MSG_MAX];
    int d, rc;
    memset(&c, 0, sizeof c);
    model.in_h = CK_H; model.in_w = CK_W; model.in_c = CK_C;
    if (ipup_model_parse(CK_MODEL, &model, msg, sizeof msg) != IPUP_OK) { printf("model: %s\n", msg); return 1; }
    c.model = &model; c.stages = IPUP_PLAN_STAGES; c.split = IPUP_PLAN_STAGES > 1 ? split : NULL;
    c.microbatch = CK_B; c.microbatches = CK_M; c.replicas = CK_R; c.repeat = CK_REPEAT;
    c.opt.kind = CK_OPT; c.offload = CK_OFFLOAD; c.recompute = CK_RECOMPUTE; c.schedule = CK_SCHED;
    c.infeed = feed;
    rc = ipup_plan_pools(&c, &p1, scratch, sizeof scratch, msg, sizeof msg);
    CHECK(rc == IPUP_OK, "ipup_plan_pools: %s", msg);
    c.host.mem = host; c.host.bytes = sizeof host;
    rc = ipup_plan_config(&emu, &c, &p2);
    CHECK(rc == IPUP_OK, "ipup_plan_config: %s", ipup_last_error(&emu));
    c.host.mem = NULL; c.host.bytes = 0;
    CHECK(memcmp(&p1, &p2, sizeof p1) == 0, "the two plans differ");
    CHECK(p1.devices == IPUP_PLAN_DEVICES && p1.ipus == IPUP_PLAN_IPUS && p1.host_bytes == IPUP_PLAN_HOST_BYTES, "counts");
    CHECK(sizeof ipu_bytes / sizeof ipu_bytes[0] == IPUP_PLAN_IPUS && ipu0 == ipu_bytes[0] && stream0 == stream_bytes[0], "the lists");
    for (d = 0; d < p1.ipus; d++)
        CHECK(p1.ipu_bytes[d % p1.devices] == ipu_bytes[d] && p1.stream_bytes[d % p1.devices] == stream_bytes[d] && ipu_bytes[d] <= sizeof pool[0],
              "IPU %d: plan %zu/%zu, header %zu/%zu", d, p1.ipu_bytes[d % p1.devices], p1.stream_bytes[d % p1.devices], ipu_bytes[d], stream_bytes[d]);
    CHECK(IPUP_MAX_LAYERS == (model.n_layers > 3 ? model.n_layers : 3) && IPUP_MAX_IPUS == IPUP_PLAN_IPUS && IPUP_MAX_DEVICES == IPUP_PLAN_DEVICES,
          "limits %d %d %d", IPUP_MAX_LAYERS, IPUP_MAX_IPUS, IPUP_MAX_DEVICES);
    rc = try_init(&c, -1, -1, 0);
    CHECK(rc == IPUP_OK, "init with the planned pools: %d %s", rc, ipup_last_error(&emu));
    for (d = 0; d < IPUP_PLAN_IPUS; d++) {
        rc = try_init(&c, d, -1, 0);
        CHECK(rc == IPUP_ERR_OOM && strstr(ipup_last_error(&emu), "out of memory"), "IPU%d one byte short: %d %s", d, rc, ipup_last_error(&emu));
        if (stream_bytes[d]) {
            rc = try_init(&c, -1, d, 0);
            CHECK(rc == IPUP_ERR_OOM && strstr(ipup_last_error(&emu), "streaming memory too small"), "stream %d short: %d", d, rc);
        }
    }
    rc = try_init(&c, -1, -1, 1);
    CHECK(rc == IPUP_ERR_CAPACITY && strstr(ipup_last_error(&emu), "host pool too small"), "host short: %d %s", rc, ipup_last_error(&emu));
    printf("sizeof(ipup_emu) %zu, IPU0 %zu bytes, %d IPUs: %s\n", sizeof(ipup_emu), ipu_bytes[0], IPUP_PLAN_IPUS, failures ? "FAILED" : "ok");
    return failures != 0;
}
EOF

# plan NAME CK_DEFINES -- TOOL ARGS: the header, then the check program built on it
plan() {
  local name=$1 defs=$2
  shift 3
  if ! "$tool" "$@" -o "$tmp/plan.h" 2>"$tmp/err"; then bad "$name: the tool failed" "$tmp/err"; return; fi
  # shellcheck disable=SC2086
  if ! $CC $WARN -O2 -I. -I"$tmp" $defs "$tmp/check.c" -o "$tmp/check" -lm -lpthread 2>"$tmp/cc.log"; then
    bad "$name: the header does not compile into the check program" "$tmp/cc.log"; return
  fi
  if "$tmp/check" >"$tmp/check.log"; then ok "$name: $(tail -1 "$tmp/check.log")"; else bad "$name" "$tmp/check.log"; fi
}

base='-DCK_H=1 -DCK_W=1 -DCK_REPEAT=1 -DCK_RECOMPUTE=0 -DCK_SCHED=IPUP_SCHED_GROUPED'
plan "2 stages, SGD" "$base -DCK_MODEL=\"dense64,relu,dense32,relu,dense10,xent\" -DCK_C=196 -DCK_SPLIT=2 -DCK_B=8 -DCK_M=4 -DCK_R=1 -DCK_OPT=IPUP_OPT_SGD -DCK_OFFLOAD=0" -- \
  --model dense64,relu,dense32,relu,dense10,xent --input 1x1x196 --splits dense32 --batch-size 8 --batches-to-accumulate 4 --optimizer sgd
plan "2 stages x 2 replicas, Adam offloaded" "$base -DCK_MODEL=\"dense32,relu,dense16,relu,dense4,xent\" -DCK_C=64 -DCK_SPLIT=3 -DCK_B=4 -DCK_M=8 -DCK_R=2 -DCK_OPT=IPUP_OPT_ADAM -DCK_OFFLOAD=1" -- \
  --model dense32,relu,dense16,relu,dense4,xent --input 1x1x64 --splits relu_2 --batch-size 4 --batches-to-accumulate 8 --replicas 2 --optimizer adam --offload
has "2 replicas: IPU3's pool" "#define IPUP_PLAN_IPU3_BYTES" "$tmp/plan.h"
plan "1 stage, momentum" "-DCK_H=8 -DCK_W=8 -DCK_REPEAT=3 -DCK_RECOMPUTE=0 -DCK_SCHED=IPUP_SCHED_GROUPED -DCK_MODEL=\"conv4,relu,maxpool2,flatten,dense3,xent\" -DCK_C=2 -DCK_SPLIT=1 -DCK_B=2 -DCK_M=2 -DCK_R=1 -DCK_OPT=IPUP_OPT_MOMENTUM -DCK_OFFLOAD=0" -- \
  --model conv4,relu,maxpool2,flatten,dense3,xent --input 8x8x2 --splits none --batch-size 2 --batches-to-accumulate 2 --repeat-count 3 --optimizer momentum
plan "3 stages, 1f1b, recompute" "-DCK_H=1 -DCK_W=1 -DCK_REPEAT=1 -DCK_RECOMPUTE=1 -DCK_SCHED=IPUP_SCHED_1F1B -DCK_MODEL=\"dense16,relu,dense16,relu,dense8,relu,dense2,xent\" -DCK_C=20 -DCK_SPLIT=2,4 -DCK_B=3 -DCK_M=6 -DCK_R=1 -DCK_OPT=IPUP_OPT_SGD -DCK_OFFLOAD=0" -- \
  --model dense16,relu,dense16,relu,dense8,relu,dense2,xent --input 1x1x20 --splits dense16_2 dense8 --schedule 1f1b --batch-size 3 --batches-to-accumulate 6 --recompute --optimizer sgd

# the header in stdout equals the file -o wrote; a refused run leaves the file as it was
args=(--model dense8,relu,dense4,xent --input 1x1x8 --splits dense4 --batches-to-accumulate 4)
"$tool" "${args[@]}" >"$tmp/stdout.h" 2>/dev/null
"$tool" "${args[@]}" -o "$tmp/file.h" 2>/dev/null
if cmp -s "$tmp/stdout.h" "$tmp/file.h"; then ok "-o writes what stdout shows"; else bad "-o and stdout differ"; fi
cp "$tmp/file.h" "$tmp/before.h"
expect 2 "a refused configuration with -o" -- --model dense8,relu,dense4,xent --input 1x1x8 --batch-size 0 -o "$tmp/file.h"
if cmp -s "$tmp/before.h" "$tmp/file.h"; then ok "a refused run leaves the -o file as it was"; else bad "the -o file changed"; fi
if ls "$tmp" | grep -q '\.tmp$'; then bad "a temporary file was left behind"; else ok "no temporary file left"; fi
expect 1 "-o into a missing directory" -- "${args[@]}" -o "$tmp/no/such/dir/plan.h"
has "-o into a missing directory says why" "ipupipe-plan: error: -o: cannot create" "$tmp/err"

# a named model: its recipe, and the sizes of its text with that recipe given as flags
"$tool" --model mlp >"$tmp/mlp.h" 2>"$tmp/err" || bad "--model mlp" "$tmp/err"
"$tool" --model flatten,dense256,relu,dense128,relu,dense64,relu,dense32,relu,dense10,xent --input 28x28x1 \
  --splits dense32 --batch-size 32 --batches-to-accumulate 16 --repeat-count 10 --optimizer momentum >"$tmp/mlptext.h" 2>"$tmp/err" ||
  bad "the mlp as text" "$tmp/err"
if diff <(grep '^#define IPUP_PLAN' "$tmp/mlp.h") <(grep '^#define IPUP_PLAN' "$tmp/mlptext.h") >"$tmp/diff"; then
  ok "--model mlp plans as its text with its recipe ($(grep -c '^#define' "$tmp/mlp.h") defines)"
else bad "--model mlp and its text differ" "$tmp/diff"; fi
has "--model mlp: the recipe's 16 micro-batches in the comment" "micro-batch 32 x 16 micro-batches" "$tmp/mlp.h"

# warnings: to stderr as ipupipe-sched prints them, and into the header's comment
expect 0 "Grouped with M=3" -- --model dense8,relu,dense4,xent --input 1x1x8 --splits dense4 --batches-to-accumulate 3
has "the Grouped rule on stderr" "warnings:" "$tmp/err"
has "the Grouped rule in the header" "warning: PipelineSchedule.Grouped: gradient_accumulation_count (M=3)" "$tmp/out"
expect 2 "Grouped with M=3 under --strict" -- --model dense8,relu,dense4,xent --input 1x1x8 --splits dense4 --batches-to-accumulate 3 --strict
has "--strict says why" "must be a multiple of 2 x the number of pipeline stages" "$tmp/err"

# bad flags
expect 0 "--help" -- --help
has "--help shows the header's names" "IPUP_PLAN_IPU<i>_BYTES" "$tmp/out"
has "--help lists --batches-to-accumulate (a synonym of --microbatches)" "--batches-to-accumulate" "$tmp/out"
has "--help lists --microbatches" "--microbatches M" "$tmp/out"
for o in --data --epochs --save --learning-rate --export-c --summary-json; do
  if grep -qF -- "$o" "$tmp/out"; then bad "--help lists the trainer's $o" "$tmp/out"; else ok "--help does not list $o"; fi
done
expect 0 "-h" -- -h
has "-h is --help" "usage: ipupipe-plan" "$tmp/out"
expect 2 "a model text without --input" -- --model dense8,xent
has "without --input says why" "needs --input HxWxC" "$tmp/err"
expect 2 "--input 28x28" -- --model dense8,xent --input 28x28
has "--input 28x28 says why" "--input needs HxWxC, three integers in 1..65535" "$tmp/err"
expect 2 "--input 0x1x1" -- --model dense8,xent --input 0x1x1
expect 2 "--input without a value" -- --model dense8,xent --input
has "--input without a value says why" "--input needs a value" "$tmp/err"
expect 2 "-o without a value" -- --model mlp -o
has "-o without a value says why" "-o needs a value" "$tmp/err"
expect 2 "an unknown option" -- --model mlp --frobnicate
has "an unknown option is named" "ipupipe-plan: error: unknown option '--frobnicate'" "$tmp/err"
expect 2 "a model that does not parse" -- --model dense8,bogus,xent --input 1x1x4
has "a bad model is named" "is neither mlp, cnn nor mlp-gelu, nor a model text" "$tmp/err"
expect 2 "a model that does not fit its input" -- --model conv8,relu,maxpool2,flatten,dense2,xent --input 2x2x1
has "a model too large for its input says why" "--model conv8,relu,maxpool2,flatten,dense2,xent on --input 2x2x1" "$tmp/err"
expect 2 "--splits of an unknown layer" -- --model dense8,relu,dense4,xent --input 1x1x8 --splits dense99
has "--splits names the layers" "the layers of model text are" "$tmp/err"
expect 2 "--batch-size 0" -- --model mlp --batch-size 0
has "--batch-size 0 says why" "--batch-size needs an integer in 1..4096" "$tmp/err"
expect 2 "--schedule nope" -- --model mlp --schedule nope
has "--schedule nope says why" "--schedule: unknown 'nope'" "$tmp/err"
# trainer-only and malformed options: exit 2 and a message naming the option and the fix
expect 2 "a trainer option (--epochs)" -- --model mlp --epochs 3
has "--epochs is named as the trainer's" "unknown option '--epochs': --epochs is build/mnist-train's and does not change the pools; leave it out" "$tmp/err"
expect 2 "a trainer option (--data)" -- --model mlp --data data/mnist
has "--data is named" "unknown option '--data'" "$tmp/err"
expect 2 "a trainer option (--save=x)" -- --model mlp --save=x.ckpt
has "--save=x is named" "unknown option '--save=x.ckpt': --save is build/mnist-train's" "$tmp/err"
expect 2 "--stages without --splits auto" -- --model mlp --stages 3
has "--stages says what it needs" "--stages 3 is the stage count of --splits auto; add --splits auto" "$tmp/err"
expect 2 "a switch with a value" -- --model mlp --recompute=1
has "a switch with a value says so" "--recompute takes no value" "$tmp/err"
expect 2 "--optimizer nope" -- --model mlp --optimizer nope
has "--optimizer nope says why" "--optimizer: unknown 'nope' (sgd, momentum or adam)" "$tmp/err"
expect 2 "--runner nope" -- --model mlp --runner nope
has "--runner nope says why" "--runner: unknown 'nope' (coop or threads)" "$tmp/err"
expect 2 "--microbatches 0" -- --model mlp --microbatches 0
has "--microbatches 0 says why" "--microbatches needs an integer in 1..65536" "$tmp/err"
expect 2 "a positional argument" -- --model mlp pools.h
has "a positional argument is named" "unexpected argument 'pools.h'" "$tmp/err"
expect 2 "--map with the wrong stage count" -- --model mlp --map 0,1,2
has "--map says how many" "--map gives 3 IPUs, but the pipeline has 2 stages" "$tmp/err"
expect 2 "--ipus not a multiple of one replica's IPUs" -- --model mlp --ipus 3
has "--ipus 3 says which counts work" "--ipus: 3 IPUs" "$tmp/err"
expect 2 "--ipus and --replicas disagree" -- --model mlp --ipus 4 --replicas 3
has "the disagreement is named" "--ipus 4 and --replicas 3 disagree" "$tmp/err"

# --microbatches and its synonyms; --ipus gives replicas; --map and a model text
"$tool" --model mlp --microbatches 8 >"$tmp/a.h" 2>/dev/null
"$tool" --model mlp --batches-to-accumulate 8 >"$tmp/b.h" 2>/dev/null
"$tool" --model mlp --gradient-accumulation=8 >"$tmp/c.h" 2>/dev/null
if diff <(grep '^#define' "$tmp/a.h") <(grep '^#define' "$tmp/b.h") >/dev/null && diff <(grep '^#define' "$tmp/a.h") <(grep '^#define' "$tmp/c.h") >/dev/null &&
  grep -q '^#define IPUP_PLAN_MICROBATCHES 8 ' "$tmp/a.h"; then
  ok "--microbatches, --batches-to-accumulate and --gradient-accumulation are one option"
else bad "the micro-batch synonyms differ" "$tmp/a.h"; fi
expect 0 "--ipus 4 on 2 stages" -- --model mlp --ipus 4
has "--ipus 4: 2 replicas" "#define IPUP_PLAN_REPLICAS 2" "$tmp/out"
has "--ipus 4: 4 IPUs" "#define IPUP_PLAN_IPUS 4" "$tmp/out"
expect 0 "--map 1,0 on a model text" -- --model dense8,relu,dense4,xent --input 1x1x8 --splits dense4 --map 1,0 --microbatches 4
has "--map 1,0 moves stage 0 to IPU1" "#define IPUP_PLAN_STAGE_DEVICE_LIST {1, 0}" "$tmp/out"
has "--map is in the header" '#define IPUP_PLAN_MAP_TEXT "1,0"' "$tmp/out"

# the configuration defines
"$tool" --model dense32,relu,dense16,relu,dense4,xent --input 1x1x64 --splits relu_2 --batch-size 4 --microbatches 8 \
  --replicas 2 --optimizer adam --offload --recompute --schedule 1f1b --runner threads --repeat-count 3 >"$tmp/cfg.h" 2>"$tmp/err" ||
  bad "the configuration header" "$tmp/err"
for d in '#define IPUP_PLAN_MODEL_TEXT "dense32,relu,dense16,relu,dense4,xent"' '#define IPUP_PLAN_INPUT_C 64' \
  '#define IPUP_PLAN_BATCH 4 ' '#define IPUP_PLAN_MICROBATCHES 8 ' '#define IPUP_PLAN_REPEAT 3 ' \
  '#define IPUP_PLAN_SCHEDULE IPUP_SCHED_1F1B ' '#define IPUP_PLAN_SPLIT_LIST {3}' '#define IPUP_PLAN_OPTIMIZER IPUP_OPT_ADAM ' \
  '#define IPUP_PLAN_RECOMPUTE 1 ' '#define IPUP_PLAN_OFFLOAD 1 ' '#define IPUP_PLAN_RUNNER IPUP_RUNNER_THREADS ' \
  '#define IPUP_PLAN_REPLICAS 2' 'IPUP_ALIGN64' 'an unaligned pool needs up to 63 bytes more'; do
  has "the header has: $d" "$d" "$tmp/cfg.h"
done
"$tool" --model mlp >"$tmp/mlp.h" 2>/dev/null
has "a named model's text is IPUP_PLAN_MODEL_TEXT" '#define IPUP_PLAN_MODEL_TEXT "flatten,dense256,relu,dense128,relu,dense64,relu,dense32,relu,dense10,xent"' "$tmp/mlp.h"
has "a named model's input" "#define IPUP_PLAN_INPUT_H 28" "$tmp/mlp.h"

# A program from the generated header alone: pools declared IPUP_ALIGN64 from its
# sizes, ipup_config filled from its defines only, ipup_init and one ipup_run with a
# synthetic infeed.
cat >"$tmp/app.c" <<'EOF'
#include "plan.h" /* first: its IPUP_MAX_* limits size ipup_emu */
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#if IPUP_PLAN_IPUS > 4
#error "this test program declares at most 4 IPU pools"
#endif
#define NZ(n) ((n) + ((n) == 0)) /* the array of a pool of 0 bytes (no stage, no offload): 1 byte, unused */
IPUP_ALIGN64 static uint8_t ipu0[NZ(IPUP_PLAN_IPU0_BYTES)], stream0[NZ(IPUP_PLAN_STREAM0_BYTES)];
#if IPUP_PLAN_IPUS > 1
IPUP_ALIGN64 static uint8_t ipu1[NZ(IPUP_PLAN_IPU1_BYTES)], stream1[NZ(IPUP_PLAN_STREAM1_BYTES)];
#endif
#if IPUP_PLAN_IPUS > 2
IPUP_ALIGN64 static uint8_t ipu2[NZ(IPUP_PLAN_IPU2_BYTES)], stream2[NZ(IPUP_PLAN_STREAM2_BYTES)];
#endif
#if IPUP_PLAN_IPUS > 3
IPUP_ALIGN64 static uint8_t ipu3[NZ(IPUP_PLAN_IPU3_BYTES)], stream3[NZ(IPUP_PLAN_STREAM3_BYTES)];
#endif
IPUP_ALIGN64 static uint8_t host[IPUP_PLAN_HOST_BYTES];
static ipup_emu emu;
static ipup_model_desc model;
static ipup_stage_map cmap;
static const int32_t split[] = IPUP_PLAN_SPLIT_LIST;
static const int16_t stage_device[] = IPUP_PLAN_STAGE_DEVICE_LIST;

static void pool(ipup_pool *p, uint8_t *mem, size_t bytes) {
    p->mem = mem; /* an IPU that runs no stage has a pool of 0 bytes, but a pool */
    p->bytes = bytes;
}
/* a synthetic sample: class s % classes with a pattern of its own; regression: a ramp */
static int feed(void *user, const ipup_feed *f) {
    int32_t i, k;
    (void)user;
    for (i = 0; i < f->n; i++) {
        int64_t s = f->sample0 + i;
        int32_t cls = f->classes ? (int32_t)(s % f->classes) : 0;
        for (k = 0; k < f->row; k++)
            f->x[i * f->row + k] = (float)((s * 7 + k * 3) % 11) * 0.05f + (k % (cls + 2) == 0 ? 0.5f : 0.0f);
        if (f->labels) f->labels[i] = cls;
        if (f->targets)
            for (k = 0; k < f->target_width; k++) f->targets[i * f->target_width + k] = (float)((s + k) % 5) * 0.1f;
    }
    return 0;
}
int main(void) {
    ipup_config c;
    ipup_run_stats st;
    char msg[IPUP_MSG_MAX];
    int rc;
    memset(&c, 0, sizeof c);
    if (ipup_model_parse(IPUP_PLAN_MODEL_TEXT, &model, msg, sizeof msg) != IPUP_OK) { printf("model: %s\n", msg); return 1; }
    model.in_h = IPUP_PLAN_INPUT_H; model.in_w = IPUP_PLAN_INPUT_W; model.in_c = IPUP_PLAN_INPUT_C;
    c.model = &model;
    c.stages = IPUP_PLAN_STAGES;
    c.split = IPUP_PLAN_STAGES > 1 ? split : NULL;
    if (IPUP_PLAN_MAP_TEXT[0] && IPUP_PLAN_MAP_CONCURRENT) {
        if (ipup_sched_map_parse(IPUP_PLAN_MAP_TEXT, &cmap, msg, sizeof msg) < 0) { printf("map: %s\n", msg); return 1; }
        c.concurrent = &cmap;
    } else if (IPUP_PLAN_MAP_TEXT[0]) {
        c.stage_device = stage_device;
    }
    c.schedule = IPUP_PLAN_SCHEDULE;
    c.strict = IPUP_PLAN_STRICT;
    c.microbatch = IPUP_PLAN_BATCH;
    c.microbatches = IPUP_PLAN_MICROBATCHES;
    c.repeat = IPUP_PLAN_REPEAT;
    c.replicas = IPUP_PLAN_REPLICAS;
    c.opt.kind = IPUP_PLAN_OPTIMIZER;
    c.recompute = IPUP_PLAN_RECOMPUTE;
    c.offload = IPUP_PLAN_OFFLOAD;
    c.recompute_stages = IPUP_PLAN_RECOMPUTE_STAGES;
    c.ipu_bytes = IPUP_PLAN_IPU_MEMORY;
    c.runner = IPUP_PLAN_RUNNER;
    c.seed = 3;
    c.infeed = feed;
    pool(&c.ipu[0], ipu0, IPUP_PLAN_IPU0_BYTES);
    pool(&c.stream[0], stream0, IPUP_PLAN_STREAM0_BYTES);
#if IPUP_PLAN_IPUS > 1
    pool(&c.ipu[1], ipu1, IPUP_PLAN_IPU1_BYTES);
    pool(&c.stream[1], stream1, IPUP_PLAN_STREAM1_BYTES);
#endif
#if IPUP_PLAN_IPUS > 2
    pool(&c.ipu[2], ipu2, IPUP_PLAN_IPU2_BYTES);
    pool(&c.stream[2], stream2, IPUP_PLAN_STREAM2_BYTES);
#endif
#if IPUP_PLAN_IPUS > 3
    pool(&c.ipu[3], ipu3, IPUP_PLAN_IPU3_BYTES);
    pool(&c.stream[3], stream3, IPUP_PLAN_STREAM3_BYTES);
#endif
    pool(&c.host, host, sizeof host);
    if ((rc = ipup_init(&emu, &c)) != IPUP_OK) { printf("ipup_init: %d %s\n", rc, ipup_last_error(&emu)); return 1; }
    rc = ipup_run(&emu, &st);
    if (rc != IPUP_OK || st.steps != IPUP_PLAN_REPEAT || !isfinite(st.loss_mean)) {
        printf("ipup_run: %d %s (steps %lld, loss %g)\n", rc, ipup_last_error(&emu), (long long)st.steps, st.loss_mean);
        return 1;
    }
    ipup_shutdown(&emu);
    printf("%d IPU(s), %lld step(s), %lld samples, loss %.4f: ok\n", IPUP_PLAN_IPUS, (long long)st.steps,
           (long long)st.samples, st.loss_mean);
    return 0;
}
EOF
# app NAME -- TOOL ARGS: the header, then the program built on it alone, run
app() {
  local name=$1
  shift 2
  if ! "$tool" "$@" -o "$tmp/plan.h" 2>"$tmp/err"; then bad "$name: the tool failed" "$tmp/err"; return; fi
  if ! $CC $WARN -O2 -I. -I"$tmp" "$tmp/app.c" -o "$tmp/app" -lm -lpthread 2>"$tmp/cc.log"; then
    bad "$name: a program from the header alone does not compile" "$tmp/cc.log"; return
  fi
  if "$tmp/app" >"$tmp/app.log"; then ok "$name, from the header alone: $(tail -1 "$tmp/app.log")"; else bad "$name: the program from the header" "$tmp/app.log"; fi
}
app "the firmware's configuration" -- --model dense64,relu,dense32,relu,dense10,xent --splits dense32 --schedule grouped \
  --batch-size 8 --batches-to-accumulate 4 --repeat-count 1 --optimizer sgd --runner coop --input 1x1x196
app "the README's configuration (mse, frozen, Adam)" -- --model dense32:frozen,relu,dense16,mse --input 1x1x16 --splits dense16 \
  --batch-size 8 --batches-to-accumulate 4 --repeat-count 20 --optimizer adam --runner coop
app "--ipus 4: 2 replicas, 1f1b, recompute, Adam offloaded, threads" -- --model dense32,relu,dense16,relu,dense4,xent --input 1x1x64 \
  --splits relu_2 --batch-size 4 --microbatches 8 --ipus 4 --optimizer adam --offload --recompute --schedule 1f1b --runner threads
app "--map 1,0, momentum, repeat 2" -- --model conv4,relu,maxpool2,flatten,dense3,xent --input 8x8x2 --splits flatten --map 1,0 \
  --batch-size 2 --microbatches 4 --repeat-count 2 --optimizer momentum
app "a concurrent stage (--map 0,[1,2],3)" -- --model dense16,relu,dense8,relu,dense4,xent --input 1x1x8 --splits dense8 dense4 \
  --map '0,[1,2],3' --microbatches 6 --batch-size 2
app "--map 0,2: IPU1 idle, more IPUs than stages" -- --model dense8,relu,dense4,xent --input 1x1x8 --splits dense4 --map 0,2 \
  --microbatches 4 --batch-size 2
app "--splits auto --stages 3, gpipe" -- --model dense16,relu,dense16,relu,dense8,relu,dense2,xent --input 1x1x20 --splits auto \
  --stages 3 --schedule gpipe --batch-size 3 --microbatches 6
app "--model mlp, one step" -- --model mlp --batch-size 4 --microbatches 4 --repeat-count 1
app "one stage" -- --model dense8,relu,dense4,xent --input 1x1x8 --batch-size 4

# the named models' recipes are the trainer's (the numbers are kept in both tables)
cat >"$tmp/recipes.c" <<'EOF'
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h"
#include "mnist_models.h"
#include "plan_models.h"
#include <stdio.h>
int main(void) {
    int i, bad = PT_N_MODELS != MNIST_N_MODELS || pt_text_model.batch != 1;
    for (i = 0; i < MNIST_N_MODELS; i++) {
        const mnist_model_spec *m = &mnist_models[i];
        const pt_model *p = pt_model_find(m->name);
        if (!p || strcmp(p->layers, m->layers) || strcmp(p->ids, m->ids) || strcmp(p->splits, m->splits) ||
            strcmp(p->schedule, m->schedule) || p->batch != m->batch || p->microbatches != m->accumulate ||
            p->repeat != m->repeat || p->optimizer != m->optimizer) {
            printf("model %s: plan_models.h and mnist_models.h differ\n", m->name);
            bad = 1;
        }
    }
    printf("%d named models: the recipes of plan_models.h and mnist_models.h %s\n", MNIST_N_MODELS, bad ? "DIFFER" : "agree");
    return bad;
}
EOF
if $CC $WARN -O2 -I. -Iexamples/common -Iexamples/mnist -Iexamples/plan "$tmp/recipes.c" -o "$tmp/recipes" -lm -lpthread 2>"$tmp/cc.log"; then
  if "$tmp/recipes" >"$tmp/recipes.log"; then ok "$(cat "$tmp/recipes.log")"; else bad "the recipes" "$tmp/recipes.log"; fi
else bad "the recipe check does not compile" "$tmp/cc.log"; fi
finish
