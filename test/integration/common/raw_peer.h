/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw_peer: a test that acts as a hostile RoCEv2 peer.
 *
 * One droce context sits on end "a" of a virtual wire (drivers/vwire); the
 * test owns end "b" and drives it by hand: it crafts frames with lib/wire
 * (roce_build, correct ICRC unless asked otherwise), sends them with the
 * link's tx_burst, runs droce's engine and reads back every frame droce
 * answered with, parsed by roce_parse_eth into struct roce_pkt, so a test
 * asserts on opcode, PSN, AETH syndrome and MSN, payload bytes.
 *
 * A typical test:
 *
 *	struct raw_peer rp;
 *	struct rp_frame f[4];
 *
 *	rp_open(&rp, 4096);
 *	qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);
 *	struct roce_pkt p = rp_pkt(&rp, qp, ROCE_OP_RDMA_WRITE_ONLY, RP_PSN);
 *	p.reth.va = (uintptr_t)rp.buf; p.reth.rkey = rp.mr->rkey; p.reth.len = 64;
 *	rp_send(&rp, &p, data, 64, false);
 *	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
 *	assert_int_equal(f[0].pkt.aeth.msn, 1);
 *	rp_destroy_qp(qp);
 *	rp_close(&rp);
 *
 * Every helper asserts (cmocka) on what it sets up, so a failure points at
 * the step.  Addresses: droce is 198.18.0.1, the raw peer 198.18.0.2.
 */
#ifndef DROCE_TEST_RAW_PEER_H
#define DROCE_TEST_RAW_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "droce.h"
#include "roce_wire.h"

/* The fake remote QP every droce QP is connected to, and both start PSNs. */
#define RP_PEER_QPN	0x000abcu
#define RP_PSN		100u
/* The Q_Key of UD QPs (rp_pkt puts it in the DETH). */
#define RP_QKEY		0x11111111u
/* How long rp_collect usually waits for droce's answers. */
#define RP_WAIT_S	0.05
/* Largest frame kept by rp_collect. */
#define RP_FRAME_MAX	4200

struct raw_peer {
	struct droce_context *ctx;
	struct droce_link *link;	/* droce's end of the wire */
	struct droce_link *peer;	/* the test's end */
	struct droce_pd *pd;
	struct droce_mr *mr;		/* over buf, every right */
	uint8_t *buf;			/* zeroed */
	size_t len;
	struct droce_cq *cq;		/* send and receive CQ of every QP */
	uint8_t gid[16];		/* droce's GID (index 0) */
	uint8_t peer_gid[16];		/* the raw peer's */
};

/* A frame droce sent, and its parse (err ROCE_PARSE_OK: pkt is valid). */
struct rp_frame {
	uint8_t data[RP_FRAME_MAX];
	size_t len;
	enum roce_parse_err err;
	bool icrc_ok;
	struct roce_pkt pkt;		/* offsets into data */
};

/* EAL once per process with dev_pair's arguments (--no-huge under
 * DROCE_NO_HUGE=1), in memory: tests may run side by side. */
void rp_eal_init(char *prog);

/* droce's context over a fresh vwire, a PD, a zeroed buffer of buf_len bytes
 * (a multiple of 4096), its MR (every right), a CQ. */
void rp_open(struct raw_peer *rp, size_t buf_len);
/* The same over a virtual wire made with wire (NULL: defaults). */
struct vwire_config;
void rp_open_wire(struct raw_peer *rp, size_t buf_len, const struct vwire_config *wire);
void rp_close(struct raw_peer *rp);

/*
 * A QP of type RC, UC or UD taken to RTS: RC/UC connected to RP_PEER_QPN at
 * the raw peer's GID, PSN RP_PSN both ways, MTU 1024, every remote right,
 * 4 READs/atomics each way; UD with Q_Key RP_QKEY.  pkey_index goes to
 * the INIT transition.
 */
struct droce_qp *rp_create_qp(struct raw_peer *rp, enum droce_qp_type type,
			      uint16_t pkey_index);
/* The two halves of rp_create_qp: a QP in RESET, then taken to RTS. */
struct droce_qp *rp_new_qp(struct raw_peer *rp, enum droce_qp_type type);
void rp_connect_qp(struct raw_peer *rp, struct droce_qp *qp, uint16_t pkey_index);
void rp_destroy_qp(struct droce_qp *qp);

/*
 * A request from the raw peer to qp: addressing, P_Key 0xffff, AckReq,
 * opcode and psn set; for UD a DETH with RP_QKEY and RP_PEER_QPN.  The
 * test fills the extended headers it needs (reth, atmeth, imm, ieth_rkey)
 * and may change anything else.
 */
struct roce_pkt rp_pkt(const struct raw_peer *rp, const struct droce_qp *qp,
		       uint8_t opcode, uint32_t psn);

/* Build p with len payload bytes into an mbuf of the peer's pool, not sent. */
struct rte_mbuf;
struct rte_mbuf *rp_build(struct raw_peer *rp, struct roce_pkt *p, const void *payload,
			  uint32_t len);
/* Build p with len payload bytes and send it; bad_icrc flips an ICRC bit. */
void rp_send(struct raw_peer *rp, struct roce_pkt *p, const void *payload,
	     uint32_t len, bool bad_icrc);
/*
 * The same with wire_opcode written over the BTH opcode after building
 * (and the ICRC computed again): opcodes roce_build refuses (reserved,
 * manufacturer-specific) in an otherwise well-formed frame of p's layout.
 */
void rp_send_as(struct raw_peer *rp, struct roce_pkt *p, const void *payload,
		uint32_t len, uint8_t wire_opcode, bool bad_icrc);

/*
 * Run droce's engine for `seconds` and collect what it sends into
 * out[0..max) (stops early only when out is full; frames beyond max are
 * dropped).  Returns the number of frames collected.
 */
int rp_collect(struct raw_peer *rp, struct rp_frame *out, int max, double seconds);

/* Run droce's engine until cq gives n completions or `seconds` pass. */
int rp_poll_cq(struct raw_peer *rp, struct droce_wc *wc, int n, double seconds);

/* A transport counter of droce's device by name (tp_counters.h). */
uint64_t rp_counter(const struct raw_peer *rp, const char *name);
/* R_Key checks droce ran so far (lib/protection's remote counters, any status). */
uint64_t rp_rkey_checks(const struct raw_peer *rp);

/* A valid answer (ICRC, parse, to RP_PEER_QPN) of this opcode and PSN. */
void rp_expect_frame(const struct rp_frame *f, uint8_t opcode, uint32_t psn);
/* An ACKNOWLEDGE with this AETH type, value (NAKs, RNR NAKs) and MSN. */
void rp_expect_aeth(const struct rp_frame *f, uint32_t psn, unsigned int type,
		    unsigned int value, uint32_t msn);
/* The QP's state (droce_query_qp). */
enum droce_qp_state rp_qp_state(struct droce_qp *qp);

/* The payload of a collected frame. */
static inline const uint8_t *
rp_payload(const struct rp_frame *f)
{
	return f->data + f->pkt.payload_off;
}

#endif /* DROCE_TEST_RAW_PEER_H */
