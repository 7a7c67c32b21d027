#!/usr/bin/env bash
# tests/test_plan_grid.sh - every header build/ipupipe-plan writes is one a program can init
# from: over a grid of configurations (concurrent stages, several of them, up to 8
# branches of one stage, stage counts, --ipus and --replicas, every schedule, both
# runners), the header is included before ipupipe.h as documented (docs/embedded.md, "Pools
# sized at compile time"), so its IPUP_MAX_* limits size ipup_emu; ipup_config comes from
# its defines alone, each pool has exactly its IPUP_PLAN_IPU<i>_BYTES; ipup_init and one
# ipup_run must succeed. The header's comment names, for every IPU, the stages and
# branches it holds (or "no stage"). The program builds at -O0 with -Werror (two
# configurations also at -O2, where small limits once drew false warnings). Last, an
# argument with control characters reaches the header's comment escaped.
# Ends with `N passed, N failed`; exits non-zero on any failure.
. "$(dirname "$0")/lib.sh"
tool=build/ipupipe-plan
need_bin "$tool"
make_tmp plan_grid
CC=${CC:-gcc}
WARN="-std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion -Wstrict-prototypes -Werror"

cat >"$tmp/app.c" <<'EOF'
#include "plan.h" /* first: its IPUP_MAX_* limits size ipup_emu */
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
IPUP_ALIGN64 static uint8_t host[IPUP_PLAN_HOST_BYTES];
static ipup_emu emu;
static ipup_model_desc model;
static ipup_stage_map cmap;
static const int32_t split[] = IPUP_PLAN_SPLIT_LIST;
static const int16_t stage_device[] = IPUP_PLAN_STAGE_DEVICE_LIST;
static const size_t ipu_bytes[] = IPUP_PLAN_IPU_BYTES_LIST, stream_bytes[] = IPUP_PLAN_STREAM_BYTES_LIST;

static int feed(void *user, const ipup_feed *f) {
    int32_t i, k;
    (void)user;
    for (i = 0; i < f->n; i++) {
        for (k = 0; k < f->row; k++) f->x[i * f->row + k] = (float)((f->sample0 + i + k) % 7) * 0.1f;
        if (f->labels) f->labels[i] = (int32_t)((f->sample0 + i) % f->classes);
    }
    return 0;
}
/* a pool of exactly `bytes`, 64-byte aligned (a pool of 0 bytes still has an address) */
static void pool(ipup_pool *p, size_t bytes) {
    p->mem = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    p->bytes = bytes;
}
int main(void) {
    ipup_config c;
    ipup_run_stats st;
    char msg[IPUP_MSG_MAX];
    int rc, i;
    memset(&c, 0, sizeof c);
    if (ipup_model_parse(IPUP_PLAN_MODEL_TEXT, &model, msg, sizeof msg) != IPUP_OK) return printf("model: %s\n", msg), 1;
    model.in_h = IPUP_PLAN_INPUT_H; model.in_w = IPUP_PLAN_INPUT_W; model.in_c = IPUP_PLAN_INPUT_C;
    c.model = &model;
    c.stages = IPUP_PLAN_STAGES;
    c.split = IPUP_PLAN_STAGES > 1 ? split : NULL;
    if (IPUP_PLAN_MAP_TEXT[0] && IPUP_PLAN_MAP_CONCURRENT) {
        if (ipup_sched_map_parse(IPUP_PLAN_MAP_TEXT, &cmap, msg, sizeof msg) < 0) return printf("map: %s\n", msg), 1;
        c.concurrent = &cmap;
    } else if (IPUP_PLAN_MAP_TEXT[0]) c.stage_device = stage_device;
    c.schedule = IPUP_PLAN_SCHEDULE;
    c.strict = IPUP_PLAN_STRICT;
    c.microbatch = IPUP_PLAN_BATCH;
    c.microbatches = IPUP_PLAN_MICROBATCHES;
    c.repeat = IPUP_PLAN_REPEAT;
    c.replicas = IPUP_PLAN_REPLICAS;
    c.opt.kind = IPUP_PLAN_OPTIMIZER;
    c.opt.lr = 0.01f;
    c.recompute = IPUP_PLAN_RECOMPUTE;
    c.offload = IPUP_PLAN_OFFLOAD;
    c.recompute_stages = IPUP_PLAN_RECOMPUTE_STAGES;
    c.ipu_bytes = IPUP_PLAN_IPU_MEMORY;
    c.runner = IPUP_PLAN_RUNNER;
    c.infeed = feed;
    for (i = 0; i < IPUP_PLAN_IPUS; i++) {
        pool(&c.ipu[i], ipu_bytes[i]);
        if (stream_bytes[i]) pool(&c.stream[i], stream_bytes[i]);
    }
    c.host.mem = host;
    c.host.bytes = sizeof host;
    if ((rc = ipup_init(&emu, &c)) != IPUP_OK) return printf("ipup_init: %s (%s)\n", ipup_last_error(&emu), ipup_result_str(rc)), 1;
    rc = ipup_run(&emu, &st);
    if (rc != IPUP_OK || !isfinite(st.loss_mean)) return printf("ipup_run: %s (%s)\n", ipup_last_error(&emu), ipup_result_str(rc)), 1;
    ipup_shutdown(&emu);
    for (i = 0; i < IPUP_PLAN_IPUS; i++) {
        free(c.ipu[i].mem);
        free(c.stream[i].mem);
    }
    printf("%d IPUs x %d replicas, %d lanes, sizeof(ipup_emu) %zu: ok\n", IPUP_PLAN_DEVICES, IPUP_PLAN_REPLICAS,
           (int)emu.core.n_lanes, sizeof emu);
    return 0;
}
EOF

# grid NAME OPT -- TOOL ARGS: the header, its comment, then the program from it, run
grid() {
  local name=$1 opt=$2 d n
  shift 3
  if ! "$tool" "$@" -o "$tmp/plan.h" 2>"$tmp/err"; then bad "$name: the tool refused it" "$tmp/err"; return; fi
  n=$(sed -n 's/^#define IPUP_PLAN_IPUS \([0-9]*\)$/\1/p' "$tmp/plan.h")
  for ((d = 0; d < n; d++)); do
    if ! grep -Eq "^#define IPUP_PLAN_IPU${d}_BYTES [0-9]+ /\* replica [0-9]+, device [0-9]+:( stage [0-9]+( branch [0-9]+ of [0-9]+)? \(stash depth [0-9]+\),?)+ \*/$|: no stage \*/$" "$tmp/plan.h"; then
      grep "IPUP_PLAN_IPU${d}_BYTES" "$tmp/plan.h" >"$tmp/why"
      bad "$name: IPU$d's comment names its stages (or no stage)" "$tmp/why"; break
    fi
  done
  if ! nice $CC $WARN "$opt" -I. -I"$tmp" "$tmp/app.c" -o "$tmp/app" -lm -lpthread 2>"$tmp/cc.log"; then
    bad "$name: a program from the header does not compile ($opt)" "$tmp/cc.log"; return
  fi
  if "$tmp/app" >"$tmp/app.log" 2>&1; then ok "$name: $(tail -1 "$tmp/app.log")"
  else bad "$name: ipup_init and ipup_run from the header" "$tmp/app.log"; fi
}

m5="--model dense16,relu,dense16,relu,dense16,relu,dense8,relu,dense4,xent --input 1x1x8 --batch-size 2"
s5="--splits dense16_2 dense16_3 dense8 dense4"
m9="--model dense16,relu,dense16,relu,dense16,relu,dense16,relu,dense16,relu,dense16,relu,dense16,relu,dense16,relu,dense4,xent"
m9="$m9 --input 1x1x6 --batch-size 2 --splits dense16_2 dense16_3 dense16_4 dense16_5 dense16_6 dense16_7 dense16_8 dense4"
# shellcheck disable=SC2086
{
grid "two concurrent stages on 3 IPUs (0,[1,2],0,[1,2],0)" -O0 -- $m5 $s5 --map "0,[1,2],0,[1,2],0" --microbatches 4
grid "the same, -O2" -O2 -- $m5 $s5 --map "0,[1,2],0,[1,2],0" --microbatches 4
grid "two concurrent stages, --ipus 6 (2 replicas), 1f1b" -O0 -- $m5 $s5 --map "0,[1,2],0,[1,2],0" --microbatches 6 \
  --ipus 6 --schedule 1f1b
grid "two concurrent stages, --replicas 2, threads, Adam offloaded" -O0 -- $m5 $s5 --map "0,[1,2],0,[1,2],0" \
  --microbatches 4 --replicas 2 --runner threads --optimizer adam --offload
grid "four concurrent stages on 3 IPUs (8 branches), gpipe" -O0 -- $m9 --map "0,[1,2],0,[1,2],0,[1,2],0,[1,2],0" \
  --microbatches 4 --schedule gpipe
grid "one stage on 8 IPUs (0,[1,2,3,4,5,6,7,8],9)" -O0 -- $m5 --splits dense16_2 dense16_3 \
  --map "0,[1,2,3,4,5,6,7,8],9" --microbatches 3
grid "a stage on 4 IPUs shared with the others (0,[1,2,3,0],1), interleaved" -O0 -- $m5 --splits dense16_2 dense16_3 \
  --map "0,[1,2,3,0],1" --microbatches 4 --schedule interleaved
grid "0,[1,2],3, sequential, momentum" -O0 -- $m5 --splits dense16_2 dense16_3 --map "0,[1,2],3" --microbatches 3 \
  --schedule sequential --optimizer momentum
grid "0,[1,2],3, grouped, --ipus 8" -O0 -- $m5 --splits dense16_2 dense16_3 --map "0,[1,2],3" --microbatches 4 --ipus 8
grid "0,[2,1],1,0: a branch on an IPU of a later stage, -O2" -O2 -- $m5 --splits dense16_2 dense16_3 dense8 \
  --map "0,[2,1],1,0" --microbatches 4
grid "no map, 5 stages, interleaved-1f1b" -O0 -- $m5 $s5 --microbatches 10 --schedule interleaved-1f1b
grid "--splits auto --stages 4, zb-h1, --ipus 8" -O0 -- $m5 --splits auto --stages 4 --microbatches 8 --schedule zb-h1 \
  --ipus 8
grid "--map 0,1,0,1, 1f1b, recompute" -O0 -- $m5 --splits dense16_2 dense16_3 dense8 --map 0,1,0,1 --microbatches 4 \
  --schedule 1f1b --recompute
grid "--map 0,3: two idle IPUs, --replicas 3" -O0 -- $m5 --splits dense8 --map 0,3 --microbatches 2 --replicas 3
grid "one stage, 8 replicas" -O0 -- $m5 --splits none --replicas 8
# the schedules after zb-h1: the header names each by its ipup_sched_kind constant
for k in zb-h2 zb-v v-min v-half looped-bfs interleaved-zb dualpipe-v; do
  case $k in zb-h2) map=0,1,2,3 ;; looped-bfs|interleaved-zb) map=0,1,0,1 ;; *) map=0,1,1,0 ;; esac
  grid "--stages 4 --map $map, $k" -O0 -- $m5 --splits auto --stages 4 --map $map --microbatches 8 --schedule $k
done
grid "cnn, 3 stages, gpipe, threads" -O0 -- --model cnn --repeat-count 1 --splits auto --stages 3 --schedule gpipe --runner threads \
  --batch-size 2 --microbatches 6
}

# What the user typed reaches the header's comment escaped (examples/common/ex_escape.h):
# an argument with a newline (strtol takes leading white space) stays on its line.
if "$tool" --model dense8,relu,dense4,xent --input 1x1x8 --batch-size=$'\n\t2' -o "$tmp/esc.h" 2>"$tmp/err" &&
   grep -qF 'command: ipupipe-plan --model dense8,relu,dense4,xent --batch-size=\x0a\x092 --input 1x1x8' "$tmp/esc.h" &&
   ! grep -q '^2 ' "$tmp/esc.h"; then
  ok "an argument's newline and tab are written as \\x0a and \\x09 in the header's comment"
else
  head -5 "$tmp/esc.h" >"$tmp/why" 2>/dev/null
  bad "an argument's newline and tab are written as \\x0a and \\x09 in the header's comment" "$tmp/err" "$tmp/why"
fi
finish
