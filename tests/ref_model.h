/* tests/ref_model.h - the plain gradient-accumulation loop that the emulator tests
 * (test_emulator, test_mse_frozen) hold ipupipe.h's schedules and runners to, bit for bit,
 * and the plain forward test_predict holds ipup_predict to.
 *
 * One step of the loop: for each replica r in order, for each micro-batch m in order, the
 * infeed's samples go forward through every layer and the loss's gradient back through
 * every layer (frozen ones too: they pass the input gradient on and their weight
 * gradients are summed but never used); each replica's weight gradients are summed over
 * its micro-batches, the replica sums are added in replica order (total = g(0), then
 * total += g(r)), and every trained layer is updated once with scale 1 / (M x R). Only the
 * kernels of ipupipe_kernels.h are used, in that order, so any other order of the same
 * sums shows up as differing bits.
 *
 * Use:  ipup_init(&e, &c); ref_begin(&R, &c, &e);
 *       for each step t run by the emulator: ref_step(&R, t, infeed, user);
 *       ref_diff(&R, &e, NULL) == 0: every parameter tensor has the loop's bits.
 * ref_forward alone gives the loss gradient (and every activation) of one micro-batch;
 * ref_infer (after ref_set_model and ref_load) the loss layer's input, as in inference
 * (dropout passes its input on).
 *
 * Include after ipupipe.h (tiny_model.h). Activations of one layer of a micro-batch are
 * at most REF_ACT floats, weights of one layer REF_MAXF, biases 64, micro-batches 256
 * samples. All static inline: each includer uses only some. */
#ifndef IPUPIPE_TESTS_REF_MODEL_H
#define IPUPIPE_TESTS_REF_MODEL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define REF_MAXF 4096
#define REF_ACT 8192

typedef struct ref_model {
    ipup_model_desc md;
    ipup_layer_info info[IPUP_MAX_LAYERS];
    ipup_optimizer opt;        /* the emulator's, its defaults resolved by ipup_init */
    uint64_t seed;             /* of the dropout masks */
    int32_t B, M, R;           /* samples a micro-batch, micro-batches a step, replicas */
    int64_t step, first;       /* the micro-batch being run, for dropout: step, first sample in the step */
    float w[IPUP_MAX_LAYERS][REF_MAXF], b[IPUP_MAX_LAYERS][64];
    float gw[IPUP_MAX_LAYERS][REF_MAXF], gb[IPUP_MAX_LAYERS][64];   /* one replica's sums */
    float tw[IPUP_MAX_LAYERS][REF_MAXF], tb[IPUP_MAX_LAYERS][64];   /* summed over replicas */
    float s1w[IPUP_MAX_LAYERS][REF_MAXF], s1b[IPUP_MAX_LAYERS][64]; /* optimizer state */
    float s2w[IPUP_MAX_LAYERS][REF_MAXF], s2b[IPUP_MAX_LAYERS][64];
} ref_model;

/* The model R runs (its layer table too). */
static inline void ref_set_model(ref_model *R, const ipup_model_desc *md) {
    R->md = *md;
    ipup_model_info(md, R->info, IPUP_MAX_LAYERS, NULL, 0);
}

/* The parameters of e (replica 0) into R. */
static inline void ref_load(ref_model *R, ipup_emu *e) {
    int32_t i, n = ipup_tensor_count(e);
    for (i = 0; i < n; i++) {
        ipup_tensor_info t;
        if (ipup_tensor_get(e, i, &t) != IPUP_OK || t.kind != IPUP_TENSOR_PARAM) continue;
        if (t.ndim == 1) memcpy(R->b[t.layer], t.data, (size_t)t.n * sizeof(float));
        else memcpy(R->w[t.layer], t.data, (size_t)t.n * sizeof(float));
    }
}

/* R as the loop of configuration c, from the weights of e (just initialised from c);
   gradients and optimizer state zeroed. */
static inline void ref_begin(ref_model *R, const ipup_config *c, ipup_emu *e) {
    ref_set_model(R, c->model);
    R->opt = e->core.cfg.opt;
    R->seed = c->seed;
    R->B = c->microbatch;
    R->M = c->microbatches;
    R->R = c->replicas ? c->replicas : 1;
    R->step = 0;
    R->first = 0;
    memset(R->gw, 0, sizeof R->gw);
    memset(R->gb, 0, sizeof R->gb);
    memset(R->s1w, 0, sizeof R->s1w);
    memset(R->s1b, 0, sizeof R->s1b);
    memset(R->s2w, 0, sizeof R->s2w);
    memset(R->s2b, 0, sizeof R->s2b);
    ref_load(R, e);
}

/* Forward of layer l (not the loss) for B samples, act[l] to act[l + 1]; dropout as in
   training, or passing its input on when infer is set. */
static inline void ref_layer_fwd(ref_model *R, int32_t l, int32_t B, float act[][REF_ACT], int infer) {
    const ipup_layer_info *I = &R->info[l];
    int n = B * I->in_n;
    switch (I->kind) {
    case IPUP_LAYER_DENSE: ipup_dense_fwd_f32(B, I->in_n, I->out_n, act[l], R->w[l], R->b[l], act[l + 1]); break;
    case IPUP_LAYER_CONV3X3: ipup_conv3x3_fwd_f32(B, I->in_h, I->in_w, I->in_c, I->out_c, act[l], R->w[l], R->b[l], act[l + 1], NULL); break;
    case IPUP_LAYER_RELU: ipup_relu_fwd_f32(n, act[l], act[l + 1]); break;
    case IPUP_LAYER_GELU: ipup_gelu_fwd_f32(n, act[l], act[l + 1]); break;
    case IPUP_LAYER_MAXPOOL2: ipup_maxpool2_fwd_f32(B, I->in_h, I->in_w, I->in_c, act[l], act[l + 1]); break;
    case IPUP_LAYER_FLATTEN: memcpy(act[l + 1], act[l], (size_t)n * sizeof(float)); break;
    case IPUP_LAYER_DROPOUT:
        if (infer) memcpy(act[l + 1], act[l], (size_t)n * sizeof(float));
        else ipup_dropout_fwd_f32(n, R->md.layers[l].rate, ipup_layer_seed(R->seed, l), (uint64_t)R->step,
                                  (uint64_t)R->first * (uint64_t)I->in_n, act[l], act[l + 1]);
        break;
    default: break;
    }
}

/* Forward of one micro-batch of B samples from act[0]; the loss layer leaves its gradient
   in g (labels for a class loss, targets for mse). */
static inline void ref_forward(ref_model *R, int32_t B, float act[][REF_ACT], const int32_t *labels, const float *targets,
                               float *g) {
    int32_t l;
    for (l = 0; l < R->md.n_layers; l++) {
        const ipup_layer_info *I = &R->info[l];
        if (I->kind == IPUP_LAYER_SOFTMAX_XENT) ipup_softmax_xent_f32(B, I->in_n, act[l], labels, g, NULL);
        else if (I->kind == IPUP_LAYER_MSE) ipup_mse_f32(B, I->in_n, act[l], targets, g);
        else ref_layer_fwd(R, l, B, act, 0);
    }
}

/* Inference of B samples from act[0]: every layer but the loss, the loss layer's input
   left in act[n_layers - 1]. */
static inline void ref_infer(ref_model *R, int32_t B, float act[][REF_ACT]) {
    int32_t l;
    for (l = 0; l < R->md.n_layers - 1; l++) ref_layer_fwd(R, l, B, act, 1);
}

/* Backward of the whole model from the loss gradient in g (o: scratch of the same size),
   every weight gradient summed into gw/gb, frozen layers' too. */
static inline void ref_backward(ref_model *R, int32_t B, float act[][REF_ACT], float *g, float *o) {
    int32_t l;
    for (l = R->md.n_layers - 2; l >= 0; l--) {
        const ipup_layer_info *I = &R->info[l];
        int n = B * I->in_n;
        float *tmp;
        switch (I->kind) {
        case IPUP_LAYER_DENSE: ipup_dense_bwd_f32(B, I->in_n, I->out_n, act[l], R->w[l], g, o, R->gw[l], R->gb[l]); break;
        case IPUP_LAYER_CONV3X3: ipup_conv3x3_bwd_f32(B, I->in_h, I->in_w, I->in_c, I->out_c, act[l], R->w[l], g, o, R->gw[l], R->gb[l], NULL); break;
        case IPUP_LAYER_RELU: ipup_relu_bwd_f32(n, act[l], g, o); break;
        case IPUP_LAYER_GELU: ipup_gelu_bwd_f32(n, act[l], g, o); break;
        case IPUP_LAYER_MAXPOOL2: ipup_maxpool2_bwd_f32(B, I->in_h, I->in_w, I->in_c, act[l], g, o); break;
        case IPUP_LAYER_FLATTEN: memcpy(o, g, (size_t)n * sizeof(float)); break;
        case IPUP_LAYER_DROPOUT:
            ipup_dropout_bwd_f32(n, R->md.layers[l].rate, ipup_layer_seed(R->seed, l), (uint64_t)R->step,
                                 (uint64_t)R->first * (uint64_t)I->in_n, g, o);
            break;
        default: break;
        }
        tmp = g; g = o; o = tmp;
    }
}

/* The replica sum in replica order: total = g(0), then total += g(r); g zeroed. */
static inline void ref_replica_sum(ref_model *R, int32_t r) {
    int32_t l, i;
    for (l = 0; l < R->md.n_layers; l++) {
        for (i = 0; i < R->info[l].n_w; i++) R->tw[l][i] = r ? R->tw[l][i] + R->gw[l][i] : R->gw[l][i];
        for (i = 0; i < R->info[l].n_b; i++) R->tb[l][i] = r ? R->tb[l][i] + R->gb[l][i] : R->gb[l][i];
    }
    memset(R->gw, 0, sizeof R->gw);
    memset(R->gb, 0, sizeof R->gb);
}

/* The update of step t of every trained layer (frozen ones keep their weights). */
static inline void ref_update(ref_model *R, float scale, int64_t t) {
    const ipup_optimizer *op = &R->opt;
    int32_t l;
    for (l = 0; l < R->md.n_layers; l++) {
        const ipup_layer_info *I = &R->info[l];
        int j;
        if (!I->n_w || R->md.layers[l].frozen) continue;
        for (j = 0; j < 2; j++) {
            int n = j ? I->n_b : I->n_w;
            float *w = j ? R->b[l] : R->w[l], *gg = j ? R->tb[l] : R->tw[l];
            float *s1 = j ? R->s1b[l] : R->s1w[l], *s2 = j ? R->s2b[l] : R->s2w[l];
            if (op->kind == IPUP_OPT_SGD) ipup_sgd_f32(n, op->lr, scale, w, gg);
            else if (op->kind == IPUP_OPT_MOMENTUM) ipup_momentum_f32(n, op->lr, op->momentum, scale, w, s1, gg);
            else ipup_adamw_f32(n, op->lr, op->beta1, op->beta2, op->eps, op->weight_decay,
                                op->no_bias_correction ? 0 : (int)(t + 1), scale, w, s1, s2, gg);
            memset(gg, 0, (size_t)n * sizeof(float));
        }
    }
}

/* Step t: R replicas x M micro-batches of B samples, in (replica, micro-batch) order, each
   micro-batch from infeed(user, ...) as the emulator asks for it (the same sample0, row,
   classes or target width). */
static inline void ref_step(ref_model *R, int64_t t, ipup_infeed_fn infeed, void *user) {
    static float act[IPUP_MAX_LAYERS + 1][REF_ACT], g0[REF_ACT], g1[REF_ACT], targets[REF_ACT];
    static int32_t labels[256];
    const ipup_layer_info *loss = &R->info[R->md.n_layers - 1];
    int32_t m, r;
    for (r = 0; r < R->R; r++) {
        for (m = 0; m < R->M; m++) {
            ipup_feed fd;
            memset(&fd, 0, sizeof fd);
            fd.step = t;
            fd.replica = r;
            fd.mb = m;
            fd.sample0 = ((t * R->R + r) * R->M + m) * R->B;
            fd.n = R->B;
            fd.row = R->info[0].in_n;
            fd.x = act[0];
            if (loss->kind == IPUP_LAYER_MSE) {
                fd.target_width = loss->in_n;
                fd.targets = targets;
            } else {
                fd.classes = loss->in_n;
                fd.labels = labels;
            }
            infeed(user, &fd);
            R->step = t;
            R->first = ((int64_t)r * R->M + m) * R->B;
            ref_forward(R, R->B, act, labels, targets, g0);
            ref_backward(R, R->B, act, g0, g1);
        }
        ref_replica_sum(R, r);
    }
    ref_update(R, 1.0f / (float)(R->M * R->R), t);
}

/* The number of parameter tensors of e whose bits differ from R's; *maxdiff (when not
   NULL): the largest |difference| of any element. */
static inline int ref_diff(const ref_model *R, ipup_emu *e, double *maxdiff) {
    int32_t i, n = ipup_tensor_count(e), bad = 0, k;
    if (maxdiff) *maxdiff = 0.0;
    for (i = 0; i < n; i++) {
        ipup_tensor_info t;
        const float *ref;
        ipup_tensor_get(e, i, &t);
        if (t.kind != IPUP_TENSOR_PARAM) continue;
        ref = t.ndim == 1 ? R->b[t.layer] : R->w[t.layer];
        if (memcmp(ref, t.data, (size_t)t.n * sizeof(float)) != 0) bad++;
        if (maxdiff)
            for (k = 0; k < t.n; k++) {
                double d = fabs((double)ref[k] - (double)t.data[k]);
                if (d > *maxdiff) *maxdiff = d;
            }
    }
    return bad;
}

#endif /* IPUPIPE_TESTS_REF_MODEL_H */
