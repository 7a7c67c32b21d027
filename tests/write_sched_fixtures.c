/* write_sched_fixtures.c - writes the two PyTorch schedule CSVs of tests/sched_fixtures.h
 * into the directory argv[1], under their original names, for test_sched_tool.sh. */
#include <stdio.h>

#include "sched_fixtures.h"

static int put(const char *dir, const char *name, const char *text) {
    char path[4096];
    FILE *f;
    int bad;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path || !(f = fopen(path, "w"))) return 1;
    bad = fputs(text, f) < 0;
    return fclose(f) != 0 || bad;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: write_sched_fixtures DIR\n");
        return 2;
    }
    return put(argv[1], "zb1p_2rank_2stagep_compute.csv", fixture_zb1p) ||
           put(argv[1], "dualpipev_4rank_10mb.csv", fixture_dualpipev);
}
