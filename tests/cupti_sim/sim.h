// SPDX-License-Identifier: MIT
/* Internals of the CUPTI simulator (libcupti_sim.so). It plays both sides
 * of a real process without a GPU:
 *   cupti_api.c  the subset of the CUPTI API that libcuptrace calls, with
 *                CUPTI's semantics (buffers requested on the producing
 *                thread and completed on a worker thread, forced flush on
 *                the caller's thread, one subscriber, callback data, the
 *                registered timestamp callback, dropped-record counts) and
 *                failure injection (CUPTI_SIM_FAIL_AT=N fails the Nth call)
 *   driver.c     the CUDA driver and runtime a workload calls (cupti_sim.h):
 *                cuInit calls InitializeInjection exactly as the driver
 *                does; API calls get correlation ids, callbacks and API
 *                records; the "GPU" runs streams on simulated time and
 *                produces kernel, copy, memset, sync and memory records
 *                (driver.h: its state; sync.c: events and synchronisations)
 *   names.c      callback names (cuptiGetCallbackName)
 * Every record put into a buffer is also written to the truth log
 * ($CUPTI_SIM_TRUTH, JSON lines) for the tests to compare with. */
#ifndef SIM_H
#define SIM_H

#include <cupti.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define SIM_MAX_CBID 1024

struct sim {
	pthread_mutex_t lock; /* everything below */
	int init_pid;
	/* subscriber and callbacks */
	int subscribed;
	char other_subscriber[64]; /* a client that came first, or "" */
	CUpti_CallbackFunc callback;
	void *userdata;
	uint8_t cb_enabled[CUPTI_CB_DOMAIN_SIZE][SIM_MAX_CBID];
	/* activity */
	uint8_t kind_enabled[CUPTI_ACTIVITY_KIND_COUNT];
	uint8_t api_disabled[2][SIM_MAX_CBID]; /* [runtime?][cbid] */
	CUpti_BuffersCallbackRequestFunc requested;
	CUpti_BuffersCallbackCompleteFunc completed;
	CUpti_TimestampCallbackFunc timestamp;
	int thread_id_system;
	/* the current buffer and the completed ones waiting for delivery */
	uint8_t *cur;
	size_t cur_size, cur_used;
	struct names *cur_names; /* strings the current buffer's records own */
	struct pending *queue, **queue_tail;
	size_t dropped;
	int worker_busy;
	pthread_cond_t cv, idle;
	/* counters */
	unsigned long calls;   /* CUPTI calls made by the client */
	unsigned long fail_at; /* fail this call (0: never) */
	CUptiResult fail_code;
	unsigned long delivered_records, delivered_buffers;
	uint64_t completed_cpu_ns; /* time spent in the client's completion callback */
	int volatile_names;        /* kernel names freed right after their buffer */
	int hold;                  /* full buffers wait for a flush (a GPU slow to finish) */
	FILE *truth;
};

struct names {
	char *s;
	struct names *next;
};

struct pending {
	uint8_t *buf;
	size_t size, used;
	struct names *names;
	struct pending *next;
};

extern struct sim sim;

/* cupti_api.c */
void sim_api_init(void); /* reads CUPTI_SIM_* once */
uint64_t sim_now(void);  /* CUPTI's clock: the registered callback or CLOCK_REALTIME */
/* Appends a record to the current buffer (requesting one when needed).
 * 0, or -1 when it was dropped for lack of a buffer. `name`, when set, is
 * a string the record points to that dies with the buffer. */
int sim_append(const void *rec, size_t size, char *name);
/* Records still waiting in buffers the client has not been given. */
size_t sim_pending_records(void);
void sim_callback(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data);
int sim_kind_on(CUpti_ActivityKind k);
int sim_api_on(int runtime, uint32_t cbid);
void sim_truth(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A CUDA call (its correlation id) made now on this thread: its
 * EXTERNAL_CORRELATION records, one per kind with an id pushed, when
 * that kind and the call's API record are on (cupti_api.c). */
void sim_ext_corr(int runtime, uint32_t cbid, uint32_t corr);

/* names.c */
const char *sim_cbid_name(CUpti_CallbackDomain dom, uint32_t cbid);

#endif
