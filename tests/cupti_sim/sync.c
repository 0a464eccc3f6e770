// SPDX-License-Identifier: MIT
/* The simulated driver's events and synchronisations (cupti_sim.h):
 * cudaEventRecord with CUPTI's CUDA_EVENT record, and the host's waits
 * (stream, event, device) and stream waits on events with their
 * SYNCHRONIZATION records; the truth says which record each event wait
 * waited for. */
#include "cupti_sim.h"
#include "driver.h"

#include <string.h>

static void sync_record(struct call *c, int type, uint32_t stream, uint32_t event, uint64_t until)
{
	wait_until(until);
	uint64_t end = sim_now();
	if (!sim_kind_on(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION))
		return;
	CUpti_ActivitySynchronization2 s;
	memset(&s, 0, sizeof s);
	/* An event's sync waits for the event's latest record (CUPTI 12.8 on
	 * says which by cudaEventSyncId; the truth says its call and stream). */
	struct event e = {0, CUPTI_SYNCHRONIZATION_INVALID_VALUE, 0,
	                  CUPTI_SYNCHRONIZATION_INVALID_VALUE};
	if (event != CUPTI_SYNCHRONIZATION_INVALID_VALUE) {
		pthread_mutex_lock(&D.lock);
		e = D.ev[event - 1];
		pthread_mutex_unlock(&D.lock);
	}
	s.cudaEventSyncId = e.sync_id;
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = (CUpti_ActivitySynchronizationType)type;
	s.start = c->start;
	s.end = end;
	s.correlationId = c->corr;
	s.contextId = D.dev[c->dev].context;
	s.streamId = stream;
	s.cudaEventId = event;
	int lost = sim_append(&s, sizeof s, NULL) != 0;
	sim_truth("{\"k\":\"sync\",\"corr\":%u,\"type\":%d,\"ctx\":%u,\"stream\":%u,\"event\":%u,"
	          "\"start\":%llu,\"end\":%llu,\"wait_corr\":%u,\"wait_stream\":%u,\"lost\":%d}",
	          c->corr, type, s.contextId, stream, event, (unsigned long long)s.start,
	          (unsigned long long)end, e.corr, e.stream, lost);
}

EXPORT void sim_stream_sync(uint32_t stream)
{
	pthread_mutex_lock(&D.lock);
	struct stream *s = stream_of(stream);
	uint64_t until = s->ready;
	pthread_mutex_unlock(&D.lock);
	struct call c;
	call_begin(&c, 1, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, s->dev, NULL);
	sync_record(&c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, stream,
	            CUPTI_SYNCHRONIZATION_INVALID_VALUE, until);
	call_end(&c);
}

/* cudaEventRecord of event `id` (from 1) on a stream: the event completes
 * when the stream's work so far ends. CUPTI's CUDA_EVENT record comes
 * with the call, ahead of its API record. */
static void event_record(uint32_t id, uint32_t stream)
{
	pthread_mutex_lock(&D.lock);
	struct stream *s = stream_of(stream);
	pthread_mutex_unlock(&D.lock);
	struct call c;
	call_begin(&c, 1, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, s->dev, NULL);
	pthread_mutex_lock(&D.lock);
	uint64_t sync_id = ++D.next_sync_id;
	D.ev[id - 1] = (struct event){s->ready, stream, c.corr, sync_id};
	uint32_t ctx = D.dev[s->dev].context;
	pthread_mutex_unlock(&D.lock);
	if (sim_kind_on(CUPTI_ACTIVITY_KIND_CUDA_EVENT)) {
		CUpti_ActivityCudaEvent2 r;
		memset(&r, 0, sizeof r);
		r.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
		r.correlationId = c.corr;
		r.contextId = ctx;
		r.streamId = stream;
		r.eventId = id;
		r.deviceId = (uint32_t)s->dev;
		r.cudaEventSyncId = sync_id;
		int lost = sim_append(&r, sizeof r, NULL) != 0;
		sim_truth("{\"k\":\"cuda_event\",\"corr\":%u,\"ctx\":%u,\"dev\":%d,\"stream\":%u,"
		          "\"event\":%u,\"lost\":%d}",
		          c.corr, ctx, s->dev, stream, id, lost);
	}
	call_end(&c);
}

EXPORT uint32_t sim_event_record(uint32_t stream)
{
	pthread_mutex_lock(&D.lock);
	uint32_t id = D.nev < MAX_EVENTS ? ++D.nev : MAX_EVENTS;
	pthread_mutex_unlock(&D.lock);
	event_record(id, stream);
	return id;
}

EXPORT void sim_event_rerecord(uint32_t event, uint32_t stream)
{
	event_record(event, stream);
}

EXPORT void sim_event_sync(uint32_t event)
{
	struct event e = D.ev[event - 1];
	struct stream *s = stream_of(e.stream);
	struct call c;
	call_begin(&c, 1, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, s->dev, NULL);
	sync_record(&c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE,
	            CUPTI_SYNCHRONIZATION_INVALID_VALUE, event, e.t);
	call_end(&c);
}

EXPORT void sim_stream_wait_event(uint32_t stream, uint32_t event)
{
	pthread_mutex_lock(&D.lock);
	struct stream *s = stream_of(stream);
	struct event e = D.ev[event - 1];
	if (s->ready < e.t)
		s->ready = e.t;
	pthread_mutex_unlock(&D.lock);
	struct call c;
	call_begin(&c, 1, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, s->dev, NULL);
	sync_record(&c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, stream, event, 0);
	call_end(&c);
}

EXPORT void sim_device_sync(int dev)
{
	pthread_mutex_lock(&D.lock);
	uint64_t until = 0;
	for (int i = 0; i < D.nst; i++)
		if (D.st[i].dev == dev && D.st[i].ready > until)
			until = D.st[i].ready;
	pthread_mutex_unlock(&D.lock);
	struct call c;
	call_begin(&c, 1, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, dev, NULL);
	sync_record(&c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE,
	            CUPTI_SYNCHRONIZATION_INVALID_VALUE, CUPTI_SYNCHRONIZATION_INVALID_VALUE,
	            until);
	call_end(&c);
}
