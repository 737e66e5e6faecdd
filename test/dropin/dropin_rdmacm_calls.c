/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librdmacm's calls one by one, compiled against the system's
 * <rdma/rdma_cma.h> and linked with the system's librdmacm.so.1, run on
 * droce through the drop-in (droce-run; droce on 198.18.5.1, one device,
 * no peer needed).  Checks, exactly: rdma_get_devices lists droce0; a
 * channel's fd is a real descriptor, EAGAIN from a non-blocking one with
 * nothing queued; an id with no channel; rdma_bind_addr sets verbs, the
 * source address and port (rdma_get_src_port), rdma_listen; an address
 * droce does not own is refused (EADDRNOTAVAIL), RDMA_PS_IPOIB too (EINVAL);
 * rdma_getaddrinfo's fields, passive and active, and EAI_NONAME; rpoll on
 * a pipe; rdma_event_str; rsockets (options, a refused rconnect, and a
 * connection to itself: non-blocking rconnect, raccept, rpoll, data both
 * ways, shutdown); what libfabric's verbs provider needs (check_fabric_calls);
 * the refusals of the calls of an id's own QP, options, SRQ and ECE, and
 * of multicast on a TCP id (check_refusals).  Prints "ok" and exits 0, else names the failed check, exit 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#include "dropin_die.h"

#define ADDR "198.18.5.1"
#define PORT 7471

#define CHECK(cond, ...) do { if (!(cond)) die(__VA_ARGS__); } while (0)

/* rc must be -1 with errno err */
static void
refused(const char *what, int rc, int err)
{
	CHECK(rc == -1 && errno == err, "%s: %d, errno %d (%s), expected -1 and %s", what, rc,
	      errno, strerror(errno), strerror(err));
}

static void
sin_of(struct sockaddr_in *sin, const char *addr, uint16_t port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	inet_pton(AF_INET, addr, &sin->sin_addr);
}

static void
check_devices(struct ibv_context **ctx)
{
	int n = -1;
	struct ibv_context **list = rdma_get_devices(&n);

	CHECK(list != NULL && n == 1, "rdma_get_devices: %d devices", n);
	CHECK(list[1] == NULL, "rdma_get_devices: list not NULL-terminated");
	CHECK(strcmp(ibv_get_device_name(list[0]->device), "droce0") == 0,
	      "rdma_get_devices: %s", ibv_get_device_name(list[0]->device));
	*ctx = list[0];
	rdma_free_devices(list);
}

static void
check_ids(struct ibv_context *ctx)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id, *own, *udp;
	struct rdma_cm_event *ev;
	struct sockaddr_in sin, dst;
	int tag = 42;

	CHECK(ch != NULL && fcntl(ch->fd, F_GETFD) >= 0, "event channel fd");
	CHECK(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0, "O_NONBLOCK");
	refused("rdma_get_cm_event, nothing queued", rdma_get_cm_event(ch, &ev), EAGAIN);
	CHECK(rdma_create_id(NULL, &own, NULL, RDMA_PS_TCP) == 0 && own->channel != NULL,
	      "rdma_create_id without a channel");
	CHECK(rdma_destroy_id(own) == 0, "rdma_destroy_id (own channel)");
	/* RDMA_PS_UDP and RDMA_PS_IPOIB: UD ids (SIDR, multicast) */
	CHECK(rdma_create_id(ch, &udp, NULL, RDMA_PS_UDP) == 0 && udp->ps == RDMA_PS_UDP &&
	      udp->qp_type == IBV_QPT_UD, "rdma_create_id RDMA_PS_UDP");
	CHECK(rdma_destroy_id(udp) == 0, "rdma_destroy_id (RDMA_PS_UDP)");
	CHECK(rdma_create_id(ch, &udp, NULL, RDMA_PS_IPOIB) == 0 && udp->ps == RDMA_PS_IPOIB &&
	      udp->qp_type == IBV_QPT_UD, "rdma_create_id RDMA_PS_IPOIB");
	CHECK(rdma_destroy_id(udp) == 0, "rdma_destroy_id (RDMA_PS_IPOIB)");
	refused("rdma_create_id of no port space", rdma_create_id(ch, &udp, NULL, 0x0999),
		EINVAL);

	CHECK(rdma_create_id(ch, &id, &tag, RDMA_PS_TCP) == 0, "rdma_create_id");
	CHECK(id->context == &tag && id->channel == ch && id->ps == RDMA_PS_TCP &&
	      id->qp == NULL && id->verbs == NULL, "a new id's fields");
	sin_of(&sin, "198.18.9.9", PORT);
	refused("rdma_bind_addr to an address droce does not own",
		rdma_bind_addr(id, (struct sockaddr *)&sin), EADDRNOTAVAIL);
	sin_of(&sin, ADDR, PORT);
	CHECK(rdma_bind_addr(id, (struct sockaddr *)&sin) == 0, "rdma_bind_addr: %s",
	      strerror(errno));
	CHECK(id->verbs == ctx, "bound id's verbs %p, the device's %p", (void *)id->verbs,
	      (void *)ctx);
	CHECK(rdma_get_src_port(id) == htons(PORT) && rdma_get_dst_port(id) == 0,
	      "ports %u %u", ntohs(rdma_get_src_port(id)), ntohs(rdma_get_dst_port(id)));
	CHECK(memcmp(rdma_get_local_addr(id), &sin, sizeof(sin)) == 0, "local address");
	CHECK(id->route.addr.addr.ibaddr.sgid.raw[10] == 0xff &&
	      memcmp(&id->route.addr.addr.ibaddr.sgid.raw[12], &sin.sin_addr, 4) == 0,
	      "sgid not ::ffff:" ADDR);
	CHECK(rdma_listen(id, 4) == 0, "rdma_listen: %s", strerror(errno));
	sin_of(&dst, "198.18.5.2", PORT);
	refused("rdma_resolve_addr on a listener",
		rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 100), EINVAL);
	refused("rdma_get_cm_event, listening", rdma_get_cm_event(ch, &ev), EAGAIN);
	CHECK(rdma_destroy_id(id) == 0, "rdma_destroy_id");
	rdma_destroy_event_channel(ch);
}

static void
check_addrinfo(void)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *res;
	struct sockaddr_in want;
	int rc;

	sin_of(&want, ADDR, PORT);
	rc = rdma_getaddrinfo(ADDR, "7471", &hints, &res);
	CHECK(rc == 0, "rdma_getaddrinfo passive: %s", gai_strerror(rc));
	CHECK(res->ai_family == AF_INET && res->ai_qp_type == IBV_QPT_RC &&
	      res->ai_port_space == RDMA_PS_TCP && res->ai_flags == RAI_PASSIVE &&
	      res->ai_dst_addr == NULL && res->ai_src_len == sizeof(want) &&
	      memcmp(res->ai_src_addr, &want, sizeof(want)) == 0 && res->ai_next == NULL,
	      "rdma_getaddrinfo passive: fields");
	rdma_freeaddrinfo(res);
	rc = rdma_getaddrinfo(ADDR, "7471", NULL, &res);
	CHECK(rc == 0, "rdma_getaddrinfo: %s", gai_strerror(rc));
	CHECK(res->ai_family == AF_INET && res->ai_qp_type == IBV_QPT_RC &&
	      res->ai_port_space == RDMA_PS_TCP && res->ai_src_addr == NULL &&
	      res->ai_dst_len == sizeof(want) &&
	      memcmp(res->ai_dst_addr, &want, sizeof(want)) == 0, "rdma_getaddrinfo: fields");
	rdma_freeaddrinfo(res);
	hints.ai_flags = RAI_NUMERICHOST;
	rc = rdma_getaddrinfo("no.such.host", NULL, &hints, &res);
	CHECK(rc == EAI_NONAME, "rdma_getaddrinfo of a name with RAI_NUMERICHOST: %d", rc);
}

/*
 * What libfabric's verbs provider relies on: a loopback address binds as
 * the wildcard (no device); rdma_getaddrinfo without node and service
 * answers the hints' addresses; a synchronous id waits for its event
 * (id->event) and resolves to the address of its GID; rdma_migrate_id
 * moves an id and its queued events; rdma_destroy_ep.
 */
static void
check_fabric_calls(void)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_FAMILY, .ai_family = AF_INET };
	struct rdma_event_channel *ch1, *ch2;
	struct sockaddr_in lo, dst, src;
	struct rdma_cm_event *ev;
	struct rdma_addrinfo *res;
	struct rdma_cm_id *id;

	sin_of(&lo, "127.0.0.1", 0);
	CHECK(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) == 0, "rdma_create_id");
	CHECK(rdma_bind_addr(id, (struct sockaddr *)&lo) == 0 && id->verbs == NULL,
	      "rdma_bind_addr 127.0.0.1: %s, verbs %p", strerror(errno), (void *)id->verbs);
	CHECK(rdma_destroy_id(id) == 0, "rdma_destroy_id (loopback)");

	sin_of(&dst, "198.18.5.2", PORT);
	sin_of(&src, ADDR, 0);
	hints.ai_dst_addr = (struct sockaddr *)&dst;
	hints.ai_dst_len = sizeof(dst);
	hints.ai_src_addr = (struct sockaddr *)&src;
	hints.ai_src_len = sizeof(src);
	CHECK(rdma_getaddrinfo(NULL, NULL, &hints, &res) == 0 && res->ai_family == AF_INET &&
	      res->ai_dst_len == sizeof(dst) && memcmp(res->ai_dst_addr, &dst, sizeof(dst)) == 0 &&
	      res->ai_src_len == sizeof(src) && memcmp(res->ai_src_addr, &src, sizeof(src)) == 0,
	      "rdma_getaddrinfo(NULL, NULL, hints): the hints' addresses");
	rdma_freeaddrinfo(res);

	CHECK(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) == 0, "rdma_create_id");
	CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 100) == 0 &&
	      id->event != NULL && id->event->event == RDMA_CM_EVENT_ADDR_RESOLVED,
	      "synchronous rdma_resolve_addr: %s, event %p", strerror(errno), (void *)id->event);
	CHECK(((struct sockaddr_in *)rdma_get_local_addr(id))->sin_addr.s_addr ==
	      src.sin_addr.s_addr, "resolved id's local address not " ADDR);
	ch1 = rdma_create_event_channel();
	CHECK(ch1 != NULL && rdma_migrate_id(id, ch1) == 0 && id->channel == ch1 &&
	      id->event == NULL, "rdma_migrate_id of a synchronous id: %s", strerror(errno));
	CHECK(fcntl(ch1->fd, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
	refused("rdma_get_cm_event: the synchronous event stays behind",
		rdma_get_cm_event(ch1, &ev), EAGAIN);
	rdma_destroy_ep(id);

	ch2 = rdma_create_event_channel();
	CHECK(ch2 != NULL && rdma_create_id(ch1, &id, NULL, RDMA_PS_TCP) == 0 &&
	      rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 100) == 0 &&
	      rdma_migrate_id(id, ch2) == 0 && id->channel == ch2, "rdma_migrate_id");
	refused("rdma_get_cm_event on the old channel", rdma_get_cm_event(ch1, &ev), EAGAIN);
	CHECK(rdma_get_cm_event(ch2, &ev) == 0 && ev->id == id &&
	      ev->event == RDMA_CM_EVENT_ADDR_RESOLVED && rdma_ack_cm_event(ev) == 0,
	      "the queued event follows the id");
	rdma_destroy_ep(id);
	/* an event never taken does not hold the id (the kernel drops it) */
	CHECK(rdma_create_id(ch1, &id, NULL, RDMA_PS_TCP) == 0 &&
	      rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 100) == 0, "resolve");
	CHECK(rdma_destroy_id(id) == 0, "rdma_destroy_id with its event queued: %s",
	      strerror(errno));
	refused("rdma_get_cm_event after the id", rdma_get_cm_event(ch1, &ev), EAGAIN);
	rdma_destroy_event_channel(ch1);
	rdma_destroy_event_channel(ch2);
}

static void
check_rpoll(void)
{
	struct pollfd p;
	int fds[2];

	CHECK(pipe(fds) == 0 && write(fds[1], "x", 1) == 1, "pipe");
	p = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	CHECK(rpoll(&p, 1, 1000) == 1 && p.revents == POLLIN, "rpoll on a pipe");
	close(fds[0]);
	close(fds[1]);
}

/*
 * The calls of an id's own QP, options, SRQ and ECE on an id with no
 * connection: the documented refusals, nothing else happens; and
 * multicast on a TCP id (EINVAL; sin is no group).
 */
static void
check_refusals(void)
{
	struct sockaddr_in sin;
	struct ibv_qp_attr qp_attr = { .qp_state = IBV_QPS_INIT };
	struct ibv_ece ece = { .vendor_id = 7, .options = 7 };
	struct rdma_cm_id *id = NULL;
	uint8_t tos = 0x20, big = 32;
	int mask, one = 1, zero = 0;

	sin_of(&sin, ADDR, PORT);
	refused("rdma_create_ep without addrinfo", rdma_create_ep(&id, NULL, NULL, NULL), EINVAL);
	CHECK(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) == 0, "rdma_create_id");
	refused("rdma_init_qp_attr INIT with no device",
		rdma_init_qp_attr(id, &qp_attr, &mask), EINVAL);
	qp_attr.qp_state = IBV_QPS_RTR;
	refused("rdma_init_qp_attr RTR with no peer", rdma_init_qp_attr(id, &qp_attr, &mask),
		EINVAL);
	refused("rdma_establish with no REP", rdma_establish(id), EINVAL);
	refused("rdma_notify with no REP", rdma_notify(id, IBV_EVENT_COMM_EST), EINVAL);
	refused("rdma_connect with neither QP nor parameters", rdma_connect(id, NULL), EINVAL);
	CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)) == 0,
	      "rdma_set_option TOS");
	refused("rdma_set_option TOS of an int's size",
		rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &one, sizeof(one)), EINVAL);
	refused("rdma_set_option ACK_TIMEOUT 32",
		rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &big,
				sizeof(big)), EINVAL);
	CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one,
			      sizeof(one)) == 0, "rdma_set_option REUSEADDR");
	CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &zero,
			      sizeof(zero)) == 0, "rdma_set_option AFONLY 0");
	refused("rdma_set_option AFONLY 1",
		rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one, sizeof(one)),
		EOPNOTSUPP);
	refused("rdma_set_option IB_PATH",
		rdma_set_option(id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &one, sizeof(one)),
		EOPNOTSUPP);
	refused("rdma_set_option of no such name",
		rdma_set_option(id, RDMA_OPTION_ID, 99, &one, sizeof(one)), ENOSYS);
	refused("rdma_create_srq without attributes", rdma_create_srq(id, NULL, NULL), EINVAL);
	CHECK(rdma_set_local_ece(id, &ece) == 0, "rdma_set_local_ece");
	CHECK(rdma_get_remote_ece(id, &ece) == 0 && ece.vendor_id == 0 && ece.options == 0,
	      "rdma_get_remote_ece: none (vendor %u)", ece.vendor_id);
	refused("rdma_reject_ece", rdma_reject_ece(id, NULL, 0), EOPNOTSUPP);
	/* multicast is a RDMA_PS_UDP id's, to a group (sin is none) */
	refused("rdma_join_multicast on a TCP id",
		rdma_join_multicast(id, (struct sockaddr *)&sin, NULL), EINVAL);
	refused("rdma_leave_multicast of no group",
		rdma_leave_multicast(id, (struct sockaddr *)&sin), EINVAL);
	CHECK(rdma_destroy_id(id) == 0, "rdma_destroy_id");
}

static int
opt_get(int s, int level, int name)
{
	socklen_t len = sizeof(int);
	int v = -1;

	CHECK(rgetsockopt(s, level, name, &v, &len) == 0 && len == sizeof(int),
	      "rgetsockopt %d/%d", level, name);
	return v;
}

static void
opt_set(int s, int level, int name, int v)
{
	CHECK(rsetsockopt(s, level, name, &v, sizeof(v)) == 0, "rsetsockopt %d/%d", level, name);
}

/* rsockets in one process: the answers without a peer, then a connection
 * to itself (droce loops the frames through its port): non-blocking
 * rconnect, raccept, rpoll, data both ways, shutdown seen by the peer. */
static void
check_rsockets(void)
{
	struct sockaddr_in sin, other;
	struct pollfd p;
	char buf[16];
	int l, c, a, i;

	sin_of(&sin, ADDR, PORT + 10);
	sin_of(&other, ADDR, PORT + 11);
	refused("rsocket SOCK_SEQPACKET", rsocket(AF_INET, SOCK_SEQPACKET, 0), ENOTSUP);
	refused("rsend on no rsocket", (int)rsend(0, buf, 1, 0), EBADF);
	l = rsocket(AF_INET, SOCK_STREAM, 0);
	CHECK(l >= 0 && fcntl(l, F_GETFD) >= 0, "rsocket: %d, a descriptor of its own", l);
	opt_set(l, SOL_RDMA, RDMA_SQSIZE, 64);
	opt_set(l, SOL_SOCKET, SO_RCVBUF, 32768);
	opt_set(l, SOL_SOCKET, SO_REUSEADDR, 1);
	opt_set(l, IPPROTO_TCP, TCP_NODELAY, 1);
	CHECK(opt_get(l, SOL_RDMA, RDMA_SQSIZE) == 64 && opt_get(l, SOL_SOCKET, SO_RCVBUF) == 65536 &&
	      opt_get(l, SOL_SOCKET, SO_REUSEADDR) == 1 && opt_get(l, IPPROTO_TCP, TCP_NODELAY) == 1 &&
	      opt_get(l, SOL_SOCKET, SO_ERROR) == 0, "options read back");
	CHECK(rbind(l, (struct sockaddr *)&sin, sizeof(sin)) == 0 && rlisten(l, 4) == 0, "rlisten");
	CHECK(rfcntl(l, F_SETFL, O_NONBLOCK) == 0 && rfcntl(l, F_GETFL) == O_NONBLOCK, "rfcntl");
	refused("raccept with nothing queued", raccept(l, NULL, NULL), EAGAIN);
	p = (struct pollfd){ .fd = l, .events = POLLIN };
	CHECK(rpoll(&p, 1, 10) == 0, "rpoll on an idle listener");
	refused("rsend on a listener", (int)rsend(l, buf, 1, 0), ENOTCONN);

	c = rsocket(AF_INET, SOCK_STREAM, 0);
	CHECK(c >= 0, "rsocket");
	refused("rconnect to a port nobody listens on",
		rconnect(c, (struct sockaddr *)&other, sizeof(other)), ECONNREFUSED);
	CHECK(rclose(c) == 0, "rclose");

	c = rsocket(AF_INET, SOCK_STREAM, 0);
	CHECK(c >= 0 && rfcntl(c, F_SETFL, O_NONBLOCK) == 0, "rsocket");
	refused("non-blocking rconnect", rconnect(c, (struct sockaddr *)&sin, sizeof(sin)),
		EINPROGRESS);
	a = -1;
	for (i = 0; i < 10000 && a < 0; i++) {
		p = (struct pollfd){ .fd = c, .events = POLLOUT };
		rpoll(&p, 1, 1);
		a = raccept(l, NULL, NULL);
	}
	CHECK(a >= 0, "raccept: %s", strerror(errno));
	p = (struct pollfd){ .fd = c, .events = POLLOUT };
	CHECK(rpoll(&p, 1, 5000) == 1 && p.revents == POLLOUT, "rpoll POLLOUT after connect");
	CHECK(opt_get(c, SOL_SOCKET, SO_ERROR) == 0, "SO_ERROR after connect");
	CHECK(rsend(c, "droce", 5, 0) == 5, "rsend");
	p = (struct pollfd){ .fd = a, .events = POLLIN };
	CHECK(rpoll(&p, 1, 5000) == 1 && p.revents == POLLIN, "rpoll POLLIN");
	CHECK(rrecv(a, buf, 2, MSG_PEEK) == 2 && rrecv(a, buf, sizeof(buf), 0) == 5 &&
	      memcmp(buf, "droce", 5) == 0, "rrecv");
	CHECK(rsend(a, "rsock", 5, 0) == 5, "rsend back");
	for (i = 0; i < 5000 && (int)rrecv(c, buf, sizeof(buf), 0) != 5; i++)
		CHECK(errno == EAGAIN, "rrecv back: %s", strerror(errno));
	CHECK(memcmp(buf, "rsock", 5) == 0, "the bytes back");
	refused("rrecv with nothing queued", (int)rrecv(c, buf, sizeof(buf), 0), EAGAIN);
	CHECK(rshutdown(c, SHUT_WR) == 0, "rshutdown");
	p = (struct pollfd){ .fd = a, .events = POLLIN };
	CHECK(rpoll(&p, 1, 5000) == 1 && rrecv(a, buf, sizeof(buf), 0) == 0, "end of stream");
	CHECK(rclose(a) == 0 && rclose(c) == 0 && rclose(l) == 0, "rclose");
	refused("rclose twice", rclose(l), EBADF);
}

static void
sin_same(const char *what, const struct sockaddr_in *got, socklen_t len,
	 const struct sockaddr_in *want)
{
	CHECK(len == sizeof(*want) && got->sin_family == AF_INET &&
	      got->sin_port == want->sin_port && got->sin_addr.s_addr == want->sin_addr.s_addr,
	      "%s: length %u, port %u", what, (unsigned int)len, ntohs(got->sin_port));
}

/* n bytes of one datagram from s, waiting up to 5 s (s non-blocking) */
static ssize_t
dgram_take(int s, void *buf, size_t len, struct sockaddr_in *from, socklen_t *fl)
{
	struct pollfd p = { .fd = s, .events = POLLIN };

	CHECK(rpoll(&p, 1, 5000) == 1 && p.revents == POLLIN, "rpoll POLLIN on a datagram");
	return rrecvfrom(s, buf, len, 0, (struct sockaddr *)from, fl);
}

/* Datagram rsockets in one process (frames looped through droce's port):
 * datagrams both ways with their sources, boundaries kept, a connected
 * rsocket, and the refusals. */
static void
check_dgram_rsockets(void)
{
	struct sockaddr_in sa, sb, nobody, from;
	socklen_t fl = sizeof(from);
	static char big[4096];
	char buf[64];
	int a, b, c;

	sin_of(&sa, ADDR, PORT + 20);
	sin_of(&sb, ADDR, PORT + 21);
	sin_of(&nobody, ADDR, PORT + 22);
	a = rsocket(AF_INET, SOCK_DGRAM, 0);
	b = rsocket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
	CHECK(a >= 0 && b >= 0, "rsocket SOCK_DGRAM: %d %d", a, b);
	refused("rlisten on a datagram rsocket", rlisten(a, 1), EOPNOTSUPP);
	refused("rsend without a destination", (int)rsend(a, "x", 1, 0), EDESTADDRREQ);
	refused("rgetpeername, not connected", rgetpeername(a, (struct sockaddr *)&from, &fl),
		ENOTCONN);
	CHECK(rbind(a, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	      rbind(b, (struct sockaddr *)&sb, sizeof(sb)) == 0, "rbind: %s", strerror(errno));
	CHECK(rfcntl(a, F_SETFL, O_NONBLOCK) == 0 && rfcntl(b, F_SETFL, O_NONBLOCK) == 0,
	      "rfcntl");
	refused("rrecvfrom with nothing queued",
		(int)rrecvfrom(b, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl), EAGAIN);

	CHECK(rsendto(a, "datagram-1", 10, 0, (struct sockaddr *)&sb, sizeof(sb)) == 10,
	      "rsendto: %s", strerror(errno));
	memset(buf, 0, sizeof(buf));
	CHECK(dgram_take(b, buf, sizeof(buf), &from, &fl) == 10 &&
	      memcmp(buf, "datagram-1", 10) == 0, "the datagram's bytes");
	sin_same("rrecvfrom's source", &from, fl, &sa);
	CHECK(rsendto(b, "reply", 5, 0, (struct sockaddr *)&from, fl) == 5, "rsendto back");
	fl = sizeof(from);
	CHECK(dgram_take(a, buf, sizeof(buf), &from, &fl) == 5 && memcmp(buf, "reply", 5) == 0,
	      "the reply's bytes");
	sin_same("the reply's source", &from, fl, &sb);

	/* two datagrams keep their boundaries; a short read drops the rest */
	CHECK(rsendto(a, "12345678", 8, 0, (struct sockaddr *)&sb, sizeof(sb)) == 8 &&
	      rsendto(a, "abc", 3, 0, (struct sockaddr *)&sb, sizeof(sb)) == 3, "two rsendto");
	fl = sizeof(from);
	CHECK(dgram_take(b, buf, 4, &from, &fl) == 4 && memcmp(buf, "1234", 4) == 0,
	      "a short read of the first");
	fl = sizeof(from);
	CHECK(dgram_take(b, buf, sizeof(buf), &from, &fl) == 3 && memcmp(buf, "abc", 3) == 0,
	      "the second whole");

	/* connected: rsend / rrecv, rgetpeername */
	CHECK(rconnect(b, (struct sockaddr *)&sa, sizeof(sa)) == 0, "rconnect: %s",
	      strerror(errno));
	fl = sizeof(from);
	CHECK(rgetpeername(b, (struct sockaddr *)&from, &fl) == 0, "rgetpeername");
	sin_same("rgetpeername", &from, fl, &sa);
	CHECK(rsend(b, "conn", 4, 0) == 4, "rsend connected");
	fl = sizeof(from);
	CHECK(dgram_take(a, buf, sizeof(buf), &from, &fl) == 4 && memcmp(buf, "conn", 4) == 0,
	      "rrecv connected");

	refused("a datagram above the path MTU",
		(int)rsendto(a, big, sizeof(big), 0, (struct sockaddr *)&sb, sizeof(sb)), EMSGSIZE);
	c = rsocket(AF_INET, SOCK_DGRAM, 0);
	CHECK(c >= 0, "rsocket");
	/* as UDP's: the datagram lost, the refusal (SIDR's) the socket's error */
	CHECK(rsendto(c, "x", 1, 0, (struct sockaddr *)&nobody, sizeof(nobody)) == 1,
	      "rsendto a port nobody has: %s", strerror(errno));
	CHECK(opt_get(c, SOL_SOCKET, SO_ERROR) == ECONNREFUSED &&
	      opt_get(c, SOL_SOCKET, SO_ERROR) == 0, "SO_ERROR after a refused resolution");
	CHECK(rclose(c) == 0 && rclose(a) == 0 && rclose(b) == 0, "rclose");
	refused("rclose twice", rclose(a), EBADF);
}

int
main(void)
{
	struct ibv_context *ctx;

	setvbuf(stdout, NULL, _IONBF, 0);
	check_devices(&ctx);
	check_ids(ctx);
	check_addrinfo();
	check_fabric_calls();
	check_rpoll();
	check_rsockets();
	check_dgram_rsockets();
	check_refusals();
	CHECK(strcmp(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED), "RDMA_CM_EVENT_ESTABLISHED") == 0,
	      "rdma_event_str");
	puts("ok");
	return 0;
}
