/* bench_sched.c - speed of ipupipe_sched.h: generate, verify and measure every schedule
 * at S=64 stages, M=4096 micro-batches (524,288 ops; 786,432 for zb-h1), plus a
 * linearity check at M=1024 (cost per op should stay flat).
 *
 *   build/bench/bench_sched [--quick] [--json PATH]
 *
 * Each figure is the best of several runs (the machine is shared). Table on stdout
 * (ms per table and ops per second, "cells" = ops: the table is sparse); one JSON object
 * per measurement in build/bench/sched.json. Target: each under 20 ms.
 */
#define _POSIX_C_SOURCE 199309L
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe_sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BS 64
#define BM 4096
static ipup_op ops[IPUP_SCHED_MAX_OPS(BS, BM)];
static uint64_t work[IPUP_SCHED_WORK_BYTES(BS, BM) / 8 + 1];
static ipup_sched_figures fig;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int gen(ipup_sched_kind k, int S, int M, ipup_table *t) {
    ipup_sched_config c;
    char msg[2048];
    int rc;
    memset(&c, 0, sizeof c);
    c.kind = k;
    c.stages = S;
    c.microbatches = M;
    rc = ipup_sched_generate(&c, ops, IPUP_SCHED_MAX_OPS(BS, BM), t, msg, sizeof msg);
    if (rc) fprintf(stderr, "bench_sched: %s\n", msg);
    return rc;
}

int main(int argc, char **argv) {
    const char *json_path = "build/bench/sched.json";
    int reps = 7, a, k, bad = 0, first = 1;
    FILE *json;
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--quick")) reps = 2;
        else if (!strcmp(argv[a], "--json") && a + 1 < argc) json_path = argv[++a];
    }
    json = fopen(json_path, "w");
    if (json) fprintf(json, "[\n");
    printf("schedule tables, S=%d, M=%d, best of %d runs\n", BS, BM, reps);
    printf("%-17s %8s %7s | %9s %9s | %9s %9s | %9s %9s | %s\n", "schedule", "ops", "steps", "gen ms", "Mops/s", "verify ms",
           "Mops/s", "measure ms", "Mops/s", "ns/op at M=1024 (gen/verify/measure)");
    for (k = 0; k < IPUP_SCHED_KIND_COUNT; k++) {
        ipup_table t;
        ipup_sched_verify_info vi;
        double best[3] = {1e9, 1e9, 1e9}, small[3] = {1e9, 1e9, 1e9};
        int r, pass, nsmall = 0;
        char msg[1024];
        for (pass = 0; pass < 2; pass++) {
            int M = pass == 0 ? BM : 1024;
            double *b = pass == 0 ? best : small;
            for (r = 0; r < reps; r++) {
                double t0 = now(), t1, t2, t3;
                if (gen((ipup_sched_kind)k, BS, M, &t)) return 1;
                t1 = now();
                if (ipup_sched_verify(&t, work, sizeof work, &vi, msg, sizeof msg)) {
                    fprintf(stderr, "bench_sched: %s does not verify: %s\n", ipup_sched_kind_name((ipup_sched_kind)k), msg);
                    return 1;
                }
                t2 = now();
                if (ipup_sched_measure(&t, NULL, NULL, work, sizeof work, &fig)) return 1;
                t3 = now();
                if (t1 - t0 < b[0]) b[0] = t1 - t0;
                if (t2 - t1 < b[1]) b[1] = t2 - t1;
                if (t3 - t2 < b[2]) b[2] = t3 - t2;
            }
            if (pass == 1) nsmall = t.n_ops;
            else {
                int i;
                printf("%-17s %8d %7d |", ipup_sched_kind_name((ipup_sched_kind)k), (int)t.n_ops, (int)t.steps);
                for (i = 0; i < 3; i++) {
                    printf(" %9.3f %9.1f |", best[i] * 1e3, (double)t.n_ops / best[i] * 1e-6);
                    if (best[i] * 1e3 >= 20.0) bad++;
                }
                if (json) {
                    fprintf(json,
                            "%s{\"bench\":\"sched\",\"schedule\":\"%s\",\"stages\":%d,\"microbatches\":%d,\"ops\":%d,\"steps\":%d,"
                            "\"generate_ms\":%.4f,\"verify_ms\":%.4f,\"measure_ms\":%.4f,\"generate_ops_per_s\":%.0f,"
                            "\"verify_ops_per_s\":%.0f,\"measure_ops_per_s\":%.0f,\"target_ms\":20}",
                            first ? "" : ",\n", ipup_sched_kind_name((ipup_sched_kind)k), BS, BM, (int)t.n_ops, (int)t.steps,
                            best[0] * 1e3, best[1] * 1e3, best[2] * 1e3, (double)t.n_ops / best[0], (double)t.n_ops / best[1],
                            (double)t.n_ops / best[2]);
                    first = 0;
                }
            }
        }
        /* linearity: ns per op at M=1024 next to M=4096 */
        printf(" %.1f/%.1f/%.1f vs %.1f/%.1f/%.1f\n", small[0] / nsmall * 1e9, small[1] / nsmall * 1e9, small[2] / nsmall * 1e9,
               best[0] / (nsmall * 4.0) * 1e9, best[1] / (nsmall * 4.0) * 1e9, best[2] / (nsmall * 4.0) * 1e9);
    }
    if (json) {
        fprintf(json, "\n]\n");
        fclose(json);
    }
    printf("%s: every generate/verify/measure at S=64, M=4096 %s 20 ms\n", bad ? "SLOW" : "ok", bad ? "is NOT under" : "is under");
    return 0;
}
