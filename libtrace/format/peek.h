// SPDX-License-Identifier: MIT
/* Who wrote a trace file, read from its header alone (no decoder): the
 * library uses it to tell a file of its own process's earlier image
 * (before exec) from a real name collision. */
#ifndef CT_PEEK_H
#define CT_PEEK_H

#include <stddef.h>
#include <stdint.h>

/* The host and pid in the header at the start of buf (n bytes of a .ctr
 * file). 0, or -1 when buf holds no header with both fields. */
int ct_header_peek(const uint8_t *buf, size_t n, char *host, size_t hostlen, uint64_t *pid);

#endif
