// SPDX-License-Identifier: MIT
/* Shared helpers for GPU events: names, demangling. */
#include "read/gpu_fields.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler (C linkage): the traced process never demangles,
 * the tools do. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

const char *gpu_copy_kind(uint64_t k)
{
	static const char *const n[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
	                                "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
	return k < sizeof n / sizeof *n ? n[k] : "Unknown";
}

const char *gpu_memory_kind(uint64_t k)
{
	static const char *const n[] = {"Unknown", "Pageable", "Pinned",        "Device",
	                                "Array",   "Managed",  "Device Static", "Managed Static"};
	return k < sizeof n / sizeof *n ? n[k] : "Unknown";
}

int gpu_memory_on_device(uint64_t k)
{
	return k == 3 || k == 4 || k == 5 || k == 6 || k == 7;
}

const char *gpu_sync_name(uint64_t type)
{
	switch (type) {
	case 1:
		return "Event Sync";
	case 2:
		return "Stream Wait Event";
	case 3:
		return "Stream Sync";
	case 4:
		return "Context Sync";
	default:
		return "Unknown Sync";
	}
}

char *gpu_demangle(const char *s, size_t n, size_t *outlen)
{
	char *z = xmalloc(n + 1);
	memcpy(z, s, n);
	z[n] = 0;
	if (n > 2 && s[0] == '_' && s[1] == 'Z' && !memchr(s, 0, n)) {
		int status = -1;
		char *d = __cxa_demangle(z, NULL, NULL, &status);
		if (d && status == 0) {
			free(z);
			*outlen = strlen(d);
			return d;
		}
		free(d);
	}
	*outlen = n;
	return z;
}

/* Whether the configuration's CUPTRACE_TRACE names one of src (absent:
 * when the header has no such line). */
static int traces_any(const struct ct_header *h, const char *const *src, size_t nsrc, int absent)
{
	const char *p = h->config ? strstr(h->config, "CUPTRACE_TRACE=") : NULL;
	if (!p)
		return absent;
	p += strlen("CUPTRACE_TRACE=");
	size_t n = strcspn(p, "\n");
	for (size_t i = 0; i < nsrc; i++) {
		size_t m = strlen(src[i]);
		for (const char *q = p; q + m <= p + n; q++)
			if (!memcmp(q, src[i], m) && (q == p || q[-1] == ',') &&
			    (q + m == p + n || q[m] == ','))
				return 1;
	}
	return 0;
}

int gpu_file_traces_cuda(const struct ct_header *h)
{
	static const char *const src[] = {"kernel", "memcpy", "api", "sync", "memory", "cuda"};
	return traces_any(h, src, sizeof src / sizeof *src, 0);
}

int gpu_file_traces_torch(const struct ct_header *h)
{
	static const char *const src[] = {"torch"};
	return traces_any(h, src, 1, 0);
}

int gpu_file_records_kernels(const struct ct_file *file)
{
	if (file->final_footer)
		return file->f_events[CT_EV_KERNEL] > 0;
	static const char *const src[] = {"kernel", "cuda"};
	return traces_any(&file->h, src, 2, 1); /* the default records kernels */
}
