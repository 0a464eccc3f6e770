// SPDX-License-Identifier: MIT
/* Field layouts of the MPI kinds (128-143), written by libtrace/sources/mpi.c
 * for libcuptrace-mpi.so's wrappers (and mpi_hang by the watchdog), made
 * from their lists in fields.h. */
#include "fields.h"

#define K(kname, kind) [CT_EV_##kind - CT_EV_MPI_FIRST] = CT_SCHEMA(kname, kind)

const struct ct_schema ct_schemas_mpi[CT_EV_MPI_END - CT_EV_MPI_FIRST] = {
	K("mpi_comm", MPI_COMM),
	K("mpi_call", MPI_CALL),
	K("mpi_enter", MPI_ENTER),
	K("mpi_done", MPI_DONE),
	K("mpi_hang", MPI_HANG),
};
