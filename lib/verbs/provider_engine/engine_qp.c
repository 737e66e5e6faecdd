/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine_qp.c - the engine provider's CQs, QPs, SRQs, address handles and
 * work requests: lib/transport's objects of this process's engine.
 *
 * Control verbs that touch engine state run through tp_qp_call() (a QP's,
 * on the engine that owns it) or tp_dev_call() (CQs, AHs): a direct call
 * in run-to-completion mode, a command executed by that engine's
 * transport lcore (and waited for) in the dedicated mode.  Posting and
 * polling go straight to lib/transport, which uses the rings in that mode.
 */
#include <errno.h>

#include "transport.h"
#include "engine.h"

/* ---- the data path ------------------------------------------------------------- */

int
verbs_engine_post_send(struct droce_qp *qp, struct droce_send_wr *wr,
		 struct droce_send_wr **bad_wr)
{
	return tp_post_send(tp_qp_from_pub(qp), wr, bad_wr);
}

int
verbs_engine_post_recv(struct droce_qp *qp, struct droce_recv_wr *wr,
		 struct droce_recv_wr **bad_wr)
{
	return tp_post_recv(tp_qp_from_pub(qp), wr, bad_wr);
}

int
verbs_engine_poll_cq(struct droce_cq *cq, int num_entries, struct droce_wc *wc)
{
	return tp_cq_poll(tp_cq_from_pub(cq), num_entries, wc);
}

int
verbs_engine_post_srq_recv(struct droce_srq *srq, struct droce_recv_wr *wr,
		     struct droce_recv_wr **bad_wr)
{
	return tp_post_srq_recv(tp_srq_from_pub(srq), wr, bad_wr);
}

int
verbs_engine_req_notify_cq(struct droce_cq *cq, int solicited_only)
{
	tp_cq_arm(tp_cq_from_pub(cq), solicited_only != 0);
	return 0;
}

int
verbs_engine_cq_take_event(struct droce_cq *cq)
{
	return tp_cq_take_event(tp_cq_from_pub(cq)) ? 1 : 0;
}

/* ---- completion queues ------------------------------------------------------- */

struct cq_create_args {
	struct tp_dev *dev;
	int cqe;
	struct tp_cq *cq;
};

/* tp_dev_call functions, as everything in the libraries: 0 or -errno */
static int
cq_create_fn(void *arg)
{
	struct cq_create_args *a = arg;

	return tp_cq_create(a->dev, a->cqe, &a->cq);
}

static int
cq_destroy_fn(void *arg)
{
	return tp_cq_destroy(arg);
}

int
verbs_engine_create_cq(struct droce_context *ctx, int cqe, void *cq_context,
		 struct droce_comp_channel *channel, struct droce_cq **out)
{
	struct tp_dev *tp = engine_ctx(ctx)->tp;
	struct cq_create_args a = { .dev = tp, .cqe = cqe };
	struct droce_cq *pub;
	int rc;

	if (tp == NULL)
		return -ENODEV;
	rc = tp_dev_call(tp, cq_create_fn, &a);
	if (rc != 0)
		return rc;
	pub = tp_cq_pub(a.cq);
	pub->context = ctx;
	pub->cq_context = cq_context;
	pub->channel = channel;
	if (channel != NULL) {
		rc = verbs_channel_add(channel, pub);
		if (rc != 0) {
			tp_dev_call(tp, cq_destroy_fn, a.cq);
			return -rc;
		}
		/* where the engine runs: it counts the CQ's events on the channel's fd */
		tp_cq_set_event_fd(a.cq, channel->fd);
	}
	*out = pub;
	return 0;
}

int
verbs_engine_destroy_cq(struct droce_cq *cq)
{
	int rc = tp_cq_mute_events(tp_cq_from_pub(cq));	/* EBUSY while QPs use it */

	if (rc != 0)
		return rc;
	verbs_events_forget(cq->context, cq);
	if (cq->channel != NULL)
		verbs_channel_leave(cq);
	return tp_dev_call(engine_ctx(cq->context)->tp, cq_destroy_fn, tp_cq_from_pub(cq));
}

/* ---- queue pairs -------------------------------------------------------------- */

struct qp_create_args {
	struct tp_engine *eng;
	uint32_t pd;
	struct tp_cq *scq;
	struct tp_cq *rcq;
	const struct droce_qp_init_attr *init;
	struct tp_qp *qp;
};

static int
qp_create_fn(void *arg)
{
	struct qp_create_args *a = arg;

	return tp_qp_create(a->eng, a->pd, a->scq, a->rcq, a->init, &a->qp);
}

struct qp_modify_args {
	struct tp_qp *qp;
	struct droce_qp_attr *attr;
	int mask;
	struct droce_qp_init_attr *init;
};

static int
qp_modify_fn(void *arg)
{
	struct qp_modify_args *a = arg;

	return tp_qp_modify(a->qp, a->attr, a->mask);
}

static int
qp_query_fn(void *arg)
{
	struct qp_modify_args *a = arg;

	return tp_qp_query(a->qp, a->attr, a->init);
}

static int
qp_destroy_fn(void *arg)
{
	return tp_qp_destroy(arg);
}

/* Its CQs and SRQ are of the PD's context (droce_create_qp checked). */
int
verbs_engine_create_qp(struct droce_pd *pd, struct droce_qp_init_attr *init,
		 struct droce_qp **out)
{
	struct engine_context *e = engine_ctx(pd->context);
	struct droce_qp *pub;
	int rc;

	if (e->tp == NULL)
		return -ENODEV;
	rc = prot_pd_get(e->prot, pd->handle);	/* a QP keeps its PD alive */
	if (rc != 0)
		return rc;
	struct qp_create_args a = {
		/* an SRQ's QPs live on its engine (lib/transport) */
		.eng = init->srq != NULL ? tp_srq_engine(tp_srq_from_pub(init->srq)) :
					   tp_dev_qp_engine(e->tp),
		.pd = pd->handle, .init = init,
		.scq = tp_cq_from_pub(init->send_cq),
		.rcq = tp_cq_from_pub(init->recv_cq),
	};
	rc = tp_engine_call(a.eng, qp_create_fn, &a);
	if (rc != 0) {
		prot_pd_put(e->prot, pd->handle);
		return rc;
	}
	init->cap = tp_qp_cap(a.qp);	/* what was granted, as ibv_create_qp */
	pub = tp_qp_pub(a.qp);
	pub->context = pd->context;
	pub->pd = pd;
	pub->send_cq = init->send_cq;
	pub->recv_cq = init->recv_cq;
	pub->srq = init->srq;
	*out = pub;
	return 0;
}

int
verbs_engine_modify_qp(struct droce_qp *qp, struct droce_qp_attr *attr, int mask)
{
	struct qp_modify_args a = { .qp = tp_qp_from_pub(qp), .attr = attr, .mask = mask };

	return tp_qp_call(a.qp, qp_modify_fn, &a);
}

int
verbs_engine_query_qp(struct droce_qp *qp, struct droce_qp_attr *attr,
		struct droce_qp_init_attr *init)
{
	struct qp_modify_args a = { .qp = tp_qp_from_pub(qp), .attr = attr, .init = init };

	return tp_qp_call(a.qp, qp_query_fn, &a);
}

struct qp_cc_args {
	struct tp_qp *qp;
	const char *algo;
};

static int
qp_set_cc_fn(void *arg)
{
	struct qp_cc_args *a = arg;

	return tp_qp_set_cc(a->qp, a->algo);
}

int
verbs_engine_set_qp_cc(struct droce_qp *qp, const char *algo)
{
	struct qp_cc_args a = { .qp = tp_qp_from_pub(qp), .algo = algo };

	return tp_qp_call(a.qp, qp_set_cc_fn, &a);
}

struct qp_sr_args {
	struct tp_qp *qp;
	bool on;
};

static int
qp_set_sr_fn(void *arg)
{
	struct qp_sr_args *a = arg;

	return tp_qp_set_sr(a->qp, a->on);
}

int
verbs_engine_set_qp_sr(struct droce_qp *qp, bool on)
{
	struct qp_sr_args a = { .qp = tp_qp_from_pub(qp), .on = on };

	return tp_qp_call(a.qp, qp_set_sr_fn, &a);
}

int
verbs_engine_destroy_qp(struct droce_qp *qp)
{
	struct droce_context *ctx = qp->context;
	uint32_t pd = qp->pd->handle;
	/* as ibverbs: wait until every event got for it was acked */
	int rc = tp_qp_mute_events(tp_qp_from_pub(qp));

	if (rc != 0)
		return rc;
	verbs_events_forget(ctx, qp);
	rc = tp_qp_call(tp_qp_from_pub(qp), qp_destroy_fn, tp_qp_from_pub(qp));
	if (rc != 0)
		return rc;
	prot_pd_put(engine_ctx(ctx)->prot, pd);
	return 0;
}

/* ---- shared receive queues ------------------------------------------------------- */

struct srq_args {
	struct tp_engine *eng;
	uint32_t pd;
	struct tp_srq *srq;
	struct droce_srq_attr *attr;
	int mask;
};

static int
srq_create_fn(void *arg)
{
	struct srq_args *a = arg;

	return tp_srq_create(a->eng, a->pd, a->attr, &a->srq);
}

static int
srq_modify_fn(void *arg)
{
	struct srq_args *a = arg;

	return tp_srq_modify(a->srq, a->attr, a->mask);
}

static int
srq_query_fn(void *arg)
{
	struct srq_args *a = arg;

	return tp_srq_query(a->srq, a->attr);
}

static int
srq_destroy_fn(void *arg)
{
	return tp_srq_destroy(arg);
}

int
verbs_engine_create_srq(struct droce_pd *pd, struct droce_srq_init_attr *init,
		  struct droce_srq **out)
{
	struct engine_context *e = engine_ctx(pd->context);
	struct droce_srq *pub;
	struct srq_args a;
	int rc;

	if (e->tp == NULL)
		return -ENODEV;
	rc = prot_pd_get(e->prot, pd->handle);	/* an SRQ keeps its PD alive */
	if (rc != 0)
		return rc;
	a = (struct srq_args){ .eng = tp_dev_qp_engine(e->tp), .pd = pd->handle,
			       .attr = &init->attr };
	rc = tp_engine_call(a.eng, srq_create_fn, &a);
	if (rc != 0) {
		prot_pd_put(e->prot, pd->handle);
		return rc;
	}
	pub = tp_srq_pub(a.srq);
	pub->context = pd->context;
	pub->srq_context = init->srq_context;
	pub->pd = pd;
	*out = pub;
	return 0;
}

int
verbs_engine_modify_srq(struct droce_srq *srq, struct droce_srq_attr *attr, int mask)
{
	struct srq_args a = { .srq = tp_srq_from_pub(srq), .attr = attr, .mask = mask };

	return tp_engine_call(tp_srq_engine(a.srq), srq_modify_fn, &a);
}

int
verbs_engine_query_srq(struct droce_srq *srq, struct droce_srq_attr *attr)
{
	struct srq_args a = { .srq = tp_srq_from_pub(srq), .attr = attr };

	return tp_engine_call(tp_srq_engine(a.srq), srq_query_fn, &a);
}

int
verbs_engine_destroy_srq(struct droce_srq *srq)
{
	struct droce_context *ctx = srq->context;
	uint32_t pd = srq->pd->handle;
	struct tp_srq *t = tp_srq_from_pub(srq);
	int rc = tp_srq_mute_events(t);

	if (rc != 0)
		return rc;
	verbs_events_forget(ctx, srq);
	rc = tp_engine_call(tp_srq_engine(t), srq_destroy_fn, t);
	if (rc != 0)
		return rc;
	prot_pd_put(engine_ctx(ctx)->prot, pd);
	return 0;
}

/* ---- address handles -------------------------------------------------------------- */

struct ah_create_args {
	struct tp_dev *dev;
	uint32_t pd;
	struct droce_ah_attr *attr;
	struct tp_ah *ah;
};

/* on the engine's lcore: resolving may send ARP/ND on the link */
static int
ah_create_fn(void *arg)
{
	struct ah_create_args *a = arg;

	return tp_ah_create(a->dev, a->pd, a->attr, &a->ah);
}

int
verbs_engine_create_ah(struct droce_pd *pd, struct droce_ah_attr *attr, struct droce_ah **out)
{
	struct engine_context *e = engine_ctx(pd->context);
	struct ah_create_args a = { .dev = e->tp, .pd = pd->handle, .attr = attr };
	struct droce_ah *pub;
	int rc;

	if (e->tp == NULL)
		return -EINVAL;
	/* An AH keeps its PD alive, as a QP does: ibv_dealloc_pd fails with
	 * EBUSY while AHs use the PD (the kernel counts them in pd->usecnt). */
	rc = prot_pd_get(e->prot, pd->handle);
	if (rc != 0)
		return rc;
	rc = tp_dev_call(e->tp, ah_create_fn, &a);
	if (rc != 0) {
		prot_pd_put(e->prot, pd->handle);
		return rc;
	}
	pub = tp_ah_pub(a.ah);
	pub->context = pd->context;
	pub->pd = pd;
	*out = pub;
	return 0;
}

int
verbs_engine_destroy_ah(struct droce_ah *ah)
{
	struct engine_context *e = engine_ctx(ah->context);
	uint32_t pd = ah->pd->handle;

	tp_ah_destroy(e->tp, tp_ah_from_pub(ah));
	prot_pd_put(e->prot, pd);
	return 0;
}

int
verbs_engine_attach_mcast(struct droce_qp *qp, const union droce_gid *gid)
{
	return tp_mcast_attach(tp_qp_from_pub(qp), gid->raw);
}

int
verbs_engine_detach_mcast(struct droce_qp *qp, const union droce_gid *gid)
{
	return tp_mcast_detach(tp_qp_from_pub(qp), gid->raw);
}
