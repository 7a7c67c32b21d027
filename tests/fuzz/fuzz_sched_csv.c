/* fuzz_sched_csv.c - libFuzzer target: the schedule CSV reader of ipupipe_sched.h
 * (PyTorch compute-only CSV, docs/schedules.md §6) and everything a loaded table goes
 * through in `ipupipe-sched --check`: scan, load, respace, verify, measure and the
 * renderers. The input is the CSV text, not NUL-terminated (the reader takes a
 * length). Tables above 65536 S x M cells are only scanned (the tool's limit is far
 * higher, but a fuzzer wants fast executions).
 *
 *   make fuzz   (or build/fuzz/fuzz_sched_csv tests/fuzz/corpus/sched_csv)
 */
#include "ipupipe_sched.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FZ_MAX_CELLS 65536
static ipup_op fz_ops[3 * FZ_MAX_CELLS];
static uint64_t fz_work[(32 * FZ_MAX_CELLS + 8 * FZ_MAX_CELLS + 256) / 8 + 1];
static char fz_text[1 << 16];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char msg[1024];
    int32_t S = 0, M = 0, P = 0, n = 0;
    ipup_table t;
    ipup_sched_verify_info vi;
    ipup_sched_figures fig;
    ipup_buf b;
    int rc;
    /* a copy: the reader must never read past `size` (ASan catches it on the copy) */
    char *text = (char *)malloc(size ? size : 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    rc = ipup_sched_csv_scan(text, size, &S, &M, &P, &n, msg, sizeof msg);
    if (rc != IPUP_OK) {
        if (!msg[0]) abort(); /* every error must say what is wrong */
        free(text);
        return 0;
    }
    if (S < 1 || M < 1 || P < 1 || n < 0) abort();
    if ((long long)S * M > FZ_MAX_CELLS || n > 3 * FZ_MAX_CELLS) {
        free(text);
        return 0;
    }
    /* a too-small ops array must be refused, not overrun */
    if (n > 0 && ipup_sched_csv_load(text, size, fz_ops, n - 1, fz_work, sizeof fz_work, &t, msg, sizeof msg) == IPUP_OK)
        abort();
    rc = ipup_sched_csv_load(text, size, fz_ops, 3 * FZ_MAX_CELLS, fz_work, sizeof fz_work, &t, msg, sizeof msg);
    free(text);
    if (rc != IPUP_OK) {
        if (!msg[0]) abort();
        return 0;
    }
    if (t.n_ops != n) abort();
    rc = ipup_sched_verify(&t, fz_work, sizeof fz_work, &vi, msg, sizeof msg);
    if (rc != IPUP_OK) {
        if (!msg[0] || vi.rule < 1 || vi.rule > 6) abort();
        b.buf = fz_text; b.cap = sizeof fz_text; b.len = 0;
        (void)ipup_sched_render_steps(&t, vi.step, ipup_buf_write, &b);
        rc = ipup_sched_respace(&t, fz_work, sizeof fz_work, msg, sizeof msg);
        if (rc != IPUP_OK) return 0;
        rc = ipup_sched_verify(&t, fz_work, sizeof fz_work, &vi, msg, sizeof msg);
        if (rc != IPUP_OK) return 0;
    }
    if (ipup_sched_measure(&t, NULL, NULL, fz_work, sizeof fz_work, &fig) != IPUP_OK) abort();
    /* into a buffer that may be too small: the writers finish, len counts every byte */
    b.buf = fz_text; b.cap = sizeof fz_text; b.len = 0;
    if (ipup_sched_render_grid(&t, ipup_buf_write, &b) != IPUP_OK) abort();
    if (ipup_sched_write_csv(&t, ipup_buf_write, &b) != IPUP_OK) abort();
    if (ipup_sched_write_json(&t, &fig, "csv", "", ipup_buf_write, &b) != IPUP_OK) abort();
    if (ipup_sched_write_trace(&t, NULL, ipup_buf_write, &b) != IPUP_OK) abort();
    if (ipup_sched_write_svg(&t, NULL, &fig, ipup_buf_write, &b) != IPUP_OK) abort();
    if (b.len < sizeof fz_text && b.len != strlen(fz_text)) abort();
    return 0;
}
