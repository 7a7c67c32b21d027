/* test_kernels_blocked.c - the register-blocked scalar path of ipupipe_kernels.h (the one
 * chosen for Cortex-M4F/M7/M33 and RV32F, IPUPIPE_SCALAR_BLOCKED), forced on here on the
 * host, against the portable kernels compiled in the same translation unit: the same bits
 * (memcmp) for every dense and 3x3 convolution kernel, forward (with and without bias and
 * the fused ReLU) and backward (every combination of dx, dw, db; dw and db added into
 * non-zero values), over many shapes, the tile edges (1, 2, 3, 5, 6, 7 rows or columns)
 * and the firmware's 196-64-32-10 MLP at batch 8 included. Exact-size heap arrays, so
 * ASan / Valgrind see any access outside them.
 */
#define IPUPIPE_SCALAR_BLOCKED 1
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe_kernels.h"
#include "ttest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t trng_state = 0x9E3779B97F4A7C15u; /* xorshift64* (Vigna 2016) */
static float trand(void) { /* uniform in [-1, 1), with exact zeros now and then */
    trng_state ^= trng_state >> 12;
    trng_state ^= trng_state << 25;
    trng_state ^= trng_state >> 27;
    {
        const uint64_t r = trng_state * 2685821657736338717u;
        if ((r & 63u) == 0u) return 0.0f;
        return (float)(r >> 40) * (2.0f / 16777216.0f) - 1.0f;
    }
}
static float *frand(size_t n) {
    float *p = (float *)malloc((n ? n : 1) * sizeof(float));
    size_t i;
    if (!p) abort();
    for (i = 0; i < n; i++) p[i] = trand();
    return p;
}
static float *fcopy(size_t n, const float *src) {
    float *p = (float *)malloc((n ? n : 1) * sizeof(float));
    if (!p) abort();
    if (n) memcpy(p, src, n * sizeof(float));
    return p;
}
static int same(size_t n, const float *a, const float *b) {
    return n == 0 || memcmp(a, b, n * sizeof(float)) == 0;
}

static int dense_cases; /* shapes checked, printed by the tests */
/* every dense kernel at (B, IN, OUT): the blocked path's bits against the portable's */
static void check_dense(int B, int IN, int OUT) {
    const size_t nx = (size_t)B * (size_t)IN, nw = (size_t)IN * (size_t)OUT,
                 ny = (size_t)B * (size_t)OUT;
    float *x = frand(nx), *w = frand(nw), *b = frand((size_t)OUT), *dy = frand(ny);
    float *y1 = frand(ny), *y2 = frand(ny), *dx1 = frand(nx), *dx2 = frand(nx);
    float *dw1 = frand(nw), *dw2 = fcopy(nw, dw1), *db1 = frand((size_t)OUT),
          *db2 = fcopy((size_t)OUT, db1);
    size_t i;
    int mask;
    ipup_dense_fwd_f32(B, IN, OUT, x, w, b, y1);
    ipup_dense_fwd_f32_portable(B, IN, OUT, x, w, b, y2);
    TT_CHECK_MSG(same(ny, y1, y2), "dense forward %dx%dx%d", B, IN, OUT);
    ipup_dense_fwd_f32(B, IN, OUT, x, w, NULL, y1);
    ipup_dense_fwd_f32_portable(B, IN, OUT, x, w, NULL, y2);
    TT_CHECK_MSG(same(ny, y1, y2), "dense forward, no bias, %dx%dx%d", B, IN, OUT);
    ipup_dense_relu_fwd_f32(B, IN, OUT, x, w, b, y1);
    ipup_dense_fwd_f32_portable(B, IN, OUT, x, w, b, y2);
    for (i = 0; i < ny; i++) y2[i] = y2[i] > 0.0f ? y2[i] : 0.0f;
    TT_CHECK_MSG(same(ny, y1, y2), "dense ReLU forward %dx%dx%d", B, IN, OUT);
    for (mask = 1; mask < 8; mask++) { /* dx, dw, db: each combination */
        float *gx1 = mask & 1 ? dx1 : NULL, *gx2 = mask & 1 ? dx2 : NULL;
        float *gw1 = mask & 2 ? dw1 : NULL, *gw2 = mask & 2 ? dw2 : NULL;
        float *gb1 = mask & 4 ? db1 : NULL, *gb2 = mask & 4 ? db2 : NULL;
        ipup_dense_bwd_f32(B, IN, OUT, x, w, dy, gx1, gw1, gb1);
        ipup_dense_bwd_f32_portable(B, IN, OUT, x, w, dy, gx2, gw2, gb2);
        TT_CHECK_MSG(same(nx, dx1, dx2) && same(nw, dw1, dw2) && same((size_t)OUT, db1, db2),
                     "dense backward %dx%dx%d, gradients %d (dx 1, dw 2, db 4)", B, IN, OUT, mask);
    }
    dense_cases++;
    free(x); free(w); free(b); free(dy); free(y1); free(y2); free(dx1); free(dx2);
    free(dw1); free(dw2); free(db1); free(db2);
}

TTEST(dense_bits) {
    static const int bs[] = {1, 2, 3, 4, 5, 8, 9};
    static const int ins[] = {1, 2, 3, 4, 5, 7, 16, 33};
    static const int outs[] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 13};
    size_t i, j, k;
    dense_cases = 0;
    for (i = 0; i < sizeof bs / sizeof bs[0]; i++)
        for (j = 0; j < sizeof ins / sizeof ins[0]; j++)
            for (k = 0; k < sizeof outs / sizeof outs[0]; k++) check_dense(bs[i], ins[j], outs[k]);
    check_dense(3, 0, 5); /* IN = 0: y = bias */
    check_dense(32, 784, 256);
    check_dense(17, 100, 37);
    printf("    %d dense shapes, every kernel bit for bit\n", dense_cases);
}

TTEST(dense_firmware_mlp) { /* fw_model.h: 196-64-32-10, micro-batch 8 */
    dense_cases = 0;
    check_dense(8, 196, 64);
    check_dense(8, 64, 32);
    check_dense(8, 32, 10);
    TT_EQ_INT(dense_cases, 3);
}

static int conv_cases;
static void check_conv(int B, int H, int W, int CI, int CO) {
    const int OH = H - 2, OW = W - 2;
    const size_t nx = (size_t)B * (size_t)H * (size_t)W * (size_t)CI,
                 nw = (size_t)9 * (size_t)CI * (size_t)CO,
                 ny = (size_t)B * (size_t)OH * (size_t)OW * (size_t)CO;
    float *x = frand(nx), *w = frand(nw), *b = frand((size_t)CO), *dy = frand(ny);
    float *y1 = frand(ny), *y2 = frand(ny), *dx1 = frand(nx), *dx2 = frand(nx);
    float *dw1 = frand(nw), *dw2 = fcopy(nw, dw1), *db1 = frand((size_t)CO),
          *db2 = fcopy((size_t)CO, db1);
    float *scratch = frand((size_t)IPUP_CONV3X3_BWD_SCRATCH(B, H, W, CI, CO));
    size_t i;
    int mask;
    ipup_conv3x3_fwd_f32(B, H, W, CI, CO, x, w, b, y1, NULL);
    ipup_conv3x3_fwd_f32_portable(B, H, W, CI, CO, x, w, b, y2);
    TT_CHECK_MSG(same(ny, y1, y2), "conv forward %dx%dx%dx%d->%d", B, H, W, CI, CO);
    ipup_conv3x3_fwd_f32(B, H, W, CI, CO, x, w, NULL, y1, NULL);
    ipup_conv3x3_fwd_f32_portable(B, H, W, CI, CO, x, w, NULL, y2);
    TT_CHECK_MSG(same(ny, y1, y2), "conv forward, no bias, %dx%dx%dx%d->%d", B, H, W, CI, CO);
    ipup_conv3x3_relu_fwd_f32(B, H, W, CI, CO, x, w, b, y1, NULL);
    ipup_conv3x3_fwd_f32_portable(B, H, W, CI, CO, x, w, b, y2);
    for (i = 0; i < ny; i++) y2[i] = y2[i] > 0.0f ? y2[i] : 0.0f;
    TT_CHECK_MSG(same(ny, y1, y2), "conv ReLU forward %dx%dx%dx%d->%d", B, H, W, CI, CO);
    for (mask = 1; mask < 8; mask++) {
        float *gx1 = mask & 1 ? dx1 : NULL, *gx2 = mask & 1 ? dx2 : NULL;
        float *gw1 = mask & 2 ? dw1 : NULL, *gw2 = mask & 2 ? dw2 : NULL;
        float *gb1 = mask & 4 ? db1 : NULL, *gb2 = mask & 4 ? db2 : NULL;
        ipup_conv3x3_bwd_f32(B, H, W, CI, CO, x, w, dy, gx1, gw1, gb1, mask & 1 ? scratch : NULL);
        ipup_conv3x3_bwd_f32_portable(B, H, W, CI, CO, x, w, dy, gx2, gw2, gb2);
        TT_CHECK_MSG(same(nx, dx1, dx2) && same(nw, dw1, dw2) && same((size_t)CO, db1, db2),
                     "conv backward %dx%dx%dx%d->%d, gradients %d (dx 1, dw 2, db 4)", B, H, W,
                     CI, CO, mask);
    }
    conv_cases++;
    free(x); free(w); free(b); free(dy); free(y1); free(y2); free(dx1); free(dx2);
    free(dw1); free(dw2); free(db1); free(db2); free(scratch);
}

TTEST(conv_bits) {
    static const int hw[][2] = {{3, 3}, {3, 7}, {4, 5}, {6, 6}, {7, 10}, {9, 4}};
    static const int cis[] = {1, 2, 3, 4, 5, 8};
    static const int cos_[] = {1, 2, 3, 4, 6, 9, 16};
    size_t i, j, k;
    conv_cases = 0;
    for (i = 0; i < sizeof hw / sizeof hw[0]; i++)
        for (j = 0; j < sizeof cis / sizeof cis[0]; j++)
            for (k = 0; k < sizeof cos_ / sizeof cos_[0]; k++)
                check_conv(1 + (int)(k % 2), hw[i][0], hw[i][1], cis[j], cos_[k]);
    check_conv(2, 14, 14, 1, 8);   /* a first layer */
    check_conv(2, 12, 12, 8, 16);
    printf("    %d conv shapes, every kernel bit for bit\n", conv_cases);
}

TTEST(path_named) {
    printf("    kernels path: %s\n", IPUP_KERNELS_SIMD);
    TT_STREQ(IPUP_KERNELS_SIMD, "scalar-blocked");
}

static const ttest_case cases[] = {
    TT_CASE(dense_bits), TT_CASE(dense_firmware_mlp), TT_CASE(conv_bits), TT_CASE(path_named),
};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
