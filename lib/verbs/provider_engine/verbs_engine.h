/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_engine.h - the in-process engine provider's calls for the code that
 * builds its contexts (lib/device, droced, tests): a context from
 * droce_open_context, bound to a link, its engine run here or on transport
 * lcores.  The verbs themselves go through the context's ops.
 */
#ifndef DROCE_VERBS_ENGINE_H
#define DROCE_VERBS_ENGINE_H

#include <stdbool.h>

#include "droce.h"

struct droce_link;
struct prot_tables;
struct tp_dev;
struct tp_dev_config;

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
/*
 * Adaptive progress: run-to-completion, and a progress thread runs the
 * engine while no application thread is in droce (tp_dev_run_adaptive).
 * Same preconditions; 0 or a positive errno.
 */
int verbs_run_adaptive(struct droce_context *ctx);
/* Stop the transport engine (0, or EBUSY while QPs exist); a transport
 * lcore gives the engine back first (and stops if it serves no other). */
int verbs_detach_link(struct droce_context *ctx);

/* The context's engine (NULL: no link, or not an engine context). */
struct tp_dev *verbs_tp(struct droce_context *ctx);
/* Its protection tables (NULL: not an engine context). */
struct prot_tables *verbs_prot(struct droce_context *ctx);
/* Its engine runs on transport lcores (verbs_run_on_lcore(s)). */
bool verbs_dedicated(struct droce_context *ctx);

/*
 * droce_query_port of an engine context: the port is the device's that
 * bound the link (lib/device), which answers for it (0 or -errno);
 * without one (a context of droce_open_context alone): EINVAL.
 */
typedef int (*verbs_port_query_t)(struct droce_context *ctx, struct droce_port_attr *attr);
void verbs_set_port_query(struct droce_context *ctx, verbs_port_query_t query);

#endif /* DROCE_VERBS_ENGINE_H */
