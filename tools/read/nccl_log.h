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
 * does not parse is counted as bad. */
#ifndef CT_NCCL_LOG_H
#define CT_NCCL_LOG_H

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

/* Does this text (a file's beginning) look like an NCCL log? */
int nccl_log_sniff(const char *buf, size_t len);

#endif
