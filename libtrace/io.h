// SPDX-License-Identifier: MIT
/* Plain file I/O shared by the library and the tools. */
#ifndef CT_IO_H
#define CT_IO_H

#include <stddef.h>

/* Writes all n bytes, going on after short writes and EINTR. 0, or -1 with
 * errno from the write(2) that failed (left as it was when write(2)
 * returned 0). */
int ct_write_all(int fd, const void *buf, size_t n);

#endif
