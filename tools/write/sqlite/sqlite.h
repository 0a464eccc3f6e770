// SPDX-License-Identifier: MIT
/* `cuptrace export`: the model's events as an SQLite database with Nsight
 * Systems' export tables (docs/SQLITE.md). SQLite is written from one
 * thread, so the files are read one after another in the calling thread. */
#ifndef CT_SQLITE_H
#define CT_SQLITE_H

#include "read/inputs.h"

#include <stddef.h>

/* Every input into one database at path. 0, or 1 when an input was
 * corrupt (what came before the damage is in the database) or the
 * database could not be written (then no file is left). *written: 0 or 1. */
int export_sqlite(struct inputs *in, const char *path, size_t *written);
/* One DIR/rank<R>.sqlite per input file (*written of in->n). */
int export_sqlite_split(struct inputs *in, const char *dir, size_t *written);

/* nsys's shortName of a demangled kernel name: the function's own name,
 * without return type, scopes, template arguments and parameters. */
void sqlite_short_name(const char *s, size_t n, size_t *off, size_t *len);

#endif
