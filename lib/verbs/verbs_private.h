/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_private.h - private state behind the public droce_* objects.
 */
#ifndef DROCE_VERBS_PRIVATE_H
#define DROCE_VERBS_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "droce.h"
#include "prot.h"

#include <errno.h>

struct tp_dev_config;
struct droce_link;
struct tp_cq;

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
struct tp_dev *verbs_tp(struct droce_context *ctx);

/*
 * Asynchronous events (verbs_event.c): the context's eventfd and event
 * lists (0 or a positive errno), and, before a QP or CQ whose events
 * the engine no longer raises (tp_*_mute_events) is freed, dropping its
 * events nobody took and waiting until those taken were acked.
 */
int verbs_events_open(struct droce_context *ctx);
void verbs_events_close(struct droce_context *ctx);
void verbs_events_forget(struct droce_context *ctx, const void *obj);
/* The engine is gone: forget every event and count not taken. */
void verbs_events_reset(struct droce_context *ctx);
/* The engine's oldest event: 0, or -EAGAIN (none; no engine). */
int verbs_engine_event(struct droce_context *ctx, struct droce_async_event *ev);

/*
 * Completion channels (verbs_channel.c): a CQ joins its channel at create
 * (0 or ENOMEM); droce_destroy_cq waits for its events to be acked, then
 * leaves.
 */
int verbs_channel_add(struct droce_comp_channel *channel, struct droce_cq *cq);
void verbs_channel_leave(struct droce_cq *cq);
/* Daemon mode: droced's handle of the channel (0: none). */
uint64_t verbs_channel_handle(const struct droce_comp_channel *channel);
/* The engine's CQ behind cq (daemon mode: the daemon's, NULL if not ours). */
struct tp_cq *verbs_cq_engine(struct droce_cq *cq);

/*
 * The one allocator hook: rte_zmalloc_socket when EAL is initialised
 * (verbs_alloc_eal.c, built with DPDK), NULL (= libc) otherwise
 * (verbs_alloc_libc.c, built without DPDK, or EAL not initialised).
 */
const struct prot_alloc_ops *verbs_alloc_ops(void);

/* -errno from a library -> ibverbs' return: errno set, the value positive. */
static inline int
verbs_ret_errno(int neg)
{
	if (neg == 0)
		return 0;
	errno = -neg;
	return -neg;
}

#endif /* DROCE_VERBS_PRIVATE_H */
