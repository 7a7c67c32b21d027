/* ipupipe_kernels.h - v0.5.0 - fixed-size fp32 training kernels - MIT licence (see end of file)

   Part of ipupipe: train a network the way Graphcore IPU systems do. How the three headers
   fit together (data flow, memory, determinism, conventions) is docs/architecture.md.
   This header stands on its own: it needs only <stdint.h> <stddef.h>, and <string.h> <math.h>
   for the default libc/libm hooks below.

   CONTENTS
     Each section starts with a one-line comment that opens with ">>TAG:"; grep -n '>>TAG'
     ipupipe_kernels.h finds its declarations, then its implementation. The sections, in
     order (* implementation only; + inline, declarations only):
       build          libc/libm hooks, IPUPIPE_DEF, the SIMD path
       rng+           the counter-based RNG
       elementwise+   ReLU, accumulation, finiteness, zeros
       simd-core*     the micro-kernel, the products, the transposition (SIMD builds)
       gelu           GELU
       dense          the dense layer, its fused ReLU forward, its portable references
       loss           softmax cross-entropy, mean squared error
       conv           the 3x3 convolution, its fused ReLU forward, its portable references
       maxpool        2x2 max-pool
       dropout        inverted dropout
       optimizers     SGD, momentum, Adam
       init           the Glorot initialiser
       half           IEEE binary16 storage: fp32 <-> fp16 conversions
       conv2d         the general convolution (kernel, stride, 'same'/'valid'), references
       depthwise      depthwise convolution, its portable references
       batchnorm      batch normalisation (training, inference), running statistics
       avgpool        average pooling, global average pooling
       activations    sigmoid, tanh, leaky ReLU, hard-swish; binary cross-entropy on logits

   USAGE
     In exactly ONE C or C++ file:
         #define IPUPIPE_IMPLEMENTATION
         #include "ipupipe_kernels.h"
     Everywhere else just #include "ipupipe_kernels.h".
     Define IPUPIPE_STATIC before the include to make every function static (private to
     that translation unit; then also define IPUPIPE_IMPLEMENTATION there). Public functions
     are declared with IPUPIPE_DEF (extern, or static with IPUPIPE_STATIC; predefine it to
     override), the same macro in all three headers; the small inline kernels (RNG, ReLU,
     add, zeros) are static inline in every build.
     IPUPIPE_VERSION_MAJOR/MINOR/PATCH and IPUPIPE_VERSION_STRING give the version (the
     same in all three headers: including headers of two versions is a redefinition error).
     Overridable before the include (stb style; each defaults to the libc/libm function, and
     <assert.h> <string.h> <math.h> are included only when a default is used):
         IPUPIPE_ASSERT(cond)        assert(cond)   precondition checks (sizes >= 0, labels in
                                                    range). Firmware: define it (newlib's
                                                    assert pulls in stdio), e.g. as ((void)0).
         IPUPIPE_MEMSET(d, c, n)     memset         IPUPIPE_MEMCPY(d, s, n)  memcpy
         IPUPIPE_EXPF IPUPIPE_LOGF IPUPIPE_SQRTF   expf logf sqrtf  (softmax, Adam, Glorot;
                                                    GELU uses its own exp, no libm)
     No double-precision arithmetic is used anywhere (single-precision FPUs stay fast), and
     no other libc function.
     Define IPUPIPE_NO_SIMD to force the portable C path even where the compiler offers
     AVX-512 (__AVX512F__) or AVX2+FMA (__AVX2__ && __FMA__). The path is chosen at compile
     time from the compiler's predefined macros: build with -march=native to get SIMD.
     On cores with a single-precision FPU and no SIMD (Armv7E-M and Armv8-M Mainline with
     __ARM_FP & 4: Cortex-M4F, M7, M33; RISC-V with __riscv_flen) the register-blocked scalar
     kernels are chosen instead (IPUPIPE_SCALAR_BLOCKED, 1 or 0 forces them on or off, on any
     target): dense and conv products in 4x4 tiles of accumulators, each output summed in
     the portable kernels' order, so their bits are the portable path's (on Arm with gcc in
     ISO C mode one VMLA.F32, a rounded multiply then a rounded add, per multiply-add; the
     4x4 tiles of the input and weight gradients there are inline assembly, with VLDM/VSTM
     moving several floats per instruction, when optimising).
     IPUP_KERNELS_SIMD names the chosen path ("scalar-blocked", "avx512", "avx2", "portable").

   CONVENTIONS
     fp32, row-major, batch first. Sizes are int. Every pointer parameter has its shape in
     a comment. Backward passes ADD into weight gradients (dw, db) and WRITE input
     gradients (dx): adding is what makes gradient accumulation across micro-batches free.
     Any gradient output may be NULL to skip it ("input-gradient only" = dw, db NULL;
     "weight-gradient only" = dx NULL).
     The kernels never allocate, keep no mutable static state and are reentrant: any number
     of threads may call them at once on distinct output arrays.
     Determinism: every reduction runs in a fixed order that depends only on the shapes,
     never on timing or alignment, so the same inputs give the same bits run after run.
     The SIMD and the portable path sum in different orders; they agree to ~1e-6 relative.
     The portable path of each hot kernel stays callable as *_portable (reference/tests).

   FLATTEN
     NHWC (B, H, W, C) is already (B, H*W*C) in memory: flatten is a view, no copy and no
     function. Pass the same pointer with IN = IPUP_FLATTEN_DIM(H, W, C) to the dense layer;
     the gradient (B, H*W*C) coming back is, likewise, the NHWC gradient.

   SCRATCH AND STACK
     IPUP_CONV3X3_FWD_SCRATCH(B,H,W,CI,CO), IPUP_CONV3X3_BWD_SCRATCH(B,H,W,CI,CO): number of
     floats of caller scratch, usable as an array bound. NULL is accepted everywhere (the
     kernel then falls back to a path that needs none, slower). The conv dx computed with
     and without scratch sums in different orders: pass scratch consistently (always, or
     never) when runs must match bit for bit. dw and db never depend on it, nor on which
     other gradients a call computes (dx-only + dw/db-only calls give the bits of one full
     call: what split "I"/"W" backward ops rely on).
     Stack: the SIMD dense backward packs a transposed panel of w or dy on the stack (at
     most 34 KB with AVX-512, 17 KB with AVX2); every other kernel uses well under 1 KB
     (the narrow weight gradient 8 KB, the portable batch norm backward 3 KB).
     ipup_conv2d_scratch_floats(s, B): the general convolution's scratch (the same figure in
     every build); NULL is accepted (see ipup_conv2d_fwd_f32 for the bits).

   SPEED (bench_kernels, built -O2 -march=native as the tools are; Intel Xeon with AVX-512,
   one core, measured FMA peak ~249 GFLOP/s, 64-byte aligned tensors as the emulator carves
     them) dense 32x784x256: forward ~0.93 of peak, dx ~0.89, dW ~0.81; 32x32x10: forward
     ~0.37, dx ~0.44, dW ~0.48; conv3x3 64x13x13x32->64: forward ~0.89, backward (dx, dW,
     db) ~0.74; 64x28x28x1->32: forward ~0.51, backward (dW, db) ~0.53. One register-
     blocked micro-kernel (8x32 or 16x16 tiles of zmm accumulators, 6x16 / 8x8 with AVX2)
     serves every product, plus a 6x64 tile for weight gradients and a 9x32 one for a
     one-channel conv's (AVX-512); it can apply the bias and a ReLU to the tile in
     registers (ipup_dense_relu_fwd_f32, ipup_conv3x3_relu_fwd_f32). Products whose
     operand runs the wrong way for the vectors (dx = dy w^T; dW of fewer outputs than
     lanes) transpose VL x VL blocks in registers: moves only, every element keeps its
     chain of FMAs, so the bits do not depend on the path.
     Element-wise kernels (ReLU, max-pool, dropout, SGD, momentum, Adam, accumulation) are
     vectorised explicitly, lane for lane the scalar operation, so -O2 gives the speed and
     every build the same bits. Weak spot: conv dx with one input channel (N = 9 columns):
     pass dx = NULL for a first layer, nothing consumes it.
     The general conv2d runs the same micro-kernel (in place, or from im2col rows); batch
     8 (docs/performance.md): ~0.5 of peak for DS-CNN's first layer, 0.6 to 0.97 for the
     k x k and pointwise layers with >= 16 input channels, 0.19 / 0.39 for MobileNet's and
     ResNet-8's 3-channel first layers (8 and 16 filters: half-empty or one-vector tiles).
     Depthwise conv, batch norm, average pooling and the new activations are vector
     loops that make the portable kernels' operations lane by lane (no FMA): the portable
     bits wherever the compiler does not contract a * b + c (gcc's ISO C mode).

   RNG
     ipup_rng_u64(seed, a, b) is a counter-based generator: a pure hash of its three keys
     (splitmix64 finaliser, Steele, Lea & Flood, "Fast splittable pseudorandom number
     generators", OOPSLA 2014; constants of Vigna's splitmix64.c). No state: the same keys
     give the same bits on every platform. Dropout keys it by (seed, step, element), the
     initialisers by (seed, stream, element); the trainer uses it for shuffling.
*/
#define IPUPIPE_VERSION_MAJOR 0
#define IPUPIPE_VERSION_MINOR 5
#define IPUPIPE_VERSION_PATCH 0
#define IPUPIPE_VERSION_STRING "0.5.0"

#ifndef IPUPIPE_KERNELS_H
#define IPUPIPE_KERNELS_H

/* >>build: libc and libm hooks, IPUPIPE_DEF, the SIMD path chosen at compile time */

#include <stddef.h>
#include <stdint.h>

#ifndef IPUPIPE_ASSERT
#include <assert.h>
#define IPUPIPE_ASSERT(c) assert(c)
#endif
#if !defined(IPUPIPE_MEMSET) || !defined(IPUPIPE_MEMCPY)
#include <string.h>
#endif
#ifndef IPUPIPE_MEMSET
#define IPUPIPE_MEMSET(d, c, n) memset((d), (c), (n))
#endif
#ifndef IPUPIPE_MEMCPY
#define IPUPIPE_MEMCPY(d, s, n) memcpy((d), (s), (n))
#endif
#if !defined(IPUPIPE_EXPF) || !defined(IPUPIPE_LOGF) || !defined(IPUPIPE_SQRTF)
#include <math.h>
#endif
#ifndef IPUPIPE_EXPF
#define IPUPIPE_EXPF(x) expf(x)
#endif
#ifndef IPUPIPE_LOGF
#define IPUPIPE_LOGF(x) logf(x)
#endif
#ifndef IPUPIPE_SQRTF
#define IPUPIPE_SQRTF(x) sqrtf(x)
#endif

#ifndef IPUPIPE_DEF
#ifdef IPUPIPE_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define IPUPIPE_DEF static __attribute__((unused))
#else
#define IPUPIPE_DEF static
#endif
#else
#define IPUPIPE_DEF extern
#endif
#endif
#ifndef IPUP__UNUSED          /* for private static helpers that some builds do not call */
#if defined(__GNUC__) || defined(__clang__)
#define IPUP__UNUSED __attribute__((unused))
#else
#define IPUP__UNUSED
#endif
#endif

/* compile-time SIMD path. IPUPIPE_SCALAR_BLOCKED (1 or 0) forces the register-blocked scalar
   path on or off; unset, it is chosen for cores with a single-precision FPU and no SIMD:
   Armv7E-M (Cortex-M4F, M7) and Armv8-M Mainline (Cortex-M33) with __ARM_FP & 4, RV32/64 F */
#if !defined(IPUPIPE_SCALAR_BLOCKED) && !defined(IPUPIPE_NO_SIMD) &&                            \
    (((defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__)) && defined(__ARM_FP) &&    \
      (__ARM_FP & 4)) ||                                                                      \
     (defined(__riscv_flen) && __riscv_flen >= 32))
#define IPUPIPE_SCALAR_BLOCKED 1
#endif
#if defined(IPUPIPE_SCALAR_BLOCKED) && IPUPIPE_SCALAR_BLOCKED
#define IPUP_KERNELS_BLOCKED 1
#define IPUP_KERNELS_SIMD "scalar-blocked"
#elif !defined(IPUPIPE_NO_SIMD) && defined(__AVX512F__)
#define IPUP_KERNELS_AVX512 1
#define IPUP_KERNELS_SIMD "avx512"
#elif !defined(IPUPIPE_NO_SIMD) && defined(__AVX2__) && defined(__FMA__)
#define IPUP_KERNELS_AVX2 1
#define IPUP_KERNELS_SIMD "avx2"
#else
#define IPUP_KERNELS_SIMD "portable"
#endif
#if defined(IPUP_KERNELS_AVX512) || defined(IPUP_KERNELS_AVX2)
#include <immintrin.h> /* the inline element-wise kernels below; outside extern "C" */
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* >>rng: the counter-based RNG (inline in every build) */

/* splitmix64 finaliser (Steele, Lea & Flood 2014; constants from Vigna's splitmix64.c). */
static inline uint64_t ipup_mix64(uint64_t z) {
    z += UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}
/* Counter-based RNG: 64 random bits, a pure function of (seed, a, b). */
static inline uint64_t ipup_rng_u64(uint64_t seed, uint64_t a, uint64_t b) {
    return ipup_mix64(ipup_mix64(ipup_mix64(seed) ^ a) ^ b);
}
/* Uniform in [0, 1): the top 24 bits times 2^-24, exact in float on every platform. */
static inline float ipup_rng_uniform_f32(uint64_t seed, uint64_t a, uint64_t b) {
    return (float)(uint32_t)(ipup_rng_u64(seed, a, b) >> 40) * (1.0f / 16777216.0f);
}
/* Uniform integer in [0, n) (n > 0), by 64x64->128-bit multiply-high of the random bits
   (Lemire, "Fast random integer generation in an interval", 2019, without the rejection
   step: the bias is below n / 2^64). Use for shuffling (Fisher-Yates). */
static inline uint64_t ipup_rng_below(uint64_t seed, uint64_t a, uint64_t b, uint64_t n) {
    uint64_t r = ipup_rng_u64(seed, a, b);
    uint64_t rh = r >> 32, rl = r & 0xFFFFFFFFu, nh = n >> 32, nl = n & 0xFFFFFFFFu;
    uint64_t ll = rl * nl, lh = rl * nh, hl = rh * nl, hh = rh * nh;
    uint64_t mid = (ll >> 32) + (lh & 0xFFFFFFFFu) + (hl & 0xFFFFFFFFu);
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/* >>elementwise: ReLU, accumulation, finiteness, zeros (inline in every build) */

/* g++ before 13 (GCC bug 105593): see the implementation's note; the inline kernels below
   use _mm512_max_ps too. */
#if defined(IPUP_KERNELS_AVX512) && defined(__cplusplus) && defined(__GNUC__) && \
    !defined(__clang__) && __GNUC__ < 13
#define IPUP__GCC105593_INLINE 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/* The inline element-wise kernels run vectors of the widest ISA the build has, then the
   scalar loop for the tail; each vector lane does exactly the scalar operation (max(x, 0)
   is `x > 0 ? x : 0` for every x, NaN and -0 included: maxps returns its second operand
   unless the first is greater), so the bits do not depend on the build. */
/* y (n) = max(x, 0); y may alias x */
static inline void ipup_relu_fwd_f32(int n, const float *x /* (n) */, float *y /* (n) */) {
    int i = 0;
#if defined(IPUP_KERNELS_AVX512)
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_max_ps(_mm512_loadu_ps(x + i), _mm512_setzero_ps()));
#elif defined(IPUP_KERNELS_AVX2)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_max_ps(_mm256_loadu_ps(x + i), _mm256_setzero_ps()));
#endif
    for (; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
/* dx (n) = dy where the forward input x > 0, else 0; dx may alias dy */
static inline void ipup_relu_bwd_f32(int n, const float *x /* (n) forward input */,
                                     const float *dy /* (n) */, float *dx /* (n) */) {
    int i = 0;
#if defined(IPUP_KERNELS_AVX512)
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dx + i,
                         _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_loadu_ps(x + i),
                                                                _mm512_setzero_ps(), _CMP_GT_OQ),
                                             _mm512_loadu_ps(dy + i)));
#elif defined(IPUP_KERNELS_AVX2)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dx + i, _mm256_and_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i),
                                                             _mm256_setzero_ps(), _CMP_GT_OQ),
                                               _mm256_loadu_ps(dy + i)));
#endif
    for (; i < n; i++) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
}

/* acc (n) += x (n): gradient accumulation (one add per element, so any order of calls over
   micro-batches m = 0, 1, ... gives the bits of the plain loop) */
static inline void ipup_add_f32(int n, float *acc /* (n) */, const float *x /* (n) */) {
    int i = 0;
#if defined(IPUP_KERNELS_AVX512)
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(acc + i, _mm512_add_ps(_mm512_loadu_ps(acc + i), _mm512_loadu_ps(x + i)));
#elif defined(IPUP_KERNELS_AVX2)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(acc + i, _mm256_add_ps(_mm256_loadu_ps(acc + i), _mm256_loadu_ps(x + i)));
#endif
    for (; i < n; i++) acc[i] += x[i];
}
/* 1 when every x (n) is finite (x - x is 0 for finite x, NaN for inf and NaN; the sum of
   those is 0 in any order exactly when all are), else 0 */
static inline int ipup__finite_f32(size_t n, const float *x /* (n) */) {
    size_t i = 0;
    float acc = 0.0f;
#if defined(IPUP_KERNELS_AVX512)
    __m512 va = _mm512_setzero_ps();
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(x + i);
        va = _mm512_add_ps(va, _mm512_sub_ps(v, v));
    }
    if (_mm512_cmp_ps_mask(va, _mm512_setzero_ps(), _CMP_NEQ_UQ)) return 0;
#elif defined(IPUP_KERNELS_AVX2)
    __m256 va = _mm256_setzero_ps();
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        va = _mm256_add_ps(va, _mm256_sub_ps(v, v));
    }
    if (_mm256_movemask_ps(_mm256_cmp_ps(va, _mm256_setzero_ps(), _CMP_NEQ_UQ))) return 0;
#endif
    for (; i < n; i++) acc += x[i] - x[i];
    return acc == 0.0f;
}
/* a (n) = b (n) = a + b: the all-reduce of two replicas (one add per element) */
static inline void ipup__add2_f32(int n, float *a /* (n) */, float *b /* (n) */) {
    int i = 0;
#if defined(IPUP_KERNELS_AVX512)
    for (; i + 16 <= n; i += 16) {
        __m512 s = _mm512_add_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
        _mm512_storeu_ps(a + i, s);
        _mm512_storeu_ps(b + i, s);
    }
#elif defined(IPUP_KERNELS_AVX2)
    for (; i + 8 <= n; i += 8) {
        __m256 s = _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
        _mm256_storeu_ps(a + i, s);
        _mm256_storeu_ps(b + i, s);
    }
#endif
    for (; i < n; i++) {
        float s = a[i] + b[i];
        a[i] = s;
        b[i] = s;
    }
}
#ifdef IPUP__GCC105593_INLINE
#pragma GCC diagnostic pop
#endif
/* w (n) = 0 */
static inline void ipup_zeros_f32(int n, float *w /* (n) */) {
    if (n > 0) IPUPIPE_MEMSET(w, 0, (size_t)n * sizeof(float));
}

/* >>gelu: GELU, forward and backward */
/* GELU, tanh approximation (Hendrycks & Gimpel, "Gaussian Error Linear Units", 2016, eq. 2):
   gelu(x) = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), computed as the equal
   x * sigmoid(2u) = x / (1 + e^(-2u)) (since 1 + tanh(u) = 2 / (1 + e^(-2u))), with the
   header's own e^x (Cephes expf polynomial, relative error < 2e-7): no libm call, the same
   operation sequence in the SIMD and the scalar code, vectorised. x (n), y (n), may alias. */
IPUPIPE_DEF void ipup_gelu_fwd_f32(int n, const float *x, float *y);
/* d gelu/dx = s + 2 x s (1 - s) sqrt(2/pi) (1 + 3*0.044715 x^2), s = sigmoid(2u)
   (= 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3*0.044715 x^2), t = tanh u).
   x (n) forward input, dy (n), dx (n) may alias dy. */
IPUPIPE_DEF void ipup_gelu_bwd_f32(int n, const float *x, const float *dy, float *dx);

/* >>dense: the dense layer, its fused ReLU forward, its portable references */
/* flatten is a view: NHWC (B,H,W,C) is (B, H*W*C) in memory. */
#define IPUP_FLATTEN_DIM(H, W, C) ((H) * (W) * (C))
/* dense: y = x w + b. x (B, IN), w (IN, OUT), b (OUT) or NULL, y (B, OUT) */
IPUPIPE_DEF void ipup_dense_fwd_f32(int B, int IN, int OUT, const float *x, const float *w,
                                    const float *b, float *y);
/* x (B, IN), w (IN, OUT), dy (B, OUT); dx (B, IN) written = dy w^T (NULL: skip);
   dw (IN, OUT) += x^T dy (NULL: skip); db (OUT) += column sums of dy (NULL: skip) */
IPUPIPE_DEF void ipup_dense_bwd_f32(int B, int IN, int OUT, const float *x, const float *w,
                                    const float *dy, float *dx, float *dw, float *db);
/* The forward of dense then ReLU in one pass: y = relu(x w + b), the bits of
   ipup_dense_fwd_f32 followed by ipup_relu_fwd_f32 (the ReLU is applied to each tile of the
   output while it is in registers). */
IPUPIPE_DEF void ipup_dense_relu_fwd_f32(int B, int IN, int OUT, const float *x, const float *w,
                                         const float *b, float *y);
/* The portable references of the dense kernels (same contracts), always compiled. */
IPUPIPE_DEF void ipup_dense_fwd_f32_portable(int B, int IN, int OUT, const float *x,
                                             const float *w, const float *b, float *y);
IPUPIPE_DEF void ipup_dense_bwd_f32_portable(int B, int IN, int OUT, const float *x,
                                             const float *w, const float *dy, float *dx,
                                             float *dw, float *db);

/* >>loss: softmax cross-entropy, mean squared error */
/* softmax cross-entropy with integer labels. logits (B, C), labels (B) in [0, C),
   dlogits (B, C) or NULL: written (softmax - onehot) / B, the gradient of the MEAN loss;
   *correct (or NULL) = rows whose arg-max (first on ties) equals the label.
   Returns the mean loss. Stable for any finite logits (max subtracted). A label outside
   [0, C) trips IPUPIPE_ASSERT; with asserts off that row counts as loss log(sum exp) and
   has no one-hot term. */
IPUPIPE_DEF float ipup_softmax_xent_f32(int B, int C, const float *logits, const int32_t *labels,
                                        float *dlogits, int *correct);

/* mean squared error, the mean over all B*N elements (PyTorch's MSELoss with its default
   reduction "mean"): returns sum over r, c of (pred - target)^2 / (B*N).
   pred (B, N), target (B, N), dpred (B, N) or NULL: written 2 (pred - target) / (B*N), the
   gradient of that mean (dpred may alias pred). Summation in float, each row in column
   order, the row sums added in row order. */
IPUPIPE_DEF float ipup_mse_f32(int B, int N, const float *pred, const float *target, float *dpred);

/* >>conv: the 3x3 convolution, its fused ReLU forward, its portable references */
/* Scratch floats of the conv kernels (valid array bounds; NULL is also accepted). The forward
   needs none (1 keeps the macro a legal array bound). The backward's dx product (SIMD path)
   uses 9*CI*CO floats for the transposed kernel plus (H-2)*(W-2)*9*CI for one image's
   column gradient; with NULL it computes dx the portable way (slower).
   Valid range: the macros compute in the type of their arguments; with int arguments
   IPUP_CONV3X3_BWD_SCRATCH is valid while 9*CI*(CO + (H-2)*(W-2)) <= INT_MAX (the kernels
   take int sizes too). ipupipe.h computes it in int64_t and refuses a conv layer past
   2^31-1 scratch floats; a caller with larger layers must check before using it. */
#define IPUP_CONV3X3_FWD_SCRATCH(B, H, W, CI, CO) 1
#define IPUP_CONV3X3_BWD_SCRATCH(B, H, W, CI, CO) (9 * (CI) * ((CO) + ((H) - 2) * ((W) - 2)))
/* conv2d 3x3, stride 1, valid, NHWC: x (B, H, W, CI), w (3, 3, CI, CO), b (CO) or NULL,
   y (B, H-2, W-2, CO); scratch: IPUP_CONV3X3_FWD_SCRATCH floats or NULL */
IPUPIPE_DEF void ipup_conv3x3_fwd_f32(int B, int H, int W, int CI, int CO, const float *x,
                                      const float *w, const float *b, float *y, float *scratch);
/* x (B, H, W, CI), w (3, 3, CI, CO), dy (B, H-2, W-2, CO); dx (B, H, W, CI) written or NULL;
   dw (3, 3, CI, CO) += or NULL; db (CO) += or NULL;
   scratch: IPUP_CONV3X3_BWD_SCRATCH floats or NULL */
IPUPIPE_DEF void ipup_conv3x3_bwd_f32(int B, int H, int W, int CI, int CO, const float *x,
                                      const float *w, const float *dy, float *dx, float *dw,
                                      float *db, float *scratch);
/* The forward of conv3x3 then ReLU in one pass: y = relu(conv(x)), the bits of
   ipup_conv3x3_fwd_f32 followed by ipup_relu_fwd_f32 (the ReLU is applied to each tile of
   the output while it is in registers). */
IPUPIPE_DEF void ipup_conv3x3_relu_fwd_f32(int B, int H, int W, int CI, int CO, const float *x,
                                           const float *w, const float *b, float *y,
                                           float *scratch);
/* The portable references of the conv kernels (same contracts), always compiled. */
IPUPIPE_DEF void ipup_conv3x3_fwd_f32_portable(int B, int H, int W, int CI, int CO,
                                               const float *x, const float *w, const float *b,
                                               float *y);
IPUPIPE_DEF void ipup_conv3x3_bwd_f32_portable(int B, int H, int W, int CI, int CO,
                                               const float *x, const float *w, const float *dy,
                                               float *dx, float *dw, float *db);

/* >>maxpool: 2x2 max-pool, forward and backward; the arg-max bytes of a stash */
/* max-pool 2x2 stride 2, floor (like Keras "valid"): x (B, H, W, C), y (B, H/2, W/2, C).
   Ties: the first of (0,0), (0,1), (1,0), (1,1) in the window wins. */
IPUPIPE_DEF void ipup_maxpool2_fwd_f32(int B, int H, int W, int C, const float *x, float *y);
/* x (B, H, W, C) forward input, dy (B, H/2, W/2, C), dx (B, H, W, C) written: dy routed to
   the arg-max recomputed from x (first on ties), zeros elsewhere (odd last row/col too) */
IPUPIPE_DEF void ipup_maxpool2_bwd_f32(int B, int H, int W, int C, const float *x,
                                       const float *dy, float *dx);
/* The backward of ReLU then max-pool in one pass: dz = dL/dz where x = relu(z) is the
   pool's input (x > 0 exactly when z > 0): the bits of ipup_maxpool2_bwd_f32 followed by
   ipup_relu_bwd_f32, one trip through memory fewer. */
IPUPIPE_DEF void ipup_maxpool2_relu_bwd_f32(int B, int H, int W, int C, const float *x,
                                            const float *dy, float *dz);
/* The forward of max-pool keeping, in place of its input, one byte per output element for
   the backward: idx (B, H/2, W/2, C) gets the window position of the arg-max (0..3 for
   (0,0), (0,1), (1,0), (1,1); the first on ties, the one ipup_maxpool2_bwd_f32 picks) and
   with relu != 0 (the input is x = relu(z)) 4 where the maximum is not > 0: dL/dz is then
   zero in the whole window. y: the bits of ipup_maxpool2_fwd_f32. A quarter of a float per
   output instead of four inputs: what a training stash keeps. */
IPUPIPE_DEF void ipup_maxpool2_fwd_idx_f32(int B, int H, int W, int C, const float *x, float *y,
                                           uint8_t *idx, int relu);
/* dx (B, H, W, C) written from dy (B, H/2, W/2, C) and the idx of ipup_maxpool2_fwd_idx_f32:
   dy at the position idx names, +0 elsewhere (odd last row/col too). The bits of
   ipup_maxpool2_bwd_f32 (idx made with relu 0) or ipup_maxpool2_relu_bwd_f32 (relu != 0)
   on the forward's input, without reading it. */
IPUPIPE_DEF void ipup_maxpool2_bwd_idx_f32(int B, int H, int W, int C, const uint8_t *idx,
                                           const float *dy, float *dx);

/* >>dropout: inverted dropout, its mask from the counter-based RNG */
/* dropout with rate p, inverted scaling: element i is kept iff
   ipup_rng_uniform_f32(seed, step, offset + i) >= p, and then scaled by 1/(1-p).
   p <= 0: identity; p >= 1: all zero. x (n), y (n) (may alias) */
IPUPIPE_DEF void ipup_dropout_fwd_f32(int n, float p, uint64_t seed, uint64_t step,
                                      uint64_t offset, const float *x, float *y);
/* the same mask: dy (n), dx (n) (may alias) */
IPUPIPE_DEF void ipup_dropout_bwd_f32(int n, float p, uint64_t seed, uint64_t step,
                                      uint64_t offset, const float *dy, float *dx);

/* >>optimizers: SGD, momentum, Adam */
/* Optimizers over a flat array. g is the ACCUMULATED gradient, scale = 1/(micro-batches *
   replicas), so the mean gradient gs = scale * g is applied. w, v, m, g all (n).
   SGD: w -= lr gs. */
IPUPIPE_DEF void ipup_sgd_f32(int n, float lr, float scale, float *w, const float *g);
/* SGD with momentum, PyTorch convention (torch.optim.SGD, dampening 0, no Nesterov):
   v = mu v + gs; w -= lr v */
IPUPIPE_DEF void ipup_momentum_f32(int n, float lr, float mu, float scale, float *w, float *v,
                                   const float *g);
/* Adam (Kingma & Ba 2015, Algorithm 1) with bias correction; t = 1-based step:
   m = b1 m + (1-b1) gs; v = b2 v + (1-b2) gs^2;
   w -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps) */
IPUPIPE_DEF void ipup_adam_f32(int n, float lr, float beta1, float beta2, float eps, int t,
                               float scale, float *w, float *m, float *v, const float *g);
/* Adam with PopXL's two switches (popxl.ops.var_updates.adam_updater): decoupled weight
   decay wd (AdamW, Loshchilov & Hutter 2019, "Decoupled Weight Decay Regularization") and
   bias correction on (t >= 1, the 1-based step) or off (t = 0: mh = m, vh = v):
   w -= lr * (mh / (sqrt(vh) + eps) + wd * w), computed as num / den + (lr wd) w with
   num = lr mh. wd = 0 and t >= 1 give ipup_adam_f32's bits. */
IPUPIPE_DEF void ipup_adamw_f32(int n, float lr, float beta1, float beta2, float eps, float wd,
                                int t, float scale, float *w, float *m, float *v,
                                const float *g);

/* >>init: the Glorot initialiser */
/* Glorot/Xavier uniform (Glorot & Bengio 2010): w[i] = (2u-1) * sqrt(6 / (fan_in + fan_out))
   with u = ipup_rng_uniform_f32(seed, stream, i). w (n). Identical bits on every platform. */
IPUPIPE_DEF void ipup_glorot_uniform_f32(int fan_in, int fan_out, int n, uint64_t seed,
                                         uint64_t stream, float *w);
/* Elements [first, first + n) of the same tensor into w (n): a tensor made in pieces. */
IPUPIPE_DEF void ipup_glorot_uniform_range_f32(int fan_in, int fan_out, int64_t first, int n,
                                               uint64_t seed, uint64_t stream, float *w);

/* >>half: IEEE binary16 storage, conversions to and from fp32 */
/* Half precision is a storage format: values are converted to fp32 for arithmetic and
   back (IEEE 754-2008 binary16: 1 sign, 5 exponent, 10 fraction bits; largest finite 65504,
   smallest normal 2^-14, smallest subnormal 2^-24).
   fp32 -> fp16 rounds to nearest, ties to even; |x| >= 65520 becomes +-inf; results below
   2^-14 are subnormal (correctly rounded, 2^-25 and less round to +-0); a NaN stays a NaN
   of the same sign, quiet, with the top 9 bits of its payload. fp16 -> fp32 is exact (a NaN
   comes back quiet). Every path gives the same bits (the portable one is the reference):
   IPUP_HALF_CVT names the path this build uses ("avx512", "f16c", "arm-vcvt", "portable").
   x (n), y (n); they must not overlap. */
#if !defined(IPUPIPE_NO_SIMD) && defined(IPUP_KERNELS_AVX512)
#define IPUP__HALF_AVX512 1
#define IPUP_HALF_CVT "avx512"
#elif !defined(IPUPIPE_NO_SIMD) && defined(IPUP_KERNELS_AVX2) && defined(__F16C__)
#define IPUP__HALF_F16C 1
#define IPUP_HALF_CVT "f16c"
#elif !defined(IPUPIPE_NO_SIMD) && (defined(__GNUC__) || defined(__clang__)) &&                 \
    defined(__arm__) && defined(__ARM_FP) && (__ARM_FP & 4) &&                                 \
    ((__ARM_FP & 2) || defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__))
/* VFPv3-FP16, and the FPv4-SP / FPv5 of Cortex-M4F, M7, M33 (which have VCVTB.F16.F32
   whether or not __fp16 is enabled, -mfp16-format): the conversion instructions */
#define IPUP__HALF_ARM 1
#define IPUP_HALF_CVT "arm-vcvt"
#else
#define IPUP_HALF_CVT "portable"
#endif
IPUPIPE_DEF void ipup_f32_to_f16(int n, const float *x, uint16_t *y);
IPUPIPE_DEF void ipup_f16_to_f32(int n, const uint16_t *x, float *y);
/* fp32 -> fp16 with stochastic rounding, as the IPU stores float16 weights: x rounds to one
   of the two binary16 values lo <= |x| < hi around it, to hi with probability
   (|x| - lo) / (hi - lo) to 16 bits, so the value stored is x on average and an update
   smaller than half a unit in the last place is not always lost (Gupta et al., "Deep
   Learning with Limited Numerical Precision", ICML 2015). The 16 random bits of element i
   are a pure function of (seed, stream, offset + i): a quarter of
   ipup_mix64(ipup_rng_u64(seed, stream, 0) + (offset + i) / 4), so the bits do not depend
   on how a tensor is cut into calls. Values binary16 holds exactly, infinities, NaNs
   and |x| >= 65520 convert as ipup_f32_to_f16 does; 65504 < |x| < 65520 stays at 65504.
   x (n), y (n); they must not overlap. */
IPUPIPE_DEF void ipup_f32_to_f16_sr(int n, const float *x, uint16_t *y, uint64_t seed,
                                    uint64_t stream, uint64_t offset);

/* >>conv2d: the general convolution (any kernel, stride, 'same'/'valid'), its references */
/* The geometry of one convolution, filled by ipup_conv2d_shape_init: input (h, w, ci),
   kernel (kh, kw), strides (sh, sw), the zero padding before the first row and column
   (pad_top, pad_left; the rest of the total goes after), output (oh, ow, co). Depthwise
   convolutions use the same struct with co == ci. */
typedef struct ipup_conv2d_shape {
    int h, w, ci, co, kh, kw, sh, sw, pad_top, pad_left, oh, ow;
} ipup_conv2d_shape;
/* Fills *s for an input of h x w x ci, co filters of kh x kw, strides sh x sw, padding as
   Keras/TensorFlow compute it: same != 0 ('same'): oh = ceil(h / sh), the total padding
   max((oh - 1) sh + kh - h, 0) of which pad_top = total / 2 go before (the odd one after);
   same == 0 ('valid'): no padding, oh = (h - kh) / sh + 1 (floor), which needs h >= kh.
   Likewise for the width. Returns 0, or -1 (and *s zeroed) when a size or stride is < 1,
   'valid' has a kernel larger than the input, or a tensor or the im2col scratch would pass
   INT_MAX elements. */
IPUPIPE_DEF int ipup_conv2d_shape_init(ipup_conv2d_shape *s, int h, int w, int ci, int co, int kh,
                                       int kw, int sh, int sw, int same);
/* Floats of caller scratch the conv2d forward and backward need for B images (the larger
   of the two; the same figure in every build, so pools do not depend on the SIMD path):
   kh kw ci co (the transposed kernel) + oh ow kh kw ci (one image's im2col rows). The
   kernels use it one image at a time; B does not change the figure today. */
IPUPIPE_DEF size_t ipup_conv2d_scratch_floats(const ipup_conv2d_shape *s, int B);
/* conv2d, NHWC: x (B, h, w, ci), w (kh, kw, ci, co) (Keras's kernel layout), b (co) or NULL,
   y (B, oh, ow, co) written = the cross-correlation of the zero-padded x with w, plus b.
   scratch: ipup_conv2d_scratch_floats(s, B) floats, or NULL. SIMD builds read x in place
   where no output reads padding (scratch unused), else build im2col rows in scratch (the
   same chain of FMAs per output either way); with padding and NULL scratch they take the
   portable kernel (slower, other bits: ~1e-6 relative). y must not alias x. */
IPUPIPE_DEF void ipup_conv2d_fwd_f32(int B, const ipup_conv2d_shape *s, const float *x,
                                     const float *w, const float *b, float *y, float *scratch);
/* x (B, h, w, ci), w (kh, kw, ci, co), dy (B, oh, ow, co); dx (B, h, w, ci) written (NULL:
   skip; padding taps get no gradient); dw (kh, kw, ci, co) += (NULL: skip); db (co) +=
   (NULL: skip). scratch as the forward's, or NULL: SIMD builds then compute what needs it
   (dx; dw and db of a padded layer) the portable way, in another order (~1e-6): pass
   scratch consistently when runs must match bit for bit. For a given scratch, dx-only and
   dw/db-only calls give the bits of one full call. No output aliases an input. */
IPUPIPE_DEF void ipup_conv2d_bwd_f32(int B, const ipup_conv2d_shape *s, const float *x,
                                     const float *w, const float *dy, float *dx, float *dw,
                                     float *db, float *scratch);
/* The portable references (same contracts, no scratch), always compiled. */
IPUPIPE_DEF void ipup_conv2d_fwd_f32_portable(int B, const ipup_conv2d_shape *s, const float *x,
                                              const float *w, const float *b, float *y);
IPUPIPE_DEF void ipup_conv2d_bwd_f32_portable(int B, const ipup_conv2d_shape *s, const float *x,
                                              const float *w, const float *dy, float *dx,
                                              float *dw, float *db);

/* >>depthwise: depthwise convolution (depth multiplier 1), its portable references */
/* s from ipup_conv2d_shape_init with co == ci (c channels). x (B, h, w, c), w (kh, kw, c)
   (Keras's depthwise kernel (kh, kw, c, 1)), b (c) or NULL, y (B, oh, ow, c) written:
   channel c of y is channel c of x correlated with w[., ., c], plus b[c]. y must not alias x. */
IPUPIPE_DEF void ipup_dwconv2d_fwd_f32(int B, const ipup_conv2d_shape *s, const float *x,
                                       const float *w, const float *b, float *y);
/* x (B, h, w, c), w (kh, kw, c), dy (B, oh, ow, c); dx (B, h, w, c) written (NULL: skip);
   dw (kh, kw, c) += (NULL: skip); db (c) += (NULL: skip). No output aliases an input. */
IPUPIPE_DEF void ipup_dwconv2d_bwd_f32(int B, const ipup_conv2d_shape *s, const float *x,
                                       const float *w, const float *dy, float *dx, float *dw,
                                       float *db);
IPUPIPE_DEF void ipup_dwconv2d_fwd_f32_portable(int B, const ipup_conv2d_shape *s,
                                                const float *x, const float *w, const float *b,
                                                float *y);
IPUPIPE_DEF void ipup_dwconv2d_bwd_f32_portable(int B, const ipup_conv2d_shape *s,
                                                const float *x, const float *w, const float *dy,
                                                float *dx, float *dw, float *db);

/* >>batchnorm: batch normalisation over the rows of a micro-batch, running statistics */
/* Batch norm of N rows of C channels (NHWC: N = B*H*W positions; dense: N = B samples),
   Ioffe & Szegedy 2015, Algorithm 1: xhat = (x - mean) invstd, y = gamma xhat + beta.
   Training mode: mean and the biased variance var = mean((x - mean)^2) (two passes) of THESE
   N rows, invstd = 1 / sqrt(var + eps). x (N, C), gamma (C), beta (C), y (N, C) written
   (may alias x), mean (C) and invstd (C) written (what the backward and
   ipup_batchnorm_running_f32 take). */
IPUPIPE_DEF void ipup_batchnorm_fwd_train_f32(int N, int C, const float *x, const float *gamma,
                                              const float *beta, float eps, float *y,
                                              float *mean, float *invstd);
/* Inference mode: y = gamma (x - run_mean) / sqrt(run_var + eps) + beta. x (N, C), gamma,
   beta, run_mean, run_var (C), y (N, C) written (may alias x). */
IPUPIPE_DEF void ipup_batchnorm_fwd_infer_f32(int N, int C, const float *x, const float *gamma,
                                              const float *beta, const float *run_mean,
                                              const float *run_var, float eps, float *y);
/* The backward of the training mode (the statistics depend on x):
   dx = gamma invstd / N (N dy - sum dy - xhat sum dy xhat), sums over the N rows per
   channel. x (N, C) the forward input, gamma, mean, invstd (C) from the forward,
   dy (N, C); dx (N, C) written (NULL: skip; may alias dy); dgamma (C) += sum dy xhat,
   dbeta (C) += sum dy (NULL: skip). */
IPUPIPE_DEF void ipup_batchnorm_bwd_f32(int N, int C, const float *x, const float *gamma,
                                        const float *mean, const float *invstd, const float *dy,
                                        float *dx, float *dgamma, float *dbeta);
/* The backward of the inference mode (frozen statistics, a per-channel scale):
   dx = dy gamma / sqrt(run_var + eps). gamma, run_var (C), dy (N, C), dx (N, C) written
   (may alias dy). */
IPUPIPE_DEF void ipup_batchnorm_bwd_infer_f32(int N, int C, const float *gamma,
                                              const float *run_var, float eps, const float *dy,
                                              float *dx);
/* The running statistics, as Keras's BatchNormalization updates them (its moving averages:
   var -= (var - value) (1 - momentum), i.e. run = momentum run + (1 - momentum) batch),
   with the batch's BIASED variance, the one it normalised with (Keras passes the variance
   of tf.nn.moments, no Bessel correction; PyTorch would use the unbiased one):
   var = 1 / invstd^2 - eps. N (the rows the statistics came from) <= 0 leaves both
   unchanged, as Keras skips an empty batch. mean, invstd (C) from the training forward;
   run_mean, run_var (C) updated. */
IPUPIPE_DEF void ipup_batchnorm_running_f32(int C, int N, float momentum, const float *mean,
                                            const float *invstd, float eps, float *run_mean,
                                            float *run_var);

/* >>avgpool: average pooling (k x k, stride; global = the whole image) */
/* Average pool, 'valid' (Keras AveragePooling2D's default): x (B, H, W, C),
   y (B, OH, OW, C) written, OH = (H - kh) / sh + 1, OW = (W - kw) / sw + 1: the mean of each
   kh x kw window (its sum, taps in row order, divided by kh kw). Global average pooling is
   kh = H, kw = W (y (B, 1, 1, C) = (B, C)). Needs 1 <= kh <= H, 1 <= kw <= W, strides >= 1. */
IPUPIPE_DEF void ipup_avgpool_fwd_f32(int B, int H, int W, int C, int kh, int kw, int sh, int sw,
                                      const float *x, float *y);
/* dy (B, OH, OW, C); dx (B, H, W, C) written: dy / (kh kw) added over every window that
   covers the element (overlapping windows when the stride is below the kernel), 0 where
   none does. */
IPUPIPE_DEF void ipup_avgpool_bwd_f32(int B, int H, int W, int C, int kh, int kw, int sh, int sw,
                                      const float *dy, float *dx);

/* >>activations: sigmoid, tanh, leaky ReLU, hard-swish; binary cross-entropy on logits */
/* Element-wise, x (n), y (n) and dy, dx (n); each output may alias its input. The same
   operation sequence in every build (the header's own e^x, as GELU's): the bits do not
   depend on the SIMD path. */
/* sigmoid(x) = 1 / (1 + e^-x) */
IPUPIPE_DEF void ipup_sigmoid_fwd_f32(int n, const float *x, float *y);
/* dx = dy y (1 - y), from the forward OUTPUT y */
IPUPIPE_DEF void ipup_sigmoid_bwd_f32(int n, const float *y, const float *dy, float *dx);
/* tanh(x): Cephes tanhf's odd polynomial for |x| < 0.625, 1 - 2 / (e^2|x| + 1) (sign of x)
   above */
IPUPIPE_DEF void ipup_tanh_fwd_f32(int n, const float *x, float *y);
/* dx = dy (1 - y^2), from the forward OUTPUT y */
IPUPIPE_DEF void ipup_tanh_bwd_f32(int n, const float *y, const float *dy, float *dx);
/* Keras LeakyReLU: y = x for x > 0, alpha x otherwise (Keras's default alpha is 0.3) */
IPUPIPE_DEF void ipup_leaky_relu_fwd_f32(int n, float alpha, const float *x, float *y);
/* dx = dy where the forward input x > 0, alpha dy otherwise */
IPUPIPE_DEF void ipup_leaky_relu_bwd_f32(int n, float alpha, const float *x, const float *dy,
                                         float *dx);
/* hard-swish (Howard et al., "Searching for MobileNetV3", 2019, eq. 2; Keras's
   hard_swish): y = x relu6(x + 3) / 6 */
IPUPIPE_DEF void ipup_hard_swish_fwd_f32(int n, const float *x, float *y);
/* dx = dy * (0 for x <= -3, 1 for x >= 3, (2x + 3) / 6 between), from the forward INPUT x */
IPUPIPE_DEF void ipup_hard_swish_bwd_f32(int n, const float *x, const float *dy, float *dx);
/* Binary cross-entropy on logits (Keras BinaryCrossentropy(from_logits=True), TensorFlow's
   sigmoid_cross_entropy_with_logits stable form): per element
   max(z, 0) - z t + log(1 + e^-|z|); returns the mean over all B*N elements (each row summed
   in column order, the rows in row order, in float). z (B, N) logits, t (B, N) targets in
   [0, 1]; dz (B, N) or NULL: written (sigmoid(z) - t) / (B N), the gradient of that mean
   (may alias z). */
IPUPIPE_DEF float ipup_bce_logits_f32(int B, int N, const float *z, const float *t, float *dz);

#ifdef __cplusplus
}
#endif
#endif /* IPUPIPE_KERNELS_H */

/* ================================================================ implementation */
#if defined(IPUPIPE_IMPLEMENTATION) && !defined(IPUPIPE_KERNELS_IMPLEMENTATION_DONE)
#define IPUPIPE_KERNELS_IMPLEMENTATION_DONE

/* >>build: <immintrin.h> outside extern "C"; the g++ < 13 AVX-512 warning silenced */
#if defined(IPUP_KERNELS_AVX512) || defined(IPUP_KERNELS_AVX2)
#include <immintrin.h> /* outside extern "C" */
#endif
/* g++ before 13 (GCC bug 105593): once inlined, the AVX-512 intrinsics that build their
   result on _mm512_undefined_ps (min, max, sqrt, cvttps ...) raise -Wmaybe-uninitialized
   in C++ at -O1 and above. False positive: silenced for this implementation only. */
#if defined(IPUP_KERNELS_AVX512) && defined(__cplusplus) && defined(__GNUC__) && \
    !defined(__clang__) && __GNUC__ < 13
#define IPUP__GCC105593 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* >>simd-core: the register-blocked micro-kernel, the products, the transposition */
/* One register-blocked micro-kernel serves every hot product. It computes an MR x (NV*VL)
   tile of C = A B (written, optionally plus bias) or C += A B, where
     - row r of A starts at a row pointer ap[r] (so rows need not be evenly spaced: conv
       output positions that wrap from one image row to the next, im2col rows ...), and
       element (r, s, k) is ap[r][s*sa + k*ka]: K is split into nseg segments of seglen
       (the three kernel rows of a 3x3 window are three segments, no im2col copy);
     - B is K x N with contiguous rows of stride ldb; C rows have stride ldc.
   Each C element is the sum over k in increasing order of an FMA chain, then (+ bias) or
   (C +): the order depends only on K, never on the tile a value lands in. */
#if defined(IPUP_KERNELS_AVX512) || defined(IPUP_KERNELS_AVX2)
#define IPUP__SIMD 1

#if defined(IPUP_KERNELS_AVX512)
typedef __m512 ipup__v;
typedef __mmask16 ipup__lanes;
#define IPUP__VL 16
#define IPUP__MR 8   /* 8 x 2 vectors = 16 accumulators of the 32 zmm registers */
#define IPUP__MR_1V 16 /* rows when the tile is one vector wide: 16 accumulators too */
#define IPUP__NV 2
#define ipup__vzero() _mm512_setzero_ps()
#define ipup__vld(p) _mm512_loadu_ps(p)
#define ipup__vldm(p, m) _mm512_maskz_loadu_ps((m), (p))
#define ipup__vst(p, v) _mm512_storeu_ps((p), (v))
#define ipup__vstm(p, m, v) _mm512_mask_storeu_ps((p), (m), (v))
#define ipup__vbc(p) _mm512_set1_ps(*(p))
#define ipup__vfma(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define ipup__vadd(a, b) _mm512_add_ps((a), (b))
#define ipup__vsub(a, b) _mm512_sub_ps((a), (b))
#define ipup__vmul(a, b) _mm512_mul_ps((a), (b))
#define ipup__vdiv(a, b) _mm512_div_ps((a), (b))
#define ipup__vsqrt(a) _mm512_sqrt_ps(a)
#define ipup__vset(f) _mm512_set1_ps(f)
#define ipup__vmin(a, b) _mm512_min_ps((a), (b))
#define ipup__vmax(a, b) _mm512_max_ps((a), (b))
/* 2^n for a vector of integral floats n in [-126, 127] */
#define ipup__vpow2i(n)                                                                          \
    _mm512_castsi512_ps(                                                                         \
        _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(n), _mm512_set1_epi32(127)), 23))
/* lanes 0..n-1, n in 1..16 */
static inline ipup__lanes ipup__mask(int n) { return (ipup__lanes)((1u << n) - 1u); }
#else
typedef __m256 ipup__v;
typedef __m256i ipup__lanes;
#define IPUP__VL 8
#define IPUP__MR 6  /* 6 x 2 = 12 accumulators + 2 B + 1 broadcast of the 16 ymm registers */
#define IPUP__MR_1V 8 /* one vector wide: 8 accumulators */
#define IPUP__NV 2
#define ipup__vzero() _mm256_setzero_ps()
#define ipup__vld(p) _mm256_loadu_ps(p)
#define ipup__vldm(p, m) _mm256_maskload_ps((p), (m))
#define ipup__vst(p, v) _mm256_storeu_ps((p), (v))
#define ipup__vstm(p, m, v) _mm256_maskstore_ps((p), (m), (v))
#define ipup__vbc(p) _mm256_broadcast_ss(p)
#define ipup__vfma(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define ipup__vadd(a, b) _mm256_add_ps((a), (b))
#define ipup__vsub(a, b) _mm256_sub_ps((a), (b))
#define ipup__vmul(a, b) _mm256_mul_ps((a), (b))
#define ipup__vdiv(a, b) _mm256_div_ps((a), (b))
#define ipup__vsqrt(a) _mm256_sqrt_ps(a)
#define ipup__vset(f) _mm256_set1_ps(f)
#define ipup__vmin(a, b) _mm256_min_ps((a), (b))
#define ipup__vmax(a, b) _mm256_max_ps((a), (b))
#define ipup__vpow2i(n)                                                                          \
    _mm256_castsi256_ps(                                                                         \
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127)), 23))
static inline ipup__lanes ipup__mask(int n) { /* lanes 0..n-1 */
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#endif
#define IPUP__NR (IPUP__NV * IPUP__VL)
/* vectors of columns a micro-kernel may hold (4: the weight-gradient tile) */
#define IPUP__NV_MAX 4

/* The micro-kernel body. MR_ (rows), NV_ (vectors of columns), FULL_ (last vector whole),
   DB_ (also sum B's rows into dbp: the bias gradient) and KF_ (fixed segment length, 0 =
   seglen) are literal constants at each instantiation. It is a macro rather than an
   always_inline function because clang optimises a callee before inlining it: its loops
   would be unrolled for run-time bounds and the accumulators would live on the stack.
   Expanded inside a function with the parameters lm, ap, ka, nseg, seglen, sa, b, ldb, c,
   ldc, bias, accum, dbp (see ipup__ukr_fn). */
#define IPUP__PRAGMA(x) _Pragma(#x)
#define IPUP__UNROLL(n) IPUP__PRAGMA(GCC unroll n)
#define IPUP__UKR_BODY(MR_, NV_, FULL_, DB_, KF_)                                                 \
    const int ukr_MR = (MR_), ukr_NV = (NV_), ukr_FULL = (FULL_), ukr_DB = (DB_), ukr_KF = (KF_); \
    ipup__v acc[IPUP__MR_1V][IPUP__NV_MAX], dacc[IPUP__NV_MAX];                                   \
    int r, v, s, k;                                                                               \
IPUP__UNROLL(4)                                                                                   \
    for (v = 0; v < ukr_NV; v++) dacc[v] = ipup__vzero();                                         \
IPUP__UNROLL(16)                                                                                  \
    for (r = 0; r < ukr_MR; r++)                                                                  \
IPUP__UNROLL(4)                                                                                   \
        for (v = 0; v < ukr_NV; v++) acc[r][v] = ipup__vzero();                                   \
    if (ukr_KF) seglen = ukr_KF; /* segment length known at compile time: the k loop unrolls */   \
    for (s = 0; s < nseg; s++) {                                                                  \
        ptrdiff_t off = (ptrdiff_t)s * sa;                                                        \
IPUP__UNROLL(4)                                                                                   \
        for (k = 0; k < seglen; k++, off += ka, b += ldb) {                                       \
            ipup__v bv[IPUP__NV_MAX];                                                             \
IPUP__UNROLL(4)                                                                                   \
            for (v = 0; v < ukr_NV; v++)                                                          \
                bv[v] = (ukr_FULL || v < ukr_NV - 1) ? ipup__vld(b + v * IPUP__VL)                \
                                             : ipup__vldm(b + v * IPUP__VL, lm);                  \
            if (ukr_DB) {                                                                         \
IPUP__UNROLL(4)                                                                                   \
                for (v = 0; v < ukr_NV; v++) dacc[v] = ipup__vadd(dacc[v], bv[v]);                \
            }                                                                                     \
IPUP__UNROLL(16)                                                                                  \
            for (r = 0; r < ukr_MR; r++) {                                                        \
                const ipup__v av = ipup__vbc(ap[r] + off);                                        \
IPUP__UNROLL(4)                                                                                   \
                for (v = 0; v < ukr_NV; v++) acc[r][v] = ipup__vfma(av, bv[v], acc[r][v]);        \
            }                                                                                     \
        }                                                                                         \
    }                                                                                             \
IPUP__UNROLL(16)                                                                                  \
    for (r = 0; r < ukr_MR; r++) {                                                                \
        float *cr = c + (ptrdiff_t)r * ldc;                                                       \
IPUP__UNROLL(4)                                                                                   \
        for (v = 0; v < ukr_NV; v++) {                                                            \
            ipup__v t = acc[r][v];                                                                \
            const int whole = ukr_FULL || v < ukr_NV - 1;                                         \
            if (accum == 1)                                                                       \
                t = ipup__vadd(whole ? ipup__vld(cr + v * IPUP__VL)                               \
                                     : ipup__vldm(cr + v * IPUP__VL, lm), t);                     \
            else if (bias)                                                                        \
                t = ipup__vadd(t, whole ? ipup__vld(bias + v * IPUP__VL)                          \
                                        : ipup__vldm(bias + v * IPUP__VL, lm));                   \
            if (accum == 2) t = ipup__vmax(t, ipup__vzero()); /* fused ReLU: x > 0 ? x : 0 */     \
            if (whole) ipup__vst(cr + v * IPUP__VL, t);                                           \
            else ipup__vstm(cr + v * IPUP__VL, lm, t);                                            \
        }                                                                                         \
    }                                                                                             \
    if (ukr_DB) {                                                                                 \
IPUP__UNROLL(4)                                                                                   \
        for (v = 0; v < ukr_NV; v++) {                                                            \
            if (ukr_FULL || v < ukr_NV - 1)                                                       \
                ipup__vst(dbp + v * IPUP__VL,                                                     \
                          ipup__vadd(ipup__vld(dbp + v * IPUP__VL), dacc[v]));                    \
            else                                                                                  \
                ipup__vstm(dbp + v * IPUP__VL, lm,                                                \
                           ipup__vadd(ipup__vldm(dbp + v * IPUP__VL, lm), dacc[v]));              \
        }                                                                                         \
    }                                                                                             \
    (void)ukr_DB

typedef void (*ipup__ukr_fn)(ipup__lanes lm, const float *const *ap, ptrdiff_t ka, int nseg,
                             int seglen, ptrdiff_t sa, const float *b, ptrdiff_t ldb, float *c,
                             ptrdiff_t ldc, const float *bias, int accum, float *dbp);
/* ipup__ukr_<rows>_<vectors>_<full> and, with the column-sum row, ipup__ukrd_... */
#define IPUP__UKR_INST(MR_, NV_, F_)                                                         \
    static void ipup__ukr_##MR_##_##NV_##_##F_(ipup__lanes lm, const float *const *ap,       \
                                               ptrdiff_t ka, int nseg, int seglen,           \
                                               ptrdiff_t sa, const float *b, ptrdiff_t ldb,  \
                                               float *c, ptrdiff_t ldc, const float *bias,   \
                                               int accum, float *dbp) {                      \
        IPUP__UKR_BODY(MR_, NV_, F_, 0, 0);                                                  \
    }                                                                                        \
    static void ipup__ukrd_##MR_##_##NV_##_##F_(ipup__lanes lm, const float *const *ap,      \
                                                ptrdiff_t ka, int nseg, int seglen,          \
                                                ptrdiff_t sa, const float *b, ptrdiff_t ldb, \
                                                float *c, ptrdiff_t ldc, const float *bias,  \
                                                int accum, float *dbp) {                     \
        IPUP__UKR_BODY(MR_, NV_, F_, 1, 0);                                                  \
    }
#define IPUP__UKR_INST0(MR_, NV_, F_)                                                       \
    static void ipup__ukr_##MR_##_##NV_##_##F_(ipup__lanes lm, const float *const *ap,      \
                                               ptrdiff_t ka, int nseg, int seglen,          \
                                               ptrdiff_t sa, const float *b, ptrdiff_t ldb, \
                                               float *c, ptrdiff_t ldc, const float *bias,  \
                                               int accum, float *dbp) {                     \
        IPUP__UKR_BODY(MR_, NV_, F_, 0, 0);                                                 \
    }
/* segments of exactly 3 (the 3x3 window rows of a one-channel image), two full vectors */
#define IPUP__UKR_INST3(MR_)                                                                     \
    static void ipup__ukr3_##MR_(ipup__lanes lm, const float *const *ap, ptrdiff_t ka, int nseg, \
                                 int seglen, ptrdiff_t sa, const float *b, ptrdiff_t ldb,        \
                                 float *c, ptrdiff_t ldc, const float *bias, int accum,          \
                                 float *dbp) {                                                   \
        IPUP__UKR_BODY(MR_, 2, 1, 0, 3);                                                         \
    }
#define IPUP__UKR_INST2(MR_)                                                 \
    IPUP__UKR_INST3(MR_) IPUP__UKR_INST(MR_, 1, 0) IPUP__UKR_INST(MR_, 1, 1) \
    IPUP__UKR_INST(MR_, 2, 0) IPUP__UKR_INST(MR_, 2, 1)
#define IPUP__UKR_INST1(MR_) IPUP__UKR_INST0(MR_, 1, 0) IPUP__UKR_INST0(MR_, 1, 1)
#define IPUP__UKR_P1(MR_) { ipup__ukr_##MR_##_1_0, ipup__ukr_##MR_##_1_1 }
#define IPUP__UKR_P2(MR_) { ipup__ukr_##MR_##_2_0, ipup__ukr_##MR_##_2_1 }
#define IPUP__UKR_D1(MR_) { ipup__ukrd_##MR_##_1_0, ipup__ukrd_##MR_##_1_1 }
#define IPUP__UKR_D2(MR_) { ipup__ukrd_##MR_##_2_0, ipup__ukrd_##MR_##_2_1 }
IPUP__UKR_INST2(1) IPUP__UKR_INST2(2) IPUP__UKR_INST2(3) IPUP__UKR_INST2(4)
IPUP__UKR_INST2(5) IPUP__UKR_INST2(6)
#if IPUP__MR > 6
IPUP__UKR_INST2(7) IPUP__UKR_INST2(8)
#endif
#if IPUP__MR_1V > 8
IPUP__UKR_INST1(9) IPUP__UKR_INST1(10) IPUP__UKR_INST1(11) IPUP__UKR_INST1(12)
IPUP__UKR_INST1(13) IPUP__UKR_INST1(14) IPUP__UKR_INST1(15) IPUP__UKR_INST1(16)
#elif IPUP__MR_1V > 6
IPUP__UKR_INST1(7) IPUP__UKR_INST1(8)
#endif
/* [rows - 1][full] for one vector of columns (up to IPUP__MR_1V rows) and for two (IPUP__MR) */
static const ipup__ukr_fn ipup__ukr_tab1[IPUP__MR_1V][2] = {
    IPUP__UKR_P1(1), IPUP__UKR_P1(2), IPUP__UKR_P1(3), IPUP__UKR_P1(4), IPUP__UKR_P1(5),
    IPUP__UKR_P1(6), IPUP__UKR_P1(7), IPUP__UKR_P1(8)
#if IPUP__MR_1V > 8
    , IPUP__UKR_P1(9), IPUP__UKR_P1(10), IPUP__UKR_P1(11), IPUP__UKR_P1(12), IPUP__UKR_P1(13),
    IPUP__UKR_P1(14), IPUP__UKR_P1(15), IPUP__UKR_P1(16)
#endif
};
static const ipup__ukr_fn ipup__ukr_tab2[IPUP__MR][2] = {
    IPUP__UKR_P2(1), IPUP__UKR_P2(2), IPUP__UKR_P2(3), IPUP__UKR_P2(4), IPUP__UKR_P2(5),
    IPUP__UKR_P2(6)
#if IPUP__MR > 6
    , IPUP__UKR_P2(7), IPUP__UKR_P2(8)
#endif
};
static const ipup__ukr_fn ipup__ukr_tab3[IPUP__MR] = {
    ipup__ukr3_1, ipup__ukr3_2, ipup__ukr3_3, ipup__ukr3_4, ipup__ukr3_5, ipup__ukr3_6
#if IPUP__MR > 6
    , ipup__ukr3_7, ipup__ukr3_8
#endif
};
/* the same with the extra column-sum row (bias gradient fused into the weight product) */
static const ipup__ukr_fn ipup__ukr_tabd[IPUP__NV][IPUP__MR][2] = {
    { IPUP__UKR_D1(1), IPUP__UKR_D1(2), IPUP__UKR_D1(3), IPUP__UKR_D1(4), IPUP__UKR_D1(5),
      IPUP__UKR_D1(6)
#if IPUP__MR > 6
      , IPUP__UKR_D1(7), IPUP__UKR_D1(8)
#endif
    },
    { IPUP__UKR_D2(1), IPUP__UKR_D2(2), IPUP__UKR_D2(3), IPUP__UKR_D2(4), IPUP__UKR_D2(5),
      IPUP__UKR_D2(6)
#if IPUP__MR > 6
      , IPUP__UKR_D2(7), IPUP__UKR_D2(8)
#endif
    }
};

#if defined(IPUP_KERNELS_AVX512)
/* 4 vectors (64 columns) x up to 6 rows = 24 accumulators, full vectors only, C += A B:
   the weight gradient, whose K (the batch) is short, so a bigger tile spreads the fixed
   cost of a tile (loading and storing C, the call) over more FMAs. _d: with the column sums. */
#define IPUP__UKR_INST4(MR_)                                                                      \
    static void ipup__ukr4_##MR_(ipup__lanes lm, const float *const *ap, ptrdiff_t ka, int nseg,  \
                                 int seglen, ptrdiff_t sa, const float *b, ptrdiff_t ldb,         \
                                 float *c, ptrdiff_t ldc, const float *bias, int accum,           \
                                 float *dbp) {                                                    \
        IPUP__UKR_BODY(MR_, 4, 1, 0, 0);                                                          \
    }                                                                                             \
    static void ipup__ukr4d_##MR_(ipup__lanes lm, const float *const *ap, ptrdiff_t ka, int nseg, \
                                  int seglen, ptrdiff_t sa, const float *b, ptrdiff_t ldb,        \
                                  float *c, ptrdiff_t ldc, const float *bias, int accum,          \
                                  float *dbp) {                                                   \
        IPUP__UKR_BODY(MR_, 4, 1, 1, 0);                                                          \
    }
#define IPUP__MR_4V 6
IPUP__UKR_INST4(1) IPUP__UKR_INST4(2) IPUP__UKR_INST4(3)
IPUP__UKR_INST4(4) IPUP__UKR_INST4(5) IPUP__UKR_INST4(6)
static const ipup__ukr_fn ipup__ukr_tab4[2][IPUP__MR_4V] = {
    { ipup__ukr4_1, ipup__ukr4_2, ipup__ukr4_3, ipup__ukr4_4, ipup__ukr4_5, ipup__ukr4_6 },
    { ipup__ukr4d_1, ipup__ukr4d_2, ipup__ukr4d_3, ipup__ukr4d_4, ipup__ukr4d_5, ipup__ukr4d_6 }
};
#endif

/* One product C (M, N) (=|+=) A B. Row r of A starts at a + (r / group_rows) * group_stride
   + (r % group_rows) * row_stride. */
typedef struct ipup__gemm_t {
    int M, N;
    const float *a; /* A base */
    int group_rows;     /* rows come in groups of group_rows (conv: the output positions of
                           one image row) */
    ptrdiff_t row_stride, group_stride; /* row r: a + (r / group_rows) * group_stride
                                           + (r % group_rows) * row_stride */
    ptrdiff_t k_stride, seg_stride; /* element (r, s, k): row + s * seg_stride + k * k_stride */
    int nseg, seglen;   /* K = nseg * seglen */
    const float *b;     /* B (K, N), row stride ldb */
    ptrdiff_t ldb;
    float *c; /* C (M, N), row stride ldc */
    ptrdiff_t ldc;
    const float *bias; /* (N) or NULL, added when accum != 1 */
    int accum;         /* 0: C = A B (+ bias); 1: C += A B; 2: C = relu(A B (+ bias)) */
    float *db;         /* (N) or NULL: db += column sums of B (the first row tile does it) */
} ipup__gemm_t;

/* Column tiles of NR (the last one narrower, masked); per column tile the rows are cut into
   the fewest tiles of at most MR rows, of balanced sizes (9 rows -> 5 + 4, not 8 + 1: a
   one-row tile is FMA-latency bound). Row pointers advance incrementally (no division). */
static void ipup__gemm(const ipup__gemm_t *g) {
    int n0, r0, i;
    for (n0 = 0; n0 < g->N; n0 += IPUP__NR) {
        const int n_cols = g->N - n0 < IPUP__NR ? g->N - n0 : IPUP__NR;
        const int n_vecs = (n_cols + IPUP__VL - 1) / IPUP__VL,
                  last = n_cols - (n_vecs - 1) * IPUP__VL;
        const int full = last == IPUP__VL;
        const ipup__lanes lm = ipup__mask(last);
        const int max_rows = n_vecs == 1 && !g->db ? IPUP__MR_1V : IPUP__MR;
        const int tiles = (g->M + max_rows - 1) / max_rows;
        const int base = tiles ? g->M / tiles : 0, extra = tiles ? g->M % tiles : 0;
        int q = 0, rem = 0, t;
        const float *row = g->a; /* row r0 */
        for (t = 0, r0 = 0; t < tiles; t++) {
            const int m = base + (t < extra ? 1 : 0);
            const float *ap[IPUP__MR_1V];
            ipup__ukr_fn fn;
            if (m < 1 || m > max_rows) return; /* cannot happen (tiles = ceil(M / max_rows)) */
            if (g->db && t == 0) fn = ipup__ukr_tabd[n_vecs - 1][m - 1][full];
            else if (n_vecs == 1) fn = ipup__ukr_tab1[m - 1][full];
            else if (g->seglen == 3 && full && !g->db) fn = ipup__ukr_tab3[m - 1];
            else fn = ipup__ukr_tab2[m - 1][full];
            for (i = 0; i < m; i++) {
                ap[i] = row;
                if (++rem == g->group_rows) {
                    rem = 0;
                    q++;
                    row = g->a + (ptrdiff_t)q * g->group_stride;
                } else row += g->row_stride;
            }
            fn(lm, ap, g->k_stride, g->nseg, g->seglen, g->seg_stride, g->b + n0, g->ldb,
                g->c + (ptrdiff_t)r0 * g->ldc + n0, g->ldc, g->bias ? g->bias + n0 : NULL, g->accum,
                g->db ? g->db + n0 : NULL);
            r0 += m;
        }
    }
}

/* ipup__gemm for rows of A at a fixed stride (group_rows == M, one segment): with AVX-512 the
   whole 64-column panels go through the 4-vector tile (rows in balanced blocks of at most
   6, db on the first block), the rest through ipup__gemm. Each tile first prefetches the
   next tile's rows of C: a weight gradient (C += A B) as big as a layer's weights no longer
   sits in the core's cache between micro-batches, and its short K leaves too few FMAs per
   tile to hide the wait (the mlp's 784x256 layer: +3 % end to end). Each element has the chain it
   has in ipup__gemm (tiles never change the order of an element's sum), so the same bits. */
static void ipup__gemm_wide(const ipup__gemm_t *g) {
    ipup__gemm_t rest = *g;
#if defined(IPUP_KERNELS_AVX512)
    const int tiles = (g->M + IPUP__MR_4V - 1) / IPUP__MR_4V;
    int n0 = 0;
    if (g->group_rows == g->M && g->nseg == 1)
        for (; n0 + 4 * IPUP__VL <= g->N; n0 += 4 * IPUP__VL) {
            int t, r0 = 0, r;
            for (t = 0; t < tiles; t++) {
                const int m = g->M / tiles + (t < g->M % tiles ? 1 : 0);
                const float *ap[IPUP__MR_4V];
                for (r = 0; r < m; r++) ap[r] = g->a + (ptrdiff_t)(r0 + r) * g->row_stride;
                for (r = r0 + m; r < r0 + 2 * m && r < g->M; r++) { /* the next tile's C rows */
                    const char *q = (const char *)(const void *)(g->c + (ptrdiff_t)r * g->ldc + n0);
                    _mm_prefetch(q, _MM_HINT_T0); _mm_prefetch(q + 64, _MM_HINT_T0);
                    _mm_prefetch(q + 128, _MM_HINT_T0); _mm_prefetch(q + 192, _MM_HINT_T0);
                }
                ipup__ukr_tab4[g->db && t == 0][m - 1](
                    ipup__mask(IPUP__VL), ap, g->k_stride, 1, g->seglen, 0, g->b + n0, g->ldb,
                    g->c + (ptrdiff_t)r0 * g->ldc + n0, g->ldc, g->bias ? g->bias + n0 : NULL,
                    g->accum, g->db ? g->db + n0 : NULL);
                r0 += m;
            }
        }
    if (n0 == g->N) return;
    rest.N = g->N - n0; rest.b = g->b + n0; rest.c = g->c + n0;
    rest.bias = g->bias ? g->bias + n0 : NULL; rest.db = g->db ? g->db + n0 : NULL;
#endif
    ipup__gemm(&rest);
}

/* dst (N) += column sums of src (G*R, N) (row stride ld), group by group: per group of R rows
   the rows are summed in order from zero, then added to dst; exactly the arithmetic of the
   column-sum row fused into the weight products, so db has the same bits either way. */
static void ipup__colsum_add(int G, int R, int N, const float *src, ptrdiff_t ld, float *dst) {
    int n0, r, q;
    for (n0 = 0; n0 < N; n0 += IPUP__VL) {
        const int n_cols = N - n0 < IPUP__VL ? N - n0 : IPUP__VL;
        const ipup__lanes lanes = ipup__mask(n_cols);
        const float *p = src + n0;
        for (q = 0; q < G; q++) {
            ipup__v s0 = ipup__vzero();
            for (r = 0; r < R; r++, p += ld) s0 = ipup__vadd(s0, ipup__vldm(p, lanes));
            ipup__vstm(dst + n0, lanes, ipup__vadd(ipup__vldm(dst + n0, lanes), s0));
        }
    }
}

/* o[c] = column c of the VL x VL block whose rows are q[r]: unpack, in-lane shuffles, then
   128-bit lane moves. Moves only: no arithmetic touches a value. */
#if defined(__GNUC__) || defined(__clang__)
#define IPUP__ALWAYS_INLINE inline __attribute__((always_inline)) /* the block stays in registers */
#else
#define IPUP__ALWAYS_INLINE inline
#endif
static IPUP__ALWAYS_INLINE void ipup__transpose_block(ipup__v *q, ipup__v *o) {
    ipup__v t[IPUP__VL];
    int i, j;
#if defined(IPUP_KERNELS_AVX512)
IPUP__UNROLL(16)
    for (i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(q[2 * i], q[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(q[2 * i], q[2 * i + 1]);
    }
IPUP__UNROLL(16)
    for (i = 0; i < 4; i++) { /* q[4i + j], lane L: rows 4i..4i+3 of column 4L + j */
        q[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        q[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        q[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        q[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
IPUP__UNROLL(16)
    for (j = 0; j < 4; j++) {
        const __m512 a0 = _mm512_shuffle_f32x4(q[j], q[4 + j], 0x88),
                     a1 = _mm512_shuffle_f32x4(q[j], q[4 + j], 0xDD);
        const __m512 b0 = _mm512_shuffle_f32x4(q[8 + j], q[12 + j], 0x88),
                     b1 = _mm512_shuffle_f32x4(q[8 + j], q[12 + j], 0xDD);
        o[j] = _mm512_shuffle_f32x4(a0, b0, 0x88);
        o[4 + j] = _mm512_shuffle_f32x4(a1, b1, 0x88);
        o[8 + j] = _mm512_shuffle_f32x4(a0, b0, 0xDD);
        o[12 + j] = _mm512_shuffle_f32x4(a1, b1, 0xDD);
    }
#else
IPUP__UNROLL(16)
    for (i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(q[2 * i], q[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(q[2 * i], q[2 * i + 1]);
    }
IPUP__UNROLL(16)
    for (i = 0; i < 2; i++) { /* q[4i + j], lane L: rows 4i..4i+3 of column 4L + j */
        q[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        q[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        q[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        q[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
IPUP__UNROLL(16)
    for (j = 0; j < 4; j++) {
        o[j] = _mm256_permute2f128_ps(q[j], q[4 + j], 0x20);
        o[4 + j] = _mm256_permute2f128_ps(q[j], q[4 + j], 0x31);
    }
#endif
}

/* dst[c * ldd + r] = src[r * lds + c] for r < rows, c < cols, in VL x VL blocks (the
   ragged ones by masked loads and stores: nothing outside the two matrices is touched). */
static void ipup__transpose(const float *src, ptrdiff_t lds, int rows, int cols, float *dst,
                            ptrdiff_t ldd) {
    int r0, c0, i;
    for (r0 = 0; r0 < rows; r0 += IPUP__VL) {
        const int n_rows = rows - r0 < IPUP__VL ? rows - r0 : IPUP__VL;
        const ipup__lanes row_mask = ipup__mask(n_rows);
        for (c0 = 0; c0 < cols; c0 += IPUP__VL) {
            const int n_cols = cols - c0 < IPUP__VL ? cols - c0 : IPUP__VL;
            const float *sp = src + (ptrdiff_t)r0 * lds + c0;
            float *dp = dst + (ptrdiff_t)c0 * ldd + r0;
            ipup__v q[IPUP__VL], o[IPUP__VL];
            if (n_rows == IPUP__VL && n_cols == IPUP__VL) {
IPUP__UNROLL(16)
                for (i = 0; i < IPUP__VL; i++) q[i] = ipup__vld(sp + (ptrdiff_t)i * lds);
                ipup__transpose_block(q, o);
IPUP__UNROLL(16)
                for (i = 0; i < IPUP__VL; i++) ipup__vst(dp + (ptrdiff_t)i * ldd, o[i]);
            } else {
                const ipup__lanes col_mask = ipup__mask(n_cols);
IPUP__UNROLL(16)
                for (i = 0; i < IPUP__VL; i++)
                    q[i] = i < n_rows ? ipup__vldm(sp + (ptrdiff_t)i * lds, col_mask)
                                      : ipup__vzero();
                ipup__transpose_block(q, o);
                for (i = 0; i < n_cols; i++) ipup__vstm(dp + (ptrdiff_t)i * ldd, row_mask, o[i]);
            }
        }
    }
}
#endif /* IPUP__SIMD */

/* >>gelu: e^x and GELU, scalar and SIMD, and ipup_gelu_fwd_f32 / ipup_gelu_bwd_f32 */
/* e^x, Cephes expf (S. L. Moshier, Cephes Math Library 2.2, expf.c): x = n ln2 + r with
   |r| <= ln2/2 (ln2 split in two for exactness), e^r by its degree-6 polynomial, times 2^n
   built in the exponent bits. x is clamped to [-87, 88] (e^-87 = 1.6e-38, e^88 = 1.7e38);
   n = round(x log2 e) by the 1.5*2^23 trick, so no libm and no float-to-int rounding mode.
   NaN is the caller's business (ipup__gelu_s returns it unchanged). */
#define IPUP__EXP_HI 88.0f
#define IPUP__EXP_LO (-87.0f)
#define IPUP__LOG2E 1.44269504088896341f
#define IPUP__EXP_ROUND 12582912.0f /* 1.5 * 2^23 */
#define IPUP__LN2_HI 0.693359375f
#define IPUP__LN2_LO (-2.12194440e-4f)
#define IPUP__EXP_P0 1.9875691500E-4f
#define IPUP__EXP_P1 1.3981999507E-3f
#define IPUP__EXP_P2 8.3334519073E-3f
#define IPUP__EXP_P3 4.1665795894E-2f
#define IPUP__EXP_P4 1.6666665459E-1f
#define IPUP__EXP_P5 5.0000001201E-1f
static float ipup__expf(float x) {
    float t, n, r, p, scale;
    uint32_t bits;
    x = x > IPUP__EXP_HI ? IPUP__EXP_HI : x;
    x = x < IPUP__EXP_LO ? IPUP__EXP_LO : x;
    t = x * IPUP__LOG2E;
    n = (t + IPUP__EXP_ROUND) - IPUP__EXP_ROUND;
    r = x - n * IPUP__LN2_HI;
    r = r - n * IPUP__LN2_LO;
    p = IPUP__EXP_P0;
    p = p * r + IPUP__EXP_P1;
    p = p * r + IPUP__EXP_P2;
    p = p * r + IPUP__EXP_P3;
    p = p * r + IPUP__EXP_P4;
    p = p * r + IPUP__EXP_P5;
    p = p * r * r + r + 1.0f;
    bits = (uint32_t)((int32_t)n + 127) << 23;
    IPUPIPE_MEMCPY(&scale, &bits, sizeof scale);
    return p * scale;
}

#define IPUP_GELU_K0 0.7978845608028654f /* sqrt(2/pi) */
#define IPUP_GELU_K1 0.044715f
/* s = sigmoid(2u) = 1 / (1 + e^(-2u)), u = K0 (x + K1 x^3) */
static float ipup__gelu_s(float v) {
    float u = IPUP_GELU_K0 * (v + IPUP_GELU_K1 * v * v * v);
    return 1.0f / (1.0f + ipup__expf(-2.0f * u));
}
static void ipup__gelu_fwd_scalar(int i0, int n, const float *x, float *y) {
    int i;
    for (i = i0; i < n; i++) {
        const float v = x[i];
        y[i] = v != v ? v : v * ipup__gelu_s(v);
    }
}
static void ipup__gelu_bwd_scalar(int i0, int n, const float *x, const float *dy, float *dx) {
    int i;
    for (i = i0; i < n; i++) {
        const float v = x[i];
        float s, d;
        if (v != v) { dx[i] = v; continue; }
        s = ipup__gelu_s(v);
        d = s + 2.0f * v * s * (1.0f - s) * IPUP_GELU_K0 * (1.0f + 3.0f * IPUP_GELU_K1 * v * v);
        dx[i] = dy[i] * d;
    }
}

#ifdef IPUP__SIMD
/* the scalar ipup__expf and GELU, operation for operation, on vectors */
static inline ipup__v ipup__vexp(ipup__v x) {
    ipup__v t, n, r, p;
    x = ipup__vmin(x, ipup__vset(IPUP__EXP_HI));
    x = ipup__vmax(x, ipup__vset(IPUP__EXP_LO));
    t = ipup__vmul(x, ipup__vset(IPUP__LOG2E));
    n = ipup__vsub(ipup__vadd(t, ipup__vset(IPUP__EXP_ROUND)), ipup__vset(IPUP__EXP_ROUND));
    r = ipup__vsub(x, ipup__vmul(n, ipup__vset(IPUP__LN2_HI)));
    r = ipup__vsub(r, ipup__vmul(n, ipup__vset(IPUP__LN2_LO)));
    p = ipup__vset(IPUP__EXP_P0);
    p = ipup__vadd(ipup__vmul(p, r), ipup__vset(IPUP__EXP_P1));
    p = ipup__vadd(ipup__vmul(p, r), ipup__vset(IPUP__EXP_P2));
    p = ipup__vadd(ipup__vmul(p, r), ipup__vset(IPUP__EXP_P3));
    p = ipup__vadd(ipup__vmul(p, r), ipup__vset(IPUP__EXP_P4));
    p = ipup__vadd(ipup__vmul(p, r), ipup__vset(IPUP__EXP_P5));
    p = ipup__vadd(ipup__vadd(ipup__vmul(ipup__vmul(p, r), r), r), ipup__vset(1.0f));
    return ipup__vmul(p, ipup__vpow2i(n));
}
static inline ipup__v ipup__vgelu_s(ipup__v v) {
    ipup__v u = ipup__vmul(ipup__vmul(ipup__vmul(ipup__vset(IPUP_GELU_K1), v), v), v);
    u = ipup__vmul(ipup__vset(IPUP_GELU_K0), ipup__vadd(v, u));
    return ipup__vdiv(ipup__vset(1.0f),
                      ipup__vadd(ipup__vset(1.0f), ipup__vexp(ipup__vmul(ipup__vset(-2.0f), u))));
}
/* whole vectors only; returns the first index left for the scalar tail. Lanes holding NaN
   are finished by the scalar loop too (it passes NaN through). */
static int ipup__gelu_fwd_simd(int n, const float *x, float *y) {
    int i;
    for (i = 0; i + IPUP__VL <= n; i += IPUP__VL) {
        const ipup__v v = ipup__vld(x + i);
        ipup__vst(y + i, ipup__vmul(v, ipup__vgelu_s(v)));
    }
    return i;
}
static int ipup__gelu_bwd_simd(int n, const float *x, const float *dy, float *dx) {
    int i;
    for (i = 0; i + IPUP__VL <= n; i += IPUP__VL) {
        const ipup__v v = ipup__vld(x + i), s = ipup__vgelu_s(v);
        ipup__v a = ipup__vmul(ipup__vmul(ipup__vmul(ipup__vset(2.0f), v), s),
                               ipup__vsub(ipup__vset(1.0f), s));
        ipup__v c = ipup__vadd(ipup__vset(1.0f),
                               ipup__vmul(ipup__vmul(ipup__vset(3.0f * IPUP_GELU_K1), v), v));
        ipup__v d = ipup__vadd(s, ipup__vmul(ipup__vmul(a, ipup__vset(IPUP_GELU_K0)), c));
        ipup__vst(dx + i, ipup__vmul(ipup__vld(dy + i), d));
    }
    return i;
}
#endif /* IPUP__SIMD */

IPUPIPE_DEF void ipup_gelu_fwd_f32(int n, const float *x /* (n) */, float *y /* (n) */) {
    int i0 = 0;
#ifdef IPUP__SIMD
    i0 = ipup__gelu_fwd_simd(n, x, y);
    {   /* NaN lanes: redo them with the scalar code (NaN in, NaN out) */
        int i;
        for (i = 0; i < i0; i++)
            if (x[i] != x[i]) y[i] = x[i];
    }
#endif
    ipup__gelu_fwd_scalar(i0, n, x, y);
}
IPUPIPE_DEF void ipup_gelu_bwd_f32(int n, const float *x /* (n) */, const float *dy /* (n) */,
                                   float *dx /* (n) */) {
    int i0 = 0;
#ifdef IPUP__SIMD
    i0 = ipup__gelu_bwd_simd(n, x, dy, dx);
    {
        int i;
        for (i = 0; i < i0; i++)
            if (x[i] != x[i]) dx[i] = x[i];
    }
#endif
    ipup__gelu_bwd_scalar(i0, n, x, dy, dx);
}

/* >>dense: the dense layer: the portable kernels, the SIMD products, the dispatchers */
IPUPIPE_DEF void ipup_dense_fwd_f32_portable(int B, int IN, int OUT,
                                             const float *x /* (B, IN) */,
                                             const float *w /* (IN, OUT) */,
                                             const float *b /* (OUT) or NULL */,
                                             float *y /* (B, OUT) */) {
    int r, k, o;
    IPUPIPE_ASSERT(B >= 0 && IN >= 0 && OUT >= 0);
    if (B <= 0 || IN < 0 || OUT <= 0) return; /* nothing to do, or bad sizes with asserts off */
    for (r = 0; r < B; r++) {
        float *yr = y + (size_t)r * (size_t)OUT;
        const float *xr = x + (size_t)r * (size_t)IN;
        for (o = 0; o < OUT; o++) yr[o] = 0.0f;
        for (k = 0; k < IN; k++) {
            const float xv = xr[k];
            const float *wk = w + (size_t)k * (size_t)OUT;
            for (o = 0; o < OUT; o++) yr[o] += xv * wk[o];
        }
        if (b)
            for (o = 0; o < OUT; o++) yr[o] += b[o];
    }
}

IPUPIPE_DEF void ipup_dense_bwd_f32_portable(int B, int IN, int OUT,
                                             const float *x /* (B, IN) */,
                                             const float *w /* (IN, OUT) */,
                                             const float *dy /* (B, OUT) */,
                                             float *dx /* (B, IN) or NULL */,
                                             float *dw /* (IN, OUT) or NULL */,
                                             float *db /* (OUT) or NULL */) {
    int r, i, o;
    IPUPIPE_ASSERT(B >= 0 && IN >= 0 && OUT >= 0);
    if (B <= 0 || IN < 0 || OUT < 0) return; /* nothing to do, or bad sizes with asserts off */
    if (dx) {
        for (r = 0; r < B; r++) {
            const float *dyr = dy + (size_t)r * (size_t)OUT;
            float *dxr = dx + (size_t)r * (size_t)IN;
            /* four dot products at once (independent chains; each still sums o in order) */
            for (i = 0; i + 4 <= IN; i += 4) {
                const float *w0 = w + (size_t)i * (size_t)OUT, *w1 = w0 + OUT, *w2 = w1 + OUT,
                            *w3 = w2 + OUT;
                float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
                for (o = 0; o < OUT; o++) {
                    const float d = dyr[o];
                    s0 += d * w0[o];
                    s1 += d * w1[o];
                    s2 += d * w2[o];
                    s3 += d * w3[o];
                }
                dxr[i] = s0; dxr[i + 1] = s1; dxr[i + 2] = s2; dxr[i + 3] = s3;
            }
            for (; i < IN; i++) {
                const float *wi = w + (size_t)i * (size_t)OUT;
                float s0 = 0.0f;
                for (o = 0; o < OUT; o++) s0 += dyr[o] * wi[o];
                dxr[i] = s0;
            }
        }
    }
    if (dw) {
        for (i = 0; i < IN; i++) {
            float *dwi = dw + (size_t)i * (size_t)OUT;
            for (r = 0; r < B; r++) {
                const float xv = x[(size_t)r * (size_t)IN + (size_t)i];
                const float *dyr = dy + (size_t)r * (size_t)OUT;
                for (o = 0; o < OUT; o++) dwi[o] += xv * dyr[o];
            }
        }
    }
    if (db) {
        for (r = 0; r < B; r++) {
            const float *dyr = dy + (size_t)r * (size_t)OUT;
            for (o = 0; o < OUT; o++) db[o] += dyr[o];
        }
    }
}

#ifdef IPUP_KERNELS_BLOCKED
/* The register-blocked scalar path (cores with an FPU of 32 single-precision registers and
   no SIMD: Cortex-M4F/M7/M33, RV32F). C (M x N) = A (M x K) B (K x N) in tiles of 4 x 4 (and
   4 x 2, 4 x 1, 1 x 4, 1 x 2, 1 x 1 at the edges) whose 16 accumulators stay in registers
   over the whole K loop: per k, 4 + 4 loads feed 16 multiply-adds. Every output is still
   one chain `c += a * b` over k in ascending order, from 0 (or from C's value when adding
   into a gradient), then `+ bias`, then max(c, 0): the portable kernels' operations in the
   portable kernels' order, so the bits are theirs. The three forms: */
#define IPUP__BLK_NN 0 /* A(r, k) = a[r*lda + k], B(k, j) = b[k*ldb + j]: forward products */
#define IPUP__BLK_NT 1 /* A(r, k) = a[r*lda + k], B(k, j) = b[j*ldb + k]: input gradients */
#define IPUP__BLK_TN 2 /* A(r, k) = a[k*lda + r], B(k, j) = b[k*ldb + j]: weight gradients */
#define IPUP__BLK_LOAD 1 /* flags: each chain starts from C's value (else from 0) */
#define IPUP__BLK_RELU 2 /* flags: max(c, 0) after the bias, as ipup_relu_fwd_f32 */
/* c += a * b. gcc in ISO C mode does not contract (-ffp-contract=off), so the portable
   kernels' `+=` is a rounded product then a rounded sum; the Arm VMLA.F32 instruction does
   exactly that (a chained, not fused, multiply-accumulate: Armv7-M ARM, A7.7.239), in one
   instruction where gcc -O2 would emit VMUL + VADD. Elsewhere the C expression itself. */
#if defined(__arm__) && defined(__GNUC__) && !defined(__clang__) && !defined(__cplusplus) &&   \
    defined(__STRICT_ANSI__) && defined(__ARM_FP) && (__ARM_FP & 4)
#define IPUP__MAC(c, a, b) __asm__("vmla.f32 %0, %1, %2" : "+t"(c) : "t"(a), "t"(b))
#else
#define IPUP__MAC(c, a, b) ((c) += (a) * (b))
#endif
#if defined(__GNUC__) || defined(__clang__)
#define IPUP__BLK_INLINE inline __attribute__((always_inline))
#else
#define IPUP__BLK_INLINE inline
#endif
#define IPUP__BLK_ROWMAC(x, c0, c1, c2, c3)                                                      \
    do {                                                                                         \
        IPUP__MAC(c0, x, y0);                                                                    \
        if (nr > 1) IPUP__MAC(c1, x, y1);                                                        \
        if (nr > 2) { IPUP__MAC(c2, x, y2); IPUP__MAC(c3, x, y3); }                              \
    } while (0)
#define IPUP__BLK_LD(r, c0, c1, c2, c3)                                                          \
    do {                                                                                         \
        const float *cp = c + (r) * ldc;                                                         \
        c0 = cp[0];                                                                              \
        if (nr > 1) c1 = cp[1];                                                                  \
        if (nr > 2) { c2 = cp[2]; c3 = cp[3]; }                                                  \
    } while (0)
#define IPUP__BLK_ST(r, c0, c1, c2, c3)                                                          \
    do {                                                                                         \
        float *cp = c + (r) * ldc;                                                               \
        cp[0] = c0;                                                                              \
        if (nr > 1) cp[1] = c1;                                                                  \
        if (nr > 2) { cp[2] = c2; cp[3] = c3; }                                                  \
    } while (0)
/* On Arm with the VMLA above, the 4 x 4 tiles of the three forms (and the 4 x 2 edge tiles
   of NN and TN) are written in assembly, where gcc's code spends about one instruction
   per multiply-add on loads and pointer steps: the 16 sums stay in s0-s15, VLDM loads
   several floats in one instruction and VSTM stores a row of the tile in one. Each output
   is still one VMLA chain over k in ascending order, from +0 (VLDM of ipup__blk_zero) or
   from C's value: the same bits.
   Only when optimising: gcc -O0 finds no 9 core registers for one asm statement. */
#if defined(__arm__) && defined(__GNUC__) && !defined(__clang__) && !defined(__cplusplus) &&   \
    defined(__STRICT_ANSI__) && defined(__ARM_FP) && (__ARM_FP & 4) && defined(__OPTIMIZE__)
#define IPUP__BLK_ASM 1
static const float ipup__blk_zero[16] = {0.0f};
#define IPUP__V(c, x, y) "vmla.f32 s" #c ", s" #x ", s" #y "\n\t"
#define IPUP__V4(c0, c1, c2, c3, x, y0, y1, y2, y3)                                              \
    IPUP__V(c0, x, y0) IPUP__V(c1, x, y1) IPUP__V(c2, x, y2) IPUP__V(c3, x, y3)
/* TN, one k: A(r, k) for r = 0..3 into s16-s19, B(k, j) for j = 0..3 into s20-s23 */
#define IPUP__TN_STEP                                                                            \
    "vldm %[a], {s16-s19}\n\tadd %[a], %[a], %[la]\n\t"                                          \
    "vldm %[b], {s20-s23}\n\tadd %[b], %[b], %[lb]\n\t"                                          \
    IPUP__V4(0, 1, 2, 3, 16, 20, 21, 22, 23) IPUP__V4(4, 5, 6, 7, 17, 20, 21, 22, 23)            \
    IPUP__V4(8, 9, 10, 11, 18, 20, 21, 22, 23) IPUP__V4(12, 13, 14, 15, 19, 20, 21, 22, 23)
/* the 16 sums from 4 rows of p, row stride lp bytes (p advanced by 3 rows), or to them */
#define IPUP__TILE_LD(p, lp)                                                                     \
    "vldm %[" p "], {s0-s3}\n\tadd %[" p "], %[" p "], %[" lp "]\n\t"                            \
    "vldm %[" p "], {s4-s7}\n\tadd %[" p "], %[" p "], %[" lp "]\n\t"                            \
    "vldm %[" p "], {s8-s11}\n\tadd %[" p "], %[" p "], %[" lp "]\n\t"                           \
    "vldm %[" p "], {s12-s15}\n\t"
#define IPUP__TILE_ST(p, lp)                                                                     \
    "vstm %[" p "], {s0-s3}\n\tadd %[" p "], %[" p "], %[" lp "]\n\t"                            \
    "vstm %[" p "], {s4-s7}\n\tadd %[" p "], %[" p "], %[" lp "]\n\t"                            \
    "vstm %[" p "], {s8-s11}\n\tadd %[" p "], %[" p "], %[" lp "]\n\t"                           \
    "vstm %[" p "], {s12-s15}\n\t"
/* k loop: an odd first step (k = 0), then the rest two steps at a time; %[k] = K */
#define IPUP__K_LOOP(ONE, TWO)                                                                   \
    "lsrs %[k], %[k], #1\n\tbcc 1f\n\t" ONE "1:\n\tcmp %[k], #0\n\tbeq 3f\n"                     \
    "2:\n\t" TWO "subs %[k], %[k], #1\n\tbne 2b\n"                                               \
    "3:\n\t"
#define IPUP__CLOB16                                                                             \
    "cc", "memory", "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11",    \
        "s12", "s13", "s14", "s15"
#define IPUP__TILE_ST_UP(p, lp) /* from row 3 up to row 0 */                                    \
    "vstm %[" p "], {s12-s15}\n\tsub %[" p "], %[" p "], %[" lp "]\n\t"                          \
    "vstm %[" p "], {s8-s11}\n\tsub %[" p "], %[" p "], %[" lp "]\n\t"                           \
    "vstm %[" p "], {s4-s7}\n\tsub %[" p "], %[" p "], %[" lp "]\n\t"                            \
    "vstm %[" p "], {s0-s3}\n\t"
/* TN 4 x 4 into C: C(r, j) += sum_k a[k*lda + r] b[k*ldb + j]; 7 core registers */
static IPUP__BLK_INLINE void ipup__blk_tn44(int K, const float *a, ptrdiff_t la,
                                            const float *b, ptrdiff_t lb, float *c,
                                            ptrdiff_t lc) {
    int k = K;
    __asm__ __volatile__(IPUP__TILE_LD("c", "lc") IPUP__K_LOOP(IPUP__TN_STEP,
                                                               IPUP__TN_STEP IPUP__TN_STEP)
                             IPUP__TILE_ST_UP("c", "lc")
                         : [a] "+r"(a), [b] "+r"(b), [k] "+r"(k), [c] "+r"(c)
                         : [la] "r"(la), [lb] "r"(lb), [lc] "r"(lc)
                         : IPUP__CLOB16, "s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23");
}
/* NT, one k: A(r, k) into s16, s18, s20, s22, B(k, j) into s24, s26, s28, s30 */
#define IPUP__NT_LD1                                                                             \
    "vldm %[a0]!, {s16}\n\tvldm %[a1]!, {s18}\n\tvldm %[a2]!, {s20}\n\tvldm %[a3]!, {s22}\n\t"   \
    "vldm %[b0]!, {s24}\n\tvldm %[b1]!, {s26}\n\tvldm %[b2]!, {s28}\n\tvldm %[b3]!, {s30}\n\t"
/* NT, two k: A(r, k + t) into s(16 + 2r + t), B(k + t, j) into s(24 + 2j + t) */
#define IPUP__NT_LD2                                                                             \
    "vldm %[a0]!, {s16-s17}\n\tvldm %[a1]!, {s18-s19}\n\t"                                       \
    "vldm %[a2]!, {s20-s21}\n\tvldm %[a3]!, {s22-s23}\n\t"                                       \
    "vldm %[b0]!, {s24-s25}\n\tvldm %[b1]!, {s26-s27}\n\t"                                       \
    "vldm %[b2]!, {s28-s29}\n\tvldm %[b3]!, {s30-s31}\n\t"
/* the 16 multiply-adds of step t (0 or 1) of NT_LD2, or of NT_LD1 (t = 0) */
#define IPUP__NT_MAC0                                                                            \
    IPUP__V4(0, 1, 2, 3, 16, 24, 26, 28, 30) IPUP__V4(4, 5, 6, 7, 18, 24, 26, 28, 30)            \
    IPUP__V4(8, 9, 10, 11, 20, 24, 26, 28, 30) IPUP__V4(12, 13, 14, 15, 22, 24, 26, 28, 30)
#define IPUP__NT_MAC1                                                                            \
    IPUP__V4(0, 1, 2, 3, 17, 25, 27, 29, 31) IPUP__V4(4, 5, 6, 7, 19, 25, 27, 29, 31)            \
    IPUP__V4(8, 9, 10, 11, 21, 25, 27, 29, 31) IPUP__V4(12, 13, 14, 15, 23, 25, 27, 29, 31)
/* NT 4 x 4 from +0: C(r, j) = sum_k a[r*lda + k] b[j*ldb + k]. 9 core registers: the
   row pointers, made from a, b and the strides in bytes la, lb, and the count; the zeros'
   address, la, lb, c and lc come from memory when needed */
static IPUP__BLK_INLINE void ipup__blk_nt44(int K, const float *a, const ptrdiff_t *la,
                                            const float *b, const ptrdiff_t *lb, float *const *c,
                                            const ptrdiff_t *lc) {
    const float *z = ipup__blk_zero, *a1, *a2, *a3, *b1, *b2, *b3;
    int k = K;
    __asm__ __volatile__("ldr %[a3], %[z]\n\tvldm %[a3], {s0-s15}\n\t"
                         "ldr %[a3], %[la]\n\tadd %[a1], %[a0], %[a3]\n\t"
                         "add %[a2], %[a1], %[a3]\n\tadd %[a3], %[a2], %[a3]\n\t"
                         "ldr %[b3], %[lb]\n\tadd %[b1], %[b0], %[b3]\n\t"
                         "add %[b2], %[b1], %[b3]\n\tadd %[b3], %[b2], %[b3]\n\t"
                         IPUP__K_LOOP(IPUP__NT_LD1 IPUP__NT_MAC0,
                                      IPUP__NT_LD2 IPUP__NT_MAC0 IPUP__NT_MAC1)
                         "ldr %[a0], %[c]\n\tldr %[a1], %[lc]\n\t" IPUP__TILE_ST("a0", "a1")
                         : [a0] "+r"(a), [b0] "+r"(b), [k] "+r"(k), [a1] "=&r"(a1),
                           [a2] "=&r"(a2), [a3] "=&r"(a3), [b1] "=&r"(b1), [b2] "=&r"(b2),
                           [b3] "=&r"(b3)
                         : [z] "m"(z), [la] "m"(*la), [lb] "m"(*lb), [c] "m"(*c), [lc] "m"(*lc)
                         : IPUP__CLOB16, "s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23",
                           "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31");
}
/* the 8 sums of a 4 x 2 tile, s(2r), s(2r + 1) for row r, from or to 4 rows of p */
#define IPUP__TILE2_LD(p, lp)                                                                    \
    "vldm %[" p "], {s0-s1}\n\tadd %[" p "], %[" p "], %[" lp "]\n\t"                            \
    "vldm %[" p "], {s2-s3}\n\tadd %[" p "], %[" p "], %[" lp "]\n\t"                            \
    "vldm %[" p "], {s4-s5}\n\tadd %[" p "], %[" p "], %[" lp "]\n\t"                            \
    "vldm %[" p "], {s6-s7}\n\t"
#define IPUP__TILE2_ST(p, lp)                                                                    \
    "vstm %[" p "], {s0-s1}\n\tadd %[" p "], %[" p "], %[" lp "]\n\t"                            \
    "vstm %[" p "], {s2-s3}\n\tadd %[" p "], %[" p "], %[" lp "]\n\t"                            \
    "vstm %[" p "], {s4-s5}\n\tadd %[" p "], %[" p "], %[" lp "]\n\t"                            \
    "vstm %[" p "], {s6-s7}\n\t"
#define IPUP__TILE2_ST_UP(p, lp)                                                                 \
    "vstm %[" p "], {s6-s7}\n\tsub %[" p "], %[" p "], %[" lp "]\n\t"                            \
    "vstm %[" p "], {s4-s5}\n\tsub %[" p "], %[" p "], %[" lp "]\n\t"                            \
    "vstm %[" p "], {s2-s3}\n\tsub %[" p "], %[" p "], %[" lp "]\n\t"                            \
    "vstm %[" p "], {s0-s1}\n\t"
#define IPUP__V2(c0, c1, x, y0, y1) IPUP__V(c0, x, y0) IPUP__V(c1, x, y1)
/* TN 4 x 2, one k: A(r, k) into s16-s19, B(k, j) into s20-s21 */
#define IPUP__TN2_STEP                                                                           \
    "vldm %[a], {s16-s19}\n\tadd %[a], %[a], %[la]\n\t"                                          \
    "vldm %[b], {s20-s21}\n\tadd %[b], %[b], %[lb]\n\t"                                          \
    IPUP__V2(0, 1, 16, 20, 21) IPUP__V2(2, 3, 17, 20, 21) IPUP__V2(4, 5, 18, 20, 21)             \
    IPUP__V2(6, 7, 19, 20, 21)
/* TN 4 x 2 into C, as ipup__blk_tn44 */
static IPUP__BLK_INLINE void ipup__blk_tn42(int K, const float *a, ptrdiff_t la,
                                            const float *b, ptrdiff_t lb, float *c,
                                            ptrdiff_t lc) {
    int k = K;
    __asm__ __volatile__(IPUP__TILE2_LD("c", "lc") IPUP__K_LOOP(IPUP__TN2_STEP,
                                                                IPUP__TN2_STEP IPUP__TN2_STEP)
                             IPUP__TILE2_ST_UP("c", "lc")
                         : [a] "+r"(a), [b] "+r"(b), [k] "+r"(k), [c] "+r"(c)
                         : [la] "r"(la), [lb] "r"(lb), [lc] "r"(lc)
                         : "cc", "memory", "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s16",
                           "s17", "s18", "s19", "s20", "s21");
}
/* NN, one or two k: A(r, k + t) into s(16 + 2r + t) (as NT); B's rows k, k + 1 from s24 */
#define IPUP__NN_LDB(r0, r1) "vldm %[b], {s" #r0 "-s" #r1 "}\n\tadd %[b], %[b], %[lb]\n\t"
#define IPUP__NN_LDA1                                                                            \
    "vldm %[a0]!, {s16}\n\tvldm %[a1]!, {s18}\n\tvldm %[a2]!, {s20}\n\tvldm %[a3]!, {s22}\n\t"
#define IPUP__NN_LDA2                                                                            \
    "vldm %[a0]!, {s16-s17}\n\tvldm %[a1]!, {s18-s19}\n\t"                                       \
    "vldm %[a2]!, {s20-s21}\n\tvldm %[a3]!, {s22-s23}\n\t"
/* the 16 multiply-adds of NN step t = 0 (B in s24-s27) and t = 1 (B in s28-s31) */
#define IPUP__NN_MAC0                                                                            \
    IPUP__V4(0, 1, 2, 3, 16, 24, 25, 26, 27) IPUP__V4(4, 5, 6, 7, 18, 24, 25, 26, 27)            \
    IPUP__V4(8, 9, 10, 11, 20, 24, 25, 26, 27) IPUP__V4(12, 13, 14, 15, 22, 24, 25, 26, 27)
#define IPUP__NN_MAC1                                                                            \
    IPUP__V4(0, 1, 2, 3, 17, 28, 29, 30, 31) IPUP__V4(4, 5, 6, 7, 19, 28, 29, 30, 31)            \
    IPUP__V4(8, 9, 10, 11, 21, 28, 29, 30, 31) IPUP__V4(12, 13, 14, 15, 23, 28, 29, 30, 31)
/* the 8 of a 4 x 2 tile: t = 0 (B in s24-s25), t = 1 (B in s26-s27) */
#define IPUP__NN2_MAC0                                                                           \
    IPUP__V2(0, 1, 16, 24, 25) IPUP__V2(2, 3, 18, 24, 25) IPUP__V2(4, 5, 20, 24, 25)             \
    IPUP__V2(6, 7, 22, 24, 25)
#define IPUP__NN2_MAC1                                                                           \
    IPUP__V2(0, 1, 17, 26, 27) IPUP__V2(2, 3, 19, 26, 27) IPUP__V2(4, 5, 21, 26, 27)             \
    IPUP__V2(6, 7, 23, 26, 27)
/* NN: the row pointers a1-a3 from a0 and the stride la in bytes (in memory) */
#define IPUP__NN_ROWS                                                                            \
    "ldr %[a3], %[la]\n\tadd %[a1], %[a0], %[a3]\n\t"                                            \
    "add %[a2], %[a1], %[a3]\n\tadd %[a3], %[a2], %[a3]\n\t"
#define IPUP__NN_OPS                                                                             \
    : [a0] "+r"(a), [b] "+r"(b), [k] "+r"(k), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3)    \
    : [lb] "r"(lb), [la] "m"(*la), [s] "m"(*s), [ls] "m"(*ls), [c] "m"(*c), [lc] "m"(*lc)
/* NN 4 x 4: C(r, j) = S(r, j) + sum_k a[r*lda + k] b[k*ldb + j] with S = C (row stride ls
   bytes) or the zeros (ls = 0); 7 core registers, the rest from memory when needed */
static IPUP__BLK_INLINE void ipup__blk_nn44(int K, const float *a, const ptrdiff_t *la,
                                            const float *b, ptrdiff_t lb,
                                            const float *const *s, const ptrdiff_t *ls,
                                            float *const *c, const ptrdiff_t *lc) {
    const float *a1, *a2, *a3;
    int k = K;
    __asm__ __volatile__("ldr %[a1], %[s]\n\tldr %[a2], %[ls]\n\t" IPUP__TILE_LD("a1", "a2")
                             IPUP__NN_ROWS IPUP__K_LOOP(
                                 IPUP__NN_LDA1 IPUP__NN_LDB(24, 27) IPUP__NN_MAC0,
                                 IPUP__NN_LDA2 IPUP__NN_LDB(24, 27) IPUP__NN_LDB(28, 31)
                                     IPUP__NN_MAC0 IPUP__NN_MAC1)
                                 "ldr %[a0], %[c]\n\tldr %[a1], %[lc]\n\t" IPUP__TILE_ST("a0", "a1")
                                     IPUP__NN_OPS
                         : IPUP__CLOB16, "s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23",
                           "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31");
}
/* NN 4 x 2, as ipup__blk_nn44 */
static IPUP__BLK_INLINE void ipup__blk_nn42(int K, const float *a, const ptrdiff_t *la,
                                            const float *b, ptrdiff_t lb,
                                            const float *const *s, const ptrdiff_t *ls,
                                            float *const *c, const ptrdiff_t *lc) {
    const float *a1, *a2, *a3;
    int k = K;
    __asm__ __volatile__("ldr %[a1], %[s]\n\tldr %[a2], %[ls]\n\t" IPUP__TILE2_LD("a1", "a2")
                             IPUP__NN_ROWS IPUP__K_LOOP(
                                 IPUP__NN_LDA1 IPUP__NN_LDB(24, 25) IPUP__NN2_MAC0,
                                 IPUP__NN_LDA2 IPUP__NN_LDB(24, 25) IPUP__NN_LDB(26, 27)
                                     IPUP__NN2_MAC0 IPUP__NN2_MAC1)
                                 "ldr %[a0], %[c]\n\tldr %[a1], %[lc]\n\t"
                                     IPUP__TILE2_ST("a0", "a1") IPUP__NN_OPS
                         : "cc", "memory", "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s16",
                           "s17", "s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26",
                           "s27");
}
/* C (rows 0 .. M-1, M a multiple of 4) in 4 x 4 tiles, then (TN, NN) in 4 x 2 tiles when 2
   or 3 columns are left: TN (+=), NT (=), NN (= or, with load, +=); each returns the number
   of columns done */
static __attribute__((noinline)) int ipup__blk_tn_asm(int M, int N, int K, const float *a,
                                                      ptrdiff_t lda, const float *b,
                                                      ptrdiff_t ldb, float *c, ptrdiff_t ldc) {
    const ptrdiff_t fs = (ptrdiff_t)sizeof(float), la = lda * fs, lb = ldb * fs, lc = ldc * fs;
    const int N4 = N & ~3, N2 = N - N4 >= 2;
    int i, j;
    for (i = 0; i < M; i += 4, a += 4, c += 4 * ldc) {
        for (j = 0; j < N4; j += 4) ipup__blk_tn44(K, a, la, b + j, lb, c + j, lc);
        if (N2) ipup__blk_tn42(K, a, la, b + N4, lb, c + N4, lc);
    }
    return N2 ? N4 + 2 : N4;
}
static __attribute__((noinline)) int ipup__blk_nt_asm(int M, int N, int K, const float *a,
                                                      ptrdiff_t lda, const float *b,
                                                      ptrdiff_t ldb, float *c, ptrdiff_t ldc) {
    const ptrdiff_t fs = (ptrdiff_t)sizeof(float), la = lda * fs, lb = ldb * fs, lc = ldc * fs;
    const int N4 = N & ~3;
    int i, j;
    for (i = 0; i < M; i += 4, a += 4 * lda, c += 4 * ldc)
        for (j = 0; j < N4; j += 4) {
            float *cj = c + j;
            ipup__blk_nt44(K, a, &la, b + j * ldb, &lb, &cj, &lc);
        }
    return N4;
}
static __attribute__((noinline)) int ipup__blk_nn_asm(int M, int N, int K, const float *a,
                                                      ptrdiff_t lda, const float *b,
                                                      ptrdiff_t ldb, float *c, ptrdiff_t ldc,
                                                      int load) {
    const ptrdiff_t fs = (ptrdiff_t)sizeof(float), la = lda * fs, lb = ldb * fs, lc = ldc * fs;
    const ptrdiff_t ls = load ? lc : 0; /* the sums start from C, or from the zeros */
    const int N4 = N & ~3, N2 = N - N4 >= 2;
    int i, j;
    for (i = 0; i < M; i += 4, a += 4 * lda, c += 4 * ldc) {
        for (j = 0; j < N4; j += 4) {
            float *cj = c + j;
            const float *sj = load ? cj : ipup__blk_zero;
            ipup__blk_nn44(K, a, &la, b + j, lb, &sj, &ls, &cj, &lc);
        }
        if (N2) {
            float *cj = c + N4;
            const float *sj = load ? cj : ipup__blk_zero;
            ipup__blk_nn42(K, a, &la, b + N4, lb, &sj, &ls, &cj, &lc);
        }
    }
    return N2 ? N4 + 2 : N4;
}
#endif /* the Arm tiles */
/* one tile of mr (1 or 4) rows and nr (1, 2 or 4) columns; form, mr and nr are constants
   in every instance (ipup__blk_tab), so the branches on them fold away */
static IPUP__BLK_INLINE void ipup__blk_tile(const int form, const int mr, const int nr, int K,
                                            const float *a, ptrdiff_t lda, const float *b,
                                            ptrdiff_t ldb, float *c, ptrdiff_t ldc, int load) {
    float c00 = 0.0f, c01 = 0.0f, c02 = 0.0f, c03 = 0.0f, c10 = 0.0f, c11 = 0.0f, c12 = 0.0f,
          c13 = 0.0f, c20 = 0.0f, c21 = 0.0f, c22 = 0.0f, c23 = 0.0f, c30 = 0.0f, c31 = 0.0f,
          c32 = 0.0f, c33 = 0.0f;
    const float *a0 = a, *a1 = a, *a2 = a, *a3 = a, *b0 = b, *b1 = b, *b2 = b, *b3 = b;
    int k;
    if (form != IPUP__BLK_TN && mr > 1) { a1 = a + lda; a2 = a1 + lda; a3 = a2 + lda; }
    if (form == IPUP__BLK_NT) { b1 = b + ldb; b2 = b1 + ldb; b3 = b2 + ldb; }
    if (load) {
        IPUP__BLK_LD(0, c00, c01, c02, c03);
        if (mr > 1) {
            IPUP__BLK_LD(1, c10, c11, c12, c13);
            IPUP__BLK_LD(2, c20, c21, c22, c23);
            IPUP__BLK_LD(3, c30, c31, c32, c33);
        }
    }
    for (k = 0; k < K; k++) {
        float x0, x1 = 0.0f, x2 = 0.0f, x3 = 0.0f, y0, y1 = 0.0f, y2 = 0.0f, y3 = 0.0f;
        if (form == IPUP__BLK_NT) {
            y0 = *b0++;
            if (nr > 1) y1 = *b1++;
            if (nr > 2) { y2 = *b2++; y3 = *b3++; }
        } else {
            y0 = b0[0];
            if (nr > 1) y1 = b0[1];
            if (nr > 2) { y2 = b0[2]; y3 = b0[3]; }
            b0 += ldb;
        }
        if (form == IPUP__BLK_TN) {
            x0 = a0[0];
            if (mr > 1) { x1 = a0[1]; x2 = a0[2]; x3 = a0[3]; }
            a0 += lda;
        } else {
            x0 = *a0++;
            if (mr > 1) { x1 = *a1++; x2 = *a2++; x3 = *a3++; }
        }
        IPUP__BLK_ROWMAC(x0, c00, c01, c02, c03);
        if (mr > 1) {
            IPUP__BLK_ROWMAC(x1, c10, c11, c12, c13);
            IPUP__BLK_ROWMAC(x2, c20, c21, c22, c23);
            IPUP__BLK_ROWMAC(x3, c30, c31, c32, c33);
        }
    }
    IPUP__BLK_ST(0, c00, c01, c02, c03);
    if (mr > 1) {
        IPUP__BLK_ST(1, c10, c11, c12, c13);
        IPUP__BLK_ST(2, c20, c21, c22, c23);
        IPUP__BLK_ST(3, c30, c31, c32, c33);
    }
}
typedef void (*ipup__blk_fn)(int K, const float *a, ptrdiff_t lda, const float *b, ptrdiff_t ldb,
                             float *c, ptrdiff_t ldc, int load);
#define IPUP__BLK_FN(F, MR, NR)                                                                  \
    static void ipup__blk_##F##_##MR##_##NR(int K, const float *a, ptrdiff_t lda,                \
                                            const float *b, ptrdiff_t ldb, float *c,             \
                                            ptrdiff_t ldc, int load) {                           \
        ipup__blk_tile(IPUP__BLK_##F, MR, NR, K, a, lda, b, ldb, c, ldc, load);                  \
    }
#define IPUP__BLK_FNS(F)                                                                         \
    IPUP__BLK_FN(F, 1, 1) IPUP__BLK_FN(F, 1, 2) IPUP__BLK_FN(F, 1, 4)                            \
    IPUP__BLK_FN(F, 4, 1) IPUP__BLK_FN(F, 4, 2) IPUP__BLK_FN(F, 4, 4)
IPUP__BLK_FNS(NN)
IPUP__BLK_FNS(NT)
IPUP__BLK_FNS(TN)
#define IPUP__BLK_ROW(F)                                                                         \
    {{ipup__blk_##F##_1_1, ipup__blk_##F##_1_2, ipup__blk_##F##_1_4},                            \
     {ipup__blk_##F##_4_1, ipup__blk_##F##_4_2, ipup__blk_##F##_4_4}}
static const ipup__blk_fn ipup__blk_tab[3][2][3] = {IPUP__BLK_ROW(NN), IPUP__BLK_ROW(NT),
                                                    IPUP__BLK_ROW(TN)};

/* rows i0 .. M-1, columns j0 .. N-1 of C (+)= A B, tile by tile */
static void ipup__blk_tiles(int form, int i0, int M, int j0, int N, int K, const float *a,
                            ptrdiff_t lda, const float *b, ptrdiff_t ldb, float *c,
                            ptrdiff_t ldc, int load) {
    int i = i0, j;
    while (i < M) {
        const int m4 = M - i >= 4;
        const float *ai = a + (form == IPUP__BLK_TN ? (ptrdiff_t)i : (ptrdiff_t)i * lda);
        for (j = j0; j < N;) {
            const int w = N - j >= 4 ? 4 : N - j >= 2 ? 2 : 1;
            const float *bj = b + (form == IPUP__BLK_NT ? (ptrdiff_t)j * ldb : (ptrdiff_t)j);
            ipup__blk_tab[form][m4][w >> 1](K, ai, lda, bj, ldb, c + (ptrdiff_t)i * ldc + j, ldc,
                                            load);
            j += w;
        }
        i += m4 ? 4 : 1;
    }
}

/* C (M x N, row stride ldc) (+)= A B in the given form, tile by tile; then, as the portable
   kernels do, C += bias (a second pass) and C = max(C, 0) */
static void ipup__blk_mm(int form, int M, int N, int K, const float *a, ptrdiff_t lda,
                         const float *b, ptrdiff_t ldb, float *c, ptrdiff_t ldc, int flags,
                         const float *bias) {
    const int load = flags & IPUP__BLK_LOAD;
    int i, j;
#ifdef IPUP__BLK_ASM
    if (form == IPUP__BLK_NN || (form == IPUP__BLK_TN ? load : !load)) {
        /* the tiles of 4 full rows in assembly, then the columns they left, the last M % 4
           rows */
        const int M4 = M & ~3;
        const int Nd = form == IPUP__BLK_NN   ? ipup__blk_nn_asm(M4, N, K, a, lda, b, ldb, c, ldc,
                                                                 load)
                       : form == IPUP__BLK_TN ? ipup__blk_tn_asm(M4, N, K, a, lda, b, ldb, c, ldc)
                                              : ipup__blk_nt_asm(M4, N, K, a, lda, b, ldb, c, ldc);
        if (Nd < N) ipup__blk_tiles(form, 0, M, Nd, N, K, a, lda, b, ldb, c, ldc, load);
        if (M4 < M) ipup__blk_tiles(form, M4, M, 0, Nd, K, a, lda, b, ldb, c, ldc, load);
    } else
#endif
        ipup__blk_tiles(form, 0, M, 0, N, K, a, lda, b, ldb, c, ldc, load);
    if (bias || (flags & IPUP__BLK_RELU))
        for (i = 0; i < M; i++) {
            float *ci = c + (ptrdiff_t)i * ldc;
            if (bias)
                for (j = 0; j < N; j++) ci[j] += bias[j];
            if (flags & IPUP__BLK_RELU)
                for (j = 0; j < N; j++) ci[j] = ci[j] > 0.0f ? ci[j] : 0.0f;
        }
}

/* the dense layer's products in the portable kernels' order (see above) */
static void ipup__dense_fwd_blk(int B, int IN, int OUT, const float *x, const float *w,
                                const float *b, float *y, int relu) {
    ipup__blk_mm(IPUP__BLK_NN, B, OUT, IN, x, IN, w, OUT, y, OUT, relu ? IPUP__BLK_RELU : 0, b);
}
static void ipup__dense_bwd_blk(int B, int IN, int OUT, const float *x, const float *w,
                                const float *dy, float *dx, float *dw, float *db) {
    int r, o = 0;
    if (dx) ipup__blk_mm(IPUP__BLK_NT, B, IN, OUT, dy, OUT, w, OUT, dx, IN, 0, NULL);
    if (dw) ipup__blk_mm(IPUP__BLK_TN, IN, OUT, B, x, IN, dy, OUT, dw, OUT, IPUP__BLK_LOAD, NULL);
    /* db[o] += dy[0][o], += dy[1][o], ...: each sum in the portable order, 4 in registers */
    for (; db && o + 4 <= OUT; o += 4) {
        const float *p = dy + o;
        float s0 = db[o], s1 = db[o + 1], s2 = db[o + 2], s3 = db[o + 3];
        for (r = 0; r < B; r++, p += OUT) { s0 += p[0]; s1 += p[1]; s2 += p[2]; s3 += p[3]; }
        db[o] = s0; db[o + 1] = s1; db[o + 2] = s2; db[o + 3] = s3;
    }
    for (; db && o < OUT; o++) {
        const float *p = dy + o;
        float s0 = db[o];
        for (r = 0; r < B; r++, p += OUT) s0 += p[0];
        db[o] = s0;
    }
}
#endif /* IPUP_KERNELS_BLOCKED */

#ifdef IPUP__SIMD
#define IPUP__K_BLOCK 256 /* K block of the backward-data products */
static void ipup__dense_fwd_simd(int B, int IN, int OUT, const float *x /* (B, IN) */,
                                 const float *w /* (IN, OUT) */, const float *b /* (OUT) */,
                                 float *y /* (B, OUT) */, int relu) {
    ipup__gemm_t g;
    g.M = B; g.N = OUT;
    g.a = x; g.group_rows = B; g.row_stride = IN; g.group_stride = 0; g.k_stride = 1;
    g.seg_stride = 0; g.nseg = 1; g.seglen = IN;
    g.b = w; g.ldb = OUT; g.c = y; g.ldc = OUT; g.bias = b; g.accum = relu ? 2 : 0; g.db = NULL;
    ipup__gemm(&g);
}

/* dx (B, IN) = dy (B, OUT) w^T: per panel of NR columns of dx and K-block of 256 outputs,
   the panel's w^T (K-block x NR, on the stack, <= 32 KB) is transposed in registers and dx
   is a product like the forward's (rows of dy broadcast). Each element of dx is the chain
   over its K-block in increasing order from zero; the first block is stored and later
   blocks are added to it, in increasing order (the bits of the transposed formulation). */
#define IPUP__DXT_ROWS 16 /* rows of dx^T per stack tile in ipup__dense_bwd_data_t_simd */
/* its largest OUT (one K-block): dy^T panel 32 KB + tile 2 KB with AVX-512 */
#define IPUP__DXT_MAX_OUT IPUP__K_BLOCK
/* The same dx with one K-block (OUT <= IPUP__DXT_MAX_OUT) as dx^T = w dy^T, for shapes where w is
   larger than dy and dx together: per batch block of NR, dy^T (OUT x NR) is transposed once into
   the stack, each IC-row chunk of dx^T is a product with rows of w broadcast into a stack
   tile, which is then transposed into dx. The same chains, so the same bits. */
static void ipup__dense_bwd_data_t_simd(int B, int IN, int OUT, const float *w /* (IN, OUT) */,
                                        const float *dy /* (B, OUT) */, float *dx /* (B, IN) */) {
    float dy_t[IPUP__DXT_MAX_OUT * IPUP__NR];
    float tile[IPUP__DXT_ROWS * IPUP__NR];
    int b0, i0;
    for (b0 = 0; b0 < B; b0 += IPUP__NR) {
        const int n_batch = B - b0 < IPUP__NR ? B - b0 : IPUP__NR;
        ipup__transpose(dy + (size_t)b0 * (size_t)OUT, OUT, n_batch, OUT, dy_t, IPUP__NR);
        for (i0 = 0; i0 < IN; i0 += IPUP__DXT_ROWS) {
            const int m = IN - i0 < IPUP__DXT_ROWS ? IN - i0 : IPUP__DXT_ROWS;
            ipup__gemm_t g;
            g.M = m; g.N = n_batch;
            g.a = w + (size_t)i0 * (size_t)OUT; g.group_rows = m; g.row_stride = OUT;
            g.group_stride = 0;
            g.k_stride = 1; g.seg_stride = 0; g.nseg = 1; g.seglen = OUT;
            g.b = dy_t; g.ldb = IPUP__NR; g.c = tile; g.ldc = IPUP__NR; g.bias = NULL; g.accum = 0;
            g.db = NULL;
            ipup__gemm(&g);
            ipup__transpose(tile, IPUP__NR, m, n_batch, dx + (size_t)b0 * (size_t)IN + (size_t)i0,
                            IN);
        }
    }
}

static void ipup__dense_bwd_data_simd(int B, int IN, int OUT, const float *w /* (IN, OUT) */,
                                      const float *dy /* (B, OUT) */, float *dx /* (B, IN) */) {
    float w_t[IPUP__K_BLOCK * IPUP__NR];
    int i0, k0;
    for (i0 = 0; i0 < IN; i0 += IPUP__NR) {
        const int n_in = IN - i0 < IPUP__NR ? IN - i0 : IPUP__NR;
        for (k0 = 0; k0 < OUT; k0 += IPUP__K_BLOCK) {
            const int k_len = OUT - k0 < IPUP__K_BLOCK ? OUT - k0 : IPUP__K_BLOCK;
            ipup__gemm_t g;
            ipup__transpose(w + (size_t)i0 * (size_t)OUT + (size_t)k0, OUT, n_in, k_len, w_t,
                            IPUP__NR);
            g.M = B; g.N = n_in;
            g.a = dy + k0; g.group_rows = B; g.row_stride = OUT; g.group_stride = 0; g.k_stride = 1;
            g.seg_stride = 0; g.nseg = 1; g.seglen = k_len;
            g.b = w_t; g.ldb = IPUP__NR; g.c = dx + i0; g.ldc = IN; g.bias = NULL;
            g.accum = k0 ? 1 : 0; g.db = NULL;
            ipup__gemm(&g);
        }
    }
}

/* dw += x^T dy for fewer outputs than a vector has lanes (a classifier's 10): the other
   way round, dw^T = dy^T x, so that the vectors run along IN, full, instead of along a
   mostly empty OUT. Per chunk of IN the chains (from zero over the batch in order) land
   in a stack tile, which is transposed and added to dw: the C + chain of the direct
   product. db: the column sums of dy, as ipup__colsum_add gives them (the same bits). */
#define IPUP__NARROW_COLS 64
static void ipup__dense_bwd_w_narrow(int B, int IN, int OUT, const float *x, const float *dy,
                                     float *dw, float *db) {
    float tile[IPUP__VL * IPUP__NARROW_COLS], tile_t[IPUP__NARROW_COLS * IPUP__VL];
    int i0;
    for (i0 = 0; i0 < IN; i0 += IPUP__NARROW_COLS) {
        const int n_in = IN - i0 < IPUP__NARROW_COLS ? IN - i0 : IPUP__NARROW_COLS;
        ipup__gemm_t g;
        g.M = OUT; g.N = n_in;
        g.a = dy; g.group_rows = OUT; g.row_stride = 1; g.group_stride = 0; g.k_stride = OUT;
        g.seg_stride = 0; g.nseg = 1; g.seglen = B;
        g.b = x + i0; g.ldb = IN; g.c = tile; g.ldc = IPUP__NARROW_COLS; g.bias = NULL; g.accum = 0;
        g.db = NULL;
        ipup__gemm(&g);
        ipup__transpose(tile, IPUP__NARROW_COLS, OUT, n_in, tile_t, OUT);
        ipup_add_f32(n_in * OUT, dw + (size_t)i0 * (size_t)OUT, tile_t);
    }
    if (db) ipup__colsum_add(1, B, OUT, dy, OUT, db);
}

/* dw (IN, OUT) += x^T dy: A = x^T (row i = column i of x, k stride IN), B = dy. */
static void ipup__dense_bwd_w_simd(int B, int IN, int OUT, const float *x /* (B, IN) */,
                                   const float *dy /* (B, OUT) */, float *dw /* (IN, OUT) */,
                                   float *db /* (OUT) or NULL */) {
    ipup__gemm_t g;
    if (OUT < IPUP__VL && IN >= 2 * IPUP__VL) {
        ipup__dense_bwd_w_narrow(B, IN, OUT, x, dy, dw, db);
        return;
    }
    g.M = IN; g.N = OUT;
    g.a = x; g.group_rows = IN; g.row_stride = 1; g.group_stride = 0; g.k_stride = IN;
    g.seg_stride = 0; g.nseg = 1; g.seglen = B;
    g.b = dy; g.ldb = OUT; g.c = dw; g.ldc = OUT; g.bias = NULL; g.accum = 1; g.db = db;
    ipup__gemm_wide(&g);
}
#endif /* IPUP__SIMD */

IPUPIPE_DEF void ipup_dense_fwd_f32(int B, int IN, int OUT, const float *x /* (B, IN) */,
                                    const float *w /* (IN, OUT) */, const float *b /* (OUT) */,
                                    float *y /* (B, OUT) */) {
#ifdef IPUP__SIMD
    IPUPIPE_ASSERT(B >= 0 && IN >= 0 && OUT >= 0);
    if (B <= 0 || IN < 0 || OUT <= 0) return; /* nothing to do, or bad sizes with asserts off */
    if (B > 0 && OUT > 0 && IN > 0) {
        ipup__dense_fwd_simd(B, IN, OUT, x, w, b, y, 0);
        return;
    }
#elif defined(IPUP_KERNELS_BLOCKED)
    IPUPIPE_ASSERT(B >= 0 && IN >= 0 && OUT >= 0);
    if (B <= 0 || IN < 0 || OUT <= 0) return;
    ipup__dense_fwd_blk(B, IN, OUT, x, w, b, y, 0);
    return;
#endif
    ipup_dense_fwd_f32_portable(B, IN, OUT, x, w, b, y);
}

IPUPIPE_DEF void ipup_dense_relu_fwd_f32(int B, int IN, int OUT, const float *x /* (B, IN) */,
                                         const float *w /* (IN, OUT) */, const float *b /* (OUT) */,
                                         float *y /* (B, OUT) */) {
#ifdef IPUP__SIMD
    IPUPIPE_ASSERT(B >= 0 && IN >= 0 && OUT >= 0);
    if (B <= 0 || IN < 0 || OUT <= 0) return;
    if (IN > 0) {
        ipup__dense_fwd_simd(B, IN, OUT, x, w, b, y, 1);
        return;
    }
#elif defined(IPUP_KERNELS_BLOCKED)
    IPUPIPE_ASSERT(B >= 0 && IN >= 0 && OUT >= 0);
    if (B <= 0 || IN < 0 || OUT <= 0) return;
    ipup__dense_fwd_blk(B, IN, OUT, x, w, b, y, 1);
    return;
#endif
    ipup_dense_fwd_f32(B, IN, OUT, x, w, b, y);
    if (B > 0 && OUT > 0) ipup_relu_fwd_f32(B * OUT, y, y);
}

IPUPIPE_DEF void ipup_dense_bwd_f32(int B, int IN, int OUT, const float *x /* (B, IN) */,
                                    const float *w /* (IN, OUT) */, const float *dy /* (B, OUT) */,
                                    float *dx /* (B, IN) */, float *dw /* (IN, OUT) */,
                                    float *db /* (OUT) */) {
#ifdef IPUP__SIMD
    IPUPIPE_ASSERT(B >= 0 && IN >= 0 && OUT >= 0);
    if (B > 0 && OUT > 0 && IN > 0) {
        if (dx && OUT <= IPUP__DXT_MAX_OUT &&
            (double)IN * (double)OUT > (double)B * (double)(IN + OUT))
            /* transposing dy and dx moves less */
            ipup__dense_bwd_data_t_simd(B, IN, OUT, w, dy, dx);
        else if (dx) ipup__dense_bwd_data_simd(B, IN, OUT, w, dy, dx);
        if (dw) ipup__dense_bwd_w_simd(B, IN, OUT, x, dy, dw, db); /* db fused */
        else if (db) ipup__colsum_add(1, B, OUT, dy, OUT, db);
        return;
    }
#elif defined(IPUP_KERNELS_BLOCKED)
    IPUPIPE_ASSERT(B >= 0 && IN >= 0 && OUT >= 0);
    if (B <= 0 || IN < 0 || OUT < 0) return;
    ipup__dense_bwd_blk(B, IN, OUT, x, w, dy, dx, dw, db);
    return;
#endif
    ipup_dense_bwd_f32_portable(B, IN, OUT, x, w, dy, dx, dw, db);
}

/* >>loss: softmax cross-entropy and mean squared error */
IPUPIPE_DEF float ipup_softmax_xent_f32(int B, int C, const float *logits /* (B, C) */,
                                        const int32_t *labels /* (B) */,
                                        float *dlogits /* (B, C) or NULL */,
                                        int *correct /* scalar or NULL */) {
    int r, c, ok = 0;
    float total = 0.0f; /* rows summed in order, in float (no double on small FPUs) */
    IPUPIPE_ASSERT(B > 0 && C > 0);
    if (B <= 0 || C <= 0) {
        if (correct) *correct = 0;
        return 0.0f;
    }
    for (r = 0; r < B; r++) {
        const float *l = logits + (size_t)r * (size_t)C;
        const int32_t lab = labels[r];
        const int valid = lab >= 0 && lab < C;
        float mx = l[0], sum, lse;
        int am = 0;
        IPUPIPE_ASSERT(valid);
        for (c = 1; c < C; c++)
            if (l[c] > mx) { mx = l[c]; am = c; }
        sum = IPUPIPE_EXPF(l[0] - mx); /* C >= 1; the max's own term makes sum >= 1 */
        for (c = 1; c < C; c++) sum += IPUPIPE_EXPF(l[c] - mx);
        lse = IPUPIPE_LOGF(sum); /* log sum exp(l - mx) >= 0 */
        total += lse - (valid ? l[lab] - mx : 0.0f);
        if (valid && am == lab) ok++;
        if (dlogits) {
            float *d = dlogits + (size_t)r * (size_t)C;
            const float inv = 1.0f / sum, invb = 1.0f / (float)B;
            for (c = 0; c < C; c++) {
                float p = IPUPIPE_EXPF(l[c] - mx) * inv;
                d[c] = (p - (c == lab ? 1.0f : 0.0f)) * invb;
            }
        }
    }
    if (correct) *correct = ok;
    return total / (float)B;
}

IPUPIPE_DEF float ipup_mse_f32(int B, int N, const float *pred /* (B, N) */,
                               const float *target /* (B, N) */,
                               float *dpred /* (B, N) or NULL */) {
    int r, c;
    float total = 0.0f, count, twice;
    IPUPIPE_ASSERT(B > 0 && N > 0);
    if (B <= 0 || N <= 0) return 0.0f;
    count = (float)((int64_t)B * (int64_t)N);
    twice = 2.0f / count;
    for (r = 0; r < B; r++) {
        const float *p = pred + (size_t)r * (size_t)N, *t = target + (size_t)r * (size_t)N;
        float row = 0.0f;
        for (c = 0; c < N; c++) {
            const float d = p[c] - t[c];
            row += d * d;
            if (dpred) dpred[(size_t)r * (size_t)N + (size_t)c] = d * twice;
        }
        total += row;
    }
    return total / count;
}

/* >>conv: the 3x3 convolution: the portable kernels, the SIMD products, the dispatchers */
IPUPIPE_DEF void ipup_conv3x3_fwd_f32_portable(int B, int H, int W, int CI, int CO,
                                               const float *x /* (B, H, W, CI) */,
                                               const float *w /* (3, 3, CI, CO) */,
                                               const float *b /* (CO) or NULL */,
                                               float *y /* (B, H-2, W-2, CO) */) {
    const int OH = H - 2, OW = W - 2;
    int n, oh, ow, kh, kw, ci, co;
    IPUPIPE_ASSERT(B >= 0 && H >= 3 && W >= 3 && CI > 0 && CO > 0);
    if (B <= 0 || H < 3 || W < 3 || CI <= 0 || CO <= 0) return;
    for (n = 0; n < B; n++)
        for (oh = 0; oh < OH; oh++)
            for (ow = 0; ow < OW; ow++) {
                float *yp = y + (((size_t)n * (size_t)OH + (size_t)oh) * (size_t)OW +
                                 (size_t)ow) * (size_t)CO;
                for (co = 0; co < CO; co++) yp[co] = 0.0f;
                for (kh = 0; kh < 3; kh++)
                    for (kw = 0; kw < 3; kw++) {
                        const float *xp =
                            x + (((size_t)n * (size_t)H + (size_t)(oh + kh)) * (size_t)W +
                                 (size_t)(ow + kw)) * (size_t)CI;
                        const float *wp = w + (size_t)(kh * 3 + kw) * (size_t)CI * (size_t)CO;
                        for (ci = 0; ci < CI; ci++) {
                            const float xv = xp[ci];
                            const float *wr = wp + (size_t)ci * (size_t)CO;
                            for (co = 0; co < CO; co++) yp[co] += xv * wr[co];
                        }
                    }
                if (b)
                    for (co = 0; co < CO; co++) yp[co] += b[co];
            }
}

IPUPIPE_DEF void ipup_conv3x3_bwd_f32_portable(int B, int H, int W, int CI, int CO,
                                               const float *x /* (B, H, W, CI) */,
                                               const float *w /* (3, 3, CI, CO) */,
                                               const float *dy /* (B, H-2, W-2, CO) */,
                                               float *dx /* (B, H, W, CI) or NULL */,
                                               float *dw /* (3, 3, CI, CO) or NULL */,
                                               float *db /* (CO) or NULL */) {
    const int OH = H - 2, OW = W - 2;
    int n, oh, ow, kh, kw, ci, co;
    IPUPIPE_ASSERT(B >= 0 && H >= 3 && W >= 3 && CI > 0 && CO > 0);
    if (B <= 0 || H < 3 || W < 3 || CI <= 0 || CO <= 0) return;
    if (dx) IPUPIPE_MEMSET(dx, 0, (size_t)B * (size_t)H * (size_t)W * (size_t)CI * sizeof(float));
    for (n = 0; n < B; n++)
        for (oh = 0; oh < OH; oh++)
            for (ow = 0; ow < OW; ow++) {
                const float *dyp = dy + (((size_t)n * (size_t)OH + (size_t)oh) * (size_t)OW +
                                         (size_t)ow) * (size_t)CO;
                if (db)
                    for (co = 0; co < CO; co++) db[co] += dyp[co];
                for (kh = 0; kh < 3; kh++)
                    for (kw = 0; kw < 3; kw++) {
                        size_t xo = (((size_t)n * (size_t)H + (size_t)(oh + kh)) * (size_t)W +
                                     (size_t)(ow + kw)) * (size_t)CI;
                        size_t wo = (size_t)(kh * 3 + kw) * (size_t)CI * (size_t)CO;
                        for (ci = 0; ci < CI; ci++) {
                            const float *wr = w + wo + (size_t)ci * (size_t)CO;
                            if (dw) {
                                float *dwr = dw + wo + (size_t)ci * (size_t)CO;
                                const float xv = x[xo + (size_t)ci];
                                for (co = 0; co < CO; co++) dwr[co] += xv * dyp[co];
                            }
                            if (dx) {
                                float s = 0.0f;
                                for (co = 0; co < CO; co++) s += dyp[co] * wr[co];
                                dx[xo + (size_t)ci] += s;
                            }
                        }
                    }
            }
}

#ifdef IPUP_KERNELS_BLOCKED
/* conv forward, blocked: per image and output row, rows = the OW positions (stride CI in x),
   K = the three kernel rows kh of 3*CI contiguous inputs each, one chain carried through y
   from segment to segment (a float stored and loaded is the same float) */
static void ipup__conv_fwd_blk(int B, int H, int W, int CI, int CO, const float *x,
                               const float *w, const float *b, float *y, int relu) {
    const int OH = H - 2, OW = W - 2, K = 3 * CI;
    int n, oh, kh;
    for (n = 0; n < B; n++)
        for (oh = 0; oh < OH; oh++) {
            float *yr = y + ((size_t)n * (size_t)OH + (size_t)oh) * (size_t)OW * (size_t)CO;
            for (kh = 0; kh < 3; kh++) {
                const float *xr = x + ((size_t)n * (size_t)H + (size_t)(oh + kh)) * (size_t)W *
                                          (size_t)CI;
                const int last = kh == 2;
                ipup__blk_mm(IPUP__BLK_NN, OW, CO, K, xr, CI,
                             w + (size_t)kh * (size_t)K * (size_t)CO, CO, yr, CO,
                             (kh ? IPUP__BLK_LOAD : 0) | (last && relu ? IPUP__BLK_RELU : 0),
                             last ? b : NULL);
            }
        }
}

/* conv backward, blocked. dw: per tap (kh, kw), dw_tap (CI x CO) += x_tap^T dy, K = the
   OW positions of one output row, row after row: each dw element sums its (n, oh, ow) terms
   in the portable order. dx: the portable kernel adds s = sum_co dy w (one chain over co,
   from 0) into dx in (n, oh, ow, kh, kw) order; here s is computed for 4 positions x 4
   input channels x 9 taps at a time into st, then added in that same order. */
static void ipup__conv_bwd_blk(int B, int H, int W, int CI, int CO, const float *x,
                               const float *w, const float *dy, float *dx, float *dw,
                               float *db) {
    const int OH = H - 2, OW = W - 2;
    int n, oh, ow, t, ci, r, j, p;
    if (dx) IPUPIPE_MEMSET(dx, 0, (size_t)B * (size_t)H * (size_t)W * (size_t)CI * sizeof(float));
    for (n = 0; n < B; n++)
        for (oh = 0; oh < OH; oh++) {
            const float *dyr = dy + ((size_t)n * (size_t)OH + (size_t)oh) * (size_t)OW * (size_t)CO;
            if (db)
                for (p = 0; p < OW * CO; p += CO)
                    for (j = 0; j < CO; j++) db[j] += dyr[p + j];
            for (ow = 0; dx && ow < OW; ow += 4)
                for (ci = 0; ci < CI; ci += 4) {
                    float st[9][4][4];
                    const int mr = OW - ow < 4 ? OW - ow : 4, nc = CI - ci < 4 ? CI - ci : 4;
                    for (t = 0; t < 9; t++)
                        ipup__blk_mm(IPUP__BLK_NT, mr, nc, CO, dyr + (size_t)ow * (size_t)CO, CO,
                                     w + ((size_t)t * (size_t)CI + (size_t)ci) * (size_t)CO, CO,
                                     &st[t][0][0], 4, 0, NULL);
                    for (r = 0; r < mr; r++)
                        for (t = 0; t < 9; t++) {
                            float *d = dx + (((size_t)n * (size_t)H + (size_t)(oh + t / 3)) *
                                                 (size_t)W + (size_t)(ow + r + t % 3)) *
                                                (size_t)CI + (size_t)ci;
                            for (j = 0; j < nc; j++) d[j] += st[t][r][j];
                        }
                }
        }
    if (dw)
        for (t = 0; t < 9; t++)
            for (n = 0; n < B; n++)
                for (oh = 0; oh < OH; oh++) {
                    const size_t xo = (((size_t)n * (size_t)H + (size_t)(oh + t / 3)) *
                                           (size_t)W + (size_t)(t % 3)) * (size_t)CI;
                    const size_t yo = ((size_t)n * (size_t)OH + (size_t)oh) * (size_t)OW *
                                      (size_t)CO;
                    ipup__blk_mm(IPUP__BLK_TN, CI, CO, OW, x + xo, CI, dy + yo, CO,
                                 dw + (size_t)t * (size_t)CI * (size_t)CO, CO, IPUP__BLK_LOAD,
                                 NULL);
                }
}
#endif /* IPUP_KERNELS_BLOCKED */

#ifdef IPUP__SIMD
/* conv forward: per image, rows = output positions (oh, ow), K = three segments (kernel
   rows kh) of 3*CI contiguous inputs x[oh+kh][ow .. ow+2][0 .. CI-1]; B = w as (9 CI, CO). */
static void ipup__conv_fwd_simd(int B, int H, int W, int CI, int CO, const float *x,
                                const float *w, const float *b, float *y, int relu) {
    const int OH = H - 2, OW = W - 2;
    int n;
    for (n = 0; n < B; n++) {
        ipup__gemm_t g;
        g.M = OH * OW; g.N = CO;
        g.a = x + (size_t)n * (size_t)H * (size_t)W * (size_t)CI;
        g.group_rows = OW; g.row_stride = CI; g.group_stride = (ptrdiff_t)W * CI;
        g.k_stride = 1; g.seg_stride = (ptrdiff_t)W * CI; g.nseg = 3; g.seglen = 3 * CI;
        g.b = w; g.ldb = CO;
        g.c = y + (size_t)n * (size_t)OH * (size_t)OW * (size_t)CO; g.ldc = CO;
        g.bias = b; g.accum = relu ? 2 : 0; g.db = NULL;
        ipup__gemm(&g);
    }
}

/* conv dw (9 CI, CO) += im2col(x)^T dy, per image: row k = (kh, kw, ci) of A starts at
   x[kh][kw][ci]; K = positions (oh, ow): segments oh of length OW, k stride CI. */
#if defined(IPUP_KERNELS_AVX512)
/* all 9 rows of a one-channel image's dw in one tile of 2 vectors (18 accumulators, + 2
   for db): dy is streamed once per image instead of once per tile of rows */
static void ipup__ukr9_2(ipup__lanes lm, const float *const *ap, ptrdiff_t ka, int nseg, int seglen,
                         ptrdiff_t sa, const float *b, ptrdiff_t ldb, float *c, ptrdiff_t ldc,
                         const float *bias, int accum, float *dbp) {
    IPUP__UKR_BODY(9, 2, 1, 0, 0);
}
static void ipup__ukr9d_2(ipup__lanes lm, const float *const *ap, ptrdiff_t ka, int nseg,
                          int seglen, ptrdiff_t sa, const float *b, ptrdiff_t ldb, float *c,
                          ptrdiff_t ldc, const float *bias, int accum, float *dbp) {
    IPUP__UKR_BODY(9, 2, 1, 1, 0);
}
#endif

static void ipup__conv_bwd_w_simd(int B, int H, int W, int CI, int CO, const float *x,
                                  const float *dy, float *dw, float *db) {
    const int OH = H - 2, OW = W - 2;
    int n;
#if defined(IPUP_KERNELS_AVX512)
    if (CI == 1 && CO % IPUP__NR == 0) { /* the same chains as ipup__gemm's tiles: the same bits */
        for (n = 0; n < B; n++) {
            const float *xn = x + (size_t)n * (size_t)H * (size_t)W, *ap[9];
            const float *dyn = dy + (size_t)n * (size_t)OH * (size_t)OW * (size_t)CO;
            int r, n0;
            for (r = 0; r < 9; r++) ap[r] = xn + (r / 3) * W + r % 3;
            for (n0 = 0; n0 < CO; n0 += IPUP__NR)
                (db ? ipup__ukr9d_2 : ipup__ukr9_2)(ipup__mask(IPUP__VL), ap, 1, OH, OW, W,
                                                    dyn + n0, CO, dw + n0, CO, NULL, 1,
                                                    db ? db + n0 : NULL);
        }
        return;
    }
#endif
    for (n = 0; n < B; n++) {
        ipup__gemm_t g;
        g.M = 9 * CI; g.N = CO;
        g.a = x + (size_t)n * (size_t)H * (size_t)W * (size_t)CI;
        g.group_rows = 3 * CI; g.row_stride = 1; g.group_stride = (ptrdiff_t)W * CI;
        g.k_stride = CI; g.seg_stride = (ptrdiff_t)W * CI; g.nseg = OH; g.seglen = OW;
        g.b = dy + (size_t)n * (size_t)OH * (size_t)OW * (size_t)CO; g.ldb = CO;
        g.c = dw; g.ldc = CO; g.bias = NULL; g.accum = 1; g.db = db;
        ipup__gemm(&g);
    }
}

/* conv dx, per image: G (OH*OW, 9 CI) = dy wt with wt (CO, 9 CI) the transposed kernel,
   then col2im: dx[oh+kh][ow+kw][ci] += G[oh, ow][kh, kw, ci] in a fixed order.
   scratch: 9 CI CO (wt) + OH OW 9 CI (G) floats. */
static void ipup__conv_bwd_data_simd(int B, int H, int W, int CI, int CO, const float *w,
                                     const float *dy, float *dx, float *scratch) {
    const int OH = H - 2, OW = W - 2, K9 = 9 * CI;
    float *wt = scratch, *G = scratch + (size_t)K9 * (size_t)CO;
    int n, k, co, oh, ow, t;
    for (k = 0; k < K9; k++)
        for (co = 0; co < CO; co++)
            wt[(size_t)co * (size_t)K9 + (size_t)k] = w[(size_t)k * (size_t)CO + (size_t)co];
    for (n = 0; n < B; n++) {
        float *dxn = dx + (size_t)n * (size_t)H * (size_t)W * (size_t)CI;
        ipup__gemm_t g;
        g.M = OH * OW; g.N = K9;
        g.a = dy + (size_t)n * (size_t)OH * (size_t)OW * (size_t)CO;
        g.group_rows = OH * OW; g.row_stride = CO; g.group_stride = 0; g.k_stride = 1;
        g.seg_stride = 0; g.nseg = 1; g.seglen = CO;
        g.b = wt; g.ldb = K9; g.c = G; g.ldc = K9; g.bias = NULL; g.accum = 0; g.db = NULL;
        ipup__gemm(&g);
        IPUPIPE_MEMSET(dxn, 0, (size_t)H * (size_t)W * (size_t)CI * sizeof(float));
        /* one float per tap: the same adds in the same order, without a call per tap */
        if (CI == 1) {
            for (oh = 0; oh < OH; oh++)
                for (ow = 0; ow < OW; ow++) {
                    const float *gp = G + ((size_t)oh * (size_t)OW + (size_t)ow) * 9u;
                    float *d0 = dxn + (size_t)oh * (size_t)W + (size_t)ow;
                    d0[0] += gp[0]; d0[1] += gp[1]; d0[2] += gp[2];
                    d0[W] += gp[3]; d0[W + 1] += gp[4]; d0[W + 2] += gp[5];
                    d0[2 * W] += gp[6]; d0[2 * W + 1] += gp[7]; d0[2 * W + 2] += gp[8];
                }
            continue;
        }
        for (oh = 0; oh < OH; oh++)
            for (ow = 0; ow < OW; ow++) {
                const float *gp = G + ((size_t)oh * (size_t)OW + (size_t)ow) * (size_t)K9;
                for (t = 0; t < 9; t++) {
                    float *d = dxn + ((size_t)(oh + t / 3) * (size_t)W +
                                      (size_t)(ow + t % 3)) * (size_t)CI;
                    /* vectorised, one add per element */
                    ipup_add_f32(CI, d, gp + (size_t)t * (size_t)CI);
                }
            }
    }
}
#endif /* IPUP__SIMD */

IPUPIPE_DEF void ipup_conv3x3_fwd_f32(int B, int H, int W, int CI, int CO,
                                      const float *x /* (B, H, W, CI) */,
                                      const float *w /* (3, 3, CI, CO) */,
                                      const float *b /* (CO) or NULL */,
                                      float *y /* (B, H-2, W-2, CO) */, float *scratch) {
    (void)scratch;
#ifdef IPUP__SIMD
    IPUPIPE_ASSERT(B >= 0 && H >= 3 && W >= 3 && CI > 0 && CO > 0);
    if (B <= 0 || H < 3 || W < 3 || CI <= 0 || CO <= 0) return;
    ipup__conv_fwd_simd(B, H, W, CI, CO, x, w, b, y, 0);
#elif defined(IPUP_KERNELS_BLOCKED)
    IPUPIPE_ASSERT(B >= 0 && H >= 3 && W >= 3 && CI > 0 && CO > 0);
    if (B <= 0 || H < 3 || W < 3 || CI <= 0 || CO <= 0) return;
    ipup__conv_fwd_blk(B, H, W, CI, CO, x, w, b, y, 0);
#else
    ipup_conv3x3_fwd_f32_portable(B, H, W, CI, CO, x, w, b, y);
#endif
}

IPUPIPE_DEF void ipup_conv3x3_relu_fwd_f32(int B, int H, int W, int CI, int CO,
                                           const float *x /* (B, H, W, CI) */,
                                           const float *w /* (3, 3, CI, CO) */,
                                           const float *b /* (CO) or NULL */,
                                           float *y /* (B, H-2, W-2, CO) */, float *scratch) {
#ifdef IPUP__SIMD
    (void)scratch;
    IPUPIPE_ASSERT(B >= 0 && H >= 3 && W >= 3 && CI > 0 && CO > 0);
    if (B <= 0 || H < 3 || W < 3 || CI <= 0 || CO <= 0) return;
    ipup__conv_fwd_simd(B, H, W, CI, CO, x, w, b, y, 1);
#elif defined(IPUP_KERNELS_BLOCKED)
    (void)scratch;
    IPUPIPE_ASSERT(B >= 0 && H >= 3 && W >= 3 && CI > 0 && CO > 0);
    if (B <= 0 || H < 3 || W < 3 || CI <= 0 || CO <= 0) return;
    ipup__conv_fwd_blk(B, H, W, CI, CO, x, w, b, y, 1);
#else
    ipup_conv3x3_fwd_f32(B, H, W, CI, CO, x, w, b, y, scratch);
    if (B > 0 && H >= 3 && W >= 3 && CO > 0) ipup_relu_fwd_f32(B * (H - 2) * (W - 2) * CO, y, y);
#endif
}

IPUPIPE_DEF void ipup_conv3x3_bwd_f32(int B, int H, int W, int CI, int CO,
                                      const float *x /* (B, H, W, CI) */,
                                      const float *w /* (3, 3, CI, CO) */,
                                      const float *dy /* (B, H-2, W-2, CO) */,
                                      float *dx /* (B, H, W, CI) or NULL */,
                                      float *dw /* (3, 3, CI, CO) or NULL */,
                                      float *db /* (CO) or NULL */, float *scratch) {
#ifdef IPUP__SIMD
    IPUPIPE_ASSERT(B >= 0 && H >= 3 && W >= 3 && CI > 0 && CO > 0);
    if (B <= 0 || H < 3 || W < 3 || CI <= 0 || CO <= 0) return;
    if (dx && scratch) ipup__conv_bwd_data_simd(B, H, W, CI, CO, w, dy, dx, scratch);
    else if (dx) ipup_conv3x3_bwd_f32_portable(B, H, W, CI, CO, x, w, dy, dx, NULL, NULL);
    if (dw) ipup__conv_bwd_w_simd(B, H, W, CI, CO, x, dy, dw, db); /* db fused */
    else if (db) ipup__colsum_add(B, (H - 2) * (W - 2), CO, dy, CO, db);
#elif defined(IPUP_KERNELS_BLOCKED)
    (void)scratch;
    IPUPIPE_ASSERT(B >= 0 && H >= 3 && W >= 3 && CI > 0 && CO > 0);
    if (B <= 0 || H < 3 || W < 3 || CI <= 0 || CO <= 0) return;
    ipup__conv_bwd_blk(B, H, W, CI, CO, x, w, dy, dx, dw, db);
#else
    (void)scratch;
    ipup_conv3x3_bwd_f32_portable(B, H, W, CI, CO, x, w, dy, dx, dw, db);
#endif
}

/* >>maxpool: 2x2 max-pool, forward and backward, with or without the arg-max bytes */
/* max-pool backward: zero the rows and columns of dx (B, H, W, C) outside every 2x2 window
   (the last row of an odd H, the last column of an odd W); the windows write the rest */
static void ipup__pool_zero_rest(int B, int H, int W, int C, float *dx) {
    const size_t rs = (size_t)W * (size_t)C;
    int n, h;
    for (n = 0; n < B && ((H | W) & 1); n++) {
        if (W & 1)
            for (h = 0; h < H / 2 * 2; h++)
                IPUPIPE_MEMSET(dx + ((size_t)n * (size_t)H + (size_t)h) * rs +
                                   (size_t)(W - 1) * (size_t)C,
                               0, (size_t)C * sizeof(float));
        if (H & 1)
            IPUPIPE_MEMSET(dx + ((size_t)n * (size_t)H + (size_t)(H - 1)) * rs, 0,
                           rs * sizeof(float));
    }
}

#ifdef IPUP__SIMD
/* The SIMD element-wise kernels (max-pool here, dropout, SGD and momentum below): each lane
   computes exactly what the scalar loop computes for that element (compares, selects, one
   multiply or add at a time, never a fused multiply-add), so every build gives the scalar
   code's bits. */
#if defined(IPUP_KERNELS_AVX512)
typedef __mmask16 ipup__vmask;
#define ipup__vgt(a, b) _mm512_cmp_ps_mask((a), (b), _CMP_GT_OQ)
#define ipup__mask_or(a, b) ((ipup__vmask)((a) | (b)))
#define ipup__mask_and(a, b) ((ipup__vmask)((a) & (b)))
#define ipup__mask_andnot(a, b) ((ipup__vmask)(~(a) & (b)))    /* !a && b */
#define ipup__vsel(k, a) _mm512_maskz_mov_ps((k), (a)) /* k ? a : +0 */
#define ipup__mask_all() ((ipup__vmask)0xFFFF)
#else
typedef __m256 ipup__vmask;
#define ipup__vgt(a, b) _mm256_cmp_ps((a), (b), _CMP_GT_OQ)
#define ipup__mask_or(a, b) _mm256_or_ps((a), (b))
#define ipup__mask_and(a, b) _mm256_and_ps((a), (b))
#define ipup__mask_andnot(a, b) _mm256_andnot_ps((a), (b))
#define ipup__vsel(k, a) _mm256_and_ps((k), (a))
#define ipup__mask_all() _mm256_castsi256_ps(_mm256_set1_epi32(-1))
#endif

/* Bytes of a max-pool's arg-max (ipup_maxpool2_fwd_idx_f32): k1, k2, k3 are the strict >
   of x1, x2, x3 over the running maximum (as ipup__maxpool_bwd_simd finds them), so the
   last one set names the position; with relu, 4 where the maximum m is not > 0. */
#if defined(IPUP_KERNELS_AVX512)
static void ipup__pool_idx_store(uint8_t *p, ipup__vmask k1, ipup__vmask k2, ipup__vmask k3,
                                 ipup__v m, int relu) {
    __m512i v = _mm512_maskz_mov_epi32(k1, _mm512_set1_epi32(1));
    v = _mm512_mask_mov_epi32(v, k2, _mm512_set1_epi32(2));
    v = _mm512_mask_mov_epi32(v, k3, _mm512_set1_epi32(3));
    if (relu)
        v = _mm512_mask_mov_epi32(v, (ipup__vmask)~ipup__vgt(m, ipup__vzero()),
                                  _mm512_set1_epi32(4));
    _mm_storeu_si128((__m128i *)(void *)p, _mm512_cvtepi32_epi8(v));
}
/* lanes whose byte at p is j */
#define IPUP__IDX_VEC __m512i
#define ipup__idx_ld(p) _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define ipup__idx_eq(v, j) _mm512_cmpeq_epi32_mask((v), _mm512_set1_epi32(j))
#else
static void ipup__pool_idx_store(uint8_t *p, ipup__vmask k1, ipup__vmask k2, ipup__vmask k3,
                                 ipup__v m, int relu) {
    __m256i v = _mm256_and_si256(_mm256_castps_si256(k1), _mm256_set1_epi32(1));
    __m128i w;
    v = _mm256_blendv_epi8(v, _mm256_set1_epi32(2), _mm256_castps_si256(k2));
    v = _mm256_blendv_epi8(v, _mm256_set1_epi32(3), _mm256_castps_si256(k3));
    if (relu)
        v = _mm256_blendv_epi8(_mm256_set1_epi32(4), v,
                               _mm256_castps_si256(ipup__vgt(m, ipup__vzero())));
    w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64((__m128i *)(void *)p, _mm_packus_epi16(w, w));
}
#define IPUP__IDX_VEC __m256i
#define ipup__idx_ld(p) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p)))
#define ipup__idx_eq(v, j) _mm256_castsi256_ps(_mm256_cmpeq_epi32((v), _mm256_set1_epi32(j)))
#endif

/* max-pool forward of C % IPUP__VL == 0 channels: m = p00, then `if (p > m) m = p` is
   max(p, m) (the second operand unless p > m); with idx, also the arg-max bytes, from the
   comparisons ipup__maxpool_bwd_simd makes */
static void ipup__maxpool_fwd_simd(int B, int H, int W, int C, const float *x, float *y,
                                   uint8_t *idx, int relu) {
    const int OH = H / 2, OW = W / 2;
    const size_t rs = (size_t)W * (size_t)C;
    int n, oh, ow, c;
    for (n = 0; n < B; n++)
        for (oh = 0; oh < OH; oh++) {
            const float *r0 = x + ((size_t)n * (size_t)H + (size_t)(2 * oh)) * rs;
            const size_t o = ((size_t)n * (size_t)OH + (size_t)oh) * (size_t)OW * (size_t)C;
            for (ow = 0; ow < OW; ow++, r0 += 2 * C)
                for (c = 0; c < C; c += IPUP__VL) {
                    const ipup__v x1 = ipup__vld(r0 + C + c), x2 = ipup__vld(r0 + rs + c),
                                  x3 = ipup__vld(r0 + rs + C + c);
                    const size_t q = o + (size_t)ow * (size_t)C + (size_t)c;
                    ipup__v m = ipup__vld(r0 + c);
                    ipup__vmask k1, k2, k3;
                    k1 = ipup__vgt(x1, m);
                    m = ipup__vmax(x1, m);
                    k2 = ipup__vgt(x2, m);
                    m = ipup__vmax(x2, m);
                    k3 = ipup__vgt(x3, m);
                    m = ipup__vmax(x3, m);
                    ipup__vst(y + q, m);
                    if (idx) ipup__pool_idx_store(idx + q, k1, k2, k3, m, relu);
                }
        }
}

/* The four positions of a window (lanes c.. of the window at x + a) that get dy, as masks:
   from the arg-max bytes at ip, or from x: the window's first maximum (the scalar scan's
   strict >), with relu only where it is > 0 (ReLU's backward fused: x = relu(z) > 0
   exactly when z > 0). */
static void ipup__pool_window(const float *x, size_t a, size_t C, size_t rs, const uint8_t *ip,
                              int relu, ipup__vmask w[4]) {
    ipup__v x0, x1, x2, x3, m;
    ipup__vmask k1, k2, k3;
    if (ip) {
        const IPUP__IDX_VEC v = ipup__idx_ld(ip);
        w[0] = ipup__idx_eq(v, 0); w[1] = ipup__idx_eq(v, 1); w[2] = ipup__idx_eq(v, 2);
        w[3] = ipup__idx_eq(v, 3);
        return;
    }
    x0 = ipup__vld(x + a); x1 = ipup__vld(x + a + C); x2 = ipup__vld(x + a + rs);
    x3 = ipup__vld(x + a + rs + C);
    m = x0;
    k1 = ipup__vgt(x1, m);
    m = ipup__vmax(x1, m);
    k2 = ipup__vgt(x2, m);
    m = ipup__vmax(x2, m);
    k3 = ipup__vgt(x3, m);
    w[3] = k3;
    w[2] = ipup__mask_andnot(k3, k2);
    w[1] = ipup__mask_andnot(ipup__mask_or(k2, k3), k1);
    /* x0 wins */
    w[0] = ipup__mask_andnot(ipup__mask_or(ipup__mask_or(k1, k2), k3), ipup__mask_all());
    if (relu) {
        const ipup__v z = ipup__vzero();
        w[0] = ipup__mask_and(w[0], ipup__vgt(x0, z));
        w[1] = ipup__mask_and(w[1], ipup__vgt(x1, z));
        w[2] = ipup__mask_and(w[2], ipup__vgt(x2, z));
        w[3] = ipup__mask_and(w[3], ipup__vgt(x3, z));
    }
}

/* max-pool backward of C % IPUP__VL == 0 channels, from the input x or from the arg-max
   bytes idx (ipup__pool_window): dy at the position that wins, +0 at the other three, written
   directly (no memset of dx, no scatter); rows and columns outside every window (odd H or
   W) zeroed */
static void ipup__maxpool_bwd_simd(int B, int H, int W, int C, const float *x, const uint8_t *idx,
                                   const float *dy, float *dx, int relu) {
    const int OH = H / 2, OW = W / 2;
    const size_t rs = (size_t)W * (size_t)C;
    int n, oh, ow, c;
    ipup__pool_zero_rest(B, H, W, C, dx);
    for (n = 0; n < B; n++)
        for (oh = 0; oh < OH; oh++) {
            size_t o = ((size_t)n * (size_t)H + (size_t)(2 * oh)) * rs;
            const size_t q = ((size_t)n * (size_t)OH + (size_t)oh) * (size_t)OW * (size_t)C;
            for (ow = 0; ow < OW; ow++, o += 2 * (size_t)C)
                for (c = 0; c < C; c += IPUP__VL) {
                    const size_t a = o + (size_t)c, qc = q + (size_t)ow * (size_t)C + (size_t)c;
                    const ipup__v g = ipup__vld(dy + qc);
                    ipup__vmask w[4];
                    ipup__pool_window(x, a, (size_t)C, rs, idx ? idx + qc : NULL, relu, w);
                    ipup__vst(dx + a, ipup__vsel(w[0], g));
                    ipup__vst(dx + a + (size_t)C, ipup__vsel(w[1], g));
                    ipup__vst(dx + a + rs, ipup__vsel(w[2], g));
                    ipup__vst(dx + a + rs + (size_t)C, ipup__vsel(w[3], g));
                }
        }
}
#endif /* IPUP__SIMD */

/* max-pool forward, and with idx != NULL the arg-max bytes (ipup_maxpool2_fwd_idx_f32) */
static void ipup__maxpool_fwd(int B, int H, int W, int C, const float *x, float *y, uint8_t *idx,
                              int relu) {
    const int OH = H / 2, OW = W / 2;
    int n, oh, ow, c;
    IPUPIPE_ASSERT(B >= 0 && H >= 0 && W >= 0 && C >= 0);
    if (B <= 0 || H <= 0 || W <= 0 || C <= 0) return;
#ifdef IPUP__SIMD
    if (C % IPUP__VL == 0) {
        ipup__maxpool_fwd_simd(B, H, W, C, x, y, idx, relu);
        return;
    }
#endif
    for (n = 0; n < B; n++)
        for (oh = 0; oh < OH; oh++)
            for (ow = 0; ow < OW; ow++) {
                const float *p00 = x + (((size_t)n * (size_t)H + (size_t)(2 * oh)) * (size_t)W +
                                        (size_t)(2 * ow)) * (size_t)C;
                const float *p01 = p00 + C, *p10 = p00 + (size_t)W * (size_t)C, *p11 = p10 + C;
                const size_t o =
                    (((size_t)n * (size_t)OH + (size_t)oh) * (size_t)OW + (size_t)ow) * (size_t)C;
                for (c = 0; c < C; c++) {
                    float m = p00[c];
                    uint8_t k = 0;
                    if (p01[c] > m) { m = p01[c]; k = 1; }
                    if (p10[c] > m) { m = p10[c]; k = 2; }
                    if (p11[c] > m) { m = p11[c]; k = 3; }
                    y[o + (size_t)c] = m;
                    if (idx) idx[o + (size_t)c] = (uint8_t)(relu && !(m > 0.0f) ? 4 : k);
                }
            }
}
IPUPIPE_DEF void ipup_maxpool2_fwd_f32(int B, int H, int W, int C,
                                       const float *x /* (B, H, W, C) */,
                                       float *y /* (B, H/2, W/2, C) */) {
    ipup__maxpool_fwd(B, H, W, C, x, y, NULL, 0);
}
IPUPIPE_DEF void ipup_maxpool2_fwd_idx_f32(int B, int H, int W, int C,
                                           const float *x /* (B, H, W, C) */,
                                           float *y /* (B, H/2, W/2, C) */,
                                           uint8_t *idx /* (B, H/2, W/2, C) */, int relu) {
    ipup__maxpool_fwd(B, H, W, C, x, y, idx, relu);
}

IPUPIPE_DEF void ipup_maxpool2_bwd_f32(int B, int H, int W, int C,
                                       const float *x /* (B, H, W, C) */,
                                       const float *dy /* (B, H/2, W/2, C) */,
                                       float *dx /* (B, H, W, C) */) {
    const int OH = H / 2, OW = W / 2;
    int n, oh, ow, c;
    IPUPIPE_ASSERT(B >= 0 && H >= 0 && W >= 0 && C >= 0);
    if (B <= 0 || H <= 0 || W <= 0 || C <= 0) return;
#ifdef IPUP__SIMD
    if (C % IPUP__VL == 0) {
        ipup__maxpool_bwd_simd(B, H, W, C, x, NULL, dy, dx, 0);
        return;
    }
#endif
    IPUPIPE_MEMSET(dx, 0, (size_t)B * (size_t)H * (size_t)W * (size_t)C * sizeof(float));
    for (n = 0; n < B; n++)
        for (oh = 0; oh < OH; oh++)
            for (ow = 0; ow < OW; ow++) {
                size_t o00 = (((size_t)n * (size_t)H + (size_t)(2 * oh)) * (size_t)W +
                              (size_t)(2 * ow)) * (size_t)C;
                size_t o01 = o00 + (size_t)C, o10 = o00 + (size_t)W * (size_t)C,
                       o11 = o10 + (size_t)C;
                const float *dyp = dy + (((size_t)n * (size_t)OH + (size_t)oh) * (size_t)OW +
                                         (size_t)ow) * (size_t)C;
                for (c = 0; c < C; c++) {
                    size_t best = o00 + (size_t)c;
                    float m = x[best];
                    if (x[o01 + (size_t)c] > m) { m = x[o01 + (size_t)c]; best = o01 + (size_t)c; }
                    if (x[o10 + (size_t)c] > m) { m = x[o10 + (size_t)c]; best = o10 + (size_t)c; }
                    if (x[o11 + (size_t)c] > m) { best = o11 + (size_t)c; }
                    dx[best] = dyp[c];
                }
            }
}

IPUPIPE_DEF void ipup_maxpool2_relu_bwd_f32(int B, int H, int W, int C,
                                            const float *x /* (B, H, W, C) */,
                                            const float *dy /* (B, H/2, W/2, C) */,
                                            float *dz /* (B, H, W, C) */) {
    IPUPIPE_ASSERT(B >= 0 && H >= 0 && W >= 0 && C >= 0);
    if (B <= 0 || H <= 0 || W <= 0 || C <= 0) return;
#ifdef IPUP__SIMD
    if (C % IPUP__VL == 0) {
        ipup__maxpool_bwd_simd(B, H, W, C, x, NULL, dy, dz, 1);
        return;
    }
#endif
    ipup_maxpool2_bwd_f32(B, H, W, C, x, dy, dz);
    ipup_relu_bwd_f32(B * H * W * C, x, dz, dz); /* x = relu(z) > 0 exactly when z > 0 */
}

IPUPIPE_DEF void ipup_maxpool2_bwd_idx_f32(int B, int H, int W, int C,
                                           const uint8_t *idx /* (B, H/2, W/2, C) */,
                                           const float *dy /* (B, H/2, W/2, C) */,
                                           float *dx /* (B, H, W, C) */) {
    const int OH = H / 2, OW = W / 2;
    int n, oh, ow, c, j;
    IPUPIPE_ASSERT(B >= 0 && H >= 0 && W >= 0 && C >= 0);
    if (B <= 0 || H <= 0 || W <= 0 || C <= 0) return;
#ifdef IPUP__SIMD
    if (C % IPUP__VL == 0) {
        ipup__maxpool_bwd_simd(B, H, W, C, NULL, idx, dy, dx, 0);
        return;
    }
#endif
    ipup__pool_zero_rest(B, H, W, C, dx);
    for (n = 0; n < B; n++)
        for (oh = 0; oh < OH; oh++)
            for (ow = 0; ow < OW; ow++) {
                float *d00 = dx + (((size_t)n * (size_t)H + (size_t)(2 * oh)) * (size_t)W +
                                   (size_t)(2 * ow)) * (size_t)C;
                float *d[4];
                const size_t o =
                    (((size_t)n * (size_t)OH + (size_t)oh) * (size_t)OW + (size_t)ow) * (size_t)C;
                d[0] = d00; d[1] = d00 + C; d[2] = d00 + (size_t)W * (size_t)C; d[3] = d[2] + C;
                for (c = 0; c < C; c++)
                    for (j = 0; j < 4; j++)
                        d[j][c] = idx[o + (size_t)c] == j ? dy[o + (size_t)c] : 0.0f;
            }
}

/* >>dropout: inverted dropout from the counter-based RNG */
#ifdef IPUP__SIMD
/* dropout of elements [0, n - n % 8) (returned): lane i draws ipup_rng_uniform_f32(seed,
   step, offset + i) - splitmix64 in 64-bit integer lanes, the top 24 bits converted
   exactly - and keeps x * scale where u >= p, else +0 */
#if defined(IPUP_KERNELS_AVX512) && defined(__AVX512DQ__)
static __m512i ipup__mix64_v(__m512i z) {
    z = _mm512_add_epi64(z, _mm512_set1_epi64((long long)UINT64_C(0x9E3779B97F4A7C15)));
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)),
                           _mm512_set1_epi64((long long)UINT64_C(0xBF58476D1CE4E5B9)));
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)),
                           _mm512_set1_epi64((long long)UINT64_C(0x94D049BB133111EB)));
    return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}
static int ipup__dropout_simd(int n, float p, float scale, uint64_t key, uint64_t offset,
                              const float *x, float *y) {
    const __m512i k = _mm512_set1_epi64((long long)key), eight = _mm512_set1_epi64(8);
    const __m512 vp = _mm512_set1_ps(p), vs = _mm512_set1_ps(scale),
                 u24 = _mm512_set1_ps(1.0f / 16777216.0f);
    __m512i ctr = _mm512_add_epi64(_mm512_set1_epi64((long long)offset),
                                   _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
    int i;
    for (i = 0; i + 16 <= n; i += 16) {
        __m256i lo =
            _mm512_cvtepi64_epi32(_mm512_srli_epi64(ipup__mix64_v(_mm512_xor_si512(k, ctr)), 40));
        __m256i hi = _mm512_cvtepi64_epi32(_mm512_srli_epi64(
            ipup__mix64_v(_mm512_xor_si512(k, _mm512_add_epi64(ctr, eight))), 40));
        __m512 u = _mm512_mul_ps(
            _mm512_cvtepi32_ps(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1)), u24);
        _mm512_storeu_ps(y + i, _mm512_maskz_mul_ps(_mm512_cmp_ps_mask(u, vp, _CMP_GE_OQ),
                                                    _mm512_loadu_ps(x + i), vs));
        ctr = _mm512_add_epi64(ctr, _mm512_set1_epi64(16));
    }
    return i;
}
#else
/* a * c mod 2^64 per 64-bit lane from 32 x 32 -> 64-bit products (AVX2 has no 64-bit mullo) */
static __m256i ipup__mul64_const(__m256i a, uint64_t c) {
    const __m256i clo = _mm256_set1_epi64x((long long)(c & 0xFFFFFFFFu)),
                  chi = _mm256_set1_epi64x((long long)(c >> 32));
    const __m256i cross =
        _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), clo), _mm256_mul_epu32(a, chi));
    return _mm256_add_epi64(_mm256_mul_epu32(a, clo), _mm256_slli_epi64(cross, 32));
}
static __m256i ipup__mix64_v(__m256i z) {
    z = _mm256_add_epi64(z, _mm256_set1_epi64x((long long)UINT64_C(0x9E3779B97F4A7C15)));
    z = ipup__mul64_const(_mm256_xor_si256(z, _mm256_srli_epi64(z, 30)),
                          UINT64_C(0xBF58476D1CE4E5B9));
    z = ipup__mul64_const(_mm256_xor_si256(z, _mm256_srli_epi64(z, 27)),
                          UINT64_C(0x94D049BB133111EB));
    return _mm256_xor_si256(z, _mm256_srli_epi64(z, 31));
}
/* the top 24 bits of 4 lanes as 4 int32 */
static __m128i ipup__top24(__m256i r) {
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
        _mm256_srli_epi64(r, 40), _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7)));
}
static int ipup__dropout_simd(int n, float p, float scale, uint64_t key, uint64_t offset,
                              const float *x, float *y) {
    const __m256i k = _mm256_set1_epi64x((long long)key), four = _mm256_set1_epi64x(4);
    const __m256 vp = _mm256_set1_ps(p), vs = _mm256_set1_ps(scale),
                 u24 = _mm256_set1_ps(1.0f / 16777216.0f);
    __m256i ctr =
        _mm256_add_epi64(_mm256_set1_epi64x((long long)offset), _mm256_setr_epi64x(0, 1, 2, 3));
    int i;
    for (i = 0; i + 8 <= n; i += 8) {
        __m128i lo = ipup__top24(ipup__mix64_v(_mm256_xor_si256(k, ctr)));
        __m128i hi = ipup__top24(ipup__mix64_v(_mm256_xor_si256(k, _mm256_add_epi64(ctr, four))));
        __m256 u = _mm256_mul_ps(
            _mm256_cvtepi32_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1)), u24);
        __m256 keep = _mm256_cmp_ps(u, vp, _CMP_GE_OQ);
        _mm256_storeu_ps(y + i, _mm256_and_ps(keep, _mm256_mul_ps(_mm256_loadu_ps(x + i), vs)));
        ctr = _mm256_add_epi64(ctr, _mm256_set1_epi64x(8));
    }
    return i;
}
#endif
#endif /* IPUP__SIMD */

static void ipup__dropout(int n, float p, uint64_t seed, uint64_t step, uint64_t offset,
                          const float *x /* (n) */, float *y /* (n) */) {
    int i;
    float scale;
    if (!(p > 0.0f)) { /* p <= 0 (or NaN): identity */
        if (y != x) for (i = 0; i < n; i++) y[i] = x[i];
        return;
    }
    if (p >= 1.0f) {
        for (i = 0; i < n; i++) y[i] = 0.0f;
        return;
    }
    scale = 1.0f / (1.0f - p);
#ifdef IPUP__SIMD
    /* ipup_rng_u64(seed, step, b) = mix64(key ^ b) with key = mix64(mix64(seed) ^ step) */
    i = ipup__dropout_simd(n, p, scale, ipup_mix64(ipup_mix64(seed) ^ step), offset, x, y);
#else
    i = 0;
#endif
    for (; i < n; i++) {
        float u = ipup_rng_uniform_f32(seed, step, offset + (uint64_t)i);
        y[i] = u >= p ? x[i] * scale : 0.0f;
    }
}
IPUPIPE_DEF void ipup_dropout_fwd_f32(int n, float p, uint64_t seed, uint64_t step, uint64_t offset,
                                      const float *x /* (n) */, float *y /* (n) */) {
    ipup__dropout(n, p, seed, step, offset, x, y);
}
IPUPIPE_DEF void ipup_dropout_bwd_f32(int n, float p, uint64_t seed, uint64_t step, uint64_t offset,
                                      const float *dy /* (n) */, float *dx /* (n) */) {
    ipup__dropout(n, p, seed, step, offset, dy, dx);
}

/* >>optimizers: SGD, momentum and Adam over a flat array */
#ifdef IPUP__SIMD
/* w -= lr * (g * scale); momentum: v = mu * v + g * scale, w -= lr * v (returns the count done) */
static int ipup__sgd_simd(int n, float lr, float scale, float *w, const float *g) {
    int i;
    for (i = 0; i + IPUP__VL <= n; i += IPUP__VL) {
        const ipup__v gs = ipup__vmul(ipup__vld(g + i), ipup__vset(scale));
        ipup__vst(w + i, ipup__vsub(ipup__vld(w + i), ipup__vmul(ipup__vset(lr), gs)));
    }
    return i;
}
static int ipup__momentum_simd(int n, float lr, float mu, float scale, float *w, float *v,
                               const float *g) {
    int i;
    for (i = 0; i + IPUP__VL <= n; i += IPUP__VL) {
        const ipup__v gs = ipup__vmul(ipup__vld(g + i), ipup__vset(scale));
        const ipup__v vi = ipup__vadd(ipup__vmul(ipup__vset(mu), ipup__vld(v + i)), gs);
        ipup__vst(v + i, vi);
        ipup__vst(w + i, ipup__vsub(ipup__vld(w + i), ipup__vmul(ipup__vset(lr), vi)));
    }
    return i;
}

/* the scalar Adam, operation for operation, on vectors (returns the count done) */
static int ipup__adam_simd(int n, float lr, float beta1, float beta2, float eps, float scale,
                           float bc1, float bc2, float c1, float c2, float lrwd, float *w,
                           float *m, float *v, const float *g) {
    int i;
    for (i = 0; i + IPUP__VL <= n; i += IPUP__VL) {
        const ipup__v gs = ipup__vmul(ipup__vld(g + i), ipup__vset(scale));
        const ipup__v mi = ipup__vadd(ipup__vmul(ipup__vset(beta1), ipup__vld(m + i)),
                                      ipup__vmul(ipup__vset(c1), gs));
        const ipup__v vi = ipup__vadd(ipup__vmul(ipup__vset(beta2), ipup__vld(v + i)),
                                      ipup__vmul(ipup__vset(c2), ipup__vmul(gs, gs)));
        const ipup__v mh = ipup__vdiv(mi, ipup__vset(bc1)), vh = ipup__vdiv(vi, ipup__vset(bc2));
        const ipup__v wi = ipup__vld(w + i);
        const ipup__v step = ipup__vadd(ipup__vdiv(ipup__vmul(ipup__vset(lr), mh),
                                                   ipup__vadd(ipup__vsqrt(vh), ipup__vset(eps))),
                                        ipup__vmul(ipup__vset(lrwd), wi));
        ipup__vst(m + i, mi);
        ipup__vst(v + i, vi);
        ipup__vst(w + i, ipup__vsub(wi, step));
    }
    return i;
}
#endif /* IPUP__SIMD */

IPUPIPE_DEF void ipup_sgd_f32(int n, float lr, float scale, float *w /* (n) */,
                              const float *g /* (n) */) {
    int i;
#ifdef IPUP__SIMD
    i = ipup__sgd_simd(n, lr, scale, w, g);
#else
    i = 0;
#endif
    for (; i < n; i++) { /* one operation per statement: no compiler fuses them (FMA) */
        float gs = g[i] * scale;
        float st = lr * gs;
        w[i] -= st;
    }
}

IPUPIPE_DEF void ipup_momentum_f32(int n, float lr, float mu, float scale, float *w /* (n) */,
                                   float *v /* (n) */, const float *g /* (n) */) {
    int i;
#ifdef IPUP__SIMD
    i = ipup__momentum_simd(n, lr, mu, scale, w, v, g);
#else
    i = 0;
#endif
    for (; i < n; i++) { /* one operation per statement: no compiler fuses them (FMA) */
        float gs = g[i] * scale;
        float mv = mu * v[i];
        float vi = mv + gs;
        float st = lr * vi;
        v[i] = vi;
        w[i] -= st;
    }
}

/* b^t for t >= 1 by binary exponentiation in float: a fixed sequence of IEEE multiplies,
   so the same bits with every libm (no pow). */
static float ipup__powi_f32(float b, int t) {
    float r = 1.0f;
    while (t > 0) {
        if (t & 1) r *= b;
        b *= b;
        t >>= 1;
    }
    return r;
}

IPUPIPE_DEF void ipup_adamw_f32(int n, float lr, float beta1, float beta2, float eps, float wd,
                                int t, float scale, float *w /* (n) */, float *m /* (n) */,
                                float *v /* (n) */, const float *g /* (n) */) {
    int i;
    /* t = 0: no bias correction (dividing by 1 is exact); wd = 0: (lr wd) w adds a zero */
    float bc1 = t > 0 ? 1.0f - ipup__powi_f32(beta1, t) : 1.0f;
    float bc2 = t > 0 ? 1.0f - ipup__powi_f32(beta2, t) : 1.0f;
    float c1 = 1.0f - beta1, c2 = 1.0f - beta2, lrwd = lr * wd;
#ifdef IPUP__SIMD
    i = ipup__adam_simd(n, lr, beta1, beta2, eps, scale, bc1, bc2, c1, c2, lrwd, w, m, v, g);
#else
    i = 0;
#endif
    for (; i < n; i++) {
        /* one operation per statement: no compiler fuses them (FMA) */
        float gs = g[i] * scale, g2 = gs * gs;
        float m1 = beta1 * m[i], m2 = c1 * gs, v1 = beta2 * v[i], v2 = c2 * g2;
        float mi = m1 + m2, vi = v1 + v2;
        float mh = mi / bc1, vh = vi / bc2;
        float num = lr * mh, den = IPUPIPE_SQRTF(vh) + eps;
        float q = num / den, dec = lrwd * w[i];
        float st = q + dec;
        m[i] = mi;
        v[i] = vi;
        w[i] -= st;
    }
}

IPUPIPE_DEF void ipup_adam_f32(int n, float lr, float beta1, float beta2, float eps, int t,
                               float scale, float *w /* (n) */, float *m /* (n) */,
                               float *v /* (n) */, const float *g /* (n) */) {
    IPUPIPE_ASSERT(t >= 1);
    ipup_adamw_f32(n, lr, beta1, beta2, eps, 0.0f, t < 1 ? 1 : t, scale, w, m, v, g);
}

/* >>init: the Glorot initialiser */
IPUPIPE_DEF void ipup_glorot_uniform_range_f32(int fan_in, int fan_out, int64_t first, int n,
                                               uint64_t seed, uint64_t stream,
                                               float *w /* (n) */) {
    int i;
    float limit;
    IPUPIPE_ASSERT(fan_in + fan_out > 0 && first >= 0);
    limit = IPUPIPE_SQRTF(6.0f / (float)(fan_in + fan_out));
    for (i = 0; i < n; i++) {
        float u = ipup_rng_uniform_f32(seed, stream, (uint64_t)(first + i));
        w[i] = (2.0f * u - 1.0f) * limit;
    }
}
IPUPIPE_DEF void ipup_glorot_uniform_f32(int fan_in, int fan_out, int n, uint64_t seed,
                                         uint64_t stream, float *w /* (n) */) {
    ipup_glorot_uniform_range_f32(fan_in, fan_out, 0, n, seed, stream, w);
}

/* >>half: the conversions: portable bit manipulation, F16C / AVX-512, the Arm VCVT */

/* One fp32 -> fp16, round to nearest even, by integer operations only (so the bits do not
   depend on the FPU's rounding mode or flush-to-zero setting). */
static uint16_t ipup__f32_to_f16_1(float f) {
    uint32_t u, a, sign;
    IPUPIPE_MEMCPY(&u, &f, sizeof u);
    sign = (u >> 16) & 0x8000u;
    a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) /* NaN: quiet, the top of the payload */
        return (uint16_t)(sign | 0x7E00u | ((a >> 13) & 0x3FFu));
    if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u); /* >= 65520 (and inf): inf */
    if (a >= 0x38800000u) { /* normal: rebias the exponent (127 -> 15), round 13 bits away */
        const uint32_t r = a - 0x38000000u;
        return (uint16_t)(sign | ((r + 0xFFFu + ((r >> 13) & 1u)) >> 13));
    }
    if (a <= 0x33000000u) return (uint16_t)sign; /* <= 2^-25: ties to the even zero */
    {   /* subnormal: the 24-bit significand shifted right by 126 - exponent (14..24) */
        const uint32_t m = (a & 0x7FFFFFu) | 0x800000u, s = 126u - (a >> 23);
        const uint32_t rem = m & ((1u << s) - 1u), half = 1u << (s - 1u);
        uint32_t h = m >> s;
        if (rem > half || (rem == half && (h & 1u))) h++; /* 0x3FF + 1 = the smallest normal */
        return (uint16_t)(sign | h);
    }
}
/* One fp16 -> fp32, exact. */
static float ipup__f16_to_f32_1(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu;
    uint32_t m = h & 0x3FFu, u;
    float f;
    if (e == 0x1Fu) u = sign | 0x7F800000u | (m << 13) | (m ? 0x400000u : 0u); /* inf, NaN */
    else if (e) u = sign | ((e + 112u) << 23) | (m << 13);
    else if (!m) u = sign;
    else { /* subnormal: m 2^-24, normalised */
        uint32_t ef = 113u;
        while (!(m & 0x400u)) {
            m <<= 1;
            ef--;
        }
        u = sign | (ef << 23) | ((m & 0x3FFu) << 13);
    }
    IPUPIPE_MEMCPY(&f, &u, sizeof f);
    return f;
}

#if defined(IPUP__HALF_ARM)
/* VCVTB.F16.F32 rounds by FPSCR (round to nearest at reset) and, with FPSCR.DN clear, keeps
   a NaN's sign and payload top as the portable path does; half values are never flushed
   (Armv7-M ARM, A2.5.3: flush-to-zero does not apply to half-precision conversions). */
static uint16_t ipup__f32_to_f16_arm(float f) {
    float r;
    uint32_t u;
    __asm__("vcvtb.f16.f32 %0, %1" : "=t"(r) : "t"(f));
    IPUPIPE_MEMCPY(&u, &r, sizeof u);
    return (uint16_t)(u & 0xFFFFu);
}
static float ipup__f16_to_f32_arm(uint16_t h) {
    const uint32_t u = h;
    float r, f;
    IPUPIPE_MEMCPY(&r, &u, sizeof r);
    __asm__("vcvtb.f32.f16 %0, %1" : "=t"(f) : "t"(r));
    return f;
}
#endif

IPUPIPE_DEF void ipup_f32_to_f16(int n, const float *x /* (n) */, uint16_t *y /* (n) */) {
    int i = 0;
#if defined(IPUP__HALF_AVX512)
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(void *)(y + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(x + i),
                                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(IPUP__HALF_F16C)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(y + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(IPUP__HALF_ARM)
    for (; i < n; i++) y[i] = ipup__f32_to_f16_arm(x[i]);
#endif
    for (; i < n; i++) y[i] = ipup__f32_to_f16_1(x[i]);
}

IPUPIPE_DEF void ipup_f16_to_f32(int n, const uint16_t *x /* (n) */, float *y /* (n) */) {
    int i = 0;
#if defined(IPUP__HALF_AVX512)
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256(
                                    (const __m256i *)(const void *)(x + i))));
#elif defined(IPUP__HALF_F16C)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                    (const __m128i *)(const void *)(x + i))));
#elif defined(IPUP__HALF_ARM)
    for (; i < n; i++) y[i] = ipup__f16_to_f32_arm(x[i]);
#endif
    for (; i < n; i++) y[i] = ipup__f16_to_f32_1(x[i]);
}

/* magnitude of element k's 16 random bits against the gap above lo: round up or not
   (ipup_f32_to_f16_sr; every product and difference below is exact in fp32) */
static uint16_t ipup__f16_sr_1(float x, uint16_t h, float back, uint64_t bits) {
    const float ax = x < 0.0f ? -x : x;
    uint16_t mag = (uint16_t)(h & 0x7FFFu);
    float lo = back < 0.0f ? -back : back, hi;
    if (!(ax < 65520.0f)) return h; /* infinities, NaNs, overflow: as rounding to nearest */
    if (lo > ax) { /* rounded up: step back to the value below */
        mag--;
        lo = ipup__f16_to_f32_1(mag);
    }
    if (lo == ax || mag == 0x7BFFu) return (uint16_t)((h & 0x8000u) | mag);
    hi = ipup__f16_to_f32_1((uint16_t)(mag + 1u));
    if ((float)(uint32_t)(bits & 0xFFFFu) * (hi - lo) < (ax - lo) * 65536.0f) mag++;
    return (uint16_t)((h & 0x8000u) | mag);
}
#if defined(IPUP__HALF_AVX512)
/* 16 elements of ipup_f32_to_f16_sr whose first index k is a multiple of 4: lane j takes
   16-bit piece j of the four words mix64(key + k / 4 + 0..3) (little-endian), as the scalar
   loop does; the same comparisons, exact in fp32 */
static void ipup__f16_sr_16(const float *x, uint16_t *y, uint64_t key, uint64_t k) {
    const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
    const __m512 v = _mm512_loadu_ps(x);
    const __m512 ax = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), abs_mask));
    const __m256i hn = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512i h = _mm512_cvtepu16_epi32(hn), mag = _mm512_and_si512(h, _mm512_set1_epi32(0x7FFF));
    __m512 lo = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(_mm512_cvtph_ps(hn)),
                                                     abs_mask));
    uint64_t w[4];
    __m512 hi, rf;
    __mmask16 over, down, keep, up;
    int j;
    for (j = 0; j < 4; j++) w[j] = ipup_mix64(key + (k >> 2) + (uint64_t)j);
    over = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(65520.0f), _CMP_NLT_UQ); /* inf, NaN, big */
    down = _mm512_cmp_ps_mask(lo, ax, _CMP_GT_OQ);
    mag = _mm512_mask_sub_epi32(mag, down, mag, _mm512_set1_epi32(1));
    lo = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(mag));
    hi = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_add_epi32(mag, _mm512_set1_epi32(1))));
    keep = over | _mm512_cmp_ps_mask(lo, ax, _CMP_EQ_OQ) |
           _mm512_cmpeq_epi32_mask(mag, _mm512_set1_epi32(0x7BFF));
    rf = _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)w)));
    up = _mm512_cmp_ps_mask(_mm512_mul_ps(rf, _mm512_sub_ps(hi, lo)),
                            _mm512_mul_ps(_mm512_sub_ps(ax, lo), _mm512_set1_ps(65536.0f)),
                            _CMP_LT_OQ) & (__mmask16)~keep;
    mag = _mm512_mask_add_epi32(mag, up, mag, _mm512_set1_epi32(1));
    mag = _mm512_or_si512(mag, _mm512_and_si512(h, _mm512_set1_epi32(0x8000)));
    h = _mm512_mask_mov_epi32(mag, over, h);
    _mm256_storeu_si256((__m256i *)(void *)y, _mm512_cvtepi32_epi16(h));
}
#endif
IPUPIPE_DEF void ipup_f32_to_f16_sr(int n, const float *x /* (n) */, uint16_t *y /* (n) */,
                                    uint64_t seed, uint64_t stream, uint64_t offset) {
    float back[64];
    const uint64_t key = ipup_rng_u64(seed, stream, 0);
    uint64_t bits = 0;
    int i0, i;
#if defined(IPUP__HALF_AVX512)
    if ((offset & 3u) == 0) { /* whole groups of four: 16 at a time */
        for (i0 = 0; i0 + 16 <= n; i0 += 16)
            ipup__f16_sr_16(x + i0, y + i0, key, offset + (uint64_t)i0);
        x += i0;
        y += i0;
        n -= i0;
        offset += (uint64_t)i0;
    }
#endif
    for (i0 = 0; i0 < n; i0 += 64) {
        const int c = n - i0 < 64 ? n - i0 : 64;
        ipup_f32_to_f16(c, x + i0, y + i0); /* nearest; then the neighbour below or above */
        ipup_f16_to_f32(c, y + i0, back);
        for (i = 0; i < c; i++) {
            const uint64_t k = offset + (uint64_t)(i0 + i);
            if (i0 + i == 0 || (k & 3u) == 0) bits = ipup_mix64(key + (k >> 2));
            y[i0 + i] = ipup__f16_sr_1(x[i0 + i], y[i0 + i], back[i], bits >> (16u * (k & 3u)));
        }
    }
}

/* >>conv2d: the general convolution: shape, portable kernels, SIMD products, dispatchers */
/* Keras 'same' padding is TensorFlow's (the tf.nn module's documentation, "Notes on
   padding", tensorflow.org/api_docs/python/tf/nn): out = ceil(in / stride), total padding
   max((out - 1) stride + k - in, 0), pad_before = total / 2, the rest after; 'valid':
   out = ceil((in - k + 1) / stride), no padding. */
static int ipup__conv_dim(int in, int k, int st, int same, int *out, int *pad) {
    if (same) {
        const int o = (in + st - 1) / st, total = (o - 1) * st + k - in;
        *out = o;
        *pad = total > 0 ? total / 2 : 0;
        return 0;
    }
    if (in < k) return -1;
    *out = (in - k) / st + 1;
    *pad = 0;
    return 0;
}

IPUPIPE_DEF int ipup_conv2d_shape_init(ipup_conv2d_shape *s, int h, int w, int ci, int co, int kh,
                                       int kw, int sh, int sw, int same) {
    ipup_conv2d_shape t;
    int64_t taps, big = 2147483647;
    if (!s) return -1;
    IPUPIPE_MEMSET(s, 0, sizeof *s);
    if (h < 1 || w < 1 || ci < 1 || co < 1 || kh < 1 || kw < 1 || sh < 1 || sw < 1) return -1;
    if ((int64_t)h * w * ci > big || (int64_t)kh * kw > big) return -1;
    t.h = h; t.w = w; t.ci = ci; t.co = co; t.kh = kh; t.kw = kw; t.sh = sh; t.sw = sw;
    if (ipup__conv_dim(h, kh, sh, same, &t.oh, &t.pad_top) ||
        ipup__conv_dim(w, kw, sw, same, &t.ow, &t.pad_left))
        return -1;
    taps = (int64_t)kh * kw * ci;
    if (taps > big || taps * co > big || (int64_t)t.oh * t.ow * co > big ||
        (int64_t)t.oh * t.ow * taps > big || taps * co + (int64_t)t.oh * t.ow * taps > big)
        return -1;
    *s = t;
    return 0;
}

IPUPIPE_DEF size_t ipup_conv2d_scratch_floats(const ipup_conv2d_shape *s, int B) {
    size_t taps;
    (void)B;
    if (!s || s->kh < 1) return 0;
    taps = (size_t)s->kh * (size_t)s->kw * (size_t)s->ci;
    return taps * (size_t)s->co + (size_t)s->oh * (size_t)s->ow * taps;
}

/* 1 when the shape is one ipup_conv2d_shape_init can make (the kernels' precondition) */
static int ipup__conv_shape_ok(int B, const ipup_conv2d_shape *s) {
    return B >= 0 && s && s->h > 0 && s->w > 0 && s->ci > 0 && s->co > 0 && s->kh > 0 &&
           s->kw > 0 && s->sh > 0 && s->sw > 0 && s->oh > 0 && s->ow > 0 && s->pad_top >= 0 &&
           s->pad_left >= 0;
}

IPUPIPE_DEF void ipup_conv2d_fwd_f32_portable(int B, const ipup_conv2d_shape *s,
                                              const float *x /* (B, h, w, ci) */,
                                              const float *w /* (kh, kw, ci, co) */,
                                              const float *b /* (co) or NULL */,
                                              float *y /* (B, oh, ow, co) */) {
    int n, oh, ow, kh, kw, ci, co;
    IPUPIPE_ASSERT(ipup__conv_shape_ok(B, s));
    if (!ipup__conv_shape_ok(B, s)) return;
    for (n = 0; n < B; n++)
        for (oh = 0; oh < s->oh; oh++)
            for (ow = 0; ow < s->ow; ow++) {
                float *yp = y + (((size_t)n * (size_t)s->oh + (size_t)oh) * (size_t)s->ow +
                                 (size_t)ow) * (size_t)s->co;
                for (co = 0; co < s->co; co++) yp[co] = 0.0f;
                for (kh = 0; kh < s->kh; kh++) {
                    const int ih = oh * s->sh - s->pad_top + kh;
                    if (ih < 0 || ih >= s->h) continue;
                    for (kw = 0; kw < s->kw; kw++) {
                        const int iw = ow * s->sw - s->pad_left + kw;
                        const float *xp, *wp;
                        if (iw < 0 || iw >= s->w) continue;
                        xp = x + (((size_t)n * (size_t)s->h + (size_t)ih) * (size_t)s->w +
                                  (size_t)iw) * (size_t)s->ci;
                        wp = w + ((size_t)kh * (size_t)s->kw + (size_t)kw) * (size_t)s->ci *
                                     (size_t)s->co;
                        for (ci = 0; ci < s->ci; ci++) {
                            const float xv = xp[ci];
                            const float *wr = wp + (size_t)ci * (size_t)s->co;
                            for (co = 0; co < s->co; co++) yp[co] += xv * wr[co];
                        }
                    }
                }
                if (b)
                    for (co = 0; co < s->co; co++) yp[co] += b[co];
            }
}

IPUPIPE_DEF void ipup_conv2d_bwd_f32_portable(int B, const ipup_conv2d_shape *s,
                                              const float *x /* (B, h, w, ci) */,
                                              const float *w /* (kh, kw, ci, co) */,
                                              const float *dy /* (B, oh, ow, co) */,
                                              float *dx /* (B, h, w, ci) or NULL */,
                                              float *dw /* (kh, kw, ci, co) or NULL */,
                                              float *db /* (co) or NULL */) {
    const size_t CI = ipup__conv_shape_ok(B, s) ? (size_t)s->ci : 0,
                 CO = CI ? (size_t)s->co : 0;
    int n, oh, ow, kh, kw;
    size_t ci, co;
    IPUPIPE_ASSERT(ipup__conv_shape_ok(B, s));
    if (!CI) return;
    if (dx)
        IPUPIPE_MEMSET(dx, 0, (size_t)B * (size_t)s->h * (size_t)s->w * CI * sizeof(float));
    for (n = 0; n < B; n++)
        for (oh = 0; oh < s->oh; oh++)
            for (ow = 0; ow < s->ow; ow++) {
                const float *dyp = dy + (((size_t)n * (size_t)s->oh + (size_t)oh) *
                                         (size_t)s->ow + (size_t)ow) * CO;
                if (db)
                    for (co = 0; co < CO; co++) db[co] += dyp[co];
                for (kh = 0; kh < s->kh; kh++) {
                    const int ih = oh * s->sh - s->pad_top + kh;
                    if (ih < 0 || ih >= s->h) continue;
                    for (kw = 0; kw < s->kw; kw++) {
                        const int iw = ow * s->sw - s->pad_left + kw;
                        size_t xo, wo;
                        if (iw < 0 || iw >= s->w) continue;
                        xo = (((size_t)n * (size_t)s->h + (size_t)ih) * (size_t)s->w +
                              (size_t)iw) * CI;
                        wo = ((size_t)kh * (size_t)s->kw + (size_t)kw) * CI * CO;
                        for (ci = 0; ci < CI; ci++) {
                            const float *wr = w + wo + ci * CO;
                            if (dw) {
                                float *dwr = dw + wo + ci * CO;
                                const float xv = x[xo + ci];
                                for (co = 0; co < CO; co++) dwr[co] += xv * dyp[co];
                            }
                            if (dx) {
                                float acc = 0.0f;
                                for (co = 0; co < CO; co++) acc += dyp[co] * wr[co];
                                dx[xo + ci] += acc;
                            }
                        }
                    }
                }
            }
}

#ifdef IPUP__SIMD
/* 1 when no output reads padding (every tap of every output inside x): the products then
   read x in place, as the 3x3 kernel's do */
static int ipup__conv_unpadded(const ipup_conv2d_shape *s) {
    return s->pad_top == 0 && s->pad_left == 0 && (s->oh - 1) * s->sh + s->kh <= s->h &&
           (s->ow - 1) * s->sw + s->kw <= s->w;
}
/* im2col of one image: col (oh ow, kh kw ci), row p = the taps of output p in (kh, kw, ci)
   order, +0 for the taps in the padding. Short runs (kw ci floats: 4 for DS-CNN's first
   layer) by plain loops rather than a library call per run. */
static void ipup__im2col(const ipup_conv2d_shape *s, const float *xn, float *col) {
    const int CI = s->ci, KW = s->kw * CI;
    float *row = col;
    int oh, ow, kh, i;
    for (oh = 0; oh < s->oh; oh++)
        for (ow = 0; ow < s->ow; ow++)
            for (kh = 0; kh < s->kh; kh++, row += KW) {
                const int ih = oh * s->sh - s->pad_top + kh, iw0 = ow * s->sw - s->pad_left;
                const int lo = iw0 < 0 ? -iw0 * CI : 0,
                          hi = (iw0 + s->kw > s->w ? s->w - iw0 : s->kw) * CI; /* inside */
                const float *src;
                if (ih < 0 || ih >= s->h || hi <= lo) {
                    for (i = 0; i < KW; i++) row[i] = 0.0f;
                    continue;
                }
                src = xn + ((ptrdiff_t)ih * s->w + iw0) * CI;
                if (lo == 0 && hi == KW && KW <= IPUP__VL) { /* one masked vector */
                    const ipup__lanes m = ipup__mask(KW);
                    ipup__vstm(row, m, ipup__vldm(src, m));
                    continue;
                }
                for (i = 0; i < lo; i++) row[i] = 0.0f;
                if (hi - lo >= 16)
                    IPUPIPE_MEMCPY(row + lo, src + lo, (size_t)(hi - lo) * sizeof(float));
                else
                    for (i = lo; i < hi; i++) row[i] = src[i];
                for (i = hi; i < KW; i++) row[i] = 0.0f;
            }
}
/* A of the forward product of image xn: the output positions' taps, read in place
   (segments = kernel rows of kw ci contiguous inputs) or from the im2col rows in col */
static void ipup__conv_rows(const ipup_conv2d_shape *s, const float *xn, const float *col,
                            ipup__gemm_t *g) {
    const int K = s->kh * s->kw * s->ci;
    if (!col) {
        g->a = xn; g->group_rows = s->ow; g->row_stride = (ptrdiff_t)s->sw * s->ci;
        g->group_stride = (ptrdiff_t)s->sh * s->w * s->ci; g->k_stride = 1;
        g->seg_stride = (ptrdiff_t)s->w * s->ci; g->nseg = s->kh; g->seglen = s->kw * s->ci;
    } else {
        g->a = col; g->group_rows = s->oh * s->ow; g->row_stride = K; g->group_stride = 0;
        g->k_stride = 1; g->seg_stride = 0; g->nseg = 1; g->seglen = K;
    }
}
/* A of the weight-gradient product (im2col(x)^T): row (kh, kw, ci), K = the positions */
static void ipup__conv_cols(const ipup_conv2d_shape *s, const float *xn, const float *col,
                            ipup__gemm_t *g) {
    const int K = s->kh * s->kw * s->ci;
    if (!col) {
        g->a = xn; g->group_rows = s->kw * s->ci; g->row_stride = 1;
        g->group_stride = (ptrdiff_t)s->w * s->ci; g->k_stride = (ptrdiff_t)s->sw * s->ci;
        g->seg_stride = (ptrdiff_t)s->sh * s->w * s->ci; g->nseg = s->oh; g->seglen = s->ow;
    } else {
        g->a = col; g->group_rows = K; g->row_stride = 1; g->group_stride = 0;
        g->k_stride = K; g->seg_stride = 0; g->nseg = 1; g->seglen = s->oh * s->ow;
    }
}

/* y (oh ow, co) = A w + b per image; col: the im2col rows (scratch) when padded */
static void ipup__conv2d_fwd_simd(int B, const ipup_conv2d_shape *s, const float *x,
                                  const float *w, const float *b, float *y, float *col) {
    const size_t X = (size_t)s->h * (size_t)s->w * (size_t)s->ci,
                 Y = (size_t)s->oh * (size_t)s->ow * (size_t)s->co;
    int n;
    for (n = 0; n < B; n++) {
        ipup__gemm_t g;
        if (col) ipup__im2col(s, x + (size_t)n * X, col);
        ipup__conv_rows(s, x + (size_t)n * X, col, &g);
        g.M = s->oh * s->ow; g.N = s->co; g.b = w; g.ldb = s->co;
        g.c = y + (size_t)n * Y; g.ldc = s->co; g.bias = b; g.accum = 0; g.db = NULL;
        ipup__gemm(&g);
    }
}

/* dw (K, co) += A^T dy and db per image (fused); col: im2col rows when padded, or NULL */
static void ipup__conv2d_bwd_w_simd(int B, const ipup_conv2d_shape *s, const float *x,
                                    const float *dy, float *dw, float *db, float *col) {
    const size_t X = (size_t)s->h * (size_t)s->w * (size_t)s->ci,
                 Y = (size_t)s->oh * (size_t)s->ow * (size_t)s->co;
    int n;
    for (n = 0; n < B; n++) {
        ipup__gemm_t g;
        if (col) ipup__im2col(s, x + (size_t)n * X, col);
        ipup__conv_cols(s, x + (size_t)n * X, col, &g);
        g.M = s->kh * s->kw * s->ci; g.N = s->co; g.b = dy + (size_t)n * Y; g.ldb = s->co;
        g.c = dw; g.ldc = s->co; g.bias = NULL; g.accum = 1; g.db = db;
        ipup__gemm(&g);
    }
}

/* dx per image: G (oh ow, K) = dy wt (wt = w^T (co, K), in scratch), then col2im: each G
   row added into the dx rows of its taps inside the image, positions and taps in order.
   A 1x1 stride-1 convolution's G is dx itself. scratch: K co + oh ow K floats. */
static void ipup__conv2d_bwd_x_simd(int B, const ipup_conv2d_shape *s, const float *w,
                                    const float *dy, float *dx, float *scratch) {
    const int K = s->kh * s->kw * s->ci, P = s->oh * s->ow;
    const size_t X = (size_t)s->h * (size_t)s->w * (size_t)s->ci, Y = (size_t)P * (size_t)s->co;
    const int direct = s->kh == 1 && s->kw == 1 && s->sh == 1 && s->sw == 1;
    float *wt = scratch, *G = scratch + (size_t)K * (size_t)s->co;
    int n, oh, ow, kh, kw;
    ipup__transpose(w, s->co, K, s->co, wt, K);
    for (n = 0; n < B; n++) {
        float *dxn = dx + (size_t)n * X;
        const float *gp;
        ipup__gemm_t g;
        g.M = P; g.N = K; g.a = dy + (size_t)n * Y; g.group_rows = P; g.row_stride = s->co;
        g.group_stride = 0; g.k_stride = 1; g.seg_stride = 0; g.nseg = 1; g.seglen = s->co;
        g.b = wt; g.ldb = K; g.c = direct ? dxn : G; g.ldc = K; g.bias = NULL; g.accum = 0;
        g.db = NULL;
        ipup__gemm(&g);
        if (direct) continue;
        IPUPIPE_MEMSET(dxn, 0, X * sizeof(float));
        for (gp = G, oh = 0; oh < s->oh; oh++)
            for (ow = 0; ow < s->ow; ow++)
                for (kh = 0; kh < s->kh; kh++) {
                    const int ih = oh * s->sh - s->pad_top + kh;
                    for (kw = 0; kw < s->kw; kw++, gp += s->ci) {
                        const int iw = ow * s->sw - s->pad_left + kw;
                        if (ih < 0 || ih >= s->h || iw < 0 || iw >= s->w) continue;
                        ipup_add_f32(s->ci, dxn + ((size_t)ih * (size_t)s->w + (size_t)iw) *
                                                      (size_t)s->ci, gp);
                    }
                }
    }
}
#endif /* IPUP__SIMD */

IPUPIPE_DEF void ipup_conv2d_fwd_f32(int B, const ipup_conv2d_shape *s,
                                     const float *x /* (B, h, w, ci) */,
                                     const float *w /* (kh, kw, ci, co) */,
                                     const float *b /* (co) or NULL */,
                                     float *y /* (B, oh, ow, co) */, float *scratch) {
#ifdef IPUP__SIMD
    IPUPIPE_ASSERT(ipup__conv_shape_ok(B, s));
    if (!ipup__conv_shape_ok(B, s)) return;
    if (ipup__conv_unpadded(s)) ipup__conv2d_fwd_simd(B, s, x, w, b, y, NULL);
    else if (scratch) ipup__conv2d_fwd_simd(B, s, x, w, b, y, scratch);
    else ipup_conv2d_fwd_f32_portable(B, s, x, w, b, y);
#else
    (void)scratch;
    ipup_conv2d_fwd_f32_portable(B, s, x, w, b, y);
#endif
}

IPUPIPE_DEF void ipup_conv2d_bwd_f32(int B, const ipup_conv2d_shape *s,
                                     const float *x /* (B, h, w, ci) */,
                                     const float *w /* (kh, kw, ci, co) */,
                                     const float *dy /* (B, oh, ow, co) */,
                                     float *dx /* (B, h, w, ci) or NULL */,
                                     float *dw /* (kh, kw, ci, co) or NULL */,
                                     float *db /* (co) or NULL */, float *scratch) {
#ifdef IPUP__SIMD
    const int unpadded = ipup__conv_shape_ok(B, s) && ipup__conv_unpadded(s);
    IPUPIPE_ASSERT(ipup__conv_shape_ok(B, s));
    if (!ipup__conv_shape_ok(B, s)) return;
    if (dx && scratch) ipup__conv2d_bwd_x_simd(B, s, w, dy, dx, scratch);
    else if (dx) ipup_conv2d_bwd_f32_portable(B, s, x, w, dy, dx, NULL, NULL);
    if (dw && (unpadded || scratch))
        ipup__conv2d_bwd_w_simd(B, s, x, dy, dw, db,
                                unpadded ? NULL
                                         : scratch + (size_t)s->kh * (size_t)s->kw *
                                                         (size_t)s->ci * (size_t)s->co);
    else if (dw) ipup_conv2d_bwd_f32_portable(B, s, x, w, dy, NULL, dw, db);
    else if (db) {
        if (unpadded || scratch) ipup__colsum_add(B, s->oh * s->ow, s->co, dy, s->co, db);
        else ipup_conv2d_bwd_f32_portable(B, s, x, w, dy, NULL, NULL, db);
    }
#else
    (void)scratch;
    ipup_conv2d_bwd_f32_portable(B, s, x, w, dy, dx, dw, db);
#endif
}

/* >>depthwise: depthwise convolution: portable kernels, vector loops, dispatchers */
IPUPIPE_DEF void ipup_dwconv2d_fwd_f32_portable(int B, const ipup_conv2d_shape *s,
                                                const float *x /* (B, h, w, c) */,
                                                const float *w /* (kh, kw, c) */,
                                                const float *b /* (c) or NULL */,
                                                float *y /* (B, oh, ow, c) */) {
    const size_t C = ipup__conv_shape_ok(B, s) ? (size_t)s->ci : 0;
    int n, oh, ow, kh, kw;
    size_t c;
    IPUPIPE_ASSERT(ipup__conv_shape_ok(B, s) && s->co == s->ci);
    if (!C) return;
    for (n = 0; n < B; n++)
        for (oh = 0; oh < s->oh; oh++)
            for (ow = 0; ow < s->ow; ow++) {
                float *yp = y + (((size_t)n * (size_t)s->oh + (size_t)oh) * (size_t)s->ow +
                                 (size_t)ow) * C;
                for (c = 0; c < C; c++) yp[c] = 0.0f;
                for (kh = 0; kh < s->kh; kh++) {
                    const int ih = oh * s->sh - s->pad_top + kh;
                    if (ih < 0 || ih >= s->h) continue;
                    for (kw = 0; kw < s->kw; kw++) {
                        const int iw = ow * s->sw - s->pad_left + kw;
                        const float *xp, *wp;
                        if (iw < 0 || iw >= s->w) continue;
                        xp = x + (((size_t)n * (size_t)s->h + (size_t)ih) * (size_t)s->w +
                                  (size_t)iw) * C;
                        wp = w + ((size_t)kh * (size_t)s->kw + (size_t)kw) * C;
                        for (c = 0; c < C; c++) yp[c] += xp[c] * wp[c];
                    }
                }
                if (b)
                    for (c = 0; c < C; c++) yp[c] += b[c];
            }
}

IPUPIPE_DEF void ipup_dwconv2d_bwd_f32_portable(int B, const ipup_conv2d_shape *s,
                                                const float *x /* (B, h, w, c) */,
                                                const float *w /* (kh, kw, c) */,
                                                const float *dy /* (B, oh, ow, c) */,
                                                float *dx /* (B, h, w, c) or NULL */,
                                                float *dw /* (kh, kw, c) or NULL */,
                                                float *db /* (c) or NULL */) {
    const size_t C = ipup__conv_shape_ok(B, s) ? (size_t)s->ci : 0;
    int n, oh, ow, kh, kw;
    size_t c;
    IPUPIPE_ASSERT(ipup__conv_shape_ok(B, s) && s->co == s->ci);
    if (!C) return;
    if (dx) IPUPIPE_MEMSET(dx, 0, (size_t)B * (size_t)s->h * (size_t)s->w * C * sizeof(float));
    for (n = 0; n < B; n++)
        for (oh = 0; oh < s->oh; oh++)
            for (ow = 0; ow < s->ow; ow++) {
                const float *dyp = dy + (((size_t)n * (size_t)s->oh + (size_t)oh) *
                                         (size_t)s->ow + (size_t)ow) * C;
                if (db)
                    for (c = 0; c < C; c++) db[c] += dyp[c];
                for (kh = 0; kh < s->kh; kh++) {
                    const int ih = oh * s->sh - s->pad_top + kh;
                    if (ih < 0 || ih >= s->h) continue;
                    for (kw = 0; kw < s->kw; kw++) {
                        const int iw = ow * s->sw - s->pad_left + kw;
                        size_t xo, wo;
                        if (iw < 0 || iw >= s->w) continue;
                        xo = (((size_t)n * (size_t)s->h + (size_t)ih) * (size_t)s->w +
                              (size_t)iw) * C;
                        wo = ((size_t)kh * (size_t)s->kw + (size_t)kw) * C;
                        if (dw)
                            for (c = 0; c < C; c++) dw[wo + c] += x[xo + c] * dyp[c];
                        if (dx)
                            for (c = 0; c < C; c++) dx[xo + c] += dyp[c] * w[wo + c];
                    }
                }
            }
}

#ifdef IPUP__SIMD
/* n (1..VL) lanes of p: a whole vector, or the masked tail. With AVX-512, 8 lanes (a layer
   of 8 channels) go as one ymm load or store: a masked store does not forward its data to
   a later load of the same bytes, so a value stored and read back at once (a gradient
   added to position after position) would wait for the store to reach the cache. */
static inline ipup__v ipup__ldn(const float *p, int n) {
#if defined(IPUP_KERNELS_AVX512)
    if (n == 8) return _mm512_zextps256_ps512(_mm256_loadu_ps(p));
#endif
    return n == IPUP__VL ? ipup__vld(p) : ipup__vldm(p, ipup__mask(n));
}
static inline void ipup__stn(float *p, int n, ipup__v v) {
#if defined(IPUP_KERNELS_AVX512)
    if (n == 8) { _mm256_storeu_ps(p, _mm512_castps512_ps256(v)); return; }
#endif
    if (n == IPUP__VL) ipup__vst(p, v);
    else ipup__vstm(p, ipup__mask(n), v);
}
/* the taps of an output inside the image: kernel rows [*lo, *hi) for output o */
static inline void ipup__tap_range(int o, int st, int pad, int k, int in, int *lo, int *hi) {
    const int i0 = o * st - pad;
    *lo = i0 < 0 ? -i0 : 0;
    *hi = i0 + k > in ? in - i0 : k;
}
/* depthwise forward: per output position and vector of channels, acc = 0, then
   acc + x w (a rounded product, then a rounded add: the portable kernel's operations) over
   the taps inside in (kh, kw) order, then + b. Four neighbouring outputs of a row whose
   windows are inside the row run together (four independent chains: the add latency is
   hidden); each output keeps its own chain, so the bits do not depend on the grouping. */
static void ipup__dw_fwd_out(const ipup_conv2d_shape *s, const float *xr, const float *w,
                             const float *b, float *yp, int kh0, int kh1, int kw0, int kw1,
                             int q) {
    const int C = s->ci;
    const ptrdiff_t sx = (ptrdiff_t)s->sw * C, rx = (ptrdiff_t)s->w * C;
    int kh, kw, c0;
    for (c0 = 0; c0 < C; c0 += IPUP__VL) { /* named accumulators: they stay in registers */
        const int nc = C - c0 < IPUP__VL ? C - c0 : IPUP__VL;
        ipup__v a0 = ipup__vzero(), a1 = ipup__vzero(), a2 = ipup__vzero(), a3 = ipup__vzero();
        for (kh = kh0; kh < kh1; kh++) {
            const float *xp = xr + kh * rx + c0, *wp = w + (ptrdiff_t)kh * s->kw * C + c0;
            for (kw = 0; kw < s->kw; kw++) {
                const ipup__v wv = ipup__ldn(wp + (ptrdiff_t)kw * C, nc);
                const float *xk = xp + (ptrdiff_t)kw * C;
                a0 = ipup__vadd(a0, ipup__vmul(ipup__ldn(xk, nc), wv));
                a1 = ipup__vadd(a1, ipup__vmul(ipup__ldn(xk + sx, nc), wv));
                a2 = ipup__vadd(a2, ipup__vmul(ipup__ldn(xk + 2 * sx, nc), wv));
                a3 = ipup__vadd(a3, ipup__vmul(ipup__ldn(xk + 3 * sx, nc), wv));
            }
        }
        if (b) {
            const ipup__v bv = ipup__ldn(b + c0, nc);
            a0 = ipup__vadd(a0, bv); a1 = ipup__vadd(a1, bv);
            a2 = ipup__vadd(a2, bv); a3 = ipup__vadd(a3, bv);
        }
        ipup__stn(yp + c0, nc, a0);
        ipup__stn(yp + C + c0, nc, a1);
        ipup__stn(yp + 2 * C + c0, nc, a2);
        ipup__stn(yp + 3 * C + c0, nc, a3);
    }
    (void)kw0; (void)kw1; (void)q;
}
/* one output whose window may reach into the padding: the taps inside only, up to four
   vectors of channels at once (independent chains) */
static void ipup__dw_fwd_one(const ipup_conv2d_shape *s, const float *xr, const float *w,
                             const float *b, float *yp, int kh0, int kh1, int kw0, int kw1) {
    const int C = s->ci;
    const ptrdiff_t rx = (ptrdiff_t)s->w * C;
    int kh, kw, c0;
    for (c0 = 0; c0 < C; c0 += 4 * IPUP__VL) {
        const int left = C - c0, nv = left > 3 * IPUP__VL ? 4 : (left + IPUP__VL - 1) / IPUP__VL;
        const int n0 = left < IPUP__VL ? left : IPUP__VL,
                  n1 = left - IPUP__VL < IPUP__VL ? left - IPUP__VL : IPUP__VL,
                  n2 = left - 2 * IPUP__VL < IPUP__VL ? left - 2 * IPUP__VL : IPUP__VL,
                  n3 = left - 3 * IPUP__VL < IPUP__VL ? left - 3 * IPUP__VL : IPUP__VL;
        ipup__v a0 = ipup__vzero(), a1 = ipup__vzero(), a2 = ipup__vzero(), a3 = ipup__vzero();
        for (kh = kh0; kh < kh1; kh++)
            for (kw = kw0; kw < kw1; kw++) {
                const float *xk = xr + kh * rx + (ptrdiff_t)kw * C + c0,
                            *wk = w + ((ptrdiff_t)kh * s->kw + kw) * C + c0;
                a0 = ipup__vadd(a0, ipup__vmul(ipup__ldn(xk, n0), ipup__ldn(wk, n0)));
                if (nv > 1)
                    a1 = ipup__vadd(a1, ipup__vmul(ipup__ldn(xk + IPUP__VL, n1),
                                                   ipup__ldn(wk + IPUP__VL, n1)));
                if (nv > 2)
                    a2 = ipup__vadd(a2, ipup__vmul(ipup__ldn(xk + 2 * IPUP__VL, n2),
                                                   ipup__ldn(wk + 2 * IPUP__VL, n2)));
                if (nv > 3)
                    a3 = ipup__vadd(a3, ipup__vmul(ipup__ldn(xk + 3 * IPUP__VL, n3),
                                                   ipup__ldn(wk + 3 * IPUP__VL, n3)));
            }
        if (b) {
            a0 = ipup__vadd(a0, ipup__ldn(b + c0, n0));
            if (nv > 1) a1 = ipup__vadd(a1, ipup__ldn(b + c0 + IPUP__VL, n1));
            if (nv > 2) a2 = ipup__vadd(a2, ipup__ldn(b + c0 + 2 * IPUP__VL, n2));
            if (nv > 3) a3 = ipup__vadd(a3, ipup__ldn(b + c0 + 3 * IPUP__VL, n3));
        }
        ipup__stn(yp + c0, n0, a0);
        if (nv > 1) ipup__stn(yp + c0 + IPUP__VL, n1, a1);
        if (nv > 2) ipup__stn(yp + c0 + 2 * IPUP__VL, n2, a2);
        if (nv > 3) ipup__stn(yp + c0 + 3 * IPUP__VL, n3, a3);
    }
}
static void ipup__dw_fwd_simd(int B, const ipup_conv2d_shape *s, const float *x, const float *w,
                              const float *b, float *y) {
    const int C = s->ci;
    int n, oh, ow, kh0, kh1, kw0, kw1;
    for (n = 0; n < B; n++)
        for (oh = 0; oh < s->oh; oh++) {
            const int ih0 = oh * s->sh - s->pad_top;
            ipup__tap_range(oh, s->sh, s->pad_top, s->kh, s->h, &kh0, &kh1);
            for (ow = 0; ow < s->ow;) {
                const int iw0 = ow * s->sw - s->pad_left;
                /* x at kernel position (0, 0) of this output (maybe outside: only taps
                   inside are read) */
                const float *xr = x + ((ptrdiff_t)((ptrdiff_t)n * s->h + ih0) * s->w + iw0) * C;
                float *yp = y + (((size_t)n * (size_t)s->oh + (size_t)oh) * (size_t)s->ow +
                                 (size_t)ow) * (size_t)C;
                if (C < 4 * IPUP__VL && ow + 4 <= s->ow && iw0 >= 0 &&
                    iw0 + 3 * s->sw + s->kw <= s->w) {
                    ipup__dw_fwd_out(s, xr, w, b, yp, kh0, kh1, 0, s->kw, 4); /* C < 4 VL */
                    ow += 4;
                    continue;
                }
                ipup__tap_range(ow, s->sw, s->pad_left, s->kw, s->w, &kw0, &kw1);
                ipup__dw_fwd_one(s, xr, w, b, yp, kh0, kh1, kw0, kw1);
                ow++;
            }
        }
}
/* depthwise backward, the portable kernel's operations and order, a vector of channels at
   a time: db += dy; per tap inside: dw += x dy, dx += dy w */
static void ipup__dw_bwd_simd(int B, const ipup_conv2d_shape *s, const float *x, const float *w,
                              const float *dy, float *dx, float *dw, float *db) {
    const int C = s->ci;
    int n, oh, ow, kh, kw, c0, kh0, kh1, kw0, kw1;
    if (dx)
        IPUPIPE_MEMSET(dx, 0,
                       (size_t)B * (size_t)s->h * (size_t)s->w * (size_t)C * sizeof(float));
    for (n = 0; n < B; n++)
        for (oh = 0; oh < s->oh; oh++) {
            ipup__tap_range(oh, s->sh, s->pad_top, s->kh, s->h, &kh0, &kh1);
            for (ow = 0; ow < s->ow; ow++) {
                const int iw0 = ow * s->sw - s->pad_left, ih0 = oh * s->sh - s->pad_top;
                const float *dyp = dy + (((size_t)n * (size_t)s->oh + (size_t)oh) *
                                         (size_t)s->ow + (size_t)ow) * (size_t)C;
                ipup__tap_range(ow, s->sw, s->pad_left, s->kw, s->w, &kw0, &kw1);
                for (c0 = 0; c0 < C; c0 += IPUP__VL) {
                    const int nc = C - c0 < IPUP__VL ? C - c0 : IPUP__VL;
                    const ipup__v d = ipup__ldn(dyp + c0, nc);
                    if (db) ipup__stn(db + c0, nc, ipup__vadd(ipup__ldn(db + c0, nc), d));
                    for (kh = kh0; kh < kh1; kh++) {
                        const size_t xo = (((size_t)n * (size_t)s->h + (size_t)(ih0 + kh)) *
                                               (size_t)s->w + (size_t)iw0) * (size_t)C + (size_t)c0;
                        const size_t wo = (size_t)kh * (size_t)s->kw * (size_t)C + (size_t)c0;
                        for (kw = kw0; kw < kw1; kw++) {
                            const size_t xk = xo + (size_t)kw * (size_t)C,
                                         wk = wo + (size_t)kw * (size_t)C;
                            if (dw)
                                ipup__stn(dw + wk, nc,
                                          ipup__vadd(ipup__ldn(dw + wk, nc),
                                                     ipup__vmul(ipup__ldn(x + xk, nc), d)));
                            if (dx)
                                ipup__stn(dx + xk, nc,
                                          ipup__vadd(ipup__ldn(dx + xk, nc),
                                                     ipup__vmul(d, ipup__ldn(w + wk, nc))));
                        }
                    }
                }
            }
        }
}
#endif /* IPUP__SIMD */

IPUPIPE_DEF void ipup_dwconv2d_fwd_f32(int B, const ipup_conv2d_shape *s,
                                       const float *x /* (B, h, w, c) */,
                                       const float *w /* (kh, kw, c) */,
                                       const float *b /* (c) or NULL */,
                                       float *y /* (B, oh, ow, c) */) {
#ifdef IPUP__SIMD
    IPUPIPE_ASSERT(ipup__conv_shape_ok(B, s) && s->co == s->ci);
    if (!ipup__conv_shape_ok(B, s)) return;
    ipup__dw_fwd_simd(B, s, x, w, b, y);
#else
    ipup_dwconv2d_fwd_f32_portable(B, s, x, w, b, y);
#endif
}

IPUPIPE_DEF void ipup_dwconv2d_bwd_f32(int B, const ipup_conv2d_shape *s,
                                       const float *x /* (B, h, w, c) */,
                                       const float *w /* (kh, kw, c) */,
                                       const float *dy /* (B, oh, ow, c) */,
                                       float *dx /* (B, h, w, c) or NULL */,
                                       float *dw /* (kh, kw, c) or NULL */,
                                       float *db /* (c) or NULL */) {
#ifdef IPUP__SIMD
    IPUPIPE_ASSERT(ipup__conv_shape_ok(B, s) && s->co == s->ci);
    if (!ipup__conv_shape_ok(B, s)) return;
    ipup__dw_bwd_simd(B, s, x, w, dy, dx, dw, db);
#else
    ipup_dwconv2d_bwd_f32_portable(B, s, x, w, dy, dx, dw, db);
#endif
}

/* >>batchnorm: batch normalisation: statistics, forward, backward, running averages */
/* Every per-channel sum over the N rows (the mean, the squares, and the backward's sum dy
   and sum dy xhat) runs as four partial sums, rows r with r mod 4 = k into s_k (each in row
   order), combined as (s0 + s1) + (s2 + s3): four independent chains, so the vector loops
   are not bound by the add latency, and the portable kernel adds in the same order (same
   bits where the compiler does not contract a * b + c). Channels go 64 at a time through
   stack arrays (portable) or a vector at a time (SIMD). */
#define IPUP__BN_CH 64
IPUPIPE_DEF void ipup_batchnorm_fwd_train_f32(int N, int C, const float *x /* (N, C) */,
                                              const float *gamma /* (C) */,
                                              const float *beta /* (C) */, float eps,
                                              float *y /* (N, C) */, float *mean /* (C) */,
                                              float *invstd /* (C) */) {
    int r, c0, c;
    float inv_n;
    IPUPIPE_ASSERT(N > 0 && C > 0);
    if (N <= 0 || C <= 0) return;
    inv_n = 1.0f / (float)N;
#ifdef IPUP__SIMD
    for (c0 = 0; c0 < C; c0 += IPUP__VL) {
        const int nc = C - c0 < IPUP__VL ? C - c0 : IPUP__VL;
        const float *xc = x + c0;
        ipup__v a[4], m, is, g, bt;
        for (c = 0; c < 4; c++) a[c] = ipup__vzero();
        for (r = 0; r + 4 <= N; r += 4)
            for (c = 0; c < 4; c++)
                a[c] = ipup__vadd(a[c], ipup__ldn(xc + (size_t)(r + c) * (size_t)C, nc));
        for (; r < N; r++)
            a[r & 3] = ipup__vadd(a[r & 3], ipup__ldn(xc + (size_t)r * (size_t)C, nc));
        m = ipup__vmul(ipup__vadd(ipup__vadd(a[0], a[1]), ipup__vadd(a[2], a[3])),
                       ipup__vset(inv_n));
        ipup__stn(mean + c0, nc, m);
        for (c = 0; c < 4; c++) a[c] = ipup__vzero();
        for (r = 0; r < N; r++) {
            const ipup__v d = ipup__vsub(ipup__ldn(xc + (size_t)r * (size_t)C, nc), m);
            a[r & 3] = ipup__vadd(a[r & 3], ipup__vmul(d, d));
        }
        ipup__stn(invstd + c0, nc, ipup__vadd(ipup__vadd(a[0], a[1]), ipup__vadd(a[2], a[3])));
        for (c = c0; c < c0 + nc; c++) invstd[c] = 1.0f / IPUPIPE_SQRTF(invstd[c] * inv_n + eps);
        is = ipup__ldn(invstd + c0, nc); g = ipup__ldn(gamma + c0, nc);
        bt = ipup__ldn(beta + c0, nc);
        for (r = 0; r < N; r++) {
            const size_t o = (size_t)r * (size_t)C + (size_t)c0;
            ipup__stn(y + o, nc, ipup__vadd(ipup__vmul(ipup__vmul(ipup__vsub(ipup__ldn(x + o, nc),
                                                                             m), is), g), bt));
        }
    }
#else
    for (c0 = 0; c0 < C; c0 += IPUP__BN_CH) {
        const int nc = C - c0 < IPUP__BN_CH ? C - c0 : IPUP__BN_CH;
        float s[4][IPUP__BN_CH];
        IPUPIPE_MEMSET(s, 0, sizeof s);
        for (r = 0; r < N; r++)
            for (c = 0; c < nc; c++) s[r & 3][c] += x[(size_t)r * (size_t)C + (size_t)(c0 + c)];
        for (c = 0; c < nc; c++) mean[c0 + c] = ((s[0][c] + s[1][c]) + (s[2][c] + s[3][c])) * inv_n;
        IPUPIPE_MEMSET(s, 0, sizeof s);
        for (r = 0; r < N; r++)
            for (c = 0; c < nc; c++) {
                const float d = x[(size_t)r * (size_t)C + (size_t)(c0 + c)] - mean[c0 + c];
                s[r & 3][c] += d * d;
            }
        for (c = 0; c < nc; c++) {
            invstd[c0 + c] = (s[0][c] + s[1][c]) + (s[2][c] + s[3][c]);
            invstd[c0 + c] = 1.0f / IPUPIPE_SQRTF(invstd[c0 + c] * inv_n + eps);
        }
    }
    for (r = 0; r < N; r++) {
        const float *xr = x + (size_t)r * (size_t)C;
        float *yr = y + (size_t)r * (size_t)C;
        for (c = 0; c < C; c++) yr[c] = (xr[c] - mean[c]) * invstd[c] * gamma[c] + beta[c];
    }
#endif
}

/* the inference mode's per-channel affine map: s = gamma / sqrt(var + eps),
   t = beta - mean s (what a fold into the layer before uses too) */
static void ipup__bn_affine(int c, const float *gamma, const float *beta, const float *run_mean,
                            const float *run_var, float eps, float *s, float *t) {
    *s = gamma[c] / IPUPIPE_SQRTF(run_var[c] + eps);
    *t = beta ? beta[c] - run_mean[c] * *s : 0.0f;
}

/* y (N, C) = x sc + sh per channel (the inference mode's forward and, sh NULL, backward),
   sc and sh from ipup__bn_affine, IPUP__BN_CH channels at a time */
static void ipup__bn_affine_apply(int N, int C, const float *gamma, const float *beta,
                                  const float *run_mean, const float *run_var, float eps,
                                  const float *x, float *y) {
    int r, c0, c;
    for (c0 = 0; c0 < C; c0 += IPUP__BN_CH) {
        const int nc = C - c0 < IPUP__BN_CH ? C - c0 : IPUP__BN_CH;
        float sc[IPUP__BN_CH], sh[IPUP__BN_CH];
        for (c = 0; c < nc; c++)
            ipup__bn_affine(c0 + c, gamma, beta, run_mean, run_var, eps, &sc[c], &sh[c]);
        for (r = 0; r < N; r++) {
            const float *xr = x + (size_t)r * (size_t)C + (size_t)c0;
            float *yr = y + (size_t)r * (size_t)C + (size_t)c0;
            c = 0;
#ifdef IPUP__SIMD
            for (; c < nc; c += IPUP__VL) {
                const int m = nc - c < IPUP__VL ? nc - c : IPUP__VL;
                ipup__v v = ipup__vmul(ipup__ldn(xr + c, m), ipup__ldn(sc + c, m));
                if (beta) v = ipup__vadd(v, ipup__ldn(sh + c, m));
                ipup__stn(yr + c, m, v);
            }
#endif
            if (beta)
                for (; c < nc; c++) yr[c] = xr[c] * sc[c] + sh[c];
            else
                for (; c < nc; c++) yr[c] = xr[c] * sc[c];
        }
    }
}

IPUPIPE_DEF void ipup_batchnorm_fwd_infer_f32(int N, int C, const float *x /* (N, C) */,
                                              const float *gamma /* (C) */,
                                              const float *beta /* (C) */,
                                              const float *run_mean /* (C) */,
                                              const float *run_var /* (C) */, float eps,
                                              float *y /* (N, C) */) {
    IPUPIPE_ASSERT(N >= 0 && C > 0 && beta);
    if (N <= 0 || C <= 0 || !beta) return;
    ipup__bn_affine_apply(N, C, gamma, beta, run_mean, run_var, eps, x, y);
}

/* the backward's sums of one vector of channels c0.. (nc lanes), added into dgamma and
   dbeta, then dx; the portable kernel's operations and order */
#ifdef IPUP__SIMD
static void ipup__bn_bwd_simd(int N, int C, int c0, int nc, const float *x, const float *gamma,
                              const float *mean, const float *invstd, const float *dy, float *dx,
                              float *dgamma, float *dbeta) {
    const ipup__v m = ipup__ldn(mean + c0, nc), is = ipup__ldn(invstd + c0, nc);
    ipup__v sd[4], sx[4], sdy, sdyx, k;
    int r, i;
    for (i = 0; i < 4; i++) { sd[i] = ipup__vzero(); sx[i] = ipup__vzero(); }
    for (r = 0; r < N; r++) {
        const size_t o = (size_t)r * (size_t)C + (size_t)c0;
        const ipup__v d = ipup__ldn(dy + o, nc),
                      xh = ipup__vmul(ipup__vsub(ipup__ldn(x + o, nc), m), is);
        sd[r & 3] = ipup__vadd(sd[r & 3], d);
        sx[r & 3] = ipup__vadd(sx[r & 3], ipup__vmul(d, xh));
    }
    sdy = ipup__vadd(ipup__vadd(sd[0], sd[1]), ipup__vadd(sd[2], sd[3]));
    sdyx = ipup__vadd(ipup__vadd(sx[0], sx[1]), ipup__vadd(sx[2], sx[3]));
    if (dgamma) ipup__stn(dgamma + c0, nc, ipup__vadd(ipup__ldn(dgamma + c0, nc), sdyx));
    if (dbeta) ipup__stn(dbeta + c0, nc, ipup__vadd(ipup__ldn(dbeta + c0, nc), sdy));
    if (!dx) return;
    k = ipup__vmul(ipup__ldn(gamma + c0, nc), is);
    sdy = ipup__vdiv(sdy, ipup__vset((float)N));
    sdyx = ipup__vdiv(sdyx, ipup__vset((float)N));
    for (r = 0; r < N; r++) {
        const size_t o = (size_t)r * (size_t)C + (size_t)c0;
        const ipup__v d = ipup__ldn(dy + o, nc),
                      xh = ipup__vmul(ipup__vsub(ipup__ldn(x + o, nc), m), is);
        ipup__stn(dx + o, nc, ipup__vmul(k, ipup__vsub(ipup__vsub(d, sdy), ipup__vmul(xh, sdyx))));
    }
}
#endif

IPUPIPE_DEF void ipup_batchnorm_bwd_f32(int N, int C, const float *x /* (N, C) */,
                                        const float *gamma /* (C) */, const float *mean /* (C) */,
                                        const float *invstd /* (C) */,
                                        const float *dy /* (N, C) */,
                                        float *dx /* (N, C) or NULL */,
                                        float *dgamma /* (C) or NULL */,
                                        float *dbeta /* (C) or NULL */) {
    int r, c0, c;
    IPUPIPE_ASSERT(N > 0 && C > 0);
    if (N <= 0 || C <= 0) return;
#ifdef IPUP__SIMD
    for (c0 = 0; c0 < C; c0 += IPUP__VL)
        ipup__bn_bwd_simd(N, C, c0, C - c0 < IPUP__VL ? C - c0 : IPUP__VL, x, gamma, mean, invstd,
                          dy, dx, dgamma, dbeta);
    (void)r; (void)c;
#else
    for (c0 = 0; c0 < C; c0 += IPUP__BN_CH) { /* per-channel sums of 64 channels at a time */
        const int nc = C - c0 < IPUP__BN_CH ? C - c0 : IPUP__BN_CH;
        float sd[4][IPUP__BN_CH], sx[4][IPUP__BN_CH], sdy[IPUP__BN_CH], sdyx[IPUP__BN_CH],
            k[IPUP__BN_CH];
        IPUPIPE_MEMSET(sd, 0, sizeof sd);
        IPUPIPE_MEMSET(sx, 0, sizeof sx);
        for (r = 0; r < N; r++) {
            const size_t o = (size_t)r * (size_t)C + (size_t)c0;
            for (c = 0; c < nc; c++) {
                const float xh = (x[o + (size_t)c] - mean[c0 + c]) * invstd[c0 + c];
                sd[r & 3][c] += dy[o + (size_t)c];
                sx[r & 3][c] += dy[o + (size_t)c] * xh;
            }
        }
        for (c = 0; c < nc; c++) {
            sdy[c] = (sd[0][c] + sd[1][c]) + (sd[2][c] + sd[3][c]);
            sdyx[c] = (sx[0][c] + sx[1][c]) + (sx[2][c] + sx[3][c]);
            if (dgamma) dgamma[c0 + c] += sdyx[c];
            if (dbeta) dbeta[c0 + c] += sdy[c];
        }
        if (!dx) continue;
        /* dx = k (dy - sdy / N - xhat sdyx / N), k = gamma invstd */
        for (c = 0; c < nc; c++) {
            k[c] = gamma[c0 + c] * invstd[c0 + c];
            sdy[c] /= (float)N;
            sdyx[c] /= (float)N;
        }
        for (r = 0; r < N; r++) {
            const size_t o = (size_t)r * (size_t)C + (size_t)c0;
            for (c = 0; c < nc; c++) {
                const float xh = (x[o + (size_t)c] - mean[c0 + c]) * invstd[c0 + c];
                dx[o + (size_t)c] = k[c] * (dy[o + (size_t)c] - sdy[c] - xh * sdyx[c]);
            }
        }
    }
#endif
}

IPUPIPE_DEF void ipup_batchnorm_bwd_infer_f32(int N, int C, const float *gamma /* (C) */,
                                              const float *run_var /* (C) */, float eps,
                                              const float *dy /* (N, C) */,
                                              float *dx /* (N, C) */) {
    IPUPIPE_ASSERT(N >= 0 && C > 0);
    if (N <= 0 || C <= 0) return;
    ipup__bn_affine_apply(N, C, gamma, NULL, NULL, run_var, eps, dy, dx);
}

/* Keras BatchNormalization._assign_moving_average: variable -= (variable - value) *
   (1 - momentum), skipped for an empty batch (keras/layers/normalization/
   batch_normalization.py; its docs: moving = moving * momentum + batch * (1 - momentum)) */
IPUPIPE_DEF void ipup_batchnorm_running_f32(int C, int N, float momentum,
                                            const float *mean /* (C) */,
                                            const float *invstd /* (C) */, float eps,
                                            float *run_mean /* (C) */,
                                            float *run_var /* (C) */) {
    const float decay = 1.0f - momentum;
    int c;
    if (N <= 0 || C <= 0) return;
    for (c = 0; c < C; c++) {
        const float var = 1.0f / (invstd[c] * invstd[c]) - eps;
        run_mean[c] -= (run_mean[c] - mean[c]) * decay;
        run_var[c] -= (run_var[c] - var) * decay;
    }
}

/* >>avgpool: average pooling, forward and backward */
static int ipup__pool_ok(int B, int H, int W, int C, int kh, int kw, int sh, int sw) {
    return B >= 0 && C > 0 && kh >= 1 && kw >= 1 && kh <= H && kw <= W && sh >= 1 && sw >= 1;
}

#ifdef IPUP__SIMD
/* average pool, vector loops: per output, up to four vectors of channels summed at once
   (four independent chains) over the taps in row order, then divided by kh kw: the
   portable kernel's operations lane by lane */
static void ipup__avgpool_fwd_simd(int B, int H, int W, int C, int kh, int kw, int sh, int sw,
                                   const float *x, float *y) {
    const int OH = (H - kh) / sh + 1, OW = (W - kw) / sw + 1;
    const ipup__v area = ipup__vset((float)(kh * kw));
    int n, oh, ow, i, j, c0, v;
    for (n = 0; n < B; n++)
        for (oh = 0; oh < OH; oh++)
            for (ow = 0; ow < OW; ow++) {
                float *yp = y + (((size_t)n * (size_t)OH + (size_t)oh) * (size_t)OW +
                                 (size_t)ow) * (size_t)C;
                for (c0 = 0; c0 < C; c0 += 4 * IPUP__VL) {
                    ipup__v acc[4];
                    int nv = (C - c0 + IPUP__VL - 1) / IPUP__VL, lanes[4];
                    if (nv > 4) nv = 4;
                    for (v = 0; v < nv; v++) {
                        const int left = C - c0 - v * IPUP__VL;
                        lanes[v] = left < IPUP__VL ? left : IPUP__VL;
                        acc[v] = ipup__vzero();
                    }
                    for (i = 0; i < kh; i++)
                        for (j = 0; j < kw; j++) {
                            const float *xp = x + (((size_t)n * (size_t)H + (size_t)(oh * sh + i)) *
                                                       (size_t)W + (size_t)(ow * sw + j)) *
                                                      (size_t)C + (size_t)c0;
                            for (v = 0; v < nv; v++)
                                acc[v] = ipup__vadd(acc[v], ipup__ldn(xp + v * IPUP__VL, lanes[v]));
                        }
                    for (v = 0; v < nv; v++)
                        ipup__stn(yp + c0 + v * IPUP__VL, lanes[v], ipup__vdiv(acc[v], area));
                }
            }
}
static void ipup__avgpool_bwd_simd(int B, int H, int W, int C, int kh, int kw, int sh, int sw,
                                   const float *dy, float *dx) {
    const int OH = (H - kh) / sh + 1, OW = (W - kw) / sw + 1;
    const ipup__v area = ipup__vset((float)(kh * kw));
    int n, oh, ow, i, j, c0;
    for (n = 0; n < B; n++)
        for (oh = 0; oh < OH; oh++)
            for (ow = 0; ow < OW; ow++) {
                const float *dp = dy + (((size_t)n * (size_t)OH + (size_t)oh) * (size_t)OW +
                                        (size_t)ow) * (size_t)C;
                for (c0 = 0; c0 < C; c0 += IPUP__VL) {
                    const int nc = C - c0 < IPUP__VL ? C - c0 : IPUP__VL;
                    const ipup__v g = ipup__vdiv(ipup__ldn(dp + c0, nc), area);
                    for (i = 0; i < kh; i++)
                        for (j = 0; j < kw; j++) {
                            float *xp = dx + (((size_t)n * (size_t)H + (size_t)(oh * sh + i)) *
                                                  (size_t)W + (size_t)(ow * sw + j)) *
                                                 (size_t)C + (size_t)c0;
                            ipup__stn(xp, nc, ipup__vadd(ipup__ldn(xp, nc), g));
                        }
                }
            }
}
#endif /* IPUP__SIMD */

IPUPIPE_DEF void ipup_avgpool_fwd_f32(int B, int H, int W, int C, int kh, int kw, int sh, int sw,
                                      const float *x /* (B, H, W, C) */,
                                      float *y /* (B, OH, OW, C) */) {
    int n, oh, ow, i, j, OH, OW;
    size_t c, Cz = (size_t)C;
    float area;
    IPUPIPE_ASSERT(ipup__pool_ok(B, H, W, C, kh, kw, sh, sw));
    if (!ipup__pool_ok(B, H, W, C, kh, kw, sh, sw)) return;
#ifdef IPUP__SIMD
    ipup__avgpool_fwd_simd(B, H, W, C, kh, kw, sh, sw, x, y);
    (void)n; (void)oh; (void)ow; (void)i; (void)j; (void)c; (void)OH; (void)OW; (void)area;
    (void)Cz;
    return;
#endif
    OH = (H - kh) / sh + 1; OW = (W - kw) / sw + 1;
    area = (float)(kh * kw);
    for (n = 0; n < B; n++)
        for (oh = 0; oh < OH; oh++)
            for (ow = 0; ow < OW; ow++) {
                float *yp = y + (((size_t)n * (size_t)OH + (size_t)oh) * (size_t)OW +
                                 (size_t)ow) * Cz;
                for (c = 0; c < Cz; c++) yp[c] = 0.0f;
                for (i = 0; i < kh; i++)
                    for (j = 0; j < kw; j++) {
                        const float *xp = x + (((size_t)n * (size_t)H +
                                                (size_t)(oh * sh + i)) * (size_t)W +
                                               (size_t)(ow * sw + j)) * Cz;
                        for (c = 0; c < Cz; c++) yp[c] += xp[c];
                    }
                for (c = 0; c < Cz; c++) yp[c] /= area;
            }
}

IPUPIPE_DEF void ipup_avgpool_bwd_f32(int B, int H, int W, int C, int kh, int kw, int sh, int sw,
                                      const float *dy /* (B, OH, OW, C) */,
                                      float *dx /* (B, H, W, C) */) {
    int n, oh, ow, i, j, OH, OW;
    size_t c, Cz = (size_t)C;
    float area;
    IPUPIPE_ASSERT(ipup__pool_ok(B, H, W, C, kh, kw, sh, sw));
    if (!ipup__pool_ok(B, H, W, C, kh, kw, sh, sw)) return;
    IPUPIPE_MEMSET(dx, 0, (size_t)B * (size_t)H * (size_t)W * Cz * sizeof(float));
#ifdef IPUP__SIMD
    ipup__avgpool_bwd_simd(B, H, W, C, kh, kw, sh, sw, dy, dx);
    (void)n; (void)oh; (void)ow; (void)i; (void)j; (void)c; (void)OH; (void)OW; (void)area;
    return;
#endif
    OH = (H - kh) / sh + 1; OW = (W - kw) / sw + 1;
    area = (float)(kh * kw);
    for (n = 0; n < B; n++)
        for (oh = 0; oh < OH; oh++)
            for (ow = 0; ow < OW; ow++) {
                const float *dp = dy + (((size_t)n * (size_t)OH + (size_t)oh) * (size_t)OW +
                                        (size_t)ow) * Cz;
                for (i = 0; i < kh; i++)
                    for (j = 0; j < kw; j++) {
                        float *xp = dx + (((size_t)n * (size_t)H + (size_t)(oh * sh + i)) *
                                              (size_t)W + (size_t)(ow * sw + j)) * Cz;
                        for (c = 0; c < Cz; c++) xp[c] += dp[c] / area;
                    }
            }
}

/* >>activations: sigmoid, tanh, leaky ReLU, hard-swish, binary cross-entropy on logits */
/* sigmoid by the header's e^x (ipup__expf: the argument clamped, so no overflow); NaN
   passes through */
static float ipup__sigmoid_s(float v) {
    return v != v ? v : 1.0f / (1.0f + ipup__expf(-v));
}
/* Cephes tanhf (S. L. Moshier, Cephes Math Library 2.2, tanhf.c): its odd polynomial below
   0.625, 1 - 2 / (e^2|x| + 1) above; e^2|x| clamps at e^88, where the result is 1 */
#define IPUP__TANH_P0 (-5.70498872745E-3f)
#define IPUP__TANH_P1 2.06390887954E-2f
#define IPUP__TANH_P2 (-5.37397155531E-2f)
#define IPUP__TANH_P3 1.33314422036E-1f
#define IPUP__TANH_P4 (-3.33332819422E-1f)
static float ipup__tanh_s(float v) {
    const float a = v < 0.0f ? -v : v;
    float r;
    if (v != v) return v;
    if (a < 0.625f) {
        const float z = v * v;
        float p = IPUP__TANH_P0;
        p = p * z + IPUP__TANH_P1;
        p = p * z + IPUP__TANH_P2;
        p = p * z + IPUP__TANH_P3;
        p = p * z + IPUP__TANH_P4;
        return p * z * v + v;
    }
    r = 1.0f - 2.0f / (ipup__expf(a + a) + 1.0f);
    return v < 0.0f ? -r : r;
}
static float ipup__hswish_s(float v) {
    float r = v + 3.0f;
    r = r > 0.0f ? r : 0.0f;
    r = r < 6.0f ? r : 6.0f;
    return v * r / 6.0f;
}
static float ipup__hswish_d(float v) {
    return v <= -3.0f ? 0.0f : v >= 3.0f ? 1.0f : (2.0f * v + 3.0f) / 6.0f;
}

#ifdef IPUP__SIMD
/* t where a PRED b, else f, lane by lane (PRED a _CMP_ constant) */
#if defined(IPUP_KERNELS_AVX512)
#define IPUP__VSEL(a, b, PRED, t, f)                                                            \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask((a), (b), PRED), (f), (t))
#else
#define IPUP__VSEL(a, b, PRED, t, f) _mm256_blendv_ps((f), (t), _mm256_cmp_ps((a), (b), PRED))
#endif
/* The scalar functions above, operation for operation on vectors (so the same bits), NaN
   lanes given back unchanged as the scalar code does; each returns the first index left
   for the scalar tail. -v is v * -1 (exact, the sign of zero included). */
static inline ipup__v ipup__vsigmoid(ipup__v v) {
    const ipup__v s = ipup__vdiv(ipup__vset(1.0f),
                                 ipup__vadd(ipup__vset(1.0f),
                                            ipup__vexp(ipup__vmul(v, ipup__vset(-1.0f)))));
    return IPUP__VSEL(v, v, _CMP_UNORD_Q, v, s);
}
static inline ipup__v ipup__vtanh(ipup__v v) {
    const ipup__v neg = ipup__vmul(v, ipup__vset(-1.0f)), z = ipup__vmul(v, v);
    const ipup__v a = IPUP__VSEL(v, ipup__vzero(), _CMP_LT_OQ, neg, v);
    ipup__v p = ipup__vset(IPUP__TANH_P0), r;
    p = ipup__vadd(ipup__vmul(p, z), ipup__vset(IPUP__TANH_P1));
    p = ipup__vadd(ipup__vmul(p, z), ipup__vset(IPUP__TANH_P2));
    p = ipup__vadd(ipup__vmul(p, z), ipup__vset(IPUP__TANH_P3));
    p = ipup__vadd(ipup__vmul(p, z), ipup__vset(IPUP__TANH_P4));
    p = ipup__vadd(ipup__vmul(ipup__vmul(p, z), v), v);
    r = ipup__vsub(ipup__vset(1.0f),
                   ipup__vdiv(ipup__vset(2.0f),
                              ipup__vadd(ipup__vexp(ipup__vadd(a, a)), ipup__vset(1.0f))));
    r = IPUP__VSEL(v, ipup__vzero(), _CMP_LT_OQ, ipup__vmul(r, ipup__vset(-1.0f)), r);
    r = IPUP__VSEL(a, ipup__vset(0.625f), _CMP_LT_OQ, p, r);
    return IPUP__VSEL(v, v, _CMP_UNORD_Q, v, r);
}
static inline ipup__v ipup__vhswish(ipup__v v) {
    ipup__v r = ipup__vmax(ipup__vadd(v, ipup__vset(3.0f)), ipup__vzero()); /* r > 0 ? r : 0 */
    r = ipup__vmin(r, ipup__vset(6.0f));                                    /* r < 6 ? r : 6 */
    return ipup__vdiv(ipup__vmul(v, r), ipup__vset(6.0f));
}
static inline ipup__v ipup__vhswish_d(ipup__v v) {
    const ipup__v mid = ipup__vdiv(ipup__vadd(ipup__vmul(ipup__vset(2.0f), v), ipup__vset(3.0f)),
                                   ipup__vset(6.0f));
    const ipup__v hi = IPUP__VSEL(v, ipup__vset(3.0f), _CMP_GE_OQ, ipup__vset(1.0f), mid);
    return IPUP__VSEL(v, ipup__vset(-3.0f), _CMP_LE_OQ, ipup__vzero(), hi);
}
/* y = f(x) or dx = dy * f'(.) over whole vectors: kind 0 sigmoid, 1 tanh, 2 hard-swish,
   3 sigmoid', 4 tanh', 5 hard-swish', 6 leaky, 7 leaky' (alpha) */
static int ipup__act_simd(int kind, int n, float alpha, const float *x, const float *dy,
                          float *y) {
    const ipup__v al = ipup__vset(alpha), one = ipup__vset(1.0f), zero = ipup__vzero();
    int i;
    for (i = 0; i + IPUP__VL <= n; i += IPUP__VL) {
        const ipup__v v = ipup__vld(x + i);
        ipup__v o;
        switch (kind) {
        case 0: o = ipup__vsigmoid(v); break;
        case 1: o = ipup__vtanh(v); break;
        case 2: o = ipup__vhswish(v); break;
        case 3: o = ipup__vmul(ipup__vld(dy + i), ipup__vmul(v, ipup__vsub(one, v))); break;
        case 4: o = ipup__vmul(ipup__vld(dy + i), ipup__vsub(one, ipup__vmul(v, v))); break;
        case 5: o = ipup__vmul(ipup__vld(dy + i), ipup__vhswish_d(v)); break;
        case 6: o = IPUP__VSEL(v, zero, _CMP_GT_OQ, v, ipup__vmul(al, v)); break;
        default: {
            const ipup__v d = ipup__vld(dy + i);
            o = IPUP__VSEL(v, zero, _CMP_GT_OQ, d, ipup__vmul(al, d));
        }
        }
        ipup__vst(y + i, o);
    }
    return i;
}
#define IPUP__ACT(kind, n, alpha, x, dy, y) ipup__act_simd((kind), (n), (alpha), (x), (dy), (y))
#else
#define IPUP__ACT(kind, n, alpha, x, dy, y) 0
#endif

IPUPIPE_DEF void ipup_sigmoid_fwd_f32(int n, const float *x /* (n) */, float *y /* (n) */) {
    int i = IPUP__ACT(0, n, 0.0f, x, NULL, y);
    for (; i < n; i++) y[i] = ipup__sigmoid_s(x[i]);
}
IPUPIPE_DEF void ipup_sigmoid_bwd_f32(int n, const float *y /* (n) */, const float *dy /* (n) */,
                                      float *dx /* (n) */) {
    int i = IPUP__ACT(3, n, 0.0f, y, dy, dx);
    for (; i < n; i++) dx[i] = dy[i] * (y[i] * (1.0f - y[i]));
}
IPUPIPE_DEF void ipup_tanh_fwd_f32(int n, const float *x /* (n) */, float *y /* (n) */) {
    int i = IPUP__ACT(1, n, 0.0f, x, NULL, y);
    for (; i < n; i++) y[i] = ipup__tanh_s(x[i]);
}
IPUPIPE_DEF void ipup_tanh_bwd_f32(int n, const float *y /* (n) */, const float *dy /* (n) */,
                                   float *dx /* (n) */) {
    int i = IPUP__ACT(4, n, 0.0f, y, dy, dx);
    for (; i < n; i++) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
}
IPUPIPE_DEF void ipup_leaky_relu_fwd_f32(int n, float alpha, const float *x /* (n) */,
                                         float *y /* (n) */) {
    int i = IPUP__ACT(6, n, alpha, x, NULL, y);
    for (; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : alpha * x[i];
}
IPUPIPE_DEF void ipup_leaky_relu_bwd_f32(int n, float alpha, const float *x /* (n) */,
                                         const float *dy /* (n) */, float *dx /* (n) */) {
    int i = IPUP__ACT(7, n, alpha, x, dy, dx);
    for (; i < n; i++) dx[i] = x[i] > 0.0f ? dy[i] : alpha * dy[i];
}
IPUPIPE_DEF void ipup_hard_swish_fwd_f32(int n, const float *x /* (n) */, float *y /* (n) */) {
    int i = IPUP__ACT(2, n, 0.0f, x, NULL, y);
    for (; i < n; i++) y[i] = ipup__hswish_s(x[i]);
}
IPUPIPE_DEF void ipup_hard_swish_bwd_f32(int n, const float *x /* (n) */,
                                         const float *dy /* (n) */, float *dx /* (n) */) {
    int i = IPUP__ACT(5, n, 0.0f, x, dy, dx);
    for (; i < n; i++) dx[i] = dy[i] * ipup__hswish_d(x[i]);
}

/* TensorFlow, tf.nn.sigmoid_cross_entropy_with_logits (its documented stable form):
   max(z, 0) - z t + log(1 + exp(-|z|)) */
IPUPIPE_DEF float ipup_bce_logits_f32(int B, int N, const float *z /* (B, N) */,
                                      const float *t /* (B, N) */,
                                      float *dz /* (B, N) or NULL */) {
    int r, c;
    float total = 0.0f, count, inv;
    IPUPIPE_ASSERT(B > 0 && N > 0);
    if (B <= 0 || N <= 0) return 0.0f;
    count = (float)((int64_t)B * (int64_t)N);
    inv = 1.0f / count;
    for (r = 0; r < B; r++) {
        const size_t o = (size_t)r * (size_t)N;
        float row = 0.0f;
        for (c = 0; c < N; c++) {
            const float v = z[o + (size_t)c], tv = t[o + (size_t)c];
            const float a = v < 0.0f ? -v : v, e = ipup__expf(-a);
            row += (v > 0.0f ? v : 0.0f) - v * tv + IPUPIPE_LOGF(1.0f + e);
            if (dz) /* sigmoid(v) from e = e^-|v|: 1 / (1 + e) or e / (1 + e) */
                dz[o + (size_t)c] = ((v >= 0.0f ? 1.0f : e) / (1.0f + e) - tv) * inv;
        }
        total += row;
    }
    return total / count;
}

#ifdef __cplusplus
}
#endif
#ifdef IPUP__GCC105593
#pragma GCC diagnostic pop
#endif
#endif /* IPUPIPE_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
MIT License
Copyright (c) 2026 the ipupipe authors
Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:
The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
