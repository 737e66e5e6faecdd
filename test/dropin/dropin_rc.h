/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_rc.h - what test/dropin's RC programs share: the TCP side channel
 * to the peer (rc_sock), the connection of an RC QP, the command line
 * "-p PORT [HOST]", the device, the time since a moment.
 */
#ifndef DROCE_DROPIN_RC_H
#define DROCE_DROPIN_RC_H

#include <errno.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dropin_die.h"

static int rc_sock;

/* The attributes and mask of each step RESET -> INIT (access: the QP's
 * remote rights) -> RTR (towards dest_qpn at dgid) -> RTS, for programs
 * that modify through another entry point (dropin_abi's 1.0 ABI). */
static inline int
init_attr(struct ibv_qp_attr *a, unsigned int access)
{
	*a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = access,
	};
	return IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
}

static inline int
rtr_attr(struct ibv_qp_attr *a, uint32_t dest_qpn, const union ibv_gid *dgid)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = dest_qpn;
	a->rq_psn = 0;
	a->max_dest_rd_atomic = 1;
	a->min_rnr_timer = 1;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = *dgid;
	a->ah_attr.grh.sgid_index = 0;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.port_num = 1;
	return IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
}

static inline int
rts_attr(struct ibv_qp_attr *a)
{
	*a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS };
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->sq_psn = 0;
	a->max_rd_atomic = 1;
	return IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
	       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
}

/* RESET -> INIT -> RTR (rtr_attr's arguments). */
static inline void
qp_to_rtr(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *dgid,
	  unsigned int access)
{
	struct ibv_qp_attr a;
	int mask = init_attr(&a, access);

	if (ibv_modify_qp(qp, &a, mask) != 0)
		die("INIT");
	mask = rtr_attr(&a, dest_qpn, dgid);
	if (ibv_modify_qp(qp, &a, mask) != 0)
		die("RTR: %s", strerror(errno));
}

/* RTR -> RTS. */
static inline void
qp_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	int mask = rts_attr(&a);

	if (ibv_modify_qp(qp, &a, mask) != 0)
		die("RTS");
}

/* RESET -> INIT -> RTR -> RTS (qp_to_rtr's arguments). */
static inline void
connect_qp(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *dgid,
	   unsigned int access)
{
	qp_to_rtr(qp, dest_qpn, dgid, access);
	qp_to_rts(qp);
}

/* The TCP connection (rc_sock): accept one on port, or connect to host:port. */
static inline void
tcp_open(const char *host, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1, s = socket(AF_INET, SOCK_STREAM, 0);

	if (s < 0)
		die("socket");
	if (host != NULL) {
		if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
			die("address %s", host);
		for (int i = 0; connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0; i++) {
			if (i == 200)
				die("connect");
			usleep(50 * 1000);
		}
		rc_sock = s;
		return;
	}
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(s, 1) != 0)
		die("bind/listen");
	rc_sock = accept(s, NULL, NULL);
	close(s);
	if (rc_sock < 0)
		die("accept");
}

static inline void
tcp_send(const void *p, size_t n)
{
	if (write(rc_sock, p, n) != (ssize_t)n)
		die("tcp write");
}

static inline void
tcp_recv(void *p, size_t n)
{
	for (size_t got = 0; got < n; ) {
		ssize_t k = read(rc_sock, (char *)p + got, n - got);

		if (k <= 0)
			die("tcp read");
		got += (size_t)k;
	}
}

/* "-p PORT" (the server: NULL) or "-p PORT HOST" (the client: HOST). */
static inline const char *
rc_args(int argc, char **argv, int *port)
{
	*port = argc >= 3 && strcmp(argv[1], "-p") == 0 ? atoi(argv[2]) : 0;
	if (*port <= 0 || argc > 4)
		die("usage: %s -p PORT [HOST]", argv[0]);
	return argc == 4 ? argv[3] : NULL;
}

static inline long
ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* cq's next completion, one within wait_ms, or die. */
static inline struct ibv_wc
rc_next_wc(struct ibv_cq *cq, long wait_ms)
{
	struct ibv_wc wc;
	struct timespec t0;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0 && ms_since(&t0) < wait_ms)
		;
	if (n != 1)
		die("no completion within %ld ms (poll %d)", wait_ms, n);
	return wc;
}

/* ctx's async_fd readable within timeout_ms. */
static inline bool
rc_async_readable(struct ibv_context *ctx, int timeout_ms)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	int n = poll(&p, 1, timeout_ms);

	if (n < 0)
		die("poll(async_fd): %s", strerror(errno));
	return n == 1 && (p.revents & POLLIN);
}

/* The first device, opened; its GID 0 in *gid. */
static inline struct ibv_context *
rc_open_device(union ibv_gid *gid)
{
	int n;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *ctx;

	if (list == NULL || n < 1)
		die("no device");
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (ctx == NULL || ibv_query_gid(ctx, 1, 0, gid) != 0)
		die("open/query_gid");
	return ctx;
}

/* A two-role test program (dropin_mw, dropin_async, dropin_poll_fd): its parts. */
struct rc_roles {
	void (*setup)(bool owner);	/* its objects, before the connection */
	void (*exchange)(void);		/* QPNs and GIDs over rc_sock; QPs connected */
	void (*owner)(void);		/* the server's part (-p PORT) */
	void (*peer)(void);		/* the client's (-p PORT HOST) */
	void (*teardown)(void);		/* every object destroyed (die on failure) */
};

/* The program's main: "ok" and 0 once its part and the teardown passed. */
static inline int
rc_main(int argc, char **argv, const struct rc_roles *r)
{
	int port;
	const char *host = rc_args(argc, argv, &port);

	r->setup(host == NULL);
	tcp_open(host, port);
	r->exchange();
	if (host == NULL)
		r->owner();
	else
		r->peer();
	r->teardown();
	close(rc_sock);
	puts("ok");
	return 0;
}

#endif /* DROCE_DROPIN_RC_H */
