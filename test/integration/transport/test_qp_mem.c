/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where QPs come from (tp_qp.c, tp_slab.c): a destroyed QP's object and
 * WQE rings go back to the device's slabs, a later create takes them
 * again without touching the DPDK heap, and a reused QP starts exactly as
 * a fresh one (zeroed; nothing of its previous life left).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_malloc.h>

#include "droce_link.h"
#include "tp_fixture.h"
#include "tp_private.h"
#include "verbs_private.h"
#include "verbs_engine.h"

#define BUF (1u << 16)
#define NQP 64

static struct fx f;

static struct droce_qp *
create_rc(struct fx_end *e, uint32_t max_wr)
{
	struct droce_qp_init_attr init;

	memset(&init, 0, sizeof(init));
	init.qp_type = DROCE_QPT_RC;
	init.cap.max_send_wr = max_wr;
	init.cap.max_recv_wr = max_wr;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	init.send_cq = e->cq;
	init.recv_cq = e->cq;
	return droce_create_qp(e->pd, &init);
}

/* heap elements allocated and their bytes, every socket */
static void
heap_usage(size_t *count, size_t *bytes)
{
	*count = 0;
	*bytes = 0;
	for (unsigned int i = 0; i < rte_socket_count(); i++) {
		struct rte_malloc_socket_stats st;

		assert_int_equal(rte_malloc_get_socket_stats(rte_socket_id_by_idx(i),
							     &st), 0);
		*count += st.alloc_count;
		*bytes += st.heap_allocsz_bytes;
	}
}

static bool
all_zero(const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i] != 0)
			return false;
	return true;
}

static void
test_recreate_takes_no_heap(void **state)
{
	struct droce_qp *q[NQP];
	size_t count0, bytes0, count1, bytes1;

	(void)state;
	for (int i = 0; i < NQP; i++)
		assert_non_null(q[i] = create_rc(&f.a, 1));
	for (int i = 0; i < NQP; i++)
		assert_int_equal(droce_destroy_qp(q[i]), 0);
	heap_usage(&count0, &bytes0);
	for (int i = 0; i < NQP; i++)
		assert_non_null(q[i] = create_rc(&f.a, 1));
	heap_usage(&count1, &bytes1);
	assert_int_equal(count1, count0);
	assert_int_equal(bytes1, bytes0);
	for (int i = 0; i < NQP; i++)
		assert_int_equal(droce_destroy_qp(q[i]), 0);
}

static void
test_reused_qp_starts_zeroed(void **state)
{
	struct fx_qp_opts o = { .max_wr = 4 };
	struct tp_qp *old, *qp;
	struct tp_send_wqe *sq;
	struct tp_recv_wqe *rq;
	struct droce_qp *pub;

	(void)state;
	/* a QP with a life: connected, one WRITE and one receive posted */
	fx_connect(&f, &o);
	assert_int_equal(fx_post_wait(&f, &f.a, DROCE_WR_RDMA_WRITE, 7, f.a.buf, 64,
				      (uintptr_t)f.b.buf, f.b.mr->rkey),
			 DROCE_WC_SUCCESS);
	assert_int_equal(fx_post_recv(f.a.qp, 8, f.a.buf, 64, f.a.mr->lkey), 0);
	old = tp_qp_from_pub(f.a.qp);
	sq = old->sq.wqe;
	rq = old->rq.wqe;
	assert_int_equal(old->sq.head, 1);
	assert_true(old->tx_tmpl_ok);
	assert_int_equal(droce_destroy_qp(f.a.qp), 0);
	f.a.qp = NULL;

	/* the same caps take the same object and rings back */
	pub = create_rc(&f.a, 4);
	assert_non_null(pub);
	qp = tp_qp_from_pub(pub);
	assert_ptr_equal(qp, old);
	assert_ptr_equal(qp->sq.wqe, sq);
	assert_ptr_equal(qp->rq.wqe, rq);
	assert_int_equal(qp->pub.state, DROCE_QPS_RESET);
	assert_true(all_zero(qp->sq.wqe, (qp->sq.mask + 1) * sizeof(*qp->sq.wqe)));
	assert_true(all_zero(qp->rq.wqe, (qp->rq.mask + 1) * sizeof(*qp->rq.wqe)));
	assert_true(all_zero(&qp->req, sizeof(qp->req)));
	assert_true(all_zero(&qp->comp, sizeof(qp->comp)));
	assert_true(all_zero(&qp->resp, sizeof(qp->resp)));
	assert_true(all_zero(&qp->av, sizeof(qp->av)));
	assert_true(all_zero(&qp->tx_tmpl, sizeof(qp->tx_tmpl)));
	assert_false(qp->tx_tmpl_ok);
	assert_int_equal(qp->sq.head, 0);
	assert_int_equal(qp->sq.tail, 0);
	assert_int_equal(qp->rq.head, 0);
	assert_int_equal(qp->rq.tail, 0);
	assert_int_equal(qp->udp_sport, 0);
	assert_int_equal(qp->attr.dest_qp_num, 0);
	assert_int_equal(qp->attr.qp_access_flags, 0);
	assert_int_equal(qp->attr.sq_psn, 0);
	assert_int_equal(qp->attr.rq_psn, 0);
	assert_int_equal(qp->attr.path_mtu, DROCE_MTU_256);
	assert_int_equal(droce_destroy_qp(pub), 0);
}

/* a context of its own, max_qp 2: the third create is refused, ENOMEM */
static void
test_max_qp_reached_enomem_bad_flow(void **state)
{
	struct tp_dev_config cfg = { .max_qp = 2 };
	struct vwire_config wire = { .name = "qpmem" };
	struct droce_link *la, *lb;
	struct droce_context *ctx;
	struct fx_end e;
	struct droce_qp *q0, *q1;

	(void)state;
	assert_int_equal(vwire_pair_create(&wire, &la, &lb), 0);
	ctx = droce_open_context(NULL);
	assert_non_null(ctx);
	assert_int_equal(verbs_attach_link(ctx, la, &cfg), 0);
	memset(&e, 0, sizeof(e));
	assert_non_null(e.pd = droce_alloc_pd(ctx));
	assert_non_null(e.cq = droce_create_cq(ctx, 16, NULL, NULL, 0));
	assert_non_null(q0 = create_rc(&e, 1));
	assert_non_null(q1 = create_rc(&e, 1));
	errno = 0;
	assert_null(create_rc(&e, 1));
	assert_int_equal(errno, ENOMEM);
	/* a slot freed is a slot to be had again */
	assert_int_equal(droce_destroy_qp(q0), 0);
	assert_non_null(q0 = create_rc(&e, 1));
	assert_int_equal(droce_destroy_qp(q0), 0);
	assert_int_equal(droce_destroy_qp(q1), 0);
	assert_int_equal(droce_destroy_cq(e.cq), 0);
	assert_int_equal(droce_dealloc_pd(e.pd), 0);
	assert_int_equal(verbs_detach_link(ctx), 0);
	assert_int_equal(droce_close_context(ctx), 0);
	droce_link_close(la);
	droce_link_close(lb);
}

static int
setup(void **state)
{
	struct vwire_config wire = { .ring_size = 256 };

	(void)state;
	fx_open(&f, &wire, BUF);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	if (f.a.qp != NULL)
		assert_int_equal(droce_destroy_qp(f.a.qp), 0);
	if (f.b.qp != NULL)
		assert_int_equal(droce_destroy_qp(f.b.qp), 0);
	f.a.qp = f.b.qp = NULL;
	fx_close(&f);
	return 0;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_recreate_takes_no_heap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reused_qp_starts_zeroed, setup, teardown),
		cmocka_unit_test(test_max_qp_reached_enomem_bad_flow),
	};

	(void)argc;
	fx_eal_init(argv[0]);
	return fx_result(cmocka_run_group_tests(tests, NULL, NULL));
}
