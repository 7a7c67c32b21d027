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
 */
#ifndef MNIST_FEED_H
#define MNIST_FEED_H

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

typedef struct {
    mnist_info tr, te; /* counts after the limits */
    unsigned char *xtr; /* (count, 784) training pixels as the file's bytes (scaled in mt_infeed) */
    float *xte;         /* (count, 784) test pixels in [0, 1] */
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

/* Shapes of the two splits of dir, cut to the limits (0: all). err gets the reason. */
static int mt_feed_probe(mt_feed *f, const char *dir, int train_limit, int test_limit, char *err) {
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
    return (double)f->tr.count * (MT_PIXELS + sizeof(int32_t)) +
           (double)f->te.count * (MT_PIXELS * sizeof(float) + sizeof(int32_t)) + (double)f->tr.count * sizeof(int32_t);
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
    f->xtr = (unsigned char *)mt_alloc_huge((size_t)f->tr.count * MT_PIXELS);
    f->ytr = (int32_t *)malloc((size_t)f->tr.count * sizeof(int32_t));
    f->xte = (float *)malloc((size_t)f->te.count * MT_PIXELS * sizeof(float));
    f->yte = (int32_t *)malloc((size_t)f->te.count * sizeof(int32_t));
    f->perm = (int32_t *)malloc((size_t)f->tr.count * sizeof(int32_t));
    return f->xtr && f->ytr && f->xte && f->yte && f->perm ? 0 : -1;
}

/* Reads the images and labels of both splits into the buffers; err gets the reason. */
/* The buffers were sized from mt_feed_probe: the loads get that room (count, 28x28)
 * and refuse files that changed since (mnist_load_into). */
static int mt_feed_load(mt_feed *f, const char *dir, char *err) {
    mnist_info tr = f->tr, te = f->te;
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
    int i, aug = f->augment;
    if (fd->row != MT_PIXELS || !labels) return -1;
    if (p0 < 0 || p0 + n > f->tr.count) return -1;
    for (i = 0; i < n; i++) {
        int64_t p = p0 + i;
        int32_t k = f->perm[p];
        const unsigned char *src = f->xtr + (size_t)k * MT_PIXELS;
        float *dst = x + (size_t)i * MT_PIXELS;
        labels[i] = f->ytr[k];
        if (!aug) {
            mnist_pixels_to_float(src, MT_PIXELS, dst);
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

#endif /* MNIST_FEED_H */
