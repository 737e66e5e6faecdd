/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Adaptive progress: run-to-completion with a progress thread behind it,
 * the third run mode (tp_dev_run_adaptive; the drop-in libibverbs'
 * default).  The engine runs inside the application's verbs calls as in
 * run-to-completion, and a plain pthread runs it while no application
 * thread is in droce, so that a program waiting outside the verbs
 * (perftest's passive side in its TCP exchange, a thread blocked in
 * poll() on a completion channel or async_fd) keeps its peers served.
 * The hand-off is the runner token (tp_run.h): one runner at a time.
 *
 * The thread's loop, as VPP's rx-mode adaptive or l3fwd-power:
 *   - an application thread came in since the last look (the token word
 *     moved): it runs the engine; nap, first PT_APP_NAP_MIN, doubling to
 *     PT_APP_NAP_MAX while it stays (a spinning poller costs the thread a
 *     wake-up per millisecond); a nap it did not come in during is the
 *     quiet period after which the thread takes over;
 *   - else take the token, run one round, give it back (an application
 *     thread waiting for it gets it between two rounds: tp_run_take_slow);
 *   - poll on while traffic flows (a packet, a ready QP or a queued frame
 *     in the last PT_LINGER), then sleep, backing off from PT_IDLE_NAP_MIN
 *     to PT_IDLE_NAP_MAX: an idle process costs a round per millisecond.
 *     The idle sleep is a futex wait that the application's next give
 *     ends (tp_run_kick), so a post to a sleeping engine is not delayed
 *     by the back-off.  PT_IDLE_NAP_MAX bounds how late a timer runs
 *     (a retransmit timeout is 4.096 us * 2^timeout, IBTA 9.7.6.1.3:
 *     67 ms at perftest's 14).
 * None of the PMDs droce runs on here (net_af_packet, net_memif, net_ring)
 * has an rx interrupt, so the sleeps are timed.
 *
 * lib/protection: the thread has a QSBR reader slot of its own, online
 * only while it runs a round (the engine's slot is the application
 * thread's, which prot_ctl_lock takes offline during that thread's own
 * control calls), and after each round it reports the application's slot
 * quiescent, as the application's own rounds do.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "tp_private.h"

#define PT_APP_NAP_MIN_NS 20000u
#define PT_APP_NAP_MAX_NS 1000000u
#define PT_LINGER_NS 200000u
#define PT_IDLE_NAP_MIN_NS 10000u
#define PT_IDLE_NAP_MAX_NS 1000000u
/* an application thread's spins for the token before it yields its core */
#define PT_TAKE_SPINS 4096

__thread char tp_run_me;

struct tp_adaptive {
	struct tp_dev *dev;
	pthread_t thread;
	uint32_t stop;
	int reader;		/* its QSBR slot */
	int start_rc;		/* the thread's registration, then 0 */
	uint32_t started;
};

void
tp_run_take_slow(struct tp_run *r)
{
	unsigned int spins = 0;

	__atomic_store_n(&r->want, 1, __ATOMIC_RELAXED);
	for (;;) {
		uint32_t w = __atomic_load_n(&r->word, __ATOMIC_RELAXED);

		if ((w & 1) == 0 &&
		    __atomic_compare_exchange_n(&r->word, &w, w + 1, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
		if (++spins % PT_TAKE_SPINS == 0)
			sched_yield();	/* the holder may be off its core */
		else
			rte_pause();
	}
	__atomic_store_n(&r->want, 0, __ATOMIC_RELAXED);
}

static long
futex(uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

void
tp_run_kick(struct tp_run *r)
{
	if (__atomic_exchange_n(&r->idle, 0, __ATOMIC_ACQ_REL) != 0)
		futex(&r->idle, FUTEX_WAKE_PRIVATE, 1, NULL);
}

static void
ns_to_ts(uint64_t ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ns / 1000000000u);
	ts->tv_nsec = (long)(ns % 1000000000u);
}

/* An idle engine: sleep until ns passed or the application gave the token. */
static void
pt_sleep_idle(struct tp_run *r, uint64_t ns)
{
	struct timespec ts;

	ns_to_ts(ns, &ts);
	__atomic_store_n(&r->idle, 1, __ATOMIC_SEQ_CST);
	futex(&r->idle, FUTEX_WAIT_PRIVATE, 1, &ts);
	__atomic_store_n(&r->idle, 0, __ATOMIC_RELAXED);
}

static void
pt_nap(uint64_t ns)
{
	struct timespec ts;

	ns_to_ts(ns, &ts);
	nanosleep(&ts, NULL);
}

/* One round with the token held; true: the engine has work (traffic). */
static bool
pt_round(struct tp_adaptive *pt, struct tp_engine *eng)
{
	struct prot_tables *prot = pt->dev->prot;
	int app_reader = eng->prot_reader;
	int n;

	prot_reader_online(prot, pt->reader);
	eng->prot_reader = pt->reader;
	n = tp_engine_progress(eng);
	eng->prot_reader = app_reader;
	prot_reader_offline(prot, pt->reader);
	/* the application reads the tables only with the token: it holds no
	 * pointer now, and a revoking call of another of its threads must
	 * not wait for it to come back into droce */
	prot_reader_quiescent(prot, app_reader);
	return n > 0 || eng->sched.nready != 0 || eng->txq_len != 0;
}

static uint64_t
ns_to_tsc(const struct tp_dev *dev, uint64_t ns)
{
	return ns * dev->tsc_hz / 1000000000u;
}

static void
pt_loop(struct tp_adaptive *pt)
{
	struct tp_dev *dev = pt->dev;
	struct tp_run *r = &dev->run;
	const uint64_t linger = ns_to_tsc(dev, PT_LINGER_NS);
	uint64_t app_nap = PT_APP_NAP_MIN_NS, idle_nap = 0, last_busy = 0;
	uint32_t seen = __atomic_load_n(&r->word, __ATOMIC_ACQUIRE);

	while (!__atomic_load_n(&pt->stop, __ATOMIC_ACQUIRE)) {
		uint32_t w = __atomic_load_n(&r->word, __ATOMIC_ACQUIRE);
		uint64_t now;

		if (w != seen || (w & 1) != 0 ||
		    __atomic_load_n(&r->want, __ATOMIC_RELAXED) != 0) {
			/* an application thread is in droce, or was just */
			seen = w;
			pt_nap(app_nap);
			app_nap = RTE_MIN(app_nap * 2, PT_APP_NAP_MAX_NS);
			/* taking over from it: traffic is likely, poll first */
			last_busy = rte_get_timer_cycles();
			idle_nap = 0;
			continue;
		}
		if (!__atomic_compare_exchange_n(&r->word, &w, w + 1, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		now = rte_get_timer_cycles();
		if (pt_round(pt, dev->eng[0]))
			last_busy = now;
		seen = w + 2;
		__atomic_store_n(&r->word, seen, __ATOMIC_RELEASE);
		app_nap = PT_APP_NAP_MIN_NS;
		if (now - last_busy < linger) {
			idle_nap = 0;
			rte_pause();
			continue;
		}
		idle_nap = idle_nap == 0 ? PT_IDLE_NAP_MIN_NS :
			   RTE_MIN(idle_nap * 2, PT_IDLE_NAP_MAX_NS);
		pt_sleep_idle(r, idle_nap);
	}
}

static void *
pt_main(void *arg)
{
	struct tp_adaptive *pt = arg;
	int reader;

	/* sleeps as asked: the default slack (50 us) would round them up */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	reader = prot_reader_register(pt->dev->prot);
	if (reader >= 0)
		prot_reader_offline(pt->dev->prot, reader);
	pt->reader = reader;
	pt->start_rc = reader < 0 ? reader : 0;
	__atomic_store_n(&pt->started, 1, __ATOMIC_RELEASE);
	if (reader < 0)
		return NULL;
	pt_loop(pt);
	prot_reader_unregister(pt->dev->prot, reader);
	return NULL;
}

/*
 * Not on the application's lcore: a thread created by an EAL lcore
 * inherits its one-core affinity, and the thread must be free to run
 * where the application is not (any CPU the process may use).
 */
static void
pt_unpin(pthread_attr_t *attr)
{
	cpu_set_t all;

	CPU_ZERO(&all);
	for (int c = 0; c < CPU_SETSIZE; c++)
		CPU_SET(c, &all);
	pthread_attr_setaffinity_np(attr, sizeof(all), &all);
}

int
tp_dev_run_adaptive(struct tp_dev *dev)
{
	struct tp_adaptive *pt;
	pthread_attr_t attr;
	int rc;

	if (dev == NULL || dev->link == NULL || tp_dev_dedicated(dev))
		return -EINVAL;
	if (dev->run.pt != NULL)
		return -EBUSY;
	pt = calloc(1, sizeof(*pt));
	if (pt == NULL)
		return -ENOMEM;
	pt->dev = dev;
	pthread_attr_init(&attr);
	pt_unpin(&attr);
	rc = pthread_create(&pt->thread, &attr, pt_main, pt);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		free(pt);
		return -rc;
	}
	while (!__atomic_load_n(&pt->started, __ATOMIC_ACQUIRE))
		sched_yield();
	if (pt->start_rc != 0) {
		rc = pt->start_rc;
		pthread_join(pt->thread, NULL);
		free(pt);
		return rc;
	}
	pthread_setname_np(pt->thread, "droce-progress");
	dev->run.pt = pt;
	return 0;
}

void
tp_dev_stop_adaptive(struct tp_dev *dev)
{
	struct tp_adaptive *pt = dev->run.pt;

	if (pt == NULL)
		return;
	__atomic_store_n(&pt->stop, 1, __ATOMIC_RELEASE);
	tp_run_kick(&dev->run);
	pthread_join(pt->thread, NULL);
	dev->run.pt = NULL;
	free(pt);
}

bool
tp_dev_self_driven(const struct tp_dev *dev)
{
	return dev != NULL && (dev->run.pt != NULL || tp_dev_dedicated(dev));
}
