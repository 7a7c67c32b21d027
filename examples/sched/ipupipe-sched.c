/* ipupipe-sched - generate, verify, measure, draw and exchange pipeline schedule tables.
 *
 * A program on top of ipupipe_sched.h (the header does no allocation; this tool
 * allocates its arrays with malloc once, sized by the header's macros). Run with
 * --help for the manual. Exit status: 0 valid, 1 invalid table, 2 usage or
 * configuration error.
 */
#define _POSIX_C_SOURCE 200809L /* open, fstat (sched_run.h) */
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe_sched.h"
#include "sched_cli.h"
#include "sched_run.h"

static const char *usage_text =
    "usage: ipupipe-sched --stages S --microbatches M [--schedule NAME] [options]\n"
    "       ipupipe-sched --check FILE.csv [--respace] [options]\n"
    "       ipupipe-sched --compare --stages S --microbatches M [--cost ...] [--format ...]\n"
    "\n"
    "Generate a pipeline schedule table (rows = devices/IPUs, columns = time steps), verify\n"
    "it against the dependency rules, and print it with its figures (docs/schedules.md).\n"
    "Steps are numbered from 1 wherever you read them (steps layout, phases, messages);\n"
    "csv, json and trace count from 0, as programs do.\n"
    "\n"
    "  --stages S, -S S          pipeline stages (1..256)\n"
    "  --microbatches M, -M M    micro-batches = gradient accumulation count\n"
    "  --schedule NAME           grouped (default), interleaved, sequential (Graphcore),\n"
    "                            gpipe, 1f1b, interleaved-1f1b (Megatron), zb-h1, zb-h2\n"
    "                            (zero bubble); on the V (S = 2P, device d holds stages d\n"
    "                            and 2P-1-d): zb-v, v-min, v-half; looped (S = P x V):\n"
    "                            looped-bfs, interleaved-zb (PyTorch's ZB1P); dualpipe-v\n"
    "                            (DeepSeek; on the V, M >= S); dualpipe (DeepSeek: two\n"
    "                            model copies fed from both ends, S = 2P stages on the V,\n"
    "                            P even, M even, M >= S);\n"
    "                            sharding = sequential: the model split over IPUs, one\n"
    "                            IPU at work at a time (TensorFlow's sharding)\n"
    "  --virtual V               interleaved-1f1b, looped-bfs, interleaved-zb: stages per\n"
    "                            device (S = P x V)\n"
    "  --devices P               number of devices (default: as the mapping needs)\n"
    "  --map d0,d1,...           stage -> device mapping, e.g. 0,1,0 (stages 0 and 2\n"
    "                            share IPU0); 0,[1,2],2,3: stage 1 concurrent on IPUs 1, 2\n"
    "  --stage-numbering popxl   PopXL's view: -S and --map count pipeline stages as PopXL\n"
    "                            does, forward and backward apart (-S 5 --map 0,1,2,1,0 is\n"
    "                            3 layers); prints each stash FIFO's length\n"
    "  --cost F=1,B=2,I=1,W=1,exchange=0,sync=0\n"
    "                            cost model for BSP/async time (any subset of the keys)\n"
    "  --act-bytes a0,a1,...     activation bytes each stage stashes per micro-batch\n"
    "                            (one value for all stages, or one per stage)\n"
    "  --strict                  Graphcore's API rules (Interleaved: M % S == 0; Grouped:\n"
    "                            M % 2S == 0; power-of-two IPUs) as errors, not warnings\n"
    "  --format FMT              grid (default), steps (PyTorch layout), csv (PyTorch\n"
    "                            compute-only), json, trace (Chrome/Perfetto), svg\n"
    "  --check FILE.csv          load a PyTorch compute-only CSV and verify it; exit 0 and\n"
    "                            the figures when valid, exit 1 and the marked table if not\n"
    "  --respace                 with --check: place each device's ops as early as their\n"
    "                            dependencies allow (rows written as per-device orders)\n"
    "  --dual                    with --check: the CSV is DualPipe's (two model copies:\n"
    "                            micro-batches 0..M/2-1 on stages 0..S/2-1, the rest on\n"
    "                            S/2..S-1), which a CSV cannot say itself\n"
    "  --forward-only            inference: F ops only, no backward, no stash (grouped,\n"
    "                            gpipe, 1f1b, sequential, interleaved-1f1b; interleaved and\n"
    "                            zb-h1 have no forward-only form); figures: latency of one\n"
    "                            micro-batch, steady-state throughput, in-flight inputs\n";
static const char *usage_text1b = /* C99 promises string literals of 4095 bytes */
    "  --compare                 every schedule side by side on the same P devices\n"
    "                            (--format grid, csv, json or svg; --act-bytes adds stash)\n"
    "  --timing async|bsp        svg, trace: async (default: each op when its inputs and\n"
    "                            its device are free) or BSP (lock-step) time\n"
    "  --memory                  the activations each device holds over time (text,\n"
    "                            json, or a panel under the svg chart)\n"
    "  --paper zb|dualpipe       the Zero Bubble paper's or the DualPipe repository's\n"
    "                            bubble and memory table, measured (P=4 M=16 by default)\n"
    "  --width PX, --unit PX     svg: widest canvas before long tables fold into bands\n"
    "                            (default 1600, -1 never), pixels per cost unit (default 24,\n"
    "                            shrunk to fit)\n"
    "  --quiet                   with grid/steps: the table only, no figures\n"
    "  --help                    this text\n"
    "\n";
static const char *usage_text2 = /* two pieces: C99 promises string literals of 4095 bytes */
    "Times: BSP time is the table run in lock step, as an IPU runs supersteps: every step\n"
    "lasts as long as its slowest op (plus exchange and sync). Async time keeps each\n"
    "device's order but drops the lock step (dataflow, like the threaded runner or\n"
    "PyTorch's ranks); schedules that never mix F and B in a step (grouped) get the same\n"
    "number both ways. Phases: ramp-up until every IPU is busy, main while all are,\n"
    "ramp-down after; a pipeline that never fills has no main phase.\n"
    "\n"
    "Examples:\n"
    "  ipupipe-sched --stages 4 --microbatches 8 --schedule grouped\n"
    "  ipupipe-sched --compare --stages 4 --microbatches 16 --cost F=1,B=2\n"
    "  ipupipe-sched -S 5 -M 8 --map 0,1,2,1,0 --stage-numbering popxl   (PopXL tutorial)\n"
    "  ipupipe-sched -S 4 -M 8 --schedule zb-h1 --format svg > zbh1.svg\n"
    "  ipupipe-sched -S 4 -M 8 --forward-only --compare   (pipelined inference)\n"
    "  ipupipe-sched --check zb1p.csv --respace --format json\n"
    "\n"
    "Exit status: 0 valid table, 1 invalid table, 2 usage or configuration error.\n";

static int tool_main(int argc, char **argv) {
    static opts o;
    int rc;
    if (argc < 2) {
        fputs(usage_text, stderr);
        fputs(usage_text1b, stderr);
        fputs(usage_text2, stderr);
        return 2;
    }
    rc = parse_args(argc, argv, &o);
    if (rc) return rc;
    if (o.help) {
        fputs(usage_text, stdout);
        fputs(usage_text1b, stdout);
        fputs(usage_text2, stdout);
        return 0;
    }
    if (o.check) return run_check(&o);
    if (o.compare) return run_compare(&o);
    return run_generate(&o);
}

/* The exit status after everything printed reached stdout: rc, or 2 after a message
 * when a write or the final flush failed (a full disk, a closed pipe). */
static int finish_stdout(int rc) {
    int bad = fflush(stdout) != 0, e = errno;
    if (ferror(stdout)) bad = 1;
    clearerr(stdout);
    if (!bad) return rc;
    fprintf(stderr, "ipupipe-sched: writing the standard output failed: %s (disk full or closed pipe?)\n",
            strerror(e ? e : EIO));
    return 2;
}

int main(int argc, char **argv) { return finish_stdout(tool_main(argc, argv)); }
