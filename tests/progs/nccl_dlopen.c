// SPDX-License-Identifier: MIT
/* Loads libnccl_poll.so (tests/progs/nccl_poll.c as a plugin, linked
 * against the fake libnccl.so.2) with dlopen(RTLD_LOCAL), as Python loads
 * PyTorch's libraries, and runs it with the arguments that follow: NCCL is
 * then in no scope but the plugin's. usage: nccl_dlopen PLUGIN.so ARGS... */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
	int (*run)(int, char **) = h ? (int (*)(int, char **))dlsym(h, "nccl_poll_main") : NULL;
	if (!run) {
		fprintf(stderr, "nccl_dlopen: %s\n", dlerror());
		return 2;
	}
	return run(argc - 1, argv + 1);
}
