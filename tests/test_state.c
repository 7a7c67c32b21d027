/* tests/test_state.c - the training state of ipupipe.h (ipup_state_bytes, ipup_state_save,
 * ipup_state_load; format in docs/state.md): a saved and restored run continues bit for
 * bit like an uninterrupted one, the stream is exactly ipup_state_bytes long whatever the
 * page size of the sink, and hostile streams (truncated anywhere, one bit flipped
 * anywhere, another model, optimizer, split or shape, a source that changes while it is
 * read) are refused with the exact code and message words while the weights, the
 * optimizer state, the step and every replica's copy stay untouched. No heap call in
 * save or load: linked with -Wl,--wrap=malloc,... (Makefile: LDFLAGS_test_state).
 */
#include "tiny_model.h"
#include "ttest.h"

#include "heap_count.h"

#define POOL (96 * 1024)
#define IPUS 4 /* 2 stages x 2 replicas at most */
#define MAXF 8192
IPUP_ALIGN64 static uint8_t g_ipu[2][IPUS][POOL];
IPUP_ALIGN64 static uint8_t g_host[2][128 * 1024];
static ipup_emu g_emu[2];
static ipup_model_desc g_model[2];

/* ---- the data: 20 features, 4 classes */
static void sample(int64_t sample0, int32_t i, float *x, int32_t *label) {
    int32_t j;
    for (j = 0; j < 20; j++) x[j] = ipup_rng_uniform_f32(7, (uint64_t)(sample0 + i), (uint64_t)j) - 0.5f;
    *label = (int32_t)ipup_rng_below(7, (uint64_t)(sample0 + i), 99, 4);
}
static tiny_data g_data = {sample, 20};

/* ---- a setup: model text, optimizer, split (-1: balanced), replicas, runner */
typedef struct setup {
    const char *model;
    int32_t in_n;
    ipup_optimizer_kind opt;
    float momentum;
    int32_t split;
    int32_t replicas;
    ipup_runner_kind runner;
} setup;
static const setup BASE = {"dense16,relu,dense8,relu,dense4,xent", 20, IPUP_OPT_ADAM, 0.0f, 2, 1, IPUP_RUNNER_COOP};

/* emulator k initialised from s (2 stages, B 2, M 2, one step a run) */
static int start(int k, setup s) {
    ipup_config c;
    static int32_t split[2][1];
    ipup_shutdown(&g_emu[k]);
    memset(&g_emu[k], 0, sizeof g_emu[k]);
    TT_EQ_INT(tiny_model(&g_model[k], 1, 1, s.in_n, s.model, NULL, 0), IPUP_OK);
    c = tiny_config(&g_model[k], 2, 2, 2, 1, 11, s.opt, 0.05f, tiny_infeed, &g_data);
    c.opt.momentum = s.momentum;
    split[k][0] = s.split;
    if (s.split >= 0) c.split = split[k];
    c.replicas = s.replicas;
    c.runner = s.runner;
    tiny_pools(&c, IPUS, g_ipu[k], NULL, POOL, g_host[k], sizeof g_host[k]);
    return ipup_init(&g_emu[k], &c);
}

/* ---- a byte store standing in for flash or a file */
static unsigned char g_img[2][MAXF * 4 * 4];
static size_t g_len[2];
static size_t g_max_chunk;
static int g_write_fail_at = -1; /* call index that fails, -1 none */
static int g_calls;
static int put(void *user, const void *d, size_t n) {
    int k = (int)(intptr_t)user;
    if (g_calls++ == g_write_fail_at) return -1;
    if (n > g_max_chunk) g_max_chunk = n;
    if (g_len[k] + n > sizeof g_img[k]) return -1;
    memcpy(g_img[k] + g_len[k], d, n);
    g_len[k] += n;
    return 0;
}
/* reads of image k, which is g_len[k] bytes long */
static int g_read_rc = 0;       /* a failing read returns this when not 0 */
static int g_flip_after = -1;   /* after this many reads, flip a bit of byte g_flip_byte */
static size_t g_flip_byte;
static int get(void *user, uint64_t off, void *d, size_t n) {
    int k = (int)(intptr_t)user;
    if (g_calls++ == g_flip_after) g_img[k][g_flip_byte] ^= 0x10;
    if (g_read_rc) return g_read_rc;
    if (off > g_len[k] || n > g_len[k] - off) return IPUP_STATE_END;
    memcpy(d, g_img[k] + off, n);
    return 0;
}
static int save(int k, int img) {
    g_len[img] = 0;
    g_calls = 0;
    return ipup_state_save(&g_emu[k], put, (void *)(intptr_t)img);
}
static int load(int k, int img) {
    g_calls = 0;
    return ipup_state_load(&g_emu[k], get, (void *)(intptr_t)img);
}

/* ---- every tensor of every replica, and the step */
static float g_snap[MAXF * 4];
static size_t snapshot(int k, float *out) {
    const ipup_emu *e = &g_emu[k];
    size_t n = 0;
    int32_t r, s;
    for (r = 0; r < e->core.R; r++)
        for (s = 0; s < e->core.S; s++) {
            memcpy(out + n, e->stage_rt[r][s].params, e->core.stages[s].n_params * sizeof(float));
            n += e->core.stages[s].n_params;
            if (e->core.stages[s].n_state) memcpy(out + n, e->stage_rt[r][s].state, e->core.stages[s].n_state * sizeof(float));
            n += e->core.stages[s].n_state;
        }
    out[n++] = (float)e->step;
    return n;
}
static int untouched(int k, size_t n) {
    static float now[MAXF * 4];
    return snapshot(k, now) == n && memcmp(now, g_snap, n * sizeof(float)) == 0;
}
static int same_state(int a, int b) {
    static float x[MAXF * 4], y[MAXF * 4];
    size_t n = snapshot(a, x);
    return snapshot(b, y) == n && memcmp(x, y, n * sizeof(float)) == 0;
}

/* The stream's byte helpers, written here apart from the library's: little-endian
   32-bit words and CRC-32 (the IEEE/zlib polynomial, reflected: 0xEDB88320). */
static uint32_t ref_crc32(uint32_t crc, const unsigned char *p, size_t n) {
    size_t i;
    int b;
    for (i = 0; i < n; i++) {
        crc ^= p[i];
        for (b = 0; b < 8; b++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return crc;
}
static void ref_le32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}
static uint32_t ref_get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Rewrites the trailing CRC-32 of image k (after an edit) */
static void fix_crc(int k) {
    uint32_t c = ref_crc32(0xFFFFFFFFu, g_img[k], g_len[k] - 4) ^ 0xFFFFFFFFu;
    ref_le32(g_img[k] + g_len[k] - 4, c);
}

TTEST(crc32_is_the_ieee_one) {
    /* the check value of CRC-32/ISO-HDLC (zlib's crc32 of "123456789") */
    TT_EQ_INT(ref_crc32(0xFFFFFFFFu, (const unsigned char *)"123456789", 9) ^ 0xFFFFFFFFu, 0xCBF43926u);
}

/* train 3 steps, save, train 3 more (A); a new emulator loads and trains 3 (B): same bits */
static void round_trip(setup s) {
    int i;
    long heap;
    TT_EQ_INT(start(0, s), IPUP_OK);
    for (i = 0; i < 3; i++) TT_EQ_INT(ipup_run(&g_emu[0], NULL), IPUP_OK);
    heap = g_heap_calls;
    g_max_chunk = 0;
    TT_EQ_INT(save(0, 0), IPUP_OK);
    TT_EQ_INT(g_len[0], ipup_state_bytes(&g_emu[0]));
    TT_CHECK(g_max_chunk <= IPUP_STATE_CHUNK && g_max_chunk > 0);
    for (i = 0; i < 3; i++) TT_EQ_INT(ipup_run(&g_emu[0], NULL), IPUP_OK);
    TT_EQ_INT(start(1, s), IPUP_OK);
    TT_CHECK(!same_state(0, 1));
    heap = g_heap_calls - heap;
    {
        long h0 = g_heap_calls;
        TT_EQ_INT(load(1, 0), IPUP_OK);
        TT_CHECK(ipup_last_error(&g_emu[1])[0] == 0);
        TT_EQ_INT(g_heap_calls - h0, 0);
    }
    TT_EQ_INT(ipup_get_step(&g_emu[1]), 3);
    for (i = 0; i < 3; i++) TT_EQ_INT(ipup_run(&g_emu[1], NULL), IPUP_OK);
    TT_CHECK(same_state(0, 1)); /* every replica's weights and optimizer state, the step */
    TT_EQ_INT(ipup_get_step(&g_emu[1]), 6);
    (void)heap;
}
TTEST(round_trip_sgd) { setup s = BASE; s.opt = IPUP_OPT_SGD; round_trip(s); }
TTEST(round_trip_momentum) { setup s = BASE; s.opt = IPUP_OPT_MOMENTUM; round_trip(s); }
TTEST(round_trip_adam) { round_trip(BASE); }
TTEST(round_trip_replicas_threads) {
    setup s = BASE;
    s.replicas = 2;
    s.runner = IPUP_RUNNER_THREADS;
    round_trip(s);
}

TTEST(save_and_load_make_no_heap_call) {
    long h;
    TT_EQ_INT(start(0, BASE), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu[0], NULL), IPUP_OK);
    h = g_heap_calls;
    TT_EQ_INT(save(0, 0), IPUP_OK);
    TT_EQ_INT(load(0, 0), IPUP_OK);
    TT_CHECK(ipup_state_bytes(&g_emu[0]) > 0);
    TT_EQ_INT(g_heap_calls - h, 0);
}

/* replica 1 diverged on purpose: a load gives every replica the file's state */
TTEST(load_syncs_every_replica) {
    setup s = BASE;
    ipup_emu *e = &g_emu[0];
    s.replicas = 2;
    TT_EQ_INT(start(0, s), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu[0], NULL), IPUP_OK);
    TT_EQ_INT(save(0, 0), IPUP_OK);
    e->stage_rt[1][0].params[0] += 1.0f;
    e->stage_rt[1][1].state[3] += 1.0f;
    e->stage_rt[0][1].params[5] += 1.0f;
    TT_EQ_INT(load(0, 0), IPUP_OK);
    TT_CHECK(memcmp(e->stage_rt[0][0].params, e->stage_rt[1][0].params, e->core.stages[0].n_params * 4) == 0);
    TT_CHECK(memcmp(e->stage_rt[0][1].params, e->stage_rt[1][1].params, e->core.stages[1].n_params * 4) == 0);
    TT_CHECK(memcmp(e->stage_rt[0][1].state, e->stage_rt[1][1].state, e->core.stages[1].n_state * 4) == 0);
    g_len[1] = 0;
    TT_EQ_INT(ipup_state_save(e, put, (void *)(intptr_t)1), IPUP_OK);
    TT_CHECK(g_len[0] == g_len[1] && memcmp(g_img[0], g_img[1], g_len[0]) == 0);
}

/* A sink that programs fixed-size pages (the last one padded with 0xFF): the image is the
   same bytes for every page size, and loads. */
static unsigned char g_page[512];
static size_t g_page_size, g_page_fill, g_pages;
static int page_put(void *user, const void *d, size_t n) {
    const unsigned char *p = (const unsigned char *)d;
    (void)user;
    while (n) {
        size_t k = g_page_size - g_page_fill < n ? g_page_size - g_page_fill : n;
        memcpy(g_page + g_page_fill, p, k);
        g_page_fill += k;
        p += k;
        n -= k;
        if (g_page_fill == g_page_size) {
            memcpy(g_img[1] + g_pages * g_page_size, g_page, g_page_size);
            g_pages++;
            g_page_fill = 0;
        }
    }
    return 0;
}
TTEST(pages_of_any_size) {
    size_t sizes[] = {1, 3, 64, 100, 255, 256, 257, 511}, i, total;
    TT_EQ_INT(start(0, BASE), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu[0], NULL), IPUP_OK);
    TT_EQ_INT(save(0, 0), IPUP_OK);
    total = ipup_state_bytes(&g_emu[0]);
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        g_page_size = sizes[i];
        g_page_fill = g_pages = 0;
        TT_EQ_INT(ipup_state_save(&g_emu[0], page_put, NULL), IPUP_OK);
        if (g_page_fill) { /* the last page, padded as erased flash */
            memset(g_page + g_page_fill, 0xFF, g_page_size - g_page_fill);
            memcpy(g_img[1] + g_pages * g_page_size, g_page, g_page_size);
            g_pages++;
        }
        TT_EQ_INT(g_pages, (total + sizes[i] - 1) / sizes[i]);
        TT_CHECK(memcmp(g_img[1], g_img[0], total) == 0);
        g_len[1] = g_pages * g_page_size; /* the region is longer than the state: fine */
        TT_EQ_INT(load(0, 1), IPUP_OK);
    }
}

/* a refused load: the code, the words, nothing changed */
static void refused(int k, int img, int code, const char *words, size_t n) {
    int r = load(k, img);
    TT_EQ_INT(r, code);
    TT_CONTAINS(ipup_last_error(&g_emu[k]), words);
    TT_CHECK(untouched(k, n));
}

TTEST(truncated_anywhere) {
    size_t full, cut, n;
    int bad = 0;
    TT_EQ_INT(start(0, BASE), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu[0], NULL), IPUP_OK);
    TT_EQ_INT(save(0, 0), IPUP_OK);
    TT_EQ_INT(start(1, BASE), IPUP_OK);
    n = snapshot(1, g_snap);
    full = g_len[0];
    for (cut = 0; cut < full; cut += (cut < 64 ? 1 : 7)) {
        g_len[0] = cut;
        if (load(1, 0) != IPUP_ERR_CORRUPT || !strstr(ipup_last_error(&g_emu[1]), "truncated") || !untouched(1, n)) {
            if (bad++ < 3) TT_FAILF("cut at %zu: %.300s", cut, ipup_last_error(&g_emu[1]));
        }
    }
    g_len[0] = full;
    TT_EQ_INT(bad, 0);
    TT_EQ_INT(load(1, 0), IPUP_OK);
}

TTEST(one_bit_flipped_anywhere) {
    size_t full, i, n;
    int bad = 0;
    TT_EQ_INT(start(0, BASE), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu[0], NULL), IPUP_OK);
    TT_EQ_INT(save(0, 0), IPUP_OK);
    TT_EQ_INT(start(1, BASE), IPUP_OK);
    n = snapshot(1, g_snap);
    full = g_len[0];
    for (i = 0; i < full; i++) {
        int r, want = i >= 8 && i < 12 ? IPUP_ERR_MISMATCH : IPUP_ERR_CORRUPT;
        const char *msg, *words = i < 8 ? "the magic is not IPUPSTAT" : i < 12 ? "format version" : NULL;
        g_img[0][i] ^= (unsigned char)(1u << (i % 8));
        r = load(1, 0);
        msg = ipup_last_error(&g_emu[1]);
        if (!words) /* the length field makes it look truncated, a reserved field damaged, else the CRC */
            words = strstr(msg, "truncated") ? "truncated" : strstr(msg, "header is damaged") ? "header" : "CRC-32";
        if (r != want || !strstr(msg, words) || !untouched(1, n)) {
            if (bad++ < 3) TT_FAILF("bit %zu of byte %zu: %d %.300s", i % 8, i, r, msg);
        }
        if (!strstr(msg, "CRC-32") && i >= 48) bad++; /* past the header only the CRC catches it */
        g_img[0][i] ^= (unsigned char)(1u << (i % 8));
    }
    TT_EQ_INT(bad, 0);
    TT_EQ_INT(load(1, 0), IPUP_OK);
}

/* state of setup a loaded into setup b: refused with these words */
static void other(setup a, setup b, const char *words) {
    size_t n;
    TT_EQ_INT(start(0, a), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu[0], NULL), IPUP_OK);
    TT_EQ_INT(save(0, 0), IPUP_OK);
    TT_EQ_INT(start(1, b), IPUP_OK);
    n = snapshot(1, g_snap);
    refused(1, 0, IPUP_ERR_MISMATCH, words, n);
    TT_CONTAINS(ipup_last_error(&g_emu[1]), "another model, optimizer, stage split or map of concurrent stages (the tools' --map)");
}
TTEST(other_model) {
    setup b = BASE;
    b.model = "dense12,relu,dense8,relu,dense4,xent";
    other(BASE, b, "ipup_state_load: layer 0 is dense16 (dense, 16 units) in the file, dense12 (dense, 12 units) in this emulator");
    b.model = "dense16,gelu,dense8,relu,dense4,xent";
    other(BASE, b, "layer 1 is relu (relu) in the file, gelu (gelu) in this emulator");
    b.model = "dense16,relu,dense8,relu,dense8,relu,dense4,xent";
    other(BASE, b, "the model has 6 layers in the file, 8 in this emulator");
}
/* a layer trained on one side and frozen on the other: the records of optimizer state
   differ, and the message says that frozen layers do that and which are frozen here */
TTEST(other_frozen) {
    setup b = BASE;
    b.model = "dense16,relu,dense8:frozen,relu,dense4,xent";
    other(BASE, b, "tensor 8 is dense8.w.m (16x8) in the file, dense4.w.m (8x4) in this emulator; a layer frozen on one "
                   "side and trained on the other has no optimizer state on the frozen side (frozen in this emulator: dense8)");
    other(b, BASE, "tensor 8 is dense4.w.m (8x4) in the file, dense8.w.m (16x8) in this emulator; a layer frozen on one "
                   "side and trained on the other has no optimizer state on the frozen side (frozen in this emulator: none)");
}
TTEST(other_shape) {
    setup b = BASE;
    b.in_n = 24;
    other(BASE, b, "the model's input is 1x1x20 in the file, 1x1x24 in this emulator");
}
TTEST(other_optimizer) {
    setup b = BASE;
    b.opt = IPUP_OPT_SGD;
    other(BASE, b, "the optimizer is adam in the file, sgd in this emulator");
    b.opt = IPUP_OPT_MOMENTUM;
    {
        setup a = b;
        b.momentum = 0.5f;
        other(a, b, "the optimizer's momentum is 0.9 in the file, 0.5 in this emulator");
    }
}
TTEST(other_split) {
    setup b = BASE;
    b.split = 4;
    other(BASE, b, "stage 1 begins at layer 2 in the file, at layer 4 (dense4) in this emulator");
}

/* a sound stream edited on purpose, the CRC made to match */
TTEST(edited_records) {
    size_t n, rec0 = 0, i;
    TT_EQ_INT(start(0, BASE), IPUP_OK);
    TT_EQ_INT(save(0, 0), IPUP_OK);
    n = snapshot(0, g_snap);
    /* the first record follows the descriptor: find "dense16.w" after the header */
    for (i = 48 + (size_t)ref_get32(g_img[0] + 36); i < g_len[0]; i++)
        if (g_img[0][i] == 9 && memcmp(g_img[0] + i + 1, "dense16.w", 9) == 0) { rec0 = i; break; }
    TT_EQ_INT(rec0, 48 + ref_get32(g_img[0] + 36));
    g_img[0][rec0 + 1 + 9 + 2 + 4] = 17; /* dims (20, 16) -> (20, 17) */
    fix_crc(0);
    refused(0, 0, IPUP_ERR_MISMATCH, "tensor 0 is dense16.w (20x17) in the file, dense16.w (20x16) in this emulator", n);
    g_img[0][rec0 + 1 + 9 + 2 + 4] = 16;
    g_img[0][rec0 + 1 + 8] = 'x'; /* the name */
    fix_crc(0);
    refused(0, 0, IPUP_ERR_MISMATCH, "tensor 0 is dense16.x (20x16) in the file, dense16.w (20x16)", n);
    g_img[0][rec0 + 1 + 8] = 'w';
    ref_le32(g_img[0] + rec0 + 1 + 9 + 2 + 8 + 4 * 5, 0x7FC00000u); /* a NaN at element 5 */
    fix_crc(0);
    refused(0, 0, IPUP_ERR_CORRUPT, "tensor dense16.w holds NaN at element 5", n);
    TT_EQ_INT(save(0, 0), IPUP_OK);
    ref_le32(g_img[0] + 8, 2); /* a future version */
    fix_crc(0);
    refused(0, 0, IPUP_ERR_MISMATCH, "the stream has format version 2, this library reads version 1", n);
    TT_EQ_INT(save(0, 0), IPUP_OK);
    ref_le32(g_img[0] + 40, ref_get32(g_img[0] + 40) - 1); /* one tensor fewer */
    fix_crc(0);
    refused(0, 0, IPUP_ERR_MISMATCH, "the file holds 17 tensors, this emulator 18 (the first 17 agree)", n);
}

TTEST(source_changing_while_read) {
    size_t n;
    TT_EQ_INT(start(0, BASE), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu[0], NULL), IPUP_OK);
    TT_EQ_INT(save(0, 0), IPUP_OK);
    TT_EQ_INT(start(1, BASE), IPUP_OK);
    n = snapshot(1, g_snap);
    /* changed after the CRC pass, before the checking pass ends: nothing loaded */
    g_flip_byte = g_len[0] - 40;
    g_flip_after = 2 + (int)((g_len[0] + 255) / 256) + 3;
    refused(1, 0, IPUP_ERR_CORRUPT, "the stream changed while it was read (nothing was loaded)", n);
    g_img[0][g_flip_byte] ^= 0x10;
    /* changed while it is applied: said so, and the state is partly loaded */
    g_flip_after = 2 + 2 * (int)((g_len[0] + 255) / 256) + 3;
    TT_EQ_INT(load(1, 0), IPUP_ERR_CORRUPT);
    TT_CONTAINS(ipup_last_error(&g_emu[1]), "the state is partly loaded; load a sound state again or re-initialise");
    g_img[0][g_flip_byte] ^= 0x10;
    g_flip_after = -1;
    TT_EQ_INT(load(1, 0), IPUP_OK);
    TT_CHECK(same_state(0, 1));
}

/* The step counter of a stream is checked against what the configuration can count:
   Adam takes the step as an int and the sample index step x R x M x B must fit 64 bits.
   A forged step above INT32_MAX (the CRC is recomputed, as anyone can) is refused with
   nothing loaded; a step at the cap loads and the next run is refused; one below runs. */
TTEST(forged_step_refused) {
    static const uint64_t forged[] = {(uint64_t)INT32_MAX + 1u, 36000000000ull,
                                      (uint64_t)INT64_MAX - 1u, (uint64_t)INT64_MAX};
    size_t n, i;
    TT_EQ_INT(start(0, BASE), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu[0], NULL), IPUP_OK);
    TT_EQ_INT(save(0, 0), IPUP_OK);
    TT_EQ_INT(start(1, BASE), IPUP_OK);
    n = snapshot(1, g_snap);
    for (i = 0; i < sizeof forged / sizeof forged[0]; i++) {
        ref_le32(g_img[0] + 24, (uint32_t)forged[i]);
        ref_le32(g_img[0] + 28, (uint32_t)(forged[i] >> 32));
        fix_crc(0);
        refused(1, 0, IPUP_ERR_CORRUPT, "step counter", n);
        TT_CONTAINS(ipup_last_error(&g_emu[1]), "2147483647");
    }
    /* at the cap: it loads, and a run that would pass it is refused, the weights kept */
    ref_le32(g_img[0] + 24, (uint32_t)INT32_MAX);
    ref_le32(g_img[0] + 28, 0);
    fix_crc(0);
    TT_EQ_INT(load(1, 0), IPUP_OK);
    TT_EQ_INT(ipup_get_step(&g_emu[1]), INT32_MAX);
    n = snapshot(1, g_snap);
    TT_EQ_INT(ipup_run(&g_emu[1], NULL), IPUP_ERR_CAPACITY);
    TT_CONTAINS(ipup_last_error(&g_emu[1]), "the last step this configuration can count");
    TT_CHECK(untouched(1, n));
    /* one below: Adam's last step (t + 1 = INT32_MAX) runs and leaves finite weights */
    TT_EQ_INT(ipup_set_step(&g_emu[1], (int64_t)INT32_MAX - 1), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu[1], NULL), IPUP_OK);
    TT_EQ_INT(ipup_get_step(&g_emu[1]), INT32_MAX);
    /* ipup_set_step refuses what a run cannot use, the counter unchanged */
    TT_EQ_INT(ipup_set_step(&g_emu[1], -1), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&g_emu[1]), "step -1 is outside 0..2147483647");
    TT_EQ_INT(ipup_set_step(&g_emu[1], INT64_MAX), IPUP_ERR_ARG);
    TT_EQ_INT(ipup_get_step(&g_emu[1]), INT32_MAX);
    TT_EQ_INT(ipup_set_step(NULL, 0), IPUP_ERR_ARG);
}

TTEST(errors_have_messages) {
    size_t n;
    ipup_emu *e = &g_emu[1];
    TT_EQ_INT(start(0, BASE), IPUP_OK);
    TT_EQ_INT(save(0, 0), IPUP_OK);
    TT_EQ_INT(start(1, BASE), IPUP_OK);
    n = snapshot(1, g_snap);
    g_read_rc = -5;
    refused(1, 0, IPUP_ERR_IO, "ipup_state_load: the read callback failed (returned -5) at byte 0, in the header", n);
    g_read_rc = 0;
    g_write_fail_at = 3;
    TT_EQ_INT(save(1, 1), IPUP_ERR_IO);
    TT_CONTAINS(ipup_last_error(e), "ipup_state_save: the write callback failed");
    g_write_fail_at = -1;
    TT_EQ_INT(ipup_state_save(e, NULL, NULL), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(e), "the write callback is NULL");
    TT_EQ_INT(ipup_state_load(e, NULL, NULL), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(e), "the read callback is NULL");
    TT_EQ_INT(ipup_state_save(NULL, put, NULL), IPUP_ERR_ARG);
    TT_EQ_INT(ipup_state_load(NULL, get, NULL), IPUP_ERR_ARG);
    TT_EQ_INT(ipup_state_bytes(NULL), 0);
    memcpy(g_img[1], "IPUPCKPT", 8); /* a trainer checkpoint of the old format */
    memset(g_img[1] + 8, 0, 64);
    g_len[1] = 72;
    refused(1, 1, IPUP_ERR_CORRUPT, "not an ipupipe state: the magic is not IPUPSTAT", n);
    ipup_shutdown(e);
    memset(e, 0, sizeof *e);
    TT_EQ_INT(ipup_state_bytes(e), 0);
    TT_EQ_INT(load(1, 0), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(e), "the emulator is not initialised");
    TT_EQ_INT(save(1, 1), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(e), "the emulator is not initialised");
}

int main(int argc, char **argv) {
    static const ttest_case cases[] = {
        TT_CASE(crc32_is_the_ieee_one),
        TT_CASE(round_trip_sgd),
        TT_CASE(round_trip_momentum),
        TT_CASE(round_trip_adam),
        TT_CASE(round_trip_replicas_threads),
        TT_CASE(save_and_load_make_no_heap_call),
        TT_CASE(load_syncs_every_replica),
        TT_CASE(pages_of_any_size),
        TT_CASE(truncated_anywhere),
        TT_CASE(one_bit_flipped_anywhere),
        TT_CASE(other_model),
        TT_CASE(other_frozen),
    TT_CASE(other_shape),
        TT_CASE(other_optimizer),
        TT_CASE(other_split),
        TT_CASE(edited_records),
        TT_CASE(source_changing_while_read),
        TT_CASE(forged_step_refused),
        TT_CASE(errors_have_messages),
    };
    int r = TTEST_MAIN(cases, argc, argv);
    ipup_shutdown(&g_emu[0]);
    ipup_shutdown(&g_emu[1]);
    return r;
}
