/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/wire unit tests without captures: the opcode table against the spec,
 * the generated header accessors, PSN arithmetic, the CRC implementations,
 * build/parse round trips for every opcode, and parse errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "icrc_ref.h"
#include "roce_wire.h"
#include "roce_icrc_private.h"
#include "wire_private.h"

/* ---- opcode table ------------------------------------------------------- */

/*
 * The spec's layout of every RoCEv2 opcode: extended headers after the BTH
 * (IBTA 1.5 vol 1 table 38 and 9.2-9.4; FLUSH = BTH+FETH+RETH,
 * ATOMIC_WRITE = BTH+RETH+8 bytes; CNP = BTH + 16 reserved bytes).
 * Header sizes: RETH 16, AETH 4, AtomicETH 28, AtomicAckETH 8, ImmDt 4,
 * IETH 4, DETH 8, FETH 4.
 */
struct expect_op {
	uint8_t opcode;
	uint8_t hdr_len;		/* BTH included */
	int reth, aeth, atmeth, atmack, imm, ieth, deth, feth;	/* offsets, -1 absent */
	int payload;
};

#define NO (-1)
static const struct expect_op expected_ops[] = {
	/* op   len  reth aeth atm  ack  imm  ieth deth feth pay */
	{ 0x00, 12, NO, NO, NO, NO, NO, NO, NO, NO, 1 },	/* SEND_FIRST */
	{ 0x01, 12, NO, NO, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x02, 12, NO, NO, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x03, 16, NO, NO, NO, NO, 12, NO, NO, NO, 1 },	/* SEND_LAST_IMM */
	{ 0x04, 12, NO, NO, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x05, 16, NO, NO, NO, NO, 12, NO, NO, NO, 1 },
	{ 0x06, 28, 12, NO, NO, NO, NO, NO, NO, NO, 1 },	/* WRITE_FIRST */
	{ 0x07, 12, NO, NO, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x08, 12, NO, NO, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x09, 16, NO, NO, NO, NO, 12, NO, NO, NO, 1 },	/* WRITE_LAST_IMM */
	{ 0x0a, 28, 12, NO, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x0b, 32, 12, NO, NO, NO, 28, NO, NO, NO, 1 },	/* WRITE_ONLY_IMM */
	{ 0x0c, 28, 12, NO, NO, NO, NO, NO, NO, NO, 0 },	/* READ_REQUEST */
	{ 0x0d, 16, NO, 12, NO, NO, NO, NO, NO, NO, 1 },	/* READ_RESP_FIRST */
	{ 0x0e, 12, NO, NO, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x0f, 16, NO, 12, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x10, 16, NO, 12, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x11, 16, NO, 12, NO, NO, NO, NO, NO, NO, 0 },	/* ACK */
	{ 0x12, 24, NO, 12, NO, 16, NO, NO, NO, NO, 0 },	/* ATOMIC_ACK */
	{ 0x13, 40, NO, NO, 12, NO, NO, NO, NO, NO, 0 },	/* CMP_SWAP */
	{ 0x14, 40, NO, NO, 12, NO, NO, NO, NO, NO, 0 },
	{ 0x16, 16, NO, NO, NO, NO, NO, 12, NO, NO, 1 },	/* SEND_LAST_INV */
	{ 0x17, 16, NO, NO, NO, NO, NO, 12, NO, NO, 1 },
	{ 0x1c, 32, 16, NO, NO, NO, NO, NO, NO, 12, 0 },	/* FLUSH */
	{ 0x1d, 28, 12, NO, NO, NO, NO, NO, NO, NO, 1 },	/* ATOMIC_WRITE */
	{ 0x20, 12, NO, NO, NO, NO, NO, NO, NO, NO, 1 },	/* UC */
	{ 0x21, 12, NO, NO, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x22, 12, NO, NO, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x23, 16, NO, NO, NO, NO, 12, NO, NO, NO, 1 },
	{ 0x24, 12, NO, NO, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x25, 16, NO, NO, NO, NO, 12, NO, NO, NO, 1 },
	{ 0x26, 28, 12, NO, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x27, 12, NO, NO, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x28, 12, NO, NO, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x29, 16, NO, NO, NO, NO, 12, NO, NO, NO, 1 },
	{ 0x2a, 28, 12, NO, NO, NO, NO, NO, NO, NO, 1 },
	{ 0x2b, 32, 12, NO, NO, NO, 28, NO, NO, NO, 1 },
	{ 0x64, 20, NO, NO, NO, NO, NO, NO, 12, NO, 1 },	/* UD SEND_ONLY */
	{ 0x65, 24, NO, NO, NO, NO, 20, NO, 12, NO, 1 },
	{ 0x81, 28, NO, NO, NO, NO, NO, NO, NO, NO, 0 },	/* CNP */
};

static void
check_off(const struct roce_opcode_info *op, enum roce_hdr h, int want)
{
	if (want == NO) {
		assert_false(op->mask & (1u << h));
	} else {
		assert_true(op->mask & (1u << h));
		assert_int_equal(op->off[h], want);
	}
}

static void
test_opcode_table_matches_spec(void **state)
{
	unsigned int defined = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(expected_ops) / sizeof(expected_ops[0]); i++) {
		const struct expect_op *e = &expected_ops[i];
		const struct roce_opcode_info *op = roce_opcode_get(e->opcode);

		assert_non_null(op->name);
		assert_int_equal(op->hdr_len, e->hdr_len);
		check_off(op, ROCE_HDR_RETH, e->reth);
		check_off(op, ROCE_HDR_AETH, e->aeth);
		check_off(op, ROCE_HDR_ATMETH, e->atmeth);
		check_off(op, ROCE_HDR_ATMACK, e->atmack);
		check_off(op, ROCE_HDR_IMM, e->imm);
		check_off(op, ROCE_HDR_IETH, e->ieth);
		check_off(op, ROCE_HDR_DETH, e->deth);
		check_off(op, ROCE_HDR_FETH, e->feth);
		assert_int_equal(!!(op->mask & ROCE_OPM_PAYLOAD), e->payload);
		/* requests and responses are exclusive; CNP is neither */
		assert_false((op->mask & ROCE_OPM_REQ) && (op->mask & ROCE_OPM_RESP));
	}
	for (unsigned int o = 0; o < 256; o++)
		defined += roce_opcode_valid((uint8_t)o);
	/* nothing defined that the spec list above does not have */
	assert_int_equal(defined, sizeof(expected_ops) / sizeof(expected_ops[0]));
	assert_string_equal(roce_opcode_name(0x15), "UNKNOWN");
	assert_string_equal(roce_opcode_name(0x0a), "RC RDMA_WRITE_ONLY");
	assert_string_equal(roce_opcode_name(0x2b), "UC RDMA_WRITE_ONLY_WITH_IMMEDIATE");
	assert_string_equal(roce_opcode_name(0x64), "UD SEND_ONLY");
}

static void
test_opcode_message_position(void **state)
{
	(void)state;
	/* FIRST/MIDDLE/LAST follow the low opcode bits for SEND and WRITE */
	assert_true(roce_opcode_get(ROCE_OP_SEND_FIRST)->mask & ROCE_OPM_FIRST);
	assert_false(roce_opcode_get(ROCE_OP_SEND_FIRST)->mask & ROCE_OPM_LAST);
	assert_true(roce_opcode_get(ROCE_OP_SEND_MIDDLE)->mask & ROCE_OPM_MIDDLE);
	assert_int_equal(roce_opcode_get(ROCE_OP_RDMA_WRITE_ONLY)->mask & ROCE_OPM_ONLY,
			 ROCE_OPM_ONLY);
	assert_int_equal(roce_opcode_get(ROCE_OP_RDMA_READ_REQUEST)->mask & ROCE_OPM_ONLY,
			 ROCE_OPM_ONLY);
	/* receive WQEs: SEND* and WRITE with immediate only */
	assert_true(roce_opcode_get(ROCE_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE)->mask &
		    ROCE_OPM_RWR);
	assert_false(roce_opcode_get(ROCE_OP_RDMA_WRITE_LAST)->mask & ROCE_OPM_RWR);
	assert_true(roce_opcode_get(ROCE_OP_UD_SEND_ONLY)->mask & ROCE_OPM_RWR);
	assert_int_equal(roce_opcode_transport(0x2a), ROCE_TRANSPORT_UC);
	assert_int_equal(roce_opcode_transport(0x64), ROCE_TRANSPORT_UD);
	assert_int_equal(roce_opcode_transport(0x81), ROCE_TRANSPORT_CNP);
}

/* ---- generated accessors ------------------------------------------------ */

/*
 * For every field of every header: setting it to all ones in a zeroed
 * buffer changes exactly its own bits (as the table places them), reads
 * back as all ones, and clearing it in an all-ones buffer clears only it.
 */
struct field_desc {
	const char *name;
	unsigned int off, nbytes, shift, width;
	uint64_t (*get)(const uint8_t *);
	void (*set)(uint8_t *, uint64_t);
};

static const struct field_desc fields[] = {
#define FIELD(h, f, off, n, sh, w) \
	{ #h "." #f, off, n, sh, w, roce_##h##_get_##f, roce_##h##_set_##f },
	ROCE_ALL_HDR_FIELDS(FIELD)
#undef FIELD
};

static int
bit_is_in_field(const struct field_desc *d, unsigned int byte, unsigned int bit)
{
	unsigned int from_lsb;

	if (byte < d->off || byte >= d->off + d->nbytes)
		return 0;
	from_lsb = (d->off + d->nbytes - 1 - byte) * 8 + bit;
	return from_lsb >= d->shift && from_lsb < d->shift + d->width;
}

static void
test_accessors_touch_only_their_bits(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const struct field_desc *d = &fields[i];
		uint64_t ones = d->width == 64 ? UINT64_MAX :
			(UINT64_C(1) << d->width) - 1;
		uint8_t buf[32];

		memset(buf, 0, sizeof(buf));
		d->set(buf, UINT64_MAX);
		assert_true(d->get(buf) == ones);
		for (unsigned int b = 0; b < sizeof(buf); b++)
			for (unsigned int bit = 0; bit < 8; bit++)
				assert_int_equal(!!(buf[b] & (1u << bit)),
						 bit_is_in_field(d, b, bit));
		memset(buf, 0xff, sizeof(buf));
		d->set(buf, 0);
		assert_true(d->get(buf) == 0);
		for (unsigned int b = 0; b < sizeof(buf); b++)
			for (unsigned int bit = 0; bit < 8; bit++)
				assert_int_equal(!(buf[b] & (1u << bit)),
						 bit_is_in_field(d, b, bit));
	}
}

static void
test_bth_field_values(void **state)
{
	/* a BTH from rc_send_ipv4.pcap: SEND_ONLY, P_Key ffff, QP 0x21, AckReq */
	const uint8_t bth[12] = { 0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00,
				  0x21, 0x80, 0x12, 0x34, 0x56 };

	(void)state;
	assert_int_equal(roce_bth_get_opcode(bth), 4);
	assert_int_equal(roce_bth_get_pkey(bth), 0xffff);
	assert_int_equal(roce_bth_get_destqp(bth), 0x21);
	assert_int_equal(roce_bth_get_ackreq(bth), 1);
	assert_int_equal(roce_bth_get_psn(bth), 0x123456);
	assert_int_equal(roce_bth_get_padcnt(bth), 0);
}

/* ---- PSN ---------------------------------------------------------------- */

static void
test_psn_wraps_at_2_24(void **state)
{
	(void)state;
	assert_int_equal(roce_psn_add(0xffffff, 1), 0);
	assert_int_equal(roce_psn_add(0xfffffe, 5), 3);
	assert_int_equal(roce_psn_diff(2, 0xfffffe), 4);
	assert_int_equal(roce_psn_diff(0xfffffe, 2), -4);
	assert_true(roce_psn_after(0, 0xffffff));
	assert_true(roce_psn_before(0xffffff, 0));
	assert_false(roce_psn_after(5, 5));
	assert_int_equal(roce_psn_diff(0x800000, 0), -0x800000);
	assert_int_equal(roce_psn_diff(0x7fffff, 0), 0x7fffff);
	assert_true(roce_psn_in_window(1, 0xfffffe, 4));
	assert_false(roce_psn_in_window(2, 0xfffffe, 4));
	assert_false(roce_psn_in_window(0xfffffd, 0xfffffe, 4));
}

/* ---- CRC ---------------------------------------------------------------- */

static void
test_crc32_known_answer_and_chaining(void **state)
{
	uint8_t big[5000];
	uint32_t whole, part;

	(void)state;
	/* the CRC-32 check value */
	assert_int_equal(roce_crc32(0, "123456789", 9), 0xcbf43926);
	assert_int_equal(roce_crc32_portable(0, "123456789", 9), 0xcbf43926);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 31 + 7);
	whole = roce_crc32(0, big, sizeof(big));
	assert_int_equal(whole, roce_crc32_portable(0, big, sizeof(big)));
	/* chaining over any split gives the same result (scatter lists) */
	for (size_t cut = 0; cut <= sizeof(big); cut += 613) {
		part = roce_crc32(0, big, cut);
		part = roce_crc32(part, big + cut, sizeof(big) - cut);
		assert_int_equal(part, whole);
	}
}

static void
test_crc32_table_is_generated_correctly(void **state)
{
	(void)state;
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0xedb88320u : c >> 1;
		assert_int_equal(roce_crc32_table[i], c);
	}
}

/* ---- build / parse round trips ------------------------------------------ */

static void
fill_template(struct roce_pkt *p, uint8_t opcode, unsigned int ipv,
	      uint32_t payload_len)
{
	static const uint8_t v4a[4] = { 198, 18, 0, 1 }, v4b[4] = { 198, 18, 0, 2 };
	static const uint8_t v6a[16] = { 0x20, 0x01, 0x00, 0x02, [15] = 1 };
	static const uint8_t v6b[16] = { 0x20, 0x01, 0x00, 0x02, [15] = 2 };

	memset(p, 0, sizeof(*p));
	memcpy(p->dst_mac, "\x02\x00\x00\x00\x00\x02", 6);
	memcpy(p->src_mac, "\x02\x00\x00\x00\x00\x01", 6);
	p->ip_version = (uint8_t)ipv;
	if (ipv == 4) {
		roce_gid_from_ipv4(p->src_gid, v4a);
		roce_gid_from_ipv4(p->dst_gid, v4b);
		p->ip_df = 1;
		p->ip_id = 0x1234;
	} else {
		memcpy(p->src_gid, v6a, 16);
		memcpy(p->dst_gid, v6b, 16);
		p->ip_flow_label = 0xabcde;
	}
	p->ip_ttl = 64;
	p->ip_dscp_ecn = 0x68;
	p->udp_sport = roce_udp_sport(0x11, 0x21);
	p->opcode = opcode;
	p->se = 1;
	p->migreq = 1;
	p->pkey = 0xffff;
	p->becn = 1;
	p->dest_qpn = 0xabcdef;
	p->ackreq = 1;
	p->psn = 0xfffffe;
	p->reth.va = 0x1122334455667788ull;
	p->reth.rkey = 0xdeadbeef;
	p->reth.len = 0x10000;
	p->aeth.syndrome = ROCE_AETH_SYNDROME(ROCE_AETH_NAK, ROCE_NAK_REM_ACCESS_ERR);
	p->aeth.msn = 0x654321;
	p->atmeth.va = 0x0102030405060708ull;
	p->atmeth.rkey = 0x0a0b0c0d;
	p->atmeth.swap = 0xfedcba9876543210ull;
	p->atmeth.comp = 0x0123456789abcdefull;
	p->atmack_orig = 0x5555aaaa5555aaaaull;
	p->imm = 0x44444444;
	p->ieth_rkey = 0x00c0ffee;
	p->deth.qkey = 0x11111111;
	p->deth.src_qpn = 0x000123;
	p->feth.sel = 2;
	p->feth.plt = 1;
	p->payload_len = payload_len;
}

static void
assert_same_fields(const struct roce_pkt *a, const struct roce_pkt *b)
{
	uint32_t m = a->op->mask;

	assert_int_equal(a->opcode, b->opcode);
	assert_int_equal(a->ip_version, b->ip_version);
	assert_memory_equal(a->src_gid, b->src_gid, 16);
	assert_memory_equal(a->dst_gid, b->dst_gid, 16);
	assert_memory_equal(a->src_mac, b->src_mac, 6);
	assert_memory_equal(a->dst_mac, b->dst_mac, 6);
	assert_int_equal(a->ip_ttl, b->ip_ttl);
	assert_int_equal(a->ip_dscp_ecn, b->ip_dscp_ecn);
	assert_int_equal(a->ip_flow_label, b->ip_flow_label);
	assert_int_equal(a->udp_sport, b->udp_sport);
	assert_int_equal(b->udp_dport, ROCE_UDP_PORT);
	assert_int_equal(a->se, b->se);
	assert_int_equal(a->migreq, b->migreq);
	assert_int_equal(a->padcnt, b->padcnt);
	assert_int_equal(a->pkey, b->pkey);
	assert_int_equal(a->becn, b->becn);
	assert_int_equal(a->dest_qpn, b->dest_qpn);
	assert_int_equal(a->ackreq, b->ackreq);
	assert_int_equal(a->psn, b->psn);
	assert_int_equal(a->payload_len, b->payload_len);
	assert_int_equal(a->payload_off, b->payload_off);
	assert_int_equal(a->pkt_len, b->pkt_len);
	if (m & ROCE_OPM_RETH) {
		assert_true(a->reth.va == b->reth.va);
		assert_int_equal(a->reth.rkey, b->reth.rkey);
		assert_int_equal(a->reth.len, b->reth.len);
	}
	if (m & ROCE_OPM_AETH) {
		assert_int_equal(a->aeth.syndrome, b->aeth.syndrome);
		assert_int_equal(a->aeth.msn, b->aeth.msn);
	}
	if (m & ROCE_OPM_ATMETH) {
		assert_true(a->atmeth.va == b->atmeth.va);
		assert_int_equal(a->atmeth.rkey, b->atmeth.rkey);
		assert_true(a->atmeth.swap == b->atmeth.swap);
		assert_true(a->atmeth.comp == b->atmeth.comp);
	}
	if (m & ROCE_OPM_ATMACK)
		assert_true(a->atmack_orig == b->atmack_orig);
	if (m & ROCE_OPM_IMM)
		assert_int_equal(a->imm, b->imm);
	if (m & ROCE_OPM_IETH)
		assert_int_equal(a->ieth_rkey, b->ieth_rkey);
	if (m & ROCE_OPM_DETH) {
		assert_int_equal(a->deth.qkey, b->deth.qkey);
		assert_int_equal(a->deth.src_qpn, b->deth.src_qpn);
	}
	if (m & ROCE_OPM_FETH) {
		assert_int_equal(a->feth.sel, b->feth.sel);
		assert_int_equal(a->feth.plt, b->feth.plt);
	}
	assert_int_equal(a->icrc, b->icrc);
}

/*
 * The frame built from a header template is byte for byte the frame
 * roce_build wrote for `in`, and the template build reads of its packet
 * only the per-packet fields (everything else is garbage here).
 */
static void
template_same_frame(const struct roce_pkt *in, unsigned int ipv, bool vlan,
		    const uint8_t *want, size_t n, const uint8_t *payload)
{
	static const size_t ext_off = offsetof(struct roce_pkt, reth);
	static const size_t ext_len = offsetof(struct roce_pkt, icrc) - ext_off;
	uint8_t frame[9000];
	struct roce_pkt flow, q;
	struct roce_tmpl t;
	size_t hl;

	fill_template(&flow, ROCE_OP_SEND_ONLY, ipv, 0);
	flow.has_vlan = vlan;
	flow.vlan_tci = 0x2005;
	flow.opcode = 0x15;		/* any: the template ignores it */
	flow.psn = 77;
	assert_true(roce_tmpl_init(&t, &flow));

	memset(&q, 0xa5, sizeof(q));
	q.opcode = in->opcode;
	q.se = in->se;
	q.ackreq = in->ackreq;
	q.psn = in->psn;
	q.payload_len = in->payload_len;
	memcpy((uint8_t *)&q + ext_off, (const uint8_t *)in + ext_off, ext_len);
	assert_int_equal(roce_tmpl_build_headers(&t, frame, n - 1, &q), 0);
	hl = roce_tmpl_build_headers(&t, frame, n, &q);	/* exactly enough room */
	assert_int_equal(hl, in->payload_off);
	assert_int_equal(q.pkt_len, n);
	memcpy(frame + hl, payload, q.payload_len);
	roce_build_finish(frame, &q);
	assert_memory_equal(frame, want, n);
	assert_int_equal(q.icrc, in->icrc);

	/* the fast path: the same bytes over a buffer of garbage, reading
	 * and writing only its five fields of the packet */
	for (int port = 0; port <= 1; port++) {
		uint8_t fast[9000];
		struct roce_pkt r;

		memset(fast, 0x5a, sizeof(fast));
		memset(&r, 0xa5, sizeof(r));
		r.opcode = in->opcode;
		r.se = in->se;
		r.ackreq = in->ackreq;
		r.psn = in->psn;
		r.payload_len = in->payload_len;
		memcpy((uint8_t *)&r + ext_off, (const uint8_t *)in + ext_off, ext_len);
		assert_int_equal(roce_tmpl_write_headers(&t, fast, n, &r), in->payload_off);
		assert_int_equal(r.pkt_len, n);
		memcpy(fast + r.payload_off, payload, r.payload_len);
		roce_tmpl_finish(&t, fast, &r, port);
		assert_int_equal(r.icrc, in->icrc);
		memcpy(frame, want, n);
		/* the port fills in the IPv4 checksum: 0 until then */
		if (port && ipv == 4)
			frame[in->l3_off + 10] = frame[in->l3_off + 11] = 0;
		assert_memory_equal(fast, frame, n);
	}

	/* zero copy: the same frame in three pieces, the headers, the
	 * payload where it is and the pad + ICRC in a trailer, finished
	 * from the template and without it */
	for (int port = 0; port <= 1; port++) {
		for (int tm = 0; tm <= 1; tm++) {
			uint8_t hdr[256], tr[8], joined[9000];
			struct roce_pkt r;
			size_t ho;

			memset(hdr, 0x5a, sizeof(hdr));
			memset(tr, 0x5a, sizeof(tr));
			if (tm) {
				memset(&r, 0xa5, sizeof(r));
				r.opcode = in->opcode;
				r.se = in->se;
				r.ackreq = in->ackreq;
				r.psn = in->psn;
				r.payload_len = in->payload_len;
				memcpy((uint8_t *)&r + ext_off, (const uint8_t *)in + ext_off,
				       ext_len);
				ho = roce_tmpl_write_headers(&t, hdr, n, &r);
				assert_int_equal(ho, in->payload_off);
				roce_tmpl_finish_split(&t, hdr, payload, tr, &r, port);
			} else {
				r = *in;
				ho = roce_build_headers(hdr, n, &r);
				assert_int_equal(ho, in->payload_off);
				roce_build_finish_split(hdr, payload, tr, &r, port);
			}
			assert_int_equal(r.icrc, in->icrc);
			assert_true(ho + in->payload_len + in->padcnt + ROCE_ICRC_LEN == n);
			memcpy(joined, hdr, ho);
			memcpy(joined + ho, payload, in->payload_len);
			memcpy(joined + ho + in->payload_len, tr, in->padcnt + ROCE_ICRC_LEN);
			memcpy(frame, want, n);
			if (port && ipv == 4)
				frame[in->l3_off + 10] = frame[in->l3_off + 11] = 0;
			assert_memory_equal(joined, frame, n);
		}
	}
}

static void
roundtrip_one(uint8_t opcode, unsigned int ipv, uint32_t len, bool vlan)
{
	uint8_t frame[9000], payload[4200];
	struct roce_pkt in, out;
	size_t n;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i ^ opcode);
	fill_template(&in, opcode, ipv, len);
	in.has_vlan = vlan;
	in.vlan_tci = 0x2005;
	memset(frame, 0x5a, sizeof(frame));	/* every byte written */
	n = roce_build(frame, sizeof(frame), &in, payload);
	assert_int_not_equal(n, 0);
	assert_int_equal(n, roce_frame_len(&in));
	assert_int_equal((in.payload_len + in.padcnt) % 4, 0);
	assert_int_equal(roce_parse_eth(frame, n, &out), ROCE_PARSE_OK);
	assert_int_equal(out.has_vlan, vlan);
	if (vlan)
		assert_int_equal(out.vlan_tci, 0x2005);
	assert_same_fields(&in, &out);
	assert_true(roce_icrc_verify(frame, &out));
	assert_memory_equal(frame + out.payload_off, payload, len);
	/* pad bytes are zero */
	for (unsigned int i = 0; i < out.padcnt; i++)
		assert_int_equal(frame[out.payload_off + len + i], 0);
	/* also parseable from L3 */
	assert_int_equal(roce_parse_ip(frame + out.l3_off, n - out.l3_off, &out),
			 ROCE_PARSE_OK);
	assert_int_equal(out.psn, in.psn);
	template_same_frame(&in, ipv, vlan, frame, n, payload);
}

static void
test_build_parse_roundtrip_every_opcode(void **state)
{
	static const uint32_t lens[] = { 0, 1, 2, 3, 4, 5, 63, 1023, 1024, 4096 };

	(void)state;
	for (unsigned int o = 0; o < 256; o++) {
		const struct roce_opcode_info *op = roce_opcode_get((uint8_t)o);

		if (op->name == NULL)
			continue;
		for (unsigned int ipv = 4; ipv <= 6; ipv += 2) {
			if (op->mask & ROCE_OPM_FIXED8) {
				roundtrip_one((uint8_t)o, ipv, 8, false);
				continue;
			}
			if (!(op->mask & ROCE_OPM_PAYLOAD)) {
				roundtrip_one((uint8_t)o, ipv, 0, ipv == 6);
				continue;
			}
			for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
				roundtrip_one((uint8_t)o, ipv, lens[i], i & 1);
		}
	}
}

static void
test_build_rejects_bad_requests(void **state)
{
	uint8_t frame[256];
	struct roce_pkt p;

	(void)state;
	fill_template(&p, 0x15, 4, 0);		/* reserved opcode */
	assert_int_equal(roce_build(frame, sizeof(frame), &p, NULL), 0);
	fill_template(&p, ROCE_OP_ACKNOWLEDGE, 4, 4);	/* ACK has no payload */
	assert_int_equal(roce_build(frame, sizeof(frame), &p, "abcd"), 0);
	fill_template(&p, ROCE_OP_ATOMIC_WRITE, 4, 4);	/* must be 8 bytes */
	assert_int_equal(roce_build(frame, sizeof(frame), &p, "abcd"), 0);
	fill_template(&p, ROCE_OP_SEND_ONLY, 5, 0);	/* IP version */
	assert_int_equal(roce_build(frame, sizeof(frame), &p, NULL), 0);
	fill_template(&p, ROCE_OP_SEND_ONLY, 4, 200);	/* does not fit */
	assert_int_equal(roce_build(frame, sizeof(frame), &p, frame), 0);
}

static void
test_udp_sport_matches_linux(void **state)
{
	(void)state;
	/* from rc_send_ipv4.pcap: QPs 0x11/0x21 -> 49713, 0x12/0x22 -> 49764 */
	assert_int_equal(roce_udp_sport(0x11, 0x21), 49713);
	assert_int_equal(roce_udp_sport(0x21, 0x11), 49713);
	assert_int_equal(roce_udp_sport(0x12, 0x22), 49764);
	for (uint32_t q = 1; q < 5000; q += 7) {
		uint16_t s = roce_udp_sport(q, 0xffffff - q);

		assert_true(s >= 0xc000);
	}
}

/* ---- congestion notification (annex A17.9.3) and ECN ------------------- */

static void
test_cnp_bytes(void **state)
{
	static const uint8_t bth[ROCE_BTH_LEN] = {
		0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x00, 0xd2,
		0x00, 0x00, 0x00, 0x00,
	};
	static const uint8_t zero[ROCE_CNP_RSVD_LEN];
	uint8_t frame[128];
	struct roce_pkt p, q;
	size_t len;

	(void)state;
	/* start from a packet whose every BTH field is set (se, migreq,
	 * ackreq, psn ...): the CNP must clear what it does not use */
	fill_template(&p, ROCE_OP_RDMA_WRITE_ONLY, 4, 0);
	p.fecn = 1;
	roce_cnp_fill(&p, 0xd2, 0xffff, 48);
	len = roce_build(frame, sizeof(frame), &p, NULL);
	/* 14 Ethernet + 20 IPv4 + 8 UDP + 12 BTH + 16 reserved + 4 ICRC */
	assert_int_equal(len, 74);
	assert_int_equal(frame[14 + 1], 48 << 2);	/* DSCP 48, Not-ECT */
	assert_int_equal(wire_be16(frame + 34 + 2), ROCE_UDP_PORT);
	assert_int_equal(wire_be16(frame + 34 + 4), 8 + 12 + 16 + 4);
	assert_memory_equal(frame + 42, bth, sizeof(bth));
	assert_memory_equal(frame + 54, zero, sizeof(zero));

	assert_int_equal(roce_parse_eth(frame, len, &q), ROCE_PARSE_OK);
	assert_true(roce_pkt_is_cnp(&q));
	assert_true(roce_icrc_verify(frame, &q));
	assert_int_equal(q.dest_qpn, 0xd2);
	assert_int_equal(q.becn, 1);
	assert_int_equal(q.fecn, 0);
	assert_int_equal(q.psn, 0);
	assert_int_equal(q.payload_len, 0);
	assert_int_equal(roce_pkt_ecn(&q), ROCE_ECN_NOT_ECT);

	/* IPv6: traffic class 0xc0, same BTH */
	fill_template(&p, ROCE_OP_SEND_ONLY, 6, 0);
	roce_cnp_fill(&p, 0xd2, 0xffff, 48);
	len = roce_build(frame, sizeof(frame), &p, NULL);
	assert_int_equal(len, 94);
	assert_int_equal(wire_be32(frame + 14) >> 20 & 0xff, 0xc0);
	assert_memory_equal(frame + 62, bth, sizeof(bth));
	assert_int_equal(roce_parse_eth(frame, len, &q), ROCE_PARSE_OK);
	assert_true(roce_pkt_is_cnp(&q));
	assert_true(roce_icrc_verify(frame, &q));

	/* not a CNP: any other opcode */
	fill_template(&p, ROCE_OP_ACKNOWLEDGE, 4, 0);
	len = roce_build(frame, sizeof(frame), &p, NULL);
	assert_int_equal(roce_parse_eth(frame, len, &q), ROCE_PARSE_OK);
	assert_false(roce_pkt_is_cnp(&q));
}

static void
test_mark_ce(void **state)
{
	static const uint8_t payload[64];

	(void)state;
	for (unsigned int ipv = 4; ipv <= 6; ipv += 2) {
		for (uint8_t ecn = 0; ecn < 4; ecn++) {
			uint8_t frame[256];
			struct roce_pkt p, q;
			size_t len;

			fill_template(&p, ROCE_OP_RDMA_WRITE_ONLY, ipv, 64);
			p.ip_dscp_ecn = (uint8_t)(26 << 2 | ecn);
			len = roce_build(frame, sizeof(frame), &p, payload);
			/* only ECT(0)/ECT(1) are marked (RFC 3168 5) */
			assert_int_equal(roce_ip_mark_ce(frame + 14),
					 ecn == ROCE_ECN_ECT0 || ecn == ROCE_ECN_ECT1);
			/* the IPv4 checksum still verifies, the ICRC too */
			assert_int_equal(roce_parse_eth(frame, len, &q), ROCE_PARSE_OK);
			assert_true(roce_icrc_verify(frame, &q));
			assert_int_equal(q.ip_dscp_ecn >> 2, 26);
			assert_int_equal(roce_pkt_ecn(&q), ecn == 0 ? 0 : ROCE_ECN_CE);
		}
	}
}

static void
test_udp_sport_flow_label(void **state)
{
	(void)state;
	/* 0: the QPN pair's label, as rdma_get_udp_sport */
	assert_int_equal(roce_udp_sport_fl(0, 0x11, 0x21), 49713);
	/* a label: its low 14 bits xor its high 6, over 0xc000 */
	assert_int_equal(roce_udp_sport_fl(0xabcde, 1, 2),
			 0xc000 | ((0xabcde & 0x3fff) ^ (0xabcde >> 14)));
	assert_int_equal(roce_udp_sport_fl(0x4001, 1, 2), 0xc000 | (0x0001 ^ 0x1));
}

/* ---- parse errors -------------------------------------------------------- */

static size_t
build_sample(uint8_t *frame, size_t cap, uint8_t opcode, unsigned int ipv,
	     uint32_t len, struct roce_pkt *p)
{
	uint8_t payload[64] = { 1, 2, 3 };

	fill_template(p, opcode, ipv, len);
	return roce_build(frame, cap, p, payload);
}

static void
refresh_ipv4_cksum(uint8_t *frame)
{
	uint32_t sum = 0;

	frame[24] = frame[25] = 0;
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(frame[14 + i] << 8 | frame[15 + i]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	frame[24] = (uint8_t)(~sum >> 8);
	frame[25] = (uint8_t)~sum;
}

static void
test_parse_every_truncation_is_rejected_bad_flow(void **state)
{
	uint8_t frame[512];
	struct roce_pkt p, q;
	size_t n;

	(void)state;
	for (unsigned int ipv = 4; ipv <= 6; ipv += 2) {
		n = build_sample(frame, sizeof(frame), ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
				 ipv, 37, &p);
		assert_int_not_equal(n, 0);
		for (size_t len = 0; len < n; len++)
			assert_int_not_equal(roce_parse_eth(frame, len, &q), ROCE_PARSE_OK);
		/* Ethernet padding after the datagram is ignored */
		assert_int_equal(roce_parse_eth(frame, n + 10, &q), ROCE_PARSE_OK);
		assert_int_equal(q.pkt_len, n);
	}
}

static void
test_parse_specific_errors_bad_flow(void **state)
{
	uint8_t f[512];
	struct roce_pkt p, q;
	size_t n;

	(void)state;
	n = build_sample(f, sizeof(f), ROCE_OP_SEND_ONLY, 4, 5, &p);

	f[12] = 0x08; f[13] = 0x06;	/* ARP */
	assert_int_equal(roce_parse_eth(f, n, &q), ROCE_PARSE_NOT_IP);

	n = build_sample(f, sizeof(f), ROCE_OP_SEND_ONLY, 4, 5, &p);
	f[14] = 0x65;			/* version 6 under ethertype IPv4 */
	assert_int_equal(roce_parse_eth(f, n, &q), ROCE_PARSE_BAD_IP_HDR);

	n = build_sample(f, sizeof(f), ROCE_OP_SEND_ONLY, 4, 5, &p);
	f[24] ^= 1;			/* IP checksum */
	assert_int_equal(roce_parse_eth(f, n, &q), ROCE_PARSE_BAD_IP_CSUM);

	n = build_sample(f, sizeof(f), ROCE_OP_SEND_ONLY, 4, 5, &p);
	f[20] |= 0x20;			/* more fragments */
	refresh_ipv4_cksum(f);
	assert_int_equal(roce_parse_eth(f, n, &q), ROCE_PARSE_IP_FRAGMENT);

	n = build_sample(f, sizeof(f), ROCE_OP_SEND_ONLY, 4, 5, &p);
	f[23] = 6;			/* TCP */
	refresh_ipv4_cksum(f);
	assert_int_equal(roce_parse_eth(f, n, &q), ROCE_PARSE_NOT_UDP);

	n = build_sample(f, sizeof(f), ROCE_OP_SEND_ONLY, 4, 5, &p);
	f[36] = 0x13;			/* dport 4791 (0x12b7) -> 0x13b7 */
	assert_int_equal(roce_parse_eth(f, n, &q), ROCE_PARSE_NOT_ROCE_PORT);

	n = build_sample(f, sizeof(f), ROCE_OP_SEND_ONLY, 4, 5, &p);
	f[39] += 4;			/* UDP length low byte */
	assert_int_equal(roce_parse_eth(f, n, &q), ROCE_PARSE_BAD_UDP_LEN);

	n = build_sample(f, sizeof(f), ROCE_OP_SEND_ONLY, 4, 5, &p);
	f[p.bth_off + 1] |= 1;		/* TVer 1 */
	assert_int_equal(roce_parse_eth(f, n, &q), ROCE_PARSE_BAD_VERSION);

	n = build_sample(f, sizeof(f), ROCE_OP_SEND_ONLY, 4, 5, &p);
	f[p.bth_off] = 0x15;		/* reserved opcode */
	assert_int_equal(roce_parse_eth(f, n, &q), ROCE_PARSE_UNKNOWN_OPCODE);
	/* the BTH and ICRC are still read: the receiver checks the ICRC */
	assert_int_equal(q.opcode, 0x15);
	assert_int_equal(q.dest_qpn, p.dest_qpn);
	assert_int_equal(q.psn, p.psn);
	assert_int_equal(q.icrc, roce_icrc_load(f + n - ROCE_ICRC_LEN));
	assert_null(q.op);

	n = build_sample(f, sizeof(f), ROCE_OP_SEND_ONLY, 4, 5, &p);
	f[p.bth_off] = ROCE_OP_ACKNOWLEDGE;	/* ACK carrying 8 bytes */
	assert_int_equal(roce_parse_eth(f, n, &q), ROCE_PARSE_LEN_MISMATCH);

	n = build_sample(f, sizeof(f), ROCE_OP_SEND_ONLY, 4, 0, &p);
	f[p.bth_off + 1] |= 0x30;	/* PadCnt 3 with no payload */
	assert_int_equal(roce_parse_eth(f, n, &q), ROCE_PARSE_BAD_PADCNT);

	n = build_sample(f, sizeof(f), ROCE_OP_ACKNOWLEDGE, 4, 0, &p);
	f[p.bth_off + 1] |= 0x10;	/* PadCnt on a packet without payload */
	assert_int_equal(roce_parse_eth(f, n, &q), ROCE_PARSE_BAD_PADCNT);

	n = build_sample(f, sizeof(f), ROCE_OP_SEND_ONLY, 6, 5, &p);
	f[14 + 6] = 0;			/* IPv6 hop-by-hop extension header */
	assert_int_equal(roce_parse_eth(f, n, &q), ROCE_PARSE_NOT_UDP);

	for (int e = 0; e <= ROCE_PARSE_ERR_MAX; e++)
		assert_non_null(roce_parse_strerror((enum roce_parse_err)e));
}

/* ---- in-place ICRC against the reference --------------------------------- */

/*
 * roce_icrc_verify_writable on frame f (exactly n bytes, so ASan sees any
 * access past the end) gives `want` and leaves the frame as it was.
 */
static void
assert_writable_verdict(const uint8_t *f, size_t n, const struct roce_pkt *p,
			bool want)
{
	uint8_t *copy = malloc(n);

	assert_non_null(copy);
	memcpy(copy, f, n);
	assert_int_equal(roce_icrc_verify_writable(copy, p), want);
	assert_memory_equal(copy, f, n);
	free(copy);
}

/*
 * Frame f parses to p and its ICRC is the reference one; then every bit of
 * the first 80 covered bytes (all the masked ones: headers without options
 * end at 60) is flipped in turn: verify_writable accepts the flip exactly
 * when the ICRC masks that bit.
 */
static void
check_writable_icrc(uint8_t *f, size_t n, const struct roce_pkt *p)
{
	size_t end = p->pkt_len - ROCE_ICRC_LEN;

	if (end > p->l3_off + 80u)
		end = p->l3_off + 80u;
	assert_int_equal(p->icrc, icrc_reference(f, p));
	assert_writable_verdict(f, n, p, true);
	for (size_t off = p->l3_off; off < end; off++) {
		for (unsigned int bit = 0; bit < 8; bit++) {
			f[off] ^= (uint8_t)(1u << bit);
			assert_writable_verdict(f, n, p, icrc_masked(p, off, bit));
			f[off] ^= (uint8_t)(1u << bit);
		}
	}
}

/*
 * Every payload length across the point where the masked block (the
 * datagram's first 48 bytes, IPv4) fits, odd lengths included, and the MTU
 * sizes, IPv4 and IPv6, with and without an extended header, with the
 * masked fields holding values other than ones and zeros.
 */
static void
test_icrc_writable_every_length(void **state)
{
	static const uint8_t ops[] = { ROCE_OP_SEND_ONLY, ROCE_OP_RDMA_WRITE_ONLY };
	uint8_t frame[4200], payload[4100];
	struct roce_pkt p, q;

	(void)state;
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13 + 5);
	for (unsigned int ipv = 4; ipv <= 6; ipv += 2) {
		for (size_t o = 0; o < sizeof(ops); o++) {
			for (uint32_t len = 0; len <= 4096; len++) {
				size_t n;

				if (len == 70)
					len = 1019;
				else if (len == 1030)
					len = 4090;
				fill_template(&p, ops[o], ipv, len);
				p.fecn = (uint8_t)(len & 1);
				p.ip_ttl = (uint8_t)(len * 7 + 1);
				n = roce_build(frame, sizeof(frame), &p, payload);
				assert_int_not_equal(n, 0);
				assert_int_equal(roce_parse_eth(frame, n, &q), ROCE_PARSE_OK);
				check_writable_icrc(frame, n, &q);
			}
		}
	}
}

/* Rewrite an IPv4 frame (no options, ICRC left stale) with opt_len bytes
 * of IP options (NOPs), then give it the reference ICRC.  Returns the new
 * frame length. */
static size_t
add_ipv4_options(uint8_t *f, size_t n, size_t opt_len)
{
	uint8_t *ip = f + ROCE_ETH_HDR_LEN;
	uint16_t tot = (uint16_t)(wire_be16(ip + 2) + opt_len);
	struct roce_pkt q;

	memmove(ip + ROCE_IPV4_HDR_LEN + opt_len, ip + ROCE_IPV4_HDR_LEN,
		n - ROCE_ETH_HDR_LEN - ROCE_IPV4_HDR_LEN);
	memset(ip + ROCE_IPV4_HDR_LEN, 1, opt_len);
	ip[0] = (uint8_t)(0x40 | (ROCE_IPV4_HDR_LEN + opt_len) / 4);
	wire_put_be16(ip + 2, tot);
	ip[10] = ip[11] = 0;
	wire_put_be16(ip + 10, wire_ipv4_cksum_loop(ip, ROCE_IPV4_HDR_LEN + opt_len));
	n += opt_len;
	assert_int_equal(roce_parse_eth(f, n, &q), ROCE_PARSE_OK);
	roce_icrc_store(f + n - ROCE_ICRC_LEN, icrc_reference(f, &q));
	return n;
}

/* IPv4 headers with options move the UDP and BTH bytes the ICRC masks. */
static void
test_icrc_writable_ipv4_options(void **state)
{
	static const uint32_t lens[] = { 0, 3, 61, 1024 };
	uint8_t frame[1200];
	struct roce_pkt p, q;

	(void)state;
	for (size_t opt = 4; opt <= 40; opt += 36) {
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			size_t n = build_sample(frame, sizeof(frame) - opt,
						ROCE_OP_SEND_ONLY, 4, 0, &p);

			if (lens[i] != 0) {
				uint8_t payload[1024] = { 9, 8, 7 };

				fill_template(&p, ROCE_OP_RDMA_WRITE_ONLY, 4, lens[i]);
				n = roce_build(frame, sizeof(frame) - opt, &p, payload);
			}
			n = add_ipv4_options(frame, n, opt);
			assert_int_equal(roce_parse_eth(frame, n, &q), ROCE_PARSE_OK);
			assert_int_equal(q.l4_off, ROCE_ETH_HDR_LEN + ROCE_IPV4_HDR_LEN + opt);
			assert_true(roce_icrc_verify(frame, &q));
			check_writable_icrc(frame, n, &q);
		}
	}
}

/* ---- fast paths against their definitions -------------------------------- */

/* xorshift: reproducible bytes for the cross-checks below */
static uint64_t
next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * roce_be_load/_store (memcpy + byte swap for 1/2/3/4/8 bytes) give what
 * the byte loops give, for every width and alignment, and a store writes
 * exactly its n bytes.
 */
static void
test_be_load_store_match_byte_loops(void **state)
{
	uint64_t seed = 0x9e3779b97f4a7c15u;
	uint8_t buf[32], ref[32];

	(void)state;
	for (int round = 0; round < 2000; round++) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)next_rand(&seed);
		for (unsigned int n = 1; n <= 8; n++) {
			for (unsigned int off = 0; off < 8; off++) {
				uint64_t v = next_rand(&seed);

				assert_int_equal(roce_be_load(buf + off, n),
						 roce_be_load_loop(buf + off, n));
				memcpy(ref, buf, sizeof(buf));
				roce_be_store(buf + off, n, v);
				roce_be_store_loop(ref + off, n, v);
				assert_memory_equal(buf, ref, sizeof(buf));
			}
		}
	}
}

/* The 20-byte IPv4 checksum fast path equals the RFC 1071 16-bit loop,
 * including the sums that fold to 0 and to 0xffff. */
static void
test_ipv4_cksum_fast_path_matches_loop(void **state)
{
	uint64_t seed = 0x0123456789abcdefu;
	uint8_t h[20];

	(void)state;
	memset(h, 0, sizeof(h));
	assert_int_equal(wire_ipv4_cksum(h, 20), wire_ipv4_cksum_loop(h, 20));
	memset(h, 0xff, sizeof(h));
	assert_int_equal(wire_ipv4_cksum(h, 20), wire_ipv4_cksum_loop(h, 20));
	for (int round = 0; round < 100000; round++) {
		for (size_t i = 0; i < sizeof(h); i++)
			h[i] = (uint8_t)next_rand(&seed);
		if (round % 4 == 1)
			memset(h + 4, 0xff, 12);	/* near-overflow sums */
		assert_int_equal(wire_ipv4_cksum(h, 20), wire_ipv4_cksum_loop(h, 20));
		/* stored, the header sums to zero */
		h[10] = h[11] = 0;
		wire_put_be16(h + 10, wire_ipv4_cksum(h, 20));
		assert_int_equal(wire_ipv4_cksum_loop(h, 20), 0);
	}
}

/*
 * roce_build_finish's IPv4 checksum (summed from the packet's TOS and TTL
 * and the frame's other words) is right for a header whose sum carries
 * twice when folded, and for random headers.
 */
static void
test_build_ipv4_cksum_random_headers(void **state)
{
	uint64_t seed = 0xfeedfacecafebeefu;
	uint8_t frame[128], addr[4];
	struct roce_pkt p;

	(void)state;
	for (int round = 0; round < 100000; round++) {
		uint64_t r = next_rand(&seed);
		size_t n;

		fill_template(&p, ROCE_OP_SEND_ONLY, 4, (uint32_t)(r & 7));
		memcpy(addr, &r, 4);
		roce_gid_from_ipv4(p.src_gid, addr);
		r = next_rand(&seed);
		memcpy(addr, &r, 4);
		roce_gid_from_ipv4(p.dst_gid, addr);
		r = next_rand(&seed);
		p.ip_id = (uint16_t)r;
		p.ip_ttl = (uint8_t)(r >> 16);
		p.ip_dscp_ecn = (uint8_t)(r >> 24);
		p.ip_df = (uint8_t)(r >> 32 & 1);
		if (round == 0) {
			/* words sum to 0x4ffff: the first fold carries again */
			static const uint8_t src[4] = { 255, 255, 255, 255 };
			static const uint8_t dst[4] = { 255, 255, 0xba, 0xc6 };

			fill_template(&p, ROCE_OP_SEND_ONLY, 4, 0);
			roce_gid_from_ipv4(p.src_gid, src);
			roce_gid_from_ipv4(p.dst_gid, dst);
			p.ip_id = 0xffff;
			p.ip_ttl = p.ip_dscp_ecn = 0;
			p.ip_df = 0;
		}
		n = roce_build(frame, sizeof(frame), &p, "abcdefg");
		assert_int_not_equal(n, 0);
		assert_int_equal(wire_ipv4_cksum_loop(frame + p.l3_off,
						      ROCE_IPV4_HDR_LEN), 0);
	}
}

/*
 * The port computes the IPv4 checksum: the frame is roce_build_finish's
 * byte for byte but for a checksum field of 0, its ICRC is valid (it masks
 * the checksum), and it parses only when the port vouched for the sum.
 */
static void
test_build_ip_cksum_offload(void **state)
{
	uint8_t sw[128], hw[128];
	struct roce_pkt p, q, parsed;
	size_t n;

	(void)state;
	fill_template(&p, ROCE_OP_SEND_ONLY, 4, 3);
	q = p;
	n = roce_build(sw, sizeof(sw), &p, "abcdefg");
	assert_int_not_equal(n, 0);
	assert_int_equal(roce_build_headers(hw, sizeof(hw), &q), p.payload_off);
	memcpy(hw + q.payload_off, "abcdefg", q.payload_len);
	roce_build_finish_ip_cksum_offload(hw, &q);
	assert_int_equal(hw[q.l3_off + 10], 0);
	assert_int_equal(hw[q.l3_off + 11], 0);
	assert_memory_equal(hw, sw, (size_t)p.l3_off + 10);
	assert_memory_equal(hw + q.l3_off + 12, sw + p.l3_off + 12,
			    n - (size_t)p.l3_off - 12);
	assert_int_equal(roce_parse_eth(hw, n, &parsed), ROCE_PARSE_BAD_IP_CSUM);
	assert_int_equal(roce_parse_eth_cksum_ok(hw, n, &parsed), ROCE_PARSE_OK);
	assert_true(roce_icrc_verify(hw, &parsed));
	assert_int_equal(parsed.psn, p.psn);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opcode_table_matches_spec),
		cmocka_unit_test(test_opcode_message_position),
		cmocka_unit_test(test_accessors_touch_only_their_bits),
		cmocka_unit_test(test_bth_field_values),
		cmocka_unit_test(test_psn_wraps_at_2_24),
		cmocka_unit_test(test_crc32_known_answer_and_chaining),
		cmocka_unit_test(test_crc32_table_is_generated_correctly),
		cmocka_unit_test(test_build_parse_roundtrip_every_opcode),
		cmocka_unit_test(test_build_rejects_bad_requests),
		cmocka_unit_test(test_udp_sport_matches_linux),
		cmocka_unit_test(test_cnp_bytes),
		cmocka_unit_test(test_mark_ce),
		cmocka_unit_test(test_udp_sport_flow_label),
		cmocka_unit_test(test_parse_every_truncation_is_rejected_bad_flow),
		cmocka_unit_test(test_parse_specific_errors_bad_flow),
		cmocka_unit_test(test_be_load_store_match_byte_loops),
		cmocka_unit_test(test_ipv4_cksum_fast_path_matches_loop),
		cmocka_unit_test(test_icrc_writable_every_length),
		cmocka_unit_test(test_icrc_writable_ipv4_options),
		cmocka_unit_test(test_build_ipv4_cksum_random_headers),
		cmocka_unit_test(test_build_ip_cksum_offload),
	};

	return cmocka_run_group_tests_name("wire_format", tests, NULL, NULL);
}
