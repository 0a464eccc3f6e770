// SPDX-License-Identifier: MIT
/* model/cuda_events.c: a sync finds the latest record of its event made
 * before its own call (lower correlation id), whatever order the records
 * arrive in; events of other contexts stay apart; many events at once
 * keep working (the table is bounded: old events are forgotten, never
 * confused with others). */
#include "check.h"
#include "model/cuda_events.h"

int main(void)
{
	uint64_t corr = 0, stream = 0;
	CHECK(!cuda_events_find(NULL, 1, 1, 100, &corr, &stream));
	struct cuda_events *ce = cuda_events_new();
	CHECK(!cuda_events_find(ce, 1, 5, 100, &corr, &stream));

	/* event 5 of context 1 recorded by calls 10 (stream 7) and 20 (8) */
	cuda_events_record(ce, 1, 5, 10, 7);
	cuda_events_record(ce, 1, 5, 20, 8);
	CHECK(!cuda_events_find(ce, 1, 5, 9, &corr, &stream)); /* before any record */
	CHECK(cuda_events_find(ce, 1, 5, 15, &corr, &stream));
	CHECK_EQ(corr, 10);
	CHECK_EQ(stream, 7);
	CHECK(cuda_events_find(ce, 1, 5, 21, &corr, &stream));
	CHECK_EQ(corr, 20);
	CHECK_EQ(stream, 8);
	/* the same event id in another context is another event */
	CHECK(!cuda_events_find(ce, 2, 5, 21, &corr, &stream));
	cuda_events_record(ce, 2, 5, 30, 9);
	CHECK(cuda_events_find(ce, 2, 5, 31, &corr, &stream));
	CHECK_EQ(corr, 30);
	CHECK(cuda_events_find(ce, 1, 5, 31, &corr, &stream));
	CHECK_EQ(corr, 20);

	/* records that reach the file after a later one still count */
	cuda_events_record(ce, 1, 6, 50, 3);
	cuda_events_record(ce, 1, 6, 40, 4);
	CHECK(cuda_events_find(ce, 1, 6, 45, &corr, &stream));
	CHECK_EQ(corr, 40);
	CHECK_EQ(stream, 4);
	CHECK(cuda_events_find(ce, 1, 6, 55, &corr, &stream));
	CHECK_EQ(corr, 50);

	/* 100,000 events recorded twice each: every answer given is right */
	long found = 0;
	for (uint64_t e = 1; e <= 100000; e++) {
		cuda_events_record(ce, 3, e, 1000000 + 2 * e, e % 13);
		cuda_events_record(ce, 3, e, 1000001 + 2 * e, e % 17);
	}
	for (uint64_t e = 1; e <= 100000; e++)
		if (cuda_events_find(ce, 3, e, 1000001 + 2 * e, &corr, &stream)) {
			CHECK_EQ(corr, 1000000 + 2 * e);
			CHECK_EQ(stream, e % 13);
			found++;
		}
	CHECK(found >= 1000); /* the most recent events at least */
	CHECK(cuda_events_find(ce, 3, 100000, 1000001 + 200000, &corr, &stream));
	cuda_events_free(ce);
	printf("tool_test_cuda_events: ok (%ld of 100000 events still known)\n", found);
	return 0;
}
