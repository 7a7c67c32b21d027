/* fma_peak.h - this core's single-precision FMA peak, measured in-process in about 0.1 s.
 * MIT licence.
 *
 *   double fma_peak_gflops(int quick, const char **what);   GFLOP/s; *what names the loop
 *
 * Many independent FMA chains (24 zmm accumulators with AVX-512, 12 ymm with AVX2, enough
 * to hide the FMA latency on any x86 core; 8 scalar fmaf chains elsewhere), run as many
 * short trials (~0.5 ms each; quick: a quarter of them, ~25 ms in all); the best trial is the peak, since on a shared machine the
 * best one is the trial that ran alone on its core. On x86-64 with GCC or clang the vector
 * loops are compiled for AVX2 / AVX-512 through target attributes and chosen at run time,
 * so a portable or -Os build measures the same machine peak as a -march=native one: the
 * denominator of every "fraction of peak" figure (make bench, make run) is the machine's,
 * not the build's. Used by bench/bench_kernels.c, bench/bench_train.c and the trainer.
 * Needs POSIX clock_gettime (_POSIX_C_SOURCE 199309L or later before the first include).
 */
#ifndef FMA_PEAK_H
#define FMA_PEAK_H

#include <math.h>
#include <time.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define FMA_PEAK_X86 1
#endif

static volatile float fma_peak_sink;

static double fma_peak_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#ifdef FMA_PEAK_X86
__attribute__((target("avx512f"))) static double fma_peak_zmm(long iters) {
    __m512 acc[24], m = _mm512_set1_ps(0.9999999f), a = _mm512_set1_ps(1e-7f);
    long i;
    int c;
    double t0, t1;
    for (c = 0; c < 24; c++) acc[c] = _mm512_set1_ps((float)c);
    t0 = fma_peak_now();
    for (i = 0; i < iters; i++) {
#pragma GCC unroll 24
        for (c = 0; c < 24; c++) acc[c] = _mm512_fmadd_ps(acc[c], m, a);
    }
    t1 = fma_peak_now();
    for (c = 1; c < 24; c++) acc[0] = _mm512_add_ps(acc[0], acc[c]);
    fma_peak_sink = _mm512_reduce_add_ps(acc[0]);
    return 2.0 * 16.0 * 24.0 * (double)iters / (t1 - t0) * 1e-9;
}
__attribute__((target("avx2,fma"))) static double fma_peak_ymm(long iters) {
    __m256 acc[12], m = _mm256_set1_ps(0.9999999f), a = _mm256_set1_ps(1e-7f); /* 12: no spills */
    float out[8];
    long i;
    int c;
    double t0, t1;
    for (c = 0; c < 12; c++) acc[c] = _mm256_set1_ps((float)c);
    t0 = fma_peak_now();
    for (i = 0; i < iters; i++) {
#pragma GCC unroll 12
        for (c = 0; c < 12; c++) acc[c] = _mm256_fmadd_ps(acc[c], m, a);
    }
    t1 = fma_peak_now();
    for (c = 1; c < 12; c++) acc[0] = _mm256_add_ps(acc[0], acc[c]);
    _mm256_storeu_ps(out, acc[0]);
    fma_peak_sink = out[0];
    return 2.0 * 8.0 * 12.0 * (double)iters / (t1 - t0) * 1e-9;
}
#endif

static double fma_peak_scalar(long iters) {
    float acc[8], m = 0.9999999f, a = 1e-7f;
    long i;
    int c;
    double t0, t1;
    for (c = 0; c < 8; c++) acc[c] = (float)c;
    t0 = fma_peak_now();
    for (i = 0; i < iters; i++) {
#pragma GCC unroll 8
        for (c = 0; c < 8; c++) acc[c] = fmaf(acc[c], m, a);
    }
    t1 = fma_peak_now();
    fma_peak_sink = acc[0] + acc[7];
    return 2.0 * 8.0 * (double)iters / (t1 - t0) * 1e-9;
}

/* The best trial of the widest loop this CPU runs; *what (if not NULL) names it. */
static double fma_peak_gflops(int quick, const char **what) {
    double best = 0.0, g;
    const char *w = "scalar fmaf, 8 chains";
    const int div = quick ? 4 : 1;
    int rep;
    for (rep = 0; rep < 10 / div; rep++) {
        g = fma_peak_scalar(200000);
        if (g > best) best = g;
    }
#ifdef FMA_PEAK_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        for (rep = 0; rep < 60 / div; rep++) {
            g = fma_peak_ymm(300000);
            if (g > best) { best = g; w = "ymm FMA, 12 chains"; }
        }
    if (__builtin_cpu_supports("avx512f"))
        for (rep = 0; rep < 100 / div; rep++) {
            g = fma_peak_zmm(150000);
            if (g > best) { best = g; w = "zmm FMA, 24 chains"; }
        }
#endif
    if (what) *what = w;
    return best;
}

#endif /* FMA_PEAK_H */
