#include "cmd.h"
#include <stdio.h>
int cmd_stats(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "cuptrace stats: not yet\n");
	return 2;
}
