/* ref_kernels.h - plain scalar reference loops for the kernels of ipupipe_kernels.h, in the
 * same layouts (row-major dense: x[B][IN], w[IN][OUT]; NHWC conv3x3, valid padding, stride 1:
 * x[B][H][W][CI], w[3][3][CI][CO], y[B][H-2][W-2][CO]).
 *
 * Shared by tests/test_kernels.c (checks results in double) and bench/bench_kernels.c (times
 * the naive loops in float). The element type is ref_real: double, or float when the includer
 * defines REF_KERNELS_FLOAT before including this header. Include it once per file.
 */
#ifndef IPUPIPE_TESTS_REF_KERNELS_H
#define IPUPIPE_TESTS_REF_KERNELS_H

#include <string.h>

#ifdef REF_KERNELS_FLOAT
typedef float ref_real;
#else
typedef double ref_real;
#endif

/* an includer may use only some of these */
#if defined(__GNUC__) || defined(__clang__)
#define REF_UNUSED __attribute__((unused))
#else
#define REF_UNUSED
#endif

/* y = x w + b (for no bias, pass zeros: a NULL test here changes the code GCC makes for the
   bench's float loop, and with it the naive figures) */
static REF_UNUSED void ref_dense(int B, int IN, int OUT, const ref_real *x, const ref_real *w,
                                 const ref_real *b, ref_real *y) {
    int r, k, o;
    for (r = 0; r < B; r++)
        for (o = 0; o < OUT; o++) {
            ref_real s = b[o];
            for (k = 0; k < IN; k++) s += x[r * IN + k] * w[k * OUT + o];
            y[r * OUT + o] = s;
        }
}

/* dx = dy w^T (written) */
static REF_UNUSED void ref_dense_bwd_data(int B, int IN, int OUT, const ref_real *w,
                                          const ref_real *dy, ref_real *dx) {
    int r, i, o;
    for (r = 0; r < B; r++)
        for (i = 0; i < IN; i++) {
            ref_real s = 0;
            for (o = 0; o < OUT; o++) s += dy[r * OUT + o] * w[i * OUT + o];
            dx[r * IN + i] = s;
        }
}

/* dw += x^T dy (accumulated, as the library does) */
static REF_UNUSED void ref_dense_bwd_w(int B, int IN, int OUT, const ref_real *x,
                                       const ref_real *dy, ref_real *dw) {
    int r, i, o;
    for (i = 0; i < IN; i++)
        for (o = 0; o < OUT; o++) {
            ref_real s = 0;
            for (r = 0; r < B; r++) s += x[r * IN + i] * dy[r * OUT + o];
            dw[i * OUT + o] += s;
        }
}

/* y = conv3x3(x, w) + b (for no bias, pass zeros) */
static REF_UNUSED void ref_conv(int B, int H, int W, int CI, int CO, const ref_real *x,
                                const ref_real *w, const ref_real *b, ref_real *y) {
    int n, oh, ow, kh, kw, ci, co, OH = H - 2, OW = W - 2;
    for (n = 0; n < B; n++)
        for (oh = 0; oh < OH; oh++)
            for (ow = 0; ow < OW; ow++)
                for (co = 0; co < CO; co++) {
                    ref_real s = b[co];
                    for (kh = 0; kh < 3; kh++)
                        for (kw = 0; kw < 3; kw++)
                            for (ci = 0; ci < CI; ci++)
                                s += x[((n * H + oh + kh) * W + ow + kw) * CI + ci] *
                                     w[((kh * 3 + kw) * CI + ci) * CO + co];
                    y[((n * OH + oh) * OW + ow) * CO + co] = s;
                }
}

/* The transposed loops of ref_conv: dx written (skipped when NULL), dw and db accumulated. */
static REF_UNUSED void ref_conv_bwd(int B, int H, int W, int CI, int CO, const ref_real *x,
                                    const ref_real *w, const ref_real *dy, ref_real *dx,
                                    ref_real *dw, ref_real *db) {
    int n, oh, ow, co, kh, kw, ci, OH = H - 2, OW = W - 2;
    if (dx) memset(dx, 0, sizeof(ref_real) * (size_t)(B * H * W * CI));
    for (n = 0; n < B; n++)
        for (oh = 0; oh < OH; oh++)
            for (ow = 0; ow < OW; ow++)
                for (co = 0; co < CO; co++) {
                    ref_real g = dy[((n * OH + oh) * OW + ow) * CO + co];
                    db[co] += g;
                    for (kh = 0; kh < 3; kh++)
                        for (kw = 0; kw < 3; kw++)
                            for (ci = 0; ci < CI; ci++) {
                                int xi = ((n * H + oh + kh) * W + ow + kw) * CI + ci;
                                int wi = ((kh * 3 + kw) * CI + ci) * CO + co;
                                dw[wi] += x[xi] * g;
                                if (dx) dx[xi] += w[wi] * g;
                            }
                }
}

#endif /* IPUPIPE_TESTS_REF_KERNELS_H */
