// SPDX-License-Identifier: MIT
/* The first guess of the TSC's rate (libtrace/clock.c, ct_tsc_guess_khz)
 * from sample CPUID values and /proc/cpuinfo texts: the nominal rate
 * (CPUID leaf 0x15 or 0x16, else the model name's "@ X.XXGHz") where the
 * measurement over the setup agrees with it or there is none, else "cpu
 * MHz" where the measurement agrees with it (the kernel's calibration in a
 * VM), else the measurement, else "cpu MHz" (the current clock of core 0,
 * which may be half the TSC's rate on an idle laptop). Then the real thing on this
 * machine: the guess against the TSC measured over 50 ms. */
#include "check.h"
#include "clock.h"
#include "config.h"
#include "log.h"

#include <stdint.h>
#include <time.h>

/* An idle Intel laptop: the core at 1.2 GHz, its TSC at 2.6 GHz. */
static const char intel[] =
    "processor\t: 0\n"
    "vendor_id\t: GenuineIntel\n"
    "cpu family\t: 6\n"
    "model\t\t: 142\n"
    "model name\t: Intel(R) Core(TM) i7-8850H CPU @ 2.60GHz\n"
    "stepping\t: 10\n"
    "cpu MHz\t\t: 1200.000\n"
    "cache size\t: 9216 KB\n"
    "flags\t\t: fpu tsc constant_tsc nonstop_tsc\n"
    "\n"
    "processor\t: 1\n"
    "model name\t: Intel(R) Core(TM) i9-9900K CPU @ 3.60GHz\n"
    "cpu MHz\t\t: 900.000\n";

/* AMD: no frequency in the model name; "cpu MHz" is the current clock
 * (or, in a VM, the kernel's calibration of the TSC). */
static const char amd[] = "processor\t: 0\n"
			  "vendor_id\t: AuthenticAMD\n"
			  "model name\t: AMD EPYC 7763 64-Core Processor\n"
			  "cpu MHz\t\t: 1496.337\n"
			  "flags\t\t: fpu tsc constant_tsc nonstop_tsc\n";

/* An old Atom, the frequency in MHz; no "cpu MHz" line at all. */
static const char atom[] = "processor : 0\n"
			   "model name : Intel(R) Atom(TM) CPU N270 @ 1600MHz\n";

/* Neither a model name nor MHz; and a model name whose "@" has no number. */
static const char bare[] = "processor\t: 0\nflags\t\t: fpu tsc\n";
static const char odd[] = "model name\t: Some CPU @ fast\ncpu MHz\t\t: 2000.5\n";

static const struct ct_cpuid_tsc none = {0};

static void test_nominal_from_cpuid(void)
{
	/* Skylake client: a 24 MHz crystal, TSC = 216/2 of it. */
	struct ct_cpuid_tsc c = {0x16, {2, 216, 24000000}, 2600};
	CHECK_EQ(ct_tsc_nominal_khz(&c), 2592000);
	/* No crystal named (many server parts, VMs): the base frequency. */
	c.l15[2] = 0;
	CHECK_EQ(ct_tsc_nominal_khz(&c), 2600000);
	/* Leaves past the highest one are not read. */
	c.max_leaf = 0x14;
	CHECK_EQ(ct_tsc_nominal_khz(&c), 0);
	CHECK_EQ(ct_tsc_nominal_khz(&none), 0);
	/* A zero ratio is no answer. */
	struct ct_cpuid_tsc z = {0x15, {0, 0, 24000000}, 0};
	CHECK_EQ(ct_tsc_nominal_khz(&z), 0);
}

static void test_guess(void)
{
	const char *src;
	/* Not "cpu MHz" (1200000 here: 2.2x off). */
	CHECK_EQ(ct_tsc_guess_khz(intel, &none, 0, &src), 2600000);
	CHECK_STR(src, "model name");
	/* A measurement that agrees (within 2 %) keeps the nominal rate... */
	CHECK_EQ(ct_tsc_guess_khz(intel, &none, 2593000, &src), 2600000);
	/* ...one that does not is taken instead (a scaled TSC in a VM). */
	CHECK_EQ(ct_tsc_guess_khz(intel, &none, 2100000, &src), 2100000);
	CHECK_STR(src, "measured");
	/* CPUID before the model name. */
	struct ct_cpuid_tsc c = {0x16, {2, 216, 24000000}, 2600};
	CHECK_EQ(ct_tsc_guess_khz(intel, &c, 0, &src), 2592000);
	CHECK_STR(src, "CPUID");
	CHECK_EQ(ct_tsc_guess_khz(NULL, &c, 2591000, &src), 2592000);
	/* AMD: the measurement; without one, "cpu MHz" as the last resort. */
	CHECK_EQ(ct_tsc_guess_khz(amd, &none, 2445000, &src), 2445000);
	CHECK_STR(src, "measured");
	CHECK_EQ(ct_tsc_guess_khz(amd, &none, 0, &src), 1496337);
	CHECK_STR(src, "cpu MHz");
	CHECK_EQ(ct_tsc_guess_khz(atom, &none, 0, &src), 1600000);
	CHECK_STR(src, "model name");
	CHECK_EQ(ct_tsc_guess_khz(odd, &none, 0, &src), 2000500);
	CHECK_STR(src, "cpu MHz");
	CHECK_EQ(ct_tsc_guess_khz(bare, &none, 0, &src), 0);
	CHECK_STR(src, "none");
	CHECK_EQ(ct_tsc_guess_khz(NULL, &none, 0, &src), 0);
	CHECK_EQ(ct_tsc_guess_khz("", &none, 3000000, &src), 3000000);
	/* A VM: "cpu MHz" is the kernel's calibration of the TSC, exact where
	 * the short measurement is good to a fraction of a percent: taken when
	 * the measurement confirms it. */
	static const char vm[] = "model name\t: AMD EPYC 7B13\ncpu MHz\t\t: 2596.040\n";
	CHECK_EQ(ct_tsc_guess_khz(vm, &none, 2590000, &src), 2596040);
	CHECK_STR(src, "cpu MHz");
	/* an idle core's clock the measurement contradicts is not */
	CHECK_EQ(ct_tsc_guess_khz(amd, &none, 2596000, &src), 2596000);
	CHECK_STR(src, "measured");
}

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void test_this_machine(void)
{
#if defined(__x86_64__)
	ct_log_level = CT_LOG_INFO; /* says which source it took */
	CHECK_EQ(ct_clock_setup(CT_CLOCK_TSC), CT_CLOCK_TSC);
	uint64_t tick, ns, rate;
	ct_clock_start(&tick, &ns, &rate);
	/* The TSC's rate over 50 ms, from the start anchor on. */
	while (mono() < ns + 50000000)
		;
	uint64_t t1, n1;
	ct_clock_pair(&t1, &n1);
	double truth = (double)(n1 - ns) / (double)(t1 - tick), guess = (double)rate / 4294967296.0;
	fprintf(stderr, "  clock: first guess %.6f ns per tick, measured %.6f (%+.3f %%)\n", guess,
		truth, (guess / truth - 1) * 100);
	/* A nominal rate within 2 % of a measurement within 1/128 */
	CHECK(guess > truth * 0.97 && guess < truth * 1.03);
#endif
}

int main(void)
{
	test_nominal_from_cpuid();
	test_guess();
	test_this_machine();
	return 0;
}
