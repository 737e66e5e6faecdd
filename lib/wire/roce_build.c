/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * struct roce_pkt -> frame.  The builder derives every length, the pad
 * count, the IPv4 checksum and the ICRC itself, so a caller cannot send a
 * packet whose headers disagree with each other.
 */
#include <string.h>

#include "roce_wire.h"
#include "wire_private.h"

static void
encode_ext_headers(uint8_t *bth, const struct roce_pkt *p)
{
	const struct roce_opcode_info *op = p->op;
	uint8_t *h;

	/* every other extended header is written whole by its setters */
	if (op->mask & (ROCE_OPM_DETH | ROCE_OPM_FETH | ROCE_OPM_CNP_RSVD))
		memset(bth + ROCE_BTH_LEN, 0, op->hdr_len - ROCE_BTH_LEN);
	if (op->mask & ROCE_OPM_DETH) {
		h = bth + op->off[ROCE_HDR_DETH];
		roce_deth_set_qkey(h, p->deth.qkey);
		roce_deth_set_sqp(h, p->deth.src_qpn);
	}
	if (op->mask & ROCE_OPM_FETH) {
		h = bth + op->off[ROCE_HDR_FETH];
		roce_feth_set_sel(h, p->feth.sel);
		roce_feth_set_plt(h, p->feth.plt);
	}
	if (op->mask & ROCE_OPM_RETH) {
		h = bth + op->off[ROCE_HDR_RETH];
		roce_reth_set_va(h, p->reth.va);
		roce_reth_set_rkey(h, p->reth.rkey);
		roce_reth_set_len(h, p->reth.len);
	}
	if (op->mask & ROCE_OPM_ATMETH) {
		h = bth + op->off[ROCE_HDR_ATMETH];
		roce_atmeth_set_va(h, p->atmeth.va);
		roce_atmeth_set_rkey(h, p->atmeth.rkey);
		roce_atmeth_set_swap(h, p->atmeth.swap);
		roce_atmeth_set_comp(h, p->atmeth.comp);
	}
	if (op->mask & ROCE_OPM_AETH) {
		h = bth + op->off[ROCE_HDR_AETH];
		roce_aeth_set_syndrome(h, p->aeth.syndrome);
		roce_aeth_set_msn(h, p->aeth.msn);
	}
	if (op->mask & ROCE_OPM_ATMACK)
		roce_atmack_set_orig(bth + op->off[ROCE_HDR_ATMACK], p->atmack_orig);
	if (op->mask & ROCE_OPM_IMM)
		roce_imm_set_data(bth + op->off[ROCE_HDR_IMM], p->imm);
	if (op->mask & ROCE_OPM_IETH)
		roce_ieth_set_rkey(bth + op->off[ROCE_HDR_IETH], p->ieth_rkey);
}

static void
encode_bth(uint8_t *bth, const struct roce_pkt *p)
{
	memset(bth, 0, ROCE_BTH_LEN);
	roce_bth_set_opcode(bth, p->opcode);
	roce_bth_set_se(bth, p->se);
	roce_bth_set_migreq(bth, p->migreq);
	roce_bth_set_padcnt(bth, p->padcnt);
	roce_bth_set_tver(bth, p->tver);
	roce_bth_set_pkey(bth, p->pkey);
	roce_bth_set_fecn(bth, p->fecn);
	roce_bth_set_becn(bth, p->becn);
	roce_bth_set_destqp(bth, p->dest_qpn);
	roce_bth_set_ackreq(bth, p->ackreq);
	roce_bth_set_psn(bth, p->psn);
}

/*
 * The headers are first written with the ICRC's variant fields set to
 * ones (IPv4 TOS, TTL, checksum; IPv6 traffic class, flow label, hop limit;
 * UDP checksum; BTH byte 4), exactly as the ICRC sees them, so
 * roce_build_finish() sums the datagram in one CRC pass and then writes
 * the real values (set_variant_fields).  Writing the ones here, before the
 * payload copy, rather than just before the CRC also keeps the CRC's wide
 * loads clear of fresh narrow stores.
 */
static size_t
encode_ipv4(uint8_t *ip, const struct roce_pkt *p, size_t datagram_len)
{
	ip[0] = 0x45;
	ip[1] = 0xff;
	wire_put_be16(ip + 2, (uint16_t)datagram_len);
	wire_put_be16(ip + 4, p->ip_id);
	wire_put_be16(ip + 6, p->ip_df ? 0x4000 : 0);
	ip[8] = 0xff;
	ip[9] = ROCE_IPPROTO_UDP;
	ip[10] = ip[11] = 0xff;
	memcpy(ip + 12, p->src_gid + 12, 4);
	memcpy(ip + 16, p->dst_gid + 12, 4);
	return ROCE_IPV4_HDR_LEN;
}

static size_t
encode_ipv6(uint8_t *ip, const struct roce_pkt *p, size_t datagram_len)
{
	(void)p;
	wire_put_be32(ip, 0x6fffffffu);
	wire_put_be16(ip + 4, (uint16_t)(datagram_len - ROCE_IPV6_HDR_LEN));
	ip[6] = ROCE_IPPROTO_UDP;
	ip[7] = 0xff;
	memcpy(ip + 8, p->src_gid, 16);
	memcpy(ip + 24, p->dst_gid, 16);
	return ROCE_IPV6_HDR_LEN;
}

/*
 * The ones'-complement sum of the IPv4 header as it will be sent, without
 * its total length and checksum words: TOS and TTL from p, the other
 * words from the frame.  The bytes set_variant_fields writes are not read
 * back: a wide load of freshly stored narrow bytes waits until they reach
 * the cache.
 */
static uint32_t
ipv4_sum_but_length(const uint8_t *ip, const struct roce_pkt *p)
{
	uint32_t sum = (uint32_t)(ip[0] << 8 | p->ip_dscp_ecn) +
		       (uint32_t)(p->ip_ttl << 8 | ip[9]);

	for (size_t i = 4; i < 8; i += 2)
		sum += wire_be16(ip + i);
	for (size_t i = 12; i < ROCE_IPV4_HDR_LEN; i += 2)
		sum += wire_be16(ip + i);
	return sum;
}

/* The IPv4 header checksum from ipv4_sum_but_length's sum and the total length. */
static uint16_t
ipv4_cksum_with_length(uint32_t sum, uint16_t total_len)
{
	sum += total_len;
	/* at most ten 16-bit words: two folds leave 16 bits */
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * After the ICRC: the real values of the fields it masks.  ip_cksum_port:
 * the IPv4 header checksum stays 0 for the port to fill in.
 */
static void
set_variant_fields(uint8_t *f, const struct roce_pkt *p, bool ip_cksum_port)
{
	uint8_t *ip = f + p->l3_off;
	uint8_t *bth = f + p->bth_off;

	if (p->ip_version == 4) {
		/* the ICRC masks the checksum (RoCEv2 annex A17.3.3): the port
		 * may fill it in after the ICRC; DPDK wants the field zero */
		uint16_t cksum = ip_cksum_port ? 0 : p->ip_cksum;

		ip[1] = p->ip_dscp_ecn;
		ip[8] = p->ip_ttl;
		wire_put_be16(ip + 10, cksum);
	} else {
		wire_put_be32(ip, 6u << 28 | (uint32_t)p->ip_dscp_ecn << 20 |
			      (p->ip_flow_label & 0xfffff));
		ip[7] = p->ip_ttl;
	}
	f[p->l4_off + 6] = f[p->l4_off + 7] = 0;	/* RoCEv2 sends UDP checksum 0 */
	bth[4] = 0;
	roce_bth_set_fecn(bth, p->fecn);
	roce_bth_set_becn(bth, p->becn);
}

size_t
roce_build_headers(void *buf, size_t cap, struct roce_pkt *p)
{
	const struct roce_opcode_info *op = roce_opcode_get(p->opcode);
	size_t l2, l3, pad, total;
	uint8_t *f = buf;
	uint8_t *udp;

	if (op->name == NULL || (p->ip_version != 4 && p->ip_version != 6))
		return 0;
	if (p->payload_len != 0 && !(op->mask & ROCE_OPM_PAYLOAD))
		return 0;
	if ((op->mask & ROCE_OPM_FIXED8) && p->payload_len != 8)
		return 0;
	p->op = op;
	pad = (4 - (p->payload_len & 3)) & 3;
	p->padcnt = (uint8_t)pad;

	l2 = ROCE_ETH_HDR_LEN + (p->has_vlan ? ROCE_VLAN_HDR_LEN : 0);
	l3 = p->ip_version == 4 ? ROCE_IPV4_HDR_LEN : ROCE_IPV6_HDR_LEN;
	total = l2 + l3 + ROCE_UDP_HDR_LEN + op->hdr_len + (size_t)p->payload_len +
		pad + ROCE_ICRC_LEN;
	if (total > cap || total - l2 > UINT16_MAX)
		return 0;

	memcpy(f, p->dst_mac, 6);
	memcpy(f + 6, p->src_mac, 6);
	if (p->has_vlan) {
		wire_put_be16(f + 12, ROCE_ETHERTYPE_VLAN);
		wire_put_be16(f + 14, p->vlan_tci);
	}
	wire_put_be16(f + l2 - 2, p->ip_version == 4 ? ROCE_ETHERTYPE_IPV4 :
						       ROCE_ETHERTYPE_IPV6);
	if (p->ip_version == 4) {
		encode_ipv4(f + l2, p, total - l2);
		p->ip_cksum = ipv4_cksum_with_length(ipv4_sum_but_length(f + l2, p),
						     (uint16_t)(total - l2));
	} else {
		encode_ipv6(f + l2, p, total - l2);
		p->ip_cksum = 0;
	}

	udp = f + l2 + l3;
	if (p->udp_dport == 0)
		p->udp_dport = ROCE_UDP_PORT;
	wire_put_be16(udp, p->udp_sport);
	wire_put_be16(udp + 2, p->udp_dport);
	wire_put_be16(udp + 4, (uint16_t)(total - l2 - l3));
	wire_put_be16(udp + 6, 0xffff);	/* masked until roce_build_finish */

	p->l3_off = (uint16_t)l2;
	p->l4_off = (uint16_t)(l2 + l3);
	p->bth_off = (uint16_t)(p->l4_off + ROCE_UDP_HDR_LEN);
	p->payload_off = (uint16_t)(p->bth_off + op->hdr_len);
	p->pkt_len = (uint32_t)total;

	encode_bth(f + p->bth_off, p);
	f[p->bth_off + 4] = 0xff;	/* FECN, BECN, resv6a: masked until finish */
	encode_ext_headers(f + p->bth_off, p);
	return p->payload_off;
}

bool
roce_tmpl_init(struct roce_tmpl *t, const struct roce_pkt *p)
{
	uint8_t frame[ROCE_TMPL_HDR_MAX + 64];
	struct roce_pkt q = *p;

	/* any opcode will do: only the bytes up to the BTH are kept, and of
	 * the BTH only what does not change per packet */
	q.opcode = ROCE_OP_ACKNOWLEDGE;
	q.payload_len = 0;
	q.se = 0;
	q.ackreq = 0;
	q.psn = 0;
	if (roce_build_headers(frame, sizeof(frame), &q) == 0)
		return false;
	memset(t, 0, sizeof(*t));
	memcpy(t->hdr, frame, (size_t)q.bth_off + ROCE_BTH_LEN);
	t->l3_off = q.l3_off;
	t->l4_off = q.l4_off;
	t->bth_off = q.bth_off;
	t->ip_version = q.ip_version;
	t->ip_dscp_ecn = q.ip_dscp_ecn;
	t->ip_ttl = q.ip_ttl;
	t->ip_flow_label = q.ip_flow_label;
	t->fecn = q.fecn;
	t->becn = q.becn;
	t->dest_qpn = q.dest_qpn & ROCE_PSN_MASK;
	/* SE and PadCnt per packet; MigReq and TVer */
	t->bth1 = frame[q.bth_off + 1] & 0x4f;
	t->bth4 = (uint8_t)((q.fecn & 1) << 7 | (q.becn & 1) << 6);
	t->ip6_vtf = 6u << 28 | (uint32_t)q.ip_dscp_ecn << 20 | (q.ip_flow_label & 0xfffff);
	/* the checksum per packet is then this sum plus the length (RFC 1624) */
	t->ip_sum = q.ip_version == 4 ? ipv4_sum_but_length(frame + q.l3_off, &q) : 0;
	return true;
}

size_t
roce_tmpl_write_headers(const struct roce_tmpl *t, void *buf, size_t cap,
			struct roce_pkt *p)
{
	const struct roce_opcode_info *op = roce_opcode_get(p->opcode);
	uint8_t *f = buf;
	uint8_t *bth;
	size_t pad, total, dlen;

	if (op->name == NULL)
		return 0;
	if (p->payload_len != 0 && !(op->mask & ROCE_OPM_PAYLOAD))
		return 0;
	if ((op->mask & ROCE_OPM_FIXED8) && p->payload_len != 8)
		return 0;
	pad = (4 - (p->payload_len & 3)) & 3;
	total = (size_t)t->bth_off + op->hdr_len + p->payload_len + pad + ROCE_ICRC_LEN;
	dlen = total - t->l3_off;
	if (total > cap || dlen > UINT16_MAX)
		return 0;

	/* a constant-size copy is a few vector moves, a variable one a call;
	 * the bytes past the BTH are overwritten below (extended headers) or
	 * by the caller (payload) and roce_tmpl_finish (pad, ICRC) */
	if (cap >= ROCE_TMPL_HDR_MAX)
		memcpy(f, t->hdr, ROCE_TMPL_HDR_MAX);
	else
		memcpy(f, t->hdr, (size_t)t->bth_off + ROCE_BTH_LEN);
	if (t->ip_version == 4) {
		wire_put_be16(f + t->l3_off + 2, (uint16_t)dlen);
		p->ip_cksum = ipv4_cksum_with_length(t->ip_sum, (uint16_t)dlen);
	} else {
		wire_put_be16(f + t->l3_off + 4, (uint16_t)(dlen - ROCE_IPV6_HDR_LEN));
		p->ip_cksum = 0;
	}
	wire_put_be16(f + t->l4_off + 4, (uint16_t)(total - t->l4_off));

	/* the BTH fields that change per packet (byte 4 stays masked) */
	bth = f + t->bth_off;
	bth[0] = p->opcode;
	bth[1] = (uint8_t)((p->se & 1) << 7 | t->bth1 | pad << 4);
	wire_put_be32(bth + 8, (uint32_t)(p->ackreq & 1) << 31 |
		      (p->psn & ROCE_PSN_MASK));
	p->op = op;
	encode_ext_headers(bth, p);
	p->padcnt = (uint8_t)pad;
	p->payload_off = (uint16_t)(t->bth_off + op->hdr_len);
	p->pkt_len = (uint32_t)total;
	return p->payload_off;
}

size_t
roce_tmpl_build_headers(const struct roce_tmpl *t, void *buf, size_t cap,
			struct roce_pkt *p)
{
	const uint8_t *bth = (const uint8_t *)buf + t->bth_off;

	if (roce_tmpl_write_headers(t, buf, cap, p) == 0)
		return 0;
	p->migreq = (uint8_t)roce_bth_get_migreq(bth);
	p->tver = (uint8_t)roce_bth_get_tver(bth);
	p->pkey = (uint16_t)roce_bth_get_pkey(bth);
	p->dest_qpn = t->dest_qpn;
	p->fecn = t->fecn;
	p->becn = t->becn;
	p->ip_version = t->ip_version;
	p->ip_dscp_ecn = t->ip_dscp_ecn;
	p->ip_ttl = t->ip_ttl;
	p->ip_flow_label = t->ip_flow_label;
	p->l3_off = t->l3_off;
	p->l4_off = t->l4_off;
	p->bth_off = t->bth_off;
	return p->payload_off;
}

/* the fields the ICRC masks, as set_variant_fields writes them */
static void
tmpl_variant_fields(const struct roce_tmpl *t, uint8_t *f, const struct roce_pkt *p,
		    bool ip_cksum_port)
{
	uint8_t *ip = f + t->l3_off;

	if (t->ip_version == 4) {
		ip[1] = t->ip_dscp_ecn;
		ip[8] = t->ip_ttl;
		wire_put_be16(ip + 10, ip_cksum_port ? 0 : p->ip_cksum);
	} else {
		wire_put_be32(ip, t->ip6_vtf);
		ip[7] = t->ip_ttl;
	}
	f[t->l4_off + 6] = f[t->l4_off + 7] = 0;
	f[t->bth_off + 4] = t->bth4;
}

void
roce_tmpl_finish(const struct roce_tmpl *t, void *buf, struct roce_pkt *p,
		 bool ip_cksum_port)
{
	uint8_t *f = buf;

	memset(f + p->payload_off + p->payload_len, 0, ROCE_ICRC_LEN);
	p->icrc = roce_icrc_premasked(f + t->l3_off, p->pkt_len - t->l3_off);
	roce_icrc_store(f + p->pkt_len - ROCE_ICRC_LEN, p->icrc);
	tmpl_variant_fields(t, f, p, ip_cksum_port);
}

/* The pad bytes and the ICRC of a split frame, into trailer. */
static void
split_trailer(const uint8_t *f, uint16_t l3_off, const void *payload,
	      uint8_t *trailer, struct roce_pkt *p)
{
	memset(trailer, 0, p->padcnt);
	p->icrc = roce_icrc_premasked_split(f + l3_off, (size_t)p->payload_off - l3_off,
					    payload, p->payload_len, p->padcnt);
	roce_icrc_store(trailer + p->padcnt, p->icrc);
}

void
roce_tmpl_finish_split(const struct roce_tmpl *t, void *hdr, const void *payload,
		       uint8_t *trailer, struct roce_pkt *p, bool ip_cksum_port)
{
	split_trailer(hdr, t->l3_off, payload, trailer, p);
	tmpl_variant_fields(t, hdr, p, ip_cksum_port);
}

static void
build_finish(void *buf, struct roce_pkt *p, bool ip_cksum_port)
{
	uint8_t *f = buf;
	uint8_t *icrc = f + p->pkt_len - ROCE_ICRC_LEN;

	/* the pad bytes (0..3): one constant-size store of 4 zero bytes, the
	 * ones past the pad lie in the ICRC field, written below */
	memset(f + p->payload_off + p->payload_len, 0, ROCE_ICRC_LEN);
	p->icrc = roce_icrc_premasked(f + p->l3_off, p->pkt_len - p->l3_off);
	roce_icrc_store(icrc, p->icrc);
	set_variant_fields(f, p, ip_cksum_port);
}

void
roce_build_finish(void *buf, struct roce_pkt *p)
{
	build_finish(buf, p, false);
}

void
roce_build_finish_ip_cksum_offload(void *buf, struct roce_pkt *p)
{
	build_finish(buf, p, true);
}

void
roce_build_finish_split(void *hdr, const void *payload, uint8_t *trailer,
			struct roce_pkt *p, bool ip_cksum_port)
{
	split_trailer(hdr, p->l3_off, payload, trailer, p);
	set_variant_fields(hdr, p, ip_cksum_port);
}

size_t
roce_build(void *buf, size_t cap, struct roce_pkt *p, const void *payload)
{
	size_t off = roce_build_headers(buf, cap, p);

	if (off == 0)
		return 0;
	if (p->payload_len != 0)
		memcpy((uint8_t *)buf + off, payload, p->payload_len);
	roce_build_finish(buf, p);
	return p->pkt_len;
}

void
roce_gid_from_ipv4(uint8_t gid[16], const uint8_t ipv4[4])
{
	memset(gid, 0, 10);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, ipv4, 4);
}

bool
roce_gid_is_ipv4(const uint8_t gid[16])
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

bool
roce_gid_is_mcast(const uint8_t gid[16])
{
	if (roce_gid_is_ipv4(gid))
		return (gid[12] & 0xf0) == 0xe0;
	return gid[0] == 0xff;
}

void
roce_mcast_mac(const uint8_t gid[16], uint8_t mac[6])
{
	if (roce_gid_is_ipv4(gid)) {
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5e;
		mac[3] = gid[13] & 0x7f;
		mac[4] = gid[14];
		mac[5] = gid[15];
	} else {
		mac[0] = 0x33;
		mac[1] = 0x33;
		memcpy(mac + 2, gid + 12, 4);
	}
}

uint16_t
roce_udp_sport(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t fl = (uint64_t)lqpn * rqpn;
	uint32_t label, low;

	/* fold the 64-bit product into a 20-bit flow label */
	fl ^= fl >> 20;
	fl ^= fl >> 40;
	label = (uint32_t)fl & 0xfffff;
	/* then the label into the 14 bits above 0xc000 */
	low = (label & 0x3fff) ^ (label >> 14);
	return (uint16_t)(0xc000 | low);
}

uint16_t
roce_udp_sport_fl(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn)
{
	uint32_t label = flow_label & 0xfffff;

	if (label == 0)
		return roce_udp_sport(lqpn, rqpn);
	return (uint16_t)(0xc000 | ((label & 0x3fff) ^ (label >> 14)));
}

bool
roce_ip_mark_ce(uint8_t *l3)
{
	uint16_t old_word, new_word;
	uint32_t sum;

	if ((l3[0] >> 4) == 6) {
		/* traffic class = bits 4..11 of the first word: ECN is bits 4..5 */
		if ((l3[1] & 0x30) == 0 || (l3[1] & 0x30) == 0x30)
			return false;
		l3[1] |= 0x30;
		return true;
	}
	if ((l3[1] & ROCE_ECN_MASK) == ROCE_ECN_NOT_ECT ||
	    (l3[1] & ROCE_ECN_MASK) == ROCE_ECN_CE)
		return false;
	old_word = wire_be16(l3);
	l3[1] |= ROCE_ECN_CE;
	new_word = wire_be16(l3);
	/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') */
	sum = (uint16_t)~wire_be16(l3 + 10) + (uint16_t)~old_word + new_word;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	wire_put_be16(l3 + 10, (uint16_t)~sum);
	return true;
}

void
roce_cnp_fill(struct roce_pkt *p, uint32_t dest_qpn, uint16_t pkey, uint8_t dscp)
{
	p->opcode = ROCE_OP_CNP;
	p->se = 0;
	p->migreq = 0;
	p->tver = 0;
	p->pkey = pkey;
	p->fecn = 0;
	p->becn = 1;	/* A17.9.3: set in a CNP */
	p->dest_qpn = dest_qpn & 0xffffff;
	p->ackreq = 0;
	p->psn = 0;
	p->payload_len = 0;
	p->ip_dscp_ecn = (uint8_t)(dscp << 2 | ROCE_ECN_NOT_ECT);
}
