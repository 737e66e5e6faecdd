/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-QP timers, run by the lcore that owns the QP from its progress loop:
 * the retransmit (local ACK) timer, 4.096 us x 2^timeout (IBTA 9.7.6.1.3;
 * timeout 0 = infinite), and the RNR timer from the NAK's 5-bit code
 * (IBTA table 45).  Deadlines are TSC values; resolution is the TSC's.
 */
#include <rte_cycles.h>

#include "tp_private.h"

/* RNR NAK timer field -> microseconds (IBTA 1.4 vol 1, table 45). */
static const uint32_t rnr_timer_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

uint64_t
tp_rnr_timer_us(uint8_t code)
{
	return rnr_timer_us[code & 31];
}

static uint64_t
us_to_tsc(const struct tp_dev *dev, uint64_t us)
{
	return us * dev->tsc_hz / 1000000;
}

void
tp_timer_arm_retrans(struct tp_qp *qp)
{
	uint8_t t = qp->attr.timeout;
	uint64_t us;

	if (t == 0) {			/* infinite: never times out */
		qp->comp.retrans_deadline = 0;
		return;
	}
	us = (UINT64_C(4096) << t) / 1000;	/* 4.096 us x 2^t */
	qp->comp.retrans_deadline = rte_get_timer_cycles() +
				    us_to_tsc(qp->dev, us > 0 ? us : 1);
}

void
tp_timer_disarm_retrans(struct tp_qp *qp)
{
	qp->comp.retrans_deadline = 0;
}

void
tp_timer_arm_rnr(struct tp_qp *qp, uint8_t rnr_code)
{
	qp->comp.rnr_deadline = rte_get_timer_cycles() +
				us_to_tsc(qp->dev, tp_rnr_timer_us(rnr_code));
}

void
tp_timer_run(struct tp_qp *qp, uint64_t now)
{
	if (qp->comp.rnr_deadline != 0 && now >= qp->comp.rnr_deadline) {
		qp->comp.rnr_deadline = 0;
		qp->req.wait_rnr = false;
		if (tp_qp_can_send(qp)) {
			tp_req_rewind(qp);
			tp_timer_arm_retrans(qp);
		}
	}
	if (qp->comp.retrans_deadline != 0 && now >= qp->comp.retrans_deadline)
		tp_comp_timeout(qp);
}
