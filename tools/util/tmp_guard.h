/* Temporary output files removed when a signal ends the command (SIGINT,
 * SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ): an interrupted conversion or export
 * leaves nothing half-written behind. Several outputs may be open at once
 * (--split-ranks with workers). */
#ifndef CT_TMP_GUARD_H
#define CT_TMP_GUARD_H

/* Starts guarding path (copied). Returns a slot for tmp_unguard, or -1
 * when every slot is taken (the file is then only removed on errors). */
int tmp_guard(const char *path);
/* Stops guarding (before the file is renamed or removed). */
void tmp_unguard(int slot);

#endif
