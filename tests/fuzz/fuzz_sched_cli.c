/* fuzz_sched_cli.c - libFuzzer target: the command line of the ipupipe-sched tool
 * (its parser examples/sched/sched_cli.h and its runner examples/sched/sched_run.h). The input is the
 * argument list, one argument per line. Every parsed configuration with S x M up to
 * 2048 is then run as the tool would run it (generate + verify + measure + the
 * chosen format, or --compare), with stdout sent to /dev/null. Oracle besides the
 * sanitizers: a generated table that fails verification (the tool's exit 1 without
 * --check) is a generator bug and aborts. --check reads a fixed valid CSV that the
 * harness writes (the CSV reader has its own target, fuzz_sched_csv). --help and -h
 * are dropped (they exit the process by design).
 *
 *   make fuzz   (or build/fuzz/fuzz_sched_cli tests/fuzz/corpus/sched_cli)
 */
#define _POSIX_C_SOURCE 200809L
#include "ipupipe_sched.h"
#include "sched_cli.h"
#include "sched_run.h"

#include <unistd.h>

#define FZ_MAX_ARGS 48

static char fz_csv[128];

static void fz_cleanup(void) { unlink(fz_csv); }

static void fz_init(void) {
    FILE *f;
    char tmpl[] = "/tmp/ipup_fuzz_cli_XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) abort();
    close(fd);
    snprintf(fz_csv, sizeof fz_csv, "%s", tmpl);
    f = fopen(fz_csv, "w");
    if (!f) abort();
    fputs("0F0,0F1,0B0,0B1\n,1F0,1B0,1F1,1B1\n", f); /* per-device orders: valid after --respace */
    fclose(f);
    atexit(fz_cleanup);
    if (!freopen("/dev/null", "w", stdout)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static opts o;
    char *buf, *argv[FZ_MAX_ARGS + 1];
    int argc = 1, rc;
    size_t i, start = 0;
    if (!fz_csv[0]) fz_init();
    buf = (char *)malloc(size + 1);
    if (!buf) return 0;
    if (size) memcpy(buf, data, size);
    buf[size] = '\0';
    argv[0] = (char *)"ipupipe-sched";
    for (i = 0; i <= size && argc < FZ_MAX_ARGS; i++) {
        if (i == size || buf[i] == '\n' || buf[i] == '\0') {
            buf[i] = '\0';
            if (strcmp(buf + start, "--help") != 0 && strcmp(buf + start, "-h") != 0) argv[argc++] = buf + start;
            start = i + 1;
        }
    }
    argv[argc] = NULL;
    rc = parse_args(argc, argv, &o);
    if (rc == 0) {
        if (o.check) {
            o.check = fz_csv;
            rc = run_check(&o);
            if (rc == 2) abort(); /* a valid file and parsed options: no usage error left */
        } else if ((long long)o.stages * o.microbatches <= 2048) {
            rc = o.compare ? run_compare(&o) : run_generate(&o);
            if (rc == 1) abort(); /* generated table fails its own verification */
        }
    } else if (rc != 2) {
        abort(); /* usage errors exit 2 */
    }
    free(buf);
    return 0;
}
