/* sensor_data.h - synthetic vibration windows for the sensor example (examples/sensor/sensor-demo.c):
 * two machines, four machine states, four kinds of injected anomaly, and the spectral
 * features of a window. MIT licence.
 *
 * A window is SD_N = 64 samples of an accelerometer on a rotating machine. The machine
 * turns f_rot times per window; its signal is the shaft frequency and two harmonics,
 * each with a random phase and an amplitude jittered by +-20 %, the speed jittered by
 * +-2 %, times the sensor's gain, plus Gaussian-like noise:
 *
 *     x[t] = gain * sum_k a_k * sin(2 pi k f t / N + phi_k) + noise,   k = 1, 2, 3
 *
 * The states follow the textbook signatures of rotating-machine faults (e.g. R. B.
 * Randall, "Vibration-based Condition Monitoring", Wiley 2011, chapters 1 and 5):
 * imbalance raises the 1x component, misalignment the 2x and 3x, and a bearing defect
 * adds a train of impacts at the defect frequency, each ringing a structural resonance
 * that decays within a few samples.
 *
 * Anomalies (injected into a normal window of machine A): the bearing impacts, a speed
 * shift (+25 %), a burst of spikes, and saturation (the signal clipped at 55 % of its
 * peak).
 *
 * Determinism: every random draw is ipup_rng_uniform_f32(seed, stream, index * SD_SLOTS
 * + slot) of ipupipe_kernels.h: window `index` of a data set `stream` is the same
 * whatever order or thread asks for it. The sinusoids use the C library's sin, cos, exp
 * and sqrt in double: the bits are those of the host's libm (the firmware gets the data
 * as a generated header, so it never computes them).
 *
 * No heap: every function writes into the caller's arrays. */
#ifndef SENSOR_DATA_H
#define SENSOR_DATA_H

#include <math.h>
#include <stdint.h>

#include "ipupipe_kernels.h"

#define SD_N 64          /* samples per window */
#define SD_FEATURES 32   /* spectral features: |DFT| of bins 1..32 of the Hann-windowed window */
#define SD_SLOTS 256     /* random draws reserved per window */
#define SD_PI 3.14159265358979323846

enum { SD_NORMAL = 0, SD_IMBALANCE, SD_MISALIGN, SD_BEARING, SD_STATES };
enum { SD_ANOM_IMPACTS = 0, SD_ANOM_SHIFT, SD_ANOM_SPIKES, SD_ANOM_CLIP, SD_ANOM_KINDS };

typedef struct sd_machine {
    const char *name;
    double f_rot;    /* shaft turns per window */
    double gain;     /* sensor and mounting gain */
    double noise;    /* standard deviation of the sensor noise */
    double f_res;    /* resonance rung by bearing impacts, cycles per window */
    double f_fault;  /* bearing defect impacts per shaft turn */
} sd_machine;

/* machine A (the one pre-trained on) and machine B (faster, stiffer, another sensor) */
static const sd_machine sd_machine_a = {"A", 4.0, 1.0, 0.05, 22.0, 2.6};
static const sd_machine sd_machine_b = {"B", 5.0, 1.4, 0.07, 27.0, 3.1};

static inline const char *sd_state_name(int s)
{
    static const char *const n[SD_STATES] = {"normal", "imbalance", "misalignment", "bearing"};
    return s >= 0 && s < SD_STATES ? n[s] : "?";
}
static inline const char *sd_anomaly_name(int k)
{
    static const char *const n[SD_ANOM_KINDS] = {"bearing-impacts", "speed-shift", "spike-burst", "saturation"};
    return k >= 0 && k < SD_ANOM_KINDS ? n[k] : "?";
}

/* the random draw `slot` of window `index` of data set `stream`, uniform in [0, 1) */
static inline double sd_u(uint64_t seed, uint64_t stream, uint64_t index, unsigned slot)
{
    return (double)ipup_rng_uniform_f32(seed, stream, index * SD_SLOTS + slot);
}
/* about N(0, 1): the sum of four uniforms, centred and scaled to unit variance */
static inline double sd_gauss(uint64_t seed, uint64_t stream, uint64_t index, unsigned slot)
{
    double s = sd_u(seed, stream, index, slot) + sd_u(seed, stream, index, slot + 1) +
               sd_u(seed, stream, index, slot + 2) + sd_u(seed, stream, index, slot + 3);
    return (s - 2.0) * 1.7320508075688772;
}

/* adds the bearing impacts to w: `per_turn` impacts per shaft turn from a random start,
   each a resonance at f_res decaying with a time constant of 1.5 samples */
static inline void sd_add_impacts(double *w, double f_rot, double per_turn, double f_res, double amp,
                                  uint64_t seed, uint64_t stream, uint64_t index)
{
    double period = (double)SD_N / (f_rot * per_turn);
    double t0 = sd_u(seed, stream, index, 20) * period;
    double tj;
    int t;
    for (tj = t0; tj < (double)SD_N; tj += period)
        for (t = (int)ceil(tj); t < SD_N && (double)t < tj + 12.0; t++) {
            double dt = (double)t - tj;
            w[t] += amp * exp(-dt / 1.5) * sin(2.0 * SD_PI * f_res * dt / (double)SD_N);
        }
}

/* one window of machine m in state `state` (speed scaled by speed_x, 1 for the machine's
   own) into w[SD_N], before noise and gain */
static inline void sd_clean(const sd_machine *m, int state, double speed_x, uint64_t seed, uint64_t stream,
                            uint64_t index, double *w)
{
    double a[3] = {1.0, 0.25, 0.10};
    double f = m->f_rot * speed_x * (1.0 + 0.04 * (sd_u(seed, stream, index, 0) - 0.5));
    int k, t;
    if (state == SD_IMBALANCE) a[0] = 2.2;
    if (state == SD_MISALIGN) { a[1] = 1.0; a[2] = 0.5; }
    for (t = 0; t < SD_N; t++) w[t] = 0.0;
    for (k = 0; k < 3; k++) {
        double amp = a[k] * (0.8 + 0.4 * sd_u(seed, stream, index, 1u + (unsigned)k));
        double phi = 2.0 * SD_PI * sd_u(seed, stream, index, 4u + (unsigned)k);
        for (t = 0; t < SD_N; t++)
            w[t] += amp * sin(2.0 * SD_PI * (double)(k + 1) * f * (double)t / (double)SD_N + phi);
    }
    if (state == SD_BEARING) sd_add_impacts(w, f, m->f_fault, m->f_res, 1.2, seed, stream, index);
}

/* gain and noise, into the float window x */
static inline void sd_finish(const sd_machine *m, const double *w, uint64_t seed, uint64_t stream,
                             uint64_t index, float *x)
{
    int t;
    for (t = 0; t < SD_N; t++)
        x[t] = (float)(m->gain * w[t] + m->noise * sd_gauss(seed, stream, index, 32u + 4u * (unsigned)t));
}

/* window `index` of data set `stream`: machine m in state `state` */
static inline void sd_window(const sd_machine *m, int state, uint64_t seed, uint64_t stream, uint64_t index,
                             float *x)
{
    double w[SD_N];
    sd_clean(m, state, 1.0, seed, stream, index, w);
    sd_finish(m, w, seed, stream, index, x);
}

/* a spike burst: 3 spikes of +-2.5 within 8 samples at a random place */
static inline void sd_add_spikes(double *w, uint64_t seed, uint64_t stream, uint64_t index)
{
    int at = (int)(sd_u(seed, stream, index, 24) * (double)(SD_N - 8)), k;
    for (k = 0; k < 3; k++) {
        int t = at + (int)(sd_u(seed, stream, index, 25u + (unsigned)k) * 8.0);
        w[t] += sd_u(seed, stream, index, 28u + (unsigned)k) < 0.5 ? -2.5 : 2.5;
    }
}

/* saturation: the clean signal clipped at 55 % of its peak */
static inline void sd_clip(double *w)
{
    double peak = 0.0, c;
    int t;
    for (t = 0; t < SD_N; t++) peak = fabs(w[t]) > peak ? fabs(w[t]) : peak;
    c = 0.55 * peak;
    for (t = 0; t < SD_N; t++) w[t] = w[t] > c ? c : w[t] < -c ? -c : w[t];
}

/* a normal window of machine m with anomaly `kind` injected */
static inline void sd_anomaly(const sd_machine *m, int kind, uint64_t seed, uint64_t stream, uint64_t index,
                              float *x)
{
    double w[SD_N];
    sd_clean(m, SD_NORMAL, kind == SD_ANOM_SHIFT ? 1.25 : 1.0, seed, stream, index, w);
    if (kind == SD_ANOM_IMPACTS) sd_add_impacts(w, m->f_rot, m->f_fault, m->f_res, 1.2, seed, stream, index);
    if (kind == SD_ANOM_SPIKES) sd_add_spikes(w, seed, stream, index);
    if (kind == SD_ANOM_CLIP) sd_clip(w);
    sd_finish(m, w, seed, stream, index, x);
}

/* the features of a window: |X_k| / (N / 4) for k = 1..SD_FEATURES, X the DFT of the
   Hann-windowed samples (a unit sinusoid on a bin gives about 1) */
static inline void sd_features(const float *x, float *feat)
{
    int k, t;
    for (k = 1; k <= SD_FEATURES; k++) {
        double re = 0.0, im = 0.0;
        for (t = 0; t < SD_N; t++) {
            double hann = 0.5 - 0.5 * cos(2.0 * SD_PI * (double)t / (double)SD_N);
            double ang = 2.0 * SD_PI * (double)k * (double)t / (double)SD_N;
            re += hann * (double)x[t] * cos(ang);
            im -= hann * (double)x[t] * sin(ang);
        }
        feat[k - 1] = (float)(sqrt(re * re + im * im) / ((double)SD_N / 4.0));
    }
}

/* n labelled feature rows of machine m, data set `stream`: sample i is in state i % 4 */
static inline void sd_feature_set(const sd_machine *m, uint64_t seed, uint64_t stream, int32_t n, float *feat,
                                  int32_t *labels)
{
    float x[SD_N];
    int32_t i;
    for (i = 0; i < n; i++) {
        labels[i] = i % SD_STATES;
        sd_window(m, (int)labels[i], seed, stream, (uint64_t)i, x);
        sd_features(x, feat + (size_t)i * SD_FEATURES);
    }
}

/* the data-set streams (keys of the RNG) */
enum {
    SD_STREAM_AE_TRAIN = 1, SD_STREAM_AE_HOLDOUT, SD_STREAM_AE_TEST, SD_STREAM_AE_ANOM,
    SD_STREAM_A_TRAIN = 11, SD_STREAM_A_TEST, SD_STREAM_B_SHOTS, SD_STREAM_B_TEST
};

#endif
