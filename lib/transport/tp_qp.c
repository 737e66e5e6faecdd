/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP state: creation, the modify_qp state machine (IBTA 1.4 vol 1 10.3.1,
 * table 91: which attributes each transition requires and allows, the same
 * table the kernel's ib_modify_qp_is_ok() encodes), query, destruction,
 * and the error state that flushes every outstanding work request.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include "tp_private.h"

/* ---- the transition table --------------------------------------------------- */

enum { T_UD, T_UC, T_RC, T_NTYPES };

struct qp_transition {
	bool valid;
	int req[T_NTYPES];	/* required attribute bits */
	int opt[T_NTYPES];	/* optional attribute bits */
};

#define S(x) DROCE_QPS_##x
#define M(x) DROCE_QP_##x

static const struct qp_transition transitions[DROCE_QPS_ERR + 1][DROCE_QPS_ERR + 1] = {
	[S(RESET)] = {
		[S(RESET)] = { .valid = true },
		[S(INIT)] = { .valid = true,
			.req = { [T_UD] = M(PKEY_INDEX) | M(PORT) | M(QKEY),
				 [T_UC] = M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS),
				 [T_RC] = M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS) } },
	},
	[S(INIT)] = {
		[S(INIT)] = { .valid = true,
			.opt = { [T_UD] = M(PKEY_INDEX) | M(PORT) | M(QKEY),
				 [T_UC] = M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS),
				 [T_RC] = M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS) } },
		[S(RTR)] = { .valid = true,
			.req = { [T_UC] = M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN),
				 [T_RC] = M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN) |
					  M(MAX_DEST_RD_ATOMIC) | M(MIN_RNR_TIMER) },
			.opt = { [T_UD] = M(PKEY_INDEX) | M(QKEY),
				 [T_UC] = M(ALT_PATH) | M(ACCESS_FLAGS) | M(PKEY_INDEX),
				 [T_RC] = M(ALT_PATH) | M(ACCESS_FLAGS) | M(PKEY_INDEX) } },
	},
	[S(RTR)] = {
		[S(RTS)] = { .valid = true,
			.req = { [T_UD] = M(SQ_PSN), [T_UC] = M(SQ_PSN),
				 [T_RC] = M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) |
					  M(SQ_PSN) | M(MAX_QP_RD_ATOMIC) },
			.opt = { [T_UD] = M(CUR_STATE) | M(QKEY),
				 [T_UC] = M(CUR_STATE) | M(ALT_PATH) | M(ACCESS_FLAGS) |
					  M(PATH_MIG_STATE),
				 [T_RC] = M(CUR_STATE) | M(ALT_PATH) | M(ACCESS_FLAGS) |
					  M(MIN_RNR_TIMER) | M(PATH_MIG_STATE) } },
	},
	[S(RTS)] = {
		[S(RTS)] = { .valid = true,
			.opt = { [T_UD] = M(CUR_STATE) | M(QKEY),
				 [T_UC] = M(CUR_STATE) | M(ACCESS_FLAGS) | M(ALT_PATH) |
					  M(PATH_MIG_STATE),
				 [T_RC] = M(CUR_STATE) | M(ACCESS_FLAGS) | M(ALT_PATH) |
					  M(PATH_MIG_STATE) | M(MIN_RNR_TIMER) } },
		[S(SQD)] = { .valid = true,
			.opt = { [T_UD] = M(EN_SQD_ASYNC_NOTIFY),
				 [T_UC] = M(EN_SQD_ASYNC_NOTIFY),
				 [T_RC] = M(EN_SQD_ASYNC_NOTIFY) } },
	},
	[S(SQD)] = {
		[S(RTS)] = { .valid = true,
			.opt = { [T_UD] = M(CUR_STATE) | M(QKEY),
				 [T_UC] = M(CUR_STATE) | M(ALT_PATH) | M(ACCESS_FLAGS) |
					  M(PATH_MIG_STATE),
				 [T_RC] = M(CUR_STATE) | M(ALT_PATH) | M(ACCESS_FLAGS) |
					  M(MIN_RNR_TIMER) | M(PATH_MIG_STATE) } },
		[S(SQD)] = { .valid = true,
			.opt = { [T_UD] = M(PKEY_INDEX) | M(QKEY),
				 [T_UC] = M(AV) | M(ALT_PATH) | M(ACCESS_FLAGS) |
					  M(PKEY_INDEX) | M(PATH_MIG_STATE),
				 [T_RC] = M(PORT) | M(AV) | M(TIMEOUT) | M(RETRY_CNT) |
					  M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC) |
					  M(MAX_DEST_RD_ATOMIC) | M(ALT_PATH) |
					  M(ACCESS_FLAGS) | M(PKEY_INDEX) |
					  M(MIN_RNR_TIMER) | M(PATH_MIG_STATE) } },
	},
	[S(SQE)] = {
		[S(RTS)] = { .valid = true,
			.opt = { [T_UD] = M(CUR_STATE) | M(QKEY),
				 [T_UC] = M(CUR_STATE) | M(ACCESS_FLAGS) } },
	},
};

static int
type_index(enum droce_qp_type t)
{
	return t == DROCE_QPT_UD ? T_UD : t == DROCE_QPT_UC ? T_UC : T_RC;
}

/*
 * Any state may go to RESET, and any state but RESET to ERR, with no
 * attribute besides the state (table 91).  ib_modify_qp_is_ok() has no
 * RESET -> ERR entry and no optional attributes for these transitions, so
 * CUR_STATE is refused there too (it is optional only from RTR, RTS, SQD
 * and SQE, where the table lists it).
 */
static bool
transition_ok(enum droce_qp_state cur, enum droce_qp_state next,
	      enum droce_qp_type type, int mask)
{
	const struct qp_transition *t;
	int ti = type_index(type);
	int attrs = mask & ~DROCE_QP_STATE;

	if (cur > DROCE_QPS_ERR || next > DROCE_QPS_ERR)
		return false;
	if (next == DROCE_QPS_RESET || next == DROCE_QPS_ERR)
		return attrs == 0 && !(cur == DROCE_QPS_RESET && next == DROCE_QPS_ERR);
	t = &transitions[cur][next];
	if (!t->valid)
		return false;
	if ((attrs & t->req[ti]) != t->req[ti])
		return false;
	return (attrs & ~(t->req[ti] | t->opt[ti])) == 0;
}

/* ---- attribute values ------------------------------------------------------- */

#define QP_ACCESS_ALLOWED (DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE | \
	DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC | DROCE_ACCESS_MW_BIND | \
	DROCE_ACCESS_FLUSH_GLOBAL | DROCE_ACCESS_FLUSH_PERSISTENT)

/* The largest IB MTU that fits the link's IP MTU with RoCEv2 headers. */
static enum droce_mtu
active_mtu(const struct tp_dev *dev)
{
	/* IPv6 40 + UDP 8 + BTH 12 + largest ext header 28 + ICRC 4 */
	uint32_t room = dev->link != NULL ? dev->link->mtu : 1500;
	enum droce_mtu m = DROCE_MTU_4096;

	while (m > DROCE_MTU_256 && (uint32_t)droce_mtu_to_num(m) + 92 > room)
		m--;
	return m;
}

static int
check_values(const struct tp_qp *qp, const struct droce_qp_attr *a, int mask)
{
	const struct tp_dev *dev = qp->dev;

	if ((mask & DROCE_QP_PKEY_INDEX) && a->pkey_index >= dev->npkeys)
		return -EINVAL;
	if ((mask & DROCE_QP_PORT) && a->port_num != 1)
		return -EINVAL;
	if ((mask & DROCE_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~(unsigned int)QP_ACCESS_ALLOWED))
		return -EINVAL;
	if ((mask & DROCE_QP_PATH_MTU) &&
	    (a->path_mtu < DROCE_MTU_256 || a->path_mtu > active_mtu(dev)))
		return -EINVAL;
	if ((mask & DROCE_QP_DEST_QPN) && a->dest_qp_num > ROCE_PSN_MASK)
		return -EINVAL;
	if ((mask & DROCE_QP_RQ_PSN) && a->rq_psn > ROCE_PSN_MASK)
		return -EINVAL;
	if ((mask & DROCE_QP_SQ_PSN) && a->sq_psn > ROCE_PSN_MASK)
		return -EINVAL;
	if ((mask & DROCE_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > DROCE_MAX_INIT_RD_ATOMIC)
		return -EINVAL;
	if ((mask & DROCE_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > DROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & DROCE_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & DROCE_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & DROCE_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & DROCE_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if (mask & DROCE_QP_AV) {
		/* RoCE addresses are GIDs: a GRH is mandatory (is_global). */
		uint8_t sgid[16];

		if (!a->ah_attr.is_global ||
		    tp_dev_query_gid(dev, a->ah_attr.grh.sgid_index, sgid) != 0)
			return -EINVAL;
		/* uverbs modify_qp: the AV's port must be valid (rdma_is_port_valid),
		 * and port 0 is not one on a CA */
		if (a->ah_attr.port_num != 1)
			return -EINVAL;
	}
	if (mask & (DROCE_QP_ALT_PATH | DROCE_QP_RATE_LIMIT))
		return -EINVAL;		/* no alternate paths, no rate limits yet */
	return 0;
}

/* ---- address vectors -------------------------------------------------------- */

int
tp_av_from_attr(struct tp_engine *eng, const struct droce_ah_attr *ah, struct tp_av *av)
{
	const struct tp_dev *dev = eng->dev;
	const struct droce_global_route *g = &ah->grh;

	/* uverbs create_ah and modify_qp: rdma_is_port_valid(port_num) */
	if (!ah->is_global || ah->port_num != 1)
		return -EINVAL;
	memset(av, 0, sizeof(*av));
	if (tp_dev_query_gid(dev, g->sgid_index, av->sgid) != 0)
		return -EINVAL;
	memcpy(av->dgid, g->dgid.raw, 16);
	av->ip_version = roce_gid_is_ipv4(av->dgid) ? 4 : 6;
	if ((av->ip_version == 4) != roce_gid_is_ipv4(av->sgid))
		return -EINVAL;		/* source and destination families differ */
	av->hop_limit = g->hop_limit != 0 ? g->hop_limit : 64;
	av->traffic_class = g->traffic_class;
	av->flow_label = g->flow_label & 0xfffff;
	if (roce_gid_is_mcast(av->dgid)) {
		/* a group has no neighbour to resolve: its Ethernet group
		 * address is derived from it (RFC 1112 6.4, RFC 2464 7) */
		av->mcast = 1;
		roce_mcast_mac(av->dgid, av->dmac);
		return 0;
	}
	return tp_net_resolve(eng, av);
}

/* ---- state changes ------------------------------------------------------------ */

static void
reset_transport_state(struct tp_qp *qp)
{
	tp_timer_disarm_retrans(qp);
	tp_timer_disarm_rnr(qp);
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	memset(&qp->resp, 0, sizeof(qp->resp));
	qp->sq.head = qp->sq.tail = 0;
	qp->rq.head = qp->rq.tail = 0;
}

static void
apply_attrs(struct tp_qp *qp, const struct droce_qp_attr *a, int mask,
	    const struct tp_av *av)
{
	struct droce_qp_attr *cur = &qp->attr;

	if (mask & DROCE_QP_ACCESS_FLAGS)
		cur->qp_access_flags = a->qp_access_flags;
	if (mask & DROCE_QP_PKEY_INDEX) {
		cur->pkey_index = a->pkey_index;
		qp->pkey = qp->dev->pkeys[a->pkey_index];
	}
	if (mask & DROCE_QP_PORT)
		cur->port_num = a->port_num;
	if (mask & DROCE_QP_QKEY)
		cur->qkey = a->qkey;
	if (mask & DROCE_QP_AV) {
		cur->ah_attr = a->ah_attr;
		qp->av = *av;
	}
	if (mask & DROCE_QP_PATH_MTU) {
		cur->path_mtu = a->path_mtu;
		qp->mtu = (uint32_t)droce_mtu_to_num(a->path_mtu);
	}
	if (mask & DROCE_QP_TIMEOUT) {
		cur->timeout = a->timeout;
		qp->retrans_tsc = tp_timer_retrans_tsc(qp->dev, a->timeout);
	}
	if (mask & DROCE_QP_RETRY_CNT) {
		cur->retry_cnt = a->retry_cnt;
		qp->comp.retry_left = a->retry_cnt;
		qp->comp.gap_rearmed = false;
	}
	if (mask & DROCE_QP_RNR_RETRY) {
		cur->rnr_retry = a->rnr_retry;
		qp->comp.rnr_retry_left = a->rnr_retry;
	}
	if (mask & DROCE_QP_RQ_PSN) {
		cur->rq_psn = a->rq_psn;
		qp->resp.psn = a->rq_psn;
		tp_sr_start_resp(qp);
	}
	if (mask & DROCE_QP_SQ_PSN) {
		cur->sq_psn = a->sq_psn;
		qp->req.psn = a->sq_psn;
		qp->req.psn_hi = a->sq_psn;
		qp->req.window = TP_MAX_INFLIGHT_PKTS;
		qp->comp.psn = a->sq_psn;
		tp_cc_qp_start(qp);
		tp_sr_start_req(qp);
	}
	if (mask & DROCE_QP_MAX_QP_RD_ATOMIC)
		cur->max_rd_atomic = a->max_rd_atomic;
	if (mask & DROCE_QP_MAX_DEST_RD_ATOMIC)
		cur->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & DROCE_QP_MIN_RNR_TIMER)
		cur->min_rnr_timer = a->min_rnr_timer;
	if (mask & DROCE_QP_DEST_QPN)
		cur->dest_qp_num = a->dest_qp_num;
	if (mask & DROCE_QP_PATH_MIG_STATE)
		cur->path_mig_state = a->path_mig_state;
	if (mask & DROCE_QP_EN_SQD_ASYNC_NOTIFY)
		cur->en_sqd_async_notify = a->en_sqd_async_notify;
	if ((mask & (DROCE_QP_AV | DROCE_QP_DEST_QPN)) && qp->pub.qp_type != DROCE_QPT_UD)
		qp->udp_sport = tp_cc_udp_sport(qp, cur->dest_qp_num, qp->av.flow_label);
	qp->tx_tmpl_ok = false;		/* addresses may have changed */
	qp->rx_tmpl_ok = false;
}

static void
set_state(struct tp_qp *qp, enum droce_qp_state s)
{
	qp->pub.state = s;
	qp->attr.qp_state = s;
	qp->attr.cur_qp_state = s;
}

/*
 * Dedicated transport lcore: modify_qp runs here while the application
 * waits for it, so this may write what its lcore owns: the state its posts
 * are checked against and, on RESET (the work queues were emptied, every
 * WQE posted before the command taken), the heads it publishes.
 */
static void
lc_modified(struct tp_qp *qp, enum droce_qp_state next)
{
	struct tp_lc_qp *lc = qp->lc;

	lc->state = next;
	if (next == DROCE_QPS_RESET) {
		lc->s_head = lc->r_head = 0;
		__atomic_store_n(&lc->s_tail, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&lc->r_tail, 0, __ATOMIC_RELEASE);
	}
}

int
tp_qp_modify(struct tp_qp *qp, const struct droce_qp_attr *attr, int mask)
{
	enum droce_qp_state cur = qp->pub.state;
	enum droce_qp_state next = (mask & DROCE_QP_STATE) ? attr->qp_state : cur;
	struct tp_av av;
	int rc;

	if ((mask & DROCE_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return -EINVAL;
	if (!transition_ok(cur, next, qp->pub.qp_type, mask))
		return -EINVAL;
	rc = check_values(qp, attr, mask);
	if (rc != 0)
		return rc;
	if (mask & DROCE_QP_AV) {
		rc = tp_av_from_attr(qp->eng, &attr->ah_attr, &av);
		if (rc != 0)
			return rc;
	}

	if (next == DROCE_QPS_RESET) {
		reset_transport_state(qp);
		tp_cq_clean(qp->scq, qp->eng, qp->pub.qp_num);
		if (qp->rcq != qp->scq)
			tp_cq_clean(qp->rcq, qp->eng, qp->pub.qp_num);
		set_state(qp, next);
	} else if (next == DROCE_QPS_ERR) {
		tp_qp_to_error(qp);
	} else {
		apply_attrs(qp, attr, mask, &av);
		set_state(qp, next);
	}
	if (qp->lc != NULL)
		lc_modified(qp, next);
	tp_event_modified(qp, cur, attr, mask);	/* COMM_EST, SQ_DRAINED */
	/* a new state may let the requester go on (RTS, SQD -> RTS) */
	tp_qp_ready(qp);
	return 0;
}

int
tp_qp_query(struct tp_qp *qp, struct droce_qp_attr *attr,
	    struct droce_qp_init_attr *init)
{
	*attr = qp->attr;
	attr->cap = qp->cap;
	attr->sq_draining = 0;
	if (init != NULL) {
		memset(init, 0, sizeof(*init));
		init->qp_context = qp->pub.qp_context;
		init->send_cq = &qp->scq->pub;
		init->recv_cq = &qp->rcq->pub;
		init->srq = qp->srq != NULL ? &qp->srq->pub : NULL;
		init->cap = qp->cap;
		init->qp_type = qp->pub.qp_type;
		init->sq_sig_all = qp->sq_sig_all;
	}
	return 0;
}

/* ---- the error state ----------------------------------------------------------- */

static void
flush_send_queue(struct tp_qp *qp)
{
	struct droce_wc wc;

	while (qp->sq.tail != qp->sq.head) {
		struct tp_send_wqe *w = &qp->sq.wqe[qp->sq.tail & qp->sq.mask];

		memset(&wc, 0, sizeof(wc));
		wc.wr_id = w->wr_id;
		wc.qp_num = qp->pub.qp_num;
		wc.status = w->state == TP_WQE_DONE ? w->status : DROCE_WC_WR_FLUSH_ERR;
		/* A flushed or failed WQE always completes, signaled or not
		 * (IBTA 10.8.3.2 / o10-...: error completions are never suppressed);
		 * a successful unsignaled one does not. */
		if (wc.status != DROCE_WC_SUCCESS || qp->sq_sig_all ||
		    (w->send_flags & DROCE_SEND_SIGNALED))
			tp_cq_push(qp->eng, qp->scq, &wc);
		qp->sq.tail++;
	}
	qp->req.next = qp->sq.tail;
	qp->req.offset = 0;
}

static void
flush_recv_queue(struct tp_qp *qp)
{
	struct droce_wc wc;

	while (qp->rq.tail != qp->rq.head) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = qp->rq.wqe[qp->rq.tail & qp->rq.mask].wr_id;
		wc.status = DROCE_WC_WR_FLUSH_ERR;
		wc.opcode = DROCE_WC_RECV;
		wc.qp_num = qp->pub.qp_num;
		tp_cq_push(qp->eng, qp->rcq, &wc);
		qp->rq.tail++;
	}
}

/* Complete everything outstanding with a flush error (posted later WRs too). */
void
tp_qp_flush(struct tp_qp *qp)
{
	flush_send_queue(qp);
	flush_recv_queue(qp);
}

/*
 * A QP on an SRQ takes no WQE from it in ERR: entering ERR raises
 * LAST_WQE_REACHED (IBTA 10.3.1, 11.6.3.1), after its WQE in progress was
 * flushed, so the application knows the QP's last completion is in the CQ.
 */
void
tp_qp_to_error(struct tp_qp *qp)
{
	bool was_err = qp->pub.state == DROCE_QPS_ERR;

	set_state(qp, DROCE_QPS_ERR);
	tp_timer_disarm_retrans(qp);
	tp_timer_disarm_rnr(qp);
	qp->resp.q_head = qp->resp.q_tail = 0;
	tp_qp_flush(qp);
	if (qp->srq != NULL && !was_err)
		tp_event_qp(qp, DROCE_EVENT_QP_LAST_WQE_REACHED);
}

/* ---- create / destroy ------------------------------------------------------------ */

static uint32_t
ring_size(uint32_t n)
{
	return rte_align32pow2(n < 1 ? 1 : n);
}

/* An SRQ's QPs live on its engine (struct tp_srq): eng must be it. */
static int
check_cap(const struct tp_engine *eng, const struct droce_qp_init_attr *init)
{
	const struct droce_qp_cap *c = &init->cap;

	if (init->qp_type != DROCE_QPT_RC && init->qp_type != DROCE_QPT_UC &&
	    init->qp_type != DROCE_QPT_UD)
		return -EINVAL;
	if (init->srq != NULL && tp_srq_of(init->srq)->eng != eng)
		return -EINVAL;
	if (c->max_send_wr > DROCE_MAX_QP_WR || c->max_recv_wr > DROCE_MAX_QP_WR ||
	    c->max_send_sge > DROCE_MAX_SGE || c->max_recv_sge > DROCE_MAX_SGE ||
	    c->max_inline_data > DROCE_MAX_INLINE_DATA)
		return -EINVAL;
	return 0;
}

/*
 * A free QPN of eng (QPN n belongs to engine n mod N, tp_qpn_engine):
 * engine k reads and writes only its own QPNs' slots, so engines create
 * QPs at the same time without sharing any.
 */
static int
alloc_qpn(struct tp_engine *eng, uint32_t *slot)
{
	struct tp_dev *dev = eng->dev;
	uint32_t next = __atomic_load_n(&dev->next_qp, __ATOMIC_RELAXED);

	for (uint32_t i = 0; i < dev->max_qp; i++) {
		uint32_t s = (next + i) % dev->max_qp;

		if (tp_qpn_engine(dev, TP_QPN_BASE + s) != eng->idx)
			continue;
		if (dev->qps[s] == NULL) {
			*slot = s;
			/* QPNs are reused only after all others were handed out. */
			__atomic_store_n(&dev->next_qp, s + 1, __ATOMIC_RELAXED);
			return 0;
		}
	}
	return -ENOMEM;
}

/* ---- QP memory --------------------------------------------------------------------- */

void
tp_qp_mem_init(struct tp_dev *dev)
{
	struct tp_qp_mem *m = &dev->qp_mem;

	rte_spinlock_init(&m->lock);
	tp_slab_init(&m->qp, sizeof(struct tp_qp));
	for (unsigned int k = 0; k < TP_RING_CLASSES; k++) {
		tp_slab_init(&m->sq[k], sizeof(struct tp_send_wqe) << k);
		tp_slab_init(&m->rq[k], sizeof(struct tp_recv_wqe) << k);
	}
}

void
tp_qp_mem_fini(struct tp_dev *dev)
{
	struct tp_qp_mem *m = &dev->qp_mem;

	tp_slab_fini(&m->qp);
	for (unsigned int k = 0; k < TP_RING_CLASSES; k++) {
		tp_slab_fini(&m->sq[k]);
		tp_slab_fini(&m->rq[k]);
	}
}

_Static_assert(1u << (TP_RING_CLASSES - 1) == DROCE_MAX_QP_WR,
	       "one ring slab per power of two up to DROCE_MAX_QP_WR");

/* the slab class of a ring of mask + 1 (a power of two) WQEs */
static unsigned int
ring_class(uint32_t mask)
{
	return (unsigned int)rte_bsf32(mask + 1);
}

/*
 * The slabs are the device's, and QPs are created and destroyed on their
 * own engines, several at once (tp_qp_call): the lock serialises those
 * control-path calls only; no data path takes it.
 */
static struct tp_qp *
qp_mem_alloc(struct tp_dev *dev, const struct droce_qp_cap *cap)
{
	struct tp_qp_mem *m = &dev->qp_mem;
	uint32_t smask = ring_size(cap->max_send_wr) - 1;
	uint32_t rmask = ring_size(cap->max_recv_wr) - 1;
	struct tp_send_wqe *sq;
	struct tp_recv_wqe *rq;
	struct tp_qp *qp;

	rte_spinlock_lock(&m->lock);
	sq = tp_slab_alloc(&m->sq[ring_class(smask)]);
	rq = tp_slab_alloc(&m->rq[ring_class(rmask)]);
	qp = tp_slab_alloc(&m->qp);
	if (qp == NULL || sq == NULL || rq == NULL) {
		tp_slab_free(&m->qp, qp);
		tp_slab_free(&m->sq[ring_class(smask)], sq);
		tp_slab_free(&m->rq[ring_class(rmask)], rq);
		rte_spinlock_unlock(&m->lock);
		return NULL;
	}
	rte_spinlock_unlock(&m->lock);
	qp->sq.wqe = sq;
	qp->sq.mask = smask;
	qp->rq.wqe = rq;
	qp->rq.mask = rmask;
	return qp;
}

static void
qp_mem_free(struct tp_dev *dev, struct tp_qp *qp)
{
	struct tp_qp_mem *m = &dev->qp_mem;

	rte_spinlock_lock(&m->lock);
	tp_slab_free(&m->sq[ring_class(qp->sq.mask)], qp->sq.wqe);
	tp_slab_free(&m->rq[ring_class(qp->rq.mask)], qp->rq.wqe);
	tp_slab_free(&m->qp, qp);
	rte_spinlock_unlock(&m->lock);
}

int
tp_qp_create(struct tp_engine *eng, uint32_t pd, struct tp_cq *scq,
	     struct tp_cq *rcq, const struct droce_qp_init_attr *init,
	     struct tp_qp **out)
{
	struct tp_dev *dev = eng->dev;
	struct droce_qp_cap cap;
	struct tp_qp *qp;
	uint32_t slot;
	int rc;

	rc = check_cap(eng, init);
	if (rc == 0 && (scq == NULL || rcq == NULL))
		rc = -EINVAL;
	if (rc == 0)
		rc = alloc_qpn(eng, &slot);
	if (rc != 0)
		return rc;
	cap = init->cap;
	if (init->srq != NULL)		/* one RQ slot: the SRQ WQE in use */
		cap.max_recv_wr = cap.max_recv_sge = 0;
	/* at least the SGE area inline (rdma_xclient sends 16 bytes inline
	 * asking for none, which rxe takes) */
	cap.max_inline_data = RTE_MAX(cap.max_inline_data,
				      droce_qp_min_inline(cap.max_send_sge));
	qp = qp_mem_alloc(dev, &cap);
	if (qp == NULL)
		goto nomem;

	qp->dev = dev;
	qp->eng = eng;
	qp->run = eng->mode;	/* fixed while the engine has QPs */
	qp->pd = pd;
	qp->scq = scq;
	qp->rcq = rcq;
	qp->srq = init->srq != NULL ? tp_srq_of(init->srq) : NULL;
	qp->cap = cap;
	qp->sq.max_wr = cap.max_send_wr;
	qp->rq.max_wr = cap.max_recv_wr;
	qp->sq_sig_all = init->sq_sig_all;
	qp->pub.qp_context = init->qp_context;
	qp->pub.qp_type = init->qp_type;
	qp->pub.qp_num = TP_QPN_BASE + slot;
	qp->pub.handle = slot;
	/* UD has no path: its messages may fill the port's active MTU */
	qp->attr.path_mtu = init->qp_type == DROCE_QPT_UD ? active_mtu(dev) :
							    DROCE_MTU_256;
	qp->mtu = (uint32_t)droce_mtu_to_num(qp->attr.path_mtu);
	qp->attr.port_num = 1;
	qp->pkey = dev->pkeys[0];
	tp_cc_qp_init(qp);
	set_state(qp, DROCE_QPS_RESET);
	if (tp_dev_dedicated(dev) && tp_lc_qp_init(qp) != 0)
		goto nomem;

	dev->qps[slot] = qp;
	tp_engine_add_qp(qp->eng, qp);
	__atomic_fetch_add(&scq->users, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&rcq->users, 1, __ATOMIC_RELAXED);
	if (qp->srq != NULL)
		__atomic_fetch_add(&qp->srq->users, 1, __ATOMIC_RELAXED);
	*out = qp;
	return 0;
nomem:
	if (qp != NULL)
		qp_mem_free(dev, qp);
	return -ENOMEM;
}

int
tp_qp_destroy(struct tp_qp *qp)
{
	struct tp_dev *dev = qp->dev;

	/* Packets for this QPN arriving later are dropped as not-for-us. */
	if (qp == dev->gsi)
		__atomic_store_n(&dev->gsi, NULL, __ATOMIC_RELEASE);
	else
		dev->qps[qp->pub.handle] = NULL;
	tp_sched_forget(qp);
	/* its type-2 windows die with it (prot_mw_invalidate_qp), so a QP
	 * that is given this QPN later inherits none */
	prot_mw_invalidate_qp(dev->prot, qp->pub.qp_num);
	tp_mcast_forget_qp(qp);
	tp_engine_remove_qp(qp->eng, qp);
	__atomic_fetch_sub(&qp->scq->users, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&qp->rcq->users, 1, __ATOMIC_RELAXED);
	if (qp->srq != NULL)
		__atomic_fetch_sub(&qp->srq->users, 1, __ATOMIC_RELAXED);
	tp_lc_qp_fini(qp);
	qp_mem_free(dev, qp);
	return 0;
}

static int
make_gsi(void *arg)
{
	struct tp_qp *qp = arg;
	struct tp_dev *dev = qp->dev;

	if (dev->gsi != NULL)
		return -EBUSY;
	dev->qps[qp->pub.handle] = NULL;
	qp->pub.qp_num = TP_GSI_QPN;
	__atomic_store_n(&dev->gsi, qp, __ATOMIC_RELEASE);
	return 0;
}

int
tp_qp_make_gsi(struct tp_qp *qp)
{
	/* QPN 1 must be on the engine that tp_qpn_engine gives it */
	if (qp->pub.qp_type != DROCE_QPT_UD || qp->pub.state != DROCE_QPS_RESET ||
	    tp_qpn_engine(qp->dev, TP_GSI_QPN) != qp->eng->idx)
		return -EINVAL;
	return tp_qp_call(qp, make_gsi, qp);
}

struct droce_qp *
tp_qp_pub(struct tp_qp *qp)
{
	return &qp->pub;
}

struct droce_qp_cap
tp_qp_cap(const struct tp_qp *qp)
{
	return qp->cap;
}

struct tp_qp *
tp_qp_from_pub(struct droce_qp *qp)
{
	return tp_qp_of(qp);
}
