// SPDX-License-Identifier: MIT
/* breakdown's CPU side: the time each rank spent inside MPI calls (the
 * `mpi` source), against its trace's window. */
#ifndef CT_MPI_WAIT_H
#define CT_MPI_WAIT_H

#include "model/model.h"
#include "stats/table.h"

#include <stddef.h>
#include <stdint.h>

struct mpi_wait_row {
	int64_t rank;
	uint64_t calls, mpi_ns, first, last; /* first/last: the rank's window (any event) */
};

struct mpi_wait {
	struct mpi_wait_row *v;
	size_t n, cap;
};

/* Every event of rank's file (its window), and its MPI calls. */
void mpi_wait_event(struct mpi_wait *w, int64_t rank, const struct m_event *ev);
/* Folds src into dst and frees src's rows. */
void mpi_wait_merge(struct mpi_wait *dst, struct mpi_wait *src);
/* The table, NULL when no rank made an MPI call; frees the rows. */
struct table *mpi_wait_table(struct mpi_wait *w);

#endif
