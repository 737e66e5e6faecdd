/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dedicated transport lcores: the second run mode.  This file is the
 * lcore itself (command ring, stopping the world, launch and stop);
 * tp_lcore_rings.c the work queues and CQ rings and a device's round.
 *
 * A transport lcore (an EAL worker launched with rte_eal_remote_launch)
 * runs the progress loop of one or more devices; the application runs on
 * other lcores and talks to it only through rte_rings:
 *
 *   work queues    each QP's SQ and RQ are SP/SC rings: droce_post_send/
 *                  recv build the WQE in place in the slot at the head
 *                  and publish the head (release); the transport lcore
 *                  takes it (acquire) and works on the WQE where it is.
 *   CQ rings       one SP/SC ring per engine of each CQ: the completer/
 *                  responder write each CQE once, the lcore publishes
 *                  the head after its round; droce_poll_cq copies from
 *                  it straight into the caller's array.
 *   command ring   one MP/SC ring per transport lcore: control-path verbs
 *                  (create/modify/query/destroy QP and CQ, AH, detach)
 *                  run there as a function call; the caller spins on the
 *                  command's done flag.  The control path may wait, the
 *                  data path never does.
 *
 * Why per QP and not one ring per device: a work queue sized to the QP's
 * own max_send_wr / max_recv_wr makes a full queue ENOMEM (as ibverbs)
 * per QP, so one QP's burst can never
 * make another QP's post fail; each QP may be owned by a different
 * application lcore (single producer per ring without any lock); and the
 * transport already walks its live QPs every round, so taking a QP's
 * posted heads costs one load each.
 *
 * Ordering (what the control path guarantees):
 *   - a command takes the posted heads of its lcore's devices before it
 *     runs: WRs posted before modify_qp/destroy_qp are in the SQ/RQ when
 *     the QP changes state or goes away (RESET discards them, as ibverbs);
 *   - modify_qp returns after the transport lcore executed it, so a post
 *     after modify_qp(RTS) is checked against RTS (struct tp_lc_qp.state)
 *     and taken by an RTS QP;
 *   - destroy_qp / destroy_cq free memory on the transport lcore, between
 *     two rounds: nothing of it is in use then, and the application does
 *     not use the object after the call (ibverbs rule);
 *   - dereg_mr / MW invalidation use lib/protection's QSBR: the transport
 *     lcore owns the device's reader slot and reports a quiescent state at
 *     the end of every tp_progress(), so a revoking call returns only
 *     after no lookup that saw the old key is still running there.  WQEs
 *     posted but not yet executed are checked when executed, and fail then.
 *
 * Completions and credits: the transport lcore publishes qp->sq.tail and
 * qp->rq.tail (release stores, only when they moved) before the CQ ring
 * heads of the same round: a thread that polled a completion also sees the
 * work-queue slot free again.
 */
#include <errno.h>
#include <string.h>

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_spinlock.h>

#include "tp_private.h"
#include "tp_lcore.h"

#define TP_LC_MAX_DEV 16
#define TP_LC_CMD_RING 64
#define TP_LC_CMD_BURST 8

struct tp_lc_cmd {
	int (*fn)(void *arg);
	void *arg;
	struct tp_dev *dev;	/* several shards: stopped while fn runs */
	int rc;
	uint32_t done;		/* atomic: set by the transport lcore */
};

struct tp_lcore {
	unsigned int lcore;
	struct rte_ring *cmd;	/* struct tp_lc_cmd *, MP/SC */
	/* the transport lcore's own (changed only by commands) */
	struct tp_dev *devs[TP_LC_MAX_DEV];
	unsigned int shard[TP_LC_MAX_DEV];	/* which shard of devs[i] */
	unsigned int ndev;
	bool stop;
	/*
	 * Stopping the world (several shards, lc_world_stop): another lcore
	 * sets park 1 and waits for parked 1; this lcore waits between two
	 * rounds until park is 0 again, then clears parked.
	 */
	uint32_t park;
	uint32_t parked;
	/* control path (device open/close) */
	unsigned int users;
};

/* Control path only: droce_open_device / close are not concurrent. */
static struct tp_lcore *tp_lcores[RTE_MAX_LCORE];

/* Held by the lcore that has stopped other lcores (one at a time). */
static rte_spinlock_t lc_world = RTE_SPINLOCK_INITIALIZER;

/* No key-lookup pointer is held between rounds: report it for every slot. */
static void
lc_quiesce(struct tp_lcore *lc)
{
	for (unsigned int i = 0; i < lc->ndev; i++) {
		struct tp_dev *dev = lc->devs[i];
		int reader = tp_shard_reader(dev, lc->shard[i]);

		if (reader >= 0)
			prot_reader_quiescent(dev->prot, reader);
	}
}

/*
 * Between two rounds: another lcore stops this one while it runs a command
 * of a device both serve.  Parked, the lcore keeps reporting quiescent
 * states, so a revocation waiting on QSBR somewhere cannot hang on it.
 */
static void
lc_park_point(struct tp_lcore *lc)
{
	if (likely(__atomic_load_n(&lc->park, __ATOMIC_ACQUIRE) == 0))
		return;
	__atomic_store_n(&lc->parked, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&lc->park, __ATOMIC_ACQUIRE) != 0) {
		lc_quiesce(lc);
		rte_pause();
	}
	__atomic_store_n(&lc->parked, 0, __ATOMIC_RELEASE);
}

/*
 * Stop the other lcores of dev (several shards) before a command touches
 * what they read (QP table, live list, CQ list, QPs).  One stopper at a
 * time (lc_world); while waiting for it, or for the others to park, this
 * lcore parks itself when asked and reports quiescent states, so two
 * lcores stopping each other, or a revocation waiting on QSBR, cannot
 * deadlock.
 */
static void
lc_world_stop(struct tp_lcore *self, struct tp_dev *dev)
{
	while (!rte_spinlock_trylock(&lc_world)) {
		lc_park_point(self);
		lc_quiesce(self);
		rte_pause();
	}
	for (unsigned int k = 1; k < dev->nshards; k++) {
		struct tp_lcore *o = dev->sh[k]->lc;

		if (o == NULL || o == self)
			continue;
		__atomic_store_n(&o->park, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&o->parked, __ATOMIC_ACQUIRE) == 0) {
			lc_quiesce(self);
			rte_pause();
		}
	}
}

static void
lc_world_start(struct tp_lcore *self, struct tp_dev *dev)
{
	for (unsigned int k = 1; k < dev->nshards; k++) {
		struct tp_lcore *o = dev->sh[k]->lc;

		if (o == NULL || o == self)
			continue;
		__atomic_store_n(&o->park, 0, __ATOMIC_RELEASE);
		/* gone before the next stopper may ask again */
		while (__atomic_load_n(&o->parked, __ATOMIC_ACQUIRE) != 0)
			rte_pause();
	}
	rte_spinlock_unlock(&lc_world);
}

static void
lc_run_one(struct tp_lcore *lc, struct tp_lc_cmd *c)
{
	struct tp_dev *dev = c->dev;
	bool world = dev != NULL && dev->nshards > 1;

	if (world)
		lc_world_stop(lc, dev);
	/* WRs posted before the command reach their queues first */
	for (unsigned int d = 0; d < lc->ndev; d++)
		tp_lc_drain_dev(lc->devs[d],
			     lc->devs[d]->nshards > 1 ? lc->shard[d] : TP_LC_ALL);
	if (world)
		tp_lc_drain_dev(dev, TP_LC_ALL);
	RTE_PER_LCORE(tp_shard_id) = 0;	/* commands run as shard 0 */
	c->rc = c->fn(c->arg);
	/* what the command retired (a flush) is free before its caller
	 * returns: a post right after modify_qp(ERR) must find the room */
	if (dev != NULL) {
		tp_lc_publish_tails(dev, TP_LC_ALL);
		tp_lc_publish_cqs(dev);
	}
	if (world)
		lc_world_start(lc, dev);
}

static unsigned int
lc_run_commands(struct tp_lcore *lc)
{
	void *cmds[TP_LC_CMD_BURST];
	unsigned int n = rte_ring_sc_dequeue_burst(lc->cmd, cmds, TP_LC_CMD_BURST,
						   NULL);

	for (unsigned int i = 0; i < n; i++) {
		struct tp_lc_cmd *c = cmds[i];

		lc_run_one(lc, c);
		/* the caller may free c as soon as it sees done */
		__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	}
	return n;
}

static int
lc_main(void *arg)
{
	struct tp_lcore *lc = arg;

	while (!lc->stop) {
		unsigned int work;

		lc_park_point(lc);
		work = lc_run_commands(lc);
		for (unsigned int i = 0; i < lc->ndev; i++)
			work += tp_lc_dev_round(lc->devs[i], lc->shard[i]);
		if (work == 0)
			rte_pause();
	}
	return 0;
}

/* ---- commands -------------------------------------------------------------------- */

static int
lc_exec(struct tp_lcore *lc, struct tp_dev *dev, int (*fn)(void *arg), void *arg)
{
	struct tp_lc_cmd c = { .fn = fn, .arg = arg, .dev = dev };

	while (rte_ring_mp_enqueue(lc->cmd, &c) != 0)
		rte_pause();		/* other threads' commands first */
	while (__atomic_load_n(&c.done, __ATOMIC_ACQUIRE) == 0)
		rte_pause();
	return c.rc;
}

int
tp_dev_call(struct tp_dev *dev, int (*fn)(void *arg), void *arg)
{
	struct tp_lcore *lc = dev->lc;

	if (lc == NULL || rte_lcore_id() == lc->lcore)
		return fn(arg);
	return lc_exec(lc, dev, fn, arg);
}

bool
tp_dev_dedicated(const struct tp_dev *dev)
{
	return dev != NULL && dev->lc != NULL;
}

/* On the transport lcore: the device joins its round. */
static int
cmd_add_dev(void *arg)
{
	struct tp_dev *dev = arg;
	struct tp_lcore *lc = dev->lc;
	int reader;

	if (lc->ndev == TP_LC_MAX_DEV)
		return -ENOSPC;
	/*
	 * The key tables' reader slot belongs to the thread that runs the
	 * checks (prot_ctl_lock finds it by thread to take it offline during
	 * a control call made by that thread).  Now that is this lcore.
	 */
	prot_reader_unregister(dev->prot, dev->prot_reader);
	reader = prot_reader_register(dev->prot);
	dev->prot_reader = reader;
	if (reader < 0)
		return reader;
	lc->shard[lc->ndev] = 0;
	lc->devs[lc->ndev++] = dev;
	return 0;
}

static void
lc_remove(struct tp_lcore *lc, struct tp_dev *dev)
{
	for (unsigned int i = 0; i < lc->ndev; i++) {
		if (lc->devs[i] == dev) {
			lc->ndev--;
			lc->devs[i] = lc->devs[lc->ndev];
			lc->shard[i] = lc->shard[lc->ndev];
			break;
		}
	}
}

/* On the transport lcore: the device leaves its round (no QP left). */
static int
cmd_remove_dev(void *arg)
{
	struct tp_dev *dev = arg;
	struct tp_lcore *lc = dev->lc;

	if (dev->nlive != 0)
		return -EBUSY;
	tp_net_flush(dev);
	prot_reader_unregister(dev->prot, dev->prot_reader);
	dev->prot_reader = -1;
	lc_remove(lc, dev);
	return 0;
}

static int
cmd_stop(void *arg)
{
	struct tp_lcore *lc = arg;

	lc->stop = true;
	return 0;
}

static void
lc_free(struct tp_lcore *lc)
{
	tp_lcores[lc->lcore] = NULL;
	rte_free(lc->cmd);
	rte_free(lc);
}

static int
lc_start(unsigned int lcore, struct tp_lcore **out)
{
	struct tp_lcore *lc;
	int rc;

	lc = rte_zmalloc("droce_tp_lcore", sizeof(*lc), RTE_CACHE_LINE_SIZE);
	if (lc == NULL)
		return -ENOMEM;
	lc->lcore = lcore;
	lc->cmd = tp_lc_ring_alloc(TP_LC_CMD_RING, sizeof(void *), RING_F_SC_DEQ);
	if (lc->cmd == NULL) {
		rte_free(lc);
		return -ENOMEM;
	}
	tp_lcores[lcore] = lc;
	rc = rte_eal_remote_launch(lc_main, lc, lcore);
	if (rc != 0) {
		lc_free(lc);
		return rc < 0 ? rc : -EBUSY;
	}
	*out = lc;
	return 0;
}

static void
lc_put(struct tp_lcore *lc)
{
	if (--lc->users != 0)
		return;
	lc_exec(lc, NULL, cmd_stop, lc);
	rte_eal_wait_lcore(lc->lcore);
	lc_free(lc);
}

int
tp_dev_run_on_lcore(struct tp_dev *dev, unsigned int lcore)
{
	struct tp_lcore *lc;
	int rc;

	if (dev->lc != NULL || dev->nlive != 0 || dev->ncq != 0)
		return -EBUSY;
	/* rte_eal_remote_launch / rte_eal_wait_lcore: main lcore only */
	if (lcore >= RTE_MAX_LCORE || !rte_lcore_is_enabled(lcore) ||
	    lcore == rte_get_main_lcore() || rte_lcore_id() != rte_get_main_lcore())
		return -EINVAL;
	lc = tp_lcores[lcore];
	if (lc == NULL) {
		rc = lc_start(lcore, &lc);
		if (rc != 0)
			return rc;
	}
	lc->users++;
	dev->lc = lc;
	rc = lc_exec(lc, NULL, cmd_add_dev, dev);
	if (rc != 0) {
		dev->lc = NULL;
		/* the slot was given up on the lcore: take one here again */
		if (dev->prot_reader < 0)
			dev->prot_reader = prot_reader_register(dev->prot);
		lc_put(lc);
		return rc;
	}
	return 0;
}

/* ---- several transport lcores: shards 1..n-1 (tp_shard.c) ------------------ */

struct shard_arg {
	struct tp_dev *dev;
	unsigned int shard;
};

/* On shard k's lcore: it joins its rounds, with a QSBR slot of its own. */
static int
cmd_add_shard(void *arg)
{
	struct shard_arg *a = arg;
	struct tp_shard *sh = a->dev->sh[a->shard];
	struct tp_lcore *lc = sh->lc;
	int reader;

	if (lc->ndev == TP_LC_MAX_DEV)
		return -ENOSPC;
	reader = prot_reader_register(a->dev->prot);
	if (reader < 0)
		return reader;
	sh->prot_reader = reader;
	lc->shard[lc->ndev] = a->shard;
	lc->devs[lc->ndev++] = a->dev;
	return 0;
}

/* On shard k's lcore, after shard 0 left (no QP exists). */
static int
cmd_remove_shard(void *arg)
{
	struct shard_arg *a = arg;
	struct tp_shard *sh = a->dev->sh[a->shard];

	RTE_PER_LCORE(tp_shard_id) = a->shard;
	tp_shard_flush(a->dev);
	RTE_PER_LCORE(tp_shard_id) = 0;
	prot_reader_unregister(a->dev->prot, sh->prot_reader);
	sh->prot_reader = -1;
	lc_remove(sh->lc, a->dev);
	return 0;
}

/* Shards 1..n-1 leave their lcores (those that joined one). */
static void
shards_leave(struct tp_dev *dev)
{
	for (unsigned int k = 1; k < dev->nshards; k++) {
		struct tp_shard *sh = dev->sh[k];
		struct shard_arg a = { dev, k };

		if (sh == NULL || sh->lc == NULL)
			continue;
		if (sh->prot_reader >= 0)
			lc_exec(sh->lc, NULL, cmd_remove_shard, &a);
		lc_put(sh->lc);
		sh->lc = NULL;
	}
}

static int
check_lcore_list(const unsigned int *lcores, unsigned int n)
{
	if (lcores == NULL || n < 1 || n > TP_MAX_SHARDS)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		if (lcores[i] >= RTE_MAX_LCORE || !rte_lcore_is_enabled(lcores[i]) ||
		    lcores[i] == rte_get_main_lcore())
			return -EINVAL;
		for (unsigned int j = 0; j < i; j++)
			if (lcores[j] == lcores[i])
				return -EINVAL;
	}
	return 0;
}

int
tp_dev_run_on_lcores(struct tp_dev *dev, const unsigned int *lcores,
		     unsigned int nlcores)
{
	int rc = check_lcore_list(lcores, nlcores);

	if (rc != 0)
		return rc;
	if (nlcores == 1)
		return tp_dev_run_on_lcore(dev, lcores[0]);
	if (dev->lc != NULL || dev->nlive != 0 || dev->ncq != 0)
		return -EBUSY;
	if (rte_lcore_id() != rte_get_main_lcore())
		return -EINVAL;
	rc = tp_shards_alloc(dev, nlcores);
	if (rc != 0)
		return rc;
	rc = tp_dev_run_on_lcore(dev, lcores[0]);
	if (rc != 0) {
		tp_shards_free(dev);
		return rc;
	}
	dev->sh[0]->lc = dev->lc;
	for (unsigned int k = 1; k < nlcores && rc == 0; k++) {
		struct tp_lcore *lc = tp_lcores[lcores[k]];
		struct shard_arg a = { dev, k };

		if (lc == NULL)
			rc = lc_start(lcores[k], &lc);
		if (rc != 0)
			break;
		lc->users++;
		dev->sh[k]->lc = lc;
		rc = lc_exec(lc, NULL, cmd_add_shard, &a);
	}
	if (rc != 0)
		tp_dev_stop_lcore(dev);	/* no QP yet: cannot fail */
	return rc;
}

int
tp_dev_stop_lcore(struct tp_dev *dev)
{
	struct tp_lcore *lc = dev->lc;
	int rc;

	if (lc == NULL)
		return 0;
	rc = lc_exec(lc, NULL, cmd_remove_dev, dev);
	if (rc != 0)
		return rc;
	dev->lc = NULL;
	if (dev->nshards > 1) {
		dev->sh[0]->lc = NULL;
		shards_leave(dev);
		tp_shards_free(dev);
	}
	/* the calling thread runs the (now idle) engine again */
	dev->prot_reader = prot_reader_register(dev->prot);
	lc_put(lc);
	return 0;
}
