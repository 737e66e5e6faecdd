/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dq_sock.c - one message and at most one fd (SCM_RIGHTS) on an AF_UNIX
 * socket, either way: the region's memfd goes from droced to the
 * application, the application's eventfds and memfds the other way.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dq.h"

int
dq_sock_send(int sock, const void *buf, size_t len, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)(uintptr_t)buf, .iov_len = len };
	struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		h.msg_control = ctl.buf;
		h.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&h);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	}
	n = sendmsg(sock, &h, MSG_NOSIGNAL);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EPROTO;
}

ssize_t
dq_sock_recv(int sock, void *buf, size_t len, int *fd)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf) };
	ssize_t n = recvmsg(sock, &h, MSG_CMSG_CLOEXEC);

	*fd = -1;
	for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&h) : NULL; c != NULL;
	     c = CMSG_NXTHDR(&h, c)) {
		size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < nfd; i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(f));
			if (*fd < 0 && !(h.msg_flags & MSG_CTRUNC))
				*fd = f;
			else
				close(f);
		}
	}
	return n < 0 ? -errno : n;
}
