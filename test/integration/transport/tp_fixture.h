/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two droce contexts joined by a virtual wire, in one process and one
 * thread (or, after fx_set_transport_lcore, with both engines on one
 * transport lcore): the shape every transport integration test starts from.
 */
#ifndef TP_FIXTURE_H
#define TP_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "droce.h"
#include "roce_wire.h"
#include "vwire.h"

struct fx_end {
	struct droce_context *ctx;
	struct droce_link *link;	/* the vwire end */
	struct droce_link *tap;		/* fx_set_tap's wrapper around it, or NULL */
	struct droce_link *loop;	/* fx_set_loopback's wrapper, or NULL */
	struct droce_pd *pd;
	struct droce_mr *mr;		/* the whole buffer, every right */
	uint8_t *buf;
	size_t len;
	struct droce_cq *cq;		/* send and receive CQ */
	struct droce_qp *qp;
	uint8_t gid[16];
};

struct fx {
	struct fx_end a;
	struct fx_end b;
};

struct fx_qp_opts {
	enum droce_qp_type type;	/* 0: RC */
	enum droce_mtu mtu;		/* 0: 1024 */
	uint32_t psn;			/* start PSN of both directions */
	uint8_t timeout;		/* 0: 8 (about 1 ms) */
	uint8_t retry_cnt;		/* default 7 */
	uint8_t rnr_retry;		/* default 7 */
	bool retry_set;			/* use retry_cnt/rnr_retry as given */
	uint8_t min_rnr_timer;		/* 0: 1 (10 us) */
	uint8_t max_rd_atomic;		/* 0: 16 */
	unsigned int access;		/* 0: remote write/read/atomic */
	uint32_t max_wr;		/* 0: 256 */
	bool ipv6;
	bool sq_sig_all;		/* every send WR completes */
	bool b_rtr_only;		/* leave b's QP in RTR */
	bool no_inline;			/* max_inline_data 0 */
	struct droce_srq *b_srq;	/* b's QP takes its receive WQEs there */
	const char *a_cc;		/* a's QP: droce_qp_set_cc (NULL: the device's) */
	bool a_sr, b_sr;		/* droce_qp_set_sr(qp, true) on a's / b's QP */
};

/* EAL once per process (--no-huge unless DROCE_EAL_HUGE=1); says which. */
void fx_eal_init(const char *prog);
/* The same with an EAL lcore list ("0,1" for a transport lcore). */
void fx_eal_init_lcores(const char *prog, const char *lcores);
/*
 * Contexts opened from now on run their engines on transport lcore
 * `lcore` (dedicated mode, verbs_run_on_lcore); -1 (the default):
 * run-to-completion.  fx_poll/fx_spin work in both modes.
 */
void fx_set_transport_lcore(int lcore);
/* EAL on lcores 0 and lcore (exits if that lcore is not there). */
void fx_eal_init_with_lcore(const char *prog, int lcore);
/* The same, and the engines of contexts opened later on lcore. */
void fx_eal_init_transport_lcore(const char *prog, int lcore);
/* Several transport lcores (QPs sharded by QPN): n 0 clears. */
void fx_set_transport_lcores(const unsigned int *lcores, unsigned int n);

/*
 * main() of a test run in the three run modes: EAL on lcores 0, 1 and 2
 * (1 and 2 share CPU 1: the machine has 2), then the group as
 * name_run_to_completion, name_transport_lcore (transport lcore 1) and
 * name_two_shards (transport lcores 1 and 2).  Returns main()'s exit
 * status (fx_result).  During a group: fx_dedicated() says whether
 * transport lcores run the engines, fx_qp_timeout() is the local ACK
 * timeout for its QPs (longer when the two shard lcores share a CPU, lcores
 * README).
 */
struct CMUnitTest;
int fx_run_modes(const char *prog, const char *name, const struct CMUnitTest *tests,
		 size_t ntests);
bool fx_dedicated(void);
uint8_t fx_qp_timeout(void);

/*
 * The device configuration of the ends opened from now on (host_stack is
 * fx_open's to set); NULL: the defaults.  DROCE_TEST_CC=none|dcqcn in the
 * environment then sets its congestion control.
 */
struct tp_dev_config;
void fx_set_dev_config(const struct tp_dev_config *cfg);
/*
 * The ends opened from now on drive their vwire end through a capture
 * (lib/link droce_link_tap_wrap) calling fn with arg 0 for a, 1 for b;
 * NULL: none.
 */
void fx_set_tap(droce_link_tap_fn *fn);
/*
 * The ends opened from now on loop back as a port does (lib/link
 * droce_link_loop_wrap, as lib/device opens a port): frames to their own
 * MAC, and a copy of their RoCEv2 multicast frames.  Not with a tap.
 */
void fx_set_loopback(bool on);

/* Contexts, PDs, buffers (filled with a pattern), MRs, CQs over a vwire. */
void fx_open(struct fx *f, const struct vwire_config *wire, size_t buflen);
/*
 * The same with a host stack on each end (tp_dev_config.host_stack, as on
 * a real port) and no static neighbour: the ends resolve each other by
 * ARP/ND, starting when a QP goes to RTR.
 */
void fx_open_resolving(struct fx *f, const struct vwire_config *wire, size_t buflen);
void fx_close(struct fx *f);
/* Create and connect a QP pair (RESET -> INIT -> RTR -> RTS). */
void fx_connect(struct fx *f, const struct fx_qp_opts *o);
void fx_destroy_qps(struct fx *f);
/*
 * Another connected QP pair on the same ends (their CQs), as fx_connect;
 * the caller destroys them (droce_destroy_qp) before fx_close.
 */
void fx_connect_more(struct fx *f, const struct fx_qp_opts *o, struct droce_qp **qa,
		     struct droce_qp **qb);

/* Run both engines until cq yields n completions or the time runs out. */
int fx_poll(struct fx *f, struct droce_cq *cq, struct droce_wc *wc, int n,
	    double timeout_s);
/* Run both engines for a while (e.g. to let late packets drain). */
void fx_spin(struct fx *f, double seconds);

/*
 * Asynchronous events (droce_get_async_event) of one end: its async_fd
 * made non-blocking; an event waiting (poll, no wait); the next event
 * within 10 s of both ends' progress, not acked; the next event is type,
 * for obj (the element its type names: CQ, SRQ, MR, MW or QP), acked; none
 * waiting (the fd not readable, a get fails with EAGAIN).
 */
void fx_events_nonblock(struct fx_end *e);
bool fx_event_ready(const struct fx_end *e);
void fx_wait_event(struct fx *f, struct fx_end *e, struct droce_async_event *ev);
void fx_expect_event(struct fx *f, struct fx_end *e, enum droce_event_type type,
		     const void *obj);
void fx_expect_no_event(struct fx_end *e);

/* One work request, posted; returns the post status. */
int fx_post(struct droce_qp *qp, enum droce_wr_opcode op, uint64_t wr_id,
	    void *laddr, uint32_t len, uint32_t lkey, uint64_t raddr,
	    uint32_t rkey, unsigned int flags);
int fx_post_recv(struct droce_qp *qp, uint64_t wr_id, void *addr, uint32_t len,
		 uint32_t lkey);
/* fx_post (signalled) on e's QP, then its one completion on e's CQ
 * (within 10 s, wr_id checked): its status. */
enum droce_wc_status fx_post_wait(struct fx *f, struct fx_end *e,
				  enum droce_wr_opcode op, uint64_t wr_id,
				  void *laddr, uint32_t len, uint64_t raddr,
				  uint32_t rkey);
/* A completion's wr_id, opcode and status, as expected. */
void fx_assert_wc(const struct droce_wc *wc, uint64_t wr_id,
		  enum droce_wc_opcode opcode, enum droce_wc_status status);
/* Every one of len bytes at p is val (memory no one may have written). */
void fx_assert_bytes(const uint8_t *p, size_t len, uint8_t val);
/* The QP's state (droce_query_qp). */
enum droce_qp_state fx_qp_state(struct droce_qp *qp);

/*
 * The run's fault seed: DROCE_SEED=N replays a run; otherwise one is drawn
 * afresh, so that repeating a test explores other fault patterns.  Drawn
 * and printed at the first call, the same value after that.
 */
uint64_t fx_seed(void);
/* main()'s exit status from cmocka's; names the seed again on a failure. */
int fx_result(int failed);

/*
 * What one wire direction did, as it reported it (vwire_fault_cb): frames
 * lost to the drop fault and bits flipped, the flips split by whether a
 * receiver can detect them.  lost (optional) is told of every frame the
 * receiver cannot have had (dropped, or a detectable flip), parsed as it
 * was sent, on the sending engine's thread.
 */
struct fx_faults_seen {
	uint64_t dropped;
	uint64_t detectable;	/* under the IPv4 checksum, parsing or the ICRC */
	uint64_t undetectable;	/* in fields no check covers (vwire.h) */
	uint64_t lcores;	/* the EAL lcores that sent them, a bit each */
	void (*lost)(void *arg, const struct roce_pkt *sent, const uint8_t *frame);
	void *lost_arg;
};
/* Count into seen (cleared) the faults on the frames these faults apply to. */
void fx_watch_faults(struct vwire_faults *faults, struct fx_faults_seen *seen);
/*
 * Run the engines until nothing is left on the wire, then assert for each
 * direction that the wire's counts are the ones reported and that the
 * receiver dropped exactly the detectable flips (icrc_err + malformed_pkts).
 */
void fx_check_faults(struct fx *f, const struct fx_faults_seen *ab,
		     const struct fx_faults_seen *ba);
/* Frames one direction still holds (sent, neither lost nor delivered). */
uint64_t fx_wire_in_flight(const struct droce_link *sender);

void fx_fill(uint8_t *p, size_t len, uint32_t seed);
uint64_t fx_counter(struct fx_end *e, const char *name);
double fx_now(void);

#endif /* TP_FIXTURE_H */
