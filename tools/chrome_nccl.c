/* NCCL operations (NCCL kinds) as Chrome trace events. */
#include "chrome_int.h"

void chrome_nccl_event(struct chrome *c, const struct ct_event *ev)
{
	(void)c, (void)ev;
}

void chrome_nccl_file_end(struct chrome *c)
{
	(void)c;
}
