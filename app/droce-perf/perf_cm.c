/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_cm.c - droce-perf -R: perftest 4.5-0.17's rdma_cm mode on lib/cm.
 *
 * perftest -R needs no TCP at all.  The server binds port -p (RDMA_PS_TCP)
 * and listens; the client resolves the server's address and route and
 * connects.  That first connection is the side channel: an RC QP of its
 * own on which every perftest message (perf_exch.c's sequence, unchanged
 * but for the binary key message and no "done") is one SEND of its bytes;
 * the receiver keeps a receive of 56 bytes (sizeof(struct pingpong_dest))
 * posted and re-posts it after each message.  After the MTU exchange and
 * a barrier of a zeroed key message the client connects a second time to
 * the same port; that connection carries the test QP, whose path MTU,
 * PSNs, addresses, timeouts and read/atomic depths all come from the CM's
 * REQ and REP.  Another zeroed barrier, then the key messages, which
 * carry the rkey and buffer address the test targets.  Both connections
 * ask for responder resources and initiator depth of out_reads for read
 * and atomic tests (else 0), retry count 7, RNR retry 7.
 *
 * The server keeps its one listener for both connections.  A client whose
 * request is rejected (the server is not listening yet) tries again for
 * 10 s, as the TCP client retries its connect.  At the end both sides
 * disconnect both connections and wait for the DISCONNECTED events
 * (perftest's client waits for them).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "perf.h"

#define CM_SLOTS 8			/* receives posted on the channel */
#define CM_RETRY_MS 10000		/* a rejected client retries this long */
#define CM_EVENT_MS 30000		/* longest wait for a CM answer */
#define CM_CLOSE_MS 10000		/* longest wait for the disconnects */
#define CM_RETRY_COUNT 7
#define CM_RNR_RETRY 7

struct perf_cm {
	struct perf_ctx *c;
	struct droce_rdma_event_channel *ch;
	struct droce_rdma_cm_id *listen;	/* server */
	struct droce_rdma_cm_id *chan_id;	/* the side channel */
	struct droce_rdma_cm_id *test_id;	/* the test QP's connection */
	struct droce_cq *scq, *rcq;
	struct droce_mr *mr;
	/* an event that arrived while the channel waited for a message */
	struct droce_rdma_cm_event stash;
	int stashed;
	int disconnected;
	/* a receive completion ready() saw, not yet consumed */
	struct droce_wc wc;
	int have_wc;
	struct {
		uint8_t tx[PERF_CM_MSG_SIZE];
		uint8_t rx[CM_SLOTS][PERF_CM_MSG_SIZE];
	} buf;				/* registered: cm->mr */
};

static uint64_t
ms_since(uint64_t t0)
{
	return (perf_now_ns() - t0) / 1000000u;
}

/* ---- CM events ------------------------------------------------------------ */

/* The next event without waiting: 1 (copied to *ev, acked), 0 none, -1. */
static int
next_event(struct perf_cm *cm, struct droce_rdma_cm_event *ev)
{
	struct droce_rdma_cm_event *e;

	if (cm->stashed) {
		*ev = cm->stash;
		cm->stashed = 0;
		return 1;
	}
	if (droce_rdma_get_cm_event(cm->ch, &e) != 0)
		return errno == EAGAIN ? 0 : -1;
	*ev = *e;
	/* only the ids and the status are used after the ack */
	ev->param.conn.private_data = NULL;
	ev->param.conn.private_data_len = 0;
	droce_rdma_ack_cm_event(e);
	return 1;
}

/*
 * The next event for id (or for the listener id), within ms milliseconds
 * (0: no limit, a server waiting for its client): its type, or -1.  A side
 * channel's DISCONNECTED on the way is remembered.
 */
static int
wait_event(struct perf_cm *cm, struct droce_rdma_cm_id *id, unsigned int ms,
	   struct droce_rdma_cm_event *out)
{
	struct droce_rdma_cm_event ev;
	uint64_t t0 = perf_now_ns();
	int rc;

	for (;;) {
		rc = next_event(cm, &ev);
		if (rc < 0) {
			perror("rdma_get_cm_event");
			return -1;
		}
		if (rc > 0 && ev.event == DROCE_RDMA_CM_EVENT_DISCONNECTED &&
		    ev.id == cm->chan_id && ev.id != id)
			cm->disconnected = 1;
		else if (rc > 0 && (ev.id == id || ev.listen_id == id)) {
			if (out != NULL)
				*out = ev;
			return (int)ev.event;
		}
		if (ms != 0 && ms_since(t0) > ms) {
			fprintf(stderr, "no RDMA CM event in %u ms\n", ms);
			return -1;
		}
		if (ms == 0)
			usleep(1000);	/* waiting for a client: no spin */
	}
}

static int
expect_event(struct perf_cm *cm, struct droce_rdma_cm_id *id,
	     enum droce_rdma_cm_event_type want, unsigned int ms,
	     struct droce_rdma_cm_event *out)
{
	struct droce_rdma_cm_event ev;
	int got = wait_event(cm, id, ms, &ev);

	if (got < 0)
		return -1;
	if (got != (int)want) {
		fprintf(stderr, "RDMA CM: %s (status %d), expected %s\n",
			droce_rdma_event_str(ev.event), ev.status,
			droce_rdma_event_str(want));
		return -1;
	}
	if (out != NULL)
		*out = ev;
	return 0;
}

/* ---- the side channel's messages ------------------------------------------ */

static int
post_rx(struct perf_cm *cm, struct droce_qp *qp, unsigned int slot)
{
	struct droce_sge sge = {
		.addr = (uintptr_t)cm->buf.rx[slot], .length = PERF_CM_MSG_SIZE,
		.lkey = cm->mr->lkey,
	};
	struct droce_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };
	struct droce_recv_wr *bad;

	return droce_post_recv(qp, &wr, &bad);
}

/* One completion of cq: 1, or -1 (failed, or the channel closed). */
static int
poll_one(struct perf_cm *cm, struct droce_cq *cq, struct droce_wc *wc)
{
	struct droce_rdma_cm_event ev;
	unsigned int spins = 0;
	int ne;

	for (;;) {
		ne = droce_poll_cq(cq, 1, wc);
		if (ne < 0)
			return -1;
		if (ne == 1) {
			if (wc->status == DROCE_WC_SUCCESS)
				return 1;
			fprintf(stderr, "side channel (RDMA CM): %s\n",
				droce_wc_status_str(wc->status));
			return -1;
		}
		/* now and then run the CM: keep an event for its waiter */
		if (++spins % 256 == 0 && !cm->stashed &&
		    next_event(cm, &ev) > 0) {
			if (ev.event == DROCE_RDMA_CM_EVENT_DISCONNECTED &&
			    ev.id == cm->chan_id)
				cm->disconnected = 1;
			else {
				cm->stash = ev;
				cm->stashed = 1;
			}
		}
		if (cm->disconnected) {
			fprintf(stderr, "side channel (RDMA CM): the peer "
				"disconnected\n");
			return -1;
		}
	}
}

/* One SEND of k <= 56 bytes. */
static int
send_one(struct perf_cm *cm, const uint8_t *p, size_t k)
{
	struct droce_sge sge = {
		.addr = (uintptr_t)cm->buf.tx, .length = (uint32_t)k,
		.lkey = cm->mr->lkey,
	};
	struct droce_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = DROCE_WR_SEND,
		.send_flags = DROCE_SEND_SIGNALED,
	};
	struct droce_send_wr *bad;
	struct droce_wc wc;

	memcpy(cm->buf.tx, p, k);
	if (droce_post_send(cm->chan_id->qp, &wr, &bad) != 0 ||
	    poll_one(cm, cm->scq, &wc) < 0)
		return -ECONNRESET;
	return 0;
}

/* One received message into k <= 56 bytes, its receive posted again. */
static int
recv_one(struct perf_cm *cm, uint8_t *p, size_t k)
{
	struct droce_wc wc;
	size_t got;

	if (cm->have_wc) {
		wc = cm->wc;
		cm->have_wc = 0;
	} else if (poll_one(cm, cm->rcq, &wc) < 0) {
		return -ECONNRESET;
	}
	if (wc.wr_id >= CM_SLOTS)
		return -EPROTO;
	/* a shorter message than asked for reads as zeros after its end */
	got = wc.byte_len < k ? wc.byte_len : k;
	memset(p, 0, k);
	memcpy(p, cm->buf.rx[wc.wr_id], got);
	return post_rx(cm, cm->chan_id->qp, (unsigned int)wc.wr_id) != 0 ?
		-ECONNRESET : 0;
}

/*
 * n bytes out (one SEND each, as perftest) or in, as messages of at most
 * 56 bytes: more (droce-perf's own messages) take several.
 */
static int
transfer(struct perf_cm *cm, const uint8_t *out, uint8_t *in, size_t n)
{
	while (n > 0) {
		size_t k = n < PERF_CM_MSG_SIZE ? n : PERF_CM_MSG_SIZE;
		int rc = out != NULL ? send_one(cm, out, k) :
			recv_one(cm, in, k);

		if (rc != 0)
			return rc;
		if (out != NULL)
			out += k;
		else
			in += k;
		n -= k;
	}
	return 0;
}

static int
cm_write(struct perf_chan *ch, const void *buf, size_t n)
{
	return transfer(ch->cm, buf, NULL, n);
}

static int
cm_read(struct perf_chan *ch, void *buf, size_t n)
{
	return transfer(ch->cm, NULL, buf, n);
}

static int
cm_ready(struct perf_chan *ch)
{
	struct perf_cm *cm = ch->cm;

	if (!cm->have_wc && droce_poll_cq(cm->rcq, 1, &cm->wc) == 1)
		cm->have_wc = 1;
	return cm->have_wc;
}

/* ---- connections -------------------------------------------------------- */

static void
conn_param(const struct perf_opts *o, int test_qp,
	   struct droce_rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	/* perftest: out_reads both ways for read and atomic tests; the
	 * side channel only sends */
	if (test_qp && (o->verb == PERF_READ || o->verb == PERF_ATOMIC)) {
		p->responder_resources = DROCE_MAX_RD_ATOMIC;
		p->initiator_depth = DROCE_MAX_RD_ATOMIC;
	}
	p->retry_count = CM_RETRY_COUNT;
	p->rnr_retry_count = CM_RNR_RETRY;
}

/* The side channel's QP on id, its receives posted. */
static int
chan_qp(struct perf_cm *cm, struct droce_rdma_cm_id *id)
{
	struct droce_qp_init_attr ia = {
		.send_cq = cm->scq, .recv_cq = cm->rcq, .qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = 2, .max_recv_wr = CM_SLOTS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	unsigned int i;

	if (droce_rdma_create_qp(id, cm->c->pd, &ia) != 0) {
		perror("rdma_create_qp (side channel)");
		return -1;
	}
	for (i = 0; i < CM_SLOTS; i++)
		if (post_rx(cm, id->qp, i) != 0) {
			fprintf(stderr, "Couldn't post the side channel's "
				"receives\n");
			return -1;
		}
	return 0;
}

/* The test QP on id, as perf_ctx_alloc would create it. */
static int
test_qp(struct perf_cm *cm, struct droce_rdma_cm_id *id)
{
	struct perf_ctx *c = cm->c;
	struct droce_qp_init_attr ia;

	perf_ctx_qp_attr(c, &ia);
	if (droce_rdma_create_qp(id, c->pd, &ia) != 0) {
		perror("rdma_create_qp");
		return -1;
	}
	c->max_inline = ia.cap.max_inline_data;
	return 0;
}

/* The connection is up: the id is the side channel's or the test's. */
static void
adopt_id(struct perf_cm *cm, int is_test, struct droce_rdma_cm_id *id)
{
	if (!is_test) {
		cm->chan_id = id;
		return;
	}
	cm->test_id = id;
	cm->c->qp = id->qp;
	perf_ctx_set_dest(cm->c);
}

static void
drop_id(struct droce_rdma_cm_id *id)
{
	droce_rdma_destroy_qp(id);
	droce_rdma_destroy_id(id);
}

static int
server_addr(const struct perf_opts *o, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	char service[16];
	int n;

	snprintf(service, sizeof(service), "%u", o->port);
	n = getaddrinfo(o->servername, service, &hints, &res);
	if (n != 0) {
		fprintf(stderr, "%s for %s:%u\n", gai_strerror(n),
			o->servername, o->port);
		return -1;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

/* One connection attempt on a fresh id: its event (ESTABLISHED when
 * connected), or -1; the id is *idp, for drop_id. */
static int
client_try(struct perf_cm *cm, int is_test, struct sockaddr *dst,
	   int (*make_qp)(struct perf_cm *, struct droce_rdma_cm_id *),
	   struct droce_rdma_cm_id **idp, struct droce_rdma_cm_event *ev)
{
	struct droce_rdma_conn_param p;
	struct droce_rdma_cm_id *id;

	*idp = NULL;
	if (droce_rdma_create_id(cm->ch, &id, cm, DROCE_RDMA_PS_TCP) != 0) {
		perror("rdma_create_id");
		return -1;
	}
	*idp = id;
	if (droce_rdma_resolve_addr(id, NULL, dst, 2000) != 0 ||
	    expect_event(cm, id, DROCE_RDMA_CM_EVENT_ADDR_RESOLVED,
			 CM_EVENT_MS, NULL) != 0 ||
	    droce_rdma_resolve_route(id, 2000) != 0 ||
	    expect_event(cm, id, DROCE_RDMA_CM_EVENT_ROUTE_RESOLVED,
			 CM_EVENT_MS, NULL) != 0 ||
	    make_qp(cm, id) != 0)
		return -1;
	conn_param(cm->c->o, is_test, &p);
	if (droce_rdma_connect(id, &p) != 0) {
		perror("rdma_connect");
		return -1;
	}
	return wait_event(cm, id, CM_EVENT_MS, ev);
}

/*
 * Client: a connection to the server's port (make_qp makes its QP once
 * the route is resolved).  Rejected, as when nobody listens yet: again,
 * on a new id, for CM_RETRY_MS.  0 or -1.
 */
static int
client_connect(struct perf_cm *cm, int is_test,
	       int (*make_qp)(struct perf_cm *, struct droce_rdma_cm_id *))
{
	const struct perf_opts *o = cm->c->o;
	struct droce_rdma_cm_event ev;
	struct droce_rdma_cm_id *id;
	struct sockaddr_storage dst;
	uint64_t t0 = perf_now_ns();
	int got;

	if (server_addr(o, &dst) != 0)
		return -1;
	for (;;) {
		got = client_try(cm, is_test, (struct sockaddr *)&dst, make_qp,
				 &id, &ev);
		if (got == DROCE_RDMA_CM_EVENT_ESTABLISHED) {
			adopt_id(cm, is_test, id);
			return 0;
		}
		if (id != NULL)
			drop_id(id);
		if (got != DROCE_RDMA_CM_EVENT_REJECTED ||
		    ms_since(t0) > CM_RETRY_MS)
			break;
		usleep(100000);
	}
	fprintf(stderr, "Couldn't connect to %s:%u (RDMA CM: %s, status %d)\n",
		o->servername, o->port, got < 0 ? "failed" :
		droce_rdma_event_str(ev.event), got < 0 ? 0 : ev.status);
	return -1;
}

/* Server: the next connection request on the listener, accepted. */
static int
server_accept(struct perf_cm *cm, int is_test, unsigned int ms,
	      int (*make_qp)(struct perf_cm *, struct droce_rdma_cm_id *))
{
	struct droce_rdma_conn_param p;
	struct droce_rdma_cm_event ev;

	if (expect_event(cm, cm->listen, DROCE_RDMA_CM_EVENT_CONNECT_REQUEST,
			 ms, &ev) != 0)
		return -1;
	conn_param(cm->c->o, is_test, &p);
	if (make_qp(cm, ev.id) != 0 || droce_rdma_accept(ev.id, &p) != 0 ||
	    expect_event(cm, ev.id, DROCE_RDMA_CM_EVENT_ESTABLISHED,
			 CM_EVENT_MS, NULL) != 0) {
		fprintf(stderr, "Couldn't accept the RDMA CM connection\n");
		drop_id(ev.id);
		return -1;
	}
	adopt_id(cm, is_test, ev.id);
	return 0;
}

static int
server_listen(struct perf_cm *cm)
{
	struct sockaddr_in any = { .sin_family = AF_INET,
				   .sin_port = htons((uint16_t)cm->c->o->port) };

	if (droce_rdma_create_id(cm->ch, &cm->listen, cm, DROCE_RDMA_PS_TCP) ||
	    droce_rdma_bind_addr(cm->listen, (struct sockaddr *)&any) != 0 ||
	    droce_rdma_listen(cm->listen, 2) != 0) {
		fprintf(stderr, "Couldn't listen on RDMA CM port %u: %s\n",
			cm->c->o->port, strerror(errno));
		return -1;
	}
	return 0;
}

static int
chan_resources(struct perf_cm *cm)
{
	struct perf_ctx *c = cm->c;

	c->pd = droce_alloc_pd(c->context);
	if (c->pd == NULL) {
		fprintf(stderr, "Couldn't allocate PD: %s\n", strerror(errno));
		return -1;
	}
	cm->mr = droce_reg_mr(c->pd, &cm->buf, sizeof(cm->buf),
			      DROCE_ACCESS_LOCAL_WRITE);
	cm->scq = droce_create_cq(c->context, 4, NULL, NULL, 0);
	cm->rcq = droce_create_cq(c->context, CM_SLOTS + 1, NULL, NULL, 0);
	if (cm->mr == NULL || cm->scq == NULL || cm->rcq == NULL) {
		fprintf(stderr, "Couldn't set up the side channel: %s\n",
			strerror(errno));
		return -1;
	}
	cm->ch = droce_rdma_create_event_channel();
	if (cm->ch == NULL) {
		perror("rdma_create_event_channel");
		return -1;
	}
	fcntl(cm->ch->fd, F_SETFL, fcntl(cm->ch->fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

int
perf_cm_open(struct perf_ctx *c)
{
	struct perf_cm *cm;

	cm = calloc(1, sizeof(*cm));
	if (cm == NULL) {
		fprintf(stderr, "Out of memory\n");
		return 1;
	}
	if (droce_rdma_cm_attach(c->context) != 0) {
		perror("droce_rdma_cm_attach");
		free(cm);
		return 1;
	}
	cm->c = c;
	c->cm = cm;
	if (chan_resources(cm) != 0)
		return 1;
	/* a server listens before its link is up (memif: until the client
	 * comes), a client sends at once */
	return c->client ? perf_ctx_wait_port(c) != 0 : server_listen(cm) != 0;
}

int
perf_cm_connect_chan(struct perf_ctx *c)
{
	static const struct perf_chan_ops ops = {
		.write = cm_write, .read = cm_read, .ready = cm_ready,
	};
	struct perf_cm *cm = c->cm;

	if (c->client ? client_connect(cm, 0, chan_qp) != 0 :
	    server_accept(cm, 0, 0, chan_qp) != 0)
		return 1;
	c->chan.ops = &ops;
	c->chan.fd = -1;
	c->chan.cm = cm;
	return 0;
}

int
perf_cm_connect_test(struct perf_ctx *c)
{
	struct perf_cm *cm = c->cm;
	int rc = c->client ? client_connect(cm, 1, test_qp) :
		server_accept(cm, 1, CM_EVENT_MS, test_qp);

	if (rc != 0)
		fprintf(stderr, "Couldn't connect the test QP (RDMA CM)\n");
	return rc != 0;
}

/*
 * Both connections' disconnect, as perftest's teardown expects: DREQ (or
 * the peer's first), DREP, DISCONNECTED for each, at most CM_CLOSE_MS; a
 * peer left waiting for its DREP would resend its DREQ for minutes.
 */
static void
disconnect_all(struct perf_cm *cm)
{
	struct droce_rdma_cm_id *ids[2] = { cm->test_id, cm->chan_id };
	int done[2] = { ids[0] == NULL, ids[1] == NULL || cm->disconnected };
	struct droce_rdma_cm_event ev;
	uint64_t t0 = perf_now_ns();
	unsigned int i;

	/* fails when the peer's DREQ came first (its DISCONNECTED waits) */
	for (i = 0; i < 2; i++)
		if (!done[i])
			(void)droce_rdma_disconnect(ids[i]);
	while (!(done[0] && done[1]) && ms_since(t0) < CM_CLOSE_MS) {
		if (next_event(cm, &ev) <= 0 ||
		    ev.event != DROCE_RDMA_CM_EVENT_DISCONNECTED)
			continue;
		for (i = 0; i < 2; i++)
			done[i] |= ev.id == ids[i];
	}
	if (!(done[0] && done[1]))
		fprintf(stderr, "droce-perf: RDMA CM: the peer did not complete "
			"the disconnect in %d ms\n", CM_CLOSE_MS);
}

void
perf_cm_close(struct perf_ctx *c)
{
	struct perf_cm *cm = c->cm;
	struct droce_rdma_cm_id *ids[3];
	unsigned int i;

	if (cm == NULL)
		return;
	disconnect_all(cm);
	ids[0] = cm->test_id;
	ids[1] = cm->chan_id;
	ids[2] = cm->listen;
	if (cm->test_id != NULL)
		c->qp = NULL;		/* the id's QP */
	for (i = 0; i < 3; i++)
		if (ids[i] != NULL)
			drop_id(ids[i]);
	if (cm->scq != NULL)
		droce_destroy_cq(cm->scq);
	if (cm->rcq != NULL)
		droce_destroy_cq(cm->rcq);
	if (cm->mr != NULL)
		droce_dereg_mr(cm->mr);
	if (cm->ch != NULL)
		droce_rdma_destroy_event_channel(cm->ch);
	droce_rdma_cm_detach(c->context);
	free(cm);
	c->cm = NULL;
}
