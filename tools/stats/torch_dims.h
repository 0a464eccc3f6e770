// SPDX-License-Identifier: MIT
/* Input shapes as torch.profiler prints them: the record's text "2,3;3"
 * (inputs by ';', sizes by ',') becomes "[[2, 3], [3]]". */
#ifndef CT_TORCH_DIMS_H
#define CT_TORCH_DIMS_H

#include <stddef.h>

/* Writes the text into buf (NUL-terminated, cut to fit) and returns its
 * length; characters other than digits, ',' and ';' are left out. */
size_t torch_dims_text(const char *dims, size_t len, char *buf, size_t cap);

#endif
