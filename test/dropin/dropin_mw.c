/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows through the drop-in: a program compiled against the
 * system's <infiniband/verbs.h>, run on droce through droce-run.
 *
 *   dropin_mw -p PORT          the owner of the windows (TCP server on PORT)
 *   dropin_mw -p PORT HOST     the peer that uses them
 *
 * NQP RC QPs each side, connected pairwise.  The owner binds windows on
 * its buffer and asks the peer (over TCP) for one remote WRITE or
 * SEND_WITH_INV at a time on a given QP pair; the peer answers with the
 * status of its completion.  An access error ends that QP pair, so each
 * case that ends with one has its own.  Checks, exactly: the device caps
 * (MEM_WINDOW, TYPE_2B, not 2A; max_mw); type 1 (ibv_bind_mw): the new
 * rkey is ibv_inc_rkey of the old, IBV_WC_BIND_MW, a WRITE inside the
 * window lands (bytes, and none beside it), one past its end gets
 * IBV_WC_REM_ACCESS_ERR; a rebind kills the old rkey, an unbind the bound
 * one, a dealloc of a bound window its rkey; type 2 (IBV_WR_BIND_MW on a
 * QP): a WRITE lands, the peer's SEND_WITH_INV completes the owner's
 * receive with IBV_WC_WITH_INV and invalidated_rkey, the next WRITE gets
 * IBV_WC_REM_ACCESS_ERR; type 2 through ibv_wr_bind_mw / ibv_wr_local_inv
 * (IBV_WC_LOCAL_INV) and the peer's ibv_wr_send_inv likewise.  Then an
 * MR under an iova (ibv_reg_mr_iova2, ibv_reg_mr_iova): the peer's WRITE
 * to iova + k lands at addr + k (bytes, and none beside it), one to the
 * MR's host address gets IBV_WC_REM_ACCESS_ERR.  Prints "ok" and exits
 * 0, else names the failed check, exit 1.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dropin_rc.h"

#define BUF 8192
#define NQP 7
#define WAIT_MS (10 * 1000)

enum peer_op { OP_WRITE, OP_SEND_INV, OP_WR_SEND_INV, OP_END };

/* The owner's request to the peer. */
struct peer_req {
	uint32_t op;
	uint32_t qi;		/* the QP pair */
	uint32_t rkey;		/* WRITE: the rkey; SEND_WITH_INV: the one to invalidate */
	uint32_t len;
	uint64_t addr;
	uint32_t fill;
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp[NQP];
	union ibv_gid gid;
	bool owner;
	unsigned char buf[BUF];
} t;

/* The QP pair that uses the ibv_wr_* API (both sides). */
#define QI_WR 5
/* The QP pair of the MRs under an iova. */
#define QI_IOVA 6

/* The CQ's next completion (one, within WAIT_MS). */
static struct ibv_wc
next_wc(void)
{
	return rc_next_wc(t.cq, WAIT_MS);
}

static void
expect_wc(enum ibv_wc_opcode opcode, uint64_t wr_id)
{
	struct ibv_wc wc = next_wc();

	if (wc.status != IBV_WC_SUCCESS || wc.opcode != opcode || wc.wr_id != wr_id)
		die("expected opcode %d wr_id %d: status %s opcode %d wr_id %d", (int)opcode,
		    (int)wr_id, ibv_wc_status_str(wc.status), (int)wc.opcode, (int)wc.wr_id);
}

static void
setup(bool owner)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};

	t.owner = owner;
	t.ctx = rc_open_device(&t.gid);
	t.pd = ibv_alloc_pd(t.ctx);
	t.mr = t.pd != NULL ? ibv_reg_mr(t.pd, t.buf, sizeof(t.buf),
					 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND) : NULL;
	t.cq = ibv_create_cq(t.ctx, 64, NULL, NULL, 0);
	if (t.mr == NULL || t.cq == NULL)
		die("pd/mr/cq");
	init.send_cq = init.recv_cq = t.cq;
	init.pd = t.pd;
	for (int i = 0; i < NQP; i++) {
		init.comp_mask = IBV_QP_INIT_ATTR_PD;
		if (i == QI_WR) {
			init.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
			init.send_ops_flags = IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
					      IBV_QP_EX_WITH_SEND_WITH_INV;
		}
		t.qp[i] = ibv_create_qp_ex(t.ctx, &init);
		if (t.qp[i] == NULL)
			die("ibv_create_qp_ex %d: %s", i, strerror(errno));
	}
}

static void
exchange(void)
{
	struct { uint32_t qpn[NQP]; union ibv_gid gid; } me, peer;

	memset(&me, 0, sizeof(me));
	for (int i = 0; i < NQP; i++)
		me.qpn[i] = t.qp[i]->qp_num;
	me.gid = t.gid;
	tcp_send(&me, sizeof(me));
	tcp_recv(&peer, sizeof(peer));
	for (int i = 0; i < NQP; i++)
		connect_qp(t.qp[i], peer.qpn[i], &peer.gid,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
}

/* ---- the peer ----------------------------------------------------------------------- */

static int
peer_do(const struct peer_req *r)
{
	struct ibv_sge sge = { (uintptr_t)t.buf, r->len, t.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = r->qi, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	memset(t.buf, (int)r->fill, r->len);
	if (r->op == OP_WR_SEND_INV) {
		struct ibv_qp_ex *x = ibv_qp_to_qp_ex(t.qp[r->qi]);

		if (x == NULL)
			die("ibv_qp_to_qp_ex");
		ibv_wr_start(x);
		x->wr_id = r->qi;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send_inv(x, r->rkey);
		ibv_wr_set_sge(x, t.mr->lkey, (uintptr_t)t.buf, r->len);
		if (ibv_wr_complete(x) != 0)
			die("ibv_wr_complete (send_inv)");
	} else {
		if (r->op == OP_WRITE) {
			wr.opcode = IBV_WR_RDMA_WRITE;
			wr.wr.rdma.remote_addr = r->addr;
			wr.wr.rdma.rkey = r->rkey;
		} else {
			wr.opcode = IBV_WR_SEND_WITH_INV;
			wr.invalidate_rkey = r->rkey;
		}
		if (ibv_post_send(t.qp[r->qi], &wr, &bad) != 0)
			die("ibv_post_send");
	}
	wc = next_wc();
	if (wc.wr_id != r->qi)
		die("peer: wr_id %d, not %u", (int)wc.wr_id, r->qi);
	return (int)wc.status;
}

static void
peer(void)
{
	struct peer_req r;

	for (tcp_recv(&r, sizeof(r)); r.op != OP_END; tcp_recv(&r, sizeof(r))) {
		int status = peer_do(&r);

		tcp_send(&status, sizeof(status));
	}
}

/* ---- the owner ---------------------------------------------------------------------- */

/* The peer's op on QP pair qi; its completion's status must be want. */
static void
ask(enum peer_op op, uint32_t qi, uint32_t rkey, uint64_t addr, uint32_t len,
    unsigned char fill, enum ibv_wc_status want)
{
	struct peer_req r = { .op = op, .qi = qi, .rkey = rkey, .len = len, .addr = addr,
			      .fill = fill };
	int status;

	tcp_send(&r, sizeof(r));
	tcp_recv(&status, sizeof(status));
	if (status != (int)want)
		die("QP pair %u, op %d, rkey 0x%x: peer's status %s, not %s", qi, (int)op, rkey,
		    ibv_wc_status_str((enum ibv_wc_status)status), ibv_wc_status_str(want));
}

/* buf[off, off+len) holds fill, the bytes just before and after 0. */
static void
expect_bytes(size_t off, size_t len, unsigned char fill)
{
	for (size_t i = 0; i < len; i++)
		if (t.buf[off + i] != fill)
			die("byte %zu: 0x%02x, written 0x%02x", off + i, t.buf[off + i], fill);
	if (t.buf[off - 1] != 0 || t.buf[off + len] != 0)
		die("bytes beside [%zu, %zu) written", off, off + len);
}

static uint64_t
at(size_t off)
{
	return (uintptr_t)&t.buf[off];
}

static void
check_caps(void)
{
	struct ibv_device_attr a;
	const unsigned int mw = IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B;

	if (ibv_query_device(t.ctx, &a) != 0)
		die("ibv_query_device");
	if ((a.device_cap_flags & (mw | IBV_DEVICE_MEM_WINDOW_TYPE_2A)) != mw || a.max_mw != 65536)
		die("caps: flags 0x%x, max_mw %d", a.device_cap_flags, a.max_mw);
}

/* Type 1 through ibv_bind_mw on qp[qi]: signalled, the new rkey. */
static void
bind1(struct ibv_mw *mw, uint32_t qi, size_t off, size_t len)
{
	struct ibv_mw_bind b = {
		.wr_id = 100 + qi, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = len != 0 ? t.mr : NULL, .addr = len != 0 ? at(off) : 0,
			       .length = len, .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	uint32_t old = mw->rkey;
	int rc = ibv_bind_mw(t.qp[qi], mw, &b);

	if (rc != 0)
		die("ibv_bind_mw: %s", strerror(rc));
	if (mw->rkey != ibv_inc_rkey(old))
		die("type-1 bind: rkey 0x%x, not ibv_inc_rkey(0x%x)", mw->rkey, old);
	expect_wc(IBV_WC_BIND_MW, 100 + qi);
}

static void
type1(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(t.pd, IBV_MW_TYPE_1);
	uint32_t r1, r2;

	if (mw == NULL || mw->type != IBV_MW_TYPE_1 || mw->pd != t.pd)
		die("ibv_alloc_mw(TYPE_1)");
	bind1(mw, 0, 1024, 256);
	r1 = mw->rkey;
	ask(OP_WRITE, 0, r1, at(1024), 256, 0x11, IBV_WC_SUCCESS);
	expect_bytes(1024, 256, 0x11);
	ask(OP_WRITE, 0, r1, at(1024 + 248), 16, 0x12, IBV_WC_REM_ACCESS_ERR);
	expect_bytes(1024, 256, 0x11);

	/* a rebind (another QP: a type-1 window is tied to none) */
	bind1(mw, 1, 2048, 128);
	r2 = mw->rkey;
	ask(OP_WRITE, 1, r1, at(2048), 128, 0x21, IBV_WC_REM_ACCESS_ERR);
	ask(OP_WRITE, 2, r2, at(2048), 128, 0x22, IBV_WC_SUCCESS);
	expect_bytes(2048, 128, 0x22);
	bind1(mw, 2, 0, 0);		/* unbind */
	ask(OP_WRITE, 2, r2, at(2048), 128, 0x23, IBV_WC_REM_ACCESS_ERR);
	expect_bytes(2048, 128, 0x22);

	/* dealloc of a bound window */
	bind1(mw, 3, 4096, 64);
	r1 = mw->rkey;
	ask(OP_WRITE, 3, r1, at(4096), 64, 0x31, IBV_WC_SUCCESS);
	expect_bytes(4096, 64, 0x31);
	if (ibv_dealloc_mw(mw) != 0)
		die("ibv_dealloc_mw of a bound window");
	ask(OP_WRITE, 3, r1, at(4096), 64, 0x32, IBV_WC_REM_ACCESS_ERR);
	expect_bytes(4096, 64, 0x31);
}

static void
post_recv(uint32_t qi)
{
	struct ibv_sge sge = { at(7168), 64, t.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 200 + qi, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(t.qp[qi], &wr, &bad) != 0)
		die("ibv_post_recv");
}

/* The receive of the peer's SEND_WITH_INV of rkey on qp[qi]. */
static void
expect_inv(uint32_t qi, uint32_t rkey)
{
	struct ibv_wc wc = next_wc();

	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV || wc.wr_id != 200 + qi ||
	    !(wc.wc_flags & IBV_WC_WITH_INV) || wc.invalidated_rkey != rkey || wc.byte_len != 8)
		die("SEND_WITH_INV's receive: status %s opcode %d flags 0x%x rkey 0x%x (want 0x%x) "
		    "len %u", ibv_wc_status_str(wc.status), (int)wc.opcode, wc.wc_flags,
		    wc.invalidated_rkey, rkey, wc.byte_len);
}

/* Type 2 through ibv_post_send: bind, WRITE, the peer's SEND_WITH_INV. */
static void
type2_post(void)
{
	const uint32_t qi = 4;
	struct ibv_mw *mw = ibv_alloc_mw(t.pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = {
		.wr_id = 300, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint32_t k;

	if (mw == NULL || mw->type != IBV_MW_TYPE_2)
		die("ibv_alloc_mw(TYPE_2)");
	k = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = k;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = t.mr, .addr = at(3072), .length = 512,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	if (ibv_post_send(t.qp[qi], &wr, &bad) != 0)
		die("ibv_post_send(BIND_MW)");
	expect_wc(IBV_WC_BIND_MW, 300);
	ask(OP_WRITE, qi, k, at(3072), 512, 0x41, IBV_WC_SUCCESS);
	expect_bytes(3072, 512, 0x41);
	post_recv(qi);
	ask(OP_SEND_INV, qi, k, 0, 8, 0x42, IBV_WC_SUCCESS);
	expect_inv(qi, k);
	ask(OP_WRITE, qi, k, at(3072), 512, 0x43, IBV_WC_REM_ACCESS_ERR);
	expect_bytes(3072, 512, 0x41);
	if (ibv_dealloc_mw(mw) != 0)
		die("ibv_dealloc_mw(TYPE_2)");
}

/* Type 2 through ibv_wr_bind_mw; ibv_wr_local_inv, the peer's ibv_wr_send_inv. */
static void
wr_bind(struct ibv_qp_ex *x, struct ibv_mw *mw, uint32_t rkey, size_t off, size_t len)
{
	const struct ibv_mw_bind_info bi = {
		.mr = t.mr, .addr = at(off), .length = len,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	ibv_wr_start(x);
	x->wr_id = 400;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, mw, rkey, &bi);
	if (ibv_wr_complete(x) != 0)
		die("ibv_wr_complete (bind_mw)");
	expect_wc(IBV_WC_BIND_MW, 400);
}

static void
type2_wr(void)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(t.qp[QI_WR]);
	struct ibv_mw *mw = ibv_alloc_mw(t.pd, IBV_MW_TYPE_2);
	uint32_t k1, k2;

	if (x == NULL || mw == NULL)
		die("ibv_qp_to_qp_ex / ibv_alloc_mw");
	k1 = ibv_inc_rkey(mw->rkey);
	wr_bind(x, mw, k1, 5120, 256);
	ask(OP_WRITE, QI_WR, k1, at(5120), 256, 0x51, IBV_WC_SUCCESS);
	expect_bytes(5120, 256, 0x51);
	post_recv(QI_WR);
	ask(OP_WR_SEND_INV, QI_WR, k1, 0, 8, 0x52, IBV_WC_SUCCESS);
	expect_inv(QI_WR, k1);

	/* bound again (a new key), then invalidated locally */
	k2 = ibv_inc_rkey(k1);
	wr_bind(x, mw, k2, 5120, 256);
	ask(OP_WRITE, QI_WR, k2, at(5120), 256, 0x53, IBV_WC_SUCCESS);
	expect_bytes(5120, 256, 0x53);
	ibv_wr_start(x);
	x->wr_id = 401;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(x, k2);
	if (ibv_wr_complete(x) != 0)
		die("ibv_wr_complete (local_inv)");
	expect_wc(IBV_WC_LOCAL_INV, 401);
	ask(OP_WRITE, QI_WR, k2, at(5120), 256, 0x54, IBV_WC_REM_ACCESS_ERR);
	expect_bytes(5120, 256, 0x53);
	if (ibv_dealloc_mw(mw) != 0)
		die("ibv_dealloc_mw(TYPE_2, wr API)");
}

/* MRs on buf[6144, 6656) named from IOVA, then buf[6656, 6912) from IOVA2. */
#define IOVA UINT64_C(0x10000000000)
#define IOVA2 UINT64_C(0x20000)

static void
iova(void)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_mr *mr = ibv_reg_mr_iova2(t.pd, &t.buf[6144], 512, IOVA, acc);
	struct ibv_mr *mr2 = ibv_reg_mr_iova(t.pd, &t.buf[6656], 256, IOVA2, acc);

	if (mr == NULL || mr2 == NULL)
		die("ibv_reg_mr_iova2/ibv_reg_mr_iova: %s", strerror(errno));
	if (mr->addr != &t.buf[6144] || mr->length != 512)
		die("iova MR: addr %p length %zu", mr->addr, mr->length);
	ask(OP_WRITE, QI_IOVA, mr->rkey, IOVA + 128, 64, 0x61, IBV_WC_SUCCESS);
	expect_bytes(6144 + 128, 64, 0x61);
	ask(OP_WRITE, QI_IOVA, mr->rkey, IOVA + 448, 64, 0x62, IBV_WC_SUCCESS);
	expect_bytes(6144 + 448, 64, 0x62);
	ask(OP_WRITE, QI_IOVA, mr2->rkey, IOVA2 + 16, 32, 0x63, IBV_WC_SUCCESS);
	expect_bytes(6656 + 16, 32, 0x63);
	/* the host address names nothing of the MR (ends the QP pair) */
	ask(OP_WRITE, QI_IOVA, mr->rkey, at(6144 + 128), 64, 0x64, IBV_WC_REM_ACCESS_ERR);
	expect_bytes(6144 + 128, 64, 0x61);
	if (ibv_dereg_mr(mr) != 0 || ibv_dereg_mr(mr2) != 0)
		die("ibv_dereg_mr (iova)");
}

static void
owner(void)
{
	const struct peer_req end = { .op = OP_END };

	check_caps();
	type1();
	type2_post();
	type2_wr();
	iova();
	tcp_send(&end, sizeof(end));
}

static void
teardown(void)
{
	for (int i = 0; i < NQP; i++)
		if (ibv_destroy_qp(t.qp[i]) != 0)
			die("ibv_destroy_qp");
	if (ibv_destroy_cq(t.cq) || ibv_dereg_mr(t.mr) || ibv_dealloc_pd(t.pd) ||
	    ibv_close_device(t.ctx))
		die("teardown");
}

int
main(int argc, char **argv)
{
	static const struct rc_roles roles = { setup, exchange, owner, peer, teardown };

	return rc_main(argc, argv, &roles);
}
