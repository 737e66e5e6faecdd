/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The congestion-control seam (as VPP's tcp_cc_algorithm): one file per
 * algorithm (tp_cc_none.c, tp_cc_dcqcn.c) behind struct tp_cc_ops; the
 * requester asks before each packet (tp_cc_may_send, only for a QP whose
 * algorithm paces) and reports what it sent; the completer reports
 * acknowledgements and losses; the receive path reports CNPs.  Nothing
 * else reads an algorithm's state.  The notification point (answering
 * ECN-CE with CNPs), the pacer and the UDP source port policy live in
 * tp_cc.c.  Each QP gets its device's algorithm (tp_dev_config.cc).
 */
#ifndef TP_CC_H
#define TP_CC_H

#include <stdbool.h>
#include <stdint.h>

#include "tp_dcqcn.h"
#include "tp_wheel.h"

struct tp_qp;

struct tp_cc_ops {
	const char *name;
	/* grants a rate (rate() below): the requester asks the pacer */
	bool paced;
	/* the QP's connection starts (RTS): state from scratch */
	void (*init)(struct tp_qp *qp, uint64_t now);
	/* npsn more PSNs acknowledged (no clock: no TSC read per ACK) */
	void (*on_ack)(struct tp_qp *qp, uint32_t npsn);
	/* a CNP for this QP (reaction point); true when it was acted on */
	bool (*on_cnp)(struct tp_qp *qp, uint64_t now);
	/* go-back-N: timeout true for a retransmit timeout, false for a
	 * sequence NAK */
	void (*on_loss)(struct tp_qp *qp, bool timeout, uint64_t now);
	/* time passes (before the pacer decides) */
	void (*on_timer)(struct tp_qp *qp, uint64_t now);
	/* a request frame of bytes left */
	void (*on_sent)(struct tp_qp *qp, uint32_t bytes, uint64_t now);
	/* the rate granted, bit/s (paced algorithms) */
	uint64_t (*rate)(const struct tp_qp *qp);
};

extern const struct tp_cc_ops tp_cc_none_ops;
extern const struct tp_cc_ops tp_cc_dcqcn_ops;

/* A QP's congestion-control state (qp->cc). */
struct tp_cc_qp {
	const struct tp_cc_ops *ops;
	bool paced;			/* ops->paced: all the fast path reads */
	/* pacer */
	uint64_t next_tsc;		/* the next frame not before this */
	uint64_t rate;			/* cyc_per_kib was computed for this */
	uint64_t cyc_per_kib;		/* TSC cycles per 1024 bytes at rate */
	struct tp_wheel_timer pace_tmr;
	/* notification point */
	uint64_t np_last_tsc;		/* when the last CNP was sent */
	bool np_sent;			/* a CNP was sent since RTS */
	/* UDP source port policy: retransmission timeouts seen (rotate) */
	uint32_t sport_rotation;
	union {
		struct tp_dcqcn dcqcn;
	} u;
};

/* what tp_dev_qp_snapshot shows of it */
struct tp_cc_snapshot {
	const char *algo;
	uint64_t rate_bps;		/* 0: unpaced */
	uint64_t target_bps;
	uint32_t alpha;
	uint64_t cnps;
	uint64_t cuts;
};

#endif /* TP_CC_H */
