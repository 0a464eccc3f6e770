// SPDX-License-Identifier: MIT
/* The library's file I/O: descriptors kept out of the program's way, and
 * writes that go on after short writes. */
#ifndef CT_IO_H
#define CT_IO_H

#include <stddef.h>
#include <sys/types.h>

/* Writes all n bytes, going on after short writes and EINTR. 0, or -1 with
 * errno from the write(2) that failed (left as it was when write(2)
 * returned 0). */
int ct_write_all(int fd, const void *buf, size_t n);

/* The lowest descriptor number the library keeps: the program's 0-2 (and
 * the low numbers a program that closes them expects to get back) are
 * never the library's. */
#define CT_FD_FLOOR 64

/* open(2) with O_CLOEXEC, the descriptor moved to CT_FD_FLOOR or above. A
 * program that runs with stdout or stderr closed would otherwise get its
 * own printf output written into the trace, and its writes to the closed
 * descriptor, which must fail with EBADF, would succeed. -1 and errno. */
int ct_open_high(const char *path, int flags, mode_t mode);

/* fd moved to CT_FD_FLOOR or above (close-on-exec), the low one closed.
 * Where the limit of open files is lower, above 2 at least; a descriptor
 * that can only be 0-2 is closed (-1, EMFILE). */
int ct_fd_high(int fd);

#endif
