// SPDX-License-Identifier: MIT
/* The CUPTRACE_* variables of an environment checked by name: unknown
 * ones (with the closest known name) and set ones that have no effect. */
#include "config.h"

#include <stdio.h>
#include <string.h>

/* Variables that the library does not read, known all the same (no
 * "unknown variable" warning): where the Python package builds its C++
 * modules for torch (python_shim/cuptrace/_torchbuild.py), and whether
 * the cuptrace tool under a launcher is a rank of an MPI job of its own
 * (tools/util/mpirt.c). */
static const char *const package_vars[] = {"CUPTRACE_TORCH_CACHE", "CUPTRACE_TOOL_MPI", NULL};

static unsigned edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 99;
	unsigned row[64];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
			unsigned best = diag + cost;
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* name is in the comma-separated list (NULL: empty). */
static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		size_t k = strcspn(p, ",");
		if (k == n && !memcmp(p, name, n))
			return 1;
		p += k + (p[k] ? 1 : 0);
	}
	return 0;
}

void ct_config_check_names(char *const *env, void (*warn)(const char *, const char *))
{
	const char *done = NULL; /* names the launcher warned about already */
	for (char *const *e = env; e && *e; e++)
		if (!strncmp(*e, CT_WARNED_VAR "=", sizeof CT_WARNED_VAR))
			done = *e + sizeof CT_WARNED_VAR;
	for (; env && *env; env++) {
		if (strncmp(*env, "CUPTRACE_", 9))
			continue;
		char name[128];
		size_t n = strcspn(*env, "=");
		if (n >= sizeof name)
			n = sizeof name - 1;
		memcpy(name, *env, n);
		name[n] = 0;
		if (listed(done, name))
			continue;
		const char *best = NULL;
		unsigned bestd = ~0u;
		int known = 0;
		for (int i = 0; ct_config_vars[i]; i++) {
			if (!strcmp(name, ct_config_vars[i])) {
				known = 1;
				break;
			}
			unsigned d = edit_distance(name, ct_config_vars[i]);
			if (d < bestd)
				bestd = d, best = ct_config_vars[i];
		}
		for (int i = 0; !known && package_vars[i]; i++)
			known = !strcmp(name, package_vars[i]);
		if (!known)
			warn(name, best);
	}
}

void ct_config_check_unused(const struct ct_config *c, char *const *env,
			    void (*warn)(const char *name, const char *why))
{
	const char *done = NULL;
	for (char *const *e = env; e && *e; e++)
		if (!strncmp(*e, CT_WARNED_VAR "=", sizeof CT_WARNED_VAR))
			done = *e + sizeof CT_WARNED_VAR;
	if (c->hang_timeout > 0 && !c->hang_default && !(c->sources & (CT_SRC_NCCL | CT_SRC_MPI)) &&
	    !listed(done, "CUPTRACE_HANG_TIMEOUT")) {
		char src[128], why[256];
		ct_sources_str(c->sources, src, sizeof src);
		snprintf(why, sizeof why,
			 "has no effect: the watchdog watches NCCL operations and MPI "
			 "collectives, and the nccl and mpi sources are off (CUPTRACE_TRACE=%s)",
			 src[0] ? src : "none");
		warn("CUPTRACE_HANG_TIMEOUT", why);
	}
	for (char *const *e = env; !(c->flight > 0) && e && *e; e++) {
		char name[64];
		size_t n = strcspn(*e, "=");
		if (n < 16 || n >= sizeof name || strncmp(*e, "CUPTRACE_FLIGHT_", 16))
			continue;
		memcpy(name, *e, n);
		name[n] = 0;
		if (!listed(done, name))
			warn(name, "has no effect: the flight recorder is off (CUPTRACE_FLIGHT is "
				   "not set)");
	}
	if (c->torch && !(c->sources & CT_SRC_TORCH) && !listed(done, "CUPTRACE_TORCH")) {
		char src[128], why[256];
		ct_sources_str(c->sources, src, sizeof src);
		snprintf(why, sizeof why,
			 "has no effect: it adds to the torch source's operators and the torch "
			 "source is off (CUPTRACE_TRACE=%s)",
			 src[0] ? src : "none");
		warn("CUPTRACE_TORCH", why);
	}
}

