/* mnist_feed.h - the data side of an MNIST training run: the two splits in host
 * memory, the epoch's permutation and the emulator's infeed callback (mt_infeed).
 * MIT licence.
 *
 * mt_feed_probe checks the IDX files and applies the limits, mt_feed_alloc allocates
 * the images (the training images as bytes, scaled per sample as they are fed: a quarter
 * of the memory traffic), labels and permutation (the only allocation, at startup), mt_feed_load
 * reads them, mt_feed_free releases them. During training nothing allocates: the
 * trainer sets the epoch (mt_feed_epoch: the shuffle of that epoch) and the emulator
 * pulls micro-batches through mt_infeed.
 *
 * Determinism: the shuffle of epoch e is a Fisher-Yates permutation driven by the
 * counter RNG of ipupipe_kernels.h keyed by (seed, MT_SHUFFLE_TAG + e, i); the
 * augmentation shift of the sample at position p of epoch e by (seed,
 * MT_AUGMENT_TAG + e, p). So a run resumed after epoch k feeds the bits of an
 * uninterrupted run.
 *
 * `--data synthetic` (mt_synth_fill) makes the data instead of reading files, for any
 * input shape (the MLPerf Tiny networks): MT_SYN_TRAIN training and MT_SYN_TEST test
 * samples (or the limits), the same bits on every run (keyed by MT_SYN_TAG, not by
 * --seed). A classifier's sample of class y (= index mod classes) is a plane wave
 * 0.5 + 0.3 cos(2 pi (fy r / H + fx c / W) + phase) with the class's frequencies
 * (fy, fx) = (1 + y mod 4, y / 4 mod 3), a random phase per sample (so a position-free
 * feature, as global pooling keeps, tells the class) and uniform noise of +-0.2 per
 * value, the same in every channel. An autoencoder's normal sample is 0.5 + two random
 * multiples of the waves of 3 and 7 periods over the row (a 4-dimensional subspace)
 * plus noise of +-0.02; every second test sample is an anomaly: a wave of 19 periods
 * added (yte 1 for those, 0 for normal ones). Values are stored as bytes (x 255), as
 * the IDX files are.
 */
#ifndef MNIST_FEED_H
#define MNIST_FEED_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ipupipe.h"
#include "mnist_data.h"
#include "mnist_models.h"

#define MT_SHUFFLE_TAG UINT64_C(0x5348554646000000) /* "SHUFF" */
#define MT_AUGMENT_TAG UINT64_C(0x4155474d00000000) /* "AUGM" */
#define MT_PIXELS (MNIST_IMG * MNIST_IMG)
#ifndef MT_FEED_DIGEST
/* 1: mt_feed_load hashes what it reads into mt_feed.digest (mnist-train-mpi compares
   them across the ranks); 0: no hashing */
#define MT_FEED_DIGEST 0
#endif

#define MT_SYN_TRAIN 8192
#define MT_SYN_TEST 2048
#define MT_SYN_TAG UINT64_C(0x53594e5448000000) /* "SYNTH" */

typedef struct {
    mnist_info tr, te; /* counts after the limits */
    int32_t row;       /* values per sample: in_h * in_w * in_c (MT_PIXELS for the MNIST files) */
    int32_t in_h, in_w, in_c;
    int32_t classes;   /* softmax classes; 0: an autoencoder (the infeed gives x as targets) */
    int synthetic;     /* --data synthetic: mt_synth_fill instead of the files */
    unsigned char *xtr; /* (count, row) training pixels as the file's bytes (scaled in mt_infeed) */
    float *xte;         /* (count, row) test pixels in [0, 1] */
    int32_t *ytr, *yte;
    int32_t *perm;     /* the current epoch's order of the training images */
    uint64_t seed;
    int augment;       /* shift by up to this many pixels (0: none) */
    int epoch;
    int64_t samples_per_step, epoch_step0; /* the epoch's first step */
    /* MT_FEED_DIGEST: the training images, training labels, test images, test labels
       files, each hashed as mnist_load_digest_into does: its IDX header and the items read */
    uint64_t digest[4];
} mt_feed;

/* Shapes of the two splits of dir, cut to the limits (0: all). err gets the reason.
   f->row, in_h.. and synthetic are set. */
static int mt_feed_probe(mt_feed *f, const char *dir, int train_limit, int test_limit, char *err) {
    if (f->synthetic) {
        f->tr.count = train_limit ? train_limit : MT_SYN_TRAIN;
        f->te.count = test_limit ? test_limit : MT_SYN_TEST;
        f->tr.rows = f->te.rows = f->in_h;
        f->tr.cols = f->te.cols = f->in_w * f->in_c;
        return 0;
    }
    if (f->row != MT_PIXELS) {
        ipup_snprintf(err, EX_ERR_LEN, "%s: the model takes %dx%dx%d inputs, the IDX files hold 28x28 images; "
                      "train it on --data synthetic", dir, f->in_h, f->in_w, f->in_c);
        return -1;
    }
    if (mnist_probe(dir, "train", &f->tr, err) < 0 || mnist_probe(dir, "test", &f->te, err) < 0) return -1;
    if (f->tr.rows != MNIST_IMG || f->tr.cols != MNIST_IMG || f->te.rows != MNIST_IMG || f->te.cols != MNIST_IMG) {
        int bad_tr = f->tr.rows != MNIST_IMG || f->tr.cols != MNIST_IMG;
        const mnist_info *b = bad_tr ? &f->tr : &f->te;
        ipup_snprintf(err, EX_ERR_LEN, "%s: the %s images are %dx%d (rows x cols), the models take 28x28", dir,
                      bad_tr ? "training" : "test", b->rows, b->cols);
        return -1;
    }
    if (train_limit && train_limit < f->tr.count) f->tr.count = train_limit;
    if (test_limit && test_limit < f->te.count) f->te.count = test_limit;
    return 0;
}

/* Bytes of the host buffers of the probed counts (images, labels, permutation). */
static double mt_feed_bytes(const mt_feed *f) {
    return (double)f->tr.count * ((double)f->row + sizeof(int32_t)) +
           (double)f->te.count * ((double)f->row * sizeof(float) + sizeof(int32_t)) +
           (double)f->tr.count * sizeof(int32_t);
}

/* The host buffers of the probed counts; -1 when the allocator refuses one. */
/* n bytes (rounded up to 2 MB) aligned to 2 MB, which Linux backs with huge pages when
   asked (madvise MADV_HUGEPAGE; its feature macros: _DEFAULT_SOURCE, which the trainer's
   programs define): the infeed reads whole images in a random order, so with 4 KB pages
   nearly every image is a TLB miss, and the pools are a few MB walked every step.
   Released with free(). */
static void *mt_alloc_huge(size_t n) {
    void *p = NULL;
    size_t al = (size_t)2 << 20;
    if (posix_memalign(&p, al, (n + al - 1) / al * al) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, (n + al - 1) / al * al, MADV_HUGEPAGE);
#endif
    return p;
}
static int mt_feed_alloc(mt_feed *f) {
    f->xtr = (unsigned char *)mt_alloc_huge((size_t)f->tr.count * (size_t)f->row);
    f->ytr = (int32_t *)malloc((size_t)f->tr.count * sizeof(int32_t));
    f->xte = (float *)malloc((size_t)f->te.count * (size_t)f->row * sizeof(float));
    f->yte = (int32_t *)malloc((size_t)f->te.count * sizeof(int32_t));
    f->perm = (int32_t *)malloc((size_t)f->tr.count * sizeof(int32_t));
    return f->xtr && f->ytr && f->xte && f->yte && f->perm ? 0 : -1;
}

/* Reads the images and labels of both splits into the buffers; err gets the reason. */
/* The buffers were sized from mt_feed_probe: the loads get that room (count, 28x28)
 * and refuse files that changed since (mnist_load_into). */
static void mt_synth_fill(mt_feed *f);
static int mt_feed_load(mt_feed *f, const char *dir, char *err) {
    mnist_info tr = f->tr, te = f->te;
    if (f->synthetic) {
        mt_synth_fill(f);
        return 0;
    }
#if MT_FEED_DIGEST
    if (mnist_load_digest_into(dir, "train", tr.count, &tr, NULL, f->xtr, f->ytr, &f->tr, f->digest, err) < 0 ||
        mnist_load_digest_into(dir, "test", te.count, &te, f->xte, NULL, f->yte, &f->te, f->digest + 2, err) < 0)
        return -1;
#else
    if (mnist_load_bytes_into(dir, "train", tr.count, &tr, f->xtr, f->ytr, &f->tr, err) < 0 ||
        mnist_load_into(dir, "test", te.count, &te, f->xte, f->yte, &f->te, err) < 0)
        return -1;
#endif
    return 0;
}

/* --synthetic-data (the TF user guide's synthetic-data mode): no dataset is read; the
 * counts are the limits, else MNIST's 60,000 and 10,000 images of 28x28. */
#define MT_SYNTH_TAG UINT64_C(0x53594e5448000000) /* "SYNTH" */
static void mt_feed_synthetic_probe(mt_feed *f, int train_limit, int test_limit) {
    f->tr.rows = f->tr.cols = f->te.rows = f->te.cols = MNIST_IMG;
    f->tr.count = train_limit ? train_limit : 60000;
    f->te.count = test_limit ? test_limit : 10000;
}
/* Random pixels and labels, made once in host memory (after mt_feed_alloc) from the
 * counter RNG keyed by (seed, MT_SYNTH_TAG + split): the infeed then copies them as it
 * copies MNIST's. */
static void mt_feed_synthetic(mt_feed *f) {
    size_t i, n = (size_t)f->tr.count * MT_PIXELS;
    for (i = 0; i < n; i += 8) {
        uint64_t v = ipup_rng_u64(f->seed, MT_SYNTH_TAG, (uint64_t)i);
        size_t k;
        for (k = 0; k < 8 && i + k < n; k++) f->xtr[i + k] = (unsigned char)(v >> (8 * k));
    }
    for (i = 0; i < (size_t)f->te.count * MT_PIXELS; i++)
        f->xte[i] = (float)(ipup_rng_u64(f->seed, MT_SYNTH_TAG + 1, (uint64_t)i) & 255u) / 255.0f;
    for (i = 0; i < (size_t)f->tr.count; i++)
        f->ytr[i] = (int32_t)ipup_rng_below(f->seed, MT_SYNTH_TAG + 2, (uint64_t)i, 10);
    for (i = 0; i < (size_t)f->te.count; i++)
        f->yte[i] = (int32_t)ipup_rng_below(f->seed, MT_SYNTH_TAG + 3, (uint64_t)i, 10);
}

static void mt_feed_free(mt_feed *f) {
    free(f->perm);
    free(f->yte);
    free(f->xte);
    free(f->ytr);
    free(f->xtr);
    f->perm = f->ytr = f->yte = NULL;
    f->xtr = NULL;
    f->xte = NULL;
}

/* Fisher-Yates keyed by (seed, epoch): the permutation of epoch e. */
static void mt_shuffle(mt_feed *f, int epoch) {
    int32_t i, n = f->tr.count;
    for (i = 0; i < n; i++) f->perm[i] = i;
    for (i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)ipup_rng_below(f->seed, MT_SHUFFLE_TAG + (uint64_t)epoch, (uint64_t)i, (uint64_t)i + 1);
        int32_t t = f->perm[i];
        f->perm[i] = f->perm[j];
        f->perm[j] = t;
    }
}

/* Starts epoch e, whose first step is step0: its permutation. */
static void mt_feed_epoch(mt_feed *f, int epoch, int64_t step0) {
    f->epoch = epoch;
    mt_shuffle(f, epoch);
    f->epoch_step0 = step0;
}

/* src shifted by (dx, dy) pixels into dst, zero fill. dst[k] = src[k - off] with off =
   dy * 28 + dx is one copy of the whole image; what it brings in from outside the image
   (rows above or below: k - off outside the image, zeroed around the copy; columns that
   wrapped into the next or previous row) is zeroed after it. */
static void mt_shift(const float *src, int dx, int dy, float *dst) {
    const int off = dy * MNIST_IMG + dx, lo = off > 0 ? off : 0, hi = off < 0 ? MT_PIXELS + off : MT_PIXELS;
    const int c0 = dx > 0 ? 0 : (MNIST_IMG + dx > 0 ? MNIST_IMG + dx : 0); /* columns c0..c1-1 have no source */
    const int c1 = dx > 0 ? (dx < MNIST_IMG ? dx : MNIST_IMG) : MNIST_IMG;
    int yy, xx;
    if (lo >= hi) { /* shifted out entirely (|dy| >= 28) */
        memset(dst, 0, MT_PIXELS * sizeof(float));
        return;
    }
    memset(dst, 0, (size_t)lo * sizeof(float));
    memcpy(dst + lo, src + (lo - off), (size_t)(hi - lo) * sizeof(float));
    memset(dst + hi, 0, (size_t)(MT_PIXELS - hi) * sizeof(float));
    if (dx != 0)
        for (yy = 0; yy < MNIST_IMG; yy++)
            for (xx = c0; xx < c1; xx++) dst[yy * MNIST_IMG + xx] = 0.0f;
}

/* Infeed (ipup_config.infeed, user = mt_feed): the samples at positions p .. p+n-1 of
 * the current epoch's permutation, shifted by up to `augment` pixels (zero fill). */
static int mt_infeed(void *user, const ipup_feed *fd) {
    mt_feed *f = (mt_feed *)user;
    int32_t n = fd->n;
    float *x = fd->x;
    int32_t *labels = fd->labels;
    int64_t p0 = fd->sample0 - f->epoch_step0 * f->samples_per_step;
    int i, aug = f->row == MT_PIXELS ? f->augment : 0; /* shifts: 28x28 images only */
    const size_t row = (size_t)f->row;
    if (fd->row != f->row || (f->classes ? !labels : (!fd->targets || fd->target_width != f->row)))
        return -1;
    if (p0 < 0 || p0 + n > f->tr.count) return -1;
    for (i = 0; i < n; i++) {
        int64_t p = p0 + i;
        int32_t k = f->perm[p];
        const unsigned char *src = f->xtr + (size_t)k * row;
        float *dst = x + (size_t)i * row;
        if (labels) labels[i] = f->ytr[k];
        if (!f->classes) { /* an autoencoder: the input is the target */
            mnist_pixels_to_float(src, row, dst);
            memcpy(fd->targets + (size_t)i * row, dst, row * sizeof(float));
        } else if (!aug) {
            mnist_pixels_to_float(src, row, dst);
        } else {
            float img[MT_PIXELS];
            uint64_t rr = ipup_rng_u64(f->seed, MT_AUGMENT_TAG + (uint64_t)f->epoch, (uint64_t)p);
            int dx = (int)(rr % (uint64_t)(2 * aug + 1)) - aug, dy = (int)((rr >> 16) % (uint64_t)(2 * aug + 1)) - aug;
            mnist_pixels_to_float(src, MT_PIXELS, img);
            mt_shift(img, dx, dy, dst);
        }
    }
    return 0;
}

/* value v in [0, 1] as a byte, rounded, clamped */
static unsigned char mt_synth_byte(double v) {
    v = v * 255.0 + 0.5;
    return (unsigned char)(v < 0.0 ? 0.0 : v > 255.0 ? 255.0 : v);
}

/* Sample i of the split `split` (0 train, 1 test) into dst (row bytes); its label. */
static int32_t mt_synth_sample(const mt_feed *f, int split, int32_t i, unsigned char *dst) {
    const double two_pi = 6.283185307179586;
    const uint64_t key = ((uint64_t)split << 32) | (uint64_t)(uint32_t)i;
    int32_t r, c, ch, k;
    if (f->classes) {
        const int32_t y = i % f->classes;
        const double fy = 1.0 + (double)(y % 4), fx = (double)((y / 4) % 3);
        const double ph = two_pi * (double)ipup_rng_uniform_f32(MT_SYN_TAG, key, 0);
        for (r = 0; r < f->in_h; r++)
            for (c = 0; c < f->in_w; c++) {
                double v = 0.5 + 0.3 * cos(two_pi * (fy * r / f->in_h + fx * c / f->in_w) + ph);
                for (ch = 0; ch < f->in_c; ch++) {
                    k = (r * f->in_w + c) * f->in_c + ch;
                    dst[k] = mt_synth_byte(v + 0.4 * ((double)ipup_rng_uniform_f32(MT_SYN_TAG + 1, key,
                                                                             (uint64_t)k) - 0.5));
                }
            }
        return y;
    } else {
        double a[5];
        const int anomaly = split == 1 && (i & 1);
        for (k = 0; k < 5; k++) a[k] = 2.0 * (double)ipup_rng_uniform_f32(MT_SYN_TAG, key, (uint64_t)k) - 1.0;
        for (k = 0; k < f->row; k++) {
            const double t = two_pi * k / f->row;
            double v = 0.5 + 0.12 * (a[0] * sin(3 * t) + a[1] * cos(3 * t)) +
                       0.12 * (a[2] * sin(7 * t) + a[3] * cos(7 * t));
            if (anomaly) v += 0.12 * sin(19 * t + two_pi * a[4]);
            v += 0.04 * ((double)ipup_rng_uniform_f32(MT_SYN_TAG + 1, key, (uint64_t)k) - 0.5);
            dst[k] = mt_synth_byte(v);
        }
        return anomaly;
    }
}

/* --data synthetic: both splits (see the top of the file) */
static void mt_synth_fill(mt_feed *f) {
    const size_t row = (size_t)f->row;
    unsigned char *tmp = f->xtr; /* a test sample is made in the training bytes' first row, */
    int32_t i;                   /* then scaled: so the test samples come first */
    for (i = 0; i < f->te.count; i++) {
        f->yte[i] = mt_synth_sample(f, 1, i, tmp);
        mnist_pixels_to_float(tmp, row, f->xte + (size_t)i * row);
    }
    for (i = 0; i < f->tr.count; i++) f->ytr[i] = mt_synth_sample(f, 0, i, f->xtr + (size_t)i * row);
}

#endif /* MNIST_FEED_H */
