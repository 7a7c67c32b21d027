/* mnist-train-mpi.c - the MNIST trainer over MPI: one rank per IPU (ipupipe_mpi.h).
 *
 *   mpirun -np N build/mnist-train-mpi --runner mpi [the options of mnist-train]
 *
 * N = replicas x IPUs per replica. Built with mpicc by `make build/mnist-train-mpi`
 * (OpenMPI: Debian openmpi-bin libopenmpi-dev). Every rank reads the data and any
 * --load file itself, feeds its own stage-0 micro-batches from the same global sample
 * indices as the other runners, and runs its row of the schedule table (after checking
 * that every rank read the same bytes of the data: each file's IDX header and the
 * samples used; else the job stops naming the rank and file that differ); rank 0 prints
 * and writes every output (--save, --trace, --summary-json, --export-c, in either
 * spelling: the other ranks drop them after parsing, mt_drop_outputs, and print
 * nothing), and its checkpoint is byte-identical to the cooperative runner's. Messages
 * are labelled "mnist-train-mpi:". --runner mpi is the
 * default here and the only runner of this program. A rank that fails ends the job.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE (Linux) for mt_alloc_huge */
#define IPUPIPE_IMPLEMENTATION
#define MT_FEED_DIGEST 1 /* mt_feed_load hashes what each rank reads (mtm_data) */
#define MT_PROG "mnist-train-mpi" /* the name in front of the trainer's messages */
#include "ipupipe_mpi.h"
#include "mnist_feed.h"

#include <stdio.h>
#include <string.h>
#include <strings.h> /* strcasecmp */

static ipup_mpi mtm_mpi;
static uint64_t mtm_fingerprint;
static const char *mtm_runner = "mpi";
static int mtm_rank;

/* after the data are read, before ipup_init: every rank read the same bytes of the four
   files (the command-line fingerprint sees the --data string, not the files it names) */
static const char *mtm_data(const mt_feed *f, const char *dir) {
    static char why[IPUP_MSG_MAX + 4 * MNIST_PATH_LEN + 200], msg[IPUP_MSG_MAX + 4 * MNIST_PATH_LEN];
    static char path[4][MNIST_PATH_LEN];
    const char *names[4];
    int i;
    for (i = 0; i < 4; i++) {
        mnist_path(path[i], sizeof path[i], dir, i < 2 ? "train" : "t10k", i % 2);
        names[i] = path[i];
    }
    if (ipup_mpi_agree_inputs(MPI_COMM_WORLD, 4, names, f->digest, msg, sizeof msg) == IPUP_OK) return NULL;
    ipup_snprintf(why, sizeof why, "--data: %s [a digest covers the file's IDX header and the items this run reads: "
                  "%d training, %d test]", msg, f->tr.count, f->te.count);
    return why;
}

/* after ipup_init and --load: every rank agrees, then the emulator runs this rank's row */
static const char *mtm_ready(ipup_emu *e) {
    static char why[IPUP_MSG_MAX + 64];
    if (strcasecmp(mtm_runner, "mpi") != 0) {
        /* every rank has the same command line: every rank stops here */
        ipup_snprintf(why, sizeof why, "--runner %s: mnist-train-mpi runs --runner mpi only (build/mnist-train runs coop and threads)", mtm_runner);
        return why;
    }
    if (ipup_mpi_init(&mtm_mpi, e, MPI_COMM_WORLD, mtm_fingerprint) != IPUP_OK) {
        ipup_snprintf(why, sizeof why, "--runner mpi: %s", ipup_last_error(e));
        return why;
    }
    return NULL;
}
static void mtm_report(ipup_emu *e) {
    (void)e;
    ipup_mpi_share_state(&mtm_mpi);
}
#define MNIST_TRAIN_EXTRA_RUNNER "mpi"
#define MNIST_TRAIN_DATA_READY(f, dir) mtm_data(f, dir)
#define MNIST_TRAIN_EMU_READY(e) mtm_ready(e)
#define MNIST_TRAIN_BEFORE_REPORT(e) mtm_report(e)
#define MNIST_TRAIN_RUN_DONE() ipup_mpi_free(&mtm_mpi) /* before the trainer frees the emulator */
#define MNIST_TRAIN_WRITES_OUTPUTS() (mtm_rank == 0)  /* rank 0 writes every output file */
#include "mnist_trainer.h"

#define MTM_MAX_ARGS 128

/* The command line of this rank (the same on every rank: the outputs are dropped by
 * the trainer on ranks other than 0, MNIST_TRAIN_WRITES_OUTPUTS): --runner mpi when
 * none is given. */
static int mtm_args(int argc, char **argv, char **out) {
    int i, n = 0, runner = 0;
    for (i = 0; i < argc && n < MTM_MAX_ARGS - 3; i++) {
        if (strcmp(argv[i], "--runner") == 0 && i + 1 < argc) {
            runner = 1;
            mtm_runner = argv[i + 1];
        }
        if (i > 0) mtm_fingerprint = ipup_mpi_hash(mtm_fingerprint, argv[i], strlen(argv[i]) + 1);
        out[n++] = argv[i];
    }
    if (!runner) {
        static char flag[] = "--runner", mpi[] = "mpi";
        out[n++] = flag;
        out[n++] = mpi;
    }
    out[n] = NULL;
    return n;
}

int main(int argc, char **argv) {
    static char *args[MTM_MAX_ARGS + 1];
    int n, rc;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mtm_rank);
    n = mtm_args(argc, argv, args);
    if (mtm_rank != 0 && !freopen("/dev/null", "w", stdout)) {
        fprintf(stderr, "mnist-train-mpi: rank %d cannot silence its output\n", mtm_rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    rc = mnist_train_main(n, args);
    if (rc != 0) {
        fflush(stdout);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, rc); /* no rank waits for one that stopped */
    }
    MPI_Finalize();
    return 0;
}
