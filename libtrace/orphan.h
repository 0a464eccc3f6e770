// SPDX-License-Identifier: MIT
/* Whether the program has no thread of its own left: main ended with
 * pthread_exit() and every thread it started is gone, so that only the
 * library's threads (cuptrace-write, cuptrace-cupti) keep the process
 * alive. glibc's last thread calls exit(0); with the library's threads
 * about, none of the program's is last, and the process never ended. */
#ifndef CT_ORPHAN_H
#define CT_ORPHAN_H

/* 1 when so; a read of /proc/self/task/<pid>/stat when main still runs. */
int ct_program_gone(void);

#endif
