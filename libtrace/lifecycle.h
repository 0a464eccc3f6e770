/* The life of the traced process as the library sees it: start, threads'
 * first events, fork, signals and exit. This module calls the other parts'
 * hooks in a fixed order; the parts do not call each other for it. */
#ifndef CT_LIFECYCLE_H
#define CT_LIFECYCLE_H

/* Every entry point calls it first (library constructor, NVTX, CUDA and
 * NCCL injection, control API): reads the configuration, sets capture up,
 * installs the fork handlers and, when capture runs on a timer, starts the
 * writer. Safe from any thread; only the first call does work. */
void ct_start(void);

#endif
