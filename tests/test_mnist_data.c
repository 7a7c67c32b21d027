/* test_mnist_data.c - the IDX reader of examples/mnist/mnist_data.h on small IDX files
 * written by the test itself (good and broken ones); no network, no data/ needed. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "idx_fixture.h"
#include "scratch_dir.h"
#include "mnist_data.h"
#include "ttest.h"

static char dir_[256];

static const char *tmpdir(void) { return scratch_dir(dir_, sizeof dir_, "mnist_data"); }

static void path_of(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", tmpdir(), name); }

/* Writes raw bytes to NAME in the temp dir. */
static void write_raw(const char *name, const unsigned char *b, size_t n) {
    char p[512];
    path_of(p, sizeof p, name);
    if (fixture_write_file(p, b, n) != 0) {
        perror(p);
        exit(2);
    }
}

/* Writes an IDX file: magic (type, rank), header dims hdims[0..rank-1], then
 * `payload` data bytes generated as (i*7+3) % mod. */
static void write_idx(const char *name, int type, int rank, const uint32_t *hdims, size_t payload, int mod) {
    unsigned char *b = (unsigned char *)calloc(1, 16 + payload);
    size_t i, off = idx_header(b, type, rank, hdims);
    for (i = 0; i < payload; i++) b[off + i] = (unsigned char)((i * 7 + 3) % (size_t)mod);
    write_raw(name, b, off + payload);
    free(b);
}

static void good_pair(int count) {
    uint32_t di[3] = {(uint32_t)count, 4, 3}, dl[1] = {(uint32_t)count};
    write_idx("img", 8, 3, di, (size_t)count * 12, 256);
    write_idx("lbl", 8, 1, dl, (size_t)count, 10);
}

/* Loads ("img", "lbl") and returns the code; err gets the message. */
static int load(int limit, int cap, char *err) {
    char pi[512], pl[512];
    float x[64 * 12];
    int32_t y[64];
    mnist_info info;
    path_of(pi, sizeof pi, "img");
    path_of(pl, sizeof pl, "lbl");
    return mnist_load_files(pi, pl, limit, cap, x, y, &info, err);
}

TTEST(good_files_load_scaled) {
    char pi[512], pl[512], err[EX_ERR_LEN] = "";
    float x[5 * 12];
    int32_t y[5];
    mnist_info info;
    int i;
    good_pair(5);
    path_of(pi, sizeof pi, "img");
    path_of(pl, sizeof pl, "lbl");
    TT_EQ_INT(mnist_probe_files(pi, pl, &info, err), MNIST_OK);
    TT_EQ_INT(info.count, 5);
    TT_EQ_INT(info.rows, 4);
    TT_EQ_INT(info.cols, 3);
    TT_EQ_INT(mnist_load_files(pi, pl, 0, 5, x, y, &info, err), MNIST_OK);
    TT_EQ_INT(info.count, 5);
    for (i = 0; i < 5 * 12; i++) {
        float want = (float)((i * 7 + 3) % 256) / 255.0f;
        if (x[i] != want) TT_FAILF("pixel %d: %g != %g", i, (double)x[i], (double)want);
        if (x[i] < 0.0f || x[i] > 1.0f) TT_FAILF("pixel %d out of [0,1]: %g", i, (double)x[i]);
    }
    for (i = 0; i < 5; i++) TT_EQ_INT(y[i], (i * 7 + 3) % 10);
}

TTEST(limit_loads_prefix) {
    char pi[512], pl[512], err[EX_ERR_LEN] = "";
    float x[5 * 12];
    int32_t y[5] = {-1, -1, -1, -1, -1};
    mnist_info info;
    good_pair(5);
    path_of(pi, sizeof pi, "img");
    path_of(pl, sizeof pl, "lbl");
    TT_EQ_INT(mnist_load_files(pi, pl, 2, 2, x, y, &info, err), MNIST_OK);
    TT_EQ_INT(info.count, 2);
    TT_EQ_INT(y[1], 0); /* (1*7+3)%10 */
    TT_EQ_INT(y[2], -1); /* untouched */
    TT_NEAR(x[23], (float)((23 * 7 + 3) % 256) / 255.0f, 0);
}

/* FNV-1a 64 written out here (Fowler-Noll-Vo: basis 0xcbf29ce484222325, prime
 * 0x100000001b3) over bytes [0, n) of the file NAME: the reference digests */
static uint64_t ref_fnv_file(const char *name, size_t n) {
    char p[512];
    unsigned char b[16 + 5 * 12];
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;
    FILE *f;
    path_of(p, sizeof p, name);
    f = fopen(p, "rb");
    if (!f || n > sizeof b || fread(b, 1, n, f) != n) {
        if (f) fclose(f);
        return 0;
    }
    fclose(f);
    for (i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* the train split of 5 items of 4x3 in the temp dir; item's label or first pixel set to v
   (item < 0: none) */
static void digest_pair(uint32_t count, int item, int which, unsigned char v) {
    uint32_t di[3] = {count, 4, 3}, dl[1] = {count};
    unsigned char b[16 + 6 * 12];
    size_t i, off;
    off = idx_header(b, 8, 3, di);
    for (i = 0; i < count * 12u; i++) b[off + i] = (unsigned char)((i * 7 + 3) % 256);
    if (item >= 0 && which == 0) b[off + (size_t)item * 12] = v;
    write_raw("train-images-idx3-ubyte", b, off + count * 12u);
    off = idx_header(b, 8, 1, dl);
    for (i = 0; i < count; i++) b[off + i] = (unsigned char)((i * 7 + 3) % 10);
    if (item >= 0 && which == 1) b[off + (size_t)item] = v;
    write_raw("train-labels-idx1-ubyte", b, off + count);
}

/* the digests of the train split in the temp dir with limit items, as floats or bytes */
static void digests(int limit, int as_bytes, uint64_t *d) {
    char err[EX_ERR_LEN] = "";
    float x[6 * 12];
    unsigned char xb[6 * 12];
    int32_t y[6];
    mnist_info room, info;
    room.count = 6;
    room.rows = room.cols = 0;
    d[0] = d[1] = 0;
    TT_EQ_INT(mnist_load_digest_into(tmpdir(), "train", limit, &room, as_bytes ? NULL : x, as_bytes ? xb : NULL,
                                     y, &info, d, err), MNIST_OK);
    if (err[0]) TT_FAILF("%s", err);
}

/* the digest of a file: its header and the items read, as FNV-1a of those bytes; an item
   past the limit does not count, a read one or the header does (what mnist-train-mpi
   compares across its ranks) */
TTEST(digest_covers_header_and_items_read) {
    uint64_t a[2], b[2], ref[2];
    digest_pair(5, -1, 0, 0);
    digests(0, 0, a);
    ref[0] = ref_fnv_file("train-images-idx3-ubyte", 16 + 5 * 12);
    ref[1] = ref_fnv_file("train-labels-idx1-ubyte", 8 + 5);
    TT_CHECK(a[0] == ref[0] && a[1] == ref[1]);
    TT_CHECK(mnist_fnv1a(0, "a", 1) == 0xaf63dc4c8601ec8cull); /* FNV-1a 64 test vector of "a" */
    digests(0, 1, b);
    TT_CHECK(b[0] == a[0] && b[1] == a[1]); /* bytes or floats: the file's bytes */
    digests(2, 1, a);
    TT_CHECK(a[0] == ref_fnv_file("train-images-idx3-ubyte", 16 + 2 * 12));
    TT_CHECK(a[1] == ref_fnv_file("train-labels-idx1-ubyte", 8 + 2));
    digest_pair(5, 3, 1, 9); /* a label past the limit: not read */
    digests(2, 0, b);
    TT_CHECK(b[0] == a[0] && b[1] == a[1]);
    digest_pair(5, 1, 1, 9); /* a label read */
    digests(2, 0, b);
    TT_CHECK(b[0] == a[0] && b[1] != a[1]);
    digest_pair(5, 1, 0, 0); /* a pixel read */
    digests(2, 0, b);
    TT_CHECK(b[0] != a[0] && b[1] == a[1]);
    digest_pair(6, -1, 0, 0); /* the same items read, another count in both headers */
    digests(2, 0, b);
    TT_CHECK(b[0] != a[0] && b[1] != a[1]);
}

TTEST(capacity_too_small) {
    char err[EX_ERR_LEN] = "";
    good_pair(5);
    TT_EQ_INT(load(0, 4, err), MNIST_E_CAPACITY);
    TT_CONTAINS(err, "5 items to load but the buffers hold 4");
}

TTEST(missing_file) {
    char err[EX_ERR_LEN] = "";
    mnist_info info;
    TT_EQ_INT(mnist_probe("/nonexistent/dir", "train", &info, err), MNIST_E_OPEN);
    TT_CONTAINS(err, "/nonexistent/dir/train-images-idx3-ubyte");
    TT_CONTAINS(err, "make data");
    TT_EQ_INT(mnist_probe("/nonexistent/dir", "test", &info, err), MNIST_E_OPEN);
    TT_CONTAINS(err, "/nonexistent/dir/t10k-images-idx3-ubyte");
}

TTEST(empty_file) {
    char err[EX_ERR_LEN] = "";
    good_pair(3);
    write_raw("img", (const unsigned char *)"", 0);
    TT_EQ_INT(load(0, 64, err), MNIST_E_TRUNCATED);
    TT_CONTAINS(err, "/img: file truncated or empty: the file is empty (0 bytes)");
}

TTEST(short_magic) {
    char err[EX_ERR_LEN] = "";
    const unsigned char two[2] = {0, 0};
    good_pair(3);
    write_raw("lbl", two, 2);
    TT_EQ_INT(load(0, 64, err), MNIST_E_TRUNCATED);
    TT_CONTAINS(err, "/lbl: ");
    TT_CONTAINS(err, "only 2 bytes, shorter than the 4-byte magic number");
}

TTEST(wrong_magic) {
    char err[EX_ERR_LEN] = "";
    const unsigned char gz[20] = {0x1f, 0x8b, 0x08, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    good_pair(3);
    write_raw("img", gz, sizeof gz);
    TT_EQ_INT(load(0, 64, err), MNIST_E_MAGIC);
    TT_CONTAINS(err, "bad magic number: magic bytes 1f 8b 08 00; an IDX file of unsigned bytes starts 00 00 08 03");
    TT_CONTAINS(err, "gzip");
    /* right zeros, wrong element type (0x0D = float) */
    {
        uint32_t d[3] = {3, 4, 3};
        write_idx("img", 0x0D, 3, d, 36, 256);
        TT_EQ_INT(load(0, 64, err), MNIST_E_MAGIC);
        TT_CONTAINS(err, "magic bytes 00 00 0d 03");
    }
}

TTEST(wrong_rank) {
    char err[EX_ERR_LEN] = "";
    uint32_t d[3] = {3, 12, 0};
    good_pair(3);
    write_idx("img", 8, 2, d, 36, 256); /* rank 2 images */
    TT_EQ_INT(load(0, 64, err), MNIST_E_RANK);
    TT_CONTAINS(err, "wrong rank: rank 2 in the magic number, expected 3");
    good_pair(3);
    write_idx("lbl", 8, 3, (uint32_t[3]){3, 1, 1}, 3, 10); /* labels as rank 3 */
    TT_EQ_INT(load(0, 64, err), MNIST_E_RANK);
    TT_CONTAINS(err, "/lbl: wrong rank: rank 3 in the magic number, expected 1");
}

TTEST(truncated_header) {
    char err[EX_ERR_LEN] = "";
    const unsigned char h[9] = {0, 0, 8, 3, 0, 0, 0, 1, 0};
    good_pair(3);
    write_raw("img", h, sizeof h);
    TT_EQ_INT(load(0, 64, err), MNIST_E_TRUNCATED);
    TT_CONTAINS(err, "only 9 bytes, shorter than the 16-byte header");
}

TTEST(zero_count) {
    char err[EX_ERR_LEN] = "";
    uint32_t d[3] = {0, 4, 3};
    good_pair(3);
    write_idx("img", 8, 3, d, 0, 256);
    TT_EQ_INT(load(0, 64, err), MNIST_E_DIMS);
    TT_CONTAINS(err, "dimension 0 is 0 (the file holds no items)");
    good_pair(3);
    write_idx("img", 8, 3, (uint32_t[3]){3, 0, 3}, 0, 256);
    TT_EQ_INT(load(0, 64, err), MNIST_E_DIMS);
    TT_CONTAINS(err, "dimension 1 is 0");
}

TTEST(huge_counts_do_not_overflow) {
    char err[EX_ERR_LEN] = "";
    good_pair(3);
    /* 2^32-1 items: does not fit an int */
    write_idx("img", 8, 3, (uint32_t[3]){0xffffffffu, 28, 28}, 36, 256);
    TT_EQ_INT(load(0, 64, err), MNIST_E_DIMS);
    TT_CONTAINS(err, "too large");
    /* 65536 x 65536 pixels per item: 2^32 overflows a 32-bit product to 0 */
    write_idx("img", 8, 3, (uint32_t[3]){3, 65536, 65536}, 36, 256);
    TT_EQ_INT(load(0, 64, err), MNIST_E_DIMS);
    TT_CONTAINS(err, "too large");
    /* int-sized but the 64-bit byte count is huge: a size mismatch, not a crash */
    write_idx("img", 8, 3, (uint32_t[3]){0x7fffffffu, 28, 28}, 36, 256);
    TT_EQ_INT(load(0, 64, err), MNIST_E_TRUNCATED);
    TT_CONTAINS(err, "header (2147483647 items of 784 bytes) needs 1683627179264");
    /* labels: 2^31 items */
    good_pair(3);
    write_idx("lbl", 8, 1, (uint32_t[1]){0x80000000u}, 3, 10);
    TT_EQ_INT(load(0, 64, err), MNIST_E_DIMS);
    TT_CONTAINS(err, "/lbl: bad dimensions");
}

TTEST(size_not_matching_header) {
    char err[EX_ERR_LEN] = "";
    uint32_t d[3] = {3, 4, 3};
    good_pair(3);
    write_idx("img", 8, 3, d, 35, 256); /* one byte short */
    TT_EQ_INT(load(0, 64, err), MNIST_E_TRUNCATED);
    TT_CONTAINS(err, "the file is 51 bytes but its header (3 items of 12 bytes) needs 52");
    write_idx("img", 8, 3, d, 40, 256); /* 4 trailing bytes */
    TT_EQ_INT(load(0, 64, err), MNIST_E_SIZE);
    TT_CONTAINS(err, "file size does not match header: the file is 56 bytes");
    TT_CONTAINS(err, "trailing bytes");
}

TTEST(label_out_of_range) {
    char err[EX_ERR_LEN] = "";
    uint32_t dl[1] = {3};
    good_pair(3);
    write_idx("lbl", 8, 1, dl, 3, 256); /* bytes 3, 10, 17 */
    TT_EQ_INT(load(0, 64, err), MNIST_E_LABEL);
    TT_CONTAINS(err, "/lbl: label out of range: label 10 of item 1 is out of range 0..9");
    /* also beyond --train-limit: the whole file is checked */
    TT_EQ_INT(load(1, 64, err), MNIST_E_LABEL);
    /* and nothing is written into the caller's buffers */
    {
        char pi[512], pl[512];
        float x[3 * 12];
        int32_t y[3] = {-7, -7, -7};
        mnist_info info;
        path_of(pi, sizeof pi, "img");
        path_of(pl, sizeof pl, "lbl");
        x[0] = -5.0f;
        TT_EQ_INT(mnist_load_files(pi, pl, 0, 3, x, y, &info, err), MNIST_E_LABEL);
        TT_EQ_INT(y[0], -7);
        TT_EQ_INT(y[2], -7);
        TT_CHECK(x[0] == -5.0f);
    }
}

TTEST(count_mismatch) {
    char err[EX_ERR_LEN] = "";
    uint32_t dl[1] = {4};
    good_pair(3);
    write_idx("lbl", 8, 1, dl, 4, 10);
    TT_EQ_INT(load(0, 64, err), MNIST_E_MISMATCH);
    TT_CONTAINS(err, "image and label counts differ: 3 images but 4 labels");
}

TTEST(result_strings) {
    TT_STREQ(mnist_result_str(MNIST_OK), "ok");
    TT_STREQ(mnist_result_str(MNIST_E_LABEL), "label out of range");
    TT_STREQ(mnist_result_str(-99), "unknown result");
}

static const ttest_case cases[] = {
    TT_CASE(good_files_load_scaled), TT_CASE(limit_loads_prefix), TT_CASE(capacity_too_small),
    TT_CASE(missing_file),           TT_CASE(empty_file),         TT_CASE(short_magic),
    TT_CASE(wrong_magic),            TT_CASE(wrong_rank),         TT_CASE(truncated_header),
    TT_CASE(zero_count),             TT_CASE(huge_counts_do_not_overflow), TT_CASE(size_not_matching_header),
    TT_CASE(label_out_of_range),     TT_CASE(count_mismatch),     TT_CASE(result_strings),
    TT_CASE(digest_covers_header_and_items_read),
};

int main(int argc, char **argv) {
    int r = TTEST_MAIN(cases, argc, argv);
    const char *names[] = {"img", "lbl", "train-images-idx3-ubyte", "train-labels-idx1-ubyte"};
    size_t i;
    for (i = 0; i < 4; i++) {
        char p[512];
        path_of(p, sizeof p, names[i]);
        remove(p);
    }
    rmdir(tmpdir());
    return r;
}
