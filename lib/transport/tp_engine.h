/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device and its engines (part of tp_private.h, which includes it):
 * struct tp_engine (one per lcore running the data path: its QPs, ready
 * list and timer wheel, transmit turn, counters, QSBR slot, CQ list),
 * struct tp_dev, and the small inline accessors the data path uses on
 * them (counters, protection checks counted per engine, the QP lookup).
 */
#ifndef TP_ENGINE_H
#define TP_ENGINE_H

#ifndef TP_PRIVATE_H
#error "include tp_private.h"
#endif

/* ---- the device engine --------------------------------------------------- */

/*
 * An engine's way out under backpressure: full is set when a frame could
 * not be built for lack of transmit room (tp_net_alloc); the round then
 * stops and the refused QP goes back to the front of the ready list
 * (tp_run_qps), so the QPs behind it are not starved by those before.
 */
struct tp_tx_turn {
	bool full;
};

/*
 * Which QPs an engine's round visits, and its timers (tp_dev.c
 * tp_run_qps, tp_timer.c).  A QP with work is on the ready list once
 * (qp->ready): a WR posted, a packet received for it, a timer that fired,
 * a modify_qp; a round runs the QPs on the list and puts back those that
 * still have work, so an idle QP costs nothing.  With a dedicated
 * transport lcore, posting rings the doorbell (db, MP/SC ring of QP
 * pointers, tp_lcore_rings.c) instead of the engine polling every
 * QP's published work-queue heads.
 */
TAILQ_HEAD(tp_qp_list, tp_qp);

struct tp_sched {
	struct tp_qp_list ready;
	uint32_t nready;
	struct tp_wheel wheel;
	struct tp_wheel_timer **slots;	/* the wheel's */
	struct rte_ring *db;		/* dedicated lcore only, else NULL */
	uint64_t round_tsc;		/* the clock of the last round */
	uint64_t gap_tsc;		/* since the round before it, timers armed
					 * across (else 0): tp_sched_round */
};

/*
 * How an engine is run, a property of the engine chosen once: at its
 * creation (TP_RUN_RTC: run-to-completion, the application's thread with
 * the runner token, or adaptive progress's thread) and when it moves to a
 * transport lcore or back (TP_RUN_LCORE; only while it has no QP,
 * tp_engine_set_lcore).  Posting goes through it, one indirect call per
 * post call, and both modes share one posting loop (tp_post.c).  The
 * engine and its QPs keep the mode as an index into each process's own
 * table (tp_post.c tp_run_modes[]), never as a pointer: droced's applications post
 * into the daemon's QPs, whose memory they share but not its code, and
 * mask the index they read there (what another process writes is input).
 */
struct tp_qp;
struct droce_send_wr;
struct droce_recv_wr;
enum tp_run_kind {
	TP_RUN_RTC,
	TP_RUN_LCORE,
	TP_RUN_KINDS		/* a power of two: TP_RUN_MASK bounds an index */
};
#define TP_RUN_MASK (TP_RUN_KINDS - 1)

struct tp_run_mode {
	int (*post_send)(struct tp_qp *qp, struct droce_send_wr *wr,
			 struct droce_send_wr **bad_wr);
	int (*post_recv)(struct tp_qp *qp, struct droce_recv_wr *wr,
			 struct droce_recv_wr **bad_wr);
};

/*
 * One transport engine: what one lcore runs for a device (tp_engine.c).
 * Run-to-completion and one dedicated lcore: the device has one engine;
 * several transport lcores: one per lcore, engine k owning QPs whose QPN
 * is k modulo their number (tp_qpn_engine).  Everything here is written
 * only by the engine's own lcore (the data path's first argument; the
 * control commands of its QPs run there too, tp_qp_call); nlive is read
 * by other threads choosing an engine for a new QP.  Engine k writes its
 * completions to ring k of each CQ (cq->rings[k]).
 */
struct tp_engine {
	struct tp_dev *dev;
	unsigned int idx;		/* in dev->eng[] */
	uint8_t mode;			/* enum tp_run_kind (tp_engine_set_lcore) */
	struct tp_lcore *lc;		/* its transport lcore; NULL: run-to-completion */
	int prot_reader;		/* its QSBR slot, registered by its own thread */
	/* its QPs, dense (qp->live_index); room for live_max */
	struct tp_qp **live;
	uint32_t nlive;
	uint32_t live_max;
	/*
	 * Handoff rings, several engines only (NULL otherwise):
	 * rx_in   frames other engines received for this one (MP/SC, mbufs);
	 * tx_in   engine 0: frames other engines send through it (MP/SC,
	 *         struct tp_txh);
	 * mac_in  engines >= 1: MACs engine 0 resolved (struct tp_mac_upd).
	 */
	struct rte_ring *rx_in;
	struct rte_ring *tx_in;
	struct rte_ring *mac_in;
	/* dedicated lcore: the CQs it wrote into since it last published
	 * (cq->on[idx]) */
	struct tp_cq *cqs;
	struct tp_tx_turn turn;
	struct tp_sched sched;
	uint32_t txq_len;
	struct rte_mbuf *txq[TP_TXQ_SIZE];	/* on the link's queue idx */
	/*
	 * tsc: this engine's next lease expiry check.  Every engine checks
	 * before it handles a burst, so no engine executes a request with
	 * a key whose lease is due while another (engine 0) is descheduled.
	 */
	uint64_t lease_next;
	/* its receive burst (tp_role.h), kept from round to round */
	struct tp_rx_burst *rxb;
	uint64_t counters[TP_CNT_MAX];
	/* lib/protection's check results, by enum prot_status (tp_prot_*) */
	uint64_t prot_remote[PROT_STATUS_MAX];
	uint64_t prot_local[PROT_STATUS_MAX];
	/* dedicated lcore: called after each round (tp_dev_set_round_hook),
	 * set and cleared by a command on the lcore itself; NULL: none */
	unsigned int (*round_hook)(void *arg);
	void *round_arg;
};

/*
 * Where QPs and their WQE rings come from (tp_qp.c): one slab for struct
 * tp_qp and one per ring size (2^k WQEs, k = 0 .. log2(DROCE_MAX_QP_WR)).
 */
#define TP_RING_CLASSES 15

/* The address handle table: TP_AH_CHUNKS chunks of TP_AH_CHUNK slots
 * (TP_MAX_AH, transport.h); index 0 names none. */
#define TP_AH_CHUNK 1024u
#define TP_AH_CHUNKS (TP_MAX_AH / TP_AH_CHUNK)

struct tp_qp_mem {
	rte_spinlock_t lock;	/* engines create QPs at once (tp_qp.c) */
	struct tp_slab qp;
	struct tp_slab sq[TP_RING_CLASSES];
	struct tp_slab rq[TP_RING_CLASSES];
};

struct tp_dev {
	struct droce_context *ctx;
	struct prot_tables *prot;
	struct net_host *host;		/* lib/net: addresses, neighbours (and
					 * ARP/ND/ICMP with cfg.host_stack) */
	struct droce_link *link;
	struct tp_dev_config cfg;

	uint16_t pkeys[TP_MAX_PKEYS];	/* index 0: 0xffff */
	uint32_t npkeys;

	struct tp_qp **qps;		/* by QPN - TP_QPN_BASE */
	struct tp_qp *gsi;		/* QPN 1 (tp_qp_make_gsi), or NULL */
	uint32_t max_qp;
	uint32_t next_qp;		/* allocation cursor (atomic: engines
					 * create their QPs at the same time) */
	struct tp_qp_mem qp_mem;	/* control path, under qp_mem.lock */

	uint64_t tsc_hz;
	bool trace;			/* per-packet traces (log level DEBUG) */

	/* its engines (eng[0] always; neng > 1: several transport lcores) */
	struct tp_engine *eng[TP_MAX_ENGINES];
	uint32_t neng;

	uint32_t ncq;			/* CQs that exist (control path) */
	uint32_t nsrq;			/* SRQs that exist (atomic: any engine) */

	/* address handles by index (their pub.handle, 1 ..): a UD WQE names
	 * its AH by index and the engine resolves it (tp_ah_get); chunks of
	 * TP_AH_CHUNK made on demand, published with a release store and
	 * freed with the device; chunks and slots written on eng[0] only */
	struct tp_ah **ah_dir[TP_AH_CHUNKS];
	uint32_t ah_next;		/* allocation cursor */

	/* asynchronous events (tp_event.c) */
	struct rte_ring *ev_ring;	/* MP/SC, struct droce_async_event */
	int ev_fd;			/* the context's eventfd, or -1 */
	uint64_t link_next;		/* tsc: next carrier poll */
	int8_t link_up;			/* last carrier seen; -1 not yet */

	/* run-to-completion: who runs eng[0] now (tp_run.h) */
	struct tp_run run;

	/* the last receive template generation handed out (tp_recv.c; atomic:
	 * engines build their QPs' templates at the same time) */
	uint64_t rx_tmpl_gen;

	/* multicast groups (tp_mcast.c), made at the first attach; engine 0's */
	struct tp_mcast *mcast;
};

/* A multicast group: its MGID, Ethernet group address, attached QPNs. */
struct tp_mcg {
	uint8_t gid[16];
	uint8_t mac[6];
	uint16_t nqp;
	uint32_t qpn[TP_MCAST_MAX_QP_ATTACH];
};

struct tp_mcast {
	uint32_t ngrp;		/* grp[0, ngrp) in use */
	uint32_t total;		/* attachments over every group */
	struct tp_mcg grp[TP_MCAST_MAX_GRP];
};

/* The group gid of dev, or NULL (engine 0). */
const struct tp_mcg *tp_mcast_find(const struct tp_dev *dev, const uint8_t gid[16]);
/* qp is being destroyed: out of every group (on its engine). */
void tp_mcast_forget_qp(struct tp_qp *qp);
void tp_mcast_fini(struct tp_dev *dev);

static inline void
tp_count(struct tp_engine *eng, enum tp_counter c)
{
	eng->counters[c]++;
}

static inline void
tp_count_n(struct tp_engine *eng, enum tp_counter c, uint64_t n)
{
	eng->counters[c] += n;
}

/*
 * lib/protection's checks, their status counted by the engine that ran
 * them (the lookup itself writes nothing shared): same arguments as
 * prot_check_remote / prot_check_local after eng.
 */
static inline enum prot_status
tp_prot_remote(struct tp_engine *eng, struct prot_tables *t, uint32_t rkey,
	       uint32_t qp_pd, uint32_t qpn, enum prot_remote_op op, uint64_t va,
	       uint64_t len, void **host_addr)
{
	enum prot_status st = prot_check_remote(t, rkey, qp_pd, qpn, op, va, len,
						host_addr);

	eng->prot_remote[st]++;
	return st;
}

static inline enum prot_status
tp_prot_local(struct tp_engine *eng, struct prot_tables *t, uint32_t lkey,
	      uint32_t qp_pd, uint64_t addr, uint64_t len, bool write,
	      void **host_addr)
{
	enum prot_status st = prot_check_local(t, lkey, qp_pd, addr, len, write,
					       host_addr);

	eng->prot_local[st]++;
	return st;
}

/* The engine that owns QP qpn: QPN modulo the number of engines. */
static inline unsigned int
tp_qpn_engine(const struct tp_dev *dev, uint32_t qpn)
{
	return dev->neng <= 1 ? 0 : qpn % dev->neng;
}

/*
 * lib/net's host (ARP/ND/ICMP, the neighbour table) belongs to engine 0:
 * other engines see none and use the MAC resolved when the QP went to RTR
 * (or hand the frame to engine 0, tp_shard_tx).  Its address table is
 * read-only once the engines run, and read by every engine (dev->host).
 */
static inline struct net_host *
tp_host(const struct tp_engine *eng)
{
	return eng->idx == 0 ? eng->dev->host : NULL;
}

/* Engine eng is run by transport lcore lc from now on (NULL: run-to-completion). */
static inline void
tp_engine_set_lcore(struct tp_engine *eng, struct tp_lcore *lc)
{
	eng->lc = lc;
	eng->mode = lc != NULL ? TP_RUN_LCORE : TP_RUN_RTC;
}

/* A destination MAC not known yet (all zero: lib/net has not resolved it). */
static inline bool
tp_mac_is_zero(const uint8_t mac[6])
{
	return (mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) == 0;
}

/* The ready list and timer wheel of the engine that owns qp. */
static inline struct tp_sched *
tp_qp_sched(struct tp_qp *qp)
{
	return &qp->eng->sched;
}

/* qp has work: its engine's next round visits it (once, however often marked). */
static inline void
tp_qp_ready(struct tp_qp *qp)
{
	struct tp_sched *sc;

	if (qp->ready)
		return;
	sc = tp_qp_sched(qp);
	qp->ready = true;
	TAILQ_INSERT_TAIL(&sc->ready, qp, ready_link);
	sc->nready++;
}

/*
 * After a packet: responder output queued, or WQEs the requester has not
 * sent yet (the response may have opened the window, freed an initiator
 * depth slot or rewound it).  An ACK that leaves neither costs no visit.
 */
static inline bool
tp_qp_has_work(const struct tp_qp *qp)
{
	return qp->req.next != qp->sq.head || qp->resp.q_tail != qp->resp.q_head;
}

/*
 * The requester works in RTS, and in SQD (send queue drain) on the WQEs
 * it has already started (IBTA 10.3.1: SQD finishes messages in progress
 * and their retransmissions, and starts no new one); the completer keeps
 * taking responses in both.  (These small per-packet predicates are
 * inline: a call cost as much as their body.)
 */
static inline bool
tp_qp_can_send(const struct tp_qp *qp)
{
	return qp->pub.state == DROCE_QPS_RTS || qp->pub.state == DROCE_QPS_SQD;
}

static inline bool
tp_qp_can_receive(const struct tp_qp *qp)
{
	enum droce_qp_state s = qp->pub.state;

	return s == DROCE_QPS_RTR || s == DROCE_QPS_RTS || s == DROCE_QPS_SQD;
}

/* The PSNs a WQE takes: one per MTU, one for an atomic, an ATOMIC_WRITE or
 * a FLUSH, none when local. */
static inline uint32_t
tp_wqe_npkts(const struct tp_qp *qp, const struct tp_send_wqe *w)
{
	uint32_t mask = w->wr_mask;

	if (mask & TP_WR_LOCAL)
		return 0;
	if ((mask & TP_WR_ONE_PKT) || w->length <= qp->mtu)
		return 1;		/* (no division for the common short message) */
	return (w->length + qp->mtu - 1) / qp->mtu;
}

/* A READ/atomic WQE stops counting against max_rd_atomic. */
static inline void
tp_req_uncount(struct tp_qp *qp, struct tp_send_wqe *w)
{
	if (w->rd_counted) {
		w->rd_counted = 0;
		qp->req.rd_atomic--;
	}
}

static inline struct tp_qp *
tp_qp_lookup(struct tp_dev *dev, uint32_t qpn)
{
	uint32_t i = qpn - TP_QPN_BASE;

	if (likely(i < dev->max_qp))
		return dev->qps[i];
	return qpn == TP_GSI_QPN ? __atomic_load_n(&dev->gsi, __ATOMIC_ACQUIRE) : NULL;
}

/*
 * The engine's resolution of a UD WQE's address handle: index's AH if it
 * exists and was made on pd, else NULL.  The index comes from the work
 * request (in droced: from memory the application writes), so it is
 * bounds-checked; the slot is read with acquire (tp_ah_create's release).
 */
static inline struct tp_ah *
tp_ah_get(struct tp_dev *dev, uint32_t index, uint32_t pd)
{
	struct tp_ah **chunk;
	struct tp_ah *ah;

	if (unlikely(index == 0 || index >= TP_MAX_AH))
		return NULL;
	chunk = __atomic_load_n(&dev->ah_dir[index / TP_AH_CHUNK], __ATOMIC_ACQUIRE);
	if (unlikely(chunk == NULL))
		return NULL;
	ah = __atomic_load_n(&chunk[index % TP_AH_CHUNK], __ATOMIC_ACQUIRE);
	return likely(ah != NULL && ah->pd == pd) ? ah : NULL;
}

#endif /* TP_ENGINE_H */
