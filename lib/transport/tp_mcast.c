/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multicast groups of a device (IBTA 10.5, RoCEv2 annex A17.4.5.2): the
 * table MGID -> attached UD QPs that droce_attach_mcast fills and the
 * receive side reads (tp_recv.c tp_mcast_rx) when a frame with the
 * permissive DQPN arrives for a group.  On a RoCE port the join is local:
 * no subnet administrator, the MGID is the IP group address and the frame
 * goes to its Ethernet group address (roce_mcast_mac).
 *
 * The table is engine 0's: attach, detach and a QP's destruction change it
 * in commands on that engine (tp_qp_call), between rounds, so the receive
 * side reads it without a lock.  It holds QPNs, not pointers: the receive
 * side looks each QP up as for a unicast frame.  A device whose QPs are
 * spread over several engines has no multicast (-EOPNOTSUPP): a frame
 * would have to be copied to every engine that owns a member.
 */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "tp_private.h"

struct mcast_args {
	struct tp_qp *qp;
	const uint8_t *gid;
};

const struct tp_mcg *
tp_mcast_find(const struct tp_dev *dev, const uint8_t gid[16])
{
	const struct tp_mcast *t = dev->mcast;

	if (t == NULL)
		return NULL;
	for (uint32_t i = 0; i < t->ngrp; i++)
		if (memcmp(t->grp[i].gid, gid, 16) == 0)
			return &t->grp[i];
	return NULL;
}

static bool
group_has(const struct tp_mcg *g, uint32_t qpn)
{
	for (uint32_t i = 0; i < g->nqp; i++)
		if (g->qpn[i] == qpn)
			return true;
	return false;
}

static int
attach_fn(void *arg)
{
	const struct mcast_args *a = arg;
	struct tp_dev *dev = a->qp->dev;
	struct tp_mcg *g = (struct tp_mcg *)(uintptr_t)tp_mcast_find(dev, a->gid);
	uint32_t qpn = a->qp->pub.qp_num;
	struct tp_mcast *t;

	if (g != NULL && group_has(g, qpn))
		return 0;	/* attached already: as uverbs, no second entry */
	if (dev->mcast == NULL) {
		dev->mcast = rte_zmalloc("droce_mcast", sizeof(*dev->mcast), 0);
		if (dev->mcast == NULL)
			return -ENOMEM;
	}
	t = dev->mcast;
	if (t->total == TP_MCAST_MAX_TOTAL_ATTACH)
		return -ENOMEM;
	if (g == NULL) {
		if (t->ngrp == TP_MCAST_MAX_GRP)
			return -ENOMEM;
		g = &t->grp[t->ngrp++];
		memcpy(g->gid, a->gid, 16);
		roce_mcast_mac(a->gid, g->mac);
		g->nqp = 0;
	}
	if (g->nqp == TP_MCAST_MAX_QP_ATTACH)
		return -ENOMEM;
	g->qpn[g->nqp++] = qpn;
	t->total++;
	return 0;
}

/* Take qpn out of group i; an empty group leaves the table. */
static bool
group_remove(struct tp_mcast *t, uint32_t i, uint32_t qpn)
{
	struct tp_mcg *g = &t->grp[i];

	for (uint32_t k = 0; k < g->nqp; k++) {
		if (g->qpn[k] != qpn)
			continue;
		g->qpn[k] = g->qpn[--g->nqp];
		t->total--;
		if (g->nqp == 0)
			*g = t->grp[--t->ngrp];
		return true;
	}
	return false;
}

static int
detach_fn(void *arg)
{
	const struct mcast_args *a = arg;
	struct tp_mcast *t = a->qp->dev->mcast;

	for (uint32_t i = 0; t != NULL && i < t->ngrp; i++)
		if (memcmp(t->grp[i].gid, a->gid, 16) == 0)
			return group_remove(t, i, a->qp->pub.qp_num) ? 0 : -EINVAL;
	return -EINVAL;		/* as uverbs: a group the QP is not in */
}

static int
check(const struct tp_qp *qp, const uint8_t gid[16])
{
	if (qp->pub.qp_type != DROCE_QPT_UD || !roce_gid_is_mcast(gid))
		return -EINVAL;
	if (qp->dev->neng > 1)
		return -EOPNOTSUPP;
	return 0;
}

int
tp_mcast_attach(struct tp_qp *qp, const uint8_t gid[16])
{
	struct mcast_args a = { .qp = qp, .gid = gid };
	int rc = check(qp, gid);

	return rc != 0 ? rc : tp_qp_call(qp, attach_fn, &a);
}

int
tp_mcast_detach(struct tp_qp *qp, const uint8_t gid[16])
{
	struct mcast_args a = { .qp = qp, .gid = gid };
	int rc = check(qp, gid);

	return rc != 0 ? rc : tp_qp_call(qp, detach_fn, &a);
}

void
tp_mcast_forget_qp(struct tp_qp *qp)
{
	struct tp_mcast *t = qp->dev->mcast;
	uint32_t i = 0;

	while (t != NULL && i < t->ngrp) {
		uint32_t n = t->ngrp;

		/* a removal that empties group i moves the last one into i */
		if (!group_remove(t, i, qp->pub.qp_num) || t->ngrp == n)
			i++;
	}
}

void
tp_mcast_fini(struct tp_dev *dev)
{
	rte_free(dev->mcast);
	dev->mcast = NULL;
}

void
tp_mcast_limits(const struct tp_dev *dev, struct droce_device_attr *a)
{
	bool on = dev->neng <= 1;

	a->max_mcast_grp = on ? TP_MCAST_MAX_GRP : 0;
	a->max_mcast_qp_attach = on ? TP_MCAST_MAX_QP_ATTACH : 0;
	a->max_total_mcast_qp_attach = on ? TP_MCAST_MAX_TOTAL_ATTACH : 0;
}
