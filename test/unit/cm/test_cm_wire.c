/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cm's MAD layouts: every message round-trips, and the fields sit at
 * the byte offsets of IBTA 12.6 (MAD offsets: 24-byte header, then the
 * attribute data) and annex A11.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cm_wire.h"

static const uint8_t gid_a[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 1 };
static const uint8_t gid_b[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 2 };

static void
hdr(uint8_t *mad, uint16_t attr)
{
	struct cm_mad_hdr h = {
		.method = CM_MAD_METHOD_SEND, .tid = 0x0102030405060708ull, .attr_id = attr,
	};

	cm_mad_put_hdr(mad, &h);
}

/* decoding and encoding again gives the same bytes */
#define ROUND_TRIP(kind, attr, mad, out)				\
	do {								\
		uint8_t again[CM_MAD_LEN];				\
									\
		cm_##kind##_get(mad, &out);				\
		hdr(again, attr);					\
		cm_##kind##_put(again, &out);				\
		assert_memory_equal(again, mad, CM_MAD_LEN);		\
	} while (0)

static void
test_mad_header(void **state)
{
	uint8_t mad[CM_MAD_LEN];
	struct cm_mad_hdr h;

	(void)state;
	hdr(mad, CM_ATTR_REQ);
	assert_int_equal(mad[0], 1);
	assert_int_equal(mad[1], 0x07);
	assert_int_equal(mad[2], 2);
	assert_int_equal(mad[3], 0x03);
	assert_int_equal(mad[8], 0x01);
	assert_int_equal(mad[15], 0x08);
	assert_int_equal(mad[16], 0x00);
	assert_int_equal(mad[17], 0x10);
	assert_int_equal(cm_mad_check(mad, CM_MAD_LEN, &h), 0);
	assert_int_equal(h.attr_id, CM_ATTR_REQ);
	assert_int_equal(h.method, CM_MAD_METHOD_SEND);
	assert_true(h.tid == 0x0102030405060708ull);
	/* short, another class, class version 1: not a CM MAD we speak */
	assert_int_equal(cm_mad_check(mad, CM_MAD_LEN - 1, &h), -EINVAL);
	mad[2] = 1;
	assert_int_equal(cm_mad_check(mad, CM_MAD_LEN, &h), -EINVAL);
	mad[2] = 2;
	mad[1] = 0x04;
	assert_int_equal(cm_mad_check(mad, CM_MAD_LEN, &h), -EINVAL);
}

static void
test_req_layout(void **state)
{
	struct cm_req in = {
		.local_comm_id = 0xa1b2c3d4, .service_id = 0x0000000001064e20ull,
		.local_ca_guid = 0x1122334455667788ull, .local_qkey = 0x9abcdef0,
		.local_qpn = 0x123456, .responder_resources = 4, .initiator_depth = 3,
		.remote_cm_timeout = 20, .transport = 0, .flow_control = true,
		.starting_psn = 0xabcdef, .local_cm_timeout = 18, .retry_count = 7,
		.pkey = 0xffff, .path_mtu = 3, .rnr_retry = 6, .max_cm_retries = 15,
		.primary = { .local_lid = 0xffff, .remote_lid = 0xffff,
			     .flow_label = 0xfedcb, .packet_rate = 0x2a,
			     .traffic_class = 0x12, .hop_limit = 64, .sl = 5,
			     .subnet_local = false, .local_ack_timeout = 14 },
	};
	struct cm_req out;
	uint8_t mad[CM_MAD_LEN];

	(void)state;
	memcpy(in.primary.local_gid, gid_a, 16);
	memcpy(in.primary.remote_gid, gid_b, 16);
	for (unsigned int i = 0; i < CM_REQ_PDATA; i++)
		in.pdata[i] = (uint8_t)(i + 1);
	hdr(mad, CM_ATTR_REQ);
	cm_req_put(mad, &in);
	/* IBTA 12.6.5 offsets */
	assert_int_equal(mad[24], 0xa1);
	assert_int_equal(mad[27], 0xd4);
	assert_int_equal(mad[37], 0x06);	/* service ID 0x...0106 4e20 */
	assert_int_equal(mad[38], 0x4e);
	assert_int_equal(mad[39], 0x20);
	assert_int_equal(mad[40], 0x11);
	assert_int_equal(mad[52], 0x9a);
	assert_int_equal(mad[56], 0x12);
	assert_int_equal(mad[58], 0x56);
	assert_int_equal(mad[59], 4);
	assert_int_equal(mad[63], 3);
	assert_int_equal(mad[67], 20 << 3 | 0 << 1 | 1);
	assert_int_equal(mad[68], 0xab);
	assert_int_equal(mad[70], 0xef);
	assert_int_equal(mad[71], 18 << 3 | 7);
	assert_int_equal(mad[72], 0xff);
	assert_int_equal(mad[74], 3 << 4 | 6);
	assert_int_equal(mad[75], 15 << 4);
	assert_int_equal(mad[76], 0xff);
	assert_memory_equal(mad + 80, gid_a, 16);
	assert_memory_equal(mad + 96, gid_b, 16);
	assert_int_equal(mad[112], 0xfe);
	assert_int_equal(mad[114], 0xb0);
	assert_int_equal(mad[115], 0x2a);
	assert_int_equal(mad[116], 0x12);
	assert_int_equal(mad[117], 64);
	assert_int_equal(mad[118], 5 << 4);
	assert_int_equal(mad[119], 14 << 3);
	/* the alternate path (44 bytes from 120) unused, private data from 164 */
	assert_int_equal(mad[120 + 41], 0);
	assert_int_equal(mad[163], 0);
	assert_int_equal(mad[164], 1);
	assert_int_equal(mad[255], CM_REQ_PDATA);
	ROUND_TRIP(req, CM_ATTR_REQ, mad, out);
	assert_int_equal(out.local_qpn, 0x123456);
	assert_int_equal(out.primary.flow_label, 0xfedcb);
}

static void
test_rep_layout(void **state)
{
	struct cm_rep in = {
		.local_comm_id = 1, .remote_comm_id = 2, .local_qkey = 3,
		.local_qpn = 0x654321, .starting_psn = 0x0f0e0d, .responder_resources = 16,
		.initiator_depth = 8, .target_ack_delay = 9, .failover = 1,
		.flow_control = true, .rnr_retry = 5, .srq = true,
		.local_ca_guid = 0x0102030405060708ull,
	};
	struct cm_rep out;
	uint8_t mad[CM_MAD_LEN];

	(void)state;
	memset(in.pdata, 0x5a, sizeof(in.pdata));
	hdr(mad, CM_ATTR_REP);
	cm_rep_put(mad, &in);
	assert_int_equal(mad[27], 1);
	assert_int_equal(mad[31], 2);
	assert_int_equal(mad[35], 3);
	assert_int_equal(mad[36], 0x65);
	assert_int_equal(mad[44], 0x0f);
	assert_int_equal(mad[48], 16);
	assert_int_equal(mad[49], 8);
	assert_int_equal(mad[50], 9 << 3 | 1 << 1 | 1);
	assert_int_equal(mad[51], 5 << 5 | 1 << 4);
	assert_int_equal(mad[52], 0x01);
	assert_int_equal(mad[59], 0x08);
	assert_int_equal(mad[60], 0x5a);
	assert_int_equal(mad[255], 0x5a);
	ROUND_TRIP(rep, CM_ATTR_REP, mad, out);
	assert_int_equal(out.rnr_retry, 5);
	assert_true(out.srq);
}

static void
test_rej_mra_rtu_dreq_layout(void **state)
{
	struct cm_rej rej = { .local_comm_id = 7, .remote_comm_id = 8,
			      .msg_rejected = CM_MSG_REQ, .ari_len = 0,
			      .reason = CM_REJ_CONSUMER }, rej2;
	struct cm_mra mra = { .local_comm_id = 9, .remote_comm_id = 10,
			      .msg_mraed = CM_MSG_REP, .service_timeout = 17 }, mra2;
	struct cm_rtu rtu = { .local_comm_id = 11, .remote_comm_id = 12 }, rtu2;
	struct cm_dreq dreq = { .local_comm_id = 13, .remote_comm_id = 14,
				.remote_qpn = 0xabcdef }, dreq2;
	uint8_t mad[CM_MAD_LEN];

	(void)state;
	rej.pdata[0] = 0x77;
	hdr(mad, CM_ATTR_REJ);
	cm_rej_put(mad, &rej);
	assert_int_equal(mad[32], 0);
	assert_int_equal(mad[34], 0);
	assert_int_equal(mad[35], 28);
	assert_int_equal(mad[108], 0x77);
	ROUND_TRIP(rej, CM_ATTR_REJ, mad, rej2);
	assert_int_equal(rej2.reason, CM_REJ_CONSUMER);

	hdr(mad, CM_ATTR_MRA);
	cm_mra_put(mad, &mra);
	assert_int_equal(mad[32], 1 << 6);
	assert_int_equal(mad[33], 17 << 3);
	ROUND_TRIP(mra, CM_ATTR_MRA, mad, mra2);
	assert_int_equal(mra2.service_timeout, 17);

	rtu.pdata[0] = 0x33;
	hdr(mad, CM_ATTR_RTU);
	cm_rtu_put(mad, &rtu);
	assert_int_equal(mad[27], 11);
	assert_int_equal(mad[31], 12);
	assert_int_equal(mad[32 + 0], 0x33);
	ROUND_TRIP(rtu, CM_ATTR_RTU, mad, rtu2);
	assert_int_equal(rtu2.remote_comm_id, 12);

	hdr(mad, CM_ATTR_DREQ);
	cm_dreq_put(mad, &dreq);
	assert_int_equal(mad[32], 0xab);
	assert_int_equal(mad[34], 0xef);
	ROUND_TRIP(dreq, CM_ATTR_DREQ, mad, dreq2);
	assert_int_equal(dreq2.remote_qpn, 0xabcdef);
}

static void
test_sidr_layout(void **state)
{
	struct cm_sidr_req req = { .request_id = 0xa1b2c3d4, .pkey = 0xfffe,
				   .service_id = 0x0000000001111b5eull }, req2;
	struct cm_sidr_rep rep = { .request_id = 0x01020304, .status = CM_SIDR_REJECT,
				   .info_len = 0x48, .qpn = 0xabcdef,
				   .service_id = 0x0000000001111b5eull, .qkey = 0x01234567 },
			   rep2;
	uint8_t mad[CM_MAD_LEN];

	(void)state;
	for (unsigned int i = 0; i < CM_SIDR_REQ_PDATA; i++)
		req.pdata[i] = (uint8_t)(i + 1);
	hdr(mad, CM_ATTR_SIDR_REQ);
	assert_int_equal(mad[16], 0x00);
	assert_int_equal(mad[17], 0x17);
	cm_sidr_req_put(mad, &req);
	/* IBTA 12.11.1 table 121: Request ID 0, P_Key 4, Service ID 8, private
	 * data 16 (216 bytes, to the MAD's end) */
	assert_int_equal(mad[24], 0xa1);
	assert_int_equal(mad[27], 0xd4);
	assert_int_equal(mad[28], 0xff);
	assert_int_equal(mad[29], 0xfe);
	assert_int_equal(mad[30], 0);
	assert_int_equal(mad[31], 0);
	assert_int_equal(mad[32], 0);
	assert_int_equal(mad[35], 0);
	assert_int_equal(mad[36], 0x01);	/* 0x0000000001 | PS 0x0111 | port */
	assert_int_equal(mad[37], 0x11);
	assert_int_equal(mad[38], 0x1b);
	assert_int_equal(mad[39], 0x5e);
	assert_int_equal(mad[40], 1);
	assert_int_equal(mad[255], CM_SIDR_REQ_PDATA);
	ROUND_TRIP(sidr_req, CM_ATTR_SIDR_REQ, mad, req2);
	assert_true(req2.service_id == 0x0000000001111b5eull);

	for (unsigned int i = 0; i < CM_SIDR_REP_INFO_LEN; i++)
		rep.info[i] = 0x70;
	for (unsigned int i = 0; i < CM_SIDR_REP_PDATA; i++)
		rep.pdata[i] = (uint8_t)(0x80 + i);
	hdr(mad, CM_ATTR_SIDR_REP);
	assert_int_equal(mad[17], 0x18);
	cm_sidr_rep_put(mad, &rep);
	/* table 122: Request ID 0, Status 4, AddInfo length 5, QPN 8 (24
	 * bits, then a reserved byte), Service ID 12, Q_Key 20, AddInfo 24
	 * (72 bytes), private data 96 (136 bytes) */
	assert_int_equal(mad[24], 0x01);
	assert_int_equal(mad[27], 0x04);
	assert_int_equal(mad[28], CM_SIDR_REJECT);
	assert_int_equal(mad[29], 0x48);
	assert_int_equal(mad[30], 0);
	assert_int_equal(mad[32], 0xab);
	assert_int_equal(mad[33], 0xcd);
	assert_int_equal(mad[34], 0xef);
	assert_int_equal(mad[35], 0);
	assert_int_equal(mad[39], 0);
	assert_int_equal(mad[40], 0x01);
	assert_int_equal(mad[41], 0x11);
	assert_int_equal(mad[43], 0x5e);
	assert_int_equal(mad[44], 0x01);
	assert_int_equal(mad[45], 0x23);
	assert_int_equal(mad[47], 0x67);
	assert_int_equal(mad[48], 0x70);
	assert_int_equal(mad[119], 0x70);
	assert_int_equal(mad[120], 0x80);
	assert_int_equal(mad[255], (uint8_t)(0x80 + CM_SIDR_REP_PDATA - 1));
	ROUND_TRIP(sidr_rep, CM_ATTR_SIDR_REP, mad, rep2);
	assert_int_equal(rep2.qpn, 0xabcdef);
	assert_int_equal(rep2.qkey, 0x01234567);
	/* a reserved byte set by the sender is not taken for the QPN */
	mad[35] = 0xff;
	cm_sidr_rep_get(mad, &rep2);
	assert_int_equal(rep2.qpn, 0xabcdef);
	assert_int_equal(rep2.status, CM_SIDR_REJECT);
}

static void
test_ip_hdr(void **state)
{
	struct cm_ip_hdr in = { .ip_version = 4, .src_port = 0x8001 }, out;
	uint8_t p[CM_IP_HDR_LEN];

	(void)state;
	memcpy(in.src + 12, gid_a + 12, 4);
	memcpy(in.dst + 12, gid_b + 12, 4);
	cm_ip_hdr_put(p, &in);
	/* annex A11: version 0, IP version in the high nibble, source port,
	 * IPv4 addresses in the last 4 bytes of each 16 */
	assert_int_equal(p[0], 0);
	assert_int_equal(p[1], 0x40);
	assert_int_equal(p[2], 0x80);
	assert_int_equal(p[3], 0x01);
	assert_int_equal(p[4], 0);
	assert_int_equal(p[16], 198);
	assert_int_equal(p[19], 1);
	assert_int_equal(p[35], 2);
	assert_int_equal(cm_ip_hdr_get(p, &out), 0);
	assert_int_equal(out.ip_version, 4);
	assert_int_equal(out.src_port, 0x8001);
	assert_memory_equal(out.src, in.src, 16);
	assert_memory_equal(out.dst, in.dst, 16);
	p[1] = 0x50;
	assert_int_equal(cm_ip_hdr_get(p, &out), -EINVAL);
	p[1] = 0x60;
	p[0] = 1;
	assert_int_equal(cm_ip_hdr_get(p, &out), -EINVAL);
}

static void
test_timeout(void **state)
{
	(void)state;
	assert_true(cm_timeout_ns(0) == 4096);
	assert_true(cm_timeout_ns(20) == 4096ull << 20);	/* 4.29 s */
	assert_true(cm_timeout_ns(31) == 4096ull << 31);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mad_header),
		cmocka_unit_test(test_req_layout),
		cmocka_unit_test(test_rep_layout),
		cmocka_unit_test(test_rej_mra_rtu_dreq_layout),
		cmocka_unit_test(test_sidr_layout),
		cmocka_unit_test(test_ip_hdr),
		cmocka_unit_test(test_timeout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
