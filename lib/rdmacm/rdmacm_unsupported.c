/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdmacm_unsupported.c - the rest of librdmacm's exports: what lib/cm does
 * not offer fails with ENOSYS (RC over RDMA_PS_TCP only: no UD ids,
 * multicast).  rsockets are rsocket_*.c's.
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




