/* A daemon-like program: records, closes every descriptor above stderr
 * (the trace file's too), opens a file of its own, which gets the lowest
 * free number (the trace file's old one), records more and writes its own
 * data. The library must never write into that file.
 * usage: closefds OWN_FILE */
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
