/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: derive a struct roce_pkt (every valid opcode, IPv4 or
 * IPv6, optional VLAN, any field values) from the input, build it with
 * roce_build(), parse it back and require the same fields, a verifying
 * ICRC, the payload in place and zero pad bytes.  Then flip one bit of the
 * payload/pad/ICRC and require the ICRC check to fail.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roce_wire.h"
#include "fuzz_check.h"

#define FRAME_CAP 9216
#define MAX_PAYLOAD 4096
#define MASK24 0xffffffu

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct src {
	const uint8_t *d;
	size_t n;
};

/* The next nbytes of input as a big-endian number; zeros when exhausted. */
static uint64_t
take(struct src *s, unsigned int nbytes)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < nbytes; i++) {
		v = v << 8 | (s->n > 0 ? *s->d : 0);
		if (s->n > 0) {
			s->d++;
			s->n--;
		}
	}
	return v;
}

static void
take_bytes(struct src *s, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (uint8_t)take(s, 1);
}

static uint8_t
pick_opcode(struct src *s)
{
	uint8_t valid[256];
	unsigned int n = 0;

	for (unsigned int op = 0; op < 256; op++)
		if (roce_opcode_valid((uint8_t)op))
			valid[n++] = (uint8_t)op;
	return valid[take(s, 1) % n];
}

static void
derive_net(struct src *s, struct roce_pkt *p)
{
	uint8_t v4[4];

	take_bytes(s, p->dst_mac, 6);
	take_bytes(s, p->src_mac, 6);
	p->has_vlan = take(s, 1) & 1;
	p->vlan_tci = p->has_vlan ? (uint16_t)take(s, 2) : 0;
	p->ip_version = (take(s, 1) & 1) ? 6 : 4;
	p->ip_dscp_ecn = (uint8_t)take(s, 1);
	p->ip_ttl = (uint8_t)take(s, 1);
	if (p->ip_version == 4) {
		p->ip_df = take(s, 1) & 1;
		p->ip_id = (uint16_t)take(s, 2);
		take_bytes(s, v4, 4);
		roce_gid_from_ipv4(p->src_gid, v4);
		take_bytes(s, v4, 4);
		roce_gid_from_ipv4(p->dst_gid, v4);
	} else {
		p->ip_flow_label = (uint32_t)take(s, 3) & 0xfffff;
		take_bytes(s, p->src_gid, 16);
		take_bytes(s, p->dst_gid, 16);
	}
	p->udp_sport = (uint16_t)take(s, 2);
	p->udp_dport = ROCE_UDP_PORT;
}

static void
derive_bth(struct src *s, struct roce_pkt *p)
{
	uint8_t bits = (uint8_t)take(s, 1);

	p->opcode = pick_opcode(s);
	p->se = bits & 1;
	p->migreq = bits >> 1 & 1;
	p->fecn = bits >> 2 & 1;
	p->becn = bits >> 3 & 1;
	p->ackreq = bits >> 4 & 1;
	p->pkey = (uint16_t)take(s, 2);
	p->dest_qpn = (uint32_t)take(s, 3) & MASK24;
	p->psn = (uint32_t)take(s, 3) & MASK24;
}

static void
derive_ext(struct src *s, struct roce_pkt *p)
{
	p->deth.qkey = (uint32_t)take(s, 4);
	p->deth.src_qpn = (uint32_t)take(s, 3) & MASK24;
	p->feth.sel = (uint8_t)(take(s, 1) & 3);
	p->feth.plt = (uint8_t)(take(s, 1) & 15);
	p->reth.va = take(s, 8);
	p->reth.rkey = (uint32_t)take(s, 4);
	p->reth.len = (uint32_t)take(s, 4);
	p->atmeth.va = take(s, 8);
	p->atmeth.rkey = (uint32_t)take(s, 4);
	p->atmeth.swap = take(s, 8);
	p->atmeth.comp = take(s, 8);
	p->aeth.syndrome = (uint8_t)take(s, 1);
	p->aeth.msn = (uint32_t)take(s, 3) & MASK24;
	p->atmack_orig = take(s, 8);
	p->imm = (uint32_t)take(s, 4);
	p->ieth_rkey = (uint32_t)take(s, 4);
}

static uint32_t
derive_payload_len(struct src *s, const struct roce_pkt *p)
{
	uint32_t len = (uint32_t)take(s, 2) % (MAX_PAYLOAD + 1);
	uint32_t mask = roce_opcode_get(p->opcode)->mask;	/* p->op not set yet */

	if (!(mask & ROCE_OPM_PAYLOAD))
		return 0;
	return (mask & ROCE_OPM_FIXED8) ? 8 : len;
}

#define SAME(f) FUZZ_CHECK(a->f == b->f)

static void
check_ext_equal(const struct roce_pkt *a, const struct roce_pkt *b)
{
	if (roce_pkt_has(a, ROCE_OPM_DETH)) {
		SAME(deth.qkey); SAME(deth.src_qpn);
	}
	if (roce_pkt_has(a, ROCE_OPM_FETH)) {
		SAME(feth.sel); SAME(feth.plt);
	}
	if (roce_pkt_has(a, ROCE_OPM_RETH)) {
		SAME(reth.va); SAME(reth.rkey); SAME(reth.len);
	}
	if (roce_pkt_has(a, ROCE_OPM_ATMETH)) {
		SAME(atmeth.va); SAME(atmeth.rkey);
		SAME(atmeth.swap); SAME(atmeth.comp);
	}
	if (roce_pkt_has(a, ROCE_OPM_AETH)) {
		SAME(aeth.syndrome); SAME(aeth.msn);
	}
	if (roce_pkt_has(a, ROCE_OPM_ATMACK))
		SAME(atmack_orig);
	if (roce_pkt_has(a, ROCE_OPM_IMM))
		SAME(imm);
	if (roce_pkt_has(a, ROCE_OPM_IETH))
		SAME(ieth_rkey);
}

static void
check_equal(const struct roce_pkt *a, const struct roce_pkt *b)
{
	FUZZ_CHECK(memcmp(a->dst_mac, b->dst_mac, 6) == 0);
	FUZZ_CHECK(memcmp(a->src_mac, b->src_mac, 6) == 0);
	FUZZ_CHECK(memcmp(a->src_gid, b->src_gid, 16) == 0);
	FUZZ_CHECK(memcmp(a->dst_gid, b->dst_gid, 16) == 0);
	SAME(has_vlan); SAME(vlan_tci); SAME(ip_version); SAME(ip_dscp_ecn);
	SAME(ip_ttl); SAME(ip_df); SAME(ip_id); SAME(ip_flow_label);
	SAME(udp_sport); SAME(udp_dport);
	SAME(l3_off); SAME(l4_off); SAME(bth_off); SAME(payload_off);
	SAME(payload_len); SAME(pkt_len);
	SAME(op); SAME(opcode); SAME(se); SAME(migreq); SAME(padcnt);
	SAME(tver); SAME(fecn); SAME(becn); SAME(ackreq); SAME(pkey);
	SAME(dest_qpn); SAME(psn); SAME(icrc);
	check_ext_equal(a, b);
}

/* One flipped bit after the BTH headers must break the ICRC. */
static void
check_flip_detected(uint8_t *f, const struct roce_pkt *p, struct src *s)
{
	size_t span = p->pkt_len - p->payload_off;
	size_t pos = p->payload_off + (size_t)take(s, 2) % span;
	uint8_t bit = (uint8_t)(1u << (take(s, 1) & 7));
	struct roce_pkt q;

	f[pos] ^= bit;
	FUZZ_CHECK(roce_parse_eth(f, p->pkt_len, &q) == ROCE_PARSE_OK);
	FUZZ_CHECK(!roce_icrc_verify(f, &q));
	FUZZ_CHECK(!roce_icrc_verify_writable(f, &q));
	f[pos] ^= bit;
}

/* A buffer one byte short is refused, and nothing is written past it. */
static void
check_too_small(const struct roce_pkt *want, const uint8_t *payload)
{
	struct roce_pkt tmp = *want;
	uint8_t *small = malloc(want->pkt_len - 1);

	FUZZ_CHECK(small != NULL);
	FUZZ_CHECK(roce_build(small, want->pkt_len - 1, &tmp, payload) == 0);
	free(small);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[FRAME_CAP], payload[MAX_PAYLOAD];
	struct src s = { data, size };
	struct roce_pkt want, got;
	size_t len;

	memset(&want, 0, sizeof(want));
	derive_net(&s, &want);
	derive_bth(&s, &want);
	derive_ext(&s, &want);
	want.payload_len = derive_payload_len(&s, &want);
	for (uint32_t i = 0; i < want.payload_len; i++)
		payload[i] = size > 0 ? data[i % size] ^ (uint8_t)i : (uint8_t)i;

	len = roce_build(frame, sizeof(frame), &want, payload);
	FUZZ_CHECK(len != 0 && len == want.pkt_len);
	check_too_small(&want, payload);
	FUZZ_CHECK(roce_parse_eth(frame, len, &got) == ROCE_PARSE_OK);
	FUZZ_CHECK(roce_icrc_verify(frame, &got));
	FUZZ_CHECK(roce_icrc_verify_writable(frame, &got));
	check_equal(&want, &got);
	FUZZ_CHECK(memcmp(frame + got.payload_off, payload, got.payload_len) == 0);
	for (unsigned int i = 0; i < got.padcnt; i++)
		FUZZ_CHECK(frame[got.payload_off + got.payload_len + i] == 0);
	check_flip_detected(frame, &got, &s);
	return 0;
}
