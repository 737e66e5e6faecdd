/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for the stateful receive path of a live droce device:
 * frames built from the input go in through one end of a virtual wire
 * (drivers/vwire) and through the transport's receive, responder,
 * completer, protection checks and CQs of an RC, a UC and a UD QP in RTS.
 *
 * Set up once per process (LLVMFuzzerInitialize): EAL (--no-huge, one
 * lcore), one context on end "a" of a vwire pair (the harness holds end
 * "b"), six memory regions with guard bytes around each, a type-1 window
 * and a type-2 window bound to the RC QP.  Per input the three QPs go back
 * to RTS through RESET (same QPNs, known PSNs; cheaper than recreating
 * them and it keeps the type-2 binding), receive WQEs are posted and,
 * if the input asks, a READ, a WRITE and a SEND on the RC QP, so that
 * injected responses meet a busy completer.
 *
 * Input: one header byte, then records of REC_LEN bytes, one frame each:
 *   byte 0  target: bits 0-1 QP (RC, UC, UD, other QPN from byte 15),
 *           bit 2 IPv6, bit 3 source GID not the peer's, bits 4-5 extra
 *           copies of the frame, bit 6 no engine round after this frame,
 *           bit 7 byte 1 is the raw opcode (reserved ones included)
 *   byte 1  opcode: index into the opcodes lib/wire's table defines for
 *           the target's transport (RC: requests and responses)
 *   byte 2  PSN: signed offset from the QP's expected PSN (a response's
 *           from the requester's oldest unacknowledged PSN)
 *   byte 3  key: bits 0-3 index into the registered keys, bits 4-5
 *           0/3 exact, 1 the previous variant, 2 one bit flipped (byte 15)
 *   4-5     VA: signed 16-bit offset from the start of the key's range
 *   6-7     RETH DMA length
 *   8-9     payload length: bit 15 set: bits 0-10 as given; else the
 *           length the opcode's position in a message implies (byte 9
 *           scales LAST/ONLY)
 *   byte 10 bits: SE, AckReq, MigReq, FECN, BECN, TVer 1, extreme VA
 *           (byte 4 bit 0: near 0, else near 2^64), ATMETH compare
 *           taken from memory (CMP_SWAP then matches)
 *   byte 11 P_Key: < 200 the default 0xffff, else from a small set
 *   byte 12 corruption: >= 240 one byte (byte 13) xor byte 14 | 1,
 *           >= 248 also the last ICRC byte
 *   13-15   auxiliary: Q_Key choice, AETH syndrome, immediate, swap/add,
 *           source QPN, MSN, flipped key bit, other QPN
 * Header byte: bit 0 post a READ, bit 1 a WRITE, bit 2 a SEND, bit 3 a
 * FETCH_ADD on the RC QP.
 * test/fuzz/make_engine_corpus.py writes the seed corpus in this format.
 *
 * Invariants, checked after every input (abort on violation):
 *   - memory: every byte of the arena (the regions and the guards around
 *     them) equals the shadow copy unless an accepted-looking WRITE or
 *     atomic of this input named a key whose rights allow it and covered
 *     the byte within that key's range, or the byte lies in a receive
 *     buffer posted or the local READ target;
 *   - completions: each wr_id one posted in this input on that QP and
 *     completed once, opcode and byte_len consistent with the WR for
 *     successful ones; a QP in ERR has completed all its WRs;
 *   - QP states: RTS or ERR; keys of MRs and the type-1 window still valid;
 *   - what droce sends: parses, ICRC valid, to the RC peer only; a READ
 *     response carries the memory of a READ of this input that a key with
 *     REMOTE_READ covered whole (bytes a WRITE may have changed since
 *     aside);
 *   - no hang: the engine is quiet within MAX_ROUNDS rounds;
 *   - no mbuf leak: the pool is full again after the QPs were reset.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "droce.h"
#include "net_host.h"
#include "prot.h"
#include "roce_wire.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "vwire.h"
#include "fuzz_check.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REC_LEN		16
#define MAX_RECS	64
#define MAX_ROUNDS	2000	/* an input that keeps droce busy longer hangs */
#define QUIET_ROUNDS	3
#define GUARD		256
#define MTU		1024
#define FRAME_CAP	4200
#define QKEY		0x11111111u
#define PEER_QPN	0x00c0deu
#define RECV_PER_QP	4
#define RECV_SLOT	1152	/* bytes per receive buffer slot (gap included) */
#define RECV_LEN	512	/* RC and UC receive buffers */
#define RECV_LEN_UD	(40 + MTU)
#define LOCAL_READ_LEN	2048
#define LOCAL_WRITE_OFF	2048
#define LOCAL_WRITE_LEN	512
#define LOCAL_SEND_OFF	2560
#define LOCAL_SEND_LEN	100
#define LOCAL_ATOMIC_OFF	3072	/* the FETCH_ADD's result */
#define MW1_OFF		1024
#define MW2_OFF		4096
#define MW_LEN		2048
#define START_PSN	0x10
#define MAX_WQE		32
#define MAX_ALLOWED	(MAX_RECS * 4 + 16)

enum qp_kind { QK_RC, QK_UC, QK_UD, QK_N };

enum region {
	R_RW,		/* remote write, read and atomic */
	R_RO,		/* remote read only */
	R_WO,		/* remote write only */
	R_MW,		/* no remote rights of its own: MW1 and MW2 inside */
	R_RECV,		/* local write: receive buffers */
	R_LOCAL,	/* local write: the RC requester's buffers */
	R_N
};

#define ACC_LW	DROCE_ACCESS_LOCAL_WRITE
#define ACC_RW	DROCE_ACCESS_REMOTE_WRITE
#define ACC_RR	DROCE_ACCESS_REMOTE_READ
#define ACC_RA	DROCE_ACCESS_REMOTE_ATOMIC

static const struct {
	size_t len;
	int access;
} region_def[R_N] = {
	[R_RW] = { 4096, ACC_LW | ACC_RW | ACC_RR | ACC_RA },
	[R_RO] = { 4096, ACC_RR },
	[R_WO] = { 4096, ACC_LW | ACC_RW },
	[R_MW] = { 8192, ACC_LW | DROCE_ACCESS_MW_BIND },
	[R_RECV] = { QK_N * RECV_PER_QP * RECV_SLOT, ACC_LW },
	[R_LOCAL] = { 4096, ACC_LW },
};

/* A key as the harness models it: what a correct responder may allow. */
struct key_model {
	uint32_t key;
	uintptr_t base;
	size_t len;
	unsigned int rights;	/* DROCE_ACCESS_REMOTE_* */
	bool rc_only;		/* type-2 window: bound to the RC QP */
};

enum { K_MW1 = R_N, K_MW2, K_ZERO, K_N };

struct range {
	uintptr_t lo, hi;
};

/* A READ a correct responder may answer: inside a key with REMOTE_READ. */
struct read_rec {
	uint32_t psn;
	uint32_t npkts;
	uint64_t va;
	uint32_t len;
};

struct wqe_rec {
	uint64_t wr_id;
	uint32_t qpn;
	uint32_t len;
	enum droce_wc_opcode op;
	bool recv;
	bool must_complete;
	bool done;
};

struct engine {
	struct droce_context *ctx;
	struct droce_link *dev_end;
	struct droce_link *peer_end;
	struct droce_pd *pd;
	struct droce_cq *cq;
	struct droce_qp *qp[QK_N];
	struct droce_mr *mr[R_N];
	struct droce_mw *mw1;
	struct droce_mw *mw2;
	uint8_t *arena;
	uint8_t *shadow;
	size_t arena_len;
	uint8_t *region[R_N];
	struct key_model key[K_N];
	uint32_t mw2_prev;		/* the type-2 window's previous rkey */
	uint8_t local_gid[2][16];
	uint8_t peer_gid[2][16];
	uint8_t other_gid[16];
	unsigned int mbufs_free;	/* pool level with nothing in flight */
	uint64_t input_no;
	/* this input */
	struct range allowed[MAX_ALLOWED];
	unsigned int nallowed;
	struct wqe_rec wqe[MAX_WQE];
	unsigned int nwqe;
	struct read_rec reads[MAX_RECS * 4];
	unsigned int nreads;
};

static struct engine E;

struct opcode_list {
	uint8_t op[256];
	unsigned int n;
};

static struct opcode_list opcodes_of[QK_N + 1];	/* [QK_N]: every valid one */

static void
opcode_lists_init(void)
{
	static const enum roce_transport tr[QK_N] = {
		ROCE_TRANSPORT_RC, ROCE_TRANSPORT_UC, ROCE_TRANSPORT_UD };

	for (unsigned int op = 0; op < 256; op++) {
		if (!roce_opcode_valid((uint8_t)op))
			continue;
		for (int k = 0; k < QK_N; k++)
			if (roce_opcode_transport((uint8_t)op) == tr[k])
				opcodes_of[k].op[opcodes_of[k].n++] = (uint8_t)op;
		opcodes_of[QK_N].op[opcodes_of[QK_N].n++] = (uint8_t)op;
	}
}

/* ---- small helpers ---------------------------------------------------------- */

/* Record bytes i, i+1 as a big-endian number. */
static unsigned int
u16_at(const uint8_t *r, unsigned int i)
{
	return (unsigned int)r[i] << 8 | r[i + 1];
}

static void
allow(uintptr_t lo, uintptr_t hi)
{
	FUZZ_CHECK(E.nallowed < MAX_ALLOWED);
	E.allowed[E.nallowed++] = (struct range){ lo, hi };
}

static bool
allowed(uintptr_t a)
{
	for (unsigned int i = 0; i < E.nallowed; i++)
		if (a >= E.allowed[i].lo && a < E.allowed[i].hi)
			return true;
	return false;
}

static struct tp_qp_snapshot
snapshot(enum qp_kind k)
{
	struct tp_qp_snapshot s;

	FUZZ_CHECK(tp_dev_qp_snapshot(verbs_tp(E.ctx), E.qp[k]->qp_num, &s) == 0);
	return s;
}

/* ---- what droce sends and completes --------------------------------------------- */

/*
 * Bytes no WRITE or SEND of this input may have changed equal the arena;
 * the others may legitimately differ from what a READ saw.
 */
static bool
same_stable_bytes(const uint8_t *data, uint64_t va, uint32_t len)
{
	uintptr_t lo = (uintptr_t)E.arena;

	if (va < lo || va - lo > E.arena_len || len > E.arena_len - (va - lo))
		return false;
	for (uint32_t i = 0; i < len; i++)
		if (!allowed((uintptr_t)(va + i)) && data[i] != E.arena[va - lo + i])
			return false;
	return true;
}

/* A READ response's payload is the memory of a READ a key allowed. */
static bool
read_response_explained(const struct roce_pkt *p, const uint8_t *f)
{
	for (unsigned int i = 0; i < E.nreads; i++) {
		const struct read_rec *r = &E.reads[i];
		uint32_t n = (p->psn - r->psn) & 0xffffff;
		uint64_t off = (uint64_t)n * MTU;

		if (n < r->npkts && off + p->payload_len <= r->len &&
		    same_stable_bytes(f + p->payload_off, r->va + off, p->payload_len))
			return true;
	}
	return false;
}

/* Only the RC QP may send (its requester and responder), and CNPs. */
static void
check_sent_frame(struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	struct roce_pkt p;

	FUZZ_CHECK(m->nb_segs == 1);
	FUZZ_CHECK(roce_parse_eth(f, m->data_len, &p) == ROCE_PARSE_OK);
	FUZZ_CHECK(roce_icrc_verify(f, &p));
	if (p.op->mask & ROCE_OPM_CNP)
		return;		/* a notification point may answer any FECN */
	FUZZ_CHECK(p.dest_qpn == PEER_QPN);
	FUZZ_CHECK(roce_opcode_transport(p.opcode) == ROCE_TRANSPORT_RC);
	FUZZ_CHECK(memcmp(p.dst_mac, E.peer_end->mac.addr_bytes, 6) == 0);
	FUZZ_CHECK(memcmp(p.dst_gid, E.peer_gid[0], 16) == 0);
	if ((p.op->mask & ROCE_OPM_RESP) && (p.op->mask & ROCE_OPM_READ) &&
	    p.payload_len > 0)
		FUZZ_CHECK(read_response_explained(&p, f));
}

static unsigned int
drain_peer(void)
{
	struct rte_mbuf *m[32];
	unsigned int total = 0;
	uint16_t n;

	while ((n = droce_link_rx(E.peer_end, m, RTE_DIM(m))) > 0) {
		for (uint16_t i = 0; i < n; i++) {
			check_sent_frame(m[i]);
			rte_pktmbuf_free(m[i]);
		}
		total += n;
	}
	return total;
}

static struct wqe_rec *
find_wqe(uint64_t wr_id)
{
	for (unsigned int i = 0; i < E.nwqe; i++)
		if (E.wqe[i].wr_id == wr_id)
			return &E.wqe[i];
	return NULL;
}

static void
check_wc(const struct droce_wc *wc)
{
	struct wqe_rec *w = find_wqe(wc->wr_id);

	FUZZ_CHECK(w != NULL);
	FUZZ_CHECK(!w->done);
	FUZZ_CHECK(wc->qp_num == w->qpn);
	FUZZ_CHECK(wc->status <= DROCE_WC_TM_RNDV_INCOMPLETE);
	w->done = true;
	if (wc->status != DROCE_WC_SUCCESS)
		return;		/* opcode and byte_len are undefined then (ibverbs) */
	if (w->recv) {
		/* WRITE_WITH_IMM: byte_len is the WRITE's, no buffer is used */
		FUZZ_CHECK(wc->opcode == DROCE_WC_RECV ||
			   (wc->opcode == DROCE_WC_RECV_RDMA_WITH_IMM &&
			    wc->qp_num != E.qp[QK_UD]->qp_num));
		FUZZ_CHECK(wc->opcode != DROCE_WC_RECV || wc->byte_len <= w->len);
	} else {
		FUZZ_CHECK(wc->opcode == w->op);
		if (w->op == DROCE_WC_RDMA_READ)
			FUZZ_CHECK(wc->byte_len == w->len);
	}
}

static unsigned int
poll_all(void)
{
	struct droce_wc wc[32];
	unsigned int total = 0;
	int n;

	while ((n = droce_poll_cq(E.cq, RTE_DIM(wc), wc)) > 0) {
		for (int i = 0; i < n; i++)
			check_wc(&wc[i]);
		total += (unsigned int)n;
	}
	FUZZ_CHECK(n == 0);
	return total;
}

/* One engine round; returns what happened (frames in and out, CQEs). */
static unsigned int
engine_round(void)
{
	unsigned int n = (unsigned int)droce_progress(E.ctx);

	n += poll_all();
	return n + drain_peer();
}

/* Run until nothing moves for QUIET_ROUNDS rounds: bounded, or a hang. */
static void
run_until_quiet(void)
{
	unsigned int quiet = 0;

	for (unsigned int r = 0; quiet < QUIET_ROUNDS; r++) {
		FUZZ_CHECK(r < MAX_ROUNDS);
		quiet = engine_round() == 0 ? quiet + 1 : 0;
	}
}

/* ---- setup -------------------------------------------------------------------- */

static void
eal_init(void)
{
	char *argv[] = { "fuzz_engine", "--no-pci", "--no-huge", "-m", "512",
			 "--no-shconf", "-l", "0", "--log-level=lib.eal:error", NULL };
	int argc = RTE_DIM(argv) - 1;

	FUZZ_CHECK(rte_eal_init(argc, argv) >= 0);
}

static void
gids_init(void)
{
	const uint8_t v4_local[4] = { 198, 18, 0, 1 };
	const uint8_t v4_peer[4] = { 198, 18, 0, 2 };
	const uint8_t v4_other[4] = { 198, 18, 0, 77 };
	const uint8_t v6[16] = { 0x20, 0x01, 0x00, 0x02 };

	roce_gid_from_ipv4(E.local_gid[0], v4_local);
	roce_gid_from_ipv4(E.peer_gid[0], v4_peer);
	roce_gid_from_ipv4(E.other_gid, v4_other);
	memcpy(E.local_gid[1], v6, 16);
	E.local_gid[1][15] = 1;
	memcpy(E.peer_gid[1], v6, 16);
	E.peer_gid[1][15] = 2;
}

static void
device_init(void)
{
	struct vwire_config wire = { .name = "fuzz" };
	struct tp_dev_config cfg = { 0 };
	struct tp_dev *tp;

	FUZZ_CHECK(vwire_pair_create(&wire, &E.dev_end, &E.peer_end) == 0);
	E.ctx = droce_open_context(NULL);
	FUZZ_CHECK(E.ctx != NULL);
	FUZZ_CHECK(verbs_attach_link(E.ctx, E.dev_end, &cfg) == 0);
	tp = verbs_tp(E.ctx);
	gids_init();
	for (int i = 0; i < 2; i++) {
		FUZZ_CHECK(net_host_add_addr(tp_dev_host(tp), E.local_gid[i],
					     i == 0 ? 24 : 64) == 0);
		FUZZ_CHECK(net_host_add_static(tp_dev_host(tp), E.peer_gid[i],
					       &E.peer_end->mac) == 0);
	}
	FUZZ_CHECK(net_host_add_static(tp_dev_host(tp), E.other_gid, &E.peer_end->mac) == 0);
	E.pd = droce_alloc_pd(E.ctx);
	FUZZ_CHECK(E.pd != NULL);
	E.cq = droce_create_cq(E.ctx, 1024, NULL, NULL, 0);
	FUZZ_CHECK(E.cq != NULL);
}

/* Region contents: small 64-bit words, so that atomics meet known values. */
static void
fill_arena(void)
{
	for (size_t i = 0; i < E.arena_len; i++)
		E.arena[i] = (i & 7) == 0 ? (uint8_t)(i >> 3 & 3) : (uint8_t)(0xa0 + (i & 7));
	memcpy(E.shadow, E.arena, E.arena_len);
}

static void
regions_init(void)
{
	size_t off = GUARD;

	E.arena_len = GUARD;
	for (int r = 0; r < R_N; r++)
		E.arena_len += region_def[r].len + GUARD;
	E.arena = aligned_alloc(64, E.arena_len);
	E.shadow = malloc(E.arena_len);
	FUZZ_CHECK(E.arena != NULL && E.shadow != NULL);
	fill_arena();
	for (int r = 0; r < R_N; r++) {
		E.region[r] = E.arena + off;
		E.mr[r] = droce_reg_mr(E.pd, E.region[r], region_def[r].len,
				       region_def[r].access);
		FUZZ_CHECK(E.mr[r] != NULL);
		E.key[r] = (struct key_model){
			.key = E.mr[r]->rkey, .base = (uintptr_t)E.region[r],
			.len = region_def[r].len,
			.rights = (unsigned int)region_def[r].access &
				  (ACC_RW | ACC_RR | ACC_RA),
		};
		off += region_def[r].len + GUARD;
	}
	E.key[K_ZERO] = (struct key_model){ .key = 0, .base = (uintptr_t)E.region[R_RW] };
}

static struct droce_qp *
create_qp(enum droce_qp_type type)
{
	struct droce_qp_init_attr init = {
		.send_cq = E.cq, .recv_cq = E.cq, .qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct droce_qp *qp = droce_create_qp(E.pd, &init);

	FUZZ_CHECK(qp != NULL);
	return qp;
}

static void
modify(struct droce_qp *qp, struct droce_qp_attr *a, int mask)
{
	FUZZ_CHECK(droce_modify_qp(qp, a, mask) == 0);
}

/* RESET -> INIT -> RTR -> RTS with the start PSNs (same QPN as before). */
static void
qp_to_rts(struct droce_qp *qp)
{
	bool ud = qp->qp_type == DROCE_QPT_UD, rc = qp->qp_type == DROCE_QPT_RC;
	struct droce_qp_attr a = { .qp_state = DROCE_QPS_RESET };

	modify(qp, &a, DROCE_QP_STATE);
	a = (struct droce_qp_attr){ .qp_state = DROCE_QPS_INIT, .port_num = 1,
		.qkey = QKEY, .qp_access_flags = ACC_RW | (rc ? ACC_RR | ACC_RA : 0) };
	modify(qp, &a, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX | DROCE_QP_PORT |
		       (ud ? DROCE_QP_QKEY : DROCE_QP_ACCESS_FLAGS));
	a = (struct droce_qp_attr){ .qp_state = DROCE_QPS_RTR, .path_mtu = DROCE_MTU_1024,
		.dest_qp_num = PEER_QPN, .rq_psn = START_PSN, .max_dest_rd_atomic = 4,
		.min_rnr_timer = 1 };
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, E.peer_gid[0], 16);
	modify(qp, &a, DROCE_QP_STATE | (ud ? 0 : DROCE_QP_AV | DROCE_QP_PATH_MTU |
		       DROCE_QP_DEST_QPN | DROCE_QP_RQ_PSN) |
		       (rc ? DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER : 0));
	/* timeout 0: no retransmit timer (9.7.6.1.3), so an input ends quietly */
	a = (struct droce_qp_attr){ .qp_state = DROCE_QPS_RTS, .sq_psn = START_PSN,
		.timeout = 0, .retry_cnt = 1, .rnr_retry = 1, .max_rd_atomic = 4 };
	modify(qp, &a, DROCE_QP_STATE | DROCE_QP_SQ_PSN |
		       (rc ? DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT | DROCE_QP_RNR_RETRY |
			     DROCE_QP_MAX_QP_RD_ATOMIC : 0));
}

static void
windows_init(void)
{
	struct droce_mw_bind b = { .bind_info = {
		.mr = E.mr[R_MW], .addr = (uintptr_t)E.region[R_MW] + MW1_OFF,
		.length = MW_LEN, .mw_access_flags = ACC_RW | ACC_RR } };

	E.mw1 = droce_alloc_mw(E.pd, DROCE_MW_TYPE_1);
	E.mw2 = droce_alloc_mw(E.pd, DROCE_MW_TYPE_2);
	FUZZ_CHECK(E.mw1 != NULL && E.mw2 != NULL);
	FUZZ_CHECK(droce_bind_mw(E.qp[QK_RC], E.mw1, &b) == 0);
	E.key[K_MW1] = (struct key_model){ .key = E.mw1->rkey,
		.base = (uintptr_t)b.bind_info.addr, .len = MW_LEN,
		.rights = ACC_RW | ACC_RR };
	E.key[K_MW2] = (struct key_model){ .key = E.mw2->rkey,
		.base = (uintptr_t)E.region[R_MW] + MW2_OFF, .len = MW_LEN,
		.rights = ACC_RW | ACC_RR | ACC_RA, .rc_only = true };
	E.mw2_prev = E.mw2->rkey;
}

static bool
key_valid(const struct key_model *k)
{
	struct prot_tables *t = verbs_prot(E.ctx);
	void *host;

	return prot_lookup(t, k->key, true, E.pd->handle, E.qp[QK_RC]->qp_num,
			   k->base, 1, 0, 0, &host) == PROT_OK;
}

/*
 * Bind the type-2 window (again) when it is not bound: at start and after
 * an input invalidated it (SEND_WITH_INV, 9.4.1.1).  Through the RC QP's
 * send queue, as DROCE_WR_BIND_MW requires.
 */
static void
bind_mw2_if_needed(void)
{
	struct droce_send_wr wr = { .wr_id = UINT64_MAX, .opcode = DROCE_WR_BIND_MW }, *bad;
	uint32_t rkey = droce_inc_rkey(E.key[K_MW2].key);

	if (E.key[K_MW2].key != E.mw2_prev && key_valid(&E.key[K_MW2]))
		return;
	wr.bind_mw.mw = E.mw2;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = (struct droce_mw_bind_info){ .mr = E.mr[R_MW],
		.addr = E.key[K_MW2].base, .length = MW_LEN,
		.mw_access_flags = ACC_RW | ACC_RR | ACC_RA };
	FUZZ_CHECK(E.nwqe < MAX_WQE);
	E.wqe[E.nwqe++] = (struct wqe_rec){ .wr_id = wr.wr_id,
		.qpn = E.qp[QK_RC]->qp_num, .op = DROCE_WC_BIND_MW };
	FUZZ_CHECK(droce_post_send(E.qp[QK_RC], &wr, &bad) == 0);
	E.mw2_prev = E.key[K_MW2].key;
	E.key[K_MW2].key = rkey;
	run_until_quiet();
	FUZZ_CHECK(key_valid(&E.key[K_MW2]));
}

/* At exit: how many frames took the receive templates (lib/wire roce_rx_tmpl). */
static void
report_templates(void)
{
	if (E.ctx != NULL)
		fprintf(stderr, "fuzz_engine: rx_tmpl_parsed %" PRIu64 " of rcvd_pkts %" PRIu64 "\n",
			droce_get_counter(E.ctx, "rx_tmpl_parsed"),
			droce_get_counter(E.ctx, "rcvd_pkts"));
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	atexit(report_templates);
	eal_init();
	opcode_lists_init();
	device_init();
	regions_init();
	E.qp[QK_RC] = create_qp(DROCE_QPT_RC);
	E.qp[QK_UC] = create_qp(DROCE_QPT_UC);
	E.qp[QK_UD] = create_qp(DROCE_QPT_UD);
	for (int k = 0; k < QK_N; k++)
		qp_to_rts(E.qp[k]);
	windows_init();
	bind_mw2_if_needed();
	run_until_quiet();
	E.mbufs_free = rte_mempool_avail_count(E.peer_end->pool);
	return 0;
}

/* ---- per input ---------------------------------------------------------------- */

static void
post_recvs(void)
{
	for (int k = 0; k < QK_N; k++) {
		for (int i = 0; i < RECV_PER_QP; i++) {
			uint8_t *buf = E.region[R_RECV] + (k * RECV_PER_QP + i) * RECV_SLOT;
			uint32_t len = k == QK_UD ? RECV_LEN_UD : RECV_LEN;
			struct wqe_rec *w = &E.wqe[E.nwqe];
			struct droce_sge sge = { (uintptr_t)buf, len, E.mr[R_RECV]->lkey };
			struct droce_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

			*w = (struct wqe_rec){ .wr_id = E.input_no << 8 | E.nwqe,
				.qpn = E.qp[k]->qp_num, .len = len, .recv = true,
				.must_complete = true };
			wr.wr_id = w->wr_id;
			FUZZ_CHECK(droce_post_recv(E.qp[k], &wr, &bad) == 0);
			allow((uintptr_t)buf, (uintptr_t)buf + len);
			E.nwqe++;
		}
	}
}

static void
post_send(enum droce_wr_opcode op, enum droce_wc_opcode wc_op, uint32_t off,
	  uint32_t len)
{
	struct wqe_rec *w = &E.wqe[E.nwqe];
	struct droce_sge sge = { (uintptr_t)E.region[R_LOCAL] + off, len,
				 E.mr[R_LOCAL]->lkey };
	struct droce_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = op,
				    .send_flags = DROCE_SEND_SIGNALED }, *bad;

	*w = (struct wqe_rec){ .wr_id = E.input_no << 8 | E.nwqe,
		.qpn = E.qp[QK_RC]->qp_num, .len = len, .op = wc_op,
		.must_complete = true };
	wr.wr_id = w->wr_id;
	if (op == DROCE_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = 0x10000;
		wr.wr.atomic.rkey = 0x1234;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = 0x10000;
		wr.wr.rdma.rkey = 0x1234;
	}
	FUZZ_CHECK(droce_post_send(E.qp[QK_RC], &wr, &bad) == 0);
	E.nwqe++;
}

static void
post_requests(uint8_t hdr)
{
	if (hdr & 1) {
		post_send(DROCE_WR_RDMA_READ, DROCE_WC_RDMA_READ, 0, LOCAL_READ_LEN);
		allow((uintptr_t)E.region[R_LOCAL],
		      (uintptr_t)E.region[R_LOCAL] + LOCAL_READ_LEN);
	}
	if (hdr & 2)
		post_send(DROCE_WR_RDMA_WRITE, DROCE_WC_RDMA_WRITE, LOCAL_WRITE_OFF,
			  LOCAL_WRITE_LEN);
	if (hdr & 4)
		post_send(DROCE_WR_SEND, DROCE_WC_SEND, LOCAL_SEND_OFF, LOCAL_SEND_LEN);
	if (hdr & 8) {
		post_send(DROCE_WR_ATOMIC_FETCH_AND_ADD, DROCE_WC_FETCH_ADD,
			  LOCAL_ATOMIC_OFF, 8);
		allow((uintptr_t)E.region[R_LOCAL] + LOCAL_ATOMIC_OFF,
		      (uintptr_t)E.region[R_LOCAL] + LOCAL_ATOMIC_OFF + 8);
	}
}

/* The keys droce must still honour; a QP reset leaves the CQ empty. */
static void
start_input(uint8_t hdr)
{
	E.input_no++;
	E.nallowed = 0;
	E.nwqe = 0;
	E.nreads = 0;
	for (int k = 0; k < QK_N; k++)
		qp_to_rts(E.qp[k]);
	FUZZ_CHECK(poll_all() == 0);
	FUZZ_CHECK(rte_mempool_avail_count(E.peer_end->pool) == E.mbufs_free);
	for (int k = 0; k < K_MW2; k++)
		FUZZ_CHECK(key_valid(&E.key[k]));
	bind_mw2_if_needed();
	post_recvs();
	post_requests(hdr);
	run_until_quiet();
}

/* ---- frames from records ---------------------------------------------------------- */

/* Which of our QPs a destination QPN names, or QK_N. */
static enum qp_kind
qp_of(uint32_t qpn)
{
	for (int k = 0; k < QK_N; k++)
		if (E.qp[k]->qp_num == qpn)
			return (enum qp_kind)k;
	return QK_N;
}

static uint32_t
pick_key(const uint8_t *r, const struct key_model **km)
{
	const struct key_model *k = &E.key[(r[3] & 15) % K_N];

	*km = k;
	switch (r[3] >> 4 & 3) {
	case 1:
		return k == &E.key[K_MW2] ? E.mw2_prev : k->key - 1;
	case 2:
		return k->key ^ 1u << (r[15] & 31);
	default:
		return k->key;
	}
}

static uint64_t
pick_va(const uint8_t *r, const struct key_model *k)
{
	if (r[10] & 0x40)
		return (r[4] & 1) ? r[5] : UINT64_MAX - r[5];
	return (uint64_t)((int64_t)k->base + (int16_t)u16_at(r, 4));
}

static const uint16_t pkeys[] = { 0x7fff, 0x1234, 0x8001, 0x0000, 0xfffe, 0xffff };

static uint16_t
pick_pkey(uint8_t b)
{
	return b < 200 ? 0xffff : pkeys[b % RTE_DIM(pkeys)];
}

static uint32_t
consistent_payload_len(const struct roce_pkt *p, const uint8_t *r)
{
	uint32_t m = roce_opcode_get(p->opcode)->mask;

	if (!(m & ROCE_OPM_PAYLOAD))
		return 0;
	if (m & ROCE_OPM_FIXED8)
		return 8;
	if (!(m & ROCE_OPM_LAST))
		return MTU;		/* FIRST, MIDDLE */
	if ((m & ROCE_OPM_FIRST) && (m & ROCE_OPM_RETH) && p->reth.len <= MTU)
		return p->reth.len;
	return (uint32_t)r[9] * 4 % (MTU + 1);
}

/* The 64-bit word the harness's shadow holds at va, if va is in the arena. */
static uint64_t
shadow_word(uint64_t va)
{
	uintptr_t lo = (uintptr_t)E.arena;
	uint64_t w = 0;

	if (va >= lo && va - lo <= E.arena_len - 8)
		memcpy(&w, E.shadow + (va - lo), 8);
	return w;
}

static void
fill_ext(struct roce_pkt *p, const uint8_t *r, uint32_t key, uint64_t va)
{
	p->reth.va = va;
	p->reth.rkey = key;
	p->reth.len = u16_at(r, 6);
	p->atmeth.va = va;
	p->atmeth.rkey = key;
	p->atmeth.comp = (r[10] & 0x80) ? shadow_word(va) : r[13] & 3;
	p->atmeth.swap = r[14];
	p->aeth.syndrome = r[13];
	p->aeth.msn = r[15];
	p->atmack_orig = r[14];
	p->imm = r[14] * 0x01010101u;
	p->ieth_rkey = key;
	p->deth.qkey = (r[13] & 7) != 0 ? QKEY : (uint32_t)r[13] << 24 | 0x123;
	p->deth.src_qpn = 0x100u | r[14];
	p->feth.sel = r[13] & 3;
	p->feth.plt = r[14] & 15;
}

static void
fill_net(struct roce_pkt *p, const uint8_t *r)
{
	int v6 = r[0] >> 2 & 1;

	memcpy(p->dst_mac, E.dev_end->mac.addr_bytes, 6);
	memcpy(p->src_mac, E.peer_end->mac.addr_bytes, 6);
	p->ip_version = v6 ? 6 : 4;
	p->ip_ttl = 64;
	memcpy(p->dst_gid, E.local_gid[v6], 16);
	memcpy(p->src_gid, (r[0] & 8) ? E.other_gid : E.peer_gid[v6], 16);
	p->udp_sport = 0xc000u | r[14];
	p->udp_dport = ROCE_UDP_PORT;
	/* as droce and rxe send: the connected QPs' frames can match their
	 * receive templates (the full parse is reached by everything else) */
	p->ip_df = 1;
}

static uint8_t
pick_opcode(const uint8_t *r, enum qp_kind target)
{
	const struct opcode_list *l = &opcodes_of[target];

	if (r[0] & 0x80)
		return r[1];
	return l->op[r[1] % l->n];
}

/* The PSN base: a response answers the requester, a request the responder. */
static uint32_t
pick_psn(const uint8_t *r, uint8_t opcode, enum qp_kind k)
{
	struct tp_qp_snapshot s;
	uint32_t base = 0;

	if (k != QK_N) {
		s = snapshot(k);
		base = (roce_opcode_get(opcode)->mask & ROCE_OPM_RESP) ? s.comp_psn :
									 s.resp_psn;
	}
	return (base + (uint32_t)(int8_t)r[2]) & 0xffffff;
}

/*
 * A WRITE or atomic a correct responder may execute: its key (as sent) is
 * one the model knows, with the right and on a QP that may use it; the
 * bytes it may touch are those inside the key's range.
 */
static void
allow_remote_access(const struct roce_pkt *p, enum qp_kind k)
{
	uint32_t m = p->op->mask;
	uint64_t va, len;
	unsigned int need;
	uint32_t key;

	if (k == QK_N || k == QK_UD || !(m & (ROCE_OPM_WRITE | ROCE_OPM_ATOMIC | ROCE_OPM_ATMWRITE)))
		return;
	if (!(m & (ROCE_OPM_RETH | ROCE_OPM_ATMETH)))
		return;		/* MIDDLE/LAST: covered by their FIRST */
	if (m & ROCE_OPM_ATMETH) {
		va = p->atmeth.va, len = 8, key = p->atmeth.rkey, need = ACC_RA;
	} else {
		va = p->reth.va, key = p->reth.rkey, need = ACC_RW;
		len = (m & ROCE_OPM_ATMWRITE) ? 8 : p->reth.len;
	}
	for (int i = 0; i < K_N; i++) {
		const struct key_model *km = &E.key[i];
		uint64_t lo, hi;

		if (km->key != key || !(km->rights & need) || (km->rc_only && k != QK_RC))
			continue;
		lo = va > km->base ? va : km->base;
		hi = len > UINT64_MAX - va ? UINT64_MAX : va + len;
		if (hi > km->base + km->len)
			hi = km->base + km->len;
		if (lo < hi)
			allow((uintptr_t)lo, (uintptr_t)hi);
	}
}

/* A READ request whose whole range a key with REMOTE_READ covers. */
static void
record_read(const struct roce_pkt *p, enum qp_kind k)
{
	uint32_t m = p->op->mask;

	if (k == QK_N || !(m & ROCE_OPM_REQ) || !(m & ROCE_OPM_READ))
		return;
	for (int i = 0; i < K_N; i++) {
		const struct key_model *km = &E.key[i];

		if (km->key != p->reth.rkey || !(km->rights & ACC_RR) ||
		    (km->rc_only && k != QK_RC) || p->reth.va < km->base ||
		    p->reth.len > km->len || p->reth.va - km->base > km->len - p->reth.len)
			continue;
		FUZZ_CHECK(E.nreads < RTE_DIM(E.reads));
		E.reads[E.nreads++] = (struct read_rec){ .psn = p->psn,
			.npkts = p->reth.len == 0 ? 1 : (p->reth.len + MTU - 1) / MTU,
			.va = p->reth.va, .len = p->reth.len };
		return;
	}
}

static void
corrupt(uint8_t *f, size_t len, const uint8_t *r)
{
	if (r[12] < 240)
		return;
	f[r[13] % len] ^= r[14] | 1;
	if (r[12] >= 248)
		f[len - 1] ^= 0x5a;
}

/* Build the record's frame into f; returns its length, 0 when none. */
static size_t
build_frame(const uint8_t *r, uint8_t *f, struct roce_pkt *p)
{
	static uint8_t payload[2048];
	enum qp_kind target = (enum qp_kind)(r[0] & 3);
	const struct key_model *km;
	uint32_t key = pick_key(r, &km);
	size_t len;

	memset(p, 0, sizeof(*p));
	fill_net(p, r);
	p->dest_qpn = target == QK_N ? r[15] : E.qp[target]->qp_num;
	p->opcode = pick_opcode(r, target);
	if (!roce_opcode_valid(p->opcode))
		p->opcode = ROCE_OP_RDMA_WRITE_ONLY;	/* raw opcode written below */
	p->psn = pick_psn(r, p->opcode, qp_of(p->dest_qpn));
	p->se = r[10] & 1;
	p->ackreq = r[10] >> 1 & 1;
	p->migreq = r[10] >> 2 & 1;
	p->fecn = r[10] >> 3 & 1;
	p->becn = r[10] >> 4 & 1;
	p->tver = r[10] >> 5 & 1;
	p->pkey = pick_pkey(r[11]);
	fill_ext(p, r, key, pick_va(r, km));
	p->payload_len = (r[8] & 0x80) ? u16_at(r, 8) & 0x7ff : consistent_payload_len(p, r);
	for (uint32_t i = 0; i < p->payload_len; i++)
		payload[i] = (uint8_t)(r[14] + i);
	len = roce_build(f, FRAME_CAP, p, payload);
	if (len == 0) {
		p->payload_len = consistent_payload_len(p, r);
		len = roce_build(f, FRAME_CAP, p, payload);
	}
	if (len == 0)
		return 0;
	if (r[0] & 0x80)
		f[p->bth_off] = r[1];	/* unknown opcodes too: the parser's job */
	corrupt(f, len, r);
	return len;
}

static void
inject(const uint8_t *f, size_t len, unsigned int copies)
{
	for (unsigned int i = 0; i <= copies; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(E.peer_end->pool);
		char *d;

		FUZZ_CHECK(m != NULL);
		d = rte_pktmbuf_append(m, (uint16_t)len);
		FUZZ_CHECK(d != NULL);
		memcpy(d, f, len);
		FUZZ_CHECK(droce_link_tx(E.peer_end, &m, 1) == 1);
	}
}

static void
run_record(const uint8_t *r)
{
	static uint8_t frame[FRAME_CAP];
	struct roce_pkt p;
	size_t len = build_frame(r, frame, &p);

	if (len != 0) {
		if (roce_opcode_valid(p.opcode) && frame[p.bth_off] == p.opcode) {
			allow_remote_access(&p, qp_of(p.dest_qpn));
			record_read(&p, qp_of(p.dest_qpn));
		}
		inject(frame, len, r[0] >> 4 & 3);
	}
	if (!(r[0] & 0x40))
		engine_round();
}

/* ---- invariants at the end of an input -------------------------------------------- */

static void
check_memory(void)
{
	if (memcmp(E.arena, E.shadow, E.arena_len) != 0) {
		for (size_t i = 0; i < E.arena_len; i++) {
			if (E.arena[i] == E.shadow[i] || allowed((uintptr_t)(E.arena + i)))
				continue;
			fprintf(stderr, "fuzz_engine: arena byte %zu changed %02x -> %02x\n",
				i, E.shadow[i], E.arena[i]);
			FUZZ_CHECK(!"memory changed outside what a key allowed");
		}
		memcpy(E.shadow, E.arena, E.arena_len);
	}
}

static void
check_qps(void)
{
	for (int k = 0; k < QK_N; k++) {
		struct droce_qp_attr a;
		struct droce_qp_init_attr init;

		FUZZ_CHECK(droce_query_qp(E.qp[k], &a, DROCE_QP_STATE, &init) == 0);
		FUZZ_CHECK(a.qp_state == DROCE_QPS_RTS || a.qp_state == DROCE_QPS_ERR);
		if (a.qp_state != DROCE_QPS_ERR)
			continue;
		/* IBTA 10.3.1: in ERR every outstanding WR completes (flushed) */
		for (unsigned int i = 0; i < E.nwqe; i++)
			if (E.wqe[i].qpn == E.qp[k]->qp_num && E.wqe[i].must_complete)
				FUZZ_CHECK(E.wqe[i].done);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t nrec;

	if (size < 1)
		return 0;
	nrec = (size - 1) / REC_LEN;
	if (nrec > MAX_RECS)
		nrec = MAX_RECS;
	start_input(data[0]);
	for (size_t i = 0; i < nrec; i++)
		run_record(data + 1 + i * REC_LEN);
	run_until_quiet();
	check_memory();
	check_qps();
	return 0;
}
