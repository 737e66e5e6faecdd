/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsocket_table.c - the rsockets of the process: numbers (each an eventfd
 * of its own, so never one of the program's descriptors), the table from
 * number to rsocket, and the RDMA CM event channel they share.
 *
 * The table has two levels of RS_TAB_PAGE pointers, pages allocated once
 * and kept, so that a lookup reads it without a lock.  CM events are taken
 * by whichever call runs rs_cm_pump and recorded on the rsocket the id
 * belongs to (id->context), or, for a connection request, queued on the
 * listener; each event is acked at once, so that an id can always be
 * destroyed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rsocket_private.h"

#define RS_TAB_PAGE 1024
#define RS_TAB_PAGES 1024	/* descriptors below 1 Mi */

/* rdma-core's defaults (rsocket(7)) */
#define RS_DEF_SQSIZE 384
#define RS_DEF_RQSIZE 384
#define RS_DEF_INLINE 64
#define RS_DEF_MEM (1u << 17)

struct rs_cm_shared rs_cm = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct rsock **rs_tab[RS_TAB_PAGES];
static pthread_mutex_t rs_tab_lock = PTHREAD_MUTEX_INITIALIZER;

int
rs_fail(int err)
{
	errno = err;
	return -1;
}

struct rsock *
rs_alloc(int type, const struct rsock *inherit)
{
	struct rsock *rs = calloc(1, sizeof(*rs));

	if (rs == NULL)
		return NULL;
	rs->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rs->fd < 0) {
		free(rs);
		return NULL;
	}
	rs->type = type;
	pthread_mutex_init(&rs->lock, NULL);
	if (inherit != NULL) {
		rs->sq_size = inherit->sq_size;
		rs->rq_size = inherit->rq_size;
		rs->sq_inline = inherit->sq_inline;
		rs->iomap_size = inherit->iomap_size;
		rs->sbuf_size = inherit->sbuf_size;
		rs->rbuf_size = inherit->rbuf_size;
	} else {
		rs->sq_size = RS_DEF_SQSIZE;
		rs->rq_size = RS_DEF_RQSIZE;
		rs->sq_inline = RS_DEF_INLINE;
		rs->sbuf_size = RS_DEF_MEM;
		rs->rbuf_size = RS_DEF_MEM;
	}
	rs->ctrl_max_seqno = RSW_CTRL_MAX;
	return rs;
}

int
rs_insert(struct rsock *rs)
{
	unsigned int page = (unsigned int)rs->fd / RS_TAB_PAGE;

	if (page >= RS_TAB_PAGES)
		return rs_fail(EMFILE);
	pthread_mutex_lock(&rs_tab_lock);
	if (rs_tab[page] == NULL)
		rs_tab[page] = calloc(RS_TAB_PAGE, sizeof(struct rsock *));
	if (rs_tab[page] == NULL) {
		pthread_mutex_unlock(&rs_tab_lock);
		return rs_fail(ENOMEM);
	}
	__atomic_store_n(&rs_tab[page][rs->fd % RS_TAB_PAGE], rs, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&rs_tab_lock);
	return rs->fd;
}

struct rsock *
rs_lookup(int fd)
{
	struct rsock **page;

	if (fd < 0 || fd / RS_TAB_PAGE >= RS_TAB_PAGES)
		return NULL;
	page = __atomic_load_n(&rs_tab[fd / RS_TAB_PAGE], __ATOMIC_ACQUIRE);
	return page != NULL ? __atomic_load_n(&page[fd % RS_TAB_PAGE], __ATOMIC_ACQUIRE) : NULL;
}

static void
rs_remove(struct rsock *rs)
{
	if (rs_lookup(rs->fd) == rs)
		__atomic_store_n(&rs_tab[rs->fd / RS_TAB_PAGE][rs->fd % RS_TAB_PAGE], NULL,
				 __ATOMIC_RELEASE);
}

/* ---- the shared CM channel ----------------------------------------------- */

int
rs_cm_init(void)
{
	int err = 0;

	pthread_mutex_lock(&rs_cm.lock);
	if (rs_cm.ch == NULL) {
		rs_cm.ch = rdma_create_event_channel();
		if (rs_cm.ch == NULL)
			err = errno;
		else
			fcntl(rs_cm.ch->fd, F_SETFL, O_NONBLOCK);
	}
	pthread_mutex_unlock(&rs_cm.lock);
	return err != 0 ? rs_fail(err) : 0;
}

/* The errno of a failed connection event (what connect(2) would say). */
static int
event_errno(const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_REJECTED:
		return ECONNREFUSED;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		/* a SIDR_REP's refusal (a positive status): nobody has the port */
		if (ev->status > 0)
			return ECONNREFUSED;
		return ev->status < 0 && ev->status != -ETIMEDOUT ? EHOSTUNREACH : ETIMEDOUT;
	default:
		return ECONNABORTED;
	}
}

static void
request_queue(struct rsock *listener, const struct rdma_cm_event *ev)
{
	struct rs_request *req = calloc(1, sizeof(*req)), **tail;

	if (req == NULL) {
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		return;
	}
	req->id = ev->id;
	req->id->context = NULL;
	if (ev->param.conn.private_data != NULL &&
	    ev->param.conn.private_data_len >= sizeof(req->conn)) {
		memcpy(&req->conn, ev->param.conn.private_data, sizeof(req->conn));
		req->conn_ok = true;
	}
	for (tail = &listener->requests; *tail != NULL; tail = &(*tail)->next)
		;
	*tail = req;
}

/* One event, recorded on its rsocket, with rs_cm.lock held. */
static void
event_record(struct rdma_cm_event *ev)
{
	struct rsock *rs = ev->id->context;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		struct rsock *listener = ev->listen_id != NULL ? ev->listen_id->context : NULL;
		struct rdma_cm_id *id = ev->id;

		if (listener != NULL && listener->type == SOCK_DGRAM) {
			/* a SIDR_REQ for a datagram rsocket's port: its QP */
			struct rdma_conn_param p = { .qp_num = listener->dg_qpn };

			rdma_ack_cm_event(ev);
			rdma_accept(id, &p);
			rdma_destroy_id(id);
			return;
		}
		if (listener != NULL) {
			request_queue(listener, ev);
			rdma_ack_cm_event(ev);
			return;
		}
		rdma_ack_cm_event(ev);
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return;
	}
	if (rs != NULL) {
		switch (ev->event) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			rs->cm_events |= RSE_ADDR;
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			rs->cm_events |= RSE_ROUTE;
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			rs->cm_events |= RSE_ESTABLISHED;
			if (ev->id->qp_type == IBV_QPT_UD) {
				rs->ud = ev->param.ud;
				rs->ud_ok = true;
				break;
			}
			if (ev->param.conn.private_data != NULL &&
			    ev->param.conn.private_data_len >= sizeof(rs->peer_conn)) {
				memcpy(&rs->peer_conn, ev->param.conn.private_data,
				       sizeof(rs->peer_conn));
				rs->peer_conn_ok = true;
			}
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			rs->cm_events |= RSE_DISCONNECTED;
			break;
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		case RDMA_CM_EVENT_CONNECT_RESPONSE:
			break;
		default:
			rs->cm_events |= RSE_ERROR;
			rs->cm_status = event_errno(ev);
			break;
		}
	}
	rdma_ack_cm_event(ev);
}

void
rs_cm_pump(void)
{
	struct rdma_cm_event *ev;

	pthread_mutex_lock(&rs_cm.lock);
	while (rs_cm.ch != NULL && rdma_get_cm_event(rs_cm.ch, &ev) == 0)
		event_record(ev);
	pthread_mutex_unlock(&rs_cm.lock);
}

/* The CM events recorded on rs (and the error's errno), after a pump. */
unsigned int
rs_cm_events(struct rsock *rs, int *status)
{
	unsigned int ev;

	rs_cm_pump();
	pthread_mutex_lock(&rs_cm.lock);
	ev = rs->cm_events;
	if (status != NULL)
		*status = rs->cm_status;
	pthread_mutex_unlock(&rs_cm.lock);
	return ev;
}

/* ---- freeing ------------------------------------------------------------- */

static void
verbs_free(struct rsock *rs)
{
	unsigned int i;

	rs_dgram_free(rs);
	if (rs->iomaps != NULL) {
		for (i = 0; i < rs->remote_iomap.length; i++)
			if (rs->iomaps[i].mr != NULL)
				ibv_dereg_mr(rs->iomaps[i].mr);
		free(rs->iomaps);
	}
	if (rs->id != NULL && rs->id->qp != NULL)
		rdma_destroy_qp(rs->id);
	if (rs->smr != NULL)
		ibv_dereg_mr(rs->smr);
	if (rs->rmr != NULL)
		ibv_dereg_mr(rs->rmr);
	if (rs->tmr != NULL)
		ibv_dereg_mr(rs->tmr);
	if (rs->cq != NULL)
		ibv_destroy_cq(rs->cq);
	if (rs->cq_channel != NULL)
		ibv_destroy_comp_channel(rs->cq_channel);
	if (rs->pd != NULL)
		ibv_dealloc_pd(rs->pd);
	free(rs->sbuf);
	free(rs->rbuf);
	free(rs->target);
	free(rs->rmsg);
}

/* The id destroyed once no event of it is queued (they are acked as they
 * are taken); pending requests of a listener refused. */
static void
id_free(struct rsock *rs)
{
	struct rs_request *req;
	int tries;

	pthread_mutex_lock(&rs_cm.lock);
	while ((req = rs->requests) != NULL) {
		rs->requests = req->next;
		rdma_reject(req->id, NULL, 0);
		rdma_destroy_id(req->id);
		free(req);
	}
	if (rs->id != NULL)
		rs->id->context = NULL;
	pthread_mutex_unlock(&rs_cm.lock);
	if (rs->id == NULL)
		return;
	for (tries = 0; tries < 1000; tries++) {
		rs_cm_pump();
		pthread_mutex_lock(&rs_cm.lock);
		if (rdma_destroy_id(rs->id) == 0 || errno != EBUSY) {
			pthread_mutex_unlock(&rs_cm.lock);
			rs->id = NULL;
			return;
		}
		pthread_mutex_unlock(&rs_cm.lock);
		usleep(1000);
	}
}

void
rs_free(struct rsock *rs)
{
	rs_remove(rs);
	if (rs->type == SOCK_DGRAM)
		id_free(rs);	/* its port answers no SIDR_REQ with a QP being destroyed */
	verbs_free(rs);
	if (rs->type != SOCK_DGRAM)
		id_free(rs);
	close(rs->fd);
	pthread_mutex_destroy(&rs->lock);
	free(rs);
}
