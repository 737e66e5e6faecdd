/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsocket_poll.c - rpoll and rselect over rsockets and ordinary
 * descriptors together.
 *
 * An rsocket's readiness comes from its CQ (polled, which runs droce's
 * engine), its CM events (a listener's requests, a connection's steps)
 * and its state.  While nothing is ready, rpoll keeps checking for
 * RS_SPIN_NS, then sleeps in poll(2) at most RS_SLEEP_MS at a time on the
 * program's descriptors and on each rsocket's wake descriptor: its
 * completion channel (armed) once connected, the shared CM channel
 * before.  Each wake-up checks everything again, so droce also progresses
 * when nothing signals a descriptor (its engine idle between calls).
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/select.h>

#include <rdma/rsocket.h>

#include "rsocket_private.h"

static short
connected_events(struct rsock *rs, short events)
{
	short revents = 0;

	rs_process(rs);
	if ((rs->state & RSS_CONNECTED) && (rs_cm_events(rs, NULL) & RSE_DISCONNECTED))
		rs->state = RSS_DISCONNECTED;
	if ((events & POLLIN) && (rs_have_rdata(rs) || !(rs->state & RSS_READABLE)))
		revents |= POLLIN;
	if ((events & POLLOUT) && rs_can_send(rs))
		revents |= POLLOUT;
	/* the peer's last data is read before its hang-up shows: a program
	 * that stops at POLLHUP (rstream -T a) gets every byte */
	if (rs->state == RSS_DISCONNECTED && !rs_have_rdata(rs))
		revents |= POLLHUP;
	else if (!(rs->state & (RSS_CONNECTED | RSS_DISCONNECTED)))
		revents |= POLLERR;
	return revents;
}

static short
rs_revents(struct rsock *rs, short events)
{
	short revents = 0;

	pthread_mutex_lock(&rs->lock);
	if (rs->type == SOCK_DGRAM) {
		revents = rs_dgram_revents(rs, events);
		pthread_mutex_unlock(&rs->lock);
		return revents;
	}
	if (rs->state & RSS_OPENING)
		rs_connect_step(rs);
	if (rs->state & (RSS_CONNECTED | RSS_DISCONNECTED | RSS_ERROR)) {
		revents = connected_events(rs, events);
	} else if (rs->state == RSS_LISTENING) {
		rs_cm_pump();
		pthread_mutex_lock(&rs_cm.lock);
		if (rs->requests != NULL)
			revents = events & POLLIN;
		pthread_mutex_unlock(&rs_cm.lock);
	} else if (rs->state == RSS_CONNECT_ERROR) {
		revents = (events & (POLLIN | POLLOUT)) | POLLERR;
	}
	pthread_mutex_unlock(&rs->lock);
	return revents;
}

/* Every descriptor checked once, without waiting: the count of ready. */
static int
check_all(struct pollfd *fds, nfds_t nfds)
{
	int cnt = 0;
	nfds_t i;

	for (i = 0; i < nfds; i++) {
		struct rsock *rs = rs_lookup(fds[i].fd);

		fds[i].revents = 0;
		if (rs != NULL)
			fds[i].revents = rs_revents(rs, fds[i].events);
		else if (fds[i].fd >= 0)
			poll(&fds[i], 1, 0);
		if (fds[i].revents != 0)
			cnt++;
	}
	return cnt;
}

/* The descriptors to sleep on: the program's, and each rsocket's. */
static void
wake_fds(const struct pollfd *fds, struct pollfd *w, nfds_t nfds)
{
	nfds_t i;

	for (i = 0; i < nfds; i++) {
		struct rsock *rs = rs_lookup(fds[i].fd);

		w[i] = (struct pollfd){ .fd = fds[i].fd, .events = fds[i].events };
		if (rs == NULL)
			continue;
		w[i].events = POLLIN;
		pthread_mutex_lock(&rs->lock);
		if (rs->type == SOCK_DGRAM) {
			int fd = rs_dgram_arm(rs);

			w[i].fd = fd >= 0 ? fd : rs_cm.ch->fd;
		} else if ((rs->state & RSS_CONNECTED) && rs->cq_channel != NULL) {
			rs_arm(rs);
			w[i].fd = rs->cq_channel->fd;
		} else {
			w[i].fd = rs_cm.ch->fd;
		}
		pthread_mutex_unlock(&rs->lock);
	}
}

static bool
any_rsocket(const struct pollfd *fds, nfds_t nfds)
{
	nfds_t i;

	for (i = 0; i < nfds; i++)
		if (rs_lookup(fds[i].fd) != NULL)
			return true;
	return false;
}

int
rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	uint64_t start = rs_now_ns();
	struct pollfd *w = NULL;
	int n;

	/* librspreload sends every poll(2) here: one without rsockets is one */
	if (!any_rsocket(fds, nfds))
		return poll(fds, nfds, timeout);

	for (;;) {
		uint64_t waited;
		int slice;

		n = check_all(fds, nfds);
		if (n != 0 || timeout == 0)
			break;
		waited = rs_now_ns() - start;
		if (timeout > 0 && waited >= (uint64_t)timeout * 1000000ull)
			break;
		if (waited < RS_SPIN_NS) {
			sched_yield();
			continue;
		}
		if (w == NULL) {
			w = calloc(nfds != 0 ? nfds : 1, sizeof(*w));
			if (w == NULL) {
				n = rs_fail(ENOMEM);
				break;
			}
		}
		wake_fds(fds, w, nfds);
		slice = RS_SLEEP_MS;
		if (timeout > 0 && (uint64_t)timeout * 1000000ull - waited < 1000000ull)
			slice = 1;
		if (poll(w, nfds, slice) < 0 && errno == EINTR) {
			n = -1;
			break;
		}
	}
	free(w);
	return n;
}

static struct pollfd *
select_to_poll(int *nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds)
{
	struct pollfd *fds = calloc(*nfds > 0 ? *nfds : 1, sizeof(*fds));
	int fd, n = 0;

	if (fds == NULL)
		return NULL;
	for (fd = 0; fd < *nfds; fd++) {
		short ev = 0;
		bool any = false;

		if (readfds != NULL && FD_ISSET(fd, readfds)) {
			ev |= POLLIN;
			any = true;
		}
		if (writefds != NULL && FD_ISSET(fd, writefds)) {
			ev |= POLLOUT;
			any = true;
		}
		if (exceptfds != NULL && FD_ISSET(fd, exceptfds))
			any = true;
		if (any)
			fds[n++] = (struct pollfd){ .fd = fd, .events = ev };
	}
	*nfds = n;
	return fds;
}

static int
poll_to_select(int nfds, const struct pollfd *fds, fd_set *readfds, fd_set *writefds,
	       fd_set *exceptfds)
{
	int i, cnt = 0;

	for (i = 0; i < nfds; i++) {
		if (readfds != NULL && (fds[i].revents & (POLLIN | POLLHUP))) {
			FD_SET(fds[i].fd, readfds);
			cnt++;
		}
		if (writefds != NULL && (fds[i].revents & POLLOUT)) {
			FD_SET(fds[i].fd, writefds);
			cnt++;
		}
		if (exceptfds != NULL && (fds[i].revents & ~(POLLIN | POLLOUT))) {
			FD_SET(fds[i].fd, exceptfds);
			cnt++;
		}
	}
	return cnt;
}

int
rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	struct timeval *timeout)
{
	int to = timeout == NULL ? -1 : (int)(timeout->tv_sec * 1000 + timeout->tv_usec / 1000);
	struct pollfd *fds = select_to_poll(&nfds, readfds, writefds, exceptfds);
	int rc;

	if (fds == NULL)
		return rs_fail(ENOMEM);
	rc = rpoll(fds, (nfds_t)nfds, to);
	if (readfds != NULL)
		FD_ZERO(readfds);
	if (writefds != NULL)
		FD_ZERO(writefds);
	if (exceptfds != NULL)
		FD_ZERO(exceptfds);
	if (rc > 0)
		rc = poll_to_select(nfds, fds, readfds, writefds, exceptfds);
	free(fds);
	return rc;
}
