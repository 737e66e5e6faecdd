/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdmacm_unsupported.c - the rest of librdmacm's exports: what lib/cm does
 * not offer fails with ENOSYS (RC over RDMA_PS_TCP only: no UD ids,
 * multicast, SRQs made by the CM, endpoints, ECE, the program moving its
 * own QP through rdma_init_qp_attr / rdma_establish), and rsockets do not
 * exist here.  Since no descriptor can be an rsocket, rpoll and rselect
 * are poll(2) and select(2), as librdmacm's are on plain descriptors.
 */
#include <errno.h>
#include <poll.h>
#include <sys/select.h>

#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#include "rdmacm_private.h"

static int
nosys(void)
{
	errno = ENOSYS;
	return -1;
}

int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	(void)id, (void)res, (void)pd, (void)qp_init_attr;
	return nosys();
}

void
rdma_destroy_ep(struct rdma_cm_id *id)
{
	(void)id;
}

int
rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	(void)id, (void)pd, (void)attr;
	return nosys();
}

int
rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	(void)id, (void)attr;
	return nosys();
}

void
rdma_destroy_srq(struct rdma_cm_id *id)
{
	(void)id;
}

int
rdma_establish(struct rdma_cm_id *id)
{
	(void)id;
	return nosys();
}

int
rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	(void)id, (void)qp_attr, (void)qp_attr_mask;
	return nosys();
}

int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	(void)listen, (void)id;
	return nosys();
}

int
rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	(void)id, (void)event;
	return nosys();
}

int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	(void)id, (void)addr, (void)context;
	return nosys();
}

int
rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *mc_join_attr,
		       void *context)
{
	(void)id, (void)mc_join_attr, (void)context;
	return nosys();
}

int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id, (void)addr;
	return nosys();
}

int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	(void)id, (void)channel;
	return nosys();
}

int
rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	(void)id, (void)level, (void)optname, (void)optval, (void)optlen;
	return nosys();
}

int
rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	return nosys();
}

int
rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	return nosys();
}

int
rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	(void)id, (void)private_data, (void)private_data_len;
	return nosys();
}

/* ---- rsockets ------------------------------------------------------------- */

int
rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}

int
rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	struct timeval *timeout)
{
	return select(nfds, readfds, writefds, exceptfds, timeout);
}

int
rsocket(int domain, int type, int protocol)
{
	(void)domain, (void)type, (void)protocol;
	return nosys();
}

int
rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	return nosys();
}

int
rlisten(int socket, int backlog)
{
	(void)socket, (void)backlog;
	return nosys();
}

int
raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	return nosys();
}

int
rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	return nosys();
}

int
rshutdown(int socket, int how)
{
	(void)socket, (void)how;
	return nosys();
}

int
rclose(int socket)
{
	(void)socket;
	return nosys();
}

ssize_t
rrecv(int socket, void *buf, size_t len, int flags)
{
	(void)socket, (void)buf, (void)len, (void)flags;
	return nosys();
}

ssize_t
rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
	  socklen_t *addrlen)
{
	(void)socket, (void)buf, (void)len, (void)flags, (void)src_addr, (void)addrlen;
	return nosys();
}

ssize_t
rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	(void)socket, (void)msg, (void)flags;
	return nosys();
}

ssize_t
rsend(int socket, const void *buf, size_t len, int flags)
{
	(void)socket, (void)buf, (void)len, (void)flags;
	return nosys();
}

ssize_t
rsendto(int socket, const void *buf, size_t len, int flags, const struct sockaddr *dest_addr,
	socklen_t addrlen)
{
	(void)socket, (void)buf, (void)len, (void)flags, (void)dest_addr, (void)addrlen;
	return nosys();
}

ssize_t
rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	(void)socket, (void)msg, (void)flags;
	return nosys();
}

ssize_t
rread(int socket, void *buf, size_t count)
{
	(void)socket, (void)buf, (void)count;
	return nosys();
}

ssize_t
rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket, (void)iov, (void)iovcnt;
	return nosys();
}

ssize_t
rwrite(int socket, const void *buf, size_t count)
{
	(void)socket, (void)buf, (void)count;
	return nosys();
}

ssize_t
rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket, (void)iov, (void)iovcnt;
	return nosys();
}

int
rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	return nosys();
}

int
rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	return nosys();
}

int
rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{
	(void)socket, (void)level, (void)optname, (void)optval, (void)optlen;
	return nosys();
}

int
rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	(void)socket, (void)level, (void)optname, (void)optval, (void)optlen;
	return nosys();
}

int
rfcntl(int socket, int cmd, ...)
{
	(void)socket, (void)cmd;
	return nosys();
}

off_t
riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	(void)socket, (void)buf, (void)len, (void)prot, (void)flags, (void)offset;
	return nosys();
}

int
riounmap(int socket, void *buf, size_t len)
{
	(void)socket, (void)buf, (void)len;
	return nosys();
}

/* rdma-core's returns the bytes written: none */
size_t
riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	(void)socket, (void)buf, (void)count, (void)offset, (void)flags;
	errno = ENOSYS;
	return 0;
}
