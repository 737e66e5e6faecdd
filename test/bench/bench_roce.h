/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RoCEv2 RDMA WRITE packet the baselines build (tp_bench's copy+ICRC
 * limit, raw_fwd -w's ceiling): IPv4 198.18.0.1 -> 198.18.0.2, UDP 4791,
 * default P_Key, QP 0x12.  Only lib/wire: no DPDK.
 */
#ifndef BENCH_ROCE_H
#define BENCH_ROCE_H

#include <string.h>

#include "roce_hdr.h"
#include "roce_wire.h"

static inline void
bench_write_pkt(struct roce_pkt *p, uint8_t opcode, uint32_t payload_len)
{
	const uint8_t ipa[4] = { 198, 18, 0, 1 }, ipb[4] = { 198, 18, 0, 2 };

	memset(p, 0, sizeof(*p));
	p->ip_version = 4;
	p->ip_ttl = 64;
	p->ip_df = 1;
	roce_gid_from_ipv4(p->src_gid, ipa);
	roce_gid_from_ipv4(p->dst_gid, ipb);
	p->udp_dport = ROCE_UDP_PORT;
	p->udp_sport = 0xc000;
	p->opcode = opcode;
	p->pkey = 0xffff;
	p->dest_qpn = 0x12;
	p->reth.len = payload_len;
	p->payload_len = payload_len;
}

#endif
