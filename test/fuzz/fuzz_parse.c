/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: roce_parse_eth() and roce_parse_ip() on arbitrary
 * bytes.  The input buffer is exactly the input size, so ASan catches any
 * read past it.  After a successful parse the decoded layout must be
 * consistent with the buffer, and the ICRC must come out the same whether
 * computed in one piece or chained over two pieces (also after a parse
 * that stopped at an opcode the table does not define).
 */
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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_pkt p;
	enum roce_parse_err err;

	err = roce_parse_eth(data, size, &p);
	check_result(data, size, &p, err);

	err = roce_parse_ip(data, size, &p);
	FUZZ_CHECK(err != ROCE_PARSE_OK || p.l3_off == 0);
	check_result(data, size, &p, err);
	return 0;
}
