/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_qp.c - the droce_* verbs for CQs, QPs, address handles and work
 * requests: argument checks and object wiring, then lib/transport.
 * ibverbs conventions: creators return NULL with errno set, the rest
 * return 0 or a positive errno.
 *
 * Control verbs that touch engine state run through tp_qp_call() (a QP's,
 * on the engine that owns it) or tp_dev_call() (CQs, AHs): a direct call
 * in run-to-completion mode, a command executed by that engine's
 * transport lcore (and waited for) in the dedicated mode.  Posting and
 * polling go straight to lib/transport, which uses the rings in that mode.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>

#include "droce.h"
#include "transport.h"
#include "verbs_daemon.h"
#include "verbs_private.h"

/*
 * The engine's CQ/QP behind a public one: the object itself in process;
 * in daemon mode the daemon's, if it is this process's (else NULL).
 */
static inline struct tp_cq *
cq_engine(struct droce_cq *cq)
{
	if (likely(cq->context->daemon == NULL))
		return tp_cq_from_pub(cq);
	cq = verbs_dmn_cq_remote(cq);
	return cq != NULL ? tp_cq_from_pub(cq) : NULL;
}

static inline struct tp_qp *
qp_engine(struct droce_qp *qp)
{
	if (likely(qp->context->daemon == NULL))
		return tp_qp_from_pub(qp);
	qp = verbs_dmn_qp_remote(qp);
	return qp != NULL ? tp_qp_from_pub(qp) : NULL;
}

struct tp_cq *
verbs_cq_engine(struct droce_cq *cq)
{
	return cq_engine(cq);
}

int
verbs_attach_link(struct droce_context *ctx, struct droce_link *link,
		  const struct tp_dev_config *cfg)
{
	int rc;

	if (ctx == NULL || link == NULL)
		return EINVAL;
	if (ctx->tp == NULL) {
		rc = tp_dev_create(ctx, ctx->prot, cfg, &ctx->tp);
		if (rc != 0)
			return -rc;
		tp_dev_set_event_fd(ctx->tp, ctx->async_fd);
	}
	return -tp_dev_attach_link(ctx->tp, link);
}

int
verbs_run_on_lcore(struct droce_context *ctx, unsigned int lcore)
{
	int rc;

	if (ctx == NULL || ctx->tp == NULL)
		return EINVAL;
	rc = tp_dev_run_on_lcore(ctx->tp, lcore);
	if (rc != 0)
		return -rc;
	ctx->dedicated = true;
	return 0;
}

int
verbs_run_on_lcores(struct droce_context *ctx, const unsigned int *lcores,
		    unsigned int n)
{
	int rc;

	if (ctx == NULL || ctx->tp == NULL)
		return EINVAL;
	rc = tp_dev_run_on_lcores(ctx->tp, lcores, n);
	if (rc != 0)
		return -rc;
	ctx->dedicated = true;
	return 0;
}

int
verbs_run_adaptive(struct droce_context *ctx)
{
	if (ctx == NULL || ctx->tp == NULL)
		return EINVAL;
	return -tp_dev_run_adaptive(ctx->tp);
}

int
verbs_detach_link(struct droce_context *ctx)
{
	int rc = tp_dev_destroy(ctx->tp);	/* leaves a transport lcore first */

	if (rc != 0)
		return -rc;
	ctx->tp = NULL;
	ctx->dedicated = false;
	verbs_events_reset(ctx);	/* events not taken went with the engine */
	return 0;
}

struct tp_dev *
verbs_tp(struct droce_context *ctx)
{
	return ctx->tp;
}

int
verbs_engine_event(struct droce_context *ctx, struct droce_async_event *ev)
{
	if (ctx->daemon != NULL)
		return verbs_dmn_event_take(ctx, ev);
	return ctx->tp != NULL ? tp_dev_event_take(ctx->tp, ev) : -EAGAIN;
}

/*
 * Run-to-completion (with or without a progress thread): one round of
 * the engine.  Dedicated transport lcore:
 * a no-op returning 0 (that lcore progresses the engine; droce_poll_cq
 * copies from the CQ's rings).
 */
int
droce_progress(struct droce_context *context)
{
	if (context == NULL || context->tp == NULL || context->dedicated)
		return 0;
	return tp_progress(context->tp);
}

uint64_t
droce_get_counter(struct droce_context *context, const char *name)
{
	if (context == NULL || context->tp == NULL || name == NULL)
		return UINT64_MAX;
	return tp_dev_counter(context->tp, name);
}

int
droce_query_pkey(struct droce_context *context, uint8_t port_num, int index,
		 uint16_t *pkey)
{
	uint16_t v;
	int rc;

	if (context == NULL || context->tp == NULL || pkey == NULL || port_num != 1 ||
	    index < 0)
		return EINVAL;
	rc = tp_dev_query_pkey(context->tp, (unsigned int)index, &v);
	if (rc != 0)
		return -rc;
	*pkey = rte_cpu_to_be_16(v);
	return 0;
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

struct droce_cq *
droce_create_cq(struct droce_context *context, int cqe, void *cq_context,
		struct droce_comp_channel *channel, int comp_vector)
{
	struct droce_cq *pub;
	struct tp_cq *cq;

	if (context != NULL && context->daemon != NULL && comp_vector == 0 &&
	    (channel == NULL || channel->context == context))
		return verbs_dmn_create_cq(context, cqe, cq_context, channel);
	if (context == NULL || context->tp == NULL || context->daemon != NULL ||
	    (channel != NULL && channel->context != context) || comp_vector != 0) {
		errno = context != NULL && context->tp == NULL && context->daemon == NULL ?
			ENODEV : EINVAL;
		return NULL;
	}
	{
		struct cq_create_args a = { .dev = context->tp, .cqe = cqe };
		int rc = tp_dev_call(context->tp, cq_create_fn, &a);

		if (rc != 0) {
			errno = -rc;
			return NULL;
		}
		cq = a.cq;
	}
	pub = tp_cq_pub(cq);
	pub->context = context;
	pub->cq_context = cq_context;
	pub->channel = channel;
	if (channel != NULL) {
		int rc = verbs_channel_add(channel, pub);

		if (rc != 0) {
			tp_dev_call(context->tp, cq_destroy_fn, cq);
			errno = rc;
			return NULL;
		}
	}
	return pub;
}

/* As ibverbs: waits until every CQ_ERR and completion event got for it was acked. */
int
droce_destroy_cq(struct droce_cq *cq)
{
	int rc;

	if (cq == NULL)
		return EINVAL;
	if (cq->context->daemon != NULL)
		return verbs_dmn_destroy_cq(cq);
	rc = -tp_cq_mute_events(tp_cq_from_pub(cq));	/* EBUSY while QPs use it */
	if (rc != 0)
		return rc;
	verbs_events_forget(cq->context, cq);
	if (cq->channel != NULL)
		verbs_channel_leave(cq);
	return -tp_dev_call(cq->context->tp, cq_destroy_fn, tp_cq_from_pub(cq));
}

int
droce_poll_cq(struct droce_cq *cq, int num_entries, struct droce_wc *wc)
{
	struct tp_cq *t;
	int n;

	if (cq == NULL || (num_entries > 0 && wc == NULL) ||
	    unlikely((t = cq_engine(cq)) == NULL)) {
		errno = EINVAL;
		return -1;
	}
	n = tp_cq_poll(t, num_entries, wc);
	if (unlikely(n < 0)) {
		errno = -n;
		return -1;
	}
	return n;
}

int
droce_req_notify_cq(struct droce_cq *cq, int solicited_only)
{
	struct tp_cq *t;

	if (cq == NULL || (t = cq_engine(cq)) == NULL)
		return EINVAL;
	tp_cq_arm(t, solicited_only != 0);
	return 0;
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

struct droce_qp *
droce_create_qp(struct droce_pd *pd, struct droce_qp_init_attr *init)
{
	struct droce_context *ctx;
	struct droce_qp *pub;
	struct tp_qp *qp;
	int rc;

	if (pd == NULL || init == NULL || init->send_cq == NULL ||
	    init->recv_cq == NULL) {
		errno = EINVAL;
		return NULL;
	}
	ctx = pd->context;
	if (ctx->daemon != NULL && init->send_cq->context == ctx &&
	    init->recv_cq->context == ctx)
		return verbs_dmn_create_qp(pd, init);
	if (ctx->daemon != NULL) {
		errno = EINVAL;		/* a CQ of another context */
		return NULL;
	}
	if (ctx->tp == NULL || init->send_cq->context != ctx ||
	    init->recv_cq->context != ctx ||
	    (init->srq != NULL && init->srq->context != ctx)) {
		errno = ctx->tp == NULL ? ENODEV : EINVAL;
		return NULL;
	}
	rc = prot_pd_get(ctx->prot, pd->handle);	/* a QP keeps its PD alive */
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	{
		struct qp_create_args a = {
			/* an SRQ's QPs live on its engine (lib/transport) */
			.eng = init->srq != NULL ? tp_srq_engine(tp_srq_from_pub(init->srq)) :
						   tp_dev_qp_engine(ctx->tp),
			.pd = pd->handle, .init = init,
			.scq = tp_cq_from_pub(init->send_cq),
			.rcq = tp_cq_from_pub(init->recv_cq),
		};

		rc = tp_engine_call(a.eng, qp_create_fn, &a);
		qp = a.qp;
	}
	if (rc != 0) {
		prot_pd_put(ctx->prot, pd->handle);
		errno = -rc;
		return NULL;
	}
	pub = tp_qp_pub(qp);
	pub->context = ctx;
	pub->pd = pd;
	pub->send_cq = init->send_cq;
	pub->recv_cq = init->recv_cq;
	pub->srq = init->srq;
	return pub;
}

int
droce_modify_qp(struct droce_qp *qp, struct droce_qp_attr *attr, int attr_mask)
{
	struct qp_modify_args a = { .attr = attr, .mask = attr_mask };

	if (qp == NULL || attr == NULL)
		return EINVAL;
	if (qp->context->daemon != NULL)
		return verbs_dmn_modify_qp(qp, attr, attr_mask);
	a.qp = tp_qp_from_pub(qp);
	return -tp_qp_call(a.qp, qp_modify_fn, &a);
}

int
droce_query_qp(struct droce_qp *qp, struct droce_qp_attr *attr, int attr_mask,
	       struct droce_qp_init_attr *init_attr)
{
	struct qp_modify_args a = { .attr = attr, .init = init_attr };

	(void)attr_mask;		/* everything is always returned */
	if (qp == NULL || attr == NULL)
		return EINVAL;
	if (qp->context->daemon != NULL)
		return verbs_dmn_query_qp(qp, attr, init_attr);
	a.qp = tp_qp_from_pub(qp);
	return -tp_qp_call(a.qp, qp_query_fn, &a);
}

int
droce_destroy_qp(struct droce_qp *qp)
{
	struct droce_context *ctx;
	uint32_t pd;
	int rc;

	if (qp == NULL)
		return EINVAL;
	ctx = qp->context;
	if (ctx->daemon != NULL)
		return verbs_dmn_destroy_qp(qp);
	pd = qp->pd->handle;
	/* as ibverbs: wait until every event got for it was acked */
	rc = -tp_qp_mute_events(tp_qp_from_pub(qp));
	if (rc != 0)
		return rc;
	verbs_events_forget(ctx, qp);
	rc = -tp_qp_call(tp_qp_from_pub(qp), qp_destroy_fn, tp_qp_from_pub(qp));
	if (rc != 0)
		return rc;
	prot_pd_put(ctx->prot, pd);
	return 0;
}

int
droce_post_send(struct droce_qp *qp, struct droce_send_wr *wr,
		struct droce_send_wr **bad_wr)
{
	struct tp_qp *t;

	if (qp == NULL || bad_wr == NULL || unlikely((t = qp_engine(qp)) == NULL))
		return EINVAL;
	return -tp_post_send(t, wr, bad_wr);
}

/*
 * ibv_bind_mw: a BIND_MW work request on the QP's send queue with the next
 * rkey (ibv_inc_rkey), executed in order with the QP's other WRs; what only
 * execution can check (the MR's rights and range) fails in the CQE.
 */
int
droce_bind_mw(struct droce_qp *qp, struct droce_mw *mw, struct droce_mw_bind *mw_bind)
{
	const struct droce_mw_bind_info *bi;
	struct droce_send_wr wr, *bad;
	int rc;

	if (qp == NULL || mw == NULL || mw_bind == NULL || mw->type != DROCE_MW_TYPE_1 ||
	    mw->context != qp->context)
		return EINVAL;	/* type-2 windows: DROCE_WR_BIND_MW via droce_post_send */
	bi = &mw_bind->bind_info;
	if (bi->length != 0) {
		if (bi->mr == NULL || bi->mr->context != mw->context)
			return EINVAL;
		if (bi->mr->pd != mw->pd)
			return EPERM;
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = DROCE_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = droce_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = *bi;
	rc = droce_post_send(qp, &wr, &bad);
	if (rc != 0)
		return rc;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

int
droce_post_recv(struct droce_qp *qp, struct droce_recv_wr *wr,
		struct droce_recv_wr **bad_wr)
{
	struct tp_qp *t;

	if (qp == NULL || bad_wr == NULL || unlikely((t = qp_engine(qp)) == NULL))
		return EINVAL;
	return -tp_post_recv(t, wr, bad_wr);
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

struct droce_srq *
droce_create_srq(struct droce_pd *pd, struct droce_srq_init_attr *init)
{
	struct droce_context *ctx;
	struct droce_srq *pub;
	struct srq_args a;
	int rc;

	if (pd == NULL || init == NULL || pd->context->tp == NULL) {
		errno = pd != NULL && init != NULL ? ENODEV : EINVAL;
		return NULL;
	}
	ctx = pd->context;
	rc = prot_pd_get(ctx->prot, pd->handle);	/* an SRQ keeps its PD alive */
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	a = (struct srq_args){ .eng = tp_dev_qp_engine(ctx->tp), .pd = pd->handle,
			       .attr = &init->attr };
	rc = tp_engine_call(a.eng, srq_create_fn, &a);
	if (rc != 0) {
		prot_pd_put(ctx->prot, pd->handle);
		errno = -rc;
		return NULL;
	}
	pub = tp_srq_pub(a.srq);
	pub->context = ctx;
	pub->srq_context = init->srq_context;
	pub->pd = pd;
	return pub;
}

int
droce_modify_srq(struct droce_srq *srq, struct droce_srq_attr *attr, int mask)
{
	struct srq_args a = { .attr = attr, .mask = mask };

	if (srq == NULL || attr == NULL)
		return EINVAL;
	a.srq = tp_srq_from_pub(srq);
	return -tp_engine_call(tp_srq_engine(a.srq), srq_modify_fn, &a);
}

int
droce_query_srq(struct droce_srq *srq, struct droce_srq_attr *attr)
{
	struct srq_args a = { .attr = attr };

	if (srq == NULL || attr == NULL)
		return EINVAL;
	a.srq = tp_srq_from_pub(srq);
	return -tp_engine_call(tp_srq_engine(a.srq), srq_query_fn, &a);
}

/* As ibverbs: EBUSY while QPs use it; waits until its events got were acked. */
int
droce_destroy_srq(struct droce_srq *srq)
{
	struct droce_context *ctx;
	struct tp_srq *t;
	uint32_t pd;
	int rc;

	if (srq == NULL)
		return EINVAL;
	ctx = srq->context;
	pd = srq->pd->handle;
	t = tp_srq_from_pub(srq);
	rc = -tp_srq_mute_events(t);
	if (rc != 0)
		return rc;
	verbs_events_forget(ctx, srq);
	rc = -tp_engine_call(tp_srq_engine(t), srq_destroy_fn, t);
	if (rc != 0)
		return rc;
	prot_pd_put(ctx->prot, pd);
	return 0;
}

int
droce_post_srq_recv(struct droce_srq *srq, struct droce_recv_wr *wr,
		    struct droce_recv_wr **bad_wr)
{
	if (srq == NULL || bad_wr == NULL)
		return EINVAL;
	return -tp_post_srq_recv(tp_srq_from_pub(srq), wr, bad_wr);
}

/* ---- address handles -------------------------------------------------------------- */

struct ah_create_args {
	struct tp_dev *dev;
	struct droce_ah_attr *attr;
	struct tp_ah *ah;
};

/* on the engine's lcore: resolving may send ARP/ND on the link */
static int
ah_create_fn(void *arg)
{
	struct ah_create_args *a = arg;

	return tp_ah_create(a->dev, a->attr, &a->ah);
}

static int
ah_destroy_fn(void *arg)
{
	tp_ah_destroy(arg);
	return 0;
}

struct droce_ah *
droce_create_ah(struct droce_pd *pd, struct droce_ah_attr *attr)
{
	struct droce_ah *pub;
	struct tp_ah *ah;
	int rc;

	if (pd == NULL || attr == NULL || pd->context->tp == NULL) {
		errno = EINVAL;
		return NULL;
	}
	/* An AH keeps its PD alive, as a QP does: ibv_dealloc_pd fails with
	 * EBUSY while AHs use the PD (the kernel counts them in pd->usecnt). */
	rc = prot_pd_get(pd->context->prot, pd->handle);
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	{
		struct ah_create_args a = { .dev = pd->context->tp, .attr = attr };

		rc = tp_dev_call(pd->context->tp, ah_create_fn, &a);
		ah = a.ah;
	}
	if (rc != 0) {
		prot_pd_put(pd->context->prot, pd->handle);
		errno = -rc;
		return NULL;
	}
	pub = tp_ah_pub(ah);
	pub->context = pd->context;
	pub->pd = pd;
	return pub;
}

int
droce_destroy_ah(struct droce_ah *ah)
{
	struct droce_context *ctx;
	uint32_t pd;

	if (ah == NULL)
		return EINVAL;
	ctx = ah->context;
	pd = ah->pd->handle;
	tp_dev_call(ctx->tp, ah_destroy_fn, tp_ah_from_pub(ah));
	prot_pd_put(ctx->prot, pd);
	return 0;
}

/* ---- status strings (ibv_wc_status_str) ------------------------------------------- */

static const char *const wc_status_names[] = {
	[DROCE_WC_SUCCESS] = "success",
	[DROCE_WC_LOC_LEN_ERR] = "local length error",
	[DROCE_WC_LOC_QP_OP_ERR] = "local QP operation error",
	[DROCE_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
	[DROCE_WC_LOC_PROT_ERR] = "local protection error",
	[DROCE_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
	[DROCE_WC_MW_BIND_ERR] = "memory management operation error",
	[DROCE_WC_BAD_RESP_ERR] = "bad response error",
	[DROCE_WC_LOC_ACCESS_ERR] = "local access error",
	[DROCE_WC_REM_INV_REQ_ERR] = "remote invalid request error",
	[DROCE_WC_REM_ACCESS_ERR] = "remote access error",
	[DROCE_WC_REM_OP_ERR] = "remote operation error",
	[DROCE_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
	[DROCE_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
	[DROCE_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
	[DROCE_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
	[DROCE_WC_REM_ABORT_ERR] = "aborted error",
	[DROCE_WC_INV_EECN_ERR] = "invalid EE context number",
	[DROCE_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
	[DROCE_WC_FATAL_ERR] = "fatal error",
	[DROCE_WC_RESP_TIMEOUT_ERR] = "response timeout error",
	[DROCE_WC_GENERAL_ERR] = "general error",
	[DROCE_WC_TM_ERR] = "TM error",
	[DROCE_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
};

const char *
droce_wc_status_str(enum droce_wc_status status)
{
	if ((unsigned int)status >= sizeof(wc_status_names) / sizeof(wc_status_names[0]))
		return "unknown";
	return wc_status_names[status];
}
