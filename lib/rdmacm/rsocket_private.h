/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsocket_private.h - rsockets (rdma-core's <rdma/rsocket.h>) on the
 * drop-in's RDMA CM and verbs.
 *
 * A stream rsocket is an RC QP connected through the RDMA CM.  Its wire
 * protocol is rdma-core's (librdmacm/rsocket.c, rsocket(7)), so that
 * either end may be rdma-core's:
 *
 *  - the connection's private data (struct rsw_conn, in the REQ and the
 *    REP) gives the peer this end's receive credits, its receive ring's
 *    first half (data_buf) and the target list (target_sgl) where the
 *    peer writes the ring's next halves (and, after it, riomap's table);
 *  - data is an RDMA WRITE with immediate into the peer's ring, the
 *    immediate carrying the op (bits 31-29) and the length (28-0); the
 *    receiver posts zero-length receives and learns of the data from the
 *    immediate alone;
 *  - credits: a receiver that consumed half its credits or half its ring
 *    writes the freed half into the sender's target list, with immediate
 *    RSW_OP_SGL and the new credit limit (a zero-length write when only
 *    credits are given); a sender never has more messages in flight than
 *    its credits, nor more bytes than the halves it was given;
 *  - control (RSW_OP_CTRL): DISCONNECT (both directions closed) and
 *    SHUTDOWN (the sender's direction), at most RSW_CTRL_MAX in flight.
 *
 * Every rsocket's number is a descriptor of its own (an eventfd), so it
 * never collides with the program's; the table maps it to the rsocket.
 * All rsockets share one RDMA CM event channel, whose events are taken by
 * whichever call runs (rs_cm_pump) and recorded on the rsocket of the id.
 */
#ifndef DROCE_RSOCKET_PRIVATE_H
#define DROCE_RSOCKET_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <rdma/rdma_cma.h>

/* ---- the wire (rdma-core's rsocket protocol, version 1) ------------------ */

#define RSW_VERSION 1
#define RSW_CONN_FLAG_NET (1u << 0)	/* the sender is big-endian */
#define RSW_CONN_FLAG_IOMAP (1u << 1)	/* target_sgl is followed by the iomap table */
#define RSW_SGL_SIZE 2			/* entries of the target list: the two halves */
#define RSW_CTRL_MAX 4			/* control messages in flight */

enum rsw_op {
	RSW_OP_DATA = 0,
	RSW_OP_WRITE = 2,	/* riowrite: a WRITE without immediate, local only */
	RSW_OP_SGL = 4,
	RSW_OP_IOMAP_SGL = 6,
	RSW_OP_CTRL = 7,
};

enum rsw_ctrl {
	RSW_CTRL_DISCONNECT = 0,
	RSW_CTRL_KEEPALIVE = 1,
	RSW_CTRL_SHUTDOWN = 2,
};

static inline uint32_t
rsw_imm(enum rsw_op op, uint32_t data)
{
	return (uint32_t)op << 29 | (data & 0x1fffffff);
}

static inline enum rsw_op
rsw_imm_op(uint32_t imm)
{
	return (enum rsw_op)(imm >> 29);
}

static inline uint32_t
rsw_imm_data(uint32_t imm)
{
	return imm & 0x1fffffff;
}

/* A buffer the peer may write: in the sender's byte order (RSW_CONN_FLAG_NET) */
struct rsw_sge {
	uint64_t addr;
	uint32_t key;
	uint32_t length;
};

/* An entry of the iomap table (riomap): offset maps to sge */
struct rsw_iomap {
	uint64_t offset;
	struct rsw_sge sge;
};

/* The private data of the REQ and REP: big-endian fields */
struct rsw_conn {
	uint8_t version;
	uint8_t flags;
	uint16_t credits;
	uint8_t reserved[3];
	uint8_t target_iomap_size;	/* a scaled value: rsw_scale_to_value */
	struct rsw_sge target_sgl;
	struct rsw_sge data_buf;
};

_Static_assert(sizeof(struct rsw_sge) == 16 && sizeof(struct rsw_iomap) == 24 &&
	       sizeof(struct rsw_conn) == 40, "rsocket wire layout");

/* ---- an rsocket ---------------------------------------------------------- */

/* state bits, ordered as rdma-core's so that "state < RSS_CONNECTED" means
 * not yet connected */
enum {
	RSS_BOUND = 0x0001,
	RSS_LISTENING = 0x0002,
	RSS_OPENING = 0x0004,
	RSS_RESOLVING_ADDR = RSS_OPENING | 0x0010,
	RSS_RESOLVING_ROUTE = RSS_OPENING | 0x0020,
	RSS_CONNECTING = RSS_OPENING | 0x0040,
	RSS_CONNECTED = 0x0100,
	RSS_WRITABLE = 0x0200,
	RSS_READABLE = 0x0400,
	RSS_CONNECT_RDWR = RSS_CONNECTED | RSS_READABLE | RSS_WRITABLE,
	RSS_CONNECT_ERROR = 0x0800,
	RSS_DISCONNECTED = 0x1000,
	RSS_ERROR = 0x2000,
};

/* RDMA CM events recorded on an rsocket by rs_cm_pump (rs_cm.lock) */
enum {
	RSE_ADDR = 1u << 0,
	RSE_ROUTE = 1u << 1,
	RSE_ESTABLISHED = 1u << 2,
	RSE_ERROR = 1u << 3,
	RSE_DISCONNECTED = 1u << 4,
};

/* A connection request a listener holds until raccept */
struct rs_request {
	struct rs_request *next;
	struct rdma_cm_id *id;
	struct rsw_conn conn;
	bool conn_ok;		/* the private data held a struct rsw_conn */
};

/* A message announced by the peer's immediate, not yet read */
struct rs_rmsg {
	uint32_t op;
	uint32_t len;
};

/* A buffer of this end the peer may riowrite (riomap PROT_WRITE) */
struct rs_iomap {
	struct ibv_mr *mr;	/* NULL: the slot is free */
	uint64_t offset;
	bool sent;		/* its entry was written into the peer's table */
};

struct rsock {
	int fd;			/* the rsocket's number: an eventfd of its own */
	int type;
	pthread_mutex_t lock;	/* everything below but the rs_cm fields */
	unsigned int state;
	int err;		/* SO_ERROR */
	int fd_flags;		/* F_SETFL */
	uint32_t so_opts;	/* SOL_SOCKET flags, 1 << optname */
	uint32_t tcp_opts;	/* IPPROTO_TCP flags */
	uint32_t keepalive_time;

	/* sizes, settable until the connection starts */
	uint32_t sq_size, rq_size, sq_inline, iomap_size;
	uint32_t sbuf_size, rbuf_size;

	/* the RDMA CM (fields under rs_cm.lock: cm_events, cm_status,
	 * peer_conn, requests) */
	struct rdma_cm_id *id;
	unsigned int cm_events;
	int cm_status;
	struct rsw_conn peer_conn;
	bool peer_conn_ok;
	struct rs_request *requests;

	/* verbs */
	struct ibv_pd *pd;
	struct ibv_comp_channel *cq_channel;
	struct ibv_cq *cq;
	struct ibv_mr *smr, *rmr, *tmr;
	uint8_t *sbuf;		/* sbuf_size, then RSW_CTRL_MAX control slots */
	uint8_t *rbuf;
	struct rsw_sge *target;	/* target list, then the iomap table */
	bool cq_armed;

	/* sending */
	uint16_t sseq_no, sseq_comp;
	uint32_t sqe_avail;
	uint32_t sbuf_avail, sbuf_off;
	unsigned int ctrl_seqno, ctrl_max_seqno;
	int target_sge;
	struct rsw_sge remote_sgl, remote_iomap;
	int remote_sge;
	bool swap;		/* the peer's byte order differs */

	/* receiving */
	uint16_t rseq_no, rseq_comp;
	uint32_t rbuf_avail, rbuf_free_off, rbuf_off;
	struct rs_rmsg *rmsg;	/* rq_size + 1 */
	uint32_t rmsg_head, rmsg_tail;

	/* riomap */
	struct rs_iomap *iomaps;	/* remote_iomap.length slots */
	bool iomap_pending;

	/* SOCK_DGRAM (rsocket_dgram.c); ud: the last SIDR answer of a UD
	 * id this rsocket resolves with (under rs_cm.lock) */
	struct rs_dgram *dg;
	uint32_t dg_qpn;		/* its QP's number, the SIDR_REP's */
	struct rdma_ud_param ud;
	bool ud_ok;
};

/* The RDMA CM channel all rsockets share, and the lock of its events */
struct rs_cm_shared {
	pthread_mutex_t lock;
	struct rdma_event_channel *ch;
};
extern struct rs_cm_shared rs_cm;

/* rdma-core's limits and transfer sizes */
#define RS_QP_MAX_SIZE 0xfffeu
#define RS_MAX_TRANSFER 65536u
#define RS_SNDLOWAT 2048u		/* a sender waits for this much ring */
/* a blocked call polls (running droce) this long, then sleeps in poll(2)
 * RS_SLEEP_MS at a time */
#define RS_SPIN_NS 2000000ull
#define RS_SLEEP_MS 1

struct rs_pause {
	uint64_t start;
};
#define RS_PAUSE_INIT { 0 }

/* rsocket_table.c */
struct rsock *rs_alloc(int type, const struct rsock *inherit);
int rs_insert(struct rsock *rs);
struct rsock *rs_lookup(int fd);
void rs_free(struct rsock *rs);
int rs_cm_init(void);
void rs_cm_pump(void);
unsigned int rs_cm_events(struct rsock *rs, int *status);
int rs_fail(int err);

/* rsocket_conn.c */
int rs_connect_step(struct rsock *rs);
int rs_wait_connect(struct rsock *rs, bool nonblock);

/* rsocket_data.c */
void rs_process(struct rsock *rs);
int rs_get_comp(struct rsock *rs, bool nonblock, bool (*test)(struct rsock *rs));
bool rs_can_send(const struct rsock *rs);
bool rs_have_rdata(const struct rsock *rs);
bool rs_all_sends_done(struct rsock *rs);
int rs_post_write(struct rsock *rs, struct ibv_sge *sge, int nsge, uint32_t wr_data,
		  bool imm, int flags, uint64_t addr, uint32_t rkey);
int rs_post_ctrl(struct rsock *rs, uint32_t imm);
int rs_send_iomaps(struct rsock *rs, bool nonblock);
uint32_t rs_sbuf_copy(struct rsock *rs, const void *buf, uint32_t len, struct ibv_sge sge[2]);
bool rs_conn_can_send(struct rsock *rs);
void rs_arm(struct rsock *rs);
uint64_t rs_now_ns(void);
void rs_pause(struct rs_pause *p, int fd);
bool rs_nonblocking(const struct rsock *rs, int flags);

/* rsocket_dgram.c */
int rs_dgram_bind(struct rsock *rs, const struct sockaddr *addr, socklen_t len);
int rs_dgram_connect(struct rsock *rs, const struct sockaddr *addr, socklen_t len);
ssize_t rs_dgram_sendv(struct rsock *rs, const struct iovec *iov, int iovcnt, int flags,
		       const struct sockaddr *dst, socklen_t dstlen);
ssize_t rs_dgram_recv(struct rsock *rs, void *buf, size_t len, int flags, struct sockaddr *src,
		      socklen_t *srclen);
short rs_dgram_revents(struct rsock *rs, short events);
int rs_dgram_arm(struct rsock *rs);
int rs_dgram_peer(struct rsock *rs, struct sockaddr *addr, socklen_t *addrlen);
void rs_dgram_free(struct rsock *rs);

/* rsocket_opt.c */
uint32_t rsw_scale_to_value(uint32_t value);
uint8_t rsw_value_to_scale(uint32_t value);

#endif /* DROCE_RSOCKET_PRIVATE_H */
