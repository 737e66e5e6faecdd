/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_exch.c - droce-perf's TCP side channel (its own format, not
 * perftest's):
 *   client -> server  address message (PERF_DEST_MSG_SIZE bytes of text,
 *                     NUL padded): test name, QPN, PSN, GID, rkey, buffer
 *                     address and size, and the client's test parameters,
 *                     which the server adopts
 *   server -> client  the server's address message
 *   then framed messages of 16 bytes: a 4-character tag, 4 zero bytes and
 *   a 64-bit big-endian value ("SYNC" barriers, "END " with the client's
 *   operation count, "VERI" with the verifier's verdict).
 * While a side waits on the socket the idle hook runs droce_progress, so
 * the stack keeps answering ARP and the peer's packets.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "app_sock.h"
#include "perf.h"

#define PERF_MSG_LEN 16

void
perf_exch_set_idle(void (*fn)(void *arg), void *arg)
{
	app_sock_set_idle(fn, arg);
}

/* Exactly n bytes, or an error (the end of the stream is one). */
static int
read_full(int fd, void *buf, size_t n)
{
	ssize_t r = app_sock_read_full(fd, buf, n);

	return r < 0 ? (int)r : (size_t)r == n ? 0 : -ECONNRESET;
}

int
perf_dest_format(const struct perf_dest *d, char msg[PERF_DEST_MSG_SIZE])
{
	char gid[33];
	int i, n;

	for (i = 0; i < 16; i++)
		snprintf(gid + 2 * i, 3, "%02x", d->gid.raw[i]);
	memset(msg, 0, PERF_DEST_MSG_SIZE);
	n = snprintf(msg, PERF_DEST_MSG_SIZE, "DPERF1 %.15s %06" PRIx32 " %06"
		     PRIx32 " %s %08" PRIx32 " %016" PRIx64 " %" PRIx64 " %"
		     PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu32
		     " %" PRIu32, d->test[0] ? d->test : "-", d->qpn, d->psn,
		     gid, d->rkey, d->vaddr, d->buf_size, d->size, d->iters,
		     d->duration, d->all_sizes, d->atomic, d->mtu);
	return n > 0 && n < PERF_DEST_MSG_SIZE ? n : -EINVAL;
}

int
perf_dest_parse(const char msg[PERF_DEST_MSG_SIZE], struct perf_dest *d)
{
	char test[16], gid[33], tail;
	struct perf_dest r;
	int i;

	if (memchr(msg, '\0', PERF_DEST_MSG_SIZE) == NULL)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	if (sscanf(msg, "DPERF1 %15s %" SCNx32 " %" SCNx32 " %32s %" SCNx32
		   " %" SCNx64 " %" SCNx64 " %" SCNu32 " %" SCNu32 " %" SCNu32
		   " %" SCNu32 " %" SCNu32 " %" SCNu32 "%c", test, &r.qpn,
		   &r.psn, gid, &r.rkey, &r.vaddr, &r.buf_size, &r.size,
		   &r.iters, &r.duration, &r.all_sizes, &r.atomic, &r.mtu,
		   &tail) != 13 || strlen(gid) != 32)
		return -EINVAL;
	for (i = 0; i < 16; i++) {
		char h[3] = { gid[2 * i], gid[2 * i + 1], 0 };
		char *end;

		r.gid.raw[i] = (uint8_t)strtoul(h, &end, 16);
		if (*end != '\0')
			return -EINVAL;
	}
	if (strcmp(test, "-") != 0)
		snprintf(r.test, sizeof(r.test), "%s", test);
	*d = r;
	return 0;
}

int
perf_send_dest(int fd, const struct perf_dest *d)
{
	char msg[PERF_DEST_MSG_SIZE];

	if (perf_dest_format(d, msg) < 0)
		return -EINVAL;
	return app_sock_write_full(fd, msg, sizeof(msg));
}

int
perf_recv_dest(int fd, struct perf_dest *d)
{
	char msg[PERF_DEST_MSG_SIZE];
	int rc = read_full(fd, msg, sizeof(msg));

	if (rc != 0)
		return rc;
	if (perf_dest_parse(msg, d) != 0) {
		fprintf(stderr, "malformed address message from the peer "
			"(not droce-perf?)\n");
		return -EPROTO;
	}
	return 0;
}

int
perf_send_msg(int fd, const char tag[4], uint64_t val)
{
	uint8_t m[PERF_MSG_LEN] = { 0 };
	int i;

	memcpy(m, tag, 4);
	for (i = 0; i < 8; i++)
		m[8 + i] = (uint8_t)(val >> (56 - 8 * i));
	return app_sock_write_full(fd, m, sizeof(m));
}

int
perf_recv_msg(int fd, const char tag[4], uint64_t *val)
{
	uint8_t m[PERF_MSG_LEN];
	uint64_t v = 0;
	int i, rc;

	rc = read_full(fd, m, sizeof(m));
	if (rc != 0)
		return rc;
	if (memcmp(m, tag, 4) != 0) {
		fprintf(stderr, "side channel: expected '%.4s', got '%.4s'\n",
			tag, (const char *)m);
		return -EPROTO;
	}
	for (i = 0; i < 8; i++)
		v = v << 8 | m[8 + i];
	if (val != NULL)
		*val = v;
	return 0;
}

int
perf_msg_ready(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0 && pfd.revents != 0;
}

int
perf_barrier(int fd)
{
	int rc = perf_send_msg(fd, "SYNC", 0);

	return rc != 0 ? rc : perf_recv_msg(fd, "SYNC", NULL);
}

int
perf_tcp_connect(const char *host, unsigned int port)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res, *t;
	char service[16];
	int fd = -1, n, tries;

	snprintf(service, sizeof(service), "%u", port);
	n = getaddrinfo(host, service, &hints, &res);
	if (n != 0) {
		fprintf(stderr, "%s for %s:%u\n", gai_strerror(n), host, port);
		return -1;
	}
	/* the server may still be starting: retry for 10 s */
	for (tries = 0; fd < 0 && tries < 100; tries++) {
		for (t = res; t != NULL; t = t->ai_next) {
			fd = socket(t->ai_family, t->ai_socktype,
				    t->ai_protocol);
			if (fd < 0)
				continue;
			if (connect(fd, t->ai_addr, t->ai_addrlen) == 0)
				break;
			close(fd);
			fd = -1;
		}
		if (fd < 0) {
			app_sock_idle();
			usleep(100000);
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		fprintf(stderr, "Couldn't connect to %s:%u\n", host, port);
	return fd;
}

int
perf_tcp_accept(unsigned int port)
{
	struct addrinfo hints = {
		.ai_flags = AI_PASSIVE, .ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res, *t;
	char service[16];
	int lfd = -1, fd, n;

	snprintf(service, sizeof(service), "%u", port);
	n = getaddrinfo(NULL, service, &hints, &res);
	if (n != 0) {
		fprintf(stderr, "%s for port %u\n", gai_strerror(n), port);
		return -1;
	}
	for (t = res; t != NULL; t = t->ai_next) {
		int one = 1;

		lfd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
		if (lfd < 0)
			continue;
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(lfd, t->ai_addr, t->ai_addrlen) == 0 &&
		    listen(lfd, 1) == 0)
			break;
		close(lfd);
		lfd = -1;
	}
	freeaddrinfo(res);
	if (lfd < 0) {
		fprintf(stderr, "Couldn't listen to port %u\n", port);
		return -1;
	}
	do {
		app_sock_wait_readable(lfd);
		fd = accept(lfd, NULL, NULL);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		fprintf(stderr, "accept() failed: %s\n", strerror(errno));
	close(lfd);
	return fd;
}
