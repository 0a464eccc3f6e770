#ifndef CT_CHROME_H
#define CT_CHROME_H

#include "inputs.h"
#include "out.h"

struct chrome;

/* Writes the document head; rank goes into distributedInfo. */
struct chrome *chrome_begin(struct out *o, struct inputs *in, int64_t rank);
/* Converts one file's events. -1 when the file turned out corrupt (what
 * came before the damage is written). */
int chrome_file(struct chrome *c, struct tfile *t);
void chrome_end(struct chrome *c);

#endif
