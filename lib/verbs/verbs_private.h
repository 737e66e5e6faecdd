/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_private.h - lib/verbs' generic side: the context every provider's
 * begins with, the provider registry, events and channels.
 */
#ifndef DROCE_VERBS_PRIVATE_H
#define DROCE_VERBS_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "droce.h"

#include <errno.h>

struct prot_alloc_ops;
struct verbs_events;

/*
 * Every provider's context begins with this: the public context, then what
 * the generic code keeps for any provider.  A provider's own context
 * embeds it first (struct engine_context, struct droced_context).
 */
struct verbs_context {
	struct droce_context pub;
	struct verbs_events *events;	/* verbs_event.c */
};

static inline struct verbs_context *
verbs_ctx(struct droce_context *ctx)
{
	return (struct verbs_context *)((char *)ctx - offsetof(struct verbs_context, pub));
}

/*
 * A provider (lib/verbs/README.md, "Providers"): its name and its ops, the
 * ones it leaves NULL answering -EOPNOTSUPP once it is registered.
 */
struct verbs_provider {
	const char *name;
	struct droce_context_ops ops;
	struct verbs_provider *next;	/* the registry's list */
};

/*
 * Register p (from a constructor: VERBS_PROVIDER_REGISTER): fill its unset
 * ops with the defaults and list it.  Providers are registered before
 * main() and read-only afterwards.
 */
void verbs_provider_register(struct verbs_provider *p);
/* The registered providers: the first (NULL) or the one after p; NULL past the last. */
const struct verbs_provider *verbs_provider_next(const struct verbs_provider *p);

#define VERBS_PROVIDER_REGISTER(p)						\
	static void __attribute__((constructor))				\
	verbs_provider_register_##p(void)					\
	{									\
		verbs_provider_register(&(p));					\
	}

/*
 * A new context of provider p: its ops, device and async_fd (the events
 * lists): 0 or a positive errno.  verbs_context_fini closes them.
 */
int verbs_context_init(struct verbs_context *vctx, const struct verbs_provider *p,
		       struct droce_device *device);
void verbs_context_fini(struct verbs_context *vctx);

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
/* The context gives its source of events up (another context of the
 * process takes them on): every event still in the source and not taken
 * is dropped with its count. */
void verbs_events_drop(struct droce_context *ctx);
/* The engine's oldest event: 0, or -EAGAIN (none; no engine). */
int verbs_engine_event(struct droce_context *ctx, struct droce_async_event *ev);

/*
 * Completion channels (verbs_channel.c): a CQ joins its channel at create
 * (0 or ENOMEM); droce_destroy_cq waits for its events to be acked, then
 * leaves.
 */
int verbs_channel_add(struct droce_comp_channel *channel, struct droce_cq *cq);
void verbs_channel_leave(struct droce_cq *cq);
/* A channel around the eventfd fd another process passed (droced's side
 * of a client's channel; the channel owns fd): NULL with errno. */
struct droce_comp_channel *verbs_channel_adopt(struct droce_context *ctx, int fd);
/* The provider's handle of the channel (create_channel; 0: none). */
uint64_t verbs_channel_handle(const struct droce_comp_channel *channel);
/*
 * The object an event names (NULL: a port or device event).  The generic
 * verbs below call the provider's op (its event_take) for ctx.
 */
void *verbs_event_object(const struct droce_async_event *ev);

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
