/* ckpt_seeds.c - writes the seed corpus of fuzz_ckpt (tests/fuzz/corpus/ckpt): version-2
 * checkpoints of the fuzz target's emulator (tests/ckpt_fixture.h, model name "fuzz")
 * and of emulators that differ from it in one thing, damaged ones, and a version-1 file.
 * Each file is a mode byte (fuzz_ckpt.c) and the checkpoint. Deterministic: the same
 * bytes on every run.
 *
 *   cc -std=c11 -O1 -I. -Itests -Iexamples tests/fuzz/ckpt_seeds.c -o build/ckpt_seeds -lm -lpthread
 *   build/ckpt_seeds tests/fuzz/corpus/ckpt
 */
#define _POSIX_C_SOURCE 200809L
#define IPUPIPE_IMPLEMENTATION
#include "mnist_ckpt.h"
#include "ckpt_fixture.h"
#include "idx_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ckpt_fixture_emu g;
static unsigned char g_file[1 << 13];
static const char *g_dir;

/* a checkpoint of g's emulator (text, split, optimizer; one step run) as model into
 * g_file; its size */
static size_t saved(const char *text, int32_t split_at, ipup_optimizer_kind opt, const char *model) {
    char path[512], err[MNIST_CKPT_ERR_LEN];
    mnist_ckpt_meta m;
    FILE *f;
    size_t n;
    memset(&m, 0, sizeof m);
    snprintf(m.model, sizeof m.model, "%s", model);
    m.seed = 3;
    m.epoch = 1;
    snprintf(path, sizeof path, "%s/.seed.tmp", g_dir);
    if (ckpt_fixture_start(&g, text, split_at, opt) != IPUP_OK || ipup_run(&g.emu, NULL) != IPUP_OK ||
        mnist_ckpt_save_state(path, &m, &g.emu, err) != MNIST_CKPT_OK) {
        fprintf(stderr, "ckpt_seeds: %s %s\n", err, ipup_last_error(&g.emu));
        exit(1);
    }
    f = fopen(path, "rb");
    n = f ? fread(g_file + 1, 1, sizeof g_file - 1, f) : 0;
    if (f) fclose(f);
    unlink(path);
    return n;
}
/* g_file with mode byte `mode` and n bytes of checkpoint, to g_dir/name */
static void put(const char *name, unsigned mode, size_t n) {
    char path[512];
    g_file[0] = (unsigned char)mode;
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    if (fixture_write_file(path, g_file, n + 1) != 0) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv) {
    unsigned char *c = g_file + 1;
    size_t n, at;
    if (argc != 2) {
        fprintf(stderr, "usage: ckpt_seeds DIRECTORY\n");
        return 2;
    }
    g_dir = argv[1];
    n = saved(NULL, 2, IPUP_OPT_MOMENTUM, "fuzz");
    put("valid", 0, n);
    put("valid_fixall", 0x0f, n);
    put("valid_failing_read", 0x40, n);
    put("truncated", 0x0f, 101);
    put("empty", 0, 0);
    put("header_only", 0x01, MNIST_CKPT_HEADER_BYTES);
    c[n / 2] ^= 0x10;
    put("badcrc", 0, n);
    n = saved(NULL, 2, IPUP_OPT_MOMENTUM, "fuzz");
    memcpy(c + n, "tail", 4);
    put("trailing_bytes", 0, n + 4);
    at = ckpt_fixture_value_at(c, n, "dense4.w", 3);
    mnist_ckpt_put32_(c + at, 0x7fc00000u);
    put("nan_value", 0x08, n);
    n = saved(NULL, 2, IPUP_OPT_MOMENTUM, "fuzz");
    mnist_ckpt_put32_(c + 24, 0xffffffffu);
    put("epoch_4294967295", 0x01, n);
    n = saved(NULL, 2, IPUP_OPT_MOMENTUM, "fuzz");
    mnist_ckpt_put32_(c + MNIST_CKPT_HEADER_BYTES + 28, 0x80000000u);
    put("step_2pow63", 0x08, n);
    n = saved(NULL, 2, IPUP_OPT_MOMENTUM, "fuzz");
    memcpy(c + 32, "\x1b[2J", 4);
    put("escape_in_model_name", 0x01, n);
    put("othermodel", 0, saved(NULL, 2, IPUP_OPT_MOMENTUM, "mlp"));
    put("sgd", 0, saved(NULL, 2, IPUP_OPT_SGD, "fuzz"));
    put("adam", 0, saved(NULL, 2, IPUP_OPT_ADAM, "fuzz"));
    put("onestage", 0, saved(NULL, 0, IPUP_OPT_MOMENTUM, "fuzz"));
    put("othersplit", 0, saved(NULL, 1, IPUP_OPT_MOMENTUM, "fuzz"));
    put("othershape", 0, saved("dense5,relu,dense3,xent", 2, IPUP_OPT_MOMENTUM, "fuzz"));
    put("frozen", 0, saved("dense4:frozen,relu,dense3,xent", 2, IPUP_OPT_MOMENTUM, "fuzz"));
    put("version1", 0, ckpt_fixture_v1(c));
    ipup_shutdown(&g.emu);
    return 0;
}
