// SPDX-License-Identifier: MIT
/* cudaEventRecord calls by (context, event id) (cuda_events.h).
 *
 * CUPTI writes an event's record with the call, a sync's record when the
 * sync ends, so a sync usually finds its record already here. An event is
 * often recorded again soon after a wait on it was issued (frameworks
 * reuse a few events for every step), and the sync's own record may come
 * after that next record: so each event keeps its last RECENT records and
 * a sync takes the latest one older than itself, as Kineto does. The
 * table holds SLOTS events; an event that finds no free slot near its own
 * takes over the one it hashes to, so memory stays fixed. */
#include "model/cuda_events.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#include <stdlib.h>

#define SLOTS  4096
#define PROBE  8
#define RECENT 4

struct rec {
	uint64_t corr, stream;
};

struct slot {
	uint64_t key;        /* (context, event) + 1; 0: free */
	unsigned n, next;    /* records held; where the next one goes */
	struct rec r[RECENT]; /* a ring, oldest overwritten */
};

struct cuda_events {
	struct slot s[SLOTS];
};

struct cuda_events *cuda_events_new(void)
{
	return xcalloc(1, sizeof(struct cuda_events));
}

void cuda_events_free(struct cuda_events *ce)
{
	free(ce);
}

static uint64_t key_of(uint64_t ctx, uint64_t event)
{
	return (ctx << 32 ^ (event & 0xffffffffull)) + 1;
}

static struct slot *lookup(const struct cuda_events *ce, uint64_t key)
{
	size_t h = hmap_mix(key);
	for (unsigned p = 0; p < PROBE; p++) {
		const struct slot *s = &ce->s[(h + p) & (SLOTS - 1)];
		if (s->key == key)
			return (struct slot *)s;
	}
	return NULL;
}

void cuda_events_record(struct cuda_events *ce, uint64_t ctx, uint64_t event, uint64_t corr,
                        uint64_t stream)
{
	uint64_t key = key_of(ctx, event);
	struct slot *s = lookup(ce, key);
	if (!s) {
		size_t h = hmap_mix(key);
		s = &ce->s[h & (SLOTS - 1)]; /* taken over when nothing near is free */
		for (unsigned p = 0; p < PROBE; p++)
			if (!ce->s[(h + p) & (SLOTS - 1)].key) {
				s = &ce->s[(h + p) & (SLOTS - 1)];
				break;
			}
		*s = (struct slot){.key = key};
	}
	s->r[s->next] = (struct rec){corr, stream};
	s->next = (s->next + 1) % RECENT;
	if (s->n < RECENT)
		s->n++;
}

int cuda_events_find(const struct cuda_events *ce, uint64_t ctx, uint64_t event,
                     uint64_t sync_corr, uint64_t *corr, uint64_t *stream)
{
	const struct slot *s = ce ? lookup(ce, key_of(ctx, event)) : NULL;
	const struct rec *best = NULL;
	for (unsigned i = 0; s && i < s->n; i++)
		if (s->r[i].corr < sync_corr && (!best || s->r[i].corr > best->corr))
			best = &s->r[i];
	if (!best)
		return 0;
	*corr = best->corr, *stream = best->stream;
	return 1;
}
