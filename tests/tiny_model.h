/* tests/tiny_model.h - the tiny models, configurations, pools and synthetic infeeds the
 * emulator tests build for ipupipe.h (test_emulator, test_hostile_config,
 * test_hostile_threads, test_noheap, fuzz/fuzz_train_cli). Each test keeps its own
 * values (model text, sizes, optimizer, data formula); this header only fills them in.
 *
 * It includes ipupipe.h: define IPUPIPE_IMPLEMENTATION before it as usual, or include it
 * after ipupipe.h. A test of the threaded runner defines TINY_MODEL_HELGRIND first and
 * includes this header in place of ipupipe.h: then, where <valgrind/helgrind.h> exists,
 * the rings of ipupipe.h carry helgrind's happens-before annotations.
 */
#ifndef TINY_MODEL_H
#define TINY_MODEL_H

#ifdef TINY_MODEL_HELGRIND
#ifdef IPUPIPE_H
#error "TINY_MODEL_HELGRIND: include tiny_model.h before ipupipe.h"
#endif
#if defined(__has_include)
#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/helgrind.h>
#define IPUPIPE_HAPPENS_BEFORE(a) ANNOTATE_HAPPENS_BEFORE(a)
#define IPUPIPE_HAPPENS_AFTER(a) ANNOTATE_HAPPENS_AFTER(a)
#define IPUPIPE_SYNC_VAR(a, n) VALGRIND_HG_DISABLE_CHECKING(a, n)
#endif
#endif
#endif

#include "ipupipe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses `text` into *m (zeroed first) for inputs of h x w x ch; returns the code of
   ipup_model_parse, its message in msg (msg may be NULL when cap is 0). */
static inline int tiny_model(ipup_model_desc *m, int32_t h, int32_t w, int32_t ch, const char *text, char *msg,
                             size_t cap) {
    memset(m, 0, sizeof *m);
    m->in_h = h;
    m->in_w = w;
    m->in_c = ch;
    return ipup_model_parse(text, m, msg, cap);
}

/* tiny_model for a model the test cannot do without: one that does not parse ends the
   program (exit 2) after printing "model: <message>". */
static inline void tiny_model_or_exit(ipup_model_desc *m, int32_t h, int32_t w, int32_t ch, const char *text) {
    char msg[256];
    if (tiny_model(m, h, w, ch, text, msg, sizeof msg) != IPUP_OK) {
        printf("model: %s\n", msg);
        exit(2);
    }
}

/* A zeroed configuration with the fields every tiny run sets: model m in `stages` stages,
   B samples a micro-batch, M micro-batches a step, `repeat` steps a run, the seed, the
   optimizer and its learning rate, the infeed and its user pointer (0 and NULL: the
   defaults of ipup_config). */
static inline ipup_config tiny_config(const ipup_model_desc *m, int32_t stages, int32_t B, int32_t M, int32_t repeat,
                                      uint64_t seed, ipup_optimizer_kind opt, float lr, ipup_infeed_fn infeed,
                                      void *infeed_user) {
    ipup_config c;
    memset(&c, 0, sizeof c);
    c.model = m;
    c.stages = stages;
    c.microbatch = B;
    c.microbatches = M;
    c.repeat = repeat;
    c.seed = seed;
    c.opt.kind = opt;
    c.opt.lr = lr;
    c.infeed = infeed;
    c.infeed_user = infeed_user;
    return c;
}

/* Gives c pools carved from caller arrays: IPU i gets `bytes` at ipu + i * bytes (i < n),
   its streaming pool likewise from stream when that is not NULL, and the host pool. */
static inline void tiny_pools(ipup_config *c, int n, void *ipu, void *stream, size_t bytes, void *host,
                              size_t host_bytes) {
    int i;
    for (i = 0; i < n; i++) {
        c->ipu[i].mem = (uint8_t *)ipu + (size_t)i * bytes;
        c->ipu[i].bytes = bytes;
        if (stream) {
            c->stream[i].mem = (uint8_t *)stream + (size_t)i * bytes;
            c->stream[i].bytes = bytes;
        }
    }
    c->host.mem = host;
    c->host.bytes = host_bytes;
}

/* A synthetic data set for tiny_infeed (its infeed_user): sample(sample0, i, x, label)
   writes sample i of the micro-batch that starts at global sample sample0 (in_n floats
   of x and its label). */
typedef struct tiny_data {
    void (*sample)(int64_t sample0, int32_t i, float *x, int32_t *label);
    int32_t in_n;
} tiny_data;

/* ipup_infeed_fn over a tiny_data: every sample of the micro-batch from ->sample. */
static inline int tiny_infeed(void *user, const ipup_feed *f) {
    const tiny_data *d = (const tiny_data *)user;
    int32_t i;
    if (f->row != d->in_n || !f->labels) return -1;
    for (i = 0; i < f->n; i++) d->sample(f->sample0, i, f->x + (size_t)i * (size_t)d->in_n, f->labels + i);
    return 0;
}

#endif /* TINY_MODEL_H */
