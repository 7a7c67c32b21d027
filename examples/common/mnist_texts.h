/* mnist_texts.h - the texts of the three MNIST models: their names, their layers as
 * model text (ipup_model_parse), the ids the trainer gives their layers and their
 * default splits. One place for both programs that name them: the trainer's recipes
 * (examples/mnist/mnist_models.h) and the pool planner (examples/plan/plan_models.h).
 * Plain string macros, so that static tables can use them. MIT licence.
 *
 *   MNT_<M>_NAME     the name of --model
 *   MNT_<M>_LAYERS   the model text; input 28x28x1 images, 10 classes
 *   MNT_<M>_IDS      space-separated ids of the layers that are not activations
 *   MNT_<M>_SPLITS   the default --splits: space-separated first layers of stages 1..
 */
#ifndef MNIST_TEXTS_H
#define MNIST_TEXTS_H

/* TensorFlow 1 pipelining tutorial */
#define MNT_MLP_NAME "mlp"
#define MNT_MLP_LAYERS "flatten,dense256,relu,dense128,relu,dense64,relu,dense32,relu,dense10,xent"
#define MNT_MLP_IDS "flatten dense256 dense128 dense64 dense32 logits cel"
#define MNT_MLP_SPLITS "dense32"

/* Keras MNIST convnet example */
#define MNT_CNN_NAME "cnn"
#define MNT_CNN_LAYERS "conv32,relu,maxpool2,conv64,relu,maxpool2,flatten,dropout0.5,dense10,xent"
#define MNT_CNN_IDS "conv32 pool1 conv64 pool2 flatten dropout logits cel"
#define MNT_CNN_SPLITS "pool2"

/* PopXL pipelining tutorial */
#define MNT_MLP_GELU_NAME "mlp-gelu"
#define MNT_MLP_GELU_LAYERS "flatten,dense512,gelu,dense512,gelu,dense512,gelu,dense10,xent"
#define MNT_MLP_GELU_IDS "flatten fc1 fc2 fc3 fc4 loss"
#define MNT_MLP_GELU_SPLITS "fc3"

#endif /* MNIST_TEXTS_H */
