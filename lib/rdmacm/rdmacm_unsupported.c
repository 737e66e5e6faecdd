/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdmacm_unsupported.c - the rest of librdmacm's exports: what lib/cm does
 * not offer fails with ENOSYS (multicast, SRQs made by the CM,
 * rdma_create_ep, ECE, the program moving its own QP through
 * rdma_init_qp_attr / rdma_establish).  rsockets are rsocket_*.c's.
 */
#include <errno.h>

#include <rdma/rdma_verbs.h>

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
