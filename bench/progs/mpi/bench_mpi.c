// SPDX-License-Identifier: MIT
/* What the mpi source adds to an MPI call (bench/figures/mpi.py runs this
 * untraced and under -t mpi, and takes the difference): a single process
 * (MPI_COMM_WORLD of one rank), calls timed in batches of K between two
 * clock reads, the best batch of RUNS kept, per call.
 *   test  MPI_Test on a receive that never completes (the polling loop)
 *   send  a zero-byte MPI_Send to itself, each matching a receive posted
 *         before the batch (posting and waiting are not timed)
 * Prints key=value lines: test_ns, send_ns (ns per call). Built with each
 * MPI's mpicc (bench/mpi.mk). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define K    1000
#define RUNS 200

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int me;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	char c = 0;
	static MPI_Request rq[K];
	double best_test = 1e30, best_send = 1e30;

	MPI_Request never;
	MPI_Irecv(&c, 1, MPI_CHAR, me, 999, MPI_COMM_WORLD, &never);
	for (int r = 0; r < RUNS; r++) {
		int flag = 0;
		uint64_t t0 = now();
		for (int i = 0; i < K; i++)
			MPI_Test(&never, &flag, MPI_STATUS_IGNORE);
		double ns = (double)(now() - t0) / K;
		if (ns < best_test)
			best_test = ns;
	}
	MPI_Cancel(&never);
	MPI_Wait(&never, MPI_STATUS_IGNORE);

	for (int r = 0; r < RUNS; r++) {
		for (int i = 0; i < K; i++)
			MPI_Irecv(NULL, 0, MPI_BYTE, me, i, MPI_COMM_WORLD, &rq[i]);
		uint64_t t0 = now();
		for (int i = 0; i < K; i++)
			MPI_Send(NULL, 0, MPI_BYTE, me, i, MPI_COMM_WORLD);
		double ns = (double)(now() - t0) / K;
		MPI_Waitall(K, rq, MPI_STATUSES_IGNORE);
		if (ns < best_send)
			best_send = ns;
	}
	printf("test_ns=%.1f\nsend_ns=%.1f\n", best_test, best_send);
	MPI_Finalize();
	return 0;
}
