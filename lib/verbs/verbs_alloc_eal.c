/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_alloc_eal.c - allocator hook for builds with DPDK: the protection
 * tables go to DPDK's heap (hugepages unless EAL runs with --no-huge) on
 * the requested NUMA socket, once EAL is initialised.  Before rte_eal_init
 * (pure unit tests linked with DPDK) the hook falls back to libc.
 */
#include <stddef.h>

#include <rte_lcore.h>
#include <rte_malloc.h>

#include "prot.h"
#include "verbs_private.h"

static void *
eal_zalloc(void *arg, size_t size, size_t align, int socket)
{
	(void)arg;
	return rte_zmalloc_socket("droce_prot", size, (unsigned int)align,
				  socket);
}

static void
eal_free(void *arg, void *ptr)
{
	(void)arg;
	rte_free(ptr);
}

static const struct prot_alloc_ops eal_ops = {
	.zalloc = eal_zalloc,
	.free = eal_free,
	.arg = NULL,
};

const struct prot_alloc_ops *
verbs_alloc_ops(void)
{
	/* rte_lcore_count() is 0 until rte_eal_init() configured lcores. */
	return rte_lcore_count() > 0 ? &eal_ops : NULL;
}
