// SPDX-License-Identifier: MIT
/* Changes directory before its first event (as a daemon's chdir("/") or a
 * script's os.chdir does): a relative CUPTRACE_OUTPUT still means where
 * the program started.
 * usage: chdir_away DIR */
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2 || chdir(argv[1]))
		return 2;
	for (int i = 0; i < 10; i++) {
		nvtxRangePushA("away");
		nvtxRangePop();
	}
	return 0;
}
