// SPDX-License-Identifier: MIT
/* Messages of the injected library on stderr, one line each, written with
 * a single write(2) so that lines of several processes do not interleave. */
#ifndef CT_LOG_H
#define CT_LOG_H

#include "config.h"

extern int ct_log_level;

void ct_log(enum ct_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "cuptrace: error: ..." regardless of the level (bad configuration). */
void ct_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "cuptrace: ..." unless CUPTRACE_LOG=quiet (what the user asked to hear). */
void ct_log_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define ct_warn(...) ct_log(CT_LOG_WARN, __VA_ARGS__)
#define ct_info(...) ct_log(CT_LOG_INFO, __VA_ARGS__)
#define ct_debug(...) ct_log(CT_LOG_DEBUG, __VA_ARGS__)

/* Takes a copy of stderr for the messages (at start: log.c says why). */
void ct_log_open(void);

/* Logs only the first time the flag is seen clear. */
#define ct_once(flag, level, ...)                                                   \
	do {                                                                        \
		static int flag;                                                    \
		if (!__atomic_exchange_n(&flag, 1, __ATOMIC_RELAXED))               \
			ct_log(level, __VA_ARGS__);                                 \
	} while (0)

#endif
