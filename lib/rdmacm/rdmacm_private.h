/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdmacm_private.h - librdmacm.so.1 on droce: the rdma_cm objects the
 * drop-in hands out, each an rdma-core structure (from the system's
 * <rdma/rdma_cma.h>) with lib/cm's object behind it.  Verbs objects are
 * the drop-in libibverbs' (lib/ibverbs/dropin_private.h).
 */
#ifndef DROCE_RDMACM_PRIVATE_H
#define DROCE_RDMACM_PRIVATE_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

#include <rdma/rdma_cma.h>

#include "droce.h"

/*
 * An event channel: lib/cm's, whose eventfd is ibv.fd.  lock is held
 * across one pass of the CM on it, so that destroying the channel waits
 * for a pass under way; a thread still waiting on a destroyed channel
 * waits forever, as in librdmacm (a read of a closed channel's fd), and
 * the last waiter to leave (cancelled) frees the channel.
 */
struct rdmacm_channel {
	struct rdma_event_channel ibv;
	struct droce_rdma_event_channel *d;
	pthread_mutex_t lock;
	unsigned int waiters;
	bool closed;
};

/* An id: lib/cm's, whose context is this.  events counts the events got
 * and not acked: rdma_destroy_id waits for them, as librdmacm's. */
struct rdmacm_id {
	struct rdma_cm_id ibv;
	struct droce_rdma_cm_id *d;
	struct rdmacm_channel *own_channel;	/* rdma_create_id(NULL, ...) */
	/* a passive rdma_create_ep's: each rdma_get_request's QP (NULL: none) */
	struct ibv_qp_init_attr *request_qp;
	bool own_cqs;		/* send_cq, recv_cq and their channels are ours */
	pthread_mutex_t lock;
	pthread_cond_t acked;
	unsigned int events;
};

struct rdmacm_event {
	struct rdma_cm_event ibv;
	struct droce_rdma_cm_event *d;
};

/* librdmacm's failure: -1 with errno err */
static inline int
rdmacm_fail(int err)
{
	errno = err;
	return -1;
}

/* the drop-in's id of an rdma_cm_id it handed out */
static inline struct rdmacm_id *
rdmacm_id_of(struct rdma_cm_id *id)
{
	return (struct rdmacm_id *)id;
}

/* rdmacm_id.c: a new id on channel (lib/cm's id set by the caller), and
 * its fields brought up to date from lib/cm's (verbs, addresses, route). */
struct rdmacm_id *rdmacm_id_new(struct rdma_event_channel *channel, void *context,
				enum rdma_port_space ps);
void rdmacm_id_sync(struct rdmacm_id *id);

/* rdmacm_device.c: droce's devices, opened through the drop-in libibverbs
 * and attached to the CM at the first call (0 or an errno: ENODEV). */
int rdmacm_devices_init(void);
/* the drop-in's context of a droce context (NULL if not one of ours) */
struct ibv_context *rdmacm_context_of(const struct droce_context *d);
/* the device's PD of every id without one (librdmacm's per device), made
 * at the first need; NULL with errno */
struct ibv_pd *rdmacm_default_pd(struct ibv_context *ctx);

/* rdmacm_progress.c: while any event channel exists, a thread runs the
 * CM's passes (each channel holds it from creation to destruction) */
void rdmacm_progress_hold(void);
void rdmacm_progress_release(void);

#endif /* DROCE_RDMACM_PRIVATE_H */
