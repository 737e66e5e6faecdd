/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_pd_mr.c - protection domains and memory regions: create/destroy/show,
 * and the buffer tools (fill with a pattern, dump, check against a
 * pattern, compare two ranges, read/write a 64-bit word).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tpd.h"

/* ---- pd ------------------------------------------------------------------ */

static int
pd_create(struct tpd_cmd *c)
{
	uint64_t dev;
	struct tpd_pd *p;
	int i;

	if (tpd_kv_u64(c, "dev", 0, TPD_MAX_DEV - 1, &dev) != 0 ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	if ((int)dev >= tpd.ndev || tpd.dev[dev].ctx == NULL) {
		tpd_err("no such device %" PRIu64 " (see device list)", dev);
		return -1;
	}
	i = tpd_free_slot((void *const *)tpd.pd, "pd");
	if (i < 0)
		return -1;
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		tpd_err("out of memory");
		return -1;
	}
	p->dev = (int)dev;
	p->pd = droce_alloc_pd(tpd.dev[dev].ctx);
	if (p->pd == NULL) {
		tpd_err("droce_alloc_pd: %s", strerror(errno));
		free(p);
		return -1;
	}
	tpd.pd[i] = p;
	printf("pd %d created (dev %d)\n", i, p->dev);
	return 0;
}

static int
pd_destroy(struct tpd_cmd *c)
{
	struct tpd_pd *p = tpd_get_pd(c, 1);
	int rc, i;

	if (p == NULL || tpd_kv_check_used(c) != 0)
		return -1;
	i = tpd_handle(c->pos[1]);
	rc = droce_dealloc_pd(p->pd);
	if (rc != 0) {
		tpd_err("droce_dealloc_pd: %s%s", strerror(rc),
			rc == EBUSY ? " (MRs, MWs or QPs still use it)" : "");
		return -1;
	}
	free(p);
	tpd.pd[i] = NULL;
	printf("pd %d destroyed\n", i);
	return 0;
}

static int
pd_show(struct tpd_cmd *c)
{
	if (tpd_kv_check_used(c) != 0)
		return -1;
	for (int i = 0; i < TPD_MAX_OBJ; i++)
		if (tpd.pd[i] != NULL)
			printf("pd %d: dev %d handle %u\n", i, tpd.pd[i]->dev,
			       tpd.pd[i]->pd->handle);
	return 0;
}

static const struct tpd_subcmd pd_cmds[] = {
	{ "create", pd_create, "pd create [dev=N]", "allocate a protection domain on device N (default 0)" },
	{ "destroy", pd_destroy, "pd destroy PD", "deallocate a PD (refused while objects use it)" },
	{ "show", pd_show, "pd show", "list PDs" },
	{ NULL, NULL, NULL, NULL },
};
const struct tpd_group tpd_group_pd = { "pd", "protection domains", pd_cmds };

/* ---- mr ------------------------------------------------------------------ */

static void
mr_print(int i, const struct tpd_mr *m)
{
	char acc[128];

	tpd_format_access(m->access, acc, sizeof(acc));
	printf("mr %d: pd %d lkey 0x%08" PRIx32 " rkey 0x%08" PRIx32
	       " addr 0x%" PRIx64 " len %zu access %s\n", i, m->pd, m->mr->lkey,
	       m->mr->rkey, (uint64_t)(uintptr_t)m->buf, m->len, acc);
}

static int
mr_reg(struct tpd_cmd *c)
{
	const char *acc_s = tpd_kv_str(c, "access");
	struct tpd_pd *p = tpd_get_pd(c, 1);
	int access = DROCE_ACCESS_LOCAL_WRITE;
	struct tpd_mr *m;
	uint64_t size;
	void *buf = NULL;
	int i;

	if (p == NULL || tpd_pos_u64(c, 2, TPD_MAX_MR_SIZE, &size, "SIZE") != 0 ||
	    (acc_s != NULL && tpd_parse_access(acc_s, &access) != 0) ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	if (size == 0) {
		tpd_err("SIZE must be at least 1");
		return -1;
	}
	i = tpd_free_slot((void *const *)tpd.mr, "mr");
	if (i < 0)
		return -1;
	m = calloc(1, sizeof(*m));
	if (m == NULL || posix_memalign(&buf, 4096, size) != 0) {
		tpd_err("cannot allocate %" PRIu64 " bytes", size);
		free(m);
		return -1;
	}
	memset(buf, 0, size);
	m->mr = droce_reg_mr(p->pd, buf, size, access);
	if (m->mr == NULL) {
		tpd_err("droce_reg_mr: %s", strerror(errno));
		free(buf);
		free(m);
		return -1;
	}
	m->buf = buf;
	m->len = size;
	m->pd = tpd_handle(c->pos[1]);
	m->access = access;
	tpd.mr[i] = m;
	mr_print(i, m);
	return 0;
}

static int
mr_dereg(struct tpd_cmd *c)
{
	struct tpd_mr *m = tpd_get_mr(c, 1);
	int rc, i;

	if (m == NULL || tpd_kv_check_used(c) != 0 || tpd_engine_busy(NULL, m))
		return -1;
	i = tpd_handle(c->pos[1]);
	rc = droce_dereg_mr(m->mr);
	if (rc != 0) {
		tpd_err("droce_dereg_mr: %s%s", strerror(rc),
			rc == EBUSY ? " (memory windows are bound to it)" : "");
		return -1;
	}
	free(m->buf);
	free(m);
	tpd.mr[i] = NULL;
	printf("mr %d deregistered\n", i);
	return 0;
}

/*
 * droce extension: a lease on the MR (ms=0 removes it), or its state; the
 * line gives CLOCK_MONOTONIC just before the query (droce's lease clock):
 * the deadline is no earlier than that plus the time left.
 */
static int
mr_lease(struct tpd_cmd *c)
{
	struct tpd_mr *m = tpd_get_mr(c, 1);
	struct droce_lease_attr la;
	uint64_t ms, t;
	int rc;

	if (m == NULL || tpd_kv_u64(c, "ms", UINT64_MAX, UINT32_MAX, &ms) != 0 ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	if (ms != UINT64_MAX) {
		rc = droce_set_mr_lease(m->mr, (uint32_t)ms);
		if (rc != 0) {
			tpd_err("droce_set_mr_lease: %s", strerror(rc));
			return -1;
		}
	}
	t = tpd_now_ns();
	rc = droce_query_mr_lease(m->mr, &la);
	if (rc != 0) {
		tpd_err("droce_query_mr_lease: %s", strerror(rc));
		return -1;
	}
	printf("mr %d: lease %" PRIu32 " ms, %s, %" PRIu64 " us left at %" PRIu64 " us\n",
	       tpd_handle(c->pos[1]), la.lease_ms, la.expired ? "expired" : "live",
	       la.remaining_us, t / 1000);
	return 0;
}

static int
mr_renew(struct tpd_cmd *c)
{
	struct tpd_mr *m = tpd_get_mr(c, 1);
	int rc;

	if (m == NULL || tpd_kv_check_used(c) != 0)
		return -1;
	rc = droce_renew_mr(m->mr);
	if (rc != 0) {
		tpd_err("droce_renew_mr: %s", strerror(rc));
		return -1;
	}
	printf("mr %d: lease renewed\n", tpd_handle(c->pos[1]));
	return 0;
}

static int
mr_show(struct tpd_cmd *c)
{
	struct tpd_mr *m;

	if (c->npos > 1) {
		m = tpd_get_mr(c, 1);
		if (m == NULL || tpd_kv_check_used(c) != 0)
			return -1;
		mr_print(tpd_handle(c->pos[1]), m);
		return 0;
	}
	if (tpd_kv_check_used(c) != 0)
		return -1;
	for (int i = 0; i < TPD_MAX_OBJ; i++)
		if (tpd.mr[i] != NULL)
			mr_print(i, tpd.mr[i]);
	return 0;
}

/* off= and len= within the MR (len defaults to the rest of it). */
static int
mr_range(struct tpd_cmd *c, struct tpd_mr *m, uint64_t *off, uint64_t *len)
{
	if (tpd_kv_u64(c, "off", 0, UINT64_MAX, off) != 0)
		return -1;
	if (*off > m->len) {
		tpd_err("offset %" PRIu64 " is outside the MR (%zu bytes)", *off, m->len);
		return -1;
	}
	if (tpd_kv_u64(c, "len", m->len - *off, UINT64_MAX, len) != 0)
		return -1;
	if (*len > m->len - *off) {
		tpd_err("range %" PRIu64 "+%" PRIu64 " is outside the MR (%zu bytes)",
			*off, *len, m->len);
		return -1;
	}
	return 0;
}

/* pattern=BYTE (every byte) or pattern=inc [seed=S]: byte i is S + i. */
struct pattern {
	bool inc;
	uint8_t val;
};

static int
pattern_parse(struct tpd_cmd *c, struct pattern *p)
{
	const char *s = tpd_kv_str(c, "pattern");
	uint64_t v;

	if (s == NULL) {
		tpd_err("missing pattern=BYTE or pattern=inc [seed=N]");
		return -1;
	}
	p->inc = strcmp(s, "inc") == 0;
	if (p->inc) {
		if (tpd_kv_u64(c, "seed", 0, 255, &v) != 0)
			return -1;
	} else if (tpd_parse_u64(s, 255, &v, "pattern") != 0) {
		return -1;
	}
	p->val = (uint8_t)v;
	return 0;
}

static uint8_t
pattern_byte(const struct pattern *p, uint64_t i)
{
	return p->inc ? (uint8_t)(p->val + i) : p->val;
}

static int
mr_fill(struct tpd_cmd *c)
{
	struct tpd_mr *m = tpd_get_mr(c, 1);
	uint64_t off, len;
	struct pattern p;

	if (m == NULL || mr_range(c, m, &off, &len) != 0 ||
	    pattern_parse(c, &p) != 0 || tpd_kv_check_used(c) != 0)
		return -1;
	for (uint64_t i = 0; i < len; i++)
		m->buf[off + i] = pattern_byte(&p, i);
	printf("mr %s: filled %" PRIu64 " bytes at offset %" PRIu64 "\n",
	       c->pos[1], len, off);
	return 0;
}

static int
mr_check(struct tpd_cmd *c)
{
	struct tpd_mr *m = tpd_get_mr(c, 1);
	uint64_t off, len;
	struct pattern p;

	if (m == NULL || mr_range(c, m, &off, &len) != 0 ||
	    pattern_parse(c, &p) != 0 || tpd_kv_check_used(c) != 0)
		return -1;
	for (uint64_t i = 0; i < len; i++)
		if (m->buf[off + i] != pattern_byte(&p, i)) {
			tpd_err("mr %s: mismatch at offset %" PRIu64 ": 0x%02x, "
				"expected 0x%02x", c->pos[1], off + i,
				m->buf[off + i], pattern_byte(&p, i));
			return -1;
		}
	printf("mr %s: %" PRIu64 " bytes at offset %" PRIu64 " match\n",
	       c->pos[1], len, off);
	return 0;
}

#define DUMP_MAX 4096

static int
mr_dump(struct tpd_cmd *c)
{
	struct tpd_mr *m = tpd_get_mr(c, 1);
	uint64_t off, len;

	if (m == NULL || mr_range(c, m, &off, &len) != 0 ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	if (len > DUMP_MAX) {
		tpd_err("dump at most %d bytes at a time (len=)", DUMP_MAX);
		return -1;
	}
	for (uint64_t i = 0; i < len; i += 16) {
		printf("%08" PRIx64 ":", off + i);
		for (uint64_t j = i; j < i + 16 && j < len; j++)
			printf(" %02x", m->buf[off + j]);
		printf("\n");
	}
	return 0;
}

/* mr cmp A B [off=] [off2=] len=: compare A[off..] with B[off2..]. */
static int
mr_cmp(struct tpd_cmd *c)
{
	struct tpd_mr *a = tpd_get_mr(c, 1), *b;
	uint64_t off, off2, len;

	if (a == NULL)
		return -1;
	b = tpd_get_mr(c, 2);
	if (b == NULL || mr_range(c, a, &off, &len) != 0 ||
	    tpd_kv_u64(c, "off2", 0, UINT64_MAX, &off2) != 0 ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	if (off2 > b->len || len > b->len - off2) {
		tpd_err("range %" PRIu64 "+%" PRIu64 " is outside mr %s (%zu bytes)",
			off2, len, c->pos[2], b->len);
		return -1;
	}
	for (uint64_t i = 0; i < len; i++)
		if (a->buf[off + i] != b->buf[off2 + i]) {
			tpd_err("mr %s and mr %s differ at +%" PRIu64 ": 0x%02x != 0x%02x",
				c->pos[1], c->pos[2], i, a->buf[off + i], b->buf[off2 + i]);
			return -1;
		}
	printf("mr %s and mr %s: %" PRIu64 " bytes equal\n", c->pos[1], c->pos[2], len);
	return 0;
}

/* mr u64 MR off=N [set=V] [expect=V]: a host-order 64-bit word. */
static int
mr_u64(struct tpd_cmd *c)
{
	struct tpd_mr *m = tpd_get_mr(c, 1);
	uint64_t off, v, want;
	bool set = tpd_kv_has(c, "set"), check = tpd_kv_has(c, "expect");

	if (m == NULL || tpd_kv_u64(c, "off", 0, UINT64_MAX, &off) != 0 ||
	    tpd_kv_u64(c, "set", 0, UINT64_MAX, &v) != 0 ||
	    tpd_kv_u64(c, "expect", 0, UINT64_MAX, &want) != 0 ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	if (m->len < 8 || off > m->len - 8) {
		tpd_err("offset %" PRIu64 " + 8 is outside the MR (%zu bytes)", off, m->len);
		return -1;
	}
	if (set)
		memcpy(m->buf + off, &v, 8);
	memcpy(&v, m->buf + off, 8);
	printf("mr %s u64 at %" PRIu64 ": %" PRIu64 " (0x%" PRIx64 ")\n",
	       c->pos[1], off, v, v);
	if (check && v != want) {
		tpd_err("expected %" PRIu64, want);
		return -1;
	}
	return 0;
}

static const struct tpd_subcmd mr_cmds[] = {
	{ "reg", mr_reg, "mr reg PD SIZE [access=local_write,remote_write,remote_read,remote_atomic,mw_bind]",
	  "allocate SIZE bytes (zeroed) and register them (default access local_write)" },
	{ "dereg", mr_dereg, "mr dereg MR", "deregister and free" },
	{ "lease", mr_lease, "mr lease MR [ms=N]",
	  "lease the MR for N ms from now (0: no lease; droce extension), print its state" },
	{ "renew", mr_renew, "mr renew MR", "renew the MR's lease (deadline: now + its period)" },
	{ "show", mr_show, "mr show [MR]", "lkey, rkey, addr, len, access" },
	{ "fill", mr_fill, "mr fill MR pattern=BYTE|inc [seed=S] [off=N] [len=N]",
	  "fill a range: every byte BYTE, or S, S+1, S+2, ... (mod 256)" },
	{ "check", mr_check, "mr check MR pattern=BYTE|inc [seed=S] [off=N] [len=N]",
	  "fails unless the range holds the pattern" },
	{ "dump", mr_dump, "mr dump MR [off=N] [len=N]", "hex dump (4096 bytes at most)" },
	{ "cmp", mr_cmp, "mr cmp MR1 MR2 [off=N] [off2=N] len=N",
	  "fails unless MR1[off..] and MR2[off2..] are equal" },
	{ "u64", mr_u64, "mr u64 MR off=N [set=V] [expect=V]",
	  "print (set first, then check) a 64-bit word in host order" },
	{ NULL, NULL, NULL, NULL },
};
const struct tpd_group tpd_group_mr = { "mr", "memory regions and their buffers", mr_cmds };
