/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/wire receive templates (roce_rx_tmpl_parse) against the full parse
 * (roce_parse_eth): the same frames through both, valid ones of every
 * opcode and length, then every bit of every header byte flipped, every
 * truncation, Ethernet padding, random multi-byte corruption.  The
 * template path either declines (the packet untouched: the full parse
 * decides) or yields ROCE_PARSE_OK with exactly the fields the full parse
 * yields; valid frames of the flow must take it.  The same for
 * roce_rx_tmpl_reparse, frame after frame into one packet.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "roce_wire.h"

#define FRAME_MAX 1200

static const uint8_t our_mac[6] = { 0x02, 0, 0, 0, 0, 0x0a };
static const uint8_t peer_mac[6] = { 0x02, 0, 0, 0, 0, 0x0b };
static const uint8_t our_v4[4] = { 198, 18, 0, 1 };
static const uint8_t peer_v4[4] = { 198, 18, 0, 2 };
static const uint8_t our_v6[16] = { 0x20, 0x01, 0x00, 0x02, [15] = 1 };
static const uint8_t peer_v6[16] = { 0x20, 0x01, 0x00, 0x02, [15] = 2 };
#define OUR_QPN 0x000123u
#define PKEY 0xffffu

static uint64_t rng;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* The frame the peer sends us: as droce's transmit side describes it. */
static void
peer_pkt(struct roce_pkt *p, int ipv)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->dst_mac, our_mac, 6);
	memcpy(p->src_mac, peer_mac, 6);
	p->ip_version = (uint8_t)ipv;
	if (ipv == 4) {
		roce_gid_from_ipv4(p->src_gid, peer_v4);
		roce_gid_from_ipv4(p->dst_gid, our_v4);
	} else {
		memcpy(p->src_gid, peer_v6, 16);
		memcpy(p->dst_gid, our_v6, 16);
	}
	p->ip_df = 1;
	p->ip_ttl = 64;
	p->ip_dscp_ecn = 0x1a << 2 | ROCE_ECN_ECT0;
	p->ip_flow_label = 0x12345;
	p->ip_id = 0x4242;
	p->udp_sport = 0xc123;
	p->udp_dport = ROCE_UDP_PORT;
	p->migreq = 1;
	p->pkey = PKEY;
	p->dest_qpn = OUR_QPN;
	/* (what a description may carry besides: never in a parsed packet) */
	p->aeth.syndrome = 0x1f;
	p->aeth.msn = 77;
	p->reth.va = 0x1234;
	p->imm = 5;
}

static void
tmpl_for(struct roce_rx_tmpl *t, int ipv)
{
	struct roce_pkt p;

	peer_pkt(&p, ipv);
	assert_true(roce_rx_tmpl_init(t, &p));
}

/* Every field of struct roce_pkt (not its padding). */
static void
assert_pkt_equal(const struct roce_pkt *a, const struct roce_pkt *b)
{
#define EQ(f) assert_int_equal(a->f, b->f)
#define EQM(f) assert_memory_equal(&a->f, &b->f, sizeof(a->f))
	EQ(l3_off); EQ(l4_off); EQ(bth_off); EQ(payload_off); EQ(payload_len);
	EQ(pkt_len); EQM(dst_mac); EQM(src_mac); EQ(vlan_tci); EQ(has_vlan);
	EQ(ip_version); EQ(ip_dscp_ecn); EQ(ip_ttl); EQ(ip_df); EQ(ip_id);
	EQ(ip_cksum); EQ(ip_flow_label); EQM(src_gid); EQM(dst_gid);
	EQ(udp_sport); EQ(udp_dport); assert_ptr_equal(a->op, b->op);
	EQ(opcode); EQ(se); EQ(migreq); EQ(padcnt); EQ(tver); EQ(fecn); EQ(becn);
	EQ(ackreq); EQ(pkey); EQ(dest_qpn); EQ(psn);
	EQ(reth.va); EQ(reth.rkey); EQ(reth.len); EQ(aeth.syndrome); EQ(aeth.msn);
	EQ(atmeth.va); EQ(atmeth.rkey); EQ(atmeth.swap); EQ(atmeth.comp);
	EQ(atmack_orig); EQ(imm); EQ(ieth_rkey); EQ(deth.qkey); EQ(deth.src_qpn);
	EQ(feth.sel); EQ(feth.plt); EQ(icrc);
#undef EQ
#undef EQM
}

/*
 * One frame through both paths.  Returns true when the template path took
 * it.  Both packets start from the same garbage: a declining template path
 * must leave it as it was.
 */
static bool
both_paths(const struct roce_rx_tmpl *t, const uint8_t *f, size_t len, bool cksum_ok)
{
	struct roce_pkt full, tmpl, before;
	enum roce_parse_err err;
	bool took;

	memset(&before, 0xa5, sizeof(before));
	full = before;
	tmpl = before;
	err = cksum_ok ? roce_parse_eth_cksum_ok(f, len, &full) : roce_parse_eth(f, len, &full);
	took = roce_rx_tmpl_parse(t, f, len, cksum_ok, &tmpl);
	if (took) {
		if (err != ROCE_PARSE_OK)
			fail_msg("template took a frame the full parse calls '%s'",
				 roce_parse_strerror(err));
		assert_pkt_equal(&tmpl, &full);
	} else {
		assert_memory_equal(&tmpl, &before, sizeof(before));
	}
	return took;
}

/* A valid frame of the flow: opcode, payload length, random header fields. */
static size_t
build_frame(uint8_t *f, int ipv, uint8_t opcode, uint32_t len)
{
	struct roce_pkt p;
	uint8_t payload[FRAME_MAX];
	size_t n;

	peer_pkt(&p, ipv);
	p.opcode = opcode;
	p.payload_len = len;
	p.se = rnd() & 1;
	p.ackreq = rnd() & 1;
	p.psn = rnd() & ROCE_PSN_MASK;
	p.fecn = rnd() & 1;
	p.becn = rnd() & 1;
	p.ip_ttl = (uint8_t)rnd();
	p.ip_id = (uint16_t)rnd();
	p.udp_sport = (uint16_t)rnd();
	p.reth.va = (uint64_t)rnd() << 32 | rnd();
	p.reth.rkey = rnd();
	p.reth.len = rnd();
	p.aeth.syndrome = (uint8_t)rnd();
	p.aeth.msn = rnd() & 0xffffff;
	p.atmeth.va = (uint64_t)rnd() << 32 | rnd();
	p.atmeth.rkey = rnd();
	p.atmeth.swap = (uint64_t)rnd() << 32 | rnd();
	p.atmeth.comp = (uint64_t)rnd() << 32 | rnd();
	p.atmack_orig = (uint64_t)rnd() << 32 | rnd();
	p.imm = rnd();
	p.ieth_rkey = rnd();
	p.deth.qkey = rnd();
	p.deth.src_qpn = rnd() & 0xffffff;
	p.feth.sel = rnd() & 3;
	p.feth.plt = rnd() & 15;
	for (uint32_t i = 0; i < len; i++)
		payload[i] = (uint8_t)rnd();
	n = roce_build(f, FRAME_MAX, &p, payload);
	assert_true(n != 0);
	return n;
}

static uint32_t
legal_len(const struct roce_opcode_info *op, uint32_t want)
{
	if (!(op->mask & ROCE_OPM_PAYLOAD))
		return 0;
	if (op->mask & ROCE_OPM_FIXED8)
		return 8;
	return want;
}

/* Every opcode lib/wire defines, IPv4 and IPv6, lengths 0 .. 64 and 1 KiB:
 * the template path takes each one, with the full parse's fields. */
static void
test_valid_frames_take_the_template(void **state)
{
	static const uint32_t lens[] = { 0, 1, 2, 3, 4, 5, 7, 8, 64, 1024 };
	uint8_t f[FRAME_MAX];
	unsigned int frames = 0;

	(void)state;
	for (int ipv = 4; ipv <= 6; ipv += 2) {
		struct roce_rx_tmpl t;

		tmpl_for(&t, ipv);
		for (unsigned int op = 0; op < 256; op++) {
			const struct roce_opcode_info *info = roce_opcode_get((uint8_t)op);

			if (info->name == NULL)
				continue;
			for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
				size_t n = build_frame(f, ipv, (uint8_t)op,
						       legal_len(info, lens[i]));

				/* (a frame shorter than the compared words,
				 * 56 / 80 bytes: full parse) */
				if (n < (ipv == 4 ? 56u : 80u)) {
					assert_false(both_paths(&t, f, n, false));
					continue;
				}
				assert_true(both_paths(&t, f, n, false));
				assert_true(both_paths(&t, f, n, true));
				frames++;
			}
		}
	}
	assert_true(frames > 400);
}

/*
 * The fixed fields, by byte offset (and bits): a frame that differs in
 * any of them must go to the full parse.
 */
struct fixed_field {
	const char *name;
	size_t off;		/* from the frame's start */
	uint8_t bits;
};

static const struct fixed_field v4_fixed[] = {
	{ "dst MAC", 0, 0xff }, { "dst MAC", 5, 0xff }, { "EtherType", 12, 0xff },
	{ "EtherType", 13, 0xff }, { "version/IHL", 14, 0xff },
	{ "flags/fragment", 20, 0xff }, { "fragment", 21, 0xff },
	{ "protocol", 23, 0xff }, { "src IP", 26, 0xff }, { "src IP", 29, 0xff },
	{ "dst IP", 30, 0xff }, { "dst IP", 33, 0xff }, { "UDP dport", 36, 0xff },
	{ "UDP dport", 37, 0xff }, { "TVer", 43, 0x0f }, { "P_Key", 44, 0xff },
	{ "P_Key", 45, 0xff }, { "dest QP", 47, 0xff }, { "dest QP", 49, 0xff },
};

static const struct fixed_field v6_fixed[] = {
	{ "dst MAC", 0, 0xff }, { "EtherType", 12, 0xff }, { "EtherType", 13, 0xff },
	{ "version", 14, 0xf0 }, { "next header", 20, 0xff },
	{ "src IP", 22, 0xff }, { "src IP", 37, 0xff }, { "dst IP", 38, 0xff },
	{ "dst IP", 53, 0xff }, { "UDP dport", 56, 0xff }, { "UDP dport", 57, 0xff },
	{ "TVer", 63, 0x0f }, { "P_Key", 64, 0xff }, { "P_Key", 65, 0xff },
	{ "dest QP", 67, 0xff }, { "dest QP", 69, 0xff },
};

static void
flip_every_bit(int ipv, uint8_t opcode, uint32_t len)
{
	const struct fixed_field *fx = ipv == 4 ? v4_fixed : v6_fixed;
	size_t nfx = ipv == 4 ? sizeof(v4_fixed) / sizeof(v4_fixed[0]) :
				sizeof(v6_fixed) / sizeof(v6_fixed[0]);
	struct roce_rx_tmpl t;
	uint8_t f[FRAME_MAX];
	size_t n;
	unsigned int taken = 0;

	tmpl_for(&t, ipv);
	n = build_frame(f, ipv, opcode, len);
	assert_true(both_paths(&t, f, n, false));
	for (size_t i = 0; i < n; i++) {
		for (unsigned int b = 0; b < 8; b++) {
			bool took;

			f[i] ^= (uint8_t)(1u << b);
			took = both_paths(&t, f, n, false);
			taken += took;
			/* the port's checksum verdict: only the checksum itself skipped */
			(void)both_paths(&t, f, n, true);
			for (size_t k = 0; k < nfx; k++) {
				if (fx[k].off == i && (fx[k].bits & (1u << b)))
					if (took)
						fail_msg("%s (byte %zu bit %u) changed, template took it",
							 fx[k].name, i, b);
			}
			f[i] ^= (uint8_t)(1u << b);
		}
	}
	/* flips the template takes: payload, ICRC, PSN, the variable fields */
	assert_true(taken > 0);
}

static void
test_every_bit_flipped(void **state)
{
	(void)state;
	flip_every_bit(4, ROCE_OP_RDMA_WRITE_ONLY, 64);
	flip_every_bit(6, ROCE_OP_RDMA_WRITE_ONLY, 64);
	flip_every_bit(4, ROCE_OP_ACKNOWLEDGE, 0);
	flip_every_bit(6, ROCE_OP_ACKNOWLEDGE, 0);
	flip_every_bit(4, ROCE_OP_SEND_ONLY, 3);
	flip_every_bit(4, ROCE_OP_ATOMIC_ACKNOWLEDGE, 0);
	flip_every_bit(6, ROCE_OP_FETCH_ADD, 0);
	flip_every_bit(4, ROCE_OP_UD_SEND_ONLY, 6);
}

/* Every truncation, and Ethernet padding after the datagram. */
static void
test_truncated_and_padded(void **state)
{
	uint8_t f[FRAME_MAX];

	(void)state;
	for (int ipv = 4; ipv <= 6; ipv += 2) {
		struct roce_rx_tmpl t;
		size_t n;

		tmpl_for(&t, ipv);
		n = build_frame(f, ipv, ROCE_OP_RDMA_WRITE_ONLY, 64);
		for (size_t len = 0; len < n; len++)
			assert_false(both_paths(&t, f, len, false));
		for (size_t pad = 1; pad < 64; pad++) {
			f[n + pad - 1] = (uint8_t)rnd();
			assert_true(both_paths(&t, f, n + pad, false));
		}
		/* a short ACK padded to Ethernet's 60 bytes */
		n = build_frame(f, ipv, ROCE_OP_ACKNOWLEDGE, 0);
		memset(f + n, 0, 64);
		assert_true(both_paths(&t, f, n < 60 ? 60 : n, false));
	}
}

/* Random corruption of 1..4 bytes anywhere in valid frames. */
static void
test_random_corruption(void **state)
{
	static const uint8_t ops[] = { ROCE_OP_RDMA_WRITE_ONLY, ROCE_OP_RDMA_WRITE_MIDDLE,
				       ROCE_OP_ACKNOWLEDGE, ROCE_OP_RDMA_READ_REQUEST,
				       ROCE_OP_RDMA_READ_RESPONSE_ONLY, ROCE_OP_COMPARE_SWAP,
				       ROCE_OP_SEND_ONLY_WITH_IMMEDIATE, ROCE_OP_CNP };
	uint8_t f[FRAME_MAX];

	(void)state;
	for (unsigned int iter = 0; iter < 40000; iter++) {
		int ipv = rnd() & 1 ? 4 : 6;
		uint8_t op = ops[rnd() % sizeof(ops)];
		struct roce_rx_tmpl t;
		size_t n;
		unsigned int k = 1 + rnd() % 4;

		tmpl_for(&t, ipv);
		n = build_frame(f, ipv, op, legal_len(roce_opcode_get(op), rnd() % 40));
		for (unsigned int j = 0; j < k; j++) {
			/* mostly in the headers, where the template looks */
			size_t at = rnd() % (rnd() & 1 ? 80 : n);

			if (at < n)
				f[at] ^= (uint8_t)(1 + rnd() % 255);
		}
		(void)both_paths(&t, f, n, rnd() & 1);
	}
}

/*
 * roce_rx_tmpl_reparse into one packet, frame after frame, as the receive
 * loop's slots are reused: opcodes with different extended headers in
 * random order (a WRITE's RETH after an ACK's AETH and back), one in four
 * with a corrupted header byte, either checksum verdict.  Each frame gets
 * roce_rx_tmpl_parse's verdict and, when taken, exactly the full parse's
 * fields; a declined one leaves the packet as the last taken frame left it.
 */
static void
reparse_in_place(int ipv)
{
	static const uint8_t ops[] = {
		ROCE_OP_RDMA_WRITE_ONLY, ROCE_OP_RDMA_WRITE_MIDDLE, ROCE_OP_ACKNOWLEDGE,
		ROCE_OP_RDMA_READ_REQUEST, ROCE_OP_RDMA_READ_RESPONSE_ONLY,
		ROCE_OP_RDMA_READ_RESPONSE_MIDDLE, ROCE_OP_COMPARE_SWAP,
		ROCE_OP_ATOMIC_ACKNOWLEDGE, ROCE_OP_SEND_ONLY_WITH_IMMEDIATE,
		ROCE_OP_SEND_ONLY_WITH_INVALIDATE, ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		ROCE_OP_FLUSH, ROCE_OP_ATOMIC_WRITE, ROCE_OP_CNP,
	};
	struct roce_rx_tmpl t;
	struct roce_pkt slot;
	uint8_t f[FRAME_MAX];
	unsigned int taken = 0, declined = 0;
	size_t n;

	tmpl_for(&t, ipv);
	n = build_frame(f, ipv, ROCE_OP_RDMA_WRITE_ONLY, 64);
	assert_true(roce_rx_tmpl_parse(&t, f, n, false, &slot));
	for (unsigned int iter = 0; iter < 20000; iter++) {
		uint8_t op = ops[rnd() % sizeof(ops)];
		bool cksum_ok = rnd() & 1;
		struct roce_pkt before = slot, fresh, full;
		enum roce_parse_err err;
		bool took, again;

		n = build_frame(f, ipv, op, legal_len(roce_opcode_get(op), rnd() % 80));
		if (rnd() % 4 == 0)
			f[rnd() % 80] ^= (uint8_t)(1 + rnd() % 255);
		memset(&fresh, 0x5a, sizeof(fresh));
		took = roce_rx_tmpl_parse(&t, f, n, cksum_ok, &fresh);
		again = roce_rx_tmpl_reparse(&t, f, n, cksum_ok, &slot);
		assert_int_equal(took, again);
		if (!again) {
			assert_memory_equal(&slot, &before, sizeof(slot));
			declined++;
			continue;
		}
		err = cksum_ok ? roce_parse_eth_cksum_ok(f, n, &full) : roce_parse_eth(f, n, &full);
		assert_int_equal(err, ROCE_PARSE_OK);
		assert_pkt_equal(&slot, &full);
		assert_pkt_equal(&fresh, &full);
		taken++;
	}
	assert_true(taken > 10000 && declined > 1000);
}

static void
test_reparse_in_place(void **state)
{
	(void)state;
	reparse_in_place(4);
	reparse_in_place(6);
}

/* A template that could not be built matches nothing. */
static void
test_unusable_template(void **state)
{
	struct roce_rx_tmpl t;
	struct roce_pkt p;
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	peer_pkt(&p, 4);
	p.has_vlan = true;
	assert_false(roce_rx_tmpl_init(&t, &p));
	n = build_frame(f, 4, ROCE_OP_RDMA_WRITE_ONLY, 64);
	assert_false(both_paths(&t, f, n, false));
	peer_pkt(&p, 5);
	assert_false(roce_rx_tmpl_init(&t, &p));
	assert_false(both_paths(&t, f, n, false));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_frames_take_the_template),
		cmocka_unit_test(test_every_bit_flipped),
		cmocka_unit_test(test_truncated_and_padded),
		cmocka_unit_test(test_random_corruption),
		cmocka_unit_test(test_unusable_template),
		cmocka_unit_test(test_reparse_in_place),
	};
	const char *s = getenv("DROCE_SEED");

	rng = s != NULL ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) * 2654435761u;
	if (rng == 0)
		rng = 1;
	printf("seed %llu (DROCE_SEED to repeat)\n", (unsigned long long)rng);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
