/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport internals shared by the role files:
 *   tp_qp.c    QP state machine (create/modify/query/destroy, error flush)
 *   tp_post.c  work-request posting (validate, build WQE)
 *   tp_req.c   requester: WQEs -> request packets, go-back-N rewind
 *   tp_comp.c  completer: ACK/NAK/READ and atomic responses -> CQEs
 *   tp_resp.c  responder: request packets -> memory, ACK/NAK/READ responses
 *   tp_recv.c  receive: parse, ICRC, demultiplex to QP and role
 *   tp_timer.c retransmit and RNR timers
 *   tp_net.c   packet construction (addresses, headers, payload, ICRC)
 *   tp_cq.c    completion queues
 *   tp_dev.c   the per-context engine and its progress loop
 *
 *   tp_lcore.c dedicated transport lcores: post/completion/command rings
 *
 * Threading: everything here runs on the lcore that owns the context: the
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

#include <rte_common.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_per_lcore.h>

#include "droce.h"
#include "droce_link.h"
#include "net_host.h"
#include "prot.h"
#include "roce_wire.h"
#include "tp_counters.h"
#include "transport.h"

struct rte_ring;
struct tp_lcore;

extern int tp_logtype;
#define TP_LOG(level, ...) \
	rte_log(RTE_LOG_##level, tp_logtype, "droce.tp: " __VA_ARGS__)
/*
 * Per-packet state traces: off unless the droce.transport log level is
 * DEBUG, checked once per progress call (dev->trace), so the data path
 * neither calls into rte_log nor evaluates the arguments otherwise.  A
 * trace only logs: the same code runs with traces on and off.
 */
#define TP_TRACE(dev, ...) do {						\
	if (unlikely((dev)->trace))					\
		TP_LOG(DEBUG, __VA_ARGS__);				\
} while (0)

/* QP numbers: 0 and 1 are the IB special QPs; droce hands out from here. */
#define TP_QPN_BASE 0x11

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
	/* needs a slot of the initiator depth (max_rd_atomic) */
	TP_WR_RD_ATOMIC	= TP_WR_READ | TP_WR_ATOMIC,
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

/* ---- address handles and paths ------------------------------------------- */

struct tp_av {
	uint8_t dgid[16];
	uint8_t sgid[16];
	uint8_t dmac[6];		/* without a host stack (or off shard 0) */
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
	/* dedicated transport lcore: what the poller may read */
	uint32_t pub_head __rte_cache_aligned;
	bool pub_overflow;
	/* the poller's: oldest CQE not yet polled */
	uint32_t tail __rte_cache_aligned;
};

struct tp_cq {
	struct droce_cq pub;
	struct tp_dev *dev;
	uint32_t mask;
	uint32_t users;		/* QPs using it */
	bool lc;		/* the device runs on dedicated transport lcores */
	bool ev_muted;		/* being destroyed: no CQ_ERR event */
	struct tp_cq *lc_next;	/* the device's CQs (dev->lc_cqs) */
	uint32_t poll_next;	/* the poller's: ring polled first next time */
	/* one ring per engine (the device's shards; 1 in run-to-completion) */
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
 * publishes s_head with a release store; the transport lcore takes it into
 * qp->sq.head with an acquire load (tp_lc_drain_dev) and works on the WQE
 * where it is; it publishes how far it retired (s_tail, release).
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
	/* written by the transport lcore only (atomic stores) */
	uint32_t s_tail __rte_cache_aligned;	/* qp->sq.tail, published */
	uint32_t r_tail;			/* qp->rq.tail, published */
};

/* ---- queue pairs --------------------------------------------------------- */

struct tp_qp {
	struct droce_qp pub;
	struct tp_dev *dev;
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
	uint32_t live_index;		/* slot in dev->live */
	struct tp_lc_qp *lc;		/* dedicated transport lcore, or NULL */

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
		uint64_t retrans_deadline;	/* tsc; 0 = disarmed */
		uint64_t rnr_deadline;		/* tsc; 0 = disarmed */
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

/* ---- the device engine --------------------------------------------------- */

struct tp_neigh {
	uint8_t gid[16];
	struct rte_ether_addr mac;
	bool valid;
};

#define TP_MAX_NEIGH 64


/*
 * A shard's way out under backpressure: full is set when a frame could
 * not be built for lack of transmit room (tp_net_alloc), and the next
 * round's QP walk starts at walk_from, the QP that was refused, so the
 * QPs late in the live list are not starved by the early ones.
 */
struct tp_tx_turn {
	bool full;
	uint32_t walk_from;
};

/* Transport lcores one device's QPs are sharded over (tp_shard.c). */
#define TP_MAX_SHARDS 8
#define TP_SHARD_RING 1024

/*
 * One shard of a device run by several transport lcores.  Shard 0 keeps
 * using the device's own txq, counters and prot_reader (so the one-lcore
 * and run-to-completion paths are unchanged); shards >= 1 use the ones
 * here.  rx_in: frames other shards received for this one (MP/SC, mbuf
 * pointers); tx_in (shard 0 only): frames other shards send through it
 * (MP/SC, struct tp_txh).
 */
struct tp_shard {
	struct rte_ring *rx_in;
	struct rte_ring *tx_in;
	struct rte_ring *mac_in;	/* shards >= 1: MACs shard 0 resolved (struct tp_mac_upd) */
	struct tp_lcore *lc;
	int prot_reader;
	uint32_t txq_len;
	struct rte_mbuf *txq[TP_TXQ_SIZE];
	struct tp_tx_turn turn;
	uint64_t counters[TP_CNT_MAX];
};

/*
 * The shard index of the device the calling lcore is working for: set by
 * the transport lcore before each device's round (and to 0 for commands);
 * 0 on every other thread.  Data-path code that must know which shard it
 * runs for (counters, its CQ rings, transmit queue) reads it.
 */
RTE_DECLARE_PER_LCORE(unsigned int, tp_shard_id);

static inline unsigned int
tp_cur_shard(void)
{
	return RTE_PER_LCORE(tp_shard_id);
}

struct tp_dev {
	struct droce_context *ctx;
	struct prot_tables *prot;
	struct net_host *host;		/* ARP/ND/ICMP and neighbours, or NULL */
	int prot_reader;		/* QSBR slot of the owning lcore */
	struct droce_link *link;
	struct tp_dev_config cfg;

	uint8_t gids[TP_MAX_GIDS][16];
	uint32_t ngids;
	uint16_t pkeys[TP_MAX_PKEYS];	/* index 0: 0xffff */
	uint32_t npkeys;
	struct tp_neigh neigh[TP_MAX_NEIGH];

	struct tp_qp **qps;		/* by QPN - TP_QPN_BASE */
	uint32_t max_qp;
	uint32_t next_qp;		/* allocation cursor */
	struct tp_qp **live;		/* dense list of existing QPs */
	uint32_t nlive;
	uint32_t shard_qps[TP_MAX_SHARDS];	/* live QPs per shard (control path) */

	struct rte_mbuf *txq[TP_TXQ_SIZE];
	uint32_t txq_len;
	struct tp_tx_turn turn;		/* shard 0's */

	uint64_t tsc_hz;
	bool trace;			/* per-packet traces (log level DEBUG) */
	uint64_t counters[TP_CNT_MAX];	/* shard 0's */
	uint64_t *cnt[TP_MAX_SHARDS];	/* every shard's counters (cnt[0] = counters) */

	/* several transport lcores (tp_shard.c); nshards 1 otherwise */
	uint32_t nshards;
	struct tp_shard *sh[TP_MAX_SHARDS];

	/* dedicated transport lcore (tp_lcore.c); NULL: run-to-completion */
	struct tp_lcore *lc;
	struct tp_cq *lc_cqs;		/* its CQs, whose ring heads a round publishes */
	uint32_t ncq;			/* CQs that exist (control path) */

	/* asynchronous events (tp_event.c) */
	struct rte_ring *ev_ring;	/* MP/SC, struct droce_async_event */
	int ev_fd;			/* the context's eventfd, or -1 */
	uint64_t link_next;		/* tsc: next carrier poll */
	int8_t link_up;			/* last carrier seen; -1 not yet */
};

static inline void
tp_count(struct tp_dev *dev, enum tp_counter c)
{
	dev->cnt[tp_cur_shard()][c]++;
}

static inline void
tp_count_n(struct tp_dev *dev, enum tp_counter c, uint64_t n)
{
	dev->cnt[tp_cur_shard()][c] += n;
}

/* The shard that owns QP qpn: QPN modulo the number of shards. */
static inline unsigned int
tp_qpn_shard(const struct tp_dev *dev, uint32_t qpn)
{
	return dev->nshards <= 1 ? 0 : qpn % dev->nshards;
}

/*
 * lib/net's host stack (ARP/ND/ICMP, the neighbour table) belongs to
 * shard 0: other shards see none and use the MAC resolved when the QP
 * went to RTR (or hand the frame to shard 0, tp_shard_tx).
 */
static inline struct net_host *
tp_host(const struct tp_dev *dev)
{
	return tp_cur_shard() == 0 ? dev->host : NULL;
}

/* The calling shard's transmit turn (struct tp_tx_turn). */
static inline struct tp_tx_turn *
tp_tx_turn(struct tp_dev *dev)
{
	unsigned int s = tp_cur_shard();

	return s == 0 ? &dev->turn : &dev->sh[s]->turn;
}

/*
 * The ring the calling engine writes the CQ's completions to: the CQ's
 * one ring, or with several transport lcores the calling shard's own.
 */
static inline struct tp_cq_ring *
tp_cq_ring_mine(struct tp_cq *cq)
{
	return &cq->rings[tp_cur_shard()];
}

static inline struct tp_qp *
tp_qp_lookup(struct tp_dev *dev, uint32_t qpn)
{
	uint32_t i = qpn - TP_QPN_BASE;

	return i < dev->max_qp ? dev->qps[i] : NULL;
}

/* ---- role entry points ---------------------------------------------------- */

/* tp_qp.c */
void tp_qp_to_error(struct tp_qp *qp);
void tp_qp_flush(struct tp_qp *qp);
bool tp_qp_can_send(const struct tp_qp *qp);
bool tp_qp_can_receive(const struct tp_qp *qp);
int tp_av_from_attr(struct tp_dev *dev, const struct droce_ah_attr *ah,
		    struct tp_av *av);

/* tp_req.c */
void tp_req_run(struct tp_qp *qp);
void tp_req_uncount(struct tp_qp *qp, struct tp_send_wqe *w);
void tp_req_rewind(struct tp_qp *qp);
uint32_t tp_wqe_npkts(const struct tp_qp *qp, const struct tp_send_wqe *wqe);

/* tp_comp.c */
void tp_comp_rx(struct tp_qp *qp, const struct roce_pkt *pkt, const uint8_t *frame);
void tp_comp_retire(struct tp_qp *qp);
void tp_comp_timeout(struct tp_qp *qp);

/* tp_resp.c */
void tp_resp_rx(struct tp_qp *qp, const struct roce_pkt *pkt, const uint8_t *frame);
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
 * lib/net (or shard 0) or were counted and freed.
 */
uint16_t tp_recv_classify(struct tp_dev *dev, struct tp_rx_burst *b, uint16_t n);
/* Verify and deliver what tp_recv_classify kept; frees or hands them on. */
void tp_recv_burst(struct tp_dev *dev, struct tp_rx_burst *b, uint16_t n);

/* tp_shard.c: several transport lcores per device */
struct tp_txh {
	struct rte_mbuf *m;
	uint8_t gid[16];	/* zero: send as is; else resolve via the host */
	uint32_t shard;		/* the sender (told the MAC once resolved) */
};

/* Shard 0 -> shard k: the peer with this GID has this MAC now. */
struct tp_mac_upd {
	uint8_t gid[16];
	uint8_t mac[6];
	uint8_t pad[2];
};
uint16_t tp_shard_rx(struct tp_dev *dev, unsigned int s, struct rte_mbuf **pkts,
		     uint16_t n);
bool tp_shard_handoff(struct tp_dev *dev, unsigned int owner, struct rte_mbuf *m);
void tp_shard_tx(struct tp_dev *dev, struct rte_mbuf *m, const uint8_t dst_gid[16],
		 bool need_host);
void tp_shard_flush(struct tp_dev *dev);
bool tp_shard_tx_room(struct tp_dev *dev);
void tp_shard_tx_in(struct tp_dev *dev);
void tp_shard_mac_in(struct tp_dev *dev, unsigned int s);
int tp_shards_alloc(struct tp_dev *dev, unsigned int n);
void tp_shards_free(struct tp_dev *dev);
int tp_shard_reader(const struct tp_dev *dev, unsigned int s);

/* tp_event.c: raising asynchronous events (never on the data path) */
int tp_event_init(struct tp_dev *dev);
void tp_event_fini(struct tp_dev *dev);
void tp_event_qp(struct tp_qp *qp, enum droce_event_type type);
void tp_event_resp_error(struct tp_qp *qp, uint8_t nak_code);
void tp_event_comm_est(struct tp_qp *qp);
void tp_event_sqd_check(struct tp_qp *qp);
void tp_event_modified(struct tp_qp *qp, enum droce_qp_state cur,
		       const struct droce_qp_attr *attr, int mask);
void tp_event_cq_err(struct tp_cq *cq);
void tp_event_link_poll(struct tp_dev *dev, uint64_t now);

/* tp_timer.c */
void tp_timer_arm_retrans(struct tp_qp *qp);
void tp_timer_disarm_retrans(struct tp_qp *qp);
void tp_timer_arm_rnr(struct tp_qp *qp, uint8_t rnr_code);
void tp_timer_run(struct tp_qp *qp, uint64_t now);
uint64_t tp_rnr_timer_us(uint8_t code);

/* tp_net.c */
void tp_net_fill_pkt(struct tp_qp *qp, struct tp_av *av,
		     struct roce_pkt *p, uint8_t opcode, uint32_t psn);
struct rte_mbuf *tp_net_alloc(struct tp_qp *qp, struct tp_av *av,
			      struct roce_pkt *p, uint8_t **payload);
void tp_net_finish(struct tp_dev *dev, struct rte_mbuf *m, struct roce_pkt *p);
void tp_net_flush(struct tp_dev *dev);
int tp_net_resolve(struct tp_dev *dev, struct tp_av *av);
void tp_net_release(void *arg, struct rte_mbuf *m);

/* tp_sge.c: copy len bytes between buf and the SGE list at offset off,
 * L_Key-checking every chunk; false on a local protection error. */
bool tp_sge_copy(struct tp_qp *qp, const struct droce_sge *sge, unsigned int nsge,
		 uint32_t off, void *buf, uint32_t len, bool into_sges);

/* tp_cq.c */
bool tp_cq_push(struct tp_cq *cq, const struct droce_wc *wc);

/* tp_lcore_rings.c: per-QP and per-CQ set-up (control path, on the
 * transport lcore) and the transport lcore's side of them. */
int tp_lc_qp_init(struct tp_qp *qp);
void tp_lc_qp_fini(struct tp_qp *qp);
void tp_lc_cq_init(struct tp_cq *cq);
void tp_lc_cq_fini(struct tp_cq *cq);
int tp_lc_cq_poll(struct tp_cq *cq, int n, struct droce_wc *wc);
void tp_lc_drain_rqs(struct tp_dev *dev);

#endif /* TP_PRIVATE_H */
