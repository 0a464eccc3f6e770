// SPDX-License-Identifier: MIT
/* Allocation for the tools: running out of memory ends the command with
 * one line (the tools are not inside anyone's process). A raw malloc is
 * left where the code takes the failure on purpose (an output that fails
 * with ENOMEM and removes its temporary file, a buffer it can do without),
 * with a comment saying so. */
#ifndef CT_XALLOC_H
#define CT_XALLOC_H

#include "util/say.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void xoom(void)
{
	say("out of memory");
	exit(1);
}

static inline void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		xoom();
	return p;
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

static inline char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		xoom();
	return d;
}

static inline char *xstrndup(const char *s, size_t n)
{
	char *d = strndup(s, n);
	if (!d)
		xoom();
	return d;
}

#endif
