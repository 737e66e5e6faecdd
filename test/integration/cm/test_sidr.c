/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD ids of the RDMA CM (lib/cm's cm_sidr.c: RDMA_PS_UDP, SIDR of IBTA
 * 12.11) between two droce contexts over the virtual wire: a SIDR_REQ with
 * the largest private data, the QPs in RTS with RDMA_UDP_QKEY, ESTABLISHED
 * with the server's QPN, Q_Key and path, and datagrams both ways over it;
 * a lost SIDR_REP (the SIDR_REQ's retry gets the kept one, one request);
 * a reject (UNREACHABLE, status 2, its private data), a port nobody
 * listens on (status 1 after the hold), a TCP listener's port (its own
 * port space), a SIDR_REQ nobody answers (-ETIMEDOUT after the retries),
 * a listen just after the SIDR_REQ, an id destroyed before it answers;
 * hostile SIDR MADs sent to QP1 from a plain UD QP: short ones and those
 * of another class version dropped (nothing sent, no event), one with a
 * bad annex A11 header or a TCP service ID answered status 1, a SIDR_REP
 * for no request dropped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cm_wire.h"
#include "droce.h"
#include "roce_wire.h"
#include "vwire.h"
#include "tp_fixture.h"
#include "cm_fixture.h"

#define PORT 7472
/* CM response timeout 14: about 67 ms */
#define FAST_TIMEOUT 14
#define MSG 64

struct ud_fx {
	struct fx f;
	struct droce_rdma_event_channel *ch_a;	/* client */
	struct droce_rdma_event_channel *ch_b;	/* server */
	struct droce_rdma_cm_id *listener;
};

static struct droce_rdma_cm_id *
listen_on(struct ud_fx *c, uint16_t port, enum droce_rdma_port_space ps)
{
	struct droce_rdma_cm_id *id;
	struct sockaddr_in sin;

	assert_int_equal(droce_rdma_create_id(c->ch_b, &id, NULL, ps), 0);
	cmfx_sin(&sin, 2, port);
	assert_int_equal(droce_rdma_bind_addr(id, (struct sockaddr *)&sin), 0);
	assert_int_equal(droce_rdma_listen(id, 8), 0);
	return id;
}

static void
ud_open(struct ud_fx *c)
{
	fx_open(&c->f, NULL, 1 << 16);
	assert_int_equal(droce_rdma_cm_attach(c->f.a.ctx), 0);
	assert_int_equal(droce_rdma_cm_attach(c->f.b.ctx), 0);
	c->ch_a = cmfx_channel();
	c->ch_b = cmfx_channel();
	c->listener = listen_on(c, PORT, DROCE_RDMA_PS_UDP);
	assert_int_equal(c->listener->qp_type, DROCE_QPT_UD);
}

static void
ud_close(struct ud_fx *c)
{
	assert_int_equal(droce_rdma_destroy_id(c->listener), 0);
	droce_rdma_destroy_event_channel(c->ch_a);
	droce_rdma_destroy_event_channel(c->ch_b);
	assert_int_equal(droce_rdma_cm_detach(c->f.a.ctx), 0);
	assert_int_equal(droce_rdma_cm_detach(c->f.b.ctx), 0);
	fx_close(&c->f);
}

static void
ud_qp(struct droce_rdma_cm_id *id, struct fx_end *e)
{
	struct droce_qp_init_attr init = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = DROCE_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct droce_qp_attr at;

	assert_int_equal(droce_rdma_create_qp(id, e->pd, &init), 0);
	/* as librdmacm's ucma_init_ud_qp: RTS at once, RDMA_UDP_QKEY */
	assert_int_equal(fx_qp_state(id->qp), DROCE_QPS_RTS);
	assert_int_equal(droce_query_qp(id->qp, &at, DROCE_QP_QKEY, &init), 0);
	assert_int_equal(at.qkey, 0x01234567);
}

/* a client UD id routed to the server's port, with a UD QP (or without) */
static struct droce_rdma_cm_id *
client(struct ud_fx *c, uint16_t port, uint8_t retries, bool qp)
{
	struct droce_rdma_cm_id *id;
	struct sockaddr_in dst;

	assert_int_equal(droce_rdma_create_id(c->ch_a, &id, c, DROCE_RDMA_PS_UDP), 0);
	assert_int_equal(id->qp_type, DROCE_QPT_UD);
	assert_int_equal(droce_rdma_set_cm_timeout(id, FAST_TIMEOUT, retries), 0);
	cmfx_sin(&dst, 2, port);
	assert_int_equal(droce_rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	cmfx_ack(cmfx_expect(c->ch_a, DROCE_RDMA_CM_EVENT_ADDR_RESOLVED));
	assert_int_equal(droce_rdma_resolve_route(id, 1000), 0);
	cmfx_ack(cmfx_expect(c->ch_a, DROCE_RDMA_CM_EVENT_ROUTE_RESOLVED));
	if (qp)
		ud_qp(id, &c->f.a);
	return id;
}

static void
sidr_connect(struct droce_rdma_cm_id *id, const void *pdata, uint8_t len)
{
	struct droce_rdma_conn_param p = { .private_data = pdata, .private_data_len = len };

	assert_int_equal(droce_rdma_connect(id, &p), 0);
}

/* the server's CONNECT_REQUEST: the new UD id, its private data checked */
static struct droce_rdma_cm_id *
take_request(struct ud_fx *c, struct droce_rdma_cm_id *listener, const void *pdata,
	     uint8_t len)
{
	struct droce_rdma_cm_event *ev = cmfx_expect(c->ch_b,
						      DROCE_RDMA_CM_EVENT_CONNECT_REQUEST);
	struct droce_rdma_cm_id *id = ev->id;

	assert_ptr_equal(ev->listen_id, listener);
	assert_int_equal(id->qp_type, DROCE_QPT_UD);
	assert_int_equal(id->ps, DROCE_RDMA_PS_UDP);
	/* the SIDR_REQ's 216 bytes less annex A11's 36 */
	assert_int_equal(ev->param.ud.private_data_len, 180);
	assert_memory_equal(ev->param.ud.private_data, pdata, len);
	cmfx_ack(ev);
	return id;
}

static void
destroy(struct droce_rdma_cm_id *id)
{
	droce_rdma_destroy_qp(id);
	assert_int_equal(droce_rdma_destroy_id(id), 0);
}

static void
post_recv(struct fx_end *e, size_t off)
{
	struct droce_sge sge = { .addr = (uintptr_t)e->buf + off, .length = 40 + MSG,
				 .lkey = e->mr->lkey };
	struct droce_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	assert_int_equal(droce_post_recv(e->qp, &wr, &bad), 0);
}

static void
post_send(struct fx_end *e, size_t off, struct droce_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct droce_sge sge = { .addr = (uintptr_t)e->buf + off, .length = MSG,
				 .lkey = e->mr->lkey };
	struct droce_send_wr wr = {
		.wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = DROCE_WR_SEND_WITH_IMM,
		.send_flags = DROCE_SEND_SIGNALED, .imm_data = htonl(e->qp->qp_num),
		.wr = { .ud = { .ah = ah, .remote_qpn = qpn, .remote_qkey = qkey } },
	}, *bad;

	assert_int_equal(droce_post_send(e->qp, &wr, &bad), 0);
}

/* e's next completion of opcode (its other ones must succeed) */
static void
wait_wc(struct ud_fx *c, struct fx_end *e, enum droce_wc_opcode opcode, struct droce_wc *wc)
{
	for (int i = 0; i < 4; i++) {
		assert_int_equal(fx_poll(&c->f, e->cq, wc, 1, 5.0), 1);
		assert_int_equal(wc->status, DROCE_WC_SUCCESS);
		if (wc->opcode == opcode)
			return;
	}
	fail_msg("no completion of opcode %d", opcode);
}

/* What one side of the wire lost, each MAD as it was sent. */
struct lost_mads {
	uint8_t mad[8][CM_MAD_LEN];
	unsigned int n;
};

static void
keep_mad(void *arg, const struct roce_pkt *pkt, const uint8_t *frame)
{
	struct lost_mads *l = arg;

	assert_true(pkt->payload_len >= CM_MAD_LEN);
	if (l->n < 8)
		memcpy(l->mad[l->n], frame + pkt->payload_off, CM_MAD_LEN);
	l->n++;
}

static void
lose(struct fx_end *e, struct fx_faults_seen *seen, struct lost_mads *l)
{
	struct vwire_faults fl = { .drop = 1.0, .seed = fx_seed() };

	memset(l, 0, sizeof(*l));
	fx_watch_faults(&fl, seen);
	seen->lost = keep_mad;
	seen->lost_arg = l;
	assert_int_equal(vwire_set_faults(e->link, &fl), 0);
}

static void
keep(struct fx_end *e)
{
	struct vwire_faults fl = { .drop = 0.0, .seed = fx_seed() };

	assert_int_equal(vwire_set_faults(e->link, &fl), 0);
}

static void
test_sidr_connect_data(void **state)
{
	struct droce_rdma_cm_id *cid, *sid;
	struct droce_rdma_cm_event *ev;
	struct droce_ah_attr ah_attr;
	struct droce_ah *ah_a, *ah_b;
	uint8_t pdata[181];
	struct droce_rdma_conn_param too_long = { .private_data = pdata,
						  .private_data_len = 181 };
	struct fx_faults_seen seen;
	struct lost_mads lost;
	struct cm_sidr_rep rep;
	struct cm_mad_hdr h;
	struct droce_wc wc;
	uint32_t qpn, qkey;
	struct ud_fx c;

	(void)state;
	ud_open(&c);
	for (unsigned int i = 0; i < sizeof(pdata); i++)
		pdata[i] = (uint8_t)(i * 7 + 1);
	cid = client(&c, PORT, 15, true);
	c.f.a.qp = cid->qp;
	{	/* rdma_init_qp_attr of a UD id: what librdmacm moves its QP with */
		struct droce_qp_attr at = { .qp_state = DROCE_QPS_INIT };
		int mask;

		assert_int_equal(droce_rdma_init_qp_attr(cid, &at, &mask), 0);
		assert_int_equal(mask, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX | DROCE_QP_PORT |
				 DROCE_QP_QKEY);
		assert_int_equal(at.qkey, 0x01234567);
		assert_int_equal(at.port_num, 1);
		at.qp_state = DROCE_QPS_RTS;
		assert_int_equal(droce_rdma_init_qp_attr(cid, &at, &mask), 0);
		assert_int_equal(mask, DROCE_QP_STATE | DROCE_QP_SQ_PSN);
		assert_int_equal(at.sq_psn, 0);
	}
	post_recv(&c.f.a, 0);
	assert_int_equal(droce_rdma_connect(cid, &too_long), -1);
	assert_int_equal(errno, EINVAL);
	sidr_connect(cid, pdata, 180);
	sid = take_request(&c, c.listener, pdata, 180);
	ud_qp(sid, &c.f.b);
	c.f.b.qp = sid->qp;
	post_recv(&c.f.b, 0);
	/* the SIDR_REP lost: the SIDR_REQ's retry (67 ms) gets the kept one */
	lose(&c.f.b, &seen, &lost);
	{
		struct droce_rdma_conn_param p = { .private_data = "world",
						   .private_data_len = 5 };

		assert_int_equal(droce_rdma_accept(sid, &p), 0);
		assert_int_equal(droce_rdma_accept(sid, &p), -1);	/* answered */
		assert_int_equal(errno, EINVAL);
	}
	cmfx_spin(c.ch_a, c.ch_b, 0.02);
	keep(&c.f.b);
	assert_int_equal(lost.n, 1);
	assert_int_equal(cm_mad_check(lost.mad[0], CM_MAD_LEN, &h), 0);
	assert_int_equal(h.attr_id, CM_ATTR_SIDR_REP);
	cm_sidr_rep_get(lost.mad[0], &rep);
	assert_int_equal(rep.status, CM_SIDR_OK);
	assert_int_equal(rep.qpn, sid->qp->qp_num);
	assert_int_equal(rep.qkey, 0x01234567);
	assert_true(rep.service_id == (0x0111ull << 16 | PORT));
	ev = cmfx_expect(c.ch_a, DROCE_RDMA_CM_EVENT_ESTABLISHED);
	assert_ptr_equal(ev->id, cid);
	assert_int_equal(ev->status, 0);
	assert_int_equal(ev->param.ud.qp_num, sid->qp->qp_num);
	assert_int_equal(ev->param.ud.qkey, 0x01234567);
	assert_int_equal(ev->param.ud.private_data_len, 136);
	assert_memory_equal(ev->param.ud.private_data, "world", 5);
	assert_int_equal(ev->param.ud.ah_attr.is_global, 1);
	assert_int_equal(ev->param.ud.ah_attr.port_num, 1);
	assert_int_equal(ev->param.ud.ah_attr.grh.hop_limit, 64);
	assert_int_equal(ev->param.ud.ah_attr.grh.sgid_index, 0);
	assert_memory_equal(ev->param.ud.ah_attr.grh.dgid.raw, c.f.b.gid, 16);
	ah_attr = ev->param.ud.ah_attr;
	qpn = ev->param.ud.qp_num;
	qkey = ev->param.ud.qkey;
	cmfx_ack(ev);
	/* one request only: the duplicate SIDR_REQ got the kept SIDR_REP */
	cmfx_spin(c.ch_a, c.ch_b, 0.2);

	/* datagrams both ways: the client's on the event's path, the
	 * server's back to the sender (its QPN in the immediate) */
	ah_a = droce_create_ah(c.f.a.pd, &ah_attr);
	assert_non_null(ah_a);
	fx_fill(c.f.a.buf + 4096, MSG, 11);
	post_send(&c.f.a, 4096, ah_a, qpn, qkey);
	wait_wc(&c, &c.f.b, DROCE_WC_RECV, &wc);
	assert_int_equal(wc.byte_len, 40 + MSG);
	assert_int_equal(wc.src_qp, cid->qp->qp_num);
	assert_true(wc.wc_flags & DROCE_WC_WITH_IMM);
	assert_int_equal(ntohl(wc.imm_data), cid->qp->qp_num);
	assert_memory_equal(c.f.b.buf + 40, c.f.a.buf + 4096, MSG);
	ah_attr.grh.sgid_index = 0;
	memcpy(ah_attr.grh.dgid.raw, c.f.a.gid, 16);
	ah_b = droce_create_ah(c.f.b.pd, &ah_attr);
	assert_non_null(ah_b);
	fx_fill(c.f.b.buf + 4096, MSG, 12);
	post_send(&c.f.b, 4096, ah_b, wc.src_qp, 0x01234567);
	wait_wc(&c, &c.f.a, DROCE_WC_RECV, &wc);
	assert_int_equal(wc.byte_len, 40 + MSG);
	assert_int_equal(wc.src_qp, sid->qp->qp_num);
	assert_memory_equal(c.f.a.buf + 40, c.f.b.buf + 4096, MSG);
	assert_int_equal(droce_destroy_ah(ah_a), 0);
	assert_int_equal(droce_destroy_ah(ah_b), 0);
	/* a UD id has no connection to end */
	assert_int_equal(droce_rdma_disconnect(cid), -1);
	assert_int_equal(errno, EINVAL);
	c.f.a.qp = NULL;
	c.f.b.qp = NULL;
	destroy(cid);
	destroy(sid);
	cmfx_spin(c.ch_a, c.ch_b, 0.05);		/* destroying them sent nothing */
	ud_close(&c);
}

/* the client's UNREACHABLE with status (the SIDR_REP's, or -ETIMEDOUT) */
static struct droce_rdma_cm_event *
unreachable(struct ud_fx *c, struct droce_rdma_cm_id *cid, int status)
{
	struct droce_rdma_cm_event *ev = cmfx_expect(c->ch_a, DROCE_RDMA_CM_EVENT_UNREACHABLE);

	assert_ptr_equal(ev->id, cid);
	assert_int_equal(ev->status, status);
	return ev;
}

static void
test_sidr_refusals(void **state)
{
	struct droce_rdma_cm_id *cid, *sid, *tcp, *udp2;
	struct droce_rdma_cm_event *ev;
	struct fx_faults_seen seen;
	struct lost_mads lost;
	struct cm_sidr_req req;
	struct cm_mad_hdr h;
	struct ud_fx c;
	double t0;

	(void)state;
	ud_open(&c);
	/* rejected: status 2, the reject's private data */
	cid = client(&c, PORT, 15, true);
	sidr_connect(cid, "hello", 5);
	sid = take_request(&c, c.listener, "hello", 5);
	assert_int_equal(droce_rdma_reject(sid, "no", 2), 0);
	ev = unreachable(&c, cid, CM_SIDR_REJECT);
	assert_int_equal(ev->param.ud.private_data_len, 136);
	assert_memory_equal(ev->param.ud.private_data, "no", 2);
	cmfx_ack(ev);
	destroy(cid);
	destroy(sid);

	/* a port nobody listens on: held 250 ms for a listener, then status 1 */
	cid = client(&c, PORT + 1, 15, false);
	t0 = fx_now();
	sidr_connect(cid, NULL, 0);
	cmfx_ack(unreachable(&c, cid, CM_SIDR_UNSUPPORTED));
	assert_true(fx_now() - t0 >= 0.2);
	destroy(cid);

	/* a TCP listener's port is another port space: the same answer, and
	 * a UDP listener may share its number */
	tcp = listen_on(&c, PORT + 2, DROCE_RDMA_PS_TCP);
	cid = client(&c, PORT + 2, 15, false);
	sidr_connect(cid, NULL, 0);
	cmfx_ack(unreachable(&c, cid, CM_SIDR_UNSUPPORTED));
	destroy(cid);
	udp2 = listen_on(&c, PORT + 2, DROCE_RDMA_PS_UDP);
	cid = client(&c, PORT + 2, 15, true);
	sidr_connect(cid, "x", 1);
	sid = take_request(&c, udp2, "x", 1);
	ud_qp(sid, &c.f.b);
	assert_int_equal(droce_rdma_accept(sid, NULL), 0);
	ev = cmfx_expect(c.ch_a, DROCE_RDMA_CM_EVENT_ESTABLISHED);
	assert_int_equal(ev->param.ud.qp_num, sid->qp->qp_num);
	cmfx_ack(ev);
	destroy(cid);
	destroy(sid);
	assert_int_equal(droce_rdma_destroy_id(tcp), 0);

	/* a listen 10 ms after the SIDR_REQ takes it (the hold) */
	assert_int_equal(droce_rdma_destroy_id(udp2), 0);
	cid = client(&c, PORT + 2, 15, true);
	sidr_connect(cid, "late", 4);
	cmfx_spin(c.ch_a, c.ch_b, 0.01);
	udp2 = listen_on(&c, PORT + 2, DROCE_RDMA_PS_UDP);
	sid = take_request(&c, udp2, "late", 4);
	/* destroyed unanswered: SIDR_REP "rejected", as the kernel's ib_cm */
	assert_int_equal(droce_rdma_destroy_id(sid), 0);
	cmfx_ack(unreachable(&c, cid, CM_SIDR_REJECT));
	destroy(cid);
	assert_int_equal(droce_rdma_destroy_id(udp2), 0);

	/* nobody answers: 1 + 2 SIDR_REQs 67 ms apart, then -ETIMEDOUT */
	cid = client(&c, PORT, 2, true);
	lose(&c.f.a, &seen, &lost);
	sidr_connect(cid, "lost", 4);
	cmfx_ack(unreachable(&c, cid, -ETIMEDOUT));
	keep(&c.f.a);
	assert_int_equal(lost.n, 3);
	for (unsigned int i = 0; i < 3; i++) {
		assert_int_equal(cm_mad_check(lost.mad[i], CM_MAD_LEN, &h), 0);
		assert_int_equal(h.attr_id, CM_ATTR_SIDR_REQ);
		assert_memory_equal(lost.mad[i], lost.mad[0], CM_MAD_LEN);
	}
	cm_sidr_req_get(lost.mad[0], &req);
	assert_true(req.service_id == (0x0111ull << 16 | PORT));
	assert_int_equal(req.pkey, 0xffff);
	/* annex A11: version 0, IPv4, the client's port, then its data */
	assert_int_equal(req.pdata[0], 0);
	assert_int_equal(req.pdata[1], 0x40);
	assert_memory_equal(req.pdata + 36, "lost", 4);
	destroy(cid);
	ud_close(&c);
}

/*
 * MADs from a plain UD QP on a to b's QP1 (Q_Key 0x80010000, which a UD
 * QP may hold: the high bit takes the QP's own), b's answers caught by
 * losing everything b sends.
 */
struct injector {
	struct droce_qp *qp;
	struct droce_ah *ah;
};

static void
inject_open(struct ud_fx *c, struct injector *in)
{
	struct droce_qp_init_attr init = {
		.send_cq = c->f.a.cq, .recv_cq = c->f.a.cq, .qp_type = DROCE_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct droce_qp_attr at = { .qp_state = DROCE_QPS_INIT, .port_num = 1,
				    .qkey = 0x80010000 };
	struct droce_ah_attr ah = { .is_global = 1, .port_num = 1,
				    .grh = { .hop_limit = 64 } };

	in->qp = droce_create_qp(c->f.a.pd, &init);
	assert_non_null(in->qp);
	assert_int_equal(droce_modify_qp(in->qp, &at, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX |
					 DROCE_QP_PORT | DROCE_QP_QKEY), 0);
	at.qp_state = DROCE_QPS_RTR;
	assert_int_equal(droce_modify_qp(in->qp, &at, DROCE_QP_STATE), 0);
	at.qp_state = DROCE_QPS_RTS;
	at.sq_psn = 0;
	assert_int_equal(droce_modify_qp(in->qp, &at, DROCE_QP_STATE | DROCE_QP_SQ_PSN), 0);
	memcpy(ah.grh.dgid.raw, c->f.b.gid, 16);
	in->ah = droce_create_ah(c->f.a.pd, &ah);
	assert_non_null(in->ah);
}

static void
inject(struct ud_fx *c, struct injector *in, const uint8_t *mad, uint32_t len)
{
	struct droce_sge sge = { .addr = (uintptr_t)c->f.a.buf + 8192, .length = len,
				 .lkey = c->f.a.mr->lkey };
	struct droce_send_wr wr = {
		.wr_id = 3, .sg_list = &sge, .num_sge = 1, .opcode = DROCE_WR_SEND,
		.send_flags = DROCE_SEND_SIGNALED,
		.wr = { .ud = { .ah = in->ah, .remote_qpn = 1, .remote_qkey = 0x80000000 } },
	}, *bad;
	struct droce_wc wc;

	memcpy(c->f.a.buf + 8192, mad, CM_MAD_LEN);
	assert_int_equal(droce_post_send(in->qp, &wr, &bad), 0);
	assert_int_equal(fx_poll(&c->f, c->f.a.cq, &wc, 1, 5.0), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(wc.opcode, DROCE_WC_SEND);
}

static void
sidr_req_mad(uint8_t *mad, uint32_t request_id, uint64_t service_id, uint8_t hdr_version)
{
	struct cm_mad_hdr h = { .method = CM_MAD_METHOD_SEND, .tid = 0x77,
				.attr_id = CM_ATTR_SIDR_REQ };
	struct cm_ip_hdr ih = { .ip_version = 4, .src_port = 40000 };
	struct cm_sidr_req req = { .request_id = request_id, .pkey = 0xffff,
				   .service_id = service_id };

	cm_ip_hdr_put(req.pdata, &ih);
	req.pdata[0] = hdr_version;
	cm_mad_put_hdr(mad, &h);
	cm_sidr_req_put(mad, &req);
}

/* b's answer to one injected MAD (none: want_status < 0) */
static void
answered(struct ud_fx *c, struct injector *in, const uint8_t *mad, uint32_t len,
	 int want_status, uint32_t request_id)
{
	struct fx_faults_seen seen;
	struct lost_mads lost;
	struct cm_sidr_rep rep;
	struct cm_mad_hdr h;

	lose(&c->f.b, &seen, &lost);
	inject(c, in, mad, len);
	cmfx_spin(c->ch_a, c->ch_b, 0.05);
	keep(&c->f.b);
	if (want_status < 0) {
		assert_int_equal(lost.n, 0);
		return;
	}
	assert_int_equal(lost.n, 1);
	assert_int_equal(cm_mad_check(lost.mad[0], CM_MAD_LEN, &h), 0);
	assert_int_equal(h.attr_id, CM_ATTR_SIDR_REP);
	assert_true(h.tid == 0x77);
	cm_sidr_rep_get(lost.mad[0], &rep);
	assert_int_equal(rep.request_id, request_id);
	assert_int_equal(rep.status, want_status);
	assert_int_equal(rep.qpn, 0);
	assert_int_equal(rep.qkey, 0);
}

static void
test_sidr_hostile(void **state)
{
	struct droce_rdma_cm_id *cid, *sid;
	struct injector in;
	uint8_t mad[CM_MAD_LEN];
	struct ud_fx c;

	(void)state;
	ud_open(&c);
	inject_open(&c, &in);
	/* a good one first: the listener takes it (then refused by destroy) */
	sidr_req_mad(mad, 0x1234, 0x0111ull << 16 | PORT, 0);
	inject(&c, &in, mad, CM_MAD_LEN);
	sid = take_request(&c, c.listener, "", 0);
	assert_int_equal(droce_rdma_destroy_id(sid), 0);
	cmfx_spin(c.ch_a, c.ch_b, 0.05);
	/* short: dropped at the GSI QP (40 + 256 bytes or nothing) */
	answered(&c, &in, mad, CM_MAD_LEN - 1, -1, 0);
	answered(&c, &in, mad, 24, -1, 0);
	/* another class version: not a CM MAD of ours */
	sidr_req_mad(mad, 0x1235, 0x0111ull << 16 | PORT, 0);
	mad[2] = 1;
	answered(&c, &in, mad, CM_MAD_LEN, -1, 0);
	/* a bad annex A11 header, a TCP service ID: "not supported" */
	sidr_req_mad(mad, 0x1236, 0x0111ull << 16 | PORT, 1);
	answered(&c, &in, mad, CM_MAD_LEN, CM_SIDR_UNSUPPORTED, 0x1236);
	sidr_req_mad(mad, 0x1237, 0x0106ull << 16 | PORT, 0);
	answered(&c, &in, mad, CM_MAD_LEN, CM_SIDR_UNSUPPORTED, 0x1237);
	sidr_req_mad(mad, 0x1238, 0xffffffffffff0000ull | PORT, 0);
	answered(&c, &in, mad, CM_MAD_LEN, CM_SIDR_UNSUPPORTED, 0x1238);
	/* a SIDR_REP for no request of b's: dropped */
	{
		struct cm_mad_hdr h = { .method = CM_MAD_METHOD_SEND, .tid = 1,
					.attr_id = CM_ATTR_SIDR_REP };
		struct cm_sidr_rep rep = { .request_id = 0x99, .qpn = 0x55, .qkey = 1 };

		cm_mad_put_hdr(mad, &h);
		cm_sidr_rep_put(mad, &rep);
		answered(&c, &in, mad, CM_MAD_LEN, -1, 0);
	}
	/* nothing raised on b by any of them, and the CM still serves */
	cmfx_spin(c.ch_a, c.ch_b, 0.05);
	cid = client(&c, PORT, 15, true);
	sidr_connect(cid, "after", 5);
	sid = take_request(&c, c.listener, "after", 5);
	ud_qp(sid, &c.f.b);
	assert_int_equal(droce_rdma_accept(sid, NULL), 0);
	cmfx_ack(cmfx_expect(c.ch_a, DROCE_RDMA_CM_EVENT_ESTABLISHED));
	destroy(cid);
	destroy(sid);
	assert_int_equal(droce_destroy_ah(in.ah), 0);
	assert_int_equal(droce_destroy_qp(in.qp), 0);
	ud_close(&c);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sidr_connect_data),
		cmocka_unit_test(test_sidr_refusals),
		cmocka_unit_test(test_sidr_hostile),
	};

	(void)argc;
	fx_eal_init(argv[0]);
	return fx_result(cmocka_run_group_tests(tests, NULL, NULL));
}
