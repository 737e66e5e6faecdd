/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_alloc_libc.c - the allocator hook of builds without DPDK: libc.
 */
#include <stddef.h>

#include "verbs_private.h"

const struct prot_alloc_ops *
verbs_alloc_ops(void)
{
	return NULL;
}
