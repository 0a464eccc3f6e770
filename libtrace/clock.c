// SPDX-License-Identifier: MIT
/* Which clock the rings' records are stamped with (clock.h): the TSC where
 * it is invariant, else CLOCK_MONOTONIC. At the bottom of the library's
 * order with init.c, which calls ct_clock_setup once. */
#include "clock.h"
#include "config.h"
#include "io.h"
#include "log.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* The first guess of the rate is measured over at least MEASURE_NS of
 * the setup (its reads of /proc and /sys take most of that), and kept
 * where the clock readings' brackets leave it within 1/MEASURE_ERR;
 * waiting for that ends at MEASURE_MAX_NS. */
#define MEASURE_NS 20000u
#define MEASURE_MAX_NS 2000000u
#define MEASURE_ERR 128u
/* A nominal rate the measurement contradicts by more than 1/AGREE is
 * not the TSC's (a brand string of another CPU, a scaled TSC in a VM). */
#define AGREE 50u

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

/* ct_clock_pair, returning the width of the bracket taken (ns): the
 * reading's ns is within half of it of the tick's. */
static uint64_t pair(uint64_t *tick, uint64_t *ns)
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
	return best;
}

void ct_clock_pair(uint64_t *tick, uint64_t *ns)
{
	pair(tick, ns);
}

static void start_here(void)
{
	ct_clock_pair(&clock_st.tick, &clock_st.ns);
}

/* A decimal "2596.138" at s (up to e) in thousandths, 0 if none: by
 * hand, as strtod reads "," for a decimal point in the program's
 * locale. */
static uint64_t milli(const char *s, const char *e)
{
	uint64_t v = 0;
	int digits = 0, frac = -1;
	for (; s < e && ((*s >= '0' && *s <= '9') || (*s == '.' && frac < 0)); s++) {
		if (*s == '.') {
			frac = 0;
			continue;
		}
		if (frac >= 3)
			continue;
		if (v > UINT64_MAX / 100)
			return 0;
		v = v * 10 + (uint64_t)(*s - '0');
		digits++;
		if (frac >= 0)
			frac++;
	}
	for (frac = frac < 0 ? 0 : frac; frac < 3; frac++)
		v *= 10;
	return digits ? v : 0;
}

/* The nominal rate in kHz from the model name's "@ 2.60GHz" (Intel's
 * brand string: the base frequency, which its TSC ticks at); 0 without. */
static uint64_t model_khz(const char *info)
{
	size_t len = 0;
	const char *v = cpuinfo_field(info, "model name", &len);
	const char *at = v ? memchr(v, '@', len) : NULL;
	if (!at)
		return 0;
	const char *e = v + len, *p = at + 1;
	while (p < e && *p == ' ')
		p++;
	const char *num = p;
	while (p < e && ((*p >= '0' && *p <= '9') || *p == '.'))
		p++;
	uint64_t m = milli(num, p);
	if (e - p >= 3 && !memcmp(p, "GHz", 3))
		return m * 1000;
	if (e - p >= 3 && !memcmp(p, "MHz", 3))
		return m;
	return 0;
}

/* The frequency in kHz that "cpu MHz" says: the kernel's calibration of
 * the TSC in many VMs, but the current clock of core 0 on hardware with
 * frequency scaling (half the TSC's rate, or less, when idle). */
static uint64_t cpu_mhz_khz(const char *info)
{
	size_t len = 0;
	const char *v = cpuinfo_field(info, "cpu MHz", &len);
	return v ? milli(v, v + len) : 0;
}

uint64_t ct_tsc_nominal_khz(const struct ct_cpuid_tsc *c)
{
	/* Leaf 0x15: TSC = crystal * ebx / eax, where ecx names the crystal. */
	if (c->max_leaf >= 0x15 && c->l15[0] && c->l15[1] && c->l15[2])
		return (uint64_t)c->l15[2] * c->l15[1] / c->l15[0] / 1000;
	/* Leaf 0x16: the base frequency in MHz, Intel's TSC rate within a
	 * fraction of a percent (the kernel falls back on it the same way). */
	if (c->max_leaf >= 0x16 && (c->l16 & 0xffff))
		return (uint64_t)(c->l16 & 0xffff) * 1000;
	return 0;
}

/* Whether a rate the CPU states agrees with the one measured at setup. */
static int agrees(uint64_t stated, uint64_t measured)
{
	return (stated > measured ? stated - measured : measured - stated) <= measured / AGREE;
}

uint64_t ct_tsc_guess_khz(const char *info, const struct ct_cpuid_tsc *c, uint64_t measured,
			  const char **src)
{
	uint64_t nominal = ct_tsc_nominal_khz(c);
	*src = "CPUID";
	if (!nominal && info) {
		nominal = model_khz(info);
		*src = "model name";
	}
	if (nominal && (!measured || agrees(nominal, measured)))
		return nominal;
	/* "cpu MHz" that the short measurement confirms is the kernel's own
	 * calibration of the TSC (VMs, hardware without frequency scaling):
	 * exact, where the measurement is good to a fraction of a percent only.
	 * A scaled core's current clock is far off and fails the check. */
	uint64_t mhz = info ? cpu_mhz_khz(info) : 0;
	if (mhz && measured && agrees(mhz, measured)) {
		*src = "cpu MHz";
		return mhz;
	}
	if (measured) {
		*src = "measured";
		return measured;
	}
	*src = mhz ? "cpu MHz" : "none";
	return mhz;
}

#if defined(__x86_64__)
/* Leaves 0x15 and 0x16 are Intel's (each CPUID is a VM exit in a guest:
 * microseconds). */
static void read_cpuid(struct ct_cpuid_tsc *c)
{
	unsigned b, x, d;
	memset(c, 0, sizeof *c);
	__cpuid(0, c->max_leaf, b, x, d);
	if (b != 0x756e6547 || d != 0x49656e69 || x != 0x6c65746e) /* "GenuineIntel" */
		c->max_leaf = 0;
	if (c->max_leaf >= 0x15)
		__cpuid_count(0x15, 0, c->l15[0], c->l15[1], c->l15[2], d);
	if (c->max_leaf >= 0x16)
		__cpuid_count(0x16, 0, c->l16, b, x, d);
	(void)b, (void)x, (void)d;
}
#endif

int ct_clock_setup(int mode)
{
	if (mode == CT_CLOCK_MONOTONIC)
		return CT_CLOCK_MONOTONIC;
#if defined(__x86_64__)
	/* The first end of the rate's measurement: the reads below take
	 * most of what it needs. */
	uint64_t t0, n0, w0 = pair(&t0, &n0);
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
	/* A first guess of the rate (the writer measures it from its first
	 * anchor on, and holds each anchor against it: tickmap.c): the
	 * nominal rate where the measurement over this setup agrees with it,
	 * else that measurement (docs/CHOICES.md "The record clock"). The
	 * start anchor is its second end. */
	uint64_t w1;
	do
		w1 = pair(&clock_st.tick, &clock_st.ns);
	while (clock_st.ns - n0 < MEASURE_MAX_NS &&
	       (clock_st.ns - n0 < MEASURE_NS || (w0 + w1) / 2 * MEASURE_ERR > clock_st.ns - n0));
	uint64_t dn = clock_st.ns - n0, measured = 0;
	if (clock_st.tick > t0 && dn && (w0 + w1) / 2 * MEASURE_ERR <= dn)
		measured = (uint64_t)((unsigned __int128)(clock_st.tick - t0) * 1000000 / dn);
	struct ct_cpuid_tsc c;
	read_cpuid(&c);
	const char *src;
	uint64_t khz = ct_tsc_guess_khz(n ? info : NULL, &c, measured, &src);
	clock_st.rate = khz >= 10000 && khz < 100000000 ? (1000000ull << 32) / khz : 1ull << 32;
	ct_tick_flag = CT_REC_TICKS;
	if (khz)
		ct_info("timestamps from the TSC (%.0f MHz, %s), mapped onto CLOCK_MONOTONIC",
			(double)khz / 1000, src);
	else
		ct_info("timestamps from the TSC (its rate measured later), mapped onto CLOCK_MONOTONIC");
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
