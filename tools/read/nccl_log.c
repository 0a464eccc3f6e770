// SPDX-License-Identifier: MIT
/* A hand-written scanner rather than sscanf: lines come from crashed
 * jobs, interleaved processes and editors, and must never be read past
 * their end or taken for something they are not. */
#include "read/nccl_log.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct cur {
	const char *p, *end;
};

static void skip_sp(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

/* The next space-separated token. */
static int token(struct cur *c, const char **s, size_t *n)
{
	skip_sp(c);
	const char *b = c->p;
	while (c->p < c->end && *c->p != ' ' && *c->p != '\t')
		c->p++;
	*s = b;
	*n = (size_t)(c->p - b);
	return *n > 0;
}

static int is_word(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && !memcmp(s, w, n);
}

static int expect(struct cur *c, const char *w)
{
	const char *s;
	size_t n;
	return token(c, &s, &n) && is_word(s, n, w);
}

static int parse_num(const char *s, size_t n, int base, int sign, long long *out)
{
	int neg = 0;
	if (sign && n && *s == '-')
		neg = 1, s++, n--;
	if (base == 16 && n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2, n -= 2;
	if (!n || n > (base == 16 ? 16 : 19))
		return -1;
	unsigned long long v = 0;
	for (size_t i = 0; i < n; i++) {
		int d = isdigit((unsigned char)s[i]) ? s[i] - '0'
		        : base == 16 && isxdigit((unsigned char)s[i])
		            ? tolower((unsigned char)s[i]) - 'a' + 10
		            : -1;
		if (d < 0)
			return -1;
		v = v * (unsigned)base + (unsigned)d;
	}
	*out = neg ? -(long long)v : (long long)v;
	return 0;
}

static int num(struct cur *c, int base, int sign, long long *out)
{
	const char *s;
	size_t n;
	return token(c, &s, &n) ? parse_num(s, n, base, sign, out) : -1;
}

static int keyed(struct cur *c, const char *key, int base, int sign, long long *out)
{
	return expect(c, key) ? num(c, base, sign, out) : -1;
}

/* %p as glibc prints it: 0x... or (nil). */
static int ptr(struct cur *c, const char *key, uint64_t *out)
{
	const char *s;
	size_t n;
	long long v;
	if (!expect(c, key) || !token(c, &s, &n))
		return -1;
	if (is_word(s, n, "(nil)") || is_word(s, n, "nil")) {
		*out = 0;
		return 0;
	}
	if (parse_num(s, n, 16, 0, &v))
		return -1;
	*out = (uint64_t)v;
	return 0;
}

/* "host:pid:tid": the last token before "NCCL INFO" that has that shape
 * (timestamps and RCCL's extra fields may sit around it). */
static void prefix(const char *b, const char *e, struct nccl_log_line *o)
{
	o->host[0] = 0;
	o->pid = o->tid = -1;
	struct cur c = {b, e};
	const char *s, *best = NULL;
	size_t n, bn = 0;
	while (token(&c, &s, &n)) {
		const char *c2 = memrchr(s, ':', n);
		if (!c2 || c2 == s)
			continue;
		const char *c1 = memrchr(s, ':', (size_t)(c2 - s));
		long long pid, tid;
		if (!c1 || c1 == s || parse_num(c1 + 1, (size_t)(c2 - c1 - 1), 10, 0, &pid) ||
		    parse_num(c2 + 1, (size_t)(s + n - c2 - 1), 10, 0, &tid))
			continue;
		best = s, bn = (size_t)(c1 - s);
		o->pid = (long)pid;
		o->tid = (long)tid;
	}
	if (best) {
		size_t k = bn < sizeof o->host - 1 ? bn : sizeof o->host - 1;
		memcpy(o->host, best, k);
		o->host[k] = 0;
	}
}

static enum nccl_line coll(struct cur *c, struct nccl_log_line *o)
{
	/* "Name: opCount ..." */
	const char *s;
	size_t n;
	long long v;
	if (!token(c, &s, &n) || n < 2 || s[n - 1] != ':' || n - 1 >= sizeof o->func)
		return NL_BAD;
	for (size_t i = 0; i + 1 < n; i++)
		if (!isalnum((unsigned char)s[i]))
			return NL_BAD;
	memcpy(o->func, s, n - 1);
	o->func[n - 1] = 0;
	uint64_t sb, rb;
	if (keyed(c, "opCount", 16, 0, &v))
		return NL_BAD;
	o->opcount = (uint64_t)v;
	if (ptr(c, "sendbuff", &sb) || ptr(c, "recvbuff", &rb))
		return NL_BAD;
	if (keyed(c, "count", 10, 0, &v))
		return NL_BAD;
	o->count = (uint64_t)v;
	if (keyed(c, "datatype", 10, 1, &v))
		return NL_BAD;
	o->datatype = (long)v;
	if (keyed(c, "op", 10, 1, &v))
		return NL_BAD;
	o->op = (long)v;
	if (keyed(c, "root", 10, 1, &v))
		return NL_BAD;
	o->root = (long)v;
	if (ptr(c, "comm", &o->comm))
		return NL_BAD;
	if (!token(c, &s, &n) || n < 10 || memcmp(s, "[nranks=", 8) || s[n - 1] != ']' ||
	    parse_num(s + 8, n - 9, 10, 0, &v) || v <= 0)
		return NL_BAD;
	o->nranks = (long)v;
	if (ptr(c, "stream", &o->stream))
		return NL_BAD;
	/* RCCL: "task T globalrank G"; anything after is tolerated. */
	o->globalrank = -1;
	struct cur save = *c;
	if (!keyed(c, "task", 10, 1, &v) && !keyed(c, "globalrank", 10, 1, &v) && v >= 0)
		o->globalrank = (long)v;
	else
		*c = save;
	return NL_COLL;
}

/* "... [comm 0x..] rank R nranks|nRanks N ..." */
static enum nccl_line rank_line(const char *b, const char *e, struct nccl_log_line *o)
{
	struct cur c = {b, e};
	const char *s;
	size_t n;
	long long v, r = -1;
	uint64_t comm = 0;
	int have_comm = 0;
	while (token(&c, &s, &n)) {
		if (is_word(s, n, "comm")) {
			struct cur save = c;
			const char *p;
			size_t pn;
			long long cv;
			if (token(&c, &p, &pn) && !parse_num(p, pn, 16, 0, &cv))
				comm = (uint64_t)cv, have_comm = 1;
			else
				c = save;
		} else if (is_word(s, n, "rank")) {
			struct cur save = c;
			if (num(&c, 10, 0, &v) || !token(&c, &s, &n) ||
			    !(is_word(s, n, "nranks") || is_word(s, n, "nRanks")) ||
			    num(&c, 10, 0, &r) || r <= 0) {
				c = save;
				r = -1;
				continue;
			}
			o->rank = (long)v;
			o->nranks = (long)r;
			o->comm = have_comm ? comm : 0;
			return o->rank < o->nranks ? NL_RANK : NL_OTHER;
		}
	}
	return NL_OTHER;
}

/* The opName values NCCL and RCCL log. */
static const char *const ops[] = {"AllReduce", "AllGather",  "ReduceScatter", "Broadcast",
                                  "Reduce",    "Send",       "Recv",          "AllToAll",
                                  "AlltoAll",  "AllToAllv",  "Gather",        "Scatter",
                                  "SendRecv",  "AllGatherV", "ReduceScatterV"};

enum nccl_line nccl_log_parse(const char *line, size_t len, struct nccl_log_line *o)
{
	memset(o, 0, sizeof *o);
	o->pid = o->tid = o->globalrank = -1;
	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	static const char tag[] = " NCCL INFO ";
	const char *at = memmem(line, len, tag, sizeof tag - 1);
	if (!at)
		return NL_OTHER;
	const char *msg = at + sizeof tag - 1, *end = line + len;
	prefix(line, at, o);
	/* A collective line: "Name: opCount ...". One that starts with an
	 * operation's name but does not parse was cut or garbled. */
	struct cur c = {msg, end};
	const char *s;
	size_t n;
	if (token(&c, &s, &n) && n > 1 && s[n - 1] == ':') {
		int known = 0;
		for (size_t i = 0; i < sizeof ops / sizeof *ops && !known; i++)
			known = is_word(s, n - 1, ops[i]);
		if (known || expect(&c, "opCount")) {
			c.p = msg;
			return coll(&c, o);
		}
	}
	return rank_line(msg, end, o);
}

int nccl_log_sniff(const char *buf, size_t len)
{
	return memmem(buf, len, " NCCL INFO ", 11) || memmem(buf, len, " NCCL WARN ", 11) ||
	       memmem(buf, len, "NCCL version ", 13);
}

/* A word before the number, not inside another word ("substeps 3" is no
 * step); then spaces, a colon or an equals sign. */
const char nccl_log_step_default[] =
    "(^|[^[:alnum:]_])(iteration|iter|step)[[:space:]]*[:=]?[[:space:]]*([0-9]+)";

int nccl_log_steps_init(struct nccl_log_steps *s, const char *pattern, char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	s->builtin = !pattern;
	int rc = regcomp(&s->re, pattern ? pattern : nccl_log_step_default,
	                 REG_EXTENDED | (pattern ? 0 : REG_ICASE));
	if (!rc)
		return 0;
	if (errlen)
		regerror(rc, &s->re, err, errlen);
	regfree(&s->re);
	memset(s, 0, sizeof *s);
	return -1;
}

void nccl_log_steps_free(struct nccl_log_steps *s)
{
	regfree(&s->re);
	memset(s, 0, sizeof *s);
}

int nccl_log_step_mark(const struct nccl_log_steps *s, const char *line, size_t len, int64_t *num)
{
	*num = -1;
	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	if (s->builtin &&
	    (memmem(line, len, " NCCL INFO ", 11) || memmem(line, len, " NCCL WARN ", 11)))
		return 0;
	/* REG_STARTEND: the line's bytes, NULs included. The line need not
	 * end in a NUL, but regexec's sanitizer interceptors read up to one:
	 * a copy that has it. Raw malloc: this file stands alone (the fuzz
	 * target links it without util/); a line it cannot copy marks no step. */
	char small[4096], *c = len < sizeof small ? small : malloc(len + 1);
	if (!c)
		return 0;
	memcpy(c, line, len);
	c[len] = 0;
	enum { NG = 10 };
	regmatch_t m[NG];
	m[0].rm_so = 0;
	m[0].rm_eo = (regoff_t)len;
	int hit = !regexec(&s->re, c, NG, m, REG_STARTEND);
	for (size_t g = 1; hit && g < NG && g <= s->re.re_nsub; g++) {
		if (m[g].rm_so < 0 || m[g].rm_eo <= m[g].rm_so)
			continue;
		long long v;
		size_t n = (size_t)(m[g].rm_eo - m[g].rm_so);
		if (n <= 18 && !parse_num(c + m[g].rm_so, n, 10, 0, &v)) {
			*num = v;
			break;
		}
	}
	if (c != small)
		free(c);
	return hit;
}
