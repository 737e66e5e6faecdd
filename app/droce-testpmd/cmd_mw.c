/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_mw.c - memory windows: alloc (type 1 or 2), bind and unbind a type-1
 * window (droce_bind_mw), dealloc, show.  Type-2 windows are bound and
 * invalidated by work requests: post QP bind_mw / local_inv / send_inv.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tpd.h"

static int
mw_alloc(struct tpd_cmd *c)
{
	struct tpd_pd *p = tpd_get_pd(c, 1);
	struct tpd_mw *w;
	uint64_t type;
	int i;

	if (p == NULL || tpd_kv_u64(c, "type", 1, 255, &type) != 0 ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	i = tpd_free_slot((void *const *)tpd.mw, "mw");
	if (i < 0)
		return -1;
	w = calloc(1, sizeof(*w));
	if (w == NULL) {
		tpd_err("out of memory");
		return -1;
	}
	w->mw = droce_alloc_mw(p->pd, (enum droce_mw_type)type);
	if (w->mw == NULL) {
		tpd_err("droce_alloc_mw: %s", strerror(errno));
		free(w);
		return -1;
	}
	w->pd = tpd_handle(c->pos[1]);
	w->rkey = w->mw->rkey;
	tpd.mw[i] = w;
	printf("mw %d: type %d rkey 0x%08" PRIx32 "\n", i, (int)w->mw->type, w->rkey);
	return 0;
}

/*
 * mw bind MW qp=QP mr=MR [off=] [len=] [access=]; len=0 unbinds.  A
 * signalled BIND_MW work request on QP (droce_bind_mw): poll its send CQ
 * for the BIND_MW completion before a peer uses the window.
 */
static int
mw_bind(struct tpd_cmd *c)
{
	struct tpd_mw *w = tpd_get_mw(c, 1);
	const char *acc_s = tpd_kv_str(c, "access");
	struct tpd_qp *q;
	struct tpd_mr *m;
	struct droce_mw_bind b;
	int access = DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_WRITE;
	uint64_t off, len;
	int rc;

	if (w == NULL)
		return -1;
	q = tpd_lookup((void *const *)tpd.qp, tpd_kv_str(c, "qp"), "qp", NULL);
	m = q == NULL ? NULL :
		tpd_lookup((void *const *)tpd.mr, tpd_kv_str(c, "mr"), "mr", NULL);
	if (m == NULL || tpd_kv_u64(c, "off", 0, UINT64_MAX, &off) != 0 ||
	    tpd_kv_u64(c, "len", off <= m->len ? m->len - off : 0, UINT64_MAX, &len) != 0 ||
	    (acc_s != NULL && tpd_parse_access(acc_s, &access) != 0) ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	memset(&b, 0, sizeof(b));
	b.send_flags = DROCE_SEND_SIGNALED;
	b.bind_info.mr = m->mr;
	b.bind_info.addr = (uint64_t)(uintptr_t)m->buf + off;
	b.bind_info.length = len;
	b.bind_info.mw_access_flags = (unsigned int)access;
	rc = droce_bind_mw(q->qp, w->mw, &b);
	if (rc != 0) {
		tpd_err("droce_bind_mw: %s", strerror(rc));
		return -1;
	}
	w->rkey = w->mw->rkey;
	w->addr = b.bind_info.addr;
	w->len = len;
	printf("mw %s: %s rkey 0x%08" PRIx32 " addr 0x%" PRIx64 " len %" PRIu64 "\n",
	       c->pos[1], len ? "bound" : "unbound", w->rkey, w->addr, len);
	return 0;
}

/*
 * mw invalidate MW qp=QP: type 1, unbind (a signalled droce_bind_mw of
 * length 0); type 2, post a signaled LOCAL_INV on QP.  Either way, poll
 * QP's send CQ for its completion.
 */
static int
mw_invalidate(struct tpd_cmd *c)
{
	struct tpd_mw *w = tpd_get_mw(c, 1);
	struct droce_send_wr wr, *bad;
	struct droce_mw_bind b;
	struct tpd_qp *q;
	int rc;

	if (w == NULL)
		return -1;
	q = tpd_lookup((void *const *)tpd.qp, tpd_kv_str(c, "qp"), "qp", NULL);
	if (q == NULL || tpd_kv_check_used(c) != 0)
		return -1;
	if (w->mw->type == DROCE_MW_TYPE_1) {
		memset(&b, 0, sizeof(b));
		b.send_flags = DROCE_SEND_SIGNALED;
		rc = droce_bind_mw(q->qp, w->mw, &b);
		if (rc != 0) {
			tpd_err("droce_bind_mw (unbind): %s", strerror(rc));
			return -1;
		}
		w->len = 0;
		printf("mw %s: unbound, rkey 0x%08" PRIx32 " revoked\n", c->pos[1], w->rkey);
		return 0;
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = DROCE_WR_LOCAL_INV;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.invalidate_rkey = w->rkey;
	rc = droce_post_send(q->qp, &wr, &bad);
	if (rc != 0) {
		tpd_err("droce_post_send local_inv: %s", strerror(rc));
		return -1;
	}
	printf("mw %s: posted local_inv of rkey 0x%08" PRIx32 " on qp %s\n", c->pos[1],
	       w->rkey, tpd_kv_str(c, "qp"));
	return 0;
}

static int
mw_dealloc(struct tpd_cmd *c)
{
	struct tpd_mw *w = tpd_get_mw(c, 1);
	int rc, i;

	if (w == NULL || tpd_kv_check_used(c) != 0)
		return -1;
	i = tpd_handle(c->pos[1]);
	rc = droce_dealloc_mw(w->mw);
	if (rc != 0) {
		tpd_err("droce_dealloc_mw: %s", strerror(rc));
		return -1;
	}
	free(w);
	tpd.mw[i] = NULL;
	printf("mw %d deallocated\n", i);
	return 0;
}

static int
mw_show(struct tpd_cmd *c)
{
	if (tpd_kv_check_used(c) != 0)
		return -1;
	for (int i = 0; i < TPD_MAX_OBJ; i++) {
		struct tpd_mw *w = tpd.mw[i];

		if (w != NULL)
			printf("mw %d: pd %d type %d rkey 0x%08" PRIx32 " addr 0x%"
			       PRIx64 " len %" PRIu64 "\n", i, w->pd, (int)w->mw->type,
			       w->rkey, w->addr, w->len);
	}
	return 0;
}

static const struct tpd_subcmd mw_cmds[] = {
	{ "alloc", mw_alloc, "mw alloc PD [type=1|2]", "allocate a memory window (default type 1)" },
	{ "bind", mw_bind, "mw bind MW qp=QP mr=MR [off=N] [len=N] [access=remote_read,remote_write,remote_atomic]",
	  "bind a type-1 window to MR[off, off+len) (len=0 unbinds); new rkey printed" },
	{ "invalidate", mw_invalidate, "mw invalidate MW qp=QP",
	  "type 1: unbind now; type 2: post a signaled LOCAL_INV of its rkey on QP" },
	{ "dealloc", mw_dealloc, "mw dealloc MW", "deallocate (a bound window's rkey is revoked)" },
	{ "show", mw_show, "mw show", "list windows (type-2 rkeys as last bound by post bind_mw)" },
	{ NULL, NULL, NULL, NULL },
};
const struct tpd_group tpd_group_mw = { "mw", "memory windows (type 2: see post bind_mw / local_inv)", mw_cmds };
