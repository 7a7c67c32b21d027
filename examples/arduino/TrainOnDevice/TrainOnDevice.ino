/* TrainOnDevice.ino - ipupipe on a microcontroller: a tiny classifier trained on the
   board on 2 emulated IPUs, then asked about samples it has not seen. No heap, no
   threads: every byte is a static array below, the cooperative runner steps the
   pipeline on the sketch's own thread. Output on Serial (115200 baud). Needs a 32-bit
   core and about 28 KB of RAM (26 KB of static arrays on a Cortex-M4F); a single-precision
   FPU (Cortex-M4F, M7, M33) makes it fast.

   The pools are the figures of
     build/ipupipe-plan --model dense16,relu,dense3,xent --input 1x1x8 --splits dense3 \
       --batch-size 8 --microbatches 4 --repeat-count 25 --optimizer adam --runner coop
   (exactly what ipup_init carves; with one byte less it refuses and says why). */
#ifndef IPUPIPE_NO_THREADS      /* (or -DIPUPIPE_NO_THREADS in the build flags) */
#define IPUPIPE_NO_THREADS     /* the cooperative runner only: no pthread, no atomics */
#endif
#define IPUP_MAX_LAYERS 4      /* limits that fit this model shrink ipup_emu */
#define IPUP_MAX_DEVICES 2
#define IPUP_MAX_REPLICAS 1
#define IPUP_MAX_IPUS 2
#define IPUP_SCHED_MAX_STAGES 2
#define IPUP_PLAN_STACK_OPS 32 /* ipup_plan_config's table: a small stack */
#define IPUPIPE_IMPLEMENTATION /* in one file of the sketch: the library's function bodies */
#include <ipupipe.h>

#define IN 8                   /* features per sample */
#define HELD_OUT 50            /* samples the model never trains on */

IPUP_ALIGN64 static uint8_t ipu0[6848], ipu1[3968], host[6336];
static ipup_emu emu;
static ipup_model_desc model;
static ipup_config cfg;
static float test_x[HELD_OUT * IN];
static int32_t test_label[HELD_OUT], test_class[HELD_OUT];

/* sample i: IN features from the library's counter-based hash (the same numbers on
   every core); its class is the largest of the first 3 */
static void sample(int64_t i, float *x, int32_t *label) {
  for (int j = 0; j < IN; j++) x[j] = ipup_rng_uniform_f32(42, (uint64_t)i, (uint64_t)j);
  *label = x[0] > x[1] ? (x[0] > x[2] ? 0 : 2) : (x[1] > x[2] ? 1 : 2);
}

/* the infeed: fills one micro-batch of f->n samples from global sample f->sample0 */
static int feed(void *user, const ipup_feed *f) {
  (void)user;
  for (int32_t i = 0; i < f->n; i++) sample(f->sample0 + i, f->x + i * IN, f->labels + i);
  return 0;
}

void setup() {
  static const int32_t split[1] = {2}; /* stage 1 starts at layer 2 (dense3) */
  ipup_run_stats st;
  char line[80]; /* formatted by the library's ipup_snprintf: no stdio, no heap */
  Serial.begin(115200);
  model.in_h = 1; model.in_w = 1; model.in_c = IN;
  if (ipup_model_parse("dense16,relu,dense3,xent", &model, line, sizeof line) != IPUP_OK) {
    Serial.println(line); /* the token or limit that was wrong */
    return;
  }
  cfg.model = &model; cfg.stages = 2; cfg.split = split;
  cfg.microbatch = 8; cfg.microbatches = 4; cfg.repeat = 25; /* 25 steps per ipup_run */
  cfg.opt.kind = IPUP_OPT_ADAM; cfg.opt.lr = 0.01f;
  cfg.runner = IPUP_RUNNER_COOP; cfg.infeed = feed;
  cfg.ipu[0].mem = ipu0; cfg.ipu[0].bytes = sizeof ipu0;
  cfg.ipu[1].mem = ipu1; cfg.ipu[1].bytes = sizeof ipu1;
  cfg.host.mem = host;   cfg.host.bytes = sizeof host;
  if (ipup_init(&emu, &cfg) != IPUP_OK) {
    Serial.println(ipup_last_error(&emu)); /* what is wrong and how to fix it */
    return;
  }
  for (int r = 0; r < 4; r++) {
    if (ipup_run(&emu, &st) != IPUP_OK) { Serial.println(ipup_last_error(&emu)); return; }
    ipup_snprintf(line, sizeof line, "step %d: loss %.3f, accuracy %.3f", (int)ipup_get_step(&emu),
                  st.loss_mean, (double)st.correct / (double)st.samples);
    Serial.println(line);
  }
  for (int32_t i = 0; i < HELD_OUT; i++) sample(1000000 + i, test_x + i * IN, &test_label[i]);
  if (ipup_predict(&emu, HELD_OUT, test_x, NULL, test_class) != IPUP_OK) {
    Serial.println(ipup_last_error(&emu));
    return;
  }
  int right = 0;
  for (int32_t i = 0; i < HELD_OUT; i++) right += test_class[i] == test_label[i];
  ipup_snprintf(line, sizeof line, "held-out: %d of %d right", right, HELD_OUT);
  Serial.println(line);
}

void loop() {}
