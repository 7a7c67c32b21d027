/* test_hostile_inputs.c - hostile input to every reader of outside data:
 * the IDX reader (examples/mnist/mnist_data.h), the schedule CSV reader (ipupipe_sched.h)
 * and the checkpoint reader/writer (examples/mnist/mnist_ckpt.h). Each case checks the exact
 * result code and the words of the message that say what is wrong, and that nothing
 * was written into the caller's buffers or over the previous file. The files are
 * written here, into a private temporary directory that is removed at the end.
 * The integrity cases: each reader opens a file once (counted through EX_OPEN) and
 * survives a real rename race; FIFOs and directories are refused without blocking;
 * NaN/inf, out-of-range header fields and unprintable names in a checkpoint with a
 * valid CRC are refused; a huge sparse checkpoint is refused from its size; saving
 * never follows a planted link, never touches another run's temporary and never
 * replaces a device.
 */
#define _POSIX_C_SOURCE 200809L
#include "ipupipe_sched.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The readers' one open() (ex_files.h's EX_OPEN), counted for the paths that
 * contain hk_watch: a reader that opens a file twice can read two different files. */
static int hk_opens;
static const char *hk_watch;
static int hk_open(const char *path, int flags) {
    if (hk_watch && strstr(path, hk_watch)) hk_opens++;
    return open(path, flags);
}
#define EX_OPEN(path, flags) hk_open((path), (flags))

#include "mnist_ckpt.h"
#include "mnist_data.h"
#include "ckpt_fixture.h"
#include "idx_fixture.h"
#include "scratch_dir.h"
#include "ttest.h"

static char dir_[64];

static void path_of(char *out, size_t cap, const char *name) {
    snprintf(out, cap, "%s/%s", scratch_dir(dir_, sizeof dir_, "hostile"), name);
}

static void write_bytes(const char *path, const unsigned char *p, size_t n) {
    if (fixture_write_file(path, p, n) != 0) {
        perror(path);
        exit(2);
    }
}

static long long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* Temporary files "<name>.*.tmp" left in the test directory. */
static int tmps_left(const char *name) {
    DIR *d = opendir(dir_);
    struct dirent *e;
    size_t n = strlen(name);
    int k = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) {
        size_t L = strlen(e->d_name);
        if (L > n + 5 && strncmp(e->d_name, name, n) == 0 && e->d_name[n] == '.' && strcmp(e->d_name + L - 4, ".tmp") == 0)
            k++;
    }
    closedir(d);
    return k;
}

static void pause_us(long us) {
    struct timespec ts;
    ts.tv_sec = 0;
    ts.tv_nsec = us * 1000;
    nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------ IDX */
/* An IDX file: magic 00 00 08 rank, dims big-endian, then `payload` bytes (each byte
 * = fill, or i % 10 for labels when fill < 0). */
static size_t idx_make(unsigned char *buf, int rank, const uint32_t *dims, size_t payload, int fill) {
    size_t n = idx_header(buf, 8, rank, dims), i;
    for (i = 0; i < payload; i++) buf[n++] = (unsigned char)(fill < 0 ? (int)(i % 10) : fill);
    return n;
}

static unsigned char idx_buf[64 + 5 * 4 * 4];
static char img_path[96], lab_path[96];

/* Writes a good pair: 5 images of 4x4 and 5 labels 0..4. */
static void idx_good_pair(void) {
    static unsigned char b[64 + 5 * 16]; /* not idx_buf: the cases build their file there */
    uint32_t di[3] = {5, 4, 4}, dl[1] = {5};
    size_t n;
    path_of(img_path, sizeof img_path, "images");
    path_of(lab_path, sizeof lab_path, "labels");
    n = idx_make(b, 3, di, 5 * 16, 77);
    write_bytes(img_path, b, n);
    n = idx_make(b, 1, dl, 5, -1);
    write_bytes(lab_path, b, n);
}

/* Loads the pair into sentinel-filled buffers; returns the code, err gets the text;
 * *untouched = 1 when no buffer element changed. */
static int idx_load(char *err, int *untouched) {
    static float x[5 * 16];
    static int32_t y[5];
    mnist_info info;
    int i, r;
    for (i = 0; i < 5 * 16; i++) x[i] = -7.0f;
    for (i = 0; i < 5; i++) y[i] = -7;
    err[0] = 0;
    r = mnist_load_files(img_path, lab_path, 0, 5, x, y, &info, err);
    *untouched = 1;
    for (i = 0; i < 5 * 16; i++)
        if (x[i] != -7.0f) *untouched = 0;
    for (i = 0; i < 5; i++)
        if (y[i] != -7) *untouched = 0;
    return r;
}

TTEST(idx_good_pair_loads) {
    char err[EX_ERR_LEN];
    int untouched;
    idx_good_pair();
    TT_EQ_INT(idx_load(err, &untouched), MNIST_OK);
    TT_CHECK(!untouched);
}

/* one images file variant against the good labels file */
static void idx_images_case(const unsigned char *p, size_t n, int code, const char *words1, const char *words2) {
    char err[EX_ERR_LEN];
    int untouched, r;
    idx_good_pair();
    write_bytes(img_path, p, n);
    r = idx_load(err, &untouched);
    TT_EQ_INT(r, code);
    TT_CONTAINS(err, img_path); /* the message names the file */
    TT_CONTAINS(err, words1);
    if (words2) TT_CONTAINS(err, words2);
    TT_CHECK_MSG(untouched, "a refused file must leave the caller's buffers untouched: %.200s", err);
}

TTEST(idx_empty_file) { idx_images_case(idx_buf, 0, MNIST_E_TRUNCATED, "empty (0 bytes)", NULL); }

TTEST(idx_wrong_magic) {
    static const unsigned char gz[] = {0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    idx_images_case(gz, sizeof gz, MNIST_E_MAGIC, "magic bytes 1f 8b 08 00", "gzip");
}

TTEST(idx_wrong_rank) {
    uint32_t d[2] = {5, 16};
    size_t n = idx_make(idx_buf, 2, d, 80, 1);
    idx_images_case(idx_buf, n, MNIST_E_RANK, "rank 2", "expected 3");
}

TTEST(idx_zero_count) {
    uint32_t d[3] = {0, 4, 4};
    size_t n = idx_make(idx_buf, 3, d, 0, 1);
    idx_images_case(idx_buf, n, MNIST_E_DIMS, "dimension 0 is 0", "no items");
}

TTEST(idx_zero_rows) {
    uint32_t d[3] = {5, 0, 4};
    size_t n = idx_make(idx_buf, 3, d, 0, 1);
    idx_images_case(idx_buf, n, MNIST_E_DIMS, "dimension 1 is 0", NULL);
}

/* counts whose byte size overflows 32 and 64 bits: refused before any arithmetic wraps */
TTEST(idx_huge_counts_overflow) {
    uint32_t d1[3] = {0xffffffffu, 0xffffffffu, 0xffffffffu}; /* 2^96: wraps 64 bits */
    uint32_t d2[3] = {0x7fffffffu, 46340u, 46340u};           /* each fits an int, product > 2^62 */
    uint32_t d3[3] = {1u, 65536u, 65536u};                   /* one item of 2^32 bytes */
    size_t n = idx_make(idx_buf, 3, d1, 0, 1);
    idx_images_case(idx_buf, n, MNIST_E_DIMS, "too large", NULL);
    n = idx_make(idx_buf, 3, d2, 0, 1);
    idx_images_case(idx_buf, n, MNIST_E_DIMS, "too large", NULL);
    n = idx_make(idx_buf, 3, d3, 0, 1);
    idx_images_case(idx_buf, n, MNIST_E_DIMS, "too large", NULL);
}

TTEST(idx_huge_count_small_file) {
    uint32_t d[3] = {0x7fffffffu, 28u, 28u}; /* fits the checks, but the file has 0 pixels */
    size_t n = idx_make(idx_buf, 3, d, 0, 1);
    idx_images_case(idx_buf, n, MNIST_E_TRUNCATED, "needs 1683627179264", "truncated");
}

TTEST(idx_size_not_matching_header) {
    uint32_t d[3] = {5, 4, 4};
    size_t n = idx_make(idx_buf, 3, d, 5 * 16 - 1, 1); /* one byte short */
    idx_images_case(idx_buf, n, MNIST_E_TRUNCATED, "is 95 bytes but its header", "needs 96");
    n = idx_make(idx_buf, 3, d, 5 * 16 + 3, 1); /* three bytes too many */
    idx_images_case(idx_buf, n, MNIST_E_SIZE, "is 99 bytes", "trailing bytes");
    idx_images_case(idx_buf, 10, MNIST_E_TRUNCATED, "shorter than the 16-byte header", NULL);
}

TTEST(idx_label_out_of_range) {
    char err[EX_ERR_LEN];
    uint32_t dl[1] = {5};
    int untouched;
    size_t n;
    idx_good_pair();
    n = idx_make(idx_buf, 1, dl, 5, -1);
    idx_buf[8 + 3] = 10; /* label of item 3 */
    write_bytes(lab_path, idx_buf, n);
    TT_EQ_INT(idx_load(err, &untouched), MNIST_E_LABEL);
    TT_CONTAINS(err, lab_path);
    TT_CONTAINS(err, "label 10 of item 3 is out of range 0..9");
    TT_CHECK_MSG(untouched, "labels 0..2 were copied before item 3 was refused (partial output): %.200s", err);
    idx_buf[8 + 3] = 255;
    write_bytes(lab_path, idx_buf, n);
    TT_EQ_INT(idx_load(err, &untouched), MNIST_E_LABEL);
    TT_CONTAINS(err, "label 255 of item 3");
}

TTEST(idx_counts_differ) {
    char err[EX_ERR_LEN];
    uint32_t dl[1] = {4};
    int untouched;
    size_t n;
    idx_good_pair();
    n = idx_make(idx_buf, 1, dl, 4, -1);
    write_bytes(lab_path, idx_buf, n);
    TT_EQ_INT(idx_load(err, &untouched), MNIST_E_MISMATCH);
    TT_CONTAINS(err, "5 images but 4 labels");
    TT_CHECK(untouched);
}

TTEST(idx_labels_file_as_images) {
    char err[EX_ERR_LEN];
    int untouched;
    idx_good_pair();
    /* the two files swapped: each has the other's rank */
    {
        char t[96];
        snprintf(t, sizeof t, "%s", img_path);
        snprintf(img_path, sizeof img_path, "%s", lab_path);
        snprintf(lab_path, sizeof lab_path, "%s", t);
    }
    TT_EQ_INT(idx_load(err, &untouched), MNIST_E_RANK);
    TT_CONTAINS(err, "rank 1 in the magic number, expected 3");
    TT_CHECK(untouched);
}

TTEST(idx_missing_file) {
    char err[EX_ERR_LEN];
    mnist_info info;
    TT_EQ_INT(mnist_probe("/nonexistent/ipup", "train", &info, err), MNIST_E_OPEN);
    TT_CONTAINS(err, "/nonexistent/ipup/train-images-idx3-ubyte");
    TT_CONTAINS(err, "make data");
}

/* ------------------------------------------------------------------ schedule CSV */
static ipup_op csv_ops[4096];
static uint64_t csv_work[8192];

/* scan + load + verify; returns the first failing code (0 when valid), msg gets the text */
static int csv_check(const char *text, size_t len, char *msg, size_t cap, ipup_sched_verify_info *vi) {
    int32_t S, M, P, n;
    ipup_table t;
    int rc = ipup_sched_csv_scan(text, len, &S, &M, &P, &n, msg, cap);
    if (rc) return rc;
    if (n > 4096 || IPUP_SCHED_WORK_BYTES(S, M) > sizeof csv_work) return 99;
    rc = ipup_sched_csv_load(text, len, csv_ops, 4096, csv_work, sizeof csv_work, &t, msg, cap);
    if (rc) return rc;
    return ipup_sched_verify(&t, csv_work, sizeof csv_work, vi, msg, cap);
}

#define CSV_CASE(text, code, words1, words2)                                                 \
    do {                                                                                     \
        char msg_[1024];                                                                     \
        ipup_sched_verify_info vi_;                                                          \
        TT_EQ_INT(csv_check((text), strlen(text), msg_, sizeof msg_, &vi_), (code));         \
        TT_CONTAINS(msg_, (words1));                                                         \
        if ((words2) != NULL) TT_CONTAINS(msg_, (const char *)(words2));                      \
    } while (0)

TTEST(csv_unknown_token) {
    CSV_CASE("0F0,0X1\n,1F0\n", IPUP_ERR_PARSE, "row 1, column 2: '0X1' is not a compute action", NULL);
    CSV_CASE("0F0,0B0\n,SEND_F0\n", IPUP_ERR_PARSE, "row 2, column 2", "not a compute action");
    CSV_CASE("0F0,hello\n", IPUP_ERR_PARSE, "'hello'", NULL);
    CSV_CASE("0F-1\n", IPUP_ERR_PARSE, "'0F-1'", NULL);
}

TTEST(csv_stage_or_microbatch_out_of_range) {
    CSV_CASE("300F0,300B0\n", IPUP_ERR_PARSE, "stage 300 is beyond the maximum 255", "IPUP_SCHED_MAX_STAGES");
    CSV_CASE("0F99999999,0B99999999\n", IPUP_ERR_PARSE, "micro-batch 99999999 is beyond the maximum", NULL);
    CSV_CASE("0F9999999999\n", IPUP_ERR_PARSE, "at most 9 digits", NULL);
    /* a stage that no device holds (stage 1 missing between 0 and 2) */
    CSV_CASE("0F0,0B0\n,2F0,2B0\n", IPUP_ERR_INVALID_TABLE, "stage 1 has no device", NULL);
}

TTEST(csv_duplicate_op) {
    CSV_CASE("0F0,0F0,0B0\n", IPUP_ERR_INVALID_TABLE, "F(0,0) [0F0] appears twice", "remove one");
}

TTEST(csv_missing_op) {
    CSV_CASE("0F0,0F1,0B0\n", IPUP_ERR_INVALID_TABLE, "B(0,1) [0B1] is missing", "add it");
}

TTEST(csv_op_before_its_dependency) {
    char msg[1024];
    ipup_sched_verify_info vi;
    TT_EQ_INT(csv_check("0F0,0B0\n,1F0,1B0\n", 17, msg, sizeof msg, &vi), IPUP_ERR_INVALID_TABLE);
    TT_EQ_INT(vi.rule, 4);
    TT_EQ_INT(vi.step, 1);
    TT_EQ_INT(vi.device, 0);
    TT_CONTAINS(msg, "B(0,0) [0B0] needs B(1,0) [1B0]");
    /* vi.step is 0-based (machine field); messages count steps from 1, as people read them */
    TT_CONTAINS(msg, "device 0, step 2:");
    TT_CONTAINS(msg, "move B(0,0) [0B0] to step 4 or later");
    /* a forward before its input: F(1,0) at step 0, F(0,0) at step 1 */
    CSV_CASE(",0F0,,0B0\n1F0,,1B0\n", IPUP_ERR_INVALID_TABLE, "F(1,0) [1F0] needs F(0,0) [0F0]", NULL);
}

TTEST(csv_stage_on_two_devices) {
    CSV_CASE("0F0,0B0\n,,0F1,0B1\n", IPUP_ERR_INVALID_TABLE, "F(0,1) [0F1] runs on device 1, but stage 0 lives on device 0",
             NULL);
}

TTEST(csv_ragged_rows) {
    char msg[1024];
    ipup_sched_verify_info vi;
    /* rows of different lengths are PyTorch's normal layout: valid when the columns line up */
    TT_EQ_INT(csv_check("0F0,,,0B0\n,1F0,1B0\n", 19, msg, sizeof msg, &vi), IPUP_OK);
    /* ragged rows that are per-device orders, not lock-step columns: refused, step named */
    TT_EQ_INT(csv_check("0F0,0B0\n,1F0,1B0,,,,,,\n", 23, msg, sizeof msg, &vi), IPUP_ERR_INVALID_TABLE);
    TT_CONTAINS(msg, "device 0, step 2"); /* 1-based in messages */
    /* a row of only commas, blank lines and CRLF line ends */
    TT_EQ_INT(csv_check("0F0,,,0B0\r\n,,,,,,,,\r\n\r\n", 23, msg, sizeof msg, &vi), IPUP_OK);
}

TTEST(csv_empty_and_nul) {
    char msg[1024];
    ipup_sched_verify_info vi;
    TT_EQ_INT(csv_check("", 0, msg, sizeof msg, &vi), IPUP_ERR_PARSE);
    TT_CONTAINS(msg, "no ops found");
    TT_EQ_INT(csv_check("0F0\0,0B0\n", 9, msg, sizeof msg, &vi), IPUP_ERR_PARSE); /* NUL inside */
    TT_CHECK(msg[0] != 0);
}

/* 10 MB of random bytes (and 10 MB of plausible-looking tokens): a parse error
 * with row and column, quickly, no crash, no read past the length */
TTEST(csv_ten_megabytes_of_garbage) {
    size_t n = (size_t)10 << 20, i;
    char *g = (char *)malloc(n), msg[1024];
    uint64_t s = 0x9E3779B97F4A7C15ull;
    int32_t S, M, P, k;
    int rc;
    if (!g) {
        TT_FAILF("no memory");
        return;
    }
    for (i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        g[i] = (char)(s >> 56);
    }
    rc = ipup_sched_csv_scan(g, n, &S, &M, &P, &k, msg, sizeof msg);
    TT_EQ_INT(rc, IPUP_ERR_PARSE);
    TT_CONTAINS(msg, "CSV row ");
    /* valid tokens but a huge table: 10 MB of "0F0," lines: duplicates, refused by the
       loader's sizes or the verifier, never a crash */
    for (i = 0; i + 4 <= n; i += 4) memcpy(g + i, (i / 4) % 64 == 63 ? "0F0\n" : "0F0,", 4);
    rc = ipup_sched_csv_scan(g, n, &S, &M, &P, &k, msg, sizeof msg);
    if (rc == IPUP_OK) {
        TT_EQ_INT(S, 1);
        TT_EQ_INT(M, 1);
        TT_CHECK(k > 2000000);
        TT_EQ_INT(ipup_sched_csv_load(g, n, csv_ops, 4096, csv_work, sizeof csv_work, NULL, msg, sizeof msg),
                  IPUP_ERR_ARG);
        {
            ipup_table t;
            TT_EQ_INT(ipup_sched_csv_load(g, n, csv_ops, 4096, csv_work, sizeof csv_work, &t, msg, sizeof msg),
                      IPUP_ERR_CAPACITY);
            TT_CONTAINS(msg, "the ops array holds 4096");
        }
    } else {
        TT_CHECK(msg[0] != 0);
    }
    free(g);
}

/* ------------------------------------------------------------------ checkpoints */
/* Files are saved from ck_a (tests/ckpt_fixture.h: momentum, two stages, one step run)
 * and loaded into ck_b, started afresh for every load (other initial weights): a load
 * that was refused must leave ck_b exactly as it started, one that passed must give
 * ck_a's tensors and step. */
static ckpt_fixture_emu ck_a, ck_b;
static unsigned char ck_good_snap[1 << 14], ck_before[1 << 14], ck_now[1 << 14];
static size_t ck_good_n, ck_before_n;

static mnist_ckpt_meta ck_meta(const char *model) {
    mnist_ckpt_meta m;
    memset(&m, 0, sizeof m);
    snprintf(m.model, sizeof m.model, "%s", model);
    m.seed = 3;
    m.epoch = 2;
    return m;
}
static void ck_start(ckpt_fixture_emu *f, const char *text, int32_t split_at, ipup_optimizer_kind opt) {
    if (ckpt_fixture_start(f, text, split_at, opt) != IPUP_OK) {
        printf("fixture: %s\n", ipup_last_error(&f->emu));
        exit(2);
    }
}
/* saves a good checkpoint of ck_a and returns its bytes in buf */
static size_t ck_good(const char *path, unsigned char *buf, size_t cap) {
    mnist_ckpt_meta m = ck_meta("mlp");
    char err[MNIST_CKPT_ERR_LEN];
    FILE *f;
    size_t n;
    ck_start(&ck_a, NULL, 2, IPUP_OPT_MOMENTUM);
    if (ipup_run(&ck_a.emu, NULL) != IPUP_OK || mnist_ckpt_save_state(path, &m, &ck_a.emu, err) != MNIST_CKPT_OK) {
        printf("%s %s\n", err, ipup_last_error(&ck_a.emu));
        exit(2);
    }
    ck_good_n = ckpt_fixture_snap(&ck_a.emu, ck_good_snap, sizeof ck_good_snap);
    f = fopen(path, "rb");
    n = f ? fread(buf, 1, cap, f) : 0;
    if (f) fclose(f);
    return n;
}
/* ck_b afresh (text, split, optimizer) and its snapshot */
static void ck_fresh(const char *text, int32_t split_at, ipup_optimizer_kind opt) {
    ck_start(&ck_b, text, split_at, opt);
    ck_before_n = ckpt_fixture_snap(&ck_b.emu, ck_before, sizeof ck_before);
}
/* 1 when ck_b is as ck_fresh left it (nothing loaded) */
static int ck_untouched(void) {
    size_t n = ckpt_fixture_snap(&ck_b.emu, ck_now, sizeof ck_now);
    return n > 0 && n == ck_before_n && memcmp(ck_now, ck_before, n) == 0;
}
/* 1 when ck_b holds ck_a's tensors and step */
static int ck_is_good(void) {
    size_t n = ckpt_fixture_snap(&ck_b.emu, ck_now, sizeof ck_now);
    return n > 0 && n == ck_good_n && memcmp(ck_now, ck_good_snap, n) == 0;
}
/* loads path into ck_b afresh (text, split, optimizer) as model */
static int ck_load_into(const char *path, const char *text, int32_t split_at, ipup_optimizer_kind opt,
                        const char *model, char *err) {
    mnist_ckpt_meta m = ck_meta(model);
    ck_fresh(text, split_at, opt);
    err[0] = 0;
    return mnist_ckpt_load_state(path, &m, &ck_b.emu, err);
}
/* loads path into ck_b afresh, ck_a's configuration, as model */
static int ck_load(const char *path, const char *model, char *err) {
    return ck_load_into(path, NULL, 2, IPUP_OPT_MOMENTUM, model, err);
}
static unsigned char ck_buf[1 << 14];

TTEST(ckpt_good_round_trip) {
    char p[96], err[MNIST_CKPT_ERR_LEN];
    path_of(p, sizeof p, "good.ckpt");
    TT_CHECK(ck_good(p, ck_buf, sizeof ck_buf) > 300);
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_OK);
    TT_CHECK(ck_is_good());
    TT_EQ_INT(ipup_get_step(&ck_b.emu), 1);
}

TTEST(ckpt_truncated) {
    char p[96], err[MNIST_CKPT_ERR_LEN];
    size_t n, cut[] = {0, 7, 40, 67, 68, 75, 116, 200, 0, 0};
    int i;
    path_of(p, sizeof p, "trunc.ckpt");
    n = ck_good(p, ck_buf, sizeof ck_buf);
    cut[8] = n / 2;
    cut[9] = n - 1;
    for (i = 0; i < 10; i++) {
        write_bytes(p, ck_buf, cut[i]);
        TT_CHECK(ck_load(p, "mlp", err) == MNIST_CKPT_E_CORRUPT);
        TT_CONTAINS(err, p);
        TT_CHECK_MSG(strstr(err, "shorter than a checkpoint header") || strstr(err, "the stream is truncated"),
                     "cut at %d: %.200s", (int)cut[i], err);
        TT_CHECK_MSG(ck_untouched(), "cut at %d: values copied from a refused file", (int)cut[i]);
    }
    /* truncated with a length and a CRC that match what is left: the structure check
       catches it */
    memcpy(ck_buf + n - 44, ck_buf + n - 4, 4);
    ckpt_fixture_fix_all(ck_buf, n - 40);
    write_bytes(p, ck_buf, n - 40);
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_CORRUPT);
    TT_CONTAINS(err, "the stream is truncated: it ends in a tensor");
    TT_CHECK(ck_untouched());
}

TTEST(ckpt_bad_checksum) {
    char p[96], err[MNIST_CKPT_ERR_LEN];
    size_t n;
    path_of(p, sizeof p, "crc.ckpt");
    n = ck_good(p, ck_buf, sizeof ck_buf);
    ck_buf[n / 2] ^= 0x01; /* one bit of the state */
    write_bytes(p, ck_buf, n);
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_CORRUPT);
    TT_CONTAINS(err, "corrupt checkpoint: the CRC-32 is");
    TT_CONTAINS(err, "(damaged stream)");
    TT_CHECK(ck_untouched());
    ck_buf[n / 2] ^= 0x01;
    ck_buf[17] ^= 0x80; /* one bit of the seed: the header's CRC */
    write_bytes(p, ck_buf, n);
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_CORRUPT);
    TT_CONTAINS(err, "the CRC-32 of the header does not match (damaged file)");
    TT_CHECK(ck_untouched());
}

TTEST(ckpt_other_models_shapes) {
    char p[96], err[MNIST_CKPT_ERR_LEN], name[IPUP_TENSOR_NAME_MAX];
    ipup_tensor_info ti;
    size_t n, cut;
    int32_t np;
    path_of(p, sizeof p, "shape.ckpt");
    n = ck_good(p, ck_buf, sizeof ck_buf);
    TT_EQ_INT(ck_load_into(p, "dense5,relu,dense3,xent", 2, IPUP_OPT_MOMENTUM, "mlp", err), MNIST_CKPT_E_MISMATCH);
    TT_CONTAINS(err, "layer 0 is dense4 (dense, 4 units) in the file, dense5 (dense, 5 units) in this emulator");
    TT_CHECK(ck_untouched());
    TT_EQ_INT(ck_load(p, "cnn", err), MNIST_CKPT_E_MISMATCH);
    TT_CONTAINS(err, "it holds model 'mlp', this run trains 'cnn' (use --model mlp)");
    TT_CHECK(ck_untouched());
    TT_EQ_INT(ck_load_into(p, NULL, 2, IPUP_OPT_SGD, "mlp", err), MNIST_CKPT_E_MISMATCH);
    TT_CONTAINS(err, "the optimizer is momentum in the file, sgd in this emulator");
    TT_CHECK(ck_untouched());
    TT_EQ_INT(ck_load_into(p, NULL, 1, IPUP_OPT_MOMENTUM, "mlp", err), MNIST_CKPT_E_MISMATCH);
    TT_CONTAINS(err, "stage 1 begins at layer 2 in the file, at layer 1 (relu) in this emulator");
    TT_CHECK(ck_untouched());
    /* the first layer frozen: no optimizer state of its own, the first record that
       differs is named */
    TT_EQ_INT(ck_load_into(p, "dense4:frozen,relu,dense3,xent", 2, IPUP_OPT_MOMENTUM, "mlp", err),
              MNIST_CKPT_E_MISMATCH);
    TT_CONTAINS(err, "tensor 4 is dense4.w");
    TT_CHECK(ck_untouched());
    /* only the parameter records (tensor count and every length and CRC made to agree) */
    np = 4;
    TT_EQ_INT(ipup_tensor_get(&ck_a.emu, np, &ti), IPUP_OK);
    TT_CHECK(ti.kind != IPUP_TENSOR_PARAM);
    snprintf(name, sizeof name, "%s", ti.name);
    cut = ckpt_fixture_record_at(ck_buf, n, name);
    TT_CHECK(cut > 0);
    ckpt_fixture_put32(ck_buf + CKPT_FIXTURE_ST + 40, (uint32_t)np);
    ckpt_fixture_fix_all(ck_buf, cut + 4);
    write_bytes(p, ck_buf, cut + 4);
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_MISMATCH);
    TT_CONTAINS(err, "the file holds 4 tensors, this emulator 8 (the first 4 agree)");
    TT_CHECK(ck_untouched());
}

TTEST(ckpt_another_version) {
    char p[96], err[MNIST_CKPT_ERR_LEN];
    mnist_ckpt_meta m;
    size_t n;
    path_of(p, sizeof p, "ver.ckpt");
    write_bytes(p, ck_buf, ckpt_fixture_v1(ck_buf)); /* the tensor list of 0.4.0 and earlier */
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_VERSION);
    TT_CONTAINS(err, "ver.ckpt: checkpoint does not match this run: version 1 (the tensor list of ipupipe 0.4.0 and "
                     "earlier), this program reads version 2");
    TT_CHECK(ck_untouched());
    TT_EQ_INT(mnist_ckpt_peek_state(p, &m, err), MNIST_CKPT_E_VERSION);
    TT_CONTAINS(err, "version 1");
    n = ck_good(p, ck_buf, sizeof ck_buf);
    ck_buf[8] = 3; /* version 3, header CRC made valid */
    ckpt_fixture_fix_header_crc(ck_buf, n);
    write_bytes(p, ck_buf, n);
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_VERSION);
    TT_CONTAINS(err, "version 3, this program reads version 2");
    TT_CHECK(ck_untouched());
    ck_buf[8] = 2;
    ckpt_fixture_fix_header_crc(ck_buf, n);
    ck_buf[CKPT_FIXTURE_ST + 8] = 2; /* the state's format version 2, its CRC made valid */
    ckpt_fixture_fix_state_crc(ck_buf, n);
    write_bytes(p, ck_buf, n);
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_MISMATCH);
    TT_CONTAINS(err, "the stream has format version 2, this library reads version 1");
    TT_CHECK(ck_untouched());
    ck_buf[CKPT_FIXTURE_ST + 8] = 1;
    memcpy(ck_buf + CKPT_FIXTURE_ST, "IPUPSTAX", 8);
    ckpt_fixture_fix_state_crc(ck_buf, n);
    write_bytes(p, ck_buf, n);
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_FORMAT);
    TT_CONTAINS(err, "not an ipupipe state: the magic is not IPUPSTAT");
    memcpy(ck_buf, "IPUPCKPX", 8);
    write_bytes(p, ck_buf, n);
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_FORMAT);
    TT_CONTAINS(err, "the magic is not IPUPCKPT");
    TT_CHECK(ck_untouched());
}

TTEST(ckpt_unwritable_path) {
    char err[MNIST_CKPT_ERR_LEN];
    mnist_ckpt_meta m = ck_meta("mlp");
    ck_start(&ck_a, NULL, 2, IPUP_OPT_MOMENTUM);
    TT_EQ_INT(mnist_ckpt_save_state("/nonexistent/dir/x.ckpt", &m, &ck_a.emu, err), MNIST_CKPT_E_IO);
    TT_CONTAINS(err, "/nonexistent/dir/x.ckpt");
    TT_CONTAINS(err, "cannot create the temporary file");
    TT_CONTAINS(err, "No such file or directory");
}

/* A full disk, made real with RLIMIT_FSIZE in a child process (write() fails with
 * EFBIG once the file would pass 100 bytes): the save fails with a clear message,
 * the previous checkpoint under the same name stays byte-identical and loadable,
 * and no temporary file is left behind. */
TTEST(ckpt_full_disk_keeps_previous) {
    char p[96], tmp[300], err[MNIST_CKPT_ERR_LEN];
    static unsigned char before[1 << 14];
    size_t n;
    pid_t pid;
    int status = 0;
    FILE *f;
    path_of(p, sizeof p, "full.ckpt");
    n = ck_good(p, ck_buf, sizeof ck_buf);
    memcpy(before, ck_buf, n);
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    TT_EQ_INT(tmps_left("full.ckpt"), 0);
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        struct rlimit rl;
        mnist_ckpt_meta m = ck_meta("mlp");
        signal(SIGXFSZ, SIG_IGN);
        rl.rlim_cur = rl.rlim_max = 100;
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(3);
        if (ipup_run(&ck_a.emu, NULL) != IPUP_OK) _exit(6); /* other weights */
        if (mnist_ckpt_save_state(p, &m, &ck_a.emu, err) != MNIST_CKPT_E_IO) _exit(4);
        if (!strstr(err, "disk full?") || !strstr(err, "File too large")) {
            printf("    child: %s\n", err);
            _exit(5);
        }
        _exit(0);
    }
    TT_CHECK(pid > 0);
    if (pid > 0) waitpid(pid, &status, 0);
    TT_CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    TT_EQ_INT(file_size(tmp), -1);
    TT_EQ_INT(tmps_left("full.ckpt"), 0); /* no <path>.XXXXXX.tmp left */
    TT_EQ_INT(file_size(p), (long long)n);
    f = fopen(p, "rb");
    TT_CHECK(f && fread(ck_buf, 1, sizeof ck_buf, f) == n && memcmp(ck_buf, before, n) == 0);
    if (f) fclose(f);
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_OK);
    TT_CHECK(ck_is_good());
}

TTEST(ckpt_not_a_file) {
    char err[MNIST_CKPT_ERR_LEN];
    TT_CHECK(ck_load("/nonexistent.ckpt", "mlp", err) == MNIST_CKPT_E_IO);
    TT_CONTAINS(err, "/nonexistent.ckpt: i/o error: cannot open it");
    TT_CHECK(ck_untouched());
    TT_CHECK(ck_load("/tmp", "mlp", err) == MNIST_CKPT_E_IO); /* a directory */
    TT_CONTAINS(err, "it is a directory, not a checkpoint file");
    TT_CHECK(ck_untouched());
}


/* ------------------------------------------------------------------ integrity */

/* Runs fn in a child with a 10 s alarm: a reader that blocks (a FIFO) or scans a huge
 * file fails the check instead of hanging the suite. Returns the child's exit code,
 * or -1 when it was killed. */
static int in_child(int (*fn)(void)) {
    int status = 0;
    pid_t pid;
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        alarm(10);
        _exit(fn());
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The load opens each IDX file once (the probe is the caller's, and separate). */
TTEST(idx_load_opens_each_file_once) {
    static float x[5 * 16];
    static int32_t y[5];
    char err[EX_ERR_LEN];
    mnist_info info;
    idx_good_pair();
    hk_watch = dir_;
    hk_opens = 0;
    TT_EQ_INT(mnist_load_files(img_path, lab_path, 0, 5, x, y, &info, err), MNIST_OK);
    TT_EQ_INT(hk_opens, 2);
    hk_watch = NULL;
}

/* Buffers sized from a probe of 4x4 images, the file then replaced by 8x8 images:
 * the load refuses it and writes nothing. */
TTEST(idx_file_changed_after_probe) {
    static unsigned char b[64 + 5 * 64];
    static float x[5 * 16 + 16];
    static int32_t y[5];
    uint32_t di[3] = {5, 8, 8};
    char err[EX_ERR_LEN];
    mnist_info room, info;
    int i;
    idx_good_pair();
    TT_EQ_INT(mnist_probe_files(img_path, lab_path, &room, err), MNIST_OK);
    write_bytes(img_path, b, idx_make(b, 3, di, 5 * 64, 5));
    for (i = 0; i < 5 * 16 + 16; i++) x[i] = -7.0f;
    TT_EQ_INT(mnist_load_files_into(img_path, lab_path, 0, &room, x, y, &info, err), MNIST_E_DIMS);
    TT_CONTAINS(err, "the images are 8x8 but the buffers were sized for 4x4");
    for (i = 0; i < 5 * 16 + 16; i++)
        if (x[i] != -7.0f) TT_FAILF("pixel %d written from a refused file", i);
}

/* A real race: a child renames a 4x4 and an 8x8 images file over the path every few
 * hundred microseconds while the parent loads 300 times with room for 4x4: each
 * load is whole 4x4 data or a refusal, and the guard floats after the buffer stay. */
TTEST(idx_rename_race) {
    static unsigned char b[64 + 5 * 64];
    static float x[5 * 16 + 64];
    static int32_t y[5];
    uint32_t d4[3] = {5, 4, 4}, d8[3] = {5, 8, 8};
    char p4[96], p8[96], err[EX_ERR_LEN];
    mnist_info room, info;
    int i, k, ok = 0, refused = 0, status;
    pid_t pid;
    idx_good_pair();
    path_of(p4, sizeof p4, "images4");
    path_of(p8, sizeof p8, "images8");
    TT_EQ_INT(mnist_probe_files(img_path, lab_path, &room, err), MNIST_OK);
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        for (k = 0; k < 4000; k++) {
            size_t n = (k & 1) ? idx_make(b, 3, d8, 5 * 64, 200) : idx_make(b, 3, d4, 5 * 16, 77);
            const char *p = (k & 1) ? p8 : p4;
            if (fixture_write_file(p, b, n) != 0 || rename(p, img_path) != 0) _exit(1);
            pause_us(200);
        }
        _exit(0);
    }
    for (i = 0; i < 300; i++) {
        int r;
        for (k = 0; k < 5 * 16 + 64; k++) x[k] = -7.0f;
        r = mnist_load_files_into(img_path, lab_path, 0, &room, x, y, &info, err);
        for (k = 5 * 16; k < 5 * 16 + 64; k++)
            if (x[k] != -7.0f) break;
        if (k < 5 * 16 + 64) TT_FAILF("load %d wrote past the 4x4 buffer", i);
        if (r == MNIST_OK) ok += x[0] == 77.0f / 255.0f;
        else if (r == MNIST_E_DIMS || r == MNIST_E_OPEN) refused++;
        else TT_FAILF("load %d: unexpected %d: %.200s", i, r, err);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    TT_CHECK_MSG(ok + refused == 300, "%d loads of 4x4 data, %d refused", ok, refused);
    unlink(p4);
    unlink(p8);
}

static int idx_fifo_child(void) {
    char p[96], err[EX_ERR_LEN];
    mnist_info info;
    path_of(p, sizeof p, "fifo");
    if (mnist_probe_files(p, lab_path, &info, err) != MNIST_E_OPEN) return 2;
    if (!strstr(err, "a FIFO (named pipe), not an IDX file")) return 3;
    if (mnist_probe_files(dir_, lab_path, &info, err) != MNIST_E_OPEN) return 4;
    if (!strstr(err, "a directory, not an IDX file") || strstr(err, "9223372036854775807")) return 5;
    return 0;
}

/* A FIFO is refused at open (no writer: it would block for ever), a directory too. */
TTEST(idx_fifo_and_directory_refused) {
    char p[96];
    idx_good_pair();
    path_of(p, sizeof p, "fifo");
    unlink(p);
    TT_CHECK(mkfifo(p, 0600) == 0);
    TT_EQ_INT(in_child(idx_fifo_child), 0);
    unlink(p);
}

/* Rewrites the 4 bytes at off of a good checkpoint with v and makes both CRC-32s valid
 * again; returns the file size. */
static size_t ck_patch32(const char *path, size_t off, uint32_t v) {
    size_t n = ck_good(path, ck_buf, sizeof ck_buf);
    mnist_ckpt_put32_(ck_buf + off, v);
    ckpt_fixture_fix_header_crc(ck_buf, n);
    ckpt_fixture_fix_state_crc(ck_buf, n);
    write_bytes(path, ck_buf, n);
    return n;
}

TTEST(ckpt_load_opens_once) {
    char p[96], err[MNIST_CKPT_ERR_LEN];
    path_of(p, sizeof p, "once.ckpt");
    ck_good(p, ck_buf, sizeof ck_buf);
    hk_watch = "once.ckpt";
    hk_opens = 0;
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_OK);
    TT_EQ_INT(hk_opens, 1);
    hk_watch = NULL;
    TT_CHECK(ck_is_good());
    unlink(p);
}

/* A real race: a good checkpoint and one with a bad CRC (other values) renamed over
 * the path in turn while the parent loads 300 times (by path, and through one
 * descriptor as the trainer does): each load gives the good state or is refused with
 * the emulator untouched; never the bad values. */
TTEST(ckpt_swap_race) {
    char p[96], pg[96], pb[96], err[MNIST_CKPT_ERR_LEN];
    static unsigned char good[1 << 14], badb[1 << 14];
    size_t n, w0;
    int i, k, ok = 0, refused = 0, status;
    pid_t pid;
    path_of(p, sizeof p, "race.ckpt");
    path_of(pg, sizeof pg, "race-good.ckpt");
    path_of(pb, sizeof pb, "race-bad.ckpt");
    n = ck_good(p, good, sizeof good);
    memcpy(badb, good, n);
    w0 = ckpt_fixture_value_at(badb, n, "dense4.w", 0);
    TT_CHECK(w0 > 0);
    for (k = 0; k < 24; k++) mnist_ckpt_put32_(badb + w0 + 4 * (size_t)k, 0x40a00000u); /* 5.0f */
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        for (k = 0; k < 4000; k++) {
            const char *q = (k & 1) ? pb : pg;
            if (fixture_write_file(q, (k & 1) ? badb : good, n) != 0 || rename(q, p) != 0) _exit(1);
            pause_us(200);
        }
        _exit(0);
    }
    for (i = 0; i < 300; i++) {
        mnist_ckpt_meta m = ck_meta("mlp");
        int r, fd;
        ck_fresh(NULL, 2, IPUP_OPT_MOMENTUM);
        if (i & 1) {
            r = mnist_ckpt_load_state(p, &m, &ck_b.emu, err);
        } else {
            fd = mnist_ckpt_open(p, err);
            r = fd < 0 ? MNIST_CKPT_E_IO : mnist_ckpt_load_state_fd(fd, p, &m, &ck_b.emu, err);
            if (fd >= 0) close(fd);
        }
        if (r == MNIST_CKPT_OK && ck_is_good()) ok++;
        else if (r != MNIST_CKPT_OK && ck_untouched()) refused++;
        else TT_FAILF("load %d: rc %d, state neither good nor untouched: %.200s", i, r, err);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    TT_CHECK_MSG(ok + refused == 300, "%d good loads, %d refused", ok, refused);
    unlink(p);
    unlink(pg);
    unlink(pb);
}

TTEST(ckpt_nan_inf_refused) {
    char p[96], err[MNIST_CKPT_ERR_LEN];
    size_t at;
    path_of(p, sizeof p, "nan.ckpt");
    ck_good(p, ck_buf, sizeof ck_buf);
    at = ckpt_fixture_value_at(ck_buf, sizeof ck_buf, "dense4.w", 3);
    TT_CHECK(at > 0);
    ck_patch32(p, at, 0x7fc00000u); /* NaN, CRC valid */
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_CORRUPT);
    TT_CONTAINS(err, "tensor dense4.w holds NaN at element 3");
    TT_CHECK(ck_untouched());
    at = ckpt_fixture_value_at(ck_buf, sizeof ck_buf, "dense4.b", 1);
    TT_CHECK(at > 0);
    ck_patch32(p, at, 0xff800000u); /* -inf */
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_CORRUPT);
    TT_CONTAINS(err, "tensor dense4.b holds an infinity at element 1");
    TT_CHECK(ck_untouched());
    unlink(p);
}

TTEST(ckpt_header_fields_in_range) {
    char p[96], err[MNIST_CKPT_ERR_LEN];
    mnist_ckpt_meta m;
    path_of(p, sizeof p, "range.ckpt");
    ck_patch32(p, 24, 0xffffffffu); /* epoch */
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_CORRUPT);
    TT_CONTAINS(err, "header field epoch is 4294967295, above the limit 1000000");
    TT_CHECK(ck_untouched());
    TT_EQ_INT(mnist_ckpt_peek_state(p, &m, err), MNIST_CKPT_E_CORRUPT);
    TT_CONTAINS(err, "header field epoch");
    ck_patch32(p, 12, 7); /* a reserved field */
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_CORRUPT);
    TT_CONTAINS(err, "the reserved header fields (offsets 12 and 28) are not 0");
    ck_patch32(p, CKPT_FIXTURE_ST + 28, 0x80000000u); /* the state's step: bit 63 */
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_CORRUPT);
    TT_CONTAINS(err, "the header is damaged");
    TT_CONTAINS(err, "step -9223372036854775807"); /* step 1, bit 63 set */
    TT_CHECK(ck_untouched());
    ck_patch32(p, CKPT_FIXTURE_ST + 20, 1); /* the state's length: 4 GB more */
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_CORRUPT);
    TT_CONTAINS(err, "truncated: its state header gives 42949");
    TT_CHECK(ck_untouched());
    unlink(p);
}

/* An escape sequence as the model name (CRC valid) is refused, not printed. */
TTEST(ckpt_unprintable_model_name) {
    char p[96], err[MNIST_CKPT_ERR_LEN];
    mnist_ckpt_meta m;
    size_t n;
    path_of(p, sizeof p, "esc.ckpt");
    n = ck_good(p, ck_buf, sizeof ck_buf);
    memcpy(ck_buf + 32, "\x1b[2J\x1b]0;owned\x07", 14);
    ckpt_fixture_fix_header_crc(ck_buf, n);
    write_bytes(p, ck_buf, n);
    TT_EQ_INT(mnist_ckpt_peek_state(p, &m, err), MNIST_CKPT_E_CORRUPT);
    TT_CONTAINS(err, "model name field (offset 32) holds a byte that is not printable ASCII");
    TT_CHECK(strchr(err, 0x1b) == NULL);
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_E_CORRUPT);
    TT_CHECK(strchr(err, 0x1b) == NULL);
    TT_CHECK(ck_untouched());
    unlink(p);
}

static int ckpt_sparse_child(void) {
    char p[96], err[MNIST_CKPT_ERR_LEN];
    path_of(p, sizeof p, "sparse.ckpt");
    if (ck_load(p, "mlp", err) != MNIST_CKPT_E_CORRUPT) return 2;
    if (!strstr(err, "unexpected bytes after the state")) return 3;
    return ck_untouched() ? 0 : 4;
}
static int ckpt_sparse_len_child(void) {
    char p[96], err[MNIST_CKPT_ERR_LEN];
    path_of(p, sizeof p, "sparse.ckpt");
    if (ck_load(p, "mlp", err) != MNIST_CKPT_E_MISMATCH) return 2;
    if (!strstr(err, "bytes of state, this run's state is") || !strstr(err, "not read")) return 3;
    return ck_untouched() ? 0 : 4;
}

/* A 1 TB sparse file behind a good header: refused from its size, not CRC-scanned (the
 * child has 10 s; a scan would take over an hour); then the state's length field made
 * to say the whole file: refused as no state of this run, not scanned either. */
TTEST(ckpt_huge_sparse_file) {
    char p[96];
    struct stat st;
    unsigned char b[8];
    int fd;
    path_of(p, sizeof p, "sparse.ckpt");
    ck_good(p, ck_buf, sizeof ck_buf);
    fd = open(p, O_RDWR);
    TT_CHECK(fd >= 0);
    if (fd >= 0 && ftruncate(fd, (off_t)1 << 40) != 0 && ftruncate(fd, (off_t)20 << 30) != 0)
        TT_FAILF("cannot make a sparse file: %s", strerror(errno));
    TT_EQ_INT(in_child(ckpt_sparse_child), 0);
    if (fd >= 0 && fstat(fd, &st) == 0) {
        ckpt_fixture_put64(b, (uint64_t)st.st_size - CKPT_FIXTURE_ST);
        TT_CHECK(pwrite(fd, b, 8, CKPT_FIXTURE_ST + 16) == 8);
    }
    if (fd >= 0) close(fd);
    TT_EQ_INT(in_child(ckpt_sparse_len_child), 0);
    unlink(p);
}

static int ckpt_fifo_child(void) {
    char p[96], err[MNIST_CKPT_ERR_LEN];
    mnist_ckpt_meta m;
    path_of(p, sizeof p, "fifo.ckpt");
    if (ck_load(p, "mlp", err) != MNIST_CKPT_E_IO || !strstr(err, "a FIFO (named pipe), not a checkpoint file"))
        return 2;
    if (mnist_ckpt_peek_state(p, &m, err) != MNIST_CKPT_E_IO) return 3;
    return 0;
}

TTEST(ckpt_fifo_refused) {
    char p[96];
    path_of(p, sizeof p, "fifo.ckpt");
    unlink(p);
    TT_CHECK(mkfifo(p, 0600) == 0);
    TT_EQ_INT(in_child(ckpt_fifo_child), 0);
    unlink(p);
}

/* "<path>.tmp" planted as a link to a victim, and as another run's temporary file:
 * the save uses a temporary of its own, both stay as they were. */
TTEST(ckpt_save_own_temporary) {
    char p[96], link_[120], victim[96], err[MNIST_CKPT_ERR_LEN];
    static const unsigned char keep[] = "victim: must stay";
    unsigned char back[64];
    mnist_ckpt_meta m = ck_meta("mlp");
    FILE *f;
    path_of(p, sizeof p, "own.ckpt");
    path_of(victim, sizeof victim, "victim");
    snprintf(link_, sizeof link_, "%s.tmp", p);
    write_bytes(victim, keep, sizeof keep);
    unlink(link_);
    TT_CHECK(symlink(victim, link_) == 0);
    ck_start(&ck_a, NULL, 2, IPUP_OPT_MOMENTUM);
    TT_EQ_INT(mnist_ckpt_save_state(p, &m, &ck_a.emu, err), MNIST_CKPT_OK);
    f = fopen(victim, "rb");
    TT_CHECK(f && fread(back, 1, sizeof back, f) == sizeof keep && memcmp(back, keep, sizeof keep) == 0);
    if (f) fclose(f);
    unlink(link_);
    write_bytes(link_, keep, sizeof keep); /* another run's temporary */
    TT_EQ_INT(mnist_ckpt_save_state(p, &m, &ck_a.emu, err), MNIST_CKPT_OK);
    TT_EQ_INT(file_size(link_), (long long)sizeof keep);
    TT_EQ_INT(tmps_left("own.ckpt"), 0); /* none of its own left */
    TT_EQ_INT(ck_load(p, "mlp", err), MNIST_CKPT_OK);
    unlink(link_);
    unlink(victim);
    unlink(p);
}

/* A device or a FIFO as the target is refused, never replaced by a regular file. */
TTEST(ckpt_save_refuses_devices) {
    char p[96], err[MNIST_CKPT_ERR_LEN];
    struct stat st;
    mnist_ckpt_meta m = ck_meta("mlp");
    ck_start(&ck_a, NULL, 2, IPUP_OPT_MOMENTUM);
    TT_EQ_INT(mnist_ckpt_save_state("/dev/null", &m, &ck_a.emu, err), MNIST_CKPT_E_IO);
    TT_CONTAINS(err, "it is a character device, not a regular file");
    TT_CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    TT_EQ_INT(mnist_ckpt_save_state("/dev/full", &m, &ck_a.emu, err), MNIST_CKPT_E_IO);
    TT_CONTAINS(err, "character device");
    path_of(p, sizeof p, "fifo-out.ckpt");
    unlink(p);
    TT_CHECK(mkfifo(p, 0600) == 0);
    TT_EQ_INT(mnist_ckpt_save_state(p, &m, &ck_a.emu, err), MNIST_CKPT_E_IO);
    TT_CONTAINS(err, "a FIFO (named pipe), not a regular file");
    TT_CHECK(stat(p, &st) == 0 && S_ISFIFO(st.st_mode));
    TT_EQ_INT(tmps_left("fifo-out.ckpt"), 0);
    unlink(p);
}

static void cleanup(void) {
    static const char *names[] = {"images", "labels", "good.ckpt", "trunc.ckpt", "crc.ckpt", "shape.ckpt",
                                  "ver.ckpt", "full.ckpt", "full.ckpt.tmp"};
    char p[96];
    size_t i;
    if (!dir_[0]) return;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        path_of(p, sizeof p, names[i]);
        unlink(p);
    }
    rmdir(dir_);
}

static const ttest_case cases[] = {
    TT_CASE(idx_good_pair_loads), TT_CASE(idx_empty_file), TT_CASE(idx_wrong_magic), TT_CASE(idx_wrong_rank),
    TT_CASE(idx_zero_count), TT_CASE(idx_zero_rows), TT_CASE(idx_huge_counts_overflow),
    TT_CASE(idx_huge_count_small_file), TT_CASE(idx_size_not_matching_header), TT_CASE(idx_label_out_of_range),
    TT_CASE(idx_counts_differ), TT_CASE(idx_labels_file_as_images), TT_CASE(idx_missing_file),
    TT_CASE(csv_unknown_token), TT_CASE(csv_stage_or_microbatch_out_of_range), TT_CASE(csv_duplicate_op),
    TT_CASE(csv_missing_op), TT_CASE(csv_op_before_its_dependency), TT_CASE(csv_stage_on_two_devices),
    TT_CASE(csv_ragged_rows), TT_CASE(csv_empty_and_nul), TT_CASE(csv_ten_megabytes_of_garbage),
    TT_CASE(ckpt_good_round_trip), TT_CASE(ckpt_truncated), TT_CASE(ckpt_bad_checksum),
    TT_CASE(ckpt_other_models_shapes), TT_CASE(ckpt_another_version), TT_CASE(ckpt_unwritable_path),
    TT_CASE(ckpt_full_disk_keeps_previous), TT_CASE(ckpt_not_a_file),
    TT_CASE(idx_load_opens_each_file_once), TT_CASE(idx_file_changed_after_probe), TT_CASE(idx_rename_race),
    TT_CASE(idx_fifo_and_directory_refused), TT_CASE(ckpt_load_opens_once), TT_CASE(ckpt_swap_race),
    TT_CASE(ckpt_nan_inf_refused), TT_CASE(ckpt_header_fields_in_range), TT_CASE(ckpt_unprintable_model_name),
    TT_CASE(ckpt_huge_sparse_file), TT_CASE(ckpt_fifo_refused), TT_CASE(ckpt_save_own_temporary),
    TT_CASE(ckpt_save_refuses_devices),
};

int main(int argc, char **argv) {
    int r = TTEST_MAIN(cases, argc, argv);
    ipup_shutdown(&ck_a.emu);
    ipup_shutdown(&ck_b.emu);
    cleanup();
    return r;
}
