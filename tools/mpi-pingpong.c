// SPDX-License-Identifier: GPL-2.0
/*
 * mpi-pingpong: MPI_Send/MPI_Recv ping-pong between ranks 0 and 1 against
 * message size, 64 B .. 16 MiB (the paper's Fig. 14). An ordinary MPI
 * program: it runs over ri2n0 with nothing changed but the addresses.
 *
 * Rank 0 prints, per size: bytes, round trips, mean round trip (us), one-way
 * latency (half of it, us) and throughput (size / one-way time, MB/s).
 * Each size: 2 warm-up round trips, then about TIME seconds (argv[1],
 * default 0.5) of timed ones, at least 3.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SIZE 64
#define MAX_SIZE (16 << 20)

static double trips(char *buf, int size, int n, int rank)
{
	double t = MPI_Wtime();

	for (int i = 0; i < n; i++) {
		if (rank == 0) {
			MPI_Send(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t) / n;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	int rank, nranks;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (nranks != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi-pingpong: needs exactly 2 ranks, not %d\n", nranks);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	buf = malloc(MAX_SIZE);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(buf, 0x5a, MAX_SIZE);
	if (rank == 0)
		printf("# %9s %7s %11s %11s %9s\n", "bytes", "trips", "rtt_us", "latency_us", "MB/s");
	for (int size = MIN_SIZE; size <= MAX_SIZE; size *= 2) {
		double warm = trips(buf, size, 2, rank);
		/* Both ranks must agree on the count: rank 0 decides. */
		int n = warm > 0 ? (int)(secs / warm) : 1000;

		n = n < 3 ? 3 : n > 100000 ? 100000 : n;
		MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
		double rtt = trips(buf, size, n, rank);

		if (rank == 0)
			printf("%11d %7d %11.1f %11.1f %9.2f\n", size, n, rtt * 1e6, rtt / 2 * 1e6,
			       size / (rtt / 2) / 1e6);
		fflush(stdout);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
