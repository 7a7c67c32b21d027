/* sensor_run.h - what both runs of the sensor example share (examples/sensor/sensor-demo.c):
 * one emulator at a time with its pools sized by ipup_plan_config (sr_start / sr_stop),
 * the training loop with its loss figures (sr_train) and the host allocation of data
 * arrays. MIT licence.
 *
 * Allocation happens in sr_start and when the data are made, before training; the
 * training and evaluation calls allocate nothing. Errors print one line through so_err
 * and return non-zero. */
#ifndef SENSOR_RUN_H
#define SENSOR_RUN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipupipe.h"
#include "sensor_options.h"

typedef struct sr_emu {
    ipup_emu *e;
    ipup_config cfg;
    ipup_plan plan;
    uint8_t *host, *pools;
} sr_emu;

static ipup_emu sr_emu_store; /* one emulator at a time: sr_stop makes it free again */

/* host memory for n floats (64-byte aligned); NULL after a message */
static inline float *sr_floats(size_t n, const char *what)
{
    float *p = (float *)aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
    if (!p) so_err("out of host memory: %.1f MB for %s", (double)(n * sizeof(float)) / 1048576.0, what);
    return p;
}

/* plans cfg (filled by the caller, pools excepted), allocates the pools and initialises
   the emulator; 0, or 1 after a message naming `what` */
static inline int sr_start(sr_emu *r, const char *what)
{
    size_t host_bytes, total = 0, off = 0;
    int32_t i, d;
    int rc;
    r->e = &sr_emu_store;
    r->host = r->pools = NULL;
    memset(r->e, 0, sizeof *r->e);
    host_bytes = ipup_host_bytes(&r->cfg);
    if (host_bytes == 0) host_bytes = 64;
    r->host = (uint8_t *)aligned_alloc(64, (host_bytes + 63) / 64 * 64);
    if (!r->host) return so_err("%s: out of host memory for the host pool (%zu bytes)", what, host_bytes) != 0;
    r->cfg.host.mem = r->host;
    r->cfg.host.bytes = host_bytes;
    if ((rc = ipup_plan_config(r->e, &r->cfg, &r->plan)) != IPUP_OK)
        return so_err("%s: the pipeline cannot run: %s (%s)", what, ipup_last_error(r->e), ipup_result_str(rc)) != 0;
    for (i = 0; i < r->plan.ipus; i++) total += (r->plan.ipu_bytes[i % r->plan.devices] + 63) / 64 * 64;
    r->pools = (uint8_t *)aligned_alloc(64, total + 64);
    if (!r->pools) return so_err("%s: out of host memory for the IPU pools (%zu bytes)", what, total) != 0;
    memset(r->pools, 0, total + 64);
    for (i = 0; i < r->plan.ipus; i++) {
        d = i % r->plan.devices;
        r->cfg.ipu[i].mem = r->pools + off;
        r->cfg.ipu[i].bytes = (r->plan.ipu_bytes[d] + 63) / 64 * 64;
        off += r->cfg.ipu[i].bytes;
    }
    if ((rc = ipup_init(r->e, &r->cfg)) != IPUP_OK)
        return so_err("%s: ipup_init: %s (%s)", what, ipup_last_error(r->e), ipup_result_str(rc)) != 0;
    return 0;
}

static inline void sr_stop(sr_emu *r)
{
    if (r->e) ipup_shutdown(r->e);
    free(r->pools);
    free(r->host);
    r->pools = r->host = NULL;
    r->e = NULL;
}

/* the loss figures of a training run: the mean of its first and of its last 5 steps */
typedef struct sr_loss {
    double first, last;
    int32_t steps;
} sr_loss;

/* `steps` steps, one ipup_run_steps each; the loss of every tenth printed unless quiet */
static inline int sr_train(sr_emu *r, int32_t steps, const char *what, int quiet, sr_loss *out)
{
    int32_t s, k = steps < 5 ? steps : 5;
    memset(out, 0, sizeof *out);
    out->steps = steps;
    for (s = 0; s < steps; s++) {
        ipup_run_stats st;
        int rc = ipup_run_steps(r->e, 1, &st);
        if (rc != IPUP_OK)
            return so_err("%s: step %d: %s (%s)", what, (int)s, ipup_last_error(r->e), ipup_result_str(rc)) != 0;
        if (s < k) out->first += st.loss_mean / k;
        if (s >= steps - k) out->last += st.loss_mean / k;
        if (!quiet && (s % (steps / 10 > 0 ? steps / 10 : 1) == 0 || s == steps - 1))
            printf("  %s step %d loss %.5f\n", what, (int)s, st.loss_mean);
    }
    return 0;
}

/* the memory of one category over the IPUs of a plan (replica 0) */
static inline size_t sr_plan_mem(const ipup_plan *p, int cat)
{
    size_t sum = 0;
    int32_t d;
    for (d = 0; d < p->devices; d++) sum += p->mem[d].by_category[cat];
    return sum;
}

static inline void sr_print_hash(const char *what, uint64_t h)
{
    printf("%s FNV-1a %016llx\n", what, (unsigned long long)h);
}

#endif
