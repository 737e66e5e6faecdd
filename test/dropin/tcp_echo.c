/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_echo.c - a plain TCP program (it knows nothing of RDMA), run under
 * rdma-core's librspreload so that its sockets are rsockets on droce.
 *
 *   tcp_echo server ADDR PORT
 *       accepts one connection and echoes every byte until the peer's
 *       end, then closes; prints "ok server N" (N bytes echoed).
 *   tcp_echo client ADDR PORT TOTAL
 *       sends TOTAL bytes of a known pattern in chunks of varying sizes
 *       and checks every byte echoed: the first half blocking (write,
 *       then read, chunks of 1 byte to 16 KiB), the second non-blocking
 *       (O_NONBLOCK, poll(2), send/recv, chunks up to 256 KiB); then shutdown(SHUT_WR) and waits for the
 *       server's end (read returns 0).  Prints "ok client N".
 * Any failure: its reason on stderr, exit 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CHUNK (256 * 1024)
#define BLOCK_CHUNK (16 * 1024)

static int
die(const char *what)
{
	fprintf(stderr, "tcp_echo: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint8_t
pattern(uint64_t i)
{
	return (uint8_t)(i * 7 + i / 251 + 3);
}

static struct sockaddr_in
address(const char *ip, const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };

	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1) {
		errno = EINVAL;
		die("address");
	}
	return sin;
}

static int
server(const char *ip, const char *port)
{
	struct sockaddr_in sin = address(ip, port), peer;
	socklen_t plen = sizeof(peer);
	static uint8_t buf[MAX_CHUNK];
	uint64_t total = 0;
	int one = 1, ls, s;
	ssize_t n;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0)
		die("socket");
	if (setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0)
		die("SO_REUSEADDR");
	if (bind(ls, (struct sockaddr *)&sin, sizeof(sin)) != 0)
		die("bind");
	if (listen(ls, 4) != 0)
		die("listen");
	s = accept(ls, (struct sockaddr *)&peer, &plen);
	if (s < 0)
		die("accept");
	while ((n = recv(s, buf, sizeof(buf), 0)) > 0) {
		ssize_t off = 0;

		while (off < n) {
			ssize_t w = send(s, buf + off, (size_t)(n - off), 0);

			if (w <= 0)
				die("send");
			off += w;
		}
		total += (uint64_t)n;
	}
	if (n < 0)
		die("recv");
	close(s);
	close(ls);
	printf("ok server %llu\n", (unsigned long long)total);
	return 0;
}

/* The events of fd among events (poll, 10 s at most). */
static short
wait_fd(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };
	int rc = poll(&p, 1, 10000);

	if (rc != 1)
		die(rc == 0 ? "poll timed out" : "poll");
	if (p.revents & (POLLERR | POLLNVAL))
		die("poll: POLLERR");
	return p.revents;
}

static void
again_or_die(ssize_t n, const char *what)
{
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
		die(what);
	if (n == 0) {
		errno = ECONNRESET;
		die("early end of stream");
	}
}

/* Non-blocking: send and receive as poll(2) allows, until all came back. */
static void
xfer_nonblock(int s, const uint8_t *out, uint8_t *in, size_t len)
{
	size_t sent = 0, got = 0;

	while (got < len) {
		short ev = wait_fd(s, POLLIN | (sent < len ? POLLOUT : 0));
		ssize_t n;

		if ((ev & POLLOUT) && sent < len) {
			n = send(s, out + sent, len - sent, 0);
			again_or_die(n, "send");
			if (n > 0)
				sent += (size_t)n;
		}
		if (ev & (POLLIN | POLLHUP)) {
			n = recv(s, in + got, len - got, 0);
			again_or_die(n, "recv");
			if (n > 0)
				got += (size_t)n;
		}
	}
}

/* Blocking: the chunk written whole, then read back whole (a chunk fits
 * in the buffers both ways, so the server's echo never waits on us). */
static void
xfer_block(int s, const uint8_t *out, uint8_t *in, size_t len)
{
	size_t got = 0;
	ssize_t n = write(s, out, len);

	if (n != (ssize_t)len)
		die("write");
	while (got < len) {
		n = read(s, in + got, len - got);
		again_or_die(n, "read");
		got += (size_t)n;
	}
}

static int
client(const char *ip, const char *port, uint64_t total)
{
	struct sockaddr_in sin = address(ip, port);
	uint8_t *out = malloc(MAX_CHUNK), *in = malloc(MAX_CHUNK), c;
	uint64_t done = 0, seed = 12345;
	int one = 1, s;

	if (out == NULL || in == NULL)
		die("malloc");
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		die("socket");
	if (setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
		die("TCP_NODELAY");
	if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) != 0)
		die("connect");
	while (done < total) {
		int nonblock = done >= total / 2;
		size_t len, i;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		len = (size_t)(1 + (seed >> 33) % MAX_CHUNK) >> ((seed >> 20) % 12);
		if (!nonblock && len > BLOCK_CHUNK)
			len = BLOCK_CHUNK;
		if (len == 0)
			len = 1;
		if (len > total - done)
			len = (size_t)(total - done);
		if (nonblock && !(fcntl(s, F_GETFL) & O_NONBLOCK) &&
		    fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK) != 0)
			die("O_NONBLOCK");
		for (i = 0; i < len; i++)
			out[i] = pattern(done + i);
		memset(in, 0, len);
		if (nonblock)
			xfer_nonblock(s, out, in, len);
		else
			xfer_block(s, out, in, len);
		for (i = 0; i < len; i++) {
			if (in[i] != pattern(done + i)) {
				fprintf(stderr, "tcp_echo: byte %llu: 0x%02x, expected 0x%02x\n",
					(unsigned long long)(done + i), in[i], pattern(done + i));
				return 1;
			}
		}
		done += len;
	}
	if (shutdown(s, SHUT_WR) != 0)
		die("shutdown");
	if (fcntl(s, F_SETFL, fcntl(s, F_GETFL) & ~O_NONBLOCK) != 0)
		die("blocking");
	if (read(s, &c, 1) != 0) {
		errno = EPROTO;
		die("no end of stream after shutdown");
	}
	close(s);
	free(out);
	free(in);
	printf("ok client %llu\n", (unsigned long long)done);
	return 0;
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "server") == 0)
		return server(argv[2], argv[3]);
	if (argc == 5 && strcmp(argv[1], "client") == 0)
		return client(argv[2], argv[3], strtoull(argv[4], NULL, 0));
	fprintf(stderr, "usage: tcp_echo server ADDR PORT | client ADDR PORT TOTAL\n");
	return 2;
}
