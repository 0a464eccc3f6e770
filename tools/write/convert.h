// SPDX-License-Identifier: MIT
/* Conversion of many files on all cores (jobs: -j, 0 for every CPU): one
 * timeline into one output, or one Kineto-style file per rank. Memory
 * stays flat: each worker holds one file's decoder state and a chunk of
 * output. */
#ifndef CT_CONVERT_H
#define CT_CONVERT_H

#include "read/inputs.h"

/* All inputs into one Chrome JSON (.json, .json.gz, "-"). 0, or 1 when an
 * input was corrupt or the output could not be written. *written: how many
 * outputs were written whole (0 or 1); a file that was not is removed. */
int convert_merged(struct inputs *in, const char *outpath, int jobs, int any_order, size_t *written);
/* All inputs into one Perfetto protobuf trace (.pftrace, write/pftrace/pftrace.h);
 * plain: packets not compressed. */
int convert_pftrace(struct inputs *in, const char *outpath, int jobs, int any_order, int plain,
		    size_t *written);
/* One DIR/rank<R>.json[.gz] per input file (*written of in->n). */
int convert_split(struct inputs *in, const char *dir, int gz, int jobs, size_t *written);

#endif
