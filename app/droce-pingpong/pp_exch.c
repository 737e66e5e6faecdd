/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_exch.c - address messages and the TCP conversation of the libibverbs
 * pingpong examples (see pp_exch.h for the format and the references).
 *
 * Differences from rc_pingpong that do not change a byte on the wire:
 * reads and writes loop over short transfers and EINTR (rc_pingpong issues
 * one read() and fails if it returns less), sends use MSG_NOSIGNAL so a
 * peer that hangs up gives an error instead of SIGPIPE, received messages
 * are validated instead of sscanf'd blindly, and the server checks that
 * the client's last 5 bytes really are "done\0".
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "app_sock.h"
#include "pp_exch.h"

void
pp_gid_to_wire(const union droce_gid *gid, char wire[PP_WIRE_GID_LEN + 1])
{
	int i;

	/* pingpong.c: sprintf(&wgid[i * 8], "%08x",
	 *                     htonl(*(uint32_t *)(gid->raw + i * 4))); */
	for (i = 0; i < 4; i++) {
		uint32_t w;

		memcpy(&w, gid->raw + i * 4, sizeof(w));
		snprintf(&wire[i * 8], 9, "%08x", (unsigned int)htonl(w));
	}
	wire[PP_WIRE_GID_LEN] = '\0';
}

static int
all_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

int
pp_wire_to_gid(const char *wire, union droce_gid *gid)
{
	int i;

	if (wire == NULL || gid == NULL || !all_hex(wire, PP_WIRE_GID_LEN))
		return -EINVAL;
	/* pingpong.c: sscanf 8 digits with "%x", store ntohl(v32) as the
	 * word at raw[i * 4]. */
	for (i = 0; i < 4; i++) {
		char tmp[9];
		uint32_t w;

		memcpy(tmp, wire + i * 8, 8);
		tmp[8] = '\0';
		w = ntohl((uint32_t)strtoul(tmp, NULL, 16));
		memcpy(gid->raw + i * 4, &w, sizeof(w));
	}
	return 0;
}

int
pp_msg_format(const struct pp_dest *dest, char msg[PP_MSG_SIZE])
{
	char wire[PP_WIRE_GID_LEN + 1];
	int n;

	if (dest->lid < 0 || dest->lid > 0xffff ||
	    dest->qpn < 0 || dest->qpn > 0xffffff ||
	    dest->psn < 0 || dest->psn > 0xffffff)
		return -EINVAL;
	memset(msg, 0, PP_MSG_SIZE);
	pp_gid_to_wire(&dest->gid, wire);
	/* rc_pingpong.c: sprintf(msg, "%04x:%06x:%06x:%s", lid, qpn, psn, gid) */
	n = snprintf(msg, PP_MSG_SIZE, "%04x:%06x:%06x:%s", dest->lid,
		     dest->qpn, dest->psn, wire);
	return n == (int)PP_MSG_SIZE - 1 ? 0 : -EINVAL;
}

int
pp_msg_parse(const char msg[PP_MSG_SIZE], struct pp_dest *dest)
{
	struct pp_dest d;

	/* "LLLL:QQQQQQ:PPPPPP:" then 32 hex digits and the NUL. */
	if (!all_hex(msg, 4) || msg[4] != ':' ||
	    !all_hex(msg + 5, 6) || msg[11] != ':' ||
	    !all_hex(msg + 12, 6) || msg[18] != ':' ||
	    !all_hex(msg + 19, PP_WIRE_GID_LEN) || msg[PP_MSG_SIZE - 1] != '\0')
		return -EINVAL;
	memset(&d, 0, sizeof(d));
	d.lid = (int)strtol(msg, NULL, 16);
	d.qpn = (int)strtol(msg + 5, NULL, 16);
	d.psn = (int)strtol(msg + 12, NULL, 16);
	if (pp_wire_to_gid(msg + 19, &d.gid) != 0)
		return -EINVAL;
	*dest = d;
	return 0;
}

/* Waiting on the peer keeps droce polled: app/common/app_sock.c. */
void
pp_exch_set_idle(void (*fn)(void *arg), void *arg)
{
	app_sock_set_idle(fn, arg);
}

static void
report_bad_msg(const char *who, const char msg[PP_MSG_SIZE])
{
	char shown[PP_MSG_SIZE * 4 + 1];
	size_t i, o = 0;

	for (i = 0; i < PP_MSG_SIZE; i++) {
		unsigned char c = (unsigned char)msg[i];

		if (isprint(c) && c != '\\')
			shown[o++] = (char)c;
		else
			o += (size_t)snprintf(shown + o, sizeof(shown) - o,
					      "\\x%02x", c);
	}
	shown[o] = '\0';
	fprintf(stderr, "%s: malformed address message \"%s\" "
		"(expected \"LLLL:QQQQQQ:PPPPPP:<32 hex digits>\\0\")\n",
		who, shown);
}

/* n messages from my[] in one write, as the examples' back-to-back writes. */
static int
write_msgs(int fd, const struct pp_dest *my, unsigned int n)
{
	char (*msgs)[PP_MSG_SIZE];
	unsigned int i;
	int rc = 0;

	msgs = calloc(n, PP_MSG_SIZE);
	if (msgs == NULL)
		return -ENOMEM;
	for (i = 0; i < n && rc == 0; i++)
		rc = pp_msg_format(&my[i], msgs[i]);
	if (rc != 0)
		fprintf(stderr, "Couldn't format local address\n");
	else
		rc = app_sock_write_full(fd, msgs, (size_t)n * PP_MSG_SIZE);
	free(msgs);
	return rc;
}

/* n messages into rem[]; 0, a negative errno, or -EPROTO (reported). */
static int
read_msgs(int fd, const char *who, struct pp_dest *rem, unsigned int n)
{
	char msg[PP_MSG_SIZE];
	unsigned int i;

	for (i = 0; i < n; i++) {
		ssize_t got = app_sock_read_full(fd, msg, sizeof(msg));

		if (got != (ssize_t)sizeof(msg)) {
			if (got < 0)
				fprintf(stderr, "%s read: %s\n", who,
					strerror((int)-got));
			fprintf(stderr, "%d/%d: Couldn't read remote address "
				"[%u]\n", got < 0 ? -1 : (int)got,
				(int)sizeof(msg), i);
			return got < 0 ? (int)got : -EPROTO;
		}
		if (pp_msg_parse(msg, &rem[i]) != 0) {
			report_bad_msg(who, msg);
			return -EPROTO;
		}
	}
	return 0;
}

int
pp_client_exch_fd(int fd, const struct pp_dest *my, struct pp_dest *rem,
		  unsigned int n)
{
	int rc;

	rc = write_msgs(fd, my, n);
	if (rc != 0) {
		fprintf(stderr, "Couldn't send local address: %s\n",
			strerror(-rc));
		return rc;
	}
	rc = read_msgs(fd, "client", rem, n);
	if (rc == 0)
		rc = app_sock_write_full(fd, PP_DONE_MSG, PP_DONE_SIZE);
	if (rc != 0) {
		fprintf(stderr, "Couldn't read/write remote address\n");
		return rc;
	}
	return 0;
}

int
pp_server_exch_fd(int fd, const struct pp_dest *my, struct pp_dest *rem,
		  unsigned int n, pp_server_connect_fn connect_fn, void *arg)
{
	char done[PP_DONE_SIZE];
	ssize_t got;
	int rc;

	rc = read_msgs(fd, "server", rem, n);
	if (rc != 0)
		return rc;
	if (connect_fn != NULL && connect_fn(arg, rem) != 0) {
		fprintf(stderr, "Couldn't connect to remote QP\n");
		return -ECONNREFUSED;
	}
	rc = write_msgs(fd, my, n);
	if (rc == 0) {
		got = app_sock_read_full(fd, done, sizeof(done));
		if (got < 0)
			rc = (int)got;
		else if (got != (ssize_t)sizeof(done) ||
			 memcmp(done, PP_DONE_MSG, PP_DONE_SIZE) != 0)
			rc = -EPROTO;
	}
	if (rc != 0) {
		fprintf(stderr, "Couldn't send/recv local address: %s\n",
			rc == -EPROTO ? "no \"done\" from the client" :
			strerror(-rc));
		return rc;
	}
	return 0;
}

int
pp_client_exch(const char *servername, unsigned int port,
	       const struct pp_dest *my, struct pp_dest *rem, unsigned int n_msgs)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res, *t;
	char service[16];
	int sockfd = -1;
	int n, rc;

	snprintf(service, sizeof(service), "%u", port);
	n = getaddrinfo(servername, service, &hints, &res);
	if (n != 0) {
		fprintf(stderr, "%s for %s:%u\n", gai_strerror(n), servername,
			port);
		return -EHOSTUNREACH;
	}
	for (t = res; t != NULL; t = t->ai_next) {
		sockfd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
		if (sockfd >= 0) {
			if (connect(sockfd, t->ai_addr, t->ai_addrlen) == 0)
				break;
			close(sockfd);
			sockfd = -1;
		}
	}
	freeaddrinfo(res);
	if (sockfd < 0) {
		fprintf(stderr, "Couldn't connect to %s:%u\n", servername, port);
		return -ECONNREFUSED;
	}
	rc = pp_client_exch_fd(sockfd, my, rem, n_msgs);
	close(sockfd);
	return rc;
}

int
pp_server_exch(unsigned int port, const struct pp_dest *my,
	       struct pp_dest *rem, unsigned int n_msgs,
	       pp_server_connect_fn connect_fn, void *arg)
{
	struct addrinfo hints = {
		.ai_flags = AI_PASSIVE,
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res, *t;
	char service[16];
	int sockfd = -1, connfd;
	int n, rc;

	snprintf(service, sizeof(service), "%u", port);
	n = getaddrinfo(NULL, service, &hints, &res);
	if (n != 0) {
		fprintf(stderr, "%s for port %u\n", gai_strerror(n), port);
		return -EADDRNOTAVAIL;
	}
	for (t = res; t != NULL; t = t->ai_next) {
		sockfd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
		if (sockfd >= 0) {
			int one = 1;

			setsockopt(sockfd, SOL_SOCKET, SO_REUSEADDR, &one,
				   sizeof(one));
			if (bind(sockfd, t->ai_addr, t->ai_addrlen) == 0)
				break;
			close(sockfd);
			sockfd = -1;
		}
	}
	freeaddrinfo(res);
	if (sockfd < 0) {
		fprintf(stderr, "Couldn't listen to port %u\n", port);
		return -EADDRINUSE;
	}
	if (listen(sockfd, 1) != 0) {
		rc = -errno;
		fprintf(stderr, "Couldn't listen to port %u: %s\n", port,
			strerror(-rc));
		close(sockfd);
		return rc;
	}
	do {
		app_sock_wait_connection(sockfd);
		connfd = accept(sockfd, NULL, NULL);
	} while (connfd < 0 && errno == EINTR);
	rc = connfd < 0 ? -errno : 0;
	close(sockfd);
	if (connfd < 0) {
		fprintf(stderr, "accept() failed: %s\n", strerror(-rc));
		return rc;
	}
	rc = pp_server_exch_fd(connfd, my, rem, n_msgs, connect_fn, arg);
	close(connfd);
	return rc;
}
