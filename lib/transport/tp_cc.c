/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The congestion-control seam's common part (tp_cc.h): the device's
 * configuration, choosing a QP's algorithm, the pacer, the notification
 * point (ECN-CE in, CNP out), the ECN marks and the UDP source port of a
 * QP's packets.  The algorithms are tp_cc_none.c and tp_cc_dcqcn.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "tp_private.h"

/*
 * A QP the engine visits late (a round ran late, the wheel's tick, the OS
 * took the lcore) may catch up on up to this much of what its rate
 * allowed meanwhile, and no more: a burst of 16 KiB at most.
 */
#define TP_PACE_BURST_KIB 16

static const char *const algo_names[TP_CC_ALGO_MAX] = {
	[TP_CC_ALGO_NONE] = "none",
	[TP_CC_ALGO_DCQCN] = "dcqcn",
};

static const struct tp_cc_ops *const algo_ops[TP_CC_ALGO_MAX] = {
	[TP_CC_ALGO_NONE] = &tp_cc_none_ops,
	[TP_CC_ALGO_DCQCN] = &tp_cc_dcqcn_ops,
};

static const char *const sport_mode_names[TP_SPORT_MAX] = {
	[TP_SPORT_HASH] = "hash",
	[TP_SPORT_FIXED] = "fixed",
	[TP_SPORT_ROTATE] = "rotate",
};

const char *
tp_cc_algo_name(unsigned int algo)
{
	return algo < TP_CC_ALGO_MAX ? algo_names[algo] : NULL;
}

const char *
tp_sport_mode_name(unsigned int mode)
{
	return mode < TP_SPORT_MAX ? sport_mode_names[mode] : NULL;
}

void
tp_cc_config_default(struct tp_cc_config *c)
{
	memset(c, 0, sizeof(*c));
	c->given = true;
	c->algo = TP_CC_ALGO_NONE;
	c->ecn = ROCE_ECN_ECT0;
	c->dscp = 0;
	c->sport_mode = TP_SPORT_HASH;
	c->sport_fixed = 0xc000;
	tp_cc_params_default(&c->params);
}

static int
parse_num(const char *value, uint64_t max, uint64_t *out)
{
	char *end;

	if (*value == '\0' || *value == '-')
		return -EINVAL;
	errno = 0;
	*out = strtoull(value, &end, 0);
	return *end == '\0' && errno == 0 && *out <= max ? 0 : -EINVAL;
}

static int
parse_name(const char *value, const char *const *names, unsigned int n, uint8_t *out)
{
	for (unsigned int i = 0; i < n; i++) {
		if (strcmp(value, names[i]) == 0) {
			*out = (uint8_t)i;
			return 0;
		}
	}
	return -EINVAL;
}

int
tp_cc_config_set(struct tp_cc_config *c, const char *key, const char *value)
{
	uint64_t v;
	int rc;

	if (!c->given)
		tp_cc_config_default(c);
	if (strcmp(key, "cc") == 0)
		return parse_name(value, algo_names, TP_CC_ALGO_MAX, &c->algo);
	if (strcmp(key, "udp_sport") == 0)
		return parse_name(value, sport_mode_names, TP_SPORT_MAX, &c->sport_mode);
	if (strcmp(key, "ecn") == 0 || strcmp(key, "dscp") == 0 ||
	    strcmp(key, "udp_sport_fixed") == 0) {
		bool ecn = key[0] == 'e', dscp = key[0] == 'd';

		rc = parse_num(value, ecn ? 3 : dscp ? 63 : 0xffff, &v);
		if (rc != 0)
			return rc;
		if (ecn)
			c->ecn = (uint8_t)v;
		else if (dscp)
			c->dscp = (uint8_t)v;
		else if (v < 0xc000)	/* RoCEv2 A17.5: 0xC000-0xFFFF */
			return -EINVAL;
		else
			c->sport_fixed = (uint16_t)v;
		return 0;
	}
	for (unsigned int i = 0; i < TP_CC_PARAM_MAX; i++) {
		if (strcmp(key, tp_cc_param_name(i)) != 0)
			continue;
		if (parse_num(value, UINT32_MAX, &v) != 0)
			return -EINVAL;
		return tp_cc_param_set(&c->params, key, v) == 0 ? 0 : -EINVAL;
	}
	return -ENOENT;
}

/* ---- a QP's algorithm ----------------------------------------------------- */

void
tp_cc_qp_init(struct tp_qp *qp)
{
	const struct tp_cc_config *c = &qp->dev->cfg.cc;

	qp->cc.ops = algo_ops[c->algo < TP_CC_ALGO_MAX ? c->algo : TP_CC_ALGO_NONE];
	qp->cc.paced = qp->cc.ops->paced && qp->pub.qp_type != DROCE_QPT_UD;
	tp_cc_qp_start(qp);
}

/*
 * qp's own algorithm instead of the device's (droce_qp_set_cc): before RTS
 * only, since an algorithm's state starts when the QP enters RTS
 * (tp_cc_qp_start at the send queue's first PSN) and the pacer's timer may
 * run from then on.
 */
int
tp_qp_set_cc(struct tp_qp *qp, const char *algo)
{
	uint8_t a;

	if (algo == NULL || parse_name(algo, algo_names, TP_CC_ALGO_MAX, &a) != 0)
		return -EINVAL;
	if (qp->pub.state != DROCE_QPS_RESET && qp->pub.state != DROCE_QPS_INIT &&
	    qp->pub.state != DROCE_QPS_RTR)
		return -EBUSY;
	qp->cc.ops = algo_ops[a];
	qp->cc.paced = qp->cc.ops->paced && qp->pub.qp_type != DROCE_QPT_UD;
	tp_cc_qp_start(qp);
	return 0;
}

void
tp_cc_qp_start(struct tp_qp *qp)
{
	qp->cc.next_tsc = 0;
	qp->cc.rate = 0;
	qp->cc.np_sent = false;
	qp->cc.sport_rotation = 0;
	qp->cc.ops->init(qp, rte_get_timer_cycles());
}

void
tp_cc_on_ack(struct tp_qp *qp, uint32_t npsn)
{
	qp->cc.ops->on_ack(qp, npsn);
}

void
tp_cc_on_loss(struct tp_qp *qp, bool timeout)
{
	qp->cc.ops->on_loss(qp, timeout, rte_get_timer_cycles());
	if (timeout && qp->dev->cfg.cc.sport_mode == TP_SPORT_ROTATE &&
	    qp->pub.qp_type != DROCE_QPT_UD) {
		/* another path for what follows (UET's entropy rotation) */
		qp->cc.sport_rotation++;
		qp->udp_sport = tp_cc_udp_sport(qp, qp->attr.dest_qp_num,
						qp->av.flow_label);
		qp->tx_tmpl_ok = false;
		tp_count(qp->eng, TP_CNT_SPORT_ROTATIONS);
	}
}

/* ---- today's window (go-back-N's, shared by every algorithm) -------------- */

void
tp_cc_window_ack(struct tp_qp *qp, uint32_t npsn)
{
	/* the window grows by what was acknowledged (doubling per round trip) */
	qp->req.window = RTE_MIN(qp->req.window + npsn, (uint32_t)TP_MAX_INFLIGHT_PKTS);
}

void
tp_cc_window_loss(struct tp_qp *qp, bool timeout)
{
	/* a timeout (no response at all) shrinks to the minimum, a gap halves */
	qp->req.window = timeout ? TP_MIN_INFLIGHT_PKTS :
			 RTE_MAX(qp->req.window / 2, (uint32_t)TP_MIN_INFLIGHT_PKTS);
}

/* ---- the pacer -------------------------------------------------------------- */

/*
 * A paced QP may send now?  The algorithm's timers first catch up; when
 * the pacer says not yet, the QP's pace timer is armed for that instant
 * (its expiry marks the QP ready) and the requester stops.
 */
bool
tp_cc_may_send(struct tp_qp *qp)
{
	uint64_t now = rte_get_timer_cycles();

	if (qp->cc.ops->on_timer != NULL)
		qp->cc.ops->on_timer(qp, now);
	if (qp->cc.next_tsc <= now)
		return true;
	tp_count(qp->eng, TP_CNT_CC_PACE_WAITS);
	tp_timer_arm_pace(qp, qp->cc.next_tsc);
	return false;
}

/* A paced QP sent a frame of bytes: the next one waits bytes at its rate. */
void
tp_cc_sent(struct tp_qp *qp, uint32_t bytes)
{
	uint64_t now = rte_get_timer_cycles();
	uint64_t hz = qp->dev->tsc_hz;
	uint64_t rate, base, slack;


	qp->cc.ops->on_sent(qp, bytes, now);
	rate = qp->cc.ops->rate(qp);
	if (rate != qp->cc.rate) {
		qp->cc.rate = rate;
		qp->cc.cyc_per_kib = rate != 0 ? hz * 8 * 1024 / rate : 0;
	}
	slack = TP_PACE_BURST_KIB * qp->cc.cyc_per_kib;
	base = qp->cc.next_tsc;
	if (base + slack < now)
		base = now - slack;
	qp->cc.next_tsc = base + ((bytes * qp->cc.cyc_per_kib) >> 10);
}

/* ---- reaction and notification points ----------------------------------- */

/* A CNP names this QP (annex A17.9): its algorithm reacts, or ignores it. */
void
tp_cc_on_cnp(struct tp_qp *qp)
{
	bool acted = qp->cc.ops->on_cnp != NULL &&
		     qp->cc.ops->on_cnp(qp, rte_get_timer_cycles());

	tp_count(qp->eng, acted ? TP_CNT_RP_CNP_HANDLED : TP_CNT_RP_CNP_IGNORED);
}

/*
 * A packet for qp arrived marked CE (annex A17.9.1): answer with a CNP to
 * the QP that sent it, at most one per np_min_time_between_cnps per QP.
 * RC and UC: to the connected peer QP; UD: to the packet's source QP
 * (DETH) at the address it came from (the same per-QP limit, over every
 * source of the UD QP, as mlx5's per-QP notification point).
 */
void
tp_cc_np_ce(struct tp_qp *qp, const struct roce_pkt *pkt)
{
	const struct tp_cc_params *p = &qp->dev->cfg.cc.params;
	uint64_t now, min;
	int rc;

	tp_count(qp->eng, TP_CNT_NP_ECN_MARKED);
	now = rte_get_timer_cycles();
	min = qp->dev->tsc_hz * p->np_min_time_between_cnps / 1000000;
	if (qp->cc.np_sent && now - qp->cc.np_last_tsc < min) {
		tp_count(qp->eng, TP_CNT_NP_CNP_LIMITED);
		return;
	}
	if (qp->pub.qp_type == DROCE_QPT_UD)
		rc = tp_net_send_cnp_to(qp, pkt, (uint8_t)p->np_cnp_dscp);
	else
		rc = tp_net_send_cnp(qp, (uint8_t)p->np_cnp_dscp);
	if (rc != 0)
		return;
	qp->cc.np_sent = true;
	qp->cc.np_last_tsc = now;
	tp_count(qp->eng, TP_CNT_NP_CNP_SENT);
}

/* ---- what the packets carry ------------------------------------------------- */

/*
 * The IP TOS / traffic class of a QP's packets: the address vector's DSCP
 * (or the device's dscp when it gives none) and the device's ECN
 * codepoint (ECT(0) by default: a switch may then mark CE instead of
 * dropping), unless the address vector asks for one itself.
 */
uint8_t
tp_cc_tos(const struct tp_dev *dev, uint8_t traffic_class)
{
	const struct tp_cc_config *c = &dev->cfg.cc;
	uint8_t dscp = traffic_class >> 2 != 0 ? traffic_class >> 2 : c->dscp;
	uint8_t ecn = (traffic_class & ROCE_ECN_MASK) != 0 ?
		      (traffic_class & ROCE_ECN_MASK) : c->ecn;

	return (uint8_t)(dscp << 2 | ecn);
}

/*
 * The UDP source port of a connected QP to rqpn: fixed, or as the kernel
 * (rdma_get_udp_sport: the AV's flow label, or one hashed from the QPN
 * pair), rotated by the retransmission timeouts seen in rotate mode.
 */
uint16_t
tp_cc_udp_sport(const struct tp_qp *qp, uint32_t rqpn, uint32_t flow_label)
{
	const struct tp_cc_config *c = &qp->dev->cfg.cc;
	uint16_t port;

	if (c->sport_mode == TP_SPORT_FIXED)
		return c->sport_fixed;
	port = roce_udp_sport_fl(flow_label, qp->pub.qp_num, rqpn);
	if (c->sport_mode == TP_SPORT_ROTATE && qp->cc.sport_rotation != 0)
		/* an odd step visits all 2^14 ports before repeating */
		port = (uint16_t)(0xc000 | ((port + qp->cc.sport_rotation * 0x9e5u) & 0x3fff));
	return port;
}

void
tp_cc_snapshot(const struct tp_qp *qp, struct tp_cc_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->algo = qp->cc.ops->name;
	if (qp->cc.ops == &tp_cc_dcqcn_ops) {
		const struct tp_dcqcn *d = &qp->cc.u.dcqcn;

		s->rate_bps = d->rc;
		s->target_bps = d->rt;
		s->alpha = d->alpha;
		s->cnps = d->cnps;
		s->cuts = d->cuts;
	}
}
