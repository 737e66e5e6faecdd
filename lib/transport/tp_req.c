/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requester: turns send WQEs into request packets (IBTA 9.5-9.7).
 *
 * Messages are cut at the path MTU into FIRST/MIDDLE/LAST (or ONLY)
 * packets, one PSN each; an RDMA READ request takes one packet but
 * reserves one PSN per response packet; atomics take one.  Nothing is kept
 * for retransmission: go-back-N (tp_req_rewind) rebuilds packets from the
 * WQEs, starting at the oldest unacknowledged PSN, so the application's
 * buffers are read again (they are the application's until completion).
 */
#include <string.h>

#include <rte_byteorder.h>

#include "tp_private.h"

/* ---- payload --------------------------------------------------------------- */

/*
 * The L_Key translation of the last single SGE checked whole, kept for
 * the rest of one tp_req_run call: the later packets of its WQE, and
 * later WQEs whose one SGE lies inside the range checked (same L_Key:
 * the same buffer sent again), are copied without another lookup.  The
 * QP's PD and the access asked for (local read) are the same for every
 * WQE of the call, and no local operation between them revokes an L_Key
 * (LOCAL_INV applies to type-2 windows, which have R_Keys only).
 *
 * Revocation stays exact: the translation lives in tp_req_run's frame
 * only, and tp_req_run runs inside one tp_progress call, which reports the
 * quiescent state to the protection tables (prot_reader_quiescent) only
 * after it returns.  A region deregistered or a window invalidated
 * meanwhile keeps its memory until that report (QSBR grace period,
 * lib/protection/README.md), and the next call checks the L_Key again: no
 * byte is read after the grace period, as with a check per packet.
 */
struct gather_cache {
	uint32_t lkey;
	uint64_t addr;			/* [addr, addr + len) was checked... */
	uint64_t len;			/* ...0: nothing cached */
	const uint8_t *host;		/* ...and is here */
};

/* Does the cached range hold bytes [off, off + len) of SGE s? */
static bool
gather_cached(const struct gather_cache *gc, const struct droce_sge *s, uint32_t off,
	      uint32_t len)
{
	/* (off + len <= s->length: no sum below can wrap) */
	return gc->len != 0 && s->lkey == gc->lkey && s->addr >= gc->addr &&
	       s->addr - gc->addr <= gc->len &&
	       (s->addr - gc->addr) + off + len <= gc->len;
}

/* L_Key check of the whole SGE s; on success it is the cached range. */
static bool
gather_check(struct tp_qp *qp, const struct droce_sge *s, struct gather_cache *gc)
{
	void *mem;

	if (tp_prot_local(qp->eng, qp->dev->prot, s->lkey, qp->pd, s->addr,
			  s->length, false, &mem) != PROT_OK)
		return false;
	gc->lkey = s->lkey;
	gc->addr = s->addr;
	gc->len = s->length;
	gc->host = mem;
	return true;
}

/* The WQE's data at message offset off: inline bytes or its SGEs. */
static bool
gather(struct tp_qp *qp, const struct tp_send_wqe *w, uint32_t off,
       uint32_t len, uint8_t *dst, struct gather_cache *gc)
{
	const struct droce_sge *s = &w->sge[0];

	if (w->is_inline) {
		memcpy(dst, w->inline_data + off, len);
		return true;
	}
	if (w->num_sge != 1 || len == 0 || off + len > s->length)
		return tp_sge_copy(qp, w->sge, w->num_sge, off, dst, len, false);
	if (!gather_cached(gc, s, off, len)) {
		/*
		 * The whole SGE at once: if that passes, every chunk of it
		 * would.  If not, a one-packet message fails here exactly as
		 * its one chunk's check would; a longer one takes the
		 * per-chunk path, which fails at the same packet as before (a
		 * range that leaves the region part way sends the packets
		 * before that point first).
		 */
		if (!gather_check(qp, s, gc))
			return w->npkts > 1 &&
			       tp_sge_copy(qp, w->sge, w->num_sge, off, dst, len, false);
	}
	memcpy(dst, gc->host + (s->addr - gc->addr) + off, len);
	return true;
}

/*
 * Zero copy (tp_net_zc): where bytes [off, off + len) of the WQE's data
 * are in registered memory, when one SGE holds them all; NULL otherwise
 * (inline data, several SGEs, a key that fails its check: the copy path
 * then sends them or reports the failure exactly as it would have).
 */
static const uint8_t *
zc_source(struct tp_qp *qp, const struct tp_send_wqe *w, uint32_t off,
	  uint32_t len, struct gather_cache *gc)
{
	const struct droce_sge *s = &w->sge[0];

	if (w->is_inline || w->num_sge != 1 || off + len > s->length)
		return NULL;
	if (!gather_cached(gc, s, off, len) && !gather_check(qp, s, gc))
		return NULL;
	return gc->host + (s->addr - gc->addr) + off;
}

/* ---- opcodes ------------------------------------------------------------------ */

/* The opcode of the packet at message offset off (RC base; UC adds 0x20). */
static uint8_t
send_write_opcode(uint32_t mask, bool first, bool last)
{
	bool imm = mask & TP_WR_IMM;
	bool inv = mask & TP_WR_INV;

	if (mask & TP_WR_WRITE) {
		if (first && last)
			return imm ? ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
				     ROCE_OP_RDMA_WRITE_ONLY;
		if (first)
			return ROCE_OP_RDMA_WRITE_FIRST;
		if (last)
			return imm ? ROCE_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE :
				     ROCE_OP_RDMA_WRITE_LAST;
		return ROCE_OP_RDMA_WRITE_MIDDLE;
	}
	if (first && last)
		return inv ? ROCE_OP_SEND_ONLY_WITH_INVALIDATE :
		       imm ? ROCE_OP_SEND_ONLY_WITH_IMMEDIATE : ROCE_OP_SEND_ONLY;
	if (first)
		return ROCE_OP_SEND_FIRST;
	if (last)
		return inv ? ROCE_OP_SEND_LAST_WITH_INVALIDATE :
		       imm ? ROCE_OP_SEND_LAST_WITH_IMMEDIATE : ROCE_OP_SEND_LAST;
	return ROCE_OP_SEND_MIDDLE;
}

/* ---- completion of requester-side failures and local operations ------------- */

static void
fail_wqe(struct tp_qp *qp, struct tp_send_wqe *w, enum droce_wc_status st)
{
	w->status = st;
	w->state = TP_WQE_DONE;
	qp->req.next++;
	qp->req.offset = 0;
	tp_comp_retire(qp);
	tp_qp_to_error(qp);
}

/* LOCAL_INV and BIND_MW run in the requester, in WQE order. */
static void
do_local_op(struct tp_qp *qp, struct tp_send_wqe *w)
{
	struct prot_tables *t = qp->dev->prot;
	int rc;

	if (w->opcode == DROCE_WR_LOCAL_INV)
		rc = prot_local_invalidate(t, w->imm, qp->pd);
	else if (w->mw_type == DROCE_MW_TYPE_1)
		rc = prot_mw_bind_type1_key(t, w->mw_index, w->bind_rkey, w->bind_mr_key,
					    w->bind_addr, w->bind_length, w->bind_access,
					    qp->pd);
	else
		rc = prot_mw_bind_type2(t, w->mw_index, w->bind_rkey, w->bind_mr_key,
					w->bind_addr, w->bind_length, w->bind_access,
					qp->pd, qp->pub.qp_num);
	if (rc != 0) {
		fail_wqe(qp, w, w->opcode == DROCE_WR_LOCAL_INV ?
			 DROCE_WC_LOC_QP_OP_ERR : DROCE_WC_MW_BIND_ERR);
		return;
	}
	w->first_psn = qp->req.psn;
	w->npkts = 0;
	w->state = TP_WQE_DONE;
	qp->req.next++;
	tp_comp_retire(qp);
}

/* ---- building one packet ------------------------------------------------------ */

/* UD: the WQE's address handle, NULL if it names none of the QP's PD. */
static struct tp_av *
ud_av(struct tp_qp *qp, const struct tp_send_wqe *w)
{
	struct tp_ah *ah = tp_ah_get(qp->dev, w->ah, qp->pd);

	return ah != NULL ? &ah->av : NULL;
}

static void
count_sent(struct tp_qp *qp, uint32_t psn, uint32_t npsn)
{
	uint32_t end = roce_psn_add(psn, npsn);

	/* selective repeat: the order of transmissions (RACK in tp_req_sr_sack) */
	if (unlikely(qp->sr.on))
		qp->sr.xseq[psn & (TP_SR_WINDOW - 1)] = ++qp->sr.tx_seq;
	/* a PSN before the highest one sent so far is a retransmission */
	if (roce_psn_before(psn, qp->req.psn_hi))
		tp_count(qp->eng, TP_CNT_RETRANSMITTED_PKTS);
	if (roce_psn_after(end, qp->req.psn_hi))
		qp->req.psn_hi = end;
	if (qp->pub.qp_type == DROCE_QPT_RC && !tp_timer_retrans_armed(qp))
		tp_timer_arm_retrans(qp);
}

/* One SEND/WRITE packet at req.offset.  Returns false if nothing was sent. */
static bool
send_data_packet(struct tp_qp *qp, struct tp_send_wqe *w, struct gather_cache *gc,
		 struct tp_tx_mbufs *mb)
{
	uint32_t left = w->length - qp->req.offset;
	bool first = qp->req.offset == 0;
	bool last = left <= qp->mtu;
	uint32_t plen = last ? left : qp->mtu;
	uint32_t mask = w->wr_mask;
	uint8_t opcode = send_write_opcode(mask, first, last);
	struct rte_mbuf *m;
	struct roce_pkt p;
	struct tp_av *av = &qp->av;
	const uint8_t *src;
	uint8_t *payload;

	if (qp->pub.qp_type == DROCE_QPT_UC) {
		opcode |= ROCE_OP_UC;
	} else if (qp->pub.qp_type == DROCE_QPT_UD) {
		opcode = (mask & TP_WR_IMM) ? ROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE :
					      ROCE_OP_UD_SEND_ONLY;
		av = ud_av(qp, w);
		if (unlikely(av == NULL)) {
			fail_wqe(qp, w, DROCE_WC_LOC_QP_OP_ERR);
			return false;
		}
	}

	tp_net_fill_pkt(qp, av, &p, opcode, qp->req.psn);
	p.payload_len = plen;
	qp->req.pkts_since_ackreq++;
	p.ackreq = last || qp->req.pkts_since_ackreq >= TP_ACKREQ_EVERY;
	if (p.ackreq)
		qp->req.pkts_since_ackreq = 0;
	p.se = last && (w->send_flags & DROCE_SEND_SOLICITED) != 0;
	p.reth.va = w->remote_addr;
	p.reth.rkey = w->rkey;
	p.reth.len = w->length;
	p.imm = rte_be_to_cpu_32(w->imm);
	p.ieth_rkey = w->imm;
	if (qp->pub.qp_type == DROCE_QPT_UD) {
		/* to a group: the permissive DQPN, whatever the WR named
		 * (IBTA 10.5: every attached QP takes the packet) */
		p.dest_qpn = av->mcast ? ROCE_MCAST_QPN : w->remote_qpn;
		p.deth.qkey = w->remote_qkey;
		p.deth.src_qpn = qp->pub.qp_num;
		p.udp_sport = roce_udp_sport(qp->pub.qp_num, w->remote_qpn);
	}

	src = tp_net_zc(qp, plen) ? zc_source(qp, w, qp->req.offset, plen, gc) : NULL;
	if (src != NULL) {
		m = tp_net_alloc_zc(qp, av, &p, mb, src, w->sge[0].lkey);
		if (m == NULL)
			return false;
	} else {
		m = tp_net_alloc(qp, av, &p, mb, &payload);
		if (m == NULL)
			return false;
		if (!gather(qp, w, qp->req.offset, plen, payload, gc)) {
			rte_pktmbuf_free(m);
			fail_wqe(qp, w, DROCE_WC_LOC_PROT_ERR);
			return false;
		}
	}
	count_sent(qp, qp->req.psn, 1);
	tp_net_finish(qp, m, &p);
	if (unlikely(qp->cc.paced))
		tp_cc_sent(qp, p.pkt_len);
	if (mask & TP_WR_WRITE)
		tp_count(qp->eng, TP_CNT_RDMA_SENDS);

	qp->req.psn = roce_psn_add(qp->req.psn, 1);
	qp->req.offset += plen;
	if (last) {
		qp->req.offset = 0;
		qp->req.next++;
		/* UC and UD are done once sent: nothing will acknowledge them */
		w->state = qp->pub.qp_type == DROCE_QPT_RC ? TP_WQE_SENT : TP_WQE_DONE;
		if (w->state == TP_WQE_DONE)
			tp_comp_retire(qp);
	}
	return true;
}

/*
 * ATOMIC WRITE (RETH and its 8 bytes) or FLUSH (FETH and RETH) request
 * headers (IBTA 1.5 annex A19).
 */
static void
fill_placement_pkt(struct tp_qp *qp, const struct tp_send_wqe *w, struct roce_pkt *p)
{
	bool flush = w->wr_mask & TP_WR_FLUSH;

	tp_net_fill_pkt(qp, &qp->av, p, flush ? ROCE_OP_FLUSH : ROCE_OP_ATOMIC_WRITE,
			qp->req.psn);
	p->reth.va = w->remote_addr;
	p->reth.rkey = w->rkey;
	p->reth.len = flush ? w->flush_len : 8;
	p->payload_len = flush ? 0 : 8;
	p->feth.plt = w->flush_type;
	p->feth.sel = w->flush_level;
}

/*
 * An RDMA READ request (for the part not yet read), an atomic or a
 * memory-placement request.
 */
static bool
send_rd_atomic_packet(struct tp_qp *qp, struct tp_send_wqe *w, struct tp_tx_mbufs *mb)
{
	struct gather_cache gc = { .len = 0 };
	struct rte_mbuf *m;
	struct roce_pkt p;
	uint8_t *payload;
	uint32_t npsn = 1;

	if (w->wr_mask & TP_WR_READ) {
		tp_net_fill_pkt(qp, &qp->av, &p, ROCE_OP_RDMA_READ_REQUEST, qp->req.psn);
		p.reth.va = w->remote_addr + qp->req.offset;
		p.reth.rkey = w->rkey;
		p.reth.len = w->length - qp->req.offset;
		npsn = tp_wqe_npkts(qp, w) - qp->req.offset / qp->mtu;
	} else if (w->wr_mask & TP_WR_PLACEMENT) {
		fill_placement_pkt(qp, w, &p);
	} else {
		tp_net_fill_pkt(qp, &qp->av, &p,
				w->opcode == DROCE_WR_ATOMIC_CMP_AND_SWP ?
				ROCE_OP_COMPARE_SWAP : ROCE_OP_FETCH_ADD, qp->req.psn);
		p.atmeth.va = w->remote_addr;
		p.atmeth.rkey = w->rkey;
		if (w->opcode == DROCE_WR_ATOMIC_CMP_AND_SWP) {
			p.atmeth.comp = w->compare_add;
			p.atmeth.swap = w->swap;
		} else {
			p.atmeth.swap = w->compare_add;	/* the add operand */
		}
	}
	p.ackreq = 1;
	m = tp_net_alloc(qp, &qp->av, &p, mb, &payload);
	if (m == NULL)
		return false;
	if ((w->wr_mask & TP_WR_ATOMIC_WRITE) && !gather(qp, w, 0, 8, payload, &gc)) {
		rte_pktmbuf_free(m);
		fail_wqe(qp, w, DROCE_WC_LOC_PROT_ERR);
		return false;
	}
	count_sent(qp, qp->req.psn, npsn);
	tp_net_finish(qp, m, &p);
	if (unlikely(qp->cc.paced))
		tp_cc_sent(qp, p.pkt_len);
	tp_count(qp->eng, TP_CNT_RDMA_SENDS);
	qp->req.psn = roce_psn_add(qp->req.psn, npsn);
	qp->req.offset = 0;
	qp->req.next++;
	if (!w->rd_counted) {
		w->rd_counted = 1;
		qp->req.rd_atomic++;
	}
	w->state = TP_WQE_SENT;
	return true;
}

/* ---- the requester loop ---------------------------------------------------------- */

/* May this WQE start now?  (fences, initiator depth, PSN window) */
/* READs/atomics outstanding at once (max_rd_atomic, at least one). */
static uint32_t
initiator_depth(const struct tp_qp *qp)
{
	return RTE_MAX(qp->attr.max_rd_atomic, 1);
}

static bool
may_start(struct tp_qp *qp, const struct tp_send_wqe *w)
{
	/* FENCE: wait for all earlier READ/ATOMIC WQEs (IBTA 10.8.3.3) */
	if ((w->send_flags & DROCE_SEND_FENCE) && qp->req.rd_atomic > 0)
		return false;
	if ((w->wr_mask & TP_WR_RD_ATOMIC) && qp->req.rd_atomic >= initiator_depth(qp))
		return false;
	return true;
}

/*
 * Packets allowed in flight: the window, and with selective repeat at most
 * the BDP cap (sr_bdp_bytes, never beyond the responder's window: every
 * packet in flight has its slot there, IRN's BDP-FC).
 */
static inline uint32_t
req_window(const struct tp_qp *qp)
{
	if (unlikely(qp->sr.on))
		return RTE_MIN(qp->req.window, qp->sr.cap_pkts);
	return qp->req.window;
}

/*
 * The most packets this burst can still build (mbufs for them are taken
 * in one call): its budget, the room in the PSN window (RC), and what the
 * send queue holds: what is left of w, and one at least for each later
 * WQE (a local operation needs none: its mbuf goes back unused).  From a
 * READ/atomic WQE on, no more than the initiator depth leaves room for
 * (may_start stops there; the WQEs after it are counted as READs/atomics
 * too, an underestimate that only means another pool call if they are not).
 */
static unsigned int
burst_bound(const struct tp_qp *qp, const struct tp_send_wqe *w, unsigned int budget)
{
	uint32_t left = (w->wr_mask & TP_WR_RD_ATOMIC) ? 1 :
			qp->req.offset == 0 ? w->npkts :
			w->npkts - qp->req.offset / qp->mtu;
	uint32_t n = RTE_MIN(qp->sq.head - qp->req.next - 1 + left, budget);

	/* (w is not counted yet: it is counted once its request is sent) */
	if ((w->wr_mask & TP_WR_RD_ATOMIC) && initiator_depth(qp) > qp->req.rd_atomic)
		n = RTE_MIN(n, initiator_depth(qp) - qp->req.rd_atomic);
	if (qp->pub.qp_type == DROCE_QPT_RC)
		n = RTE_MIN(n, req_window(qp) -
			       (uint32_t)roce_psn_diff(qp->req.psn, qp->comp.psn));
	return n;
}

/*
 * Up to a burst of request packets, in WQE order, from the mbufs in mb.
 * True when the QP has more to send right now (the burst is spent, or a
 * packet could not be built: transmit backpressure or no mbuf), so its
 * engine visits it again next round; false when it waits for something
 * else (a response, the RNR timer, a post).
 */
static bool
req_burst(struct tp_qp *qp, struct tp_tx_mbufs *mb)
{
	unsigned int budget = TP_REQ_BURST;
	struct gather_cache gc = { .len = 0 };

	while (budget > 0 && qp->req.next != qp->sq.head && tp_qp_can_send(qp)) {
		struct tp_send_wqe *w = &qp->sq.wqe[qp->req.next & qp->sq.mask];
		uint32_t mask = w->wr_mask;
		bool sent;

		if (w->state == TP_WQE_DONE) {
			/* finished while waiting to be sent again after a
			 * rewind (a late response completed it): skip it */
			qp->req.next++;
			qp->req.offset = 0;
			qp->req.psn = roce_psn_add(w->first_psn, w->npkts);
			/*
			 * The completer retires only up to req.next, so it
			 * could not retire this one; if it was the last
			 * outstanding, no response will come to do it later.
			 */
			tp_comp_retire(qp);
			continue;
		}
		if (qp->req.offset == 0 && w->state != TP_WQE_SENDING) {
			/* draining: what was started is finished, nothing new */
			if (qp->pub.state == DROCE_QPS_SQD && !w->started)
				return false;
			if (!may_start(qp, w))
				return false;
			if (mask & TP_WR_LOCAL) {
				do_local_op(qp, w);
				continue;
			}
			w->first_psn = qp->req.psn;
			w->npkts = tp_wqe_npkts(qp, w);
			w->state = TP_WQE_SENDING;
			w->started = 1;
		}
		if (qp->pub.qp_type == DROCE_QPT_RC &&
		    roce_psn_diff(qp->req.psn, qp->comp.psn) >= (int32_t)req_window(qp))
			return false;
		/* the QP's congestion control grants a rate: not before its time */
		if (unlikely(qp->cc.paced) && !tp_cc_may_send(qp))
			return false;
		if (mb->next == mb->n)
			tp_net_mbufs_get(qp->dev, mb, burst_bound(qp, w, budget));
		sent = (mask & TP_WR_RD_ATOMIC) ? send_rd_atomic_packet(qp, w, mb) :
						  send_data_packet(qp, w, &gc, mb);
		if (!sent)
			return true;
		budget--;
	}
	return budget == 0 && qp->req.next != qp->sq.head && tp_qp_can_send(qp);
}

/* True when the QP has more to send right now (req_burst). */
bool
tp_req_run(struct tp_qp *qp)
{
	struct tp_tx_mbufs mb = { .n = 0 };
	bool more;

	if (!tp_qp_can_send(qp) || qp->req.wait_rnr)
		return false;
	more = req_burst(qp, &mb);
	tp_net_mbufs_put(&mb);
	return more;
}

/*
 * Go-back-N (IBTA 9.7.5.1.x, rxe's req_retry): resume at the oldest
 * unacknowledged PSN.  The WQE holding it restarts mid-message (SEND and
 * WRITE continue with MIDDLE/LAST; a READ asks again for the part not yet
 * received); every later WQE is sent again from its start.
 */
void
tp_req_rewind(struct tp_qp *qp)
{
	uint32_t i;
	bool first = true;

	qp->req.next = qp->sq.tail;
	qp->req.offset = 0;
	qp->req.psn = qp->comp.psn;
	qp->req.pkts_since_ackreq = 0;
	for (i = qp->sq.tail; i != qp->sq.head; i++) {
		struct tp_send_wqe *w = &qp->sq.wqe[i & qp->sq.mask];

		if (w->state == TP_WQE_DONE) {
			if (first)
				qp->req.next = i + 1;
			continue;
		}
		if (w->state == TP_WQE_POSTED)
			break;
		/* it will be counted again when its request is sent again */
		tp_req_uncount(qp, w);
		if (first && !(w->wr_mask & TP_WR_LOCAL)) {
			int32_t done = roce_psn_diff(qp->comp.psn, w->first_psn);

			/* keep the WQE's PSNs; resume inside it */
			if (done > 0 && (uint32_t)done < w->npkts &&
			    !(w->wr_mask & TP_WR_ATOMIC)) {
				qp->req.offset = (uint32_t)done * qp->mtu;
				qp->req.psn = qp->comp.psn;
				w->state = TP_WQE_SENDING;
			} else {
				qp->req.psn = w->first_psn;
				w->state = TP_WQE_POSTED;
			}
			first = false;
			continue;
		}
		w->state = TP_WQE_POSTED;
		first = false;
	}
	/* WQEs at the tail already DONE were skipped above (req.next moved
	 * past them): retire them now, nothing else may come to do it */
	tp_comp_retire(qp);
}

/* ---- selective repeat (lib/transport README) ------------------------------------ */

/* The WQE whose PSNs hold psn, among those sent and not completed. */
static struct tp_send_wqe *
wqe_of_psn(struct tp_qp *qp, uint32_t psn, uint32_t *at)
{
	for (uint32_t i = qp->sq.tail; i != qp->sq.head; i++) {
		struct tp_send_wqe *w = &qp->sq.wqe[i & qp->sq.mask];

		if (w->state == TP_WQE_POSTED)
			break;
		if (w->state == TP_WQE_DONE || (w->wr_mask & TP_WR_LOCAL))
			continue;
		if (!roce_psn_before(psn, w->first_psn) &&
		    roce_psn_diff(psn, w->first_psn) < (int32_t)w->npkts) {
			*at = i;
			return w;
		}
	}
	return NULL;
}

/*
 * Send PSN h again, rebuilt from its WQE h - first_psn packets in (as the
 * go-back-N rewind resumes inside a WQE), the requester's position kept.
 * A READ is asked again for what was not received (h is where it starts
 * or where its responses stopped), an atomic or placement request whole.
 * The packet asks for an ACK.  *next: the first PSN after what was sent;
 * false when nothing could be sent (transmit backpressure, no mbuf).
 */
static bool
resend_psn(struct tp_qp *qp, struct tp_send_wqe *w, uint32_t at, uint32_t h,
	   uint32_t *next)
{
	uint32_t save_next = qp->req.next, save_off = qp->req.offset;
	uint32_t save_psn = qp->req.psn, save_ack = qp->req.pkts_since_ackreq;
	struct tp_tx_mbufs mb = { .n = 0 };
	struct gather_cache gc = { .len = 0 };
	uint32_t idx = (uint32_t)roce_psn_diff(h, w->first_psn);
	bool rd = w->wr_mask & TP_WR_RD_ATOMIC, sent;

	if (rd && (w->wr_mask & TP_WR_ATOMIC) && idx != 0)
		return false;
	qp->req.next = at;
	qp->req.offset = idx * qp->mtu;
	qp->req.psn = h;
	qp->req.pkts_since_ackreq = TP_ACKREQ_EVERY;
	sent = rd ? send_rd_atomic_packet(qp, w, &mb) : send_data_packet(qp, w, &gc, &mb);
	tp_net_mbufs_put(&mb);
	if (qp->pub.state == DROCE_QPS_ERR)
		return false;		/* the WQE failed (its L_Key): flushed */
	qp->req.next = save_next;
	qp->req.offset = save_off;
	qp->req.psn = save_psn;
	qp->req.pkts_since_ackreq = save_ack;
	if (!sent)
		return false;
	tp_count(qp->eng, TP_CNT_SR_RESENT_PKTS);
	*next = rd ? roce_psn_add(w->first_psn, w->npkts) : roce_psn_add(h, 1);
	return true;
}

/*
 * May hole h be sent (again)?  When a packet transmitted after h's last
 * transmission arrived (the responder's latest, qp->sr.rack) while h is
 * still missing: on a wire that keeps order h was lost (RACK, RFC 8985,
 * per packet, by transmission order rather than time).
 */
static bool
hole_due(const struct tp_qp *qp, uint32_t h)
{
	return qp->sr.xseq[h & (TP_SR_WINDOW - 1)] < qp->sr.rack;
}

/*
 * Resend the holes of [from, limit) that are due: PSNs sent (before
 * req.psn: what the requester is about to send anyway is not a hole) and
 * not selectively acknowledged.
 */
static void
resend_holes(struct tp_qp *qp, uint32_t from, uint32_t limit)
{
	uint32_t h, at, next;

	if (roce_psn_after(limit, qp->req.psn))
		limit = qp->req.psn;
	while (roce_psn_before(from, limit) &&
	       tp_sr_win_next_hole(&qp->sr.swin, from, limit, &h)) {
		struct tp_send_wqe *w;

		if (!hole_due(qp, h)) {
			from = roce_psn_add(h, 1);
			continue;
		}
		w = wqe_of_psn(qp, h, &at);
		if (w == NULL || !resend_psn(qp, w, at, h, &next))
			return;
		from = next;
	}
}

/* The selective window follows comp.psn (re-based when it jumped past it). */
static void
swin_follow(struct tp_qp *qp)
{
	struct tp_sr *sr = &qp->sr;

	if (!tp_sr_win_ack_to(&sr->swin, qp->comp.psn))
		tp_sr_win_init(&sr->swin, qp->comp.psn);
	if (roce_psn_before(sr->sack_hi, qp->comp.psn))
		sr->sack_hi = qp->comp.psn;
}

/*
 * A selective ACK: the responder has everything before base (the BTH's PSN
 * + 1: the completer takes it as any ACK of base - 1, so WQEs still
 * complete in order on cumulative ACKs), of base + 1 .. base + 64 the
 * PSNs whose bit is set, and saw nothing beyond top.  The holes up to top
 * (and at most 64 beyond base) are sent again once a packet transmitted
 * after them arrived (last, the PSN that arrived last: hole_due), so a
 * hole is resent once per loss of it.  PSNs never sent are ignored.
 */
void
tp_req_sr_sack(struct tp_qp *qp, const struct roce_pkt *pkt, const uint8_t *frame,
	       uint32_t top, uint32_t last, uint64_t sack)
{
	const uint8_t *aeth = frame + pkt->bth_off + ROCE_BTH_LEN;
	uint32_t base = roce_psn_add(pkt->psn, 1), lim;
	struct tp_sr *sr = &qp->sr;
	struct roce_pkt ack;

	if (roce_psn_after(base, qp->req.psn_hi))
		return;				/* acknowledges what was never sent */
	if (roce_psn_after(base, qp->comp.psn)) {
		ack = *pkt;
		ack.opcode = ROCE_OP_ACKNOWLEDGE;
		ack.op = roce_opcode_get(ROCE_OP_ACKNOWLEDGE);
		ack.psn = roce_psn_add(base, ROCE_PSN_MASK);	/* base - 1 */
		ack.aeth.syndrome = ROCE_AETH_ACK_NO_CREDIT;
		ack.aeth.msn = (uint32_t)aeth[1] << 16 | (uint32_t)aeth[2] << 8 | aeth[3];
		ack.payload_len = 0;
		tp_comp_rx(qp, &ack, frame);
	}
	if (base != qp->comp.psn || !tp_qp_can_send(qp) || qp->req.wait_rnr)
		return;		/* stale, or the completer went back N (a READ) */
	swin_follow(qp);
	for (uint32_t i = 0; i < 64; i++) {
		uint32_t p = roce_psn_add(base, i + 1);

		if (!(sack >> i & 1))
			continue;
		if (!roce_psn_before(p, qp->req.psn_hi))
			break;
		(void)tp_sr_win_mark(&sr->swin, p);
		if (!roce_psn_before(p, sr->sack_hi))
			sr->sack_hi = roce_psn_add(p, 1);
	}
	/* up to top, within the bitmap's reach, never beyond what was sent;
	 * every due hole there is sent again */
	lim = roce_psn_add(base, 65);
	if (roce_psn_diff(top, base) > 0 && roce_psn_before(top, lim))
		lim = roce_psn_add(top, 1);
	if (roce_psn_diff(top, base) <= 0)
		lim = roce_psn_add(base, 1);
	if (roce_psn_after(lim, qp->req.psn_hi))
		lim = qp->req.psn_hi;
	if (roce_psn_after(lim, sr->sack_hi))
		sr->sack_hi = lim;
	/* the transmission that arrived last (a PSN sent and not yet acked) */
	if (!roce_psn_before(last, qp->comp.psn) && roce_psn_before(last, qp->req.psn_hi) &&
	    sr->xseq[last & (TP_SR_WINDOW - 1)] > sr->rack)
		sr->rack = sr->xseq[last & (TP_SR_WINDOW - 1)];
	resend_holes(qp, qp->comp.psn, lim);
}

/*
 * A retransmit timeout with selective repeat agreed: when the responder
 * told of PSNs it has beyond the oldest one (a SACK), only the oldest hole
 * is sent again.  True when so; false when nothing is known beyond it
 * (what was lost may be everything after it), or when the last timeout
 * already resent a hole and nothing moved since: what the SACKs said is
 * forgotten (a responder that could not complete what it placed forgets
 * it too) and the caller goes back N.
 */
bool
tp_req_sr_timeout(struct tp_qp *qp)
{
	struct tp_sr *sr = &qp->sr;
	uint32_t h, at, next;
	struct tp_send_wqe *w;

	swin_follow(qp);
	if (sr->to_hole && sr->to_psn == qp->comp.psn) {
		tp_sr_win_init(&sr->swin, qp->comp.psn);
		sr->sack_hi = qp->comp.psn;
		sr->to_hole = false;
		return false;
	}
	sr->to_hole = false;
	if (!roce_psn_after(sr->sack_hi, roce_psn_add(qp->comp.psn, 1)) ||
	    !roce_psn_before(qp->comp.psn, qp->req.psn) ||
	    !tp_sr_win_next_hole(&sr->swin, qp->comp.psn, sr->sack_hi, &h))
		return false;
	w = wqe_of_psn(qp, h, &at);
	if (w == NULL || !resend_psn(qp, w, at, h, &next))
		return false;
	sr->to_hole = true;
	sr->to_psn = qp->comp.psn;
	tp_count(qp->eng, TP_CNT_SR_TIMEOUT_HOLE);
	return true;
}
