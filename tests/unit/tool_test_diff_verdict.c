// SPDX-License-Identifier: MIT
/* cuptrace diff's verdict (stats/diff_verdict.c) on pairs made by hand:
 * two ranks of 10 steps each side, a kernel 5 ms per step slower. When
 * the step grew beyond the noise, the kernel is named with its share of
 * the step's change; when the test of the step times finds no change
 * (a GPU-bound kernel hidden behind a paced step), no row is named: a
 * share of a change within the noise would be any number; with too few
 * steps to test, the rows are named. A long name is cut between
 * characters, not inside one. */
#include "check.h"
#include "stats/diff.h"
#include "util/utf8.h"

#include <math.h>

#define RANKS 2
#define STEPS (10.0 * RANKS) /* every rank's */

static struct pairs by_rep[16];
static struct pair step, kern;
static const char *kern_name = "gemm(float*)";

static size_t rep_index(const char *name)
{
	for (size_t i = 0; diff_report_names[i]; i++)
		if (!strcmp(diff_report_names[i], name))
			return i;
	fprintf(stderr, "no report %s\n", name);
	exit(1);
}

/* The verdict of a step of base_ms -> new_ms (its test's p: NaN for too
 * few steps; sig as diff calls it) beside a kernel 40 -> 45 ms per step. */
static void verdict(double base_ms, double new_ms, double p, const char *sig,
                    struct diff_verdict *v)
{
	step = (struct pair){.name = "step",
	                     .match = "exact",
	                     .bc = STEPS,
	                     .nc = STEPS,
	                     .bt = base_ms * 1e6 * STEPS / RANKS,
	                     .nt = new_ms * 1e6 * STEPS / RANKS,
	                     .bm = base_ms * 1e6,
	                     .nm = new_ms * 1e6,
	                     .p = p,
	                     .sig = sig};
	kern = (struct pair){.name = (char *)kern_name,
	                     .match = "exact",
	                     .bc = STEPS,
	                     .nc = STEPS,
	                     .bt = 40e6 * STEPS / RANKS,
	                     .nt = 45e6 * STEPS / RANKS,
	                     .bm = 40e6,
	                     .nm = 45e6,
	                     .p = 1e-20,
	                     .sig = "yes"};
	memset(by_rep, 0, sizeof by_rep);
	by_rep[rep_index("steps")] = (struct pairs){&step, 1, 1};
	by_rep[rep_index("cuda_gpu_kern_sum")] = (struct pairs){&kern, 1, 1};
	struct diff_run b = {.nranks = RANKS, .span_ns = 1e9},
	                n = {.nranks = RANKS, .span_ns = 1e9};
	diff_verdict_make(&b, &n, by_rep, v);
	CHECK(!strcmp(v->basis, "step"));
	CHECK(fabs(v->base_ns - base_ms * 1e6) < 1 && fabs(v->new_ns - new_ms * 1e6) < 1);
}

/* Whether text has part (want 1) or not (want 0); says the text if not. */
static void has(const char *text, const char *part, int want)
{
	if ((strstr(text, part) != NULL) == want)
		return;
	fprintf(stderr, "verdict \"%s\" %s \"%s\"\n", text, want ? "lacks" : "has", part);
	exit(1);
}

int main(void)
{
	struct diff_verdict v;
	/* beyond the noise: the kernel's 5 ms of the step's 10 ms */
	verdict(50, 60, 1e-6, "yes", &v);
	has(v.text, "step +20.0 % (50.00 ms -> 60.00 ms per step; beyond noise", 1);
	has(v.text, "): gemm(float*) +5.00 ms (+12 %) explains 50 %", 1);
	/* the step did not move (p 0.93): nothing to explain, no share of a
	 * change of 1 us */
	verdict(50, 50.001, 0.93, "no", &v);
	has(v.text, "within noise, p 0.93): no change to explain", 1);
	has(v.text, "explains", 0);
	/* too few steps to test: the rows are named */
	verdict(50, 60, NAN, "n/a", &v);
	has(v.text, "too few steps to test): gemm(float*) +5.00 ms", 1);
	/* a long name is cut before a character, not inside one: ":ab" and
	 * 40 two-byte letters, 83 bytes, shown as its first 79 */
	char name[128] = ":ab";
	for (int i = 0; i < 40; i++)
		strcat(name, "\xc3\xa9");
	kern_name = name;
	verdict(50, 60, 1e-6, "yes", &v);
	CHECK(utf8_valid(v.text, strlen(v.text)) == strlen(v.text));
	char shown[128];
	snprintf(shown, sizeof shown, "): %.79s +5.00 ms", name);
	has(v.text, shown, 1);
	puts("diff verdict: ok");
	return 0;
}
