/* test_mnist_ckpt.c - the checkpoint files of examples/mnist/mnist_ckpt.h (version 2: a
 * trainer header, then the library's state stream unchanged): the layout byte by byte,
 * round trip (momentum, and Adam through the descriptor entry points the trainer uses),
 * byte-identical files for identical state, atomic write, refusal of corrupt,
 * truncated, foreign and old (version 1) files with the documented code and message,
 * and a refused file leaves the emulator's weights, optimizer state and step
 * untouched. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "mnist_ckpt.h"
#include "ckpt_fixture.h"
#include "idx_fixture.h"
#include "scratch_dir.h"
#include "ttest.h"

static char dir_[256];
static ckpt_fixture_emu g_a, g_b; /* g_a saves, g_b loads */

static const char *tmpdir(void) { return scratch_dir(dir_, sizeof dir_, "mnist_ckpt"); }
static void path_of(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", tmpdir(), name); }

static mnist_ckpt_meta meta_of(const char *model, uint64_t seed, uint32_t epoch) {
    mnist_ckpt_meta m;
    memset(&m, 0, sizeof m);
    snprintf(m.model, sizeof m.model, "%s", model);
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
    if (fixture_write_file(p, buf, (size_t)n) != 0) exit(2);
}

/* files "<name>.*" other than name itself in the test directory (temporaries) */
static int others_of(const char *name) {
    DIR *d = opendir(tmpdir());
    struct dirent *e;
    size_t n = strlen(name);
    int k = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, name, n) == 0 && e->d_name[n] == '.') k++;
    closedir(d);
    return k;
}

/* the state stream of e, as ipup_state_save writes it, into a buffer */
static unsigned char g_mem[1 << 14];
static size_t g_mem_n;
static int mem_put(void *user, const void *data, size_t len) {
    (void)user;
    if (g_mem_n + len > sizeof g_mem) return -1;
    memcpy(g_mem + g_mem_n, data, len);
    g_mem_n += len;
    return 0;
}

/* g_a: momentum, 2 stages, two steps run */
static void start_a(void) {
    if (ckpt_fixture_start(&g_a, NULL, 2, IPUP_OPT_MOMENTUM) != IPUP_OK || ipup_run(&g_a.emu, NULL) != IPUP_OK ||
        ipup_run(&g_a.emu, NULL) != IPUP_OK) {
        printf("fixture: %s\n", ipup_last_error(&g_a.emu));
        exit(2);
    }
}

TTEST(round_trip_and_layout) {
    static unsigned char buf[1 << 14], sa[1 << 14], sb[1 << 14];
    char p[512], err[MNIST_CKPT_ERR_LEN] = "";
    mnist_ckpt_meta m = meta_of("mlp", 0xdeadbeefcafe42ull, 7), got = meta_of("mlp", 0, 0), peek;
    size_t T, na, nb;
    long n;
    path_of(p, sizeof p, "a.ckpt");
    start_a();
    T = ipup_state_bytes(&g_a.emu);
    TT_EQ_INT(mnist_ckpt_save_state(p, &m, &g_a.emu, err), MNIST_CKPT_OK);
    TT_EQ_INT(others_of("a.ckpt"), 0); /* the temporary is gone after the rename */
    n = file_bytes(p, buf, sizeof buf);
    TT_EQ_INT(n, MNIST_CKPT_HEADER_BYTES + (long)T);
    TT_CHECK(memcmp(buf, "IPUPCKPT", 8) == 0);
    TT_EQ_INT(mnist_ckpt_get32_(buf + 8), 2);  /* version, little-endian */
    TT_EQ_INT(mnist_ckpt_get32_(buf + 12), 0); /* reserved */
    TT_CHECK(mnist_ckpt_get64_(buf + 16) == 0xdeadbeefcafe42ull);
    TT_EQ_INT(buf[16], 0x42);                  /* seed, low byte first */
    TT_EQ_INT(mnist_ckpt_get32_(buf + 24), 7); /* epoch */
    TT_EQ_INT(mnist_ckpt_get32_(buf + 28), 0); /* reserved */
    TT_CHECK(memcmp(buf + 32, "mlp", 4) == 0);
    TT_EQ_INT(buf[63], 0);
    TT_CHECK(mnist_ckpt_get32_(buf + 64) == mnist_ckpt_crc32(buf, 64));
    /* the rest is the library's stream, unchanged */
    g_mem_n = 0;
    TT_EQ_INT(ipup_state_save(&g_a.emu, mem_put, NULL), IPUP_OK);
    TT_EQ_INT(g_mem_n, T);
    TT_CHECK(memcmp(buf + 68, g_mem, T) == 0);
    TT_CHECK(memcmp(buf + 68, "IPUPSTAT", 8) == 0);
    TT_CHECK(mnist_ckpt_get64_(buf + 68 + 16) == T);
    TT_CHECK(mnist_ckpt_get64_(buf + 68 + 24) == 2); /* the step */
    /* peek: the header and the state's step, nothing loaded */
    TT_EQ_INT(mnist_ckpt_peek_state(p, &peek, err), MNIST_CKPT_OK);
    TT_STREQ(peek.model, "mlp");
    TT_CHECK(peek.seed == 0xdeadbeefcafe42ull);
    TT_EQ_INT(peek.epoch, 7);
    TT_EQ_INT(peek.step, 2);
    /* load into a fresh emulator of the same configuration: the same bits */
    TT_EQ_INT(ckpt_fixture_start(&g_b, NULL, 2, IPUP_OPT_MOMENTUM), IPUP_OK);
    TT_EQ_INT(mnist_ckpt_load_state(p, &got, &g_b.emu, err), MNIST_CKPT_OK);
    TT_CHECK(got.seed == 0xdeadbeefcafe42ull);
    TT_EQ_INT(got.epoch, 7);
    TT_EQ_INT(got.step, 2);
    TT_EQ_INT(ipup_get_step(&g_b.emu), 2);
    na = ckpt_fixture_snap(&g_a.emu, sa, sizeof sa);
    nb = ckpt_fixture_snap(&g_b.emu, sb, sizeof sb);
    TT_CHECK(na > 0 && na == nb && memcmp(sa, sb, na) == 0);
    /* both continue identically */
    TT_EQ_INT(ipup_run(&g_a.emu, NULL), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_b.emu, NULL), IPUP_OK);
    na = ckpt_fixture_snap(&g_a.emu, sa, sizeof sa);
    nb = ckpt_fixture_snap(&g_b.emu, sb, sizeof sb);
    TT_CHECK(na > 0 && na == nb && memcmp(sa, sb, na) == 0);
    remove(p);
}

/* The trainer's way in: mnist_ckpt_open, then mnist_ckpt_peek_state_fd and
 * mnist_ckpt_load_state_fd on the one descriptor. With Adam (two moments a weight): the
 * file is MNIST_CKPT_STATE_HEAD (the header length's earlier name) plus the state, and
 * restores the emulator bit for bit. */
TTEST(fd_entry_points_adam_round_trip) {
    static unsigned char sa[1 << 14], sb[1 << 14];
    char p[512], err[MNIST_CKPT_ERR_LEN] = "";
    mnist_ckpt_meta m = meta_of("tiny", 77, 3), got = meta_of("tiny", 0, 0);
    struct stat st;
    size_t na, nb;
    int fd;
    path_of(p, sizeof p, "adam.ckpt");
    TT_EQ_INT(ckpt_fixture_start(&g_a, NULL, 2, IPUP_OPT_ADAM), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_a.emu, NULL), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_a.emu, NULL), IPUP_OK);
    TT_EQ_INT(mnist_ckpt_save_state(p, &m, &g_a.emu, err), MNIST_CKPT_OK);
    TT_EQ_INT(stat(p, &st), 0);
    TT_EQ_INT((long long)st.st_size, MNIST_CKPT_STATE_HEAD + (long long)ipup_state_bytes(&g_a.emu));
    TT_EQ_INT(ckpt_fixture_start(&g_b, NULL, 2, IPUP_OPT_ADAM), IPUP_OK);
    fd = mnist_ckpt_open(p, err);
    TT_CHECK(fd >= 0);
    if (fd < 0) return;
    TT_EQ_INT(mnist_ckpt_peek_state_fd(fd, p, &got, err), MNIST_CKPT_OK);
    TT_STREQ(got.model, "tiny");
    TT_EQ_INT(got.seed, 77);
    TT_EQ_INT(got.epoch, 3);
    TT_EQ_INT(got.step, 2);
    got = meta_of("tiny", 0, 0);
    TT_EQ_INT(mnist_ckpt_load_state_fd(fd, p, &got, &g_b.emu, err), MNIST_CKPT_OK);
    close(fd);
    TT_EQ_INT(got.step, 2);
    TT_EQ_INT(got.seed, 77);
    na = ckpt_fixture_snap(&g_a.emu, sa, sizeof sa);
    nb = ckpt_fixture_snap(&g_b.emu, sb, sizeof sb);
    TT_CHECK(na > 0 && na == nb && memcmp(sa, sb, na) == 0);
    remove(p);
}

TTEST(identical_state_identical_bytes) {
    static unsigned char a[1 << 14], b[1 << 14];
    char p1[512], p2[512], err[MNIST_CKPT_ERR_LEN] = "";
    mnist_ckpt_meta m = meta_of("cnn", 42, 2), got = meta_of("cnn", 0, 0);
    ipup_tensor_info ti;
    long na, nb;
    uint32_t u;
    path_of(p1, sizeof p1, "x1.ckpt");
    path_of(p2, sizeof p2, "x2.ckpt");
    start_a();
    TT_EQ_INT(mnist_ckpt_save_state(p1, &m, &g_a.emu, err), MNIST_CKPT_OK);
    TT_EQ_INT(mnist_ckpt_save_state(p2, &m, &g_a.emu, err), MNIST_CKPT_OK);
    na = file_bytes(p1, a, sizeof a);
    nb = file_bytes(p2, b, sizeof b);
    TT_CHECK(na > 0 && na == nb && memcmp(a, b, (size_t)na) == 0);
    /* loaded elsewhere and saved again: the same bytes */
    TT_EQ_INT(ckpt_fixture_start(&g_b, NULL, 2, IPUP_OPT_MOMENTUM), IPUP_OK);
    TT_EQ_INT(mnist_ckpt_load_state(p1, &got, &g_b.emu, err), MNIST_CKPT_OK);
    TT_EQ_INT(mnist_ckpt_save_state(p2, &got, &g_b.emu, err), MNIST_CKPT_OK);
    nb = file_bytes(p2, b, sizeof b);
    TT_CHECK(na == nb && memcmp(a, b, (size_t)na) == 0);
    /* one weight one ulp apart: different bytes */
    TT_EQ_INT(ipup_tensor_get(&g_a.emu, 0, &ti), IPUP_OK);
    memcpy(&u, &ti.data[3], 4);
    u ^= 1u;
    memcpy(&ti.data[3], &u, 4);
    TT_EQ_INT(mnist_ckpt_save_state(p2, &m, &g_a.emu, err), MNIST_CKPT_OK);
    nb = file_bytes(p2, b, sizeof b);
    TT_CHECK(na == nb && memcmp(a, b, (size_t)na) != 0);
    remove(p1);
    remove(p2);
}

/* Saves a good file from g_a, applies `edit` to its bytes, starts g_b (text, split_at,
 * opt), loads as `model`: expects `code`, a message with `msg` and the file's name,
 * and g_b's tensors, step and the caller's meta untouched. */
static void refused_by(void (*edit)(unsigned char *, long *), const char *text, int32_t split_at, ipup_optimizer_kind opt,
                       const char *model, int code, const char *msg) {
    static unsigned char buf[1 << 14], before[1 << 14], after[1 << 14];
    char p[512], err[MNIST_CKPT_ERR_LEN] = "";
    mnist_ckpt_meta m = meta_of("mlp", 9, 1), got = meta_of(model, 0, 0);
    size_t nb;
    long n;
    path_of(p, sizeof p, "c.ckpt");
    start_a();
    TT_EQ_INT(mnist_ckpt_save_state(p, &m, &g_a.emu, err), MNIST_CKPT_OK);
    n = file_bytes(p, buf, sizeof buf);
    if (edit) edit(buf, &n);
    write_bytes(p, buf, n);
    TT_EQ_INT(ckpt_fixture_start(&g_b, text, split_at, opt), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_b.emu, NULL), IPUP_OK);
    nb = ckpt_fixture_snap(&g_b.emu, before, sizeof before);
    TT_EQ_INT(mnist_ckpt_load_state(p, &got, &g_b.emu, err), code);
    TT_CONTAINS(err, msg);
    TT_CONTAINS(err, "c.ckpt: ");
    TT_CHECK(nb > 0 && ckpt_fixture_snap(&g_b.emu, after, sizeof after) == nb && memcmp(before, after, nb) == 0);
    TT_CHECK(got.step == 0 && got.seed == 0 && got.epoch == 0);
    remove(p);
}
static void expect_refused(void (*edit)(unsigned char *, long *), int code, const char *msg) {
    refused_by(edit, NULL, 2, IPUP_OPT_MOMENTUM, "mlp", code, msg);
}

static void flip_value_byte(unsigned char *b, long *n) { b[*n - 20] ^= 0x40; }
static void flip_seed_byte(unsigned char *b, long *n) { (void)n; b[20] ^= 0x01; }
static void truncate_file(unsigned char *b, long *n) { (void)b; *n -= 10; }
static void bad_magic(unsigned char *b, long *n) { (void)n; b[0] = 'X'; }
static void version3(unsigned char *b, long *n) { b[8] = 3; ckpt_fixture_fix_header_crc(b, (size_t)*n); }
static void reserved_set(unsigned char *b, long *n) { b[28] = 1; ckpt_fixture_fix_header_crc(b, (size_t)*n); }
static void state_magic(unsigned char *b, long *n) { b[68 + 4] = 'X'; ckpt_fixture_fix_state_crc(b, (size_t)*n); }
static void state_version2(unsigned char *b, long *n) { b[68 + 8] = 2; ckpt_fixture_fix_state_crc(b, (size_t)*n); }
static void tiny(unsigned char *b, long *n) { (void)b; *n = 20; }
static void empty(unsigned char *b, long *n) { (void)b; *n = 0; }
static void header_only(unsigned char *b, long *n) { (void)b; *n = 68; }
static void version1(unsigned char *b, long *n) { *n = (long)ckpt_fixture_v1(b); }
static void trailing(unsigned char *b, long *n) { memcpy(b + *n, "tail", 4); *n += 4; }

TTEST(refuses_corrupt_truncated_old) {
    expect_refused(flip_value_byte, MNIST_CKPT_E_CORRUPT, "corrupt checkpoint: the CRC-32 is");
    expect_refused(flip_seed_byte, MNIST_CKPT_E_CORRUPT,
                   "corrupt checkpoint: the CRC-32 of the header does not match (damaged file)");
    expect_refused(truncate_file, MNIST_CKPT_E_CORRUPT, "corrupt checkpoint: the stream is truncated");
    expect_refused(header_only, MNIST_CKPT_E_CORRUPT, "the stream is truncated: it ends in the header");
    expect_refused(bad_magic, MNIST_CKPT_E_CORRUPT, "corrupt checkpoint: the magic is not IPUPCKPT (not written by --save)");
    expect_refused(version3, MNIST_CKPT_E_MISMATCH,
                   "checkpoint does not match this run: version 3, this program reads version 2");
    expect_refused(version1, MNIST_CKPT_E_MISMATCH, "checkpoint does not match this run: version 1 (the tensor list of "
                   "ipupipe 0.4.0 and earlier), this program reads version 2");
    expect_refused(reserved_set, MNIST_CKPT_E_CORRUPT, "the reserved header fields (offsets 12 and 28) are not 0");
    expect_refused(state_magic, MNIST_CKPT_E_CORRUPT, "not an ipupipe state: the magic is not IPUPSTAT");
    expect_refused(state_version2, MNIST_CKPT_E_MISMATCH,
                   "the stream has format version 2, this library reads version 1");
    expect_refused(tiny, MNIST_CKPT_E_CORRUPT, "corrupt checkpoint: only 20 bytes, shorter than a checkpoint header");
    expect_refused(empty, MNIST_CKPT_E_CORRUPT, "corrupt checkpoint: only 0 bytes");
    expect_refused(trailing, MNIST_CKPT_E_CORRUPT, "corrupt checkpoint: 4 unexpected bytes after the state");
}

TTEST(refuses_other_model_name) {
    refused_by(NULL, NULL, 2, IPUP_OPT_MOMENTUM, "cnn", MNIST_CKPT_E_MISMATCH,
               "checkpoint does not match this run: it holds model 'mlp', this run trains 'cnn' (use --model mlp)");
}

TTEST(refuses_other_optimizer_split_shape) {
    refused_by(NULL, NULL, 2, IPUP_OPT_SGD, "mlp", MNIST_CKPT_E_MISMATCH,
               "the optimizer is momentum in the file, sgd in this emulator");
    refused_by(NULL, NULL, 2, IPUP_OPT_ADAM, "mlp", MNIST_CKPT_E_MISMATCH,
               "the optimizer is momentum in the file, adam in this emulator");
    refused_by(NULL, NULL, 0, IPUP_OPT_MOMENTUM, "mlp", MNIST_CKPT_E_MISMATCH,
               "the layers are split into 2 stages in the file, 1 in this emulator");
    refused_by(NULL, NULL, 1, IPUP_OPT_MOMENTUM, "mlp", MNIST_CKPT_E_MISMATCH,
               "stage 1 begins at layer 2 in the file, at layer 1 (relu) in this emulator");
    refused_by(NULL, "dense5,relu,dense3,xent", 2, IPUP_OPT_MOMENTUM, "mlp", MNIST_CKPT_E_MISMATCH,
               "layer 0 is dense4 (dense, 4 units) in the file, dense5 (dense, 5 units) in this emulator");
    /* a frozen layer has no optimizer state: the first record that differs is named */
    refused_by(NULL, "dense4:frozen,relu,dense3,xent", 2, IPUP_OPT_MOMENTUM, "mlp", MNIST_CKPT_E_MISMATCH,
               "tensor 4 is dense4.w");
}

/* mnist_ckpt_load_state_fd on a fresh descriptor of p into g_b */
static int load_fd(const char *p, mnist_ckpt_meta *m, char *err) {
    int fd = mnist_ckpt_open(p, err), r;
    if (fd < 0) return MNIST_CKPT_E_IO;
    r = mnist_ckpt_load_state_fd(fd, p, m, &g_b.emu, err);
    close(fd);
    return r;
}

/* Refusals through the descriptor entry point, each leaving g_b as it was: another
 * optimizer (the whole message: the file's name, the result, the reason), another model
 * name in an emulator that differs in the optimizer too (the name is what is reported),
 * bytes appended after the state. */
TTEST(fd_entry_point_refusals_change_nothing) {
    static unsigned char before[1 << 14], after[1 << 14];
    char p[512], err[MNIST_CKPT_ERR_LEN] = "";
    mnist_ckpt_meta m = meta_of("tiny", 1, 1), got;
    size_t n;
    int fd;
    path_of(p, sizeof p, "mom.ckpt");
    start_a();
    TT_EQ_INT(mnist_ckpt_save_state(p, &m, &g_a.emu, err), MNIST_CKPT_OK);
    TT_EQ_INT(ckpt_fixture_start(&g_b, NULL, 2, IPUP_OPT_SGD), IPUP_OK);
    n = ckpt_fixture_snap(&g_b.emu, before, sizeof before);
    got = meta_of("tiny", 0, 0);
    TT_EQ_INT(load_fd(p, &got, err), MNIST_CKPT_E_MISMATCH);
    TT_CONTAINS(err, "mom.ckpt: checkpoint does not match this run: the optimizer is momentum in the file, sgd in this emulator");
    TT_CHECK(n > 0 && ckpt_fixture_snap(&g_b.emu, after, sizeof after) == n && memcmp(before, after, n) == 0);
    got = meta_of("cnn", 0, 0);
    TT_EQ_INT(load_fd(p, &got, err), MNIST_CKPT_E_MISMATCH);
    TT_CONTAINS(err, "it holds model 'tiny', this run trains 'cnn' (use --model tiny)");
    /* bytes after the state */
    fd = open(p, O_WRONLY | O_APPEND);
    TT_CHECK(fd >= 0 && write(fd, "xyz", 3) == 3);
    if (fd >= 0) close(fd);
    TT_EQ_INT(ckpt_fixture_start(&g_b, NULL, 2, IPUP_OPT_MOMENTUM), IPUP_OK);
    n = ckpt_fixture_snap(&g_b.emu, before, sizeof before);
    got = meta_of("tiny", 0, 0);
    TT_EQ_INT(load_fd(p, &got, err), MNIST_CKPT_E_CORRUPT);
    TT_CONTAINS(err, "corrupt checkpoint: 3 unexpected bytes after the state");
    TT_CHECK(n > 0 && ckpt_fixture_snap(&g_b.emu, after, sizeof after) == n && memcmp(before, after, n) == 0);
    remove(p);
}

TTEST(missing_and_not_a_file) {
    char err[MNIST_CKPT_ERR_LEN] = "";
    mnist_ckpt_meta got = meta_of("mlp", 0, 0);
    TT_EQ_INT(ckpt_fixture_start(&g_b, NULL, 2, IPUP_OPT_MOMENTUM), IPUP_OK);
    TT_EQ_INT(mnist_ckpt_load_state("/nonexistent/x.ckpt", &got, &g_b.emu, err), MNIST_CKPT_E_IO);
    TT_CONTAINS(err, "/nonexistent/x.ckpt: i/o error: cannot open it");
    TT_EQ_INT(mnist_ckpt_load_state(tmpdir(), &got, &g_b.emu, err), MNIST_CKPT_E_IO);
    TT_CONTAINS(err, "it is a directory, not a checkpoint file");
    TT_EQ_INT(mnist_ckpt_peek_state("/nonexistent/x.ckpt", &got, err), MNIST_CKPT_E_IO);
    TT_CONTAINS(err, "cannot open it");
}

TTEST(save_errors) {
    char err[MNIST_CKPT_ERR_LEN] = "", p[512];
    mnist_ckpt_meta m = meta_of("mlp", 1, 1);
    static ipup_emu never; /* zeroed, never initialised */
    start_a();
    TT_EQ_INT(mnist_ckpt_save_state("/nonexistent/dir/x.ckpt", &m, &g_a.emu, err), MNIST_CKPT_E_IO);
    TT_CONTAINS(err, "/nonexistent/dir/x.ckpt: i/o error: cannot create the temporary file");
    TT_EQ_INT(mnist_ckpt_save_state("/tmp/never.ckpt", &m, &never, err), MNIST_CKPT_E_ARG);
    TT_CONTAINS(err, "/tmp/never.ckpt: bad argument: save needs a path, meta and an initialised emulator");
    TT_EQ_INT(mnist_ckpt_save_state(NULL, &m, &g_a.emu, err), MNIST_CKPT_E_ARG);
    TT_CONTAINS(err, "(null): bad argument");
    path_of(p, sizeof p, "name.ckpt");
    m.model[0] = '\x1b';
    TT_EQ_INT(mnist_ckpt_save_state(p, &m, &g_a.emu, err), MNIST_CKPT_E_ARG);
    TT_CONTAINS(err, "the model name must be 1 to 31 printable ASCII characters");
    m.model[0] = 0;
    TT_EQ_INT(mnist_ckpt_save_state(p, &m, &g_a.emu, err), MNIST_CKPT_E_ARG);
    TT_EQ_INT(others_of("name.ckpt"), 0);
    TT_CHECK(access(p, F_OK) != 0);
    /* loading needs an initialised emulator too */
    TT_EQ_INT(mnist_ckpt_load_state(p, &m, &never, err), MNIST_CKPT_E_ARG);
    TT_CONTAINS(err, "load needs a path, meta and an initialised emulator");
}

/* The reader speaks the library's result codes: a damaged or foreign file is
 * IPUP_ERR_CORRUPT (bad CRC, bad magic, truncated), a sound file of another run
 * IPUP_ERR_MISMATCH (model, optimizer, split, shape, format version); peek says what it
 * can from the header alone. */
TTEST(library_result_codes_and_peek) {
    static unsigned char buf[1 << 14];
    char p[512], err[MNIST_CKPT_ERR_LEN] = "";
    mnist_ckpt_meta m = meta_of("mlp", 5, 1), got;
    long n;
    TT_EQ_INT(MNIST_CKPT_OK, IPUP_OK);
    TT_EQ_INT(MNIST_CKPT_E_CORRUPT, IPUP_ERR_CORRUPT);
    TT_EQ_INT(MNIST_CKPT_E_MISMATCH, IPUP_ERR_MISMATCH);
    TT_EQ_INT(MNIST_CKPT_E_IO, IPUP_ERR_IO);
    TT_EQ_INT(MNIST_CKPT_E_ARG, IPUP_ERR_ARG);
    TT_EQ_INT(MNIST_CKPT_E_VERSION, IPUP_ERR_MISMATCH);
    TT_EQ_INT(MNIST_CKPT_E_FORMAT, IPUP_ERR_CORRUPT);
    path_of(p, sizeof p, "e.ckpt");
    start_a();
    TT_EQ_INT(mnist_ckpt_save_state(p, &m, &g_a.emu, err), MNIST_CKPT_OK);
    n = file_bytes(p, buf, sizeof buf);
    buf[1] = 'Q';
    write_bytes(p, buf, n);
    TT_EQ_INT(mnist_ckpt_peek_state(p, &got, err), IPUP_ERR_CORRUPT);
    TT_CONTAINS(err, "e.ckpt: corrupt checkpoint: the magic is not IPUPCKPT");
    write_bytes(p, buf, 30);
    TT_EQ_INT(mnist_ckpt_peek_state(p, &got, err), IPUP_ERR_CORRUPT);
    TT_CONTAINS(err, "corrupt checkpoint: only 30 bytes");
    buf[1] = 'P';
    buf[8] = 7;
    write_bytes(p, buf, n);
    TT_EQ_INT(mnist_ckpt_peek_state(p, &got, err), IPUP_ERR_MISMATCH);
    TT_CONTAINS(err, "checkpoint does not match this run: version 7, this program reads version 2");
    buf[8] = 2;
    mnist_ckpt_put32_(buf + 24, 1000001u); /* epoch above the limit, header CRC valid */
    ckpt_fixture_fix_header_crc(buf, (size_t)n);
    write_bytes(p, buf, n);
    TT_EQ_INT(mnist_ckpt_peek_state(p, &got, err), IPUP_ERR_CORRUPT);
    TT_CONTAINS(err, "header field epoch is 1000001, above the limit 1000000");
    memset(buf + 32, 'a', 32); /* no NUL end */
    mnist_ckpt_put32_(buf + 24, 1);
    ckpt_fixture_fix_header_crc(buf, (size_t)n);
    write_bytes(p, buf, n);
    TT_EQ_INT(mnist_ckpt_peek_state(p, &got, err), IPUP_ERR_CORRUPT);
    TT_CONTAINS(err, "the model name field (offset 32) has no NUL end");
    memcpy(buf + 32, "mlp\0x", 5); /* a byte after the name's NUL end */
    memset(buf + 37, 0, 27);
    ckpt_fixture_fix_header_crc(buf, (size_t)n);
    write_bytes(p, buf, n);
    TT_EQ_INT(mnist_ckpt_peek_state(p, &got, err), IPUP_ERR_CORRUPT);
    TT_CONTAINS(err, "the model name field (offset 32) is not NUL-padded: byte 36 after its end is not 0");
    /* a header followed by less than the state's header: peek reads the header, step 0 */
    memcpy(buf + 32, "mlp\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 32);
    ckpt_fixture_fix_header_crc(buf, (size_t)n);
    write_bytes(p, buf, 80);
    TT_EQ_INT(mnist_ckpt_peek_state(p, &got, err), IPUP_OK);
    TT_STREQ(got.model, "mlp");
    TT_EQ_INT(got.step, 0);
    TT_EQ_INT(got.epoch, 1);
    remove(p);
}

TTEST(result_strings) {
    TT_STREQ(mnist_ckpt_result_str(MNIST_CKPT_E_CORRUPT), "corrupt checkpoint");
    TT_STREQ(mnist_ckpt_result_str(MNIST_CKPT_E_MISMATCH), "checkpoint does not match this run");
    TT_STREQ(mnist_ckpt_result_str(MNIST_CKPT_E_IO), "i/o error");
    TT_STREQ(mnist_ckpt_result_str(12345), "unknown result");
    /* the CRC-32 of the header is the library's (check value of "123456789") */
    TT_CHECK(mnist_ckpt_crc32("123456789", 9) == 0xCBF43926u);
}

static const ttest_case cases[] = {
    TT_CASE(round_trip_and_layout),      TT_CASE(fd_entry_points_adam_round_trip),
    TT_CASE(identical_state_identical_bytes), TT_CASE(refuses_corrupt_truncated_old),
    TT_CASE(refuses_other_model_name),   TT_CASE(refuses_other_optimizer_split_shape),
    TT_CASE(fd_entry_point_refusals_change_nothing), TT_CASE(missing_and_not_a_file),
    TT_CASE(save_errors),                TT_CASE(library_result_codes_and_peek),
    TT_CASE(result_strings),
};

int main(int argc, char **argv) {
    int r = TTEST_MAIN(cases, argc, argv);
    ipup_shutdown(&g_a.emu);
    ipup_shutdown(&g_b.emu);
    rmdir(tmpdir());
    return r;
}
