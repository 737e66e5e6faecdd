/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_post.c - post any work request, and receives.
 *
 *   post QP OP [mr=MR off=N len=N] [remote] [opts]
 *
 * The local buffer is one SGE in MR at off (len bytes; len=0: no SGE).
 * The remote side of RDMA and atomics, first match wins:
 *   rmw=MW      the window's current rkey and bound address
 *   rmr=MR      an MR of this process (single-process tests)
 *   rkey=K raddr=A   given explicitly
 *   (nothing)   the QP's peer, from qp connect/exchange
 * roff=N is added to the remote address.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "tpd.h"

#define POST_MAX_COUNT 4096

static const struct {
	const char *name;
	enum droce_wr_opcode op;
} ops[] = {
	{ "send", DROCE_WR_SEND }, { "send_imm", DROCE_WR_SEND_WITH_IMM },
	{ "send_inv", DROCE_WR_SEND_WITH_INV }, { "write", DROCE_WR_RDMA_WRITE },
	{ "write_imm", DROCE_WR_RDMA_WRITE_WITH_IMM }, { "read", DROCE_WR_RDMA_READ },
	{ "cmp_swap", DROCE_WR_ATOMIC_CMP_AND_SWP },
	{ "fetch_add", DROCE_WR_ATOMIC_FETCH_AND_ADD },
	{ "bind_mw", DROCE_WR_BIND_MW }, { "local_inv", DROCE_WR_LOCAL_INV },
};

struct post_ctx {
	struct tpd_qp *q;
	struct droce_send_wr wr;
	struct droce_sge sge;
	struct tpd_mw *bind_mw;		/* bind_mw: the window to update */
	uint64_t count;
};

/* The local SGE: mr= off= len=; absent mr with len 0: no SGE. */
static int
local_sge(struct tpd_cmd *c, struct post_ctx *p, uint64_t def_len)
{
	struct tpd_mr *m;
	uint64_t off, len;

	if (!tpd_kv_has(c, "mr")) {
		if (tpd_kv_has(c, "len") || tpd_kv_has(c, "off") || def_len != 0) {
			tpd_err("this work request needs mr=MR");
			return -1;
		}
		return 0;
	}
	m = tpd_lookup((void *const *)tpd.mr, tpd_kv_str(c, "mr"), "mr", NULL);
	if (m == NULL || tpd_kv_u64(c, "off", 0, UINT64_MAX, &off) != 0 ||
	    tpd_kv_u64(c, "len", def_len, UINT32_MAX, &len) != 0)
		return -1;
	/* out-of-range SGEs are refused here unless unchecked=1 lets the
	 * transport see them (to test its LOC_PROT_ERR / LOC_LEN_ERR) */
	if ((off > m->len || len > m->len - off) && !tpd_kv_has(c, "unchecked")) {
		tpd_err("local range %" PRIu64 "+%" PRIu64 " is outside the MR (%zu bytes)",
			off, len, m->len);
		return -1;
	}
	p->sge.addr = (uint64_t)(uintptr_t)m->buf + off;
	p->sge.length = (uint32_t)len;
	p->sge.lkey = m->mr->lkey;
	p->wr.sg_list = &p->sge;
	p->wr.num_sge = 1;
	return 0;
}

static int
remote(struct tpd_cmd *c, struct post_ctx *p, uint64_t *addr, uint32_t *rkey)
{
	uint64_t roff, v;

	if (tpd_kv_u64(c, "roff", 0, UINT64_MAX, &roff) != 0)
		return -1;
	if (tpd_kv_has(c, "rmw")) {
		struct tpd_mw *w = tpd_lookup((void *const *)tpd.mw,
					      tpd_kv_str(c, "rmw"), "mw", NULL);
		if (w == NULL)
			return -1;
		*rkey = w->rkey;
		*addr = w->addr;
	} else if (tpd_kv_has(c, "rmr")) {
		struct tpd_mr *m = tpd_lookup((void *const *)tpd.mr,
					      tpd_kv_str(c, "rmr"), "mr", NULL);
		if (m == NULL)
			return -1;
		*rkey = m->mr->rkey;
		*addr = (uint64_t)(uintptr_t)m->buf;
	} else if (tpd_kv_has(c, "rkey") || tpd_kv_has(c, "raddr")) {
		if (tpd_kv_u64(c, "rkey", 0, UINT32_MAX, &v) != 0 ||
		    tpd_kv_u64(c, "raddr", 0, UINT64_MAX, addr) != 0)
			return -1;
		*rkey = (uint32_t)v;
	} else if (p->q->peer.valid && p->q->peer.rkey != 0) {
		*rkey = p->q->peer.rkey;
		*addr = p->q->peer.addr;
	} else {
		tpd_err("no remote buffer: give rmr=, rmw=, rkey= raddr=, or exchange with mr=");
		return -1;
	}
	*addr += roff;
	return 0;
}

static int
rkey_opt(struct tpd_cmd *c, const char *key, uint32_t *out)
{
	const char *s = tpd_kv_str(c, key);
	uint64_t v;

	if (s == NULL) {
		tpd_err("missing %s=RKEY (or %s=mwN)", key, key);
		return -1;
	}
	if (strncmp(s, "mw", 2) == 0) {
		struct tpd_mw *w = tpd_lookup((void *const *)tpd.mw, s + 2, "mw", NULL);

		if (w == NULL)
			return -1;
		*out = w->rkey;
		return 0;
	}
	if (tpd_parse_u64(s, UINT32_MAX, &v, key) != 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int
build_bind(struct tpd_cmd *c, struct post_ctx *p)
{
	const char *acc_s = tpd_kv_str(c, "access");
	int access = DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_WRITE;
	struct tpd_mw *w;
	struct tpd_mr *m;
	uint64_t off, len;

	w = tpd_lookup((void *const *)tpd.mw, tpd_kv_str(c, "mw"), "mw", NULL);
	m = w == NULL ? NULL :
		tpd_lookup((void *const *)tpd.mr, tpd_kv_str(c, "mr"), "mr", NULL);
	if (m == NULL || tpd_kv_u64(c, "off", 0, UINT64_MAX, &off) != 0 ||
	    tpd_kv_u64(c, "len", off <= m->len ? m->len - off : 0, UINT64_MAX, &len) != 0 ||
	    (acc_s != NULL && tpd_parse_access(acc_s, &access) != 0))
		return -1;
	p->wr.bind_mw.mw = w->mw;
	p->wr.bind_mw.rkey = droce_inc_rkey(w->rkey);
	p->wr.bind_mw.bind_info.mr = m->mr;
	p->wr.bind_mw.bind_info.addr = (uint64_t)(uintptr_t)m->buf + off;
	p->wr.bind_mw.bind_info.length = len;
	p->wr.bind_mw.bind_info.mw_access_flags = (unsigned int)access;
	p->bind_mw = w;
	return 0;
}

static int
build_wr(struct tpd_cmd *c, struct post_ctx *p, enum droce_wr_opcode op)
{
	uint64_t v;
	struct droce_send_wr *wr = &p->wr;

	wr->opcode = op;
	switch (op) {
	case DROCE_WR_SEND_WITH_IMM:
	case DROCE_WR_RDMA_WRITE_WITH_IMM:
		if (tpd_kv_u64(c, "imm", 0, UINT32_MAX, &v) != 0)
			return -1;
		wr->imm_data = htonl((uint32_t)v);
		break;
	case DROCE_WR_SEND_WITH_INV:
		if (rkey_opt(c, "inv", &wr->invalidate_rkey) != 0)
			return -1;
		break;
	case DROCE_WR_LOCAL_INV:
		return rkey_opt(c, "inv", &wr->invalidate_rkey);
	case DROCE_WR_BIND_MW:
		return build_bind(c, p);
	default:
		break;
	}
	switch (op) {
	case DROCE_WR_RDMA_WRITE:
	case DROCE_WR_RDMA_WRITE_WITH_IMM:
	case DROCE_WR_RDMA_READ:
		if (local_sge(c, p, 0) != 0)
			return -1;
		return remote(c, p, &wr->wr.rdma.remote_addr, &wr->wr.rdma.rkey);
	case DROCE_WR_ATOMIC_CMP_AND_SWP:
	case DROCE_WR_ATOMIC_FETCH_AND_ADD:
		if (local_sge(c, p, 8) != 0 ||
		    remote(c, p, &wr->wr.atomic.remote_addr, &wr->wr.atomic.rkey) != 0)
			return -1;
		if (op == DROCE_WR_ATOMIC_FETCH_AND_ADD)
			return tpd_kv_u64(c, "add", 1, UINT64_MAX, &wr->wr.atomic.compare_add);
		return tpd_kv_u64(c, "compare", 0, UINT64_MAX, &wr->wr.atomic.compare_add) ||
			tpd_kv_u64(c, "swap", 0, UINT64_MAX, &wr->wr.atomic.swap) ? -1 : 0;
	default:			/* the sends */
		if (local_sge(c, p, 0) != 0)
			return -1;
		if (p->q->qp->qp_type == DROCE_QPT_UD) {
			if (p->q->ah == NULL) {
				tpd_err("UD QP without a peer: qp connect it first");
				return -1;
			}
			wr->wr.ud.ah = p->q->ah;
			wr->wr.ud.remote_qpn = p->q->peer.qpn;
			wr->wr.ud.remote_qkey = p->q->peer.qkey;
		}
		return 0;
	}
}

static int
post_flags(struct tpd_cmd *c, struct post_ctx *p)
{
	uint64_t sig, inl, fence, sol, wrid;

	if (tpd_kv_u64(c, "sig", 1, 1, &sig) != 0 ||
	    tpd_kv_u64(c, "inline", 0, 1, &inl) != 0 ||
	    tpd_kv_u64(c, "fence", 0, 1, &fence) != 0 ||
	    tpd_kv_u64(c, "solicited", 0, 1, &sol) != 0 ||
	    tpd_kv_u64(c, "wrid", 1, UINT64_MAX, &wrid) != 0 ||
	    tpd_kv_u64(c, "count", 1, POST_MAX_COUNT, &p->count) != 0)
		return -1;
	(void)tpd_kv_str(c, "unchecked");
	p->wr.wr_id = wrid;
	p->wr.send_flags = (sig ? DROCE_SEND_SIGNALED : 0) |
		(inl ? DROCE_SEND_INLINE : 0) | (fence ? DROCE_SEND_FENCE : 0) |
		(sol ? DROCE_SEND_SOLICITED : 0);
	return 0;
}

static int
post_recv(struct tpd_cmd *c, struct post_ctx *p)
{
	struct droce_recv_wr rwr, *bad;
	uint64_t wrid;
	int rc;

	if (local_sge(c, p, 0) != 0 ||
	    tpd_kv_u64(c, "wrid", 1, UINT64_MAX, &wrid) != 0 ||
	    tpd_kv_u64(c, "count", 1, POST_MAX_COUNT, &p->count) != 0 ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	for (uint64_t i = 0; i < p->count; i++) {
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = wrid + i;
		rwr.sg_list = p->wr.num_sge ? &p->sge : NULL;
		rwr.num_sge = p->wr.num_sge;
		rc = droce_post_recv(p->q->qp, &rwr, &bad);
		if (rc != 0) {
			tpd_err("droce_post_recv (%" PRIu64 " of %" PRIu64 " posted): %s",
				i, p->count, strerror(rc));
			return -1;
		}
	}
	printf("qp %s: posted %" PRIu64 " recv\n", c->pos[1], p->count);
	return 0;
}

static int
post_cmd(struct tpd_cmd *c)
{
	struct post_ctx p;
	struct droce_send_wr *bad;
	size_t k;
	int rc;

	memset(&p, 0, sizeof(p));
	p.q = tpd_get_qp(c, 1);
	if (p.q == NULL)
		return -1;
	if (c->npos < 3) {
		tpd_err("missing OP (send, send_imm, send_inv, write, write_imm, read, "
			"cmp_swap, fetch_add, bind_mw, local_inv, recv)");
		return -1;
	}
	if (strcmp(c->pos[2], "recv") == 0)
		return post_recv(c, &p);
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (strcmp(c->pos[2], ops[k].name) == 0)
			break;
	if (k == sizeof(ops) / sizeof(ops[0])) {
		tpd_err("unknown OP '%s' (send, send_imm, send_inv, write, write_imm, read, "
			"cmp_swap, fetch_add, bind_mw, local_inv, recv)", c->pos[2]);
		return -1;
	}
	if (build_wr(c, &p, ops[k].op) != 0 || post_flags(c, &p) != 0 ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	for (uint64_t i = 0; i < p.count; i++) {
		rc = droce_post_send(p.q->qp, &p.wr, &bad);
		if (rc != 0) {
			tpd_err("droce_post_send %s (%" PRIu64 " of %" PRIu64 " posted): %s",
				ops[k].name, i, p.count, strerror(rc));
			return -1;
		}
		p.wr.wr_id++;
	}
	if (p.bind_mw != NULL) {
		/* type-2 binds execute in WR order: later WRs see the new rkey */
		p.bind_mw->rkey = p.wr.bind_mw.rkey;
		p.bind_mw->addr = p.wr.bind_mw.bind_info.addr;
		p.bind_mw->len = p.wr.bind_mw.bind_info.length;
		printf("qp %s: posted bind_mw, mw rkey 0x%08" PRIx32 "\n", c->pos[1],
		       p.bind_mw->rkey);
		return 0;
	}
	printf("qp %s: posted %" PRIu64 " %s\n", c->pos[1], p.count, ops[k].name);
	return 0;
}

static const struct tpd_subcmd post_cmds[] = {
	{ "", post_cmd, "post QP OP [mr=MR] [off=N] [len=N] [rmr=MR|rmw=MW|rkey=K raddr=A] [roff=N] "
	  "[imm=N] [inv=RKEY|mwN] [compare=N swap=N] [add=N] [mw=MW access=...] [sig=0|1] "
	  "[inline=0|1] [fence=0|1] [solicited=0|1] [wrid=N] [count=N] [unchecked=1]",
	  "post a work request: OP is send, send_imm, send_inv, write, write_imm, read, cmp_swap, "
	  "fetch_add, bind_mw (type-2 MW to mr= [off= len=]), local_inv, or recv (mr= off= len=)" },
	{ NULL, NULL, NULL, NULL },
};
const struct tpd_group tpd_group_post = { "post", "work requests and receives", post_cmds };
