/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The opcode table (IBTA 1.5 vol 1 table 38 and section 9.2; FLUSH and
 * ATOMIC_WRITE from the 1.5 memory-placement extensions; CNP from the
 * RoCEv2 annex A17.9.3).  Offsets are derived from the header mask in wire
 * order, so an entry only states which headers it has; the unit test checks
 * the derived offsets against the spec for every opcode.
 */
#include "roce_opcode.h"

/* Length of header h when present in mask m. */
#define HLEN(m, h, len) (((m) & (1u << (h))) ? (len) : 0)

#define OFF_DETH(m)   ROCE_BTH_LEN
#define OFF_FETH(m)   (OFF_DETH(m) + HLEN(m, ROCE_HDR_DETH, ROCE_DETH_LEN))
#define OFF_RETH(m)   (OFF_FETH(m) + HLEN(m, ROCE_HDR_FETH, ROCE_FETH_LEN))
#define OFF_ATMETH(m) (OFF_RETH(m) + HLEN(m, ROCE_HDR_RETH, ROCE_RETH_LEN))
#define OFF_AETH(m)   (OFF_ATMETH(m) + HLEN(m, ROCE_HDR_ATMETH, ROCE_ATMETH_LEN))
#define OFF_ATMACK(m) (OFF_AETH(m) + HLEN(m, ROCE_HDR_AETH, ROCE_AETH_LEN))
#define OFF_IMM(m)    (OFF_ATMACK(m) + HLEN(m, ROCE_HDR_ATMACK, ROCE_ATMACK_LEN))
#define OFF_IETH(m)   (OFF_IMM(m) + HLEN(m, ROCE_HDR_IMM, ROCE_IMM_LEN))
#define OFF_CNP(m)    (OFF_IETH(m) + HLEN(m, ROCE_HDR_IETH, ROCE_IETH_LEN))
#define OFF_END(m)    (OFF_CNP(m) + HLEN(m, ROCE_HDR_CNP, ROCE_CNP_RSVD_LEN))

#define OP(code, str, m) [code] = {					\
	.name = (str),							\
	.mask = (m),							\
	.hdr_len = OFF_END(m),						\
	.off = {							\
		[ROCE_HDR_DETH] = OFF_DETH(m),				\
		[ROCE_HDR_FETH] = OFF_FETH(m),				\
		[ROCE_HDR_RETH] = OFF_RETH(m),				\
		[ROCE_HDR_ATMETH] = OFF_ATMETH(m),			\
		[ROCE_HDR_AETH] = OFF_AETH(m),				\
		[ROCE_HDR_ATMACK] = OFF_ATMACK(m),			\
		[ROCE_HDR_IMM] = OFF_IMM(m),				\
		[ROCE_HDR_IETH] = OFF_IETH(m),				\
		[ROCE_HDR_CNP] = OFF_CNP(m),				\
	},								\
}

/* Shorthands for the masks the table repeats. */
#define REQ_SEND (ROCE_OPM_REQ | ROCE_OPM_SEND | ROCE_OPM_PAYLOAD)
#define REQ_WRITE (ROCE_OPM_REQ | ROCE_OPM_WRITE | ROCE_OPM_PAYLOAD)
#define RD_RESP (ROCE_OPM_RESP | ROCE_OPM_READ | ROCE_OPM_PAYLOAD)
#define RWR ROCE_OPM_RWR
#define F ROCE_OPM_FIRST
#define M ROCE_OPM_MIDDLE
#define L ROCE_OPM_LAST
#define O ROCE_OPM_ONLY

/*
 * SEND and RDMA WRITE opcodes exist for RC (base 0x00) and UC (base 0x20)
 * with the same layout; one macro emits a service's twelve entries.
 */
#define SEND_WRITE_OPS(base, svc)					\
	OP((base) + 0x00, svc " SEND_FIRST", REQ_SEND | RWR | F),		\
	OP((base) + 0x01, svc " SEND_MIDDLE", REQ_SEND | RWR | M),		\
	OP((base) + 0x02, svc " SEND_LAST", REQ_SEND | RWR | L),		\
	OP((base) + 0x03, svc " SEND_LAST_WITH_IMMEDIATE",			\
	   REQ_SEND | RWR | L | ROCE_OPM_IMM),					\
	OP((base) + 0x04, svc " SEND_ONLY", REQ_SEND | RWR | O),		\
	OP((base) + 0x05, svc " SEND_ONLY_WITH_IMMEDIATE",			\
	   REQ_SEND | RWR | O | ROCE_OPM_IMM),					\
	OP((base) + 0x06, svc " RDMA_WRITE_FIRST",				\
	   REQ_WRITE | F | ROCE_OPM_RETH),					\
	OP((base) + 0x07, svc " RDMA_WRITE_MIDDLE", REQ_WRITE | M),		\
	OP((base) + 0x08, svc " RDMA_WRITE_LAST", REQ_WRITE | L),		\
	OP((base) + 0x09, svc " RDMA_WRITE_LAST_WITH_IMMEDIATE",		\
	   REQ_WRITE | RWR | L | ROCE_OPM_IMM),					\
	OP((base) + 0x0a, svc " RDMA_WRITE_ONLY",				\
	   REQ_WRITE | O | ROCE_OPM_RETH),					\
	OP((base) + 0x0b, svc " RDMA_WRITE_ONLY_WITH_IMMEDIATE",		\
	   REQ_WRITE | RWR | O | ROCE_OPM_RETH | ROCE_OPM_IMM)

const struct roce_opcode_info roce_opcode_table[256] = {
	SEND_WRITE_OPS(0x00, "RC"),
	OP(0x0c, "RC RDMA_READ_REQUEST",
	   ROCE_OPM_REQ | ROCE_OPM_READ | O | ROCE_OPM_RETH),
	OP(0x0d, "RC RDMA_READ_RESPONSE_FIRST", RD_RESP | F | ROCE_OPM_AETH),
	OP(0x0e, "RC RDMA_READ_RESPONSE_MIDDLE", RD_RESP | M),
	OP(0x0f, "RC RDMA_READ_RESPONSE_LAST", RD_RESP | L | ROCE_OPM_AETH),
	OP(0x10, "RC RDMA_READ_RESPONSE_ONLY", RD_RESP | O | ROCE_OPM_AETH),
	OP(0x11, "RC ACKNOWLEDGE",
	   ROCE_OPM_RESP | ROCE_OPM_ACK | O | ROCE_OPM_AETH),
	OP(0x12, "RC ATOMIC_ACKNOWLEDGE",
	   ROCE_OPM_RESP | ROCE_OPM_ACK | O | ROCE_OPM_AETH | ROCE_OPM_ATMACK),
	OP(0x13, "RC COMPARE_SWAP",
	   ROCE_OPM_REQ | ROCE_OPM_ATOMIC | O | ROCE_OPM_ATMETH),
	OP(0x14, "RC FETCH_ADD",
	   ROCE_OPM_REQ | ROCE_OPM_ATOMIC | O | ROCE_OPM_ATMETH),
	/* 0x15 is reserved for RC */
	OP(0x16, "RC SEND_LAST_WITH_INVALIDATE",
	   REQ_SEND | RWR | L | ROCE_OPM_IETH),
	OP(0x17, "RC SEND_ONLY_WITH_INVALIDATE",
	   REQ_SEND | RWR | O | ROCE_OPM_IETH),
	OP(0x1c, "RC FLUSH",
	   ROCE_OPM_REQ | ROCE_OPM_FLUSH | O | ROCE_OPM_FETH | ROCE_OPM_RETH),
	OP(0x1d, "RC ATOMIC_WRITE",
	   ROCE_OPM_REQ | ROCE_OPM_ATMWRITE | O | ROCE_OPM_RETH |
	   ROCE_OPM_PAYLOAD | ROCE_OPM_FIXED8),

	SEND_WRITE_OPS(0x20, "UC"),

	OP(0x64, "UD SEND_ONLY", REQ_SEND | RWR | O | ROCE_OPM_DETH),
	OP(0x65, "UD SEND_ONLY_WITH_IMMEDIATE",
	   REQ_SEND | RWR | O | ROCE_OPM_DETH | ROCE_OPM_IMM),

	OP(0x81, "CNP", ROCE_OPM_CNP | ROCE_OPM_CNP_RSVD),
};

const char *
roce_opcode_name(uint8_t opcode)
{
	const char *name = roce_opcode_table[opcode].name;

	return name != NULL ? name : "UNKNOWN";
}
