/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dq.h - the shared queue format between a plain-process application and
 * droced (README.md): one region (a memfd) per application holding, per
 * QP slot, a send and a receive ring, per CQ slot a completion ring, and
 * per context of the application a ring of its asynchronous events.  Every ring is an array of fixed-size
 * descriptors with one producer and one consumer, free-running 32-bit
 * indices on cache lines of their own (io_uring's SQ/CQ shape).
 *
 * Pure C, no EAL.  Whatever the other side can write is hostile: a
 * consumer keeps its own index, reads the producer's once and checks it
 * (dq_ring_avail), copies a descriptor out of the ring before it looks at
 * it (dq_*_read) and checks the copy (dq_*_check); a producer keeps its
 * own index and checks the consumer's (dq_ring_room).
 */
#ifndef DQ_H
#define DQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DQ_MAGIC 0x31514f52u	/* "ROQ1" */
#define DQ_VERSION 6
#define DQ_CACHE_LINE 64
#define DQ_WQE_SGE 4		/* SGEs in a descriptor itself */
/*
 * A work request's SGEs: DQ_WQE_SGE in its descriptor, the rest in whole
 * ring entries after it (dq_send_sge_slots, dq_recv_slots).  16 is
 * droce.h's DROCE_MAX_SGE, what the in-process engine grants and its
 * query_device answers, so a region carries whatever a QP of the engine
 * takes (droced and the provider assert that the two agree); at most 3
 * entries a send and 4 a receive descriptor.
 */
#define DQ_MAX_SGE 16
#define DQ_MAX_DEPTH 4096	/* entries of one ring, a power of two */
#define DQ_MAX_QPS 64		/* QP slots of one region */
#define DQ_MAX_CQS 64		/* CQ slots */
#define DQ_EVENT_DEPTH 64	/* a context's event ring */
/* Event rings of one region: one per context the application opens on
 * droced (its index names it in the requests), each counted on that
 * context's own eventfd. */
#define DQ_MAX_CTXS 16
#define DQ_MAX_MSG (UINT32_C(1) << 31)	/* a message's bytes (IBTA: 2^31) */
#define DQ_MAX_INLINE 256	/* a send descriptor's inline bytes (droce.h's limit) */

/*
 * Work request opcodes: ibverbs' values (enum ibv_wr_opcode, droce.h's
 * enum droce_wr_opcode), so a provider copies them through.  dq_wr_ops
 * says which the format carries.
 */
enum dq_wr_opcode {
	DQ_WR_RDMA_WRITE = 0,
	DQ_WR_RDMA_WRITE_WITH_IMM = 1,
	DQ_WR_SEND = 2,
	DQ_WR_SEND_WITH_IMM = 3,
	DQ_WR_RDMA_READ = 4,
	DQ_WR_ATOMIC_CMP_AND_SWP = 5,
	DQ_WR_ATOMIC_FETCH_AND_ADD = 6,
	DQ_WR_LOCAL_INV = 7,
	DQ_WR_BIND_MW = 8,
	DQ_WR_SEND_WITH_INV = 9,
	DQ_WR_ATOMIC_WRITE = 15,	/* IBTA 1.5: 8 bytes, one store */
	DQ_WR_NOPS = 16,
};

/* Send flags: ibverbs' values (enum ibv_send_flags). */
#define DQ_SEND_FENCE (1u << 0)
#define DQ_SEND_SIGNALED (1u << 1)
#define DQ_SEND_SOLICITED (1u << 2)
#define DQ_SEND_INLINE (1u << 3)	/* the data in the ring (dq_send_slots) */
#define DQ_SEND_FLAGS (DQ_SEND_FENCE | DQ_SEND_SIGNALED | DQ_SEND_SOLICITED | DQ_SEND_INLINE)

/* What an opcode needs, one row each (dq_wr_ops, dq.c). */
#define DQ_OP_VALID (1u << 0)
#define DQ_OP_REMOTE (1u << 1)	/* remote_addr, rkey */
#define DQ_OP_IMM (1u << 2)	/* imm (network byte order) */
#define DQ_OP_INV (1u << 3)	/* imm is the rkey to invalidate */
#define DQ_OP_ATOMIC (1u << 4)	/* one 8-byte SGE, remote_addr 8-aligned */
#define DQ_OP_NO_SGE (1u << 5)	/* LOCAL_INV */
#define DQ_OP_INLINE (1u << 6)	/* its data may be inline (ibverbs: SEND, WRITE) */
#define DQ_OP_BIND (1u << 7)	/* BIND_MW: bind, not the atomic's or UD's fields */
#define DQ_OP_ATOMIC_WRITE (1u << 8)	/* exactly 8 bytes: its SGEs' or inline */
/* A bind's rights: ibverbs' remote ones (IBV_ACCESS_REMOTE_WRITE, _READ, _ATOMIC) */
#define DQ_MW_ACCESS ((1u << 1) | (1u << 2) | (1u << 3))
extern const uint16_t dq_wr_ops[DQ_WR_NOPS];

struct dq_sge {
	uint64_t addr;		/* the application's address (its MR's iova) */
	uint32_t length;
	uint32_t lkey;
};

/* A send queue entry (128 bytes). */
struct dq_send_wqe {
	uint64_t wr_id;
	uint8_t opcode;		/* enum dq_wr_opcode */
	uint8_t num_sge;
	uint16_t flags;		/* DQ_SEND_* */
	uint32_t imm;		/* immediate data, or the rkey to invalidate */
	uint64_t remote_addr;	/* BIND_MW: the address bound */
	uint32_t rkey;		/* BIND_MW: the window's new rkey */
	uint32_t ah;		/* UD: address handle index (1..), 0: none */
	union {
		struct {
			uint64_t compare_add;
			uint64_t swap;
			uint32_t remote_qpn;	/* UD */
			uint32_t remote_qkey;	/* UD */
		};
		/* BIND_MW: imm is the window's index (its rkey's upper 24 bits) */
		struct {
			uint64_t length;	/* 0: unbind */
			uint32_t mr_lkey;	/* the MR bound onto (length 0: ignored) */
			uint32_t access;	/* DQ_MW_ACCESS bits */
			uint64_t pad;		/* 0 */
		} bind;
	};
	/* the first DQ_WQE_SGE of num_sge SGEs, the rest in the entries
	 * after it (dq_send_sge_write, dq_send_sges_read: the same bytes as
	 * inline data's).  DQ_SEND_INLINE: no SGE; inline_len bytes of
	 * data, the first DQ_INLINE_HEAD here, the rest in the entries after
	 * it, whole (dq_send_slots, dq_inline_write) */
	struct dq_sge sge[DQ_WQE_SGE];
	uint32_t inline_len;	/* DQ_SEND_INLINE: up to DQ_MAX_INLINE; else 0 */
	uint32_t reserved;	/* 0 */
};
#define DQ_INLINE_HEAD (DQ_WQE_SGE * sizeof(struct dq_sge))

/*
 * The ring entries one send descriptor takes: 1, or for inline_len bytes
 * inline, 1 + the 128-byte entries after it that hold what its SGE area
 * does not (256 bytes: 3).  mlx5's WQE basic blocks are the same idea.
 */
static inline uint32_t
dq_send_slots(uint32_t inline_len)
{
	uint32_t rest = inline_len > DQ_INLINE_HEAD ? inline_len - (uint32_t)DQ_INLINE_HEAD : 0;

	return 1 + (rest + (uint32_t)sizeof(struct dq_send_wqe) - 1) /
			   (uint32_t)sizeof(struct dq_send_wqe);
}

/*
 * The ring entries a send descriptor of num_sge SGEs takes: its SGE list
 * is laid out as inline data of num_sge * 16 bytes (8 SGEs an entry
 * after the descriptor's 4: 16 SGEs take 3 entries).
 */
static inline uint32_t
dq_send_sge_slots(uint32_t num_sge)
{
	return dq_send_slots(num_sge * (uint32_t)sizeof(struct dq_sge));
}

/* A receive queue entry (80 bytes). */
struct dq_recv_wqe {
	uint64_t wr_id;
	uint8_t num_sge;
	uint8_t pad[7];		/* 0 */
	struct dq_sge sge[DQ_WQE_SGE];	/* the rest in the entries after it */
};
/* SGEs in one receive entry after a descriptor (its 80 bytes: 5). */
#define DQ_RECV_CONT_SGE (sizeof(struct dq_recv_wqe) / sizeof(struct dq_sge))

/* The ring entries a receive descriptor of num_sge SGEs takes: 1, and
 * one more for each DQ_RECV_CONT_SGE beyond DQ_WQE_SGE (16 SGEs: 4). */
static inline uint32_t
dq_recv_slots(uint32_t num_sge)
{
	uint32_t rest = num_sge > DQ_WQE_SGE ? num_sge - DQ_WQE_SGE : 0;

	return 1 + (rest + (uint32_t)DQ_RECV_CONT_SGE - 1) / (uint32_t)DQ_RECV_CONT_SGE;
}

/* A completion (32 bytes): droce.h's struct droce_wc, narrowed. */
struct dq_cqe {
	uint64_t wr_id;
	uint8_t status;		/* enum droce_wc_status */
	uint8_t opcode;		/* enum droce_wc_opcode */
	uint16_t wc_flags;
	uint32_t byte_len;
	uint32_t imm;		/* or the invalidated rkey */
	uint32_t qp_num;
	uint32_t src_qp;
	uint16_t vendor_err;	/* droce's engine sets none */
	uint8_t sl;		/* a UD receive's L3 header (droce.h DROCE_WC_SL_ROCE_*):
				 * UCX's UD transport drops a datagram without it */
	uint8_t reserved;	/* 0 */
};
/* qp_num of a completion the application took out of its ring in place
 * (its QP reset; QPNs are 24-bit): its polls skip it. */
#define DQ_CQE_CLEANED UINT32_MAX

/* An asynchronous event (16 bytes). */
struct dq_event {
	uint32_t type;		/* enum droce_event_type */
	uint32_t slot;		/* the QP's or CQ's slot, UINT32_MAX: none */
	uint64_t name;		/* the name the application gave the object */
};

/* The indices of one ring, each on a cache line of its own. */
struct dq_ring {
	uint32_t prod;
	uint8_t pad0[DQ_CACHE_LINE - sizeof(uint32_t)];
	uint32_t cons;
	uint8_t pad1[DQ_CACHE_LINE - sizeof(uint32_t)];
};

/*
 * The doorbell line (one per region, after the header): droced sets
 * sleeping before it blocks in poll(2) and clears it when it wakes.  An
 * application that published a producer index (release), then a full
 * fence, then finds sleeping set sends one byte on the doorbell socket
 * (DQ_DOORBELL); droced, between setting it (a full fence after) and
 * blocking, reads every producer index once more.  So either droced sees
 * the index or the application sees the flag: no work request waits for
 * droced's timeout, and none costs a system call while droced spins.
 */
struct dq_bell {
	uint32_t sleeping;	/* droced writes; 1: blocked or about to */
	uint8_t pad[DQ_CACHE_LINE - sizeof(uint32_t)];
};

/*
 * A CQ slot's completion events (ibv_req_notify_cq), before its ring: the
 * application's line holds its arm, a sequence number in the bits above
 * bit 0 (bumped for each arm) and bit 0 solicited-only; droced's line
 * the events it fired.  droced, after publishing completions (release,
 * then a full fence), reads the arm once; a sequence it has not fired
 * for fires: fired + 1 (release), then one count on the channel's
 * eventfd passed with the CQ's DQ_ATTACH.  The application arms, a full
 * fence, then polls the ring again (ibverbs' "arm, poll, wait").
 */
struct dq_notify {
	uint32_t arm;		/* the application's */
	uint8_t pad0[DQ_CACHE_LINE - sizeof(uint32_t)];
	uint32_t fired;		/* droced's */
	uint8_t pad1[DQ_CACHE_LINE - sizeof(uint32_t)];
};
#define DQ_ARM_SOLICITED 1u
#define DQ_ARM_SN(arm) ((arm) >> 1)

/* A region's shape, chosen by the application, checked by droced. */
struct dq_geom {
	uint32_t nqp, ncq;
	uint32_t sq_depth, rq_depth, cq_depth;	/* powers of two */
};

/*
 * The region's first cache line, written by droced when it makes the
 * region, for the application; droced never reads it back (its own copy
 * of the shape is what it uses).
 */
struct dq_header {
	uint32_t magic, version;
	struct dq_geom geom;
	uint64_t size;
};

/* 0, -EINVAL (a depth not a power of two, zero counts), -E2BIG (above the
 * DQ_MAX_* limits). */
int dq_geom_check(const struct dq_geom *g);
/* The region's bytes for a checked shape. */
size_t dq_region_size(const struct dq_geom *g);

/* The rings of a region at base with shape g (checked), slot i < count. */
struct dq_ring *dq_sq(void *base, const struct dq_geom *g, uint32_t i);
struct dq_ring *dq_rq(void *base, const struct dq_geom *g, uint32_t i);
struct dq_ring *dq_cq(void *base, const struct dq_geom *g, uint32_t i);
/* Context ctx's event ring, ctx < DQ_MAX_CTXS. */
struct dq_ring *dq_evq(void *base, const struct dq_geom *g, uint32_t ctx);
struct dq_bell *dq_bell(void *base);
struct dq_notify *dq_cq_notify(void *base, const struct dq_geom *g, uint32_t i);

/* A ring's entries follow its indices. */
static inline void *
dq_ring_entries(struct dq_ring *r)
{
	return r + 1;
}

/*
 * Consumer: how many entries the producer published beyond our own
 * index cons (its index read once, acquire), or -EINVAL when that index
 * is not within depth of ours (garbage, or ahead by more than the ring).
 */
int dq_ring_avail(const struct dq_ring *r, uint32_t cons, uint32_t depth);
/* Consumer: the entries before cons taken (release). */
void dq_ring_consumed(struct dq_ring *r, uint32_t cons);
/*
 * Producer: free entries beyond our own index prod (the consumer's read
 * once, acquire), or -EINVAL when the consumer's index is ahead of ours
 * or more than depth behind.
 */
int dq_ring_room(const struct dq_ring *r, uint32_t prod, uint32_t depth);
/* Producer: the entries before prod published (release). */
void dq_ring_produced(struct dq_ring *r, uint32_t prod);

/* Descriptor i (any index: masked) copied out of the ring, read once. */
void dq_send_read(struct dq_ring *r, uint32_t depth, uint32_t i, struct dq_send_wqe *out);
void dq_recv_read(struct dq_ring *r, uint32_t depth, uint32_t i, struct dq_recv_wqe *out);
/*
 * The inline data of the send descriptor at index i: bytes [off, off + len)
 * written (the application), or its first len bytes copied out, once
 * (droced, len from its checked copy of the descriptor, at most
 * DQ_MAX_INLINE: it reads no entry beyond the descriptor's own).
 */
void dq_inline_write(struct dq_ring *r, uint32_t depth, uint32_t i, uint32_t off,
		     const void *src, uint32_t len);
void dq_inline_read(struct dq_ring *r, uint32_t depth, uint32_t i, void *dst, uint32_t len);

/*
 * The entries a checked copy of a send descriptor takes: its inline data's
 * (dq_send_slots), or its SGEs' (dq_send_sge_slots).  A consumer takes the
 * descriptor only when the producer index it read covers them all.
 */
static inline uint32_t
dq_send_entries(const struct dq_send_wqe *w)
{
	return (w->flags & DQ_SEND_INLINE) ? dq_send_slots(w->inline_len) :
					     dq_send_sge_slots(w->num_sge);
}

/*
 * SGE k (below DQ_MAX_SGE) of the descriptor at index i written (the
 * application: in the descriptor for k below DQ_WQE_SGE, else in the
 * entries after it, before it publishes the index past them).
 */
void dq_send_sge_write(struct dq_ring *r, uint32_t depth, uint32_t i, uint32_t k,
		       const struct dq_sge *sge);
void dq_recv_sge_write(struct dq_ring *r, uint32_t depth, uint32_t i, uint32_t k,
		       const struct dq_sge *sge);
/*
 * droced: the w->num_sge SGEs (at most DQ_MAX_SGE) of the checked copy w
 * of the descriptor at index i into out, the first DQ_WQE_SGE from the
 * copy, the rest copied once out of the entries after it (the caller made
 * sure they were published: dq_send_entries, dq_recv_slots).  The list is
 * then checked whole (dq_sges_check).
 */
void dq_send_sges_read(struct dq_ring *r, uint32_t depth, uint32_t i, const struct dq_send_wqe *w,
		       struct dq_sge *out);
void dq_recv_sges_read(struct dq_ring *r, uint32_t depth, uint32_t i, const struct dq_recv_wqe *w,
		       struct dq_sge *out);
/* n SGEs: 0, or -EMSGSIZE (their lengths add to more than DQ_MAX_MSG, or
 * an SGE's range wraps around). */
int dq_sges_check(const struct dq_sge *sge, uint32_t n);

/*
 * A copied descriptor checked on its own: 0, -EINVAL (unknown opcode or
 * flags, reserved bits set, an atomic's SGE or alignment wrong, an
 * ATOMIC WRITE of other than 8 bytes (inline, or in the descriptor's own
 * SGEs), an AH
 * index beyond max_ah, or where none belongs), -E2BIG (more SGEs than
 * DQ_MAX_SGE), -EMSGSIZE (the SGEs in the descriptor add to more than
 * DQ_MAX_MSG, or one's range wraps around, or inline data above
 * DQ_MAX_INLINE).  SGEs beyond DQ_WQE_SGE are in the entries after it:
 * the caller's to read and check (dq_send_sges_read, dq_sges_check).
 * Inline data: only for the opcodes of DQ_OP_INLINE, with no SGE; without
 * DQ_SEND_INLINE, inline_len is 0.  A bind: rights of DQ_MW_ACCESS only, its
 * pad 0 (the window and the MR are the caller's to look up).  ud: the QP is UD (an AH index
 * 1..max_ah needed).  Keys are the caller's to check.
 */
int dq_send_check(const struct dq_send_wqe *w, bool ud, uint32_t max_ah);
int dq_recv_check(const struct dq_recv_wqe *w);

/* The application's side (a provider): one descriptor into a ring whose
 * own index is *prod: 0, -EAGAIN (full), -EINVAL (consumer index bad). */
int dq_send_post(struct dq_ring *r, uint32_t depth, uint32_t *prod,
		 const struct dq_send_wqe *w);
int dq_recv_post(struct dq_ring *r, uint32_t depth, uint32_t *prod,
		 const struct dq_recv_wqe *w);
/* One completion or event out of a ring whose own index is *cons: 1, 0
 * (none), -EINVAL (producer index bad). */
int dq_cqe_take(struct dq_ring *r, uint32_t depth, uint32_t *cons, struct dq_cqe *out);
int dq_event_take(struct dq_ring *r, uint32_t *cons, struct dq_event *out);
/* droced's side: one completion or event in: 0, -EAGAIN, -EINVAL. */
int dq_cqe_put(struct dq_ring *r, uint32_t depth, uint32_t *prod, const struct dq_cqe *c);
int dq_event_put(struct dq_ring *r, uint32_t *prod, const struct dq_event *e);

/*
 * dq_sock.c: one message of len bytes on an AF_UNIX socket with at most
 * one fd (SCM_RIGHTS; -1: none): 0 or -errno.  Receiving: the bytes or
 * -errno, *fd the fd passed with it (close-on-exec) or -1; more fds, or a
 * truncated control message, are closed.
 */
int dq_sock_send(int sock, const void *buf, size_t len, int fd);
ssize_t dq_sock_recv(int sock, void *buf, size_t len, int *fd);

#endif /* DQ_H */
