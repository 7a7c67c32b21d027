/* tests/ref_adam.h - Adam and AdamW in double precision, written from the papers for the
 * tests to hold ipupipe_kernels.h's float kernels to (tests/test_adam.c).
 *
 * Adam: Kingma & Ba, "Adam: A Method for Stochastic Optimization" (ICLR 2015), Algorithm 1.
 * Decoupled weight decay: Loshchilov & Hutter, "Decoupled Weight Decay Regularization"
 * (ICLR 2019), Algorithm 2 (AdamW), in the form of PopXL's adam_updater, whose docstring
 * gives the updater term x = mc / (sqrt(vc) + eps) + wd * w with mc = m / (1 - b1^t) and
 * vc = v / (1 - b2^t), or mc = m and vc = v without bias correction; the weight then moves
 * by -lr * x. The gradient is g * scale (the mean of an accumulated sum).
 */
#ifndef IPUPIPE_TESTS_REF_ADAM_H
#define IPUPIPE_TESTS_REF_ADAM_H

#include <math.h>

typedef struct ref_adam_opts {
    double lr, beta1, beta2, eps, weight_decay;
    int bias_correction; /* 1: divide by 1 - beta^t */
} ref_adam_opts;

/* Step t (1-based) over n doubles: w, m, v updated in place from the float gradient g. */
static inline void ref_adam_step(const ref_adam_opts *o, int t, double scale, int n, double *w,
                                 double *m, double *v, const float *g) {
    double c1 = o->bias_correction ? 1.0 - pow(o->beta1, (double)t) : 1.0;
    double c2 = o->bias_correction ? 1.0 - pow(o->beta2, (double)t) : 1.0;
    int i;
    for (i = 0; i < n; i++) {
        double gi = (double)g[i] * scale, x;
        m[i] = o->beta1 * m[i] + (1.0 - o->beta1) * gi;
        v[i] = o->beta2 * v[i] + (1.0 - o->beta2) * gi * gi;
        x = (m[i] / c1) / (sqrt(v[i] / c2) + o->eps) + o->weight_decay * w[i];
        w[i] -= o->lr * x;
    }
}

#endif /* IPUPIPE_TESTS_REF_ADAM_H */
