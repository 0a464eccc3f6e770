// SPDX-License-Identifier: MIT
/* A daemon-like program: records, closes every descriptor above stderr
 * (the trace file's too), opens a file of its own, which gets the lowest
 * free number (the trace file's old one), records more and writes its own
 * data. The library must never write into that file.
 * usage: closefds OWN_FILE
 *        closefds OWN_FILE std   first closes stdin, stdout and stderr and
 *        puts OWN_FILE on all three (a daemon), then records: the library's
 *        messages must not go into OWN_FILE */
#include <dlfcn.h>
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <unistd.h>

static void ranges(const char *name, int n)
{
	for (int i = 0; i < n; i++) {
		nvtxRangePushA(name);
		nvtxRangePop();
	}
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *(*flush)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "cuptrace_flush");
	if (argc > 2) {
		for (int fd = 0; fd < 3; fd++)
			close(fd);
		int f = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (f != 0 || dup2(f, 1) != 1 || dup2(f, 2) != 2)
			return 1;
		ranges("daemon", 100);
		if (flush)
			flush(); /* the first block: the file, and any message, now */
		return write(2, "my own data\n", 12) == 12 ? 0 : 1;
	}
	ranges("before", 100);
	if (flush)
		flush(); /* the trace file is open and holds a block */
	for (int fd = 3; fd < 4096; fd++)
		close(fd);
	int f = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (f < 0)
		return 1;
	ranges("after", 100);
	if (flush)
		flush(); /* the library writes now, while f is open */
	if (write(f, "my own data\n", 12) != 12)
		return 1;
	close(f);
	printf("own file on fd %d\n", f);
	return 0;
}
