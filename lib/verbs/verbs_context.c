/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_context.c - droce_open_context / droce_close_context (droce
 * extension: a context without a link; droce_open_device builds on it).
 */
#include <errno.h>
#include <stdlib.h>

#include "droce.h"
#include "prot.h"
#include "verbs_private.h"

struct droce_context *
droce_open_context(const struct droce_context_attr *attr)
{
	struct prot_config cfg = { .socket_id = DROCE_SOCKET_ID_ANY };
	struct droce_context *ctx;
	int ret;

	if (attr != NULL) {
		cfg.max_pd = attr->max_pd;
		cfg.max_mr = attr->max_mr;
		cfg.max_mw = attr->max_mw;
		cfg.socket_id = attr->socket_id;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ctx->socket_id = cfg.socket_id;
	ret = verbs_events_open(ctx);
	if (ret != 0) {
		free(ctx);
		errno = ret;
		return NULL;
	}
	ret = prot_tables_create(&cfg, verbs_alloc_ops(), &ctx->prot);
	if (ret != 0) {
		verbs_events_close(ctx);
		free(ctx);
		errno = -ret;
		return NULL;
	}
	return ctx;
}

int
droce_close_context(struct droce_context *context)
{
	int ret;

	if (context == NULL)
		return EINVAL;
	ret = prot_tables_destroy(context->prot);
	if (ret != 0)
		return -ret;
	verbs_events_close(context);
	free(context);
	return 0;
}
