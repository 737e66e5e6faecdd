/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_api.c - librdmacm's calls (droce_rdma_*): event channels, ids,
 * addresses, and the events the state machine raises.  One registry of
 * agents and ids under one mutex (cm_private.h says why).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "roce_wire.h"
#include "transport.h"
#include "verbs_engine.h"
#include "cm_private.h"

/*
 * A connected id destroyed before its DREQ was answered departs: droce_rdma_
 * destroy_id returns at once, and the id stays for the protocol (DREQ
 * resent, DREP taken) until answered or given up.  The process is the
 * port: a DREQ still queued in its engine, or in a memif ring the peer has
 * not read, dies with the process, and the peer learns of the disconnect
 * only from that DREQ (rping -s waited forever after its client exited).
 * So destroying the event channel (or detaching the device) waits for its
 * departing ids, at most CM_DEPART_WAIT_NS, as a kernel's DREQ outlives
 * the process that sent it.  On droced the port outlives the process: a
 * relay's MAD is droced's once cm_gsi_send returned, and its ids go at
 * once (libfabric's rxm, whose teardown races with its peer's disconnect,
 * ran on droced as before).
 */
#define CM_DEPART_WAIT_NS (1000ull * 1000 * 1000)
#define CM_DEPART_NAP_NS (100 * 1000)

/* ephemeral source ports, as the kernel's (ip_local_port_range default) */
#define CM_PORT_FIRST 32768
#define CM_PORT_LAST 60999

static struct {
	pthread_mutex_t lock;
	TAILQ_HEAD(, cm_agent) agents;
	TAILQ_HEAD(, cm_id) ids;
	uint32_t next_comm_id;
	uint16_t next_port;
	unsigned int departing;		/* ids departing (CM_DEPART_WAIT_NS) */
	bool init;
} reg = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.agents = TAILQ_HEAD_INITIALIZER(reg.agents),
	.ids = TAILQ_HEAD_INITIALIZER(reg.ids),
};

static int relay_listen(struct cm_id *id, bool on);

static int
fail(int err)
{
	errno = err;
	return -1;
}

uint64_t
cm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Comm IDs start at a random value, so a restarted peer's are not taken
 * for its previous run's (12.9.2: they must be unique over time). */
static uint32_t
local_comm_id(void)
{
	if (!reg.init) {
		if (getrandom(&reg.next_comm_id, sizeof(reg.next_comm_id), 0) !=
		    (ssize_t)sizeof(reg.next_comm_id))
			reg.next_comm_id = (uint32_t)cm_now_ns();
		reg.init = true;
	}
	if (++reg.next_comm_id == 0)	/* 0: "no ID" in a REJ to a REQ */
		reg.next_comm_id = 1;
	return reg.next_comm_id;
}

/* A relay's comm IDs are droced's to give: it routes MADs by them. */
uint32_t
cm_next_comm_id(struct cm_agent *a)
{
	struct droce_cm_relay r = { .op = DROCE_CM_RELAY_COMM_ID };

	if (!a->relay)
		return local_comm_id();
	return a->ctx->ops->cm_relay(a->ctx, &r) == 0 ? r.comm_id : 0;
}

void
cm_free_comm_id(struct cm_agent *a, uint32_t comm_id)
{
	struct droce_cm_relay r = { .op = DROCE_CM_RELAY_COMM_ID_FREE, .comm_id = comm_id };

	if (a != NULL && a->relay && comm_id != 0)
		a->ctx->ops->cm_relay(a->ctx, &r);
}

/* Any thread may run a's passes: its engine runs elsewhere, or droced's
 * relay brings its MADs. */
static bool
self_driven(const struct cm_agent *a)
{
	return a->relay || tp_dev_self_driven(verbs_tp(a->ctx));
}

static bool
live(const struct cm_id *id)
{
	return id->state >= CM_REQ_SENT && id->state != CM_CLOSED;
}

struct cm_id *
cm_find_local(struct cm_agent *a, uint32_t local_comm_id)
{
	struct cm_id *id;

	TAILQ_FOREACH(id, &reg.ids, link)
		if (id->agent == a && live(id) && id->local_comm_id == local_comm_id)
			return id;
	return NULL;
}

struct cm_id *
cm_find_remote(struct cm_agent *a, const uint8_t gid[16], uint32_t remote_comm_id)
{
	struct cm_id *id;

	TAILQ_FOREACH(id, &reg.ids, link)
		if (id->agent == a && live(id) && id->remote_comm_id == remote_comm_id &&
		    memcmp(id->remote_gid, gid, 16) == 0)
			return id;
	return NULL;
}

struct cm_id *
cm_find_listener(struct cm_agent *a, uint16_t port, uint16_t ps)
{
	struct cm_id *id;

	TAILQ_FOREACH(id, &reg.ids, link)
		if (id->state == CM_LISTEN && id->port == port && id->pub.ps == ps &&
		    (id->agent == NULL || id->agent == a))
			return id;
	return NULL;
}

static struct cm_id *
id_alloc(struct cm_channel *ch, void *context, enum droce_rdma_port_space ps)
{
	struct cm_id *id = calloc(1, sizeof(*id));

	if (id == NULL)
		return NULL;
	id->ch = ch;
	id->pub.channel = &ch->pub;
	id->pub.context = context;
	id->pub.ps = ps;
	id->pub.port_num = 1;
	/* RDMA_PS_UDP and RDMA_PS_IPOIB: UD ids (cm_sidr.c), as rdma_cm's */
	id->pub.qp_type = ps == DROCE_RDMA_PS_TCP ? DROCE_QPT_RC : DROCE_QPT_UD;
	id->cm_timeout = CM_DEFAULT_TIMEOUT;
	id->max_retries = CM_DEFAULT_RETRIES;
	ch->nids++;
	TAILQ_INSERT_TAIL(&reg.ids, id, link);
	return id;
}

struct cm_id *
cm_new_passive(struct cm_id *listener, struct cm_agent *a)
{
	struct cm_id *id = id_alloc(listener->ch, listener->pub.context, listener->pub.ps);

	if (id == NULL)
		return NULL;
	id->agent = a;
	id->pub.verbs = a->ctx;
	id->port = listener->port;
	id->cm_timeout = listener->cm_timeout;
	id->pub.route.addr = listener->pub.route.addr;
	return id;
}

/* ---- events ------------------------------------------------------------------ */

/*
 * The channel's eventfd counts its queued events, for poll(): one up per
 * event queued, one down per event taken (never below zero, so the read
 * does not block).  The queue is the truth; the count is only a hint.
 */
static void
fd_count(int fd, bool up)
{
	uint64_t v = 1;
	ssize_t n = up ? write(fd, &v, sizeof(v)) : read(fd, &v, sizeof(v));

	(void)n;
}

int
cm_event_post(struct cm_id *id, enum droce_rdma_cm_event_type type, int status,
	      const uint8_t *pdata, uint8_t len)
{
	struct cm_event *ev;

	if (id->departing)
		return -ENOENT;		/* the application has let it go */
	ev = calloc(1, sizeof(*ev));
	if (ev == NULL)
		return -ENOMEM;
	ev->pub.id = &id->pub;
	ev->pub.event = type;
	ev->pub.status = status;
	if (pdata != NULL && len != 0 && len <= sizeof(ev->pdata)) {
		memcpy(ev->pdata, pdata, len);
		ev->pub.param.conn.private_data = ev->pdata;
		ev->pub.param.conn.private_data_len = len;
	}
	TAILQ_INSERT_TAIL(&id->ch->events, ev, link);
	id->unacked++;
	fd_count(id->ch->pub.fd, true);
	return 0;
}

struct cm_event *
cm_event_last(struct cm_id *id)
{
	return TAILQ_LAST(&id->ch->events, cm_event_list);
}

/* reg.lock held: id out of the registry and freed. */
static void
id_free(struct cm_id *id)
{
	if (id->departing)
		reg.departing--;
	cm_free_comm_id(id->agent, id->local_comm_id);
	TAILQ_REMOVE(&reg.ids, id, link);
	free(id);
}

/* reg.lock held: the departing ids whose DREQ was answered or given up
 * freed (a duplicate DREQ gets its DREP without an id: cm_proto.c). */
static void
reap_departed(void)
{
	struct cm_id *id, *next;

	if (reg.departing == 0)
		return;
	for (id = TAILQ_FIRST(&reg.ids); id != NULL; id = next) {
		next = TAILQ_NEXT(id, link);
		if (id->departing && id->state != CM_DREQ_SENT)
			id_free(id);
	}
}

static bool
departs_with(const struct cm_id *id, const struct cm_channel *ch, const struct cm_agent *a)
{
	return id->departing && (ch == NULL || id->ch == ch) && (a == NULL || id->agent == a);
}

static unsigned int
departing_of(const struct cm_channel *ch, const struct cm_agent *a)
{
	const struct cm_id *id;
	unsigned int n = 0;

	TAILQ_FOREACH(id, &reg.ids, link)
		n += departs_with(id, ch, a);
	return n;
}

static void run_once(void);

/*
 * reg.lock held: CM passes until the departing ids of channel ch (NULL:
 * any) on agent a (NULL: any) are gone, or CM_DEPART_WAIT_NS; the lock is
 * let go between passes.  Those still there are then freed.
 */
static void
settle_departing(const struct cm_channel *ch, const struct cm_agent *a)
{
	const struct timespec nap = { .tv_nsec = CM_DEPART_NAP_NS };
	const uint64_t until = cm_now_ns() + CM_DEPART_WAIT_NS;
	struct cm_id *id, *next;

	while (departing_of(ch, a) != 0 && cm_now_ns() < until) {
		run_once();
		pthread_mutex_unlock(&reg.lock);
		nanosleep(&nap, NULL);
		pthread_mutex_lock(&reg.lock);
	}
	for (id = TAILQ_FIRST(&reg.ids); id != NULL; id = next) {
		next = TAILQ_NEXT(id, link);
		if (departs_with(id, ch, a))
			id_free(id);
	}
}

/* One pass of the CM: every agent's GSI CQ (the transport), every timer. */
static void
run_once(void)
{
	struct cm_agent *a;
	struct cm_id *id;
	uint64_t now;

	TAILQ_FOREACH(a, &reg.agents, link)
		cm_gsi_poll(a);
	now = cm_now_ns();
	TAILQ_FOREACH(a, &reg.agents, link)
		cm_proto_held(a, now);
	TAILQ_FOREACH(id, &reg.ids, link)
		if (id->agent != NULL)
			cm_proto_timer(id, now);
	reap_departed();
}

void
droce_rdma_cm_progress(void)
{
	struct cm_agent *a;
	struct cm_id *id;
	uint64_t now;

	pthread_mutex_lock(&reg.lock);
	TAILQ_FOREACH(a, &reg.agents, link)
		if (self_driven(a))
			cm_gsi_poll(a);
	now = cm_now_ns();
	TAILQ_FOREACH(a, &reg.agents, link)
		if (self_driven(a))
			cm_proto_held(a, now);
	TAILQ_FOREACH(id, &reg.ids, link)
		if (id->agent != NULL && self_driven(id->agent))
			cm_proto_timer(id, now);
	reap_departed();
	pthread_mutex_unlock(&reg.lock);
}

int
droce_rdma_poll_cm_event(struct droce_rdma_event_channel *channel,
			 struct droce_rdma_cm_event **event)
{
	struct cm_channel *ch = (struct cm_channel *)channel;
	struct cm_event *ev;

	if (channel == NULL || event == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&reg.lock);
	run_once();
	ev = TAILQ_FIRST(&ch->events);
	if (ev != NULL)
		TAILQ_REMOVE(&ch->events, ev, link);
	pthread_mutex_unlock(&reg.lock);
	if (ev == NULL)
		return fail(EAGAIN);
	fd_count(channel->fd, false);
	*event = &ev->pub;
	return 0;
}

int
droce_rdma_get_cm_event(struct droce_rdma_event_channel *channel,
			struct droce_rdma_cm_event **event)
{
	bool nonblock;
	int rc;

	if (channel == NULL || event == NULL)
		return fail(EINVAL);
	nonblock = (fcntl(channel->fd, F_GETFL) & O_NONBLOCK) != 0;
	do
		rc = droce_rdma_poll_cm_event(channel, event);
	while (rc != 0 && errno == EAGAIN && !nonblock);
	return rc;
}

int
droce_rdma_ack_cm_event(struct droce_rdma_cm_event *event)
{
	struct cm_event *ev = (struct cm_event *)event;

	if (event == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&reg.lock);
	cm_id_of(event->id)->unacked--;
	pthread_mutex_unlock(&reg.lock);
	free(ev);
	return 0;
}

const char *
droce_rdma_event_str(enum droce_rdma_cm_event_type event)
{
	static const char *const names[] = {
		"RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_ERROR",
		"RDMA_CM_EVENT_ROUTE_RESOLVED", "RDMA_CM_EVENT_ROUTE_ERROR",
		"RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
		"RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_UNREACHABLE",
		"RDMA_CM_EVENT_REJECTED", "RDMA_CM_EVENT_ESTABLISHED",
		"RDMA_CM_EVENT_DISCONNECTED", "RDMA_CM_EVENT_DEVICE_REMOVAL",
		"RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR",
		"RDMA_CM_EVENT_ADDR_CHANGE", "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	return (unsigned int)event < sizeof(names) / sizeof(names[0]) ?
	       names[event] : "UNKNOWN EVENT";
}

/* ---- agents --------------------------------------------------------------------- */

static struct cm_agent *
agent_of(const struct droce_context *ctx)
{
	struct cm_agent *a;

	TAILQ_FOREACH(a, &reg.agents, link)
		if (a->ctx == ctx)
			return a;
	return NULL;
}

int
droce_rdma_cm_attach(struct droce_context *ctx)
{
	struct cm_agent *a;
	int rc;

	if (ctx == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&reg.lock);
	if (agent_of(ctx) != NULL) {
		pthread_mutex_unlock(&reg.lock);
		return fail(EBUSY);
	}
	a = calloc(1, sizeof(*a));
	rc = a == NULL ? -ENOMEM : 0;
	if (rc == 0) {
		a->ctx = ctx;
		rc = cm_gsi_open(a);
	}
	if (rc == 0)
		TAILQ_INSERT_TAIL(&reg.agents, a, link);
	else
		free(a);
	pthread_mutex_unlock(&reg.lock);
	return rc == 0 ? 0 : fail(-rc);
}

int
droce_rdma_cm_detach(struct droce_context *ctx)
{
	struct cm_agent *a;
	struct cm_id *id;

	pthread_mutex_lock(&reg.lock);
	a = agent_of(ctx);
	if (a != NULL)
		settle_departing(NULL, a);
	TAILQ_FOREACH(id, &reg.ids, link)
		if (a != NULL && id->agent == a)
			break;
	if (a == NULL || id != NULL) {
		pthread_mutex_unlock(&reg.lock);
		return fail(a == NULL ? EINVAL : EBUSY);
	}
	TAILQ_REMOVE(&reg.agents, a, link);
	cm_gsi_close(a);
	free(a);
	pthread_mutex_unlock(&reg.lock);
	return 0;
}

/* ---- channels and ids --------------------------------------------------------------- */

struct droce_rdma_event_channel *
droce_rdma_create_event_channel(void)
{
	struct cm_channel *ch = calloc(1, sizeof(*ch));

	if (ch == NULL)
		return NULL;
	ch->pub.fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (ch->pub.fd < 0) {
		free(ch);
		return NULL;
	}
	TAILQ_INIT(&ch->events);
	return &ch->pub;
}

void
droce_rdma_destroy_event_channel(struct droce_rdma_event_channel *channel)
{
	struct cm_channel *ch = (struct cm_channel *)channel;

	if (ch == NULL)
		return;
	pthread_mutex_lock(&reg.lock);
	if (ch->nids != 0) {
		pthread_mutex_unlock(&reg.lock);
		return;
	}
	settle_departing(ch, NULL);
	pthread_mutex_unlock(&reg.lock);
	close(ch->pub.fd);
	free(ch);
}

int
droce_rdma_create_id(struct droce_rdma_event_channel *channel,
		     struct droce_rdma_cm_id **id, void *context,
		     enum droce_rdma_port_space ps)
{
	struct cm_id *c;

	if (channel == NULL || id == NULL ||
	    (ps != DROCE_RDMA_PS_TCP && ps != DROCE_RDMA_PS_UDP && ps != DROCE_RDMA_PS_IPOIB))
		return fail(EINVAL);
	pthread_mutex_lock(&reg.lock);
	c = id_alloc((struct cm_channel *)channel, context, ps);
	pthread_mutex_unlock(&reg.lock);
	if (c == NULL)
		return fail(ENOMEM);
	*id = &c->pub;
	return 0;
}

/* The id's events not yet taken are dropped, as the kernel's rdma_cm
 * drops those it has not reported when an id is destroyed. */
static void
drop_queued(struct cm_id *id)
{
	struct cm_event *ev, *next;

	for (ev = TAILQ_FIRST(&id->ch->events); ev != NULL; ev = next) {
		next = TAILQ_NEXT(ev, link);
		if (ev->pub.id != &id->pub)
			continue;
		TAILQ_REMOVE(&id->ch->events, ev, link);
		fd_count(id->ch->pub.fd, false);
		id->unacked--;
		free(ev);
	}
}

int
droce_rdma_destroy_id(struct droce_rdma_cm_id *pub)
{
	struct cm_id *id = cm_id_of(pub);

	if (pub == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&reg.lock);
	drop_queued(id);
	if (id->unacked != 0 || pub->qp != NULL) {
		pthread_mutex_unlock(&reg.lock);
		return fail(EBUSY);
	}
	/* a connection still up is ended (DREQ) and a REQ not answered refused
	 * (a UD id's SIDR_REQ: SIDR_REP "rejected", as the kernel's ib_cm) */
	if (cm_id_is_ud(id) && id->state == CM_REQ_RCVD)
		cm_sidr_reject(id, NULL);
	else if (id->state == CM_ESTABLISHED)
		cm_proto_disconnect(id);
	else if (id->state == CM_REQ_RCVD)
		cm_proto_reject(id, NULL);
	if (id->state == CM_LISTEN)
		relay_listen(id, false);
	id->ch->nids--;
	if (id->state == CM_DREQ_SENT && id->agent != NULL && !id->agent->relay) {
		id->departing = true;	/* freed at its DREP (reap_departed) */
		reg.departing++;
	} else {
		id_free(id);
	}
	pthread_mutex_unlock(&reg.lock);
	return 0;
}

int
droce_rdma_migrate_id(struct droce_rdma_cm_id *pub, struct droce_rdma_event_channel *channel)
{
	struct cm_channel *to = (struct cm_channel *)channel;
	struct cm_id *id = cm_id_of(pub);
	struct cm_event *ev, *next;

	if (pub == NULL || channel == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&reg.lock);
	/* the id's events not yet taken follow it (the kernel's ucma_migrate_id) */
	for (ev = TAILQ_FIRST(&id->ch->events); ev != NULL; ev = next) {
		next = TAILQ_NEXT(ev, link);
		if (ev->pub.id != pub)
			continue;
		TAILQ_REMOVE(&id->ch->events, ev, link);
		fd_count(id->ch->pub.fd, false);
		TAILQ_INSERT_TAIL(&to->events, ev, link);
		fd_count(to->pub.fd, true);
	}
	id->ch->nids--;
	to->nids++;
	id->ch = to;
	pub->channel = channel;
	pthread_mutex_unlock(&reg.lock);
	return 0;
}

/* ---- addresses ---------------------------------------------------------------------- */

/* The GID of an IPv4 / IPv6 socket address and its port; -EAFNOSUPPORT. */
static int
sockaddr_gid(const struct sockaddr *sa, uint8_t gid[16], uint16_t *port)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		roce_gid_from_ipv4(gid, (const uint8_t *)&in->sin_addr);
		*port = ntohs(in->sin_port);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		memcpy(gid, &in6->sin6_addr, 16);
		*port = ntohs(in6->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

/* The socket address (port 0) of a RoCEv2 GID: IPv4-mapped or IPv6. */
static void
gid_sockaddr(const uint8_t gid[16], union droce_rdma_sockaddr *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (cm_gid_is_v4(gid)) {
		struct sockaddr_in in = { .sin_family = AF_INET };

		memcpy(&in.sin_addr, &gid[12], 4);
		memcpy(ss, &in, sizeof(in));
	} else {
		struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };

		memcpy(&in6.sin6_addr, gid, 16);
		memcpy(ss, &in6, sizeof(in6));
	}
}

static size_t
sockaddr_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
					   sizeof(struct sockaddr_in6);
}

/*
 * The wildcard address, or a loopback one (127.0.0.0/8, ::1), which binds
 * as the wildcard does: the kernel's rdma_bind_addr (cma_any_addr) leaves
 * such an id on no device (verbs NULL), and libfabric's verbs provider
 * binds "localhost" so before it lists its devices' addresses.
 */
static bool
gid_is_any(const uint8_t gid[16])
{
	static const uint8_t any4[16] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t any6[16];
	static const uint8_t loop6[16] = { [15] = 1 };

	return memcmp(gid, any4, 16) == 0 || memcmp(gid, any6, 16) == 0 ||
	       memcmp(gid, loop6, 16) == 0 ||
	       (memcmp(gid, any4, 12) == 0 && gid[12] == 127);
}

/* the agent owning gid, or (gid any) the first with that address family */
static struct cm_agent *
agent_for(const uint8_t gid[16], uint8_t local_gid[16])
{
	struct cm_agent *a;

	TAILQ_FOREACH(a, &reg.agents, link)
		for (unsigned int i = 0; i < a->ngids; i++)
			if (gid_is_any(gid) ? cm_gid_is_v4(a->gids[i]) == cm_gid_is_v4(gid) :
					      memcmp(a->gids[i], gid, 16) == 0) {
				memcpy(local_gid, a->gids[i], 16);
				return a;
			}
	return NULL;
}

/*
 * The next ephemeral port.  Each process starts at a random point of the
 * range: on droced the applications share one port space (its CM relay
 * refuses a listen on another's port, EADDRINUSE), and two that both began
 * at the range's start took the same first port (libfabric's rxm: both
 * sides listen on an ephemeral port).
 */
static uint16_t
ephemeral_port(void)
{
	if (reg.next_port < CM_PORT_FIRST || reg.next_port >= CM_PORT_LAST) {
		uint32_t r;

		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
			r = (uint32_t)getpid() * 2654435761u;
		reg.next_port = (uint16_t)(CM_PORT_FIRST + r % (CM_PORT_LAST - CM_PORT_FIRST));
	}
	return reg.next_port++;
}

static void
set_port(union droce_rdma_sockaddr *ss, uint16_t port)
{
	uint16_t be = htons(port);

	/* sin_port and sin6_port are at the same offset */
	memcpy((uint8_t *)ss + offsetof(struct sockaddr_in, sin_port), &be, sizeof(be));
}

/* An ephemeral port no other id holds where a (NULL: any address) is; 0 if none. */
static uint16_t
free_ephemeral_port(const struct cm_agent *a)
{
	for (unsigned int tries = 0; tries <= CM_PORT_LAST - CM_PORT_FIRST; tries++) {
		uint16_t port = ephemeral_port();
		const struct cm_id *id;
		bool taken = false;

		TAILQ_FOREACH(id, &reg.ids, link)
			if (id->state != CM_IDLE && id->state != CM_CLOSED && id->port == port &&
			    (a == NULL || id->agent == NULL || id->agent == a))
				taken = true;
		if (!taken)
			return port;
	}
	return 0;
}

int
droce_rdma_bind_addr(struct droce_rdma_cm_id *pub, struct sockaddr *addr)
{
	struct cm_id *id = cm_id_of(pub);
	uint8_t gid[16];
	uint16_t port;
	int rc;

	if (pub == NULL || addr == NULL || id->state != CM_IDLE)
		return fail(EINVAL);
	rc = sockaddr_gid(addr, gid, &port);
	if (rc != 0)
		return fail(-rc);
	pthread_mutex_lock(&reg.lock);
	if (!gid_is_any(gid)) {
		id->agent = agent_for(gid, id->local_gid);
		rc = id->agent == NULL ? EADDRNOTAVAIL : 0;
	}
	/* port 0: a free ephemeral one, as the kernel's rdma_bind_addr picks
	 * (qperf -cm1 binds so, then sends rdma_get_src_port's to its peer) */
	if (rc == 0 && port == 0) {
		port = free_ephemeral_port(id->agent);
		rc = port == 0 ? EADDRINUSE : 0;
	}
	if (rc == 0) {
		id->pub.verbs = id->agent != NULL ? id->agent->ctx : NULL;
		memcpy(&id->pub.route.addr.src_addr, addr, sockaddr_len(addr));
		set_port(&id->pub.route.addr.src_addr, port);
		id->port = port;
		id->state = CM_ADDR_BOUND;
	}
	pthread_mutex_unlock(&reg.lock);
	return rc == 0 ? 0 : fail(rc);
}

int
droce_rdma_resolve_addr(struct droce_rdma_cm_id *pub, struct sockaddr *src_addr,
			struct sockaddr *dst_addr, int timeout_ms)
{
	struct cm_id *id = cm_id_of(pub);
	uint8_t src[16] = { [10] = 0xff, [11] = 0xff };
	uint16_t port = 0, dport;
	int rc;

	(void)timeout_ms;	/* resolved at once: lib/net resolves the MAC */
	if (pub == NULL || dst_addr == NULL ||
	    (id->state != CM_IDLE && id->state != CM_ADDR_BOUND))
		return fail(EINVAL);
	/* bound before (rdma_bind_addr, as mckey -b does): from that address
	 * unless another is given, as the kernel's rdma_resolve_addr */
	if (id->state == CM_ADDR_BOUND && src_addr == NULL)
		src_addr = (struct sockaddr *)&id->pub.route.addr.src_addr;
	rc = sockaddr_gid(dst_addr, id->remote_gid, &dport);
	if (rc == 0 && src_addr != NULL)
		rc = sockaddr_gid(src_addr, src, &port);
	if (rc != 0)
		return fail(-rc);
	if (src_addr == NULL && !cm_gid_is_v4(id->remote_gid))
		memset(src, 0, sizeof(src));
	pthread_mutex_lock(&reg.lock);
	id->agent = agent_for(src, id->local_gid);
	if (id->agent == NULL) {
		pthread_mutex_unlock(&reg.lock);
		return fail(EADDRNOTAVAIL);
	}
	id->pub.verbs = id->agent->ctx;
	id->port = port != 0 ? port : ephemeral_port();
	/* the address the id is bound to, as the kernel's: the source given,
	 * or (none, the wildcard or loopback) the one of the GID it uses */
	if (src_addr != NULL && !gid_is_any(src))
		memcpy(&id->pub.route.addr.src_addr, src_addr, sockaddr_len(src_addr));
	else
		gid_sockaddr(id->local_gid, &id->pub.route.addr.src_addr);
	set_port(&id->pub.route.addr.src_addr, id->port);
	memcpy(&id->pub.route.addr.dst_addr, dst_addr, sockaddr_len(dst_addr));
	id->state = CM_ADDR_BOUND;
	rc = cm_event_post(id, DROCE_RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, 0);
	pthread_mutex_unlock(&reg.lock);
	return rc == 0 ? 0 : fail(-rc);
}

int
droce_rdma_resolve_route(struct droce_rdma_cm_id *pub, int timeout_ms)
{
	struct cm_id *id = cm_id_of(pub);
	int rc;

	(void)timeout_ms;	/* RoCE: the path is the addresses */
	if (pub == NULL || id->state != CM_ADDR_BOUND || id->agent == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&reg.lock);
	id->state = CM_ROUTE_RESOLVED;
	pub->route.num_paths = 1;
	rc = cm_event_post(id, DROCE_RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, 0);
	pthread_mutex_unlock(&reg.lock);
	return rc == 0 ? 0 : fail(-rc);
}

/* ---- QPs and connections ------------------------------------------------------------- */

int
droce_rdma_use_qp(struct droce_rdma_cm_id *pub, struct droce_qp *qp)
{
	struct droce_qp_attr at = {
		.qp_state = DROCE_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE,
	};
	int rc;

	if (pub == NULL)
		return fail(EINVAL);
	if (qp == NULL) {
		pthread_mutex_lock(&reg.lock);
		pub->qp = NULL;
		pthread_mutex_unlock(&reg.lock);
		return 0;
	}
	if (pub->verbs == NULL || qp->context != pub->verbs || pub->qp != NULL ||
	    qp->qp_type != pub->qp_type)
		return fail(EINVAL);
	if (pub->qp_type == DROCE_QPT_UD)
		rc = cm_sidr_qp_ready(qp);
	else
		rc = droce_modify_qp(qp, &at, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX |
				     DROCE_QP_PORT | DROCE_QP_ACCESS_FLAGS);
	if (rc != 0)
		return fail(rc);
	pthread_mutex_lock(&reg.lock);
	pub->qp = qp;
	pub->pd = qp->pd;
	pthread_mutex_unlock(&reg.lock);
	return 0;
}

int
droce_rdma_create_qp(struct droce_rdma_cm_id *pub, struct droce_pd *pd,
		     struct droce_qp_init_attr *init)
{
	struct droce_qp *qp;

	if (pub == NULL || pd == NULL || init == NULL || pub->verbs == NULL ||
	    pd->context != pub->verbs || pub->qp != NULL || init->qp_type != pub->qp_type)
		return fail(EINVAL);
	qp = droce_create_qp(pd, init);
	if (qp == NULL)
		return -1;
	if (droce_rdma_use_qp(pub, qp) != 0) {
		int err = errno;

		droce_destroy_qp(qp);
		return fail(err);
	}
	return 0;
}

/* ---- multicast (RDMA_PS_UDP) --------------------------------------------------------- */

/* The group's index in id's list, or -1. */
static int
mc_find(const struct cm_id *id, const uint8_t mgid[16])
{
	for (unsigned int i = 0; i < id->nmc; i++)
		if (memcmp(id->mc[i].mgid, mgid, 16) == 0)
			return (int)i;
	return -1;
}

/* The GID index of the id's source GID on its device (0: not found). */
static uint8_t
sgid_index(const struct cm_id *id)
{
	for (unsigned int i = 0; i < id->agent->ngids; i++)
		if (memcmp(id->agent->gids[i], id->local_gid, 16) == 0)
			return (uint8_t)i;
	return 0;
}

/*
 * MULTICAST_JOIN as the kernel's cma_iboe_join_multicast makes it for
 * RoCE (cma_make_mc_event): the AH to the group from the id's GID (hop
 * limit 64, IPV6_DEFAULT_HOPLIMIT), the permissive QPN, the UDP Q_Key.
 */
static int
post_join(struct cm_id *id, const uint8_t mgid[16], void *context)
{
	struct droce_rdma_ud_param *ud;
	int rc = cm_event_post(id, DROCE_RDMA_CM_EVENT_MULTICAST_JOIN, 0, NULL, 0);

	if (rc != 0)
		return rc;
	ud = &cm_event_last(id)->pub.param.ud;
	memset(ud, 0, sizeof(*ud));
	ud->private_data = context;
	ud->ah_attr.is_global = 1;
	ud->ah_attr.port_num = 1;
	memcpy(ud->ah_attr.grh.dgid.raw, mgid, 16);
	ud->ah_attr.grh.sgid_index = sgid_index(id);
	ud->ah_attr.grh.hop_limit = 64;
	ud->qp_num = ROCE_MCAST_QPN;
	ud->qkey = DROCE_RDMA_UDP_QKEY;
	return 0;
}

/* The group of a join/leave: 0, or -errno (not IP, not a group). */
static int
mc_addr(const struct sockaddr *addr, uint8_t mgid[16])
{
	uint16_t port;
	int rc;

	if (addr == NULL)
		return -EINVAL;
	rc = sockaddr_gid(addr, mgid, &port);
	if (rc == 0 && !roce_gid_is_mcast(mgid))
		rc = -EINVAL;
	return rc;
}

int
droce_rdma_join_multicast(struct droce_rdma_cm_id *pub, struct sockaddr *addr,
			  void *context, enum droce_rdma_mc_join_flags flags)
{
	struct cm_id *id = cm_id_of(pub);
	uint8_t mgid[16];
	int rc;

	if (pub == NULL || pub->ps != DROCE_RDMA_PS_UDP || id->agent == NULL ||
	    (flags != DROCE_RDMA_MC_JOIN_FLAG_FULLMEMBER &&
	     flags != DROCE_RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER))
		return fail(EINVAL);
	rc = mc_addr(addr, mgid);
	if (rc != 0)
		return fail(-rc);
	pthread_mutex_lock(&reg.lock);
	if (id->nmc == CM_ID_MAX_MC)
		rc = ENOMEM;
	else if (mc_find(id, mgid) >= 0)
		rc = EADDRINUSE;
	/* the QP joins at once (librdmacm attaches it when it reports the
	 * event): a send-only member's does not */
	if (rc == 0 && pub->qp != NULL && flags == DROCE_RDMA_MC_JOIN_FLAG_FULLMEMBER)
		rc = droce_attach_mcast(pub->qp, (const union droce_gid *)mgid, 0);
	if (rc == 0) {
		rc = -post_join(id, mgid, context);
		if (rc != 0 && pub->qp != NULL &&
		    flags == DROCE_RDMA_MC_JOIN_FLAG_FULLMEMBER)
			droce_detach_mcast(pub->qp, (const union droce_gid *)mgid, 0);
	}
	if (rc == 0) {
		memcpy(id->mc[id->nmc].mgid, mgid, 16);
		id->mc[id->nmc++].send_only =
			flags == DROCE_RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER;
	}
	pthread_mutex_unlock(&reg.lock);
	return rc == 0 ? 0 : fail(rc);
}

int
droce_rdma_leave_multicast(struct droce_rdma_cm_id *pub, struct sockaddr *addr)
{
	struct cm_id *id = cm_id_of(pub);
	uint8_t mgid[16];
	int rc, i;

	if (pub == NULL)
		return fail(EINVAL);
	rc = mc_addr(addr, mgid);
	if (rc != 0)
		return fail(-rc);
	pthread_mutex_lock(&reg.lock);
	i = mc_find(id, mgid);
	if (i < 0) {
		pthread_mutex_unlock(&reg.lock);
		return fail(EADDRNOTAVAIL);	/* librdmacm's answer */
	}
	if (pub->qp != NULL && !id->mc[i].send_only)
		droce_detach_mcast(pub->qp, (const union droce_gid *)mgid, 0);
	id->mc[i] = id->mc[--id->nmc];
	pthread_mutex_unlock(&reg.lock);
	return 0;
}

void
droce_rdma_destroy_qp(struct droce_rdma_cm_id *pub)
{
	if (pub == NULL || pub->qp == NULL)
		return;
	droce_destroy_qp(pub->qp);
	pub->qp = NULL;
}

/* a state machine call under the lock: 0, or -1 with errno */
static int
locked(int (*fn)(struct cm_id *, const struct droce_rdma_conn_param *),
       struct droce_rdma_cm_id *pub, const struct droce_rdma_conn_param *p)
{
	int rc;

	if (pub == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&reg.lock);
	rc = fn(cm_id_of(pub), p);
	pthread_mutex_unlock(&reg.lock);
	return rc == 0 ? 0 : fail(rc);
}

/* a UD id (its type fixed at creation) on SIDR (cm_sidr.c) */
static bool
ud(const struct droce_rdma_cm_id *pub)
{
	return pub != NULL && pub->qp_type == DROCE_QPT_UD;
}

int
droce_rdma_connect(struct droce_rdma_cm_id *id, struct droce_rdma_conn_param *p)
{
	return locked(ud(id) ? cm_sidr_connect : cm_proto_connect, id, p);
}

int
droce_rdma_accept(struct droce_rdma_cm_id *id, struct droce_rdma_conn_param *p)
{
	return locked(ud(id) ? cm_sidr_accept : cm_proto_accept, id, p);
}

static int
disconnect(struct cm_id *id, const struct droce_rdma_conn_param *p)
{
	(void)p;
	return cm_proto_disconnect(id);
}

int
droce_rdma_disconnect(struct droce_rdma_cm_id *id)
{
	return locked(disconnect, id, NULL);
}

int
droce_rdma_init_qp_attr(struct droce_rdma_cm_id *pub, struct droce_qp_attr *attr,
			int *attr_mask)
{
	int rc;

	if (pub == NULL || attr == NULL || attr_mask == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&reg.lock);
	rc = cm_id_is_ud(cm_id_of(pub)) ? cm_sidr_init_qp_attr(cm_id_of(pub), attr, attr_mask) :
					   cm_proto_init_qp_attr(cm_id_of(pub), attr, attr_mask);
	pthread_mutex_unlock(&reg.lock);
	return rc == 0 ? 0 : fail(rc);
}

static int
establish(struct cm_id *id, const struct droce_rdma_conn_param *p)
{
	(void)p;
	return cm_proto_establish(id);
}

int
droce_rdma_establish(struct droce_rdma_cm_id *id)
{
	return locked(establish, id, NULL);
}

static int
comm_est(struct cm_id *id, const struct droce_rdma_conn_param *p)
{
	(void)p;
	return cm_proto_comm_est(id);
}

int
droce_rdma_notify(struct droce_rdma_cm_id *id, enum droce_event_type event)
{
	if (event != DROCE_EVENT_COMM_EST)
		return fail(EINVAL);
	return locked(comm_est, id, NULL);
}

int
droce_rdma_reject(struct droce_rdma_cm_id *pub, const void *private_data,
		  uint8_t private_data_len)
{
	struct droce_rdma_conn_param p = {
		.private_data = private_data, .private_data_len = private_data_len,
	};

	return locked(ud(pub) ? cm_sidr_reject : cm_proto_reject, pub, &p);
}

/*
 * A listener's port registered with droced for each relayed agent it
 * serves (the wildcard: every one): 0, or the first refusal's errno
 * (EADDRINUSE: another client of droced listens on it) with those made
 * undone.  on == false takes them back.
 */
static int
relay_listen(struct cm_id *id, bool on)
{
	struct cm_agent *a, *b;
	int rc = 0;

	TAILQ_FOREACH(a, &reg.agents, link) {
		if (!a->relay || (id->agent != NULL && id->agent != a))
			continue;
		rc = -cm_gsi_listen(a, id->port, on);
		if (rc != 0 && on)
			break;
	}
	if (rc == 0 || !on)
		return 0;
	TAILQ_FOREACH(b, &reg.agents, link) {
		if (b == a)
			break;
		if (b->relay && (id->agent == NULL || id->agent == b))
			cm_gsi_listen(b, id->port, false);
	}
	return rc;
}

int
droce_rdma_listen(struct droce_rdma_cm_id *pub, int backlog)
{
	struct cm_id *id = cm_id_of(pub);
	int rc = 0;

	(void)backlog;
	if (pub == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&reg.lock);
	if (id->state != CM_ADDR_BOUND || id->port == 0)
		rc = EINVAL;
	else if (cm_find_listener(id->agent, id->port, (uint16_t)pub->ps) != NULL)
		rc = EADDRINUSE;
	else
		rc = relay_listen(id, true);
	if (rc == 0)
		id->state = CM_LISTEN;
	if (rc == 0) {		/* REQs that came first (cm_proto.c's hold) */
		struct cm_agent *a;

		TAILQ_FOREACH(a, &reg.agents, link)
			cm_proto_held(a, cm_now_ns());
	}
	pthread_mutex_unlock(&reg.lock);
	return rc == 0 ? 0 : fail(rc);
}

int
droce_rdma_set_tos(struct droce_rdma_cm_id *pub, uint8_t tos)
{
	if (pub == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&reg.lock);
	cm_id_of(pub)->tos = tos;
	pthread_mutex_unlock(&reg.lock);
	return 0;
}

int
droce_rdma_set_ack_timeout(struct droce_rdma_cm_id *pub, uint8_t timeout)
{
	if (pub == NULL || timeout > 31)
		return fail(EINVAL);
	pthread_mutex_lock(&reg.lock);
	cm_id_of(pub)->ack_timeout = timeout;
	pthread_mutex_unlock(&reg.lock);
	return 0;
}

int
droce_rdma_set_cm_timeout(struct droce_rdma_cm_id *pub, uint8_t timeout, uint8_t retries)
{
	struct cm_id *id = cm_id_of(pub);

	if (pub == NULL || timeout > 31 || retries > 15)
		return fail(EINVAL);
	pthread_mutex_lock(&reg.lock);
	id->cm_timeout = timeout;
	id->max_retries = retries;
	pthread_mutex_unlock(&reg.lock);
	return 0;
}
