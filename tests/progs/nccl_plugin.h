// SPDX-License-Identifier: MIT
/* The profiler plugin as NCCL 2.28 sees it (tests/progs/nccl_harness.c):
 * the ABI's declarations, as nccl_profiler.h has them (v4, v5; v6 keeps
 * v5's members in place), NCCL's loader (NCCL_PROFILER_PLUGIN, v6 then v5
 * then v4) and one call site per plugin entry for both versions. */
#ifndef CT_NCCL_PLUGIN_H
#define CT_NCCL_PLUGIN_H

#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- NCCL's declarations of the ABI (as nccl_profiler.h has them) ---- */

typedef int ncclResult_t;
typedef void (*ncclDebugLogger_t)(int level, unsigned long flags, const char *file, int line,
                                  const char *fmt, ...);

enum {
	ncclProfileGroup = 1 << 0,
	ncclProfileColl = 1 << 1,
	ncclProfileP2p = 1 << 2,
	ncclProfileProxyOp = 1 << 3,
	ncclProfileProxyStep = 1 << 4,
	ncclProfileProxyCtrl = 1 << 5,
	ncclProfileKernelCh = 1 << 6,
	ncclProfileNetPlugin = 1 << 7,
	ncclProfileGroupApi = 1 << 8,
	ncclProfileCollApi = 1 << 9,
	ncclProfileP2pApi = 1 << 10,
	ncclProfileKernelLaunch = 1 << 11,
};
enum {
	ncclProfilerKernelChStop = 22,
	ncclProfilerGroupStartApiStop = 23,
	ncclProfilerGroupEndApiStart = 24,
};

typedef struct {
	uint64_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			bool graphCaptured;
			int groupDepth;
		} groupApi;
		struct {
			const char *func;
			size_t count;
			const char *datatype;
			int root;
			void *stream;
			bool graphCaptured;
		} collApi;
		struct {
			const char *func;
			size_t count;
			const char *datatype;
			void *stream;
			bool graphCaptured;
		} p2pApi;
		struct {
			void *stream;
		} kernelLaunch;
		struct {
			uint64_t seqNumber;
			const char *func;
			void const *sendBuff;
			void *recvBuff;
			size_t count;
			int root;
			const char *datatype;
			uint8_t nChannels;
			uint8_t nWarps;
			const char *algo;
			const char *proto;
			void *parentGroup;
		} coll;
		struct {
			const char *func;
			void *buff;
			const char *datatype;
			size_t count;
			int peer;
			uint8_t nChannels;
			void *parentGroup;
		} p2p;
		struct {
			uint8_t channelId;
			uint64_t pTimer;
		} kernelCh;
	};
} descr_v5;

typedef struct { /* v4: one-byte type, no API events, no parentGroup */
	uint8_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			uint64_t seqNumber;
			const char *func;
			void const *sendBuff;
			void *recvBuff;
			size_t count;
			int root;
			const char *datatype;
			uint8_t nChannels;
			uint8_t nWarps;
			const char *algo;
			const char *proto;
		} coll;
		struct {
			const char *func;
			void *buff;
			const char *datatype;
			size_t count;
			int peer;
			uint8_t nChannels;
		} p2p;
		struct {
			uint8_t channelId;
			uint64_t pTimer;
		} kernelCh;
	};
} descr_v4;

typedef union {
	struct {
		size_t transSize;
	} proxyStep;
	struct {
		int appendedProxyOps;
	} proxyCtrl;
	struct {
		void *data;
	} netPlugin;
	struct {
		uint64_t pTimer;
	} kernelCh;
} state_args;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **context, uint64_t commId, int *eActivationMask,
	                     const char *commName, int nNodes, int nranks, int rank,
	                     ncclDebugLogger_t logfn);
	ncclResult_t (*startEvent)(void *context, void **eHandle, descr_v5 *eDescr);
	ncclResult_t (*stopEvent)(void *eHandle);
	ncclResult_t (*recordEventState)(void *eHandle, int eState, state_args *eStateArgs);
	ncclResult_t (*finalize)(void *context);
} profiler_v5;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **context, int *eActivationMask, const char *commName,
	                     uint64_t commHash, int nNodes, int nranks, int rank,
	                     ncclDebugLogger_t logfn);
	ncclResult_t (*startEvent)(void *context, void **eHandle, descr_v4 *eDescr);
	ncclResult_t (*stopEvent)(void *eHandle);
	ncclResult_t (*recordEventState)(void *eHandle, int eState, state_args *eStateArgs);
	ncclResult_t (*finalize)(void *context);
} profiler_v4;

/* ---- the emulated NCCL ---- */

static profiler_v5 *P5;
static profiler_v4 *P4;
static void *plugin_lib;
static int event_mask; /* ncclProfilerEventMask */

/* One plugin call site for both versions: v4 gets its descriptor built
 * from the v5 one (only the members v4 has). */
static void start(void *ctx, void **h, descr_v5 *d)
{
	*h = NULL;
	if (P5) {
		P5->startEvent(ctx, h, d);
		return;
	}
	descr_v4 e;
	memset(&e, 0, sizeof e);
	e.type = (uint8_t)d->type;
	e.parentObj = d->parentObj;
	e.rank = d->rank;
	if (d->type == ncclProfileColl) {
		e.coll.seqNumber = d->coll.seqNumber;
		e.coll.func = d->coll.func;
		e.coll.sendBuff = d->coll.sendBuff;
		e.coll.recvBuff = d->coll.recvBuff;
		e.coll.count = d->coll.count;
		e.coll.root = d->coll.root;
		e.coll.datatype = d->coll.datatype;
		e.coll.nChannels = d->coll.nChannels;
		e.coll.nWarps = d->coll.nWarps;
		e.coll.algo = d->coll.algo;
		e.coll.proto = d->coll.proto;
		e.parentObj = d->coll.parentGroup; /* v4: the group is the parent */
	} else if (d->type == ncclProfileP2p) {
		e.p2p.func = d->p2p.func;
		e.p2p.buff = d->p2p.buff;
		e.p2p.datatype = d->p2p.datatype;
		e.p2p.count = d->p2p.count;
		e.p2p.peer = d->p2p.peer;
		e.p2p.nChannels = d->p2p.nChannels;
		e.parentObj = d->p2p.parentGroup;
	} else if (d->type == ncclProfileKernelCh) {
		e.kernelCh.channelId = d->kernelCh.channelId;
		e.kernelCh.pTimer = d->kernelCh.pTimer;
	}
	P4->startEvent(ctx, h, &e);
}

static void stop(void *h)
{
	if (P5)
		P5->stopEvent(h);
	else
		P4->stopEvent(h);
}

static void record(void *h, int state, state_args *a)
{
	if (P5)
		P5->recordEventState(h, state, a);
	else
		P4->recordEventState(h, state, a);
}

static int loaded(void)
{
	return P5 || P4;
}

/* ncclProfilerPluginLoad: NCCL_PROFILER_PLUGIN names a path or a short
 * name; "none" disables; v5 is preferred, then v4. */
static void plugin_load(void)
{
	const char *name = getenv("NCCL_PROFILER_PLUGIN");
	if (name && !strcasecmp(name, "none"))
		return;
	char buf[4096];
	if (name && name[0]) {
		plugin_lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
		if (!plugin_lib) {
			snprintf(buf, sizeof buf, "libnccl-profiler-%s.so", name);
			plugin_lib = dlopen(buf, RTLD_NOW | RTLD_LOCAL);
		}
	} else {
		plugin_lib = dlopen("libnccl-profiler.so", RTLD_NOW | RTLD_LOCAL);
	}
	if (!plugin_lib)
		return;
	int abi = getenv("HARNESS_ABI") ? atoi(getenv("HARNESS_ABI")) : 5;
	/* NCCL 2.29 looks for v6 first: the same table, a wider descriptor
	 * whose v5 members stay in place. */
	if (abi >= 6)
		P5 = dlsym(plugin_lib, "ncclProfiler_v6");
	if (abi >= 5 && !P5)
		P5 = dlsym(plugin_lib, "ncclProfiler_v5");
	if (!P5)
		P4 = dlsym(plugin_lib, "ncclProfiler_v4");
	if (!loaded()) {
		dlclose(plugin_lib);
		plugin_lib = NULL;
	}
}

#endif
