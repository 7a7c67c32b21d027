/* tests/scratch_dir.h - a test program's scratch directory, /tmp/ipup_TAG_XXXXXX, made
 * with mkdtemp on first use (the program stops, exit 2, when it cannot be); the test
 * removes it when done. Define _POSIX_C_SOURCE 200809L (mkdtemp) before the first
 * system header. */
#ifndef IPUPIPE_TESTS_SCRATCH_DIR_H
#define IPUPIPE_TESTS_SCRATCH_DIR_H

#include <stdio.h>
#include <stdlib.h>

/* dir (cap bytes, "" until the first call) made and returned; later calls return it. */
static inline const char *scratch_dir(char *dir, size_t cap, const char *tag) {
    if (!dir[0]) {
        snprintf(dir, cap, "/tmp/ipup_%s_XXXXXX", tag);
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            exit(2);
        }
    }
    return dir;
}

#endif /* IPUPIPE_TESTS_SCRATCH_DIR_H */
