/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_provider.c - the provider registry: each provider registers its
 * ops table once (a constructor), and every op it leaves NULL gets this
 * file's default, which answers -EOPNOTSUPP.  So a verb a provider lacks
 * fails the same way in every provider, and the generic code calls every
 * op without a test.
 */
#include <errno.h>

#include "verbs_private.h"

/* The defaults: one per op (DROCE_CONTEXT_OPS), their arguments unused. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define VERBS_DEFAULT_OP(name, params)						\
	static int default_##name params { return -EOPNOTSUPP; }
DROCE_CONTEXT_OPS(VERBS_DEFAULT_OP)
#undef VERBS_DEFAULT_OP
#pragma GCC diagnostic pop

static struct verbs_provider *providers;

void
verbs_provider_register(struct verbs_provider *p)
{
#define VERBS_FILL_OP(name, params)						\
	if (p->ops.name == NULL)						\
		p->ops.name = default_##name;
	DROCE_CONTEXT_OPS(VERBS_FILL_OP)
#undef VERBS_FILL_OP
	p->next = providers;
	providers = p;
}

const struct verbs_provider *
verbs_provider_next(const struct verbs_provider *p)
{
	return p == NULL ? providers : p->next;
}

int
verbs_context_init(struct verbs_context *vctx, const struct verbs_provider *p,
		   struct droce_device *device)
{
	vctx->pub.device = device;
	vctx->pub.ops = &p->ops;
	return verbs_events_open(&vctx->pub);
}

void
verbs_context_fini(struct verbs_context *vctx)
{
	verbs_events_close(&vctx->pub);
}
