// SPDX-License-Identifier: MIT
/* NVTX coverage under several threads: nested push/pop (ASCII, wide,
 * attributes with every payload type and colors), domains with registered
 * strings and named categories, marks, thread names, and ranges started on
 * one thread and ended on another. Every call is written down in the truth
 * log with the monotonic time around it.
 * usage: nvtx_threads [threads] [iterations] [depth] */
#include "truth.h"

#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static int iterations = 20, max_depth = 8;
static nvtxDomainHandle_t physics;
static nvtxStringHandle_t reg_solve, reg_step;

/* Cross-thread ranges: main starts, worker 0 ends. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	nvtxRangeId_t id[64];
	uint64_t t0[64], t1[64];
	int n, done;
} handoff = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};

static void spin(unsigned n)
{
	volatile unsigned x = 0;
	for (unsigned i = 0; i < n; i++)
		x += i;
}

struct open_range {
	uint64_t t0, t1;
};

/* Pushes a range of one of several flavours, recurses, pops, logs. */
static void nest(int tid, int depth, int flavour, int seq)
{
	char name[64];
	struct open_range r;
	const char *dom = "";
	char extra[160] = "";
	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof a);
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	int kind = (flavour + depth) % 6;
	r.t0 = mono_ns();
	switch (kind) {
	case 0:
		snprintf(name, sizeof name, "plain d%d", depth);
		nvtxRangePushA(name);
		break;
	case 1: /* colour + u64 payload + category 1 ("io") */
		snprintf(name, sizeof name, "attr d%d", depth);
		a.colorType = NVTX_COLOR_ARGB;
		a.color = 0xff112233u + (unsigned)depth;
		a.category = 1;
		a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
		a.payload.ullValue = 1ull << 40 | (unsigned)seq;
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		a.message.ascii = name;
		nvtxRangePushEx(&a);
		snprintf(extra, sizeof extra,
			 ",\"color\":\"#%06x\",\"category\":\"io\",\"payload\":%llu",
			 (0x112233u + (unsigned)depth) & 0xffffff, (unsigned long long)a.payload.ullValue);
		break;
	case 2: /* wide string */
		snprintf(name, sizeof name, "wide \xce\xb1\xce\xb2 \xe2\x9c\x93 \xf0\x9d\x84\x9e d%d", depth);
		{
			wchar_t w[64];
			swprintf(w, 64, L"wide \u03b1\u03b2 \u2713 \U0001D11E d%d", depth);
			nvtxRangePushW(w);
		}
		break;
	case 3: /* domain + registered string + named category + i32 payload */
		snprintf(name, sizeof name, "solve");
		dom = "physics";
		a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
		a.message.registered = reg_solve;
		a.category = 2;
		a.payloadType = NVTX_PAYLOAD_TYPE_INT32;
		a.payload.iValue = -depth;
		nvtxDomainRangePushEx(physics, &a);
		snprintf(extra, sizeof extra, ",\"category\":\"solver\",\"payload\":%d", -depth);
		break;
	case 4: /* double payload, unnamed category number 7 */
		snprintf(name, sizeof name, "double d%d", depth);
		a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
		a.payload.dValue = 0.5 + depth;
		a.category = 7;
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		a.message.ascii = name;
		nvtxRangePushEx(&a);
		snprintf(extra, sizeof extra, ",\"category\":7,\"payload\":%.17g", 0.5 + depth);
		break;
	default: /* float, i64 and u32 payloads in turn */
		snprintf(name, sizeof name, "num d%d", depth);
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		a.message.ascii = name;
		if (seq % 3 == 0) {
			a.payloadType = NVTX_PAYLOAD_TYPE_FLOAT;
			a.payload.fValue = 0.25f;
			snprintf(extra, sizeof extra, ",\"payload\":0.25");
		} else if (seq % 3 == 1) {
			a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
			a.payload.llValue = -5000000000ll;
			snprintf(extra, sizeof extra, ",\"payload\":-5000000000");
		} else {
			a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32;
			a.payload.uiValue = 4000000000u;
			snprintf(extra, sizeof extra, ",\"payload\":4000000000");
		}
		nvtxRangePushEx(&a);
		break;
	}
	r.t1 = mono_ns();
	spin(200);
	if (depth + 1 < max_depth && (seq + depth) % 3 != 0)
		nest(tid, depth + 1, flavour, seq);
	if (depth % 4 == 1) {
		char m[32];
		snprintf(m, sizeof m, "mark d%d", depth);
		nvtxMarkA(m);
		truth("{\"kind\":\"mark\",\"tid\":%d,\"name\":\"%s\"}", tid, m);
	}
	spin(100);
	uint64_t t2 = mono_ns();
	if (kind == 3)
		nvtxDomainRangePop(physics);
	else
		nvtxRangePop();
	uint64_t t3 = mono_ns();
	truth("{\"kind\":\"range\",\"tid\":%d,\"name\":\"%s\",\"domain\":\"%s\",\"depth\":%d,"
	      "\"start_min\":%llu,\"start_max\":%llu,\"end_min\":%llu,\"end_max\":%llu%s}",
	      tid, name, dom, depth, (unsigned long long)r.t0, (unsigned long long)r.t1,
	      (unsigned long long)t2, (unsigned long long)t3, extra);
}

static void *worker(void *arg)
{
	int idx = (int)(intptr_t)arg;
	int tid = gettid_();
	char tname[32];
	snprintf(tname, sizeof tname, "worker-%d", idx);
	nvtxNameOsThreadA((uint32_t)tid, tname);
	truth("{\"kind\":\"thread\",\"tid\":%d,\"name\":\"%s\"}", tid, tname);
	for (int i = 0; i < iterations; i++)
		nest(tid, 0, idx + i, i);
	if (idx == 0) {
		/* End the ranges main started. */
		pthread_mutex_lock(&handoff.lock);
		while (!handoff.done)
			pthread_cond_wait(&handoff.cv, &handoff.lock);
		for (int i = 0; i < handoff.n; i++) {
			uint64_t t2 = mono_ns();
			nvtxRangeEnd(handoff.id[i]);
			uint64_t t3 = mono_ns();
			truth("{\"kind\":\"async\",\"name\":\"handoff %d\",\"end_tid\":%d,"
			      "\"start_min\":%llu,\"start_max\":%llu,\"end_min\":%llu,\"end_max\":%llu}",
			      i, tid, (unsigned long long)handoff.t0[i], (unsigned long long)handoff.t1[i],
			      (unsigned long long)t2, (unsigned long long)t3);
		}
		pthread_mutex_unlock(&handoff.lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 4;
	if (argc > 2)
		iterations = atoi(argv[2]);
	if (argc > 3)
		max_depth = atoi(argv[3]);
	truth_open();
	int me = gettid_();
	nvtxNameOsThreadA((uint32_t)me, "main thread");
	truth("{\"kind\":\"thread\",\"tid\":%d,\"name\":\"main thread\"}", me);
	physics = nvtxDomainCreateA("physics");
	reg_solve = nvtxDomainRegisterStringA(physics, "solve");
	reg_step = nvtxDomainRegisterStringA(physics, "step");
	nvtxNameCategoryA(1, "io");
	nvtxDomainNameCategoryA(physics, 2, "solver");

	pthread_t th[64];
	if (nthreads > 64)
		nthreads = 64;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);

	/* Ranges that main starts and worker 0 ends, one registered, in the
	 * physics domain. */
	pthread_mutex_lock(&handoff.lock);
	for (int i = 0; i < 8; i++) {
		char name[32];
		snprintf(name, sizeof name, "handoff %d", i);
		handoff.t0[i] = mono_ns();
		handoff.id[i] = nvtxRangeStartA(name);
		handoff.t1[i] = mono_ns();
		handoff.n++;
	}
	handoff.done = 1;
	pthread_cond_signal(&handoff.cv);
	pthread_mutex_unlock(&handoff.lock);

	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof a);
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = reg_step;
	nvtxDomainMarkEx(physics, &a);
	truth("{\"kind\":\"mark\",\"tid\":%d,\"name\":\"step\",\"domain\":\"physics\"}", me);

	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("nvtx_threads done: %d threads x %d iterations\n", nthreads, iterations);
	return 0;
}
