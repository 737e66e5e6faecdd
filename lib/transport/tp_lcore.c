/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dedicated transport lcores: the second run mode.  This file is the
 * lcore itself (command ring, launch and stop);
 * tp_lcore_rings.c the work queues and CQ rings and an engine's round.
 *
 * A transport lcore (an EAL worker launched with rte_eal_remote_launch)
 * runs the rounds of one or more engines (each of one device: a device
 * on several transport lcores has one engine on each); the application runs on
 * other lcores and talks to it only through rte_rings:
 *
 *   work queues    each QP's SQ and RQ are SP/SC rings: droce_post_send/
 *                  recv build the WQE in place in the slot at the head,
 *                  publish the head (release) and ring the QP's doorbell;
 *                  the transport lcore, answering it, takes the head
 *                  (acquire) and works on the WQE where it is.
 *   doorbell ring  one MP/SC ring of QPs per engine: a QP is on it at
 *                  most once, from its first post until answered.
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
 * per QP, so one QP's burst can never make another QP's post fail; each
 * QP may be owned by a different application lcore (single producer per
 * ring without any lock).  The transport lcore does not poll them:
 * posting rings the QP's doorbell after publishing the head
 * (tp_lcore_rings.c), and a round takes the published heads of the
 * doorbelled QPs only.
 *
 * Ordering (what the control path guarantees):
 *   - a command runs on one lcore, between two rounds of its engines,
 *     while the other lcores keep running theirs: a QP's command on the
 *     lcore of the QP's engine (tp_qp_call), a device's on engine 0's;
 *   - a command answers the doorbells of its lcore's engines (taking the
 *     published heads of the QPs that rang) before it runs: WRs posted
 *     before modify_qp/destroy_qp are in the SQ/RQ when the QP changes
 *     state or goes away (RESET discards them, as ibverbs);
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

#include "tp_private.h"
#include "tp_lcore.h"

#define TP_LC_MAX_ENG 16
#define TP_LC_CMD_RING 64
#define TP_LC_CMD_BURST 8

struct tp_lc_cmd {
	int (*fn)(void *arg);
	void *arg;
	int rc;
	uint32_t done;		/* atomic: set by the transport lcore */
};

struct tp_lcore {
	unsigned int lcore;
	struct rte_ring *cmd;	/* struct tp_lc_cmd *, MP/SC */
	/* the engines it runs (changed only by its own commands) */
	struct tp_engine *eng[TP_LC_MAX_ENG];
	unsigned int neng;
	bool stop;
	/* control path (device open/close) */
	unsigned int users;
};

/* Control path only: droce_open_device / close are not concurrent. */
static struct tp_lcore *tp_lcores[RTE_MAX_LCORE];

/*
 * A command runs between two rounds of this lcore's engines, which are
 * all it touches of the data path (a QP's command runs on the QP's
 * engine, tp_qp_call): the device's other engines keep running.
 */
static void
lc_run_one(struct tp_lcore *lc, struct tp_lc_cmd *c)
{
	/* WRs posted before the command reach their queues first */
	for (unsigned int i = 0; i < lc->neng; i++)
		tp_lc_drain(lc->eng[i]);
	c->rc = c->fn(c->arg);
	/* what the command retired (a flush) is free before its caller
	 * returns: a post right after modify_qp(ERR) must find the room */
	for (unsigned int i = 0; i < lc->neng; i++) {
		tp_lc_publish_tails(lc->eng[i]);
		tp_lc_publish_cqs(lc->eng[i]);
	}
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
		unsigned int work = lc_run_commands(lc);

		for (unsigned int i = 0; i < lc->neng; i++)
			work += tp_lc_engine_round(lc->eng[i]);
		if (work == 0)
			rte_pause();
	}
	return 0;
}

/* ---- commands -------------------------------------------------------------------- */

static int
lc_exec(struct tp_lcore *lc, int (*fn)(void *arg), void *arg)
{
	struct tp_lc_cmd c = { .fn = fn, .arg = arg };

	while (rte_ring_mp_enqueue(lc->cmd, &c) != 0)
		rte_pause();		/* other threads' commands first */
	while (__atomic_load_n(&c.done, __ATOMIC_ACQUIRE) == 0)
		rte_pause();
	return c.rc;
}

int
tp_engine_call(struct tp_engine *eng, int (*fn)(void *arg), void *arg)
{
	struct tp_lcore *lc = eng->lc;
	int rc;

	if (lc != NULL)
		return rte_lcore_id() == lc->lcore ? fn(arg) : lc_exec(lc, fn, arg);
	tp_run_take(&eng->dev->run);	/* run-to-completion: as a verbs call */
	rc = fn(arg);
	tp_run_give(&eng->dev->run);
	return rc;
}

int
tp_dev_call(struct tp_dev *dev, int (*fn)(void *arg), void *arg)
{
	return tp_engine_call(dev->eng[0], fn, arg);
}

int
tp_qp_call(struct tp_qp *qp, int (*fn)(void *arg), void *arg)
{
	return tp_engine_call(qp->eng, fn, arg);
}

struct round_hook {
	struct tp_engine *eng;
	unsigned int (*fn)(void *arg);
	void *arg;
};

/* On the transport lcore, between two rounds: no call of the old hook
 * runs now, and the next round calls the new one. */
static int
cmd_set_round_hook(void *arg)
{
	const struct round_hook *h = arg;

	h->eng->round_hook = h->fn;
	h->eng->round_arg = h->arg;
	return 0;
}

int
tp_dev_set_round_hook(struct tp_dev *dev, unsigned int (*fn)(void *arg), void *arg)
{
	struct round_hook h = { dev->eng[0], fn, arg };

	if (h.eng->lc == NULL || rte_lcore_id() == h.eng->lc->lcore)
		return -EINVAL;
	return lc_exec(h.eng->lc, cmd_set_round_hook, &h);
}

bool
tp_dev_dedicated(const struct tp_dev *dev)
{
	return dev != NULL && dev->eng[0]->lc != NULL;
}

/* Any QP on any engine of dev (control path). */
static bool
dev_has_qps(const struct tp_dev *dev)
{
	for (unsigned int k = 0; k < dev->neng; k++)
		if (__atomic_load_n(&dev->eng[k]->nlive, __ATOMIC_RELAXED) != 0)
			return true;
	return false;
}

/*
 * On the transport lcore: the engine joins its rounds, with a QSBR slot
 * registered by this lcore's thread (prot_ctl_lock finds a slot by thread
 * to take it offline during a control call made by that thread).
 */
static int
cmd_add_engine(void *arg)
{
	struct tp_engine *eng = arg;
	struct tp_lcore *lc = eng->lc;
	int reader;

	if (lc->neng == TP_LC_MAX_ENG)
		return -ENOSPC;
	reader = prot_reader_register(eng->dev->prot);
	if (reader < 0)
		return reader;
	eng->prot_reader = reader;
	lc->eng[lc->neng++] = eng;
	return 0;
}

/* On the transport lcore, no QP left: the engine leaves its rounds. */
static int
cmd_remove_engine(void *arg)
{
	struct tp_engine *eng = arg;
	struct tp_lcore *lc = eng->lc;

	if (eng->idx == 0 && dev_has_qps(eng->dev))
		return -EBUSY;
	tp_net_flush(eng);
	prot_reader_unregister(eng->dev->prot, eng->prot_reader);
	eng->prot_reader = -1;
	for (unsigned int i = 0; i < lc->neng; i++) {
		if (lc->eng[i] == eng) {
			lc->eng[i] = lc->eng[--lc->neng];
			break;
		}
	}
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
	lc_exec(lc, cmd_stop, lc);
	rte_eal_wait_lcore(lc->lcore);
	lc_free(lc);
}

/* Engine eng goes to transport lcore `lcore` (launched if need be). */
static int
engine_to_lcore(struct tp_engine *eng, unsigned int lcore)
{
	struct tp_lcore *lc = tp_lcores[lcore];
	int rc;

	if (lc == NULL) {
		rc = lc_start(lcore, &lc);
		if (rc != 0)
			return rc;
	}
	lc->users++;
	tp_engine_set_lcore(eng, lc);
	rc = lc_exec(lc, cmd_add_engine, eng);
	if (rc != 0) {
		tp_engine_set_lcore(eng, NULL);
		lc_put(lc);
	}
	return rc;
}

/* Engine eng leaves its transport lcore (which stops if it serves nothing). */
static int
engine_from_lcore(struct tp_engine *eng)
{
	struct tp_lcore *lc = eng->lc;
	int rc;

	if (lc == NULL)
		return 0;
	rc = lc_exec(lc, cmd_remove_engine, eng);
	if (rc != 0)
		return rc;
	tp_engine_set_lcore(eng, NULL);
	lc_put(lc);
	return 0;
}

static int
check_lcore_list(const unsigned int *lcores, unsigned int n)
{
	if (lcores == NULL || n < 1 || n > TP_MAX_ENGINES)
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
tp_dev_run_on_lcore(struct tp_dev *dev, unsigned int lcore)
{
	return tp_dev_run_on_lcores(dev, &lcore, 1);
}

int
tp_dev_run_on_lcores(struct tp_dev *dev, const unsigned int *lcores,
		     unsigned int nlcores)
{
	struct tp_engine *e0 = dev->eng[0];
	int rc = check_lcore_list(lcores, nlcores);

	if (rc != 0)
		return rc;
	if (e0->lc != NULL || dev_has_qps(dev) || dev->ncq != 0 ||
	    __atomic_load_n(&dev->nsrq, __ATOMIC_RELAXED) != 0)
		return -EBUSY;
	/* rte_eal_remote_launch / rte_eal_wait_lcore: main lcore only */
	if (rte_lcore_id() != rte_get_main_lcore())
		return -EINVAL;
	if (nlcores > 1) {
		rc = tp_engines_alloc(dev, nlcores);
		if (rc != 0)
			return rc;
	}
	rc = tp_lc_doorbells_alloc(dev);
	if (rc != 0) {
		tp_engines_free(dev);
		return rc;
	}
	/* engine 0's reader slot moves to its lcore's thread */
	prot_reader_unregister(dev->prot, e0->prot_reader);
	e0->prot_reader = -1;
	rc = engine_to_lcore(e0, lcores[0]);
	if (rc != 0) {
		/* the calling thread runs engine 0 again */
		e0->prot_reader = prot_reader_register(dev->prot);
		tp_lc_doorbells_free(dev);
		tp_engines_free(dev);
		return rc;
	}
	for (unsigned int k = 1; k < nlcores && rc == 0; k++)
		rc = engine_to_lcore(dev->eng[k], lcores[k]);
	if (rc != 0)
		tp_dev_stop_lcore(dev);	/* no QP yet: cannot fail */
	return rc;
}

int
tp_dev_stop_lcore(struct tp_dev *dev)
{
	struct tp_engine *e0 = dev->eng[0];
	int rc;

	if (e0->lc == NULL)
		return 0;
	rc = engine_from_lcore(e0);
	if (rc != 0)
		return rc;
	for (unsigned int k = 1; k < dev->neng; k++)
		(void)engine_from_lcore(dev->eng[k]);
	tp_lc_doorbells_free(dev);
	tp_engines_free(dev);
	/* the calling thread runs the (now idle) engine again */
	e0->prot_reader = prot_reader_register(dev->prot);
	return 0;
}
