/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dqv_objects.c - the queue-region provider's objects (dqv.h): buffers
 * and MRs on the application's own pages, CQs and QPs created by request
 * (droced's client's) and put into the region's slots (DQ_ATTACH).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dqv.h"

uint64_t
dqv_event_name(const struct droce_context *ctx, const void *obj)
{
	(void)ctx;
	return (uint64_t)(uintptr_t)obj;
}

/* A PD of ctx's: droced sends the events of the QPs, SRQs, MRs and MWs on
 * it to ctx. */
int
dqv_alloc_pd(struct droce_context *ctx, struct droce_pd **pd)
{
	return verbs_dmn_alloc_pd(ctx, dqv_ctx(ctx)->ev_ctx, pd);
}

/* ---- memory ------------------------------------------------------------------ */

/*
 * droce_alloc_buf: the process's own pages (droced's hugepages are not
 * mapped here), page-aligned, so that registering it moves no neighbour
 * (droced_mem.c); its length in the page before it.
 */
static size_t
page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

int
dqv_alloc_buf(struct droce_context *ctx, size_t len, void **buf)
{
	size_t pg = page_size(), total;
	char *p;

	(void)ctx;
	if (len == 0 || len > SIZE_MAX - 2 * pg)
		return -EINVAL;
	total = pg + ((len + pg - 1) & ~(pg - 1));
	p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	memcpy(p, &total, sizeof(total));
	*buf = p + pg;
	return 0;
}

int
dqv_free_buf(struct droce_context *ctx, void *buf)
{
	char *p = (char *)buf - page_size();
	size_t total;

	(void)ctx;
	if (buf == NULL || ((uintptr_t)buf & (page_size() - 1)) != 0)
		return -EINVAL;
	memcpy(&total, p, sizeof(total));
	return munmap(p, total) == 0 ? 0 : -errno;
}

/* Any memory of the process: its pages moved onto memfds droced maps. */
int
dqv_reg_mr(struct droce_pd *pd, void *addr, size_t len, uint64_t iova, int access,
	   struct droce_mr **mr)
{
	return verbs_dmn_reg_mr(pd, addr, len, iova, access, true, dqv_event_name, mr);
}

int
dqv_rereg_mr(struct droce_mr *mr, int flags, struct droce_pd *pd, void *addr, size_t length,
	     int access)
{
	return verbs_dmn_rereg_mr(mr, flags, pd, addr, length, access, true);
}

/* Memory windows: droced's, by request; bound by BIND_MW descriptors in
 * the send ring (droce_bind_mw posts one). */
int
dqv_alloc_mw(struct droce_pd *pd, int type, struct droce_mw **mw)
{
	return verbs_dmn_alloc_mw(pd, type, dqv_event_name, mw);
}

/* ---- slots --------------------------------------------------------------------- */

/* A free slot of the bitmap (n slots): its index, or -ENOMEM. */
static int
slot_take(uint64_t *used, uint32_t n)
{
	int i = -ENOMEM;

	pthread_mutex_lock(&dqv_region.lock);
	for (uint32_t k = 0; k < n && i < 0; k++)
		if (!(*used & (UINT64_C(1) << k))) {
			*used |= UINT64_C(1) << k;
			i = (int)k;
		}
	pthread_mutex_unlock(&dqv_region.lock);
	return i;
}

static void
slot_give(uint64_t *used, uint32_t i)
{
	pthread_mutex_lock(&dqv_region.lock);
	*used &= ~(UINT64_C(1) << i);
	pthread_mutex_unlock(&dqv_region.lock);
}

/* DQ_ATTACH of handle h (a CQ or QP, enum dmn_dq_obj) into slot i, with
 * fd (a CQ's channel's eventfd, -1: none): 0 or a positive errno. */
static int
attach(uint64_t h, int what, uint32_t i, int fd)
{
	struct dmn_msg m = { .type = DMN_DQ_ATTACH, .h = { h }, .arg = what, .key = i };

	return verbs_daemon_call_fd(&m, fd);
}

/* ---- completion channels and CQs ----------------------------------------------- */

/* The channel is the application's eventfd alone: each CQ on it passes it
 * to droced at its attach. */
int
dqv_create_channel(struct droce_context *ctx, int fd, uint64_t *handle)
{
	(void)ctx;
	(void)fd;
	*handle = 0;
	return 0;
}

static int
destroy_request(enum dmn_req type, uint64_t h)
{
	struct dmn_msg m = { .type = type, .h = { h } };

	return verbs_daemon_call(&m);
}

int
dqv_create_cq(struct droce_context *ctx, int cqe, void *cq_context,
	      struct droce_comp_channel *channel, struct droce_cq **out)
{
	struct dmn_msg m = { .type = DMN_CREATE_CQ, .arg = cqe, .ctx = dqv_ctx(ctx)->ev_ctx };
	struct dqv_cq *cq = calloc(1, sizeof(*cq));
	int slot = slot_take(&dqv_region.cq_used, dqv_region.g.ncq), rc;

	if (cq == NULL || slot < 0) {
		free(cq);
		if (slot >= 0)
			slot_give(&dqv_region.cq_used, (uint32_t)slot);
		return -ENOMEM;
	}
	m.addr = dqv_event_name(ctx, &cq->d.pub);
	rc = verbs_daemon_call(&m);
	if (rc == 0) {
		cq->d.h = m.h[0];
		rc = attach(cq->d.h, DMN_DQ_CQ, (uint32_t)slot,
			    channel != NULL ? channel->fd : -1);
		if (rc != 0)
			(void)destroy_request(DMN_DESTROY_CQ, cq->d.h);
	}
	if (rc == 0 && channel != NULL && (rc = verbs_channel_add(channel, &cq->d.pub)) != 0)
		(void)destroy_request(DMN_DESTROY_CQ, cq->d.h);
	if (rc != 0) {
		slot_give(&dqv_region.cq_used, (uint32_t)slot);
		free(cq);
		return -rc;
	}
	cq->slot = (uint32_t)slot;
	cq->depth = dqv_region.g.cq_depth;
	cq->ring = dq_cq(dqv_region.base, &dqv_region.g, cq->slot);
	cq->notify = dq_cq_notify(dqv_region.base, &dqv_region.g, cq->slot);
	/* droced's attach zeroed the slot's indices, arm and fired count */
	cq->d.pub.context = ctx;
	cq->d.pub.cq_context = cq_context;
	cq->d.pub.cqe = m.arg;
	cq->d.pub.channel = channel;
	*out = &cq->d.pub;
	return 0;
}

/* As droced's client's: off the channel once its events were acked. */
int
dqv_destroy_cq(struct droce_cq *pub)
{
	struct dqv_cq *cq = (struct dqv_cq *)pub;
	int rc;

	if (pub->channel != NULL)
		verbs_channel_leave(pub);
	rc = destroy_request(DMN_DESTROY_CQ, cq->d.h);
	if (rc != 0 && pub->channel != NULL)
		(void)verbs_channel_add(pub->channel, pub);
	if (rc != 0)
		return -rc;
	verbs_events_forget(pub->context, pub);
	slot_give(&dqv_region.cq_used, cq->slot);
	free(cq);
	return 0;
}

/* ---- QPs ------------------------------------------------------------------------- */

/*
 * RC, UC and UD.  The rings hold what the application posts until droced
 * moves it onto its QP, so its depths must fit them (EINVAL): max_send_wr
 * descriptors of max_inline_data bytes or max_send_sge SGEs each
 * (dq_send_slots, dq_send_sge_slots entries each) must fit the send
 * ring, max_recv_wr of max_recv_sge SGEs (dq_recv_slots) the receive ring.
 */
static int
qp_init_check(const struct droce_qp_init_attr *init)
{
	/* the inline room droced's QP will grant (droce_qp_min_inline) */
	uint32_t inl = init->cap.max_inline_data, send_slots, recv_slots;

	if (inl < droce_qp_min_inline(init->cap.max_send_sge))
		inl = droce_qp_min_inline(init->cap.max_send_sge);
	if (init->qp_type != DROCE_QPT_RC && init->qp_type != DROCE_QPT_UC &&
	    init->qp_type != DROCE_QPT_UD)
		return -EOPNOTSUPP;
	if (init->cap.max_send_sge > DQ_MAX_SGE || init->cap.max_recv_sge > DQ_MAX_SGE ||
	    inl > DQ_MAX_INLINE)
		return -EINVAL;
	send_slots = dq_send_slots(inl);
	if (send_slots < dq_send_sge_slots(init->cap.max_send_sge))
		send_slots = dq_send_sge_slots(init->cap.max_send_sge);
	recv_slots = dq_recv_slots(init->cap.max_recv_sge);
	if ((uint64_t)init->cap.max_send_wr * send_slots > dqv_region.g.sq_depth ||
	    (init->srq == NULL &&
	     (uint64_t)init->cap.max_recv_wr * recv_slots > dqv_region.g.rq_depth))
		return -EINVAL;
	return 0;
}

static int
qp_request(struct droce_pd *pd, struct droce_qp_init_attr *init, struct dqv_qp *qp)
{
	struct dmn_msg m = { .type = DMN_CREATE_QP };
	int rc;

	m.h[0] = ((const struct verbs_dmn_pd *)pd)->h;
	m.h[1] = ((const struct verbs_dmn_cq *)init->send_cq)->h;
	m.h[2] = ((const struct verbs_dmn_cq *)init->recv_cq)->h;
	m.len = init->srq != NULL ? ((const struct verbs_dmn_srq *)init->srq)->h : 0;
	m.addr = dqv_event_name(pd->context, &qp->d.pub);
	verbs_dmn_qp_init_wire(&m.u.qp_init, init);
	rc = verbs_daemon_call(&m);
	if (rc != 0)
		return rc;
	init->cap = m.u.qp_init.cap;
	init->cap.max_send_sge = init->cap.max_send_sge < DQ_MAX_SGE ? init->cap.max_send_sge :
								       DQ_MAX_SGE;
	init->cap.max_recv_sge = init->cap.max_recv_sge < DQ_MAX_SGE ? init->cap.max_recv_sge :
								       DQ_MAX_SGE;
	qp->d.h = m.h[0];
	qp->d.pub.qp_num = m.key;
	return 0;
}

int
dqv_create_qp(struct droce_pd *pd, struct droce_qp_init_attr *init, struct droce_qp **out)
{
	struct dqv_qp *qp;
	int slot, rc = qp_init_check(init);

	if (rc != 0)
		return rc;
	qp = calloc(1, sizeof(*qp));
	slot = slot_take(&dqv_region.qp_used, dqv_region.g.nqp);
	if (qp == NULL || slot < 0) {
		free(qp);
		if (slot >= 0)
			slot_give(&dqv_region.qp_used, (uint32_t)slot);
		return -ENOMEM;
	}
	rc = qp_request(pd, init, qp);
	if (rc == 0) {
		rc = attach(qp->d.h, DMN_DQ_QP, (uint32_t)slot, -1);
		if (rc != 0)
			(void)destroy_request(DMN_DESTROY_QP, qp->d.h);
	}
	if (rc != 0) {
		slot_give(&dqv_region.qp_used, (uint32_t)slot);
		free(qp);
		return -rc;
	}
	qp->slot = (uint32_t)slot;
	qp->r = &dqv_region;
	qp->sq_depth = dqv_region.g.sq_depth;
	qp->rq_depth = dqv_region.g.rq_depth;
	qp->sq = dq_sq(dqv_region.base, &dqv_region.g, qp->slot);
	qp->rq = dq_rq(dqv_region.base, &dqv_region.g, qp->slot);
	/* droced's attach zeroed the slot's indices: ours start at 0 too */
	qp->sig_all = init->sq_sig_all ? DQ_SEND_SIGNALED : 0;
	qp->max_inline = init->cap.max_inline_data;	/* as droced granted */
	qp->max_send_sge = init->cap.max_send_sge;
	qp->max_recv_sge = init->cap.max_recv_sge;
	qp->max_recv_wr = init->cap.max_recv_wr;
	__atomic_store_n(&dqv_region.rq_done[slot], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&dqv_region.slot_qpn[slot], qp->d.pub.qp_num, __ATOMIC_RELAXED);
	qp->d.pub.context = pd->context;
	qp->d.pub.qp_context = init->qp_context;
	qp->d.pub.pd = pd;
	qp->d.pub.send_cq = init->send_cq;
	qp->d.pub.recv_cq = init->recv_cq;
	qp->d.pub.srq = init->srq;
	qp->d.pub.qp_type = init->qp_type;
	qp->d.pub.state = DROCE_QPS_RESET;
	*out = &qp->d.pub;
	return 0;
}

/* As droced's client's; a QP reset leaves none of its completions in its
 * CQs' rings (dqv_cq_clean). */
int
dqv_modify_qp(struct droce_qp *qp, struct droce_qp_attr *attr, int mask)
{
	int rc = droced_modify_qp(qp, attr, mask);

	if (rc == 0 && (mask & DROCE_QP_STATE) && attr->qp_state == DROCE_QPS_RESET) {
		struct dqv_qp *q = (struct dqv_qp *)qp;

		dqv_cq_clean(qp->send_cq, qp->qp_num);
		if (qp->recv_cq != qp->send_cq)
			dqv_cq_clean(qp->recv_cq, qp->qp_num);
		q->rq_posted = dqv_recv_done(q->slot);	/* its receive queue empty */
	}
	return rc;
}

/* droced's answer, with what the region carries (at most DQ_MAX_SGE
 * SGEs; inline data as droced's QP, which was asked for what the region
 * allowed). */
int
dqv_query_qp(struct droce_qp *qp, struct droce_qp_attr *attr, struct droce_qp_init_attr *init)
{
	int rc = droced_query_qp(qp, attr, init);

	if (rc != 0)
		return rc;
	if (attr->cap.max_send_sge > DQ_MAX_SGE)
		attr->cap.max_send_sge = DQ_MAX_SGE;
	if (attr->cap.max_recv_sge > DQ_MAX_SGE)
		attr->cap.max_recv_sge = DQ_MAX_SGE;
	if (init != NULL)
		init->cap = attr->cap;
	return 0;
}

/* As droced's client's: its events not taken dropped, those taken acked. */
int
dqv_destroy_qp(struct droce_qp *pub)
{
	struct dqv_qp *qp = (struct dqv_qp *)pub;
	int rc = destroy_request(DMN_DESTROY_QP, qp->d.h);

	if (rc != 0)
		return -rc;
	verbs_events_forget(pub->context, pub);
	__atomic_store_n(&dqv_region.slot_qpn[qp->slot], 0, __ATOMIC_RELAXED);
	slot_give(&dqv_region.qp_used, qp->slot);
	free(qp);
	return 0;
}

/* ---- SRQs ------------------------------------------------------------------------ */

/* What the ring carries: max_wr descriptors of max_sge SGEs each
 * (dq_recv_slots entries) within the receive ring (EINVAL). */
static int
srq_attr_check(const struct droce_srq_attr *attr, int mask, uint32_t max_sge)
{
	if ((mask & DROCE_SRQ_MAX_WR) &&
	    (uint64_t)attr->max_wr * dq_recv_slots(max_sge) > dqv_region.g.rq_depth)
		return -EINVAL;
	return 0;
}

static int
srq_request(struct droce_pd *pd, struct droce_srq_init_attr *init, struct dqv_srq *srq)
{
	struct dmn_msg m = { .type = DMN_CREATE_SRQ, .u.srq = init->attr };
	int rc;

	m.h[0] = ((const struct verbs_dmn_pd *)pd)->h;
	m.addr = dqv_event_name(pd->context, &srq->d.pub);	/* its limit's event */
	rc = verbs_daemon_call(&m);
	if (rc != 0)
		return rc;
	init->attr = m.u.srq;
	srq->d.h = m.h[0];
	srq->d.pub.handle = m.key;
	return 0;
}

/* droced's SRQ (a request), put into a QP slot of the region: its
 * receive ring is the SRQ's, which droced takes as a QP's. */
int
dqv_create_srq(struct droce_pd *pd, struct droce_srq_init_attr *init, struct droce_srq **out)
{
	struct dqv_srq *srq;
	int slot, rc;

	if (init->attr.max_sge > DQ_MAX_SGE)
		return -EINVAL;
	rc = srq_attr_check(&init->attr, DROCE_SRQ_MAX_WR, init->attr.max_sge);
	if (rc != 0)
		return rc;
	srq = calloc(1, sizeof(*srq));
	slot = slot_take(&dqv_region.qp_used, dqv_region.g.nqp);
	if (srq == NULL || slot < 0) {
		free(srq);
		if (slot >= 0)
			slot_give(&dqv_region.qp_used, (uint32_t)slot);
		return -ENOMEM;
	}
	rc = srq_request(pd, init, srq);
	if (rc == 0) {
		rc = attach(srq->d.h, DMN_DQ_SRQ, (uint32_t)slot, -1);
		if (rc != 0)
			(void)destroy_request(DMN_DESTROY_SRQ, srq->d.h);
	}
	if (rc != 0) {
		slot_give(&dqv_region.qp_used, (uint32_t)slot);
		free(srq);
		return -rc;
	}
	srq->slot = (uint32_t)slot;
	srq->r = &dqv_region;
	srq->depth = dqv_region.g.rq_depth;
	srq->max_sge = init->attr.max_sge < DQ_MAX_SGE ? init->attr.max_sge : DQ_MAX_SGE;
	srq->ring = dq_rq(dqv_region.base, &dqv_region.g, srq->slot);
	/* droced's attach zeroed the slot's indices: ours starts at 0 too */
	srq->d.pub.context = pd->context;
	srq->d.pub.srq_context = init->srq_context;
	srq->d.pub.pd = pd;
	*out = &srq->d.pub;
	return 0;
}

int
dqv_modify_srq(struct droce_srq *srq, struct droce_srq_attr *attr, int mask)
{
	int rc = srq_attr_check(attr, mask, ((const struct dqv_srq *)srq)->max_sge);

	return rc != 0 ? rc : droced_modify_srq(srq, attr, mask);
}

/* As droced's client's: no event left naming it; its slot freed. */
int
dqv_destroy_srq(struct droce_srq *pub)
{
	struct dqv_srq *srq = (struct dqv_srq *)pub;
	int rc = destroy_request(DMN_DESTROY_SRQ, srq->d.h);

	if (rc != 0)
		return -rc;
	verbs_events_forget(pub->context, pub);
	slot_give(&dqv_region.qp_used, srq->slot);
	free(srq);
	return 0;
}
