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
/* fsync and close, saying when they fail (parallel file systems report
 * write errors late). */
void ct_output_sync(int fd, const char *path);
void ct_output_close(int fd, const char *path);

#endif
