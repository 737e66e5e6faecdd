/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dq.c - the shared queue format (dq.h): the region's layout, the rings'
 * indices and the checks of descriptors copied out of them.
 */
#include <errno.h>
#include <string.h>

#include "dq.h"

_Static_assert(sizeof(struct dq_send_wqe) == 128, "send WQE size is the format");
_Static_assert(offsetof(struct dq_send_wqe, bind.pad) + sizeof(uint64_t) ==
		       offsetof(struct dq_send_wqe, sge),
	       "a bind's fields cover the atomic's and UD's, no more");
_Static_assert(sizeof(struct dq_recv_wqe) == 80, "recv WQE size is the format");
_Static_assert(sizeof(struct dq_send_wqe) % sizeof(struct dq_sge) == 0 &&
		       sizeof(struct dq_recv_wqe) % sizeof(struct dq_sge) == 0,
	       "entries after a descriptor hold whole SGEs");
_Static_assert(DQ_MAX_SGE <= UINT8_MAX, "num_sge's width");
_Static_assert(sizeof(struct dq_cqe) == 32, "CQE size is the format");
_Static_assert(sizeof(struct dq_event) == 16, "event size is the format");
_Static_assert(sizeof(struct dq_ring) == 2 * DQ_CACHE_LINE, "indices on lines of their own");
_Static_assert(sizeof(struct dq_header) <= DQ_CACHE_LINE, "the header is one line");
_Static_assert(sizeof(struct dq_bell) == DQ_CACHE_LINE, "the doorbell is one line");
_Static_assert(sizeof(struct dq_notify) == 2 * DQ_CACHE_LINE, "each side's word on its line");

const uint16_t dq_wr_ops[DQ_WR_NOPS] = {
	[DQ_WR_RDMA_WRITE] = DQ_OP_VALID | DQ_OP_REMOTE | DQ_OP_INLINE,
	[DQ_WR_RDMA_WRITE_WITH_IMM] = DQ_OP_VALID | DQ_OP_REMOTE | DQ_OP_IMM | DQ_OP_INLINE,
	[DQ_WR_SEND] = DQ_OP_VALID | DQ_OP_INLINE,
	[DQ_WR_SEND_WITH_IMM] = DQ_OP_VALID | DQ_OP_IMM | DQ_OP_INLINE,
	[DQ_WR_RDMA_READ] = DQ_OP_VALID | DQ_OP_REMOTE,
	[DQ_WR_ATOMIC_CMP_AND_SWP] = DQ_OP_VALID | DQ_OP_REMOTE | DQ_OP_ATOMIC,
	[DQ_WR_ATOMIC_FETCH_AND_ADD] = DQ_OP_VALID | DQ_OP_REMOTE | DQ_OP_ATOMIC,
	[DQ_WR_LOCAL_INV] = DQ_OP_VALID | DQ_OP_INV | DQ_OP_NO_SGE,
	[DQ_WR_BIND_MW] = DQ_OP_VALID | DQ_OP_NO_SGE | DQ_OP_BIND,
	[DQ_WR_SEND_WITH_INV] = DQ_OP_VALID | DQ_OP_INV | DQ_OP_INLINE,
	[DQ_WR_ATOMIC_WRITE] = DQ_OP_VALID | DQ_OP_REMOTE | DQ_OP_INLINE | DQ_OP_ATOMIC_WRITE,
};

static bool
pow2(uint32_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static size_t
line_up(size_t n)
{
	return (n + DQ_CACHE_LINE - 1) & ~(size_t)(DQ_CACHE_LINE - 1);
}

int
dq_geom_check(const struct dq_geom *g)
{
	if (g->nqp == 0 || g->ncq == 0 || !pow2(g->sq_depth) || !pow2(g->rq_depth) ||
	    !pow2(g->cq_depth))
		return -EINVAL;
	if (g->nqp > DQ_MAX_QPS || g->ncq > DQ_MAX_CQS || g->sq_depth > DQ_MAX_DEPTH ||
	    g->rq_depth > DQ_MAX_DEPTH || g->cq_depth > DQ_MAX_DEPTH)
		return -E2BIG;
	return 0;
}

/* The bytes of one ring: its indices, then depth entries of size bytes. */
static size_t
ring_bytes(uint32_t depth, size_t size)
{
	return sizeof(struct dq_ring) + line_up((size_t)depth * size);
}

/* Header, doorbell, the contexts' event rings, the QP slots (SQ then RQ each), the CQ
 * slots (notify lines then ring each). */
static size_t
bell_off(void)
{
	return DQ_CACHE_LINE;
}

static size_t
evq_off(void)
{
	return bell_off() + sizeof(struct dq_bell);
}

static size_t
qp_bytes(const struct dq_geom *g)
{
	return ring_bytes(g->sq_depth, sizeof(struct dq_send_wqe)) +
	       ring_bytes(g->rq_depth, sizeof(struct dq_recv_wqe));
}

static size_t
qp_off(const struct dq_geom *g, uint32_t i)
{
	(void)g;
	return evq_off() + DQ_MAX_CTXS * ring_bytes(DQ_EVENT_DEPTH, sizeof(struct dq_event)) +
	       (size_t)i * qp_bytes(g);
}

static size_t
cq_off(const struct dq_geom *g, uint32_t i)
{
	return qp_off(g, g->nqp) +
	       (size_t)i * (sizeof(struct dq_notify) + ring_bytes(g->cq_depth, sizeof(struct dq_cqe)));
}

size_t
dq_region_size(const struct dq_geom *g)
{
	return cq_off(g, g->ncq);
}

struct dq_ring *
dq_sq(void *base, const struct dq_geom *g, uint32_t i)
{
	return (struct dq_ring *)((char *)base + qp_off(g, i));
}

struct dq_ring *
dq_rq(void *base, const struct dq_geom *g, uint32_t i)
{
	return (struct dq_ring *)((char *)base + qp_off(g, i) +
				  ring_bytes(g->sq_depth, sizeof(struct dq_send_wqe)));
}

struct dq_ring *
dq_cq(void *base, const struct dq_geom *g, uint32_t i)
{
	return (struct dq_ring *)((char *)base + cq_off(g, i) + sizeof(struct dq_notify));
}

struct dq_notify *
dq_cq_notify(void *base, const struct dq_geom *g, uint32_t i)
{
	return (struct dq_notify *)((char *)base + cq_off(g, i));
}

struct dq_bell *
dq_bell(void *base)
{
	return (struct dq_bell *)((char *)base + bell_off());
}

struct dq_ring *
dq_evq(void *base, const struct dq_geom *g, uint32_t ctx)
{
	(void)g;
	return (struct dq_ring *)((char *)base + evq_off() +
				  ctx * ring_bytes(DQ_EVENT_DEPTH, sizeof(struct dq_event)));
}

/* ---- indices -------------------------------------------------------------------- */

int
dq_ring_avail(const struct dq_ring *r, uint32_t cons, uint32_t depth)
{
	uint32_t n = __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE) - cons;

	return n <= depth ? (int)n : -EINVAL;
}

void
dq_ring_consumed(struct dq_ring *r, uint32_t cons)
{
	__atomic_store_n(&r->cons, cons, __ATOMIC_RELEASE);
}

int
dq_ring_room(const struct dq_ring *r, uint32_t prod, uint32_t depth)
{
	uint32_t used = prod - __atomic_load_n(&r->cons, __ATOMIC_ACQUIRE);

	return used <= depth ? (int)(depth - used) : -EINVAL;
}

void
dq_ring_produced(struct dq_ring *r, uint32_t prod)
{
	__atomic_store_n(&r->prod, prod, __ATOMIC_RELEASE);
}

/*
 * One copy out of the ring; the fence keeps the compiler from reading
 * the shared entry again for the copy's fields (the other side may be
 * rewriting it: what was checked must be what is used).
 */
static void
read_once(void *out, const void *entry, size_t size)
{
	memcpy(out, entry, size);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void
dq_send_read(struct dq_ring *r, uint32_t depth, uint32_t i, struct dq_send_wqe *out)
{
	const struct dq_send_wqe *e = dq_ring_entries(r);

	read_once(out, &e[i & (depth - 1)], sizeof(*out));
}

void
dq_recv_read(struct dq_ring *r, uint32_t depth, uint32_t i, struct dq_recv_wqe *out)
{
	const struct dq_recv_wqe *e = dq_ring_entries(r);

	read_once(out, &e[i & (depth - 1)], sizeof(*out));
}

/*
 * Where inline byte off of the descriptor at index i lives: its SGE area,
 * then whole entries after it (wrapping with the ring); *room: the bytes
 * from there to the end of that area or entry.
 */
static uint8_t *
inline_at(struct dq_ring *r, uint32_t depth, uint32_t i, uint32_t off, uint32_t *room)
{
	struct dq_send_wqe *e = dq_ring_entries(r);
	const uint32_t size = (uint32_t)sizeof(*e);

	if (off < DQ_INLINE_HEAD) {
		*room = (uint32_t)DQ_INLINE_HEAD - off;
		return (uint8_t *)e[i & (depth - 1)].sge + off;
	}
	off -= (uint32_t)DQ_INLINE_HEAD;
	*room = size - off % size;
	return (uint8_t *)&e[(i + 1 + off / size) & (depth - 1)] + off % size;
}

void
dq_inline_write(struct dq_ring *r, uint32_t depth, uint32_t i, uint32_t off, const void *src,
		uint32_t len)
{
	const uint8_t *s = src;

	while (len > 0) {
		uint32_t room, n;
		uint8_t *p = inline_at(r, depth, i, off, &room);

		n = len < room ? len : room;
		memcpy(p, s, n);
		s += n;
		off += n;
		len -= n;
	}
}

void
dq_inline_read(struct dq_ring *r, uint32_t depth, uint32_t i, void *dst, uint32_t len)
{
	uint8_t *d = dst;
	uint32_t off = 0;

	while (off < len) {
		uint32_t room, n;
		const uint8_t *p = inline_at(r, depth, i, off, &room);

		n = len - off < room ? len - off : room;
		memcpy(d + off, p, n);
		off += n;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/*
 * A send descriptor's SGE list lies where inline data would: SGE k at
 * inline byte k * 16 (the descriptor's SGE area, then the entries after it).
 */
void
dq_send_sge_write(struct dq_ring *r, uint32_t depth, uint32_t i, uint32_t k,
		  const struct dq_sge *sge)
{
	dq_inline_write(r, depth, i, k * (uint32_t)sizeof(*sge), sge, sizeof(*sge));
}

void
dq_send_sges_read(struct dq_ring *r, uint32_t depth, uint32_t i, const struct dq_send_wqe *w,
		  struct dq_sge *out)
{
	uint32_t n = w->num_sge < DQ_MAX_SGE ? w->num_sge : DQ_MAX_SGE;
	uint32_t head = n < DQ_WQE_SGE ? n : DQ_WQE_SGE;
	uint32_t off = (uint32_t)DQ_INLINE_HEAD;

	memcpy(out, w->sge, head * sizeof(*out));
	while (head < n) {	/* entry by entry: whole SGEs each */
		uint32_t room, take;
		const uint8_t *p = inline_at(r, depth, i, off, &room);

		take = room / (uint32_t)sizeof(*out);
		if (take > n - head)
			take = n - head;
		memcpy(&out[head], p, take * sizeof(*out));
		head += take;
		off += take * (uint32_t)sizeof(*out);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Where SGE k of the receive descriptor at index i lives: the descriptor,
 * then DQ_RECV_CONT_SGE in each entry after it (wrapping with the ring). */
static uint8_t *
recv_sge_at(struct dq_ring *r, uint32_t depth, uint32_t i, uint32_t k)
{
	struct dq_recv_wqe *e = dq_ring_entries(r);

	if (k < DQ_WQE_SGE)
		return (uint8_t *)&e[i & (depth - 1)].sge[k];
	k -= DQ_WQE_SGE;
	return (uint8_t *)&e[(i + 1 + k / DQ_RECV_CONT_SGE) & (depth - 1)] +
	       (k % DQ_RECV_CONT_SGE) * sizeof(struct dq_sge);
}

void
dq_recv_sge_write(struct dq_ring *r, uint32_t depth, uint32_t i, uint32_t k,
		  const struct dq_sge *sge)
{
	memcpy(recv_sge_at(r, depth, i, k), sge, sizeof(*sge));
}

void
dq_recv_sges_read(struct dq_ring *r, uint32_t depth, uint32_t i, const struct dq_recv_wqe *w,
		  struct dq_sge *out)
{
	uint32_t n = w->num_sge < DQ_MAX_SGE ? w->num_sge : DQ_MAX_SGE;
	uint32_t head = n < DQ_WQE_SGE ? n : DQ_WQE_SGE;

	memcpy(out, w->sge, head * sizeof(*out));
	for (uint32_t k = head; k < n; k++)
		memcpy(&out[k], recv_sge_at(r, depth, i, k), sizeof(*out));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* ---- descriptors ------------------------------------------------------------------ */

/* n SGEs: their lengths add up to at most DQ_MAX_MSG, none wraps around. */
int
dq_sges_check(const struct dq_sge *sge, uint32_t n)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (sge[i].addr > UINT64_MAX - sge[i].length)
			return -EMSGSIZE;
		total += sge[i].length;
	}
	return total <= DQ_MAX_MSG ? 0 : -EMSGSIZE;
}

/* An atomic: one 8-byte SGE, the remote address 8-byte aligned (IBTA 9.4.5). */
static int
atomic_check(const struct dq_send_wqe *w)
{
	if (w->num_sge != 1 || w->sge[0].length != 8 || (w->remote_addr & 7) != 0)
		return -EINVAL;
	return 0;
}

/* An ATOMIC WRITE: the 8 bytes of one store, inline or in the SGEs of
 * the descriptor itself (the engine checks the remote address). */
static int
atomic_write_check(const struct dq_send_wqe *w)
{
	uint64_t len = 0;

	if (w->flags & DQ_SEND_INLINE)
		return w->inline_len == 8 ? 0 : -EINVAL;
	if (w->num_sge > DQ_WQE_SGE)
		return -EINVAL;
	for (uint32_t i = 0; i < w->num_sge; i++)
		len += w->sge[i].length;
	return len == 8 ? 0 : -EINVAL;
}

int
dq_send_check(const struct dq_send_wqe *w, bool ud, uint32_t max_ah)
{
	uint16_t ops = w->opcode < DQ_WR_NOPS ? dq_wr_ops[w->opcode] : 0;

	if (!(ops & DQ_OP_VALID) || (w->flags & ~DQ_SEND_FLAGS) != 0 || w->reserved != 0)
		return -EINVAL;
	if (w->num_sge > DQ_MAX_SGE)
		return -E2BIG;
	if ((ops & DQ_OP_NO_SGE) && w->num_sge != 0)
		return -EINVAL;
	if ((ops & DQ_OP_ATOMIC) && atomic_check(w) != 0)
		return -EINVAL;
	if ((ops & DQ_OP_ATOMIC_WRITE) && atomic_write_check(w) != 0)
		return -EINVAL;
	if ((ops & DQ_OP_BIND) && ((w->bind.access & ~DQ_MW_ACCESS) != 0 || w->bind.pad != 0))
		return -EINVAL;
	if (w->flags & DQ_SEND_INLINE) {
		if (!(ops & DQ_OP_INLINE) || w->num_sge != 0)
			return -EINVAL;
		if (w->inline_len > DQ_MAX_INLINE)
			return -EMSGSIZE;
	} else if (w->inline_len != 0) {
		return -EINVAL;
	}
	/* UD carries SENDs only, each to an address handle; RC/UC name none */
	if (ud ? (w->opcode != DQ_WR_SEND && w->opcode != DQ_WR_SEND_WITH_IMM) ||
		 w->ah == 0 || w->ah > max_ah : w->ah != 0)
		return -EINVAL;
	return dq_sges_check(w->sge, w->num_sge < DQ_WQE_SGE ? w->num_sge : DQ_WQE_SGE);
}

int
dq_recv_check(const struct dq_recv_wqe *w)
{
	for (size_t i = 0; i < sizeof(w->pad); i++)
		if (w->pad[i] != 0)
			return -EINVAL;
	if (w->num_sge > DQ_MAX_SGE)
		return -E2BIG;
	return dq_sges_check(w->sge, w->num_sge < DQ_WQE_SGE ? w->num_sge : DQ_WQE_SGE);
}

/* ---- producers and consumers of whole entries ---------------------------------------- */

static int
put(struct dq_ring *r, uint32_t depth, uint32_t *prod, const void *e, size_t size)
{
	int room = dq_ring_room(r, *prod, depth);

	if (room < 0)
		return room;
	if (room == 0)
		return -EAGAIN;
	memcpy((char *)dq_ring_entries(r) + (size_t)(*prod & (depth - 1)) * size, e, size);
	dq_ring_produced(r, ++*prod);
	return 0;
}

static int
take(struct dq_ring *r, uint32_t depth, uint32_t *cons, void *out, size_t size)
{
	int n = dq_ring_avail(r, *cons, depth);

	if (n <= 0)
		return n;
	read_once(out, (char *)dq_ring_entries(r) + (size_t)(*cons & (depth - 1)) * size, size);
	dq_ring_consumed(r, ++*cons);
	return 1;
}

int
dq_send_post(struct dq_ring *r, uint32_t depth, uint32_t *prod, const struct dq_send_wqe *w)
{
	return put(r, depth, prod, w, sizeof(*w));
}

int
dq_recv_post(struct dq_ring *r, uint32_t depth, uint32_t *prod, const struct dq_recv_wqe *w)
{
	return put(r, depth, prod, w, sizeof(*w));
}

int
dq_cqe_take(struct dq_ring *r, uint32_t depth, uint32_t *cons, struct dq_cqe *out)
{
	return take(r, depth, cons, out, sizeof(*out));
}

int
dq_event_take(struct dq_ring *r, uint32_t *cons, struct dq_event *out)
{
	return take(r, DQ_EVENT_DEPTH, cons, out, sizeof(*out));
}

int
dq_cqe_put(struct dq_ring *r, uint32_t depth, uint32_t *prod, const struct dq_cqe *c)
{
	return put(r, depth, prod, c, sizeof(*c));
}

int
dq_event_put(struct dq_ring *r, uint32_t *prod, const struct dq_event *e)
{
	return put(r, DQ_EVENT_DEPTH, prod, e, sizeof(*e));
}
