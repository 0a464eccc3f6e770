/* Allocation for the tools: running out of memory ends the command with
 * one line (the tools are not inside anyone's process). */
#ifndef CT_XALLOC_H
#define CT_XALLOC_H

#include <stdio.h>
#include <stdlib.h>

static inline void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fprintf(stderr, "cuptrace: out of memory\n");
		exit(1);
	}
	return q;
}

#endif
