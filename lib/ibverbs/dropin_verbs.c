/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_verbs.c - PDs, MRs, CQs, QPs and AHs of libibverbs on droce's,
 * and the data path of struct ibv_context_ops.
 *
 * droce.h keeps libibverbs' layouts for the structures of the data path
 * (work requests, scatter entries, completions) and of QP attributes, so
 * those pass through as they are.  Only the object pointers inside them differ (a UD work request's
 * AH, the CQs of a QP), and those are translated.
 */
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dropin_private.h"

/*
 * The layouts cast below.  Every field's offset is checked against
 * <infiniband/verbs.h> by transport_verbs_api (test_abi_*); the sizes here
 * keep a mismatch from building at all.
 */
#define SAME_SIZE(a, b) \
	_Static_assert(sizeof(struct a) == sizeof(struct b), #a " size")
SAME_SIZE(ibv_sge, droce_sge);
SAME_SIZE(ibv_recv_wr, droce_recv_wr);
SAME_SIZE(ibv_send_wr, droce_send_wr);
SAME_SIZE(ibv_wc, droce_wc);
SAME_SIZE(ibv_ah_attr, droce_ah_attr);
SAME_SIZE(ibv_qp_attr, droce_qp_attr);
SAME_SIZE(ibv_qp_cap, droce_qp_cap);
SAME_SIZE(ibv_srq_attr, droce_srq_attr);
_Static_assert(offsetof(struct ibv_srq_attr, srq_limit) ==
	       offsetof(struct droce_srq_attr, srq_limit), "srq_limit");
SAME_SIZE(ibv_mw_bind_info, droce_mw_bind_info);
_Static_assert(offsetof(struct ibv_send_wr, bind_mw) ==
	       offsetof(struct droce_send_wr, bind_mw), "bind_mw");
_Static_assert(IBV_MW_TYPE_1 == (int)DROCE_MW_TYPE_1 &&
	       IBV_MW_TYPE_2 == (int)DROCE_MW_TYPE_2, "mw types");
_Static_assert(IBV_REREG_MR_ERR_INPUT == (int)DROCE_REREG_MR_ERR_INPUT &&
	       IBV_REREG_MR_CHANGE_TRANSLATION == (int)DROCE_REREG_MR_CHANGE_TRANSLATION &&
	       IBV_REREG_MR_CHANGE_PD == (int)DROCE_REREG_MR_CHANGE_PD &&
	       IBV_REREG_MR_CHANGE_ACCESS == (int)DROCE_REREG_MR_CHANGE_ACCESS, "rereg_mr");
_Static_assert(IBV_SRQ_MAX_WR == (int)DROCE_SRQ_MAX_WR &&
	       IBV_SRQ_LIMIT == (int)DROCE_SRQ_LIMIT, "srq attr mask");

/* Work requests translated on the stack per call of ibv_post_send. */
#define DROPIN_WR_BATCH 16

/* ---- protection domains, memory regions ------------------------------------------ */

struct ibv_pd *
ibv_alloc_pd(struct ibv_context *context)
{
	struct dropin_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL)
		return NULL;		/* errno: ENOMEM (calloc) */
	pd->d = droce_alloc_pd(dropin_dctx(context));
	if (pd->d == NULL)
		return dropin_undo_alloc(pd);
	pd->ibv.context = context;
	pd->ibv.handle = pd->d->handle;
	return &pd->ibv;
}

/*
 * A parent domain (ibv_alloc_parent_domain(3)): droce has no thread
 * domains and allocates its queues itself, so it is the protection domain
 * under a second ibv_pd; the allocators are never called (as a provider
 * that answers IBV_ALLOCATOR_USE_DEFAULT).
 */
struct ibv_pd *
dropin_alloc_parent_domain(struct ibv_context *context,
			   struct ibv_parent_domain_init_attr *attr)
{
	struct dropin_pd *prot;
	struct dropin_pd *pd;

	if (attr == NULL || attr->pd == NULL || attr->pd->context != context ||
	    (attr->comp_mask & ~(uint32_t)(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
					   IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT))) {
		errno = EINVAL;
		return NULL;
	}
	prot = DROPIN_OBJ_OF(dropin_pd, attr->pd);
	if (attr->td != NULL || prot->protection != NULL) {
		errno = EINVAL;		/* no thread domains; no parent of a parent */
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL)
		return NULL;		/* errno: ENOMEM (calloc) */
	pd->d = prot->d;
	pd->protection = prot;
	pd->ibv.context = context;
	pd->ibv.handle = prot->ibv.handle;
	prot->nparents++;
	return &pd->ibv;
}

int
ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct dropin_pd *p = DROPIN_OBJ_OF(dropin_pd, pd);
	int rc;

	if (p->protection != NULL) {
		p->protection->nparents--;
		free(p);
		return 0;
	}
	if (p->nparents != 0)
		return EBUSY;	/* a parent domain still uses it */
	rc = droce_dealloc_pd(p->d);
	if (rc == 0)
		free(p);
	return rc;
}

static struct ibv_mr *
dropin_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
	      int access)
{
	struct dropin_mr *mr;

	if (access & IBV_ACCESS_OPTIONAL_RANGE) {
		/* optional bits (relaxed ordering...) are hints: dropped */
		access &= ~IBV_ACCESS_OPTIONAL_RANGE;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return NULL;		/* errno: ENOMEM (calloc) */
	mr->d = droce_reg_mr_iova(DROPIN_OBJ_OF(dropin_pd, pd)->d, addr, length,
				  iova, access);
	if (mr->d == NULL)
		return dropin_undo_alloc(mr);
	mr->ibv.context = pd->context;
	mr->ibv.pd = pd;
	mr->ibv.addr = addr;
	mr->ibv.length = length;
	mr->ibv.handle = mr->d->handle;
	mr->ibv.lkey = mr->d->lkey;
	mr->ibv.rkey = mr->d->rkey;
	return &mr->ibv;
}

#undef ibv_reg_mr
struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	uint64_t iova = (access & IBV_ACCESS_ZERO_BASED) ? 0 : (uintptr_t)addr;

	return dropin_reg_mr(pd, addr, length, iova, access);
}

struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		 unsigned int access)
{
	return dropin_reg_mr(pd, addr, length, iova, (int)access);
}

#undef ibv_reg_mr_iova
struct ibv_mr *
ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

int
ibv_dereg_mr(struct ibv_mr *mr)
{
	struct dropin_mr *m = DROPIN_OBJ_OF(dropin_mr, mr);
	int rc = droce_dereg_mr(m->d);

	if (rc == 0)
		free(m);
	return rc;
}

/*
 * ibv_rereg_mr(3): libibverbs' input checks, then droce_rereg_mr, which
 * never leaves the MR unusable: any error it finds is
 * IBV_REREG_MR_ERR_INPUT with the old MR intact (errno set), so
 * IBV_REREG_MR_ERR_CMD is never returned.
 */
int
ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
	     size_t length, int access)
{
	struct dropin_mr *m = DROPIN_OBJ_OF(dropin_mr, mr);
	struct droce_pd *dpd = NULL;
	int rc;

	if ((flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (addr == NULL || length == 0)) ||
	    (access != 0 && !(flags & IBV_REREG_MR_CHANGE_ACCESS))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		if (pd == NULL) {
			errno = EINVAL;
			return IBV_REREG_MR_ERR_INPUT;
		}
		dpd = DROPIN_OBJ_OF(dropin_pd, pd)->d;
	}
	/* optional bits (relaxed ordering...) are hints, as at registration */
	access &= ~IBV_ACCESS_OPTIONAL_RANGE;
	rc = droce_rereg_mr(m->d, flags, dpd, addr, length, access);
	if (rc != 0)
		return rc;	/* DROCE_REREG_MR_ERR_INPUT == IBV_REREG_MR_ERR_INPUT */
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = length;
	}
	mr->lkey = m->d->lkey;
	mr->rkey = m->d->rkey;
	return 0;
}

/* ---- memory windows (ops.alloc_mw, dealloc_mw, bind_mw: verbs.h's inlines) ---- */

static struct ibv_mw *
dropin_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct dropin_mw *mw = calloc(1, sizeof(*mw));

	if (mw == NULL)
		return NULL;		/* errno: ENOMEM (calloc) */
	mw->d = droce_alloc_mw(DROPIN_OBJ_OF(dropin_pd, pd)->d, (enum droce_mw_type)type);
	if (mw->d == NULL)
		return dropin_undo_alloc(mw);
	mw->ibv.context = pd->context;
	mw->ibv.pd = pd;
	mw->ibv.rkey = mw->d->rkey;
	mw->ibv.handle = mw->d->handle;
	mw->ibv.type = type;
	return &mw->ibv;
}

/* A bound window is unbound (its rkey revoked) first. */
static int
dropin_dealloc_mw(struct ibv_mw *mw)
{
	struct dropin_mw *m = DROPIN_OBJ_OF(dropin_mw, mw);
	int rc = droce_dealloc_mw(m->d);

	if (rc == 0)
		free(m);
	return rc;
}

/* verbs.h's ibv_bind_mw checked the type and the MR's context and PD;
 * the new rkey (ibv_inc_rkey of the old) is the window's once posted. */
static int
dropin_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct dropin_mw *m = DROPIN_OBJ_OF(dropin_mw, mw);
	struct droce_mw_bind bind = {
		.wr_id = mw_bind->wr_id,
		.send_flags = mw_bind->send_flags,
		.bind_info = {
			.mr = droce_mr_of(mw_bind->bind_info.mr),
			.addr = mw_bind->bind_info.addr,
			.length = mw_bind->bind_info.length,
			.mw_access_flags = mw_bind->bind_info.mw_access_flags,
		},
	};
	int rc = droce_bind_mw(DROPIN_OBJ_OF(dropin_qp, qp)->d, m->d, &bind);

	if (rc == 0)
		mw->rkey = m->d->rkey;
	return rc;
}

/* ---- completion queues ------------------------------------------------------------ */

struct dropin_cq *
dropin_cq_new(struct ibv_context *context, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct dropin_cq *cq;

	if (comp_vector != 0) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return NULL;		/* errno: ENOMEM (calloc) */
	/* droce's cq_context: the drop-in's CQ, for its events */
	cq->d = droce_create_cq(dropin_dctx(context), cqe, cq,
				dropin_channel_of(channel), 0);
	if (cq->d == NULL)
		return dropin_undo_alloc(cq);
	cq->ibv.context = context;
	cq->ibv.channel = channel;
	cq->ibv.cq_context = cq_context;
	cq->ibv.handle = cq->d->handle;
	cq->ibv.cqe = cq->d->cqe;
	pthread_mutex_init(&cq->ibv.mutex, NULL);
	pthread_cond_init(&cq->ibv.cond, NULL);
	if (channel != NULL)
		channel->refcnt++;
	return cq;
}

struct ibv_cq *
ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct dropin_cq *cq = dropin_cq_new(context, cqe, cq_context, channel, comp_vector);

	return cq != NULL ? &cq->ibv : NULL;
}

int
ibv_destroy_cq(struct ibv_cq *cq)
{
	struct dropin_cq *c = DROPIN_OBJ_OF(dropin_cq, cq);
	int rc = droce_destroy_cq(c->d);	/* waits for its completion events' acks */

	if (rc != 0)
		return rc;
	dropin_async_forget(cq->context, cq, &cq->mutex, &cq->cond,
			    &cq->async_events_completed, &c->events_reported);
	if (cq->channel != NULL)
		cq->channel->refcnt--;
	pthread_cond_destroy(&cq->cond);
	pthread_mutex_destroy(&cq->mutex);
	free(c);
	return 0;
}

/* ---- queue pairs ------------------------------------------------------------------- */

static struct droce_cq *
droce_cq_of(struct ibv_cq *cq)
{
	return cq != NULL ? DROPIN_OBJ_OF(dropin_cq, cq)->d : NULL;
}

static struct ibv_qp *
dropin_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct droce_qp_init_attr init = {
		.send_cq = droce_cq_of(attr->send_cq),
		.recv_cq = droce_cq_of(attr->recv_cq),
		.qp_type = (enum droce_qp_type)attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.srq = attr->srq != NULL ? DROPIN_OBJ_OF(dropin_srq, attr->srq)->d : NULL,
	};
	struct dropin_qp *qp;

	/* RAW_PACKET, XRC and driver QPs: a capability droce lacks (rxe's
	 * answer too), so that programs and rdma-core's tests skip them. */
	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	memcpy(&init.cap, &attr->cap, sizeof(init.cap));
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return NULL;		/* errno: ENOMEM (calloc) */
	init.qp_context = qp;	/* the drop-in's QP, for async events */
	qp->d = droce_create_qp(DROPIN_OBJ_OF(dropin_pd, pd)->d, &init);
	if (qp->d == NULL)
		return dropin_undo_alloc(qp);
	memcpy(&attr->cap, &init.cap, sizeof(attr->cap));
	qp->ibv.context = pd->context;
	qp->ibv.qp_context = attr->qp_context;
	qp->ibv.pd = pd;
	qp->ibv.send_cq = attr->send_cq;
	qp->ibv.recv_cq = attr->recv_cq;
	qp->ibv.srq = attr->srq;
	qp->ibv.handle = qp->d->handle;
	qp->ibv.qp_num = qp->d->qp_num;
	qp->ibv.state = IBV_QPS_RESET;
	qp->ibv.qp_type = attr->qp_type;
	pthread_mutex_init(&qp->ibv.mutex, NULL);
	pthread_cond_init(&qp->ibv.cond, NULL);
	return &qp->ibv;
}

struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	return dropin_create_qp(pd, attr);
}

/* ibv_create_qp_ex: ibv_create_qp's attributes and the ibv_wr_* API
 * (send_ops_flags, dropin_wr.c); create flags only when none is set;
 * nothing else of the extended ones. */
#define DROPIN_QP_INIT_ATTR_MASK (IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | \
				  IBV_QP_INIT_ATTR_CREATE_FLAGS)

static struct ibv_qp *
dropin_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_init_attr init = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
	};
	struct ibv_qp *qp;

	if ((attr->comp_mask & ~(uint32_t)DROPIN_QP_INIT_ATTR_MASK) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags != 0)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL ||
	    attr->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	qp = dropin_create_qp(attr->pd, &init);
	if (qp == NULL)
		return NULL;
	attr->cap = init.cap;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		int rc = dropin_wr_init(DROPIN_OBJ_OF(dropin_qp, qp), attr->send_ops_flags);

		if (rc != 0) {
			ibv_destroy_qp(qp);
			errno = rc;
			return NULL;
		}
	}
	return qp;
}

/* droce's multicast (droce_attach_mcast): 0 or the errno value. */
int
ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return droce_attach_mcast(DROPIN_OBJ_OF(dropin_qp, qp)->d,
				  (const union droce_gid *)gid, lid);
}

int
ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return droce_detach_mcast(DROPIN_OBJ_OF(dropin_qp, qp)->d,
				  (const union droce_gid *)gid, lid);
}

/* Only QPs created with send_ops_flags have the ibv_wr_* API. */
struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct dropin_qp *q = DROPIN_OBJ_OF(dropin_qp, qp);

	return q->batch != NULL ? &q->qpx : NULL;
}

int
ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	int rc = droce_modify_qp(DROPIN_OBJ_OF(dropin_qp, qp)->d,
				 (struct droce_qp_attr *)attr, attr_mask);

	if (rc == 0 && (attr_mask & IBV_QP_STATE))
		qp->state = attr->qp_state;
	return rc;
}

int
ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
	     struct ibv_qp_init_attr *init_attr)
{
	struct droce_qp_init_attr init;
	int rc = droce_query_qp(DROPIN_OBJ_OF(dropin_qp, qp)->d,
				(struct droce_qp_attr *)attr, attr_mask, &init);

	if (rc != 0)
		return rc;
	qp->state = attr->qp_state;
	if (init_attr != NULL) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = qp->qp_context;
		init_attr->send_cq = qp->send_cq;
		init_attr->recv_cq = qp->recv_cq;
		init_attr->srq = qp->srq;
		memcpy(&init_attr->cap, &init.cap, sizeof(init_attr->cap));
		init_attr->qp_type = qp->qp_type;
		init_attr->sq_sig_all = init.sq_sig_all;
	}
	return 0;
}

/*
 * ibv_query_qp_data_in_order(3): 0, data is not guaranteed to land in
 * order within a work request.  droce's responder places a message's
 * packets in PSN order, but copies each packet's payload with memcpy,
 * which may store the end of a block before its middle (glibc's
 * vectorised copies do), so a reader polling the last byte of a WRITE
 * could see it before the bytes ahead of it.  Linux's rxe answers 0 too.
 */
int
ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp;
	(void)op;
	(void)flags;
	return 0;
}

int
ibv_destroy_qp(struct ibv_qp *qp)
{
	struct dropin_qp *q = DROPIN_OBJ_OF(dropin_qp, qp);
	int rc;

	if (q->cm_id != NULL) {
		droce_rdma_use_qp(q->cm_id, NULL);
		q->cm_id = NULL;
	}
	rc = droce_destroy_qp(q->d);
	if (rc != 0)
		return rc;
	dropin_async_forget(qp->context, qp, &qp->mutex, &qp->cond, &qp->events_completed,
			    &q->events_reported);
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->mutex);
	free(q->batch);
	free(q);
	return 0;
}

/* ---- shared receive queues ---------------------------------------------------------- */

struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr)
{
	struct dropin_srq *srq = calloc(1, sizeof(*srq));
	struct droce_srq_init_attr init;

	if (srq == NULL)
		return NULL;		/* errno: ENOMEM (calloc) */
	init.srq_context = srq;	/* the drop-in's SRQ, for async events */
	memcpy(&init.attr, &srq_init_attr->attr, sizeof(init.attr));
	srq->d = droce_create_srq(DROPIN_OBJ_OF(dropin_pd, pd)->d, &init);
	if (srq->d == NULL)
		return dropin_undo_alloc(srq);
	/* as rdma-core: the sizes it got */
	srq_init_attr->attr.max_wr = init.attr.max_wr;
	srq_init_attr->attr.max_sge = init.attr.max_sge;
	srq->ibv.context = pd->context;
	srq->ibv.srq_context = srq_init_attr->srq_context;
	srq->ibv.pd = pd;
	srq->ibv.handle = srq->d->handle;
	pthread_mutex_init(&srq->ibv.mutex, NULL);
	pthread_cond_init(&srq->ibv.cond, NULL);
	return &srq->ibv;
}

int
ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask)
{
	return droce_modify_srq(DROPIN_OBJ_OF(dropin_srq, srq)->d,
				(struct droce_srq_attr *)srq_attr, srq_attr_mask);
}

int
ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr)
{
	return droce_query_srq(DROPIN_OBJ_OF(dropin_srq, srq)->d,
			       (struct droce_srq_attr *)srq_attr);
}

int
ibv_destroy_srq(struct ibv_srq *srq)
{
	struct dropin_srq *s = DROPIN_OBJ_OF(dropin_srq, srq);
	int rc = droce_destroy_srq(s->d);	/* EBUSY while QPs use it */

	if (rc != 0)
		return rc;
	dropin_async_forget(srq->context, srq, &srq->mutex, &srq->cond, &srq->events_completed,
			    &s->events_reported);
	pthread_cond_destroy(&srq->cond);
	pthread_mutex_destroy(&srq->mutex);
	free(s);
	return 0;
}

static int
dropin_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr)
{
	return droce_post_srq_recv(DROPIN_OBJ_OF(dropin_srq, srq)->d,
				   (struct droce_recv_wr *)wr,
				   (struct droce_recv_wr **)bad_wr);
}

/* ---- address handles --------------------------------------------------------------- */

struct ibv_ah *
ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct dropin_ah *ah = calloc(1, sizeof(*ah));

	if (ah == NULL)
		return NULL;		/* errno: ENOMEM (calloc) */
	ah->d = droce_create_ah(DROPIN_OBJ_OF(dropin_pd, pd)->d,
				(struct droce_ah_attr *)attr);
	if (ah->d == NULL)
		return dropin_undo_alloc(ah);
	ah->ibv.context = pd->context;
	ah->ibv.pd = pd;
	ah->ibv.handle = ah->d->handle;
	return &ah->ibv;
}

int
ibv_destroy_ah(struct ibv_ah *ah)
{
	struct dropin_ah *a = DROPIN_OBJ_OF(dropin_ah, ah);
	int rc = droce_destroy_ah(a->d);

	if (rc == 0)
		free(a);
	return rc;
}

/* The local GID index of gid, or -1. */
static int
dropin_find_gid(struct ibv_context *context, uint8_t port_num, const union ibv_gid *gid)
{
	union ibv_gid g;

	for (int i = 0; ibv_query_gid(context, port_num, i, &g) == 0; i++)
		if (memcmp(&g, gid, sizeof(g)) == 0)
			return i;
	return -1;
}

/* ::ffff:a.b.c.d from an IPv4 address as the header holds it. */
static void
dropin_gid_v4mapped(union ibv_gid *gid, const uint8_t addr[4])
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], addr, 4);
}

/*
 * The reply path to a UD message from its 40-byte GRH slot, which for
 * RoCEv2 holds the IPv6 header, or the IPv4 header in its last 20 bytes
 * (first 20 zero), as Soft-RoCE writes it and lib/transport does.
 */
int
ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
		    struct ibv_wc *wc, struct ibv_grh *grh,
		    struct ibv_ah_attr *ah_attr)
{
	const uint8_t *raw = (const uint8_t *)grh;
	union ibv_gid local;
	int idx;

	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->port_num = port_num;
	ah_attr->sl = wc->sl;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return EINVAL;		/* RoCE: every path is global */
	ah_attr->is_global = 1;
	if ((raw[20] >> 4) == 4 && (raw[0] >> 4) != 6) {
		ah_attr->grh.traffic_class = raw[21];		/* IPv4 TOS */
		ah_attr->grh.hop_limit = raw[28];		/* TTL */
		dropin_gid_v4mapped(&ah_attr->grh.dgid, &raw[32]);	/* saddr */
		dropin_gid_v4mapped(&local, &raw[36]);		/* daddr */
	} else if ((raw[0] >> 4) == 6) {
		uint32_t vtf = be32toh(grh->version_tclass_flow);

		ah_attr->grh.traffic_class = (uint8_t)(vtf >> 20);
		ah_attr->grh.flow_label = vtf & 0xfffff;
		ah_attr->grh.hop_limit = grh->hop_limit;
		ah_attr->grh.dgid = grh->sgid;
		local = grh->dgid;
	} else {
		return EINVAL;
	}
	idx = dropin_find_gid(context, port_num, &local);
	if (idx < 0)
		return ENOENT;
	ah_attr->grh.sgid_index = (uint8_t)idx;
	return 0;
}

struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
		      struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;
	int rc = ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr);

	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	return ibv_create_ah(pd, &attr);
}

/* ---- the data path ------------------------------------------------------------------ */

/*
 * A UD work request names an ibv_ah, a BIND_MW request an ibv_mw and an
 * ibv_mr: copied with droce's objects in their place, DROPIN_WR_BATCH at a
 * time.
 */
static int
dropin_post_send_copy(struct dropin_qp *qp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	struct droce_send_wr copy[DROPIN_WR_BATCH];
	struct ibv_send_wr *orig[DROPIN_WR_BATCH];

	while (wr != NULL) {
		struct droce_send_wr *bad = NULL;
		unsigned int n = 0;
		int rc;

		for (; wr != NULL && n < DROPIN_WR_BATCH; wr = wr->next, n++) {
			if ((wr->opcode == IBV_WR_BIND_MW && wr->bind_mw.mw == NULL) ||
			    (qp->ibv.qp_type == IBV_QPT_UD && wr->wr.ud.ah == NULL)) {
				*bad_wr = wr;
				return EINVAL;
			}
			memcpy(&copy[n], wr, sizeof(copy[n]));
			if (qp->ibv.qp_type == IBV_QPT_UD)
				copy[n].wr.ud.ah = DROPIN_OBJ_OF(dropin_ah, wr->wr.ud.ah)->d;
			if (wr->opcode == IBV_WR_BIND_MW) {
				copy[n].bind_mw.mw = DROPIN_OBJ_OF(dropin_mw, wr->bind_mw.mw)->d;
				copy[n].bind_mw.bind_info.mr = droce_mr_of(wr->bind_mw.bind_info.mr);
			}
			copy[n].next = NULL;
			if (n > 0)
				copy[n - 1].next = &copy[n];
			orig[n] = wr;
		}
		rc = droce_post_send(qp->d, copy, &bad);
		if (rc != 0) {
			*bad_wr = orig[bad - copy];
			return rc;
		}
	}
	return 0;
}

static int
dropin_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		 struct ibv_send_wr **bad_wr)
{
	struct dropin_qp *q = DROPIN_OBJ_OF(dropin_qp, qp);

	if (qp->qp_type != IBV_QPT_UD) {
		bool plain = true;

		for (struct ibv_send_wr *w = wr; w != NULL && plain; w = w->next)
			plain = w->opcode != IBV_WR_BIND_MW;
		if (plain)
			return droce_post_send(q->d, (struct droce_send_wr *)wr,
					       (struct droce_send_wr **)bad_wr);
	}
	return dropin_post_send_copy(q, wr, bad_wr);
}

static int
dropin_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		 struct ibv_recv_wr **bad_wr)
{
	return droce_post_recv(DROPIN_OBJ_OF(dropin_qp, qp)->d,
			       (struct droce_recv_wr *)wr,
			       (struct droce_recv_wr **)bad_wr);
}

/* The verbs a context's ops carry: a live one's, or a forked child's. */
struct dropin_ops {
	struct ibv_context_ops ops;
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *qp_init_attr_ex);
};

static void
dropin_apply_ops(struct dropin_context *ctx, const struct dropin_ops *o)
{
	struct ibv_context_ops *ops = &ctx->vctx.context.ops;

	ops->poll_cq = o->ops.poll_cq;
	ops->req_notify_cq = o->ops.req_notify_cq;
	ops->post_send = o->ops.post_send;
	ops->post_recv = o->ops.post_recv;
	ops->post_srq_recv = o->ops.post_srq_recv;
	ops->alloc_mw = o->ops.alloc_mw;
	ops->dealloc_mw = o->ops.dealloc_mw;
	ops->bind_mw = o->ops.bind_mw;
	ctx->vctx.create_qp_ex = o->create_qp_ex;
}

void
dropin_set_ops(struct dropin_context *ctx)
{
	static const struct dropin_ops live = {
		.ops = {
			.poll_cq = dropin_poll_cq,
			.req_notify_cq = dropin_req_notify_cq,
			.post_send = dropin_post_send,
			.post_recv = dropin_post_recv,
			.post_srq_recv = dropin_post_srq_recv,
			.alloc_mw = dropin_alloc_mw,
			.dealloc_mw = dropin_dealloc_mw,
			.bind_mw = dropin_bind_mw,
		},
		.create_qp_ex = dropin_create_qp_ex,
	};

	dropin_apply_ops(ctx, &live);
	ctx->vctx.create_cq_ex = dropin_create_cq_ex;
	ctx->vctx.alloc_parent_domain = dropin_alloc_parent_domain;
}

/*
 * A forked child's contexts (dropin_device.c, "fork"): its queues and CQs
 * are the parent's, in memory both share; every data-path verb is refused.
 */
static int
forked_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	(void)cq, (void)num_entries, (void)wc;
	errno = EPERM;
	return -1;
}

static int
forked_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	(void)cq, (void)solicited_only;
	return EPERM;
}

static int
forked_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	(void)qp;
	*bad_wr = wr;
	return EPERM;
}

static int
forked_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	(void)qp;
	*bad_wr = wr;
	return EPERM;
}

static int
forked_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	(void)srq;
	*bad_wr = wr;
	return EPERM;
}

static struct ibv_mw *
forked_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	(void)pd, (void)type;
	errno = EPERM;
	return NULL;
}

static int
forked_dealloc_mw(struct ibv_mw *mw)
{
	(void)mw;
	return EPERM;
}

static int
forked_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	(void)qp, (void)mw, (void)mw_bind;
	return EPERM;
}

static struct ibv_qp *
forked_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	(void)context, (void)attr;
	errno = EPERM;
	return NULL;
}

void
dropin_set_forked_ops(struct dropin_context *ctx)
{
	static const struct dropin_ops forked = {
		.ops = {
			.poll_cq = forked_poll_cq,
			.req_notify_cq = forked_req_notify_cq,
			.post_send = forked_post_send,
			.post_recv = forked_post_recv,
			.post_srq_recv = forked_post_srq_recv,
			.alloc_mw = forked_alloc_mw,
			.dealloc_mw = forked_dealloc_mw,
			.bind_mw = forked_bind_mw,
		},
		.create_qp_ex = forked_create_qp_ex,
	};

	dropin_apply_ops(ctx, &forked);
}

/* ---- names ---------------------------------------------------------------------------- */

const char *
ibv_wc_status_str(enum ibv_wc_status status)
{
	return droce_wc_status_str((enum droce_wc_status)status);
}

const char *
ibv_event_type_str(enum ibv_event_type event)
{
	return droce_event_type_str((enum droce_event_type)event);
}

const char *
ibv_node_type_str(enum ibv_node_type node_type)
{
	static const char *const names[] = {
		[IBV_NODE_CA] = "InfiniBand channel adapter",
		[IBV_NODE_SWITCH] = "InfiniBand switch",
		[IBV_NODE_ROUTER] = "InfiniBand router",
		[IBV_NODE_RNIC] = "iWARP NIC",
		[IBV_NODE_USNIC] = "usNIC",
		[IBV_NODE_USNIC_UDP] = "usNIC UDP",
		[IBV_NODE_UNSPECIFIED] = "unspecified",
	};

	if (node_type < IBV_NODE_CA || (size_t)node_type >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[node_type];
}

const char *
ibv_port_state_str(enum ibv_port_state port_state)
{
	static const char *const names[] = {
		[IBV_PORT_NOP] = "no state change (NOP)",
		[IBV_PORT_DOWN] = "down",
		[IBV_PORT_INIT] = "init",
		[IBV_PORT_ARMED] = "armed",
		[IBV_PORT_ACTIVE] = "active",
		[IBV_PORT_ACTIVE_DEFER] = "active defer",
	};

	if (port_state < IBV_PORT_NOP || port_state > IBV_PORT_ACTIVE_DEFER)
		return "unknown";
	return names[port_state];
}
