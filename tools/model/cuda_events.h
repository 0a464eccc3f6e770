// SPDX-License-Identifier: MIT
/* cudaEventRecord calls by (context, event id), for the model to tie an
 * event sync or a stream wait to the record it waited for: the stream the
 * event was recorded on and the record call's correlation id (Kineto's
 * wait_on_stream and wait_on_cuda_event_record_corr_id). Bounded: a
 * fixed table of recent records per event, whatever the trace's length. */
#ifndef CT_CUDA_EVENTS_H
#define CT_CUDA_EVENTS_H

#include <stdint.h>

struct cuda_events;

struct cuda_events *cuda_events_new(void);
void cuda_events_free(struct cuda_events *ce);
/* Event `event` of context `ctx` was recorded on `stream` by call `corr`. */
void cuda_events_record(struct cuda_events *ce, uint64_t ctx, uint64_t event, uint64_t corr,
                        uint64_t stream);
/* The record a sync made by call `sync_corr` waited for: the event's
 * latest record whose call came before (a lower correlation id: CUDA
 * numbers calls in the order they are made, across threads). 1 and
 * *corr, *stream set when known, else 0. */
int cuda_events_find(const struct cuda_events *ce, uint64_t ctx, uint64_t event,
                     uint64_t sync_corr, uint64_t *corr, uint64_t *stream);

#endif
