/* export_layers.c - the C export (examples/common/export_c.h) of issue 30's layers, built
   twice by tests/test_export_layers.sh:

     cc ... tests/export_layers.c -o gen          gen DIR
       trains small models of every new layer kind (batch norms folded into the conv,
       depthwise or dense before them, a batch norm after an activation kept, residual
       blocks with and without a shortcut, sigmoid, tanh, leaky, hard-swish, bce) for a few
       steps over 2 stages, writes DIR/NAME.h with expc_write, and DIR/NAME.bin: 13 inputs,
       ipup_predict's outputs on them, and the output width;
     cc ... -DEXPORT_HEADER='"DIR/NAME.h"' -DEXPORT_NAME=NAME -DEXPORT_UPPER=UPPER
           tests/export_layers.c -o drv           drv DIR/NAME.bin
       checks the arrays' hash against <NAME>_WEIGHTS_FNV1A and runs <name>_predict on the
       inputs: its outputs equal ipup_predict's to 1e-5 of the largest output magnitude
       (plus 1e-6) where a batch norm was folded (the fold rounds differently: (w x + b) s
       + t against (w s) x + (b s + t)), bit for bit where none was.
   Prints `ok` / `FAIL` lines; exits 0 when all held. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define IPUPIPE_IMPLEMENTATION
#ifndef EXPORT_HEADER
#include "tiny_model.h"
#include "export_c.h"
#else
#include "ipupipe_kernels.h"
#include EXPORT_HEADER
#endif

#define NS 13 /* samples: a full micro-batch of 4 and a short last one */

#ifndef EXPORT_HEADER
IPUP_ALIGN64 static uint8_t g_ipu[2][1 << 21];
IPUP_ALIGN64 static uint8_t g_host[1 << 20];
static ipup_emu g_emu;

typedef struct { int in_n, classes, tw; } gen_feed;
static void gen_x(int in_n, int64_t idx, float *x) {
    int i;
    for (i = 0; i < in_n; i++) x[i] = 2.0f * ipup_rng_uniform_f32(23, (uint64_t)idx, (uint64_t)i) - 1.0f;
}
static int gen_infeed(void *user, const ipup_feed *fd) {
    const gen_feed *f = (const gen_feed *)user;
    int32_t i, j;
    for (i = 0; i < fd->n; i++) {
        float *x = fd->x + (size_t)i * (size_t)f->in_n;
        gen_x(f->in_n, fd->sample0 + i, x);
        for (j = 0; j < f->tw; j++) fd->targets[(size_t)i * (size_t)f->tw + (size_t)j] = x[j] > 0 ? 1.0f : 0.0f;
        if (!f->tw) fd->labels[i] = (int32_t)((x[0] + 1.0f) * 0.5f * (float)f->classes) % f->classes;
    }
    return 0;
}
static int file_write(void *user, const void *data, size_t len) {
    return fwrite(data, 1, len, (FILE *)user) == len ? 0 : 1;
}

static int gen_one(const char *dir, const char *name, int h, int w, int c, const char *text) {
    static float x[NS * 1024], y[NS * 64];
    char path[512], msg[1024];
    ipup_model_desc md;
    ipup_config cfg;
    gen_feed f;
    expc_info info;
    FILE *out;
    int32_t i, width;
    tiny_model_or_exit(&md, h, w, c, text);
    f.in_n = h * w * c;
    f.classes = 5;
    f.tw = md.layers[md.n_layers - 1].kind == IPUP_LAYER_BCE ? 3 : 0;
    cfg = tiny_config(&md, 2, 4, 3, 5, 11, IPUP_OPT_ADAM, 0.01f, gen_infeed, &f);
    tiny_pools(&cfg, 2, g_ipu, NULL, sizeof g_ipu[0], g_host, sizeof g_host);
    cfg.schedule = IPUP_SCHED_1F1B;
    if (ipup_init(&g_emu, &cfg) || ipup_run(&g_emu, NULL)) {
        printf("FAIL %s: train: %s\n", name, ipup_last_error(&g_emu));
        return 1;
    }
    snprintf(path, sizeof path, "%s/%s.h", dir, name);
    out = fopen(path, "wb");
    if (!out || expc_write(&g_emu, name, "tests/export_layers.c", file_write, out, &info, msg, sizeof msg)) {
        printf("FAIL %s: export: %s\n", name, msg);
        if (out) fclose(out);
        return 1;
    }
    fclose(out);
    width = ipup_output_width(&g_emu);
    for (i = 0; i < NS; i++) gen_x(f.in_n, 9000 + i, x + (size_t)i * (size_t)f.in_n);
    if (ipup_predict(&g_emu, NS, x, y, NULL)) {
        printf("FAIL %s: predict: %s\n", name, ipup_last_error(&g_emu));
        return 1;
    }
    snprintf(path, sizeof path, "%s/%s.bin", dir, name);
    out = fopen(path, "wb");
    if (!out) return 1;
    fwrite(&f.in_n, sizeof f.in_n, 1, out);
    fwrite(&width, sizeof width, 1, out);
    fwrite(x, sizeof(float), (size_t)(NS * f.in_n), out);
    fwrite(y, sizeof(float), (size_t)(NS * width), out);
    fclose(out);
    printf("ok   %s: exported (%d arrays, %lld weights)\n", name, (int)info.tensors, (long long)info.floats);
    ipup_shutdown(&g_emu);
    return 0;
}

int main(int argc, char **argv) {
    int bad = 0;
    if (argc != 2) return 2;
    /* batch norms after conv2d, depthwise and dense folded; one after a ReLU kept */
    bad += gen_one(argv[1], "mixed", 8, 8, 2,
                   "conv8k3s2same,bn,relu,dw3s1same,bn,relu,conv8k1,res(conv8k3s1same,bn,relu,conv8k3s1same,bn),"
                   "relu,bn,avgpool2,gavgpool,flatten,dense10,bn,xent");
    bad += gen_one(argv[1], "shortcut", 7, 6, 1,
                   "conv4k3x2s1x2valid,leaky0.2,res(conv6k3s2same,bn,hswish,dw3same|conv6k1s2,bn),tanh,"
                   "avgpool2x1s1,flatten,dense5,xent");
    bad += gen_one(argv[1], "plain", 1, 1, 6, "dense8,sigmoid,dense8,tanh,leaky0.1,bn,dense8,hswish,dense3,bce");
    bad += gen_one(argv[1], "cnn3", 8, 8, 1, "conv4,relu,conv4,bn,relu,flatten,dense5,xent");
    return bad ? 1 : 0;
}

#else /* the driver */
#define XD_CAT_(a, b) a##b
#define XD_CAT(a, b) XD_CAT_(a, b)
#define XN(s) XD_CAT(EXPORT_NAME, s)
#define XU(s) XD_CAT(EXPORT_UPPER, s)
static float g_scratch[XU(_SCRATCH_FLOATS)];

int main(int argc, char **argv) {
    static float x[NS * 1024], want[NS * 64], got[NS * 64];
    int32_t in_n = 0, width = 0, i;
    double worst = 0.0, big = 0.0;
#ifdef XD_BN_FOLDED
    int folded = XD_BN_FOLDED > 0, fails = 0;
#else
    int folded = 0, fails = 0;
#endif
    FILE *f = argc == 2 ? fopen(argv[1], "rb") : NULL;
    if (!f || fread(&in_n, sizeof in_n, 1, f) != 1 || fread(&width, sizeof width, 1, f) != 1 || in_n != XU(_IN) ||
        width != XU(_OUT) || fread(x, sizeof(float), (size_t)(NS * in_n), f) != (size_t)(NS * in_n) ||
        fread(want, sizeof(float), (size_t)(NS * width), f) != (size_t)(NS * width)) {
        printf("FAIL cannot read %s\n", argc == 2 ? argv[1] : "(no file)");
        return 1;
    }
    fclose(f);
    if (XN(_weights_fnv1a)() == XU(_WEIGHTS_FNV1A)) printf("ok   weights: the arrays hold the exported bits\n");
    else { printf("FAIL weights: hash differs\n"); fails++; }
    XN(_predict)(NS, x, got, NULL, g_scratch);
    for (i = 0; i < NS * width; i++) {
        double d = fabs((double)got[i] - (double)want[i]);
        if (d > worst) worst = d;
        if (fabs((double)want[i]) > big) big = fabs((double)want[i]);
    }
    if (folded ? worst <= 1e-5 * big + 1e-6 : worst == 0.0)
        printf("ok   predict: %s (largest difference %.3g, largest output %.3g)\n",
               folded ? "within 1e-5 of ipup_predict (batch norm folded)" : "ipup_predict's bits", worst, big);
    else { printf("FAIL predict: largest difference %.3g of outputs up to %.3g\n", worst, big); fails++; }
    return fails ? 1 : 0;
}
#endif
