/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdmacm_unsupported.c - the rest of librdmacm's exports: what lib/cm does
 * not offer fails with ENOSYS (RC over RDMA_PS_TCP only: no UD ids,
 * multicast, SRQs made by the CM, rdma_reject_ece).  rsockets are
 * rsocket_*.c's.
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
rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	(void)id, (void)private_data, (void)private_data_len;
	return nosys();
}
