/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_app - a program of droce.h that connects with droce_rdma_* on droced
 * (cm_test.py): droced owns QP1 and relays the CM (app/droced/README.md,
 * "RDMA CM").
 *
 *   cm_app [EAL --] [droce options] server IP PORT
 *       listens on IP:PORT ("listening"), accepts one connection (its
 *       buffer's address and rkey as private data), then for each SEND
 *       (imm = the round) checks the round's 4 KiB WRITE and the SEND's 64
 *       bytes ("round N ok"), until DISCONNECTED ("disconnected").
 *   cm_app ... client IP PORT
 *       connects ("established"), round 1: a WRITE and a SEND, both
 *       SUCCESS ("round 1 sent"); a line on stdin, round 2; then
 *       disconnects: "disconnected" when its DISCONNECTED came.
 *   cm_app ... forge IP PORT
 *       the hostile one: listens on PORT (taken by another application:
 *       "listen: EADDRINUSE"), then sends through the relay op itself: a
 *       DREQ, DREP, REJ, RTU and SIDR_REQ under each of the 16 comm IDs
 *       below its own and a SIDR_REP answering a SIDR_REQ it never got
 *       under each, a REJ of a REQ it never got, a MAD of another class,
 *       of another method, a LAP (not relayed), an unknown op, freeing
 *       another's comm ID: each refused ("forged N refused"); a DREQ under its own comm ID
 *       accepted ("own accepted"), and to 80 other GIDs of the subnet
 *       ("own to 80 peers: N sent").
 * Exit 0 when all it checked held, 1 when a check failed, 2 on an error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "droce.h"

#define BUF 4096
#define MSG 64

struct app {
	struct droce_rdma_event_channel *ch;
	struct droce_rdma_cm_id *id;
	struct droce_pd *pd;
	struct droce_cq *cq;
	struct droce_mr *mr;
	uint8_t *buf;
};

static void
die(const char *what, int err)
{
	printf("cm_app: %s: %s\n", what, strerror(err));
	fflush(stdout);
	exit(2);
}

static void
check(bool ok, const char *what)
{
	if (!ok) {
		printf("cm_app: check failed: %s\n", what);
		fflush(stdout);
		exit(1);
	}
}

static struct droce_rdma_cm_event *
wait_event(struct app *a, enum droce_rdma_cm_event_type want)
{
	struct droce_rdma_cm_event *ev;

	if (droce_rdma_get_cm_event(a->ch, &ev) != 0)
		die("get_cm_event", errno);
	if (ev->event != want) {
		printf("cm_app: %s (status %d), expected %s\n", droce_rdma_event_str(ev->event),
		       ev->status, droce_rdma_event_str(want));
		exit(1);
	}
	return ev;
}

static void
addr_of(struct sockaddr_in *sa, const char *ip, const char *port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(port));
	if (inet_pton(AF_INET, ip, &sa->sin_addr) != 1)
		die("address", EINVAL);
}

static void
resources(struct app *a, struct droce_rdma_cm_id *id)
{
	struct droce_qp_init_attr init = {
		.qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	a->pd = droce_alloc_pd(id->verbs);
	a->cq = droce_create_cq(id->verbs, 32, NULL, NULL, 0);
	if (posix_memalign((void **)&a->buf, 4096, BUF + MSG) != 0)
		die("memalign", ENOMEM);
	memset(a->buf, 0, BUF + MSG);
	if (a->pd == NULL || a->cq == NULL)
		die("pd/cq", errno);
	a->mr = droce_reg_mr(a->pd, a->buf, BUF + MSG,
			     DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE);
	if (a->mr == NULL)
		die("reg_mr", errno);
	init.send_cq = a->cq;
	init.recv_cq = a->cq;
	if (droce_rdma_create_qp(id, a->pd, &init) != 0)
		die("create_qp", errno);
}

static void
post_recv(struct app *a)
{
	struct droce_sge sge = {
		.addr = (uintptr_t)(a->buf + BUF), .length = MSG, .lkey = a->mr->lkey,
	};
	struct droce_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (droce_post_recv(a->id->qp, &wr, &bad) != 0)
		die("post_recv", errno);
}

static struct droce_wc
poll_one(struct app *a)
{
	struct droce_wc wc;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = droce_poll_cq(a->cq, 1, &wc);

		if (n < 0)
			die("poll_cq", EIO);
		if (n == 1)
			return wc;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10)
			die("no completion in 10 s", ETIMEDOUT);
	}
}

static uint8_t
pattern(unsigned int round, size_t i)
{
	return (uint8_t)(round * 31 + i * 7);
}

/* ---- server ---- */

static void
serve(struct app *a, const char *ip, const char *port)
{
	struct droce_rdma_cm_id *lis;
	struct droce_rdma_cm_event *ev;
	struct sockaddr_in sa;
	struct { uint64_t addr; uint32_t rkey; } pd_out;
	struct droce_rdma_conn_param p = { .private_data = &pd_out,
					   .private_data_len = sizeof(pd_out) };
	unsigned int rounds = 0;

	addr_of(&sa, ip, port);
	if (droce_rdma_create_id(a->ch, &lis, NULL, DROCE_RDMA_PS_TCP) != 0 ||
	    droce_rdma_bind_addr(lis, (struct sockaddr *)&sa) != 0 ||
	    droce_rdma_listen(lis, 4) != 0)
		die("listen", errno);
	printf("listening\n");
	fflush(stdout);
	ev = wait_event(a, DROCE_RDMA_CM_EVENT_CONNECT_REQUEST);
	a->id = ev->id;
	droce_rdma_ack_cm_event(ev);
	resources(a, a->id);
	post_recv(a);
	pd_out.addr = (uintptr_t)a->buf;
	pd_out.rkey = a->mr->rkey;
	if (droce_rdma_accept(a->id, &p) != 0)
		die("accept", errno);
	droce_rdma_ack_cm_event(wait_event(a, DROCE_RDMA_CM_EVENT_ESTABLISHED));
	printf("established\n");
	fflush(stdout);
	/*
	 * SENDs until the DISCONNECTED: the channel polled between.  The
	 * DREQ may overtake the last SEND's completion on its way to this
	 * CQ (a queue region's completions pass droced's poller): after the
	 * event the CQ is drained up to the flush of the receive always
	 * posted, which comes after every completion before it.
	 */
	fcntl(a->ch->fd, F_SETFL, O_NONBLOCK);
	for (bool disconnected = false;;) {
		struct droce_wc wc;

		if (!disconnected && droce_rdma_get_cm_event(a->ch, &ev) == 0) {
			printf("event %s after %u rounds\n", droce_rdma_event_str(ev->event),
			       rounds);
			check(ev->event == DROCE_RDMA_CM_EVENT_DISCONNECTED, "DISCONNECTED");
			droce_rdma_ack_cm_event(ev);
			disconnected = true;
		}
		if (droce_poll_cq(a->cq, 1, &wc) != 1)
			continue;
		if (wc.status == DROCE_WC_WR_FLUSH_ERR && disconnected)
			break;
		check(wc.status == DROCE_WC_SUCCESS && wc.opcode == DROCE_WC_RECV &&
		      wc.byte_len == MSG && (wc.wc_flags & DROCE_WC_WITH_IMM) &&
		      ntohl(wc.imm_data) == rounds + 1, "the SEND's completion");
		rounds++;
		for (size_t i = 0; i < BUF; i++)
			if (a->buf[i] != pattern(rounds, i)) {
				printf("byte %zu: %u, expected %u\n", i, a->buf[i],
				       pattern(rounds, i));
				check(false, "the WRITE's bytes");
			}
		for (size_t i = 0; i < MSG; i++)
			check(a->buf[BUF + i] == pattern(rounds + 100, i), "the SEND's bytes");
		post_recv(a);	/* before the client hears of this round */
		printf("round %u ok\n", rounds);
		fflush(stdout);
	}
	check(rounds == 2, "two rounds");
	printf("disconnected\n");
	fflush(stdout);
	droce_rdma_destroy_qp(a->id);
	droce_rdma_destroy_id(a->id);
	droce_rdma_destroy_id(lis);
}

/* ---- client ---- */

static void
round_trip(struct app *a, unsigned int round, uint64_t raddr, uint32_t rkey)
{
	uint8_t *src = a->buf;
	struct droce_sge w = { .addr = (uintptr_t)src, .length = BUF, .lkey = a->mr->lkey };
	struct droce_sge s = { .addr = (uintptr_t)(src + BUF), .length = MSG,
			       .lkey = a->mr->lkey };
	struct droce_send_wr sw = {
		.wr_id = 2, .sg_list = &s, .num_sge = 1, .opcode = DROCE_WR_SEND_WITH_IMM,
		.send_flags = DROCE_SEND_SIGNALED, .imm_data = htonl(round),
	};
	struct droce_send_wr ww = {
		.wr_id = 1, .sg_list = &w, .num_sge = 1, .opcode = DROCE_WR_RDMA_WRITE,
		.send_flags = DROCE_SEND_SIGNALED, .next = &sw,
	}, *bad;

	ww.wr.rdma.remote_addr = raddr;
	ww.wr.rdma.rkey = rkey;
	for (size_t i = 0; i < BUF; i++)
		src[i] = pattern(round, i);
	for (size_t i = 0; i < MSG; i++)
		src[BUF + i] = pattern(round + 100, i);
	if (droce_post_send(a->id->qp, &ww, &bad) != 0)
		die("post_send", errno);
	for (int k = 1; k <= 2; k++) {
		struct droce_wc wc = poll_one(a);

		if (wc.status != DROCE_WC_SUCCESS || wc.wr_id != (uint64_t)k)
			printf("completion %d: wr_id %" PRIu64 " status %d\n", k, wc.wr_id,
			       (int)wc.status);
		check(wc.status == DROCE_WC_SUCCESS && wc.wr_id == (uint64_t)k,
		      "WRITE and SEND completions");
	}
	printf("round %u sent\n", round);
	fflush(stdout);
}

static void
connect_to(struct app *a, const char *ip, const char *port)
{
	struct sockaddr_in sa;
	struct droce_rdma_cm_event *ev;
	struct droce_rdma_conn_param p = { .retry_count = 7, .rnr_retry_count = 7 };
	struct { uint64_t addr; uint32_t rkey; } peer;
	char line[16];

	addr_of(&sa, ip, port);
	if (droce_rdma_create_id(a->ch, &a->id, NULL, DROCE_RDMA_PS_TCP) != 0 ||
	    droce_rdma_resolve_addr(a->id, NULL, (struct sockaddr *)&sa, 1000) != 0)
		die("resolve_addr", errno);
	droce_rdma_ack_cm_event(wait_event(a, DROCE_RDMA_CM_EVENT_ADDR_RESOLVED));
	if (droce_rdma_resolve_route(a->id, 1000) != 0)
		die("resolve_route", errno);
	droce_rdma_ack_cm_event(wait_event(a, DROCE_RDMA_CM_EVENT_ROUTE_RESOLVED));
	resources(a, a->id);
	if (droce_rdma_connect(a->id, &p) != 0)
		die("connect", errno);
	ev = wait_event(a, DROCE_RDMA_CM_EVENT_ESTABLISHED);
	check(ev->param.conn.private_data != NULL &&
	      ev->param.conn.private_data_len >= sizeof(peer), "the REP's private data");
	memcpy(&peer, ev->param.conn.private_data, sizeof(peer));
	droce_rdma_ack_cm_event(ev);
	printf("established\n");
	fflush(stdout);
	round_trip(a, 1, peer.addr, peer.rkey);
	if (fgets(line, sizeof(line), stdin) == NULL)
		die("stdin", EIO);
	round_trip(a, 2, peer.addr, peer.rkey);
	if (droce_rdma_disconnect(a->id) != 0)
		die("disconnect", errno);
	droce_rdma_ack_cm_event(wait_event(a, DROCE_RDMA_CM_EVENT_DISCONNECTED));
	printf("disconnected\n");
	fflush(stdout);
	droce_rdma_destroy_qp(a->id);
	droce_rdma_destroy_id(a->id);
}

/* ---- the hostile one ---- */

static int
relay(struct droce_context *ctx, struct droce_cm_relay *r)
{
	return ctx->ops->cm_relay(ctx, r);
}

/* a CM MAD (IBTA 13.4.3, 12.6): attr, the Local and Remote Comm IDs */
static void
mad(struct droce_cm_relay *r, uint16_t attr, uint32_t local, uint32_t remote)
{
	memset(r->mad, 0, sizeof(r->mad));
	r->mad[0] = 1;
	r->mad[1] = 0x07;
	r->mad[2] = 2;
	r->mad[3] = 0x03;
	r->mad[16] = (uint8_t)(attr >> 8);
	r->mad[17] = (uint8_t)attr;
	for (int i = 0; i < 4; i++) {
		r->mad[24 + i] = (uint8_t)(local >> (24 - 8 * i));
		r->mad[28 + i] = (uint8_t)(remote >> (24 - 8 * i));
	}
}

static void
forge(struct app *a, const char *ip, const char *port)
{
	struct droce_rdma_cm_id *lis;
	struct sockaddr_in sa;
	struct droce_context *ctx;
	struct droce_cm_relay r = { .op = DROCE_CM_RELAY_COMM_ID };
	union droce_gid gid;
	unsigned int refused = 0, tried = 0;
	int rc;

	addr_of(&sa, ip, port);
	if (droce_rdma_create_id(a->ch, &lis, NULL, DROCE_RDMA_PS_TCP) != 0 ||
	    droce_rdma_bind_addr(lis, (struct sockaddr *)&sa) != 0)
		die("bind", errno);
	rc = droce_rdma_listen(lis, 4);
	printf("listen: %s\n", rc == 0 ? "0" : errno == EADDRINUSE ? "EADDRINUSE" :
	       strerror(errno));
	ctx = lis->verbs;
	if (droce_query_gid(ctx, 1, 0, &gid) != 0)
		die("query_gid", errno);
	rc = relay(ctx, &r);
	if (rc != 0)
		die("comm ID", -rc);
	/* the IDs droced gave before this one: the other applications' */
	for (uint32_t d = 1; d <= 16; d++) {
		/* a SIDR_REQ's Request ID sits where a Local Comm ID does, and a
		 * SIDR_REP's is its requester's (IBTA 12.11) */
		uint16_t attrs[] = { 0x0015 /* DREQ */, 0x0016 /* DREP */, 0x0012 /* REJ */,
				     0x0014 /* RTU */, 0x0017 /* SIDR_REQ */,
				     0x0018 /* SIDR_REP */ };

		for (unsigned int k = 0; k < 6; k++) {
			struct droce_cm_relay f = { .op = DROCE_CM_RELAY_SEND };

			memcpy(f.dgid, gid.raw, 16);
			mad(&f, attrs[k], r.comm_id - d, r.comm_id - d - 1);
			tried++;
			refused += relay(ctx, &f) == -EPERM;
		}
	}
	{	/* a REJ of a REQ it was never given (no comm ID of its own) */
		struct droce_cm_relay f = { .op = DROCE_CM_RELAY_SEND };

		memcpy(f.dgid, gid.raw, 16);
		mad(&f, 0x0012, 0, r.comm_id - 1);
		tried++;
		refused += relay(ctx, &f) == -EPERM;
		/* another class, and a method other than Send: not CM's */
		mad(&f, 0x0015, r.comm_id, r.comm_id - 1);
		f.mad[1] = 0x01;
		tried++;
		refused += relay(ctx, &f) == -EINVAL;
		mad(&f, 0x0015, r.comm_id, r.comm_id - 1);
		f.mad[3] = 0x01;
		tried++;
		refused += relay(ctx, &f) == -EINVAL;
		/* a LAP under its own comm ID: no alternate paths relayed */
		mad(&f, 0x0019, r.comm_id, r.comm_id - 1);
		tried++;
		refused += relay(ctx, &f) == -EINVAL;
		f.op = 99;
		tried++;
		refused += relay(ctx, &f) == -EINVAL;
		/* freeing another's comm ID */
		f.op = DROCE_CM_RELAY_COMM_ID_FREE;
		f.comm_id = r.comm_id - 1;
		tried++;
		refused += relay(ctx, &f) == -ENOENT;
	}
	printf("forged %u of %u refused\n", refused, tried);
	{	/* its own comm ID: a DREQ to a comm ID nobody has, dropped there */
		struct droce_cm_relay f = { .op = DROCE_CM_RELAY_SEND };

		memcpy(f.dgid, gid.raw, 16);
		mad(&f, 0x0015, r.comm_id, 0x7fffffff);
		printf("own %s\n", relay(ctx, &f) == 0 ? "accepted" : "refused");
	}
	{	/* to 80 GIDs (198.18.20.100-179, nobody's): more peers than
		 * droced's GSI QP keeps address handles for (64) */
		unsigned int sent = 0;

		for (unsigned int k = 0; k < 80; k++) {
			struct droce_cm_relay f = { .op = DROCE_CM_RELAY_SEND };

			memcpy(f.dgid, gid.raw, 16);
			f.dgid[15] = (uint8_t)(100 + k);
			mad(&f, 0x0015, r.comm_id, 0x7fffffff);
			sent += relay(ctx, &f) == 0;
		}
		printf("own to 80 peers: %u sent\n", sent);
	}
	fflush(stdout);
	droce_rdma_destroy_id(lis);
	check(refused == tried, "every forgery refused");
}

static struct droce_context *
open_attached(void)
{
	int n = 0;
	struct droce_device **list = droce_get_device_list(&n);
	struct droce_context *ctx;

	if (list == NULL || n < 1)
		die("device list", list == NULL ? errno : ENODEV);
	ctx = droce_open_device(list[0]);
	droce_free_device_list(list);
	if (ctx == NULL)
		die("open device", errno);
	if (droce_rdma_cm_attach(ctx) != 0)
		die("cm attach", errno);
	return ctx;
}

int
main(int argc, char **argv)
{
	struct app a = { 0 };
	struct droce_context *ctx;
	int ret = droce_init(argc, argv);

	if (ret < 0)
		die("droce_init", errno);
	argc -= ret;
	argv += ret;
	if (argc != 4)
		die("usage: cm_app [EAL --] [droce options] server|client|forge IP PORT", EINVAL);
	ctx = open_attached();
	a.ch = droce_rdma_create_event_channel();
	if (a.ch == NULL)
		die("event channel", errno);
	if (strcmp(argv[1], "server") == 0)
		serve(&a, argv[2], argv[3]);
	else if (strcmp(argv[1], "client") == 0)
		connect_to(&a, argv[2], argv[3]);
	else
		forge(&a, argv[2], argv[3]);
	if (a.mr != NULL)
		droce_dereg_mr(a.mr);
	if (a.cq != NULL)
		droce_destroy_cq(a.cq);
	if (a.pd != NULL)
		droce_dealloc_pd(a.pd);
	free(a.buf);
	droce_rdma_destroy_event_channel(a.ch);
	droce_rdma_cm_detach(ctx);
	droce_close_device(ctx);
	printf("cm_app: ok\n");
	fflush(stdout);
	return 0;
}
