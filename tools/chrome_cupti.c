/* GPU activity (CUPTI kinds) as Chrome trace events. */
#include "chrome_int.h"

void chrome_cupti_event(struct chrome *c, const struct ct_event *ev)
{
	(void)c, (void)ev;
}

void chrome_cupti_file_end(struct chrome *c)
{
	(void)c;
}
