// SPDX-License-Identifier: MIT
/* An MPI program in a plugin, as Python's mpi4py is one: this library is
 * built with mpicc (its MPI a dependency of its own) and loaded by
 * mpi_dlopen with dlopen(RTLD_LOCAL), so that the MPI library is in no
 * global scope: the wrappers of libcuptrace-mpi.so must find its PMPI_
 * functions among the loaded objects (tests.mk builds both). */
#include <mpi.h>
#include <stdio.h>

int plugin_run(void);

int plugin_run(void)
{
	MPI_Init(NULL, NULL);
	int rank, size, one = 1, sum = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("ranks %d sum %d\n", size, sum);
	MPI_Finalize();
	return sum == size ? 0 : 1;
}
