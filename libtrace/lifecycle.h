/* Flushing at exit, on signals and across fork. */
#ifndef CT_LIFECYCLE_H
#define CT_LIFECYCLE_H

/* Installs the SIGINT/SIGTERM and fatal-signal flushers (once). */
void ct_signals_install(void);
/* pthread_atfork handlers (once). */
void ct_fork_install(void);

#endif
