// SPDX-License-Identifier: MIT
#include "pattern.h"

#include <stdio.h>
#include <string.h>

#define VALUE_MAX 200

int ct_pattern_check(const char *p, char *why, size_t wlen)
{
	for (; *p; p++) {
		if (*p != '%')
			continue;
		char t = *++p;
		switch (t) {
		case 'r': case 'l': case 'w': case 'h': case 'p': case '%':
			break;
		case 'q': {
			if (p[1] != '{')
				return snprintf(why, wlen, "%%q needs {VAR}"), -1;
			const char *close = strchr(p + 2, '}');
			if (!close)
				return snprintf(why, wlen, "unclosed %%q{"), -1;
			if (close == p + 2)
				return snprintf(why, wlen, "empty %%q{}"), -1;
			p = close;
			break;
		}
		case 0:
			return snprintf(why, wlen, "pattern ends with a lone %%"), -1;
		default:
			return snprintf(why, wlen, "unknown token %%%c (use %%r %%l %%w %%h %%p %%q{VAR} %%%%)",
					t), -1;
		}
	}
	return 0;
}

/* Appends a value made safe for use inside one path component. */
static int put_value(char *out, size_t len, size_t *o, const char *val)
{
	size_t n = strnlen(val, VALUE_MAX);
	int only_dots = n > 0;
	for (size_t i = 0; i < n; i++)
		if (val[i] != '.')
			only_dots = 0;
	for (size_t i = 0; i < n; i++) {
		char c = val[i];
		if (c == '/' || c == '\0' || (unsigned char)c < 0x20 || (only_dots && c == '.'))
			c = '_';
		if (*o + 1 >= len)
			return -1;
		out[(*o)++] = c;
	}
	return 0;
}

/* A component that holds an expanded value must not end up "." or "..":
 * "x/..%q{UNSET}/y" would otherwise climb out of x/. */
static void guard_component(char *out, size_t start, size_t end, int had_value)
{
	if (!had_value || end - start == 0 || end - start > 2)
		return;
	for (size_t i = start; i < end; i++)
		if (out[i] != '.')
			return;
	for (size_t i = start; i < end; i++)
		out[i] = '_';
}

static int expand(const char *p, const struct ct_pattern_vals *v, char *out, size_t len, size_t *o)
{
	char num[32];
	size_t comp = *o; /* start of the current component in out */
	int had_value = 0;
	for (; *p; p++) {
		if (*p != '%') {
			if (*o + 1 >= len)
				return -1;
			if (*p == '/') {
				guard_component(out, comp, *o, had_value);
				comp = *o + 1;
				had_value = 0;
			}
			out[(*o)++] = *p;
			continue;
		}
		const char *val = num;
		switch (*++p) {
		case 'r': snprintf(num, sizeof num, "%ld", v->rank < 0 ? 0 : v->rank); break;
		case 'l': snprintf(num, sizeof num, "%ld", v->local_rank < 0 ? 0 : v->local_rank); break;
		case 'w': snprintf(num, sizeof num, "%ld", v->world_size < 1 ? 1 : v->world_size); break;
		case 'p': snprintf(num, sizeof num, "%ld", v->pid); break;
		case 'h': val = v->host ? v->host : "unknown"; break;
		case '%': val = "%"; break;
		case 'q': {
			const char *close = strchr(p + 2, '}');
			char name[256];
			size_t n = (size_t)(close - (p + 2));
			if (n >= sizeof name)
				n = sizeof name - 1;
			memcpy(name, p + 2, n);
			name[n] = 0;
			val = v->getenv ? v->getenv(name) : NULL;
			if (!val && v->unset && v->unset_len && !v->unset[0])
				snprintf(v->unset, v->unset_len, "%s", name);
			if (!val)
				val = "";
			p = close;
			break;
		}
		default:
			return -1;
		}
		if (put_value(out, len, o, val))
			return -1;
		had_value = 1;
	}
	guard_component(out, comp, *o, had_value);
	return 0;
}

int ct_pattern_expand(const char *pat, const struct ct_pattern_vals *v, char *out, size_t len)
{
	char why[128];
	size_t o = 0;
	if (v->unset && v->unset_len)
		v->unset[0] = 0;
	if (len == 0 || ct_pattern_check(pat, why, sizeof why))
		return -1;
	if (expand(pat, v, out, len, &o))
		return -1;
	if (o > 0 && out[o - 1] == '/' && expand(CT_PATTERN_DIR_DEFAULT, v, out, len, &o))
		return -1;
	out[o] = 0;
	return 0;
}

/* The job's directory: the pattern's directories up to the first one
 * named with a placeholder that differs between processes (%r %l %h %p),
 * expanded; "." when the first one already does. */
int ct_pattern_job_dir(const char *pat, const struct ct_pattern_vals *v, char *out, size_t len)
{
	char why[128], dir[4096];
	if (len < 2 || ct_pattern_check(pat, why, sizeof why))
		return -1;
	size_t keep = 0; /* bytes of pat: the directories kept */
	for (size_t i = 0; pat[i]; i++) {
		if (pat[i] == '/')
			keep = i ? i : 1; /* "/x": the root */
		else if (pat[i] == '%' && strchr("rlhp", pat[i + 1]))
			break;
		else if (pat[i] == '%' && pat[i + 1])
			i++; /* %% %w %q{..}: the same for every process */
	}
	if (!keep) {
		snprintf(out, len, ".");
		return 0;
	}
	if (keep >= sizeof dir)
		return -1;
	memcpy(dir, pat, keep);
	dir[keep] = 0;
	size_t o = 0;
	if (expand(dir, v, out, len, &o))
		return -1;
	out[o] = 0;
	return 0;
}
