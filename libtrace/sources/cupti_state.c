// SPDX-License-Identifier: MIT
/* What the parts of the CUPTI source share, at the bottom of their order
 * (cupti.c -> cupti_buf.c -> cupti_rec.c -> cupti_names.c -> here):
 * whether the GPU part works, the process that set CUPTI up, CUPTI's clock
 * offset, whether the torch source's ids go to CUPTI, and the one way to
 * give up on failure. */
#include "cupti_int.h"
#include "log.h"

#include <stdio.h>

_Atomic int ct_cupti_on;
_Atomic int ct_cupti_failed;
int ct_cupti_pid;
int64_t ct_cupti_clock_offset;
_Atomic int ct_cupti_ext_on;
void (*_Atomic ct_cupti_fail_hook)(void);

const char *ct_cupti_strerror(CUptiResult r)
{
	const char *s = NULL;
	if (r == CUPTI_SUCCESS)
		return "CUPTI_SUCCESS";
	/* Without CUPTI (or with CUPTI failing) there may be no string. */
	if (!ct_cu.result_string || ct_cu.result_string(r, &s) != CUPTI_SUCCESS || !s) {
		static __thread char buf[32];
		snprintf(buf, sizeof buf, "CUPTI error %d", (int)r);
		return buf;
	}
	return s;
}

void ct_cupti_fail(const char *call, CUptiResult r)
{
	if (atomic_exchange(&ct_cupti_failed, 1))
		return;
	atomic_store(&ct_cupti_on, 0);
	atomic_store(&ct_cupti_ext_on, 0);
	ct_warn("GPU tracing stopped: %s failed (%s); the program goes on, GPU events after this "
	        "point are not recorded",
	        call, ct_cupti_strerror(r));
	void (*hook)(void) = atomic_load(&ct_cupti_fail_hook);
	if (hook)
		hook();
}
