/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_memif ports: keep DPDK 22.11's memif control plane away from the
 * lcore that uses and closes the port.
 *
 * memif runs its control channel (handshake, the peer's disconnect) in
 * EAL's interrupt thread.  On the peer's disconnect it clears the port's
 * CONNECTED flag, closes the channel and munmaps the shared regions, with
 * no lock against the application's threads.  Two races follow (seen as
 * SIGSEGV in two-process runs; README "net_memif"):
 *  1. The lcore closes the port (stop, close: queues, regions and the
 *     process-private data freed) while the interrupt thread is inside
 *     memif_intr_handler for the peer's disconnect: memif's own unregister
 *     then returns -EAGAIN, close carries on, and the handler's
 *     memif_disconnect() frees the regions of a port that is gone
 *     (rte_free under memif_free_regions, in eal-intr-thread).
 *  2. The peer disconnects while the lcore is inside rx/tx_burst, past the
 *     CONNECTED check: the regions it copies from are unmapped under it.
 *
 * The guard removes both: once every memif port of the process is up, a
 * callback running in the interrupt thread keeps that thread busy --
 * "parked" -- so memif handles no control message while droce polls the
 * port; and stop+close run inside that callback, so they never overlap a
 * memif handler.  A peer that leaves meanwhile is simply not noticed: its
 * rings stop moving, tx_burst refuses frames.  While any memif port is
 * still connecting, the callback only re-arms itself every
 * GUARD_RETRY_NS, leaving the thread to the handshake.
 */
/* rte_intr_instance_* are experimental in 22.11 */
#define ALLOW_EXPERIMENTAL_API

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>

#include "ethdev_private.h"

#define GUARD_RETRY_NS		500000	/* poll for links coming up */
#define GUARD_CLOSE_WAIT_S	10	/* then close without the guard */

/*
 * The callback hangs on a timerfd of our own, registered once per process
 * and never unregistered: every unregistration makes the interrupt thread
 * rebuild its wait list, walking all sources, and memif's listener source
 * lives in hugepage memory that rte_eal_cleanup() unmaps.  A rebuild after
 * that is a SIGSEGV, which is also why this is not an EAL alarm
 * (rte_eal_cleanup unregisters the alarm handler).  Our instance is
 * private (malloc) memory.
 */
enum guard_req_state { REQ_NONE, REQ_ASKED, REQ_CLOSED, REQ_DONE };

static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t guard_cond = PTHREAD_COND_INITIALIZER;
static struct rte_intr_handle *guard_intr;	/* NULL: not set up */
static int guard_fd = -1;			/* its timerfd */
static uint16_t guard_ports[RTE_MAX_ETHPORTS];	/* guarded, open ports */
static unsigned int guard_nb;
static struct ethdev_priv *guard_req;	/* the port to stop and close */
static enum guard_req_state guard_req_state;
static uint64_t guard_changes;		/* bumped on add/close (wakes the park) */

/* Every guarded port's link is up (as memif last set it). */
static bool
guard_all_up(void)
{
	for (unsigned int i = 0; i < guard_nb; i++) {
		struct rte_eth_link l;

		if (rte_eth_link_get_nowait(guard_ports[i], &l) != 0 ||
		    l.link_status != RTE_ETH_LINK_UP)
			return false;
	}
	return true;
}

static void
guard_forget(uint16_t port)
{
	for (unsigned int i = 0; i < guard_nb; i++) {
		if (guard_ports[i] == port) {
			guard_ports[i] = guard_ports[--guard_nb];
			return;
		}
	}
}

/* Stop and close p's port (in whichever thread calls it). */
static void
guard_stop_close(struct ethdev_priv *p)
{
	if (p->started) {
		int ret = rte_eth_dev_stop(p->port_id);

		if (ret != 0)
			ETHDEV_LOG(WARNING, "port %u: stop: %s", p->port_id,
				   rte_strerror(-ret));
		p->started = false;
	}
	rte_eth_dev_close(p->port_id);
	p->configured = false;
	p->memif_closed = true;
}

/* Make the callback run in ns nanoseconds (0 < ns < 1 s). */
static void
guard_kick(long ns)
{
	struct itimerspec t = { .it_value = { .tv_sec = 0, .tv_nsec = ns } };

	if (timerfd_settime(guard_fd, 0, &t, NULL) != 0)
		ETHDEV_LOG(WARNING, "memif guard: timerfd: %s", strerror(errno));
}

/* Runs in EAL's interrupt thread when the timerfd fires. */
static void
guard_cb(void *arg)
{
	uint64_t ticks, seen;
	ssize_t n;

	(void)arg;
	pthread_mutex_lock(&guard_lock);
	/* the EXT type leaves the reading to us (level-triggered epoll) */
	n = read(guard_fd, &ticks, sizeof(ticks));
	(void)n;
	for (;;) {
		if (guard_req_state == REQ_CLOSED) {
			/*
			 * A fence: the wait-list rebuild that memif's
			 * unregistration asked for ran before this timer's
			 * event (FIFO ready list), so the closer may go on
			 * to rte_eal_cleanup().
			 */
			guard_req_state = REQ_DONE;
			pthread_cond_broadcast(&guard_cond);
		}
		if (guard_req_state == REQ_ASKED) {
			guard_forget(guard_req->port_id);
			guard_stop_close(guard_req);
			guard_req_state = REQ_CLOSED;
			guard_changes++;
			guard_kick(1000);
			break;
		}
		if (guard_nb == 0)
			break;
		if (!guard_all_up()) {
			guard_kick(GUARD_RETRY_NS);	/* a handshake needs this thread */
			break;
		}
		/* parked: memif handles nothing until a port is added or closed */
		seen = guard_changes;
		while (seen == guard_changes && guard_req_state != REQ_ASKED)
			pthread_cond_wait(&guard_cond, &guard_lock);
	}
	pthread_mutex_unlock(&guard_lock);
}

/* Our timerfd and its callback, once per process; guard_lock held. */
static int
guard_setup(void)
{
	struct rte_intr_handle *h;
	int fd, ret;

	if (guard_intr != NULL)
		return 0;
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	if (h == NULL) {
		close(fd);
		return -ENOMEM;
	}
	ret = rte_intr_fd_set(h, fd);
	if (ret == 0)
		ret = rte_intr_type_set(h, RTE_INTR_HANDLE_EXT);
	if (ret == 0)
		ret = rte_intr_callback_register(h, guard_cb, NULL);
	if (ret != 0) {
		rte_intr_instance_free(h);
		close(fd);
		return ret;
	}
	guard_intr = h;
	guard_fd = fd;
	return 0;
}

int
ethdev_memif_guard_add(struct ethdev_priv *p)
{
	int ret;

	pthread_mutex_lock(&guard_lock);
	ret = guard_setup();
	if (ret == 0 && guard_nb >= RTE_DIM(guard_ports))
		ret = -ENOSPC;
	if (ret == 0) {
		guard_ports[guard_nb++] = p->port_id;
		guard_changes++;
		pthread_cond_broadcast(&guard_cond);	/* unpark */
		guard_kick(1000);
	}
	pthread_mutex_unlock(&guard_lock);
	if (ret == 0)
		p->memif_guarded = true;
	else
		ETHDEV_LOG(WARNING, "port %u: memif port without the guard (%s)",
			   p->port_id, rte_strerror(-ret));
	return ret;
}

/*
 * Stop and close a guarded port from the interrupt thread, waiting for it.
 * If that thread does not take the request in GUARD_CLOSE_WAIT_S (it is
 * stuck elsewhere), the port is closed here, unguarded, with a warning.
 */
void
ethdev_memif_guard_close(struct ethdev_priv *p)
{
	struct timespec deadline;
	bool ok = true;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += GUARD_CLOSE_WAIT_S;
	pthread_mutex_lock(&guard_lock);
	while (guard_req_state != REQ_NONE && ok)	/* another lcore's close */
		ok = pthread_cond_timedwait(&guard_cond, &guard_lock,
					    &deadline) == 0;
	if (ok) {
		guard_req = p;
		guard_req_state = REQ_ASKED;
		pthread_cond_broadcast(&guard_cond);	/* a parked callback */
		guard_kick(1000);			/* an idle one */
		while (ok && guard_req_state != REQ_DONE)
			ok = pthread_cond_timedwait(&guard_cond, &guard_lock,
						    &deadline) == 0;
	}
	if (guard_req == p) {
		guard_req = NULL;
		guard_req_state = REQ_NONE;
		pthread_cond_broadcast(&guard_cond);	/* the next closer */
	}
	if (!p->memif_closed) {
		guard_forget(p->port_id);
		ETHDEV_LOG(WARNING, "port %u: memif guard did not answer; closing unguarded",
			   p->port_id);
		guard_stop_close(p);
	}
	pthread_mutex_unlock(&guard_lock);
	p->memif_guarded = false;
}
