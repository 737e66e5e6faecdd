/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control "dcqcn": DCQCN's reaction point (tp_dcqcn.c) as a
 * rate the pacer spaces the QP's request packets to.  go-back-N's window
 * stays as with "none" (losses are still repaired by it).
 */
#include "tp_private.h"

static void
dcqcn_init(struct tp_qp *qp, uint64_t now)
{
	tp_dcqcn_init(&qp->cc.u.dcqcn, &qp->dev->cfg.cc.params, qp->dev->tsc_hz, now);
}

static void
dcqcn_on_ack(struct tp_qp *qp, uint32_t npsn)
{
	tp_cc_window_ack(qp, npsn);
}

static bool
dcqcn_on_cnp(struct tp_qp *qp, uint64_t now)
{
	return tp_dcqcn_cnp(&qp->cc.u.dcqcn, now);
}

static void
dcqcn_on_loss(struct tp_qp *qp, bool timeout, uint64_t now)
{
	(void)now;
	tp_cc_window_loss(qp, timeout);
}

static void
dcqcn_on_timer(struct tp_qp *qp, uint64_t now)
{
	tp_dcqcn_advance(&qp->cc.u.dcqcn, now);
}

static void
dcqcn_on_sent(struct tp_qp *qp, uint32_t bytes, uint64_t now)
{
	(void)now;
	tp_dcqcn_sent(&qp->cc.u.dcqcn, bytes);
}

static uint64_t
dcqcn_rate(const struct tp_qp *qp)
{
	return qp->cc.u.dcqcn.rc;
}

const struct tp_cc_ops tp_cc_dcqcn_ops = {
	.name = "dcqcn",
	.paced = true,
	.init = dcqcn_init,
	.on_ack = dcqcn_on_ack,
	.on_cnp = dcqcn_on_cnp,
	.on_loss = dcqcn_on_loss,
	.on_timer = dcqcn_on_timer,
	.on_sent = dcqcn_on_sent,
	.rate = dcqcn_rate,
};
