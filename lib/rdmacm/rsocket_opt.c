/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsocket_opt.c - rsockets' options (rsetsockopt, rgetsockopt, rfcntl)
 * and direct placement (riomap, riounmap, riowrite).
 *
 * Options: the sizes (SOL_RDMA, SO_SNDBUF, SO_RCVBUF) count until the
 * connection starts, as in rdma-core; SO_REUSEADDR, SO_KEEPALIVE,
 * SO_LINGER, SO_OOBINLINE, TCP_NODELAY and IPV6_V6ONLY are recorded and
 * read back (an RC QP delivers at once and in order; no keepalive
 * messages are sent: a dead peer shows at the next send's retries).
 *
 * riomap (PROT_WRITE) registers a buffer and writes its entry (offset,
 * address, rkey, length) into the peer's iomap table with the next send
 * (immediate RSW_OP_IOMAP_SGL and the slot); the peer's riowrite finds
 * the offset in its table and WRITEs (without immediate) straight there.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <infiniband/verbs.h>
#include <rdma/rsocket.h>

#include "rsocket_private.h"

/* The iomap size on the wire: 8 bits, values above 128 in units of 256. */
uint8_t
rsw_value_to_scale(uint32_t value)
{
	return (uint8_t)(value <= 128 ? value : 128 | (value >> 8));
}

uint32_t
rsw_scale_to_value(uint32_t value)
{
	return value <= 128 ? value : (value & ~128u) << 8;
}

/* ---- options ------------------------------------------------------------- */

static void
flag_set(uint32_t *opts, int optname, bool on)
{
	if (optname < 0 || optname >= 32)
		return;
	if (on)
		*opts |= 1u << optname;
	else
		*opts &= ~(1u << optname);
}

static bool
flag_get(uint32_t opts, int optname)
{
	return optname >= 0 && optname < 32 && (opts & (1u << optname));
}

static int
set_socket(struct rsock *rs, int optname, const void *optval, socklen_t optlen)
{
	uint32_t v = *(const uint32_t *)optval;

	switch (optname) {
	case SO_REUSEADDR:
	case SO_KEEPALIVE:
	case SO_OOBINLINE:
		flag_set(&rs->so_opts, optname, v != 0);
		return 0;
	case SO_RCVBUF:
		if (rs->rbuf == NULL)
			rs->rbuf_size = v << 1;
		return 0;
	case SO_SNDBUF:
		if (rs->sbuf == NULL)
			rs->sbuf_size = v << 1 < RS_SNDLOWAT ? RS_SNDLOWAT << 1 : v << 1;
		return 0;
	case SO_LINGER:
		if (optlen < sizeof(struct linger))
			return rs_fail(EINVAL);
		flag_set(&rs->so_opts, optname, ((const struct linger *)optval)->l_onoff != 0);
		return 0;
	default:
		return rs_fail(ENOTSUP);
	}
}

static int
set_tcp(struct rsock *rs, int optname, const void *optval)
{
	int v = *(const int *)optval;

	switch (optname) {
	case TCP_NODELAY:
		flag_set(&rs->tcp_opts, optname, v != 0);
		return 0;
	case TCP_KEEPIDLE:
		if (v <= 0)
			return rs_fail(EINVAL);
		rs->keepalive_time = (uint32_t)v;
		return 0;
	case TCP_KEEPCNT:
	case TCP_KEEPINTVL:
	case TCP_MAXSEG:
		return 0;	/* no meaning on a reliable connection */
	default:
		return rs_fail(ENOTSUP);
	}
}

static int
set_rdma(struct rsock *rs, int optname, const void *optval)
{
	uint32_t v = *(const uint32_t *)optval;

	if (rs->state >= RSS_OPENING)
		return rs_fail(EINVAL);
	switch (optname) {
	case RDMA_SQSIZE:
		rs->sq_size = v < RS_QP_MAX_SIZE ? v : RS_QP_MAX_SIZE;
		return 0;
	case RDMA_RQSIZE:
		rs->rq_size = v < RS_QP_MAX_SIZE ? v : RS_QP_MAX_SIZE;
		return 0;
	case RDMA_INLINE:
		rs->sq_inline = v < RS_QP_MAX_SIZE ? v : RS_QP_MAX_SIZE;
		return 0;
	case RDMA_IOMAPSIZE:
		rs->iomap_size = rsw_scale_to_value(rsw_value_to_scale(v));
		return 0;
	default:	/* RDMA_ROUTE: an InfiniBand path, none on RoCE here */
		return rs_fail(ENOTSUP);
	}
}

int
rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{
	struct rsock *rs = rs_lookup(socket);
	int rc;

	if (rs == NULL)
		return rs_fail(EBADF);
	if (optval == NULL || optlen < sizeof(int))
		return rs_fail(EINVAL);
	pthread_mutex_lock(&rs->lock);
	switch (level) {
	case SOL_SOCKET:
		rc = set_socket(rs, optname, optval, optlen);
		break;
	case IPPROTO_TCP:
		rc = set_tcp(rs, optname, optval);
		break;
	case IPPROTO_IPV6:
		rc = optname == IPV6_V6ONLY ? 0 : rs_fail(ENOTSUP);
		if (rc == 0)
			flag_set(&rs->so_opts, 31, *(const int *)optval != 0);
		break;
	case SOL_RDMA:
		rc = set_rdma(rs, optname, optval);
		break;
	default:
		rc = rs_fail(ENOTSUP);
		break;
	}
	pthread_mutex_unlock(&rs->lock);
	return rc;
}

static int
get_int(struct rsock *rs, int level, int optname, int *v)
{
	switch (level << 8 | optname) {
	case SOL_SOCKET << 8 | SO_REUSEADDR:
	case SOL_SOCKET << 8 | SO_KEEPALIVE:
	case SOL_SOCKET << 8 | SO_OOBINLINE:
		*v = flag_get(rs->so_opts, optname);
		return 0;
	case SOL_SOCKET << 8 | SO_RCVBUF:
		*v = (int)rs->rbuf_size;
		return 0;
	case SOL_SOCKET << 8 | SO_SNDBUF:
		*v = (int)rs->sbuf_size;
		return 0;
	case SOL_SOCKET << 8 | SO_ERROR:
		*v = rs->err;
		rs->err = 0;
		return 0;
	case SOL_SOCKET << 8 | SO_TYPE:
		*v = rs->type;
		return 0;
	case IPPROTO_TCP << 8 | TCP_NODELAY:
		*v = flag_get(rs->tcp_opts, optname);
		return 0;
	case IPPROTO_TCP << 8 | TCP_KEEPIDLE:
		*v = (int)rs->keepalive_time;
		return 0;
	case IPPROTO_TCP << 8 | TCP_KEEPCNT:
	case IPPROTO_TCP << 8 | TCP_KEEPINTVL:
		*v = 1;
		return 0;
	case IPPROTO_TCP << 8 | TCP_MAXSEG:
		*v = 2048;
		return 0;
	case IPPROTO_IPV6 << 8 | IPV6_V6ONLY:
		*v = flag_get(rs->so_opts, 31);
		return 0;
	case SOL_RDMA << 8 | RDMA_SQSIZE:
		*v = (int)rs->sq_size;
		return 0;
	case SOL_RDMA << 8 | RDMA_RQSIZE:
		*v = (int)rs->rq_size;
		return 0;
	case SOL_RDMA << 8 | RDMA_INLINE:
		*v = (int)rs->sq_inline;
		return 0;
	case SOL_RDMA << 8 | RDMA_IOMAPSIZE:
		*v = (int)rs->iomap_size;
		return 0;
	default:
		return rs_fail(ENOTSUP);
	}
}

int
rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	struct rsock *rs = rs_lookup(socket);
	int rc, v = 0;

	if (rs == NULL)
		return rs_fail(EBADF);
	if (optval == NULL || optlen == NULL)
		return rs_fail(EFAULT);
	pthread_mutex_lock(&rs->lock);
	if (level == SOL_SOCKET && optname == SO_LINGER) {
		struct linger l = { .l_onoff = flag_get(rs->so_opts, SO_LINGER), .l_linger = 0 };

		memcpy(optval, &l, *optlen < sizeof(l) ? *optlen : sizeof(l));
		*optlen = sizeof(l);
		pthread_mutex_unlock(&rs->lock);
		return 0;
	}
	rc = get_int(rs, level, optname, &v);
	pthread_mutex_unlock(&rs->lock);
	if (rc != 0)
		return rc;
	memcpy(optval, &v, *optlen < sizeof(v) ? *optlen : sizeof(v));
	*optlen = sizeof(v);
	return 0;
}

int
rfcntl(int socket, int cmd, ...)
{
	struct rsock *rs = rs_lookup(socket);
	va_list ap;
	int rc = 0;

	if (rs == NULL)
		return rs_fail(EBADF);
	va_start(ap, cmd);
	switch (cmd) {
	case F_GETFL:
		rc = rs->fd_flags;
		break;
	case F_SETFL:
		rs->fd_flags = va_arg(ap, int);
		break;
	default:
		rc = rs_fail(ENOTSUP);
		break;
	}
	va_end(ap);
	return rc;
}

/* ---- riomap -------------------------------------------------------------- */

off_t
riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	struct rsock *rs = rs_lookup(socket);
	struct rs_iomap *slot = NULL;
	uint32_t i;

	(void)flags;
	if (rs == NULL)
		return rs_fail(EBADF);
	if (prot != PROT_WRITE)	/* PROT_NONE (a local mapping): not here */
		return rs_fail(prot & ~(PROT_WRITE | PROT_NONE) ? EINVAL : ENOTSUP);
	pthread_mutex_lock(&rs->lock);
	if (rs->pd == NULL) {
		pthread_mutex_unlock(&rs->lock);
		return rs_fail(EINVAL);
	}
	if (rs->iomaps == NULL && rs->remote_iomap.length != 0)
		rs->iomaps = calloc(rs->remote_iomap.length, sizeof(*rs->iomaps));
	for (i = 0; rs->iomaps != NULL && i < rs->remote_iomap.length && slot == NULL; i++)
		if (rs->iomaps[i].mr == NULL)
			slot = &rs->iomaps[i];
	if (slot == NULL) {
		pthread_mutex_unlock(&rs->lock);
		return rs_fail(ENOMEM);	/* the peer's table is full (or absent) */
	}
	slot->mr = ibv_reg_mr(rs->pd, buf, len,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (slot->mr == NULL) {
		pthread_mutex_unlock(&rs->lock);
		return -1;
	}
	slot->offset = offset == -1 ? (uint64_t)(uintptr_t)buf : (uint64_t)offset;
	slot->sent = false;
	rs->iomap_pending = true;
	pthread_mutex_unlock(&rs->lock);
	return (off_t)slot->offset;
}

int
riounmap(int socket, void *buf, size_t len)
{
	struct rsock *rs = rs_lookup(socket);
	uint32_t i;
	int rc = -1;

	if (rs == NULL)
		return rs_fail(EBADF);
	pthread_mutex_lock(&rs->lock);
	for (i = 0; rs->iomaps != NULL && i < rs->remote_iomap.length; i++) {
		struct rs_iomap *m = &rs->iomaps[i];

		if (m->mr != NULL && m->mr->addr == buf && m->mr->length == len) {
			ibv_dereg_mr(m->mr);
			m->mr = NULL;
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&rs->lock);
	return rc == 0 ? 0 : rs_fail(EINVAL);
}

/* One slot's entry into the peer's table; rs->lock held, may send. */
static int
iomap_write(struct rsock *rs, uint32_t idx)
{
	const struct rs_iomap *m = &rs->iomaps[idx];
	struct rsw_iomap e = {
		.offset = m->offset,
		.sge = { (uintptr_t)m->mr->addr, m->mr->rkey, (uint32_t)m->mr->length },
	};
	struct ibv_sge sge[2];
	int n = 1, flags = 0;

	if (rs->swap) {
		e.offset = __builtin_bswap64(e.offset);
		e.sge.addr = __builtin_bswap64(e.sge.addr);
		e.sge.key = __builtin_bswap32(e.sge.key);
		e.sge.length = __builtin_bswap32(e.sge.length);
	}
	rs->sseq_no++;
	rs->sqe_avail--;
	rs->sbuf_avail -= sizeof(e);
	if (rs->sq_inline >= sizeof(e)) {
		sge[0] = (struct ibv_sge){ (uintptr_t)&e, sizeof(e), 0 };
		flags = IBV_SEND_INLINE;
	} else {
		n = (int)rs_sbuf_copy(rs, &e, sizeof(e), sge);
	}
	return rs_post_write(rs, sge, n, rsw_imm(RSW_OP_IOMAP_SGL, idx), true, flags,
			     rs->remote_iomap.addr + idx * sizeof(struct rsw_iomap),
			     rs->remote_iomap.key);
}

int
rs_send_iomaps(struct rsock *rs, bool nonblock)
{
	uint32_t i;
	int rc = 0;

	for (i = 0; rs->iomaps != NULL && i < rs->remote_iomap.length && rc == 0; i++) {
		if (rs->iomaps[i].mr == NULL || rs->iomaps[i].sent)
			continue;
		if (!rs_can_send(rs)) {
			rc = rs_get_comp(rs, nonblock, rs_conn_can_send);
			if (rc != 0)
				break;
			if (!(rs->state & RSS_WRITABLE)) {
				rc = rs_fail(ECONNRESET);
				break;
			}
		}
		rc = iomap_write(rs, i);
		if (rc == 0)
			rs->iomaps[i].sent = true;
	}
	if (rc == 0)
		rs->iomap_pending = false;
	return rc;
}

/* The entry of the peer's table (written into ours) holding offset. */
static bool
iomap_find(const struct rsock *rs, uint64_t offset, struct rsw_iomap *e)
{
	const struct rsw_iomap *tab = (const struct rsw_iomap *)(rs->target + RSW_SGL_SIZE);
	uint32_t i;

	for (i = 0; i < rs->iomap_size; i++) {
		memcpy(e, &tab[i], sizeof(*e));
		if (e->sge.length != 0 && offset >= e->offset &&
		    offset - e->offset < e->sge.length)
			return true;
	}
	return false;
}

static int
write_direct(struct rsock *rs, const struct rsw_iomap *e, uint64_t offset, const void *buf,
	     uint32_t len)
{
	struct ibv_sge sge[2];
	int n = 1, flags = 0;

	rs->sqe_avail--;
	rs->sbuf_avail -= len;
	if (len <= rs->sq_inline) {
		sge[0] = (struct ibv_sge){ (uintptr_t)buf, len, 0 };
		flags = IBV_SEND_INLINE;
	} else {
		n = (int)rs_sbuf_copy(rs, buf, len, sge);
	}
	return rs_post_write(rs, sge, n, rsw_imm(RSW_OP_WRITE, len), false, flags,
			     e->sge.addr + (offset - e->offset), e->sge.key);
}

size_t
riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	struct rsock *rs = rs_lookup(socket);
	bool nonblock;
	size_t left = count;
	int rc = 0;

	if (rs == NULL)
		return (size_t)rs_fail(EBADF);
	pthread_mutex_lock(&rs->lock);
	nonblock = rs_nonblocking(rs, flags);
	if (rs->iomap_pending)
		rc = rs_send_iomaps(rs, nonblock);
	while (rc == 0 && left > 0) {
		uint64_t off = (uint64_t)offset + (count - left);
		struct rsw_iomap e;
		uint32_t x;

		if (!iomap_find(rs, off, &e)) {
			rc = rs_fail(EINVAL);	/* nothing mapped there */
			break;
		}
		if (!rs_can_send(rs)) {
			rc = rs_get_comp(rs, nonblock, rs_conn_can_send);
			if (rc != 0)
				break;
			if (!(rs->state & RSS_WRITABLE)) {
				rc = rs_fail(ECONNRESET);
				break;
			}
		}
		x = left < RS_MAX_TRANSFER ? (uint32_t)left : RS_MAX_TRANSFER;
		if (x > rs->sbuf_avail)
			x = rs->sbuf_avail;
		if (x > e.sge.length - (off - e.offset))
			x = (uint32_t)(e.sge.length - (off - e.offset));
		rc = write_direct(rs, &e, off, (const uint8_t *)buf + (count - left), x);
		if (rc == 0)
			left -= x;
	}
	pthread_mutex_unlock(&rs->lock);
	return rc != 0 && left == count ? (size_t)-1 : count - left;
}
