// SPDX-License-Identifier: MIT
/* Temporary output files removed when a signal ends the command (SIGINT,
 * SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ): an interrupted conversion or export
 * leaves nothing half-written behind. Several outputs may be open at once
 * (--split-ranks with workers), and the directory --split-ranks made. */
#ifndef CT_TMP_GUARD_H
#define CT_TMP_GUARD_H

/* Starts guarding path (copied). Returns a slot for tmp_unguard, or -1
 * when every slot is taken (the file is then only removed on errors). */
int tmp_guard(const char *path);
/* The same for a directory the command created: removed on the signal
 * when it is still empty (after the guarded files). */
int tmp_guard_dir(const char *path);
/* Stops guarding (before the file is renamed or removed). */
void tmp_unguard(int slot);

/* mkdir for --split-ranks: creates dir unless it exists (then 0 with
 * *guard_slot -1; -1 and errno on failure). A directory it creates is
 * guarded until tmp_mkdir_done, which removes it unless keep (when empty:
 * an interrupted or failed run leaves no empty directory behind). */
int tmp_mkdir(const char *dir, int *guard_slot);
void tmp_mkdir_done(const char *dir, int guard_slot, int keep);

#endif
