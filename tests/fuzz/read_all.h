// SPDX-License-Identifier: MIT
/* Shared by the file-level fuzz targets: reads `data` as a whole .ctr file
 * through ct_file_open / ct_file_next, touching every value a tool reads. */
#ifndef CT_FUZZ_READ_ALL_H
#define CT_FUZZ_READ_ALL_H

#include "dec.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Where the values read go, so that the reads are not optimised away. */
static volatile uint64_t fuzz_sink;

static inline void fuzz_read_all(const uint8_t *data, size_t size)
{
	/* A memfd, so that the reader's own fopen/fread paths run. */
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	static struct ct_file f; /* large: keep it off the stack */
	if (ct_file_open(&f, path) == 0) {
		struct ct_event ev;
		uint64_t sum = 0;
		while (ct_file_next(&f, &ev)) {
			const struct ct_schema *s = ct_schema_of(ev.kind);
			if (!s || ev.tid < 0)
				__builtin_trap();
			for (unsigned i = 0; i < s->nfields; i++) {
				sum += ev.v[i];
				if (s->type[i] == CT_F_SID || s->type[i] == CT_F_STR)
					for (uint32_t j = 0; j < ev.sl[i]; j++)
						sum += (uint8_t)ev.s[i][j];
			}
		}
		/* The reader always says how it ended, and why when not clean. */
		if (f.status == CT_READING || (f.status != CT_CLEAN && !f.err[0]))
			__builtin_trap();
		/* Damage skipped is counted, and a clean file had none. */
		if ((f.status == CT_DAMAGED && !f.damaged) || (f.status == CT_CLEAN && f.damaged) ||
		    (f.lost_refs && !f.damaged))
			__builtin_trap();
		sum += strlen(ct_status_name(f.status)) + strlen(f.h.host) + f.h.cmdline_len;
		fuzz_sink = sum;
		ct_file_close(&f);
	} else if (!f.err[0]) {
		__builtin_trap();
	}
	close(fd);
}

#endif
