/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_qp.c - the droce_* verbs for CQs, QPs, SRQs and address handles:
 * argument checks and the checks across objects (one context), then the
 * provider's op.  ibverbs conventions: creators return NULL with errno set,
 * the rest return 0 or a positive errno.  Posting and polling are droce.h's
 * inline calls of the ops.
 */
#include <errno.h>
#include <string.h>

#include "droce.h"
#include "verbs_private.h"

/* ---- completion queues ------------------------------------------------------- */

struct droce_cq *
droce_create_cq(struct droce_context *context, int cqe, void *cq_context,
		struct droce_comp_channel *channel, int comp_vector)
{
	struct droce_cq *cq;
	int rc;

	if (context == NULL || (channel != NULL && channel->context != context) ||
	    comp_vector != 0) {
		errno = EINVAL;
		return NULL;
	}
	rc = context->ops->create_cq(context, cqe, cq_context, channel, &cq);
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	return cq;
}

/* As ibverbs: waits until every CQ_ERR and completion event got for it was acked. */
int
droce_destroy_cq(struct droce_cq *cq)
{
	if (cq == NULL)
		return EINVAL;
	return -cq->context->ops->destroy_cq(cq);
}

int
droce_req_notify_cq(struct droce_cq *cq, int solicited_only)
{
	if (cq == NULL)
		return EINVAL;
	return -cq->context->ops->req_notify_cq(cq, solicited_only);
}

/* ---- queue pairs -------------------------------------------------------------- */

struct droce_qp *
droce_create_qp(struct droce_pd *pd, struct droce_qp_init_attr *init)
{
	struct droce_context *ctx;
	struct droce_qp *qp;
	int rc;

	if (pd == NULL || init == NULL || init->send_cq == NULL ||
	    init->recv_cq == NULL) {
		errno = EINVAL;
		return NULL;
	}
	ctx = pd->context;
	if (init->send_cq->context != ctx || init->recv_cq->context != ctx ||
	    (init->srq != NULL && init->srq->context != ctx)) {
		errno = EINVAL;		/* an object of another context */
		return NULL;
	}
	rc = ctx->ops->create_qp(pd, init, &qp);
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	return qp;
}

int
droce_modify_qp(struct droce_qp *qp, struct droce_qp_attr *attr, int attr_mask)
{
	if (qp == NULL || attr == NULL)
		return EINVAL;
	return -qp->context->ops->modify_qp(qp, attr, attr_mask);
}

int
droce_query_qp(struct droce_qp *qp, struct droce_qp_attr *attr, int attr_mask,
	       struct droce_qp_init_attr *init_attr)
{
	(void)attr_mask;		/* everything is always returned */
	if (qp == NULL || attr == NULL)
		return EINVAL;
	return -qp->context->ops->query_qp(qp, attr, init_attr);
}

int
droce_qp_set_cc(struct droce_qp *qp, const char *algo)
{
	if (qp == NULL || algo == NULL)
		return EINVAL;
	return -qp->context->ops->set_qp_cc(qp, algo);
}

int
droce_qp_set_sr(struct droce_qp *qp, bool on)
{
	if (qp == NULL)
		return EINVAL;
	return -qp->context->ops->set_qp_sr(qp, on);
}

/* As ibverbs: waits until every event got for it was acked. */
int
droce_destroy_qp(struct droce_qp *qp)
{
	if (qp == NULL)
		return EINVAL;
	return -qp->context->ops->destroy_qp(qp);
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

/* ---- shared receive queues ------------------------------------------------------- */

struct droce_srq *
droce_create_srq(struct droce_pd *pd, struct droce_srq_init_attr *init)
{
	struct droce_srq *srq;
	int rc;

	if (pd == NULL || init == NULL) {
		errno = EINVAL;
		return NULL;
	}
	rc = pd->context->ops->create_srq(pd, init, &srq);
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	return srq;
}

int
droce_modify_srq(struct droce_srq *srq, struct droce_srq_attr *attr, int mask)
{
	if (srq == NULL || attr == NULL)
		return EINVAL;
	return -srq->context->ops->modify_srq(srq, attr, mask);
}

int
droce_query_srq(struct droce_srq *srq, struct droce_srq_attr *attr)
{
	if (srq == NULL || attr == NULL)
		return EINVAL;
	return -srq->context->ops->query_srq(srq, attr);
}

/* As ibverbs: EBUSY while QPs use it; waits until its events got were acked. */
int
droce_destroy_srq(struct droce_srq *srq)
{
	if (srq == NULL)
		return EINVAL;
	return -srq->context->ops->destroy_srq(srq);
}

int
droce_post_srq_recv(struct droce_srq *srq, struct droce_recv_wr *wr,
		    struct droce_recv_wr **bad_wr)
{
	if (srq == NULL || bad_wr == NULL)
		return EINVAL;
	return -srq->context->ops->post_srq_recv(srq, wr, bad_wr);
}

/* ---- address handles -------------------------------------------------------------- */

struct droce_ah *
droce_create_ah(struct droce_pd *pd, struct droce_ah_attr *attr)
{
	struct droce_ah *ah;
	int rc;

	if (pd == NULL || attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	rc = pd->context->ops->create_ah(pd, attr, &ah);
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	return ah;
}

int
droce_destroy_ah(struct droce_ah *ah)
{
	if (ah == NULL)
		return EINVAL;
	return -ah->context->ops->destroy_ah(ah);
}

/* IPv6 ff00::/8 or IPv4-mapped 224.0.0.0/4 (rdma_is_multicast_addr). */
static bool
gid_is_mcast(const union droce_gid *gid)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (memcmp(gid->raw, v4mapped, sizeof(v4mapped)) == 0)
		return (gid->raw[12] & 0xf0) == 0xe0;
	return gid->raw[0] == 0xff;
}

/* As uverbs' checks before the driver's: a UD QP, a group GID. */
static int
mcast_check(const struct droce_qp *qp, const union droce_gid *gid)
{
	if (qp == NULL || gid == NULL || qp->qp_type != DROCE_QPT_UD ||
	    !gid_is_mcast(gid))
		return EINVAL;
	return 0;
}

int
droce_attach_mcast(struct droce_qp *qp, const union droce_gid *gid, uint16_t lid)
{
	int rc = mcast_check(qp, gid);

	(void)lid;		/* RoCE: no multicast LIDs */
	return rc != 0 ? rc : -qp->context->ops->attach_mcast(qp, gid);
}

int
droce_detach_mcast(struct droce_qp *qp, const union droce_gid *gid, uint16_t lid)
{
	int rc = mcast_check(qp, gid);

	(void)lid;
	return rc != 0 ? rc : -qp->context->ops->detach_mcast(qp, gid);
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
