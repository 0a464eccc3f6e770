// SPDX-License-Identifier: MIT
/* What the commands share (cmd.h): the usage tail, option and output checks, the default output name. */
#include "cmd/cmd.h"
#include "job/clocks.h"
#include "job/drive.h"
#include "stats/collect.h"
#include "stats/piece_slow.h"
#include "util/mpirt.h"
#include "util/say.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cmd_usage(int c, void (*help)(FILE *))
{
	help(c == 'h' ? stdout : stderr);
	return c == 'h' ? 0 : 2;
}

void cmd_drop_logs(struct inputs *in, const char *why)
{
	if (!in->nlogs)
		return;
	say_cmd_note("%zu NCCL log%s (%s%s) left out: %s", in->nlogs, in->nlogs > 1 ? "s" : "",
	             in->logs[0], in->nlogs > 1 ? ", ..." : "", why);
	for (size_t i = 0; i < in->nlogs; i++)
		free(in->logs[i]);
	in->nlogs = 0;
}

int cmd_out_dir(const char *path, char *why, size_t wlen)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	struct stat st;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(why, wlen, "the directory %.300s does not exist", dir);
		return -1;
	}
	if (access(dir, W_OK)) {
		snprintf(why, wlen, "cannot write in %.300s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

void cmd_default_out(char *buf, size_t len, char **args, int n, const char *ext)
{
	if (n != 1) {
		snprintf(buf, len, "cuptrace%s", ext);
		return;
	}
	snprintf(buf, len, "%s", args[0]);
	size_t l = strlen(buf);
	while (l > 1 && buf[l - 1] == '/')
		buf[--l] = 0;
	const char *last = strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf;
	if (!strcmp(last, ".") || !strcmp(last, "..") || !strcmp(buf, "/")) {
		/* `convert .` wrote "..json": the directory's own name, here */
		char real[PATH_MAX];
		const char *base = realpath(buf, real) ? strrchr(real, '/') + 1 : "";
		snprintf(buf, len, "%s", *base ? base : "cuptrace");
		l = strlen(buf);
	}
	if (l > 4 && !strcmp(buf + l - 4, ".ctr"))
		buf[l - 4] = 0;
	strncat(buf, ext, len - strlen(buf) - 1);
}

int cmd_align(const char *arg, int *align)
{
	if (!clocks_parse(arg, align))
		return 0;
	say_cmd("--align %s: expected none or collectives", arg);
	return -1;
}

int cmd_place(struct inputs *in, int align)
{
	struct clocks ck;
	int rc = clocks_align(in, align, 1, &ck);
	if (!rc && !mpirt_rank()) /* an MPI job's ranks all place them: said once */
		clocks_print(&ck, stderr, "cuptrace: ");
	clocks_free(&ck);
	return rc ? -1 : 0;
}

int cmd_jobs(const char *arg, int *jobs)
{
	char *end;
	long v = strtol(arg, &end, 10);
	if (end != arg && !*end && v >= 1 && v <= 1 << 20) {
		/* Several jobs on one file each read all of it (convert's shares):
		 * beyond the cores they only cost time and memory (-j 1000 on two
		 * cores took 243 s against 0.7 s). Up to 4x the cores is kept, so
		 * that the splitting is tested on small machines. */
		int most = 4 * drive_jobs(0, (size_t)-1);
		if (v > most) {
			say_cmd("-j %ld: more than 4 per core available; using %d", v, most);
			v = most;
		}
		*jobs = (int)v;
		return 0;
	}
	say_cmd("-j needs a number >= 1");
	return -1;
}

int cmd_steps(const char *arg, struct stats_opts *opts)
{
	if (!stats_parse_steps(opts, arg))
		return 0;
	say_cmd("--steps %s: expected A-B (A <= B) or A (step numbers)", arg);
	return -1;
}

int cmd_piece(struct inputs *in, struct piece *p, int jobs)
{
	if (!piece_given(p))
		return 0;
	int rc = piece_apply(in, p, jobs);
	return rc == -2 ? 2 : rc ? 1 : 0;
}

void cmd_piece_said(const struct inputs *in)
{
	if (!in->piece)
		return;
	char line[512];
	piece_describe(in, NULL, line, sizeof line);
	say("%s", line);
	if (piece_empty(in))
		say_warning("no event of the ranks kept falls in this window: the output holds "
		            "their tracks only");
}
