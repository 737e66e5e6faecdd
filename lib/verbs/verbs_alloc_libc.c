/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_alloc_libc.c - the hooks of builds without DPDK: libc allocates,
 * and there is no engine to raise events.
 */
#include <errno.h>
#include <stddef.h>

#include "verbs_private.h"

const struct prot_alloc_ops *
verbs_alloc_ops(void)
{
	return NULL;
}

int
verbs_engine_event(struct droce_context *ctx, struct droce_async_event *ev)
{
	(void)ctx;
	(void)ev;
	return -EAGAIN;
}
