/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_private.h - private state behind the public droce_* objects.
 */
#ifndef DROCE_VERBS_PRIVATE_H
#define DROCE_VERBS_PRIVATE_H

#include <stdbool.h>

#include "droce.h"
#include "prot.h"

/* The opaque struct droce_context of droce.h.  Later issues add the
 * device, ports, QPs and CQs here. */
struct tp_dev;
struct tp_dev_config;
struct droce_link;

struct droce_context {
	struct prot_tables *prot;	/* PD/MR/MW tables */
	int socket_id;
	struct tp_dev *tp;		/* transport engine; NULL until a link */
	struct droce_device *device;	/* droce_open_device()'s, or NULL */
	bool dedicated;			/* tp runs on a transport lcore */
};

/*
 * Bind the context to a link and start its transport engine on the calling
 * lcore (which then owns the data path).  Returns 0 or a positive errno.
 * droce_open_device (port issue) does this from the configuration; tests
 * call it directly with a virtual wire.
 */
int verbs_attach_link(struct droce_context *ctx, struct droce_link *link,
		      const struct tp_dev_config *cfg);
/*
 * Dedicated transport lcore mode: hand the engine to transport lcore
 * `lcore` (lib/transport/tp_lcore.c).  After the link, host, GIDs and
 * neighbours are set, before any CQ or QP.  0 or a positive errno.
 */
int verbs_run_on_lcore(struct droce_context *ctx, unsigned int lcore);
/* Several transport lcores, QPs sharded by QPN (tp_dev_run_on_lcores). */
int verbs_run_on_lcores(struct droce_context *ctx, const unsigned int *lcores,
			unsigned int n);
/* Stop the transport engine (0, or EBUSY while QPs exist); a transport
 * lcore gives the engine back first (and stops if it serves no other). */
int verbs_detach_link(struct droce_context *ctx);
struct tp_dev *verbs_tp(struct droce_context *ctx);

/*
 * The one allocator hook: rte_zmalloc_socket when EAL is initialised
 * (verbs_alloc_eal.c, built with DPDK), NULL (= libc) otherwise
 * (verbs_alloc_libc.c, built without DPDK, or EAL not initialised).
 */
const struct prot_alloc_ops *verbs_alloc_ops(void);

#endif /* DROCE_VERBS_PRIVATE_H */
