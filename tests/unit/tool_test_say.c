// SPDX-License-Identifier: MIT
/* util/say.h, the tools' lines on stderr: each prefix, the command set at
 * dispatch named by say_cmd* only, the newline added, a line longer than
 * the one-write buffer whole, and errno kept for the caller. */
#include "check.h"
#include "util/say.h"

#include <errno.h>
#include <unistd.h>

static FILE *cap;

/* What the calls since the last look wrote on stderr (a copy). */
static char *said(void)
{
	static char buf[8192];
	int fd = fileno(cap);
	fflush(stderr);
	off_t end = lseek(fd, 0, SEEK_CUR);
	CHECK(end >= 0 && (size_t)end < sizeof buf);
	CHECK_EQ(pread(fd, buf, (size_t)end, 0), end);
	buf[end] = 0;
	CHECK(ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0);
	return strdup(buf);
}

int main(void)
{
	cap = tmpfile();
	CHECK(cap);
	int saved = dup(2);
	CHECK(saved >= 0 && dup2(fileno(cap), 2) == 2);

	say_cmd("-j needs a number >= %d", 1); /* no command set */
	char *none = said();
	say("%s: %s", "a.ctr", "truncated");
	say_warning("%zu of %zu", (size_t)1, (size_t)2);
	say_note("n");
	say_error("CUPTRACE_OUTPUT=%s", "x");
	char *plain = said();

	say_command("stats");
	say_cmd("--by %s: expected step", "x");
	say_cmd_warning("%s holds no steps", "b.ctr");
	say_cmd_note("1 NCCL log left out");
	say("wrote %s", "o.json"); /* the shared code's words name no command */
	char *cmd = said();

	char big[5000];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = 0;
	errno = ENOSPC;
	say_cmd_warning("%s|", big);
	int e = errno;
	char *lng = said();

	CHECK(dup2(saved, 2) == 2);
	CHECK_STR(none, "cuptrace: -j needs a number >= 1\n");
	CHECK_STR(plain, "cuptrace: a.ctr: truncated\n"
	                 "cuptrace: warning: 1 of 2\n"
	                 "cuptrace: note: n\n"
	                 "cuptrace: error: CUPTRACE_OUTPUT=x\n");
	CHECK_STR(cmd, "cuptrace stats: --by x: expected step\n"
	               "cuptrace stats: warning: b.ctr holds no steps\n"
	               "cuptrace stats: note: 1 NCCL log left out\n"
	               "cuptrace: wrote o.json\n");
	const char *head = "cuptrace stats: warning: ";
	CHECK_EQ(strlen(lng), strlen(head) + strlen(big) + 2);
	CHECK(!strncmp(lng, head, strlen(head)));
	CHECK(!strncmp(lng + strlen(head), big, strlen(big)));
	CHECK_STR(lng + strlen(head) + strlen(big), "|\n");
	CHECK_EQ(e, ENOSPC);
	free(none), free(plain), free(cmd), free(lng);
	return 0;
}
