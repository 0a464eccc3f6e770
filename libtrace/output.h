// SPDX-License-Identifier: MIT
/* The output file: pattern expansion, directories, safe creation. */
#ifndef CT_OUTPUT_H
#define CT_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

/* Creates the trace file for this process and returns its descriptor, or
 * -1 (after saying why). Never follows a symlink, never replaces an
 * existing file: when the name is taken, a numbered one is used and the
 * user is told. */
int ct_output_open(char *path_out, size_t len);
/* The same for the part-th file of the process (part >= 2: the files
 * after cuptrace_rotate): the first file's name with ".w<part>" before its
 * extension (out/r0.ctr -> out/r0.w2.ctr). */
int ct_output_open_part(const char *first, unsigned part, char *path_out, size_t len);

/* The trace file being written. The program may close its descriptor
 * (daemons close every fd they did not open) and reuse the number for a
 * file of its own: nothing may go to a number that is no longer our file,
 * known by its device and inode. Every write, fsync and close below checks
 * it; a write reopens the file by its path at off when the number was
 * taken (the old number is the program's and is left alone). */
struct ct_out_file {
	int fd; /* -1 until opened, -2 after a failure (said once) */
	uint64_t dev, ino;
	uint64_t off; /* bytes written */
	char path[4096];
};
/* After ct_output_open(_part): the header. -1 (said; the file, which
 * holds nothing, is removed and fd is -2) when it cannot be written. */
int ct_output_begin(struct ct_out_file *o, unsigned part);
/* The same for a flight recorder's window: its header says so. */
/* What a dump's header says about its window. */
struct ct_fl_info {
	uint64_t want_ns, from, to; /* the window asked; the tracer clock span kept */
	uint64_t short_ns;	    /* > 0: the budget left out this much of the window */
	uint64_t budget;	    /* bytes */
	uint64_t held;		    /* the store's peak, bytes */
	char cause[256];
};

int ct_output_begin_flight(struct ct_out_file *o, unsigned part, const struct ct_fl_info *fi);
/* n bytes at the end of the file; -1 (said; fd -2: tracing stops) when
 * they cannot be written. */
int ct_output_write(struct ct_out_file *o, const void *buf, size_t n);
/* The 16-byte trailer that points at the footer block (at its offset). */
int ct_output_trailer(struct ct_out_file *o, uint64_t footer_at);
/* fsync, and close (fd -2 after), saying when they fail (parallel file
 * systems report write errors late). */
void ct_output_sync(const struct ct_out_file *o);
void ct_output_close(struct ct_out_file *o);
/* A forked child's copy of its parent's descriptor: closed quietly when
 * still the file; fd -1. */
void ct_output_drop(struct ct_out_file *o);

#endif
