// SPDX-License-Identifier: GPL-2.0
/*
 * mpi-coll: OSU-style latency of MPI_Alltoall and MPI_Allreduce against
 * message size, over every rank of MPI_COMM_WORLD. The OSU micro-benchmarks
 * are not in Debian; this does what osu_alltoall and osu_allreduce do: a
 * barrier, warm-up calls, then timed calls, and the mean over ranks of each
 * rank's mean time per call.
 *
 * Sizes (argv[2..], default 8 1024 65536 1048576) are bytes per rank pair
 * for all-to-all (each rank sends SIZE to every rank) and bytes of the
 * vector for allreduce (SIZE / 4 floats summed). Each size runs about TIME
 * seconds (argv[1], default 1), at least 5 calls.
 *
 * Rank 0 prints: collective, bytes, calls, mean, min and max over ranks of
 * the mean latency (us).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum coll { ALLTOALL, ALLREDUCE };

static void call(enum coll c, char *sbuf, char *rbuf, int size)
{
	if (c == ALLTOALL)
		MPI_Alltoall(sbuf, size, MPI_BYTE, rbuf, size, MPI_BYTE, MPI_COMM_WORLD);
	else
		MPI_Allreduce(sbuf, rbuf, size / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static double timed(enum coll c, char *sbuf, char *rbuf, int size, int n)
{
	double t;

	MPI_Barrier(MPI_COMM_WORLD);
	t = MPI_Wtime();
	for (int i = 0; i < n; i++)
		call(c, sbuf, rbuf, size);
	return (MPI_Wtime() - t) / n;
}

int main(int argc, char **argv)
{
	static const int defaults[] = { 8, 1024, 65536, 1048576 };
	static const char *const names[] = { "alltoall", "allreduce" };
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	int nsizes = argc > 2 ? argc - 2 : 4;
	int rank, nranks, maxsize = 0;
	char *sbuf, *rbuf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (int i = 0; i < nsizes; i++) {
		int s = argc > 2 ? atoi(argv[i + 2]) : defaults[i];

		if (s < 4) {
			if (rank == 0)
				fprintf(stderr, "mpi-coll: sizes are at least 4 bytes\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		if (s > maxsize)
			maxsize = s;
	}
	sbuf = malloc((size_t)maxsize * nranks);
	rbuf = malloc((size_t)maxsize * nranks);
	if (!sbuf || !rbuf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(sbuf, 0, (size_t)maxsize * nranks);
	if (rank == 0)
		printf("# %d ranks\n# %-9s %9s %6s %12s %12s %12s\n", nranks, "coll", "bytes",
		       "calls", "mean_us", "min_us", "max_us");
	for (int c = ALLTOALL; c <= ALLREDUCE; c++) {
		for (int i = 0; i < nsizes; i++) {
			int size = argc > 2 ? atoi(argv[i + 2]) : defaults[i];
			double warm = timed(c, sbuf, rbuf, size, 2), lat, sum, min, max;
			/* Every rank must make the same number of calls: rank 0 decides. */
			int n = warm > 0 ? (int)(secs / warm) : 1000;

			if (n < 5)
				n = 5;
			MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
			lat = timed(c, sbuf, rbuf, size, n) * 1e6;
			MPI_Reduce(&lat, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
			MPI_Reduce(&lat, &min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
			MPI_Reduce(&lat, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
			if (rank == 0) {
				printf("  %-9s %9d %6d %12.1f %12.1f %12.1f\n", names[c], size, n,
				       sum / nranks, min, max);
				fflush(stdout);
			}
		}
	}
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
