/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * P_Keys against a raw peer.  IBTA 9.6.1.1 (C9-42 on): a packet whose BTH
 * P_Key does not match the P_Key of its destination QP (RC, UC and UD
 * alike) is dropped silently; 10.9.1.2: P_Keys match when their low 15
 * bits are equal and at least one is a full member (bit 15), and
 * 0x0000/0x8000 are invalid.  droce counts the drops as pkey_violation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_byteorder.h>

#include "raw_peer.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"

#define LEN 64
/* the GRH in front of UD data (40 bytes, as ibverbs) */
#define UD_GRH 40

static struct raw_peer rp;
static uint8_t data[LEN];

static int
setup(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < LEN; i++)
		data[i] = (uint8_t)(0x30 + i);
	rp_open(&rp, 4096);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	rp_close(&rp);
	return 0;
}

/* An RC WRITE ONLY of data to the start of buf with the given BTH P_Key. */
static void
send_write(struct droce_qp *qp, uint16_t pkey)
{
	struct roce_pkt p = rp_pkt(&rp, qp, ROCE_OP_RDMA_WRITE_ONLY, RP_PSN);

	p.pkey = pkey;
	p.reth.va = (uintptr_t)rp.buf;
	p.reth.rkey = rp.mr->rkey;
	p.reth.len = LEN;
	rp_send(&rp, &p, data, LEN, false);
}

/* A UC or UD SEND ONLY of data with the given BTH P_Key. */
static void
send_send(struct droce_qp *qp, uint8_t opcode, uint32_t psn, uint16_t pkey)
{
	struct roce_pkt p = rp_pkt(&rp, qp, opcode, psn);

	p.pkey = pkey;
	rp_send(&rp, &p, data, LEN, false);
}

static int
add_pkey(uint16_t pkey)
{
	return tp_dev_add_pkey(verbs_tp(rp.ctx), pkey);
}

/* A QP of type on P_Key table entry idx, buf cleared, *v0 the counter. */
static struct droce_qp *
new_qp(enum droce_qp_type type, uint16_t idx, uint64_t *v0)
{
	struct droce_qp *qp = rp_create_qp(&rp, type, idx);

	memset(rp.buf, 0, rp.len);
	*v0 = rp_counter(&rp, "pkey_violation");
	return qp;
}

/* n packets were dropped for their P_Key: no answer, no completion, buf untouched. */
static void
expect_dropped(uint64_t v0, uint64_t n)
{
	struct rp_frame f[4];
	struct droce_wc wc;

	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 0);
	assert_int_equal(droce_poll_cq(rp.cq, 1, &wc), 0);
	assert_int_equal(rp_counter(&rp, "pkey_violation"), v0 + n);
	for (size_t i = 0; i < rp.len; i++)
		assert_int_equal(rp.buf[i], 0);
}

/* The RC WRITE was executed: data at buf, one ACK of RP_PSN, MSN 1, with pkey. */
static void
expect_written(uint16_t pkey)
{
	struct rp_frame f[4];

	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	assert_int_equal(f[0].err, ROCE_PARSE_OK);
	assert_true(f[0].icrc_ok);
	assert_int_equal(f[0].pkt.opcode, ROCE_OP_ACKNOWLEDGE);
	assert_int_equal(roce_aeth_type(f[0].pkt.aeth.syndrome), ROCE_AETH_ACK);
	assert_int_equal(f[0].pkt.psn, RP_PSN);
	assert_int_equal(f[0].pkt.aeth.msn, 1);
	assert_int_equal(f[0].pkt.pkey, pkey);
	assert_memory_equal(rp.buf, data, LEN);
}

/* The SEND was received into the WQE wr_id, its data after grh bytes. */
static void
expect_received(uint64_t wr_id, uint32_t grh)
{
	struct droce_wc wc;

	assert_int_equal(rp_poll_cq(&rp, &wc, 1, 1.0), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(wc.wr_id, wr_id);
	assert_int_equal(wc.byte_len, grh + LEN);
	assert_memory_equal(rp.buf + grh, data, LEN);
}

static void
post_recv(struct droce_qp *qp, uint64_t wr_id, uint32_t len)
{
	struct droce_sge sge = { (uintptr_t)rp.buf, len, rp.mr->lkey };
	struct droce_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct droce_recv_wr *bad;

	assert_int_equal(droce_post_recv(qp, &wr, &bad), 0);
}

/*
 * 0x1234 to a 0xffff QP: another partition, dropped, nothing written.
 * Its P_Key is not the QP's receive template's: the full parse takes it;
 * the frame with the QP's P_Key is parsed by the template (rx_tmpl_parsed).
 */
static void
test_rc_other_partition_dropped(void **state)
{
	uint64_t v0, t0;
	struct droce_qp *qp = new_qp(DROCE_QPT_RC, 0, &v0);

	(void)state;
	t0 = rp_counter(&rp, "rx_tmpl_parsed");
	send_write(qp, 0x1234);
	expect_dropped(v0, 1);
	assert_int_equal(rp_counter(&rp, "rx_tmpl_parsed"), t0);
	/* the QP still expects RP_PSN: the drop consumed nothing */
	send_write(qp, 0xffff);
	expect_written(0xffff);
	assert_int_equal(rp_counter(&rp, "pkey_violation"), v0 + 1);
	assert_int_equal(rp_counter(&rp, "rx_tmpl_parsed"), t0 + 1);
	rp_destroy_qp(qp);
}

/* 0x7fff (limited) to a 0xffff (full) QP: one full member, accepted. */
static void
test_rc_limited_to_full_accepted(void **state)
{
	uint64_t v0;
	struct droce_qp *qp = new_qp(DROCE_QPT_RC, 0, &v0);

	uint64_t t0 = rp_counter(&rp, "rx_tmpl_parsed");

	(void)state;
	send_write(qp, 0x7fff);
	expect_written(0xffff);
	assert_int_equal(rp_counter(&rp, "pkey_violation"), v0);
	/* (not the template's P_Key: the full parse, the same verdict) */
	assert_int_equal(rp_counter(&rp, "rx_tmpl_parsed"), t0);
	rp_destroy_qp(qp);
}

/*
 * A QP on a limited 0x7fff entry: a limited 0x7fff packet is refused
 * (two limited members), a full 0xffff one accepted; droce's ACK carries
 * the QP's own P_Key 0x7fff.
 */
static void
test_rc_limited_to_limited_refused(void **state)
{
	int idx = add_pkey(0x7fff);
	struct droce_qp *qp;
	uint64_t v0;

	(void)state;
	assert_true(idx > 0);
	qp = new_qp(DROCE_QPT_RC, (uint16_t)idx, &v0);
	send_write(qp, 0x7fff);
	expect_dropped(v0, 1);
	send_write(qp, 0xffff);
	expect_written(0x7fff);
	rp_destroy_qp(qp);
}

/* The invalid P_Keys 0x0000 and 0x8000 match nothing, not even 0xffff. */
static void
test_rc_invalid_pkeys_dropped(void **state)
{
	uint64_t v0;
	struct droce_qp *qp = new_qp(DROCE_QPT_RC, 0, &v0);

	(void)state;
	send_write(qp, 0x8000);
	send_write(qp, 0x0000);
	expect_dropped(v0, 2);
	assert_int_equal(add_pkey(0x8000), -EINVAL);
	assert_int_equal(add_pkey(0x0000), -EINVAL);
	rp_destroy_qp(qp);
}

/* UC: the same check; a mismatching SEND consumes no receive WQE. */
static void
test_uc_other_partition_dropped(void **state)
{
	uint64_t v0;
	struct droce_qp *qp = new_qp(DROCE_QPT_UC, 0, &v0);

	(void)state;
	post_recv(qp, 7, LEN);
	send_send(qp, ROCE_OP_UC | ROCE_OP_SEND_ONLY, RP_PSN, 0x1234);
	expect_dropped(v0, 1);
	send_send(qp, ROCE_OP_UC | ROCE_OP_SEND_ONLY, RP_PSN, 0x7fff);
	expect_received(7, 0);
	rp_destroy_qp(qp);
}

/* UD: the packet's P_Key is checked against the QP's P_Key too. */
static void
test_ud_other_partition_dropped(void **state)
{
	uint64_t v0;
	struct droce_qp *qp = new_qp(DROCE_QPT_UD, 0, &v0);

	(void)state;
	post_recv(qp, 9, UD_GRH + LEN);
	send_send(qp, ROCE_OP_UD_SEND_ONLY, 0, 0x1234);
	send_send(qp, ROCE_OP_UD_SEND_ONLY, 1, 0x0000);
	expect_dropped(v0, 2);
	send_send(qp, ROCE_OP_UD_SEND_ONLY, 2, 0x7fff);
	expect_received(9, UD_GRH);
	rp_destroy_qp(qp);
}

/*
 * The table and modify_qp: index 0 is 0xffff (droce_query_pkey gives it in
 * network byte order, as ibv_query_pkey), a pkey_index beyond the table is
 * EINVAL, query_qp reports the index, and the QP's own packets carry the
 * selected P_Key.
 */
static void
test_pkey_table_and_tx(void **state)
{
	struct droce_qp_init_attr init = {
		.send_cq = rp.cq, .recv_cq = rp.cq, .qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct droce_qp_attr a = { .qp_state = DROCE_QPS_INIT, .port_num = 1 };
	struct droce_qp_init_attr qinit;
	struct droce_qp *qp;
	struct rp_frame f[4];
	uint16_t pk;
	int idx;

	(void)state;
	assert_int_equal(droce_query_pkey(rp.ctx, 1, 0, &pk), 0);
	assert_int_equal(pk, rte_cpu_to_be_16(0xffff));
	idx = add_pkey(0x8001);
	assert_true(idx > 0);
	assert_int_equal(add_pkey(0x8001), idx);	/* already there */
	assert_int_equal(droce_query_pkey(rp.ctx, 1, idx, &pk), 0);
	assert_int_equal(pk, rte_cpu_to_be_16(0x8001));
	assert_int_equal(droce_query_pkey(rp.ctx, 1, idx + 1, &pk), EINVAL);
	assert_int_equal(droce_query_pkey(rp.ctx, 2, 0, &pk), EINVAL);

	qp = droce_create_qp(rp.pd, &init);
	assert_non_null(qp);
	a.pkey_index = (uint16_t)(idx + 1);
	assert_int_equal(droce_modify_qp(qp, &a, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX |
					 DROCE_QP_PORT | DROCE_QP_ACCESS_FLAGS), EINVAL);
	rp_destroy_qp(qp);

	qp = rp_create_qp(&rp, DROCE_QPT_RC, (uint16_t)idx);
	memset(&a, 0, sizeof(a));
	assert_int_equal(droce_query_qp(qp, &a, DROCE_QP_PKEY_INDEX, &qinit), 0);
	assert_int_equal(a.pkey_index, idx);
	memcpy(rp.buf, data, LEN);
	assert_int_equal(droce_post_send(qp, &(struct droce_send_wr){
		.wr_id = 1, .opcode = DROCE_WR_RDMA_WRITE, .num_sge = 1,
		.sg_list = &(struct droce_sge){ (uintptr_t)rp.buf, LEN, rp.mr->lkey },
		.wr.rdma = { .remote_addr = 0x1000, .rkey = 0x42 } },
		&(struct droce_send_wr *){ NULL }), 0);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	assert_int_equal(f[0].err, ROCE_PARSE_OK);
	assert_int_equal(f[0].pkt.opcode, ROCE_OP_RDMA_WRITE_ONLY);
	assert_int_equal(f[0].pkt.pkey, 0x8001);
	assert_int_equal(f[0].pkt.psn, RP_PSN);
	assert_memory_equal(rp_payload(&f[0]), data, LEN);
	rp_destroy_qp(qp);
}

/*
 * Responses are checked too: an ACK with another partition's P_Key does
 * not complete droce's WRITE (dropped, counted); the right one does.
 */
static void
test_rc_ack_other_partition_dropped(void **state)
{
	struct droce_send_wr wr = { .wr_id = 3, .opcode = DROCE_WR_RDMA_WRITE,
				    .num_sge = 1, .send_flags = DROCE_SEND_SIGNALED,
				    .wr.rdma = { .remote_addr = 0x1000, .rkey = 0x42 } };
	struct droce_sge sge = { (uintptr_t)rp.buf, LEN, rp.mr->lkey };
	struct droce_send_wr *bad;
	struct rp_frame f[4];
	struct droce_wc wc;
	struct droce_qp *qp;
	struct roce_pkt ack;
	uint64_t v0;

	(void)state;
	qp = new_qp(DROCE_QPT_RC, 0, &v0);
	wr.sg_list = &sge;
	assert_int_equal(droce_post_send(qp, &wr, &bad), 0);
	assert_int_equal(rp_collect(&rp, f, 1, RP_WAIT_S), 1);
	assert_int_equal(f[0].pkt.opcode, ROCE_OP_RDMA_WRITE_ONLY);
	ack = rp_pkt(&rp, qp, ROCE_OP_ACKNOWLEDGE, f[0].pkt.psn);
	ack.ackreq = 0;
	ack.aeth.syndrome = ROCE_AETH_ACK_NO_CREDIT;
	ack.aeth.msn = 1;
	ack.pkey = 0x1234;
	rp_send(&rp, &ack, NULL, 0, false);
	assert_int_equal(rp_poll_cq(&rp, &wc, 1, RP_WAIT_S), 0);
	assert_int_equal(rp_counter(&rp, "pkey_violation"), v0 + 1);
	ack.pkey = 0xffff;
	rp_send(&rp, &ack, NULL, 0, false);
	assert_int_equal(rp_poll_cq(&rp, &wc, 1, 1.0), 1);
	assert_int_equal(wc.wr_id, 3);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(rp_counter(&rp, "pkey_violation"), v0 + 1);
	rp_destroy_qp(qp);
}

/* A UD QP's SEND carries the QP's P_Key (the one its pkey_index selects). */
static void
test_ud_sends_qp_pkey(void **state)
{
	struct droce_ah_attr aa = { .is_global = 1, .port_num = 1,
				    .grh = { .hop_limit = 64 } };
	struct droce_send_wr wr = { .wr_id = 2, .opcode = DROCE_WR_SEND, .num_sge = 1 };
	struct droce_sge sge = { (uintptr_t)rp.buf, LEN, rp.mr->lkey };
	struct droce_send_wr *bad;
	int idx = add_pkey(0x8002);
	struct droce_qp *qp;
	struct rp_frame f[4];
	struct droce_ah *ah;
	uint64_t v0;

	(void)state;
	assert_true(idx > 0);
	qp = new_qp(DROCE_QPT_UD, (uint16_t)idx, &v0);
	memcpy(aa.grh.dgid.raw, rp.peer_gid, 16);
	ah = droce_create_ah(rp.pd, &aa);
	assert_non_null(ah);
	memcpy(rp.buf, data, LEN);
	wr.sg_list = &sge;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = RP_PEER_QPN;
	wr.wr.ud.remote_qkey = RP_QKEY;
	assert_int_equal(droce_post_send(qp, &wr, &bad), 0);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	assert_int_equal(f[0].err, ROCE_PARSE_OK);
	assert_int_equal(f[0].pkt.opcode, ROCE_OP_UD_SEND_ONLY);
	assert_int_equal(f[0].pkt.pkey, 0x8002);
	assert_int_equal(f[0].pkt.dest_qpn, RP_PEER_QPN);
	assert_memory_equal(rp_payload(&f[0]), data, LEN);
	assert_int_equal(droce_destroy_ah(ah), 0);
	rp_destroy_qp(qp);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rc_other_partition_dropped),
		cmocka_unit_test(test_rc_limited_to_full_accepted),
		cmocka_unit_test(test_rc_invalid_pkeys_dropped),
		cmocka_unit_test(test_uc_other_partition_dropped),
		cmocka_unit_test(test_ud_other_partition_dropped),
		cmocka_unit_test(test_rc_limited_to_limited_refused),
		cmocka_unit_test(test_pkey_table_and_tx),
		cmocka_unit_test(test_ud_sends_qp_pkey),
		cmocka_unit_test(test_rc_ack_other_partition_dropped),
	};

	(void)argc;
	rp_eal_init(argv[0]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
