/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control "none": droce's behaviour before the seam.  No rate,
 * no pacing (the requester never asks); go-back-N's window alone: it grows
 * by what is acknowledged and shrinks on a loss.  CNPs are ignored.
 */
#include "tp_private.h"

static void
none_init(struct tp_qp *qp, uint64_t now)
{
	(void)qp;
	(void)now;
}

static void
none_on_ack(struct tp_qp *qp, uint32_t npsn)
{
	tp_cc_window_ack(qp, npsn);
}

static void
none_on_loss(struct tp_qp *qp, bool timeout, uint64_t now)
{
	(void)now;
	tp_cc_window_loss(qp, timeout);
}

static void
none_on_sent(struct tp_qp *qp, uint32_t bytes, uint64_t now)
{
	(void)qp;
	(void)bytes;
	(void)now;
}

static uint64_t
none_rate(const struct tp_qp *qp)
{
	(void)qp;
	return 0;
}

const struct tp_cc_ops tp_cc_none_ops = {
	.name = "none",
	.paced = false,
	.init = none_init,
	.on_ack = none_on_ack,
	.on_cnp = NULL,
	.on_loss = none_on_loss,
	.on_timer = NULL,
	.on_sent = none_on_sent,
	.rate = none_rate,
};
