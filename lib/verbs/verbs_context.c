/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_context.c - the droce_* verbs of a context, whatever its provider:
 * argument checks, the provider's op, ibverbs' conventions.  Contexts are
 * opened by their provider (droce_open_context: the in-process engine's;
 * droce_open_device: lib/device picks the provider of the device).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "droce.h"
#include "verbs_private.h"

int
droce_close_context(struct droce_context *context)
{
	if (context == NULL)
		return EINVAL;
	return -context->ops->close_context(context);
}

int
droce_progress(struct droce_context *context)
{
	if (context == NULL)
		return 0;
	return context->ops->progress(context);
}

uint64_t
droce_get_counter(struct droce_context *context, const char *name)
{
	uint64_t v;

	if (context == NULL || name == NULL ||
	    context->ops->get_counter(context, name, &v) != 0)
		return UINT64_MAX;
	return v;
}

int
droce_query_device_ex(struct droce_context *context,
		      const struct droce_query_device_ex_input *input,
		      struct droce_device_attr_ex *attr)
{
	if (context == NULL || attr == NULL || (input != NULL && input->comp_mask != 0))
		return EINVAL;
	memset(attr, 0, sizeof(*attr));
	return -context->ops->query_device_ex(context, attr);
}

int
droce_query_device(struct droce_context *context, struct droce_device_attr *a)
{
	struct droce_device_attr_ex ex;
	int rc;

	if (context == NULL || a == NULL)
		return EINVAL;
	rc = droce_query_device_ex(context, NULL, &ex);
	if (rc == 0)
		*a = ex.orig_attr;
	return rc;
}

int
droce_query_port(struct droce_context *context, uint8_t port_num,
		 struct droce_port_attr *attr)
{
	if (context == NULL || context->device == NULL || attr == NULL || port_num != 1)
		return EINVAL;
	return -context->ops->query_port(context, port_num, attr);
}

int
droce_query_gid(struct droce_context *context, uint8_t port_num, int index,
		union droce_gid *gid)
{
	if (context == NULL || gid == NULL || port_num != 1 || index < 0)
		return EINVAL;
	return -context->ops->query_gid(context, port_num, index, gid);
}

int
droce_query_pkey(struct droce_context *context, uint8_t port_num, int index,
		 uint16_t *pkey)
{
	if (context == NULL || pkey == NULL || port_num != 1 || index < 0)
		return EINVAL;
	return -context->ops->query_pkey(context, port_num, index, pkey);
}

void *
droce_alloc_buf(struct droce_context *context, size_t len)
{
	void *p;
	int rc;

	if (context == NULL || len == 0) {
		errno = EINVAL;
		return NULL;
	}
	rc = context->ops->alloc_buf(context, len, &p);
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	return p;
}

int
droce_free_buf(struct droce_context *context, void *buf)
{
	if (context == NULL || buf == NULL)
		return EINVAL;
	return -context->ops->free_buf(context, buf);
}

int
verbs_engine_event(struct droce_context *ctx, struct droce_async_event *ev)
{
	return ctx->ops->event_take(ctx, ev);
}
