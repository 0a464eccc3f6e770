// SPDX-License-Identifier: MIT
/* The handler runs async-signal-safe code only: it reads slots whose path
 * was written before the slot was marked busy (release), unlinks them, then
 * lets the signal take its default action. */
#include "util/tmp_guard.h"

#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 64

static struct {
	atomic_int busy; /* 0 free, 1 being filled, 2 guarded */
	int dir;	 /* a directory: removed if empty, after the files */
	char path[PATH_MAX + 64];
} slot[SLOTS];

static void on_signal(int sig)
{
	for (int dirs = 0; dirs < 2; dirs++)
		for (int i = 0; i < SLOTS; i++)
			if (atomic_load_explicit(&slot[i].busy, memory_order_acquire) == 2 &&
			    slot[i].dir == dirs)
				(void)(dirs ? rmdir(slot[i].path) : unlink(slot[i].path));
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		struct sigaction sa, old;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		/* A signal the caller ignores stays ignored (nohup, a test's
		 * file size limit): the write then fails with an error. */
		if (!sigaction(sigs[i], NULL, &old) && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

static int guard(const char *path, int dir)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	if (strlen(path) >= sizeof slot[0].path)
		return -1;
	pthread_once(&once, install);
	for (int i = 0; i < SLOTS; i++) {
		int free_ = 0;
		if (atomic_compare_exchange_strong(&slot[i].busy, &free_, 1)) {
			strcpy(slot[i].path, path);
			slot[i].dir = dir;
			atomic_store_explicit(&slot[i].busy, 2, memory_order_release);
			return i;
		}
	}
	return -1;
}

int tmp_guard(const char *path)
{
	return guard(path, 0);
}

int tmp_guard_dir(const char *path)
{
	return guard(path, 1);
}

void tmp_unguard(int i)
{
	if (i >= 0 && i < SLOTS)
		atomic_store_explicit(&slot[i].busy, 0, memory_order_release);
}

int tmp_mkdir(const char *dir, int *guard_slot)
{
	*guard_slot = -1;
	if (!mkdir(dir, 0777)) {
		*guard_slot = tmp_guard_dir(dir);
		if (*guard_slot < 0)
			*guard_slot = SLOTS; /* created, not guarded */
		return 0;
	}
	return errno == EEXIST ? 0 : -1;
}

void tmp_mkdir_done(const char *dir, int guard_slot, int keep)
{
	if (guard_slot < 0)
		return;
	tmp_unguard(guard_slot);
	if (!keep)
		rmdir(dir); /* only when empty */
}
