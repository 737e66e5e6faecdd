/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tpd_args.c - the line tokenizer and the argument parsers.  Every parser
 * reports its own error ("error: ..."), so commands just return -1.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tpd.h"

void
tpd_err(const char *fmt, ...)
{
	va_list ap;

	fputs("error: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

int
tpd_tokenize(struct tpd_cmd *c, const char *line)
{
	char *p;

	memset(c, 0, sizeof(*c));
	if (strlen(line) >= sizeof(c->buf)) {
		tpd_err("line too long (%zu characters at most)", sizeof(c->buf) - 1);
		return -1;
	}
	strcpy(c->buf, line);
	p = strchr(c->buf, '#');	/* a comment runs to the end of the line */
	if (p != NULL)
		*p = '\0';
	for (p = strtok(c->buf, " \t\r\n"); p != NULL; p = strtok(NULL, " \t\r\n")) {
		char *eq = strchr(p, '=');

		if (c->npos + c->nkv >= TPD_MAX_ARGS) {
			tpd_err("too many words (%d at most)", TPD_MAX_ARGS);
			return -1;
		}
		if (eq == NULL || eq == p) {
			c->pos[c->npos++] = p;
			continue;
		}
		*eq = '\0';
		for (int i = 0; i < c->nkv; i++)
			if (strcmp(c->kv[i].key, p) == 0) {
				tpd_err("option %s given twice", p);
				return -1;
			}
		c->kv[c->nkv].key = p;
		c->kv[c->nkv].val = eq + 1;
		c->nkv++;
	}
	return 0;
}

int
tpd_parse_u64(const char *s, uint64_t max, uint64_t *out, const char *what)
{
	unsigned long long v;
	char *end;

	/* strtoull accepts "-1" (wrapping) and leading blanks: refuse both */
	if (s == NULL || *s == '\0' || !isdigit((unsigned char)*s)) {
		tpd_err("bad number '%s' for %s", s != NULL ? s : "", what);
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0') {
		tpd_err("bad number '%s' for %s", s, what);
		return -1;
	}
	if (v > max) {
		tpd_err("%s %s is too large (at most %llu)", what, s,
			(unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

int
tpd_pos_u64(struct tpd_cmd *c, int i, uint64_t max, uint64_t *out,
	    const char *what)
{
	if (i >= c->npos) {
		tpd_err("missing %s", what);
		return -1;
	}
	return tpd_parse_u64(c->pos[i], max, out, what);
}

static struct tpd_kv *
kv_find(struct tpd_cmd *c, const char *key)
{
	for (int i = 0; i < c->nkv; i++)
		if (strcmp(c->kv[i].key, key) == 0) {
			c->kv[i].used = true;
			return &c->kv[i];
		}
	return NULL;
}

int
tpd_kv_u64(struct tpd_cmd *c, const char *key, uint64_t def, uint64_t max,
	   uint64_t *out)
{
	struct tpd_kv *kv = kv_find(c, key);

	if (kv == NULL) {
		*out = def;
		return 0;
	}
	return tpd_parse_u64(kv->val, max, out, key);
}

const char *
tpd_kv_str(struct tpd_cmd *c, const char *key)
{
	struct tpd_kv *kv = kv_find(c, key);

	return kv != NULL ? kv->val : NULL;
}

bool
tpd_kv_has(struct tpd_cmd *c, const char *key)
{
	for (int i = 0; i < c->nkv; i++)
		if (strcmp(c->kv[i].key, key) == 0)
			return true;
	return false;
}

int
tpd_kv_check_used(struct tpd_cmd *c)
{
	for (int i = 0; i < c->nkv; i++)
		if (!c->kv[i].used) {
			tpd_err("unknown option '%s' for this command (see help)",
				c->kv[i].key);
			return -1;
		}
	return 0;
}

static const struct {
	const char *name;
	int bit;
} access_names[] = {
	{ "local_write", DROCE_ACCESS_LOCAL_WRITE },
	{ "remote_write", DROCE_ACCESS_REMOTE_WRITE },
	{ "remote_read", DROCE_ACCESS_REMOTE_READ },
	{ "remote_atomic", DROCE_ACCESS_REMOTE_ATOMIC },
	{ "mw_bind", DROCE_ACCESS_MW_BIND },
	{ "zero_based", DROCE_ACCESS_ZERO_BASED },
};

int
tpd_parse_access(const char *s, int *out)
{
	char tmp[256], *p, *save = NULL;
	int bits = 0;

	if (strlen(s) >= sizeof(tmp)) {
		tpd_err("access list too long");
		return -1;
	}
	strcpy(tmp, s);
	if (strcmp(tmp, "none") == 0 || tmp[0] == '\0') {
		*out = 0;
		return 0;
	}
	for (p = strtok_r(tmp, ",", &save); p != NULL; p = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof(access_names) / sizeof(access_names[0]); i++)
			if (strcmp(p, access_names[i].name) == 0)
				break;
		if (i == sizeof(access_names) / sizeof(access_names[0])) {
			tpd_err("unknown access flag '%s' (local_write, remote_write, "
				"remote_read, remote_atomic, mw_bind, zero_based, none)", p);
			return -1;
		}
		bits |= access_names[i].bit;
	}
	*out = bits;
	return 0;
}

void
tpd_format_access(int access, char *buf, size_t n)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(access_names) / sizeof(access_names[0]); i++)
		if (access & access_names[i].bit) {
			int w = snprintf(buf + off, n - off, "%s%s", off ? "," : "",
					 access_names[i].name);
			if (w < 0 || (size_t)w >= n - off)
				return;
			off += (size_t)w;
		}
	if (off == 0)
		snprintf(buf, n, "none");
}

void *
tpd_lookup(void *const *table, const char *s, const char *what, int *idx)
{
	uint64_t v;

	if (s == NULL) {
		tpd_err("missing %s handle", what);
		return NULL;
	}
	if (tpd_parse_u64(s, UINT32_MAX, &v, what) != 0)
		return NULL;
	if (v >= TPD_MAX_OBJ || table[v] == NULL) {
		tpd_err("no such %s %s", what, s);
		return NULL;
	}
	if (idx != NULL)
		*idx = (int)v;
	return table[v];
}

int
tpd_free_slot(void *const *table, const char *what)
{
	for (int i = 0; i < TPD_MAX_OBJ; i++)
		if (table[i] == NULL)
			return i;
	tpd_err("too many %ss (%d at most)", what, TPD_MAX_OBJ);
	return -1;
}

#define GETTER(kind, what)						\
struct tpd_##kind *							\
tpd_get_##kind(struct tpd_cmd *c, int pos)				\
{									\
	return tpd_lookup((void *const *)tpd.kind,			\
			  pos < c->npos ? c->pos[pos] : NULL, what, NULL); \
}
GETTER(pd, "pd")
GETTER(mr, "mr")
GETTER(mw, "mw")
GETTER(cq, "cq")
GETTER(qp, "qp")
#undef GETTER

int
tpd_dev_of_pd(int pd)
{
	return tpd.pd[pd] != NULL ? tpd.pd[pd]->dev : -1;
}

int
tpd_mr_index(const struct droce_mr *mr)
{
	for (int i = 0; i < TPD_MAX_OBJ; i++)
		if (tpd.mr[i] != NULL && tpd.mr[i]->mr == mr)
			return i;
	return -1;
}

int
tpd_handle(const char *s)
{
	return (int)strtoul(s, NULL, 0);
}
