// SPDX-License-Identifier: MIT
/* NCCL_DEBUG=INFO logs. Two kinds of lines matter:
 *
 *   [timestamp] host:pid:tid [dev] NCCL INFO AllReduce: opCount 3 sendbuff 0x.. recvbuff 0x..
 *       count 1024 datatype 7 op 0 root 0 comm 0x.. [nranks=8] stream 0x..
 *       (NCCL_DEBUG_SUBSYS=COLL; the same from NCCL 2.18 to 2.29; RCCL
 *       appends "task T globalrank G"; the timestamp is optional)
 *   ... NCCL INFO ncclCommInitRank comm 0x.. rank 3 nranks 8 cudaDev .. - Init COMPLETE
 *       (and the other lines naming "comm 0x.. rank R nranks N" or
 *       "rank R nranks N": which rank a process is)
 *
 * Everything else is skipped; a line that starts like a collective but
 * does not parse is counted as bad.
 *
 * Steps (stats --steps on a log): a line that matches a step pattern
 * begins a step, numbered by the pattern's first group that matched a
 * decimal number, else one after the step before. */
#ifndef CT_NCCL_LOG_H
#define CT_NCCL_LOG_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

enum nccl_line { NL_OTHER, NL_COLL, NL_RANK, NL_BAD };

struct nccl_log_line {
	/* the prefix; pid -1 when the line has none */
	char host[128];
	long pid, tid;
	/* NL_COLL */
	char func[32];
	uint64_t opcount, count, comm, stream;
	long datatype, op, root, nranks;
	long globalrank; /* RCCL; -1 when absent */
	/* NL_RANK (comm 0 when the line names none) */
	long rank;
};

/* Parses one line (without its newline). */
enum nccl_line nccl_log_parse(const char *line, size_t len, struct nccl_log_line *out);

/* Lines that begin a step: a POSIX extended regular expression. */
struct nccl_log_steps {
	regex_t re;
	int builtin; /* the default pattern: never one of NCCL's own lines */
};

/* The default: what training loops print once per iteration, "iteration
 * N" (Megatron-LM), "iter N" (nanoGPT), "step N", "step: N" (torchtitan),
 * "step=N" (DeepSpeed), in any case, outside NCCL's own lines. */
extern const char nccl_log_step_default[];

/* Compiles pattern (NULL: the default). 0, or -1 with regcomp's reason in
 * err. */
int nccl_log_steps_init(struct nccl_log_steps *s, const char *pattern, char *err, size_t errlen);
void nccl_log_steps_free(struct nccl_log_steps *s);

/* Does this line (its newline not needed) begin a step? 1 with *num the
 * number of the first group that matched a decimal number (at most 18
 * digits), or -1 when no group did; 0 when the line is no mark. */
int nccl_log_step_mark(const struct nccl_log_steps *s, const char *line, size_t len,
                       int64_t *num);

/* Does this text (a file's beginning) look like an NCCL log? */
int nccl_log_sniff(const char *buf, size_t len);

#endif
