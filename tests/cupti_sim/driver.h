// SPDX-License-Identifier: MIT
/* The simulated driver's state and the helpers its files share: driver.c
 * (contexts, calls, launches, copies, memory) and sync.c (events and
 * synchronisations). Internal to the simulator. */
#ifndef SIM_DRIVER_H
#define SIM_DRIVER_H

#include "sim.h"

#define EXPORT            __attribute__((visibility("default")))
#define MAX_DEV           8
#define MAX_STREAMS       64
#define MAX_EVENTS        4096
#define MAX_ALLOCS        4096
#define LAUNCH_LATENCY_NS 1500

struct driver {
	pthread_mutex_t lock;
	int ndev;
	struct dev {
		uint32_t context; /* 0: no context yet */
		uint32_t null_stream;
	} dev[MAX_DEV];
	uint32_t next_context;
	struct stream {
		uint32_t id;
		int dev;
		uint64_t ready; /* when its last work ends */
	} st[MAX_STREAMS];
	int nst;
	struct event {
		uint64_t t;
		uint32_t stream;
		uint32_t corr;    /* the cudaEventRecord that recorded it last */
		uint64_t sync_id; /* that record's cudaEventSyncId */
	} ev[MAX_EVENTS];
	uint32_t nev;
	uint64_t next_sync_id;
	struct alloc {
		uint64_t addr, bytes;
		int dev;
	} al[MAX_ALLOCS];
	uint64_t next_addr;
	uint32_t corr, next_stream, graph_node;
	struct kname {
		char *s;
		struct kname *next;
	} * names;
	int current_dev;
};
extern struct driver D;

struct call {
	int runtime;
	uint32_t cbid;
	const char *name;
	uint32_t corr;
	uint64_t start, cdata;
	int ret;
	int dev;
	CUpti_CallbackData cd;
};

/* One CUDA API call: its correlation id, callbacks and API record. */
void call_begin(struct call *c, int runtime, uint32_t cbid, int dev, const char *symbol);
void call_end(struct call *c);
struct stream *stream_of(uint32_t id); /* lock held */
void wait_until(uint64_t t);           /* busy until CUPTI's clock reaches t */

#endif
