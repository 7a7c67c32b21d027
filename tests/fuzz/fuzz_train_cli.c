/* fuzz_train_cli.c - libFuzzer target: the command line and the configuration path
 * of the MNIST trainer (examples/mnist/mnist_options.h, examples/mnist/mnist_trainer.h): option
 * parsing (mt_parse), the recipe's defaults (mt_resolve), the model and its --splits,
 * the schedule and runner names (mt_configure), and the emulator configuration they
 * produce (mt_fill_config; ipup_host_bytes, ipup_plan_config of ipupipe.h). Small
 * configurations (at most 32 samples per step, cooperative runner) are also started
 * for real: pools sized from the plan (mt_carve_pools), ipup_init, one ipup_run_steps
 * on synthetic data, ipup_shutdown.
 * The output paths (--save, --trace, --summary-json) go through the trainer's startup
 * check (mt_out_check_all, as mt_check_output_paths calls it) inside a private scratch
 * directory when every one is a relative path without "..": it must leave the
 * directory as it found it (its probe files removed) and refuse two outputs spelled
 * the same.
 * The input is the argument list, one argument per line. Oracles besides the
 * sanitizers: every refusal carries a message; a configuration the planner accepts
 * must start. --help/-h are dropped (they exit by design).
 *
 *   make fuzz   (or build/fuzz/fuzz_train_cli tests/fuzz/corpus/train_cli)
 */
#define _POSIX_C_SOURCE 200809L
#include "ipupipe.h"
#include "mnist_trainer.h"
#include "tiny_model.h"

#include <dirent.h>
#include <unistd.h>

#define FZ_MAX_ARGS 48

static ipup_emu fz_emu_;
static uint8_t fz_pool[32 << 20] __attribute__((aligned(64)));

/* 784 pixels in [0, 1) and 10 classes: a fixed pattern of the sample and its place */
static void fz_sample(int64_t sample0, int32_t i, float *x, int32_t *label) {
    int32_t j;
    *label = (int32_t)((sample0 + i) % 10);
    for (j = 0; j < 784; j++) x[j] = (float)((j * 7 + i * 13 + (int)sample0) % 17) / 17.0f;
}
static tiny_data fz_data = {fz_sample, 784};

static int fz_is_help(const char *a) {
    const char *eq = strchr(a, '=');
    size_t n = eq ? (size_t)(eq - a) : strlen(a);
    return (n == 6 && strncmp(a, "--help", 6) == 0) || (n == 2 && strncmp(a, "-h", 2) == 0);
}

/* a relative path that cannot leave the scratch directory */
static int fz_path_inside(const char *p) {
    return p && p[0] && p[0] != '/' && !strstr(p, "..") && strlen(p) < 200;
}

static char fz_scratch[64]; /* a private directory the output checks run in */
static void fz_scratch_remove(void) { (void)rmdir(fz_scratch); }

/* entries of the scratch directory besides . and .. */
static int fz_dir_entries(void) {
    DIR *d = opendir(fz_scratch);
    struct dirent *e;
    int n = 0;
    if (!d) abort();
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

/* the trainer's startup check of the output paths (mt_check_output_paths: the same
   mt_out_check_all call) on the paths placed inside the scratch directory */
static void fz_check_outputs(const mt_run *r, unsigned errors0) {
    static char buf[3][300];
    const char *p[3], *paths[3];
    int i, j, before, rc, same = 0;
    p[0] = r->o.save; p[1] = r->o.trace; p[2] = r->o.summary;
    for (i = 0; i < 3; i++)
        if (p[i] && !fz_path_inside(p[i])) return;
    if (!fz_scratch[0]) {
        strcpy(fz_scratch, "/tmp/fuzz_train_cli.XXXXXX");
        if (!mkdtemp(fz_scratch)) abort();
        atexit(fz_scratch_remove);
    }
    for (i = 0; i < 3; i++) {
        paths[i] = NULL;
        if (p[i]) {
            ipup_snprintf(buf[i], sizeof buf[i], "%s/%s", fz_scratch, p[i]);
            paths[i] = buf[i];
        }
        for (j = 0; j < i; j++)
            if (p[i] && p[j] && strcmp(p[i], p[j]) == 0) same = 1;
    }
    before = fz_dir_entries();
    rc = mt_out_check_all(paths[0], paths[1], paths[2], NULL, NULL, NULL);
    if (rc != 0 && (rc != 2 || mt_errors == errors0)) abort(); /* a refusal says why */
    if (same && rc == 0) abort();                              /* one file named twice */
    if (fz_dir_entries() != before) abort();                   /* probes leave nothing */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static mt_run R;
    mt_run *r = &R;
    ipup_config *c = &r->cfg;
    char *buf, *argv[FZ_MAX_ARGS + 1];
    int argc = 1, rc;
    size_t i, start = 0, host_bytes;
    unsigned errors0;
    static int quiet;
    if (!quiet) {
        quiet = 1;
        if (!freopen("/dev/null", "w", stdout)) abort();
        (void)mnist_train_main; /* the trainer's main is not run here */
    }
    buf = (char *)malloc(size + 1);
    if (!buf) return 0;
    if (size) memcpy(buf, data, size);
    buf[size] = '\0';
    argv[0] = (char *)"mnist-train";
    for (i = 0; i <= size && argc < FZ_MAX_ARGS; i++) {
        if (i == size || buf[i] == '\n' || buf[i] == '\0') {
            buf[i] = '\0';
            if (!fz_is_help(buf + start)) argv[argc++] = buf + start;
            start = i + 1;
        }
    }
    argv[argc] = NULL;
    memset(r, 0, sizeof *r);
    errors0 = mt_errors;
    rc = mt_parse(argc, argv, &r->o);
    if (rc != 0) {
        if (rc != 2 || mt_errors == errors0) abort(); /* a usage error, with its message */
        goto out;
    }
    /* what mnist_train_main does before it reads the data (mt_setup_args) */
    r->spec = mnist_model_find(r->o.model);
    if (!r->spec) goto out;
    fz_check_outputs(r, errors0);
    errors0 = mt_errors;
    mt_resolve(&r->o, r->spec);
    if (mt_configure(r) != 0) {
        if (mt_errors == errors0) abort();
        goto out;
    }
    if (r->n_stages < 1 || r->n_stages > MT_MAX_STAGES) abort();
    /* the trainer's configuration, but one step a run, the cooperative runner (the
       threaded one is under TSan/helgrind, not here) and synthetic data */
    mt_fill_config(r, IPUP_RUNNER_COOP);
    c->repeat = 1;
    c->infeed = tiny_infeed;
    c->infeed_user = &fz_data;
    host_bytes = ipup_host_bytes(c);
    if (host_bytes == 0 || host_bytes > sizeof fz_pool / 2) {
        if (getenv("FZ_VERBOSE")) fprintf(stderr, "host bytes %zu: not run\n", host_bytes);
        goto out;
    }
    c->host.mem = fz_pool;
    c->host.bytes = host_bytes;
    rc = ipup_plan_config(&fz_emu_, c, &r->plan);
    if (rc != IPUP_OK) {
        if (!ipup_last_error(&fz_emu_)[0]) abort();
        if (getenv("FZ_VERBOSE")) fprintf(stderr, "plan refused: %s\n", ipup_last_error(&fz_emu_));
        goto out;
    }
    if ((int64_t)r->o.batch * r->o.accumulate * r->o.replicas <= 32) {
        size_t off = (host_bytes + 63) / 64 * 64;
        int ok = mt_carve_pools(r, fz_pool + off, sizeof fz_pool - off) == 0;
        if (!ok && getenv("FZ_VERBOSE")) fprintf(stderr, "pools above %zu bytes: not run\n", sizeof fz_pool);
        if (ok) {
            ipup_run_stats st;
            rc = ipup_init(&fz_emu_, c);
            if (rc != IPUP_OK) abort(); /* planned, pools as planned: must start */
            rc = ipup_run_steps(&fz_emu_, 1, &st);
            if (rc != IPUP_OK && rc != IPUP_ERR_NUMERIC) abort();
            if (rc == IPUP_ERR_NUMERIC && !strstr(ipup_last_error(&fz_emu_), "stage")) abort();
            if (getenv("FZ_VERBOSE"))
                fprintf(stderr, "ran one step: %d stages, %d IPUs, rc %d\n", (int)r->plan.stages, (int)r->plan.ipus, rc);
            ipup_shutdown(&fz_emu_);
        }
    }
out:
    free(buf);
    return 0;
}
