/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_pingpong.c - two MPI ranks: rank 0 sends ITERS messages of SIZE
 * bytes (a pattern of the iteration and offset), rank 1 checks each and
 * sends it back with every byte incremented, rank 0 checks the answer.
 * Prints "ok ITERS x SIZE bytes, AVG us round trip" on rank 0 and exits 0,
 * or names the first wrong byte and aborts the job (MPI_Abort, 1).
 *
 *     mpi_pingpong [ITERS [SIZE]]     (defaults 1000, 4096)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char
pattern(int iter, size_t off)
{
	return (unsigned char)(iter * 7 + off * 13 + 1);
}

/* The first offset whose byte is not pattern(iter, off) + add; -1: none. */
static long
first_wrong(const unsigned char *buf, size_t size, int iter, int add)
{
	for (size_t off = 0; off < size; off++)
		if (buf[off] != (unsigned char)(pattern(iter, off) + add))
			return (long)off;
	return -1;
}

int
main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 1000;
	size_t size = argc > 2 ? (size_t)atol(argv[2]) : 4096;
	int rank, nranks;
	unsigned char *buf;
	double t0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	buf = malloc(size);
	if (nranks != 2 || buf == NULL || iters <= 0 || size == 0) {
		fprintf(stderr, "mpi_pingpong: 2 ranks, ITERS > 0, SIZE > 0\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++) {
		long bad;

		if (rank == 0) {
			for (size_t off = 0; off < size; off++)
				buf[off] = pattern(i, off);
			MPI_Send(buf, (int)size, MPI_BYTE, 1, i, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)size, MPI_BYTE, 1, i, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			bad = first_wrong(buf, size, i, 1);
		} else {
			MPI_Recv(buf, (int)size, MPI_BYTE, 0, i, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			bad = first_wrong(buf, size, i, 0);
			for (size_t off = 0; off < size; off++)
				buf[off]++;
			MPI_Send(buf, (int)size, MPI_BYTE, 0, i, MPI_COMM_WORLD);
		}
		if (bad >= 0) {
			/* (the peer waits in a receive: end both) */
			fprintf(stderr, "mpi_pingpong: rank %d, iteration %d: byte %ld is 0x%02x\n",
				rank, i, bad, buf[bad]);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	if (rank == 0)
		printf("ok %d x %zu bytes, %.1f us round trip\n", iters, size,
		       (MPI_Wtime() - t0) * 1e6 / iters);
	free(buf);
	MPI_Finalize();
	return 0;
}
