/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RoCEv2 opcode table: one entry per BTH opcode, saying which extended
 * headers follow the BTH (and where), whether a payload may follow, where
 * the packet sits in its message and what kind of operation it carries.
 * Parsing, building, the transport and droce-dump all test mask bits of
 * this table rather than lists of opcodes.
 */
#ifndef ROCE_OPCODE_H
#define ROCE_OPCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roce_hdr.h"

/* Extended headers, in the order they follow the BTH on the wire. */
enum roce_hdr {
	ROCE_HDR_DETH,
	ROCE_HDR_FETH,
	ROCE_HDR_RETH,
	ROCE_HDR_ATMETH,
	ROCE_HDR_AETH,
	ROCE_HDR_ATMACK,
	ROCE_HDR_IMM,
	ROCE_HDR_IETH,
	ROCE_HDR_CNP,
	ROCE_HDR_MAX,
};

enum roce_opcode_mask {
	/* which extended headers are present: bit n = enum roce_hdr n */
	ROCE_OPM_DETH     = 1u << ROCE_HDR_DETH,
	ROCE_OPM_FETH     = 1u << ROCE_HDR_FETH,
	ROCE_OPM_RETH     = 1u << ROCE_HDR_RETH,
	ROCE_OPM_ATMETH   = 1u << ROCE_HDR_ATMETH,
	ROCE_OPM_AETH     = 1u << ROCE_HDR_AETH,
	ROCE_OPM_ATMACK   = 1u << ROCE_HDR_ATMACK,
	ROCE_OPM_IMM      = 1u << ROCE_HDR_IMM,
	ROCE_OPM_IETH     = 1u << ROCE_HDR_IETH,
	ROCE_OPM_CNP_RSVD = 1u << ROCE_HDR_CNP,
	ROCE_OPM_HDRS     = (1u << ROCE_HDR_MAX) - 1,

	ROCE_OPM_PAYLOAD  = 1u << 12,	/* data may follow the headers */
	ROCE_OPM_REQ      = 1u << 13,	/* requester -> responder */
	ROCE_OPM_RESP     = 1u << 14,	/* responder -> requester */
	ROCE_OPM_FIRST    = 1u << 15,	/* starts a message */
	ROCE_OPM_MIDDLE   = 1u << 16,
	ROCE_OPM_LAST     = 1u << 17,	/* ends a message */
	ROCE_OPM_ONLY     = ROCE_OPM_FIRST | ROCE_OPM_LAST,

	/* operation class */
	ROCE_OPM_SEND     = 1u << 18,
	ROCE_OPM_WRITE    = 1u << 19,
	ROCE_OPM_READ     = 1u << 20,	/* READ request or response */
	ROCE_OPM_ATOMIC   = 1u << 21,	/* CMP_SWAP / FETCH_ADD request */
	ROCE_OPM_ACK      = 1u << 22,	/* ACKNOWLEDGE or ATOMIC_ACKNOWLEDGE */
	ROCE_OPM_FLUSH    = 1u << 23,
	ROCE_OPM_ATMWRITE = 1u << 24,
	ROCE_OPM_CNP      = 1u << 25,

	/* consumes a receive WQE at the responder (SEND*, WRITE_*_WITH_IMM) */
	ROCE_OPM_RWR      = 1u << 26,
	/* payload length fixed by the opcode (ATOMIC_WRITE: 8 bytes) */
	ROCE_OPM_FIXED8   = 1u << 27,
};

/* Transport service, the top three bits of the opcode. */
enum roce_transport {
	ROCE_TRANSPORT_RC = 0,
	ROCE_TRANSPORT_UC = 1,
	ROCE_TRANSPORT_RD = 2,
	ROCE_TRANSPORT_UD = 3,
	ROCE_TRANSPORT_CNP = 4,
};

struct roce_opcode_info {
	const char *name;	/* IBTA spelling, e.g. "RC RDMA_WRITE_FIRST"; NULL = invalid */
	uint32_t mask;		/* enum roce_opcode_mask */
	uint8_t hdr_len;	/* BTH + extended headers */
	uint8_t off[ROCE_HDR_MAX];	/* offset from the BTH start; valid where mask says */
};

/* Opcode values (IBTA 1.5 table 38). */
enum roce_opcode {
	ROCE_OP_SEND_FIRST                   = 0x00,
	ROCE_OP_SEND_MIDDLE                  = 0x01,
	ROCE_OP_SEND_LAST                    = 0x02,
	ROCE_OP_SEND_LAST_WITH_IMMEDIATE     = 0x03,
	ROCE_OP_SEND_ONLY                    = 0x04,
	ROCE_OP_SEND_ONLY_WITH_IMMEDIATE     = 0x05,
	ROCE_OP_RDMA_WRITE_FIRST             = 0x06,
	ROCE_OP_RDMA_WRITE_MIDDLE            = 0x07,
	ROCE_OP_RDMA_WRITE_LAST              = 0x08,
	ROCE_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09,
	ROCE_OP_RDMA_WRITE_ONLY              = 0x0a,
	ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0b,
	ROCE_OP_RDMA_READ_REQUEST            = 0x0c,
	ROCE_OP_RDMA_READ_RESPONSE_FIRST     = 0x0d,
	ROCE_OP_RDMA_READ_RESPONSE_MIDDLE    = 0x0e,
	ROCE_OP_RDMA_READ_RESPONSE_LAST      = 0x0f,
	ROCE_OP_RDMA_READ_RESPONSE_ONLY      = 0x10,
	ROCE_OP_ACKNOWLEDGE                  = 0x11,
	ROCE_OP_ATOMIC_ACKNOWLEDGE           = 0x12,
	ROCE_OP_COMPARE_SWAP                 = 0x13,
	ROCE_OP_FETCH_ADD                    = 0x14,
	ROCE_OP_SEND_LAST_WITH_INVALIDATE    = 0x16,
	ROCE_OP_SEND_ONLY_WITH_INVALIDATE    = 0x17,
	ROCE_OP_FLUSH                        = 0x1c,
	ROCE_OP_ATOMIC_WRITE                 = 0x1d,
	/* UC: the RC opcode | 0x20 for SEND and RDMA WRITE (0x20-0x2b) */
	ROCE_OP_UC                           = 0x20,
	ROCE_OP_UD_SEND_ONLY                 = 0x64,
	ROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE  = 0x65,
	ROCE_OP_CNP                          = 0x81,
};

extern const struct roce_opcode_info roce_opcode_table[256];

static inline const struct roce_opcode_info *
roce_opcode_get(uint8_t opcode)
{
	return &roce_opcode_table[opcode];
}

static inline bool
roce_opcode_valid(uint8_t opcode)
{
	return roce_opcode_table[opcode].name != NULL;
}

static inline enum roce_transport
roce_opcode_transport(uint8_t opcode)
{
	return (enum roce_transport)(opcode >> 5);
}

/*
 * What an opcode the table does not define is (IBTA 1.5 table 38): the
 * top three bits 110 and 111 (0xc0-0xff) are manufacturer specific;
 * everything else undefined is reserved, or of a service RoCEv2 does not
 * carry (RD, 0x40-0x5f).
 */
static inline bool
roce_opcode_vendor(uint8_t opcode)
{
	return !roce_opcode_valid(opcode) && opcode >= 0xc0;
}

static inline bool
roce_opcode_reserved(uint8_t opcode)
{
	return !roce_opcode_valid(opcode) && opcode < 0xc0;
}

/* Name of an opcode, or "UNKNOWN" for values the table does not define. */
const char *roce_opcode_name(uint8_t opcode);

#endif /* ROCE_OPCODE_H */
