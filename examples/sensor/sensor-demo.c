/* sensor-demo.c - the second example of ipupipe, not MNIST: vibration windows of rotating
 * machines, made up deterministically from a seed (examples/sensor/sensor_data.h).
 *
 *   build/sensor-demo --mode anomaly  [options]   autoencoder, mse loss, anomaly detection
 *                     [--export-c FILE.h [--export-name NAME]]   then the model as C
 *   build/sensor-demo --mode finetune [options]   pre-train, freeze the body, fine-tune the head
 *
 * The program is its parts, each a header under examples/:
 *   sensor_options.h   the command line and the error printer
 *   sensor_data.h      the synthetic windows, the injected anomalies, the spectral features
 *   sensor_run.h       one emulator at a time: pools from the plan, the training loop
 *   sensor_anomaly.h   --mode anomaly
 *   sensor_export.h    --mode anomaly --export-c: the autoencoder as a C header
 *   sensor_classifier.h        the classifier, its settings and weights by tensor name (stdio-free:
 *                      the firmware's fine-tuning image includes it too)
 *   sensor_finetune.h  --mode finetune
 * Same seed, same bits, whatever the schedule or the runner. */
#define _POSIX_C_SOURCE 200809L
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h"

#include "sensor_anomaly.h"
#include "sensor_finetune.h"

int main(int argc, char **argv)
{
    so_opts o;
    int rc = so_parse(&o, argc, argv);
    if (rc != 0) return rc == 1 ? 0 : rc;
    return o.mode == SO_MODE_ANOMALY ? sa_main(&o) : sft_main(&o);
}
