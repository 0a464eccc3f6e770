// SPDX-License-Identifier: MIT
/* The wrappers' first call (mpiw.h): libcuptrace.so's table, the MPI
 * library in the process, which implementation it is, and the
 * implementation's PMPI_ functions found on demand.
 *
 * The implementation is told at run time, never at build time:
 *   Open MPI   it defines ompi_mpi_comm_world, whose address is
 *              MPI_COMM_WORLD; handles are pointers;
 *   MPICH      and those built on it (Intel MPI, MVAPICH, Cray MPICH),
 *              by MPI_Get_library_version's text (callable before
 *              MPI_Init); handles are ints with fixed values, the same in
 *              all of them (MPICH's ABI initiative).
 * Anything else (MPI 5's standard ABI, an unknown MPI) is said once and
 * passed through untraced. */
#include "mpiw.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* This library's presence, for libcuptrace.so's check that the mpi
 * source has its wrappers (libtrace/sources/mpi.c). */
MPIW_API const int cuptrace_mpi_wrappers = CUPTRACE_MPI_ABI;

struct mpiw_impl mpiw;
const struct cuptrace_mpi_api *mpiw_api;
_Atomic int mpiw_state;
_Atomic int mpiw_live;

static void *libmpi; /* a handle of the library that defines PMPI_Init */

/* Open MPI's MPI_Status: MPI_SOURCE, MPI_TAG, MPI_ERROR, _cancelled, then
 * size_t _ucount, the bytes received. */
static int status_ompi(const void *st, int *src, int *tag, uint64_t *bytes)
{
	const int *i = st;
	size_t ucount;
	memcpy(&ucount, (const char *)st + 16, sizeof ucount);
	*src = i[0], *tag = i[1], *bytes = ucount;
	return i[2];
}

/* MPICH's: count_lo, count_hi_and_cancelled (the count's high bits above
 * the cancelled bit), MPI_SOURCE, MPI_TAG, MPI_ERROR. */
static int status_mpich(const void *st, int *src, int *tag, uint64_t *bytes)
{
	const int *i = st;
	*bytes = (uint64_t)(uint32_t)i[0] | (uint64_t)((uint32_t)i[1] >> 1) << 32;
	*src = i[2], *tag = i[3];
	return i[4];
}

static int find_pmpi(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size, (void)data;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	if (dlsym(h, "PMPI_Init")) {
		libmpi = h;
		return 1;
	}
	dlclose(h);
	return 0;
}

/* The MPI library: found through the global scope, or, where the program
 * loaded it privately (Python's mpi4py: RTLD_LOCAL), among the loaded
 * objects. */
static void find_libmpi(void)
{
	void *p = dlsym(RTLD_NEXT, "PMPI_Init");
	Dl_info di;
	if (p && dladdr(p, &di) && di.dli_fname)
		libmpi = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!libmpi)
		dl_iterate_phdr(find_pmpi, NULL);
}

static void *sym(const char *name)
{
	void *p = libmpi ? dlsym(libmpi, name) : NULL;
	return p ? p : dlsym(RTLD_NEXT, name);
}

/* A variable of the library as the program sees it: the program's own
 * copy where its executable has a copy relocation of it (the address
 * MPI_COMM_WORLD is then), else the library's. */
static void *data(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	return p ? p : libmpi ? dlsym(libmpi, name) : NULL;
}

static int detect(char *why, size_t wlen)
{
	void *w = data("ompi_mpi_comm_world");
	if (w) {
		mpiw = (struct mpiw_impl){"Open MPI",
		                          8,
		                          (mh_t)w,
		                          (mh_t)data("ompi_mpi_comm_self"),
		                          (mh_t)data("ompi_mpi_comm_null"),
		                          (mh_t)data("ompi_request_null"),
		                          (mh_t)data("ompi_mpi_datatype_null"),
		                          -1,
		                          -2,
		                          -4,
		                          16,
		                          (const void *)1,
		                          0,
		                          24,
		                          status_ompi};
		return mpiw.self && mpiw.comm_null && mpiw.request_null ? 0 : -1;
	}
	int (*version)(char *, int *) = (int (*)(char *, int *))sym("PMPI_Get_library_version");
	static char text[8192]; /* MPI_MAX_LIBRARY_VERSION_STRING at most (MPICH's) */
	int len = 0;
	if (!version || version(text, &len) || len <= 0 || len >= (int)sizeof text) {
		snprintf(why, wlen, "no MPI_Get_library_version");
		return -1;
	}
	text[len] = 0;
	/* MPI 5's standard ABI (MPICH's libmpi_abi) has other handles. */
	if ((strstr(text, "MPICH") || strstr(text, "Intel(R) MPI") || strstr(text, "MVAPICH")) &&
	    !sym("MPI_Abi_get_version")) {
		mpiw = (struct mpiw_impl){"MPICH",    4,          0x44000000,  0x44000001,
		                          0x04000000, 0x2c000000, 0x0c000000,  -2,
		                          -1,         -3,         15,          (const void *)-1,
		                          1,          20,         status_mpich};
		return 0;
	}
	char *nl = strchr(text, '\n');
	if (nl)
		*nl = 0;
	snprintf(why, wlen, "%.120s", text);
	return -1;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void setup(void)
{
	const struct cuptrace_mpi_api *(*get)(unsigned) =
	    (const struct cuptrace_mpi_api *(*)(unsigned))dlsym(RTLD_DEFAULT, "cuptrace_mpi_api");
	const struct cuptrace_mpi_api *api = get ? get(CUPTRACE_MPI_ABI) : NULL;
	find_libmpi();
	char why[160] = "", line[256];
	if (api && detect(why, sizeof why)) {
		snprintf(line, sizeof line,
		         "MPI implementation not recognised (%s); MPI calls are not traced", why);
		api->log(1, line);
		api = NULL;
	}
	if (api) {
		snprintf(line, sizeof line, "MPI calls traced (%s)", mpiw.name);
		api->log(3, line);
	}
	mpiw_api = api;
	atomic_store(&mpiw_state, api ? 2 : 1);
}

int mpiw_setup(void)
{
	pthread_once(&once, setup);
	return atomic_load(&mpiw_state);
}

/* Where no function is found (an MPI without the profiling interface
 * and without the name): the call fails, said once. */
static int missing(void)
{
	return mpiw_api ? mpiw.err_other : 16;
}

void *mpiw_resolve(void *_Atomic *slot, const char *name)
{
	mpiw_setup();
	char p[96];
	snprintf(p, sizeof p, "P%s", name);
	void *f = sym(p);
	if (!f && libmpi)
		f = dlsym(libmpi, name);
	if (!f) {
		static int said;
		char line[160];
		snprintf(line, sizeof line, "the MPI library has no %s: the call fails", p);
		if (mpiw_api)
			mpiw_warn_once(&said, line);
		f = (void *)missing;
	}
	atomic_store(slot, f);
	return f;
}

uint64_t mpiw_str(const char *s)
{
	return mpiw_api ? mpiw_api->string(s, strlen(s)) : 0;
}

void mpiw_warn_once(int *flag, const char *msg)
{
	if (mpiw_api && !__atomic_exchange_n(flag, 1, __ATOMIC_RELAXED))
		mpiw_api->log(1, msg);
}
