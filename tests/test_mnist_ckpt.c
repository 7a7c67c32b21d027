/* test_mnist_ckpt.c - the checkpoint format of examples/mnist_ckpt.h: round trip,
 * byte-identical files for identical state, atomic write, refusal of corrupt,
 * truncated and mismatched files with the documented messages. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IPUPIPE_IMPLEMENTATION /* ipup_snprintf, used by the readers' messages */
#include "mnist_ckpt.h"
#include "ckpt_fixture.h"
#include "ttest.h"

static char dir_[256];

static const char *tmpdir(void) {
    if (!dir_[0]) {
        snprintf(dir_, sizeof dir_, "/tmp/ipup_mnist_ckpt_XXXXXX");
        if (!mkdtemp(dir_)) {
            perror("mkdtemp");
            exit(2);
        }
    }
    return dir_;
}
static void path_of(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", tmpdir(), name); }

static float w1[6 * 4], b1[4], v1[6 * 4];

static void fill(float seedv) {
    int i;
    for (i = 0; i < 24; i++) w1[i] = seedv * (float)(i - 11) / 7.0f;
    for (i = 0; i < 4; i++) b1[i] = -seedv * (float)i;
    for (i = 0; i < 24; i++) v1[i] = (float)i * 1e-3f + seedv;
}

static int tensors(mnist_ckpt_tensor *t) { return ckpt_fixture_tensors(t, 6, 4, w1, b1, v1); }

static mnist_ckpt_meta meta_of(const char *model, uint64_t step, uint64_t seed, uint32_t epoch) {
    mnist_ckpt_meta m;
    memset(&m, 0, sizeof m);
    snprintf(m.model, sizeof m.model, "%s", model);
    m.step = step;
    m.seed = seed;
    m.epoch = epoch;
    return m;
}

static long file_bytes(const char *p, unsigned char *buf, long cap) {
    FILE *f = fopen(p, "rb");
    long n;
    if (!f) return -1;
    n = (long)fread(buf, 1, (size_t)cap, f);
    fclose(f);
    return n;
}
static void write_bytes(const char *p, const unsigned char *buf, long n) {
    FILE *f = fopen(p, "wb");
    if (!f) exit(2);
    if (n) fwrite(buf, 1, (size_t)n, f);
    fclose(f);
}

TTEST(round_trip_and_layout) {
    char p[512], err[MNIST_CKPT_ERR_LEN] = "";
    mnist_ckpt_tensor t[3];
    mnist_ckpt_meta m = meta_of("mlp", 0x1122334455ull, 0xdeadbeefcafe42ull, 7), got;
    unsigned char buf[4096];
    long n;
    int i, bad = 0;
    float keep_w[24], keep_b[4], keep_v[24];
    struct stat st;
    path_of(p, sizeof p, "a.ckpt");
    fill(1.5f);
    memcpy(keep_w, w1, sizeof w1);
    memcpy(keep_b, b1, sizeof b1);
    memcpy(keep_v, v1, sizeof v1);
    TT_EQ_INT(mnist_ckpt_save(p, &m, t, tensors(t), err), MNIST_CKPT_OK);
    /* the temporary file is gone after the rename */
    {
        char tp[520];
        snprintf(tp, sizeof tp, "%s.tmp", p);
        TT_CHECK(stat(tp, &st) != 0);
    }
    n = file_bytes(p, buf, sizeof buf);
    /* header 72 + records (2+7+2+8 + 96) + (2+7+2+4 + 16) + (2+16+2+8 + 96) + crc 4 */
    TT_EQ_INT(n, 72 + 115 + 31 + 124 + 4);
    TT_CHECK(memcmp(buf, "IPUPCKPT", 8) == 0);
    TT_EQ_INT(buf[8], 1);                       /* version, little-endian */
    TT_EQ_INT(buf[12], 3);                      /* tensors */
    TT_EQ_INT(buf[16], 0x55);                   /* step low byte first */
    TT_EQ_INT(buf[20], 0x11);
    TT_EQ_INT(buf[24], 0x42);                   /* seed */
    TT_EQ_INT(buf[32], 7);                      /* epoch */
    TT_CHECK(strcmp((const char *)buf + 40, "mlp") == 0);
    TT_EQ_INT(buf[72], 7);                      /* name length of "dense.w" */
    TT_CHECK(memcmp(buf + 74, "dense.w", 7) == 0);
    TT_EQ_INT(buf[81], 1);                      /* float32 */
    TT_EQ_INT(buf[82], 2);                      /* rank */
    TT_EQ_INT(buf[83], 6);
    TT_EQ_INT(buf[87], 4);
    {
        float f0;
        uint32_t u = (uint32_t)buf[91] | ((uint32_t)buf[92] << 8) | ((uint32_t)buf[93] << 16) | ((uint32_t)buf[94] << 24);
        memcpy(&f0, &u, 4);
        TT_CHECK(f0 == w1[0]);
    }
    /* load into zeroed tensors */
    memset(w1, 0, sizeof w1);
    memset(b1, 0, sizeof b1);
    memset(v1, 0, sizeof v1);
    got = meta_of("mlp", 0, 0, 0);
    TT_EQ_INT(mnist_ckpt_load(p, &got, t, tensors(t), err), MNIST_CKPT_OK);
    TT_CHECK(got.step == 0x1122334455ull);
    TT_CHECK(got.seed == 0xdeadbeefcafe42ull);
    TT_EQ_INT(got.epoch, 7);
    for (i = 0; i < 24; i++) bad += memcmp(&w1[i], &keep_w[i], 4) != 0 || memcmp(&v1[i], &keep_v[i], 4) != 0;
    for (i = 0; i < 4; i++) bad += memcmp(&b1[i], &keep_b[i], 4) != 0;
    TT_EQ_INT(bad, 0);
    remove(p);
}

TTEST(identical_state_identical_bytes) {
    char p1[512], p2[512], err[MNIST_CKPT_ERR_LEN] = "";
    mnist_ckpt_tensor t[3];
    mnist_ckpt_meta m = meta_of("cnn", 42, 7, 2);
    unsigned char a[4096], b[4096];
    long na, nb;
    path_of(p1, sizeof p1, "x1.ckpt");
    path_of(p2, sizeof p2, "x2.ckpt");
    fill(0.25f);
    TT_EQ_INT(mnist_ckpt_save(p1, &m, t, tensors(t), err), MNIST_CKPT_OK);
    TT_EQ_INT(mnist_ckpt_save(p2, &m, t, tensors(t), err), MNIST_CKPT_OK);
    na = file_bytes(p1, a, sizeof a);
    nb = file_bytes(p2, b, sizeof b);
    TT_EQ_INT(na, nb);
    TT_CHECK(na > 0 && memcmp(a, b, (size_t)na) == 0);
    /* one weight one ulp apart: different bytes */
    {
        uint32_t u;
        memcpy(&u, &w1[3], 4);
        u ^= 1u;
        memcpy(&w1[3], &u, 4);
    }
    TT_EQ_INT(mnist_ckpt_save(p2, &m, t, tensors(t), err), MNIST_CKPT_OK);
    nb = file_bytes(p2, b, sizeof b);
    TT_CHECK(na == nb && memcmp(a, b, (size_t)na) != 0);
    remove(p1);
    remove(p2);
}

/* Saves a good file, applies `edit` to its bytes, expects load to fail with
 * `code` and a message containing `msg`, and the tensors untouched. */
static void expect_refused(void (*edit)(unsigned char *, long *), int code, const char *msg, const char *model) {
    char p[512], err[MNIST_CKPT_ERR_LEN] = "";
    mnist_ckpt_tensor t[3];
    mnist_ckpt_meta m = meta_of("mlp", 5, 9, 1), got;
    unsigned char buf[4096];
    long n;
    path_of(p, sizeof p, "c.ckpt");
    fill(2.0f);
    TT_EQ_INT(mnist_ckpt_save(p, &m, t, tensors(t), err), MNIST_CKPT_OK);
    n = file_bytes(p, buf, sizeof buf);
    if (edit) edit(buf, &n);
    write_bytes(p, buf, n);
    fill(-3.0f);
    got = meta_of(model, 0, 0, 0);
    TT_EQ_INT(mnist_ckpt_load(p, &got, t, tensors(t), err), code);
    TT_CONTAINS(err, msg);
    TT_CONTAINS(err, "c.ckpt: ");
    TT_CHECK(w1[5] == -3.0f * (float)(5 - 11) / 7.0f); /* untouched */
    TT_CHECK(got.step == 0);
    remove(p);
}

static void flip_value_byte(unsigned char *b, long *n) { (void)n; b[100] ^= 0x40; }
static void truncate_file(unsigned char *b, long *n) { (void)b; *n -= 10; }
static void bad_magic(unsigned char *b, long *n) { (void)n; b[0] = 'X'; }
static void bad_version(unsigned char *b, long *n) { (void)n; b[8] = 2; }
static void tiny(unsigned char *b, long *n) { (void)b; *n = 20; }
static void empty(unsigned char *b, long *n) { (void)b; *n = 0; }

TTEST(refuses_corrupt_truncated_foreign) {
    expect_refused(flip_value_byte, MNIST_CKPT_E_CORRUPT, "corrupt checkpoint: CRC-32 is", "mlp");
    expect_refused(truncate_file, MNIST_CKPT_E_CORRUPT, "damaged or truncated file", "mlp");
    expect_refused(bad_magic, MNIST_CKPT_E_CORRUPT, "corrupt checkpoint: the magic is not IPUPCKPT", "mlp");
    expect_refused(bad_version, MNIST_CKPT_E_MISMATCH,
                   "checkpoint does not match this run: version 2, this program reads version 1", "mlp");
    expect_refused(tiny, MNIST_CKPT_E_CORRUPT, "corrupt checkpoint: only 20 bytes, shorter than a checkpoint header",
                   "mlp");
    expect_refused(empty, MNIST_CKPT_E_CORRUPT, "corrupt checkpoint: only 0 bytes", "mlp");
}

TTEST(refuses_other_model) {
    expect_refused(NULL, MNIST_CKPT_E_MISMATCH, "it holds model 'mlp', this run trains 'cnn' (use --model mlp)", "cnn");
}

TTEST(refuses_mismatched_tensors) {
    char p[512], err[MNIST_CKPT_ERR_LEN] = "";
    mnist_ckpt_tensor t[3];
    mnist_ckpt_meta m = meta_of("mlp", 5, 9, 1), got = meta_of("mlp", 0, 0, 0);
    path_of(p, sizeof p, "d.ckpt");
    fill(1.0f);
    TT_EQ_INT(mnist_ckpt_save(p, &m, t, tensors(t), err), MNIST_CKPT_OK);
    /* fewer tensors (e.g. sgd instead of momentum) */
    TT_EQ_INT(mnist_ckpt_load(p, &got, t, 2, err), MNIST_CKPT_E_MISMATCH);
    TT_CONTAINS(err, "it holds 3 tensors, this run has 2");
    /* another shape */
    tensors(t);
    t[0].dims[0] = 3;
    t[0].dims[1] = 8;
    TT_EQ_INT(mnist_ckpt_load(p, &got, t, 3, err), MNIST_CKPT_E_MISMATCH);
    TT_CONTAINS(err, "tensor dense.w dimension 0 is 6, this model expects 3");
    /* another name */
    tensors(t);
    t[2].name = "dense.w.adam_m";
    TT_EQ_INT(mnist_ckpt_load(p, &got, t, 3, err), MNIST_CKPT_E_MISMATCH);
    TT_CONTAINS(err, "tensor 2 is 'dense.w.momentum', this run expects 'dense.w.adam_m'");
    /* missing file */
    TT_EQ_INT(mnist_ckpt_load("/nonexistent/x.ckpt", &got, t, 3, err), MNIST_CKPT_E_IO);
    TT_CONTAINS(err, "/nonexistent/x.ckpt: i/o error: cannot open it");
    remove(p);
}

TTEST(save_errors) {
    char err[MNIST_CKPT_ERR_LEN] = "";
    mnist_ckpt_tensor t[3];
    mnist_ckpt_meta m = meta_of("mlp", 1, 1, 1);
    fill(1.0f);
    TT_EQ_INT(mnist_ckpt_save("/nonexistent/dir/x.ckpt", &m, t, tensors(t), err), MNIST_CKPT_E_IO);
    TT_CONTAINS(err, "cannot create the temporary file");
    tensors(t);
    t[1].dims[0] = 0;
    TT_EQ_INT(mnist_ckpt_save("/tmp/never.ckpt", &m, t, 3, err), MNIST_CKPT_E_ARG);
    TT_CONTAINS(err, "tensor 1 has a bad name, rank or shape");
}

/* The reader speaks the library's result codes: a damaged or foreign file is
 * IPUP_ERR_CORRUPT (bad CRC, bad magic, truncated), a sound file of another run
 * IPUP_ERR_MISMATCH (model, tensors, shape, format version). */
TTEST(library_result_codes) {
    char p[512], err[MNIST_CKPT_ERR_LEN] = "";
    mnist_ckpt_tensor t[3];
    mnist_ckpt_meta m = meta_of("mlp", 5, 9, 1), got;
    TT_EQ_INT(MNIST_CKPT_OK, IPUP_OK);
    TT_EQ_INT(MNIST_CKPT_E_CORRUPT, IPUP_ERR_CORRUPT);
    TT_EQ_INT(MNIST_CKPT_E_MISMATCH, IPUP_ERR_MISMATCH);
    TT_EQ_INT(MNIST_CKPT_E_IO, IPUP_ERR_IO);
    TT_EQ_INT(MNIST_CKPT_E_ARG, IPUP_ERR_ARG);
    expect_refused(flip_value_byte, IPUP_ERR_CORRUPT, "corrupt checkpoint: CRC-32 is", "mlp");
    /* the size is compared with the header's tensors before the CRC pass */
    expect_refused(truncate_file, IPUP_ERR_CORRUPT, "corrupt checkpoint: truncated in tensor", "mlp");
    expect_refused(bad_magic, IPUP_ERR_CORRUPT, "(not written by --save)", "mlp");
    expect_refused(bad_version, IPUP_ERR_MISMATCH, "version 2", "mlp");
    expect_refused(NULL, IPUP_ERR_MISMATCH, "checkpoint does not match this run: it holds model 'mlp'", "cnn");
    /* the header alone: peek says the same */
    path_of(p, sizeof p, "e.ckpt");
    fill(1.0f);
    TT_EQ_INT(mnist_ckpt_save(p, &m, t, tensors(t), err), MNIST_CKPT_OK);
    {
        unsigned char buf[4096];
        long n = file_bytes(p, buf, sizeof buf);
        buf[1] = 'Q';
        write_bytes(p, buf, n);
        TT_EQ_INT(mnist_ckpt_peek(p, &got, err), IPUP_ERR_CORRUPT);
        TT_CONTAINS(err, "corrupt checkpoint: the magic is not IPUPCKPT");
        write_bytes(p, buf, 30);
        TT_EQ_INT(mnist_ckpt_peek(p, &got, err), IPUP_ERR_CORRUPT);
        TT_CONTAINS(err, "corrupt checkpoint: only 30 bytes");
        buf[1] = 'P';
        buf[8] = 7;
        write_bytes(p, buf, n);
        TT_EQ_INT(mnist_ckpt_peek(p, &got, err), IPUP_ERR_MISMATCH);
        TT_CONTAINS(err, "checkpoint does not match this run: version 7, this program reads version 1");
    }
    remove(p);
}

TTEST(result_strings) {
    TT_STREQ(mnist_ckpt_result_str(MNIST_CKPT_E_CORRUPT), "corrupt checkpoint");
    TT_STREQ(mnist_ckpt_result_str(12345), "unknown result");
}

static const ttest_case cases[] = {
    TT_CASE(round_trip_and_layout),  TT_CASE(identical_state_identical_bytes), TT_CASE(refuses_corrupt_truncated_foreign),
    TT_CASE(refuses_other_model),    TT_CASE(refuses_mismatched_tensors),      TT_CASE(save_errors),
    TT_CASE(library_result_codes),   TT_CASE(result_strings),
};

int main(int argc, char **argv) {
    int r = TTEST_MAIN(cases, argc, argv);
    rmdir(tmpdir());
    return r;
}
