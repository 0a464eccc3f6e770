// SPDX-License-Identifier: MIT
/* The model's events as tab-separated lines (cuptrace events). */
#ifndef CT_EVENTS_TSV_H
#define CT_EVENTS_TSV_H

#include "model/model.h"

#include <stdio.h>

struct events_tsv {
	FILE *f;
	struct tfile *t;
};

extern const struct m_consumer events_tsv_consumer;
/* The column names line. */
void events_tsv_head(FILE *f);

#endif
