/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_relay.c - droced's side of the CM relay (cm_relay.h): the port's GSI
 * QP is cm_gsi.c's, run for droced (its MADs to droced's rx, not to the
 * state machine), and the reading of the MADs droced routes and checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "cm_private.h"
#include "cm_relay.h"

struct cm_port {
	struct cm_agent a;
};

struct cm_port *
cm_port_open(struct droce_context *ctx, cm_port_rx_t rx, void *arg)
{
	struct cm_port *p = calloc(1, sizeof(*p));
	int rc;

	if (p == NULL)
		return NULL;
	p->a.ctx = ctx;
	p->a.rx = rx;
	p->a.rx_arg = arg;
	p->a.channel = droce_create_comp_channel(ctx);
	rc = p->a.channel == NULL ? -errno : 0;
	if (rc == 0 && fcntl(p->a.channel->fd, F_SETFL, O_NONBLOCK) != 0)
		rc = -errno;
	if (rc == 0)
		rc = cm_gsi_open(&p->a);
	if (rc == 0 && p->a.relay)
		rc = -EINVAL;		/* droced's own context has its engine */
	if (rc == 0 && droce_req_notify_cq(p->a.cq, 0) != 0)
		rc = -errno;
	if (rc != 0) {
		cm_port_close(p);
		errno = -rc;
		return NULL;
	}
	return p;
}

void
cm_port_close(struct cm_port *p)
{
	if (p == NULL)
		return;
	cm_gsi_close(&p->a);
	if (p->a.channel != NULL)
		droce_destroy_comp_channel(p->a.channel);
	free(p);
}

int
cm_port_fd(const struct cm_port *p)
{
	return p->a.channel->fd;
}

/* Armed again before the CQ is polled, so a completion after the poll fires. */
void
cm_port_poll(struct cm_port *p)
{
	struct droce_cq *cq;
	void *cq_ctx;
	unsigned int n = 0;

	while (droce_get_cq_event(p->a.channel, &cq, &cq_ctx) == 0)
		n++;
	if (n != 0)
		droce_ack_cq_events(p->a.cq, n);
	droce_req_notify_cq(p->a.cq, 0);
	cm_gsi_poll(&p->a);
}

int
cm_port_send(struct cm_port *p, const uint8_t gid[16], const uint8_t *mad)
{
	return cm_gsi_send(&p->a, gid, mad);
}

bool
cm_port_local(const struct cm_port *p, const uint8_t gid[16], uint8_t src[16])
{
	if (cm_gid_index(&p->a, gid) < 0)
		return false;
	/* the first GID of the family, as cm_gsi_send's source */
	for (unsigned int i = 0; i < p->a.ngids; i++)
		if (cm_gid_is_v4(p->a.gids[i]) == cm_gid_is_v4(gid)) {
			memcpy(src, p->a.gids[i], 16);
			return true;
		}
	return false;
}

/* A CM MAD a relay carries: its header checked, a Send of REQ .. SIDR_REP. */
static int
relay_hdr(const uint8_t *mad, size_t len, struct cm_mad_hdr *h)
{
	if (cm_mad_check(mad, len, h) != 0 || h->method != CM_MAD_METHOD_SEND ||
	    h->attr_id < CM_ATTR_REQ || h->attr_id > CM_ATTR_SIDR_REP)
		return -EINVAL;
	return 0;
}

/* the port of an RDMA IP CM service ID (annex A11: 0x0000000001 | PS | port)
 * of the port spaces a REQ (TCP) or a SIDR_REQ (UDP, IPoIB) may name */
static int
service_port(uint64_t service_id, bool sidr, uint16_t *port)
{
	uint64_t ps = service_id >> 16;

	if (sidr ? ps != CM_PS_UDP && ps != CM_PS_IPOIB : ps != CM_PS_TCP)
		return -EINVAL;
	*port = (uint16_t)service_id;
	return 0;
}

int
cm_relay_route(const uint8_t *mad, size_t len, struct cm_relay_route *r)
{
	struct cm_mad_hdr h;
	struct cm_sidr_req sreq;
	struct cm_sidr_rep srep;
	struct cm_req req;
	struct cm_rtu ids;

	if (relay_hdr(mad, len, &h) != 0)
		return -EINVAL;
	r->req = h.attr_id == CM_ATTR_REQ || h.attr_id == CM_ATTR_SIDR_REQ;
	if (h.attr_id == CM_ATTR_REQ) {
		cm_req_get(mad, &req);
		r->comm_id = req.local_comm_id;
		return service_port(req.service_id, false, &r->port);
	}
	if (h.attr_id == CM_ATTR_SIDR_REQ) {
		cm_sidr_req_get(mad, &sreq);
		r->comm_id = sreq.request_id;
		return service_port(sreq.service_id, true, &r->port);
	}
	/* a SIDR_REP to the requester: its Request ID is the requester's (12.11.2) */
	if (h.attr_id == CM_ATTR_SIDR_REP) {
		cm_sidr_rep_get(mad, &srep);
		r->comm_id = srep.request_id;
		return 0;
	}
	/* MRA, REJ, REP, RTU, DREQ, DREP: Local, then Remote Comm ID (12.6) */
	cm_rtu_get(mad, &ids);
	r->comm_id = ids.remote_comm_id;
	return 0;
}

int
cm_relay_out(const uint8_t *mad, size_t len, struct cm_relay_out *o)
{
	struct cm_mad_hdr h;
	struct cm_rtu ids;
	struct cm_rej rej;

	if (relay_hdr(mad, len, &h) != 0)
		return -EINVAL;
	cm_rtu_get(mad, &ids);	/* a REQ's Local Comm ID, a SIDR_REQ's Request ID */
	o->local_comm_id = ids.local_comm_id;
	o->remote_comm_id = h.attr_id == CM_ATTR_REQ || h.attr_id == CM_ATTR_SIDR_REQ ?
			    0 : ids.remote_comm_id;
	o->rej_of_req = false;
	/* a SIDR_REP goes under the requester's Request ID: it answers a SIDR_REQ */
	if (h.attr_id == CM_ATTR_SIDR_REP) {
		o->remote_comm_id = ids.local_comm_id;
		o->local_comm_id = 0;
		o->rej_of_req = true;
	}
	if (h.attr_id == CM_ATTR_REJ) {
		cm_rej_get(mad, &rej);
		o->rej_of_req = rej.msg_rejected == CM_MSG_REQ;
	}
	return 0;
}

/* a SIDR_REQ's answer: SIDR_REP status 1 "service ID not supported" (12.11.2) */
static void
sidr_unsupported(uint8_t *out, const struct cm_mad_hdr *h, const uint8_t *req_mad)
{
	struct cm_sidr_req req;
	struct cm_sidr_rep rep = { .status = CM_SIDR_UNSUPPORTED };

	cm_sidr_req_get(req_mad, &req);
	rep.request_id = req.request_id;
	rep.service_id = req.service_id;
	cm_mad_put_hdr(out, &(struct cm_mad_hdr){
		.method = CM_MAD_METHOD_SEND, .tid = h->tid, .attr_id = CM_ATTR_SIDR_REP });
	cm_sidr_rep_put(out, &rep);
}

void
cm_relay_rej_req(uint8_t *out, const uint8_t *req_mad)
{
	struct cm_mad_hdr h;
	struct cm_req req;
	struct cm_rej rej = {
		.msg_rejected = CM_MSG_REQ, .reason = CM_REJ_INVALID_SERVICE_ID,
	};

	cm_mad_check(req_mad, CM_MAD_LEN, &h);
	if (h.attr_id == CM_ATTR_SIDR_REQ) {
		sidr_unsupported(out, &h, req_mad);
		return;
	}
	cm_req_get(req_mad, &req);
	rej.remote_comm_id = req.local_comm_id;
	cm_mad_put_hdr(out, &(struct cm_mad_hdr){
		.method = CM_MAD_METHOD_SEND, .tid = h.tid, .attr_id = CM_ATTR_REJ });
	cm_rej_put(out, &rej);
}
