/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-context transport engine and its progress loop:
 *   receive a burst -> responder/completer,
 *   timers, requester and responder output for every QP,
 *   transmit, then report a quiescent state to the protection tables.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "net_host.h"
#include "tp_private.h"

RTE_LOG_REGISTER(tp_logtype, droce.transport, NOTICE);

const char *const tp_counter_names[TP_CNT_MAX] = {
#define TP_COUNTER_NAME(e, n, d) [TP_CNT_##e] = n,
	TP_COUNTER_LIST(TP_COUNTER_NAME)
#undef TP_COUNTER_NAME
};

int
tp_dev_create(struct droce_context *ctx, struct prot_tables *prot,
	      const struct tp_dev_config *cfg, struct tp_dev **out)
{
	struct tp_dev *dev;
	uint32_t max_qp = cfg != NULL && cfg->max_qp != 0 ? cfg->max_qp :
			  TP_DEFAULT_MAX_QP;

	if (max_qp > ROCE_PSN_MASK - TP_QPN_BASE)
		return -EINVAL;
	dev = rte_zmalloc("droce_tp_dev", sizeof(*dev), RTE_CACHE_LINE_SIZE);
	if (dev == NULL)
		return -ENOMEM;
	dev->qps = rte_zmalloc("droce_qps", max_qp * sizeof(*dev->qps), 0);
	dev->live = rte_zmalloc("droce_live", max_qp * sizeof(*dev->live), 0);
	if (dev->qps == NULL || dev->live == NULL) {
		rte_free(dev->qps);
		rte_free(dev->live);
		rte_free(dev);
		return -ENOMEM;
	}
	if (cfg != NULL)
		dev->cfg = *cfg;
	dev->cfg.max_qp = max_qp;
	dev->max_qp = max_qp;
	dev->ctx = ctx;
	dev->prot = prot;
	dev->pkeys[0] = TP_PKEY_DEFAULT;
	dev->npkeys = 1;
	/* this lcore runs the data path: it reads the key tables */
	dev->prot_reader = prot_reader_register(prot);
	if (dev->prot_reader < 0) {
		int rc = dev->prot_reader;

		rte_free(dev->qps);
		rte_free(dev->live);
		rte_free(dev);
		return rc;
	}
	if (tp_event_init(dev) != 0) {
		prot_reader_unregister(prot, dev->prot_reader);
		rte_free(dev->qps);
		rte_free(dev->live);
		rte_free(dev);
		return -ENOMEM;
	}
	tp_qp_mem_init(dev);
	dev->tsc_hz = rte_get_timer_hz();
	dev->cnt[0] = dev->counters;
	dev->nshards = 1;
	*out = dev;
	return 0;
}

int
tp_dev_destroy(struct tp_dev *dev)
{
	int rc;

	if (dev == NULL)
		return 0;
	rc = tp_dev_stop_lcore(dev);	/* back from a transport lcore */
	if (rc != 0)
		return rc;
	if (dev->nlive != 0)
		return -EBUSY;
	tp_net_flush(dev);
	for (uint32_t i = 0; i < dev->txq_len; i++)
		rte_pktmbuf_free(dev->txq[i]);
	tp_shards_free(dev);
	tp_event_fini(dev);
	prot_reader_unregister(dev->prot, dev->prot_reader);
	tp_qp_mem_fini(dev);
	rte_free(dev->qps);
	rte_free(dev->live);
	rte_free(dev);
	return 0;
}

int
tp_dev_attach_link(struct tp_dev *dev, struct droce_link *link)
{
	if (link == NULL || link->pool == NULL)
		return -EINVAL;
	dev->link = link;
	return 0;
}

void
tp_dev_set_retry_cnt_7_infinite(struct tp_dev *dev, bool on)
{
	dev->cfg.retry_cnt_7_infinite = on;
}

int
tp_dev_attach_host(struct tp_dev *dev, struct net_host *host)
{
	dev->host = host;
	if (host != NULL)
		net_host_set_output(host, tp_net_release, dev);
	return 0;
}

int
tp_dev_add_gid(struct tp_dev *dev, const uint8_t gid[16])
{
	if (dev->ngids == TP_MAX_GIDS)
		return -ENOSPC;
	memcpy(dev->gids[dev->ngids], gid, 16);
	return (int)dev->ngids++;
}

int
tp_dev_query_gid(const struct tp_dev *dev, unsigned int index, uint8_t gid[16])
{
	if (index >= dev->ngids)
		return -EINVAL;
	memcpy(gid, dev->gids[index], 16);
	return 0;
}

int
tp_dev_add_pkey(struct tp_dev *dev, uint16_t pkey)
{
	if (!tp_pkey_valid(pkey))
		return -EINVAL;
	for (uint32_t i = 0; i < dev->npkeys; i++)
		if (dev->pkeys[i] == pkey)
			return (int)i;
	if (dev->npkeys == TP_MAX_PKEYS)
		return -ENOSPC;
	dev->pkeys[dev->npkeys] = pkey;
	return (int)dev->npkeys++;
}

int
tp_dev_query_pkey(const struct tp_dev *dev, unsigned int index, uint16_t *pkey)
{
	if (index >= dev->npkeys)
		return -EINVAL;
	*pkey = dev->pkeys[index];
	return 0;
}

int
tp_dev_add_neigh(struct tp_dev *dev, const uint8_t gid[16],
		 const struct rte_ether_addr *mac)
{
	struct tp_neigh *free_slot = NULL;

	for (unsigned int i = 0; i < TP_MAX_NEIGH; i++) {
		struct tp_neigh *n = &dev->neigh[i];

		if (n->valid && memcmp(n->gid, gid, 16) == 0) {
			n->mac = *mac;
			return 0;
		}
		if (!n->valid && free_slot == NULL)
			free_slot = n;
	}
	if (free_slot == NULL)
		return -ENOSPC;
	memcpy(free_slot->gid, gid, 16);
	free_slot->mac = *mac;
	free_slot->valid = true;
	return 0;
}

/*
 * Timers, responder output and requester for each of shard s's QPs.  Once
 * the transmit queue refused a frame (turn->full), the QPs after it only
 * run their timers, and the next round starts at the refused one: every
 * QP gets its turn however many there are before it.
 */
static void
tp_run_qps(struct tp_dev *dev, unsigned int s, uint64_t now)
{
	struct tp_tx_turn *turn = tp_tx_turn(dev);
	uint32_t i = turn->walk_from < dev->nlive ? turn->walk_from : 0;

	turn->full = false;
	for (uint32_t k = 0; k < dev->nlive; k++, i = i + 1 == dev->nlive ? 0 : i + 1) {
		struct tp_qp *qp = dev->live[i];

		/* several shards: each runs its own QPs only */
		if (dev->nshards > 1 && tp_qpn_shard(dev, qp->pub.qp_num) != s)
			continue;
		tp_timer_run(qp, now);
		if (turn->full)
			continue;
		tp_resp_run(qp);
		tp_req_run(qp);
		if (turn->full)
			turn->walk_from = i;
	}
}

int
tp_progress(struct tp_dev *dev)
{
	struct tp_rx_burst b;
	uint64_t now;
	uint16_t n;

	unsigned int s = tp_cur_shard();
	bool trace;

	if (dev->link == NULL)
		return 0;
	trace = rte_log_can_log(tp_logtype, RTE_LOG_DEBUG);
	if (unlikely(trace != dev->trace))
		dev->trace = trace;	/* shared by the shards: store on change only */
	if (likely(dev->nshards <= 1))
		n = droce_link_rx(dev->link, b.m, TP_RX_BURST);
	else
		n = tp_shard_rx(dev, s, b.m, TP_RX_BURST);
	/* ARP, ND and pings go to the host stack; RoCEv2 frames remain */
	n = tp_recv_classify(dev, &b, n);
	now = rte_get_timer_cycles();
	if (dev->host != NULL && s == 0)
		net_host_timer(dev->host, now);
	if (unlikely(now >= dev->link_next) && s == 0)
		tp_event_link_poll(dev, now);	/* port events */
	/* --- capture hook (lib/device, --droce-capture): RoCEv2 frames in --- */
	if (unlikely(dev->cfg.capture != NULL) && n != 0 && s == 0)
		dev->cfg.capture(dev->cfg.capture_arg, b.m, n, false);
	/* --- end capture hook --- */
	/* dedicated lcore(s): receives posted after this round's drain */
	if (dev->lc != NULL && n != 0)
		tp_lc_drain_rqs(dev);
	tp_recv_burst(dev, &b, n);
	if (dev->nshards > 1 && s != 0)
		tp_shard_mac_in(dev, s);

	tp_run_qps(dev, s, now);
	tp_net_flush(dev);
	if (dev->nshards > 1 && s == 0)
		tp_shard_tx_in(dev);
	/* no pointer from a key lookup survives this point */
	prot_reader_quiescent(dev->prot,
			      s == 0 ? dev->prot_reader : tp_shard_reader(dev, s));
	return n;
}

const uint64_t *
tp_dev_counters(const struct tp_dev *dev)
{
	return dev->counters;
}

uint64_t
tp_dev_counter(const struct tp_dev *dev, const char *name)
{
	for (unsigned int i = 0; i < TP_CNT_MAX; i++)
		if (strcmp(tp_counter_names[i], name) == 0)
			return tp_dev_counter_read(dev, i);
	return UINT64_MAX;
}

/* One shard's counter (shard < nshards). */
uint64_t
tp_dev_shard_counter(const struct tp_dev *dev, unsigned int shard, unsigned int i)
{
	const uint64_t *c = shard < TP_MAX_SHARDS ?
			    __atomic_load_n(&dev->cnt[shard], __ATOMIC_ACQUIRE) : NULL;

	return c != NULL && i < TP_CNT_MAX ? __atomic_load_n(&c[i], __ATOMIC_RELAXED) : 0;
}

unsigned int
tp_dev_shards(const struct tp_dev *dev)
{
	return dev->nshards;
}

unsigned int
tp_counter_count(void)
{
	return TP_CNT_MAX;
}

const char *
tp_counter_name(unsigned int i)
{
	return i < TP_CNT_MAX ? tp_counter_names[i] : NULL;
}

/* ---- observability: read-only accessors for telemetry (transport.h) --------- */

int
tp_dev_qp_snapshot(const struct tp_dev *dev, uint32_t qpn,
		   struct tp_qp_snapshot *snap)
{
	uint32_t i = qpn - TP_QPN_BASE;
	const struct tp_qp *qp;

	if (i >= dev->max_qp)
		return -ENOENT;
	qp = __atomic_load_n(&dev->qps[i], __ATOMIC_ACQUIRE);
	if (qp == NULL)
		return -ENOENT;
	/* copy the fields at once; the QP may be destroyed meanwhile */
	snap->qpn = qp->pub.qp_num;
	snap->dest_qpn = qp->attr.dest_qp_num;
	snap->type = qp->pub.qp_type;
	snap->state = qp->pub.state;
	snap->mtu = qp->mtu;
	snap->sq_psn = qp->req.psn;
	snap->comp_psn = qp->comp.psn;
	snap->resp_psn = qp->resp.psn;
	snap->sq_outstanding = tp_ring_count(qp->sq.head, qp->sq.tail);
	snap->rq_posted = tp_ring_count(qp->rq.head, qp->rq.tail);
	snap->rd_atomic = qp->req.rd_atomic;
	snap->retry_cnt = qp->attr.retry_cnt;
	snap->rnr_retry = qp->attr.rnr_retry;
	snap->retry_left = qp->comp.retry_left;
	snap->rnr_retry_left = qp->comp.rnr_retry_left;
	snap->wait_rnr = qp->req.wait_rnr;
	/* destroyed (or replaced) while we copied: report it gone */
	if (__atomic_load_n(&dev->qps[i], __ATOMIC_ACQUIRE) != qp ||
	    snap->qpn != qpn)
		return -ENOENT;
	return 0;
}

uint32_t
tp_dev_qp_next(const struct tp_dev *dev, uint32_t after)
{
	uint32_t i = after < TP_QPN_BASE ? 0 : after - TP_QPN_BASE + 1;

	for (; i < dev->max_qp; i++)
		if (__atomic_load_n(&dev->qps[i], __ATOMIC_RELAXED) != NULL)
			return TP_QPN_BASE + i;
	return 0;
}

/* Summed over the shards; relaxed loads: transport lcores count meanwhile. */
uint64_t
tp_dev_counter_read(const struct tp_dev *dev, unsigned int i)
{
	uint64_t sum = 0;

	for (unsigned int k = 0; k < TP_MAX_SHARDS; k++)
		sum += tp_dev_shard_counter(dev, k, i);
	return sum;
}

/* ---- address handles ------------------------------------------------------------ */

int
tp_ah_create(struct tp_dev *dev, const struct droce_ah_attr *attr, struct tp_ah **out)
{
	struct tp_ah *ah = rte_zmalloc("droce_ah", sizeof(*ah), 0);
	int rc;

	if (ah == NULL)
		return -ENOMEM;
	rc = tp_av_from_attr(dev, attr, &ah->av);
	if (rc != 0) {
		rte_free(ah);
		return rc;
	}
	*out = ah;
	return 0;
}

void
tp_ah_destroy(struct tp_ah *ah)
{
	rte_free(ah);
}

struct droce_ah *
tp_ah_pub(struct tp_ah *ah)
{
	return &ah->pub;
}

struct tp_ah *
tp_ah_from_pub(struct droce_ah *ah)
{
	return container_of(ah, struct tp_ah, pub);
}
