/* tests/test_adam.c - PopXL's Adam (decoupled weight decay, the bias-correction switch):
   ipup_adamw_f32 against a double-precision Adam/AdamW written from the papers
   (ref_adam.h) over 100 steps of a fixed gradient sequence, with and without weight decay
   and bias correction; the emulator's update (cfg.opt.weight_decay,
   cfg.opt.no_bias_correction) against the plain loop of ref_model.h, bit for bit, over
   both runners and offload; the configuration's refusals. */
#include "tiny_model.h" /* includes ipupipe.h */
#include "ref_model.h"
#include "ref_adam.h"
#include "ttest.h"

#include <float.h>

/* ------------------------------------------------------------------ the kernel */
#define AN 1037  /* SIMD blocks and a scalar tail */
#define ASTEPS 100

/* the gradient of element i at step t: a fixed sequence (not of w), sign changes and a
   spread of magnitudes (1e-3 .. 1), so that m cancels and v spans decades */
static float grad_of(int i, int t) {
    double mag = pow(10.0, -3.0 * (double)(i % 13) / 12.0);
    return (float)(mag * sin(0.37 * (double)i + 1.3 * (double)t) +
                   0.1 * mag * cos(0.05 * (double)t));
}

/* 100 steps of ipup_adamw_f32 and of the double reference from the same start; the largest
   |w_kernel - w_ref| after the last step; *bound gets the error bound (see below). */
static double run_kernel_vs_ref(float wd, int bias_correction, double *bound) {
    static float w[AN], m[AN], v[AN], g[AN];
    static double wr[AN], mr[AN], vr[AN];
    const float lr = 0.01f, b1 = 0.9f, b2 = 0.999f, eps = 1e-5f, scale = 1.0f / 6.0f;
    ref_adam_opts o;
    double worst = 0.0, wmax = 0.0;
    int i, t;
    o.lr = (double)lr;
    o.beta1 = (double)b1;
    o.beta2 = (double)b2;
    o.eps = (double)eps;
    o.weight_decay = (double)wd;
    o.bias_correction = bias_correction;
    for (i = 0; i < AN; i++) {
        w[i] = (float)sin(1.7 * (double)i); /* in [-1, 1] */
        wr[i] = (double)w[i];
        m[i] = v[i] = 0.0f;
        mr[i] = vr[i] = 0.0;
    }
    for (t = 1; t <= ASTEPS; t++) {
        for (i = 0; i < AN; i++) g[i] = grad_of(i, t);
        ipup_adamw_f32(AN, lr, b1, b2, eps, wd, bias_correction ? t : 0, scale, w, m, v, g);
        ref_adam_step(&o, t, (double)scale, AN, wr, mr, vr, g);
        for (i = 0; i < AN; i++)
            if (fabs(wr[i]) > wmax) wmax = fabs(wr[i]);
    }
    for (i = 0; i < AN; i++) {
        double d = fabs((double)w[i] - wr[i]);
        if (d > worst || d != d) worst = d;
    }
    /* The bound, to first order in u = 2^-24 (float's unit round-off). The reference's own
       error is ~1e-16 and counts as exact. Each step the kernel (1) rounds the new weight:
       <= u |w|; (2) computes the step q = lr mh / (sqrt(vh) + eps) + lr wd w in about ten
       roundings, each <= u |q|; (3) carries the errors of m and v: v is a sum of positive
       terms, so its relative error grows by at most 3u a step (3uT after T steps) and that
       of sqrt(v) by half of it; m's absolute error grows by at most 3u max|m| a step (m may
       cancel, so a relative bound does not hold), which over sqrt(vh) is again <= 3uT
       relative to the largest |q|. |q| <= 7.3 lr + lr wd |w|: by Cauchy-Schwarz |m| <=
       (1-b1) / sqrt((1-b2)(1 - b1^2/b2)) sqrt(v) = 7.27 sqrt(v), and bias correction only
       lowers the ratio (sqrt(1-b2^t) / (1-b1^t) <= 0.32). The errors add over T steps
       (weight decay shrinks them by 1 - lr wd): T u (max|w| + (10 + 4.5 T) max|q|). */
    *bound = (double)ASTEPS * ldexp(1.0, -24) *
             (wmax + (10.0 + 4.5 * ASTEPS) * ((7.3 + (double)wd * wmax) * (double)lr));
    return worst;
}

TTEST(adam_kernel_against_double_reference_100_steps) {
    static const struct { float wd; int bc; const char *what; } k[] = {
        {0.0f, 1, "Adam (bias correction)"},
        {0.01f, 1, "AdamW wd 0.01 (bias correction)"},
        {0.0f, 0, "Adam without bias correction"},
        {0.01f, 0, "AdamW wd 0.01 without bias correction"},
    };
    size_t c;
    for (c = 0; c < sizeof k / sizeof k[0]; c++) {
        double bound = 0.0, d = run_kernel_vs_ref(k[c].wd, k[c].bc, &bound);
        printf("    %-40s largest |w - w_ref| after %d steps: %.3g (bound %.3g)\n", k[c].what,
               ASTEPS, d, bound);
        TT_CHECK_MSG(d <= bound, "%s: %g > bound %g", k[c].what, d, bound);
    }
}

/* What each switch does at step 1, from m = v = 0: with bias correction the step is
   lr g / (|g| + eps), about lr sign(g); without, (1 - b1) / sqrt(1 - b2) = 3.16 times that;
   weight decay adds lr wd w. */
TTEST(adam_kernel_switches_at_step_one) {
    float w[3] = {0.5f, -0.25f, 2.0f}, m[3] = {0}, v[3] = {0}, g[3] = {0.3f, -0.02f, 1e-4f};
    float w2[3], m2[3] = {0}, v2[3] = {0};
    const float w0[3] = {0.5f, -0.25f, 2.0f};
    int i;
    memcpy(w2, w, sizeof w);
    /* bias corrected, wd 0: the step is lr * g / (|g| + eps), about lr * sign(g) */
    ipup_adamw_f32(3, 0.01f, 0.9f, 0.999f, 1e-8f, 0.0f, 1, 1.0f, w, m, v, g);
    for (i = 0; i < 3; i++)
        TT_NEAR((double)(w2[i] - w[i]), 0.01 * (g[i] > 0 ? 1.0 : -1.0), 1e-6);
    /* no bias correction: (1-b1) g / (sqrt(1-b2) |g| + eps) = 3.1623 lr sign(g) (eps small) */
    memcpy(w, w2, sizeof w);
    memset(m, 0, sizeof m);
    memset(v, 0, sizeof v);
    ipup_adamw_f32(3, 0.01f, 0.9f, 0.999f, 1e-12f, 0.0f, 0, 1.0f, w, m, v, g);
    for (i = 0; i < 3; i++)
        TT_NEAR((double)(w2[i] - w[i]), 0.1 / sqrt(0.001) * 0.01 * (g[i] > 0 ? 1.0 : -1.0), 1e-5);
    /* decoupled weight decay adds lr * wd * w to the step, whatever the gradient */
    memcpy(w, w2, sizeof w);
    memset(m, 0, sizeof m);
    memset(v, 0, sizeof v);
    ipup_adamw_f32(3, 0.01f, 0.9f, 0.999f, 1e-8f, 0.5f, 1, 1.0f, w, m, v, g);
    ipup_adamw_f32(3, 0.01f, 0.9f, 0.999f, 1e-8f, 0.0f, 1, 1.0f, w2, m2, v2, g);
    for (i = 0; i < 3; i++) TT_NEAR((double)(w2[i] - w[i]), 0.01 * 0.5 * (double)w0[i], 1e-6);
}

/* ------------------------------------------------------------------ the emulator */
#define POOL_BYTES (128 * 1024)
IPUP_ALIGN64 static uint8_t g_ipu[4][POOL_BYTES];
IPUP_ALIGN64 static uint8_t g_stream[4][POOL_BYTES];
IPUP_ALIGN64 static uint8_t g_host[1 << 18];
static ipup_emu g_emu;
static ref_model g_ref;
static ipup_model_desc g_md;

static void sample(int64_t sample0, int32_t i, float *x, int32_t *label) {
    int64_t s = sample0 + i;
    int32_t j;
    for (j = 0; j < 6; j++) x[j] = (float)sin(0.3 * (double)(s * 7 + j));
    *label = (int32_t)(s % 4);
}
static tiny_data g_data = {sample, 6};

/* 12 steps of the emulator and of the plain loop; the parameter tensors that differ in
   bits, or -1 when the emulator failed. */
static int train_vs_loop(float wd, int no_bc, ipup_runner_kind runner, int offload, ipup_emu *e) {
    ipup_config c = tiny_config(&g_md, 2, 3, 4, 4, 77, IPUP_OPT_ADAM, 0.01f, tiny_infeed, &g_data);
    int k, rc, bad;
    tiny_pools(&c, 2, g_ipu, g_stream, POOL_BYTES, g_host, sizeof g_host);
    c.runner = runner;
    c.offload = offload;
    c.opt.eps = 1e-5f;
    c.opt.weight_decay = wd;
    c.opt.no_bias_correction = no_bc;
    if ((rc = ipup_init(e, &c)) != IPUP_OK) {
        TT_FAILF("init: %.300s", ipup_last_error(e));
        return -1;
    }
    ref_begin(&g_ref, &c, e);
    for (k = 0; k < 12; k += 4) {
        if ((rc = ipup_run(e, NULL)) != IPUP_OK) {
            TT_FAILF("run: %.300s", ipup_last_error(e));
            ipup_shutdown(e);
            return -1;
        }
        for (rc = 0; rc < 4; rc++) ref_step(&g_ref, k + rc, tiny_infeed, &g_data);
    }
    bad = ref_diff(&g_ref, e, NULL);
    return bad;
}

/* the first weight tensor's first elements, to tell runs apart */
static void first_weights(ipup_emu *e, float *out, int n) {
    ipup_tensor_info t;
    ipup_tensor_get(e, 0, &t);
    memcpy(out, t.data, (size_t)n * sizeof(float));
}

TTEST(adam_emulator_switches_bit_identical_to_loop) {
    static const struct { float wd; int nbc; } k[] = {{0.0f, 0}, {0.02f, 0}, {0.0f, 1}, {0.02f, 1}};
    float w[4][8];
    size_t c;
    int runner, off, a, b;
    for (c = 0; c < 4; c++)
        for (runner = 0; runner < 2; runner++)
            for (off = 0; off < 2; off++) {
                ipup_runner_kind rk = runner ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
                int bad = train_vs_loop(k[c].wd, k[c].nbc, rk, off, &g_emu);
                TT_CHECK_MSG(bad == 0, "wd %g, no_bias_correction %d, runner %d, offload %d: "
                             "%d tensors differ from the plain loop", (double)k[c].wd, k[c].nbc,
                             runner, off, bad);
                if (bad >= 0) {
                    if (runner == 0 && off == 0) first_weights(&g_emu, w[c], 8);
                    ipup_shutdown(&g_emu);
                }
            }
    /* each switch changes the weights: the knob reaches the update */
    for (a = 0; a < 4; a++)
        for (b = a + 1; b < 4; b++)
            TT_CHECK_MSG(memcmp(w[a], w[b], sizeof w[a]) != 0,
                         "configurations %d and %d train the same weights", a, b);
}

TTEST(adam_config_refusals) {
    static const struct { float wd; int nbc; const char *needle; } k[] = {
        {-0.01f, 0, "cfg.opt.weight_decay is -0.01: it must be a finite number >= 0"},
        {0.0f, 2, "cfg.opt.no_bias_correction is 2: use 0"},
    };
    size_t c;
    for (c = 0; c < sizeof k / sizeof k[0] + 2; c++) {
        ipup_config cfg =
            tiny_config(&g_md, 2, 3, 4, 4, 77, IPUP_OPT_ADAM, 0.01f, tiny_infeed, &g_data);
        int rc;
        tiny_pools(&cfg, 2, g_ipu, g_stream, POOL_BYTES, g_host, sizeof g_host);
        if (c < 2) {
            cfg.opt.weight_decay = k[c].wd;
            cfg.opt.no_bias_correction = k[c].nbc;
        } else cfg.opt.weight_decay = c == 2 ? (float)NAN : (float)INFINITY;
        rc = ipup_init(&g_emu, &cfg);
        TT_EQ_INT(rc, IPUP_ERR_CONFIG);
        if (c < 2) TT_CONTAINS(ipup_last_error(&g_emu), k[c].needle);
        else TT_CONTAINS(ipup_last_error(&g_emu), "weight decay cfg.opt.weight_decay");
        if (rc == IPUP_OK) ipup_shutdown(&g_emu);
    }
}

static const ttest_case cases[] = {
    TT_CASE(adam_kernel_against_double_reference_100_steps),
    TT_CASE(adam_kernel_switches_at_step_one),
    TT_CASE(adam_emulator_switches_bit_identical_to_loop),
    TT_CASE(adam_config_refusals),
};

int main(int argc, char **argv) {
    tiny_model_or_exit(&g_md, 1, 1, 6, "dense8,relu,dense4,xent");
    return TTEST_MAIN(cases, argc, argv);
}
