/* Rank, local rank and world size from the launcher's environment. */
#ifndef CT_RANKENV_H
#define CT_RANKENV_H

struct ct_rankinfo {
	long rank, local_rank, world_size, local_size; /* -1 = unknown */
	const char *source;			       /* the variable rank came from, or "" */
};

void ct_rank_detect(struct ct_rankinfo *ri, const char *(*get)(const char *));

#endif
