/* Flushing at exit, on signals and across fork. */
#ifndef CT_SIGNALS_H
#define CT_SIGNALS_H

/* Installs the SIGINT/SIGTERM and fatal-signal flushers (once). */
void ct_signals_install(void);
/* pthread_atfork handlers (once). */
void ct_fork_install(void);

#endif
