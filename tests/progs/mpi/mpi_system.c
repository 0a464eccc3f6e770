// SPDX-License-Identifier: MIT
/* An MPI program that runs a command line (argv[1]) with system() between
 * MPI_Init and MPI_Finalize, as a job script's rank that post-processes
 * its own trace does; prints "rank R status S" for each rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int rc = argc > 1 ? system(argv[1]) : -1;
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	printf("rank %d status %d\n", rank, rc >= 0 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
	MPI_Finalize();
	return 0;
}
