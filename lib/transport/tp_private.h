/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport internals shared by the role files (the device and engine
 * structures are in tp_engine.h, the roles' entry points in tp_role.h,
 * both included at the end):
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
 *   tp_adaptive.c  adaptive progress: a progress thread behind
 *              run-to-completion, handed the engine by the runner token
 *              (tp_run.h)
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
#include "tp_cc.h"
#include "tp_counters.h"
#include "tp_run.h"
#include "tp_slab.h"
#include "tp_sr_window.h"
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
	/* UD: the address handle's index (tp_ah_get); ah_rsvd keeps the
	 * fields after it where they were with a pointer (callgrind: 3
	 * instructions per 64 B WRITE fewer in posting and completing) */
	uint32_t ah;
	uint32_t ah_rsvd;
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
	uint8_t mcast;			/* dgid a group: dmac its group address */
	uint32_t flow_label;
};

struct tp_ah {
	struct droce_ah pub;	/* pub.handle: its index in the device's table */
	struct tp_dev *dev;
	uint32_t pd;		/* only a QP of this PD sends with it */
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
	bool sol_flag;		/* TP_WC_SOLICITED on solicited receives (atomic) */
	/* completion events (tp_cq_arm): the channel's eventfd (-1: none),
	 * the arm (enum tp_cq_arm, atomic: set by the application, cleared
	 * by the engine that fires it), events fired and not yet taken */
	int ev_fd;
	uint8_t arm;
	uint32_t ev_ready;
	/* dedicated lcores: engine k's list of the CQs whose ring k it
	 * publishes after its round (eng->cqs): joined when it writes into
	 * the ring (tp_cq.c cq_mark), left when published or at destroy */
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
	TP_RESP_SACK,		/* selective repeat: a SACK of the window as sent */
	TP_RESP_READ,		/* a stream of READ responses */
	TP_RESP_ATOMIC,		/* ATOMIC ACKNOWLEDGE */
	TP_RESP_SKIPPED,	/* a duplicate's answer no longer wanted: not sent */
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
	bool answered;		/* a response has completely left once */
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

/* ---- selective repeat between droce peers (lib/transport README) --------- */

/*
 * The offer: BTH byte 8's reserved bit 6 (resv7, sent as 0 by a standard
 * sender) set on every RC packet of a QP whose application called
 * droce_qp_set_sr; the peer that also set it answers out-of-order
 * requests with selective ACKs only once it saw the mark.
 */
#define TP_SR_MARK 0x40
/*
 * The selective ACK: a manufacturer-specific opcode (IBTA table 38:
 * 0xc0-0xff), laid out as RDMA READ RESPONSE ONLY with 12 bytes of
 * payload: BTH (PSN base - 1: everything before base arrived), AETH (the
 * cumulative ACK's MSN), the highest PSN that arrived beyond base, kept or
 * not (4 bytes), the PSN that arrived last (4 bytes), the bitmap of what
 * was kept (8 bytes, bit i: base + 1 + i is placed), all big-endian.  What
 * is neither base nor kept up to that highest PSN is to be sent again.
 */
#define TP_SR_SACK_OPCODE 0xd8
#define TP_SR_SACK_LEN 16
/* multi-packet WRITEs the responder remembers for out-of-order placement */
#define TP_SR_MSGS 64

struct tp_sr_msg {
	uint32_t first_psn;
	uint32_t npkts;			/* 0: slot unused */
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
};

struct tp_sr {
	bool on;			/* droce_qp_set_sr: this end offers it */
	bool peer;			/* a marked packet from the peer arrived */
	uint32_t cap_pkts;		/* in flight at most (BDP cap, <= window) */
	/* responder: PSNs placed out of order, based at resp.psn */
	struct tp_sr_win rwin;
	uint32_t rhi;			/* one past the highest PSN seen ahead */
	uint32_t rlast;			/* the PSN that arrived last ahead */
	struct tp_sr_msg msgs[TP_SR_MSGS];
	uint32_t msg_next;
	uint8_t rop[TP_SR_WINDOW];	/* each placed PSN's opcode... */
	uint16_t rlen[TP_SR_WINDOW];	/* ...and payload length */
	struct {			/* WRITE with immediate: the last's */
		uint32_t psn;
		uint32_t imm;
		bool se;
	} imm[TP_SR_MSGS];
	uint32_t imm_next;
	/* requester: PSNs selectively acknowledged, based at comp.psn */
	struct tp_sr_win swin;
	uint32_t sack_hi;		/* one past the highest one */
	/* each PSN's last transmission (a count of the QP's request packets
	 * sent; the BDP cap keeps what is in flight inside the ring), and the
	 * latest transmission the responder is known to have received */
	uint64_t tx_seq;
	uint64_t xseq[TP_SR_WINDOW];
	uint64_t rack;
	bool to_hole;			/* the last timeout resent a hole... */
	uint32_t to_psn;		/* ...with comp.psn here */
};

/* ---- queue pairs --------------------------------------------------------- */

struct tp_qp {
	struct droce_qp pub;
	struct tp_dev *dev;
	struct tp_engine *eng;		/* the engine that owns it (tp_qpn_engine) */
	uint8_t run;			/* eng->mode, read by every post */
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
	/* RC/UC: the fixed bytes of the frames its peer sends it, built at
	 * the first frame after a modify (tp_recv.c); rx_tmpl_ok false: to
	 * be built */
	bool rx_tmpl_ok;
	uint64_t rx_tmpl_gen;		/* of this build, unique in the device */
	struct roce_rx_tmpl rx_tmpl;
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
	/* congestion control (tp_cc.h): only tp_cc*.c look inside */
	struct tp_cc_qp cc;
	/* selective repeat (tp_sr.c) */
	struct tp_sr sr;

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
		bool gap_rearmed;	/* a timeout re-armed for the engine's gap
					 * since the last progress or charged retry */
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

/* Both ends run selective repeat: this one set it and saw the peer's mark. */
static inline bool
tp_sr_agreed(const struct tp_qp *qp)
{
	return qp->sr.on && qp->sr.peer;
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

/* the device and its engines; the roles' entry points */
#include "tp_engine.h"
#include "tp_role.h"

#endif /* TP_PRIVATE_H */
