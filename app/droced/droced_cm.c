/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced_cm.c - the RDMA CM for droced's clients (README.md, "RDMA CM").
 * droced owns the port's GSI QP (lib/cm's cm_port) and relays CM MADs:
 * a received REQ goes to the client that listens on its port, every other
 * CM MAD to the client that owns the local communication ID it names (its
 * Remote Comm ID), comm IDs being droced's to hand out.  A client's MAD
 * goes out only under a comm ID of its own (a REJ of a REQ with none only
 * answering a REQ droced gave it); one to a GID of droced's port is
 * delivered here at once (loopback).  Everything a client sends is read
 * as hostile: the MAD's fields by lib/cm's bounded decoders, the port and
 * op ranges here.  Control path only: linear tables.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cm_relay.h"
#include "droced.h"
#include "droced_table.h"

/* MADs waiting for one client; one more is dropped (its sender resends) */
#define CM_QUEUE 64
/* comm IDs: all clients, and one client */
#define CM_COMM_IDS 16384
#define CM_APP_COMM_IDS 1024
/* ports listened on: all clients, and one client */
#define CM_LISTENS 1024
#define CM_APP_LISTENS 64
/* REQs that came before their listener: held as lib/cm holds them */
#define CM_HELD 16
#define CM_HOLD_US 250000
/* the REQs a client was given lately, which it may REJ without a comm ID */
#define CM_RECENT_REQS 16

struct cm_mad {
	uint8_t sgid[16];
	uint8_t dgid[16];
	uint8_t mad[CM_RELAY_MAD_LEN];
};

struct droced_cm_app {
	int fd;				/* the client's eventfd: MADs queued */
	struct cm_mad q[CM_QUEUE];
	unsigned int head, n;
	uint32_t ncomm;
	uint32_t nlis;
	uint64_t dropped, wake_failed;
	struct {
		uint8_t gid[16];
		uint32_t comm_id;
	} req[CM_RECENT_REQS];
	unsigned int next_req;
};

static struct {
	struct cm_port *port;
	uint32_t next_id;
	struct {
		uint32_t id;
		struct droced_app *app;
	} comm[CM_COMM_IDS];
	unsigned int ncomm;
	struct {
		uint16_t port;
		uint32_t refs;		/* the client's listens on it (contexts) */
		struct droced_app *app;
	} lis[CM_LISTENS];
	unsigned int nlis;
	struct {
		uint64_t deadline_us;	/* 0: free */
		uint16_t port;
		uint32_t comm_id;
		struct cm_mad m;
	} held[CM_HELD];
} cm;

static uint64_t
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void deliver(const uint8_t src[16], const uint8_t dst[16], const uint8_t *mad);

static void
on_port_mad(void *arg, const uint8_t src[16], const uint8_t dst[16], const uint8_t *mad)
{
	(void)arg;
	deliver(src, dst, mad);
}

void
droced_cm_init(struct droce_context *ctx)
{
	if (getrandom(&cm.next_id, sizeof(cm.next_id), 0) != (ssize_t)sizeof(cm.next_id))
		cm.next_id = (uint32_t)mono_us();
	cm.port = cm_port_open(ctx, on_port_mad, NULL);
	if (cm.port == NULL)
		fprintf(stderr, "droced: no GSI QP, no RDMA CM for clients: %s\n",
			strerror(errno));
}

void
droced_cm_shutdown(void)
{
	cm_port_close(cm.port);
	cm.port = NULL;
}

int
droced_cm_fd(void)
{
	return cm.port == NULL ? -1 : cm_port_fd(cm.port);
}

void
droced_cm_poll(void)
{
	if (cm.port != NULL)
		cm_port_poll(cm.port);
}

/* ---- tables ---------------------------------------------------------------- */

static struct droced_app *
comm_owner(uint32_t id)
{
	for (unsigned int i = 0; i < cm.ncomm; i++)
		if (cm.comm[i].id == id)
			return cm.comm[i].app;
	return NULL;
}

static int
listener_of(uint16_t port)
{
	for (unsigned int i = 0; i < cm.nlis; i++)
		if (cm.lis[i].port == port)
			return (int)i;
	return -1;
}

/* One MAD into a's queue, then its count (after: the client reads the
 * count, then takes the queue). */
static void
enqueue(struct droced_app *a, const uint8_t src[16], const uint8_t dst[16], const uint8_t *mad)
{
	struct droced_cm_app *c = a->cm;
	struct cm_mad *m;
	uint64_t one = 1;

	if (c->n == CM_QUEUE) {
		if (c->dropped++ == 0)
			fprintf(stderr, "droced: pid %d takes no CM MADs, dropping\n", (int)a->pid);
		return;
	}
	m = &c->q[(c->head + c->n++) % CM_QUEUE];
	memcpy(m->sgid, src, 16);
	memcpy(m->dgid, dst, 16);
	memcpy(m->mad, mad, CM_RELAY_MAD_LEN);
	/* non-blocking (set at OPEN): a full count only loses the wake-up */
	if (write(c->fd, &one, sizeof(one)) < 0 && c->wake_failed++ == 0)
		fprintf(stderr, "droced: pid %d's CM eventfd: %s\n", (int)a->pid,
			strerror(errno));
}

static void
remember_req(struct droced_cm_app *c, const uint8_t src[16], uint32_t comm_id)
{
	memcpy(c->req[c->next_req].gid, src, 16);
	c->req[c->next_req].comm_id = comm_id;
	c->next_req = (c->next_req + 1) % CM_RECENT_REQS;
}

static bool
was_given_req(const struct droced_cm_app *c, const uint8_t gid[16], uint32_t comm_id)
{
	for (unsigned int i = 0; i < CM_RECENT_REQS; i++)
		if (c->req[i].comm_id == comm_id && comm_id != 0 &&
		    memcmp(c->req[i].gid, gid, 16) == 0)
			return true;
	return false;
}

static void
hold(const struct cm_relay_route *r, const uint8_t src[16], const uint8_t dst[16],
     const uint8_t *mad)
{
	unsigned int free_slot = CM_HELD;

	for (unsigned int i = 0; i < CM_HELD; i++) {
		if (cm.held[i].deadline_us == 0) {
			free_slot = free_slot == CM_HELD ? i : free_slot;
			continue;
		}
		/* a retransmission of one held */
		if (cm.held[i].comm_id == r->comm_id && memcmp(cm.held[i].m.sgid, src, 16) == 0)
			return;
	}
	if (free_slot == CM_HELD)
		return;		/* dropped: the requester's timer resends it */
	cm.held[free_slot].deadline_us = mono_us() + CM_HOLD_US;
	cm.held[free_slot].port = r->port;
	cm.held[free_slot].comm_id = r->comm_id;
	memcpy(cm.held[free_slot].m.sgid, src, 16);
	memcpy(cm.held[free_slot].m.dgid, dst, 16);
	memcpy(cm.held[free_slot].m.mad, mad, CM_RELAY_MAD_LEN);
}

/* A MAD that reached droced's port (or a client's, looped back). */
static void
deliver(const uint8_t src[16], const uint8_t dst[16], const uint8_t *mad)
{
	struct cm_relay_route r;
	struct droced_app *a;
	int l;

	if (cm_relay_route(mad, CM_RELAY_MAD_LEN, &r) != 0)
		return;
	if (!r.req) {
		a = comm_owner(r.comm_id);
		if (a != NULL)
			enqueue(a, src, dst, mad);
		return;
	}
	l = listener_of(r.port);
	if (l < 0) {
		hold(&r, src, dst, mad);
		return;
	}
	a = cm.lis[l].app;
	remember_req(a->cm, src, r.comm_id);
	enqueue(a, src, dst, mad);
}

/* A MAD to gid from droced's port: looped back when gid is the port's own. */
static int
port_send(const uint8_t gid[16], const uint8_t *mad)
{
	uint8_t src[16];

	if (cm_port_local(cm.port, gid, src)) {
		deliver(src, gid, mad);
		return 0;
	}
	return cm_port_send(cm.port, gid, mad);
}

/* Held REQs to a listener that came, or refused (REJ 8, as a kernel's CM
 * at once) at their deadline: how long poll may wait for the next. */
int
droced_cm_tick(int wait_ms)
{
	uint64_t now = mono_us();
	uint8_t rej[CM_RELAY_MAD_LEN];

	for (unsigned int i = 0; i < CM_HELD; i++) {
		uint64_t d = cm.held[i].deadline_us;
		int l = d == 0 ? -1 : listener_of(cm.held[i].port);

		if (d == 0)
			continue;
		if (l >= 0 || d <= now) {
			cm.held[i].deadline_us = 0;
			if (l >= 0) {
				remember_req(cm.lis[l].app->cm, cm.held[i].m.sgid,
					     cm.held[i].comm_id);
				enqueue(cm.lis[l].app, cm.held[i].m.sgid, cm.held[i].m.dgid,
					cm.held[i].m.mad);
			} else if (cm.port != NULL) {
				cm_relay_rej_req(rej, cm.held[i].m.mad);
				port_send(cm.held[i].m.sgid, rej);
			}
			continue;
		}
		if ((int64_t)(d - now) / 1000 + 1 < wait_ms)
			wait_ms = (int)((d - now) / 1000 + 1);
	}
	return wait_ms;
}

/* ---- requests ---------------------------------------------------------------- */

static int
cm_open(struct droced_app *a)
{
	int rc = passed_eventfd(a);
	int fl;

	if (rc != 0)
		return rc;
	if (a->cm != NULL)
		return EBUSY;
	/* droced's writes never block on a client's counter */
	fl = fcntl(a->rx_fd, F_GETFL);
	if (fl < 0 || fcntl(a->rx_fd, F_SETFL, fl | O_NONBLOCK) != 0)
		return EINVAL;
	a->cm = calloc(1, sizeof(*a->cm));
	if (a->cm == NULL)
		return ENOMEM;
	a->cm->fd = a->rx_fd;
	a->rx_fd = -1;
	return 0;
}

static int
cm_send(struct droced_app *a, struct dmn_msg *m)
{
	struct cm_relay_out o;

	if (cm_relay_out(m->u.cm.mad, sizeof(m->u.cm.mad), &o) != 0)
		return EINVAL;
	/* under its own comm ID only; without one, only the REJ of a REQ it was given */
	if (o.local_comm_id != 0 ? comm_owner(o.local_comm_id) != a :
	    !o.rej_of_req || !was_given_req(a->cm, m->u.cm.dgid, o.remote_comm_id))
		return EPERM;
	return -port_send(m->u.cm.dgid, m->u.cm.mad);
}

static int
cm_recv(struct droced_app *a, struct dmn_msg *m)
{
	struct droced_cm_app *c = a->cm;
	struct cm_mad *q;

	m->len = 0;
	if (c->n == 0)
		return 0;
	q = &c->q[c->head];
	c->head = (c->head + 1) % CM_QUEUE;
	c->n--;
	memcpy(m->u.cm.sgid, q->sgid, 16);
	memcpy(m->u.cm.dgid, q->dgid, 16);
	memcpy(m->u.cm.mad, q->mad, CM_RELAY_MAD_LEN);
	m->len = 1;
	return 0;
}

static int
cm_listen(struct droced_app *a, uint64_t port)
{
	int l;

	if (port == 0 || port > UINT16_MAX)
		return EINVAL;
	l = listener_of((uint16_t)port);
	if (l >= 0 && cm.lis[l].app != a)
		return EADDRINUSE;
	if (l >= 0) {
		cm.lis[l].refs++;
		return 0;
	}
	if (cm.nlis == CM_LISTENS || a->cm->nlis == CM_APP_LISTENS)
		return ENOSPC;
	a->cm->nlis++;
	cm.lis[cm.nlis].port = (uint16_t)port;
	cm.lis[cm.nlis].refs = 1;
	cm.lis[cm.nlis++].app = a;
	droced_cm_tick(0);	/* the REQs held for it */
	return 0;
}

static int
cm_unlisten(struct droced_app *a, uint64_t port)
{
	int l = port > UINT16_MAX ? -1 : listener_of((uint16_t)port);

	if (l < 0 || cm.lis[l].app != a)
		return ENOENT;
	if (--cm.lis[l].refs == 0) {
		cm.lis[l] = cm.lis[--cm.nlis];
		a->cm->nlis--;
	}
	return 0;
}

static int
cm_comm_id(struct droced_app *a, struct dmn_msg *m)
{
	uint32_t id;

	if (cm.ncomm == CM_COMM_IDS || a->cm->ncomm == CM_APP_COMM_IDS)
		return ENOSPC;
	/* 0 means "none" in a REJ of a REQ; IDs only grow, skipping those in use */
	do
		id = ++cm.next_id;
	while (id == 0 || comm_owner(id) != NULL);
	cm.comm[cm.ncomm].id = id;
	cm.comm[cm.ncomm++].app = a;
	a->cm->ncomm++;
	m->key = id;
	return 0;
}

static int
cm_comm_id_free(struct droced_app *a, uint32_t id)
{
	for (unsigned int i = 0; i < cm.ncomm; i++)
		if (cm.comm[i].id == id && cm.comm[i].app == a) {
			cm.comm[i] = cm.comm[--cm.ncomm];
			a->cm->ncomm--;
			return 0;
		}
	return ENOENT;
}

/* Its listens and comm IDs released, its queue and eventfd gone. */
void
droced_cm_reap(struct droced_app *a)
{
	if (a->cm == NULL)
		return;
	for (unsigned int i = cm.nlis; i-- > 0;)
		if (cm.lis[i].app == a)
			cm.lis[i] = cm.lis[--cm.nlis];
	for (unsigned int i = cm.ncomm; i-- > 0;)
		if (cm.comm[i].app == a)
			cm.comm[i] = cm.comm[--cm.ncomm];
	close(a->cm->fd);
	free(a->cm);
	a->cm = NULL;
}

int
droced_cm_request(struct droced_app *a, struct dmn_msg *m)
{
	if (cm.port == NULL)
		return EOPNOTSUPP;
	if (m->arg == DROCE_CM_RELAY_OPEN)
		return cm_open(a);
	if (a->cm == NULL)
		return EINVAL;		/* no OPEN first */
	switch (m->arg) {
	case DROCE_CM_RELAY_CLOSE:
		droced_cm_reap(a);
		return 0;
	case DROCE_CM_RELAY_SEND:
		return cm_send(a, m);
	case DROCE_CM_RELAY_RECV:
		return cm_recv(a, m);
	case DROCE_CM_RELAY_LISTEN:
		return cm_listen(a, m->len);
	case DROCE_CM_RELAY_UNLISTEN:
		return cm_unlisten(a, m->len);
	case DROCE_CM_RELAY_COMM_ID:
		return cm_comm_id(a, m);
	case DROCE_CM_RELAY_COMM_ID_FREE:
		return cm_comm_id_free(a, m->key);
	default:
		return EINVAL;
	}
}
