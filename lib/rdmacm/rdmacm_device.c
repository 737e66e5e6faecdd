/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdmacm_device.c - the devices an rdma_cm_id's verbs point at: as
 * librdmacm's, every device is opened once, at the first call, through
 * libibverbs (here the drop-in, so each context is a droce context), and
 * stays open; each is attached to lib/cm (its GSI QP).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dropin_private.h"
#include "rdmacm_private.h"

#define RDMACM_MAX_DEVICES 16

static struct {
	pthread_once_t once;
	int err;
	int n;
	struct ibv_context *ctx[RDMACM_MAX_DEVICES];
	struct ibv_pd *pd[RDMACM_MAX_DEVICES];
	pthread_mutex_t pd_lock;
} devs = { .once = PTHREAD_ONCE_INIT, .pd_lock = PTHREAD_MUTEX_INITIALIZER };

static void
devices_open(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);

	if (list == NULL) {
		devs.err = errno != 0 ? errno : ENODEV;
		return;
	}
	for (int i = 0; i < n && devs.n < RDMACM_MAX_DEVICES; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);

		if (ctx == NULL)
			continue;
		if (droce_rdma_cm_attach(dropin_dctx(ctx)) != 0) {
			ibv_close_device(ctx);
			continue;
		}
		devs.ctx[devs.n++] = ctx;
	}
	ibv_free_device_list(list);
	if (devs.n == 0)
		devs.err = ENODEV;
}

int
rdmacm_devices_init(void)
{
	pthread_once(&devs.once, devices_open);
	return devs.err;
}

struct ibv_context *
rdmacm_context_of(const struct droce_context *d)
{
	for (int i = 0; i < devs.n; i++)
		if (dropin_dctx(devs.ctx[i]) == d)
			return devs.ctx[i];
	return NULL;
}

struct ibv_pd *
rdmacm_default_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd = NULL;
	int err = ENODEV;

	pthread_mutex_lock(&devs.pd_lock);
	for (int i = 0; i < devs.n; i++) {
		if (devs.ctx[i] != ctx)
			continue;
		if (devs.pd[i] == NULL)
			devs.pd[i] = ibv_alloc_pd(ctx);
		pd = devs.pd[i];
		err = errno;
		break;
	}
	pthread_mutex_unlock(&devs.pd_lock);
	if (pd == NULL)
		errno = err;
	return pd;
}

struct ibv_context **
rdma_get_devices(int *num_devices)
{
	struct ibv_context **list;
	int err = rdmacm_devices_init();

	if (num_devices != NULL)
		*num_devices = 0;
	if (err != 0) {
		errno = err;
		return NULL;
	}
	list = calloc((size_t)devs.n + 1, sizeof(*list));	/* NULL-terminated */
	if (list == NULL)
		return NULL;
	memcpy(list, devs.ctx, (size_t)devs.n * sizeof(*list));
	if (num_devices != NULL)
		*num_devices = devs.n;
	return list;
}

void
rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
