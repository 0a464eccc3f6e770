// SPDX-License-Identifier: MIT
/* Allocation for the tools: running out of memory ends the command with
 * one line (the tools are not inside anyone's process). */
#ifndef CT_XALLOC_H
#define CT_XALLOC_H

#include "util/say.h"

#include <stdio.h>
#include <stdlib.h>

static inline void xoom(void)
{
	say("out of memory");
	exit(1);
}

static inline void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		xoom();
	return p;
}

static inline void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		xoom();
	return q;
}

#endif
