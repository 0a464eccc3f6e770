// SPDX-License-Identifier: MIT
/* An MPI job that makes the calls the mpi source traces, and writes down
 * each one it made (its truth, a JSON line per call in
 * $CT_TEST_TRUTH.<rank>: function, bytes sent and received, peer as a
 * world rank, communicator name, sequence number where a collective).
 * Built with Open MPI's mpicc and, where installed, MPICH's (tests.mk).
 * usage: mpi_calls MODE [ARGS]
 *   calls [LATE [MS]]  point to point, waits and tests, collectives,
 *                      communicators, persistent requests; rank LATE (-1:
 *                      none) sleeps MS ms before the third MPI_Allreduce
 *   hang R             rank R stops before an MPI_Allreduce, inside the
 *                      NVTX range "stuck in io", for good; the others wait
 *                      in it (the test kills the job)
 *   threads N          MPI_THREAD_MULTIPLE: N threads a rank send, receive
 *                      and reduce at once, each on its own communicator
 *   reuse N            N times: MPI_Comm_dup, MPI_Allreduce on it, free
 *   early | after      MPI_Barrier before MPI_Init, or after MPI_Finalize
 *                      (MPI aborts the program: its own verdict) */
#include <mpi.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* MPICH's MPI_STATUSES_IGNORE is (MPI_Status *)1: GCC takes it for an
 * array of no room. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

static FILE *truth_f;
static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;
static int rank, size;

/* One call made: f, bytes sent, received, peer (world rank; -1 none),
 * comm, seq (0: not a collective). */
static void T(const char *f, long sent, long recv, int peer, const char *comm, int seq)
{
	if (!truth_f)
		return;
	pthread_mutex_lock(&truth_lock);
	fprintf(truth_f,
	        "{\"rank\": %d, \"f\": \"%s\", \"bytes\": %ld, \"recv\": %ld, \"peer\": %d, "
	        "\"comm\": \"%s\", \"seq\": %d}\n",
	        rank, f, sent, recv, peer, comm, seq);
	fflush(truth_f);
	pthread_mutex_unlock(&truth_lock);
}

static void truth_open(void)
{
	const char *p = getenv("CT_TEST_TRUTH");
	char path[4096];
	if (p && snprintf(path, sizeof path, "%s.%d", p, rank) < (int)sizeof path)
		truth_f = fopen(path, "w");
	if (truth_f) {
		fprintf(truth_f, "{\"rank\": %d, \"pid\": %d, \"size\": %d}\n", rank, (int)getpid(),
		        size);
		fflush(truth_f);
	}
}

static int wseq; /* collectives on MPI_COMM_WORLD so far */

static void p2p(void)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	int buf[400] = {0}, in[400];
	for (int i = 0; i < 3; i++) {
		int n = 100 * (i + 1);
		for (int k = 0; k < 2; k++) {
			if ((k == 0) == (rank % 2 == 0)) {
				MPI_Send(buf, n, MPI_INT, right, i, MPI_COMM_WORLD);
				T("MPI_Send", 4L * n, 0, right, "world", 0);
			} else {
				MPI_Recv(in, n, MPI_INT, left, i, MPI_COMM_WORLD,
				         MPI_STATUS_IGNORE);
				T("MPI_Recv", 0, 4L * n, left, "world", 0);
			}
		}
	}
	double d[256] = {0}, din[256];
	MPI_Request rq[2];
	MPI_Irecv(din, 256, MPI_DOUBLE, left, 10, MPI_COMM_WORLD, &rq[0]);
	T("MPI_Irecv", 0, 2048, left, "world", 0);
	MPI_Isend(d, 256, MPI_DOUBLE, right, 10, MPI_COMM_WORLD, &rq[1]);
	T("MPI_Isend", 2048, 0, right, "world", 0);
	MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
	T("MPI_Waitall", 2048, 2048, -1, "", 0);

	int one = rank, got = -1, flag = 0;
	MPI_Irecv(&got, 1, MPI_INT, left, 11, MPI_COMM_WORLD, &rq[0]);
	T("MPI_Irecv", 0, 4, left, "world", 0);
	MPI_Isend(&one, 1, MPI_INT, right, 11, MPI_COMM_WORLD, &rq[1]);
	T("MPI_Isend", 4, 0, right, "world", 0);
	while (!flag) {
		MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
		T("MPI_Test", 0, flag ? 4 : 0, -1, "", 0);
	}
	MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
	T("MPI_Wait", 4, 0, -1, "", 0);

	MPI_Sendrecv(buf, 8, MPI_INT, right, 12, in, 8, MPI_INT, left, 12, MPI_COMM_WORLD,
	             MPI_STATUS_IGNORE);
	T("MPI_Sendrecv", 32, 32, right, "world", 0);

	if (rank == 0) {
		MPI_Send("hello", 5, MPI_CHAR, 1, 13, MPI_COMM_WORLD);
		T("MPI_Send", 5, 0, 1, "world", 0);
	} else if (rank == 1) {
		MPI_Status st;
		MPI_Probe(MPI_ANY_SOURCE, 13, MPI_COMM_WORLD, &st);
		T("MPI_Probe", 0, 5, 0, "world", 0);
		char c[8];
		MPI_Recv(c, 8, MPI_CHAR, st.MPI_SOURCE, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		T("MPI_Recv", 0, 5, 0, "world", 0);
	}

	int pb[4] = {0}, pin[4];
	MPI_Send_init(pb, 4, MPI_INT, right, 20, MPI_COMM_WORLD, &rq[0]);
	T("MPI_Send_init", 16, 0, right, "world", 0);
	MPI_Recv_init(pin, 4, MPI_INT, left, 20, MPI_COMM_WORLD, &rq[1]);
	T("MPI_Recv_init", 0, 16, left, "world", 0);
	for (int i = 0; i < 2; i++) {
		MPI_Startall(2, rq);
		T("MPI_Startall", 16, 16, -1, "", 0);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		T("MPI_Waitall", 16, 16, -1, "", 0);
	}
	MPI_Request_free(&rq[0]);
	T("MPI_Request_free", 0, 0, -1, "", 0);
	MPI_Request_free(&rq[1]);
	T("MPI_Request_free", 0, 0, -1, "", 0);
}

static void colls(int late, int ms)
{
	int ib[64] = {0};
	double db[32] = {0}, dr[32];
	MPI_Bcast(ib, 64, MPI_INT, 0, MPI_COMM_WORLD);
	T("MPI_Bcast", rank == 0 ? 256 : 0, rank == 0 ? 0 : 256, 0, "world", ++wseq);
	MPI_Reduce(db, dr, 16, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	T("MPI_Reduce", 128, rank == 0 ? 128 : 0, 0, "world", ++wseq);
	for (int it = 0; it < 5; it++) {
		if (it == 2 && rank == late)
			usleep((useconds_t)ms * 1000);
		nvtxRangePushA("allreduce");
		MPI_Allreduce(db, dr, 32, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		nvtxRangePop();
		T("MPI_Allreduce", 256, 256, -1, "world", ++wseq);
	}
	int two[2] = {rank, rank}, all[2 * 64];
	MPI_Allgather(two, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
	T("MPI_Allgather", 8, 8L * size, -1, "world", ++wseq);
	int *a2a = calloc((size_t)(3 * size), sizeof *a2a),
	    *a2b = calloc((size_t)(3 * size), sizeof *a2b);
	MPI_Alltoall(a2a, 3, MPI_INT, a2b, 3, MPI_INT, MPI_COMM_WORLD);
	T("MPI_Alltoall", 12L * size, 12L * size, -1, "world", ++wseq);
	int *counts = calloc((size_t)size, sizeof *counts),
	    *displs = calloc((size_t)size, sizeof *displs);
	long tot = 0;
	for (int i = 0; i < size; i++)
		counts[i] = i + 1, displs[i] = (int)tot, tot += i + 1;
	int *gv = calloc((size_t)tot, sizeof *gv);
	MPI_Gatherv(a2a, rank + 1, MPI_INT, gv, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
	T("MPI_Gatherv", 4L * (rank + 1), rank == 0 ? 4 * tot : 0, 0, "world", ++wseq);
	int sc[4];
	MPI_Scatter(a2a, 1, MPI_INT, sc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	T("MPI_Scatter", rank == 0 ? 4L * size : 0, 4, 0, "world", ++wseq);
	MPI_Barrier(MPI_COMM_WORLD);
	T("MPI_Barrier", 0, 0, -1, "world", ++wseq);
	MPI_Request rq;
	int x = rank, y = 0, flag = 0;
	MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq);
	T("MPI_Iallreduce", 4, 4, -1, "world", ++wseq);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	T("MPI_Wait", 0, 0, -1, "", 0);
	MPI_Ibarrier(MPI_COMM_WORLD, &rq);
	T("MPI_Ibarrier", 0, 0, -1, "world", ++wseq);
	while (!flag) {
		MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
		T("MPI_Test", 0, 0, -1, "", 0);
	}
	free(a2a), free(a2b), free(counts), free(displs), free(gv);
}

static void comms(void)
{
	MPI_Comm half, dup;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	T("MPI_Comm_split", 0, 0, -1, "world", ++wseq);
	MPI_Comm_set_name(half, "halves");
	T("MPI_Comm_set_name", 0, 0, -1, "halves", 0);
	int one = 1, n = 0;
	MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, half);
	T("MPI_Allreduce", 4, 4, -1, "halves", 1);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	T("MPI_Comm_dup", 0, 0, -1, "world", ++wseq);
	MPI_Barrier(dup);
	T("MPI_Barrier", 0, 0, -1, "dup", 1);
	MPI_Comm_free(&dup);
	T("MPI_Comm_free", 0, 0, -1, "dup", 0);
	MPI_Comm_free(&half);
	T("MPI_Comm_free", 0, 0, -1, "halves", 0);
}

struct worker {
	MPI_Comm comm;
	int id, iters;
};

static void *work(void *p)
{
	struct worker *w = p;
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	for (int i = 0; i < w->iters; i++) {
		int out = i, in = -1, sum = 0;
		MPI_Request rq[2];
		MPI_Irecv(&in, 1, MPI_INT, left, w->id, w->comm, &rq[0]);
		T("MPI_Irecv", 0, 4, left, "thread", 0);
		MPI_Isend(&out, 1, MPI_INT, right, w->id, w->comm, &rq[1]);
		T("MPI_Isend", 4, 0, right, "thread", 0);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		T("MPI_Waitall", 4, 4, -1, "", 0);
		MPI_Allreduce(&out, &sum, 1, MPI_INT, MPI_SUM, w->comm);
		T("MPI_Allreduce", 4, 4, -1, "thread", i + 1);
	}
	return NULL;
}

static void threads(int n)
{
	pthread_t t[16];
	struct worker w[16];
	n = n < 1 ? 1 : n > 16 ? 16 : n;
	for (int i = 0; i < n; i++) { /* made in the same order on every rank */
		MPI_Comm_dup(MPI_COMM_WORLD, &w[i].comm);
		T("MPI_Comm_dup", 0, 0, -1, "world", ++wseq);
		w[i].id = i, w[i].iters = 50;
	}
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, work, &w[i]);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < n; i++) {
		MPI_Comm_free(&w[i].comm);
		T("MPI_Comm_free", 0, 0, -1, "thread", 0);
	}
}

static void reuse(int n)
{
	for (int i = 0; i < n; i++) {
		MPI_Comm c;
		int one = 1, sum = 0;
		MPI_Comm_dup(MPI_COMM_WORLD, &c);
		T("MPI_Comm_dup", 0, 0, -1, "world", ++wseq);
		if (truth_f) { /* the handle's bits: the test sees them come back */
			unsigned long long h = 0;
			memcpy(&h, &c, sizeof c < sizeof h ? sizeof c : sizeof h);
			pthread_mutex_lock(&truth_lock);
			fprintf(truth_f, "{\"rank\": %d, \"handle\": %llu}\n", rank, h);
			pthread_mutex_unlock(&truth_lock);
		}
		MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
		T("MPI_Allreduce", 4, 4, -1, "dup", 1);
		MPI_Comm_free(&c);
		T("MPI_Comm_free", 0, 0, -1, "dup", 0);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "calls";
	if (!strcmp(mode, "early")) {
		MPI_Barrier(MPI_COMM_WORLD); /* MPI's verdict: it aborts */
		return 3;
	}
	if (!strcmp(mode, "threads")) {
		int got = 0;
		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &got);
		if (got != MPI_THREAD_MULTIPLE) {
			fprintf(stderr, "no MPI_THREAD_MULTIPLE (%d)\n", got);
			MPI_Abort(MPI_COMM_WORLD, 4);
		}
	} else {
		MPI_Init(&argc, &argv);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	truth_open();
	T(!strcmp(mode, "threads") ? "MPI_Init_thread" : "MPI_Init", 0, 0, -1, "world", 0);
	char name[32];
	snprintf(name, sizeof name, "rank %d main", rank);
	nvtxNameOsThreadA((uint32_t)getpid(), name);
	if (!strcmp(mode, "calls")) {
		if (size < 2)
			MPI_Abort(MPI_COMM_WORLD, 2);
		p2p();
		colls(argc > 2 ? atoi(argv[2]) : -1, argc > 3 ? atoi(argv[3]) : 300);
		comms();
	} else if (!strcmp(mode, "hang")) {
		int stuck = argc > 2 ? atoi(argv[2]) : size - 1;
		double v = rank, r = 0;
		MPI_Barrier(MPI_COMM_WORLD);
		T("MPI_Barrier", 0, 0, -1, "world", ++wseq);
		if (rank == stuck) {
			nvtxRangePushA("stuck in io");
			T("stuck", 0, 0, -1, "", 0);
			for (;;)
				sleep(1);
		}
		nvtxRangePushA("step");
		T("waiting", 0, 0, -1, "world", wseq + 1);
		MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	} else if (!strcmp(mode, "threads")) {
		threads(argc > 2 ? atoi(argv[2]) : 4);
	} else if (!strcmp(mode, "reuse")) {
		reuse(argc > 2 ? atoi(argv[2]) : 20);
	}
	MPI_Finalize();
	T("MPI_Finalize", 0, 0, -1, "world", ++wseq);
	if (!strcmp(mode, "after"))
		MPI_Barrier(MPI_COMM_WORLD); /* MPI's verdict: it aborts */
	return 0;
}
