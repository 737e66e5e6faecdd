/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "app_sock.h"

/* idle calls between two looks at the control socket */
#define APP_SOCK_SPINS 64

static void (*idle_fn)(void *arg);
static void *idle_arg;

void
app_sock_set_idle(void (*fn)(void *arg), void *arg)
{
	idle_fn = fn;
	idle_arg = arg;
}

void
app_sock_idle(void)
{
	if (idle_fn != NULL)
		idle_fn(idle_arg);
}

void
app_sock_wait_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	unsigned int spins = 0;

	if (idle_fn == NULL)
		return;			/* the read blocks instead */
	/*
	 * Busy: a passive side (the READ/atomic responder of read_lat, say)
	 * serves its peer only from idle_fn, so sleeping here, even 1 ms in
	 * poll(), puts that sleep into every round trip.  The socket is a
	 * control channel: looking at it every APP_SOCK_SPINS calls is enough.
	 */
	for (;;) {
		idle_fn(idle_arg);
		if (++spins % APP_SOCK_SPINS != 0)
			continue;
		if (poll(&pfd, 1, 0) > 0 && pfd.revents != 0)
			return;
	}
}

void
app_sock_wait_connection(int listen_fd)
{
	struct pollfd pfd = { .fd = listen_fd, .events = POLLIN };

	if (idle_fn == NULL)
		return;			/* accept() blocks instead */
	while (poll(&pfd, 1, 1) == 0 || pfd.revents == 0)
		idle_fn(idle_arg);
}

ssize_t
app_sock_read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r;

		app_sock_wait_readable(fd);
		r = read(fd, (char *)buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int
app_sock_write_full(int fd, const void *buf, size_t n)
{
	size_t put = 0;

	while (put < n) {
		ssize_t r = send(fd, (const char *)buf + put, n - put, MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		put += (size_t)r;
	}
	return 0;
}
