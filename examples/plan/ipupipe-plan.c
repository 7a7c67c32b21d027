/* ipupipe-plan.c - the pools of a pipeline configuration as a C header: the tool a
 * firmware build runs to size its static arrays in one build (docs/embedded.md, "Pools sized at
 * compile time"). The program is examples/plan/plan_tool.h (options: plan_options.h,
 * named models: plan_models.h); it needs only the library and examples/common/.
 *
 *   build/ipupipe-plan --model dense64,relu,dense10,xent --input 1x1x64 -o pools.h
 */
#define _POSIX_C_SOURCE 200809L
#define IPUPIPE_IMPLEMENTATION
#define IPUP_MAX_LAYERS 128 /* the named MobileNetV1 has 85 layers (the default is 32) */
#include "ipupipe.h"

#include "plan_tool.h"

int main(int argc, char **argv) { return pt_main(argc, argv); }
