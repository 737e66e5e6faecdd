/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: roce_parse_eth() and roce_parse_ip() on arbitrary
 * bytes.  The input buffer is exactly the input size, so ASan catches any
 * read past it.  After a successful parse the decoded layout must be
 * consistent with the buffer, and the ICRC must come out the same whether
 * computed in one piece or chained over two pieces (also after a parse
 * that stopped at an opcode the table does not define).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "roce_wire.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t
hdrs_len(const struct roce_pkt *p)
{
	return (size_t)(p->bth_off - p->l3_off) + ROCE_BTH_LEN;
}

static void
check_icrc_paths(const uint8_t *buf, const struct roce_pkt *p)
{
	const uint8_t *l3 = buf + p->l3_off;
	size_t ip_len = p->pkt_len - p->l3_off;
	size_t rest = ip_len - hdrs_len(p) - ROCE_ICRC_LEN;
	size_t cut = rest / 3;
	uint32_t one = roce_icrc_compute(l3, ip_len, p->ip_version);
	uint32_t crc = roce_icrc_begin(l3, p->ip_version);

	crc = roce_crc32(crc, l3 + hdrs_len(p), cut);
	crc = roce_crc32(crc, l3 + hdrs_len(p) + cut, rest - cut);
	FUZZ_CHECK(crc == one);
	FUZZ_CHECK(roce_icrc_verify(buf, p) == (one == p->icrc));
}

static void
check_parsed(const uint8_t *buf, size_t size, const struct roce_pkt *p)
{
	FUZZ_CHECK(roce_opcode_valid(p->opcode));
	FUZZ_CHECK(p->op == roce_opcode_get(p->opcode));
	FUZZ_CHECK(p->ip_version == 4 || p->ip_version == 6);
	FUZZ_CHECK(p->l3_off < p->l4_off);
	FUZZ_CHECK(p->l4_off + ROCE_UDP_HDR_LEN == p->bth_off);
	FUZZ_CHECK(p->bth_off + p->op->hdr_len == p->payload_off);
	FUZZ_CHECK(p->pkt_len <= size);
	FUZZ_CHECK((size_t)p->payload_off + p->payload_len + p->padcnt +
		   ROCE_ICRC_LEN == p->pkt_len);
	FUZZ_CHECK(p->padcnt <= 3);
	FUZZ_CHECK(p->tver == 0);
	FUZZ_CHECK(p->udp_dport == ROCE_UDP_PORT);
	FUZZ_CHECK(p->dest_qpn <= 0xffffff && p->psn <= ROCE_PSN_MASK);
	if (!roce_pkt_has(p, ROCE_OPM_PAYLOAD))
		FUZZ_CHECK(p->payload_len == 0 && p->padcnt == 0);
	if (roce_pkt_has(p, ROCE_OPM_FIXED8))
		FUZZ_CHECK(p->payload_len == 8);
	FUZZ_CHECK(p->icrc == roce_icrc_load(buf + p->pkt_len - ROCE_ICRC_LEN));
	FUZZ_CHECK(p->ip_version != 4 || roce_gid_is_ipv4(p->src_gid));
	check_icrc_paths(buf, p);
}

/*
 * An opcode the table does not define: the BTH and the ICRC are still
 * read (the transport verifies the ICRC to tell a reserved opcode from a
 * corrupted frame), so the layout must hold them and the ICRC paths agree.
 */
static void
check_unknown_opcode(const uint8_t *buf, size_t size, const struct roce_pkt *p)
{
	FUZZ_CHECK(!roce_opcode_valid(p->opcode));
	FUZZ_CHECK(p->op == NULL);
	FUZZ_CHECK(p->ip_version == 4 || p->ip_version == 6);
	FUZZ_CHECK(p->l4_off + ROCE_UDP_HDR_LEN == p->bth_off);
	FUZZ_CHECK((size_t)p->bth_off + ROCE_BTH_LEN + ROCE_ICRC_LEN <= p->pkt_len);
	FUZZ_CHECK(p->pkt_len <= size);
	FUZZ_CHECK(p->icrc == roce_icrc_load(buf + p->pkt_len - ROCE_ICRC_LEN));
	check_icrc_paths(buf, p);
}

static void
check_result(const uint8_t *buf, size_t size, const struct roce_pkt *p,
	     enum roce_parse_err err)
{
	FUZZ_CHECK((unsigned int)err < ROCE_PARSE_ERR_MAX);
	FUZZ_CHECK(roce_parse_strerror(err) != NULL);
	if (err == ROCE_PARSE_OK)
		check_parsed(buf, size, p);
	else if (err == ROCE_PARSE_UNKNOWN_OPCODE)
		check_unknown_opcode(buf, size, p);
}

/* Every field of two parses (not their padding). */
static bool
same_pkt(const struct roce_pkt *a, const struct roce_pkt *b)
{
#define EQ(f) (a->f == b->f)
#define EQM(f) (memcmp(&a->f, &b->f, sizeof(a->f)) == 0)
	return EQ(l3_off) && EQ(l4_off) && EQ(bth_off) && EQ(payload_off) &&
	       EQ(payload_len) && EQ(pkt_len) && EQM(dst_mac) && EQM(src_mac) &&
	       EQ(vlan_tci) && EQ(has_vlan) && EQ(ip_version) && EQ(ip_dscp_ecn) &&
	       EQ(ip_ttl) && EQ(ip_df) && EQ(ip_id) && EQ(ip_cksum) &&
	       EQ(ip_flow_label) && EQM(src_gid) && EQM(dst_gid) && EQ(udp_sport) &&
	       EQ(udp_dport) && EQ(op) && EQ(opcode) && EQ(se) && EQ(migreq) &&
	       EQ(padcnt) && EQ(tver) && EQ(fecn) && EQ(becn) && EQ(ackreq) &&
	       EQ(pkey) && EQ(dest_qpn) && EQ(psn) && EQ(reth.va) && EQ(reth.rkey) &&
	       EQ(reth.len) && EQ(aeth.syndrome) && EQ(aeth.msn) && EQ(atmeth.va) &&
	       EQ(atmeth.rkey) && EQ(atmeth.swap) && EQ(atmeth.comp) &&
	       EQ(atmack_orig) && EQ(imm) && EQ(ieth_rkey) && EQ(deth.qkey) &&
	       EQ(deth.src_qpn) && EQ(feth.sel) && EQ(feth.plt) && EQ(icrc);
#undef EQ
#undef EQM
}

/*
 * The receive template (roce_rx_tmpl_parse) against the full parse: the
 * template of the flow the input claims to be (taken from the input's
 * own parse when that is OK, else a fixed IPv4 one) either declines,
 * leaving the packet untouched, or gives ROCE_PARSE_OK with the full
 * parse's fields; an OK frame of its own flow is always taken.
 */
static void
check_rx_template(const uint8_t *buf, size_t size, const struct roce_pkt *full,
		  enum roce_parse_err err, bool cksum_ok)
{
	static const uint8_t ipv4[4] = { 198, 18, 0, 1 };
	struct roce_rx_tmpl t;
	struct roce_pkt flow, got, before;
	/* (a template describes no VLAN tag, no IPv4 options, flags DF only) */
	bool own = err == ROCE_PARSE_OK && !full->has_vlan &&
		   (full->ip_version == 6 ||
		    (buf[full->l3_off] == 0x45 && !(buf[full->l3_off + 6] & 0x80)));
	bool took;

	if (own) {
		flow = *full;
	} else {
		memset(&flow, 0, sizeof(flow));
		flow.ip_version = 4;
		roce_gid_from_ipv4(flow.src_gid, ipv4);
		roce_gid_from_ipv4(flow.dst_gid, ipv4);
		flow.ip_df = 1;
		flow.pkey = 0xffff;
		flow.dest_qpn = 0x11;
	}
	FUZZ_CHECK(roce_rx_tmpl_init(&t, &flow));
	memset(&before, 0x5a, sizeof(before));
	got = before;
	took = roce_rx_tmpl_parse(&t, buf, size, cksum_ok, &got);
	if (took) {
		FUZZ_CHECK(err == ROCE_PARSE_OK);
		FUZZ_CHECK(same_pkt(&got, full));
	} else {
		FUZZ_CHECK(memcmp(&got, &before, sizeof(got)) == 0);
		FUZZ_CHECK(!own || size < (full->ip_version == 4 ? 56u : 80u));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_pkt p;
	enum roce_parse_err err;

	err = roce_parse_eth(data, size, &p);
	check_result(data, size, &p, err);
	check_rx_template(data, size, &p, err, false);
	err = roce_parse_eth_cksum_ok(data, size, &p);
	check_rx_template(data, size, &p, err, true);

	err = roce_parse_ip(data, size, &p);
	FUZZ_CHECK(err != ROCE_PARSE_OK || p.l3_off == 0);
	check_result(data, size, &p, err);
	return 0;
}
