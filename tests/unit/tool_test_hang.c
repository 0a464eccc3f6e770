// SPDX-License-Identifier: MIT
/* The hang diagnosis (model/nccl_hang*.c) on model events built by hand:
 * what the integration test's harness cannot easily make — tails longer
 * than NH_KEEP, files that say nothing about completion, a rank that
 * stopped capturing, open ranges on several threads, a footer's end. */
#include "check.h"
#include "job/nccl_hang.h"

#include <string.h>

static struct nccl_comm comm_a = {.ctx = 1, .hash = 0xa, .name = "a", .nranks = 4};

static struct tfile file(int rank, uint64_t mono_end)
{
	struct tfile t;
	memset(&t, 0, sizeof t);
	t.rank = rank;
	t.shown_rank = rank;
	t.index = rank;
	t.f.final_footer = mono_end != 0;
	t.f.mono_end = mono_end;
	return t;
}

/* Rank `t` enters AllReduce #seq of comm_a at ts (done: the GPU finished it). */
static void op(struct nh *h, struct tfile *t, uint64_t seq, uint64_t ts, int done, uint64_t count)
{
	struct nccl_op o;
	memset(&o, 0, sizeof o);
	o.comm = &comm_a;
	strcpy(o.func, "AllReduce");
	strcpy(o.datatype, "ncclFloat32");
	o.count = count;
	o.has_seq = 1;
	o.seq = seq;
	o.api_start = ts;
	o.tid = 7;
	o.gpu_done = done;
	struct m_event ev;
	memset(&ev, 0, sizeof ev);
	ev.type = ME_SLICE, ev.cat = MC_NCCL;
	ev.ts = ts, ev.end = ts + 10;
	ev.nccl.op = &o;
	nh_event(h, t, &ev);
}

static void open_range(struct nh *h, struct tfile *t, int64_t tid, const char *name, uint64_t ts,
                       int depth)
{
	struct span s;
	memset(&s, 0, sizeof s);
	s.kind = SP_RANGE;
	s.tid = tid;
	s.ts = ts;
	s.end = ts + 1;
	s.name = (struct sref){CT_SREF_INLINE, name, (uint32_t)strlen(name)};
	s.depth = depth;
	s.unfinished = s.at_end = 1;
	struct m_event ev;
	memset(&ev, 0, sizeof ev);
	ev.type = ME_SLICE, ev.cat = MC_NVTX;
	ev.ts = s.ts, ev.end = s.end;
	ev.span = &s;
	nh_event(h, t, &ev);
}

static void capture(struct nh *h, struct tfile *t, int on, uint64_t ts)
{
	struct span s;
	memset(&s, 0, sizeof s);
	s.kind = SP_CAPTURE;
	s.id = (uint64_t)on;
	struct m_event ev;
	memset(&ev, 0, sizeof ev);
	ev.type = ME_INSTANT, ev.cat = MC_CAPTURE;
	ev.ts = ev.end = ts;
	ev.span = &s;
	nh_event(h, t, &ev);
}

static const struct nh_rank *row(const struct nh_result *r, int64_t rank)
{
	for (size_t i = 0; i < r->nr; i++)
		if (r->r[i].rank == rank)
			return &r->r[i];
	return NULL;
}

static void ranks_are(const struct nh_ranks *r, size_t n, const int64_t *v)
{
	CHECK_EQ(r->n, n);
	for (size_t i = 0; i < n && i < r->n; i++)
		CHECK_EQ(r->v[i], v[i]);
}

/* Tails longer than NH_KEEP: the old collectives are not held, and do
 * not look incomplete; the last one, unfinished on rank 1, is found. */
static void test_long_tails(void)
{
	struct nh *h = nh_new();
	struct tfile t0 = file(0, 0), t1 = file(1, 0);
	comm_a.nranks = 2;
	for (uint64_t s = 0; s < 3 * NH_KEEP; s++)
		op(h, &t0, s, 1000 * s, 1, 8);
	for (uint64_t s = 0; s < 3 * NH_KEEP; s++) /* #700's ends were lost */
		op(h, &t1, s, 1000 * s + 5, s + 1 < 3 * NH_KEEP && s != 700, 8);
	const struct nh_result *r = nh_finish(h);
	CHECK_EQ(r->colls, 6 * NH_KEEP);
	CHECK_EQ(r->nc, 1);
	CHECK_EQ(r->c[0].seq, 3 * NH_KEEP - 1);
	ranks_are(&r->c[0].entered, 2, (int64_t[]){0, 1});
	ranks_are(&r->c[0].missing, 0, NULL);
	ranks_are(&r->c[0].incomplete, 1, (int64_t[]){1});
	CHECK_EQ(row(r, 0)->state, NH_FINISHED);
	CHECK_EQ(row(r, 1)->state, NH_WAITING);
	CHECK_EQ(row(r, 1)->last_entered, 3 * NH_KEEP - 1);
	CHECK_EQ(row(r, 1)->last_completed, 3 * NH_KEEP - 2);
	CHECK_STR(r->verdict, "hang: AllReduce #767 of a 000000000000000a never completed on "
	                      "rank 1; every rank entered it");
	CHECK(r->partial == NULL);
	nh_free(h);
}

/* Rank 2's file never shows an end (no channel timers): by itself it says
 * nothing of completion, but #5, which rank 1 never reached, cannot have
 * completed anywhere: rank 2 waits in it too. Rank 3 stopped capturing before
 * the others entered #5: not missing. Rank 1 never arrived at #5 and was
 * in two ranges of the NCCL thread (another thread's deeper stack is not
 * the one); its footer says when the file ended. */
static void test_known_capture_ranges(void)
{
	struct nh *h = nh_new();
	comm_a.nranks = 4;
	struct tfile t0 = file(0, 0), t1 = file(1, 9000), t2 = file(2, 0), t3 = file(3, 0);
	for (uint64_t s = 0; s < 5; s++)
		op(h, &t0, s, 1000 * s, 1, 8);
	op(h, &t0, 5, 5000, 0, 8);
	for (uint64_t s = 0; s < 5; s++)
		op(h, &t1, s, 1000 * s, 1, 8);
	open_range(h, &t1, 99, "x", 4100, 0);
	open_range(h, &t1, 99, "y", 4200, 1);
	open_range(h, &t1, 99, "z", 4300, 2);
	open_range(h, &t1, 7, "save", 4600, 1); /* handed out innermost first */
	open_range(h, &t1, 7, "step", 4500, 0);
	for (uint64_t s = 0; s < 6; s++)
		op(h, &t2, s, 1000 * s, 0, s == 5 ? 16 : 8);
	for (uint64_t s = 0; s < 5; s++)
		op(h, &t3, s, 1000 * s, 1, 8);
	capture(h, &t3, 0, 4500);
	const struct nh_result *r = nh_finish(h);
	CHECK_EQ(r->nc, 1);
	CHECK_EQ(r->c[0].seq, 5);
	ranks_are(&r->c[0].entered, 2, (int64_t[]){0, 2});
	ranks_are(&r->c[0].missing, 1, (int64_t[]){1});
	ranks_are(&r->c[0].incomplete, 2, (int64_t[]){0, 2});
	CHECK_EQ(r->c[0].waited, -1); /* both files without a footer: how long is not known */
	CHECK_EQ(row(r, 1)->state, NH_NEVER_ARRIVED);
	CHECK_STR(row(r, 1)->ranges, "step > save");
	CHECK_EQ(row(r, 1)->open_for, 9000 - 4600);
	CHECK_EQ(row(r, 1)->cut, 0);
	CHECK_EQ(row(r, 2)->state, NH_WAITING);
	CHECK_EQ(row(r, 2)->seq, 5);
	CHECK_EQ(row(r, 2)->last_completed, -1);
	CHECK_EQ(row(r, 3)->state, NH_FINISHED);
	CHECK_EQ(row(r, 0)->open_for, -1);
	CHECK_EQ(r->nm, 2); /* rank 2 called #5 with another count */
	CHECK_STR(r->m[0].problem, "count");
	CHECK_EQ(r->m[0].count, 8);
	ranks_are(&r->m[0].ranks, 1, (int64_t[]){0});
	CHECK_EQ(r->m[1].count, 16);
	ranks_are(&r->m[1].ranks, 1, (int64_t[]){2});
	CHECK_STR(r->verdict, "hang: rank 1 never arrived at AllReduce #5 of a 000000000000000a; "
	                      "ranks 0, 2 waited in it; rank 1 was in step > save for 4.4 us; "
	                      "rank 3 had stopped recording before it (not judged); "
	                      "counts differ: 8 on rank 0, 16 on rank 2");
	nh_free(h);
}

/* A job stopped by its time limit while ranks waited in a collective for
 * a late rank: files with footers say how long they had been in it;
 * under NH_MIN_WAIT_NS that is no hang. At 2 s it is one. */
static void test_stopped_not_stuck(void)
{
	for (int slow = 0; slow < 2; slow++) {
		struct nh *h = nh_new();
		comm_a.nranks = 2;
		uint64_t in = 5000, end = in + (slow ? 2000000000u : 40000000u);
		struct tfile t0 = file(0, end), t1 = file(1, end);
		op(h, &t0, 0, 1000, 1, 8);
		op(h, &t0, 1, in, 0, 8); /* rank 1 had not come yet */
		op(h, &t1, 0, 1000, 1, 8);
		const struct nh_result *r = nh_finish(h);
		CHECK_EQ(r->nc, 1);
		CHECK_EQ(r->c[0].waited, (int64_t)(end - in));
		if (slow)
			CHECK_STR(r->verdict, "hang: rank 1 never arrived at AllReduce #1 of a "
			                      "000000000000000a; rank 0 waited in it");
		else
			CHECK_STR(r->verdict, "no hang: the traces end while rank 0 was in AllReduce #1 of a "
			                      "000000000000000a for at most 40.0 ms (under 1.0 s: the job "
			                      "was stopped while it ran)");
		nh_free(h);
	}
}

/* Files of 2 of the 4 ranks: the others are not judged, and it says so. */
static void test_partial(void)
{
	struct nh *h = nh_new();
	comm_a.nranks = 4;
	struct tfile t0 = file(0, 0), t1 = file(1, 0);
	op(h, &t0, 0, 100, 1, 8);
	op(h, &t1, 0, 100, 1, 8);
	op(h, &t1, 1, 200, 0, 8); /* (finished, it would say rank 0 came: its records were lost) */
	const struct nh_result *r = nh_finish(h);
	CHECK_EQ(r->nc, 1); /* rank 0 never arrived at #1; ranks 2 and 3 are not judged */
	ranks_are(&r->c[0].missing, 1, (int64_t[]){0});
	CHECK_STR(r->partial, "2 of the 4 ranks of a 000000000000000a had a file given "
	                      "(1 communicator short of files): the others are not judged");
	nh_free(h);
}

/* Files of 2 of 4 ranks, both stuck in #1: "every rank entered it" is
 * not said of ranks that have no file. */
static void test_partial_verdict(void)
{
	struct nh *h = nh_new();
	comm_a.nranks = 4;
	struct tfile t0 = file(0, 0), t1 = file(1, 0);
	op(h, &t0, 0, 100, 1, 8);
	op(h, &t0, 1, 200, 0, 8);
	op(h, &t1, 0, 100, 1, 8);
	op(h, &t1, 1, 200, 0, 8);
	const struct nh_result *r = nh_finish(h);
	CHECK_STR(r->verdict, "hang: AllReduce #1 of a 000000000000000a never completed on ranks "
	                      "0, 1; every rank with a file entered it");
	nh_free(h);
}

/* t defines comm_a (its calls' track is announced at the definition). */
static void member(struct nh *h, struct tfile *t)
{
	struct m_track tr;
	memset(&tr, 0, sizeof tr);
	tr.kind = MT_NCCL;
	tr.comm = &comm_a;
	struct m_event ev;
	memset(&ev, 0, sizeof ev);
	ev.type = ME_TRACK;
	ev.track = &tr;
	nh_event(h, t, &ev);
}

/* A forked child (a DataLoader worker) repeats its parent's definitions in
 * its file: it is no member of its own (the verdict said "ranks 0, 0, 1;
 * every rank entered it" of 2 ranks' files out of 4). */
static void test_forked_child_is_no_member(void)
{
	struct nh *h = nh_new();
	comm_a.nranks = 4;
	struct tfile t0 = file(0, 0), w0 = file(0, 0), t1 = file(1, 0);
	w0.f.h.forked_from = 1234;
	member(h, &t0);
	op(h, &t0, 0, 100, 1, 8);
	op(h, &t0, 1, 200, 0, 8);
	member(h, &w0);
	member(h, &t1);
	op(h, &t1, 0, 100, 1, 8);
	op(h, &t1, 1, 200, 0, 8);
	const struct nh_result *r = nh_finish(h);
	CHECK_STR(r->verdict, "hang: AllReduce #1 of a 000000000000000a never completed on ranks "
	                      "0, 1; every rank with a file entered it");
	CHECK_STR(r->partial, "2 of the 4 ranks of a 000000000000000a had a file given "
	                      "(1 communicator short of files): the others are not judged");
	CHECK_EQ(r->nr, 2);
	nh_free(h);
}

/* The wait is from the first waiting rank's entry, whatever its file: rank
 * 0's (cut) entered 10 s before rank 1's footer; rank 1 itself only 0.5 s
 * (not "no hang ... for at most 500.0 ms"). */
static void test_wait_from_the_first_entry(void)
{
	struct nh *h = nh_new();
	comm_a.nranks = 3;
	struct tfile t0 = file(0, 0), t1 = file(1, 10500000000u), t2 = file(2, 10500000000u);
	op(h, &t0, 0, 1000, 1, 8);
	op(h, &t0, 1, 2000, 0, 8);
	op(h, &t1, 0, 1000, 1, 8);
	op(h, &t1, 1, 10000000000u, 0, 8);
	op(h, &t2, 0, 1000, 1, 8);
	const struct nh_result *r = nh_finish(h);
	CHECK_EQ(r->c[0].waited, 10500000000 - 2000);
	CHECK(!strncmp(r->verdict, "hang: rank 2 never arrived at AllReduce #1", 42));
	nh_free(h);
}

/* A healthy job where rank 3 was SIGKILLed: its file lost its last
 * records, the others finished #1 (so rank 3 came): no hang (it said
 * "rank 3 never arrived"). Where ranks called #0 with different counts
 * and nothing ever ended (the first collective): a mismatch, not "no
 * collective left incomplete". */
static void test_killed_rank_and_first_mismatch(void)
{
	struct nh *h = nh_new();
	comm_a.nranks = 2;
	struct tfile t0 = file(0, 9000), t3 = file(1, 0);
	op(h, &t0, 0, 100, 1, 8);
	op(h, &t0, 1, 200, 1, 8);
	op(h, &t3, 0, 100, 1, 8);
	const struct nh_result *r = nh_finish(h);
	CHECK_EQ(r->nc, 0);
	CHECK(r->verdict == NULL);
	nh_free(h);
	h = nh_new();
	comm_a.nranks = 2;
	struct tfile a = file(0, 9000), b = file(1, 9000);
	op(h, &a, 0, 100, 0, 8);
	op(h, &b, 0, 100, 0, 9);
	r = nh_finish(h);
	CHECK_STR(r->verdict, "mismatch: on a 000000000000000a, AllReduce #0 was called with "
	                      "different counts: 8 on rank 0, 9 on rank 1");
	nh_free(h);
}

/* The user's CUPTRACE_HANG_TIMEOUT is the threshold where set (0.2 s:
 * 0.5 s of waiting is a hang), and a communicator the watchdog flagged
 * is hung whatever the wait. */
static void test_the_users_timeout_and_the_watchdog(void)
{
	for (int how = 0; how < 2; how++) {
		struct nh *h = nh_new();
		comm_a.nranks = 2;
		uint64_t in = 5000, end = in + (how ? 40000000u : 500000000u);
		struct tfile t0 = file(0, end), t1 = file(1, end);
		char cfg[] = "CUPTRACE_HANG_TIMEOUT=0.2\n";
		if (!how)
			t0.f.h.config = cfg;
		op(h, &t0, 0, 1000, 1, 8);
		op(h, &t0, 1, in, 0, 8);
		if (how) { /* the watchdog's hang_suspected on comm_a */
			struct m_event ev;
			memset(&ev, 0, sizeof ev);
			ev.type = ME_INSTANT, ev.cat = MC_HANG;
			ev.ts = ev.end = in + 1000;
			ev.hang.comm = &comm_a;
			nh_event(h, &t0, &ev);
		}
		op(h, &t1, 0, 1000, 1, 8);
		const struct nh_result *r = nh_finish(h);
		CHECK(r->verdict && !strncmp(r->verdict, "hang: rank 1 never arrived", 26));
		nh_free(h);
	}
}

static void test_nothing(void)
{
	struct nh *h = nh_new();
	const struct nh_result *r = nh_finish(h);
	CHECK(r->verdict == NULL);
	CHECK_EQ(r->nc + r->nr + r->nm + r->colls, 0);
	nh_free(h);
}

int main(void)
{
	test_long_tails();
	test_known_capture_ranges();
	test_partial();
	test_stopped_not_stuck();
	test_partial_verdict();
	test_forked_child_is_no_member();
	test_wait_from_the_first_entry();
	test_killed_rank_and_first_mismatch();
	test_the_users_timeout_and_the_watchdog();
	test_nothing();
	puts("tool_test_hang: ok");
	return 0;
}
