/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame -> struct roce_pkt.  Every length comes off the wire, so every
 * read is preceded by a check that the bytes are inside the buffer; the
 * IP and UDP lengths are checked against each other and against the
 * buffer before anything after them is looked at.
 */
#include <stddef.h>
#include <string.h>

#include "roce_wire.h"
#include "wire_private.h"

static const char *const parse_err_names[] = {
#define ROCE_PARSE_NAME(e, s) [ROCE_PARSE_##e] = s,
	ROCE_PARSE_ERRORS(ROCE_PARSE_NAME)
#undef ROCE_PARSE_NAME
};

const char *
roce_parse_strerror(enum roce_parse_err err)
{
	if ((unsigned int)err >= ROCE_PARSE_ERR_MAX)
		return "unknown parse error";
	return parse_err_names[err];
}

/* The extended-header fields, reth up to (not including) icrc: zero unless
 * the opcode carries the header. */
#define EXT_FIELDS_OFF offsetof(struct roce_pkt, reth)
#define EXT_FIELDS_LEN (offsetof(struct roce_pkt, icrc) - EXT_FIELDS_OFF)

/* The extended headers' bits of an opcode's mask (enum roce_opcode_mask). */
#define EXT_HDR_MASK (ROCE_OPM_DETH | ROCE_OPM_FETH | ROCE_OPM_RETH | ROCE_OPM_ATMETH | \
		      ROCE_OPM_AETH | ROCE_OPM_ATMACK | ROCE_OPM_IMM | ROCE_OPM_IETH)

/* The fields of the extended headers the opcode has; the others are left. */
static inline void
decode_present_headers(const uint8_t *bth, struct roce_pkt *p)
{
	const struct roce_opcode_info *op = p->op;
	const uint8_t *h;

	/* the common ones first: a RETH alone (WRITE ONLY/FIRST, READ
	 * request), an AETH alone (ACK, READ response) or none (MIDDLE) */
	switch (op->mask & EXT_HDR_MASK) {
	case 0:
		return;
	case ROCE_OPM_RETH:
		h = bth + op->off[ROCE_HDR_RETH];
		p->reth.va = roce_reth_get_va(h);
		p->reth.rkey = (uint32_t)roce_reth_get_rkey(h);
		p->reth.len = (uint32_t)roce_reth_get_len(h);
		return;
	case ROCE_OPM_AETH:
		h = bth + op->off[ROCE_HDR_AETH];
		p->aeth.syndrome = (uint8_t)roce_aeth_get_syndrome(h);
		p->aeth.msn = (uint32_t)roce_aeth_get_msn(h);
		return;
	default:
		break;
	}
	if (op->mask & ROCE_OPM_DETH) {
		h = bth + op->off[ROCE_HDR_DETH];
		p->deth.qkey = (uint32_t)roce_deth_get_qkey(h);
		p->deth.src_qpn = (uint32_t)roce_deth_get_sqp(h);
	}
	if (op->mask & ROCE_OPM_FETH) {
		h = bth + op->off[ROCE_HDR_FETH];
		p->feth.sel = (uint8_t)roce_feth_get_sel(h);
		p->feth.plt = (uint8_t)roce_feth_get_plt(h);
	}
	if (op->mask & ROCE_OPM_RETH) {
		h = bth + op->off[ROCE_HDR_RETH];
		p->reth.va = roce_reth_get_va(h);
		p->reth.rkey = (uint32_t)roce_reth_get_rkey(h);
		p->reth.len = (uint32_t)roce_reth_get_len(h);
	}
	if (op->mask & ROCE_OPM_ATMETH) {
		h = bth + op->off[ROCE_HDR_ATMETH];
		p->atmeth.va = roce_atmeth_get_va(h);
		p->atmeth.rkey = (uint32_t)roce_atmeth_get_rkey(h);
		p->atmeth.swap = roce_atmeth_get_swap(h);
		p->atmeth.comp = roce_atmeth_get_comp(h);
	}
	if (op->mask & ROCE_OPM_AETH) {
		h = bth + op->off[ROCE_HDR_AETH];
		p->aeth.syndrome = (uint8_t)roce_aeth_get_syndrome(h);
		p->aeth.msn = (uint32_t)roce_aeth_get_msn(h);
	}
	if (op->mask & ROCE_OPM_ATMACK)
		p->atmack_orig = roce_atmack_get_orig(bth + op->off[ROCE_HDR_ATMACK]);
	if (op->mask & ROCE_OPM_IMM)
		p->imm = (uint32_t)roce_imm_get_data(bth + op->off[ROCE_HDR_IMM]);
	if (op->mask & ROCE_OPM_IETH)
		p->ieth_rkey = (uint32_t)roce_ieth_get_rkey(bth + op->off[ROCE_HDR_IETH]);
}

static void
decode_ext_headers(const uint8_t *bth, struct roce_pkt *p)
{
	memset((uint8_t *)p + EXT_FIELDS_OFF, 0, EXT_FIELDS_LEN);
	decode_present_headers(bth, p);
}

/*
 * The payload length (pad excluded) of a packet of opcode op whose part
 * from the BTH on is n bytes (ICRC included) with pad count padcnt; set
 * before the FIXED8 check, as the parse reports it.
 */
static inline enum roce_parse_err
bth_payload_len(const struct roce_opcode_info *op, size_t n, unsigned int padcnt,
		uint32_t *payload_len)
{
	size_t data;

	if (n < (size_t)op->hdr_len + ROCE_ICRC_LEN)
		return ROCE_PARSE_LEN_MISMATCH;
	data = n - op->hdr_len - ROCE_ICRC_LEN;	/* payload + pad */
	if (!(op->mask & ROCE_OPM_PAYLOAD)) {
		if (data != 0)
			return ROCE_PARSE_LEN_MISMATCH;
		if (padcnt != 0)
			return ROCE_PARSE_BAD_PADCNT;
	} else if (data % 4 != 0 || padcnt > data) {
		return ROCE_PARSE_BAD_PADCNT;
	}
	*payload_len = (uint32_t)(data - padcnt);
	if ((op->mask & ROCE_OPM_FIXED8) && *payload_len != 8)
		return ROCE_PARSE_LEN_MISMATCH;
	return ROCE_PARSE_OK;
}

enum roce_parse_err
roce_parse_bth(const uint8_t *bth, size_t n, struct roce_pkt *p)
{
	const struct roce_opcode_info *op;
	enum roce_parse_err err;

	if (n < ROCE_BTH_LEN)
		return ROCE_PARSE_TRUNCATED;

	p->opcode = (uint8_t)roce_bth_get_opcode(bth);
	op = roce_opcode_get(p->opcode);
	p->se = (uint8_t)roce_bth_get_se(bth);
	p->migreq = (uint8_t)roce_bth_get_migreq(bth);
	p->padcnt = (uint8_t)roce_bth_get_padcnt(bth);
	p->tver = (uint8_t)roce_bth_get_tver(bth);
	p->pkey = (uint16_t)roce_bth_get_pkey(bth);
	p->fecn = (uint8_t)roce_bth_get_fecn(bth);
	p->becn = (uint8_t)roce_bth_get_becn(bth);
	p->dest_qpn = (uint32_t)roce_bth_get_destqp(bth);
	p->ackreq = (uint8_t)roce_bth_get_ackreq(bth);
	p->psn = (uint32_t)roce_bth_get_psn(bth);
	if (op->name == NULL) {
		/* the BTH and the ICRC still tell a receiver whether this is
		 * a reserved opcode or a corrupted frame */
		if (n < ROCE_BTH_LEN + ROCE_ICRC_LEN)
			return ROCE_PARSE_TRUNCATED;
		p->icrc = roce_icrc_load(bth + n - ROCE_ICRC_LEN);
		return ROCE_PARSE_UNKNOWN_OPCODE;
	}
	p->op = op;
	if (p->tver != 0)
		return ROCE_PARSE_BAD_VERSION;

	err = bth_payload_len(op, n, p->padcnt, &p->payload_len);
	if (err != ROCE_PARSE_OK)
		return err;
	decode_ext_headers(bth, p);
	p->icrc = roce_icrc_load(bth + n - ROCE_ICRC_LEN);
	return ROCE_PARSE_OK;
}

/* roce_gid_from_ipv4, inlined: the ::ffff:0:0/96 prefix and the address. */
static inline void
gid_from_ipv4(uint8_t gid[16], const uint8_t ipv4[4])
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	memcpy(gid, prefix, sizeof(prefix));
	memcpy(gid + 12, ipv4, 4);
}

static enum roce_parse_err
parse_ipv4(const uint8_t *ip, size_t avail, bool cksum_ok, struct roce_pkt *p,
	   size_t *hdr_len, size_t *datagram_len)
{
	size_t ihl, tot;
	uint16_t frag;

	if (avail < ROCE_IPV4_HDR_LEN)
		return ROCE_PARSE_TRUNCATED;
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	tot = wire_be16(ip + 2);
	if (ihl < ROCE_IPV4_HDR_LEN || tot < ihl)
		return ROCE_PARSE_BAD_IP_HDR;
	if (tot > avail)
		return ROCE_PARSE_TRUNCATED;
	if (!cksum_ok && wire_ipv4_cksum(ip, ihl) != 0)
		return ROCE_PARSE_BAD_IP_CSUM;
	frag = wire_be16(ip + 6);
	if (frag & 0x3fff)		/* MF or a fragment offset */
		return ROCE_PARSE_IP_FRAGMENT;
	if (ip[9] != ROCE_IPPROTO_UDP)
		return ROCE_PARSE_NOT_UDP;

	p->ip_dscp_ecn = ip[1];
	p->ip_id = wire_be16(ip + 4);
	p->ip_cksum = wire_be16(ip + 10);
	p->ip_df = (frag & 0x4000) != 0;
	p->ip_ttl = ip[8];
	p->ip_flow_label = 0;
	gid_from_ipv4(p->src_gid, ip + 12);
	gid_from_ipv4(p->dst_gid, ip + 16);
	*hdr_len = ihl;
	*datagram_len = tot;
	return ROCE_PARSE_OK;
}

static enum roce_parse_err
parse_ipv6(const uint8_t *ip, size_t avail, struct roce_pkt *p,
	   size_t *hdr_len, size_t *datagram_len)
{
	uint32_t vtf;
	size_t tot;

	if (avail < ROCE_IPV6_HDR_LEN)
		return ROCE_PARSE_TRUNCATED;
	tot = ROCE_IPV6_HDR_LEN + (size_t)wire_be16(ip + 4);
	if (tot > avail)
		return ROCE_PARSE_TRUNCATED;
	/* RoCEv2 puts UDP right after the fixed header: no extension headers. */
	if (ip[6] != ROCE_IPPROTO_UDP)
		return ROCE_PARSE_NOT_UDP;

	vtf = wire_be32(ip);
	p->ip_dscp_ecn = (uint8_t)(vtf >> 20);
	p->ip_flow_label = vtf & 0xfffff;
	p->ip_ttl = ip[7];
	p->ip_df = 0;
	p->ip_id = 0;
	p->ip_cksum = 0;
	memcpy(p->src_gid, ip + 8, 16);
	memcpy(p->dst_gid, ip + 24, 16);
	*hdr_len = ROCE_IPV6_HDR_LEN;
	*datagram_len = tot;
	return ROCE_PARSE_OK;
}

/*
 * Parse from the IP header at frame + l3_off; frame has len bytes.  When
 * the Ethernet type named the IP version, want_version must match it.
 * cksum_ok: the port verified the IPv4 header checksum.
 */
static enum roce_parse_err
parse_from_l3(const uint8_t *frame, size_t len, size_t l3_off,
	      unsigned int want_version, bool cksum_ok, struct roce_pkt *p)
{
	const uint8_t *ip = frame + l3_off;
	size_t avail = len - l3_off;
	size_t ip_hdr_len, datagram_len, udp_len;
	enum roce_parse_err err;
	const uint8_t *udp;

	p->bth_off = 0;			/* roce_pkt_is_roce: not yet */
	if (avail < 1)
		return ROCE_PARSE_TRUNCATED;
	p->ip_version = ip[0] >> 4;
	if (want_version != 0 && p->ip_version != want_version)
		return ROCE_PARSE_BAD_IP_HDR;
	if (p->ip_version == 4)
		err = parse_ipv4(ip, avail, cksum_ok, p, &ip_hdr_len, &datagram_len);
	else if (p->ip_version == 6)
		err = parse_ipv6(ip, avail, p, &ip_hdr_len, &datagram_len);
	else
		err = ROCE_PARSE_BAD_IP_HDR;
	if (err != ROCE_PARSE_OK)
		return err;

	if (datagram_len - ip_hdr_len < ROCE_UDP_HDR_LEN)
		return ROCE_PARSE_TRUNCATED;
	udp = ip + ip_hdr_len;
	udp_len = wire_be16(udp + 4);
	if (udp_len != datagram_len - ip_hdr_len)
		return ROCE_PARSE_BAD_UDP_LEN;
	p->udp_sport = wire_be16(udp);
	p->udp_dport = wire_be16(udp + 2);
	if (p->udp_dport != ROCE_UDP_PORT)
		return ROCE_PARSE_NOT_ROCE_PORT;

	p->l3_off = (uint16_t)l3_off;
	p->l4_off = (uint16_t)(l3_off + ip_hdr_len);
	p->bth_off = (uint16_t)(p->l4_off + ROCE_UDP_HDR_LEN);
	p->pkt_len = (uint32_t)(l3_off + datagram_len);

	err = roce_parse_bth(frame + p->bth_off, udp_len - ROCE_UDP_HDR_LEN, p);
	if (err != ROCE_PARSE_OK)
		return err;
	p->payload_off = (uint16_t)(p->bth_off + p->op->hdr_len);
	return ROCE_PARSE_OK;
}

/*
 * Every field a successful parse does not write: the L2 fields (zero when
 * parsed from L3, set by roce_parse_eth) and op.  The extended-header
 * fields are zeroed in decode_ext_headers; everything else is written on
 * the way to ROCE_PARSE_OK.  Clearing the whole ~200-byte struct per packet
 * showed in the transport's profile.
 */
static void
reset_pkt(struct roce_pkt *p)
{
	memset(p->dst_mac, 0, sizeof(p->dst_mac));
	memset(p->src_mac, 0, sizeof(p->src_mac));
	p->vlan_tci = 0;
	p->has_vlan = false;
	p->op = NULL;
}

enum roce_parse_err
roce_parse_ip(const void *buf, size_t len, struct roce_pkt *p)
{
	reset_pkt(p);
	return parse_from_l3(buf, len, 0, 0, false, p);
}

static enum roce_parse_err
parse_eth(const void *buf, size_t len, bool cksum_ok, struct roce_pkt *p)
{
	const uint8_t *f = buf;
	size_t l3_off = ROCE_ETH_HDR_LEN;
	uint16_t type;

	p->vlan_tci = 0;
	p->has_vlan = false;
	p->op = NULL;
	p->bth_off = 0;
	if (len < ROCE_ETH_HDR_LEN) {
		memset(p->dst_mac, 0, sizeof(p->dst_mac));
		memset(p->src_mac, 0, sizeof(p->src_mac));
		return ROCE_PARSE_TRUNCATED;
	}
	memcpy(p->dst_mac, f, 6);
	memcpy(p->src_mac, f + 6, 6);
	type = wire_be16(f + 12);
	if (type == ROCE_ETHERTYPE_VLAN) {
		if (len < ROCE_ETH_HDR_LEN + ROCE_VLAN_HDR_LEN)
			return ROCE_PARSE_TRUNCATED;
		p->has_vlan = true;
		p->vlan_tci = wire_be16(f + 14);
		type = wire_be16(f + 16);
		l3_off += ROCE_VLAN_HDR_LEN;
	}
	if (type != ROCE_ETHERTYPE_IPV4 && type != ROCE_ETHERTYPE_IPV6)
		return ROCE_PARSE_NOT_IP;
	return parse_from_l3(f, len, l3_off,
			     type == ROCE_ETHERTYPE_IPV4 ? 4 : 6, cksum_ok, p);
}

enum roce_parse_err
roce_parse_eth(const void *buf, size_t len, struct roce_pkt *p)
{
	return parse_eth(buf, len, false, p);
}

enum roce_parse_err
roce_parse_eth_cksum_ok(const void *buf, size_t len, struct roce_pkt *p)
{
	return parse_eth(buf, len, true, p);
}

/*
 * Receive templates.  The expected frame is built (roce_build_headers) and
 * parsed back (parse_eth), so every field the template hands out is what
 * the full parse of a matching frame yields, by construction.
 */

/* The bytes of the header prefix a frame of one flow may vary in (per byte:
 * the bits not compared), from the IP header on. */
static void
rx_tmpl_mask_varying(uint8_t *keep, size_t l3, size_t l4, size_t bth, int ipv)
{
	static const uint8_t v4_vary[] = { 1, 2, 3, 4, 5, 8, 10, 11 };
	static const uint8_t v6_vary[] = { 1, 2, 3, 4, 5, 7 };

	memset(keep + 6, 0, 6);			/* source MAC */
	if (ipv == 4) {
		/* TOS, total length, id, TTL, checksum */
		for (size_t i = 0; i < sizeof(v4_vary); i++)
			keep[l3 + v4_vary[i]] = 0;
	} else {
		/* traffic class and flow label, payload length, hop limit */
		keep[l3] = 0xf0;
		for (size_t i = 0; i < sizeof(v6_vary); i++)
			keep[l3 + v6_vary[i]] = 0;
	}
	memset(keep + l4, 0, 2);		/* UDP source port */
	memset(keep + l4 + 4, 0, 4);		/* UDP length, checksum */
	keep[bth] = 0;				/* opcode */
	keep[bth + 1] = 0x0f;			/* SE, MigReq, PadCnt vary; TVer 0 */
	keep[bth + 4] = 0;			/* FECN, BECN, resv6a */
	memset(keep + bth + 8, 0, 4);		/* AckReq, resv7, PSN */
}

bool
roce_rx_tmpl_init(struct roce_rx_tmpl *t, const struct roce_pkt *p)
{
	uint8_t frame[ROCE_RX_TMPL_WORDS * 8 + 64];
	uint8_t keep[ROCE_RX_TMPL_WORDS * 8];
	struct roce_pkt q = *p;
	struct roce_pkt *r = &t->pkt;
	size_t prefix;

	memset(t, 0, sizeof(*t));
	if (p->has_vlan)
		return false;
	q.opcode = ROCE_OP_ACKNOWLEDGE;
	q.payload_len = 0;
	q.tver = 0;
	q.udp_dport = ROCE_UDP_PORT;
	memset(frame, 0, sizeof(frame));
	if (roce_build_headers(frame, sizeof(frame), &q) == 0)
		return false;
	roce_build_finish(frame, &q);
	if (parse_eth(frame, roce_frame_len(&q), false, r) != ROCE_PARSE_OK) {
		memset(t, 0, sizeof(*t));
		return false;
	}

	/* copied into every packet parsed by the template: no header's */
	memset((uint8_t *)r + EXT_FIELDS_OFF, 0, EXT_FIELDS_LEN);
	prefix = (size_t)r->bth_off + ROCE_BTH_LEN;
	memset(keep, 0xff, prefix);
	memset(keep + prefix, 0, sizeof(keep) - prefix);
	rx_tmpl_mask_varying(keep, r->l3_off, r->l4_off, r->bth_off, r->ip_version);
	for (size_t i = 0; i < ROCE_RX_TMPL_WORDS; i++) {
		uint64_t v, k;

		memcpy(&v, frame + 8 * i, 8);
		memcpy(&k, keep + 8 * i, 8);
		t->val[i] = v & k;
		t->mask[i] = k;
	}
	t->ip_version = r->ip_version;
	return true;
}

/* Word i of the frame against the template's: nonzero where they differ. */
static inline uint64_t
rx_tmpl_diff(const struct roce_rx_tmpl *t, const uint8_t *f, unsigned int i)
{
	uint64_t w;

	memcpy(&w, f + 8 * i, 8);
	return (w & t->mask[i]) ^ t->val[i];
}

/* The frame's fixed bytes equal the template's: a masked compare, unrolled. */
static inline bool
rx_tmpl_match_v4(const struct roce_rx_tmpl *t, const uint8_t *f)
{
	return (rx_tmpl_diff(t, f, 0) | rx_tmpl_diff(t, f, 1) | rx_tmpl_diff(t, f, 2) |
		rx_tmpl_diff(t, f, 3) | rx_tmpl_diff(t, f, 4) | rx_tmpl_diff(t, f, 5) |
		rx_tmpl_diff(t, f, 6)) == 0;
}

static inline bool
rx_tmpl_match_v6(const struct roce_rx_tmpl *t, const uint8_t *f)
{
	return (rx_tmpl_diff(t, f, 0) | rx_tmpl_diff(t, f, 1) | rx_tmpl_diff(t, f, 2) |
		rx_tmpl_diff(t, f, 3) | rx_tmpl_diff(t, f, 4) | rx_tmpl_diff(t, f, 5) |
		rx_tmpl_diff(t, f, 6) | rx_tmpl_diff(t, f, 7) | rx_tmpl_diff(t, f, 8) |
		rx_tmpl_diff(t, f, 9)) == 0;
}

/* Words compared: the prefix up to the BTH's end, rounded up. */
#define RX_TMPL_WORDS_V4 ((ROCE_ETH_HDR_LEN + ROCE_IPV4_HDR_LEN + ROCE_UDP_HDR_LEN + \
			   ROCE_BTH_LEN + 7) / 8)
#define RX_TMPL_WORDS_V6 ((ROCE_ETH_HDR_LEN + ROCE_IPV6_HDR_LEN + ROCE_UDP_HDR_LEN + \
			   ROCE_BTH_LEN + 7) / 8)
_Static_assert(RX_TMPL_WORDS_V4 == 7 && RX_TMPL_WORDS_V6 == 10 &&
	       RX_TMPL_WORDS_V6 <= ROCE_RX_TMPL_WORDS, "rx_tmpl_match_v4/v6 unrolled");

/*
 * again: p holds what this wrote with t for an earlier frame, so the fields
 * t fixes are in place (the ~190-byte copy skipped) and only the extended
 * headers that frame had and this one has not are cleared.
 */
static inline bool
rx_tmpl_parse(const struct roce_rx_tmpl *t, const void *buf, size_t len,
	      bool cksum_ok, struct roce_pkt *p, bool again)
{
	const uint8_t *f = buf;
	const struct roce_pkt *tp = &t->pkt;
	const uint8_t *ip = f + tp->l3_off;
	const uint8_t *bth = f + tp->bth_off;
	const struct roce_opcode_info *op;
	size_t tot, udp_len;
	uint32_t payload_len, w8;
	uint8_t b1, b4;

	/* the fixed bytes, then the checks of the full parse on the others
	 * (lengths, the IPv4 checksum, the opcode and what it implies) */
	if (t->ip_version == 4) {
		if (len < RX_TMPL_WORDS_V4 * 8 || !rx_tmpl_match_v4(t, f))
			return false;
		tot = wire_be16(ip + 2);
		if (!cksum_ok && wire_ipv4_cksum(ip, ROCE_IPV4_HDR_LEN) != 0)
			return false;
	} else if (t->ip_version == 6) {
		if (len < RX_TMPL_WORDS_V6 * 8 || !rx_tmpl_match_v6(t, f))
			return false;
		tot = ROCE_IPV6_HDR_LEN + (size_t)wire_be16(ip + 4);
	} else {
		return false;		/* an unusable template */
	}
	if (tot > len - tp->l3_off)
		return false;
	udp_len = wire_be16(f + tp->l4_off + 4);
	/* (a total length below the IP header's never equals it) */
	if (udp_len != tot - (size_t)(tp->l4_off - tp->l3_off) ||
	    udp_len < ROCE_UDP_HDR_LEN + ROCE_BTH_LEN)
		return false;
	op = roce_opcode_get(bth[0]);
	b1 = bth[1];
	if (op->name == NULL ||
	    bth_payload_len(op, udp_len - ROCE_UDP_HDR_LEN, (b1 >> 4) & 3,
			    &payload_len) != ROCE_PARSE_OK)
		return false;

	/* the fields the template fixes (the extended headers' zero), then
	 * the others from the frame */
	if (!again)
		memcpy(p, tp, offsetof(struct roce_pkt, icrc));
	else if (p->op->mask & ~op->mask & EXT_HDR_MASK)
		memset((uint8_t *)p + EXT_FIELDS_OFF, 0, EXT_FIELDS_LEN);
	memcpy(p->src_mac, f + 6, 6);
	if (t->ip_version == 4) {
		p->ip_dscp_ecn = ip[1];
		p->ip_id = wire_be16(ip + 4);
		p->ip_cksum = wire_be16(ip + 10);
		p->ip_ttl = ip[8];
	} else {
		uint32_t vtf = wire_be32(ip);

		p->ip_dscp_ecn = (uint8_t)(vtf >> 20);
		p->ip_flow_label = vtf & 0xfffff;
		p->ip_ttl = ip[7];
	}
	p->udp_sport = wire_be16(f + tp->l4_off);
	p->pkt_len = (uint32_t)(tp->l3_off + tot);
	p->payload_len = payload_len;
	p->payload_off = (uint16_t)(tp->bth_off + op->hdr_len);
	p->op = op;
	p->opcode = bth[0];
	p->se = b1 >> 7;
	p->migreq = (b1 >> 6) & 1;
	p->padcnt = (b1 >> 4) & 3;
	b4 = bth[4];
	p->fecn = b4 >> 7;
	p->becn = (b4 >> 6) & 1;
	w8 = wire_be32(bth + 8);
	p->ackreq = (uint8_t)(w8 >> 31);
	p->psn = w8 & ROCE_PSN_MASK;
	decode_present_headers(bth, p);
	p->icrc = roce_icrc_load(f + p->pkt_len - ROCE_ICRC_LEN);
	return true;
}

bool
roce_rx_tmpl_parse(const struct roce_rx_tmpl *t, const void *buf, size_t len,
		   bool cksum_ok, struct roce_pkt *p)
{
	return rx_tmpl_parse(t, buf, len, cksum_ok, p, false);
}

bool
roce_rx_tmpl_reparse(const struct roce_rx_tmpl *t, const void *buf, size_t len,
		     bool cksum_ok, struct roce_pkt *p)
{
	return rx_tmpl_parse(t, buf, len, cksum_ok, p, true);
}
