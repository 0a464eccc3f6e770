// SPDX-License-Identifier: MIT
#ifndef CT_PROGRESS_H
#define CT_PROGRESS_H

/* Progress line on stderr for long runs on a terminal: nothing before a
 * second has passed, "\r<what>: N events..." after, a final line at the end
 * when one was shown. */
void progress(const char *what, unsigned long long done, int final);

#endif
