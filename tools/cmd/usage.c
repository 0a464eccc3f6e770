/* The usage tail shared by every command (cmd.h). */
#include "cmd/cmd.h"

int cmd_usage(int c, void (*help)(FILE *))
{
	help(c == 'h' ? stdout : stderr);
	return c == 'h' ? 0 : 2;
}
