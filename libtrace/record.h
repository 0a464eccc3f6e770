// SPDX-License-Identifier: MIT
/* Writing records into the calling thread's ring (the hot path). */
#ifndef CT_RECORD_H
#define CT_RECORD_H

#include "clock.h"
#include "ring.h"

#include <stdlib.h>
#include <string.h>

/* Reserves a record of `kind` with nfields values and strbytes of string
 * data, header filled in. NULL (and a drop counted) when there is no room.
 * Finish with ct_commit(t, r->size). */
static inline struct ct_rec *ct_rec_begin(struct ct_thread *t, unsigned kind, unsigned nfields,
					  uint32_t strbytes)
{
	uint32_t size = ct_rec_size(nfields, strbytes);
	struct ct_rec *r = (struct ct_rec *)ct_reserve(t, size);
	if (__builtin_expect(!r, 0)) {
		ct_count_drop(t, kind);
		return NULL;
	}
	r->size = size;
	r->kind = (uint16_t)kind;
	r->reserved = 0;
	return r;
}

static inline void ct_rec_thread_name(struct ct_thread *t, uint64_t tid, const char *name,
				      size_t len, int user)
{
	if (len > CT_MAX_STR)
		len = CT_MAX_STR;
	struct ct_rec *r = ct_rec_begin(t, CT_EV_THREAD_NAME, F_THREAD_NAME_N, (uint32_t)len);
	if (!r)
		return;
	r->reserved = ct_tick_flag;
	r->f[F_THREAD_NAME_TS] = ct_stamp();
	r->f[F_THREAD_NAME_TID] = tid;
	r->f[F_THREAD_NAME_NAME] = len;
	r->f[F_THREAD_NAME_USER] = (uint64_t)user;
	memcpy(&r->f[F_THREAD_NAME_N], name, len);
	ct_commit(t, r->size);
}

/* A record outside the rings (for the definitions queue, ct_defs_add_record),
 * header filled in and timestamped now on CLOCK_MONOTONIC (the writer's map
 * is for the rings' records); free() it after use. */
static inline struct ct_rec *ct_rec_new(unsigned kind, unsigned nfields, uint32_t strbytes)
{
	uint32_t size = ct_rec_size(nfields, strbytes);
	struct ct_rec *r = malloc(size);
	if (r) {
		r->size = size;
		r->kind = (uint16_t)kind;
		r->reserved = 0;
		r->f[F_TS] = ct_now();
	}
	return r;
}

/* A record whose fields are all numbers (no strings); clock is
 * ct_tick_flag when f[0] came from ct_stamp(), else 0. */
static inline void ct_rec_numbers(struct ct_thread *t, unsigned kind, const uint64_t *f,
				  unsigned n, uint16_t clock)
{
	struct ct_rec *r = ct_rec_begin(t, kind, n, 0);
	if (!r)
		return;
	r->reserved = clock;
	for (unsigned i = 0; i < n; i++)
		r->f[i] = f[i];
	ct_commit(t, r->size);
}

/* f[0] read with ct_now() (CLOCK_MONOTONIC). */
static inline void ct_rec_simple(struct ct_thread *t, unsigned kind, const uint64_t *f, unsigned n)
{
	ct_rec_numbers(t, kind, f, n, 0);
}

/* f[0] taken from ct_stamp(). */
static inline void ct_rec_stamped(struct ct_thread *t, unsigned kind, const uint64_t *f, unsigned n)
{
	ct_rec_numbers(t, kind, f, n, ct_tick_flag);
}

#endif
