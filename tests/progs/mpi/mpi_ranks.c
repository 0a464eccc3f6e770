// SPDX-License-Identifier: MIT
/* An MPI job annotated with NVTX: each rank runs iterations of compute
 * (rank-dependent length, so one rank is visibly slow), an allreduce and a
 * barrier, each inside a range. Rank 0 prints the result.
 * usage: mpi_ranks [iterations] [slow_rank] [doomed_rank]
 * The doomed rank kills itself with SIGKILL at iteration 30 (after 1.5 s,
 * so that its writer has put the earlier iterations on disk). */
#include <signal.h>
#include <mpi.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static double compute(int n)
{
	double x = 0;
	for (int i = 1; i <= n; i++)
		x += 1.0 / i;
	return x;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int iters = argc > 1 ? atoi(argv[1]) : 10;
	int slow = argc > 2 ? atoi(argv[2]) : 1;
	int doomed = argc > 3 ? atoi(argv[3]) : -1;
	char name[32];
	snprintf(name, sizeof name, "rank %d main", rank);
	nvtxNameOsThreadA((uint32_t)getpid(), name);
	double sum = 0;
	for (int i = 0; i < iters; i++) {
		if (i == 30 && rank == doomed) {
			usleep(1500000);
			raise(SIGKILL);
		}
		nvtxRangePushA("iteration");
		nvtxRangePushA("compute");
		double v = compute(rank == slow ? 400000 : 100000);
		nvtxRangePop();
		nvtxRangePushA("allreduce");
		double r;
		MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		nvtxRangePop();
		nvtxRangePushA("barrier");
		MPI_Barrier(MPI_COMM_WORLD);
		nvtxRangePop();
		nvtxRangePop();
		sum += r;
	}
	if (rank == 0)
		printf("ranks %d iterations %d sum %.3f\n", size, iters, sum);
	MPI_Finalize();
	return 0;
}
