// SPDX-License-Identifier: MIT
/* Which clock the rings' records are stamped with (clock.h): the TSC where
 * it is invariant, else CLOCK_MONOTONIC. At the bottom of the library's
 * order with init.c, which calls ct_clock_setup once. */
#include "clock.h"
#include "config.h"
#include "io.h"
#include "log.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint16_t ct_tick_flag;

static struct {
	uint64_t tick, ns, rate;
} clock_st;

/* Up to cap - 1 bytes of a small file, NUL-terminated; 0 bytes on error. */
static size_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = ct_open_high(path, O_RDONLY, 0);
	size_t n = 0;
	if (fd >= 0) {
		ssize_t r;
		while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0)
			n += (size_t)r;
		close(fd);
	}
	buf[n] = 0;
	return n;
}

/* The value of the first "key<spaces>: value" line of /proc/cpuinfo. */
static const char *cpuinfo_field(const char *info, const char *key, size_t *len)
{
	size_t kl = strlen(key);
	for (const char *p = info; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, kl) || (p[kl] != ' ' && p[kl] != '\t' && p[kl] != ':'))
			continue;
		const char *v = strchr(p, ':');
		const char *e = strchr(p, '\n');
		if (!v || (e && v > e))
			return NULL;
		v++;
		while (*v == ' ')
			v++;
		*len = e ? (size_t)(e - v) : strlen(v);
		return v;
	}
	return NULL;
}

static int has_word(const char *s, size_t len, const char *w)
{
	size_t wl = strlen(w);
	for (size_t i = 0; i + wl <= len; i++)
		if (!memcmp(s + i, w, wl) && (i == 0 || s[i - 1] == ' ') &&
		    (i + wl == len || s[i + wl] == ' '))
			return 1;
	return 0;
}

void ct_clock_pair(uint64_t *tick, uint64_t *ns)
{
	uint64_t best = ~0ull;
	for (int i = 0; i < 5; i++) {
		uint64_t a = ct_now(), t = 0, b;
#if defined(__x86_64__)
		/* Ordered: the tick is read between the two clock readings. */
		_mm_lfence();
		t = __rdtsc();
		_mm_lfence();
#endif
		b = ct_now();
		if (b - a < best) {
			best = b - a;
			*tick = t;
			*ns = a + (b - a) / 2;
		}
	}
}

static void start_here(void)
{
	ct_clock_pair(&clock_st.tick, &clock_st.ns);
}

int ct_clock_setup(int mode)
{
	if (mode == CT_CLOCK_MONOTONIC)
		return CT_CLOCK_MONOTONIC;
#if defined(__x86_64__)
	/* The TSC ticks at one rate whatever the core's frequency
	 * (constant_tsc) and in deep sleep states (nonstop_tsc); the kernel's
	 * choosing it as its clocksource says it found it in step across
	 * cores. Auto wants all three; CUPTRACE_CLOCK=tsc takes the TSC anyway
	 * (to compare), and says what is missing. */
	char info[16384], cs[64];
	size_t n = read_small("/proc/cpuinfo", info, sizeof info), len = 0;
	const char *flags = n ? cpuinfo_field(info, "flags", &len) : NULL;
	int inv = flags && has_word(flags, len, "constant_tsc") && has_word(flags, len, "nonstop_tsc");
	read_small("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs, sizeof cs);
	int kernel = !strcmp(cs, "tsc\n") || !strcmp(cs, "tsc");
	if (mode == CT_CLOCK_AUTO && !(inv && kernel)) {
		ct_info("timestamps from CLOCK_MONOTONIC (%s)",
			inv ? "the kernel's clocksource is not the TSC" : "no invariant TSC");
		return CT_CLOCK_MONOTONIC;
	}
	if (!(inv && kernel))
		ct_warn("CUPTRACE_CLOCK=tsc: %s; timestamps may be off",
			inv ? "the kernel's clocksource is not the TSC" : "this CPU's TSC is not invariant");
	/* A first guess of the rate (the writer measures it): the nominal
	 * frequency, as cpuinfo gives it. */
	const char *mhz = n ? cpuinfo_field(info, "cpu MHz", &len) : NULL;
	double f = mhz ? strtod(mhz, NULL) : 0;
	clock_st.rate = f > 10 && f < 100000 ? (uint64_t)(1000.0 / f * 4294967296.0) : 1ull << 32;
	start_here();
	ct_tick_flag = CT_REC_TICKS;
	ct_info("timestamps from the TSC (about %.0f MHz), mapped onto CLOCK_MONOTONIC", f);
	return CT_CLOCK_TSC;
#else
	if (mode == CT_CLOCK_TSC)
		ct_warn("CUPTRACE_CLOCK=tsc: this CPU has no TSC; timestamps from CLOCK_MONOTONIC");
	return CT_CLOCK_MONOTONIC;
#endif
}

void ct_clock_start(uint64_t *tick, uint64_t *ns, uint64_t *rate)
{
	*tick = clock_st.tick, *ns = clock_st.ns, *rate = clock_st.rate;
}

void ct_clock_fork_child(uint64_t rate)
{
	if (!ct_tick_flag)
		return;
	start_here();
	if (rate)
		clock_st.rate = rate;
}
