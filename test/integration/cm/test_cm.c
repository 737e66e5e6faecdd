/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RDMA CM (lib/cm) between two droce contexts over the virtual wire:
 * connect, data, disconnect; 100 connections set up and torn down with no
 * QP or heap byte left behind; a lost REQ, REP or RTU retried; the REJ
 * reasons of a consumer reject (28) and of a port nobody listens on (8);
 * a QP the caller made, handed to an id and taken back (droce_rdma_use_qp);
 * the caller's own QPs moved through droce_rdma_init_qp_attr, the RTU sent
 * by droce_rdma_establish, COMM_EST by droce_rdma_notify (test_own_qps).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#if defined(__SANITIZE_ADDRESS__)
#define CM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CM_TEST_ASAN 1
#endif
#endif
#ifdef CM_TEST_ASAN
/* the ASan runtime's (clang's sanitizer/allocator_interface.h; GCC 12
 * ships no such header) */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

#include <rte_lcore.h>
#include <rte_malloc.h>

#include "cm_wire.h"
#include "droce.h"
#include "roce_wire.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "vwire.h"
#include "tp_fixture.h"
#include "cm_fixture.h"

#define PORT 7471
/* CM response timeout 14: about 67 ms, so a lost MAD costs one of those */
#define FAST_TIMEOUT 14

struct cm_fx {
	struct fx f;
	struct droce_rdma_event_channel *ch_a;	/* client */
	struct droce_rdma_event_channel *ch_b;	/* server */
	struct droce_rdma_cm_id *listener;
};

static void
cm_open(struct cm_fx *c)
{
	struct sockaddr_in sin;

	fx_open(&c->f, NULL, 1 << 16);
	assert_int_equal(droce_rdma_cm_attach(c->f.a.ctx), 0);
	assert_int_equal(droce_rdma_cm_attach(c->f.b.ctx), 0);
	c->ch_a = cmfx_channel();
	c->ch_b = cmfx_channel();
	assert_int_equal(droce_rdma_create_id(c->ch_b, &c->listener, NULL,
					      DROCE_RDMA_PS_TCP), 0);
	cmfx_sin(&sin, 2, PORT);
	assert_int_equal(droce_rdma_bind_addr(c->listener, (struct sockaddr *)&sin), 0);
	assert_int_equal(droce_rdma_listen(c->listener, 8), 0);
}

static void
cm_close(struct cm_fx *c)
{
	assert_int_equal(droce_rdma_destroy_id(c->listener), 0);
	droce_rdma_destroy_event_channel(c->ch_a);
	droce_rdma_destroy_event_channel(c->ch_b);
	assert_int_equal(droce_rdma_cm_detach(c->f.a.ctx), 0);
	assert_int_equal(droce_rdma_cm_detach(c->f.b.ctx), 0);
	fx_close(&c->f);
}

static void
qp_attr(struct droce_qp_init_attr *init, struct droce_cq *cq)
{
	memset(init, 0, sizeof(*init));
	init->send_cq = cq;
	init->recv_cq = cq;
	init->qp_type = DROCE_QPT_RC;
	init->cap = (struct droce_qp_cap){ .max_send_wr = 16, .max_recv_wr = 16,
					   .max_send_sge = 1, .max_recv_sge = 1 };
}

/* A client id on ch_a, address and route resolved, no QP yet. */
static struct droce_rdma_cm_id *
client_routed(struct cm_fx *c, uint16_t port, uint8_t timeout)
{
	struct droce_rdma_cm_id *id;
	struct sockaddr_in dst;

	assert_int_equal(droce_rdma_create_id(c->ch_a, &id, c, DROCE_RDMA_PS_TCP), 0);
	assert_int_equal(droce_rdma_set_cm_timeout(id, timeout, 15), 0);
	cmfx_sin(&dst, 2, port);
	assert_int_equal(droce_rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	cmfx_ack(cmfx_expect(c->ch_a, DROCE_RDMA_CM_EVENT_ADDR_RESOLVED));
	assert_ptr_equal(id->verbs, c->f.a.ctx);
	assert_int_equal(droce_rdma_resolve_route(id, 1000), 0);
	cmfx_ack(cmfx_expect(c->ch_a, DROCE_RDMA_CM_EVENT_ROUTE_RESOLVED));
	return id;
}

/* client_routed, with a QP. */
static struct droce_rdma_cm_id *
client(struct cm_fx *c, uint16_t port, uint8_t timeout)
{
	struct droce_rdma_cm_id *id = client_routed(c, port, timeout);
	struct droce_qp_init_attr init;

	qp_attr(&init, c->f.a.cq);
	assert_int_equal(droce_rdma_create_qp(id, c->f.a.pd, &init), 0);
	return id;
}

/* The client offers 2 responder resources and asks an initiator depth of
 * 3; the server answers with the mirror image. */
static struct droce_rdma_conn_param
conn_param(const char *pdata, uint8_t responder_resources, uint8_t initiator_depth)
{
	return (struct droce_rdma_conn_param){
		.private_data = pdata, .private_data_len = (uint8_t)strlen(pdata),
		.responder_resources = responder_resources,
		.initiator_depth = initiator_depth, .retry_count = 7, .rnr_retry_count = 7,
	};
}

static void
cm_connect(struct droce_rdma_cm_id *id, const char *pdata)
{
	struct droce_rdma_conn_param p = conn_param(pdata, 2, 3);

	assert_int_equal(droce_rdma_connect(id, &p), 0);
}

/* The server's side of a CONNECT_REQUEST: the new id, with a QP. */
static struct droce_rdma_cm_id *
take_request(struct cm_fx *c, const char *pdata)
{
	struct droce_rdma_cm_event *ev = cmfx_expect(c->ch_b,
						      DROCE_RDMA_CM_EVENT_CONNECT_REQUEST);
	struct droce_rdma_cm_id *id = ev->id;
	struct droce_qp_init_attr init;

	assert_ptr_equal(ev->listen_id, c->listener);
	assert_ptr_equal(id->verbs, c->f.b.ctx);
	/* the requester's parameters seen from this side */
	assert_int_equal(ev->param.conn.responder_resources, 3);
	assert_int_equal(ev->param.conn.initiator_depth, 2);
	assert_int_equal(ev->param.conn.private_data_len, 56);
	assert_memory_equal(ev->param.conn.private_data, pdata, strlen(pdata));
	cmfx_ack(ev);
	qp_attr(&init, c->f.b.cq);
	assert_int_equal(droce_rdma_create_qp(id, c->f.b.pd, &init), 0);
	return id;
}

static void
cm_accept(struct droce_rdma_cm_id *id, const char *pdata)
{
	struct droce_rdma_conn_param p = conn_param(pdata, 3, 2);

	assert_int_equal(droce_rdma_accept(id, &p), 0);
}

static void
established(struct cm_fx *c, struct droce_rdma_cm_id *cid, struct droce_rdma_cm_id *sid)
{
	struct droce_rdma_cm_event *ev = cmfx_expect(c->ch_a, DROCE_RDMA_CM_EVENT_ESTABLISHED);

	assert_ptr_equal(ev->id, cid);
	assert_memory_equal(ev->param.conn.private_data, "world", 5);
	cmfx_ack(ev);
	ev = cmfx_expect(c->ch_b, DROCE_RDMA_CM_EVENT_ESTABLISHED);
	assert_ptr_equal(ev->id, sid);
	cmfx_ack(ev);
}

static void
cm_disconnect(struct cm_fx *c, struct droce_rdma_cm_id *cid, struct droce_rdma_cm_id *sid)
{
	struct droce_rdma_cm_event *ev;

	assert_int_equal(droce_rdma_disconnect(cid), 0);
	ev = cmfx_expect(c->ch_b, DROCE_RDMA_CM_EVENT_DISCONNECTED);
	assert_ptr_equal(ev->id, sid);
	cmfx_ack(ev);
	ev = cmfx_expect(c->ch_a, DROCE_RDMA_CM_EVENT_DISCONNECTED);
	assert_ptr_equal(ev->id, cid);
	cmfx_ack(ev);
	/* the server's own disconnect after the peer's: nothing more to do */
	assert_int_equal(droce_rdma_disconnect(sid), 0);
	assert_int_equal(fx_qp_state(cid->qp), DROCE_QPS_ERR);
	assert_int_equal(fx_qp_state(sid->qp), DROCE_QPS_ERR);
}

/* A client id on ch_a connected to the listener's new id (*sid):
 * REQ, REP, RTU, both ESTABLISHED. */
static struct droce_rdma_cm_id *
connected(struct cm_fx *c, struct droce_rdma_cm_id **sid)
{
	struct droce_rdma_cm_id *cid = client(c, PORT, FAST_TIMEOUT);

	cm_connect(cid, "hello");
	*sid = take_request(c, "hello");
	cm_accept(*sid, "world");
	established(c, cid, *sid);
	return cid;
}

static void
destroy(struct droce_rdma_cm_id *id)
{
	droce_rdma_destroy_qp(id);
	assert_int_equal(droce_rdma_destroy_id(id), 0);
}

/* QPs in the device's table (the GSI QP, QPN 1, is not in it). */
static unsigned int
live_qps(struct droce_context *ctx)
{
	unsigned int n = 0;

	for (uint32_t q = tp_dev_qp_next(verbs_tp(ctx), 0); q != 0;
	     q = tp_dev_qp_next(verbs_tp(ctx), q))
		n++;
	return n;
}

static void
test_connect_data_disconnect(void **state)
{
	struct cm_fx c;
	struct droce_rdma_cm_id *cid, *sid;
	struct droce_qp_attr at;
	struct droce_qp_init_attr init;

	(void)state;
	cm_open(&c);
	cid = connected(&c, &sid);

	/* the QPs as the REQ and REP set them up */
	assert_int_equal(droce_query_qp(cid->qp, &at, DROCE_QP_STATE, &init), 0);
	assert_int_equal(at.qp_state, DROCE_QPS_RTS);
	assert_int_equal(at.dest_qp_num, sid->qp->qp_num);
	assert_int_equal(at.max_dest_rd_atomic, 2);
	assert_int_equal(at.max_rd_atomic, 3);
	assert_int_equal(at.path_mtu, DROCE_MTU_4096);	/* the vwire's 4200-byte MTU */
	assert_int_equal(droce_query_qp(sid->qp, &at, DROCE_QP_STATE, &init), 0);
	assert_int_equal(at.qp_state, DROCE_QPS_RTS);
	assert_int_equal(at.dest_qp_num, cid->qp->qp_num);
	assert_int_equal(at.max_dest_rd_atomic, 3);
	assert_int_equal(at.max_rd_atomic, 2);

	/* data both ways: a WRITE from the client, a READ back from the server */
	c.f.a.qp = cid->qp;
	c.f.b.qp = sid->qp;
	fx_fill(c.f.a.buf, 4096, 7);
	assert_int_equal(fx_post_wait(&c.f, &c.f.a, DROCE_WR_RDMA_WRITE, 1, c.f.a.buf,
				      4096, (uintptr_t)c.f.b.buf + 8192, c.f.b.mr->rkey),
			 DROCE_WC_SUCCESS);
	assert_memory_equal(c.f.b.buf + 8192, c.f.a.buf, 4096);
	assert_int_equal(fx_post_wait(&c.f, &c.f.b, DROCE_WR_RDMA_READ, 2, c.f.b.buf + 16384,
				      4096, (uintptr_t)c.f.a.buf, c.f.a.mr->rkey),
			 DROCE_WC_SUCCESS);
	assert_memory_equal(c.f.b.buf + 16384, c.f.a.buf, 4096);
	c.f.a.qp = c.f.b.qp = NULL;

	cm_disconnect(&c, cid, sid);
	destroy(cid);
	destroy(sid);
	assert_int_equal(live_qps(c.f.a.ctx), 0);
	assert_int_equal(live_qps(c.f.b.ctx), 0);
	cm_close(&c);
}

/* A QP of the caller's own (RESET), moved to state with the id's attributes. */
static void
own_qp_to(struct droce_rdma_cm_id *id, struct droce_qp *qp, enum droce_qp_state state)
{
	struct droce_qp_attr at = { .qp_state = state };
	int mask = 0;

	assert_int_equal(droce_rdma_init_qp_attr(id, &at, &mask), 0);
	assert_int_equal(at.qp_state, state);
	assert_int_equal(droce_modify_qp(qp, &at, mask), 0);
}

static struct droce_qp *
own_qp(struct fx_end *s)
{
	struct droce_qp_init_attr init;
	struct droce_qp *qp;

	qp_attr(&init, s->cq);
	qp = droce_create_qp(s->pd, &init);
	assert_non_null(qp);
	return qp;
}

/*
 * The caller's own QPs (librdmacm's external QPs: cmtime, rdma-core's
 * test_rdmacm_async_traffic_external_qp): no QP on either id, the QP
 * numbers in the conn params, each QP moved through
 * droce_rdma_init_qp_attr; the client gets CONNECT_RESPONSE, not
 * ESTABLISHED, and its droce_rdma_establish sends the RTU; the options
 * TOS and ACK_TIMEOUT land in the QP; data both ways; a disconnect leaves
 * the caller's QPs alone.  Then the passive side established by
 * droce_rdma_notify(COMM_EST) before any RTU, exactly once.
 */
static void
test_own_qps(void **state)
{
	struct cm_fx c;
	struct droce_rdma_cm_id *cid, *sid;
	struct droce_rdma_cm_event *ev;
	struct droce_qp *qa, *qb;
	struct droce_qp_attr at = { .qp_state = DROCE_QPS_RTR };
	struct droce_qp_init_attr init;
	struct droce_rdma_conn_param p;
	int mask;

	(void)state;
	cm_open(&c);
	for (int round = 0; round < 2; round++) {
		bool notified = round == 1;

		cid = client_routed(&c, PORT, FAST_TIMEOUT);
		assert_int_equal(droce_rdma_set_tos(cid, 0x28), 0);
		assert_int_equal(droce_rdma_set_ack_timeout(cid, 18), 0);
		assert_int_equal(droce_rdma_set_ack_timeout(cid, 32), -1);
		assert_int_equal(errno, EINVAL);
		/* no peer yet: INIT only */
		assert_int_equal(droce_rdma_init_qp_attr(cid, &at, &mask), -1);
		assert_int_equal(errno, EINVAL);
		qa = own_qp(&c.f.a);
		own_qp_to(cid, qa, DROCE_QPS_INIT);
		p = conn_param("hello", 2, 3);
		assert_int_equal(droce_rdma_connect(cid, &p), -1);	/* no QP number */
		assert_int_equal(errno, EINVAL);
		p.qp_num = qa->qp_num;
		assert_int_equal(droce_rdma_connect(cid, &p), 0);

		ev = cmfx_expect(c.ch_b, DROCE_RDMA_CM_EVENT_CONNECT_REQUEST);
		sid = ev->id;
		assert_int_equal(ev->param.conn.qp_num, qa->qp_num);
		cmfx_ack(ev);
		qb = own_qp(&c.f.b);
		own_qp_to(sid, qb, DROCE_QPS_INIT);
		own_qp_to(sid, qb, DROCE_QPS_RTR);
		own_qp_to(sid, qb, DROCE_QPS_RTS);
		assert_int_equal(droce_query_qp(qb, &at, DROCE_QP_STATE, &init), 0);
		assert_int_equal(at.dest_qp_num, qa->qp_num);
		assert_int_equal(at.max_dest_rd_atomic, 3);
		p = conn_param("world", 3, 2);
		p.qp_num = qb->qp_num;
		assert_int_equal(droce_rdma_accept(sid, &p), 0);
		if (notified) {
			assert_int_equal(droce_rdma_notify(sid, DROCE_EVENT_COMM_EST), 0);
			cmfx_ack(cmfx_expect(c.ch_b, DROCE_RDMA_CM_EVENT_ESTABLISHED));
			assert_int_equal(droce_rdma_notify(sid, DROCE_EVENT_COMM_EST), -1);
			assert_int_equal(errno, EISCONN);
		}

		ev = cmfx_expect(c.ch_a, DROCE_RDMA_CM_EVENT_CONNECT_RESPONSE);
		assert_memory_equal(ev->param.conn.private_data, "world", 5);
		cmfx_ack(ev);
		own_qp_to(cid, qa, DROCE_QPS_RTR);
		own_qp_to(cid, qa, DROCE_QPS_RTS);
		assert_int_equal(droce_query_qp(qa, &at, DROCE_QP_STATE | DROCE_QP_AV, &init), 0);
		assert_int_equal(at.qp_state, DROCE_QPS_RTS);
		assert_int_equal(at.dest_qp_num, qb->qp_num);
		assert_int_equal(at.ah_attr.grh.traffic_class, 0x28);
		assert_int_equal(at.timeout, 18);
		assert_int_equal(at.max_rd_atomic, 3);
		assert_int_equal(droce_rdma_establish(cid), 0);
		assert_int_equal(droce_rdma_establish(cid), -1);	/* once */
		assert_int_equal(errno, EINVAL);
		if (!notified)
			cmfx_ack(cmfx_expect(c.ch_b, DROCE_RDMA_CM_EVENT_ESTABLISHED));
		cmfx_spin(c.ch_a, c.ch_b, 0.2);	/* no ESTABLISHED on the client, none twice */

		c.f.a.qp = qa;
		c.f.b.qp = qb;
		fx_fill(c.f.a.buf, 4096, 9 + round);
		assert_int_equal(fx_post_wait(&c.f, &c.f.a, DROCE_WR_RDMA_WRITE, 1, c.f.a.buf,
					      4096, (uintptr_t)c.f.b.buf + 8192, c.f.b.mr->rkey),
				 DROCE_WC_SUCCESS);
		assert_memory_equal(c.f.b.buf + 8192, c.f.a.buf, 4096);
		assert_int_equal(fx_post_wait(&c.f, &c.f.b, DROCE_WR_RDMA_READ, 2,
					      c.f.b.buf + 16384, 4096, (uintptr_t)c.f.a.buf,
					      c.f.a.mr->rkey), DROCE_WC_SUCCESS);
		assert_memory_equal(c.f.b.buf + 16384, c.f.a.buf, 4096);
		c.f.a.qp = c.f.b.qp = NULL;

		assert_int_equal(droce_rdma_disconnect(cid), 0);
		cmfx_ack(cmfx_expect(c.ch_b, DROCE_RDMA_CM_EVENT_DISCONNECTED));
		cmfx_ack(cmfx_expect(c.ch_a, DROCE_RDMA_CM_EVENT_DISCONNECTED));
		/* the caller's QPs are the caller's to move */
		assert_int_equal(fx_qp_state(qa), DROCE_QPS_RTS);
		assert_int_equal(fx_qp_state(qb), DROCE_QPS_RTS);
		assert_int_equal(droce_rdma_destroy_id(cid), 0);
		assert_int_equal(droce_rdma_destroy_id(sid), 0);
		assert_int_equal(droce_destroy_qp(qa), 0);
		assert_int_equal(droce_destroy_qp(qb), 0);
	}
	assert_int_equal(live_qps(c.f.a.ctx), 0);
	assert_int_equal(live_qps(c.f.b.ctx), 0);
	cm_close(&c);
}

static void
one_connection(struct cm_fx *c)
{
	struct droce_rdma_cm_id *sid, *cid = connected(c, &sid);

	assert_int_equal(live_qps(c->f.a.ctx), 1);
	assert_int_equal(live_qps(c->f.b.ctx), 1);
	cm_disconnect(c, cid, sid);
	destroy(cid);
	destroy(sid);
}

/* A listener bound to port 0 gets a free ephemeral port (as the kernel's
 * rdma_bind_addr: qperf -cm1 binds so and sends the port to its peer), a
 * second one another, and a client connects to the port the first got. */
static uint16_t
bind_listen_any_port(struct cm_fx *c, struct droce_rdma_cm_id **id, uint8_t host)
{
	struct sockaddr_in sin;

	assert_int_equal(droce_rdma_create_id(c->ch_b, id, NULL, DROCE_RDMA_PS_TCP), 0);
	cmfx_sin(&sin, host, 0);
	if (host == 0)
		sin.sin_addr.s_addr = htonl(INADDR_ANY);
	assert_int_equal(droce_rdma_bind_addr(*id, (struct sockaddr *)&sin), 0);
	assert_int_equal(droce_rdma_listen(*id, 8), 0);
	memcpy(&sin, (*id)->route.addr.src_addr.raw, sizeof(sin));
	assert_int_equal(sin.sin_family, AF_INET);
	return ntohs(sin.sin_port);
}

static void
test_bind_port_zero(void **state)
{
	struct droce_rdma_cm_id *cid, *sid, *other;
	uint16_t port, port2;
	struct cm_fx c;

	(void)state;
	cm_open(&c);
	assert_int_equal(droce_rdma_destroy_id(c.listener), 0);
	port = bind_listen_any_port(&c, &c.listener, 2);
	port2 = bind_listen_any_port(&c, &other, 0);
	assert_true(port >= 32768 && port <= 60999);
	assert_true(port2 >= 32768 && port2 <= 60999);
	assert_int_not_equal(port, port2);
	assert_int_not_equal(port, PORT);

	cid = client(&c, port, FAST_TIMEOUT);
	cm_connect(cid, "hello");
	sid = take_request(&c, "hello");
	cm_accept(sid, "world");
	established(&c, cid, sid);
	cm_disconnect(&c, cid, sid);
	destroy(cid);
	destroy(sid);
	assert_int_equal(droce_rdma_destroy_id(other), 0);
	cm_close(&c);
}

/*
 * Bytes the C heap holds: under ASan its allocator's count (mallinfo2()
 * reads glibc's arenas, which ASan's allocator never uses: always 0).
 */
static size_t
c_heap_bytes(void)
{
#ifdef CM_TEST_ASAN
	return __sanitizer_get_current_allocated_bytes();
#else
	return mallinfo2().uordblks;
#endif
}

/* Bytes allocated from DPDK's heap (rte_malloc), every socket. */
static size_t
dpdk_heap_bytes(void)
{
	struct rte_malloc_socket_stats st;
	size_t n = 0;

	for (unsigned int i = 0; i < rte_socket_count(); i++) {
		assert_int_equal(rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st), 0);
		n += st.heap_allocsz_bytes;
	}
	return n;
}

/* 100 connections, one after the other: after the first (the AH cache,
 * slabs and allocator warmed up) both heaps end each at the same size. */
static void
test_100_connections(void **state)
{
	struct cm_fx c;
	size_t heap, dheap;

	(void)state;
	cm_open(&c);
	one_connection(&c);
	heap = c_heap_bytes();
	dheap = dpdk_heap_bytes();
	/* a count that reads 0 would make the comparisons below empty */
	assert_true(heap > 0);
	assert_true(dheap > 0);
	for (int i = 1; i < 100; i++)
		one_connection(&c);
	assert_int_equal(live_qps(c.f.a.ctx), 0);
	assert_int_equal(live_qps(c.f.b.ctx), 0);
	assert_int_equal(c_heap_bytes(), heap);
	assert_int_equal(dpdk_heap_bytes(), dheap);
	cm_close(&c);
}

/* Several at once: 8 requests out before the server takes any. */
static void
test_concurrent_connections(void **state)
{
	struct droce_rdma_cm_id *cid[8], *sid[8];
	struct cm_fx c;

	(void)state;
	cm_open(&c);
	for (int i = 0; i < 8; i++) {
		char pd[8];

		cid[i] = client(&c, PORT, FAST_TIMEOUT);
		snprintf(pd, sizeof(pd), "conn%d", i);
		cm_connect(cid[i], pd);
	}
	for (int i = 0; i < 8; i++) {
		char pd[8];

		snprintf(pd, sizeof(pd), "conn%d", i);
		sid[i] = take_request(&c, pd);
	}
	for (int i = 0; i < 8; i++)
		cm_accept(sid[i], "world");
	for (int i = 0; i < 8; i++) {
		struct droce_rdma_cm_event *ev =
			cmfx_expect(c.ch_a, DROCE_RDMA_CM_EVENT_ESTABLISHED);

		assert_ptr_equal(ev->id, cid[i]);
		cmfx_ack(ev);
		ev = cmfx_expect(c.ch_b, DROCE_RDMA_CM_EVENT_ESTABLISHED);
		assert_ptr_equal(ev->id, sid[i]);
		cmfx_ack(ev);
		assert_int_equal(fx_qp_state(cid[i]->qp), DROCE_QPS_RTS);
	}
	for (int i = 0; i < 8; i++) {
		cm_disconnect(&c, cid[i], sid[i]);
		destroy(cid[i]);
		destroy(sid[i]);
	}
	cm_close(&c);
}

static void
test_reject_reasons(void **state)
{
	struct droce_rdma_cm_id *cid, *sid;
	struct droce_rdma_cm_event *ev;
	struct cm_fx c;
	double t0;

	(void)state;
	cm_open(&c);
	/* the server's consumer says no: reason 28 with its private data */
	cid = client(&c, PORT, FAST_TIMEOUT);
	cm_connect(cid, "hello");
	sid = take_request(&c, "hello");
	assert_int_equal(droce_rdma_reject(sid, "busy", 4), 0);
	ev = cmfx_expect(c.ch_a, DROCE_RDMA_CM_EVENT_REJECTED);
	assert_ptr_equal(ev->id, cid);
	assert_int_equal(ev->status, 28);
	assert_memory_equal(ev->param.conn.private_data, "busy", 4);
	cmfx_ack(ev);
	destroy(cid);
	destroy(sid);

	/* nobody listens on the port: reason 8, invalid service ID, once the
	 * REQ was held for half its response timeout (67 ms) in case a
	 * listener came */
	cid = client(&c, PORT + 1, FAST_TIMEOUT);
	t0 = fx_now();
	cm_connect(cid, "hello");
	ev = cmfx_expect(c.ch_a, DROCE_RDMA_CM_EVENT_REJECTED);
	assert_true(fx_now() - t0 >= 0.033);
	assert_int_equal(ev->status, 8);
	cmfx_ack(ev);
	cmfx_spin(c.ch_a, c.ch_b, 0.1);
	destroy(cid);
	cm_close(&c);
}

/*
 * A REQ that arrives before the server listens (perftest -R's race): held,
 * it goes to the listener that comes 10 ms later, and the connection is
 * made; the client sees no REJ meanwhile.
 */
static void
test_listen_after_req(void **state)
{
	struct droce_rdma_cm_id *cid, *sid;
	struct sockaddr_in sin;
	struct cm_fx c;

	(void)state;
	cm_open(&c);
	assert_int_equal(droce_rdma_destroy_id(c.listener), 0);
	cid = client(&c, PORT, FAST_TIMEOUT);
	cm_connect(cid, "hello");
	cmfx_spin(c.ch_a, c.ch_b, 0.01);
	assert_int_equal(droce_rdma_create_id(c.ch_b, &c.listener, NULL, DROCE_RDMA_PS_TCP), 0);
	cmfx_sin(&sin, 2, PORT);
	assert_int_equal(droce_rdma_bind_addr(c.listener, (struct sockaddr *)&sin), 0);
	assert_int_equal(droce_rdma_listen(c.listener, 8), 0);
	sid = take_request(&c, "hello");
	cm_accept(sid, "world");
	established(&c, cid, sid);
	cm_disconnect(&c, cid, sid);
	destroy(cid);
	destroy(sid);
	cm_close(&c);
}

static void
set_drop(struct droce_link *end, double drop)
{
	struct vwire_faults fl = { .drop = drop, .seed = fx_seed() };

	assert_int_equal(vwire_set_faults(end, &fl), 0);
}

static uint64_t
dropped(struct droce_link *end)
{
	struct vwire_stats st;

	vwire_get_stats(end, &st);
	return st.dropped;
}

/* the first MAD a wire direction lost, as it was sent */
struct lost_mad {
	uint8_t mad[CM_MAD_LEN];
	unsigned int n;
};

static void
keep_mad(void *arg, const struct roce_pkt *pkt, const uint8_t *frame)
{
	struct lost_mad *l = arg;

	assert_true(pkt->payload_len >= CM_MAD_LEN);
	if (l->n++ == 0)
		memcpy(l->mad, frame + pkt->payload_off, CM_MAD_LEN);
}

static uint32_t
qp_psn(struct droce_qp *qp, int which)
{
	struct droce_qp_attr at;
	struct droce_qp_init_attr init;

	assert_int_equal(droce_query_qp(qp, &at, which, &init), 0);
	return which == DROCE_QP_SQ_PSN ? at.sq_psn : at.rq_psn;
}

static void
test_lost_req_rep_rtu(void **state)
{
	struct droce_rdma_cm_id *cid, *sid;
	struct droce_rdma_cm_event *ev;
	struct vwire_faults fl = { .drop = 1.0, .seed = fx_seed() };
	struct fx_faults_seen seen;
	struct lost_mad lost = { .n = 0 };
	struct cm_mad_hdr h;
	struct cm_req req;
	struct cm_fx c;

	(void)state;
	cm_open(&c);
	/* the REQ lost: resent after the CM timeout */
	cid = client(&c, PORT, FAST_TIMEOUT);
	cm_connect(cid, "hello");
	fx_watch_faults(&fl, &seen);
	seen.lost = keep_mad;
	seen.lost_arg = &lost;
	assert_int_equal(vwire_set_faults(c.f.a.link, &fl), 0);
	cmfx_spin(c.ch_a, c.ch_b, 0.02);
	set_drop(c.f.a.link, 0.0);
	assert_int_equal(dropped(c.f.a.link), 1);
	assert_int_equal(lost.n, 1);
	assert_int_equal(cm_mad_check(lost.mad, CM_MAD_LEN, &h), 0);
	assert_int_equal(h.attr_id, CM_ATTR_REQ);
	cm_req_get(lost.mad, &req);
	assert_int_equal(req.local_qpn, cid->qp->qp_num);
	sid = take_request(&c, "hello");
	cm_accept(sid, "world");
	established(&c, cid, sid);
	/* the REQ's Starting PSN is what the client receives from (ib_cm's
	 * meaning: the kernel's QPs start there) */
	assert_int_equal(qp_psn(cid->qp, DROCE_QP_RQ_PSN), req.starting_psn);
	assert_int_equal(qp_psn(sid->qp, DROCE_QP_SQ_PSN), req.starting_psn);
	cm_disconnect(&c, cid, sid);
	destroy(cid);
	destroy(sid);

	/* the REP lost: the REQ's retry finds the REP resent */
	cid = client(&c, PORT, FAST_TIMEOUT);
	cm_connect(cid, "hello");
	sid = take_request(&c, "hello");
	set_drop(c.f.b.link, 1.0);
	cm_accept(sid, "world");
	cmfx_spin(c.ch_a, c.ch_b, 0.02);
	set_drop(c.f.b.link, 0.0);
	assert_int_equal(dropped(c.f.b.link), 1);
	established(&c, cid, sid);
	cm_disconnect(&c, cid, sid);
	destroy(cid);
	destroy(sid);

	/* the RTU lost: the server resends the REP, the client the RTU
	 * (the REQ lost above was the client's one drop so far) */
	cid = client(&c, PORT, FAST_TIMEOUT);
	cm_connect(cid, "hello");
	sid = take_request(&c, "hello");
	set_drop(c.f.a.link, 1.0);
	cm_accept(sid, "world");
	ev = cmfx_expect(c.ch_a, DROCE_RDMA_CM_EVENT_ESTABLISHED);
	cmfx_ack(ev);
	cmfx_spin(c.ch_a, c.ch_b, 0.02);
	set_drop(c.f.a.link, 0.0);
	assert_int_equal(dropped(c.f.a.link), 1 + 1);
	ev = cmfx_expect(c.ch_b, DROCE_RDMA_CM_EVENT_ESTABLISHED);
	assert_ptr_equal(ev->id, sid);
	cmfx_ack(ev);
	cm_disconnect(&c, cid, sid);
	destroy(cid);
	destroy(sid);
	cm_close(&c);
}

/*
 * A connected id destroyed departs: droce_rdma_destroy_id sends its DREQ
 * and returns at once; destroying its event channel then waits for the
 * DREP, since the process is the port and a DREQ left in its engine or
 * link when it exits never reaches the peer (rping -s hung after its
 * client exited).  When the channel is gone, the server's channel is
 * already readable with its DISCONNECTED, and the destroyed id got no
 * event.  With the client's frames lost, the wait ends with the DREQ's
 * retries (resent meanwhile) or the one-second bound, and the server
 * learns nothing.
 */
static void
test_destroyed_id_departs(void **state)
{
	struct pollfd pfd = { .events = POLLIN };
	struct droce_rdma_cm_id *cid, *sid;
	struct droce_rdma_cm_event *ev;
	struct cm_fx c;
	double t0, waited;

	(void)state;
	cm_open(&c);
	cid = connected(&c, &sid);
	t0 = fx_now();
	destroy(cid);
	assert_true(fx_now() - t0 < 0.25);
	droce_rdma_destroy_event_channel(c.ch_a);
	c.ch_a = cmfx_channel();
	pfd.fd = c.ch_b->fd;
	assert_int_equal(poll(&pfd, 1, 0), 1);
	ev = cmfx_expect(c.ch_b, DROCE_RDMA_CM_EVENT_DISCONNECTED);
	assert_ptr_equal(ev->id, sid);
	cmfx_ack(ev);
	cmfx_spin(c.ch_a, c.ch_b, 0.05);
	destroy(sid);

	cid = connected(&c, &sid);
	set_drop(c.f.a.link, 1.0);
	t0 = fx_now();
	destroy(cid);
	droce_rdma_destroy_event_channel(c.ch_a);
	waited = fx_now() - t0;
	set_drop(c.f.a.link, 0.0);
	c.ch_a = cmfx_channel();
	assert_true(waited > 0.5 && waited < 1.5);
	assert_true(dropped(c.f.a.link) >= 2);
	cmfx_spin(c.ch_a, c.ch_b, 0.05);
	pfd.fd = c.ch_b->fd;
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(droce_rdma_disconnect(sid), 0);
	destroy(sid);
	cm_close(&c);
}

/*
 * droce_rdma_use_qp: the caller's QP is moved to INIT and driven to RTS by
 * the CM; taken back (NULL), the CM leaves it alone: the peer's DREQ
 * still ends the connection, the QP stays in RTS.  droce_rdma_poll_cm_event
 * runs one pass on a blocking channel and returns EAGAIN.
 */
static void
test_use_qp_poll_event(void **state)
{
	struct cm_fx c;
	struct droce_rdma_cm_id *cid, *sid;
	struct droce_rdma_cm_event *ev;
	struct droce_qp_init_attr init;
	struct droce_qp *qp, *other;
	int flags;

	(void)state;
	cm_open(&c);
	cid = client_routed(&c, PORT, FAST_TIMEOUT);
	qp_attr(&init, c.f.a.cq);
	qp = droce_create_qp(c.f.a.pd, &init);
	assert_non_null(qp);
	qp_attr(&init, c.f.b.cq);
	other = droce_create_qp(c.f.b.pd, &init);	/* another context's */
	assert_non_null(other);
	assert_int_equal(droce_rdma_use_qp(cid, other), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(droce_rdma_use_qp(cid, qp), 0);
	assert_ptr_equal(cid->qp, qp);
	assert_ptr_equal(cid->pd, c.f.a.pd);
	assert_int_equal(fx_qp_state(qp), DROCE_QPS_INIT);
	assert_int_equal(droce_rdma_use_qp(cid, qp), -1);	/* one QP per id */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(droce_destroy_qp(other), 0);

	cm_connect(cid, "hello");
	sid = take_request(&c, "hello");
	cm_accept(sid, "world");
	established(&c, cid, sid);
	assert_int_equal(fx_qp_state(qp), DROCE_QPS_RTS);

	/* a blocking channel with nothing queued: one pass, EAGAIN */
	flags = fcntl(c.ch_a->fd, F_GETFL);
	assert_int_equal(fcntl(c.ch_a->fd, F_SETFL, flags & ~O_NONBLOCK), 0);
	assert_int_equal(droce_rdma_poll_cm_event(c.ch_a, &ev), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(fcntl(c.ch_a->fd, F_SETFL, flags), 0);

	assert_int_equal(droce_rdma_use_qp(cid, NULL), 0);
	assert_null(cid->qp);
	assert_int_equal(droce_rdma_disconnect(sid), 0);
	ev = cmfx_expect(c.ch_a, DROCE_RDMA_CM_EVENT_DISCONNECTED);
	assert_ptr_equal(ev->id, cid);
	cmfx_ack(ev);
	cmfx_ack(cmfx_expect(c.ch_b, DROCE_RDMA_CM_EVENT_DISCONNECTED));
	assert_int_equal(fx_qp_state(qp), DROCE_QPS_RTS);	/* not the CM's any more */
	assert_int_equal(fx_qp_state(sid->qp), DROCE_QPS_ERR);
	assert_int_equal(droce_destroy_qp(qp), 0);
	assert_int_equal(droce_rdma_destroy_id(cid), 0);
	destroy(sid);
	cm_close(&c);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect_data_disconnect),
		cmocka_unit_test(test_concurrent_connections),
		cmocka_unit_test(test_100_connections),
		cmocka_unit_test(test_reject_reasons),
		cmocka_unit_test(test_listen_after_req),
		cmocka_unit_test(test_lost_req_rep_rtu),
		cmocka_unit_test(test_destroyed_id_departs),
		cmocka_unit_test(test_use_qp_poll_event),
		cmocka_unit_test(test_own_qps),
		cmocka_unit_test(test_bind_port_zero),
	};

	/* "lcore": both contexts' engines on transport lcore 1, the CM and
	 * the test on lcore 0 */
	if (argc > 1 && strcmp(argv[1], "lcore") == 0) {
		fx_eal_init_transport_lcore(argv[0], 1);
	} else if (argc > 1) {
		fprintf(stderr, "usage: %s [lcore]\n", argv[0]);
		return 2;
	} else {
		fx_eal_init(argv[0]);
	}
	return fx_result(cmocka_run_group_tests(tests, NULL, NULL));
}
