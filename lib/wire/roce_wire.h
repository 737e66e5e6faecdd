/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/wire: RoCEv2 packets as bytes.  Parse a frame into a decoded
 * struct roce_pkt, build a frame from one, compute and verify the ICRC,
 * do 24-bit PSN arithmetic.  Pure C: no EAL, no allocation, no globals
 * beyond const tables, so unit tests and fuzzers run anywhere.
 *
 * Addresses are kept as 16-byte GIDs: an IPv4 address is stored
 * IPv4-mapped (::ffff:a.b.c.d), which is exactly the RoCEv2 GID of that
 * address, so the transport can compare packet addresses with GIDs.
 */
#ifndef ROCE_WIRE_H
#define ROCE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roce_hdr.h"
#include "roce_opcode.h"
#include "roce_psn.h"
#include "roce_icrc.h"

#define ROCE_ETH_HDR_LEN   14
#define ROCE_VLAN_HDR_LEN   4
#define ROCE_IPV4_HDR_LEN  20
#define ROCE_IPV6_HDR_LEN  40
#define ROCE_UDP_HDR_LEN    8

#define ROCE_ETHERTYPE_IPV4 0x0800
#define ROCE_ETHERTYPE_IPV6 0x86dd
#define ROCE_ETHERTYPE_VLAN 0x8100
#define ROCE_IPPROTO_UDP    17

/* Why a frame is not a well-formed RoCEv2 packet. X(enum suffix, text) */
#define ROCE_PARSE_ERRORS(X)						\
	X(OK,             "ok")						\
	X(TRUNCATED,      "frame shorter than its headers say")	\
	X(NOT_IP,         "not IPv4 or IPv6")				\
	X(BAD_IP_HDR,     "malformed IP header")			\
	X(BAD_IP_CSUM,    "IPv4 header checksum mismatch")		\
	X(IP_FRAGMENT,    "IP fragment")				\
	X(NOT_UDP,        "not UDP")					\
	X(NOT_ROCE_PORT,  "UDP destination port is not 4791")		\
	X(BAD_UDP_LEN,    "UDP length does not match the IP length")	\
	X(BAD_VERSION,    "BTH transport header version is not 0")	\
	X(UNKNOWN_OPCODE, "opcode not defined for RoCEv2")		\
	X(LEN_MISMATCH,   "length does not fit the opcode")		\
	X(BAD_PADCNT,     "bad pad count or unaligned payload")

enum roce_parse_err {
#define ROCE_PARSE_ENUM(e, s) ROCE_PARSE_##e,
	ROCE_PARSE_ERRORS(ROCE_PARSE_ENUM)
#undef ROCE_PARSE_ENUM
	ROCE_PARSE_ERR_MAX
};

const char *roce_parse_strerror(enum roce_parse_err err);

/*
 * A decoded RoCEv2 packet.  Offsets are from the start of the buffer given
 * to the parser (or written by the builder).  Extended-header fields are
 * valid only where op->mask has the header's bit.  Multi-byte values are in
 * host byte order.
 */
struct roce_pkt {
	/* layout */
	uint16_t l3_off;		/* IP header */
	uint16_t l4_off;		/* UDP header */
	uint16_t bth_off;		/* BTH; 0 until the frame is known to
					 * be UDP to port 4791 (roce_pkt_is_roce) */
	uint16_t payload_off;		/* first payload byte */
	uint32_t payload_len;		/* payload bytes, pad excluded */
	uint32_t pkt_len;		/* l3_off + IP total length */

	/* L2 (zero when parsed from L3) */
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	uint16_t vlan_tci;
	bool has_vlan;

	/* L3 */
	uint8_t ip_version;		/* 4 or 6 */
	uint8_t ip_dscp_ecn;		/* IPv4 TOS / IPv6 traffic class */
	uint8_t ip_ttl;			/* TTL / hop limit */
	uint8_t ip_df;			/* IPv4 don't-fragment bit */
	uint16_t ip_id;			/* IPv4 identification */
	uint16_t ip_cksum;		/* IPv4 header checksum as sent (0: IPv6);
					 * the builder derives it */
	uint32_t ip_flow_label;		/* IPv6 */
	uint8_t src_gid[16];
	uint8_t dst_gid[16];

	/* L4 */
	uint16_t udp_sport;
	uint16_t udp_dport;

	/* BTH */
	const struct roce_opcode_info *op;
	uint8_t opcode;
	uint8_t se;
	uint8_t migreq;
	uint8_t padcnt;
	uint8_t tver;
	uint8_t fecn;
	uint8_t becn;
	uint8_t ackreq;
	uint16_t pkey;
	uint32_t dest_qpn;
	uint32_t psn;

	/* extended headers */
	struct { uint64_t va; uint32_t rkey; uint32_t len; } reth;
	struct { uint8_t syndrome; uint32_t msn; } aeth;
	struct { uint64_t va; uint32_t rkey; uint64_t swap; uint64_t comp; } atmeth;
	uint64_t atmack_orig;
	uint32_t imm;			/* ImmDt as the 32-bit big-endian value */
	uint32_t ieth_rkey;
	struct { uint32_t qkey; uint32_t src_qpn; } deth;
	struct { uint8_t sel; uint8_t plt; } feth;

	uint32_t icrc;			/* as stored: little-endian on the wire */
};

/* True when the packet has extended header bit(s) m (enum roce_opcode_mask). */
static inline bool
roce_pkt_has(const struct roce_pkt *p, uint32_t m)
{
	return (p->op->mask & m) != 0;
}

/*
 * Parse an Ethernet frame (optionally one 802.1Q tag) carrying RoCEv2.
 * Reads only buf[0, len).  Bytes after the IP datagram (Ethernet padding)
 * are ignored.  Does not verify the ICRC: see roce_icrc_verify().  On
 * ROCE_PARSE_UNKNOWN_OPCODE the layout, the BTH fields and the ICRC are
 * filled (op is NULL; a BTH without room for an ICRC after it is
 * ROCE_PARSE_TRUNCATED), so roce_icrc_verify() tells a reserved opcode
 * from a corrupted frame.  Whatever the result, roce_pkt_is_roce() tells
 * whether the frame is RoCEv2 (malformed or not) or some other traffic.
 */
enum roce_parse_err roce_parse_eth(const void *buf, size_t len,
				   struct roce_pkt *pkt);
/*
 * The same for a frame whose IPv4 header checksum the port verified
 * (RTE_MBUF_F_RX_IP_CKSUM_GOOD): everything but that checksum is checked.
 */
enum roce_parse_err roce_parse_eth_cksum_ok(const void *buf, size_t len,
					    struct roce_pkt *pkt);

/*
 * After roce_parse_eth/roce_parse_ip: true when the frame is IP, not a
 * fragment, with a UDP header to port 4791 whose length matches the
 * datagram, i.e. RoCEv2 (its BTH may still be malformed); false for
 * everything a host stack handles (ARP, ICMP, other UDP ...) and for a
 * frame malformed before its UDP port could be trusted.
 */
static inline bool
roce_pkt_is_roce(const struct roce_pkt *p)
{
	return p->bth_off != 0;
}

/* The same, starting at the IP header (raw-IP captures, tunnels). */
enum roce_parse_err roce_parse_ip(const void *buf, size_t len,
				  struct roce_pkt *pkt);

/*
 * Parse the part from the BTH on (the UDP payload), of udp_payload_len
 * bytes.  Fills the BTH and extended-header fields, payload_off (relative
 * to bth) and payload_len.  Used by roce_parse_ip and by fuzzers.
 */
enum roce_parse_err roce_parse_bth(const uint8_t *bth, size_t udp_payload_len,
				   struct roce_pkt *pkt);

/*
 * Building.  Fill a struct roce_pkt with the L2/L3/L4 fields, opcode, BTH
 * and extended-header fields and payload_len (ip_version 4 or 6; op is
 * looked up from opcode; padcnt, lengths, offsets and checksums are
 * computed).  roce_build_headers() writes everything up to the payload and
 * returns the header length (== pkt->payload_off), or 0 when cap is too
 * small or the opcode/length is invalid.  The frame's total length is then
 * roce_frame_len(pkt).  Until roce_build_finish() the fields the ICRC masks
 * hold ones (so the ICRC takes one pass): the frame is not sendable before.
 */
size_t roce_build_headers(void *buf, size_t cap, struct roce_pkt *pkt);

/* Ethernet frame length of a built or parsed packet, ICRC included. */
static inline size_t
roce_frame_len(const struct roce_pkt *pkt)
{
	return pkt->pkt_len;
}

/*
 * Complete a frame whose headers were built and whose payload_len payload
 * bytes are in place at payload_off: write the pad bytes (zero) and the
 * ICRC.  buf must have roce_frame_len() bytes.
 */
void roce_build_finish(void *buf, struct roce_pkt *pkt);
/*
 * The same for a port that computes the IPv4 header checksum (DPDK's
 * RTE_MBUF_F_TX_IP_CKSUM): that field is left 0.  IPv6: as above.
 */
void roce_build_finish_ip_cksum_offload(void *buf, struct roce_pkt *pkt);

/*
 * Zero copy: a frame in three pieces, the headers in hdr (payload_off
 * bytes, as roce_build_headers wrote them; its cap may count the payload
 * and trailer that live elsewhere, it writes only the headers), the
 * payload_len payload bytes at payload, and trailer, which receives the
 * pad bytes and the ICRC (padcnt + ROCE_ICRC_LEN bytes).  The frame on
 * the wire is byte for byte roce_build_finish's (ip_cksum_port: as
 * roce_build_finish_ip_cksum_offload).
 */
void roce_build_finish_split(void *hdr, const void *payload, uint8_t *trailer,
			     struct roce_pkt *pkt, bool ip_cksum_port);

/* Headers + payload copy + finish, for contiguous buffers.  Returns the
 * frame length or 0 (see roce_build_headers). */
size_t roce_build(void *buf, size_t cap, struct roce_pkt *pkt,
		  const void *payload);

/*
 * Header templates.  Every packet of one flow (a connected QP's) has the
 * same Ethernet, IP and UDP headers but for the lengths, and the same BTH
 * but for opcode, SE, pad count, AckReq and PSN.  roce_tmpl_init() builds
 * those bytes once from a packet description (as roce_build_headers reads
 * it: addresses, TOS/TTL/flow label, DF, IP id, ports, P_Key, MigReq,
 * TVer, destination QP, FECN/BECN); roce_tmpl_build_headers() then writes
 * a packet's headers from the template and, of p, only opcode, se, ackreq,
 * psn, payload_len and the extended-header fields, and fills the rest of p
 * from the template (offsets, lengths and what roce_build_finish needs).
 * The frame is byte for byte what roce_build_headers would have written
 * for p with the template's fields.
 */
#define ROCE_TMPL_HDR_MAX (ROCE_ETH_HDR_LEN + ROCE_VLAN_HDR_LEN + \
			   ROCE_IPV6_HDR_LEN + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN)

struct roce_tmpl {
	uint8_t hdr[ROCE_TMPL_HDR_MAX];	/* Ethernet .. BTH, lengths unset */
	uint16_t l3_off;
	uint16_t l4_off;
	uint16_t bth_off;
	uint8_t ip_version;
	uint8_t ip_dscp_ecn;
	uint8_t ip_ttl;
	uint8_t fecn;
	uint8_t becn;
	uint32_t ip_flow_label;
	uint32_t dest_qpn;
	uint32_t ip_sum;		/* IPv4 header sum but the total length */
	uint32_t ip6_vtf;		/* IPv6: version, traffic class, flow label */
	uint8_t bth1;			/* BTH byte 1 but SE and PadCnt */
	uint8_t bth4;			/* BTH byte 4 as sent (FECN, BECN) */
};

/* Returns false (t unusable) when p could not be built (IP version). */
bool roce_tmpl_init(struct roce_tmpl *t, const struct roce_pkt *p);

/* Like roce_build_headers, from a template; returns the header length or
 * 0 when cap is too small or the opcode/length is invalid. */
size_t roce_tmpl_build_headers(const struct roce_tmpl *t, void *buf, size_t cap,
			       struct roce_pkt *p);

/*
 * The transmit fast path: a packet from the template patches the IP and
 * UDP lengths, the IPv4 checksum (the template's sum plus the length, RFC
 * 1624), the BTH's opcode, SE, PadCnt, AckReq and PSN and writes the
 * extended headers, and nothing else.  roce_tmpl_write_headers reads of p
 * only opcode, se, ackreq, psn, payload_len and the extended-header
 * fields, and writes only op, padcnt, payload_off, pkt_len and ip_cksum
 * (the other fields are the template's: roce_tmpl_build_headers fills
 * them in).  roce_tmpl_finish then completes the frame as
 * roce_build_finish (ip_cksum_port: as roce_build_finish_ip_cksum_offload)
 * from the template and those five fields.  The frame is byte for byte
 * roce_tmpl_build_headers + roce_build_finish's.
 */
size_t roce_tmpl_write_headers(const struct roce_tmpl *t, void *buf, size_t cap,
			       struct roce_pkt *p);
void roce_tmpl_finish(const struct roce_tmpl *t, void *buf, struct roce_pkt *p,
		      bool ip_cksum_port);
/* roce_build_finish_split for a packet from the template. */
void roce_tmpl_finish_split(const struct roce_tmpl *t, void *hdr, const void *payload,
			    uint8_t *trailer, struct roce_pkt *p, bool ip_cksum_port);

/*
 * Receive templates.  Every frame a connected QP receives from its peer
 * has the same bytes in most of its Ethernet, IP, UDP and BTH headers:
 * the destination MAC and EtherType, the IP version (IPv4: IHL, flags and
 * fragment offset, protocol), the addresses, next header, the UDP
 * destination port, the BTH's TVer, P_Key and destination QP.
 * roce_rx_tmpl_init() keeps those bytes (and a mask of them) from the
 * description of the frame the peer sends (as roce_build_headers reads
 * it: MACs, IP version, GIDs, DF, P_Key, destination QP; no VLAN).
 * roce_rx_tmpl_parse() compares a frame's fixed bytes with them (a masked
 * compare of 64-bit words), checks what varies (lengths, the IPv4 header
 * checksum unless cksum_ok, the opcode, pad count and payload length) and
 * decodes the rest: true when all of that holds, and then p is exactly
 * what roce_parse_eth (roce_parse_eth_cksum_ok with cksum_ok) writes for
 * the frame with ROCE_PARSE_OK.  False for any other frame (p untouched):
 * the full parse then gives its verdict.
 */
#define ROCE_RX_TMPL_WORDS 10		/* 80 bytes >= Ethernet + IPv6 + UDP + BTH */

struct roce_rx_tmpl {
	uint64_t val[ROCE_RX_TMPL_WORDS];	/* the fixed bytes, the rest 0 */
	uint64_t mask[ROCE_RX_TMPL_WORDS];	/* their bits */
	uint8_t ip_version;		/* 0: unusable, matches nothing */
	struct roce_pkt pkt;		/* the parse of the template's frame */
};

/* Returns false (t unusable: matches nothing) when p cannot be built or has a VLAN tag. */
bool roce_rx_tmpl_init(struct roce_rx_tmpl *t, const struct roce_pkt *p);
bool roce_rx_tmpl_parse(const struct roce_rx_tmpl *t, const void *buf, size_t len,
			bool cksum_ok, struct roce_pkt *p);
/*
 * The same for a p that holds what roce_rx_tmpl_parse or this wrote with
 * the same t (not re-initialised since) for an earlier frame: the fields t
 * fixes are not written again.  The verdict and, when true, p are the ones
 * roce_rx_tmpl_parse gives; false leaves p untouched (still that earlier
 * frame's parse).  The receive loop keeps its slots' parses across bursts
 * and so skips a ~190-byte copy per frame.
 */
bool roce_rx_tmpl_reparse(const struct roce_rx_tmpl *t, const void *buf, size_t len,
			  bool cksum_ok, struct roce_pkt *p);

/*
 * The destination QP of a frame if it is RoCEv2 over IPv4 or IPv6 without
 * a VLAN tag, read where its BTH would be (nothing else is checked: a
 * key to find a receive template by); false when the frame is too short
 * or of another EtherType.
 */
static inline bool
roce_peek_dest_qpn(const uint8_t *f, size_t len, uint32_t *qpn)
{
	size_t bth;

	if (len < ROCE_ETH_HDR_LEN)
		return false;
	if (f[12] == 0x08 && f[13] == 0x00)
		bth = ROCE_ETH_HDR_LEN + ROCE_IPV4_HDR_LEN + ROCE_UDP_HDR_LEN;
	else if (f[12] == 0x86 && f[13] == 0xdd)
		bth = ROCE_ETH_HDR_LEN + ROCE_IPV6_HDR_LEN + ROCE_UDP_HDR_LEN;
	else
		return false;
	if (len < bth + ROCE_BTH_LEN)
		return false;
	*qpn = (uint32_t)f[bth + 5] << 16 | (uint32_t)f[bth + 6] << 8 | f[bth + 7];
	return true;
}

/* Fill IPv4-mapped GID from an IPv4 address in network order bytes. */
void roce_gid_from_ipv4(uint8_t gid[16], const uint8_t ipv4[4]);
bool roce_gid_is_ipv4(const uint8_t gid[16]);

/*
 * Multicast (IBTA 10.5 and RoCEv2 annex A17.4.5.2: the MGID is the IP
 * group address): the DQPN of every multicast packet is the permissive
 * QPN; a GID is a group when it is IPv6 ff00::/8 or IPv4-mapped
 * 224.0.0.0/4 (the kernel's rdma_is_multicast_addr).
 */
#define ROCE_MCAST_QPN 0xffffffu
bool roce_gid_is_mcast(const uint8_t gid[16]);
/*
 * The Ethernet address of a group GID, as IP maps it (RFC 1112 6.4:
 * 01:00:5e and the low 23 bits of the IPv4 group; RFC 2464 7: 33:33 and
 * the low 32 bits of the IPv6 group).
 */
void roce_mcast_mac(const uint8_t gid[16], uint8_t mac[6]);

/*
 * The UDP source port Linux rxe derives for a QP pair: a 20-bit flow label
 * hashed from lqpn * rqpn, folded into 0xC000-0xFFFF (rdma_flow_label_to_udp_sport).
 */
uint16_t roce_udp_sport(uint32_t lqpn, uint32_t rqpn);
/*
 * The same from a flow label, as the kernel's rdma_get_udp_sport: a
 * nonzero label (the address vector's) is folded as it is, 0 means the
 * label hashed from the QPN pair (roce_udp_sport).
 */
uint16_t roce_udp_sport_fl(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn);

/*
 * ECN (RFC 3168): the low two bits of the IPv4 TOS / IPv6 traffic class
 * (ip_dscp_ecn).  RoCEv2 senders mark ECT(0); a congested switch turns an
 * ECT packet into CE; the receiver (notification point) answers CE with a
 * CNP.
 */
#define ROCE_ECN_MASK    0x3
#define ROCE_ECN_NOT_ECT 0x0
#define ROCE_ECN_ECT1    0x1
#define ROCE_ECN_ECT0    0x2
#define ROCE_ECN_CE      0x3

static inline uint8_t
roce_pkt_ecn(const struct roce_pkt *p)
{
	return p->ip_dscp_ecn & ROCE_ECN_MASK;
}

/*
 * Mark a frame's IP header (at l3, IPv4 or IPv6) CE, as a congested
 * switch does: only an ECT(0)/ECT(1) packet is marked (true); Not-ECT and
 * CE frames are left as they are (false).  The IPv4 header checksum is
 * updated incrementally (RFC 1624); the ICRC does not cover the TOS or
 * traffic class (annex A17.3.3 masks them), so it stays valid.
 */
bool roce_ip_mark_ce(uint8_t *l3);

/*
 * Congestion Notification Packet (RoCEv2 annex A17.9.3): a BTH with
 * opcode 0x81, FECN 0, BECN 1, SE/MigReq/PadCnt/TVer/AckReq 0, PSN 0,
 * the P_Key and the destination QP (the QP whose packets were marked, at
 * the sender of those packets), then 16 reserved bytes (zero) and the
 * ICRC.  roce_cnp_fill() turns p, whose addressing fields (MACs, GIDs,
 * ports, TTL, flow label) are set, into that CNP, with IP DSCP dscp and
 * ECN Not-ECT (a CNP is never marked); roce_build(p, NULL) then writes it
 * (roce_cnp_frame_len bytes without VLAN).
 */
void roce_cnp_fill(struct roce_pkt *p, uint32_t dest_qpn, uint16_t pkey, uint8_t dscp);

/* A parsed packet is a CNP (its BTH opcode, and only then). */
static inline bool
roce_pkt_is_cnp(const struct roce_pkt *p)
{
	return p->op != NULL && p->opcode == ROCE_OP_CNP;
}

#endif /* ROCE_WIRE_H */
