/* cuptrace convert: every input on one timeline, in the format that the
 * output name asks for. */
#include "chrome.h"
#include "cmd.h"
#include "inputs.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
	fputs("usage: cuptrace convert [-o OUT] INPUT...\n\n"
	      "Merges the .ctr files (or directories of them) onto one timeline.\n"
	      "OUT's extension picks the format: .json or .json.gz (Chrome trace for\n"
	      "Perfetto, chrome://tracing and HTA). Default OUT: the input's name with\n"
	      ".json, or cuptrace.json for several inputs. \"-\" writes to stdout.\n",
	      f);
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

static void default_out(char *buf, size_t len, char **args, int n)
{
	if (n != 1) {
		snprintf(buf, len, "cuptrace.json");
		return;
	}
	snprintf(buf, len, "%s", args[0]);
	size_t l = strlen(buf);
	while (l > 1 && buf[l - 1] == '/')
		buf[--l] = 0;
	if (ends_with(buf, ".ctr"))
		buf[l - 4] = 0;
	strncat(buf, ".json", len - strlen(buf) - 1);
}

int cmd_convert(int argc, char **argv)
{
	static const struct option lo[] = {
		{"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
	const char *outpath = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		if (c == 'o')
			outpath = optarg;
		else if (c == 'h') {
			help(stdout);
			return 0;
		} else {
			help(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		help(stderr);
		return 2;
	}
	char defpath[4096];
	if (!outpath) {
		default_out(defpath, sizeof defpath, argv + optind, argc - optind);
		outpath = defpath;
	}
	if (!ends_with(outpath, ".json") && !ends_with(outpath, ".json.gz") && strcmp(outpath, "-")) {
		fprintf(stderr, "cuptrace convert: %s: unsupported output format (use .json or .json.gz)\n",
			outpath);
		return 2;
	}
	struct inputs in;
	if (inputs_open(&in, argv + optind, argc - optind))
		return 1;
	struct out o;
	if (out_open(&o, outpath)) {
		fprintf(stderr, "cuptrace: %s: %s\n", outpath, strerror(errno));
		inputs_close(&in);
		return 1;
	}
	int rc = 0;
	struct chrome *ch = chrome_begin(&o, &in, in.n == 1 ? in.v[0].rank : 0);
	for (size_t i = 0; i < in.n; i++) {
		if (chrome_file(ch, &in.v[i]))
			rc = 1;
		else if (in.v[i].f.status == CT_TRUNCATED)
			fprintf(stderr, "cuptrace: warning: %s\n", in.v[i].f.err);
	}
	chrome_end(ch);
	if (out_close(&o)) {
		fprintf(stderr, "cuptrace: writing %s: %s\n", outpath, strerror(errno));
		rc = 1;
	}
	inputs_close(&in);
	if (strcmp(outpath, "-"))
		fprintf(stderr, "cuptrace: wrote %s\n", outpath);
	return rc;
}
