/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine_buf.c - the engine provider's droce_alloc_buf / droce_free_buf:
 * registrable memory from DPDK's heap on the context's NUMA socket.
 */
#include <errno.h>

#include <rte_malloc.h>

#include "engine.h"

#define BUF_ALIGN 64

int
verbs_engine_alloc_buf(struct droce_context *ctx, size_t len, void **buf)
{
	*buf = rte_zmalloc_socket("droce_buf", len, BUF_ALIGN, engine_ctx(ctx)->socket_id);
	return *buf != NULL ? 0 : -ENOMEM;
}

int
verbs_engine_free_buf(struct droce_context *ctx, void *buf)
{
	(void)ctx;
	rte_free(buf);
	return 0;
}
