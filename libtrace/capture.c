// SPDX-License-Identifier: MIT
#include "capture.h"
#include "flight.h"
#include "clock.h"
#include "defs.h"
#include "log.h"
#include "record.h"
#include "thread.h"
#include "trace.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

_Atomic uint32_t ct_gate;
int ct_nvtx_watch;
void (*_Atomic ct_capture_hook)(int on);

static struct {
	pthread_mutex_t lock;
	int base_on;  /* capture mode says on */
	int timer_on; /* delay / duration say on */
	int step_on;  /* step schedule says on */
	unsigned long windows; /* capture windows opened so far (api / nvtx) */
	long step;	       /* current step, -1 before the first */
	uint64_t t0;	       /* process start on the tracer clock */
	uint64_t capture_domain;
	/* A forked child records while its parent does (its windows,
	 * steps, capture range), until it switches capture itself. */
	int follow;
	int parent_on; /* the parent's state, as last read */
} capture_st = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* This process's capture state (bit 0) in a page that the children it
 * forks share: mapped at its first fork, written at every switch. */
static _Atomic uint32_t *shown;
/* In a child that follows its parent: the parent's page; read by the
 * writer's pass and at the child's entries (ct_capture_follow). */
static _Atomic uint32_t *parent_shown;
static _Atomic int following;

static int step_active(long step)
{
	const struct ct_steps *s = &ct.cfg.steps;
	if (step < 0 || (unsigned long)step < s->skip_first)
		return 0;
	unsigned long k = (unsigned long)step - s->skip_first;
	unsigned long cycle = s->wait + s->warmup + s->active;
	if (s->repeat && k / cycle >= s->repeat)
		return 0;
	return k % cycle >= s->wait + s->warmup;
}

/* Writes a control record (capture switch, step) on the calling thread;
 * while capturing, after the thread caught up with the current window. */
static void control_record(unsigned kind, uint64_t value)
{
	struct ct_thread *t = ct_self();
	if (!t || t->tid < 0)
		return;
	uint32_t g = atomic_load_explicit(&ct_gate, memory_order_relaxed);
	if ((g & 1) && t->epoch != g)
		ct_thread_new_epoch(t, g);
	/* capture and step: ts, then the value (on, step) */
	_Static_assert(F_CAPTURE_N == 2 && F_CAPTURE_ON == 1 && F_STEP_N == 2 && F_STEP_STEP == 1,
	               "capture and step records differ");
	uint64_t f[F_STEP_N] = {[F_TS] = ct_stamp(), [F_STEP_STEP] = value};
	ct_rec_stamped(t, kind, f, F_STEP_N);
}

/* Recomputes the gate; records the switch on the calling thread. Returns
 * the state it switched to, or -1 when it did not switch. */
static int update_locked(void)
{
	int own = capture_st.base_on && capture_st.timer_on && capture_st.step_on;
	int on = capture_st.follow ? capture_st.parent_on : own;
	uint32_t g = atomic_load(&ct_gate);
	if ((int)(g & 1) == on)
		return -1;
	atomic_store(&ct_gate, ((g >> 1) + 1) << 1 | (uint32_t)on);
	if (shown)
		atomic_store(shown, (uint32_t)on);
	ct_debug("capture %s", on ? "on" : "off");
	control_record(CT_EV_CAPTURE, (uint64_t)on);
	/* A window opens inside a step: its mark opens that step's slice here
	 * (ProfilerStep#N from the window's start, as torch.profiler's from
	 * its start), not at the next step's mark. Not in a child that follows
	 * its parent (it has no steps of its own), nor before the first step
	 * of CUPTRACE_STEP_RANGE. */
	if (on && !capture_st.follow && capture_st.step >= 0)
		control_record(CT_EV_STEP, (uint64_t)capture_st.step);
	void (*hook)(int) = atomic_load(&ct_capture_hook);
	if (hook)
		hook(on);
	return on;
}

void ct_capture_init(void)
{
	const struct ct_config *c = &ct.cfg;
	capture_st.base_on = c->capture == CT_CAPTURE_ALWAYS;
	capture_st.timer_on = c->delay == 0;
	capture_st.step = c->step_range[0] ? -1 : 0;
	capture_st.step_on = c->steps.on ? step_active(capture_st.step) : 1;
	capture_st.windows = 0;
	capture_st.t0 = ct_now();
	ct_nvtx_watch = c->capture == CT_CAPTURE_NVTX || c->step_range[0];
	if (c->capture == CT_CAPTURE_NVTX && c->capture_domain[0])
		capture_st.capture_domain =
		    ct_domain_handle(c->capture_domain, strlen(c->capture_domain));
	int on = capture_st.base_on && capture_st.timer_on && capture_st.step_on;
	atomic_store(&ct_gate, on ? 3u : 2u);
}

/* The child switches capture itself (start, stop, a step that the
 * schedule counts, its capture range): its own settings decide from here
 * on, from the state it was forked with. */
static void own_control_locked(void)
{
	if (capture_st.follow) {
		capture_st.follow = 0;
		atomic_store(&following, 0);
	}
}

/* The parent's state as it is now, where this process follows it. */
static void read_parent_locked(void)
{
	if (capture_st.follow)
		capture_st.parent_on = (int)(atomic_load(parent_shown) & 1);
}

void ct_capture_follow(void)
{
	if (!atomic_load_explicit(&following, memory_order_relaxed))
		return;
	/* While following, the gate is the parent's state as last read. */
	if ((int)(atomic_load_explicit(parent_shown, memory_order_relaxed) & 1) == ct_capturing())
		return;
	pthread_mutex_lock(&capture_st.lock);
	read_parent_locked();
	update_locked();
	pthread_mutex_unlock(&capture_st.lock);
}

static int window_allowed(void)
{
	return !ct.cfg.capture_repeat || capture_st.windows < ct.cfg.capture_repeat;
}

void ct_capture_api(int on)
{
	if (!ct.active || ct.cfg.capture != CT_CAPTURE_API)
		return;
	pthread_mutex_lock(&capture_st.lock);
	own_control_locked();
	if (on && !capture_st.base_on && window_allowed()) {
		capture_st.base_on = 1;
		capture_st.windows++;
	} else if (!on) {
		capture_st.base_on = 0;
	}
	update_locked();
	pthread_mutex_unlock(&capture_st.lock);
}

void ct_capture_step(void)
{
	if (!ct.active)
		return;
	/* A step record closes the step before it (when that one was
	 * captured); the new one opens with it, or with the window that opens
	 * here (update_locked). */
	pthread_mutex_lock(&capture_st.lock);
	ct_fl_step(capture_st.step); /* CUPTRACE_FLIGHT_SLOW */
	capture_st.step++;
	if (ct_capturing())
		control_record(CT_EV_STEP, (uint64_t)capture_st.step);
	if (ct.cfg.steps.on) {
		own_control_locked();
		capture_st.step_on = step_active(capture_st.step);
		update_locked();
	}
	pthread_mutex_unlock(&capture_st.lock);
}

int ct_capture_has_timer(void)
{
	return ct.cfg.delay > 0 || ct.cfg.duration > 0;
}

int ct_capture_tick(uint64_t now)
{
	int timer = ct_capture_has_timer();
	if (!timer && !atomic_load_explicit(&following, memory_order_relaxed))
		return -1;
	double el = (double)(now - capture_st.t0) / 1e9;
	int on =
	    el >= ct.cfg.delay && (ct.cfg.duration == 0 || el < ct.cfg.delay + ct.cfg.duration);
	pthread_mutex_lock(&capture_st.lock);
	if (timer)
		capture_st.timer_on = on;
	read_parent_locked();
	int sw = update_locked(); /* (records nothing on this, the writer's, thread) */
	pthread_mutex_unlock(&capture_st.lock);
	return sw;
}

#define MAX_WATCHED 16
static _Atomic uint64_t watched_step[MAX_WATCHED], watched_capture[MAX_WATCHED];

static int same(const char *want, const char *s, size_t len)
{
	return want[0] && strlen(want) == len && !memcmp(want, s, len);
}

static void watch(_Atomic uint64_t *set, uint64_t h)
{
	for (int i = 0; i < MAX_WATCHED; i++) {
		uint64_t expect = 0;
		if (atomic_compare_exchange_strong(&set[i], &expect, h))
			return;
	}
}

static int watched(_Atomic uint64_t *set, uint64_t h)
{
	for (int i = 0; i < MAX_WATCHED; i++) {
		uint64_t v = atomic_load_explicit(&set[i], memory_order_relaxed);
		if (!v)
			return 0;
		if (v == h)
			return 1;
	}
	return 0;
}

void ct_capture_note_string(uint64_t h, const char *s, size_t len)
{
	if (same(ct.cfg.step_range, s, len))
		watch(watched_step, h);
	if (ct.cfg.capture == CT_CAPTURE_NVTX && same(ct.cfg.capture_name, s, len))
		watch(watched_capture, h);
}

int ct_capture_range_begins(const char *name, size_t len, uint64_t handle, uint64_t domain)
{
	const struct ct_config *c = &ct.cfg;
	ct_capture_follow();
	int by_handle = handle != 0;
	if (by_handle ? watched(watched_step, handle) : same(c->step_range, name, len))
		ct_capture_step();
	if (c->capture != CT_CAPTURE_NVTX)
		return 0;
	if (!(by_handle ? watched(watched_capture, handle) : same(c->capture_name, name, len)))
		return 0;
	if (c->capture_domain[0] && domain != capture_st.capture_domain)
		return 0;
	int opened = 0;
	pthread_mutex_lock(&capture_st.lock);
	own_control_locked();
	if (!capture_st.base_on && window_allowed()) {
		capture_st.base_on = 1;
		capture_st.windows++;
		opened = 1;
		update_locked();
	}
	pthread_mutex_unlock(&capture_st.lock);
	return opened;
}

void ct_capture_range_ends(void)
{
	pthread_mutex_lock(&capture_st.lock);
	capture_st.base_on = 0;
	update_locked();
	pthread_mutex_unlock(&capture_st.lock);
}

/* Whether the process switches capture by what a child of it does not do
 * (steps, start and stop, a capture range); a timer is the same in both
 * (it counts from the parent's start). */
static int switched_by_the_program(void)
{
	const struct ct_config *c = &ct.cfg;
	return c->capture != CT_CAPTURE_ALWAYS || c->steps.on || c->step_range[0];
}

void ct_capture_fork_prepare(void)
{
	pthread_mutex_lock(&capture_st.lock);
	if (!shown && switched_by_the_program()) {
		void *p = mmap(NULL, sizeof *shown, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			shown = p;
			atomic_store(shown, (uint32_t)ct_capturing());
		}
	}
}

void ct_capture_fork_parent(void)
{
	pthread_mutex_unlock(&capture_st.lock);
}

void ct_capture_fork_child(void)
{
	pthread_mutex_init(&capture_st.lock, NULL);
	/* The parent's page is the parent's; this process shows its own
	 * state to its children in a page of its own. */
	parent_shown = shown;
	shown = NULL;
	capture_st.follow = parent_shown != NULL;
	atomic_store(&following, capture_st.follow);
	if (capture_st.follow) {
		capture_st.parent_on = ct_capturing(); /* as the parent showed it at the fork */
		/* Every NVTX range the child opens reads the parent's state
		 * first (ct_capture_range_begins): the writer's pass alone
		 * would open the window up to 50 ms late, and a child that
		 * records nothing has no writer yet. */
		ct_nvtx_watch = 1;
	}
}
