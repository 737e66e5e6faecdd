/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The role files' entry points (part of tp_private.h, which includes it):
 * what tp_qp.c, tp_post.c, tp_req.c, tp_comp.c, tp_resp*.c, tp_recv.c,
 * tp_timer.c, tp_net.c, tp_cq.c and the engine files call of each other.
 */
#ifndef TP_ROLE_H
#define TP_ROLE_H

#ifndef TP_PRIVATE_H
#error "include tp_private.h"
#endif

/* ---- role entry points ---------------------------------------------------- */

/* tp_qp.c */
void tp_qp_to_error(struct tp_qp *qp);
void tp_qp_mem_init(struct tp_dev *dev);
void tp_qp_mem_fini(struct tp_dev *dev);
void tp_qp_flush(struct tp_qp *qp);
int tp_av_from_attr(struct tp_engine *eng, const struct droce_ah_attr *ah,
		    struct tp_av *av);

/* tp_req.c */
bool tp_req_run(struct tp_qp *qp);
void tp_req_rewind(struct tp_qp *qp);
/* selective repeat: a SACK's cumulative ACK and holes; a timeout */
void tp_req_sr_sack(struct tp_qp *qp, const struct roce_pkt *pkt, const uint8_t *frame,
		    uint32_t top, uint32_t last, uint64_t sack);
bool tp_req_sr_timeout(struct tp_qp *qp);

/* tp_sr.c: selective repeat's negotiation and SACK receive */
void tp_sr_start_resp(struct tp_qp *qp);
void tp_sr_start_req(struct tp_qp *qp);
void tp_sr_mark_tx(const struct tp_qp *qp, struct rte_mbuf *m, const struct roce_pkt *p);
void tp_sr_sack_opcode(const struct tp_qp *qp, struct rte_mbuf *m,
		       const struct roce_pkt *p);
void tp_sr_rx_mark(struct tp_qp *qp, const struct roce_pkt *pkt, const uint8_t *frame);
bool tp_sr_rx_sack(struct tp_qp *qp, const struct roce_pkt *pkt, const uint8_t *frame);

/* tp_comp.c */
void tp_comp_rx(struct tp_qp *qp, const struct roce_pkt *pkt, const uint8_t *frame);
void tp_comp_retire(struct tp_qp *qp);
void tp_comp_timeout(struct tp_qp *qp);

/* tp_resp.c, tp_resp_out.c */
/*
 * A QP's consecutive request packets of one receive burst, handed to the
 * responder as one batch (tp_recv_burst).  write_host is the host address
 * of qp->resp.write_va as the current WRITE's R_Key check translated it,
 * so its later packets in the batch are not checked again.  It is valid
 * within the batch only, which ends before the round's quiescent point
 * (prot_reader_quiescent: lib/protection's QSBR keeps a revoked key's
 * memory until then); the next batch checks the R_Key again.
 */
struct tp_resp_batch {
	struct tp_qp *qp;
	uint8_t *write_host;	/* NULL: check at the next WRITE packet */
};

static inline void
tp_resp_batch_start(struct tp_resp_batch *b, struct tp_qp *qp)
{
	b->qp = qp;
	b->write_host = NULL;
}

void tp_resp_rx(struct tp_resp_batch *b, const struct roce_pkt *pkt,
		const uint8_t *frame);
unsigned int tp_resp_run(struct tp_qp *qp);

/* tp_recv.c */
/* A received burst, each frame parsed once. */
struct tp_rx_burst {
	struct rte_mbuf *m[TP_RX_BURST];
	struct roce_pkt pkt[TP_RX_BURST];	/* of m[i] */
	uint8_t err[TP_RX_BURST];		/* enum roce_parse_err of m[i] */
	/*
	 * pkt[i] is what the receive template of generation tmpl_gen[i]
	 * (tp_qp.rx_tmpl_gen) last wrote there, so the next frame parsed by
	 * that template into slot i writes only what varies
	 * (roce_rx_tmpl_reparse); 0: anything else.  Kept across rounds:
	 * the burst is the engine's (tp_engine.rxb), not the round's.
	 */
	uint64_t tmpl_gen[TP_RX_BURST];
};
/*
 * Parse b->m[0, n) and keep the RoCEv2 frames, in order, in b->m[0, k)
 * with their parse in b->pkt[0, k); k is returned.  The others went to
 * lib/net (or engine 0) or were counted and freed.
 */
uint16_t tp_recv_classify(struct tp_engine *eng, struct tp_rx_burst *b, uint16_t n);
/* Verify and deliver what tp_recv_classify kept; frees or hands them on. */
void tp_recv_burst(struct tp_engine *eng, struct tp_rx_burst *b, uint16_t n);

/* tp_engine.c: an engine's life (control path); tp_dev.c: its round */
struct tp_engine *tp_engine_create(struct tp_dev *dev, unsigned int idx,
				   uint32_t live_max);
void tp_engine_destroy(struct tp_engine *eng);
int tp_engines_alloc(struct tp_dev *dev, unsigned int n);
void tp_engines_free(struct tp_dev *dev);
void tp_engine_add_qp(struct tp_engine *eng, struct tp_qp *qp);
void tp_engine_remove_qp(struct tp_engine *eng, struct tp_qp *qp);
void tp_engine_drop_cq(struct tp_engine *eng, struct tp_cq *cq);
int tp_engine_progress(struct tp_engine *eng);

/* tp_shard.c: several engines per device, their hand-offs */
struct tp_txh {
	struct rte_mbuf *m;
	uint8_t gid[16];	/* zero: send as is; else resolve via the host */
	uint32_t eng;		/* the sender's index (told the MAC once resolved) */
};

/* Engine 0 -> engine k: the peer with this GID has this MAC now. */
struct tp_mac_upd {
	uint8_t gid[16];
	uint8_t mac[6];
	uint8_t pad[2];
};
uint16_t tp_shard_rx(struct tp_engine *eng, struct rte_mbuf **pkts, uint16_t n);
bool tp_shard_handoff(struct tp_engine *eng, unsigned int owner, struct rte_mbuf *m);
void tp_shard_tx(struct tp_engine *eng, struct rte_mbuf *m, const uint8_t dst_gid[16],
		 bool need_host);
bool tp_shard_tx_room(struct tp_engine *eng);
void tp_shard_tx_in(struct tp_engine *eng);
void tp_shard_mac_in(struct tp_engine *eng);
int tp_shard_rings(struct tp_engine *eng);
void tp_shard_rings_free(struct tp_engine *eng);

/* tp_event.c: raising asynchronous events (never on the data path) */
int tp_event_init(struct tp_dev *dev);
void tp_event_fini(struct tp_dev *dev);
void tp_event_qp(struct tp_qp *qp, enum droce_event_type type);
void tp_event_resp_error(struct tp_qp *qp, uint8_t nak_code);
void tp_event_comm_est(struct tp_qp *qp);
void tp_event_sqd_check(struct tp_qp *qp);
void tp_event_modified(struct tp_qp *qp, enum droce_qp_state cur,
		       const struct droce_qp_attr *attr, int mask);
void tp_event_cq_err(struct tp_engine *eng, struct tp_cq *cq);
void tp_event_srq_limit(struct tp_srq *srq);
void tp_event_link_poll(struct tp_engine *eng, uint64_t now);
/* Engine 0, every DROCE_LEASE_TICK_US: expire the leases due (tp_event.c). */
void tp_event_lease_poll(struct tp_engine *eng, uint64_t now);

/* tp_timer.c */
int tp_sched_init(struct tp_dev *dev, struct tp_sched *sc);
void tp_sched_fini(struct tp_sched *sc);
void tp_sched_forget(struct tp_qp *qp);
void tp_timer_arm_retrans(struct tp_qp *qp);
uint64_t tp_timer_retrans_tsc(const struct tp_dev *dev, uint8_t timeout);
void tp_timer_disarm_retrans(struct tp_qp *qp);
bool tp_timer_retrans_armed(const struct tp_qp *qp);
void tp_timer_arm_rnr(struct tp_qp *qp, uint8_t rnr_code);
/* the pacer's timer (tp_cc.c): the QP is marked ready at deadline */
void tp_timer_arm_pace(struct tp_qp *qp, uint64_t deadline);
void tp_timer_disarm_rnr(struct tp_qp *qp);
void tp_sched_round(struct tp_engine *eng, uint64_t now);
void tp_timer_expire(struct tp_sched *sc, uint64_t now);
uint64_t tp_rnr_timer_us(uint8_t code);

/* tp_net.c */
/* a CNP from qp to its peer QP (tp_cc_np_ce): 0, or -ENOBUFS */
int tp_net_send_cnp(struct tp_qp *qp, uint8_t dscp);
/* a CNP from UD qp to the QP that sent pkt, where it came from: 0, -ENOBUFS */
int tp_net_send_cnp_to(struct tp_qp *qp, const struct roce_pkt *pkt, uint8_t dscp);
void tp_net_fill_pkt(struct tp_qp *qp, struct tp_av *av,
		     struct roce_pkt *p, uint8_t opcode, uint32_t psn);
/*
 * mbufs taken from the pool in one call for a burst of frames (the
 * requester's, tp_req_run), handed out one by one by tp_net_alloc; what
 * the burst did not use goes back with tp_net_mbufs_put.
 */
struct tp_tx_mbufs {
	struct rte_mbuf *m[TP_REQ_BURST];
	uint16_t next;		/* m[next, n) are not used yet */
	uint16_t n;
};
void tp_net_mbufs_get(struct tp_dev *dev, struct tp_tx_mbufs *b, unsigned int want);
void tp_net_mbufs_put(struct tp_tx_mbufs *b);
/* b NULL: one mbuf from the pool; else the next of b (empty: from the pool) */
struct rte_mbuf *tp_net_alloc(struct tp_qp *qp, struct tp_av *av, struct roce_pkt *p,
			      struct tp_tx_mbufs *b, uint8_t **payload);
/* Zero copy: the payload (payload_len bytes at src, registered memory of
 * key, checked in this read-side section) sent from where it is */
struct rte_mbuf *tp_net_alloc_zc(struct tp_qp *qp, struct tp_av *av, struct roce_pkt *p,
				 struct tp_tx_mbufs *b, const void *src, uint32_t key);
/* Does a payload of plen bytes go out by zero copy on qp's link? */
static inline bool
tp_net_zc(const struct tp_qp *qp, uint32_t plen)
{
	const struct droce_link *l = qp->dev->link;

	return unlikely(l->offloads & DROCE_LINK_TX_ZC) && plen != 0 && plen >= l->tx_zc_min;
}
void tp_net_finish(struct tp_qp *qp, struct rte_mbuf *m, struct roce_pkt *p);
void tp_net_flush(struct tp_engine *eng);
int tp_net_resolve(struct tp_engine *eng, struct tp_av *av);
int tp_net_release(void *arg, struct rte_mbuf *m);
void tp_net_released(void *arg, const uint8_t gid[16]);

/* tp_sge.c: copy len bytes between buf and the SGE list at offset off,
 * L_Key-checking every chunk against PD pd (tp_sge_copy: the QP's);
 * false on a local protection error. */
bool tp_sge_copy_pd(struct tp_qp *qp, uint32_t pd, const struct droce_sge *sge,
		    unsigned int nsge, uint32_t off, void *buf, uint32_t len,
		    bool into_sges);

static inline bool
tp_sge_copy(struct tp_qp *qp, const struct droce_sge *sge, unsigned int nsge,
	    uint32_t off, void *buf, uint32_t len, bool into_sges)
{
	return tp_sge_copy_pd(qp, qp->pd, sge, nsge, off, buf, len, into_sges);
}

/* tp_srq.c: the oldest WQE of qp's SRQ into qp's empty RQ; false: none. */
bool tp_srq_take(struct tp_qp *qp);

/* tp_cq.c */
/* On eng's own ring of cq (QPs of several engines may share it). */
bool tp_cq_push(struct tp_engine *eng, struct tp_cq *cq, const struct droce_wc *wc);
/* The same for a receive completion: se is the message's BTH solicited bit. */
bool tp_cq_push_recv(struct tp_engine *eng, struct tp_cq *cq,
		     const struct droce_wc *wc, bool se);
/* Dedicated lcores: ring r of an armed CQ published CQEs after old_head. */
void tp_cq_published(struct tp_cq *cq, const struct tp_cq_ring *r, uint32_t old_head);
/* Modify to RESET: drop the QP's CQEs not yet polled from engine eng's ring. */
void tp_cq_clean(struct tp_cq *cq, const struct tp_engine *eng, uint32_t qpn);

/* tp_lcore_rings.c: per-QP set-up (control path, on the transport
 * lcore) and the transport lcore's side of the work queues and CQ rings. */
int tp_lc_qp_init(struct tp_qp *qp);
void tp_lc_qp_fini(struct tp_qp *qp);
int tp_lc_cq_poll(struct tp_cq *cq, int n, struct droce_wc *wc);
/* Doorbelled QPs' published SQ/RQ heads taken (marked ready); how many WQEs. */
unsigned int tp_lc_drain(struct tp_engine *eng);
int tp_lc_doorbells_alloc(struct tp_dev *dev);
void tp_lc_doorbells_free(struct tp_dev *dev);
void tp_lc_ring_doorbell(struct tp_qp *qp);
void tp_lc_publish_qp(struct tp_qp *qp);

/* ---- congestion control (tp_cc.c) ------------------------------------------ */

void tp_cc_qp_init(struct tp_qp *qp);
void tp_cc_qp_start(struct tp_qp *qp);
void tp_cc_on_ack(struct tp_qp *qp, uint32_t npsn);
void tp_cc_on_loss(struct tp_qp *qp, bool timeout);
void tp_cc_on_cnp(struct tp_qp *qp);
void tp_cc_np_ce(struct tp_qp *qp, const struct roce_pkt *pkt);
bool tp_cc_may_send(struct tp_qp *qp);
void tp_cc_sent(struct tp_qp *qp, uint32_t bytes);
void tp_cc_window_ack(struct tp_qp *qp, uint32_t npsn);
void tp_cc_window_loss(struct tp_qp *qp, bool timeout);
uint8_t tp_cc_tos(const struct tp_dev *dev, uint8_t traffic_class);
uint16_t tp_cc_udp_sport(const struct tp_qp *qp, uint32_t rqpn, uint32_t flow_label);
void tp_cc_snapshot(const struct tp_qp *qp, struct tp_cc_snapshot *s);

#endif /* TP_ROLE_H */
