/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport internals shared by the role files:
 *   tp_qp.c    QP state machine (create/modify/query/destroy, error flush)
 *   tp_post.c  work-request posting (validate, build WQE)
 *   tp_req.c   requester: WQEs -> request packets, go-back-N rewind
 *   tp_comp.c  completer: ACK/NAK/READ and atomic responses -> CQEs
 *   tp_resp.c  responder: request packets -> memory, ACK/NAK/READ responses
 *   tp_resp_out.c  responder output queue and resources (tp_resp.h)
 *   tp_recv.c  receive: parse, ICRC, demultiplex to QP and role
 *   tp_timer.c retransmit and RNR timers
 *   tp_net.c   packet construction (addresses, headers, payload, ICRC)
 *   tp_cq.c    completion queues
 *   tp_dev.c   the device, and an engine's round (tp_engine_progress)
 *   tp_engine.c engines: one per lcore running the data path
 *   tp_shard.c hand-offs between the engines of one device
 *
 *   tp_lcore.c dedicated transport lcores: work queues, CQ and command rings
 *
 * Threading: the data path runs on the lcore of its engine (struct
 * tp_engine, the first argument of the data path; a QP's is qp->eng): the
 * application's own lcore (run-to-completion), or a dedicated transport
 * lcore (tp_lcore.c), in which case the application's lcore touches only
 * the work queues' free slots and struct tp_lc_qp, the CQs' rings
 * (struct tp_cq_ring) and the QP fields that change only in control
 * commands.  No locks.
 */
#ifndef TP_PRIVATE_H
#define TP_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/queue.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "droce.h"
#include "droce_link.h"
#include "net_host.h"
#include "prot.h"
#include "roce_wire.h"
#include "tp_counters.h"
#include "tp_slab.h"
#include "tp_wheel.h"
#include "transport.h"

struct rte_ring;
struct tp_lcore;

extern int tp_logtype;
#define TP_LOG(level, ...) \
	rte_log(RTE_LOG_##level, tp_logtype, "droce.tp: " __VA_ARGS__)
/*
 * Per-packet state traces: off unless the droce.transport log level is
 * DEBUG, checked once per round (dev->trace), so the data path
 * neither calls into rte_log nor evaluates the arguments otherwise.  A
 * trace only logs: the same code runs with traces on and off.
 */
#define TP_TRACE(dev, ...) do {						\
	if (unlikely((dev)->trace))					\
		TP_LOG(DEBUG, __VA_ARGS__);				\
} while (0)

/* QP numbers: 0 and 1 are the IB special QPs; droce hands out from here. */
#define TP_QPN_BASE 0x11
/* the General Services Interface QP (IBTA 13.4.6: QP1, Q_Key 0x80010000) */
#define TP_GSI_QPN 1

/*
 * P_Keys (IBTA 10.9.1.2): bit 15 says full (1) or limited (0) member, the
 * low 15 bits name the partition; 0x0000 and 0x8000 are invalid.  Two
 * P_Keys match when they name the same partition and at least one of
 * them is a full member (two limited members may not talk); an invalid
 * P_Key matches nothing.
 */
#define TP_PKEY_DEFAULT 0xffff
#define TP_PKEY_FULL 0x8000

static inline bool
tp_pkey_valid(uint16_t pkey)
{
	return (pkey & ~TP_PKEY_FULL) != 0;
}

static inline bool
tp_pkey_match(uint16_t a, uint16_t b)
{
	return tp_pkey_valid(a) && ((a ^ b) & ~TP_PKEY_FULL) == 0 &&
	       ((a | b) & TP_PKEY_FULL) != 0;
}

/* Request packets in flight per QP before the requester waits for ACKs. */
#define TP_MAX_INFLIGHT_PKTS 1024
/*
 * After a loss the window shrinks (halved on a NAK or gap, to the minimum
 * on a timeout) and grows again by what gets acknowledged: go-back-N
 * resends a whole window, and a slow receiver that dropped the first one
 * (an emulated guest's Soft-RoCE) would drop the same again and again.
 */
#define TP_MIN_INFLIGHT_PKTS 16
/* AckReq on every N-th packet of a long message (and on its last one). */
#define TP_ACKREQ_EVERY 16
/* Packets the requester builds per QP per progress call. */
#define TP_REQ_BURST 32
#define TP_RX_BURST 32
#define TP_TXQ_SIZE 1024
/* Responder output items (ACKs, NAKs, READ streams, atomic ACKs) per QP. */
#define TP_RESP_QUEUE 64

/* ---- work queue entries -------------------------------------------------- */

enum tp_wqe_state {
	TP_WQE_POSTED,		/* not started by the requester */
	TP_WQE_SENDING,		/* some packets built */
	TP_WQE_SENT,		/* all request packets built, awaiting response */
	TP_WQE_DONE,		/* finished; retired in order by the completer */
};

struct tp_send_wqe {
	uint64_t wr_id;
	uint8_t opcode;		/* enum droce_wr_opcode */
	uint8_t state;		/* enum tp_wqe_state */
	uint8_t num_sge;
	uint8_t is_inline;
	uint8_t rd_counted;	/* counted in req.rd_atomic (READ/atomic in flight) */
	uint8_t started;	/* a packet of it went out: SQD still finishes it */
	uint16_t wr_mask;	/* enum tp_wr_mask of its opcode on this QP */
	uint32_t send_flags;
	uint32_t imm;		/* imm_data (as posted, big-endian) or invalidate_rkey */
	uint32_t length;	/* total data bytes */
	uint64_t remote_addr;
	uint32_t rkey;
	uint32_t status;	/* enum droce_wc_status once DONE */
	uint64_t compare_add;
	uint64_t swap;
	/* FLUSH: the RETH length and the FETH */
	uint32_t flush_len;
	uint8_t flush_type;	/* enum droce_placement_type bits */
	uint8_t flush_level;	/* enum droce_selectivity_level */
	/* UD */
	struct tp_ah *ah;
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	/* BIND_MW */
	uint8_t mw_type;	/* enum droce_mw_type */
	uint32_t mw_index;
	uint32_t bind_rkey;
	uint32_t bind_mr_key;
	uint32_t bind_access;
	uint64_t bind_addr;
	uint64_t bind_length;
	/* transport progress */
	uint32_t first_psn;	/* PSN of the first request (or READ response) packet */
	uint32_t npkts;		/* PSNs the WQE consumes */
	union {
		struct droce_sge sge[DROCE_MAX_SGE];
		uint8_t inline_data[DROCE_MAX_INLINE_DATA];
	};
};

/*
 * Work-request opcodes (rxe's rxe_wr_opcode_info): for each opcode and QP
 * type the properties of its WQE, 0 where the QP type does not take it
 * (posting returns EINVAL).  Posting, the requester and the completer ask
 * this table, never a list of opcodes.
 */
enum tp_wr_mask {
	TP_WR_SEND	= 1u << 0,	/* a SEND message */
	TP_WR_WRITE	= 1u << 1,	/* an RDMA WRITE message */
	TP_WR_READ	= 1u << 2,	/* RDMA READ */
	TP_WR_ATOMIC	= 1u << 3,	/* CMP_AND_SWP, FETCH_AND_ADD: one 8-byte SGE */
	TP_WR_LOCAL	= 1u << 4,	/* executed by the requester, no packet */
	TP_WR_IMM	= 1u << 5,	/* carries immediate data */
	TP_WR_INV	= 1u << 6,	/* carries an R_Key to invalidate (IETH) */
	TP_WR_REMOTE	= 1u << 7,	/* wr.rdma: remote address and R_Key (RETH) */
	TP_WR_INLINE	= 1u << 8,	/* DROCE_SEND_INLINE copies its data */
	TP_WR_ATOMIC_WRITE = 1u << 9,	/* ATOMIC WRITE: 8 bytes, one store */
	TP_WR_FLUSH	= 1u << 10,	/* FLUSH: wr.flush, no data */
	/*
	 * The memory-placement operations (IBTA 1.5 annex A19): one request
	 * packet answered by a zero-length RDMA READ response, so, as rxe,
	 * they take an initiator depth slot and a responder resource like a
	 * READ (a duplicate is answered from its record, never re-executed).
	 */
	TP_WR_PLACEMENT	= TP_WR_ATOMIC_WRITE | TP_WR_FLUSH,
	/* one request packet, one PSN */
	TP_WR_ONE_PKT	= TP_WR_ATOMIC | TP_WR_PLACEMENT,
	/* needs a slot of the initiator depth (max_rd_atomic) */
	TP_WR_RD_ATOMIC	= TP_WR_READ | TP_WR_ATOMIC | TP_WR_PLACEMENT,
};

#define TP_WR_OPCODES (DROCE_WR_ATOMIC_WRITE + 1)
#define TP_WR_QPTS 3	/* RC, UC, UD */

struct tp_wr_opcode_info {
	uint32_t mask[TP_WR_QPTS];	/* by QP type - DROCE_QPT_RC */
	enum droce_wc_opcode wc_opcode;	/* of its send completion */
};

extern const struct tp_wr_opcode_info tp_wr_opcode_info[TP_WR_OPCODES];

/* The properties of opcode op on a QP of this type; 0: not allowed. */
static inline uint32_t
tp_wr_mask(enum droce_qp_type type, unsigned int op)
{
	unsigned int t = (unsigned int)type - DROCE_QPT_RC;

	return op < TP_WR_OPCODES && t < TP_WR_QPTS ? tp_wr_opcode_info[op].mask[t] : 0;
}

struct tp_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t length;	/* sum of the SGE lengths */
	struct droce_sge sge[DROCE_MAX_SGE];
};

/* A power-of-two ring of WQEs indexed by free-running 32-bit counters. */
struct tp_sq {
	struct tp_send_wqe *wqe;
	uint32_t mask;
	uint32_t max_wr;	/* as requested/reported (<= mask + 1) */
	uint32_t head;		/* next slot post_send fills */
	uint32_t tail;		/* oldest WQE not yet retired */
};

struct tp_rq {
	struct tp_recv_wqe *wqe;
	uint32_t mask;
	uint32_t max_wr;
	uint32_t head;
	uint32_t tail;
};

static inline uint32_t
tp_ring_count(uint32_t head, uint32_t tail)
{
	return head - tail;
}

/*
 * A shared receive queue (tp_srq.c): a power-of-two ring of receive WQEs
 * with one producer (the thread posting, tp_post_srq_recv) and one
 * consumer, the engine that owns it (eng): every QP created on the SRQ
 * is placed on that engine, so the SRQ is never read by two engines and
 * needs no lock nor multi-consumer ring.  A QP whose message needs a
 * receive WQE and whose own one-slot RQ is empty takes the oldest WQE of
 * the SRQ into it (tp_srq_take), where the responder completes, reuses
 * (UC) or flushes it as any receive WQE; the SRQ's slot is free as soon as
 * it was taken.  head and tail are published with release stores and read
 * with acquire loads by the other side in every mode (plain moves on
 * x86), so run-to-completion and transport lcores share this code.
 * wqe, mask and max_wr change only in a modify command (resize), which
 * the poster waits for.
 */
struct tp_srq {
	struct droce_srq pub;
	struct tp_dev *dev;
	struct tp_engine *eng;		/* the engine its QPs live on */
	uint32_t pd;			/* its SGEs' protection domain */
	uint32_t max_sge;
	uint32_t users;			/* QPs on it (atomic) */
	bool ev_muted;			/* being destroyed: no event */
	struct tp_recv_wqe *wqe;
	uint32_t mask;
	uint32_t max_wr;
	/* the poster's: next slot filled */
	uint32_t head __rte_cache_aligned;
	/* the engine's: next WQE taken, and the armed srq_limit (0: none) */
	uint32_t tail __rte_cache_aligned;
	uint32_t limit;
};

/* Transport lcores (engines) one device's QPs are spread over. */
#define TP_MAX_ENGINES 8
#define TP_ENGINE_RING 1024

/* ---- address handles and paths ------------------------------------------- */

struct tp_av {
	uint8_t dgid[16];
	uint8_t sgid[16];
	uint8_t dmac[6];		/* resolved when made: engines >= 1 */
	struct net_neigh_ref neigh;	/* with one: dgid's entry in lib/net's
					 * table, renewed by tp_net.c av_dmac */
	uint8_t ip_version;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;
};

struct tp_ah {
	struct droce_ah pub;
	struct tp_av av;
};

/* ---- completion queues ---------------------------------------------------- */

/*
 * One engine's completions of a CQ: a power-of-two array of CQEs the
 * engine writes once (tp_cq_push) and droce_poll_cq copies from straight
 * into the caller's array.  Run-to-completion: both on one lcore, head and
 * tail read directly.  Dedicated transport lcore: the engine publishes
 * pub_head (and pub_overflow) with release stores at the end of its round,
 * after the work queues' tails (tp_lc_publish_cqs), and the poller
 * publishes tail with a release store once it copied the CQEs out.  The
 * fields each side writes are on cache lines of their own.
 */
struct tp_cq_ring {
	/* the engine's */
	struct droce_wc *wc;	/* cq->mask + 1 entries */
	uint32_t head;		/* next CQE written */
	uint32_t tail_seen;	/* the poller's tail when last read */
	bool overflow;		/* a CQE was lost (CQ overrun) */
	uint32_t sol_head;	/* head after the last solicited or error CQE */
	/* dedicated transport lcore: what the poller may read */
	uint32_t pub_head __rte_cache_aligned;
	bool pub_overflow;
	/* the poller's: oldest CQE not yet polled */
	uint32_t tail __rte_cache_aligned;
};

enum tp_cq_arm {
	TP_ARM_NONE,
	TP_ARM_NEXT,		/* the next completion */
	TP_ARM_SOLICITED,	/* the next solicited or error completion */
};

struct tp_cq {
	struct droce_cq pub;
	struct tp_dev *dev;
	uint32_t mask;
	uint32_t users;		/* QPs using it (atomic: engines create QPs at once) */
	bool lc;		/* dedicated transport lcore(s): rings published */
	bool ev_muted;		/* being destroyed: no CQ_ERR event */
	/* completion events (tp_cq_arm): the channel's eventfd (-1: none),
	 * the arm (enum tp_cq_arm, atomic: set by the application, cleared
	 * by the engine that fires it), events fired and not yet taken */
	int ev_fd;
	uint8_t arm;
	uint32_t ev_ready;
	/* dedicated lcores: engine k's list of the CQs whose ring k it
	 * publishes (eng->cqs), joined with its first QP on the CQ, left at
	 * destroy (tp_engine.c) */
	struct {
		struct tp_cq *next;
		bool linked;
	} on[TP_MAX_ENGINES];
	uint32_t poll_next;	/* the poller's: ring polled first next time */
	/* one ring per engine, rings[eng->idx] (1 in run-to-completion) */
	uint32_t nrings;
	struct tp_cq_ring rings[];
};

/* ---- responder output queue ----------------------------------------------- */

enum tp_resp_item_kind {
	TP_RESP_ACK,		/* ACKNOWLEDGE (ACK, RNR NAK or NAK) */
	TP_RESP_READ,		/* a stream of READ responses */
	TP_RESP_ATOMIC,		/* ATOMIC ACKNOWLEDGE */
};

struct tp_resp_item {
	uint8_t kind;
	uint8_t syndrome;	/* ACK/NAK items */
	uint32_t psn;		/* ACK: acked PSN; READ: next PSN to send */
	uint32_t msn;
	/* READ stream */
	uint32_t first_psn;
	uint32_t last_psn;
	uint32_t len;
	uint32_t rkey;		/* re-checked before each packet (revocation) */
	uint64_t va;
	/* ATOMIC */
	uint64_t orig;
	/* READ and ATOMIC: the responder resource answered (resp.res[]) */
	uint8_t res;
};

enum tp_resp_res_kind {
	TP_RES_NONE,
	TP_RES_READ,
	TP_RES_ATOMIC,
	TP_RES_PLACEMENT,	/* ATOMIC WRITE or FLUSH: answered, never redone */
};

/*
 * A responder resource (max_dest_rd_atomic of them per QP): the record of one
 * executed READ or atomic, kept until a later READ/atomic reuses its slot,
 * so that duplicates are answered from it (9.7.5.1.x): a READ re-executed
 * only within what was asked, an atomic never executed twice.
 */
struct tp_resp_res {
	uint8_t kind;		/* enum tp_resp_res_kind */
	bool pending;		/* its response has not completely left */
	uint32_t first_psn;
	uint32_t last_psn;	/* READ: the last response PSN */
	uint32_t msn;		/* the MSN its responses carry (C9-148) */
	uint32_t rkey;
	uint64_t va;
	uint32_t len;		/* READ: bytes asked for */
	uint64_t orig;		/* ATOMIC: the original value returned */
};

/* ---- dedicated transport lcore: a QP's work queues as SP/SC rings -------- */

/*
 * The SQ and the RQ are the single-producer/single-consumer rings between
 * the application's lcore and the transport lcore.  The application builds
 * each WQE in place in qp->sq.wqe[s_head & mask] (qp->rq alike) and then
 * publishes s_head with a release store, then rings the QP's doorbell;
 * the transport lcore, answering it, takes s_head into qp->sq.head with an
 * acquire load (tp_lc_drain) and works on the WQE where it is; it
 * publishes how far it retired (s_tail, release).
 * s_head - s_tail is what the application has outstanding: at max_wr post
 * returns ENOMEM, so a slot is written again only after its WQE retired
 * and the published tail says so.  The fields each side writes are on
 * cache lines of their own.
 */
struct tp_lc_qp {
	/* written by the application's lcore only (release stores) */
	uint32_t s_head;		/* since the last RESET */
	uint32_t r_head;
	/*
	 * The state as of the last modify_qp (written by the modify command
	 * while the application waits for it): post checks RESET/INIT/RTR
	 * against it.  The transport moving the QP to ERR on its own is not
	 * seen here, as on hardware: such WRs are flushed when taken.
	 */
	enum droce_qp_state state;
	struct rte_ring *db_ring;	/* its engine's doorbells (tp_sched.db) */
	/* written by the transport lcore only (atomic stores) */
	uint32_t s_tail __rte_cache_aligned;	/* qp->sq.tail, published */
	uint32_t r_tail;			/* qp->rq.tail, published */
	/* 1: on db_ring, not taken yet (both sides exchange it) */
	uint32_t db __rte_cache_aligned;
};

/* ---- queue pairs --------------------------------------------------------- */

struct tp_qp {
	struct droce_qp pub;
	struct tp_dev *dev;
	struct tp_engine *eng;		/* the engine that owns it (tp_qpn_engine) */
	uint32_t pd;			/* protection-domain handle */
	struct droce_qp_attr attr;	/* current attributes */
	struct droce_qp_cap cap;
	int sq_sig_all;
	uint32_t mtu;			/* path MTU in bytes */
	struct tp_av av;		/* RC/UC destination */
	uint16_t udp_sport;
	uint16_t pkey;			/* dev->pkeys[attr.pkey_index] */
	/* RC/UC packets' headers, built at the first packet after a modify
	 * (tp_net.c); tx_tmpl_ok false: to be built */
	bool tx_tmpl_ok;
	struct roce_tmpl tx_tmpl;
	struct tp_sq sq;
	struct tp_rq rq;
	struct tp_cq *scq;
	struct tp_cq *rcq;
	struct tp_srq *srq;		/* receive WQEs from there, or NULL */
	uint32_t live_index;		/* slot in eng->live */
	struct tp_lc_qp *lc;		/* dedicated transport lcore, or NULL */
	/* on its engine's ready list (struct tp_sched), at most once */
	bool ready;
	TAILQ_ENTRY(tp_qp) ready_link;
	/* retransmit and RNR timers in the engine's wheel (tp_timer.c) */
	struct tp_wheel_timer retrans_tmr;
	/* when the retransmit timer is due: a restart while it is armed only
	 * moves this later, the wheel timer is moved when it fires */
	uint64_t retrans_due;
	uint64_t retrans_tsc;		/* its period (attr.timeout) in TSC cycles */
	struct tp_wheel_timer rnr_tmr;

	/* requester (tp_req.c) */
	struct {
		uint32_t next;		/* SQ index of the WQE being sent */
		uint32_t offset;	/* bytes of it already sent */
		uint32_t psn;		/* next PSN to send */
		uint32_t psn_hi;	/* first PSN never sent yet */
		uint32_t window;	/* packets allowed in flight now */
		uint32_t rd_atomic;	/* READ/ATOMIC WQEs outstanding */
		uint32_t pkts_since_ackreq;
		bool wait_rnr;		/* stopped until the RNR timer fires */
	} req;

	/* completer (tp_comp.c) */
	struct {
		uint32_t psn;		/* oldest PSN not yet acknowledged */
		bool retry_pending;	/* rewound; later gaps are old news */
		uint8_t retry_left;
		uint8_t rnr_retry_left;
		uint32_t rnr_psn;
	} comp;

	/* responder (tp_resp.c) */
	struct {
		uint32_t psn;		/* expected PSN (ePSN) */
		uint32_t msn;
		uint32_t in_msg;	/* 0, or ROCE_OPM_SEND / ROCE_OPM_WRITE */
		bool nak_sent;		/* one sequence NAK per gap... */
		uint32_t oos_psn;	/* ...unless a new wave starts below this */
		bool drop_msg;		/* UC: rest of a broken message is dropped */
		uint32_t offset;	/* bytes of the current message received */
		uint64_t write_va;	/* current WRITE: next VA */
		uint32_t write_rkey;
		uint32_t write_left;	/* bytes RETH still allows */
		struct tp_resp_item q[TP_RESP_QUEUE];
		uint32_t q_head;
		uint32_t q_tail;
		/* ring of max_dest_rd_atomic resources, taken in order */
		struct tp_resp_res res[DROCE_MAX_RD_ATOMIC];
		uint32_t res_next;	/* free-running: slot res_next % max next */
	} resp;

	/* asynchronous events (tp_event.c) */
	struct {
		bool comm_est;		/* COMM_EST raised since the QP went to RTR */
		bool sqd_notify;	/* SQ_DRAINED owed when SQD drains */
		bool muted;		/* being destroyed: raise nothing */
	} ev;
};

static inline struct tp_qp *
tp_qp_of(struct droce_qp *qp)
{
	return container_of(qp, struct tp_qp, pub);
}

/*
 * A state machine's trace: the names of the states whose bit is set in
 * path (bit s: state s was visited), in enum order.
 */
static inline void __rte_cold
tp_trace_path(const struct tp_qp *qp, const char *role, uint32_t psn, uint32_t path,
	      const char *const *names, unsigned int n)
{
	char buf[256] = "";
	size_t len = 0;

	for (unsigned int i = 0; i < n && i < 32; i++) {
		int w;

		if (!(path & (1u << i)) || names[i] == NULL)
			continue;
		w = snprintf(buf + len, sizeof(buf) - len, " %s", names[i]);
		if (w < 0 || (size_t)w >= sizeof(buf) - len)
			break;
		len += (size_t)w;
	}
	TP_LOG(DEBUG, "qp %u %s psn %u:%s\n", qp->pub.qp_num, role, psn, buf);
}

static inline struct tp_cq *
tp_cq_of(struct droce_cq *cq)
{
	return container_of(cq, struct tp_cq, pub);
}

static inline struct tp_srq *
tp_srq_of(struct droce_srq *srq)
{
	return container_of(srq, struct tp_srq, pub);
}

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
	/* dedicated lcore: the CQs its QPs complete on (cq->on[idx]) */
	struct tp_cq *cqs;
	struct tp_tx_turn turn;
	struct tp_sched sched;
	uint32_t txq_len;
	struct rte_mbuf *txq[TP_TXQ_SIZE];	/* on the link's queue idx */
	uint64_t counters[TP_CNT_MAX];
	/* lib/protection's check results, by enum prot_status (tp_prot_*) */
	uint64_t prot_remote[PROT_STATUS_MAX];
	uint64_t prot_local[PROT_STATUS_MAX];
};

/*
 * Where QPs and their WQE rings come from (tp_qp.c): one slab for struct
 * tp_qp and one per ring size (2^k WQEs, k = 0 .. log2(DROCE_MAX_QP_WR)).
 */
#define TP_RING_CLASSES 15

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

	/* asynchronous events (tp_event.c) */
	struct rte_ring *ev_ring;	/* MP/SC, struct droce_async_event */
	int ev_fd;			/* the context's eventfd, or -1 */
	uint64_t link_next;		/* tsc: next carrier poll */
	int8_t link_up;			/* last carrier seen; -1 not yet */
	uint64_t lease_next;		/* tsc: next lease expiry check */
};

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
void tp_shard_flush(struct tp_engine *eng);
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
void tp_timer_disarm_rnr(struct tp_qp *qp);
void tp_timer_expire(struct tp_sched *sc, uint64_t now);
uint64_t tp_rnr_timer_us(uint8_t code);

/* tp_net.c */
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
void tp_net_finish(struct tp_engine *eng, struct rte_mbuf *m, struct roce_pkt *p);
void tp_net_flush(struct tp_engine *eng);
int tp_net_resolve(struct tp_engine *eng, struct tp_av *av);
void tp_net_release(void *arg, struct rte_mbuf *m);

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

#endif /* TP_PRIVATE_H */
