// SPDX-License-Identifier: MIT
#include "config.h"
#include "pattern.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ct_config_vars[] = {
	"CUPTRACE_OUTPUT",	 "CUPTRACE_TRACE",	    "CUPTRACE_TORCH",
	"CUPTRACE_RANKS",	 "CUPTRACE_DELAY",	    "CUPTRACE_DURATION",
	"CUPTRACE_CAPTURE",	 "CUPTRACE_CAPTURE_REPEAT", "CUPTRACE_STEPS",
	"CUPTRACE_STEP_RANGE",	 "CUPTRACE_BUFFER_MB",	    "CUPTRACE_LOG",
	"CUPTRACE_HANG_TIMEOUT", "CUPTRACE_CLOCK",	    "CUPTRACE_FLIGHT",
	"CUPTRACE_FLIGHT_MB",	 "CUPTRACE_FLIGHT_SIGNAL",  "CUPTRACE_FLIGHT_SLOW",
	"CUPTRACE_FLIGHT_EXIT",	 NULL,
};

static int fail(char *err, size_t len, const char *name, const char *value, const char *fmt, ...)
{
	char why[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	snprintf(err, len, "%s=%.200s: %s", name, value, why);
	return -1;
}

void ct_config_defaults(struct ct_config *c)
{
	memset(c, 0, sizeof *c);
	snprintf(c->output, sizeof c->output, "%s", CT_DEFAULT_OUTPUT);
	c->sources = CT_SRC_CUDA | CT_SRC_NVTX | CT_SRC_NCCL;
	c->ranks.all = 1;
	c->capture = CT_CAPTURE_ALWAYS;
	c->capture_repeat = 1;
	c->buffer_mb = 64;
	c->flight_mb = CT_FLIGHT_MB_DEFAULT;
	c->log = CT_LOG_WARN;
}

/* Whole-string unsigned decimal. */
static int parse_ulong(const char *s, unsigned long *out)
{
	if (!*s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

#define MAX_SECONDS 1e9 /* about 31 years */

/* Seconds from 0 to MAX_SECONDS: 0, -1 when s is no number, -2 when it is
 * larger. */
static int parse_seconds(const char *s, double *out)
{
	if (!*s || !(isdigit((unsigned char)*s) || *s == '.') ||
	    strspn(s, "0123456789.eE+-") != strlen(s)) /* strtod takes 0x10 and 1p3 too */
		return -1;
	errno = 0;
	char *end;
	double v = strtod(s, &end);
	if (*end)
		return -1;
	if (v > MAX_SECONDS) /* overflow (ERANGE) gives HUGE_VAL */
		return -2;
	/* A positive value too small for a double (1e-320) underflows with
	 * ERANGE: it is a number, and rules like a floor judge it. */
	if ((errno && !(errno == ERANGE && v < 1)) || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

/* The reason for a parse_seconds failure rc; what is expected otherwise. */
static const char *seconds_why(int rc, const char *expected)
{
	return rc == -2 ? "too large: at most 1000000000 seconds" : expected;
}

static const struct {
	const char *name;
	unsigned mask;
} source_names[] = {
	{"kernel", CT_SRC_KERNEL}, {"memcpy", CT_SRC_MEMCPY}, {"api", CT_SRC_API},
	{"sync", CT_SRC_SYNC},	   {"memory", CT_SRC_MEMORY}, {"nvtx", CT_SRC_NVTX},
	{"nccl", CT_SRC_NCCL},	   {"torch", CT_SRC_TORCH},   {"mpi", CT_SRC_MPI},
	{"cuda", CT_SRC_CUDA},
};

static int parse_sources(const char *v, unsigned *out, char *bad, size_t badlen)
{
	if (!strcmp(v, "none")) {
		*out = 0;
		return 0;
	}
	unsigned mask = 0;
	const char *p = v;
	for (;;) {
		size_t n = strcspn(p, ",");
		size_t i;
		for (i = 0; i < sizeof source_names / sizeof *source_names; i++)
			if (strlen(source_names[i].name) == n && !strncmp(p, source_names[i].name, n))
				break;
		if (i == sizeof source_names / sizeof *source_names) {
			snprintf(bad, badlen, "%.*s", (int)(n < 64 ? n : 64), p);
			return -1;
		}
		mask |= source_names[i].mask;
		if (!p[n])
			break;
		p += n + 1;
	}
	*out = mask;
	return 0;
}

void ct_sources_str(unsigned mask, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i + 1 < sizeof source_names / sizeof *source_names; i++)
		if (mask & source_names[i].mask)
			o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s", o ? "," : "",
					      source_names[i].name);
	if (!mask)
		snprintf(buf, len, "none");
}

static const struct {
	const char *name;
	unsigned bit;
} torch_names[] = {
	{"shapes", CT_TORCH_SHAPES}, {"memory", CT_TORCH_MEMORY}, {"stack", CT_TORCH_STACK},
};
#define NTORCH (sizeof torch_names / sizeof *torch_names)

/* shapes,memory,stack in any order, or none alone. */
static int parse_torch(const char *v, unsigned *out, char *bad, size_t badlen)
{
	if (!strcmp(v, "none")) {
		*out = 0;
		return 0;
	}
	unsigned bits = 0;
	for (const char *p = v;;) {
		size_t n = strcspn(p, ","), i;
		for (i = 0; i < NTORCH; i++)
			if (strlen(torch_names[i].name) == n && !strncmp(p, torch_names[i].name, n))
				break;
		if (i == NTORCH) {
			snprintf(bad, badlen, "%.*s", (int)(n < 64 ? n : 64), p);
			return -1;
		}
		bits |= torch_names[i].bit;
		if (!p[n])
			break;
		p += n + 1;
	}
	*out = bits;
	return 0;
}

void ct_torch_str(unsigned bits, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < NTORCH; i++)
		if (bits & torch_names[i].bit)
			o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s", o ? "," : "",
					      torch_names[i].name);
	if (!bits)
		snprintf(buf, len, "none");
}

/* A number [p, end) that a long cannot hold: said, -1. */
static int too_large(const char *p, const char *end, char *why, size_t wlen)
{
	int n = (int)(end - p);
	snprintf(why, wlen, "%.*s%s is too large (at most %ld)", n < 40 ? n : 40, p,
		 n > 40 ? "..." : "", LONG_MAX);
	return -1;
}

/* A list like 0,2,8-15 at *pp, up to the end or `stop`: its ranges into
 * lo/hi, their count into *n, *pp past it. */
static int parse_list(const char **pp, char stop, long *lo, long *hi, int *n, char *why,
		      size_t wlen)
{
	const char *p = *pp;
	*n = 0;
	for (;;) {
		char *end;
		if (!isdigit((unsigned char)*p))
			return snprintf(why, wlen,
					"expected all, a list like 0,2,8-15, local:N or local:N@0-7"),
			       -1;
		errno = 0;
		long a = strtol(p, &end, 10), b = a;
		if (errno == ERANGE)
			return too_large(p, end, why, wlen);
		if (*end == '-') {
			p = end + 1;
			if (!isdigit((unsigned char)*p))
				return snprintf(why, wlen, "a range needs an upper bound"), -1;
			b = strtol(p, &end, 10);
			if (errno == ERANGE)
				return too_large(p, end, why, wlen);
		}
		if (errno || a > b)
			return snprintf(why, wlen, "bad range %ld-%ld", a, b), -1;
		if (*n == CT_MAX_RANGES)
			return snprintf(why, wlen, "more than %d ranges", CT_MAX_RANGES), -1;
		lo[*n] = a;
		hi[*n] = b;
		(*n)++;
		if (*end == 0 || (stop && *end == stop)) {
			*pp = end;
			return 0;
		}
		if (*end != ',')
			return snprintf(why, wlen, "unexpected '%c'", *end), -1;
		p = end + 1;
	}
}

/* all | LIST | local:LIST | local:LIST@LIST (node-local ranks, among the
 * global ranks after the @: "local rank 0 of the first two nodes" of 4 a
 * node is local:0@0-7). */
int ct_rankset_parse(const char *v, struct ct_rankset *s, char *why, size_t wlen)
{
	memset(s, 0, sizeof *s);
	if (!strcmp(v, "all")) {
		s->all = 1;
		return 0;
	}
	int local = !strncmp(v, "local:", 6);
	const char *p = local ? v + 6 : v;
	if (parse_list(&p, local ? '@' : 0, s->lo, s->hi, &s->n, why, wlen))
		return -1;
	s->local = local;
	if (*p == '@') {
		p++;
		if (parse_list(&p, 0, s->glo, s->ghi, &s->gn, why, wlen))
			return -1;
		if (!s->gn)
			return snprintf(why, wlen, "expected global ranks after @"), -1;
	}
	return 0;
}

static int in_ranges(long r, const long *lo, const long *hi, int n)
{
	for (int i = 0; i < n; i++)
		if (r >= lo[i] && r <= hi[i])
			return 1;
	return 0;
}

int ct_rankset_has(const struct ct_rankset *s, long rank, long local_rank)
{
	if (s->all)
		return 1;
	if (!s->local)
		return in_ranges(rank, s->lo, s->hi, s->n);
	return in_ranges(local_rank, s->lo, s->hi, s->n) &&
	       (!s->gn || in_ranges(rank, s->glo, s->ghi, s->gn));
}

/* "NAME[@DOMAIN]" */
static int parse_range_name(const char *v, char *name, char *domain)
{
	const char *at = strrchr(v, '@');
	size_t n = at ? (size_t)(at - v) : strlen(v);
	if (n == 0 || n >= CT_NAME_MAX || (at && (!at[1] || strlen(at + 1) >= CT_NAME_MAX)))
		return -1;
	memcpy(name, v, n);
	name[n] = 0;
	snprintf(domain, CT_NAME_MAX, "%s", at ? at + 1 : "");
	return 0;
}

static int parse_steps(const char *v, struct ct_steps *st, char *why, size_t wlen)
{
	memset(st, 0, sizeof *st);
	if (!strcmp(v, "off") || !*v)
		return 0;
	const char *p = v;
	int have_active = 0;
	while (*p) {
		size_t n = strcspn(p, "=");
		if (!p[n])
			return snprintf(why, wlen, "expected key=value"), -1;
		char key[32];
		if (n >= sizeof key)
			return snprintf(why, wlen, "unknown key"), -1;
		memcpy(key, p, n);
		key[n] = 0;
		p += n + 1;
		size_t m = strcspn(p, ",");
		char num[32];
		unsigned long val;
		if (m == 0 || m >= sizeof num)
			return snprintf(why, wlen, "%s needs a number", key), -1;
		memcpy(num, p, m);
		num[m] = 0;
		if (parse_ulong(num, &val))
			return snprintf(why, wlen, "%s=%s is not a whole number", key, num), -1;
		if (!strcmp(key, "skip_first"))
			st->skip_first = val;
		else if (!strcmp(key, "wait"))
			st->wait = val;
		else if (!strcmp(key, "warmup"))
			st->warmup = val;
		else if (!strcmp(key, "active"))
			st->active = val, have_active = 1;
		else if (!strcmp(key, "repeat"))
			st->repeat = val;
		else
			return snprintf(why, wlen,
					"unknown key '%s' (skip_first, wait, warmup, active, repeat)", key),
			       -1;
		p += m;
		if (*p == ',')
			p++;
	}
	if (!have_active || st->active == 0)
		return snprintf(why, wlen, "active=N (N >= 1) is required"), -1;
	st->on = 1;
	return 0;
}

static const char *const sig_names[] = {"USR1", "USR2", "HUP", "URG", "WINCH", "PWR", NULL};
static const int sig_nums[] = {SIGUSR1, SIGUSR2, SIGHUP, SIGURG, SIGWINCH, SIGPWR};

/* The flight recorder's variables (docs/flight-recorder.md). */
static int set_flight(struct ct_config *c, const char *name, const char *v, char *err, size_t elen)
{
	unsigned long u;
	int rc;
	if (!strcmp(name, "CUPTRACE_FLIGHT")) {
		if ((rc = parse_seconds(v, &c->flight)) || c->flight < 0.1)
			return fail(err, elen, name, v, "%s",
				    seconds_why(rc, "expected seconds >= 0.1"));
	} else if (!strcmp(name, "CUPTRACE_FLIGHT_MB")) {
		if (parse_ulong(v, &u) || u < 1 || u > (1ul << 20))
			return fail(err, elen, name, v, "expected megabytes from 1 to 1048576");
		c->flight_mb = u;
	} else if (!strcmp(name, "CUPTRACE_FLIGHT_SIGNAL")) {
		const char *n = strncmp(v, "SIG", 3) ? v : v + 3;
		int i;
		for (i = 0; sig_names[i] && strcmp(n, sig_names[i]); i++)
			;
		if (!sig_names[i])
			return fail(err, elen, name, v, "expected USR1, USR2, HUP, URG, WINCH or PWR");
		c->flight_signal = sig_nums[i];
	} else if (!strcmp(name, "CUPTRACE_FLIGHT_SLOW")) {
		if ((rc = parse_seconds(v, &c->flight_slow)) || c->flight_slow <= 1)
			return fail(err, elen, name, v, "%s",
				    seconds_why(rc, "expected a factor above 1 (3: a step three "
						    "times the median)"));
	} else if (!strcmp(name, "CUPTRACE_FLIGHT_EXIT")) {
		if (!strcmp(v, "error"))
			c->flight_exit = 0;
		else if (!strcmp(v, "always"))
			c->flight_exit = 1;
		else
			return fail(err, elen, name, v, "expected error or always");
	} else {
		return fail(err, elen, name, v, "unknown variable");
	}
	return 0;
}

const char *ct_signal_name(int sig)
{
	for (int i = 0; sig_names[i]; i++)
		if (sig_nums[i] == sig)
			return sig_names[i];
	return "?";
}

int ct_config_set(struct ct_config *c, const char *name, const char *v, char *err, size_t elen)
{
	char why[200];
	unsigned long u;
	if (!strcmp(name, "CUPTRACE_OUTPUT")) {
		if (!*v)
			return fail(err, elen, name, v, "empty pattern");
		if (strlen(v) >= sizeof c->output)
			return fail(err, elen, name, v, "pattern too long");
		if (ct_pattern_check(v, why, sizeof why))
			return fail(err, elen, name, v, "%s", why);
		snprintf(c->output, sizeof c->output, "%s", v);
	} else if (!strcmp(name, "CUPTRACE_TRACE")) {
		char bad[80];
		if (parse_sources(v, &c->sources, bad, sizeof bad))
			return fail(err, elen, name, v,
				    "unknown source '%s' (kernel, memcpy, api, sync, memory, nvtx, nccl, "
				    "torch, mpi, cuda, none)",
				    bad);
	} else if (!strcmp(name, "CUPTRACE_TORCH")) {
		char bad[80];
		if (parse_torch(v, &c->torch, bad, sizeof bad))
			return fail(err, elen, name, v,
				    "unknown word '%s' (shapes, memory, stack; or none alone)", bad);
	} else if (!strcmp(name, "CUPTRACE_RANKS")) {
		if (ct_rankset_parse(v, &c->ranks, why, sizeof why))
			return fail(err, elen, name, v, "%s", why);
	} else if (!strcmp(name, "CUPTRACE_DELAY")) {
		int rc = parse_seconds(v, &c->delay);
		if (rc)
			return fail(err, elen, name, v, "%s", seconds_why(rc, "expected seconds >= 0"));
	} else if (!strcmp(name, "CUPTRACE_DURATION")) {
		int rc = parse_seconds(v, &c->duration);
		if (rc || c->duration == 0)
			return fail(err, elen, name, v, "%s", seconds_why(rc, "expected seconds > 0"));
	} else if (!strcmp(name, "CUPTRACE_HANG_TIMEOUT")) {
		double s = 0;
		int rc = parse_seconds(v, &s);
		/* A collective in flight for a few milliseconds is normal: below
		 * the floor, a healthy job would be reported line after line. */
		if (rc || s < CT_HANG_TIMEOUT_MIN)
			return fail(err, elen, name, v, "%s",
				    seconds_why(rc, "expected seconds >= " CT_HANG_TIMEOUT_MIN_STR));
		c->hang_timeout = s;
	} else if (!strcmp(name, "CUPTRACE_CLOCK")) {
		if (!strcmp(v, "auto"))
			c->clock = CT_CLOCK_AUTO;
		else if (!strcmp(v, "tsc"))
			c->clock = CT_CLOCK_TSC;
		else if (!strcmp(v, "monotonic"))
			c->clock = CT_CLOCK_MONOTONIC;
		else
			return fail(err, elen, name, v, "expected auto, tsc or monotonic");
	} else if (!strcmp(name, "CUPTRACE_CAPTURE")) {
		if (!strcmp(v, "always"))
			c->capture = CT_CAPTURE_ALWAYS;
		else if (!strcmp(v, "api"))
			c->capture = CT_CAPTURE_API;
		else if (!strncmp(v, "nvtx:", 5)) {
			if (parse_range_name(v + 5, c->capture_name, c->capture_domain))
				return fail(err, elen, name, v, "expected nvtx:NAME or nvtx:NAME@DOMAIN");
			c->capture = CT_CAPTURE_NVTX;
		} else
			return fail(err, elen, name, v, "expected always, api or nvtx:NAME[@DOMAIN]");
	} else if (!strcmp(name, "CUPTRACE_CAPTURE_REPEAT")) {
		if (parse_ulong(v, &c->capture_repeat))
			return fail(err, elen, name, v, "expected a whole number (0 = unlimited)");
	} else if (!strcmp(name, "CUPTRACE_STEPS")) {
		if (parse_steps(v, &c->steps, why, sizeof why))
			return fail(err, elen, name, v, "%s", why);
	} else if (!strcmp(name, "CUPTRACE_STEP_RANGE")) {
		if (!*v || strlen(v) >= sizeof c->step_range)
			return fail(err, elen, name, v, "expected a range name");
		snprintf(c->step_range, sizeof c->step_range, "%s", v);
	} else if (!strcmp(name, "CUPTRACE_BUFFER_MB")) {
		if (parse_ulong(v, &u) || u < 1 || u > (1ul << 20))
			return fail(err, elen, name, v, "expected megabytes from 1 to 1048576");
		c->buffer_mb = u;
	} else if (!strncmp(name, "CUPTRACE_FLIGHT", 15)) {
		return set_flight(c, name, v, err, elen);
	} else if (!strcmp(name, "CUPTRACE_LOG")) {
		static const char *lv[] = {"quiet", "warn", "info", "debug"};
		int i;
		for (i = 0; i < 4 && strcmp(v, lv[i]); i++)
			;
		if (i == 4)
			return fail(err, elen, name, v, "expected quiet, warn, info or debug");
		c->log = (enum ct_log_level)i;
	} else {
		return fail(err, elen, name, v, "unknown variable");
	}
	return 0;
}

int ct_config_parse(struct ct_config *c, ct_getenv_fn get, char *err, size_t elen)
{
	ct_config_defaults(c);
	/* CUPTRACE_LOG first, so that its level applies to what follows. */
	const char *lv = get("CUPTRACE_LOG");
	if (lv && ct_config_set(c, "CUPTRACE_LOG", lv, err, elen))
		return -1;
	for (int i = 0; ct_config_vars[i]; i++) {
		const char *v = get(ct_config_vars[i]);
		if (v && ct_config_set(c, ct_config_vars[i], v, err, elen))
			return -1;
	}
	/* The flight recorder watches for hangs unless told otherwise. */
	if (c->flight > 0 && !get("CUPTRACE_HANG_TIMEOUT") && (c->sources & (CT_SRC_NCCL | CT_SRC_MPI))) {
		c->hang_timeout = CT_FLIGHT_HANG_DEFAULT;
		c->hang_default = 1;
	}
	return 0;
}

/* A rank list as parse_list reads it, at buf + o. */
static size_t dump_list(char *buf, size_t len, size_t o, const long *lo, const long *hi, int n)
{
	for (int i = 0; i < n && o < len; i++) {
		if (lo[i] == hi[i])
			o += (size_t)snprintf(buf + o, len - o, "%s%ld", i ? "," : "", lo[i]);
		else
			o += (size_t)snprintf(buf + o, len - o, "%s%ld-%ld", i ? "," : "", lo[i], hi[i]);
	}
	return o;
}

size_t ct_config_dump(const struct ct_config *c, char *buf, size_t len)
{
	char src[128];
	ct_sources_str(c->sources, src, sizeof src);
	static const char *cap[] = {"always", "api", "nvtx"};
	static const char *lv[] = {"quiet", "warn", "info", "debug"};
	int n = snprintf(buf, len,
			 "CUPTRACE_OUTPUT=%s\nCUPTRACE_TRACE=%s\nCUPTRACE_CAPTURE=%s%s%s%s%s\n"
			 "CUPTRACE_CAPTURE_REPEAT=%lu\nCUPTRACE_DELAY=%.9g\nCUPTRACE_DURATION=%.9g\n"
			 "CUPTRACE_BUFFER_MB=%lu\nCUPTRACE_LOG=%s\n",
			 c->output, src, cap[c->capture], c->capture == CT_CAPTURE_NVTX ? ":" : "",
			 c->capture_name, c->capture_domain[0] ? "@" : "", c->capture_domain,
			 c->capture_repeat, c->delay, c->duration, c->buffer_mb, lv[c->log]);
	if (n < 0)
		return 0;
	size_t o = (size_t)n < len ? (size_t)n : len;
	if (c->steps.on && o < len)
		o += (size_t)snprintf(buf + o, len - o,
				      "CUPTRACE_STEPS=skip_first=%lu,wait=%lu,warmup=%lu,active=%lu,"
				      "repeat=%lu\n",
				      c->steps.skip_first, c->steps.wait, c->steps.warmup, c->steps.active,
				      c->steps.repeat);
	if (c->hang_timeout > 0 && o < len)
		o += (size_t)snprintf(buf + o, len - o, "CUPTRACE_HANG_TIMEOUT=%.9g\n", c->hang_timeout);
	if (c->flight > 0 && o < len)
		o += (size_t)snprintf(buf + o, len - o,
				      "CUPTRACE_FLIGHT=%.9g\nCUPTRACE_FLIGHT_MB=%lu\n"
				      "CUPTRACE_FLIGHT_EXIT=%s\n",
				      c->flight, c->flight_mb, c->flight_exit ? "always" : "error");
	if (c->flight > 0 && c->flight_signal && o < len)
		o += (size_t)snprintf(buf + o, len - o, "CUPTRACE_FLIGHT_SIGNAL=%s\n",
				      ct_signal_name(c->flight_signal));
	if (c->flight > 0 && c->flight_slow > 0 && o < len)
		o += (size_t)snprintf(buf + o, len - o, "CUPTRACE_FLIGHT_SLOW=%.9g\n", c->flight_slow);
	static const char *clk[] = {"auto", "tsc", "monotonic"};
	if (c->clock != CT_CLOCK_AUTO && o < len)
		o += (size_t)snprintf(buf + o, len - o, "CUPTRACE_CLOCK=%s\n", clk[c->clock]);
	if (c->torch && o < len) {
		char tb[64];
		ct_torch_str(c->torch, tb, sizeof tb);
		o += (size_t)snprintf(buf + o, len - o, "CUPTRACE_TORCH=%s\n", tb);
	}
	if (c->step_range[0] && o < len)
		o += (size_t)snprintf(buf + o, len - o, "CUPTRACE_STEP_RANGE=%s\n", c->step_range);
	if (!c->ranks.all && o < len) {
		o += (size_t)snprintf(buf + o, len - o, "CUPTRACE_RANKS=%s", c->ranks.local ? "local:" : "");
		o = dump_list(buf, len, o, c->ranks.lo, c->ranks.hi, c->ranks.n);
		if (c->ranks.gn && o < len) {
			o += (size_t)snprintf(buf + o, len - o, "@");
			o = dump_list(buf, len, o, c->ranks.glo, c->ranks.ghi, c->ranks.gn);
		}
		if (o < len)
			o += (size_t)snprintf(buf + o, len - o, "\n");
	}
	return o < len ? o : len;
}
