// SPDX-License-Identifier: MIT
/* ctr_records FILE [KIND...]: every event of a .ctr file as one JSON
 * line, read by the format's own decoder (libtrace/format/dec.c), each
 * field under its schema name, after its kind and its thread under keys
 * that no field has: {"_kind":"torch_op","_thread":12,"ts":...,
 * "name":"aten::mm",...}. Only the kinds named, when some are. Tests use
 * it for records that no output of the tools shows yet, field by field;
 * the last line is {"status":"clean"} (or how the file ended). */
#include "dec.h"

#include <stdio.h>
#include <string.h>

static void put_str(const char *s, uint32_t n)
{
	putchar('"');
	for (uint32_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c); /* bytes as code points: the tests compare ASCII */
		else
			putchar(c);
	}
	putchar('"');
}

static int wanted(const char *name, char **kinds, int nkinds)
{
	if (!nkinds)
		return 1;
	for (int i = 0; i < nkinds; i++)
		if (!strcmp(kinds[i], name))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: ctr_records FILE [KIND...]\n");
		return 2;
	}
	static struct ct_file f;
	if (ct_file_open(&f, argv[1])) {
		fprintf(stderr, "ctr_records: %s\n", f.err);
		return 1;
	}
	struct ct_event ev;
	while (ct_file_next(&f, &ev)) {
		const struct ct_schema *s = ct_schema_of(ev.kind);
		if (!s || !wanted(s->name, argv + 2, argc - 2))
			continue;
		printf("{\"_kind\":\"%s\",\"_thread\":%lld", s->name, (long long)ev.tid);
		for (unsigned i = 0; i < s->nfields; i++) {
			printf(",\"%s\":", s->field[i]);
			if (s->type[i] == CT_F_STR || s->type[i] == CT_F_SID)
				put_str(ev.s[i] ? ev.s[i] : "", ev.s[i] ? ev.sl[i] : 0);
			else if (s->type[i] == CT_F_I)
				printf("%lld", (long long)ev.v[i]);
			else
				printf("%llu", (unsigned long long)ev.v[i]);
		}
		printf("}\n");
	}
	printf("{\"status\":\"%s\"}\n", ct_status_name(f.status));
	ct_file_close(&f);
	return 0;
}
