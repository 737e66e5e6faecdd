/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsocket_data.c - a connected stream rsocket's data: the CQ (one for
 * sends and receives), credits, waiting, and the send and receive calls.
 *
 * Send work requests carry their immediate (op and length) in wr_id, so
 * that a completion gives back what it used: a send queue entry and the
 * bytes of the send ring (data, iomap entries), or a control slot (SGL,
 * CTRL).  Receive completions (wr_id bit 63) carry the peer's immediate:
 * DATA is queued (rmsg) for rrecv, SGL raises the send credits, CTRL ends
 * a direction.  Each receive is posted again at once; the peer's credits
 * (rseq_no + rq_size) bound the messages queued here.
 *
 * Waiting: droce's engine may run only inside verbs calls, so a blocked
 * call keeps polling the CQ (which runs it) for RS_SPIN_NS, then sleeps
 * in poll() on the completion channel (woken by a transport lcore, if
 * droce has one) RS_SLEEP_MS at a time, polling again after each.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rsocket.h>

#include "rsocket_private.h"

#define RS_WR_RECV (UINT64_C(1) << 63)
#define RS_POLL_BATCH 16

uint64_t
rs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
rs_pause(struct rs_pause *p, int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t t = rs_now_ns();

	if (p->start == 0)
		p->start = t;
	if (t - p->start < RS_SPIN_NS || fd < 0)
		sched_yield();
	else
		poll(&pfd, 1, RS_SLEEP_MS);
}

bool
rs_nonblocking(const struct rsock *rs, int flags)
{
	return (rs->fd_flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
}

/* ---- posting ------------------------------------------------------------- */

int
rs_post_write(struct rsock *rs, struct ibv_sge *sge, int nsge, uint32_t wr_data, bool imm,
	      int flags, uint64_t addr, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_data,
		.sg_list = sge,
		.num_sge = nsge,
		.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
		.send_flags = (unsigned int)flags,
		.imm_data = htobe32(wr_data),
		.wr.rdma = { .remote_addr = addr, .rkey = rkey },
	}, *bad;
	int rc = ibv_post_send(rs->id->qp, &wr, &bad);

	return rc != 0 ? rs_fail(rc) : 0;
}

/* A zero-length WRITE with immediate: credits or control. */
int
rs_post_ctrl(struct rsock *rs, uint32_t imm)
{
	return rs_post_write(rs, NULL, 0, imm, true, 0, 0, 0);
}

static struct rsw_sge
sge_order(const struct rsock *rs, uint64_t addr, uint32_t key, uint32_t len)
{
	struct rsw_sge s = { .addr = addr, .key = key, .length = len };

	if (rs->swap) {
		s.addr = __builtin_bswap64(s.addr);
		s.key = __builtin_bswap32(s.key);
		s.length = __builtin_bswap32(s.length);
	}
	return s;
}

/* Credits to the peer: the freed half of the ring (written into its
 * target list) when there is one, else credits alone. */
static void
send_credits(struct rsock *rs)
{
	uint32_t half = rs->rbuf_size / 2;
	uint32_t imm;

	rs->ctrl_seqno++;
	rs->rseq_comp = (uint16_t)(rs->rseq_no + rs->rq_size / 2);
	imm = rsw_imm(RSW_OP_SGL, (uint16_t)(rs->rseq_no + rs->rq_size));
	if (rs->rbuf_avail >= half) {
		struct rsw_sge s = sge_order(rs, (uintptr_t)&rs->rbuf[rs->rbuf_free_off],
					     rs->rmr->rkey, half);
		struct ibv_sge sge = { .length = sizeof(s) };
		int flags = 0;

		if (rs->sq_inline >= sizeof(s)) {
			sge.addr = (uintptr_t)&s;
			flags = IBV_SEND_INLINE;
		} else {	/* a control slot after the send ring */
			struct rsw_sge *slot = (struct rsw_sge *)(rs->sbuf + rs->sbuf_size) +
					       (rs->ctrl_seqno % RSW_CTRL_MAX);

			*slot = s;
			sge.addr = (uintptr_t)slot;
			sge.lkey = rs->smr->lkey;
		}
		rs_post_write(rs, &sge, 1, imm, true, flags,
			      rs->remote_sgl.addr + rs->remote_sge * sizeof(struct rsw_sge),
			      rs->remote_sgl.key);
		rs->rbuf_avail -= half;
		rs->rbuf_free_off = (rs->rbuf_free_off + half) % rs->rbuf_size;
		if ((uint32_t)++rs->remote_sge == rs->remote_sgl.length)
			rs->remote_sge = 0;
	} else {
		rs_post_ctrl(rs, imm);
	}
}

static void
update_credits(struct rsock *rs)
{
	if ((rs->rbuf_avail >= rs->rbuf_size / 2 ||
	     (int16_t)(rs->rseq_no - rs->rseq_comp) >= 0) &&
	    rs->ctrl_seqno != rs->ctrl_max_seqno && (rs->state & RSS_CONNECTED))
		send_credits(rs);
}

/* ---- completions --------------------------------------------------------- */

static void
recv_done(struct rsock *rs, uint32_t imm)
{
	switch (rsw_imm_op(imm)) {
	case RSW_OP_SGL:
		rs->sseq_comp = (uint16_t)rsw_imm_data(imm);
		break;
	case RSW_OP_IOMAP_SGL:	/* the peer's table changed: read at riowrite */
	case RSW_OP_WRITE:
		break;
	case RSW_OP_CTRL:
		if (rsw_imm_data(imm) == RSW_CTRL_DISCONNECT) {
			rs->state = RSS_DISCONNECTED;
		} else if (rsw_imm_data(imm) == RSW_CTRL_SHUTDOWN) {
			if (rs->state & RSS_WRITABLE)
				rs->state &= ~(unsigned int)RSS_READABLE;
			else
				rs->state = RSS_DISCONNECTED;
		}
		break;
	default:
		rs->rmsg[rs->rmsg_tail].op = rsw_imm_op(imm);
		rs->rmsg[rs->rmsg_tail].len = rsw_imm_data(imm);
		if (++rs->rmsg_tail == rs->rq_size + 1)
			rs->rmsg_tail = 0;
		break;
	}
}

static void
send_done(struct rsock *rs, const struct ibv_wc *wc)
{
	uint32_t data = (uint32_t)wc->wr_id;

	switch (rsw_imm_op(data)) {
	case RSW_OP_SGL:
	case RSW_OP_CTRL:
		rs->ctrl_max_seqno++;
		break;
	case RSW_OP_IOMAP_SGL:
		rs->sqe_avail++;
		rs->sbuf_avail += sizeof(struct rsw_iomap);
		break;
	default:
		rs->sqe_avail++;
		rs->sbuf_avail += rsw_imm_data(data);
		break;
	}
	if (wc->status != IBV_WC_SUCCESS && (rs->state & RSS_CONNECTED)) {
		rs->state = RSS_ERROR;
		rs->err = EIO;
	}
}

static void
poll_cq(struct rsock *rs)
{
	struct ibv_recv_wr rwr = { .wr_id = RS_WR_RECV }, *bad;
	struct ibv_wc wc[RS_POLL_BATCH];
	unsigned int recvs = 0;
	int n, i;

	while ((n = ibv_poll_cq(rs->cq, RS_POLL_BATCH, wc)) > 0) {
		for (i = 0; i < n; i++) {
			if (!(wc[i].wr_id & RS_WR_RECV)) {
				send_done(rs, &wc[i]);
				continue;
			}
			if (wc[i].status != IBV_WC_SUCCESS)
				continue;	/* flushed at the end */
			recvs++;
			if (wc[i].wc_flags & IBV_WC_WITH_IMM)
				recv_done(rs, be32toh(wc[i].imm_data));
		}
		if (n < RS_POLL_BATCH)
			break;
	}
	if (!(rs->state & RSS_CONNECTED))
		return;
	while (recvs-- > 0) {
		if (ibv_post_recv(rs->id->qp, &rwr, &bad) != 0) {
			rs->state = RSS_ERROR;
			rs->err = ENOMEM;
			return;
		}
	}
}

/* The CM's word on a connected rsocket: the peer gone without its CTRL. */
static void
cm_check(struct rsock *rs)
{
	if ((rs->state & RSS_CONNECTED) && (rs_cm_events(rs, NULL) & RSE_DISCONNECTED))
		rs->state = RSS_DISCONNECTED;
}

void
rs_process(struct rsock *rs)
{
	if (rs->cq == NULL)
		return;
	update_credits(rs);
	poll_cq(rs);
	update_credits(rs);
}

/* Drain the completion channel's events (after poll() said readable). */
static void
cq_events(struct rsock *rs)
{
	struct ibv_cq *cq;
	void *ctx;
	struct pollfd pfd = { .fd = rs->cq_channel->fd, .events = POLLIN };

	while (poll(&pfd, 1, 0) == 1 && ibv_get_cq_event(rs->cq_channel, &cq, &ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		rs->cq_armed = false;
	}
}

/* Before sleeping on the completion channel: its events taken, the CQ
 * armed (once per event). */
void
rs_arm(struct rsock *rs)
{
	if (rs->cq == NULL)
		return;
	cq_events(rs);
	if (!rs->cq_armed) {
		ibv_req_notify_cq(rs->cq, 0);
		rs->cq_armed = true;
	}
}

int
rs_get_comp(struct rsock *rs, bool nonblock, bool (*test)(struct rsock *rs))
{
	struct rs_pause pause = RS_PAUSE_INIT;
	unsigned int rounds = 0;

	for (;;) {
		rs_process(rs);
		if (test(rs))
			return 0;
		if ((++rounds & 63) == 0 || nonblock)
			cm_check(rs);
		if (test(rs))
			return 0;
		if (rs->state & RSS_ERROR)
			return rs_fail(rs->err != 0 ? rs->err : EIO);
		if (nonblock)
			return rs_fail(EWOULDBLOCK);
		rs_arm(rs);
		pthread_mutex_unlock(&rs->lock);
		rs_pause(&pause, rs->cq_channel->fd);
		pthread_mutex_lock(&rs->lock);
		if (pause.start != 0 && rs->cq_armed)
			cq_events(rs);
	}
}

/* ---- conditions ---------------------------------------------------------- */

bool
rs_can_send(const struct rsock *rs)
{
	return rs->sqe_avail != 0 && rs->sbuf_avail >= RS_SNDLOWAT &&
	       rs->sseq_no != rs->sseq_comp && rs->target[rs->target_sge].length != 0;
}

bool
rs_conn_can_send(struct rsock *rs)
{
	return rs_can_send(rs) || !(rs->state & RSS_WRITABLE);
}

bool
rs_have_rdata(const struct rsock *rs)
{
	return rs->rmsg_head != rs->rmsg_tail;
}

static bool
conn_have_rdata(struct rsock *rs)
{
	return rs_have_rdata(rs) || !(rs->state & RSS_READABLE);
}

bool
rs_all_sends_done(struct rsock *rs)
{
	return (int)(rs->ctrl_max_seqno - rs->ctrl_seqno) + (int)rs->sqe_avail ==
	       (int)rs->sq_size || !(rs->state & RSS_CONNECTED);
}

/* ---- sending ------------------------------------------------------------- */

/* len bytes of buf into the send ring at sbuf_off: one or two SGEs. */
uint32_t
rs_sbuf_copy(struct rsock *rs, const void *buf, uint32_t len, struct ibv_sge sge[2])
{
	uint32_t first = rs->sbuf_size - rs->sbuf_off;
	int n = 1;

	if (first > len)
		first = len;
	sge[0] = (struct ibv_sge){ (uintptr_t)rs->sbuf + rs->sbuf_off, first, rs->smr->lkey };
	memcpy(rs->sbuf + rs->sbuf_off, buf, first);
	if (len > first) {
		sge[1] = (struct ibv_sge){ (uintptr_t)rs->sbuf, len - first, rs->smr->lkey };
		memcpy(rs->sbuf, (const uint8_t *)buf + first, len - first);
		n = 2;
	}
	rs->sbuf_off = (rs->sbuf_off + len) % rs->sbuf_size;
	return (uint32_t)n;
}

/* One DATA message of len bytes (at most what the target and ring allow). */
static int
write_data(struct rsock *rs, const void *buf, uint32_t len)
{
	struct rsw_sge *t = &rs->target[rs->target_sge];
	struct ibv_sge sge[2];
	uint64_t addr = t->addr;
	uint32_t rkey = t->key;
	int n, flags = 0;

	rs->sseq_no++;
	rs->sqe_avail--;
	rs->sbuf_avail -= len;
	/* the target moves before the write: the peer may refill the entry */
	t->addr += len;
	t->length -= len;
	if (t->length == 0 && ++rs->target_sge == RSW_SGL_SIZE)
		rs->target_sge = 0;
	if (len <= rs->sq_inline) {
		sge[0] = (struct ibv_sge){ (uintptr_t)buf, len, 0 };
		n = 1;
		flags = IBV_SEND_INLINE;
	} else {
		n = (int)rs_sbuf_copy(rs, buf, len, sge);
	}
	return rs_post_write(rs, sge, n, rsw_imm(RSW_OP_DATA, len), true, flags, addr, rkey);
}

static uint32_t
xfer_size(const struct rsock *rs, size_t left)
{
	uint32_t x = left < RS_MAX_TRANSFER ? (uint32_t)left : RS_MAX_TRANSFER;

	if (x > rs->sbuf_avail)
		x = rs->sbuf_avail;
	if (x > rs->target[rs->target_sge].length)
		x = rs->target[rs->target_sge].length;
	return x;
}

/* The iov's bytes from *iov / *off on, len of them, gathered into out. */
static void
iov_gather(uint8_t *out, const struct iovec **iov, size_t *off, size_t len)
{
	while (len > 0) {
		size_t n = (*iov)->iov_len - *off;

		if (n > len)
			n = len;
		memcpy(out, (const uint8_t *)(*iov)->iov_base + *off, n);
		out += n;
		len -= n;
		*off += n;
		if (*off == (*iov)->iov_len) {
			(*iov)++;
			*off = 0;
		}
	}
}

static ssize_t
dgram_sendv(struct rsock *rs, const struct iovec *iov, int iovcnt, int flags,
	    const struct sockaddr *dst, socklen_t dstlen)
{
	ssize_t n;

	pthread_mutex_lock(&rs->lock);
	n = rs_dgram_sendv(rs, iov, iovcnt, flags, dst, dstlen);
	pthread_mutex_unlock(&rs->lock);
	return n;
}

static ssize_t
dgram_recv(struct rsock *rs, void *buf, size_t len, int flags, struct sockaddr *src,
	   socklen_t *srclen)
{
	ssize_t n;

	pthread_mutex_lock(&rs->lock);
	n = rs_dgram_recv(rs, buf, len, flags, src, srclen);
	pthread_mutex_unlock(&rs->lock);
	return n;
}

static ssize_t
sendv(int socket, const struct iovec *iov, int iovcnt, int flags)
{
	struct rsock *rs = rs_lookup(socket);
	uint8_t bounce[RS_MAX_TRANSFER];
	size_t len = 0, left, off = 0;
	int i, rc = 0;

	if (rs == NULL)
		return rs_fail(EBADF);
	if (rs->type == SOCK_DGRAM)
		return dgram_sendv(rs, iov, iovcnt, flags, NULL, 0);
	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	pthread_mutex_lock(&rs->lock);
	if (rs->state & RSS_OPENING) {
		rc = rs_wait_connect(rs, rs_nonblocking(rs, flags));
		if (rc != 0) {
			if (errno == EINPROGRESS)
				errno = EAGAIN;
			pthread_mutex_unlock(&rs->lock);
			return -1;
		}
	}
	if (!(rs->state & RSS_CONNECTED) && !(rs->state & RSS_DISCONNECTED)) {
		pthread_mutex_unlock(&rs->lock);
		return rs_fail(ENOTCONN);
	}
	if (rs->iomap_pending)
		rc = rs_send_iomaps(rs, rs_nonblocking(rs, flags));
	for (left = len; rc == 0 && left > 0;) {
		uint32_t x;

		if (!rs_can_send(rs)) {
			rc = rs_get_comp(rs, rs_nonblocking(rs, flags), rs_conn_can_send);
			if (rc != 0)
				break;
			if (!(rs->state & RSS_WRITABLE)) {
				rc = rs_fail(ECONNRESET);
				break;
			}
		}
		x = xfer_size(rs, left);
		if (iovcnt == 1) {
			rc = write_data(rs, (const uint8_t *)iov->iov_base + off, x);
			off += x;
		} else {
			iov_gather(bounce, &iov, &off, x);
			rc = write_data(rs, bounce, x);
		}
		if (rc == 0)
			left -= x;
	}
	pthread_mutex_unlock(&rs->lock);
	return rc != 0 && left == len ? -1 : (ssize_t)(len - left);
}

ssize_t
rsend(int socket, const void *buf, size_t len, int flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return sendv(socket, &iov, 1, flags);
}

ssize_t
rsendto(int socket, const void *buf, size_t len, int flags, const struct sockaddr *dest_addr,
	socklen_t addrlen)
{
	struct rsock *rs = rs_lookup(socket);

	if (rs != NULL && rs->type == SOCK_DGRAM) {
		struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

		return dgram_sendv(rs, &iov, 1, flags, dest_addr, addrlen);
	}
	if (dest_addr != NULL || addrlen != 0)
		return rs_fail(EISCONN);
	return rsend(socket, buf, len, flags);
}

ssize_t
rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	struct rsock *rs = rs_lookup(socket);

	if (msg->msg_control != NULL && msg->msg_controllen != 0)
		return rs_fail(ENOTSUP);
	if (rs != NULL && rs->type == SOCK_DGRAM)
		return dgram_sendv(rs, msg->msg_iov, (int)msg->msg_iovlen, flags, msg->msg_name,
				   msg->msg_namelen);
	return sendv(socket, msg->msg_iov, (int)msg->msg_iovlen, flags);
}

ssize_t
rwrite(int socket, const void *buf, size_t count)
{
	return rsend(socket, buf, count, 0);
}

ssize_t
rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	return sendv(socket, iov, iovcnt, 0);
}

/* ---- receiving ----------------------------------------------------------- */

/* Up to len queued bytes into buf; consume: the messages are taken. */
static size_t
copy_out(struct rsock *rs, uint8_t *buf, size_t len, bool consume)
{
	uint32_t head = rs->rmsg_head, off = rs->rbuf_off;
	size_t done = 0;

	while (done < len && head != rs->rmsg_tail) {
		struct rs_rmsg *m = &rs->rmsg[head];
		uint32_t n = m->len, end;

		if (len - done < n)
			n = (uint32_t)(len - done);
		end = rs->rbuf_size - off;
		if (n > end) {
			memcpy(buf + done, rs->rbuf + off, end);
			memcpy(buf + done + end, rs->rbuf, n - end);
		} else {
			memcpy(buf + done, rs->rbuf + off, n);
		}
		off = (off + n) % rs->rbuf_size;
		done += n;
		if (!consume) {
			if (n < m->len)
				break;
			if (++head == rs->rq_size + 1)
				head = 0;
			continue;
		}
		rs->rbuf_avail += n;
		if (n == m->len) {
			rs->rseq_no++;
			if (++head == rs->rq_size + 1)
				head = 0;
		} else {
			m->len -= n;
		}
	}
	if (consume) {
		rs->rmsg_head = head;
		rs->rbuf_off = off;
	}
	return done;
}

static ssize_t
recv_locked(struct rsock *rs, void *buf, size_t len, int flags)
{
	size_t done = 0;
	int rc = 0;

	do {
		if (!rs_have_rdata(rs)) {
			rc = rs_get_comp(rs, rs_nonblocking(rs, flags), conn_have_rdata);
			if (rc != 0)
				break;
		}
		if (flags & MSG_PEEK) {
			done = copy_out(rs, buf, len, false);
			break;
		}
		done += copy_out(rs, (uint8_t *)buf + done, len - done, true);
	} while (done < len && (flags & MSG_WAITALL) && (rs->state & RSS_READABLE));
	rs_process(rs);	/* the credits of what was read */
	return rc != 0 && done == 0 ? -1 : (ssize_t)done;
}

ssize_t
rrecv(int socket, void *buf, size_t len, int flags)
{
	struct rsock *rs = rs_lookup(socket);
	ssize_t n;

	if (rs == NULL)
		return rs_fail(EBADF);
	if (rs->type == SOCK_DGRAM)
		return dgram_recv(rs, buf, len, flags, NULL, NULL);
	pthread_mutex_lock(&rs->lock);
	if (rs->state & RSS_OPENING) {
		if (rs_wait_connect(rs, rs_nonblocking(rs, flags)) != 0) {
			if (errno == EINPROGRESS)
				errno = EAGAIN;
			pthread_mutex_unlock(&rs->lock);
			return -1;
		}
	}
	if (!(rs->state & (RSS_CONNECTED | RSS_DISCONNECTED | RSS_ERROR))) {
		pthread_mutex_unlock(&rs->lock);
		return rs_fail(ENOTCONN);
	}
	n = recv_locked(rs, buf, len, flags);
	pthread_mutex_unlock(&rs->lock);
	return n;
}

ssize_t
rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
	  socklen_t *addrlen)
{
	struct rsock *rs = rs_lookup(socket);
	ssize_t n;

	if (rs != NULL && rs->type == SOCK_DGRAM)
		return dgram_recv(rs, buf, len, flags, src_addr, addrlen);
	n = rrecv(socket, buf, len, flags);

	if (n > 0 && src_addr != NULL && addrlen != NULL)
		rgetpeername(socket, src_addr, addrlen);
	return n;
}

/* rdma-core's: the first vector only */
ssize_t
rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	if (msg->msg_control != NULL && msg->msg_controllen != 0)
		return rs_fail(ENOTSUP);
	if (msg->msg_iovlen == 0)
		return 0;
	if (msg->msg_name != NULL) {
		struct rsock *rs = rs_lookup(socket);

		if (rs != NULL && rs->type == SOCK_DGRAM)
			return dgram_recv(rs, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len,
					  flags, msg->msg_name, &msg->msg_namelen);
	}
	return rrecv(socket, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len, flags);
}

ssize_t
rread(int socket, void *buf, size_t count)
{
	return rrecv(socket, buf, count, 0);
}

ssize_t
rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	if (iovcnt <= 0)
		return 0;
	return rrecv(socket, iov[0].iov_base, iov[0].iov_len, 0);
}
