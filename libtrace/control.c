// SPDX-License-Identifier: MIT
/* The control API of include/cuptrace/cuptrace.h. */
#include "cuptrace/cuptrace.h"

#include "capture.h"
#include "flight.h"
#include "lifecycle.h"
#include "trace.h"
#include "writer.h"

int ct_nvtx_push_ascii(const char *msg);
int ct_nvtx_pop(void);
void ct_nvtx_mark_ascii(const char *msg);

CT_API void cuptrace_start(void)
{
	ct_enter();
	ct_capture_api(1);
}

CT_API void cuptrace_stop(void)
{
	ct_capture_api(0);
}

CT_API void cuptrace_step(void)
{
	ct_enter();
	ct_capture_step();
}

CT_API int cuptrace_range_push(const char *name)
{
	ct_enter();
	return name ? ct_nvtx_push_ascii(name) : -1;
}

CT_API int cuptrace_range_pop(void)
{
	return ct_nvtx_pop();
}

CT_API void cuptrace_mark(const char *name)
{
	ct_enter();
	if (name)
		ct_nvtx_mark_ascii(name);
}

CT_API const char *cuptrace_flush(void)
{
	/* Bounded: a writer that cannot keep up never holds the program. */
	if (!ct.active || ct_writer_flush(CT_FLUSH_BLOCK, 0, 0, 10000))
		return NULL;
	return ct_writer_path();
}

CT_API const char *cuptrace_rotate(void)
{
	/* The writer does the switch; the caller waits as for a flush. */
	if (!ct.active || ct_writer_flush(CT_FLUSH_ROTATE, 0, 0, 10000))
		return NULL;
	return ct_writer_rotated_path();
}

CT_API int cuptrace_dump(void)
{
	ct_enter();
	/* the writer, which the first event starts, now: asked before any
	 * event, the dump still tells the job (its marker) */
	if (ct.active && ct.cfg.flight > 0)
		ct_writer_ensure();
	return ct_writer_flight_ask(CT_FL_API, 0);
}

CT_API void cuptrace_leaving(int status)
{
	ct_leaving(status);
}

CT_API int cuptrace_enabled(void)
{
	ct_start();
	return ct.active;
}
