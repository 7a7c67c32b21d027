/* ckpt_fixture.h - checkpoints (examples/mnist/mnist_ckpt.h, version 2 over the library's
 * state) for the tests, the fuzz target and its seed writer: the small emulator their
 * files are saved from, the edits that make a changed file consistent again (header
 * CRC, state length, fingerprint, state CRC) so that a test reaches the check behind
 * them, and a file of the old version 1. Include after mnist_ckpt.h (it includes
 * tiny_model.h, hence ipupipe.h). All static inline: each includer uses only some.
 *
 * Offsets: the trainer header is MNIST_CKPT_HEADER_BYTES (68) bytes; the state follows
 * with its own header (docs/state.md): +16 u64 length T, +24 i64 step, +32 u32
 * fingerprint, +36 u32 descriptor length D, +48 the descriptor, and its CRC-32 in the
 * last 4 bytes of the file. */
#ifndef IPUPIPE_TESTS_CKPT_FIXTURE_H
#define IPUPIPE_TESTS_CKPT_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tiny_model.h"

#define CKPT_FIXTURE_IN 6                          /* floats per sample */
#define CKPT_FIXTURE_MODEL "dense4,relu,dense3,xent" /* 1 x 1 x 6 inputs */
#define CKPT_FIXTURE_POOL (64 * 1024)              /* bytes of each IPU pool */
#define CKPT_FIXTURE_HOST (64 * 1024)              /* bytes of the host pool */
#define CKPT_FIXTURE_ST (MNIST_CKPT_HEADER_BYTES)  /* where the state begins */

/* Caller-owned memory of one fixture emulator (static: an ipup_emu is large). */
typedef struct ckpt_fixture_emu {
    ipup_emu emu;
    ipup_model_desc model;
    int32_t split_at;
    IPUP_ALIGN64 uint8_t ipu[2][CKPT_FIXTURE_POOL];
    IPUP_ALIGN64 uint8_t host[CKPT_FIXTURE_HOST];
} ckpt_fixture_emu;

static inline void ckpt_fixture_sample(int64_t sample0, int32_t i, float *x, int32_t *label) {
    int32_t j;
    for (j = 0; j < CKPT_FIXTURE_IN; j++) x[j] = ipup_rng_uniform_f32(11, (uint64_t)(sample0 + i), (uint64_t)j) - 0.5f;
    *label = (int32_t)ipup_rng_below(11, (uint64_t)(sample0 + i), 7, 3);
}
static tiny_data ckpt_fixture_data = {ckpt_fixture_sample, CKPT_FIXTURE_IN};

/* (Re)starts f's emulator: model text (NULL: CKPT_FIXTURE_MODEL) on 1 x 1 x 6 inputs in
 * one stage (split_at 0) or two, the second beginning at layer split_at (2: dense4,relu
 * | dense3,xent), micro-batch 2, 2 micro-batches a step, one step a run, seed
 * 3, optimizer opt (learning rate 0.05). Returns ipup_init's code. */
static inline int ckpt_fixture_start(ckpt_fixture_emu *f, const char *text, int32_t split_at, ipup_optimizer_kind opt) {
    int32_t stages = split_at > 0 ? 2 : 1;
    ipup_config c;
    ipup_shutdown(&f->emu);
    memset(&f->emu, 0, sizeof f->emu);
    if (tiny_model(&f->model, 1, 1, CKPT_FIXTURE_IN, text ? text : CKPT_FIXTURE_MODEL, NULL, 0) != IPUP_OK)
        return IPUP_ERR_PARSE;
    f->split_at = split_at;
    c = tiny_config(&f->model, stages, 2, 2, 1, 3, opt, 0.05f, tiny_infeed, &ckpt_fixture_data);
    if (stages == 2) c.split = &f->split_at;
    tiny_pools(&c, stages, f->ipu, NULL, CKPT_FIXTURE_POOL, f->host, CKPT_FIXTURE_HOST);
    return ipup_init(&f->emu, &c);
}

/* Every tensor of replica 0 and the step of e, as bytes, into out (cap bytes); the
 * length, or 0 when cap is too small. Two equal snapshots: nothing changed. */
static inline size_t ckpt_fixture_snap(ipup_emu *e, unsigned char *out, size_t cap) {
    int32_t i, n = ipup_tensor_count(e);
    size_t len = 0;
    int64_t step = ipup_get_step(e);
    for (i = 0; i < n; i++) {
        ipup_tensor_info ti;
        ipup_tensor_get(e, i, &ti);
        if (len + (size_t)ti.n * 4 + sizeof step > cap) return 0;
        memcpy(out + len, ti.data, (size_t)ti.n * 4);
        len += (size_t)ti.n * 4;
    }
    memcpy(out + len, &step, sizeof step);
    return len + sizeof step;
}

static inline void ckpt_fixture_put32(unsigned char *p, uint32_t v) { mnist_ckpt_put32_(p, v); }
static inline void ckpt_fixture_put64(unsigned char *p, uint64_t v) {
    mnist_ckpt_put32_(p, (uint32_t)v);
    mnist_ckpt_put32_(p + 4, (uint32_t)(v >> 32));
}

/* The trainer header's CRC-32 (bytes 64..67) made to match bytes 0..63; n >= 68. */
static inline void ckpt_fixture_fix_header_crc(unsigned char *b, size_t n) {
    if (n >= CKPT_FIXTURE_ST) mnist_ckpt_put32_(b + 64, mnist_ckpt_crc32(b, 64));
}
/* The state's length field made to say what the n-byte file holds after the header. */
static inline void ckpt_fixture_fix_state_len(unsigned char *b, size_t n) {
    if (n >= CKPT_FIXTURE_ST + 24) ckpt_fixture_put64(b + CKPT_FIXTURE_ST + 16, (uint64_t)(n - CKPT_FIXTURE_ST));
}
/* The state's fingerprint made to match its descriptor (when D fits in the file). */
static inline void ckpt_fixture_fix_fingerprint(unsigned char *b, size_t n) {
    uint32_t D;
    if (n < CKPT_FIXTURE_ST + 48) return;
    D = mnist_ckpt_get32_(b + CKPT_FIXTURE_ST + 36);
    if ((size_t)D <= n - CKPT_FIXTURE_ST - 48)
        mnist_ckpt_put32_(b + CKPT_FIXTURE_ST + 32, mnist_ckpt_crc32(b + CKPT_FIXTURE_ST + 48, D));
}
/* The state's CRC-32 (the file's last 4 bytes) made to match the state bytes before it. */
static inline void ckpt_fixture_fix_state_crc(unsigned char *b, size_t n) {
    if (n >= CKPT_FIXTURE_ST + 4) mnist_ckpt_put32_(b + n - 4, mnist_ckpt_crc32(b + CKPT_FIXTURE_ST, n - CKPT_FIXTURE_ST - 4));
}
/* All four, in the order they depend on each other: an edited file of n bytes made
 * consistent everywhere except what the edit changed in meaning. */
static inline void ckpt_fixture_fix_all(unsigned char *b, size_t n) {
    ckpt_fixture_fix_header_crc(b, n);
    ckpt_fixture_fix_state_len(b, n);
    ckpt_fixture_fix_fingerprint(b, n);
    ckpt_fixture_fix_state_crc(b, n);
}

/* The offset in a fixture file of the first tensor record named `name` (u8 length, the
 * name, u8 kind, u8 rank, rank x u32, the values), found by its bytes; 0 when absent. */
static inline size_t ckpt_fixture_record_at(const unsigned char *b, size_t n, const char *name) {
    size_t L = strlen(name), i;
    for (i = CKPT_FIXTURE_ST + 48; i + 3 + L < n; i++)
        if (b[i] == (unsigned char)L && memcmp(b + i + 1, name, L) == 0 && b[i + 1 + L] <= 1) return i;
    return 0;
}
/* The offset of element k of that tensor's values; 0 when absent or past the end. */
static inline size_t ckpt_fixture_value_at(const unsigned char *b, size_t n, const char *name, size_t k) {
    size_t i = ckpt_fixture_record_at(b, n, name), L = strlen(name), at;
    if (!i) return 0;
    at = i + 3 + L + 4 * (size_t)b[i + 2 + L] + 4 * k;
    return at + 4 <= n ? at : 0;
}

/* A checkpoint of version 1 (ipupipe 0.4.0 and earlier) into b (at least 140 bytes):
 * the 72-byte header (magic, version 1, one tensor, step 5, seed 9, epoch 1, model
 * "mlp"), the record of dense.w (2 x 2, values 1..4) and its CRC-32. Returns the size. */
static inline size_t ckpt_fixture_v1(unsigned char *b) {
    size_t n = 72;
    int i;
    memset(b, 0, 72);
    memcpy(b, "IPUPCKPT", 8);
    mnist_ckpt_put32_(b + 8, 1);
    mnist_ckpt_put32_(b + 12, 1);
    b[16] = 5;
    b[24] = 9;
    b[32] = 1;
    memcpy(b + 40, "mlp", 3);
    b[n++] = 7;
    b[n++] = 0;
    memcpy(b + n, "dense.w", 7);
    n += 7;
    b[n++] = 1; /* float32 */
    b[n++] = 2; /* rank */
    mnist_ckpt_put32_(b + n, 2);
    mnist_ckpt_put32_(b + n + 4, 2);
    n += 8;
    for (i = 1; i <= 4; i++) {
        float v = (float)i;
        uint32_t u;
        memcpy(&u, &v, 4);
        mnist_ckpt_put32_(b + n, u);
        n += 4;
    }
    mnist_ckpt_put32_(b + n, mnist_ckpt_crc32(b, n));
    return n + 4;
}

#endif
