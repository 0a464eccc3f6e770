// SPDX-License-Identifier: MIT
/* Whether the process that writes a trace file is still running: a file
 * without footer is then still being written, not cut short. */
#ifndef CT_LIVE_H
#define CT_LIVE_H

#include <stdint.h>

#include "read/inputs.h"

/* 1 when process pid of host is this host's and running, 0 when it is
 * this host's and gone, -1 when it is another host's (unknown). */
int trace_process_alive(const char *host, uint64_t pid);

/* t->f.err, said as "still being written" instead of "did not exit
 * cleanly" when t ended without footer and its process is running. */
const char *tfile_err(struct tfile *t);

#endif
