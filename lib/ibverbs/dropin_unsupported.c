/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_unsupported.c - the verbs droce does not offer, failing as
 * rdma-core's do for a device without the feature (EOPNOTSUPP), and the
 * fork helpers, which have nothing to do.
 */
#include <errno.h>

#include "dropin_private.h"

/* Enhanced connection establishment: no vendor options to negotiate. */
int
ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

int
ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

/* Sharing a context or PD through a kernel file descriptor: no kernel. */
struct ibv_context *
ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_pd *
ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context;
	(void)pd_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

/* Nothing can have been imported (ibv_import_pd never succeeds). */
void
ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

/* Nothing can have been imported (ibv_import_mr never succeeds). */
struct ibv_mr *
ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd;
	(void)mr_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

void
ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

/* No import of device memory (droce's DMs are process memory, dropin_dm.c). */
struct ibv_dm *
ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context;
	(void)dm_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

void
ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

/* No dma-buf exporters: droce registers process memory only. */
struct ibv_mr *
ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
		  uint64_t iova, int fd, int access)
{
	(void)pd;
	(void)offset;
	(void)length;
	(void)iova;
	(void)fd;
	(void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

/* droce's CQs have a fixed ring (lib/transport): ibv_resize_cq(3)'s
 * "the value of errno on failure", as rdma-core's for a provider without
 * resize_cq. */
int
ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	(void)cq;
	(void)cqe;
	return EOPNOTSUPP;
}

/* droce resolves neighbours itself (lib/net), not through the kernel. */
int
ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
			    struct ibv_ah_attr *attr, uint8_t eth_mac[6],
			    uint16_t *vid)
{
	(void)context;
	(void)attr;
	(void)eth_mac;
	(void)vid;
	return EOPNOTSUPP;
}

/* droce does not pin pages for a kernel: fork() leaves regions intact. */
int
ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

int
ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}
