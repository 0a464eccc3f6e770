// SPDX-License-Identifier: MIT
#include "orphan.h"
#include "io.h"
#include "trace.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A task's state letter and whether its name is one of ours ("cuptrace-"),
 * from /proc/self/task/TID/stat: "tid (comm) S ...". 0 when unreadable. */
static char task_state(const char *tid, int *ours)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/self/task/%s/stat", tid);
	int fd = ct_open_high(path, O_RDONLY, 0);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *open_ = strchr(buf, '('), *close_ = strrchr(buf, ')');
	if (!open_ || !close_ || close_[1] != ' ')
		return 0;
	*ours = !strncmp(open_ + 1, "cuptrace-", 9);
	return close_[2];
}

int ct_program_gone(void)
{
	char me[24];
	int ours = 0;
	snprintf(me, sizeof me, "%d", ct.pid);
	if (task_state(me, &ours) != 'Z') /* main runs (or /proc is not there) */
		return 0;
	int dfd = ct_open_high("/proc/self/task", O_RDONLY | O_DIRECTORY, 0);
	DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	int live = 0;
	struct dirent *e;
	while (!live && (e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		char st = task_state(e->d_name, &ours);
		live = st && st != 'Z' && st != 'X' && !ours;
	}
	closedir(d);
	return !live;
}
