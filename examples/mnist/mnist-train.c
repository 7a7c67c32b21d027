/* mnist-train.c - the pipelined MNIST trainer of ipupipe: the three seed tutorials
 * (TensorFlow 1 pipelining, Keras MNIST convnet, PopXL pipelining) as one C program
 * on the multi-IPU emulator of ipupipe.h, on real MNIST data, with no heap call after
 * startup.
 *
 *   build/mnist-train --model mlp|cnn|mlp-gelu [options]     (--help lists them)
 *   build/mnist-train --model ds-cnn|mobilenet-v1-0.25|resnet8|fc-ae --data synthetic
 *   build/mnist-train --model resnet8-fashion --data data/fashion-mnist
 *                    (the MLPerf Tiny networks, docs/models.md)
 *
 * The program is its parts, each a header under examples/ that tests, benchmarks and
 * fuzz targets include as well:
 *   mnist_options.h  the command line, the usage text, the model's recipe defaults
 *   mnist_models.h   the three models as ipup_model_desc, the reference loop
 *   mnist_feed.h     the data in host memory, the shuffle, the infeed callback
 *   mnist_outfile.h  the output files, opened at startup, replaced when complete
 *   mnist_ckpt.h     the checkpoint files (--save, --load)
 *   mnist_data.h     the IDX reader
 *   mnist_trainer.h  one run: setup, training, report, cleanup (mnist_train_main)
 *
 * Determinism: the shuffle of epoch e and the augmentation shifts are keyed by
 * (seed, epoch, position) (mnist_feed.h); the learning rate of epoch e is
 * lr * decay^e. So a run resumed from a checkpoint written after epoch k continues
 * with the bits of an uninterrupted run.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE (Linux) for mt_alloc_huge */
#define IPUPIPE_IMPLEMENTATION
#define IPUP_MAX_LAYERS 128 /* MobileNetV1 has 85 layers, ResNet-8 35 (the default is 32) */
#include "ipupipe.h"

#include "mnist_trainer.h"

int main(int argc, char **argv) { return mnist_train_main(argc, argv); }
