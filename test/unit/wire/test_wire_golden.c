/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Golden tests on real Linux Soft-RoCE traffic (../shared/vectors, see its
 * README): every packet parses and its ICRC verifies; fields match what the
 * README documents; flipping any bit the ICRC covers (and does not mask)
 * is detected; flipping masked fields is not.
 *
 * The folder comes from DROCE_VECTORS (set by meson).  A missing folder is
 * a failure, not a skip: these vectors are the ground truth.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pcap/pcap.h>

#include "icrc_ref.h"
#include "roce_wire.h"

#define MAX_FRAMES 128

struct capture {
	unsigned int count;
	size_t len[MAX_FRAMES];
	uint8_t *frame[MAX_FRAMES];
};

static const char *
vectors_dir(void)
{
	const char *d = getenv("DROCE_VECTORS");

	return d != NULL ? d : "../shared/vectors";
}

static void
load_capture(const char *name, struct capture *c)
{
	char path[1024], err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *pc;

	snprintf(path, sizeof(path), "%s/%s", vectors_dir(), name);
	pc = pcap_open_offline(path, err);
	if (pc == NULL)
		fail_msg("cannot open golden capture %s: %s", path, err);
	assert_int_equal(pcap_datalink(pc), DLT_EN10MB);
	c->count = 0;
	while (pcap_next_ex(pc, &h, &data) == 1) {
		assert_true(c->count < MAX_FRAMES);
		c->len[c->count] = h->caplen;
		/* an exact-size heap copy, so ASan sees any read past the end */
		c->frame[c->count] = malloc(h->caplen);
		assert_non_null(c->frame[c->count]);
		memcpy(c->frame[c->count], data, h->caplen);
		c->count++;
	}
	pcap_close(pc);
}

static void
free_capture(struct capture *c)
{
	for (unsigned int i = 0; i < c->count; i++)
		free(c->frame[i]);
	c->count = 0;
}

static const char *const capture_files[] = {
	"rc_send_ipv4.pcap", "ud_send_ipv4.pcap", "rdma_write_ipv4.pcap",
	"rdma_write_mtu4096_ipv4.pcap", "rdma_read_ipv4.pcap",
	"atomic_ipv4.pcap", "imm_write_send_ipv4.pcap", "rc_send_ipv6.pcap",
	"host_probe_ud_ipv4.pcap",
};
/* packet counts from the vectors README */
static const unsigned int capture_counts[] = { 28, 4, 65, 25, 55, 20, 14, 27, 8 };

static void
test_golden_every_packet_parses_and_icrc_verifies(void **state)
{
	unsigned int total = 0;
	struct capture c;
	struct roce_pkt p;

	(void)state;
	for (size_t f = 0; f < sizeof(capture_files) / sizeof(capture_files[0]); f++) {
		load_capture(capture_files[f], &c);
		assert_int_equal(c.count, capture_counts[f]);
		for (unsigned int i = 0; i < c.count; i++) {
			enum roce_parse_err e = roce_parse_eth(c.frame[i], c.len[i], &p);

			if (e != ROCE_PARSE_OK)
				fail_msg("%s #%u: %s", capture_files[f], i,
					 roce_parse_strerror(e));
			if (!roce_icrc_verify(c.frame[i], &p))
				fail_msg("%s #%u: ICRC mismatch", capture_files[f], i);
			/* the tests' reference ICRC (icrc_ref.h) agrees with rxe */
			assert_int_equal(icrc_reference(c.frame[i], &p), p.icrc);
			/* the one-pass verify agrees and leaves the frame as it was */
			uint8_t *copy = malloc(c.len[i]);

			assert_non_null(copy);
			memcpy(copy, c.frame[i], c.len[i]);
			if (!roce_icrc_verify_writable(c.frame[i], &p))
				fail_msg("%s #%u: in-place ICRC mismatch", capture_files[f], i);
			assert_memory_equal(copy, c.frame[i], c.len[i]);
			free(copy);
			/* rxe's constant fields (vectors README) */
			assert_int_equal(p.pkey, 0xffff);
			assert_int_equal(p.tver, 0);
			assert_int_equal(p.ip_ttl, 64);
			assert_int_equal(p.ip_dscp_ecn, 0);
			total++;
		}
		free_capture(&c);
	}
	assert_int_equal(total, 246);
}

static unsigned int
count_opcode(const struct capture *c, uint8_t opcode)
{
	unsigned int n = 0;
	struct roce_pkt p;

	for (unsigned int i = 0; i < c->count; i++)
		if (roce_parse_eth(c->frame[i], c->len[i], &p) == ROCE_PARSE_OK &&
		    p.opcode == opcode)
			n++;
	return n;
}

static void
test_golden_rc_send_fields(void **state)
{
	struct capture c;
	struct roce_pkt p;

	(void)state;
	load_capture("rc_send_ipv4.pcap", &c);
	assert_int_equal(count_opcode(&c, ROCE_OP_SEND_ONLY), 4);
	assert_int_equal(count_opcode(&c, ROCE_OP_SEND_FIRST), 4);
	assert_int_equal(count_opcode(&c, ROCE_OP_SEND_MIDDLE), 8);
	assert_int_equal(count_opcode(&c, ROCE_OP_SEND_LAST), 4);
	assert_int_equal(count_opcode(&c, ROCE_OP_ACKNOWLEDGE), 8);
	for (unsigned int i = 0; i < c.count; i++) {
		assert_int_equal(roce_parse_eth(c.frame[i], c.len[i], &p), ROCE_PARSE_OK);
		assert_int_equal(p.ip_version, 4);
		assert_true(p.ip_df);
		assert_true(roce_gid_is_ipv4(p.src_gid));
		/* the RC sport derives from both QPNs; (a) uses 0x11/0x21 */
		if (p.dest_qpn == 0x11 || p.dest_qpn == 0x21)
			assert_int_equal(p.udp_sport, roce_udp_sport(0x11, 0x21));
		if (p.dest_qpn == 0x12 || p.dest_qpn == 0x22)
			assert_int_equal(p.udp_sport, roce_udp_sport(0x12, 0x22));
		if (p.opcode == ROCE_OP_ACKNOWLEDGE)
			assert_int_equal(p.aeth.syndrome, ROCE_AETH_ACK_NO_CREDIT);
		if (p.opcode == ROCE_OP_SEND_ONLY) {
			assert_int_equal(p.payload_len, 64);
			assert_int_equal(c.len[i], 122);
			assert_int_equal(p.ackreq, 1);
		}
		if (p.opcode == ROCE_OP_SEND_MIDDLE)
			assert_int_equal(p.payload_len, 1024);
	}
	free_capture(&c);
}

static void
test_golden_write_read_atomic_fields(void **state)
{
	struct capture c;
	struct roce_pkt p;

	(void)state;
	load_capture("rdma_write_ipv4.pcap", &c);
	for (unsigned int i = 0; i < c.count; i++) {
		assert_int_equal(roce_parse_eth(c.frame[i], c.len[i], &p), ROCE_PARSE_OK);
		if (p.opcode == ROCE_OP_RDMA_WRITE_FIRST) {
			assert_int_equal(p.reth.len, 8192);
			assert_int_equal(p.dest_qpn, 0x14);
			assert_int_equal(c.len[i], 1098);
		}
	}
	free_capture(&c);

	load_capture("rdma_read_ipv4.pcap", &c);
	assert_int_equal(count_opcode(&c, ROCE_OP_RDMA_READ_REQUEST), 10);
	assert_int_equal(count_opcode(&c, ROCE_OP_RDMA_READ_RESPONSE_MIDDLE), 30);
	for (unsigned int i = 0; i < c.count; i++) {
		assert_int_equal(roce_parse_eth(c.frame[i], c.len[i], &p), ROCE_PARSE_OK);
		if (p.opcode == ROCE_OP_RDMA_READ_RESPONSE_FIRST) {
			assert_int_equal(roce_aeth_type(p.aeth.syndrome), ROCE_AETH_ACK);
			assert_int_equal(p.payload_len, 1024);
		}
	}
	free_capture(&c);

	load_capture("atomic_ipv4.pcap", &c);
	assert_int_equal(count_opcode(&c, ROCE_OP_COMPARE_SWAP), 5);
	assert_int_equal(count_opcode(&c, ROCE_OP_FETCH_ADD), 5);
	assert_int_equal(count_opcode(&c, ROCE_OP_ATOMIC_ACKNOWLEDGE), 10);
	for (unsigned int i = 0; i < c.count; i++) {
		assert_int_equal(roce_parse_eth(c.frame[i], c.len[i], &p), ROCE_PARSE_OK);
		if (p.opcode == ROCE_OP_FETCH_ADD)
			assert_true(p.atmeth.swap == 1);	/* add 1 */
		if (p.opcode == ROCE_OP_COMPARE_SWAP)
			assert_true(p.atmeth.swap == 0 && p.atmeth.comp == 0);
	}
	free_capture(&c);
}

static void
test_golden_imm_ud_ipv6_fields(void **state)
{
	static const uint32_t imms[] = { 0x11111111, 0x22222222, 0x33333333,
					 0x44444444, 0x55555555 };
	unsigned int nimm = 0;
	struct capture c;
	struct roce_pkt p;

	(void)state;
	load_capture("imm_write_send_ipv4.pcap", &c);
	for (unsigned int i = 0; i < c.count; i++) {
		assert_int_equal(roce_parse_eth(c.frame[i], c.len[i], &p), ROCE_PARSE_OK);
		if (!roce_pkt_has(&p, ROCE_OPM_IMM))
			continue;
		assert_true(nimm < 5);
		assert_int_equal(p.imm, imms[nimm]);
		/* payload byte k of message i = ((i*4096 + k)*7 + 3) mod 256 */
		if (p.opcode == ROCE_OP_SEND_ONLY_WITH_IMMEDIATE ||
		    p.opcode == ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE)
			for (uint32_t k = 0; k < p.payload_len; k++)
				assert_int_equal(c.frame[i][p.payload_off + k],
						 ((nimm * 4096 + k) * 7 + 3) & 0xff);
		if (imms[nimm] == 0x33333333) {	/* the zero-length WRITE */
			assert_int_equal(p.reth.len, 0);
			assert_int_equal(p.payload_len, 0);
		}
		nimm++;
	}
	assert_int_equal(nimm, 5);
	free_capture(&c);

	load_capture("ud_send_ipv4.pcap", &c);
	for (unsigned int i = 0; i < c.count; i++) {
		assert_int_equal(roce_parse_eth(c.frame[i], c.len[i], &p), ROCE_PARSE_OK);
		assert_int_equal(p.opcode, ROCE_OP_UD_SEND_ONLY);
		assert_int_equal(p.deth.qkey, 0x11111111);
		assert_int_equal(p.payload_len, 512);
	}
	free_capture(&c);

	load_capture("rc_send_ipv6.pcap", &c);
	for (unsigned int i = 0; i < c.count; i++) {
		assert_int_equal(roce_parse_eth(c.frame[i], c.len[i], &p), ROCE_PARSE_OK);
		assert_int_equal(p.ip_version, 6);
		assert_int_equal(p.src_gid[0], 0xfe);	/* link-local GIDs */
		assert_int_equal(p.ip_flow_label, 0);
	}
	free_capture(&c);
}

/*
 * Flip every covered bit of every packet of two captures (IPv4 and IPv6):
 * the packet must then fail to parse or fail ICRC verification.
 */
static void
flip_all_bits(const char *file)
{
	unsigned int checked = 0;
	struct roce_pkt p, q;
	struct capture c;

	load_capture(file, &c);
	for (unsigned int i = 0; i < c.count; i++) {
		uint8_t *f = c.frame[i];

		assert_int_equal(roce_parse_eth(f, c.len[i], &p), ROCE_PARSE_OK);
		for (size_t off = p.l3_off; off < p.pkt_len; off++) {
			for (unsigned int bit = 0; bit < 8; bit++) {
				bool accepted;

				if (icrc_masked(&p, off, bit))
					continue;
				f[off] ^= (uint8_t)(1u << bit);
				accepted = roce_parse_eth(f, c.len[i], &q) == ROCE_PARSE_OK &&
					   (roce_icrc_verify(f, &q) ||
					    roce_icrc_verify_writable(f, &q));
				f[off] ^= (uint8_t)(1u << bit);
				if (accepted)
					fail_msg("%s #%u: flip of byte %zu bit %u undetected",
						 file, i, off, bit);
				checked++;
			}
		}
	}
	assert_true(checked > 1000);
	free_capture(&c);
}

static void
test_golden_single_bit_flips_detected_bad_flow(void **state)
{
	(void)state;
	flip_all_bits("rc_send_ipv4.pcap");
	flip_all_bits("rc_send_ipv6.pcap");
	flip_all_bits("atomic_ipv4.pcap");
	flip_all_bits("imm_write_send_ipv4.pcap");
}

/* Masked fields (TTL, TOS, FECN/BECN, IPv6 flow label) do not change the ICRC. */
static void
test_golden_masked_fields_do_not_matter(void **state)
{
	struct roce_pkt p, q;
	struct capture c;

	(void)state;
	load_capture("rc_send_ipv6.pcap", &c);
	for (unsigned int i = 0; i < c.count; i++) {
		uint8_t *f = c.frame[i];

		assert_int_equal(roce_parse_eth(f, c.len[i], &p), ROCE_PARSE_OK);
		f[p.l3_off + 7] = 3;			/* hop limit */
		f[p.l3_off + 1] ^= 0xa5;		/* TC low + flow label */
		f[p.bth_off + 4] |= 0xc0;		/* FECN, BECN */
		assert_int_equal(roce_parse_eth(f, c.len[i], &q), ROCE_PARSE_OK);
		assert_true(roce_icrc_verify(f, &q));
		assert_true(roce_icrc_verify_writable(f, &q));
		assert_int_equal(q.fecn, 1);
		assert_int_equal(q.ip_ttl, 3);
	}
	free_capture(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_every_packet_parses_and_icrc_verifies),
		cmocka_unit_test(test_golden_rc_send_fields),
		cmocka_unit_test(test_golden_write_read_atomic_fields),
		cmocka_unit_test(test_golden_imm_ud_ipv6_fields),
		cmocka_unit_test(test_golden_single_bit_flips_detected_bad_flow),
		cmocka_unit_test(test_golden_masked_fields_do_not_matter),
	};

	return cmocka_run_group_tests_name("wire_golden", tests, NULL, NULL);
}
