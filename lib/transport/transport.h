/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/transport: the RoCEv2 transport engine (what an RNIC does in
 * hardware).  This header is the library's interface for lib/verbs and
 * for tests; the public API stays in include/droce.h.
 *
 * Calls return 0 / -errno (creators too: the object through *out); only
 * lib/verbs turns that into ibverbs' NULL + errno or positive errno.
 * Every call must come from the lcore that owns the device
 * (run-to-completion; with adaptive progress, tp_dev_run_adaptive, any
 * application thread: the runner token hands the engine over, tp_run.h),
 * except in the dedicated transport lcore mode
 * (tp_dev_run_on_lcore): then the application calls tp_post_*,
 * tp_cq_poll and tp_*_call from its own lcore, and every other call that
 * changes or reads engine state goes through tp_qp_call / tp_engine_call
 * (a QP's, on its engine) or tp_dev_call (the device's, on engine 0).
 */
#ifndef DROCE_TRANSPORT_H
#define DROCE_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>

#include "droce.h"
#include "tp_cc_params.h"

struct droce_link;
struct rte_mbuf;
struct prot_tables;
struct tp_dev;
struct tp_engine;
struct tp_qp;
struct tp_cq;
struct tp_srq;
struct tp_ah;

#define TP_MAX_PKEYS 16
/*
 * QPs per device by default (rxe's limit).  Reserved per QP slot: 16 bytes
 * (dev->qps and dev->live), 1 MiB per device at this default; a created
 * QP costs its struct tp_qp plus its work queue rings (BENCHMARKS.md,
 * "Many QPs").
 */
#define TP_DEFAULT_MAX_QP 65536
/* CQs per device by default (each costs its ring, DROCE_MAX_CQE at most). */
#define TP_DEFAULT_MAX_CQ 65536
/* The longest message (SGE list, RETH length): 2^31 bytes (IBTA 9.4.1.1). */
#define TP_MAX_MSG_SZ (1u << 31)

/*
 * Congestion control, ECN and the UDP source port (tp_cc.c; README
 * "Congestion control").  A zeroed struct (given false) means every
 * default; tp_cc_config_set() fills the defaults before its first key.
 */
enum tp_cc_algo {
	TP_CC_ALGO_NONE,	/* go-back-N's window alone (the default) */
	TP_CC_ALGO_DCQCN,	/* DCQCN reaction point, paced */
	TP_CC_ALGO_MAX
};

enum tp_sport_mode {
	TP_SPORT_HASH,		/* per QP: rdma_get_udp_sport (the default) */
	TP_SPORT_FIXED,		/* every QP: sport_fixed */
	TP_SPORT_ROTATE,	/* hash, moved on at every retransmit timeout */
	TP_SPORT_MAX
};

struct tp_cc_config {
	bool given;		/* false: all defaults */
	uint8_t algo;		/* enum tp_cc_algo: INI cc = none | dcqcn */
	uint8_t ecn;		/* ECN codepoint of droce's packets (2: ECT(0)) */
	uint8_t dscp;		/* DSCP when the address vector has none */
	uint8_t sport_mode;	/* enum tp_sport_mode: udp_sport = hash|fixed|rotate */
	uint16_t sport_fixed;	/* udp_sport_fixed (0xc000..0xffff) */
	struct tp_cc_params params;	/* rp_* and np_* (tp_cc_params.h) */
};

void tp_cc_config_default(struct tp_cc_config *c);
/* key = value from a configuration: 0, -EINVAL, or -ENOENT (not a key of ours) */
int tp_cc_config_set(struct tp_cc_config *c, const char *key, const char *value);
const char *tp_cc_algo_name(unsigned int algo);
const char *tp_sport_mode_name(unsigned int mode);

struct tp_dev_config {
	uint32_t max_qp;	/* 0: TP_DEFAULT_MAX_QP */
	uint32_t max_cq;	/* 0: TP_DEFAULT_MAX_CQ */
	/*
	 * Linux rxe treats retry_cnt 7 as "retry forever"; IBTA says 7 retries.
	 * Default false (spec); true copies rxe (compatibility switch).
	 */
	bool retry_cnt_7_infinite;
	/*
	 * The port's tables (local addresses = GID table, neighbours) are
	 * lib/net's, created by tp_dev_attach_link.  host_stack true: lib/net
	 * also answers ARP, ND and ICMP echo and resolves peers (a real port:
	 * lib/device).  false: the tables alone (net_host_config.table_only),
	 * for a wire without other hosts (the virtual wire tests): non-RoCE
	 * frames are malformed, peers only resolve through static entries.
	 */
	bool host_stack;
	struct tp_cc_config cc;
};

/* The device's configuration, its defaults filled in (max_qp, max_cq). */
const struct tp_dev_config *tp_dev_config(const struct tp_dev *dev);
/* The link attached (tp_dev_attach_link), or NULL. */
const struct droce_link *tp_dev_link(const struct tp_dev *dev);

/* The rxe compatibility switch above, for an engine already running. */
void tp_dev_set_retry_cnt_7_infinite(struct tp_dev *dev, bool on);

int tp_dev_create(struct droce_context *ctx, struct prot_tables *prot,
		  const struct tp_dev_config *cfg, struct tp_dev **out);
/* -EBUSY while QPs exist. */
int tp_dev_destroy(struct tp_dev *dev);
/*
 * The link packets go out on and come in from (one per device for now),
 * and with it the port's lib/net host (tp_dev_config.host_stack): 0,
 * -EINVAL, -EBUSY (a link is attached already) or net_host_create's error.
 */
int tp_dev_attach_link(struct tp_dev *dev, struct droce_link *link);
/*
 * The port's lib/net host (NULL before tp_dev_attach_link), owned by the
 * transport and freed by tp_dev_destroy.  Its tables are the only ones:
 * a local address is added with net_host_add_addr (its order is the GID
 * index), a static neighbour with net_host_add_static; both on the
 * control path, before the engine moves to transport lcores.
 */
struct net_host;
struct net_host *tp_dev_host(const struct tp_dev *dev);
/* The GID of index index: lib/net's address table (net_host_addr). */
int tp_dev_query_gid(const struct tp_dev *dev, unsigned int index,
		     uint8_t gid[16]);
/*
 * The P_Key table (IBTA 10.9.2): index 0 holds the default partition
 * 0xffff from creation.  Add a P_Key (bit 15 the full-member bit; 0x0000
 * and 0x8000 are invalid); returns its index (an existing one if it is
 * already there), -EINVAL or -ENOSPC.  Like the addresses: control path,
 * before a QP's modify_qp selects the new index.
 */
int tp_dev_add_pkey(struct tp_dev *dev, uint16_t pkey);
int tp_dev_query_pkey(const struct tp_dev *dev, unsigned int index,
		      uint16_t *pkey);
/* Receive, run timers, send.  Returns packets handled. */
int tp_progress(struct tp_dev *dev);

/*
 * ---- adaptive progress (tp_adaptive.c) ----
 *
 * Run-to-completion with a progress thread: the engine runs inside the
 * application's calls as before, and a pthread runs it while no
 * application thread is in droce (polling while traffic flows, else
 * sleeping, backing off to 1 ms).  Every call of this header may then come
 * from any application thread: one at a time runs the engine (tp_run.h).
 * After the link and its addresses, before CQs and QPs; not with transport
 * lcores.  0, -EINVAL, -EBUSY (running already), -ENOMEM, or the thread's
 * creation error.  tp_dev_destroy stops it (tp_dev_stop_adaptive).
 */
int tp_dev_run_adaptive(struct tp_dev *dev);
void tp_dev_stop_adaptive(struct tp_dev *dev);
/* Something besides the application's calls runs the engine: a progress
 * thread or transport lcores (a waiter may block on an fd then). */
bool tp_dev_self_driven(const struct tp_dev *dev);

/*
 * Counters: values by enum tp_counter (tp_counters.h), names alike.
 * tp_dev_counters: engine 0's array (the whole device unless it runs on
 * several transport lcores); tp_dev_counter / tp_dev_counter_read: summed
 * over the engines.
 */
const uint64_t *tp_dev_counters(const struct tp_dev *dev);
uint64_t tp_dev_counter(const struct tp_dev *dev, const char *name);
unsigned int tp_counter_count(void);
const char *tp_counter_name(unsigned int i);

/*
 * Observability (read-only, for DPDK telemetry): these may be called from
 * another thread than the owning lcore.  They take no lock and follow only
 * the stable QP slot table (dev->qps[], fixed size): a slot may become NULL
 * at any time.  A QP destroyed while it is being copied is a race the
 * caller accepts: the window is a few dozen loads (the QP's memory comes
 * from rte_malloc, so it stays mapped), the copy is checked against the
 * QPN afterwards, and a value may be stale or torn across fields.
 * Counters (tp_dev_counters) may likewise be read with relaxed loads.
 */
struct tp_qp_snapshot {
	uint32_t qpn;
	uint32_t dest_qpn;
	enum droce_qp_type type;
	enum droce_qp_state state;
	uint32_t mtu;			/* path MTU in bytes */
	uint32_t sq_psn;		/* requester: next PSN to send (req.psn) */
	uint32_t comp_psn;		/* completer: oldest unacknowledged PSN */
	uint32_t resp_psn;		/* responder: expected PSN (ePSN) */
	uint32_t sq_outstanding;	/* send WQEs posted and not retired */
	uint32_t rq_posted;		/* receive WQEs posted, not consumed */
	uint32_t rd_atomic;		/* READ/atomic WQEs in flight */
	uint8_t retry_cnt;		/* as set by modify_qp */
	uint8_t rnr_retry;
	uint8_t retry_left;		/* retries left for the oldest WQE */
	uint8_t rnr_retry_left;
	bool wait_rnr;			/* requester stopped by an RNR NAK */
	uint16_t udp_sport;		/* of its packets */
	const char *cc_algo;		/* congestion control */
	uint64_t cc_rate_bps;		/* DCQCN: current rate (Rc); 0 unpaced */
	uint64_t cc_target_bps;		/* DCQCN: target rate (Rt) */
	uint32_t cc_alpha;		/* DCQCN: alpha in 1/1024 */
	uint64_t cc_cnps;		/* DCQCN: CNPs handled */
	uint64_t cc_cuts;		/* DCQCN: rate cuts */
};

/* Copy what telemetry shows of QP qpn: 0, or -ENOENT (no such QP). */
int tp_dev_qp_snapshot(const struct tp_dev *dev, uint32_t qpn,
		       struct tp_qp_snapshot *snap);
/* The lowest QPN in use above after (0: the first); 0 when none. */
uint32_t tp_dev_qp_next(const struct tp_dev *dev, uint32_t after);
/* Counter i (enum tp_counter) read with a relaxed atomic load. */
uint64_t tp_dev_counter_read(const struct tp_dev *dev, unsigned int i);
/* How many remote (R_Key) or local (L_Key) checks returned status st
 * (enum prot_status), over the engines; relaxed loads. */
uint64_t tp_dev_prot_counter(const struct tp_dev *dev, bool remote, unsigned int st);

/*
 * ---- dedicated transport lcores (tp_lcore.c) ----
 *
 * Hand the engine over to transport lcore `lcore` (an EAL worker lcore;
 * call this, and the matching stop, on the main lcore, as EAL's launch and
 * wait functions require): it is launched with rte_eal_remote_launch() if it
 * does not run yet (one transport lcore may serve several devices) and
 * from then on runs tp_progress() for the device.  Call it after the link,
 * host, GIDs and static neighbours are set and before any CQ or QP exists.
 * 0, -EINVAL (lcore not usable), -EBUSY (CQs/QPs exist, the lcore runs
 * something else), -ENOMEM, -ENOSPC (lcore serves too many devices).
 */
int tp_dev_run_on_lcore(struct tp_dev *dev, unsigned int lcore);
/*
 * Several transport lcores (2..8, distinct, none the main lcore): QP n
 * runs on lcores[n % nlcores]; lcore k polls the link's queue k (when it
 * has one) and hands frames of other engines' QPs over (tp_shard.c).
 * nlcores 1 is tp_dev_run_on_lcore.  Errors as there; -EINVAL for a bad
 * list.  tp_dev_stop_lcore stops them all.
 */
int tp_dev_run_on_lcores(struct tp_dev *dev, const unsigned int *lcores,
			 unsigned int nlcores);
/* Engines (1 unless several transport lcores), and engine `shard`'s counter i. */
unsigned int tp_dev_shards(const struct tp_dev *dev);
uint64_t tp_dev_shard_counter(const struct tp_dev *dev, unsigned int shard,
			      unsigned int i);
/* Take it back (the lcore stops once it serves no device): 0, or -EBUSY
 * while QPs exist (the device then stays where it was). */
int tp_dev_stop_lcore(struct tp_dev *dev);
bool tp_dev_dedicated(const struct tp_dev *dev);
/*
 * Run fn(arg) where the engine runs and return its result: directly in
 * run-to-completion mode (or when called on the transport lcore), else
 * through the transport lcore's command ring, waiting for its completion.
 * WRs posted before the call by the same thread are handed to the engine
 * before fn runs.  fn must not wait for the transport lcore.  fn returns
 * 0 or -errno, and so does tp_dev_call.
 */
int tp_dev_call(struct tp_dev *dev, int (*fn)(void *arg), void *arg);
/*
 * The same on one engine: fn runs on that engine's lcore alone (between
 * two of its rounds) while the device's other engines keep running; the
 * caller waits for that engine only.  A QP's control verbs (create,
 * modify, query, destroy) run on the engine that owns it: tp_qp_call.
 * Device-wide ones (CQ, AH) on engine 0: tp_dev_call.
 */
int tp_engine_call(struct tp_engine *eng, int (*fn)(void *arg), void *arg);
/*
 * Dedicated transport lcore only: the lcore of the device's engine 0
 * calls fn(arg) after each of that engine's rounds (after it published
 * the round's completions), e.g. a daemon's poller of work queues its
 * clients write in shared memory, which then costs no thread hop.  fn runs
 * as the lcore's own code: it may post, poll CQs and make control calls
 * (tp_engine_call runs them inline there) but must never wait for another
 * thread; it returns the work it found (the lcore pauses only after a
 * round in which nothing had any).  fn NULL removes it.  Set by a command
 * between two rounds: once this returns, no call of the previous hook is
 * running and the next round calls the new one.  Called from another
 * thread than the lcore; 0, or -EINVAL (not on a transport lcore, or
 * called from it).
 */
int tp_dev_set_round_hook(struct tp_dev *dev, unsigned int (*fn)(void *arg), void *arg);
int tp_qp_call(struct tp_qp *qp, int (*fn)(void *arg), void *arg);
/* The engine a new QP goes to (the one with the fewest QPs), and engine k. */
struct tp_engine *tp_dev_qp_engine(struct tp_dev *dev);
struct tp_engine *tp_dev_engine(const struct tp_dev *dev, unsigned int k);

/*
 * Asynchronous events (tp_event.c).  The engine raises them into the
 * device's ring (multi-producer) and adds one per event to eventfd fd
 * (the context's async_fd; -1: none).  tp_dev_event_take: the oldest, 0
 * or -EAGAIN; one consumer at a time, from any thread.  Before a QP or CQ
 * is destroyed, tp_*_mute_events (a command, any thread) makes sure no
 * event for it is raised any more (-EBUSY: the CQ still has QPs).
 */
void tp_dev_set_event_fd(struct tp_dev *dev, int fd);
int tp_dev_event_take(struct tp_dev *dev, struct droce_async_event *ev);
int tp_qp_mute_events(struct tp_qp *qp);
int tp_cq_mute_events(struct tp_cq *cq);

/* Creators: 0 and *out, or -errno (-EINVAL, -ENOMEM, ...). */
int tp_cq_create(struct tp_dev *dev, int cqe, struct tp_cq **out);
int tp_cq_destroy(struct tp_cq *cq);
/* Completions taken (up to n), or -EINVAL (n < 0), -EOVERFLOW (overrun). */
int tp_cq_poll(struct tp_cq *cq, int n, struct droce_wc *wc);
struct droce_cq *tp_cq_pub(struct tp_cq *cq);
struct tp_cq *tp_cq_from_pub(struct droce_cq *cq);
/*
 * Completion events (IBTA 11.4.2.2), any thread: the eventfd written once
 * per arm (set before the CQ gets QPs; -1: none), the arm (the next
 * completion, or with solicited_only the next solicited or error one), and
 * one event fired taken (false: none ready).
 */
void tp_cq_set_event_fd(struct tp_cq *cq, int fd);
void tp_cq_arm(struct tp_cq *cq, bool solicited_only);
bool tp_cq_take_event(struct tp_cq *cq);
/*
 * From now on a receive completion of a message with the solicited event
 * bit (BTH SE, IBTA 9.2.3: a SEND or an RDMA WRITE with immediate) carries
 * TP_WC_SOLICITED in its wc_flags, for a poller that decides solicited-only
 * wake-ups of its own (droced's queue regions: the application's arm is
 * droced's to fire).  A bit none of droce.h's (nor ibverbs') flags uses:
 * such a poller removes it before the completion goes further.
 */
#define TP_WC_SOLICITED (1u << 31)
void tp_cq_flag_solicited(struct tp_cq *cq);

/* On eng (tp_dev_qp_engine, or init->srq's engine), through
 * tp_engine_call; init->srq is a struct tp_srq's pub (-EINVAL: another
 * engine's); -ENOMEM also when the device has max_qp QPs */
int tp_qp_create(struct tp_engine *eng, uint32_t pd, struct tp_cq *scq,
		 struct tp_cq *rcq, const struct droce_qp_init_attr *init,
		 struct tp_qp **out);
int tp_qp_modify(struct tp_qp *qp, const struct droce_qp_attr *attr, int mask);
int tp_qp_query(struct tp_qp *qp, struct droce_qp_attr *attr,
		struct droce_qp_init_attr *init);
int tp_qp_destroy(struct tp_qp *qp);
/* droce_qp_set_cc: 0, -EINVAL (no such algorithm), -EBUSY (RTS or later) */
int tp_qp_set_cc(struct tp_qp *qp, const char *algo);
/* droce_qp_set_sr: 0, -EINVAL (not RC), -EBUSY (RTR or later) */
int tp_qp_set_sr(struct tp_qp *qp, bool on);
/*
 * Make a new UD QP (in RESET) the device's GSI QP: its QPN becomes 1
 * (IBTA 13.4.6), its old one free.  0, -EBUSY (the device has one),
 * -EINVAL (not a UD QP in RESET, or QPN 1 belongs to another engine).
 */
int tp_qp_make_gsi(struct tp_qp *qp);
struct droce_qp *tp_qp_pub(struct tp_qp *qp);
struct tp_qp *tp_qp_from_pub(struct droce_qp *qp);
/* what tp_qp_create granted (e.g. the inline room, droce_qp_min_inline) */
struct droce_qp_cap tp_qp_cap(const struct tp_qp *qp);

/*
 * Multicast (tp_mcast.c): a UD QP joins or leaves the group gid (IPv6
 * ff00::/8 or IPv4-mapped 224.0.0.0/4).  Attach: 0 (also when attached
 * already), -EINVAL (not UD, not a group), -ENOMEM (a limit below
 * reached), -EOPNOTSUPP (the device has several engines).  Detach: 0,
 * -EINVAL (the QP is not in the group).  Limits as query_device reports
 * them (tp_mcast_limits: 0 where attach answers -EOPNOTSUPP).
 */
#define TP_MCAST_MAX_GRP 256
#define TP_MCAST_MAX_QP_ATTACH 64
#define TP_MCAST_MAX_TOTAL_ATTACH 1024
int tp_mcast_attach(struct tp_qp *qp, const uint8_t gid[16]);
int tp_mcast_detach(struct tp_qp *qp, const uint8_t gid[16]);
void tp_mcast_limits(const struct tp_dev *dev, struct droce_device_attr *a);

/* 0, or -EINVAL / -ENOMEM (queue full) with *bad_wr the first WR not
 * posted (droce_post_send returns the positive errno, as ibverbs). */
int tp_post_send(struct tp_qp *qp, struct droce_send_wr *wr,
		 struct droce_send_wr **bad_wr);
int tp_post_recv(struct tp_qp *qp, struct droce_recv_wr *wr,
		 struct droce_recv_wr **bad_wr);

/*
 * Shared receive queues (tp_srq.c).  An SRQ lives on one engine (create:
 * tp_dev_qp_engine's choice; its QPs are created there, tp_srq_engine),
 * and create, modify, query and destroy run there (tp_engine_call):
 * 0 or -EINVAL / -ENOMEM; destroy -EBUSY while QPs use it.  attr is
 * updated with what was created.  tp_post_srq_recv as tp_post_recv.
 */
int tp_srq_create(struct tp_engine *eng, uint32_t pd, struct droce_srq_attr *attr,
		  struct tp_srq **out);
int tp_srq_modify(struct tp_srq *srq, const struct droce_srq_attr *attr, int mask);
int tp_srq_query(struct tp_srq *srq, struct droce_srq_attr *attr);
int tp_srq_destroy(struct tp_srq *srq);
/* A command on the SRQ's engine: no event for it once this returned. */
int tp_srq_mute_events(struct tp_srq *srq);
struct tp_engine *tp_srq_engine(struct tp_srq *srq);
struct droce_srq *tp_srq_pub(struct tp_srq *srq);
struct tp_srq *tp_srq_from_pub(struct droce_srq *srq);
int tp_post_srq_recv(struct tp_srq *srq, struct droce_recv_wr *wr,
		     struct droce_recv_wr **bad_wr);

/*
 * Address handles.  Each has an index in dev's table (its pub.handle,
 * 1 .. TP_MAX_AH - 1) and the PD it was made on: a UD work request names
 * it by index, and the engine uses it only for a QP of that PD (else the
 * WQE completes DROCE_WC_LOC_QP_OP_ERR), so a WQE never holds a pointer
 * the engine trusts.  tp_ah_create on dev's first engine (tp_dev_call:
 * resolving may send ARP/ND); tp_ah_destroy not on an engine's lcore: the
 * slot is emptied on the first engine, then every engine passes a round
 * before the AH is freed.  -ENOSPC: the table is full.
 */
#define TP_MAX_AH (1u << 20)
int tp_ah_create(struct tp_dev *dev, uint32_t pd, const struct droce_ah_attr *attr,
		 struct tp_ah **out);
void tp_ah_destroy(struct tp_dev *dev, struct tp_ah *ah);
struct droce_ah *tp_ah_pub(struct tp_ah *ah);
struct tp_ah *tp_ah_from_pub(struct droce_ah *ah);

#endif /* DROCE_TRANSPORT_H */
