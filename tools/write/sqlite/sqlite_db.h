// SPDX-License-Identifier: MIT
/* The SQLite database of `cuptrace export` (docs/SQLITE.md): the tables,
 * one prepared INSERT per table, rows committed in batches (one
 * transaction each), the StringIds table kept by a string map, and a file
 * that is complete or absent: written under a temporary name beside its
 * place and renamed there only when everything went in. Formats nothing
 * and matches nothing: sqlite.c hands it rows. */
#ifndef CT_SQLITE_DB_H
#define CT_SQLITE_DB_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

enum sdb_table {
	T_STRINGS,
	T_THREADNAMES,
	T_PROCESSES,
	T_SESSION_START,
	T_ANALYSIS,     /* ANALYSIS_DETAILS: the database's time span */
	T_META_CAPTURE, /* META_DATA_CAPTURE */
	T_META_EXPORT,  /* META_DATA_EXPORT */
	T_SYSTEM_ENV,   /* TARGET_INFO_SYSTEM_ENV */
	T_GPU,
	T_STREAM, /* TARGET_INFO_CUDA_STREAM */
	T_KERNEL,
	T_MEMCPY,
	T_MEMSET,
	T_SYNC,
	T_RUNTIME, /* runtime and driver calls, as nsys */
	T_MEMORY,  /* CUDA_GPU_MEMORY_USAGE_EVENTS */
	T_NVTX,
	T_RANKS,
	T_STEPS,
	T_NCCL,
	T_HANG,
	T_TORCH_OPS,  /* CUPTRACE_TORCH_OPS */
	T_TORCH_CORR, /* CUPTRACE_TORCH_CORRELATION */
	T_TORCH_MEM,  /* CUPTRACE_TORCH_MEMORY */
	T_MPI_P2P,   /* nsys's MPI tables */
	T_MPI_COLL,
	T_MPI_WAIT,
	T_MPI_OTHER,
	T_MPI_RANKS,
	T_N
};

struct sdb_str {
	uint64_t hash;
	uint32_t off, len;
	int64_t id;
};

/* A column's value, held until its row goes in. */
struct sdb_val {
	int64_t i; /* integer, or a double's bits */
	uint32_t off, len; /* text: in the table's text buffer */
	uint8_t type;      /* SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_NULL */
};

/* Rows go in ROWS at a time through one INSERT of that many rows (the cost
 * of a statement's run shared out), the rest one by one at a commit. */
struct sdb_tab {
	sqlite3_stmt *one, *many;
	int ncol;
	unsigned n; /* rows held */
	struct sdb_val *v;
	char *text;
	size_t tlen, tcap;
};

/* The row being filled: columns 1..ncol of v. */
struct sdb_row {
	struct sdb_val *v;
	struct sdb_tab *tab;
};

struct sdb {
	sqlite3 *db;
	char *path, *tmp;
	int guard; /* tmp_guard slot */
	struct sdb_tab tab[T_N];
	int failed;     /* an error was reported; nothing more is written */
	uint64_t rows;  /* rows inserted */
	uint64_t batch; /* rows in the open transaction */
	/* StringIds: value -> id */
	struct sdb_str *strs;
	size_t nstr, capstr;
	char *arena;
	size_t alen, acap;
};

/* Creates the database under a temporary name beside path, with every
 * table and the ENUM_* rows. 0, or -1 with one line printed. */
int sdb_open(struct sdb *d, const char *path);
#define SDB_ROWS 32

/* A new row of table t, its columns set from 1 in column order; the
 * caller sets every column, then calls sdb_row. */
static inline struct sdb_row sdb_ins(struct sdb *d, enum sdb_table t)
{
	struct sdb_tab *b = &d->tab[t];
	return (struct sdb_row){b->v + (size_t)b->n * (size_t)b->ncol - 1, b};
}
void sdb_row(struct sdb *d, enum sdb_table t);
/* Text of column i (copied). */
void sdb_text(struct sdb_row r, int i, const char *p, size_t n);
/* The StringIds id of a string (added on first sight). */
int64_t sdb_string(struct sdb *d, const char *s, size_t n);
/* ok: commits and renames the file into place (0), else, or when any
 * write failed, removes it (-1, the reason printed once). */
int sdb_close(struct sdb *d, int ok);

/* The tables as created (name and "column TYPE" list), for docs and tests. */
const char *sdb_table_name(enum sdb_table t);

/* Column i (from 1) of row r. */
#define SB_I(r, col, x) ((r).v[col] = (struct sdb_val){.i = (int64_t)(x), .type = SQLITE_INTEGER})
#define SB_NULL(r, col) ((r).v[col].type = SQLITE_NULL)
#define SB_T(r, i, p, n) sdb_text((r), (i), (p), (n))
void sdb_double(struct sdb_row r, int i, double x);

#endif
