/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-rping: librdmacm's rping on droce, so either side may be the real
 * one.  The same options (-s/-c, -a, -I, -p, -S, -C, -v, -V, -d), output and
 * exchange: per ping the client SENDs its start buffer's address, rkey and
 * length (struct rping_rdma_info, big-endian), the server READs it and
 * SENDs "go ahead", the client SENDs its RDMA buffer's, the server WRITEs
 * what it read there and SENDs "done"; -V compares them.
 *
 *   droce-rping [EAL options] -- [droce options] -- -s|-c -a ADDR [...]
 *
 * One thread (droce's run-to-completion): the CM's events are taken
 * without blocking between completions.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "droce.h"
#include "app_dev.h"

#define RPING_MSG_FMT "rdma-ping-%d: "
#define RPING_MIN_BUFSIZE 26	/* the format with INT_MAX's digits */
#define RPING_BUFSIZE (64 * 1024)
#define RPING_SQ_DEPTH 16
#define RPING_DEFAULT_PORT 7174

struct rping_rdma_info {
	uint64_t buf;
	uint32_t rkey;
	uint32_t size;
};

struct rping_opts {
	bool server;
	bool client;
	struct sockaddr_storage addr;
	struct sockaddr_storage src;
	bool have_src;
	uint16_t port;
	int size;
	int count;
	bool verbose;
	bool validate;
	bool debug;
};

struct rping {
	const struct rping_opts *o;
	struct droce_context *ctx;
	struct droce_rdma_event_channel *ch;
	struct droce_rdma_cm_id *listen_id;
	struct droce_rdma_cm_id *id;	/* the connection */
	struct droce_pd *pd;
	struct droce_cq *cq;
	struct rping_rdma_info recv_buf, send_buf;
	struct droce_mr *recv_mr, *send_mr, *rdma_mr, *start_mr;
	char *rdma_buf, *start_buf;
	bool disconnected;
};

#define DEBUG_LOG(r, ...) do { if ((r)->o->debug) printf(__VA_ARGS__); } while (0)

/* ---- the CM ---------------------------------------------------------------- */

/* The next CM event, which must be `want`: 0, or -1 (it says why). */
static int
wait_event(struct rping *r, enum droce_rdma_cm_event_type want,
	   struct droce_rdma_cm_event *copy)
{
	struct droce_rdma_cm_event *ev;

	while (droce_rdma_get_cm_event(r->ch, &ev) != 0)
		if (errno != EAGAIN) {
			perror("rdma_get_cm_event");
			return -1;
		}
	DEBUG_LOG(r, "cma_event type %s cma_id %p\n", droce_rdma_event_str(ev->event),
		  (void *)ev->id);
	if (copy != NULL)
		*copy = *ev;
	if (ev->event != want) {
		fprintf(stderr, "cma event %s, error %d\n", droce_rdma_event_str(ev->event),
			ev->status);
		droce_rdma_ack_cm_event(ev);
		return -1;
	}
	droce_rdma_ack_cm_event(ev);
	return 0;
}

/* An event while data moves: DISCONNECTED ends the run. */
static void
poll_event(struct rping *r)
{
	struct droce_rdma_cm_event *ev;

	if (droce_rdma_get_cm_event(r->ch, &ev) != 0)
		return;
	DEBUG_LOG(r, "cma_event type %s cma_id %p\n", droce_rdma_event_str(ev->event),
		  (void *)ev->id);
	if (ev->event == DROCE_RDMA_CM_EVENT_DISCONNECTED)
		r->disconnected = true;
	else
		fprintf(stderr, "unhandled event: %s, ignoring\n",
			droce_rdma_event_str(ev->event));
	droce_rdma_ack_cm_event(ev);
}

/* ---- buffers, QP ---------------------------------------------------------------- */

static int
setup_buffers(struct rping *r)
{
	int rw = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_READ |
		 DROCE_ACCESS_REMOTE_WRITE;
	size_t size = (size_t)r->o->size;

	r->recv_mr = droce_reg_mr(r->pd, &r->recv_buf, sizeof(r->recv_buf),
				  DROCE_ACCESS_LOCAL_WRITE);
	r->send_mr = droce_reg_mr(r->pd, &r->send_buf, sizeof(r->send_buf), 0);
	r->rdma_buf = calloc(1, size);
	r->start_buf = r->o->client ? calloc(1, size) : NULL;
	if (r->recv_mr == NULL || r->send_mr == NULL || r->rdma_buf == NULL ||
	    (r->o->client && r->start_buf == NULL))
		return -1;
	r->rdma_mr = droce_reg_mr(r->pd, r->rdma_buf, size, rw);
	if (r->rdma_mr == NULL)
		return -1;
	if (r->o->client) {
		r->start_mr = droce_reg_mr(r->pd, r->start_buf, size, rw);
		if (r->start_mr == NULL)
			return -1;
	}
	return 0;
}

static void
free_buffers(struct rping *r)
{
	if (r->start_mr != NULL)
		droce_dereg_mr(r->start_mr);
	if (r->rdma_mr != NULL)
		droce_dereg_mr(r->rdma_mr);
	if (r->send_mr != NULL)
		droce_dereg_mr(r->send_mr);
	if (r->recv_mr != NULL)
		droce_dereg_mr(r->recv_mr);
	free(r->rdma_buf);
	free(r->start_buf);
}

static int
setup_qp(struct rping *r, struct droce_rdma_cm_id *id)
{
	struct droce_qp_init_attr init = {
		.qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = RPING_SQ_DEPTH, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	r->pd = droce_alloc_pd(id->verbs);
	if (r->pd == NULL) {
		perror("ibv_alloc_pd");
		return -1;
	}
	r->cq = droce_create_cq(id->verbs, RPING_SQ_DEPTH * 2, r, NULL, 0);
	if (r->cq == NULL) {
		perror("ibv_create_cq");
		return -1;
	}
	init.send_cq = r->cq;
	init.recv_cq = r->cq;
	if (droce_rdma_create_qp(id, r->pd, &init) != 0) {
		perror("rdma_create_qp");
		return -1;
	}
	if (setup_buffers(r) != 0) {
		fprintf(stderr, "rping_setup_buffers failed\n");
		return -1;
	}
	return 0;
}

/* ---- work requests ------------------------------------------------------------ */

static int
post_recv(struct rping *r)
{
	struct droce_sge sge = { .addr = (uintptr_t)&r->recv_buf,
				 .length = sizeof(r->recv_buf), .lkey = r->recv_mr->lkey };
	struct droce_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	return droce_post_recv(r->id->qp, &wr, &bad);
}

static int
post_send_info(struct rping *r, const void *buf, const struct droce_mr *mr)
{
	struct droce_sge sge = { .addr = (uintptr_t)&r->send_buf,
				 .length = sizeof(r->send_buf), .lkey = r->send_mr->lkey };
	struct droce_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				    .opcode = DROCE_WR_SEND,
				    .send_flags = DROCE_SEND_SIGNALED }, *bad;

	if (buf != NULL) {
		r->send_buf.buf = htobe64((uintptr_t)buf);
		r->send_buf.rkey = htobe32(mr->rkey);
		r->send_buf.size = htobe32((uint32_t)r->o->size);
	}
	return droce_post_send(r->id->qp, &wr, &bad);
}

static int
post_rdma(struct rping *r, enum droce_wr_opcode op, uint64_t raddr, uint32_t rkey,
	  uint32_t len)
{
	struct droce_sge sge = { .addr = (uintptr_t)r->rdma_buf, .length = len,
				 .lkey = r->rdma_mr->lkey };
	struct droce_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = op,
				    .send_flags = DROCE_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return droce_post_send(r->id->qp, &wr, &bad);
}

/*
 * Wait for the completion of opcode `want` (a receive is reposted); the
 * send completions of the SENDs before it are taken on the way.  0, or -1
 * (an error completion, or the peer disconnected).
 */
static int
wait_wc(struct rping *r, enum droce_wc_opcode want)
{
	struct droce_wc wc;

	for (;;) {
		int n = droce_poll_cq(r->cq, 1, &wc);

		if (n < 0)
			return -1;
		if (n == 0) {
			poll_event(r);
			if (r->disconnected)
				return -1;
			continue;
		}
		if (wc.status != DROCE_WC_SUCCESS) {
			if (wc.status != DROCE_WC_WR_FLUSH_ERR)
				fprintf(stderr, "cq completion failed status %d\n", wc.status);
			return -1;
		}
		if (wc.opcode == DROCE_WC_RECV && post_recv(r) != 0)
			return -1;
		if (wc.opcode == want)
			return 0;
	}
}

/* ---- the ping loops -------------------------------------------------------------- */

static void
fill_start(struct rping *r, int ping, int *start)
{
	int size = r->o->size;
	int cc = snprintf(r->start_buf, (size_t)size, RPING_MSG_FMT, ping);
	int c = *start;

	for (int i = cc; i < size; i++) {
		r->start_buf[i] = (char)c;
		if (++c > 122)
			c = 65;
	}
	if (++*start > 122)
		*start = 65;
	r->start_buf[size - 1] = 0;
}

static int
client_loop(struct rping *r)
{
	int start = 65;

	for (int ping = 0; r->o->count == 0 || ping < r->o->count; ping++) {
		fill_start(r, ping, &start);
		if (post_send_info(r, r->start_buf, r->start_mr) != 0 ||
		    wait_wc(r, DROCE_WC_RECV) != 0)
			return -1;
		if (post_send_info(r, r->rdma_buf, r->rdma_mr) != 0 ||
		    wait_wc(r, DROCE_WC_RECV) != 0)
			return -1;
		if (r->o->validate && memcmp(r->start_buf, r->rdma_buf, (size_t)r->o->size)) {
			fprintf(stderr, "data mismatch!\n");
			return -1;
		}
		if (r->o->verbose)
			printf("ping data: %s\n", r->rdma_buf);
	}
	return 0;
}

static int
server_loop(struct rping *r)
{
	for (;;) {
		uint64_t addr;
		uint32_t rkey, len;

		if (wait_wc(r, DROCE_WC_RECV) != 0)
			return r->disconnected ? 0 : -1;
		addr = be64toh(r->recv_buf.buf);
		rkey = be32toh(r->recv_buf.rkey);
		len = be32toh(r->recv_buf.size);
		DEBUG_LOG(r, "Received rkey %x addr %" PRIx64 " len %u from peer\n", rkey,
			  addr, len);
		if (len > (uint32_t)r->o->size) {
			fprintf(stderr, "peer's buffer (%u) larger than ours (%d)\n", len,
				r->o->size);
			return -1;
		}
		if (post_rdma(r, DROCE_WR_RDMA_READ, addr, rkey, len) != 0 ||
		    wait_wc(r, DROCE_WC_RDMA_READ) != 0)
			return -1;
		if (r->o->verbose)
			printf("server ping data: %s\n", r->rdma_buf);
		if (post_send_info(r, NULL, NULL) != 0 || wait_wc(r, DROCE_WC_RECV) != 0)
			return r->disconnected ? 0 : -1;
		addr = be64toh(r->recv_buf.buf);
		rkey = be32toh(r->recv_buf.rkey);
		r->rdma_buf[r->o->size - 1] = 0;
		if (post_rdma(r, DROCE_WR_RDMA_WRITE, addr, rkey,
			      (uint32_t)strlen(r->rdma_buf) + 1) != 0 ||
		    wait_wc(r, DROCE_WC_RDMA_WRITE) != 0 || post_send_info(r, NULL, NULL) != 0)
			return -1;
	}
}

/* ---- connection set-up ---------------------------------------------------------------- */

static void
set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons(port);
}

static int
run_client(struct rping *r)
{
	struct droce_rdma_conn_param p = {
		.responder_resources = 1, .initiator_depth = 1, .retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct sockaddr_storage dst = r->o->addr;

	set_port(&dst, r->o->port);
	if (droce_rdma_resolve_addr(r->id, r->o->have_src ? (struct sockaddr *)&r->o->src :
				    NULL, (struct sockaddr *)&dst, 2000) != 0) {
		perror("rdma_resolve_addr");
		return -1;
	}
	if (wait_event(r, DROCE_RDMA_CM_EVENT_ADDR_RESOLVED, NULL) != 0)
		return -1;
	if (droce_rdma_resolve_route(r->id, 2000) != 0 ||
	    wait_event(r, DROCE_RDMA_CM_EVENT_ROUTE_RESOLVED, NULL) != 0)
		return -1;
	if (setup_qp(r, r->id) != 0 || post_recv(r) != 0)
		return -1;
	if (droce_rdma_connect(r->id, &p) != 0) {
		perror("rdma_connect");
		return -1;
	}
	if (wait_event(r, DROCE_RDMA_CM_EVENT_ESTABLISHED, NULL) != 0) {
		fprintf(stderr, "wait for CONNECTED state %d\n", -1);
		return -1;
	}
	DEBUG_LOG(r, "rdma_connect successful\n");
	if (client_loop(r) != 0)
		return -1;
	droce_rdma_disconnect(r->id);
	return wait_event(r, DROCE_RDMA_CM_EVENT_DISCONNECTED, NULL);
}

static int
run_server(struct rping *r)
{
	struct droce_rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1 };
	struct droce_rdma_cm_event ev;
	struct sockaddr_storage a = r->o->addr;

	set_port(&a, r->o->port);
	r->listen_id = r->id;
	if (droce_rdma_bind_addr(r->listen_id, (struct sockaddr *)&a) != 0) {
		perror("rdma_bind_addr");
		return -1;
	}
	DEBUG_LOG(r, "rdma_bind_addr successful\n");
	if (droce_rdma_listen(r->listen_id, 3) != 0) {
		perror("rdma_listen");
		return -1;
	}
	if (wait_event(r, DROCE_RDMA_CM_EVENT_CONNECT_REQUEST, &ev) != 0)
		return -1;
	r->id = ev.id;
	DEBUG_LOG(r, "child cma %p\n", (void *)r->id);
	if (setup_qp(r, r->id) != 0 || post_recv(r) != 0)
		return -1;
	if (droce_rdma_accept(r->id, &p) != 0) {
		perror("rdma_accept");
		return -1;
	}
	if (wait_event(r, DROCE_RDMA_CM_EVENT_ESTABLISHED, NULL) != 0)
		return -1;
	DEBUG_LOG(r, "accepting client connection request\n");
	if (server_loop(r) != 0)
		return -1;
	droce_rdma_disconnect(r->id);
	return 0;
}

static void
teardown(struct rping *r)
{
	if (r->id != NULL)
		droce_rdma_destroy_qp(r->id);
	free_buffers(r);
	if (r->cq != NULL)
		droce_destroy_cq(r->cq);
	if (r->pd != NULL)
		droce_dealloc_pd(r->pd);
	if (r->id != NULL && r->id != r->listen_id)
		droce_rdma_destroy_id(r->id);
	if (r->listen_id != NULL)
		droce_rdma_destroy_id(r->listen_id);
}

/* ---- options ------------------------------------------------------------------------- */

static int
get_addr(const char *name, struct sockaddr_storage *ss)
{
	struct addrinfo *res;
	int rc = getaddrinfo(name, NULL, NULL, &res);

	if (rc != 0) {
		fprintf(stderr, "getaddrinfo failed (%s) - invalid hostname or IP address\n",
			gai_strerror(rc));
		return -1;
	}
	if (res->ai_family != AF_INET && res->ai_family != AF_INET6) {
		freeaddrinfo(res);
		return -1;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

static void
usage(const char *name)
{
	printf("%s [EAL options] -- [droce options] -s [-vVd] [-S size] [-C count] [-a addr] [-p port]\n",
	       name);
	printf("%s [EAL options] -- [droce options] -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]\n",
	       name);
	printf("\t-c\t\tclient side\n");
	printf("\t-I\t\tSource address to bind to for client.\n");
	printf("\t-s\t\tserver side.  To bind to any address with IPv6 use -a ::0\n");
	printf("\t-v\t\tdisplay ping data to stdout\n");
	printf("\t-V\t\tvalidate ping data\n");
	printf("\t-d\t\tdebug printfs\n");
	printf("\t-S size \tping data size\n");
	printf("\t-C count\tping count times\n");
	printf("\t-a addr\t\taddress\n");
	printf("\t-p port\t\tport\n");
	printf("\t-h, --help\tthis text (starts no EAL)\n");
}

static int
parse_opts(struct rping_opts *o, int argc, char **argv)
{
	int op;

	memset(o, 0, sizeof(*o));
	o->port = RPING_DEFAULT_PORT;
	o->size = 64;
	((struct sockaddr_in *)&o->addr)->sin_family = AF_INET;
	while ((op = getopt(argc, argv, "a:I:Pp:C:S:t:scvVdq")) != -1) {
		switch (op) {
		case 'a':
			if (get_addr(optarg, &o->addr) != 0)
				return -1;
			break;
		case 'I':
			if (get_addr(optarg, &o->src) != 0)
				return -1;
			o->have_src = true;
			break;
		case 'p':
			o->port = (uint16_t)strtoul(optarg, NULL, 0);
			break;
		case 's':
			o->server = true;
			break;
		case 'c':
			o->client = true;
			break;
		case 'S':
			o->size = atoi(optarg);
			if (o->size < RPING_MIN_BUFSIZE || o->size > RPING_BUFSIZE - 1) {
				fprintf(stderr, "Invalid size %d (valid range is %d to %d)\n",
					o->size, RPING_MIN_BUFSIZE, RPING_BUFSIZE - 1);
				return -1;
			}
			break;
		case 'C':
			o->count = atoi(optarg);
			if (o->count < 0) {
				fprintf(stderr, "Invalid count %d\n", o->count);
				return -1;
			}
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'V':
			o->validate = true;
			break;
		case 'd':
			o->debug = true;
			break;
		default:
			usage("droce-rping");
			return -1;
		}
	}
	if (o->server == o->client) {
		usage("droce-rping");
		return -1;
	}
	return 0;
}

static int
run(const struct rping_opts *o, struct droce_device *dev)
{
	struct rping r = { .o = o };
	int ret = -1;

	r.ctx = droce_open_device(dev);
	if (r.ctx == NULL) {
		perror("droce_open_device");
		return 1;
	}
	if (droce_rdma_cm_attach(r.ctx) != 0) {
		perror("droce_rdma_cm_attach");
		goto close_dev;
	}
	r.ch = droce_rdma_create_event_channel();
	if (r.ch == NULL) {
		perror("rdma_create_event_channel");
		goto detach;
	}
	fcntl(r.ch->fd, F_SETFL, fcntl(r.ch->fd, F_GETFL) | O_NONBLOCK);
	if (droce_rdma_create_id(r.ch, &r.id, &r, DROCE_RDMA_PS_TCP) != 0) {
		perror("rdma_create_id");
		goto channel;
	}
	DEBUG_LOG(&r, "created cm_id %p\n", (void *)r.id);
	ret = o->server ? run_server(&r) : run_client(&r);
	teardown(&r);
channel:
	droce_rdma_destroy_event_channel(r.ch);
detach:
	droce_rdma_cm_detach(r.ctx);
close_dev:
	droce_close_device(r.ctx);
	return ret == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	struct droce_device **list;
	struct droce_device *dev;
	struct rping_opts o;
	char **pargv;
	int pargc = 0, consumed, ret = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* before droce_init: EAL would take --help as its own */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage("droce-rping");
			return 0;
		}
	consumed = droce_init(argc, argv);
	if (consumed < 0) {
		fprintf(stderr, "droce-rping: droce_init failed: %s\n", strerror(errno));
		return 1;
	}
	pargv = app_program_args(argc, argv, consumed, argv[0], &pargc);
	if (pargv == NULL)
		goto out;
	if (parse_opts(&o, pargc, pargv) == 0) {
		list = droce_get_device_list(NULL);
		dev = list != NULL ? app_pick_device(list, NULL) : NULL;
		if (dev != NULL)
			ret = run(&o, dev);
		if (list != NULL)
			droce_free_device_list(list);
	}
	free(pargv);
out:
	droce_cleanup();
	return ret;
}
