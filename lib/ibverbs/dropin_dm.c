/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_dm.c - device memory (ibv_alloc_dm, ibv_memcpy_to/from_dm,
 * ibv_reg_dm_mr, ibv_free_dm).  droce's "device" is the host, so a DM is
 * process memory: what a program gets is the behaviour of the API (4-byte
 * granularity, bounds, zero-based MRs on it), not faster memory.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dropin_private.h"

/* What query_device_ex reports as max_dm_size, per allocation. */
#define DROPIN_DM_MAX_SIZE (128u * 1024u)
/* Copies to and from a DM are in 4-byte units (as mlx5's MEMIC). */
#define DROPIN_DM_UNIT 4u
#define DROPIN_DM_MIN_ALIGN 64u
#define DROPIN_DM_MAX_LOG_ALIGN 12u

struct dropin_dm {
	struct ibv_dm ibv;
	uint8_t *buf;
	size_t length;
};

#define DROPIN_DM(dm) DROPIN_CONTAINER_OF(dm, struct dropin_dm, ibv)

size_t
dropin_dm_max_size(void)
{
	return DROPIN_DM_MAX_SIZE;
}

/* 0, or EINVAL when [offset, offset + length) is not whole units inside the DM. */
static int
dm_check_range(const struct dropin_dm *dm, uint64_t offset, size_t length)
{
	if (offset % DROPIN_DM_UNIT != 0 || length % DROPIN_DM_UNIT != 0 ||
	    offset > dm->length || length > dm->length - offset)
		return EINVAL;
	return 0;
}

static int
dm_memcpy_to(struct ibv_dm *ibv, uint64_t offset, const void *host, size_t length)
{
	struct dropin_dm *dm = DROPIN_DM(ibv);
	int rc = dm_check_range(dm, offset, length);

	if (rc == 0)
		memcpy(dm->buf + offset, host, length);
	return rc;
}

static int
dm_memcpy_from(void *host, struct ibv_dm *ibv, uint64_t offset, size_t length)
{
	struct dropin_dm *dm = DROPIN_DM(ibv);
	int rc = dm_check_range(dm, offset, length);

	if (rc == 0)
		memcpy(host, dm->buf + offset, length);
	return rc;
}

static struct ibv_dm *
dropin_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *attr)
{
	struct dropin_dm *dm;
	size_t align = DROPIN_DM_MIN_ALIGN;
	size_t size;

	if (attr == NULL || attr->comp_mask != 0 || attr->length == 0 ||
	    attr->log_align_req > DROPIN_DM_MAX_LOG_ALIGN) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->length > DROPIN_DM_MAX_SIZE) {
		errno = ENOMEM;
		return NULL;
	}
	if ((1u << attr->log_align_req) > align)
		align = 1u << attr->log_align_req;
	dm = calloc(1, sizeof(*dm));
	if (dm == NULL)
		return NULL;
	/* one unit more, for the empty MR at the end (dropin_reg_dm_mr) */
	size = (attr->length + DROPIN_DM_UNIT + align - 1) / align * align;
	dm->buf = aligned_alloc(align, size);
	if (dm->buf == NULL)
		return dropin_undo_alloc(dm);
	memset(dm->buf, 0, size);
	dm->length = attr->length;
	dm->ibv.context = context;
	dm->ibv.memcpy_to_dm = dm_memcpy_to;
	dm->ibv.memcpy_from_dm = dm_memcpy_from;
	return &dm->ibv;
}

static int
dropin_free_dm(struct ibv_dm *ibv)
{
	struct dropin_dm *dm = DROPIN_DM(ibv);

	free(dm->buf);
	free(dm);
	return 0;
}

/* A DM MR is zero based (as mlx5 requires): address 0 is dm_offset. */
static struct ibv_mr *
dropin_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibv, uint64_t dm_offset,
		 size_t length, unsigned int access)
{
	struct dropin_dm *dm = DROPIN_DM(ibv);
	struct ibv_mr *mr;

	size_t reg = length;

	if (!(access & IBV_ACCESS_ZERO_BASED) || dm_offset > dm->length ||
	    length > dm->length - dm_offset) {
		errno = EINVAL;
		return NULL;
	}
	/* An empty DM MR is valid (mlx5), droce's regions are not: it is
	 * registered over one unit of the DM (allocated in 64-byte blocks),
	 * local access only, and reported empty. */
	if (length == 0) {
		reg = DROPIN_DM_UNIT;
		access &= IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE;
	}
	mr = ibv_reg_mr_iova2(pd, dm->buf + dm_offset, reg, 0, access);
	if (mr != NULL) {
		mr->addr = NULL;
		mr->length = length;
	}
	return mr;
}

void
dropin_set_dm_ops(struct dropin_context *ctx)
{
	ctx->vctx.alloc_dm = dropin_alloc_dm;
	ctx->vctx.free_dm = dropin_free_dm;
	ctx->vctx.reg_dm_mr = dropin_reg_dm_mr;
}
