/* export_driver.c - the check of a header written by examples/common/export_c.h: by
   mnist-train --export-c (tests/test_export.sh) or sensor-demo --mode anomaly --export-c
   (tests/test_sensor.sh). Built by the test, in C with gcc and clang and as C++ with g++
   and clang++, with the house warnings and -Werror:

     cc -DEXPORT_HEADER='"out/mlp.h"' -DEXPORT_NAME=mlp -DEXPORT_UPPER=MLP [-DXD_HAS_SPLIT] [-DXD_HAS_MAP] ...
     export_driver IMAGES-IDX N      the first N images of an MNIST IDX file as inputs
     export_driver - N               N inputs of <NAME>_IN floats drawn uniformly from [0, 1)
                                     (ipup_rng_uniform_f32, seed 7): any input shape

   In one process it
   1. hashes the weight arrays as this compiler parsed them and compares the hash with
      <NAME>_WEIGHTS_FNV1A, which the trainer computed from its live tensors: every bit
      of every weight survived the text;
   2. builds an emulator (ipupipe.h) of <NAME>_MODEL_TEXT with the same input shape,
      stages and micro-batch (and, with XD_HAS_MAP, the concurrent stages of
      <NAME>_MAP_TEXT, whose branches each take their columns of the unsplit arrays),
      copies the arrays into its parameter tensors, and runs ipup_predict on the N inputs;
   3. runs the generated <name>_predict on the same inputs and compares its outputs
      (the logits under xent, the predictions under mse: <NAME>_LOSS) and classes bit
      for bit. ipup_predict gives no classes under mse, so there they are the arg-max
      of its outputs, by ipup_predict's rule for xent (first maximum, NaN never wins).
   Prints one line per check and exits 0 when all held. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef XD_IMPL_APART /* -DXD_IMPL_APART: ipupipe.h's implementation is linked from another TU */
#define IPUPIPE_IMPLEMENTATION
#endif
#include "ipupipe.h"
#include EXPORT_HEADER

#define XD_CAT_(a, b) a##b
#define XD_CAT(a, b) XD_CAT_(a, b)
#define XN(s) XD_CAT(EXPORT_NAME, s)  /* XN(_predict) -> mlp_predict */
#define XU(s) XD_CAT(EXPORT_UPPER, s) /* XU(_IN) -> MLP_IN */

/* n images of the IDX file at path as floats byte / 255 (malloc'd), or NULL */
static float *xd_images(const char *path, int32_t n, int32_t feat) {
    unsigned char head[16];
    unsigned char *raw = (unsigned char *)malloc((size_t)n * (size_t)feat);
    float *x = (float *)malloc((size_t)n * (size_t)feat * sizeof(float));
    FILE *f = fopen(path, "rb");
    size_t i;
    int okay = f && raw && x && fread(head, 1, 16, f) == 16 && fread(raw, (size_t)feat, (size_t)n, f) == (size_t)n;
    if (f) fclose(f);
    if (okay)
        for (i = 0; i < (size_t)n * (size_t)feat; i++) x[i] = (float)raw[i] / 255.0f;
    free(raw);
    if (!okay) {
        free(x);
        return NULL;
    }
    return x;
}

/* n inputs of feat floats, uniform in [0, 1) from a fixed seed (malloc'd), or NULL */
static float *xd_random(int32_t n, int32_t feat) {
    float *x = (float *)malloc((size_t)n * (size_t)feat * sizeof(float));
    size_t i;
    if (x)
        for (i = 0; i < (size_t)n * (size_t)feat; i++) x[i] = ipup_rng_uniform_f32(7, 0, (uint64_t)i);
    return x;
}

/* the arg-max of each of the n rows of z (n, w): the first maximum, a NaN never wins */
static void xd_argmax(int32_t n, int32_t w, const float *z, int32_t *cls) {
    int32_t i, j;
    for (i = 0; i < n; i++) {
        const float *row = z + (size_t)i * (size_t)w;
        int32_t best = 0;
        for (j = 1; j < w; j++)
            if (row[j] > row[best] || (row[best] != row[best] && row[j] == row[j])) best = j;
        cls[i] = best;
    }
}

/* the order of a parameter tensor's array in the header: its layer, then w before b */
static int32_t xd_key(const ipup_tensor_info *t) {
    const char *h = strrchr(t->name, '#'), *p = h ? h + 1 : NULL; /* a branch: "#<digits>" at the end */
    size_t n = strlen(t->name);
    while (p && *p >= '0' && *p <= '9') p++;
    if (h && h[1] && !*p) n = (size_t)(h - t->name);
    return 2 * t->layer + (t->name[n - 1] == 'b');
}

/* an initialised emulator of the exported model, its weights copied from the arrays */
static int xd_emulator(ipup_emu *e, ipup_model_desc *m, ipup_config *c, void **mem) {
#ifdef XD_HAS_SPLIT
    static const int32_t split[] = {XU(_SPLIT)};
#endif
    static ipup_emu work;
    ipup_plan plan;
    char msg[256];
    size_t off = 0, total = 0;
    int32_t i, t = 0, d, cols[XU(_N_TENSORS) + 1] = {0};
    static char present[2 * IPUP_MAX_LAYERS];
    int64_t copied = 0, total_n = 0;
#ifdef XD_HAS_MAP
    static ipup_stage_map map;
#endif
    memset(m, 0, sizeof *m);
    if (ipup_model_parse(XU(_MODEL_TEXT), m, msg, sizeof msg) != IPUP_OK) return printf("FAIL parse: %s\n", msg), 1;
    m->in_h = XU(_IN_H);
    m->in_w = XU(_IN_W);
    m->in_c = XU(_IN_C);
    memset(c, 0, sizeof *c);
    c->model = m;
    c->stages = XU(_STAGES);
#ifdef XD_HAS_SPLIT
    c->split = split;
#endif
#ifdef XD_HAS_MAP /* trained with concurrent stages: the emulator it was exported from */
    if (ipup_sched_map_parse(XU(_MAP_TEXT), &map, msg, sizeof msg) < 0) return printf("FAIL map: %s\n", msg), 1;
    c->concurrent = &map;
#endif
    c->schedule = IPUP_SCHED_GPIPE;
    c->microbatch = XU(_BATCH);
    c->microbatches = 2 * XU(_STAGES);
    c->opt.kind = IPUP_OPT_SGD;
    c->opt.lr = 0.1f;
    c->host.bytes = 1 << 20;
    c->host.mem = mem[0] = calloc(1, c->host.bytes);
    if (ipup_plan_config(&work, c, &plan) != IPUP_OK) return printf("FAIL plan: %s\n", ipup_last_error(&work)), 1;
    for (d = 0; d < plan.ipus; d++) total += (plan.ipu_bytes[d % plan.devices] + 63) / 64 * 64 + 64;
    mem[1] = calloc(1, total);
    for (d = 0; d < plan.ipus; d++) {
        c->ipu[d].mem = (unsigned char *)mem[1] + off + (64 - (uintptr_t)((unsigned char *)mem[1] + off) % 64) % 64;
        c->ipu[d].bytes = plan.ipu_bytes[d % plan.devices];
        off += (c->ipu[d].bytes + 63) / 64 * 64 + 64;
    }
    if (ipup_init(e, c) != IPUP_OK) return printf("FAIL ipup_init: %s\n", ipup_last_error(e)), 1;
    /* the header's arrays are the (layer, w or b) of the parameter tensors in increasing
       order; a branch of a concurrent stage ("dense128.w#1") takes the next columns (output
       units) of its layer's unsplit array */
    for (i = 0; i < ipup_tensor_count(e); i++) {
        ipup_tensor_info ti;
        if (ipup_tensor_get(e, i, &ti) == IPUP_OK && ti.kind == IPUP_TENSOR_PARAM) present[xd_key(&ti)] = 1;
    }
    for (i = 0; i < ipup_tensor_count(e); i++) {
        ipup_tensor_info ti;
        int32_t r, rows, sl, k;
        if (ipup_tensor_get(e, i, &ti) != IPUP_OK || ti.kind != IPUP_TENSOR_PARAM) continue;
        for (t = 0, k = 0; k < xd_key(&ti); k++) t += present[k];
        sl = ti.shape[ti.ndim - 1];
        rows = ti.n / sl;
        if (t == XU(_N_TENSORS) || XN(_tensor_n)[t] % rows || cols[t] + sl > XN(_tensor_n)[t] / rows)
            return printf("FAIL tensor %d (%s) does not match the exported arrays\n", (int)i, ti.name), 1;
        for (r = 0; r < rows; r++)
            memcpy(ti.data + (size_t)r * (size_t)sl, XN(_tensor_data)[t] + (size_t)r * (size_t)(XN(_tensor_n)[t] / rows) + cols[t],
                   (size_t)sl * sizeof(float));
        cols[t] += sl;
        copied += ti.n;
    }
    for (t = 0; t < XU(_N_TENSORS); t++) total_n += XN(_tensor_n)[t];
    if (copied != total_n)
        return printf("FAIL the emulator's weight tensors hold %lld floats, the header's arrays %lld\n", (long long)copied,
                      (long long)total_n), 1;
    return 0;
}

int main(int argc, char **argv) {
    static ipup_emu e;
    static ipup_model_desc m;
    static ipup_config c;
    void *mem[2] = {NULL, NULL};
    int32_t n = argc > 2 ? (int32_t)atoi(argv[2]) : 0, *cls_e, *cls_x, i, agree = 0;
    float *x, *out_e, *out_x, *scratch;
    uint64_t h = XN(_weights_fnv1a)();
    int fail = 0, rc, mse = strcmp(XU(_LOSS), "mse") == 0;
    if (argc != 3 || n < 1) return printf("usage: export_driver IMAGES-IDX|- N\n"), 2;
    printf("%s weights: FNV-1a of the compiled arrays %016llx, exported %016llx\n",
           h == XU(_WEIGHTS_FNV1A) ? "ok  " : "FAIL", (unsigned long long)h, (unsigned long long)XU(_WEIGHTS_FNV1A));
    fail |= h != XU(_WEIGHTS_FNV1A);
    x = strcmp(argv[1], "-") == 0 ? xd_random(n, XU(_IN)) : xd_images(argv[1], n, XU(_IN));
    if (!x) return printf("FAIL cannot read %d images from %s\n", (int)n, argv[1]), 1;
    out_e = (float *)calloc((size_t)n * XU(_OUT), sizeof(float));
    out_x = (float *)calloc((size_t)n * XU(_OUT), sizeof(float));
    cls_e = (int32_t *)calloc((size_t)n, sizeof(int32_t));
    cls_x = (int32_t *)calloc((size_t)n, sizeof(int32_t));
    scratch = (float *)calloc(XU(_SCRATCH_FLOATS), sizeof(float));
    if (!out_e || !out_x || !cls_e || !cls_x || !scratch || xd_emulator(&e, &m, &c, mem)) return 1;
    rc = ipup_predict(&e, n, x, out_e, mse ? NULL : cls_e); /* mse: no classes (ipup_predict refuses cls) */
    if (rc == IPUP_OK && mse) xd_argmax(n, XU(_OUT), out_e, cls_e);
    if (rc != IPUP_OK || ipup_output_width(&e) != XU(_OUT))
        return printf("FAIL ipup_predict: %s (width %d)\n", ipup_last_error(&e), (int)ipup_output_width(&e)), 1;
    XN(_predict)(n, x, out_x, cls_x, scratch);
    for (i = 0; i < n; i++) agree += cls_e[i] == cls_x[i];
    rc = memcmp(out_e, out_x, (size_t)n * XU(_OUT) * sizeof(float)) == 0 && agree == n;
    printf("%s predict: %d %s, %s FNV-1a %016llx, ipup_predict %016llx; classes equal %d/%d\n", rc ? "ok  " : "FAIL",
           (int)n, argv[1][0] == '-' && !argv[1][1] ? "random inputs" : "images", mse ? "predictions" : "logits",
           (unsigned long long)XN(_fnv1a)(UINT64_C(14695981039346656037), out_x, n * XU(_OUT)),
           (unsigned long long)XN(_fnv1a)(UINT64_C(14695981039346656037), out_e, n * XU(_OUT)), (int)agree, (int)n);
    fail |= !rc;
    ipup_shutdown(&e);
    free(mem[0]);
    free(mem[1]);
    free(x);
    free(out_e);
    free(out_x);
    free(cls_e);
    free(cls_x);
    free(scratch);
    return fail;
}
