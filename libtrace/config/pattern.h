// SPDX-License-Identifier: MIT
/* CUPTRACE_OUTPUT pattern expansion: %r %l %w %h %p %q{VAR} %%. */
#ifndef CT_PATTERN_H
#define CT_PATTERN_H

#include <stddef.h>

struct ct_pattern_vals {
	long rank, local_rank, world_size; /* -1 = unknown, expands to 0 / 1 */
	const char *host;
	long pid;
	const char *(*getenv)(const char *name);
	/* When set: gets the name of the first %q{VAR} whose VAR is unset
	 * (which expands to nothing), or "" when there is none. */
	char *unset;
	size_t unset_len;
};

/* 0 when the pattern is well formed; otherwise -1 with a reason in why. */
int ct_pattern_check(const char *pat, char *why, size_t wlen);

/* Expands pat into out. Expanded values never add a path separator or a
 * "." / ".." component, and are cut to 200 bytes each, so the result stays
 * inside the directory the pattern itself names. A pattern ending in '/'
 * names a directory and gets the default file name appended. Returns -1
 * when the pattern is malformed or the result does not fit. */
int ct_pattern_expand(const char *pat, const struct ct_pattern_vals *v, char *out, size_t len);

/* The directory every process of a job shares (where the flight
 * recorder's marker goes, docs/flight-recorder.md): the pattern's
 * directories up to the first that uses %r, %l, %h or %p, expanded; "."
 * when there is none. -1 when malformed or too long. */
int ct_pattern_job_dir(const char *pat, const struct ct_pattern_vals *v, char *out, size_t len);

/* The name a pattern ending in '/' (a directory) gets in it. */
#define CT_PATTERN_DIR_DEFAULT "%h-%p.ctr"

#endif
