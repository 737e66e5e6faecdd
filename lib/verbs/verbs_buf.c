/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_buf.c - droce_alloc_buf / droce_free_buf: registrable memory in
 * both modes (rte_malloc in process; the daemon's, verbs_daemon.c).
 */
#include <errno.h>

#include <rte_malloc.h>

#include "droce.h"
#include "verbs_daemon.h"
#include "verbs_private.h"

#define BUF_ALIGN 64

void *
droce_alloc_buf(struct droce_context *context, size_t len)
{
	void *p;

	if (context == NULL || len == 0) {
		errno = EINVAL;
		return NULL;
	}
	if (context->daemon != NULL)
		return verbs_dmn_alloc_buf(context, len);
	p = rte_zmalloc_socket("droce_buf", len, BUF_ALIGN, context->socket_id);
	if (p == NULL)
		errno = ENOMEM;
	return p;
}

int
droce_free_buf(struct droce_context *context, void *buf)
{
	if (context == NULL || buf == NULL)
		return EINVAL;
	if (context->daemon != NULL)
		return verbs_dmn_free_buf(context, buf);
	rte_free(buf);
	return 0;
}
