/* tests/ipupipe_impl.c - the library's implementation, compiled once per build
 * configuration into build/CONFIG/ipupipe.o; the tests of `make test` and `make check`
 * are compiled against the declarations and linked to it (Makefile: LIB_TESTS).
 *
 * It carries helgrind's happens-before annotations of the rings where
 * <valgrind/helgrind.h> exists (tests/tiny_model.h, TINY_MODEL_HELGRIND): outside
 * Valgrind they are a few no-op instructions, as in every test that defines it.
 *
 * The private functions a test calls get external names here (tests/impl_private.h). */
#define TINY_MODEL_HELGRIND
#define IPUPIPE_IMPLEMENTATION
#include "tiny_model.h"
#include "impl_private.h"

void tpriv_keep_warnings(char *warn, size_t warn_len, const char *w) {
    ipup__keep_warnings(warn, warn_len, w);
}
