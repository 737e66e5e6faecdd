/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_private.h - private state behind the public droce_* objects.
 */
#ifndef DROCE_VERBS_PRIVATE_H
#define DROCE_VERBS_PRIVATE_H

#include "droce.h"
#include "prot.h"

/* The opaque struct droce_context of droce.h.  Later issues add the
 * device, ports, QPs and CQs here. */
struct droce_context {
	struct prot_tables *prot;	/* PD/MR/MW tables */
	int socket_id;
};

/*
 * The one allocator hook: rte_zmalloc_socket when EAL is initialised
 * (verbs_alloc_eal.c, built with DPDK), NULL (= libc) otherwise
 * (verbs_alloc_libc.c, built without DPDK, or EAL not initialised).
 */
const struct prot_alloc_ops *verbs_alloc_ops(void);

#endif /* DROCE_VERBS_PRIVATE_H */
