// SPDX-License-Identifier: MIT
#include "write/sqlite/sqlite_db.h"
#include "util/tmp_guard.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/say.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Rows per transaction: large enough that commits cost nothing next to
 * the inserts, small enough that SQLite's cache stays bounded. */
#define BATCH 100000

/* Column lists, in the order the INSERTs bind them. Names and types of
 * Nsight Systems' export where it has the table (docs/SQLITE.md). */
static const char *const table_name[T_N] = {
	"StringIds",
	"ThreadNames",
	"PROCESSES",
	"TARGET_INFO_SESSION_START_TIME",
	"ANALYSIS_DETAILS",
	"META_DATA_CAPTURE",
	"META_DATA_EXPORT",
	"TARGET_INFO_SYSTEM_ENV",
	"TARGET_INFO_GPU",
	"TARGET_INFO_CUDA_STREAM",
	"CUPTI_ACTIVITY_KIND_KERNEL",
	"CUPTI_ACTIVITY_KIND_MEMCPY",
	"CUPTI_ACTIVITY_KIND_MEMSET",
	"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
	"CUPTI_ACTIVITY_KIND_RUNTIME",
	"CUDA_GPU_MEMORY_USAGE_EVENTS",
	"NVTX_EVENTS",
	"CUPTRACE_RANKS",
	"CUPTRACE_STEPS",
	"CUPTRACE_NCCL_OPERATIONS",
	"CUPTRACE_HANG_SUSPECTED",
	"CUPTRACE_TORCH_OPS",
	"CUPTRACE_TORCH_CORRELATION",
	"CUPTRACE_TORCH_MEMORY",
	"MPI_P2P_EVENTS",
	"MPI_COLLECTIVES_EVENTS",
	"MPI_START_WAIT_EVENTS",
	"MPI_OTHER_EVENTS",
	"MPI_RANKS",
};

#define GPU_COMMON                                                                                 \
	"start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "                 \
	"contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, "            \
	"globalPid INTEGER, "
#define API_COLS                                                                                   \
	"start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, "  \
	"nameId INTEGER NOT NULL REFERENCES StringIds(id), returnValue INTEGER NOT NULL, "          \
	"callbackId INTEGER"

static const char *const table_cols[T_N] = {
	/* StringIds */
	"id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL",
	/* ThreadNames */
	"nameId INTEGER NOT NULL REFERENCES StringIds(id), priority INTEGER, globalTid INTEGER",
	/* PROCESSES */
	"globalPid INTEGER, pid INTEGER, name TEXT",
	/* TARGET_INFO_SESSION_START_TIME */
	"utcEpochNs INTEGER",
	/* ANALYSIS_DETAILS */
	"globalVid INTEGER NOT NULL, duration INTEGER NOT NULL, startTime INTEGER NOT NULL, "
	"stopTime INTEGER NOT NULL",
	/* META_DATA_CAPTURE */
	"name TEXT NOT NULL, value TEXT",
	/* META_DATA_EXPORT */
	"name TEXT NOT NULL, value TEXT",
	/* TARGET_INFO_SYSTEM_ENV: devStateName and nameEnum are NOT NULL in
	 * nsys; their values are nsys's own and unknown here */
	"globalVid INTEGER, devStateName TEXT, name TEXT NOT NULL, nameEnum INTEGER, "
	"value TEXT NOT NULL",
	/* TARGET_INFO_GPU */
	"id INTEGER NOT NULL, name TEXT, smCount INTEGER, threadsPerWarp INTEGER, globalPid INTEGER",
	/* TARGET_INFO_CUDA_STREAM: priority and flag (NOT NULL in nsys) are
	 * not recorded */
	"streamId INTEGER NOT NULL, hwId INTEGER NOT NULL, vmId INTEGER NOT NULL, "
	"processId INTEGER NOT NULL, contextId INTEGER NOT NULL, priority INTEGER, flag INTEGER",
	/* KERNEL */
	GPU_COMMON "demangledName INTEGER NOT NULL REFERENCES StringIds(id), "
		   "shortName INTEGER NOT NULL REFERENCES StringIds(id), "
		   "mangledName INTEGER REFERENCES StringIds(id), "
		   "registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, "
		   "gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, "
		   "blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, "
		   "dynamicSharedMemory INTEGER NOT NULL, graphId INTEGER, graphNodeId INTEGER",
	/* MEMCPY */
	GPU_COMMON "bytes INTEGER NOT NULL, "
		   "copyKind INTEGER NOT NULL REFERENCES ENUM_CUDA_MEMCPY_OPER(id), "
		   "srcKind INTEGER REFERENCES ENUM_CUDA_MEM_KIND(id), "
		   "dstKind INTEGER REFERENCES ENUM_CUDA_MEM_KIND(id), "
		   "srcDeviceId INTEGER, dstDeviceId INTEGER",
	/* MEMSET */
	GPU_COMMON "value INTEGER NOT NULL, bytes INTEGER NOT NULL, "
		   "memKind INTEGER REFERENCES ENUM_CUDA_MEM_KIND(id)",
	/* SYNCHRONIZATION */
	GPU_COMMON "syncType INTEGER NOT NULL REFERENCES ENUM_CUPTI_SYNC_TYPE(id), "
		   "eventId INTEGER NOT NULL",
	/* RUNTIME (and the driver's calls) */
	API_COLS,
	/* CUDA_GPU_MEMORY_USAGE_EVENTS: pc (NOT NULL in nsys) is not recorded;
	 * nsys's memory pool columns neither */
	"start INTEGER NOT NULL, globalPid INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
	"contextId INTEGER NOT NULL, address INTEGER NOT NULL, pc INTEGER, bytes INTEGER NOT NULL, "
	"memKind INTEGER NOT NULL REFERENCES ENUM_CUDA_MEM_KIND(id), "
	"memoryOperationType INTEGER NOT NULL REFERENCES ENUM_CUDA_DEV_MEM_EVENT_OPER(id), "
	"name TEXT, correlationId INTEGER, streamId INTEGER",
	/* NVTX_EVENTS */
	"start INTEGER NOT NULL, end INTEGER, "
	"eventType INTEGER NOT NULL REFERENCES ENUM_NSYS_EVENT_TYPE(id), rangeId INTEGER, "
	"category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, "
	"textId INTEGER REFERENCES StringIds(id), domainId INTEGER, uint64Value INTEGER, "
	"int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, "
	"floatValue REAL",
	/* CUPTRACE_RANKS */
	"globalPid INTEGER NOT NULL PRIMARY KEY, rank INTEGER NOT NULL, localRank INTEGER, "
	"worldSize INTEGER, localSize INTEGER, host TEXT, pid INTEGER NOT NULL, "
	"clockOffset INTEGER NOT NULL, file TEXT NOT NULL, status TEXT NOT NULL, "
	"droppedEvents INTEGER NOT NULL, rankSource TEXT NOT NULL",
	/* CUPTRACE_STEPS */
	"globalPid INTEGER NOT NULL, rank INTEGER NOT NULL, step INTEGER NOT NULL, "
	"start INTEGER NOT NULL, "
	"end INTEGER NOT NULL, globalTid INTEGER",
	/* CUPTRACE_NCCL_OPERATIONS */
	"start INTEGER NOT NULL, end INTEGER NOT NULL, globalPid INTEGER NOT NULL, globalTid INTEGER, "
	"rank INTEGER NOT NULL, nameId INTEGER NOT NULL REFERENCES StringIds(id), opId INTEGER, "
	"commHash INTEGER, commName TEXT, commRank INTEGER, nRanks INTEGER, nNodes INTEGER, "
	"seq INTEGER, count INTEGER, datatype TEXT, typeSize INTEGER, bytes INTEGER, root INTEGER, "
	"peer INTEGER, isP2P INTEGER NOT NULL, algorithm TEXT, protocol TEXT, channels INTEGER, "
	"warps INTEGER, cudaStream INTEGER, enqueueStart INTEGER, enqueueEnd INTEGER, "
	"gpuStart INTEGER, gpuEnd INTEGER, gpuChannels INTEGER, groupId INTEGER, groupStart INTEGER, "
	"groupEnd INTEGER, groupSize INTEGER, groupDepth INTEGER, step INTEGER, deviceId INTEGER, "
	"kernelCorrelationId INTEGER, kernelStart INTEGER, kernelEnd INTEGER, kernelStreamId INTEGER",
	/* CUPTRACE_HANG_SUSPECTED */
	"start INTEGER NOT NULL, globalPid INTEGER NOT NULL, rank INTEGER NOT NULL, "
	"nameId INTEGER NOT NULL REFERENCES StringIds(id), commHash INTEGER, commName TEXT, "
	"seq INTEGER, inFlight INTEGER NOT NULL",
	/* CUPTRACE_TORCH_OPS */
	"start INTEGER NOT NULL, end INTEGER NOT NULL, globalPid INTEGER NOT NULL, globalTid INTEGER, "
	"endGlobalTid INTEGER, rank INTEGER NOT NULL, nameId INTEGER NOT NULL REFERENCES StringIds(id), "
	"externalId INTEGER NOT NULL, scope TEXT NOT NULL, sequenceNumber INTEGER, "
	"threadNumber INTEGER NOT NULL, fwdThreadNumber INTEGER, inputDims TEXT, inputTypes TEXT, "
	"stack TEXT",
	/* CUPTRACE_TORCH_CORRELATION */
	"correlationId INTEGER NOT NULL, externalId INTEGER NOT NULL",
	/* CUPTRACE_TORCH_MEMORY */
	"start INTEGER NOT NULL, globalPid INTEGER NOT NULL, globalTid INTEGER, deviceId INTEGER NOT NULL, "
	"address INTEGER NOT NULL, bytes INTEGER NOT NULL, totalAllocated INTEGER NOT NULL, "
	"totalReserved INTEGER NOT NULL, externalId INTEGER",
	/* MPI_P2P_EVENTS */
	"start INTEGER NOT NULL, end INTEGER, globalTid INTEGER NOT NULL, "
	"textId INTEGER NOT NULL REFERENCES StringIds(id), commHandle INTEGER, tag INTEGER, "
	"remoteRank INTEGER, size INTEGER",
	/* MPI_COLLECTIVES_EVENTS */
	"start INTEGER NOT NULL, end INTEGER, globalTid INTEGER NOT NULL, "
	"textId INTEGER NOT NULL REFERENCES StringIds(id), commHandle INTEGER, rootRank INTEGER, "
	"size INTEGER, collSendSize INTEGER, collRecvSize INTEGER, seq INTEGER",
	/* MPI_START_WAIT_EVENTS */
	"start INTEGER NOT NULL, end INTEGER, globalTid INTEGER NOT NULL, "
	"textId INTEGER NOT NULL REFERENCES StringIds(id), requests INTEGER, size INTEGER",
	/* MPI_OTHER_EVENTS */
	"start INTEGER NOT NULL, end INTEGER, globalTid INTEGER NOT NULL, "
	"textId INTEGER NOT NULL REFERENCES StringIds(id), commHandle INTEGER",
	/* MPI_RANKS */
	"rank INTEGER NOT NULL, globalTid INTEGER NOT NULL",
};

const char *sdb_table_name(enum sdb_table t)
{
	return table_name[t];
}

/* The ENUM_* tables: (id, name, label) as nsys writes them. */
static const char enums_sql[] =
	"CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, "
	"label TEXT NOT NULL);"
	"INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES "
	"(33,'NvtxCategory','NVTX category'),(34,'NvtxMark','NVTX mark'),"
	"(59,'NvtxPushPopRange','NVTX push/pop range'),(60,'NvtxStartEndRange','NVTX start/end range'),"
	"(75,'NvtxDomainCreate','NVTX domain create');"
	"CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, "
	"label TEXT NOT NULL);"
	"INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES "
	"(0,'CUDA_MEMCPY_KIND_UNKNOWN','Unknown'),"
	"(1,'CUDA_MEMCPY_KIND_HTOD','Host-to-Device'),"
	"(2,'CUDA_MEMCPY_KIND_DTOH','Device-to-Host'),"
	"(3,'CUDA_MEMCPY_KIND_HTOA','Host-to-Array'),"
	"(4,'CUDA_MEMCPY_KIND_ATOH','Array-to-Host'),"
	"(5,'CUDA_MEMCPY_KIND_ATOA','Array-to-Array'),"
	"(6,'CUDA_MEMCPY_KIND_ATOD','Array-to-Device'),"
	"(7,'CUDA_MEMCPY_KIND_DTOA','Device-to-Array'),"
	"(8,'CUDA_MEMCPY_KIND_DTOD','Device-to-Device'),"
	"(9,'CUDA_MEMCPY_KIND_HTOH','Host-to-Host'),"
	"(10,'CUDA_MEMCPY_KIND_PTOP','Peer-to-Peer'),"
	"(11,'CUDA_MEMCPY_KIND_UVM_HTOD','Unified Host-to-Device'),"
	"(12,'CUDA_MEMCPY_KIND_UVM_DTOH','Unified Device-to-Host'),"
	"(13,'CUDA_MEMCPY_KIND_UVM_DTOD','Unified Device-to-Device');"
	"CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, "
	"label TEXT NOT NULL);"
	/* nsys's numbers, not CUPTI's (sq_mem_kind) */
	"INSERT INTO ENUM_CUDA_MEM_KIND VALUES "
	"(0,'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE','Pageable'),"
	"(1,'CUDA_MEMOPR_MEMORY_KIND_PINNED','Pinned'),"
	"(2,'CUDA_MEMOPR_MEMORY_KIND_DEVICE','Device'),"
	"(3,'CUDA_MEMOPR_MEMORY_KIND_ARRAY','Array'),"
	"(4,'CUDA_MEMOPR_MEMORY_KIND_MANAGED','Managed'),"
	"(5,'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC','Device Static'),"
	"(6,'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC','Managed Static'),"
	"(7,'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN','Unknown');"
	"CREATE TABLE ENUM_CUDA_DEV_MEM_EVENT_OPER (id INTEGER NOT NULL PRIMARY KEY, "
	"name TEXT NOT NULL, label TEXT NOT NULL);"
	"INSERT INTO ENUM_CUDA_DEV_MEM_EVENT_OPER VALUES "
	"(0,'CUDA_DEV_MEM_EVENT_OPR_ALLOCATION','Allocation'),"
	"(1,'CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION','Deallocation');"
	"CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, "
	"label TEXT NOT NULL);"
	"INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES "
	"(0,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN','Unknown'),"
	"(1,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE','Event sync'),"
	"(2,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT','Stream wait event'),"
	"(3,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE','Stream sync'),"
	"(4,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE','Context sync');";

/* ---- errors */

static void fail(struct sdb *d, const char *what)
{
	if (d->failed)
		return;
	d->failed = 1;
	say("writing %s: %s: %s", d->path, what, d->db ? sqlite3_errmsg(d->db) : strerror(errno));
}

static int exec(struct sdb *d, const char *sql)
{
	if (d->failed)
		return -1;
	char *msg = NULL;
	if (sqlite3_exec(d->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		if (!d->failed)
			say("writing %s: %s", d->path, msg ? msg : "error");
		d->failed = 1;
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* INSERT INTO t VALUES (?,...),... for rows rows. */
static int prepare(struct sdb *d, int t, int rows, sqlite3_stmt **st)
{
	int ncol = d->tab[t].ncol;
	size_t cap = (size_t)rows * (size_t)ncol * 2 + (size_t)rows * 4 + 128, n;
	char *sql = xcalloc(cap, 1);
	n = (size_t)snprintf(sql, cap, "INSERT INTO %s VALUES ", table_name[t]);
	for (int r = 0; r < rows; r++) {
		sql[n++] = r ? ',' : ' ';
		sql[n++] = '(';
		for (int i = 0; i < ncol; i++) {
			if (i)
				sql[n++] = ',';
			sql[n++] = '?';
		}
		sql[n++] = ')';
	}
	int rc = sqlite3_prepare_v3(d->db, sql, (int)n, SQLITE_PREPARE_PERSISTENT, st, NULL);
	free(sql);
	if (rc != SQLITE_OK) {
		fail(d, "prepare");
		return -1;
	}
	return 0;
}

int sdb_open(struct sdb *d, const char *path)
{
	memset(d, 0, sizeof *d);
	d->path = xstrdup(path);
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path + 1) : 0;
	if (asprintf(&d->tmp, "%.*s.%s.XXXXXX.tmp", (int)dirlen, path, path + dirlen) < 0)
		xoom();
	int fd = mkostemps(d->tmp, 4, O_CLOEXEC);
	if (fd < 0) {
		say("%s: %s", path, strerror(errno));
		free(d->tmp), free(d->path);
		d->tmp = d->path = NULL;
		return -1;
	}
	mode_t um = umask(0);
	umask(um);
	if (fchmod(fd, 0666 & ~um)) { /* as any file the command creates */
		say("%s: %s", path, strerror(errno));
		close(fd);
		unlink(d->tmp);
		free(d->tmp), free(d->path);
		d->tmp = d->path = NULL;
		return -1;
	}
	close(fd);
	d->guard = tmp_guard(d->tmp);
	/* One thread uses the connection: no locking per call (a tenth of
	 * the time otherwise), no allocation statistics. */
	static int configured;
	if (!configured) {
		configured = 1;
		sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	}
	if (sqlite3_open_v2(d->tmp, &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		fail(d, "open");
		sdb_close(d, 0);
		return -1;
	}
	/* Nothing to roll back to: a failed export is removed whole. */
	if (exec(d, "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
		    "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-32768;"
		    "PRAGMA temp_store=MEMORY; BEGIN") ||
	    exec(d, enums_sql)) {
		sdb_close(d, 0);
		return -1;
	}
	char sql[4096];
	for (int t = 0; t < T_N; t++) {
		snprintf(sql, sizeof sql, "CREATE TABLE %s (%s)", table_name[t], table_cols[t]);
		if (exec(d, sql)) {
			sdb_close(d, 0);
			return -1;
		}
		int ncol = 1;
		for (const char *p = table_cols[t]; *p; p++)
			ncol += *p == ',' && p[1] == ' '; /* ", " parts columns */
		struct sdb_tab *b = &d->tab[t];
		b->ncol = ncol;
		b->v = xcalloc((size_t)ncol * SDB_ROWS, sizeof *b->v);
		if (prepare(d, t, 1, &b->one) || prepare(d, t, SDB_ROWS, &b->many)) {
			sdb_close(d, 0);
			return -1;
		}
	}
	return 0;
}

/* The text is bound as SQLite TEXT, which its readers (Python's sqlite3)
 * decode as UTF-8: invalid UTF-8 from the traced program becomes U+FFFD
 * (util/utf8.h), as in the JSON. */
void sdb_text(struct sdb_row r, int i, const char *p, size_t n)
{
	struct sdb_tab *b = r.tab;
	if (n > INT32_MAX / 3)
		n = INT32_MAX / 3;
	size_t v = utf8_valid(p, n), room = v + 3 * (n - v);
	if (b->tlen + room > b->tcap) {
		b->tcap = (b->tlen + room) * 2 + 4096;
		b->text = xrealloc(b->text, b->tcap);
	}
	if (v)
		memcpy(b->text + b->tlen, p, v);
	if (v < n)
		v += utf8_fix_into(b->text + b->tlen + v, p + v, n - v);
	r.v[i] = (struct sdb_val){.off = (uint32_t)b->tlen, .len = (uint32_t)v, .type = SQLITE_TEXT};
	b->tlen += v;
}

void sdb_double(struct sdb_row r, int i, double x)
{
	int64_t bits;
	memcpy(&bits, &x, sizeof bits);
	r.v[i] = (struct sdb_val){.i = bits, .type = SQLITE_FLOAT};
}

/* Binds rows [0, n) held by table b to st (rows after rows) and runs it. */
static void run(struct sdb *d, int t, sqlite3_stmt *st, unsigned from, unsigned n)
{
	struct sdb_tab *b = &d->tab[t];
	const struct sdb_val *v = b->v + (size_t)from * (size_t)b->ncol;
	int np = (int)n * b->ncol;
	for (int i = 0; i < np; i++) {
		switch (v[i].type) {
		case SQLITE_INTEGER:
			sqlite3_bind_int64(st, i + 1, v[i].i);
			break;
		case SQLITE_FLOAT: {
			double x;
			memcpy(&x, &v[i].i, sizeof x);
			sqlite3_bind_double(st, i + 1, x);
			break;
		}
		case SQLITE_TEXT:
			sqlite3_bind_text(st, i + 1, v[i].len ? b->text + v[i].off : "", (int)v[i].len,
			                  SQLITE_STATIC);
			break;
		default:
			sqlite3_bind_null(st, i + 1);
		}
	}
	if (sqlite3_step(st) != SQLITE_DONE)
		fail(d, table_name[t]);
	sqlite3_reset(st);
}

/* Everything held goes in. */
static void flush(struct sdb *d)
{
	for (int t = 0; t < T_N; t++) {
		struct sdb_tab *b = &d->tab[t];
		for (unsigned r = 0; r < b->n && !d->failed; r++)
			run(d, t, b->one, r, 1);
		b->n = 0;
		b->tlen = 0;
	}
}

void sdb_row(struct sdb *d, enum sdb_table t)
{
	struct sdb_tab *b = &d->tab[t];
	if (d->failed)
		return;
	d->rows++;
	if (++b->n == SDB_ROWS) {
		run(d, t, b->many, 0, SDB_ROWS);
		b->n = 0;
		b->tlen = 0;
	}
	if (++d->batch >= BATCH) {
		d->batch = 0;
		flush(d);
		exec(d, "COMMIT; BEGIN");
	}
}

/* ---- StringIds */

static uint64_t str_hash(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static void str_grow(struct sdb *d)
{
	size_t cap = d->capstr ? d->capstr * 2 : 4096;
	struct sdb_str *v = xcalloc(cap, sizeof *v);
	for (size_t i = 0; i < d->capstr; i++) {
		struct sdb_str *e = &d->strs[i];
		if (!e->id)
			continue;
		size_t j = (size_t)e->hash & (cap - 1);
		while (v[j].id)
			j = (j + 1) & (cap - 1);
		v[j] = *e;
	}
	free(d->strs);
	d->strs = v;
	d->capstr = cap;
}

int64_t sdb_string(struct sdb *d, const char *s, size_t n)
{
	if (n > UINT32_MAX)
		n = UINT32_MAX;
	if ((d->nstr + 1) * 2 > d->capstr)
		str_grow(d);
	uint64_t h = str_hash(s, n);
	size_t j = (size_t)h & (d->capstr - 1);
	for (;; j = (j + 1) & (d->capstr - 1)) {
		struct sdb_str *e = &d->strs[j];
		if (!e->id)
			break;
		if (e->hash == h && e->len == n && !memcmp(d->arena + e->off, s, n))
			return e->id;
	}
	if (d->alen + n > d->acap) {
		d->acap = (d->alen + n) * 2 + 65536;
		d->arena = xrealloc(d->arena, d->acap);
	}
	memcpy(d->arena + d->alen, s, n);
	struct sdb_str *e = &d->strs[j];
	e->hash = h, e->off = (uint32_t)d->alen, e->len = (uint32_t)n;
	e->id = (int64_t)++d->nstr;
	d->alen += n;
	struct sdb_row st = sdb_ins(d, T_STRINGS);
	SB_I(st, 1, e->id);
	SB_T(st, 2, n ? s : "", n);
	sdb_row(d, T_STRINGS);
	return e->id;
}

int sdb_close(struct sdb *d, int ok)
{
	if (d->db && ok && !d->failed) {
		flush(d);
		exec(d, "COMMIT");
	}
	for (int t = 0; t < T_N; t++) {
		struct sdb_tab *b = &d->tab[t];
		sqlite3_finalize(b->one);
		sqlite3_finalize(b->many);
		free(b->v);
		free(b->text);
		memset(b, 0, sizeof *b);
	}
	if (d->db && sqlite3_close(d->db) != SQLITE_OK && ok && !d->failed)
		fail(d, "close");
	d->db = NULL;
	int rc = ok && !d->failed ? 0 : -1;
	if (d->tmp && !rc) { /* on disk before it takes the name */
		int fd = open(d->tmp, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fsync(fd)) {
			say("writing %s: %s", d->path, strerror(errno));
			rc = -1;
		}
		if (fd >= 0)
			close(fd);
	}
	if (d->tmp) {
		if (!rc && rename(d->tmp, d->path)) {
			say("%s: %s", d->path, strerror(errno));
			rc = -1;
		}
		if (rc)
			unlink(d->tmp);
		tmp_unguard(d->guard);
	}
	free(d->tmp), free(d->path), free(d->strs), free(d->arena);
	d->tmp = d->path = NULL, d->strs = NULL, d->arena = NULL;
	return rc;
}
