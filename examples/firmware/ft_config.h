/* ft_config.h - the settings of the fine-tuning firmware image (finetune.c), in one place
   for it and for the host program that writes its data (gen_finetune.c): the platform's
   expf/logf (fw_math.h: the same bits on the Cortex-M and on the build host, so that the
   host's run of the same fine-tuning predicts the device's bits), the emulator's size
   macros, then ipupipe.h and the classifier of examples/common/sensor_classifier.h.

   Include it after defining IPUPIPE_IMPLEMENTATION (and, on the device, IPUPIPE_ASSERT). */
#ifndef FT_CONFIG_H
#define FT_CONFIG_H

#include "fw_math.h"
#define IPUPIPE_EXPF(x) fw_expf(x)
#define IPUPIPE_LOGF(x) fw_logf(x)
#define IPUPIPE_NO_THREADS          /* cooperative runner only: no pthread, no atomics */
#define IPUP_MAX_LAYERS 8           /* shrink the fixed arrays of ipup_emu / ipup_config */
#define IPUP_MAX_DEVICES 2
#define IPUP_MAX_REPLICAS 1
#define IPUP_MAX_IPUS 2
#define IPUP_SCHED_MAX_STAGES 8
#define IPUP_PLAN_STACK_OPS 32      /* ipup_plan_config builds its table in cfg.host */
#include "ipupipe.h"
#include "sensor_classifier.h"              /* the models, settings, infeed, weights by name */

#endif
