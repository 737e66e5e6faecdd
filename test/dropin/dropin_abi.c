/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rest of rdma-core 44's libibverbs ABI through the drop-in: a program
 * compiled against the system's <infiniband/verbs.h>, run on droce through
 * droce-run.
 *
 *   dropin_abi -p PORT          the owner (TCP server on PORT): the checks
 *   dropin_abi -p PORT HOST     the peer, which writes, sends and receives
 *                               when the owner asks
 *
 * Checks, exactly:
 *  - the rate conversions (ibv_rate_to_mult, mult_to_ibv_rate,
 *    ibv_rate_to_mbps, mbps_to_ibv_rate) answer as the system's
 *    libibverbs.so.1 (loaded beside the drop-in with dlmopen) for every
 *    rate, multiple and Mb/s figure in a range, and a few fixed values;
 *  - ibv_query_gid_table: one entry per GID (ibv_query_gid's), index, port
 *    1, RoCEv2, ifindex 0; -EINVAL for too small a table or flags;
 *    entries entry_size apart, their tails zeroed;
 *  - ibv_query_qp_data_in_order 0; ibv_resize_cq EOPNOTSUPP (cqe kept);
 *    ibv_reg_dmabuf_mr, ibv_import_mr, ibv_import_dm NULL, errno
 *    EOPNOTSUPP; ibv_copy_path_rec_to_kern then _from_kern gives the
 *    record back;
 *  - device memory: query_device_ex's max_dm_size (128 KiB) and
 *    phys_port_cnt_ex (1); ibv_alloc_dm, ibv_memcpy_to/from_dm (bytes
 *    back; EINVAL unaligned or outside), ibv_reg_dm_mr (ZERO_BASED only,
 *    inside the DM, addr NULL, length 0 too), ENOMEM above max_dm_size,
 *    EINVAL for a comp_mask;
 *  - ibv_create_qp of RAW_PACKET and XRC_SEND: NULL, EOPNOTSUPP;
 *    ibv_create_qp_ex with IBV_QP_INIT_ATTR_CREATE_FLAGS and no flag
 *    works, with a flag EOPNOTSUPP; context->cmd_fd can be dup'ed;
 *  - ibv_rereg_mr: the peer's WRITE with the first rkey lands in buffer A;
 *    CHANGE_TRANSLATION to buffer B gives a new rkey, and the peer's WRITE
 *    with it lands in B (A untouched), the old rkey now gets
 *    IBV_WC_REM_ACCESS_ERR; bad input is IBV_REREG_MR_ERR_INPUT with
 *    errno EINVAL and the MR kept; CHANGE_PD moves it; CHANGE_ACCESS to
 *    local write only makes the peer's next WRITE IBV_WC_REM_ACCESS_ERR;
 *  - the IBVERBS_1.0 ABI (dlvsym): device list, name, GUID, open, port,
 *    GID, PD, MR (its keys), a CQ on a completion channel, an RC QP
 *    connected through the 1.0 modify_qp, query_qp; the peer's SEND is
 *    received through the 1.0 context's ops (post_recv, req_notify_cq,
 *    the 1.0 ibv_get_cq_event naming the 1.0 CQ and its context, poll_cq),
 *    and the owner's SEND through ops.post_send reaches the peer intact;
 *    1.0 resize_cq EOPNOTSUPP; every 1.0 object destroyed.
 * Prints "ok" and exits 0, else names the failed check, exit 1.
 */
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <inttypes.h>
#include <rdma/ib_user_sa.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dropin_rc.h"

#ifndef SYSTEM_LIBIBVERBS
#define SYSTEM_LIBIBVERBS "/usr/lib/x86_64-linux-gnu/libibverbs.so.1"
#endif

#define BUF 4096
#define NQP 3
#define WAIT_MS (10 * 1000)
#define QI_REREG 0	/* the QP pair of the rereg_mr WRITEs */
#define QI_OLDKEY 1	/* the one the old rkey's WRITE ends */
#define QI_COMPAT 2	/* the owner's 1.0 QP and the peer's */
#define CQ_MARK ((void *)0x1234)

/* exported by libibverbs, declared in no installed header */
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);

enum peer_op { OP_WRITE, OP_SEND, OP_RECV_POST, OP_RECV_CHECK, OP_END };

/* The owner's request to the peer; the peer answers a uint32_t: the
 * completion's status (OP_WRITE, OP_SEND), 0 (OP_RECV_POST), 0 or 1 when
 * the bytes differ (OP_RECV_CHECK). */
struct peer_req {
	uint32_t op;
	uint32_t qi;
	uint32_t rkey;
	uint32_t len;
	uint64_t addr;
	uint32_t fill;
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_mr *mr_b;		/* the peer's: its receive buffer b */
	struct ibv_cq *cq;
	struct ibv_qp *qp[NQP];
	uint32_t peer_qpn[NQP];
	union ibv_gid gid, peer_gid;
	unsigned char a[BUF], b[BUF];
} t;

/* ---- the IBVERBS_1.0 ABI, as programs linked against libibverbs 1.0 see it ---- */

struct v10_context;
struct v10_device { void *sysfs_dev, *sysfs_ibdev; struct ibv_device *real; void *ops[2]; };
struct v10_pd { struct v10_context *context; uint32_t handle; struct ibv_pd *real; };
struct v10_mr {
	struct v10_context *context;
	struct v10_pd *pd;
	uint32_t handle, lkey, rkey;
	struct ibv_mr *real;
};
struct v10_cq {
	struct v10_context *context;
	void *cq_context;
	uint32_t handle;
	int cqe;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t comp_events_completed, async_events_completed;
	struct ibv_cq *real;
};
struct v10_qp {
	struct v10_context *context;
	void *qp_context;
	struct v10_pd *pd;
	struct v10_cq *send_cq, *recv_cq;
	void *srq;
	uint32_t handle, qp_num;
	enum ibv_qp_state state;
	enum ibv_qp_type qp_type;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t events_completed;
	struct ibv_qp *real;
};
struct v10_qp_init_attr {
	void *qp_context;
	struct v10_cq *send_cq, *recv_cq;
	void *srq;
	struct ibv_qp_cap cap;
	enum ibv_qp_type qp_type;
	int sq_sig_all;
};
struct v10_recv_wr { struct v10_recv_wr *next; uint64_t wr_id; struct ibv_sge *sg_list; int num_sge; };
struct v10_send_wr {
	struct v10_send_wr *next;
	uint64_t wr_id;
	struct ibv_sge *sg_list;
	int num_sge;
	enum ibv_wr_opcode opcode;
	int send_flags;
	uint32_t imm_data;
	union {
		struct { uint64_t remote_addr; uint32_t rkey; } rdma;
		struct { uint64_t remote_addr, compare_add, swap; uint32_t rkey; } atomic;
		struct { void *ah; uint32_t remote_qpn, remote_qkey; } ud;
	} wr;
};
struct v10_context {
	struct v10_device *device;
	struct {
		void *query_device, *query_port, *alloc_pd, *dealloc_pd, *reg_mr,
		     *dereg_mr, *create_cq;
		int (*poll_cq)(struct v10_cq *cq, int n, struct ibv_wc *wc);
		int (*req_notify_cq)(struct v10_cq *cq, int solicited_only);
		void *cq_event, *resize_cq, *destroy_cq, *create_srq, *modify_srq,
		     *query_srq, *destroy_srq, *post_srq_recv, *create_qp, *query_qp,
		     *modify_qp, *destroy_qp;
		int (*post_send)(struct v10_qp *qp, struct v10_send_wr *wr,
				 struct v10_send_wr **bad);
		int (*post_recv)(struct v10_qp *qp, struct v10_recv_wr *wr,
				 struct v10_recv_wr **bad);
		void *create_ah, *destroy_ah, *attach_mcast, *detach_mcast;
	} ops;
	int cmd_fd, async_fd, num_comp_vectors;
	struct ibv_context *real;
};

/* The 1.0 entry points, found with dlvsym. */
static struct {
	struct v10_device **(*get_device_list)(int *n);
	void (*free_device_list)(struct v10_device **l);
	const char *(*get_device_name)(struct v10_device *d);
	__be64 (*get_device_guid)(struct v10_device *d);
	struct v10_context *(*open_device)(struct v10_device *d);
	int (*close_device)(struct v10_context *c);
	int (*query_port)(struct v10_context *c, uint8_t port, struct ibv_port_attr *a);
	int (*query_gid)(struct v10_context *c, uint8_t port, int i, union ibv_gid *g);
	struct v10_pd *(*alloc_pd)(struct v10_context *c);
	int (*dealloc_pd)(struct v10_pd *pd);
	struct v10_mr *(*reg_mr)(struct v10_pd *pd, void *addr, size_t len, int access);
	int (*dereg_mr)(struct v10_mr *mr);
	struct v10_cq *(*create_cq)(struct v10_context *c, int cqe, void *cq_context,
				    struct ibv_comp_channel *ch, int vector);
	int (*resize_cq)(struct v10_cq *cq, int cqe);
	int (*destroy_cq)(struct v10_cq *cq);
	int (*get_cq_event)(struct ibv_comp_channel *ch, struct v10_cq **cq, void **cq_context);
	void (*ack_cq_events)(struct v10_cq *cq, unsigned int n);
	struct v10_qp *(*create_qp)(struct v10_pd *pd, struct v10_qp_init_attr *a);
	int (*query_qp)(struct v10_qp *qp, struct ibv_qp_attr *a, int mask,
			struct v10_qp_init_attr *init);
	int (*modify_qp)(struct v10_qp *qp, struct ibv_qp_attr *a, int mask);
	int (*destroy_qp)(struct v10_qp *qp);
} v10;

static struct {
	struct v10_device **list;
	struct v10_context *ctx;
	struct v10_pd *pd;
	struct v10_mr *mr;
	struct ibv_comp_channel *channel;
	struct v10_cq *cq;
	struct v10_qp *qp;
	unsigned char buf[BUF];
} o10;

static void *
sym10(const char *name)
{
	void *f = dlvsym(RTLD_DEFAULT, name, "IBVERBS_1.0");

	if (f == NULL)
		die("%s@IBVERBS_1.0: %s", name, dlerror());
	return f;
}

static void
load10(void)
{
#define V10(f) (*(void **)&v10.f = sym10("ibv_" #f))
	V10(get_device_list); V10(free_device_list); V10(get_device_name);
	V10(get_device_guid); V10(open_device); V10(close_device); V10(query_port);
	V10(query_gid); V10(alloc_pd); V10(dealloc_pd); V10(reg_mr); V10(dereg_mr);
	V10(create_cq); V10(resize_cq); V10(destroy_cq); V10(get_cq_event);
	V10(ack_cq_events); V10(create_qp); V10(query_qp); V10(modify_qp); V10(destroy_qp);
#undef V10
}

/* ---- both sides ------------------------------------------------------------------- */

static struct ibv_wc
next_wc(struct ibv_cq *cq)
{
	return rc_next_wc(cq, WAIT_MS);
}

static struct ibv_qp *
new_qp(void)
{
	struct ibv_qp_init_attr init = {
		.send_cq = t.cq, .recv_cq = t.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(t.pd, &init);

	if (qp == NULL)
		die("ibv_create_qp: %s", strerror(errno));
	return qp;
}

/* The owner's QP_COMPAT is its 1.0 QP (owner_setup10). */
static void owner_setup10(void);

static void
setup(bool owner)
{
	int access = IBV_ACCESS_LOCAL_WRITE | (owner ? IBV_ACCESS_REMOTE_WRITE : 0);

	t.ctx = rc_open_device(&t.gid);
	t.pd = ibv_alloc_pd(t.ctx);
	t.cq = ibv_create_cq(t.ctx, 64, NULL, NULL, 0);
	if (t.pd == NULL || t.cq == NULL)
		die("pd/cq");
	t.mr = ibv_reg_mr(t.pd, t.a, sizeof(t.a), access);
	if (t.mr == NULL)
		die("ibv_reg_mr: %s", strerror(errno));
	if (!owner) {
		t.mr_b = ibv_reg_mr(t.pd, t.b, sizeof(t.b), IBV_ACCESS_LOCAL_WRITE);
		if (t.mr_b == NULL)
			die("ibv_reg_mr: %s", strerror(errno));
	}
	for (int i = 0; i < NQP; i++)
		if (!owner || i != QI_COMPAT)
			t.qp[i] = new_qp();
	if (owner)
		owner_setup10();
}

static void
exchange(void)
{
	struct { uint32_t qpn[NQP]; union ibv_gid gid; } me, peer;

	memset(&me, 0, sizeof(me));
	for (int i = 0; i < NQP; i++)
		me.qpn[i] = t.qp[i] != NULL ? t.qp[i]->qp_num : o10.qp->qp_num;
	me.gid = t.gid;
	tcp_send(&me, sizeof(me));
	tcp_recv(&peer, sizeof(peer));
	memcpy(t.peer_qpn, peer.qpn, sizeof(t.peer_qpn));
	t.peer_gid = peer.gid;
	for (int i = 0; i < NQP; i++)
		if (t.qp[i] != NULL)
			connect_qp(t.qp[i], peer.qpn[i], &peer.gid,
				   IBV_ACCESS_REMOTE_WRITE);
}

/* ---- the peer --------------------------------------------------------------------- */

static uint32_t
peer_post_send(const struct peer_req *r, enum ibv_wr_opcode opcode)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)t.a, .length = r->len, .lkey = t.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = r->op, .sg_list = &sge, .num_sge = 1, .opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	memset(t.a, (int)r->fill, r->len);
	wr.wr.rdma.remote_addr = r->addr;
	wr.wr.rdma.rkey = r->rkey;
	if (ibv_post_send(t.qp[r->qi], &wr, &bad) != 0)
		die("peer post_send");
	return next_wc(t.cq).status;
}

static uint32_t
peer_do(const struct peer_req *r)
{
	struct ibv_sge sge = { .addr = (uintptr_t)t.b, .length = BUF, .lkey = t.mr_b->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 77, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc;

	switch (r->op) {
	case OP_WRITE:
		return peer_post_send(r, IBV_WR_RDMA_WRITE);
	case OP_SEND:
		return peer_post_send(r, IBV_WR_SEND);
	case OP_RECV_POST:
		memset(t.b, 0, BUF);
		if (ibv_post_recv(t.qp[r->qi], &rwr, &bad) != 0)
			die("peer post_recv");
		return 0;
	case OP_RECV_CHECK:
		wc = next_wc(t.cq);
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
		    wc.wr_id != 77 || wc.byte_len != r->len)
			die("peer receive: %s opcode %d byte_len %u", ibv_wc_status_str(wc.status),
			    (int)wc.opcode, wc.byte_len);
		for (uint32_t i = 0; i < r->len; i++)
			if (t.b[i] != (unsigned char)r->fill)
				return 1;
		return t.b[r->len] != 0;
	}
	die("peer: op %u", r->op);
}

static void
peer(void)
{
	struct peer_req r;

	for (;;) {
		uint32_t st;

		tcp_recv(&r, sizeof(r));
		if (r.op == OP_END)
			return;
		st = peer_do(&r);
		tcp_send(&st, sizeof(st));
	}
}

/* ---- the owner -------------------------------------------------------------------- */

static uint32_t
ask(enum peer_op op, uint32_t qi, uint32_t rkey, const void *addr, uint32_t len, int fill)
{
	struct peer_req r = {
		.op = op, .qi = qi, .rkey = rkey, .len = len,
		.addr = (uintptr_t)addr, .fill = (uint32_t)fill,
	};
	uint32_t st;

	tcp_send(&r, sizeof(r));
	if (op == OP_END)
		return 0;
	tcp_recv(&st, sizeof(st));
	return st;
}

static void
expect_bytes(const unsigned char *p, size_t len, int fill, const char *what)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (unsigned char)fill)
			die("%s: byte %zu is 0x%02x, expected 0x%02x", what, i, p[i], fill);
}

/* The rate conversions against the system's libibverbs.so.1 and a few
 * values of the man pages. */
static void
check_rates(void)
{
	void *sys = dlmopen(LM_ID_NEWLM, SYSTEM_LIBIBVERBS, RTLD_NOW | RTLD_LOCAL);
	int (*to_mult)(enum ibv_rate), (*to_mbps)(enum ibv_rate);
	enum ibv_rate (*from_mult)(int), (*from_mbps)(int);

	if (sys == NULL)
		die("dlmopen %s: %s", SYSTEM_LIBIBVERBS, dlerror());
	*(void **)&to_mult = dlsym(sys, "ibv_rate_to_mult");
	*(void **)&to_mbps = dlsym(sys, "ibv_rate_to_mbps");
	*(void **)&from_mult = dlsym(sys, "mult_to_ibv_rate");
	*(void **)&from_mbps = dlsym(sys, "mbps_to_ibv_rate");
	if (to_mult == NULL || to_mbps == NULL || from_mult == NULL || from_mbps == NULL ||
	    (void *)to_mult == (void *)ibv_rate_to_mult)
		die("the system's rate functions");
	for (int r = -1; r < 64; r++) {
		if (ibv_rate_to_mult(r) != to_mult(r) || ibv_rate_to_mbps(r) != to_mbps(r))
			die("rate %d: mult %d mbps %d, rdma-core %d %d", r, ibv_rate_to_mult(r),
			    ibv_rate_to_mbps(r), to_mult(r), to_mbps(r));
		if (to_mbps(r) > 0 && mbps_to_ibv_rate(to_mbps(r)) != (enum ibv_rate)r)
			die("mbps_to_ibv_rate(%d)", to_mbps(r));
	}
	for (int m = -2; m <= 1000; m++)
		if (mult_to_ibv_rate(m) != from_mult(m))
			die("mult_to_ibv_rate(%d): %d, rdma-core %d", m, mult_to_ibv_rate(m),
			    from_mult(m));
	for (int mbps = 0; mbps <= 1300000; mbps += 1)
		if (mbps_to_ibv_rate(mbps) != from_mbps(mbps))
			die("mbps_to_ibv_rate(%d): %d, rdma-core %d", mbps,
			    mbps_to_ibv_rate(mbps), from_mbps(mbps));
	if (ibv_rate_to_mult(IBV_RATE_10_GBPS) != 4 || ibv_rate_to_mult(IBV_RATE_14_GBPS) != -1 ||
	    ibv_rate_to_mbps(IBV_RATE_100_GBPS) != 103125 ||
	    ibv_rate_to_mbps(IBV_RATE_MAX) != -1 || mult_to_ibv_rate(480) != IBV_RATE_1200_GBPS ||
	    mult_to_ibv_rate(3) != IBV_RATE_MAX || mbps_to_ibv_rate(14062) != IBV_RATE_14_GBPS ||
	    mbps_to_ibv_rate(14000) != IBV_RATE_MAX)
		die("rate conversions: fixed values");
	dlclose(sys);
}

static void
check_gid_table(void)
{
	struct ibv_gid_entry e[8];
	struct { struct ibv_gid_entry e; uint32_t tail[3]; } wide[8];
	struct ibv_port_attr pa;
	ssize_t n = ibv_query_gid_table(t.ctx, e, 8, 0);

	if (ibv_query_port(t.ctx, 1, &pa) != 0)
		die("query_port");
	if (n != pa.gid_tbl_len || n < 1)
		die("ibv_query_gid_table: %zd, gid_tbl_len %d", n, pa.gid_tbl_len);
	for (int i = 0; i < n; i++) {
		union ibv_gid g;

		if (ibv_query_gid(t.ctx, 1, i, &g) != 0 || memcmp(&g, &e[i].gid, sizeof(g)) != 0 ||
		    e[i].gid_index != (uint32_t)i || e[i].port_num != 1 ||
		    e[i].gid_type != (uint32_t)IBV_GID_TYPE_ROCE_V2 || e[i].ndev_ifindex != 0)
			die("gid table entry %d", i);
	}
	if (memcmp(&e[0].gid, &t.gid, sizeof(t.gid)) != 0)
		die("gid table entry 0 is not GID 0");
	if (ibv_query_gid_table(t.ctx, e, (size_t)n - 1, 0) != -EINVAL ||
	    ibv_query_gid_table(t.ctx, e, 8, 1) != -EINVAL)
		die("ibv_query_gid_table: small table or flags not -EINVAL");
	memset(wide, 0xee, sizeof(wide));
	if (_ibv_query_gid_table(t.ctx, &wide[0].e, 8, 0, sizeof(wide[0])) != n)
		die("_ibv_query_gid_table, larger entries");
	for (int i = 0; i < n; i++)
		if (memcmp(&wide[i].e, &e[i], sizeof(e[i])) != 0 ||
		    wide[i].tail[0] != 0 || wide[i].tail[2] != 0)
			die("_ibv_query_gid_table, larger entry %d", i);
}

static void
check_unsupported(void)
{
	struct ibv_sa_path_rec rec, back;
	struct ib_user_path_rec kern;
	unsigned char *p = (unsigned char *)&rec;
	int cqe = t.cq->cqe;

	if (ibv_query_qp_data_in_order(t.qp[QI_REREG], IBV_WR_RDMA_WRITE, 0) != 0)
		die("ibv_query_qp_data_in_order not 0");
	if (ibv_resize_cq(t.cq, 2 * cqe) != EOPNOTSUPP || t.cq->cqe != cqe)
		die("ibv_resize_cq: not EOPNOTSUPP");
	errno = 0;
	if (ibv_reg_dmabuf_mr(t.pd, 0, 4096, 0, 0, IBV_ACCESS_LOCAL_WRITE) != NULL ||
	    errno != EOPNOTSUPP)
		die("ibv_reg_dmabuf_mr: errno %d", errno);
	errno = 0;
	if (ibv_import_mr(t.pd, t.mr->handle) != NULL || errno != EOPNOTSUPP)
		die("ibv_import_mr: errno %d", errno);
	errno = 0;
	if (ibv_import_dm(t.ctx, 0) != NULL || errno != EOPNOTSUPP)
		die("ibv_import_dm: errno %d", errno);
	memset(&rec, 0, sizeof(rec));
	for (size_t i = 0; i < offsetof(struct ibv_sa_path_rec, raw_traffic); i++)
		p[i] = (unsigned char)(i + 1);
	rec.dlid = htobe16(7);
	rec.slid = htobe16(9);
	rec.raw_traffic = 1;
	rec.flow_label = htobe32(0x12345);
	rec.hop_limit = 64;
	rec.traffic_class = 3;
	rec.reversible = 1;
	rec.numb_path = 2;
	rec.pkey = htobe16(0xffff);
	rec.sl = 4;
	rec.mtu_selector = 2;
	rec.mtu = IBV_MTU_1024;
	rec.rate_selector = 2;
	rec.rate = IBV_RATE_10_GBPS;
	rec.packet_life_time_selector = 2;
	rec.packet_life_time = 18;
	rec.preference = 1;
	ibv_copy_path_rec_to_kern(&kern, &rec);
	memset(&back, 0, sizeof(back));
	ibv_copy_path_rec_from_kern(&back, &kern);
	if (memcmp(&back, &rec, sizeof(rec)) != 0 || kern.mtu != IBV_MTU_1024 ||
	    kern.dlid != htobe16(7) || kern.dgid[0] != 1 || kern.sgid[15] != 32)
		die("ibv_copy_path_rec_to_kern");
}

/* A WRITE by the peer on qi at addr with rkey: its completion's status. */
static enum ibv_wc_status
peer_write(uint32_t qi, uint32_t rkey, const void *addr, uint32_t len, int fill)
{
	return (enum ibv_wc_status)ask(OP_WRITE, qi, rkey, addr, len, fill);
}

static void
expect_rereg_input_error(int rc, const char *what)
{
	if (rc != IBV_REREG_MR_ERR_INPUT || errno != EINVAL)
		die("ibv_rereg_mr %s: %d errno %d, expected IBV_REREG_MR_ERR_INPUT, EINVAL",
		    what, rc, errno);
}

/* Device memory: process memory behind the API, 4-byte units, bounds,
 * zero-based MRs on it; query_device_ex's port count and DM size. */
static void
check_device_memory(void)
{
	struct ibv_device_attr_ex ax;
	struct ibv_alloc_dm_attr da = { .length = 256, .log_align_req = 6 };
	uint32_t in[16], out[16];
	struct ibv_dm *dm;
	struct ibv_mr *mr;

	memset(&ax, 0xa5, sizeof(ax));
	if (ibv_query_device_ex(t.ctx, NULL, &ax) != 0 ||
	    ax.phys_port_cnt_ex != ax.orig_attr.phys_port_cnt || ax.phys_port_cnt_ex != 1 ||
	    ax.max_dm_size != 128 * 1024)
		die("query_device_ex: phys_port_cnt_ex %u max_dm_size %" PRIu64,
		    ax.phys_port_cnt_ex, ax.max_dm_size);
	dm = ibv_alloc_dm(t.ctx, &da);
	if (dm == NULL)
		die("ibv_alloc_dm: %s", strerror(errno));
	for (int i = 0; i < 16; i++)
		in[i] = 0x01020304u * (uint32_t)(i + 1);
	if (ibv_memcpy_to_dm(dm, 64, in, sizeof(in)) != 0 ||
	    ibv_memcpy_from_dm(out, dm, 64, sizeof(out)) != 0 || memcmp(in, out, sizeof(in)) != 0)
		die("ibv_memcpy_to/from_dm: bytes differ");
	if (ibv_memcpy_to_dm(dm, 3, in, 4) != EINVAL || ibv_memcpy_to_dm(dm, 4, in, 3) != EINVAL ||
	    ibv_memcpy_from_dm(out, dm, 256, 4) != EINVAL ||
	    ibv_memcpy_from_dm(out, dm, 0, 260) != EINVAL)
		die("ibv_memcpy_to/from_dm: unaligned or out of bounds not EINVAL");
	errno = 0;
	if (ibv_reg_dm_mr(t.pd, dm, 0, 256, IBV_ACCESS_LOCAL_WRITE) != NULL || errno != EINVAL)
		die("ibv_reg_dm_mr without ZERO_BASED: errno %d", errno);
	errno = 0;
	if (ibv_reg_dm_mr(t.pd, dm, 0, 260, IBV_ACCESS_ZERO_BASED) != NULL || errno != EINVAL)
		die("ibv_reg_dm_mr past the DM: errno %d", errno);
	mr = ibv_reg_dm_mr(t.pd, dm, 64, 64, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE);
	if (mr == NULL || mr->addr != NULL || mr->length != 64)
		die("ibv_reg_dm_mr: %s", strerror(errno));
	if (ibv_dereg_mr(mr) != 0)
		die("ibv_dereg_mr (DM)");
	mr = ibv_reg_dm_mr(t.pd, dm, 256, 0, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE);
	if (mr == NULL || mr->length != 0 || ibv_dereg_mr(mr) != 0)
		die("ibv_reg_dm_mr of length 0: %s", strerror(errno));
	if (ibv_free_dm(dm) != 0)
		die("ibv_free_dm");
	da.length = ax.max_dm_size + 1;
	errno = 0;
	if (ibv_alloc_dm(t.ctx, &da) != NULL || errno != ENOMEM)
		die("ibv_alloc_dm above max_dm_size: errno %d", errno);
	da.length = 64;
	da.comp_mask = 1;
	errno = 0;
	if (ibv_alloc_dm(t.ctx, &da) != NULL || errno != EINVAL)
		die("ibv_alloc_dm with a comp_mask: errno %d", errno);
}

/* QP types droce lacks fail EOPNOTSUPP; IBV_QP_INIT_ATTR_CREATE_FLAGS
 * with no flag is taken, any flag is EOPNOTSUPP; cmd_fd can be dup'ed. */
static void
check_qp_kinds(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = t.cq, .recv_cq = t.cq, .qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr_ex ix = {
		.send_cq = t.cq, .recv_cq = t.cq, .qp_type = IBV_QPT_RC, .pd = t.pd,
		.cap = ia.cap,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
	};
	struct ibv_qp *qp;
	int fd;

	errno = 0;
	if (ibv_create_qp(t.pd, &ia) != NULL || errno != EOPNOTSUPP)
		die("ibv_create_qp(RAW_PACKET): errno %d", errno);
	ia.qp_type = IBV_QPT_XRC_SEND;
	errno = 0;
	if (ibv_create_qp(t.pd, &ia) != NULL || errno != EOPNOTSUPP)
		die("ibv_create_qp(XRC_SEND): errno %d", errno);
	qp = ibv_create_qp_ex(t.ctx, &ix);
	if (qp == NULL || ibv_destroy_qp(qp) != 0)
		die("ibv_create_qp_ex with CREATE_FLAGS 0: %s", strerror(errno));
	ix.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	errno = 0;
	if (ibv_create_qp_ex(t.ctx, &ix) != NULL || errno != EOPNOTSUPP)
		die("ibv_create_qp_ex with a create flag: errno %d", errno);
	fd = dup(t.ctx->cmd_fd);
	if (fd < 0 || close(fd) != 0)
		die("dup(cmd_fd %d): %s", t.ctx->cmd_fd, strerror(errno));
}

static void
check_rereg(void)
{
	uint32_t rkey0 = t.mr->rkey, rkey1;
	struct ibv_pd *pd2;
	enum ibv_wc_status st;

	st = peer_write(QI_REREG, rkey0, t.a, 256, 0x11);
	if (st != IBV_WC_SUCCESS)
		die("WRITE with the first rkey: %s", ibv_wc_status_str(st));
	expect_bytes(t.a, 256, 0x11, "buffer A");
	if (ibv_rereg_mr(t.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, t.b, BUF, 0) != 0)
		die("ibv_rereg_mr CHANGE_TRANSLATION: %s", strerror(errno));
	rkey1 = t.mr->rkey;
	if (rkey1 == rkey0 || t.mr->addr != t.b || t.mr->length != BUF)
		die("after CHANGE_TRANSLATION: rkey 0x%x (was 0x%x), addr %p", rkey1, rkey0,
		    t.mr->addr);
	st = peer_write(QI_REREG, rkey1, t.b, 256, 0x22);
	if (st != IBV_WC_SUCCESS)
		die("WRITE with the new rkey: %s", ibv_wc_status_str(st));
	expect_bytes(t.b, 256, 0x22, "buffer B");
	expect_bytes(t.b + 256, BUF - 256, 0, "buffer B after the WRITE");
	expect_bytes(t.a, 256, 0x11, "buffer A after the move");
	st = peer_write(QI_OLDKEY, rkey0, t.a, 16, 0x33);
	if (st != IBV_WC_REM_ACCESS_ERR)
		die("WRITE with the old rkey: %s", ibv_wc_status_str(st));
	expect_bytes(t.a, 256, 0x11, "buffer A after the old rkey");

	errno = 0;
	expect_rereg_input_error(ibv_rereg_mr(t.mr, IBV_REREG_MR_FLAGS_SUPPORTED + 1, NULL,
					      NULL, 0, 0), "unknown flag");
	errno = 0;
	expect_rereg_input_error(ibv_rereg_mr(t.mr, IBV_REREG_MR_CHANGE_PD, t.pd, NULL, 0,
					      IBV_ACCESS_LOCAL_WRITE), "access without CHANGE_ACCESS");
	errno = 0;
	expect_rereg_input_error(ibv_rereg_mr(t.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
					      NULL, BUF, 0), "NULL addr");
	if (t.mr->rkey != rkey1 || t.mr->addr != t.b)
		die("a refused ibv_rereg_mr changed the MR");

	pd2 = ibv_alloc_pd(t.ctx);
	if (pd2 == NULL || ibv_rereg_mr(t.mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0) != 0 ||
	    t.mr->pd != pd2 ||
	    ibv_rereg_mr(t.mr, IBV_REREG_MR_CHANGE_PD, t.pd, NULL, 0, 0) != 0 || t.mr->pd != t.pd ||
	    ibv_dealloc_pd(pd2) != 0)
		die("ibv_rereg_mr CHANGE_PD there and back");
	if (ibv_rereg_mr(t.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			 IBV_ACCESS_LOCAL_WRITE) != 0)
		die("ibv_rereg_mr CHANGE_ACCESS: %s", strerror(errno));
	st = peer_write(QI_REREG, t.mr->rkey, t.b, 16, 0x44);
	if (st != IBV_WC_REM_ACCESS_ERR)
		die("WRITE after CHANGE_ACCESS to local only: %s", ibv_wc_status_str(st));
	expect_bytes(t.b, 256, 0x22, "buffer B after the refused WRITE");
}

static void
owner_setup10(void)
{
	struct v10_qp_init_attr init = {
		.qp_context = (void *)0x77, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	union ibv_gid gid;
	struct ibv_port_attr pa10, pa;
	int n = -1;

	load10();
	o10.list = v10.get_device_list(&n);
	if (o10.list == NULL || n != 1 || o10.list[1] != NULL ||
	    strcmp(v10.get_device_name(o10.list[0]), "droce0") != 0 ||
	    v10.get_device_guid(o10.list[0]) != ibv_get_device_guid(t.ctx->device))
		die("1.0 device list (%d)", n);
	o10.ctx = v10.open_device(o10.list[0]);
	if (o10.ctx == NULL || o10.ctx->device->real != o10.list[0]->real ||
	    o10.ctx->ops.poll_cq == NULL ||
	    o10.ctx->ops.post_send == NULL)
		die("1.0 ibv_open_device");
	memset(&pa10, 0, sizeof(pa10));
	if (v10.query_port(o10.ctx, 1, &pa10) != 0 || ibv_query_port(t.ctx, 1, &pa) != 0 ||
	    pa10.state != pa.state || pa10.gid_tbl_len != pa.gid_tbl_len ||
	    pa10.active_mtu != pa.active_mtu)
		die("1.0 ibv_query_port");
	if (v10.query_gid(o10.ctx, 1, 0, &gid) != 0 || memcmp(&gid, &t.gid, sizeof(gid)) != 0)
		die("1.0 ibv_query_gid");
	o10.pd = v10.alloc_pd(o10.ctx);
	o10.mr = o10.pd != NULL ? v10.reg_mr(o10.pd, o10.buf, BUF, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (o10.mr == NULL || o10.mr->lkey != o10.mr->real->lkey ||
	    o10.mr->rkey != o10.mr->real->rkey || o10.mr->pd != o10.pd)
		die("1.0 ibv_alloc_pd / ibv_reg_mr");
	o10.channel = ibv_create_comp_channel(o10.ctx->real);
	o10.cq = o10.channel != NULL ? v10.create_cq(o10.ctx, 16, CQ_MARK, o10.channel, 0) : NULL;
	if (o10.cq == NULL || o10.cq->cq_context != CQ_MARK || o10.cq->cqe < 16)
		die("1.0 ibv_create_cq");
	if (v10.resize_cq(o10.cq, 64) != EOPNOTSUPP)
		die("1.0 ibv_resize_cq not EOPNOTSUPP");
	init.send_cq = init.recv_cq = o10.cq;
	o10.qp = v10.create_qp(o10.pd, &init);
	if (o10.qp == NULL || o10.qp->qp_num != o10.qp->real->qp_num || o10.qp->send_cq != o10.cq ||
	    init.cap.max_send_wr < 4)
		die("1.0 ibv_create_qp: %s", strerror(errno));
}

/* The 1.0 QP through INIT, RTR, RTS to the peer, then query_qp. */
static void
connect10(void)
{
	struct ibv_qp_attr a;
	struct v10_qp_init_attr init;

	if (v10.modify_qp(o10.qp, &a, init_attr(&a, 0)) != 0 ||
	    v10.modify_qp(o10.qp, &a, rtr_attr(&a, t.peer_qpn[QI_COMPAT], &t.peer_gid)) != 0 ||
	    v10.modify_qp(o10.qp, &a, rts_attr(&a)) != 0)
		die("1.0 ibv_modify_qp to RTS: %s", strerror(errno));
	memset(&init, 0, sizeof(init));
	if (v10.query_qp(o10.qp, &a, IBV_QP_STATE, &init) != 0 || a.qp_state != IBV_QPS_RTS ||
	    o10.qp->state != IBV_QPS_RTS || init.send_cq != o10.cq || init.recv_cq != o10.cq ||
	    init.qp_context != (void *)0x77 || init.qp_type != IBV_QPT_RC)
		die("1.0 ibv_query_qp");
}

static struct ibv_wc
next_wc10(void)
{
	struct ibv_wc wc;
	struct timespec t0;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((n = o10.ctx->ops.poll_cq(o10.cq, 1, &wc)) == 0 && ms_since(&t0) < WAIT_MS)
		;
	if (n != 1)
		die("1.0 poll_cq: no completion within %d ms (%d)", WAIT_MS, n);
	return wc;
}

static void
check_compat10(void)
{
	struct ibv_sge sge = { .addr = (uintptr_t)o10.buf, .length = BUF, .lkey = o10.mr->lkey };
	struct v10_recv_wr rwr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct v10_send_wr swr = {
		.wr_id = 6, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *sbad;
	struct v10_cq *ev_cq = NULL;
	void *ev_ctx = NULL;
	struct ibv_wc wc;

	connect10();
	if (o10.ctx->ops.post_recv(o10.qp, &rwr, &rbad) != 0 ||
	    o10.ctx->ops.req_notify_cq(o10.cq, 0) != 0)
		die("1.0 ops.post_recv / req_notify_cq");
	if (ask(OP_SEND, QI_COMPAT, 0, NULL, 100, 0x55) != IBV_WC_SUCCESS)
		die("the peer's SEND to the 1.0 QP");
	if (v10.get_cq_event(o10.channel, &ev_cq, &ev_ctx) != 0 || ev_cq != o10.cq ||
	    ev_ctx != CQ_MARK)
		die("1.0 ibv_get_cq_event: cq %p context %p", (void *)ev_cq, ev_ctx);
	v10.ack_cq_events(o10.cq, 1);
	wc = next_wc10();
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV || wc.wr_id != 5 ||
	    wc.byte_len != 100 || wc.qp_num != o10.qp->qp_num)
		die("1.0 receive: %s opcode %d byte_len %u", ibv_wc_status_str(wc.status),
		    (int)wc.opcode, wc.byte_len);
	expect_bytes(o10.buf, 100, 0x55, "1.0 receive buffer");
	ask(OP_RECV_POST, QI_COMPAT, 0, NULL, 0, 0);
	memset(o10.buf, 0x66, 200);
	sge.length = 200;
	if (o10.ctx->ops.post_send(o10.qp, &swr, &sbad) != 0)
		die("1.0 ops.post_send");
	wc = next_wc10();
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_SEND || wc.wr_id != 6)
		die("1.0 send: %s opcode %d", ibv_wc_status_str(wc.status), (int)wc.opcode);
	if (ask(OP_RECV_CHECK, QI_COMPAT, 0, NULL, 200, 0x66) != 0)
		die("the peer received other bytes than the 1.0 SEND's");
}

static void
teardown10(void)
{
	if (v10.destroy_qp(o10.qp) != 0 || v10.destroy_cq(o10.cq) != 0 ||
	    ibv_destroy_comp_channel(o10.channel) != 0 || v10.dereg_mr(o10.mr) != 0 ||
	    v10.dealloc_pd(o10.pd) != 0 || v10.close_device(o10.ctx) != 0)
		die("1.0 teardown");
	v10.free_device_list(o10.list);
}

static void
owner(void)
{
	if (strcmp(ibv_get_device_name(t.ctx->device), "droce0") != 0)
		die("not on the drop-in: device %s", ibv_get_device_name(t.ctx->device));
	check_rates();
	check_gid_table();
	check_unsupported();
	check_device_memory();
	check_qp_kinds();
	check_rereg();
	check_compat10();
	ask(OP_END, 0, 0, NULL, 0, 0);
	teardown10();
}

static void
teardown(void)
{
	for (int i = 0; i < NQP; i++)
		if (t.qp[i] != NULL && ibv_destroy_qp(t.qp[i]) != 0)
			die("destroy_qp");
	if (ibv_dereg_mr(t.mr) != 0 || (t.mr_b != NULL && ibv_dereg_mr(t.mr_b) != 0) ||
	    ibv_destroy_cq(t.cq) != 0 || ibv_dealloc_pd(t.pd) != 0 || ibv_close_device(t.ctx) != 0)
		die("teardown");
}

int
main(int argc, char **argv)
{
	static const struct rc_roles roles = {
		.setup = setup, .exchange = exchange, .owner = owner, .peer = peer,
		.teardown = teardown,
	};

	return rc_main(argc, argv, &roles);
}
