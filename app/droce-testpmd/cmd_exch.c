/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_exch.c - the TCP side channel between two droce-testpmd processes.
 *
 * qp exchange: one side listens, the other connects; each sends one
 * 128-byte text message (NUL padded)
 *     DTPMD1 <qpn hex> <psn hex> <gid 32 hex> <rkey hex> <addr hex> <len hex>
 * then both connect their QP to what they received.  The connection stays
 * open for "sync" (a barrier: each side sends "SYNC" and waits for the
 * other's), which scripts use to order their steps; a later exchange's
 * connection replaces it.  Every wait keeps the
 * devices and engines running (the peer needs our ARP replies).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "app_sock.h"
#include "tpd.h"

#define EXCH_MSG 128
#define EXCH_PORT 18515

static void
idle_hook(void *arg)
{
	(void)arg;
	tpd_idle();
}

/* Wait for fd to become readable for at most timeout_s; runs tpd_idle. */
static int
wait_readable(int fd, uint64_t timeout_s)
{
	uint64_t end = tpd_now_ns() + timeout_s * 1000000000u;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	while (tpd_now_ns() < end) {
		if (poll(&pfd, 1, 1) > 0 && pfd.revents != 0)
			return 0;
		tpd_idle();
	}
	tpd_err("timed out after %" PRIu64 " s waiting for the peer", timeout_s);
	return -1;
}

static int
exch_listen(uint16_t port, uint64_t timeout_s)
{
	struct sockaddr_in6 sa;
	int one = 1, ls, fd;

	ls = socket(AF_INET6, SOCK_STREAM, 0);
	if (ls < 0) {
		tpd_err("socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin6_family = AF_INET6;
	sa.sin6_port = htons(port);
	sa.sin6_addr = in6addr_any;
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(ls, 1) != 0) {
		tpd_err("listen on port %u: %s", port, strerror(errno));
		close(ls);
		return -1;
	}
	printf("exchange: listening on port %u\n", port);
	fflush(stdout);
	if (wait_readable(ls, timeout_s) != 0) {
		close(ls);
		return -1;
	}
	fd = accept(ls, NULL, NULL);
	if (fd < 0)
		tpd_err("accept: %s", strerror(errno));
	close(ls);
	return fd;
}

static int
exch_connect(const char *host, uint16_t port, uint64_t timeout_s)
{
	uint64_t end = tpd_now_ns() + timeout_s * 1000000000u;
	struct addrinfo hints, *res = NULL;
	char service[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(service, sizeof(service), "%u", port);
	rc = getaddrinfo(host, service, &hints, &res);
	if (rc != 0) {
		tpd_err("%s: %s", host, gai_strerror(rc));
		return -1;
	}
	/* the listener may not be up yet: retry until the timeout */
	while (tpd_now_ns() < end) {
		int fd = socket(res->ai_family, SOCK_STREAM, 0);

		if (fd < 0)
			break;
		if (connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
			freeaddrinfo(res);
			return fd;
		}
		close(fd);
		tpd_idle_for(100);
	}
	freeaddrinfo(res);
	tpd_err("cannot connect to %s port %u within %" PRIu64 " s", host, port, timeout_s);
	return -1;
}

static int
msg_format(const struct tpd_peer *p, char msg[EXCH_MSG])
{
	char gid[33];
	int n;

	for (int i = 0; i < 16; i++)
		snprintf(gid + 2 * i, 3, "%02x", p->gid.raw[i]);
	memset(msg, 0, EXCH_MSG);
	n = snprintf(msg, EXCH_MSG, "DTPMD1 %06" PRIx32 " %06" PRIx32 " %s %08" PRIx32
		     " %" PRIx64 " %" PRIx64, p->qpn, p->psn, gid, p->rkey, p->addr, p->len);
	return n > 0 && n < EXCH_MSG ? 0 : -1;
}

static int
msg_parse(const char msg[EXCH_MSG], struct tpd_peer *p)
{
	char gid[33];
	unsigned int b;

	if (memchr(msg, '\0', EXCH_MSG) == NULL ||
	    sscanf(msg, "DTPMD1 %" SCNx32 " %" SCNx32 " %32s %" SCNx32 " %" SCNx64
		   " %" SCNx64, &p->qpn, &p->psn, gid, &p->rkey, &p->addr, &p->len) != 6 ||
	    strlen(gid) != 32 || p->qpn > 0xffffff || p->psn > 0xffffff)
		return -1;
	for (int i = 0; i < 16; i++) {
		if (sscanf(gid + 2 * i, "%2x", &b) != 1)
			return -1;
		p->gid.raw[i] = (uint8_t)b;
	}
	return 0;
}

static int
exch_swap(int fd, const struct tpd_peer *mine, struct tpd_peer *theirs,
	  uint64_t timeout_s)
{
	char out[EXCH_MSG], in[EXCH_MSG];
	ssize_t r;

	if (msg_format(mine, out) != 0 || app_sock_write_full(fd, out, EXCH_MSG) != 0) {
		tpd_err("exchange: cannot send our address");
		return -1;
	}
	if (wait_readable(fd, timeout_s) != 0)
		return -1;
	r = app_sock_read_full(fd, in, EXCH_MSG);
	if (r != EXCH_MSG || msg_parse(in, theirs) != 0) {
		tpd_err("exchange: no valid address message from the peer");
		return -1;
	}
	return 0;
}

/* qp exchange QP listen|connect [HOST] [port=N] [mr=MR] [timeout=S] */
int
tpd_qp_exchange(struct tpd_cmd *c)
{
	struct tpd_qp *q = tpd_get_qp(c, 1);
	struct tpd_peer mine, theirs;
	uint64_t port, timeout;
	struct tpd_mr *m = NULL;
	char gid[64];
	bool listen;
	int fd, dev;

	if (q == NULL)
		return -1;
	if (c->npos < 3 || (strcmp(c->pos[2], "listen") != 0 &&
			    strcmp(c->pos[2], "connect") != 0)) {
		tpd_err("qp exchange QP listen | qp exchange QP connect HOST");
		return -1;
	}
	listen = strcmp(c->pos[2], "listen") == 0;
	if (!listen && c->npos < 4) {
		tpd_err("qp exchange QP connect HOST: missing HOST");
		return -1;
	}
	if (tpd_kv_has(c, "mr") &&
	    (m = tpd_lookup((void *const *)tpd.mr, tpd_kv_str(c, "mr"), "mr", NULL)) == NULL)
		return -1;
	if (tpd_kv_u64(c, "port", EXCH_PORT, 65535, &port) != 0 ||
	    tpd_kv_u64(c, "timeout", 30, 3600, &timeout) != 0 ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	memset(&mine, 0, sizeof(mine));
	dev = tpd_dev_of_pd(q->pd);
	if (droce_query_gid(tpd.dev[dev].ctx, 1, 0, &mine.gid) != 0) {
		tpd_err("device %d has no GID (give it --droce-ipv4)", dev);
		return -1;
	}
	mine.qpn = q->qp->qp_num;
	mine.psn = q->sq_psn;
	if (m != NULL) {
		mine.rkey = m->mr->rkey;
		mine.addr = (uint64_t)(uintptr_t)m->buf;
		mine.len = m->len;
	}
	app_sock_set_idle(idle_hook, NULL);
	fd = listen ? exch_listen((uint16_t)port, timeout) :
		exch_connect(c->pos[3], (uint16_t)port, timeout);
	if (fd < 0)
		return -1;
	memset(&theirs, 0, sizeof(theirs));
	if (exch_swap(fd, &mine, &theirs, timeout) != 0) {
		close(fd);
		return -1;
	}
	/* the newest link is the one sync uses */
	if (tpd.exch_fd >= 0)
		close(tpd.exch_fd);
	tpd.exch_fd = fd;
	theirs.qkey = 0x11111111u;
	theirs.valid = true;
	q->peer = theirs;
	tpd_gid_str(&theirs.gid, gid, sizeof(gid));
	printf("exchange: peer gid %s qpn 0x%06" PRIx32 " psn 0x%06" PRIx32 " rkey 0x%08"
	       PRIx32 " addr 0x%" PRIx64 " len %" PRIu64 "\n", gid, theirs.qpn,
	       theirs.psn, theirs.rkey, theirs.addr, theirs.len);
	if (tpd_qp_connect_peer(q) != 0)
		return -1;
	printf("qp %s: state %s\n", c->pos[1], tpd_qp_state_name(q->qp->state));
	return 0;
}

/* sync [timeout=S] [tag=WORD]: a barrier with the peer of qp exchange. */
static int
sync_cmd(struct tpd_cmd *c)
{
	char out[16], in[16];
	const char *tag = tpd_kv_str(c, "tag");
	uint64_t timeout;

	if (tpd_kv_u64(c, "timeout", 30, 3600, &timeout) != 0 || tpd_kv_check_used(c) != 0)
		return -1;
	if (tpd.exch_fd < 0) {
		tpd_err("sync needs a peer: run qp exchange first");
		return -1;
	}
	memset(out, 0, sizeof(out));
	snprintf(out, sizeof(out), "SYNC %.10s", tag != NULL ? tag : "-");
	if (app_sock_write_full(tpd.exch_fd, out, sizeof(out)) != 0 ||
	    wait_readable(tpd.exch_fd, timeout) != 0 ||
	    app_sock_read_full(tpd.exch_fd, in, sizeof(in)) != (ssize_t)sizeof(in)) {
		tpd_err("sync: the peer is gone");
		return -1;
	}
	in[sizeof(in) - 1] = '\0';
	if (strcmp(in, out) != 0) {
		tpd_err("sync: the peer is at '%s', we are at '%s'", in, out);
		return -1;
	}
	printf("sync %s: done\n", tag != NULL ? tag : "-");
	return 0;
}

const struct tpd_subcmd tpd_sync_cmd = {
	"sync", sync_cmd, "sync [tag=WORD] [timeout=S]",
	"barrier with the peer linked by qp exchange (both sides must give the same tag)"
};
