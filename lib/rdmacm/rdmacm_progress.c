/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdmacm_progress.c - the CM's passes while the program waits elsewhere.
 *
 * The kernel's rdma_cm makes a channel's fd readable when an event
 * arrives, whatever the program does; libfabric's verbs provider waits so,
 * in epoll on the fd with a non-blocking channel.  lib/cm has no thread
 * (its passes run inside the event calls), so while an event channel
 * exists one thread here runs a pass (droce_rdma_cm_progress) every
 * RDMACM_PROGRESS_US: the events land on their channels and wake the fds.
 * lib/cm serves from it only contexts whose engine any thread may run (a
 * transport lcore, or the drop-in's default progress thread).
 */
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "rdmacm_private.h"

#define RDMACM_PROGRESS_US 1000

static struct {
	pthread_mutex_t lock;
	unsigned int channels;
	pthread_t thread;
	bool running;
	bool stop;	/* read by the thread (atomic) */
} prog = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void *
progress_main(void *arg)
{
	const struct timespec period = { .tv_nsec = RDMACM_PROGRESS_US * 1000L };

	(void)arg;
	while (!__atomic_load_n(&prog.stop, __ATOMIC_ACQUIRE)) {
		droce_rdma_cm_progress();
		nanosleep(&period, NULL);
	}
	return NULL;
}

void
rdmacm_progress_hold(void)
{
	pthread_mutex_lock(&prog.lock);
	if (prog.channels++ == 0 && !prog.running) {
		__atomic_store_n(&prog.stop, false, __ATOMIC_RELEASE);
		/* without the thread, events still come inside the event calls */
		prog.running = pthread_create(&prog.thread, NULL, progress_main, NULL) == 0;
	}
	pthread_mutex_unlock(&prog.lock);
}

void
rdmacm_progress_release(void)
{
	pthread_mutex_lock(&prog.lock);
	if (--prog.channels == 0 && prog.running) {
		__atomic_store_n(&prog.stop, true, __ATOMIC_RELEASE);
		pthread_join(prog.thread, NULL);
		prog.running = false;
	}
	pthread_mutex_unlock(&prog.lock);
}
