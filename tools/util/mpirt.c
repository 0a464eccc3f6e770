// SPDX-License-Identifier: MIT
/* The MPI runtime of the tools (mpirt.h): the launcher's variables, the
 * library loaded with dlopen, the implementation told at run time, and
 * the few calls made through function pointers.
 *
 *   Open MPI   defines ompi_mpi_comm_world (MPI_COMM_WORLD is its address)
 *              and ompi_mpi_byte; handles are pointers; MPI_STATUS_IGNORE
 *              is NULL.
 *   MPICH      (Intel MPI, MVAPICH, Cray MPICH: MPICH's ABI) handles are
 *              ints: MPI_COMM_WORLD 0x44000000, MPI_BYTE 0x4c00010d;
 *              MPI_STATUS_IGNORE is (MPI_Status *)1. */
#include "util/mpirt.h"
#include "util/say.h"
#include "util/xalloc.h"
#include "rankenv.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bytes per message: MPI counts are ints. */
#define PIECE ((size_t)1 << 30)
#define TAG   7311

/* The two ABIs' signatures: handles as pointers (Open MPI) or ints. */
typedef int (*send_p)(const void *, int, void *, int, int, void *);
typedef int (*recv_p)(void *, int, void *, int, int, void *, void *);
typedef int (*bcast_p)(void *, int, void *, int, void *);
typedef int (*comm_p)(void *, int *);
typedef int (*barrier_p)(void *);
typedef int (*send_i)(const void *, int, int, int, int, int);
typedef int (*recv_i)(void *, int, int, int, int, int, void *);
typedef int (*bcast_i)(void *, int, int, int, int);
typedef int (*comm_i)(int, int *);
typedef int (*barrier_i)(int);

static struct {
	int mode, rank, size;
	int alone; /* rank 0 runs the command by itself (mpirt_alone) */
	int ompi;          /* handles are pointers */
	void *world, *byte; /* Open MPI's */
	void *send, *recv, *bcast, *rank_fn, *size_fn, *barrier;
	int (*finalize)(void);
} rt = {.size = 1};

/* The launchers of MPI jobs: their rank and size variables (torchrun's
 * RANK and Slurm's SLURM_PROCID alone do not make an MPI job). */
static const char *const mpi_sources[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                          "MV2_COMM_WORLD_RANK", "PALS_RANKID"};

static const char *get(const char *name)
{
	return getenv(name);
}

/* The libraries tried, the launcher's family first. */
static void *load(const char *source)
{
	static const char *const ompi[] = {"libmpi.so.40", "libmpi.so", "libmpich.so.12",
	                                   "libmpi.so.12", NULL};
	static const char *const mpich[] = {"libmpich.so.12", "libmpi.so.12", "libmpich.so",
	                                    "libmpi.so.40", "libmpi.so", NULL};
	const char *const *v = !strncmp(source, "OMPI_", 5) ? ompi : mpich;
	for (; *v; v++) {
		/* global: Open MPI's components find the library's symbols */
		void *h = dlopen(*v, RTLD_NOW | RTLD_GLOBAL);
		if (h && dlsym(h, "MPI_Init") && dlsym(h, "MPI_Send"))
			return h;
		if (h)
			dlclose(h);
	}
	return NULL;
}

static int bind(void *h)
{
	int (*init)(int *, char ***) = (int (*)(int *, char ***))dlsym(h, "MPI_Init");
	rt.world = dlsym(h, "ompi_mpi_comm_world");
	rt.byte = dlsym(h, "ompi_mpi_byte");
	rt.ompi = rt.world != NULL;
	if (rt.ompi && !rt.byte)
		return -1;
	rt.send = dlsym(h, "MPI_Send");
	rt.recv = dlsym(h, "MPI_Recv");
	rt.bcast = dlsym(h, "MPI_Bcast");
	rt.rank_fn = dlsym(h, "MPI_Comm_rank");
	rt.size_fn = dlsym(h, "MPI_Comm_size");
	rt.barrier = dlsym(h, "MPI_Barrier");
	rt.finalize = (int (*)(void))dlsym(h, "MPI_Finalize");
	if (!init || !rt.send || !rt.recv || !rt.bcast || !rt.rank_fn || !rt.size_fn ||
	    !rt.barrier || !rt.finalize || init(NULL, NULL))
		return -1;
	int r = 0, n = 0;
	if (rt.ompi) {
		((comm_p)rt.rank_fn)(rt.world, &r);
		((comm_p)rt.size_fn)(rt.world, &n);
	} else {
		((comm_i)rt.rank_fn)(0x44000000, &r);
		((comm_i)rt.size_fn)(0x44000000, &n);
	}
	rt.rank = r, rt.size = n;
	return 0;
}

/* The launchers' processes that start ranks: mpiexec and Open MPI's
 * daemons, MPICH's (and Intel MPI's) proxy, Slurm's, PALS', Flux's, LSF's. */
static const char *const starters[] = {"mpiexec",	"mpirun",	 "orterun",	"orted",
				       "prterun",	"prted",	 "prte",	"hydra_pmi_proxy",
				       "pmi_proxy",	"mpiexec.hydra", "mpiexec.openmpi", "mpiexec.mpich",
				       "slurmstepd",	"palsd",	 "flux-shell",	"jsm",
				       "srun",		NULL};
/* What may stand between a starter and the tool: shells, the commands
 * that exec what they are given, and those that run it to watch it
 * (a profile of the tool's own ranks). */
static const char *const passers[] = {
    "sh",     "bash",  "dash",   "zsh",    "ksh",    "env",    "time",    "nice",
    "numactl", "taskset", "chrt", "stdbuf", "timeout", "nohup", "setsid", "ionice",
    "prlimit", "flock", "strace", "ltrace", "perf",   NULL};

static int among(const char *name, const char *const *v)
{
	for (; *v; v++)
		if (!strcmp(name, *v))
			return 1;
	return 0;
}

/* The name and parent of process pid (/proc/PID/stat: "pid (comm) state
 * ppid ..."; comm may hold spaces and parentheses). */
static int proc_of(long pid, char *name, size_t cap, long *ppid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	if (!open || !close || close < open || sscanf(close + 1, " %*c %ld", ppid) != 1)
		return -1;
	size_t len = (size_t)(close - open - 1) < cap - 1 ? (size_t)(close - open - 1) : cap - 1;
	memcpy(name, open + 1, len);
	name[len] = 0;
	return 0;
}

/* Whether the launcher started this process as a rank (through shells or
 * wrappers at most), rather than a rank's program starting it: a program
 * that is itself a rank of the job (MPI up, or about to be) and runs
 * cuptrace, has the rank's variables in its environment too, and MPI_Init
 * there would be the second of that rank. Unknown on a system without
 * /proc: yes. CUPTRACE_TOOL_MPI=on or off decides instead. */
static int started_as_rank(void)
{
	const char *v = getenv("CUPTRACE_TOOL_MPI");
	if (v && (!strcmp(v, "on") || !strcmp(v, "1")))
		return 1;
	if (v && (!strcmp(v, "off") || !strcmp(v, "0")))
		return 0;
	long pid = (long)getppid();
	for (int depth = 0; depth < 8 && pid > 1; depth++) {
		char name[64];
		long ppid;
		if (proc_of(pid, name, sizeof name, &ppid))
			return depth == 0;
		if (among(name, starters))
			return 1;
		if (!among(name, passers))
			return 0;
		pid = ppid;
	}
	return 0;
}

/* Ranks above 0 print nothing: stdout to /dev/null, the tools' lines
 * muted (rank 0 says what concerns the inputs, once). */
static void silence(void)
{
	if (!freopen("/dev/null", "w", stdout))
		fclose(stdout);
	say_mute(1);
}

int mpirt_start(void)
{
	struct ct_rankinfo ri;
	ct_rank_detect(&ri, get);
	int launched = 0;
	for (size_t i = 0; i < sizeof mpi_sources / sizeof *mpi_sources; i++)
		launched |= !strcmp(ri.source, mpi_sources[i]);
	if (!launched || ri.world_size <= 1 || !started_as_rank())
		return rt.mode = MPIRT_SERIAL;
	void *h = load(ri.source);
	if (!h || bind(h) || rt.size <= 1) {
		if (ri.rank > 0)
			return rt.mode = MPIRT_IDLE;
		say_cmd_warning("%ld ranks of a launcher (%s) but %s: rank 0 runs the command "
		                "alone (docs/parallel-tools.md)",
		                ri.world_size, ri.source,
		                h ? "MPI did not start" : "no MPI library found (libmpi.so.40, "
		                                           "libmpich.so.12, libmpi.so.12)");
		rt.size = 1, rt.rank = 0;
		return rt.mode = MPIRT_SERIAL;
	}
	if (rt.rank > 0)
		silence();
	return rt.mode = MPIRT_RANKS;
}

void mpirt_alone(void)
{
	rt.alone = 1;
}

int mpirt_solo(void)
{
	if (mpirt_rank() > 0)
		return 1;
	rt.alone = 1;
	return 0;
}

int mpirt_rank(void)
{
	return rt.mode == MPIRT_RANKS && !rt.alone ? rt.rank : 0;
}

int mpirt_size(void)
{
	return rt.mode == MPIRT_RANKS && !rt.alone ? rt.size : 1;
}

void mpirt_share(size_t n, size_t *lo, size_t *hi)
{
	mpirt_share_of(mpirt_rank(), n, lo, hi);
}

void mpirt_share_of(int rank, size_t n, size_t *lo, size_t *hi)
{
	size_t r = (size_t)rank, s = (size_t)mpirt_size();
	/* the first i with i * s / n >= r: ceil(r * n / s) */
	*lo = (r * n + s - 1) / s;
	*hi = ((r + 1) * n + s - 1) / s;
}

static int send_piece(int to, const void *b, size_t n)
{
	if (rt.ompi)
		return ((send_p)rt.send)(b, (int)n, rt.byte, to, TAG, rt.world);
	return ((send_i)rt.send)(b, (int)n, 0x4c00010d, to, TAG, 0x44000000);
}

static int recv_piece(int from, void *b, size_t n)
{
	if (rt.ompi)
		return ((recv_p)rt.recv)(b, (int)n, rt.byte, from, TAG, rt.world, NULL);
	return ((recv_i)rt.recv)(b, (int)n, 0x4c00010d, from, TAG, 0x44000000, (void *)1);
}

static int bcast_piece(void *b, size_t n)
{
	if (rt.ompi)
		return ((bcast_p)rt.bcast)(b, (int)n, rt.byte, 0, rt.world);
	return ((bcast_i)rt.bcast)(b, (int)n, 0x4c00010d, 0, 0x44000000);
}

int mpirt_send(int to, const void *buf, size_t n)
{
	uint64_t len = n;
	if (send_piece(to, &len, sizeof len))
		return -1;
	for (size_t at = 0; at < n; at += PIECE)
		if (send_piece(to, (const char *)buf + at, n - at < PIECE ? n - at : PIECE))
			return -1;
	return 0;
}

int mpirt_recv(int from, void **buf, size_t *n)
{
	uint64_t len;
	*buf = NULL;
	if (recv_piece(from, &len, sizeof len))
		return -1;
	char *b = xmalloc(len ? len : 1);
	for (size_t at = 0; at < len; at += PIECE)
		if (recv_piece(from, b + at, len - at < PIECE ? len - at : PIECE)) {
			free(b);
			return -1;
		}
	*buf = b, *n = len;
	return 0;
}

int mpirt_bcast(void **buf, size_t *n)
{
	uint64_t len = *n;
	if (bcast_piece(&len, sizeof len))
		return -1;
	if (rt.rank)
		*buf = xmalloc(len ? len : 1), *n = len;
	for (size_t at = 0; at < len; at += PIECE)
		if (bcast_piece((char *)*buf + at, len - at < PIECE ? len - at : PIECE))
			return -1;
	return 0;
}

void mpirt_barrier(void)
{
	if (rt.mode != MPIRT_RANKS)
		return;
	if (rt.ompi)
		((barrier_p)rt.barrier)(rt.world);
	else
		((barrier_i)rt.barrier)(0x44000000);
}

int mpirt_end(int rc)
{
	if (rt.mode == MPIRT_RANKS) {
		fflush(stdout);
		rt.finalize();
		rt.mode = MPIRT_SERIAL;
	}
	return rc;
}
