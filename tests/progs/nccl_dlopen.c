// SPDX-License-Identifier: MIT
/* Loads libnccl_poll.so (tests/progs/nccl_poll.c as a plugin, linked
 * against the fake libnccl.so.2) with dlopen(RTLD_LOCAL), as Python loads
 * PyTorch's libraries, and runs it with the arguments that follow: NCCL is
 * then in no scope but the plugin's. With $NCCL_DLOPEN_GLOBAL, that library
 * is loaded first with RTLD_GLOBAL (libcuptrace.so as the Python package's
 * activate() loads it). usage: nccl_dlopen PLUGIN.so ARGS... */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	const char *first = getenv("NCCL_DLOPEN_GLOBAL");
	if (first && !dlopen(first, RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "nccl_dlopen: %s\n", dlerror());
		return 2;
	}
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
	int (*run)(int, char **) = h ? (int (*)(int, char **))dlsym(h, "nccl_poll_main") : NULL;
	if (!run) {
		fprintf(stderr, "nccl_dlopen: %s\n", dlerror());
		return 2;
	}
	return run(argc - 1, argv + 1);
}
