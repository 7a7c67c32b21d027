/* test_ckpt_state.c - the trainer's checkpoint files of version 2 (examples/mnist/mnist_ckpt.h
 * over ipup_state_save/ipup_state_load): a saved file restores the emulator bit for bit,
 * a version-1 file (the tensor list) is refused with a "version" message, a file with
 * bytes after the state or of another optimizer is refused, and every refused file leaves
 * the emulator's weights, optimizer state and step untouched. */
#define _POSIX_C_SOURCE 200809L
#include "tiny_model.h"
#include "mnist_ckpt.h"
#include "ckpt_fixture.h"
#include "idx_fixture.h"
#include "ttest.h"

#include <fcntl.h>
#include <unistd.h>

#define POOL (64 * 1024)
IPUP_ALIGN64 static uint8_t g_ipu[2][2][POOL];
IPUP_ALIGN64 static uint8_t g_host[2][64 * 1024];
static ipup_emu g_emu[2];
static ipup_model_desc g_model[2];
static char g_dir[64];

static void sample(int64_t sample0, int32_t i, float *x, int32_t *label) {
    int32_t j;
    for (j = 0; j < 12; j++) x[j] = ipup_rng_uniform_f32(5, (uint64_t)(sample0 + i), (uint64_t)j) - 0.5f;
    *label = (int32_t)ipup_rng_below(5, (uint64_t)(sample0 + i), 9, 3);
}
static tiny_data g_data = {sample, 12};

static int start(int k, ipup_optimizer_kind opt) {
    ipup_config c;
    ipup_shutdown(&g_emu[k]);
    memset(&g_emu[k], 0, sizeof g_emu[k]);
    TT_EQ_INT(tiny_model(&g_model[k], 1, 1, 12, "dense8,relu,dense3,xent", NULL, 0), IPUP_OK);
    c = tiny_config(&g_model[k], 2, 2, 2, 1, 3, opt, 0.05f, tiny_infeed, &g_data);
    tiny_pools(&c, 2, g_ipu[k], NULL, POOL, g_host[k], sizeof g_host[k]);
    return ipup_init(&g_emu[k], &c);
}
static void path_of(char *out, size_t cap, const char *name) {
    if (!g_dir[0]) {
        snprintf(g_dir, sizeof g_dir, "/tmp/ipup_ckpt_state_XXXXXX");
        if (!mkdtemp(g_dir)) exit(2);
    }
    snprintf(out, cap, "%s/%s", g_dir, name);
}
static mnist_ckpt_meta meta_of(const char *model, uint64_t seed, uint32_t epoch) {
    mnist_ckpt_meta m;
    memset(&m, 0, sizeof m);
    snprintf(m.model, sizeof m.model, "%s", model);
    m.seed = seed;
    m.epoch = epoch;
    return m;
}
/* every tensor of replica 0 and the step, as bytes, into out */
static size_t snap(int k, unsigned char *out) {
    int32_t i, n = ipup_tensor_count(&g_emu[k]);
    size_t len = 0;
    int64_t step = ipup_get_step(&g_emu[k]);
    for (i = 0; i < n; i++) {
        ipup_tensor_info ti;
        ipup_tensor_get(&g_emu[k], i, &ti);
        memcpy(out + len, ti.data, (size_t)ti.n * 4);
        len += (size_t)ti.n * 4;
    }
    memcpy(out + len, &step, sizeof step);
    return len + sizeof step;
}
static int load(const char *p, mnist_ckpt_meta *m, int k, char *err) {
    int fd = mnist_ckpt_open(p, err), r;
    if (fd < 0) return MNIST_CKPT_E_IO;
    r = mnist_ckpt_load_state_fd(fd, p, m, &g_emu[k], err);
    close(fd);
    return r;
}

TTEST(save_load_round_trip) {
    static unsigned char a[1 << 16], b[1 << 16];
    char p[128], err[MNIST_CKPT_ERR_LEN];
    mnist_ckpt_meta m = meta_of("tiny", 77, 3), got = meta_of("tiny", 0, 0);
    int fd;
    size_t n;
    TT_EQ_INT(start(0, IPUP_OPT_ADAM), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu[0], NULL), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu[0], NULL), IPUP_OK);
    path_of(p, sizeof p, "a.ckpt");
    TT_EQ_INT(mnist_ckpt_save_state(p, &m, &g_emu[0], err), MNIST_CKPT_OK);
    {
        struct stat st;
        TT_EQ_INT(stat(p, &st), 0);
        TT_EQ_INT((long long)st.st_size, MNIST_CKPT_STATE_HEAD + (long long)ipup_state_bytes(&g_emu[0]));
    }
    fd = mnist_ckpt_open(p, err);
    TT_CHECK(fd >= 0);
    TT_EQ_INT(mnist_ckpt_peek_state_fd(fd, p, &got, err), MNIST_CKPT_OK);
    close(fd);
    TT_STREQ(got.model, "tiny");
    TT_EQ_INT(got.seed, 77);
    TT_EQ_INT(got.epoch, 3);
    TT_EQ_INT(got.step, 2);
    TT_EQ_INT(start(1, IPUP_OPT_ADAM), IPUP_OK);
    got = meta_of("tiny", 0, 0);
    TT_EQ_INT(load(p, &got, 1, err), MNIST_CKPT_OK);
    TT_EQ_INT(got.step, 2);
    TT_EQ_INT(got.seed, 77);
    n = snap(0, a);
    TT_CHECK(snap(1, b) == n && memcmp(a, b, n) == 0);
}

TTEST(refused_files_change_nothing) {
    static unsigned char before[1 << 16], after[1 << 16];
    char p[128], q[128], err[MNIST_CKPT_ERR_LEN];
    mnist_ckpt_meta m = meta_of("tiny", 1, 1), got;
    size_t n;
    int fd;
    TT_EQ_INT(start(0, IPUP_OPT_MOMENTUM), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu[0], NULL), IPUP_OK);
    path_of(p, sizeof p, "mom.ckpt");
    TT_EQ_INT(mnist_ckpt_save_state(p, &m, &g_emu[0], err), MNIST_CKPT_OK);
    TT_EQ_INT(start(1, IPUP_OPT_SGD), IPUP_OK);
    n = snap(1, before);
    got = meta_of("tiny", 0, 0);
    TT_EQ_INT(load(p, &got, 1, err), MNIST_CKPT_E_MISMATCH);
    TT_CONTAINS(err, "mom.ckpt: checkpoint does not match this run: the optimizer is momentum in the file, sgd in this emulator");
    TT_CHECK(snap(1, after) == n && memcmp(before, after, n) == 0);
    /* another model name in the trainer header */
    got = meta_of("cnn", 0, 0);
    TT_EQ_INT(load(p, &got, 1, err), MNIST_CKPT_E_MISMATCH);
    TT_CONTAINS(err, "it holds model 'tiny', this run trains 'cnn' (use --model tiny)");
    /* bytes after the state */
    fd = open(p, O_WRONLY | O_APPEND);
    TT_CHECK(fd >= 0 && write(fd, "xyz", 3) == 3);
    close(fd);
    TT_EQ_INT(start(1, IPUP_OPT_MOMENTUM), IPUP_OK);
    n = snap(1, before);
    got = meta_of("tiny", 0, 0);
    TT_EQ_INT(load(p, &got, 1, err), MNIST_CKPT_E_CORRUPT);
    TT_CONTAINS(err, "corrupt checkpoint: 3 unexpected bytes after the state");
    TT_CHECK(snap(1, after) == n && memcmp(before, after, n) == 0);
    /* a version-1 file, the tensor list that ipupipe 0.4.0 and earlier wrote */
    path_of(q, sizeof q, "v1.ckpt");
    {
        unsigned char v1[256];
        size_t k = ckpt_fixture_v1(v1);
        TT_CHECK(fixture_write_file(q, v1, k) == 0);
    }
    TT_EQ_INT(load(q, &got, 1, err), MNIST_CKPT_E_MISMATCH);
    TT_CONTAINS(err, "v1.ckpt: checkpoint does not match this run: version 1 (the tensor list of ipupipe 0.4.0 and earlier), this program reads version 2");
    TT_CHECK(snap(1, after) == n && memcmp(before, after, n) == 0);
    unlink(p);
    unlink(q);
}

int main(int argc, char **argv) {
    static const ttest_case cases[] = {
        TT_CASE(save_load_round_trip),
        TT_CASE(refused_files_change_nothing),
    };
    int r = TTEST_MAIN(cases, argc, argv);
    ipup_shutdown(&g_emu[0]);
    ipup_shutdown(&g_emu[1]);
    if (g_dir[0]) rmdir(g_dir);
    return r;
}
