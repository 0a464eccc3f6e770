// SPDX-License-Identifier: MIT
/* CUPTRACE_OUTPUT patterns (libtrace/config/pattern.c): every token, the
 * malformed ones, and values that try to leave the directory the pattern
 * names. */
#include "check.h"
#include "config.h"
#include "pattern.h"

#include <string.h>

/* The environment %q{VAR} reads: "NAME=value" entries. */
static const char *const *env_tab;

static const char *fake_getenv(const char *name)
{
	size_t n = strlen(name);
	for (const char *const *e = env_tab; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

static struct ct_pattern_vals vals(const char *host)
{
	return (struct ct_pattern_vals){
		.rank = 3, .local_rank = 1, .world_size = 16, .host = host, .pid = 1234,
		.getenv = fake_getenv,
	};
}

static const char *expand(const char *pat, const struct ct_pattern_vals *v)
{
	static char out[8192];
	CHECK_EQ(ct_pattern_expand(pat, v, out, sizeof out), 0);
	return out;
}

static void test_tokens(void)
{
	static const char *const env[] = {"SLURM_JOB_ID=777", "EMPTY=", "X=a%rb", NULL};
	env_tab = env;
	struct ct_pattern_vals v = vals("node-a");
	CHECK_STR(expand("r%r-l%l-w%w-%h-%p-%q{SLURM_JOB_ID}-%%.ctr", &v),
		  "r3-l1-w16-node-a-1234-777-%.ctr");
	CHECK_STR(expand("plain/name.ctr", &v), "plain/name.ctr");
	CHECK_STR(expand("%%r%%", &v), "%r%");
	CHECK_STR(expand("%r%r%p", &v), "331234");
	/* Unset and empty variables expand to nothing; a value is not a
	 * pattern. */
	CHECK_STR(expand("a%q{UNSET}b%q{EMPTY}c", &v), "abc");
	CHECK_STR(expand("%q{X}", &v), "a%rb");
	/* Unknown numbers: rank and local rank 0, world size 1, host
	 * "unknown". */
	struct ct_pattern_vals u = {.rank = -1, .local_rank = -1, .world_size = -1, .pid = 9};
	CHECK_STR(expand("%r-%l-%w-%h-%p-%q{SLURM_JOB_ID}", &u), "0-0-1-unknown-9-");
	/* A pattern naming a directory gets the default file name. */
	CHECK_STR(expand("out/", &v), "out/node-a-1234.ctr");
	CHECK_STR(expand("out/r%r/", &v), "out/r3/node-a-1234.ctr");
	CHECK_STR(expand("/", &v), "/node-a-1234.ctr");
	/* The default pattern. */
	CHECK_STR(expand(CT_DEFAULT_OUTPUT, &v), "cuptrace/node-a-1234.ctr");
}

static void test_malformed(void)
{
	static const struct {
		const char *pat, *why;
	} bad[] = {
		{"out/%x.ctr", "unknown token %x"},
		{"%R", "unknown token %R"},
		{"%", "lone %"},
		{"out/r%", "lone %"},
		{"%q", "%q needs {VAR}"},
		{"%qJOB", "%q needs {VAR}"},
		{"%q{", "unclosed %q{"},
		{"%q{JOB", "unclosed %q{"},
		{"%q{}", "empty %q{}"},
		{"%q{}x}", "empty %q{}"},
		{"ok%%%", "lone %"},
	};
	char why[128], out[256];
	struct ct_pattern_vals v = vals("h");
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		why[0] = 0;
		CHECK_EQ(ct_pattern_check(bad[i].pat, why, sizeof why), -1);
		if (!strstr(why, bad[i].why)) {
			fprintf(stderr, "%s: \"%s\" does not say \"%s\"\n", bad[i].pat, why, bad[i].why);
			exit(1);
		}
		CHECK_EQ(ct_pattern_expand(bad[i].pat, &v, out, sizeof out), -1);
	}
	static const char *const good[] = {
		"", "x", "%%", "%r%l%w%h%p", "%q{A}%q{B}", "%q{A}}", "a/%q{X Y}/b", "100%%/",
	};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++)
		CHECK_EQ(ct_pattern_check(good[i], why, sizeof why), 0);
}

/* The component of `s` that holds byte i. */
static void component_at(const char *s, size_t i, size_t *start, size_t *end)
{
	*start = i;
	while (*start > 0 && s[*start - 1] != '/')
		(*start)--;
	*end = i;
	while (s[*end] && s[*end] != '/')
		(*end)++;
}

static int count(const char *s, char c)
{
	int n = 0;
	for (; *s; s++)
		n += *s == c;
	return n;
}

/* Splits by '/' and returns component k (patterns here have no '/' in
 * variable names). */
static void nth_component(const char *s, int k, char *out, size_t len)
{
	for (; k > 0; k--)
		s = strchr(s, '/') + 1;
	size_t n = strcspn(s, "/");
	snprintf(out, len, "%.*s", (int)(n < len - 1 ? n : len - 1), s);
}

/* The result stays where the pattern says: values add no '/', no control
 * bytes, and turn no component into "." or ".." unless the pattern wrote
 * that component literally. */
static void check_contained(const char *pat, const struct ct_pattern_vals *v)
{
	char out[4096];
	CHECK_EQ(ct_pattern_expand(pat, v, out, sizeof out), 0);
	CHECK_EQ(count(out, '/'), count(pat, '/'));
	for (const char *p = out; *p; p++)
		CHECK((unsigned char)*p >= 0x20);
	for (size_t i = 0; out[i]; i++) {
		size_t a, b;
		component_at(out, i, &a, &b);
		int dots = b - a == 1 ? out[a] == '.' : b - a == 2 && out[a] == '.' && out[a + 1] == '.';
		if (!dots)
			continue;
		int k = 0;
		for (size_t j = 0; j < a; j++)
			k += out[j] == '/';
		char pc[256];
		nth_component(pat, k, pc, sizeof pc);
		if ((size_t)(b - a) != strlen(pc) || strncmp(pc, out + a, b - a)) {
			fprintf(stderr, "pattern \"%s\" gave \"%s\": component %d became \"%.*s\"\n", pat,
				out, k, (int)(b - a), out + a);
			exit(1);
		}
		i = b - (out[b] == 0);
	}
}

static void test_hostile(void)
{
	static char big[10001];
	memset(big, 'v', 10000);
	static const char *const hostile[] = {
		"..", ".", "...", "../../etc/passwd", "/abs", "a/b", "a/../b", "./", "..\n", "\n",
		"\x01\x1f\x7f", "", "x/", "/", "%r", "\xff\xfe", big,
	};
	static const char *const pats[] = {
		"out/%h/r.ctr",	    "out/%q{V}/r.ctr",	"out/.%q{V}/r.ctr",   "out/..%q{V}/r.ctr",
		"out/%q{V}./r.ctr", "out/%q{V}%q{V}/x", "%q{V}",	      "%q{V}/x",
		"out/%h%q{V}",	    "out/%q{V}.%q{V}",	"./out/../out/%h/",   "%q{V}/",
		"out/.%q{U}/r.ctr", "out/..%q{U}/x",	"out/%q{U}.%q{U}/x", "../%h.%q{U}/x",
	};
	char env0[10100];
	const char *env[] = {env0, NULL};
	env_tab = env;
	for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
		snprintf(env0, sizeof env0, "V=%s", hostile[i]);
		struct ct_pattern_vals v = vals(hostile[i]);
		for (size_t j = 0; j < sizeof pats / sizeof *pats; j++)
			check_contained(pats[j], &v);
	}

	/* Values are cut to 200 bytes each. */
	snprintf(env0, sizeof env0, "V=%s", big);
	struct ct_pattern_vals v = vals(big);
	const char *out = expand("d/%h-%q{V}", &v);
	CHECK_EQ(strlen(out), 2 + 200 + 1 + 200);
	/* Dots are kept inside names, replaced only where they would make
	 * a "." or ".." component. */
	snprintf(env0, sizeof env0, "V=a..b");
	CHECK_STR(expand("d/%q{V}.ctr", &v), "d/a..b.ctr");
	snprintf(env0, sizeof env0, "V=..");
	CHECK_STR(expand("d/%q{V}.ctr", &v), "d/__.ctr");
}

static void test_too_long(void)
{
	struct ct_pattern_vals v = vals("host");
	char out[64];
	/* "out/3-host.ctr" is 14 bytes: it needs 15 with the NUL. */
	CHECK_EQ(ct_pattern_expand("out/%r-%h.ctr", &v, out, 15), 0);
	CHECK_STR(out, "out/3-host.ctr");
	CHECK_EQ(ct_pattern_expand("out/%r-%h.ctr", &v, out, 14), -1);
	CHECK_EQ(ct_pattern_expand("out/%r-%h.ctr", &v, out, 5), -1);
	CHECK_EQ(ct_pattern_expand("out/%r-%h.ctr", &v, out, 1), -1);
	CHECK_EQ(ct_pattern_expand("", &v, out, 1), 0);
	CHECK_STR(out, "");
	CHECK_EQ(ct_pattern_expand("x", &v, out, 0), -1);
	/* The default name appended to a directory must fit as well:
	 * "d/host-1234.ctr" is 15 bytes. */
	CHECK_EQ(ct_pattern_expand("d/", &v, out, 16), 0);
	CHECK_STR(out, "d/host-1234.ctr");
	CHECK_EQ(ct_pattern_expand("d/", &v, out, 15), -1);
	/* Writes stay inside the buffer. */
	char guard[80];
	memset(guard, 'G', sizeof guard);
	struct ct_pattern_vals w = vals("abcdefghij");
	CHECK_EQ(ct_pattern_expand("0123456789%h%h%h", &w, guard, 30), -1);
	for (size_t i = 30; i < sizeof guard; i++)
		CHECK_EQ(guard[i], 'G');
}

/* The job's directory (the flight recorder's marker): the pattern's
 * directories before the first per-process one. */
static void test_job_dir(void)
{
	static const char *const env[] = {"JOB=j7", NULL};
	env_tab = env;
	struct ct_pattern_vals v = vals("node-a");
	char out[4096];
	static const char *const cases[][2] = {
	    {"traces/r%r.ctr", "traces"},
	    {"traces/%h/r%r.ctr", "traces"},
	    {"/scratch/%q{JOB}/w%w/%h-%p.ctr", "/scratch/j7/w16"},
	    {"a/b/", "a/b"},
	    {"%h/r%r.ctr", "."},
	    {"r%r.ctr", "."},
	    {"/r.ctr", "/"},
	    {"out/run%%1/r%l/x.ctr", "out/run%1"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		CHECK_EQ(ct_pattern_job_dir(cases[i][0], &v, out, sizeof out), 0);
		CHECK_STR(out, cases[i][1]);
	}
	CHECK_EQ(ct_pattern_job_dir("bad/%z", &v, out, sizeof out), -1);
}

int main(void)
{
	test_tokens();
	test_job_dir();
	test_malformed();
	test_hostile();
	test_too_long();
	return 0;
}
