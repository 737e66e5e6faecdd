/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events (droce_get_async_event, IBTA 11.6.3) between two
 * droce stacks over the virtual wire, run three times: engines on this
 * lcore (run-to-completion), on a dedicated transport lcore, and sharded
 * over two transport lcores (events raised by either shard).  Each test
 * checks the exact events of each context (type and object, and that
 * nothing else is pending: async_fd not readable, a non-blocking get
 * EAGAIN), the completions that go with them and the remote bytes.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tp_fixture.h"
#include "vwire.h"

#define BUF (1u << 20)

static struct fx f;

static void
connect_pair(const struct fx_qp_opts *o)
{
	struct fx_qp_opts c = *o;

	c.timeout = fx_qp_timeout();
	fx_connect(&f, &c);
}

static void
open_pair(const struct fx_qp_opts *o)
{
	fx_open(&f, NULL, BUF);
	if (o != NULL)
		connect_pair(o);
	fx_events_nonblock(&f.a);
	fx_events_nonblock(&f.b);
	memset(f.b.buf, 0x77, BUF);
	fx_fill(f.a.buf, BUF, 1);
}

/* One signalled WRITE of 64 bytes from a to b at off; its status. */
static enum droce_wc_status
write64(uint64_t wr_id, size_t off, uint32_t rkey)
{
	return fx_post_wait(&f, &f.a, DROCE_WR_RDMA_WRITE, wr_id, f.a.buf + off, 64,
			    (uintptr_t)(f.b.buf + off), rkey);
}

static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(droce_event_type_str(DROCE_EVENT_QP_REQ_ERR),
			    "invalid request local work queue error");
	assert_string_equal(droce_event_type_str(DROCE_EVENT_WQ_FATAL), "WQ fatal");
	assert_string_equal(droce_event_type_str((enum droce_event_type)20), "unknown");
	/* the values are ibv_event_type's */
	assert_int_equal(DROCE_EVENT_PORT_ERR, 10);
	assert_int_equal(DROCE_EVENT_GID_CHANGE, 18);
}

/*
 * IBTA 11.6.3.2 / 9.9.3.1.2 (class C): a WRITE to a QP without
 * REMOTE_WRITE is an invalid request that uses no receive WQE: the
 * responder NAKs it, goes to ERR and raises QP_REQ_ERR for its QP; the
 * requester's completion says REM_INV_REQ_ERR and it gets no event.
 */
static void
test_write_without_remote_write(void **state)
{
	struct droce_wc wc;

	(void)state;
	open_pair(&(struct fx_qp_opts){ .access = DROCE_ACCESS_REMOTE_READ });
	fx_expect_no_event(&f.a);
	fx_expect_no_event(&f.b);
	assert_int_equal(write64(1, 0, f.b.mr->rkey), DROCE_WC_REM_INV_REQ_ERR);
	fx_expect_event(&f, &f.b, DROCE_EVENT_QP_REQ_ERR, f.b.qp);
	fx_expect_no_event(&f.b);
	fx_expect_no_event(&f.a);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 0.05), 0);
	assert_int_equal(fx_qp_state(f.b.qp), DROCE_QPS_ERR);
	fx_assert_bytes(f.b.buf, 64, 0x77);
	assert_int_equal(fx_counter(&f.b, "async_events"), 1);
	assert_int_equal(fx_counter(&f.a, "async_events"), 0);
	fx_close(&f);
}

/* IBTA 11.6.3.2: an R_Key violation raises QP_ACCESS_ERR at the responder. */
static void
test_bad_rkey(void **state)
{
	(void)state;
	open_pair(&(struct fx_qp_opts){ 0 });
	assert_int_equal(write64(1, 0, droce_inc_rkey(f.b.mr->rkey)),
			 DROCE_WC_REM_ACCESS_ERR);
	fx_expect_event(&f, &f.b, DROCE_EVENT_QP_ACCESS_ERR, f.b.qp);
	fx_expect_no_event(&f.b);
	fx_expect_no_event(&f.a);
	assert_int_equal(fx_qp_state(f.b.qp), DROCE_QPS_ERR);
	fx_assert_bytes(f.b.buf, 64, 0x77);
	fx_close(&f);
}

static void
to_rts(struct droce_qp *qp)
{
	struct droce_qp_attr a = {
		.qp_state = DROCE_QPS_RTS, .timeout = fx_qp_timeout(), .retry_cnt = 7,
		.rnr_retry = 7, .max_rd_atomic = 16,
	};

	assert_int_equal(droce_modify_qp(qp, &a, DROCE_QP_STATE | DROCE_QP_SQ_PSN |
					 DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT |
					 DROCE_QP_RNR_RETRY | DROCE_QP_MAX_QP_RD_ATOMIC), 0);
}

/* IBTA 11.6.3.1: COMM_EST once, at the first packet b's QP gets in RTR. */
static void
test_comm_est_once(void **state)
{
	(void)state;
	open_pair(&(struct fx_qp_opts){ .b_rtr_only = true });
	assert_int_equal(fx_qp_state(f.b.qp), DROCE_QPS_RTR);
	assert_int_equal(write64(1, 0, f.b.mr->rkey), DROCE_WC_SUCCESS);
	fx_expect_event(&f, &f.b, DROCE_EVENT_COMM_EST, f.b.qp);
	assert_int_equal(write64(2, 64, f.b.mr->rkey), DROCE_WC_SUCCESS);
	fx_spin(&f, 0.02);
	fx_expect_no_event(&f.b);
	fx_expect_no_event(&f.a);		/* a was in RTS when its ACKs came */
	to_rts(f.b.qp);
	assert_int_equal(write64(3, 128, f.b.mr->rkey), DROCE_WC_SUCCESS);
	fx_spin(&f, 0.02);
	fx_expect_no_event(&f.b);
	assert_memory_equal(f.b.buf, f.a.buf, 192);
	fx_close(&f);
}

static void
to_sqd(struct droce_qp *qp, bool notify)
{
	struct droce_qp_attr a = {
		.qp_state = DROCE_QPS_SQD, .en_sqd_async_notify = notify,
	};

	assert_int_equal(droce_modify_qp(qp, &a, DROCE_QP_STATE |
					 DROCE_QP_EN_SQD_ASYNC_NOTIFY), 0);
}

static void
sqd_to_rts(struct droce_qp *qp)
{
	struct droce_qp_attr a = { .qp_state = DROCE_QPS_RTS };

	assert_int_equal(droce_modify_qp(qp, &a, DROCE_QP_STATE), 0);
}

/*
 * IBTA 10.3.1 / 11.6.3.1: SQD with en_sqd_async_notify raises SQ_DRAINED
 * once the message in progress completed; a WR posted meanwhile is not
 * started until the QP is back in RTS.  Without the flag: no event.
 */
static void
test_sq_drained(void **state)
{
	const uint32_t big = 512 * 1024;
	struct droce_wc wc;

	(void)state;
	open_pair(&(struct fx_qp_opts){ 0 });
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 1, f.a.buf, big,
				 f.a.mr->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	/* let the WRITE start (its first packets leave), not finish */
	if (!fx_dedicated())
		droce_progress(f.a.ctx);
	while (fx_counter(&f.a, "sent_pkts") == 0)
		;
	to_sqd(f.a.qp, true);
	if (!fx_dedicated())
		fx_expect_no_event(&f.a);	/* 32 packets out, none acknowledged */
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 2, f.a.buf + 768 * 1024,
				 64, f.a.mr->lkey, (uintptr_t)(f.b.buf + 768 * 1024),
				 f.b.mr->rkey, DROCE_SEND_SIGNALED), 0);
	fx_expect_event(&f, &f.a, DROCE_EVENT_SQ_DRAINED, f.a.qp);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
	fx_assert_wc(&wc, 1, DROCE_WC_RDMA_WRITE, DROCE_WC_SUCCESS);
	assert_memory_equal(f.b.buf, f.a.buf, big);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 0.05), 0);
	fx_assert_bytes(f.b.buf + 768 * 1024, 64, 0x77);
	assert_int_equal(fx_qp_state(f.a.qp), DROCE_QPS_SQD);
	fx_expect_no_event(&f.a);
	sqd_to_rts(f.a.qp);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
	fx_assert_wc(&wc, 2, DROCE_WC_RDMA_WRITE, DROCE_WC_SUCCESS);
	assert_memory_equal(f.b.buf + 768 * 1024, f.a.buf + 768 * 1024, 64);
	/* again without en_sqd_async_notify: drained, but no event */
	to_sqd(f.a.qp, false);
	fx_spin(&f, 0.02);
	fx_expect_no_event(&f.a);
	fx_expect_no_event(&f.b);
	fx_close(&f);
}

/*
 * IBTA 11.4.2.1: completions beyond a CQ's room are lost and the CQ is in
 * error: one CQ_ERR event, poll reports EOVERFLOW once it is empty, and
 * every completion was either delivered or counted as lost.
 */
#define OVERRUN_WRS 16

/* a's QP on a CQ of 4, n signalled WRITEs nobody polls. */
static void
overrun_a_cq(void)
{
	open_pair(NULL);
	assert_int_equal(droce_destroy_cq(f.a.cq), 0);
	f.a.cq = droce_create_cq(f.a.ctx, 4, NULL, NULL, 0);
	assert_non_null(f.a.cq);
	connect_pair(&(struct fx_qp_opts){ 0 });
	for (int i = 0; i < OVERRUN_WRS; i++)
		assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, (uint64_t)i,
					 f.a.buf + 64 * i, 64, f.a.mr->lkey,
					 (uintptr_t)(f.b.buf + 64 * i), f.b.mr->rkey,
					 DROCE_SEND_SIGNALED), 0);
}

static void
test_cq_overrun(void **state)
{
	const int n = OVERRUN_WRS;
	struct droce_wc wc[OVERRUN_WRS];
	int got = 0, r;

	(void)state;
	overrun_a_cq();
	fx_expect_event(&f, &f.a, DROCE_EVENT_CQ_ERR, f.a.cq);
	fx_spin(&f, 0.1);	/* every WRITE acknowledged */
	fx_expect_no_event(&f.a);
	for (double end = fx_now() + 0.2; fx_now() < end;)
		if ((r = droce_poll_cq(f.a.cq, n, wc)) > 0)
			got += r;
	assert_int_equal(droce_poll_cq(f.a.cq, n, wc), -1);
	assert_int_equal(errno, EOVERFLOW);
	assert_int_equal((uint64_t)got + fx_counter(&f.a, "cq_overflow"), n);
	/* the CQ's room, in every run mode: nobody polled */
	assert_int_equal(got, 4);
	assert_memory_equal(f.b.buf, f.a.buf, 64 * n);
	fx_close(&f);
}

struct destroyer {
	int (*destroy)(void *obj);
	void *obj;
	int rc;
	bool done;		/* atomic */
};

static void *
destroy_thread(void *arg)
{
	struct destroyer *d = arg;

	d->rc = d->destroy(d->obj);
	__atomic_store_n(&d->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* destroy(obj) on another thread returns only after ev (got) is acked. */
static void
destroy_waits_for_ack(struct droce_async_event *ev, int (*destroy)(void *obj),
		      void *obj)
{
	struct destroyer d = { .destroy = destroy, .obj = obj };
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, destroy_thread, &d), 0);
	usleep(200 * 1000);
	assert_false(__atomic_load_n(&d.done, __ATOMIC_ACQUIRE));
	droce_ack_async_event(ev);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(d.done);
	assert_int_equal(d.rc, 0);
}

static int
destroy_qp(void *qp)
{
	return droce_destroy_qp(qp);
}

static int
destroy_cq(void *cq)
{
	return droce_destroy_cq(cq);
}

/* As ibv_destroy_qp: destroying a QP waits until its events got are acked. */
static void
test_destroy_qp_waits_for_ack(void **state)
{
	struct droce_async_event ev;

	(void)state;
	open_pair(&(struct fx_qp_opts){ .access = DROCE_ACCESS_REMOTE_READ });
	assert_int_equal(write64(1, 0, f.b.mr->rkey), DROCE_WC_REM_INV_REQ_ERR);
	fx_wait_event(&f, &f.b, &ev);
	assert_int_equal(ev.event_type, DROCE_EVENT_QP_REQ_ERR);
	assert_ptr_equal(ev.element.qp, f.b.qp);
	destroy_waits_for_ack(&ev, destroy_qp, f.b.qp);
	f.b.qp = NULL;
	fx_expect_no_event(&f.b);
	fx_close(&f);
}

/* As ibv_destroy_cq: the same for a CQ's CQ_ERR. */
static void
test_destroy_cq_waits_for_ack(void **state)
{
	struct droce_async_event ev;

	(void)state;
	overrun_a_cq();
	fx_wait_event(&f, &f.a, &ev);
	assert_int_equal(ev.event_type, DROCE_EVENT_CQ_ERR);
	assert_ptr_equal(ev.element.cq, f.a.cq);
	assert_int_equal(droce_destroy_qp(f.a.qp), 0);
	f.a.qp = NULL;
	destroy_waits_for_ack(&ev, destroy_cq, f.a.cq);
	fx_expect_no_event(&f.a);
	f.a.cq = droce_create_cq(f.a.ctx, 4, NULL, NULL, 0);	/* fx_close's */
	assert_non_null(f.a.cq);
	fx_close(&f);
}

/* An event nobody took goes with its QP: nothing pending after destroy. */
static void
test_destroy_discards_unread(void **state)
{
	double end;

	(void)state;
	open_pair(&(struct fx_qp_opts){ 0 });
	assert_int_equal(write64(1, 0, droce_inc_rkey(f.b.mr->rkey)),
			 DROCE_WC_REM_ACCESS_ERR);
	for (end = fx_now() + 10; !fx_event_ready(&f.b); fx_spin(&f, 0.001))
		if (fx_now() > end)
			fail_msg("no asynchronous event within 10 s");
	assert_int_equal(droce_destroy_qp(f.b.qp), 0);
	f.b.qp = NULL;
	fx_expect_no_event(&f.b);
	assert_int_equal(fx_counter(&f.b, "async_events"), 1);
	fx_close(&f);
}

static void
expect_port_event(struct fx_end *e, enum droce_event_type type)
{
	struct droce_async_event ev;

	fx_wait_event(&f, e, &ev);
	assert_int_equal(ev.event_type, type);
	assert_int_equal(ev.element.port_num, 1);
	droce_ack_async_event(&ev);
}

/* The link's carrier: PORT_ERR when it drops, PORT_ACTIVE when it is back. */
static void
test_port_events(void **state)
{
	(void)state;
	open_pair(NULL);
	fx_spin(&f, 0.05);		/* the engines saw the carrier up */
	fx_expect_no_event(&f.a);
	fx_expect_no_event(&f.b);
	assert_int_equal(vwire_set_carrier(f.a.link, false), 0);
	expect_port_event(&f.a, DROCE_EVENT_PORT_ERR);
	expect_port_event(&f.b, DROCE_EVENT_PORT_ERR);
	fx_spin(&f, 0.05);
	fx_expect_no_event(&f.a);
	fx_expect_no_event(&f.b);
	assert_int_equal(vwire_set_carrier(f.b.link, true), 0);
	expect_port_event(&f.a, DROCE_EVENT_PORT_ACTIVE);
	expect_port_event(&f.b, DROCE_EVENT_PORT_ACTIVE);
	fx_spin(&f, 0.05);
	fx_expect_no_event(&f.a);
	fx_expect_no_event(&f.b);
	fx_close(&f);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_write_without_remote_write),
		cmocka_unit_test(test_bad_rkey),
		cmocka_unit_test(test_comm_est_once),
		cmocka_unit_test(test_sq_drained),
		cmocka_unit_test(test_cq_overrun),
		cmocka_unit_test(test_destroy_qp_waits_for_ack),
		cmocka_unit_test(test_destroy_cq_waits_for_ack),
		cmocka_unit_test(test_destroy_discards_unread),
		cmocka_unit_test(test_port_events),
	};

	(void)argc;
	return fx_run_modes(argv[0], "async_events", tests, sizeof(tests) / sizeof(tests[0]));
}
