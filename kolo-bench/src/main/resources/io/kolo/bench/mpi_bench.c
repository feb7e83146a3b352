/*
 * Open MPI side of `kolo bench --compare`: times one collective per message size exactly as the Kolo
 * worker does (same steps, same per-iteration "slowest rank" timing) and prints one
 * KOLO-BENCH-RESULT line per size on rank 0.
 *
 * usage: mpi_bench COLLECTIVE float|double BYTES:ITERS:WARMUP[,...]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(int rank, const char *msg) {
    if (rank == 0) fprintf(stderr, "mpi_bench: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4) die(rank, "usage: mpi_bench COLLECTIVE float|double|int|long BYTES:ITERS:WARMUP[,...]");
    const char *op = argv[1];
    MPI_Datatype type;
    size_t esize;
    if (strcmp(argv[2], "float") == 0) { type = MPI_FLOAT; esize = sizeof(float); }
    else if (strcmp(argv[2], "double") == 0) { type = MPI_DOUBLE; esize = sizeof(double); }
    else if (strcmp(argv[2], "int") == 0) { type = MPI_INT32_T; esize = 4; }
    else if (strcmp(argv[2], "long") == 0) { type = MPI_INT64_T; esize = 8; }
    else die(rank, "type must be float, double, int or long");

    char *steps = strdup(argv[3]);
    for (char *save = NULL, *step = strtok_r(steps, ",", &save); step; step = strtok_r(NULL, ",", &save)) {
        long long bytes; int iters, warmup;
        if (sscanf(step, "%lld:%d:%d", &bytes, &iters, &warmup) != 3 || bytes < 1 || iters < 1 || warmup < 0)
            die(rank, "bad step; expected BYTES:ITERS:WARMUP");
        int count = (int)(bytes / (long long)esize);
        int part = count / size;
        /* Input and output buffers; in-place allreduce and broadcast use only the first. */
        char *a = malloc((size_t)count * esize + 64), *b = malloc((size_t)count * esize + 64);
        double *t = malloc(sizeof(double) * iters), *worst = malloc(sizeof(double) * iters);
        if (!a || !b || !t || !worst) die(rank, "out of memory");
        memset(a, 0, (size_t)count * esize);
        memset(b, 0, (size_t)count * esize);
        for (int i = -warmup; i < iters; i++) {
            double start = MPI_Wtime();
            int rc;
            if (strcmp(op, "allreduce") == 0) rc = MPI_Allreduce(MPI_IN_PLACE, a, count, type, MPI_SUM, MPI_COMM_WORLD);
            else if (strcmp(op, "allgather") == 0) rc = MPI_Allgather(a, part, type, b, part, type, MPI_COMM_WORLD);
            else if (strcmp(op, "broadcast") == 0) rc = MPI_Bcast(a, count, type, 0, MPI_COMM_WORLD);
            else if (strcmp(op, "alltoall") == 0) rc = MPI_Alltoall(a, part, type, b, part, type, MPI_COMM_WORLD);
            else if (strcmp(op, "reducescatter") == 0)
                rc = MPI_Reduce_scatter_block(a, b, part, type, MPI_SUM, MPI_COMM_WORLD);
            else { die(rank, "unknown collective"); rc = 1; }
            if (rc != MPI_SUCCESS) die(rank, "collective failed");
            if (i >= 0) t[i] = MPI_Wtime() - start;
        }
        MPI_Allreduce(t, worst, iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0) {
            double sum = 0;
            for (int i = 0; i < iters; i++) sum += worst[i];
            qsort(worst, iters, sizeof(double), cmp_double);
            double median = iters % 2 ? worst[iters / 2] : (worst[iters / 2 - 1] + worst[iters / 2]) / 2;
            printf("KOLO-BENCH-RESULT bytes=%lld iters=%d avg_us=%.3f min_us=%.3f median_us=%.3f max_us=%.3f\n",
                   bytes, iters, sum / iters * 1e6, worst[0] * 1e6, median * 1e6, worst[iters - 1] * 1e6);
            fflush(stdout);
        }
        free(a); free(b); free(t); free(worst);
    }
    free(steps);
    MPI_Finalize();
    return 0;
}
