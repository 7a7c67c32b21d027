/* tests/mlp_fixture.h - the small emulator run of test_hostile_config and
 * test_thread_stall: 12 features and 4 classes (a one-hot pattern of the label plus a
 * ramp), the MLP dense16,relu,dense8,relu,dense4,xent in 3 stages, micro-batches of 2,
 * 4 a step, seed 9, SGD at learning rate 0.1; IPU pools and a host pool from the test's
 * own arrays (each test sizes them), no streaming pools. Include after tiny_model.h. */
#ifndef IPUPIPE_TESTS_MLP_FIXTURE_H
#define IPUPIPE_TESTS_MLP_FIXTURE_H

#include "tiny_model.h"

#define MLP_FIXTURE_IN 12
#define MLP_FIXTURE_MODEL "dense16,relu,dense8,relu,dense4,xent" /* 1 x 1 x 12 inputs */

static inline void mlp_fixture_sample(int64_t sample0, int32_t i, float *x, int32_t *label) {
    int32_t j;
    *label = (int32_t)((sample0 + i) % 4);
    for (j = 0; j < MLP_FIXTURE_IN; j++) x[j] = (float)((j + *label * 3) % 12 == 0) + 0.01f * (float)j;
}
static tiny_data mlp_fixture_data = {mlp_fixture_sample, MLP_FIXTURE_IN};

/* The configuration: the model parsed into *m, `repeat` steps a run (0: the default),
   IPUP_MAX_IPUS pools of pool_bytes each at ipu and the host pool at host. */
static inline ipup_config mlp_fixture_config(ipup_model_desc *m, int32_t repeat, void *ipu, size_t pool_bytes, void *host,
                                             size_t host_bytes) {
    ipup_config c;
    tiny_model_or_exit(m, 1, 1, MLP_FIXTURE_IN, MLP_FIXTURE_MODEL);
    c = tiny_config(m, 3, 2, 4, repeat, 9, IPUP_OPT_SGD, 0.1f, tiny_infeed, &mlp_fixture_data);
    tiny_pools(&c, IPUP_MAX_IPUS, ipu, NULL, pool_bytes, host, host_bytes);
    return c;
}

#endif /* IPUPIPE_TESTS_MLP_FIXTURE_H */
