/* cuptrace events: the resolved events of the traces (model/model.h), one
 * per line, tab-separated, for scripts: every slice, instant, counter,
 * flow and track exactly as every other output sees them. */
#include "cmd/cmd.h"
#include "out/events_tsv.h"
#include "read/inputs.h"

#include <getopt.h>
#include <stdio.h>

static void help(FILE *f)
{
	fputs("usage: cuptrace events [--strict] INPUT...\n\n"
	      "Prints the resolved events of the traces (matched calls, GPU work,\n"
	      "NVTX ranges, NCCL operations, flows, tracks), one per line:\n"
	      "  file type cat track track_kind track_name ts_ns end_ns name [to_track to_ts_ns]\n"
	      "Times are nanoseconds on the job's timeline (ranks aligned). docs/MODEL.md\n"
	      "says what each type and category is. --strict: an unusable input is an\n"
	      "error (default: skipped with a warning).\n",
	      f);
}

int cmd_events(int argc, char **argv)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {"strict", no_argument, NULL, 'S'},
					   {0, 0, 0, 0}};
	int c, strict = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'S') {
			strict = 1;
			continue;
		}
		return cmd_usage(c, help);
	}
	if (optind >= argc)
		return cmd_usage(0, help);
	struct inputs in;
	if (inputs_open(&in, argv + optind, argc - optind, strict))
		return 1;
	int rc = 0;
	struct events_tsv e = {stdout, NULL};
	events_tsv_head(stdout);
	for (size_t k = 0; k < in.n; k++) {
		if (model_file(&in.v[k], &events_tsv_consumer, &e, NULL)) {
			fprintf(stderr, "cuptrace: %s\n", in.v[k].f.err);
			rc = 1;
		}
		tfile_release(&in.v[k]);
	}
	if (fflush(stdout) || ferror(stdout)) {
		perror("cuptrace events: stdout");
		rc = 1;
	}
	inputs_close(&in);
	return rc;
}
