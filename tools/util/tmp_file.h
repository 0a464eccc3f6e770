// SPDX-License-Identifier: MIT
/* An output file written whole or not at all: it is written as
 * ".NAME.XXXXXX.tmp" beside NAME and renamed onto it when every write and
 * the close succeeded. Readers never see half a file, a failure (a full
 * disk) leaves an older NAME as it was, and a symlink at NAME is replaced,
 * never followed. The temporary file is removed if a signal ends the
 * command (tmp_guard.h). */
#ifndef CT_TMP_FILE_H
#define CT_TMP_FILE_H

#include <stdio.h>

struct tmp_file {
	char *path, *tmp;
	int guard;
};

/* The temporary file of path, created (mode from the umask) and guarded:
 * its descriptor, its name in *tmp (malloc'd, also on failure: free it),
 * the guard's slot in *guard; -1 and errno on failure (nothing left). */
int tmp_file_create(const char *path, char **tmp, int *guard);
/* A stream on the temporary file of path, or NULL (errno). */
FILE *tmp_file_open(struct tmp_file *t, const char *path);
/* Closes f and renames the file onto its name when nothing failed (also
 * when failed is set by the caller: then the file is removed). 0, or -1
 * with errno (the temporary file removed). */
int tmp_file_close(struct tmp_file *t, FILE *f, int failed);

#endif
