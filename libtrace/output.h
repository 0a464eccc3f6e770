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

/* The file's header (format.h): this process, its configuration, and
 * part when it is the part-th file (part >= 2). Sets *written to its size;
 * 0 or -1 as write does. */
int ct_output_header(int fd, unsigned part, uint64_t *written);
/* The 16-byte trailer that points at the footer block (at its offset). */
int ct_output_trailer(int fd, uint64_t footer_at);
/* The program may close the trace file's descriptor (daemons close every
 * fd they did not open) and reuse its number for a file of its own:
 * nothing may go to a number that is no longer our file. The file is known
 * by its device and inode (ct_output_identify, once opened). */
struct ct_out_id {
	uint64_t dev, ino;
};
int ct_output_identify(int fd, struct ct_out_id *id);
/* 1 when fd is still the file id names. */
int ct_output_is(int fd, const struct ct_out_id *id);
/* Before a write at offset off: 1 when *fd is our file, or was taken away
 * and the file could be reopened by its path at off (then *fd is the new
 * descriptor; the old number is the program's and is left alone); else 0,
 * said once, and *fd is -2. */
int ct_output_own(int *fd, const char *path, const struct ct_out_id *id, uint64_t off);
/* fsync and close, saying when they fail (parallel file systems report
 * write errors late). */
void ct_output_sync(int fd, const char *path);
void ct_output_close(int fd, const char *path);

#endif
