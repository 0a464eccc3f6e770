// SPDX-License-Identifier: MIT
/* Loads the MPI program of a plugin (mpi_plugin.c) with dlopen(RTLD_LOCAL)
 * and runs it: no MPI is linked into this program, nor in the global
 * scope. usage: mpi_dlopen PLUGIN.so */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
	int (*run)(void) = h ? (int (*)(void))dlsym(h, "plugin_run") : NULL;
	if (!run) {
		fprintf(stderr, "mpi_dlopen: %s\n", dlerror());
		return 2;
	}
	return run();
}
