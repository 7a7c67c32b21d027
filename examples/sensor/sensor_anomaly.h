/* sensor_anomaly.h - `sensor-demo --mode anomaly`: an autoencoder learns the normal
 * vibration windows of machine A (mean squared error against its own input), and a
 * window whose reconstruction error lies above a high percentile of the errors of
 * held-out normal windows is flagged. MIT licence.
 *
 *   1. data: o->train normal windows to train on; o->test held-out normal windows for the
 *      threshold; another o->test normal windows for the false-positive rate; o->test
 *      windows of each injected anomaly kind (sensor_data.h);
 *   2. training: SA_MODEL_TEXT pipelined over --ipus emulated IPUs; the infeed gives each
 *      window as the input and as the mse targets;
 *   3. the reconstruction error of a window = mean over its SD_N samples of (output -
 *      input)^2, the output from ipup_predict;
 *   4. threshold = the --percentile (nearest rank) of the held-out normal errors; then the
 *      detection rate of each anomaly kind and the false-positive rate;
 *   5. with --export-c FILE.h, the trained autoencoder as a C header (sensor_export.h):
 *      its <name>_predict gives the reconstructions of ipup_predict bit for bit. */
#ifndef SENSOR_ANOMALY_H
#define SENSOR_ANOMALY_H

#include "sensor_data.h"
#include "sensor_export.h"
#include "sensor_classifier.h"
#include "sensor_run.h"

#define SA_MODEL_TEXT "dense32,relu,dense8,dense32,relu,dense64,mse"
#define SA_SETS (2 + SD_ANOM_KINDS) /* held-out normal, normal, one per anomaly kind */

typedef struct sa_data {
    float *train;             /* n_train windows */
    float *eval[SA_SETS];     /* n_eval windows each */
    float *err[SA_SETS];      /* their reconstruction errors */
    float *out;               /* the predictions of one set */
    float *tmp;               /* n_eval errors, sorted */
    int32_t n_train, n_eval;
} sa_data;

static inline void sa_data_free(sa_data *d)
{
    int k;
    free(d->train);
    free(d->out);
    free(d->tmp);
    for (k = 0; k < SA_SETS; k++) { free(d->eval[k]); free(d->err[k]); }
    memset(d, 0, sizeof *d);
}

static inline const char *sa_set_name(int k)
{
    return k == 0 ? "held-out normal" : k == 1 ? "normal" : sd_anomaly_name(k - 2);
}

/* window i of evaluation set k */
static inline void sa_eval_window(int k, uint64_t seed, int32_t i, float *x)
{
    if (k == 0) sd_window(&sd_machine_a, SD_NORMAL, seed, SD_STREAM_AE_HOLDOUT, (uint64_t)i, x);
    else if (k == 1) sd_window(&sd_machine_a, SD_NORMAL, seed, SD_STREAM_AE_TEST, (uint64_t)i, x);
    else sd_anomaly(&sd_machine_a, k - 2, seed, (uint64_t)SD_STREAM_AE_ANOM * 16u + (uint64_t)k, (uint64_t)i, x);
}

static inline int sa_data_make(sa_data *d, int32_t n_train, int32_t n_eval, uint64_t seed)
{
    int32_t i;
    int k;
    memset(d, 0, sizeof *d);
    d->n_train = n_train;
    d->n_eval = n_eval;
    if (!(d->train = sr_floats((size_t)n_train * SD_N, "the training windows"))) return 1;
    if (!(d->out = sr_floats((size_t)n_eval * SD_N, "the predictions")) ||
        !(d->tmp = sr_floats((size_t)n_eval, "the sorted errors")))
        return 1;
    for (k = 0; k < SA_SETS; k++)
        if (!(d->eval[k] = sr_floats((size_t)n_eval * SD_N, "the evaluation windows")) ||
            !(d->err[k] = sr_floats((size_t)n_eval, "the reconstruction errors")))
            return 1;
    for (i = 0; i < n_train; i++)
        sd_window(&sd_machine_a, SD_NORMAL, seed, SD_STREAM_AE_TRAIN, (uint64_t)i, d->train + (size_t)i * SD_N);
    for (k = 0; k < SA_SETS; k++)
        for (i = 0; i < n_eval; i++) sa_eval_window(k, seed, i, d->eval[k] + (size_t)i * SD_N);
    return 0;
}

/* ipup_infeed_fn: sample j of the run is training window j % n, as input and as target */
static inline int sa_infeed(void *user, const ipup_feed *f)
{
    const sa_data *d = (const sa_data *)user;
    int32_t i;
    if (f->row != SD_N || f->target_width != SD_N || !f->targets) return -1;
    for (i = 0; i < f->n; i++) {
        const float *w = d->train + (size_t)((f->sample0 + i) % d->n_train) * SD_N;
        memcpy(f->x + (size_t)i * SD_N, w, SD_N * sizeof(float));
        memcpy(f->targets + (size_t)i * SD_N, w, SD_N * sizeof(float));
    }
    return 0;
}

/* the reconstruction errors of evaluation set k (one ipup_predict over the set) */
static inline int sa_errors(sr_emu *r, sa_data *d, int k)
{
    int32_t j, t;
    const float *x = d->eval[k];
    int rc = ipup_predict(r->e, d->n_eval, x, d->out, NULL);
    if (rc != IPUP_OK) return so_err("ipup_predict: %s (%s)", ipup_last_error(r->e), ipup_result_str(rc)) != 0;
    for (j = 0; j < d->n_eval; j++) {
        float s = 0.0f;
        for (t = 0; t < SD_N; t++) {
            float e = d->out[(size_t)j * SD_N + (size_t)t] - x[(size_t)j * SD_N + (size_t)t];
            s += e * e;
        }
        d->err[k][j] = s / (float)SD_N;
    }
    return 0;
}

static inline int sa_cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* the p-th percentile of n errors by the nearest-rank method: the ceil(p/100 n)-th
   smallest (sorts a copy into tmp) */
static inline float sa_percentile(const float *err, int32_t n, float p, float *tmp)
{
    int32_t rank = (int32_t)((double)p / 100.0 * (double)n + 0.999999);
    memcpy(tmp, err, (size_t)n * sizeof(float));
    qsort(tmp, (size_t)n, sizeof(float), sa_cmp_float);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return tmp[rank - 1];
}

/* the FNV-1a hash of every parameter tensor of e (sensor_classifier.h's sf_fnv1a) */
static inline uint64_t sa_params_hash(ipup_emu *e)
{
    uint64_t h = SF_FNV_BASIS;
    int32_t i, n = ipup_tensor_count(e);
    for (i = 0; i < n; i++) {
        ipup_tensor_info ti;
        if (ipup_tensor_get(e, i, &ti) == IPUP_OK && ti.kind == IPUP_TENSOR_PARAM) h = sf_fnv1a(h, ti.data, ti.n);
    }
    return h;
}

static inline void sa_config(sr_emu *r, const so_opts *o, const ipup_model_desc *m, sa_data *d)
{
    memset(&r->cfg, 0, sizeof r->cfg);
    r->cfg.model = m;
    r->cfg.stages = o->ipus;
    r->cfg.schedule = o->schedule;
    r->cfg.microbatch = o->batch ? o->batch : 16;
    r->cfg.microbatches = o->accumulate ? o->accumulate : 4;
    r->cfg.repeat = 1;
    r->cfg.opt.kind = IPUP_OPT_ADAM;
    r->cfg.opt.lr = o->lr_given ? o->lr : 0.003f;
    r->cfg.seed = o->seed;
    r->cfg.runner = o->runner;
    r->cfg.infeed = sa_infeed;
    r->cfg.infeed_user = d;
}

static inline void sa_report(const sr_emu *r, const sa_data *d, const so_opts *o, const sr_loss *loss, float thr, uint64_t h)
{
    int k;
    printf("training: %d steps of %d windows, loss %.5f -> %.5f (mean of the first and last 5 steps)\n",
           (int)loss->steps, (int)(r->cfg.microbatch * r->cfg.microbatches), loss->first, loss->last);
    printf("threshold: %gth percentile of the reconstruction error of %d held-out normal windows = %.5f\n",
           (double)o->percentile, (int)d->n_eval, (double)thr);
    for (k = 1; k < SA_SETS; k++) {
        int32_t i, above = 0;
        double mean = 0.0;
        for (i = 0; i < d->n_eval; i++) {
            above += d->err[k][i] > thr;
            mean += (double)d->err[k][i] / (double)d->n_eval;
        }
        printf("%s %-16s mean error %.5f, above the threshold %d/%d = %.2f%%\n",
               k == 1 ? "false positives" : "detection      ", sa_set_name(k), mean, (int)above, (int)d->n_eval,
               100.0 * (double)above / (double)d->n_eval);
    }
    sr_print_hash("final weights", h);
}

/* the whole run; the process's exit code */
static inline int sa_main(const so_opts *o)
{
    static ipup_model_desc model;
    sr_emu r;
    sa_data d;
    sr_loss loss;
    se_out exp;
    char msg[256], name[EXPC_NAME_MAX + 1], origin[160];
    int rc = 1, k;
    float thr;
    memset(&r, 0, sizeof r);
    memset(&model, 0, sizeof model);
    model.in_h = 1; model.in_w = 1; model.in_c = SD_N;
    if (ipup_model_parse(SA_MODEL_TEXT, &model, msg, sizeof msg) != IPUP_OK) return so_err("model: %s", msg);
    sa_config(&r, o, &model, &d);
    printf("sensor-demo anomaly: autoencoder \"%s\" on %d emulated IPUs, %s schedule, %s runner, seed %llu\n",
           SA_MODEL_TEXT, o->ipus, ipup_sched_kind_name(o->schedule),
           o->runner == IPUP_RUNNER_THREADS ? "threads" : "coop", (unsigned long long)o->seed);
    exp.asked = 0;
    if (sa_data_make(&d, o->train, o->test, o->seed) || sr_start(&r, "autoencoder")) goto out;
    if (se_open(&exp, o->export_c, r.e)) { rc = 2; goto out; } /* refused before training */
    if (sr_train(&r, o->steps ? o->steps : 3000, "autoencoder", o->quiet, &loss)) goto out;
    for (k = 0; k < SA_SETS; k++)
        if (sa_errors(&r, &d, k)) goto out;
    thr = sa_percentile(d.err[0], d.n_eval, o->percentile, d.tmp);
    sa_report(&r, &d, o, &loss, thr, sa_params_hash(r.e));
    if (o->export_c) /* checked at startup (so_check_export): cannot fail here */
        expc_name_choose(o->export_c, o->export_name, name, sizeof name, NULL, 0);
    ipup_snprintf(origin, sizeof origin, "sensor-demo --mode anomaly, seed %llu, at step %lld",
                  (unsigned long long)o->seed, (long long)ipup_get_step(r.e));
    if (o->export_c && se_finish(&exp, r.e, name, origin, o->quiet)) { rc = 2; goto out; }
    rc = 0;
out:
    se_drop(&exp);
    sr_stop(&r);
    sa_data_free(&d);
    return rc;
}

#endif
