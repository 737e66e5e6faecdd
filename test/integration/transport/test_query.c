/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce_query_device against what the create and modify calls enforce:
 * for every counted object (PD, MR, MW, CQ, QP) of a context configured
 * with small limits, the reported maximum is created and one more fails;
 * for every size (CQEs, work requests, SGEs, READ/atomic depths) the
 * reported value passes and one more is refused.  Also the identity
 * fields (node GUID from the MAC, firmware version, vendor) and the
 * capability flags, exactly.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_malloc.h>

#include "tp_fixture.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "vwire.h"

#define BUF 4096u

static const unsigned int cap_flags = DROCE_DEVICE_CURR_QP_STATE_MOD |
	DROCE_DEVICE_PORT_ACTIVE_EVENT | DROCE_DEVICE_SYS_IMAGE_GUID |
	DROCE_DEVICE_RC_RNR_NAK_GEN | DROCE_DEVICE_SRQ_RESIZE | DROCE_DEVICE_MEM_WINDOW |
	DROCE_DEVICE_MEM_WINDOW_TYPE_2B;

static struct droce_device_attr
query(struct droce_context *ctx)
{
	struct droce_device_attr a;

	assert_int_equal(droce_query_device(ctx, &a), 0);
	return a;
}

/* The defaults of a vwire context (end a: MAC 02:00:00:00:00:01). */
static void
test_query_device_identity_and_defaults(void **state)
{
	static const uint8_t guid[8] = { 0x00, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x00, 0x01 };
	struct droce_device_attr_ex ex;
	struct droce_device_attr a;
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	a = query(f.a.ctx);
	assert_string_equal(a.fw_ver, "0.1.0");
	assert_memory_equal(&a.node_guid, guid, 8);
	assert_memory_equal(&a.sys_image_guid, guid, 8);
	assert_true(a.max_mr_size == UINTPTR_MAX);
	assert_true(a.page_size_cap == ~UINT64_C(0xfff));
	assert_int_equal(a.vendor_id, 0xffffff);
	assert_int_equal(a.vendor_part_id, 0);
	assert_int_equal(a.hw_ver, 0);
	assert_int_equal(a.max_qp, 65536);
	assert_int_equal(a.max_cq, 65536);
	assert_int_equal(a.max_mr, 65536);
	assert_int_equal(a.max_pd, 1024);
	assert_int_equal(a.max_mw, 65536);
	assert_int_equal(a.max_qp_wr, 16384);
	assert_int_equal(a.device_cap_flags, cap_flags);
	assert_int_equal(a.max_sge, 16);
	assert_int_equal(a.max_sge_rd, 16);
	assert_int_equal(a.max_cqe, 1 << 20);
	assert_int_equal(a.max_qp_rd_atom, 16);
	assert_int_equal(a.max_qp_init_rd_atom, 128);
	assert_int_equal(a.max_res_rd_atom, 65536 * 16);
	assert_int_equal(a.max_ee_rd_atom, 0);
	assert_int_equal(a.max_ee_init_rd_atom, 0);
	assert_int_equal(a.atomic_cap, DROCE_ATOMIC_GLOB);
	assert_int_equal(a.max_ee, 0);
	assert_int_equal(a.max_rdd, 0);
	/* multicast groups (lib/transport tp_mcast.c) */
	assert_int_equal(a.max_mcast_grp, TP_MCAST_MAX_GRP);
	assert_int_equal(a.max_mcast_qp_attach, TP_MCAST_MAX_QP_ATTACH);
	assert_int_equal(a.max_total_mcast_qp_attach, TP_MCAST_MAX_TOTAL_ATTACH);
	assert_int_equal(a.max_ah, TP_MAX_AH - 1);
	assert_int_equal(a.max_srq, INT32_MAX);
	assert_int_equal(a.max_srq_wr, 16384);
	assert_int_equal(a.max_srq_sge, 16);
	assert_int_equal(a.max_pkeys, 16);
	assert_int_equal(a.local_ca_ack_delay, 15);
	assert_int_equal(a.phys_port_cnt, 1);

	assert_int_equal(droce_query_device_ex(f.a.ctx, NULL, &ex), 0);
	assert_memory_equal(&ex.orig_attr, &a, sizeof(a));
	assert_true(ex.device_cap_flags_ex == (cap_flags | DROCE_DEVICE_ATOMIC_WRITE |
					       DROCE_DEVICE_FLUSH_GLOBAL |
					       DROCE_DEVICE_FLUSH_PERSISTENT));
	assert_int_equal(ex.comp_mask, 0);
	assert_int_equal(droce_query_device_ex(f.a.ctx, &(struct droce_query_device_ex_input){
		.comp_mask = 1 }, &ex), EINVAL);
	assert_int_equal(droce_query_device(NULL, &a), EINVAL);
	assert_int_equal(droce_query_device(f.a.ctx, NULL), EINVAL);
	fx_close(&f);
}

/* A context without a link has tables but no transport: no QPs, no CQs. */
static void
test_query_device_without_link(void **state)
{
	struct droce_context *ctx = droce_open_context(&(struct droce_context_attr){
		.max_pd = 7, .max_mr = 9, .max_mw = 11, .socket_id = DROCE_SOCKET_ID_ANY });
	struct droce_device_attr a;

	(void)state;
	assert_non_null(ctx);
	a = query(ctx);
	assert_int_equal(a.max_pd, 7);
	assert_int_equal(a.max_mr, 9);
	assert_int_equal(a.max_mw, 11);
	assert_int_equal(a.max_qp, 0);
	assert_int_equal(a.max_cq, 0);
	assert_int_equal(a.max_res_rd_atom, 0);
	assert_true(a.node_guid == 0);
	assert_null(droce_create_cq(ctx, 1, NULL, NULL, 0));
	assert_int_equal(droce_close_context(ctx), 0);
}

/* The counted objects: max of each is created, max + 1 fails. */
static void
test_query_device_counts_are_enforced(void **state)
{
	struct droce_context_attr ca = { .max_pd = 3, .max_mr = 5, .max_mw = 2,
					 .socket_id = DROCE_SOCKET_ID_ANY };
	struct tp_dev_config cfg = { .max_qp = 4, .max_cq = 3 };
	struct droce_pd *pd[4];
	struct droce_mr *mr[6];
	struct droce_mw *mw[3];
	struct droce_cq *cq[4];
	struct droce_qp *qp[5];
	struct droce_link *la, *lb;
	struct droce_device_attr a;
	struct droce_context *ctx;
	uint8_t *buf;
	int i;

	(void)state;
	assert_int_equal(vwire_pair_create(&(struct vwire_config){ 0 }, &la, &lb), 0);
	ctx = droce_open_context(&ca);
	assert_non_null(ctx);
	assert_int_equal(verbs_attach_link(ctx, la, &cfg), 0);
	a = query(ctx);
	assert_int_equal(a.max_pd, 3);
	assert_int_equal(a.max_mr, 5);
	assert_int_equal(a.max_mw, 2);
	assert_int_equal(a.max_cq, 3);
	assert_int_equal(a.max_qp, 4);
	assert_int_equal(a.max_res_rd_atom, 4 * 16);
	buf = rte_zmalloc("query_buf", BUF, 64);
	assert_non_null(buf);

	for (i = 0; i < a.max_pd; i++)
		assert_non_null(pd[i] = droce_alloc_pd(ctx));
	errno = 0;
	assert_null(droce_alloc_pd(ctx));
	assert_int_equal(errno, ENOMEM);
	for (i = 0; i < a.max_mr; i++)
		assert_non_null(mr[i] = droce_reg_mr(pd[0], buf, BUF, DROCE_ACCESS_LOCAL_WRITE));
	errno = 0;
	assert_null(droce_reg_mr(pd[0], buf, BUF, DROCE_ACCESS_LOCAL_WRITE));
	assert_int_equal(errno, ENOMEM);
	for (i = 0; i < a.max_mw; i++)
		assert_non_null(mw[i] = droce_alloc_mw(pd[0], DROCE_MW_TYPE_1));
	errno = 0;
	assert_null(droce_alloc_mw(pd[0], DROCE_MW_TYPE_1));
	assert_int_equal(errno, ENOMEM);
	for (i = 0; i < a.max_cq; i++)
		assert_non_null(cq[i] = droce_create_cq(ctx, 4, NULL, NULL, 0));
	errno = 0;
	assert_null(droce_create_cq(ctx, 4, NULL, NULL, 0));
	assert_int_equal(errno, ENOMEM);
	for (i = 0; i <= a.max_qp; i++) {
		struct droce_qp_init_attr ia = {
			.send_cq = cq[0], .recv_cq = cq[0], .qp_type = DROCE_QPT_RC,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		errno = 0;
		qp[i] = droce_create_qp(pd[1], &ia);
		if (i < a.max_qp) {
			assert_non_null(qp[i]);
		} else {
			assert_null(qp[i]);
			assert_int_equal(errno, ENOMEM);
		}
	}

	for (i = 0; i < a.max_qp; i++)
		assert_int_equal(droce_destroy_qp(qp[i]), 0);
	for (i = 0; i < a.max_cq; i++)
		assert_int_equal(droce_destroy_cq(cq[i]), 0);
	for (i = 0; i < a.max_mw; i++)
		assert_int_equal(droce_dealloc_mw(mw[i]), 0);
	for (i = 0; i < a.max_mr; i++)
		assert_int_equal(droce_dereg_mr(mr[i]), 0);
	for (i = 0; i < a.max_pd; i++)
		assert_int_equal(droce_dealloc_pd(pd[i]), 0);
	rte_free(buf);
	assert_int_equal(verbs_detach_link(ctx), 0);
	assert_int_equal(droce_close_context(ctx), 0);
	droce_link_close(la);
	droce_link_close(lb);
}

static struct droce_qp *
qp_with_caps(struct fx *f, struct droce_qp_cap cap)
{
	struct droce_qp_init_attr ia = {
		.send_cq = f->a.cq, .recv_cq = f->a.cq, .qp_type = DROCE_QPT_RC, .cap = cap,
	};

	return droce_create_qp(f->a.pd, &ia);
}

/* A QP in INIT, then modify to RTR with this responder depth. */
static int
to_rtr(struct fx *f, struct droce_qp *qp, uint8_t max_dest_rd_atomic)
{
	struct droce_qp_attr at = { .qp_state = DROCE_QPS_INIT, .port_num = 1,
				    .qp_access_flags = DROCE_ACCESS_REMOTE_WRITE };

	if (qp->state == DROCE_QPS_RESET)
		assert_int_equal(droce_modify_qp(qp, &at, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX |
						 DROCE_QP_PORT | DROCE_QP_ACCESS_FLAGS), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = DROCE_QPS_RTR;
	at.path_mtu = DROCE_MTU_1024;
	at.dest_qp_num = qp->qp_num;
	at.max_dest_rd_atomic = max_dest_rd_atomic;
	at.min_rnr_timer = 1;
	at.ah_attr.is_global = 1;
	at.ah_attr.port_num = 1;
	at.ah_attr.grh.hop_limit = 64;
	assert_int_equal(tp_dev_query_gid(verbs_tp(f->b.ctx), 0, at.ah_attr.grh.dgid.raw), 0);
	return droce_modify_qp(qp, &at, DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PATH_MTU |
			       DROCE_QP_DEST_QPN | DROCE_QP_RQ_PSN |
			       DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER);
}

static int
to_rts(struct droce_qp *qp, uint8_t max_rd_atomic)
{
	struct droce_qp_attr at = { .qp_state = DROCE_QPS_RTS, .timeout = 8, .retry_cnt = 7,
				    .rnr_retry = 7, .max_rd_atomic = max_rd_atomic };

	return droce_modify_qp(qp, &at, DROCE_QP_STATE | DROCE_QP_SQ_PSN | DROCE_QP_TIMEOUT |
			       DROCE_QP_RETRY_CNT | DROCE_QP_RNR_RETRY |
			       DROCE_QP_MAX_QP_RD_ATOMIC);
}

/* The sizes: the reported value passes, one more is refused (EINVAL). */
static void
test_query_device_sizes_are_enforced(void **state)
{
	const struct droce_qp_cap one = { 1, 1, 1, 1, 0 };
	struct droce_qp_cap cap;
	struct droce_device_attr a;
	struct droce_qp *qp;
	struct droce_cq *cq;
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	a = query(f.a.ctx);
	assert_non_null(cq = droce_create_cq(f.a.ctx, a.max_cqe, NULL, NULL, 0));
	assert_int_equal(droce_destroy_cq(cq), 0);
	errno = 0;
	assert_null(droce_create_cq(f.a.ctx, a.max_cqe + 1, NULL, NULL, 0));
	assert_int_equal(errno, EINVAL);

	for (int field = 0; field < 4; field++) {
		uint32_t *v[4] = { &cap.max_send_wr, &cap.max_recv_wr, &cap.max_send_sge,
				   &cap.max_recv_sge };
		uint32_t max = field < 2 ? (uint32_t)a.max_qp_wr : (uint32_t)a.max_sge;

		cap = one;
		*v[field] = max;
		assert_non_null(qp = qp_with_caps(&f, cap));
		assert_int_equal(droce_destroy_qp(qp), 0);
		*v[field] = max + 1;
		errno = 0;
		assert_null(qp_with_caps(&f, cap));
		assert_int_equal(errno, EINVAL);
	}

	for (int field = 0; field < 2; field++) {
		struct droce_srq_init_attr ia = { .attr = { .max_wr = 1, .max_sge = 1 } };
		uint32_t *v = field == 0 ? &ia.attr.max_wr : &ia.attr.max_sge;
		uint32_t max = field == 0 ? (uint32_t)a.max_srq_wr : (uint32_t)a.max_srq_sge;
		struct droce_srq *srq;

		*v = max;
		assert_non_null(srq = droce_create_srq(f.a.pd, &ia));
		assert_int_equal(droce_destroy_srq(srq), 0);
		*v = max + 1;
		errno = 0;
		assert_null(droce_create_srq(f.a.pd, &ia));
		assert_int_equal(errno, EINVAL);
	}

	assert_non_null(qp = qp_with_caps(&f, one));
	assert_int_equal(to_rtr(&f, qp, (uint8_t)(a.max_qp_rd_atom + 1)), EINVAL);
	assert_int_equal(to_rtr(&f, qp, (uint8_t)a.max_qp_rd_atom), 0);
	assert_int_equal(to_rts(qp, (uint8_t)(a.max_qp_init_rd_atom + 1)), EINVAL);
	assert_int_equal(to_rts(qp, (uint8_t)a.max_qp_init_rd_atom), 0);
	assert_int_equal(droce_destroy_qp(qp), 0);
	fx_close(&f);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_device_identity_and_defaults),
		cmocka_unit_test(test_query_device_without_link),
		cmocka_unit_test(test_query_device_counts_are_enforced),
		cmocka_unit_test(test_query_device_sizes_are_enforced),
	};

	(void)argc;
	fx_eal_init(argv[0]);
	return cmocka_run_group_tests_name("query", tests, NULL, NULL);
}
