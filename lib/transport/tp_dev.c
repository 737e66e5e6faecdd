/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-context device (addresses, P_Keys, QP table, counters as seen
 * from outside) and an engine's round (tp_engine_progress):
 *   receive a burst -> responder/completer,
 *   due timers, then responder output and requester of its ready QPs,
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
	int rc;
	uint32_t max_qp = cfg != NULL && cfg->max_qp != 0 ? cfg->max_qp :
			  TP_DEFAULT_MAX_QP;

	if (max_qp > ROCE_PSN_MASK - TP_QPN_BASE)
		return -EINVAL;
	dev = rte_zmalloc("droce_tp_dev", sizeof(*dev), RTE_CACHE_LINE_SIZE);
	if (dev == NULL)
		return -ENOMEM;
	dev->tsc_hz = rte_get_timer_hz();	/* the engines' wheels tick by it */
	dev->qps = rte_zmalloc("droce_qps", max_qp * sizeof(*dev->qps), 0);
	dev->eng[0] = tp_engine_create(dev, 0, max_qp);
	if (dev->qps == NULL || dev->eng[0] == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	if (cfg != NULL)
		dev->cfg = *cfg;
	dev->cfg.max_qp = max_qp;
	if (dev->cfg.max_cq == 0)
		dev->cfg.max_cq = TP_DEFAULT_MAX_CQ;
	if (!dev->cfg.cc.given)
		tp_cc_config_default(&dev->cfg.cc);
	dev->max_qp = max_qp;
	dev->ctx = ctx;
	dev->prot = prot;
	dev->pkeys[0] = TP_PKEY_DEFAULT;
	dev->npkeys = 1;
	/* this lcore runs the data path: it reads the key tables */
	dev->eng[0]->prot_reader = prot_reader_register(prot);
	if (dev->eng[0]->prot_reader < 0) {
		rc = dev->eng[0]->prot_reader;
		goto fail;
	}
	if (tp_event_init(dev) != 0) {
		prot_reader_unregister(prot, dev->eng[0]->prot_reader);
		rc = -ENOMEM;
		goto fail;
	}
	tp_qp_mem_init(dev);
	dev->neng = 1;
	*out = dev;
	return 0;
fail:
	tp_engine_destroy(dev->eng[0]);
	rte_free(dev->qps);
	rte_free(dev);
	return rc;
}

int
tp_dev_destroy(struct tp_dev *dev)
{
	int rc;

	if (dev == NULL)
		return 0;
	tp_dev_stop_adaptive(dev);
	rc = tp_dev_stop_lcore(dev);	/* back from a transport lcore */
	if (rc != 0)
		return rc;
	if (dev->eng[0]->nlive != 0)
		return -EBUSY;
	tp_net_flush(dev->eng[0]);
	tp_engines_free(dev);
	net_host_destroy(dev->host);	/* its held frames counted dropped */
	tp_event_fini(dev);
	prot_reader_unregister(dev->prot, dev->eng[0]->prot_reader);
	tp_engine_destroy(dev->eng[0]);
	tp_qp_mem_fini(dev);
	tp_mcast_fini(dev);
	for (uint32_t i = 0; i < TP_AH_CHUNKS; i++)
		rte_free(dev->ah_dir[i]);
	rte_free(dev->qps);
	rte_free(dev);
	return 0;
}

int
tp_dev_attach_link(struct tp_dev *dev, struct droce_link *link)
{
	struct net_host_config hc = {
		.link = link,
		.table_only = !dev->cfg.host_stack,
	};
	int rc;

	if (link == NULL || link->pool == NULL)
		return -EINVAL;
	if (dev->link != NULL)
		return -EBUSY;
	rc = net_host_create(&hc, &dev->host);
	if (rc != 0)
		return rc;
	net_host_set_output(dev->host, tp_net_release, tp_net_released, dev->eng[0]);
	dev->link = link;
	return 0;
}

struct net_host *
tp_dev_host(const struct tp_dev *dev)
{
	return dev->host;
}

const struct tp_dev_config *
tp_dev_config(const struct tp_dev *dev)
{
	return &dev->cfg;
}

const struct droce_link *
tp_dev_link(const struct tp_dev *dev)
{
	return dev->link;
}

void
tp_dev_set_retry_cnt_7_infinite(struct tp_dev *dev, bool on)
{
	dev->cfg.retry_cnt_7_infinite = on;
}

int
tp_dev_query_gid(const struct tp_dev *dev, unsigned int index, uint8_t gid[16])
{
	if (dev->host == NULL)
		return -EINVAL;
	return net_host_addr(dev->host, index, gid);
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

/* Responder output still queued, or the requester not done with its burst. */
static bool
qp_run(struct tp_qp *qp)
{
	bool more;

	tp_resp_run(qp);
	more = tp_req_run(qp);
	return more || qp->resp.q_tail != qp->resp.q_head;
}

/*
 * Responder output and requester of the QPs on the engine's ready list,
 * in order: each visited QP leaves the list and goes back to its end if it
 * still has work (a QP marked during the round waits for the next one).
 * Once the transmit queue refused a frame (turn->full) the round stops,
 * and the refused QP goes back to the front, ahead of the QPs that were
 * not visited yet: they resume in order when the link takes frames again.
 */
static void
tp_run_qps(struct tp_engine *eng)
{
	struct tp_sched *sc = &eng->sched;
	struct tp_tx_turn *turn = &eng->turn;
	uint32_t n = sc->nready;

	turn->full = false;
	while (n-- > 0) {
		struct tp_qp *qp = TAILQ_FIRST(&sc->ready);
		bool more;

		TAILQ_REMOVE(&sc->ready, qp, ready_link);
		sc->nready--;
		qp->ready = false;
		tp_count(eng, TP_CNT_QP_RUNS);
		more = qp_run(qp);
		if (unlikely(qp->lc != NULL))
			tp_lc_publish_qp(qp);
		if (unlikely(turn->full)) {
			if (!qp->ready) {
				qp->ready = true;
				TAILQ_INSERT_HEAD(&sc->ready, qp, ready_link);
				sc->nready++;
			}
			break;
		}
		if (more)
			tp_qp_ready(qp);
	}
}

/* Engine 0 alone: lib/net's host stack, the carrier. */
static void
engine0_chores(struct tp_engine *eng, uint64_t now)
{
	struct tp_dev *dev = eng->dev;

	net_host_timer(dev->host, now);
	if (unlikely(now >= dev->link_next))
		tp_event_link_poll(eng, now);	/* port events */
}

int
tp_engine_progress(struct tp_engine *eng)
{
	struct tp_dev *dev = eng->dev;
	struct tp_rx_burst *b = eng->rxb;
	uint64_t now;
	uint16_t n;
	bool trace;

	if (dev->link == NULL)
		return 0;
	trace = rte_log_can_log(tp_logtype, RTE_LOG_DEBUG);
	if (unlikely(trace != dev->trace))
		dev->trace = trace;	/* shared by the engines: store on change only */
	if (likely(dev->neng <= 1))
		n = droce_link_rx(dev->link, b->m, TP_RX_BURST);
	else
		n = tp_shard_rx(eng, b->m, TP_RX_BURST);
	/* ARP, ND and pings go to the host stack; RoCEv2 frames remain */
	n = tp_recv_classify(eng, b, n);
	now = rte_get_timer_cycles();
	tp_sched_round(eng, now);
	if (eng->idx == 0)
		engine0_chores(eng, now);
	if (unlikely(now >= eng->lease_next))
		tp_event_lease_poll(eng, now);	/* MR/MW leases, before the burst */
	/* dedicated lcore(s): receives posted after this round's drain */
	if (eng->lc != NULL && n != 0)
		tp_lc_drain(eng);
	tp_recv_burst(eng, b, n);
	if (eng->mac_in != NULL)
		tp_shard_mac_in(eng);

	tp_timer_expire(&eng->sched, now);
	tp_run_qps(eng);
	tp_net_flush(eng);
	if (eng->tx_in != NULL)
		tp_shard_tx_in(eng);
	/* no pointer from a key lookup survives this point */
	prot_reader_quiescent(dev->prot, eng->prot_reader);
	return n;
}

/* Run-to-completion: the device's one engine, with the runner token. */
int
tp_progress(struct tp_dev *dev)
{
	int n;

	tp_run_take(&dev->run);
	n = tp_engine_progress(dev->eng[0]);
	tp_run_give(&dev->run);
	return n;
}

const uint64_t *
tp_dev_counters(const struct tp_dev *dev)
{
	return dev->eng[0]->counters;
}

uint64_t
tp_dev_counter(const struct tp_dev *dev, const char *name)
{
	for (unsigned int i = 0; i < TP_CNT_MAX; i++)
		if (strcmp(tp_counter_names[i], name) == 0)
			return tp_dev_counter_read(dev, i);
	return UINT64_MAX;
}

/* Engine `shard`'s counter (shard < neng). */
uint64_t
tp_dev_shard_counter(const struct tp_dev *dev, unsigned int shard, unsigned int i)
{
	const struct tp_engine *eng = shard < TP_MAX_ENGINES ?
		__atomic_load_n(&dev->eng[shard], __ATOMIC_ACQUIRE) : NULL;

	return eng != NULL && i < TP_CNT_MAX ?
	       __atomic_load_n(&eng->counters[i], __ATOMIC_RELAXED) : 0;
}

unsigned int
tp_dev_shards(const struct tp_dev *dev)
{
	return dev->neng;
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
	struct tp_cc_snapshot cc;
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
	snap->udp_sport = qp->udp_sport;
	tp_cc_snapshot(qp, &cc);
	snap->cc_algo = cc.algo;
	snap->cc_rate_bps = cc.rate_bps;
	snap->cc_target_bps = cc.target_bps;
	snap->cc_alpha = cc.alpha;
	snap->cc_cnps = cc.cnps;
	snap->cc_cuts = cc.cuts;
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

/*
 * Summed over the engines (the longest gap: the largest); relaxed loads:
 * transport lcores count meanwhile.
 */
uint64_t
tp_dev_counter_read(const struct tp_dev *dev, unsigned int i)
{
	uint64_t sum = 0;

	for (unsigned int k = 0; k < TP_MAX_ENGINES; k++) {
		uint64_t v = tp_dev_shard_counter(dev, k, i);

		sum = i == TP_CNT_SCHED_GAP_MAX_US ? RTE_MAX(sum, v) : sum + v;
	}
	return sum;
}

/* lib/protection's status st (enum prot_status), remote or local checks, summed. */
uint64_t
tp_dev_prot_counter(const struct tp_dev *dev, bool remote, unsigned int st)
{
	uint64_t sum = 0;

	for (unsigned int k = 0; k < TP_MAX_ENGINES && st < PROT_STATUS_MAX; k++) {
		const struct tp_engine *eng = __atomic_load_n(&dev->eng[k], __ATOMIC_ACQUIRE);

		if (eng != NULL)
			sum += __atomic_load_n(remote ? &eng->prot_remote[st] :
					       &eng->prot_local[st], __ATOMIC_RELAXED);
	}
	return sum;
}

/* ---- address handles ------------------------------------------------------------ */

/*
 * A free index, from the cursor on (so that a destroyed AH's index is
 * reused only after every other one: a stale index names nothing for
 * long), its chunk made if missing: the index, -ENOMEM or -ENOSPC.
 */
static int64_t
ah_slot(struct tp_dev *dev)
{
	for (uint32_t n = 0; n < TP_MAX_AH; n++) {
		uint32_t i = (dev->ah_next + n) % TP_MAX_AH;
		struct tp_ah **chunk = dev->ah_dir[i / TP_AH_CHUNK];

		if (i == 0)
			continue;
		if (chunk == NULL) {
			chunk = rte_zmalloc("droce_ah_dir", TP_AH_CHUNK * sizeof(*chunk), 0);
			if (chunk == NULL)
				return -ENOMEM;
			__atomic_store_n(&dev->ah_dir[i / TP_AH_CHUNK], chunk, __ATOMIC_RELEASE);
		}
		if (chunk[i % TP_AH_CHUNK] == NULL) {
			dev->ah_next = i + 1;
			return i;
		}
	}
	return -ENOSPC;
}

int
tp_ah_create(struct tp_dev *dev, uint32_t pd, const struct droce_ah_attr *attr,
	     struct tp_ah **out)
{
	struct tp_ah *ah = rte_zmalloc("droce_ah", sizeof(*ah), 0);
	int64_t i;
	int rc;

	if (ah == NULL)
		return -ENOMEM;
	rc = tp_av_from_attr(dev->eng[0], attr, &ah->av);
	i = rc == 0 ? ah_slot(dev) : rc;
	if (i < 0) {
		rte_free(ah);
		return (int)i;
	}
	ah->dev = dev;
	ah->pd = pd;
	ah->pub.handle = (uint32_t)i;
	/* the engines may resolve it from here on */
	__atomic_store_n(&dev->ah_dir[i / TP_AH_CHUNK][i % TP_AH_CHUNK], ah, __ATOMIC_RELEASE);
	*out = ah;
	return 0;
}

/*
 * The sends already posted leave before an AH goes: a device holds the
 * address vector in the WQE, so a program may destroy the AH right after
 * its last post (rdmacm-utils' mckey does, then exits).  On the engine
 * (a command), its ready QPs run until none has work left or the link
 * takes no more; bounded, it is a control call.
 */
static void
ah_drain_sends(struct tp_engine *eng)
{
	for (unsigned int i = 0; i < 64 && eng->sched.nready != 0; i++) {
		tp_run_qps(eng);
		tp_net_flush(eng);
		if (eng->turn.full)
			break;
	}
}

/* on the first engine, where the slots are set */
static int
ah_unpublish_fn(void *arg)
{
	struct tp_ah *ah = arg;
	struct tp_dev *dev = ah->dev;
	uint32_t i = ah->pub.handle;

	ah_drain_sends(dev->eng[0]);

	__atomic_store_n(&dev->ah_dir[i / TP_AH_CHUNK][i % TP_AH_CHUNK], NULL,
			 __ATOMIC_RELEASE);
	return 0;
}

static int
engine_pass_fn(void *arg)
{
	ah_drain_sends(arg);
	return 0;
}

void
tp_ah_destroy(struct tp_dev *dev, struct tp_ah *ah)
{
	(void)tp_dev_call(dev, ah_unpublish_fn, ah);
	/* an engine that resolved it before the slot was emptied is done
	 * with it once it ran a command: commands run between rounds */
	for (uint32_t k = 1; k < dev->neng; k++)
		(void)tp_engine_call(dev->eng[k], engine_pass_fn, dev->eng[k]);
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
