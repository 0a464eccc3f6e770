/* Fuzz target: NCCL_DEBUG log text, line by line, through the parser the
 * nccl_* reports use (tools/nccl_log.c). Built for libFuzzer by
 * `make fuzz-nccl-log`; with -DFUZZ_REPLAY it is a plain program that
 * replays the corpus (make test). */
#include "read/nccl_log.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	nccl_log_sniff(p, size);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct nccl_log_line l;
		enum nccl_line k = nccl_log_parse(p, len, &l);
		/* What came out must be sane for the reports. */
		if (k == NL_COLL &&
		    (l.nranks <= 0 || !l.func[0] || strlen(l.host) >= sizeof l.host))
			__builtin_trap();
		if (k == NL_RANK && (l.rank < 0 || l.rank >= l.nranks))
			__builtin_trap();
		p += len + 1;
	}
	return 0;
}

#ifdef FUZZ_REPLAY
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static int replay(const char *path)
{
	struct stat st;
	if (stat(path, &st))
		return perror(path), 1;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *e;
		int rc = 0;
		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.') {
				char sub[4096];
				snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
				rc |= replay(sub);
			}
		if (d)
			closedir(d);
		return rc;
	}
	FILE *f = fopen(path, "rb");
	if (!f)
		return perror(path), 1;
	uint8_t *buf = malloc((size_t)st.st_size + 1);
	size_t n = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0;
	for (int i = 1; i < argc; i++)
		rc |= replay(argv[i]);
	return rc;
}
#endif
