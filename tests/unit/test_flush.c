// SPDX-License-Identifier: MIT
/* Flush requests to the writer (libtrace/writer.c, ct_writer_flush), as
 * signal handlers, exec and _exit make them: a request that timed out must
 * not answer the next one. The writer is held up by taking the definitions
 * lock it needs on each pass (as the fork handlers do). */
#include "check.h"
#include "dec.h"
#include "defs.h"
#include "record.h"
#include "thread.h"
#include "trace.h"
#include "writer.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static sem_t held;

/* Holds the writer up for 300 ms (from its own thread: a mutex is unlocked
 * by the thread that locked it). */
static void *hold_writer(void *arg)
{
	(void)arg;
	ct_defs_fork_prepare();
	sem_post(&held);
	usleep(300 * 1000);
	ct_defs_fork_parent();
	return NULL;
}

static pthread_t hold(void)
{
	pthread_t th;
	CHECK_EQ(pthread_create(&th, NULL, hold_writer, NULL), 0);
	while (sem_wait(&held))
		;
	return th;
}

int main(void)
{
	char dir[] = "/tmp/ct_test_flush.XXXXXX";
	CHECK(mkdtemp(dir));
	ct.active = 1;
	ct.pid = (int)getpid();
	ct.rank.source = "";
	snprintf(ct.cfg.output, sizeof ct.cfg.output, "%s/t.ctr", dir);
	CHECK_EQ(ct_pool_init(8 * CT_CHUNK_SIZE), 0);
	sem_init(&held, 0, 0);
	struct ct_thread *t = ct_thread_register();
	CHECK(t);
	ct_writer_ensure();
	ct_rec_thread_name(t, 1, "one", 3, 1);
	CHECK_EQ(ct_writer_flush(CT_FLUSH_BLOCK, 0, 0, 5000), 0);

	/* A request that times out while the writer is held up... */
	pthread_t th = hold();
	ct_rec_thread_name(t, 2, "two", 3, 1);
	CHECK_EQ(ct_writer_flush(CT_FLUSH_BLOCK, 0, 0, 100), -1);
	pthread_join(th, NULL);
	usleep(200 * 1000); /* ...is served late */

	/* The next request waits for its own answer: the footer is there
	 * when it returns. */
	th = hold();
	ct_rec_thread_name(t, 3, "three", 5, 1);
	uint64_t t0 = ms_now();
	CHECK_EQ(ct_writer_flush(CT_FLUSH_FOOTER, CT_END_SIGNAL, 15, 5000), 0);
	uint64_t waited = ms_now() - t0;
	/* held 300 ms; a footer makes the writer impatient: it takes the
	 * pass without the definitions after 200 ms (defs.c) */
	CHECK(waited >= 150);
	pthread_join(th, NULL);

	char path[4200];
	snprintf(path, sizeof path, "%s/t.ctr", dir);
	struct ct_file f;
	CHECK_EQ(ct_file_open(&f, path), 0);
	struct ct_event ev;
	while (ct_file_next(&f, &ev) == 1)
		;
	CHECK(f.have_footer);
	CHECK_EQ(f.end_how, CT_END_SIGNAL);
	CHECK_EQ(f.end_detail, 15);
	CHECK_EQ(f.events[CT_EV_THREAD_NAME], 4); /* three, and the thread's own */
	ct_file_close(&f);

	/* Normal exit: a last footer that says so. */
	ct_writer_finish(0);
	CHECK_EQ(ct_file_open(&f, path), 0);
	while (ct_file_next(&f, &ev) == 1)
		;
	CHECK_EQ(f.status, CT_CLEAN);
	CHECK_EQ(f.end_how, CT_END_EXIT);
	ct_file_close(&f);
	unlink(path);
	rmdir(dir);
	printf("test_flush: ok\n");
	return 0;
}
