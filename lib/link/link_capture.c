/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_capture.c - capture around any link (droce_link_tap_wrap,
 * droce_link_capture_wrap): every frame of every queue, received as the
 * wrapped link hands it over (before anyone parses it: a frame the
 * transport drops as malformed is seen too) and sent as it is offered to
 * the wrapped link (after it was built), on the lcore that polls that
 * queue.  The transport and the host stack have no hook for it: what
 * they drive is a link like any other, as DPDK's capture hangs on an
 * ethdev's rx/tx callbacks rather than inside its users.
 *
 * A frame the wrapped link refuses is seen again when it is offered
 * again (as with dpdk-dumpcap).  The tap must not keep or modify the
 * mbufs.  Not capturing costs nothing: a link is wrapped only when asked.
 *
 * The pcapng tap copies each frame into a pool of its own
 * (rte_pcapng_copy, queue and direction recorded) and writes each burst
 * with one writev(): the queues' lcores share the pool (a multi-producer
 * mempool) and the file (a regular file's write is not interleaved with
 * another's), and count per queue.  A debugging tool, not for line rate.
 * Frames that cannot be copied or written are counted (dropped) and the
 * file's statistics block records them.
 */
#define ALLOW_EXPERIMENTAL_API	/* rte_pcapng is experimental in 22.11 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_pcapng.h>

#include "droce_link.h"

#define TAP_MAX_QUEUES 16
#define PCAPNG_BURST 32
#define PCAPNG_POOL 1023	/* copies in flight: a burst per queue at a time */
#define PCAPNG_SNAPLEN 9216	/* the largest frame a link carries */

struct pcapng_tap {
	rte_pcapng_t *pcapng;
	struct rte_mempool *pool;
	uint16_t port_id;
	uint64_t start_ns;
	/* per queue: written by that queue's lcore only */
	uint64_t written[TAP_MAX_QUEUES];
	uint64_t dropped[TAP_MAX_QUEUES];
};

struct tap_link {
	struct droce_link link;		/* what the transport sees */
	struct droce_link *inner;
	droce_link_tap_fn *fn;
	void *arg;
	struct pcapng_tap *pcap;	/* droce_link_capture_wrap's, or NULL */
};

static struct tap_link *
tap_of(struct droce_link *link)
{
	return link->priv;
}

static uint16_t
tap_rx_q(struct droce_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct tap_link *t = tap_of(link);
	uint16_t k = droce_link_rx_q(t->inner, q, pkts, n);

	if (k != 0)
		t->fn(t->arg, q, pkts, k, false);
	return k;
}

static uint16_t
tap_tx_q(struct droce_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct tap_link *t = tap_of(link);

	if (n != 0)
		t->fn(t->arg, q, pkts, n, true);
	return droce_link_tx_q(t->inner, q, pkts, n);
}

static uint16_t
tap_rx(struct droce_link *link, struct rte_mbuf **pkts, uint16_t n)
{
	return tap_rx_q(link, 0, pkts, n);
}

static uint16_t
tap_tx(struct droce_link *link, struct rte_mbuf **pkts, uint16_t n)
{
	return tap_tx_q(link, 0, pkts, n);
}

static int
tap_status(struct droce_link *link)
{
	return droce_link_status(tap_of(link)->inner);
}

static void pcapng_tap_close(struct pcapng_tap *c);

static void
tap_close(struct droce_link *link)
{
	droce_link_close(droce_link_tap_unwrap(link));
}

static const struct droce_link_ops tap_ops = {
	.rx_burst = tap_rx,
	.tx_burst = tap_tx,
	.close = tap_close,
	.rx_burst_q = tap_rx_q,
	.tx_burst_q = tap_tx_q,
	.link_status = tap_status,
};

int
droce_link_tap_wrap(struct droce_link *inner, droce_link_tap_fn *fn, void *arg,
		    struct droce_link **out)
{
	struct tap_link *t;

	if (inner == NULL || fn == NULL || out == NULL ||
	    droce_link_queues(inner) > TAP_MAX_QUEUES)
		return -EINVAL;
	t = rte_zmalloc("droce_link_tap", sizeof(*t), RTE_CACHE_LINE_SIZE);
	if (t == NULL)
		return -ENOMEM;
	t->inner = inner;
	t->fn = fn;
	t->arg = arg;
	t->link = *inner;
	t->link.ops = &tap_ops;
	t->link.priv = t;
	t->link.nb_queues = droce_link_queues(inner);
	*out = &t->link;
	return 0;
}

struct droce_link *
droce_link_tap_inner(struct droce_link *link)
{
	return link != NULL && link->ops == &tap_ops ? tap_of(link)->inner : link;
}

struct droce_link *
droce_link_tap_unwrap(struct droce_link *link)
{
	struct droce_link *inner;
	struct tap_link *t;

	if (link == NULL || link->ops != &tap_ops)
		return link;
	t = tap_of(link);
	inner = t->inner;
	pcapng_tap_close(t->pcap);
	rte_free(t);
	return inner;
}

/* ---- the pcapng tap ---------------------------------------------------------- */

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * DPDK 22.11's rte_pcapng sets its TSC -> wall clock reference lazily, at
 * the first rte_pcapng_copy(): a timestamp read before that call is
 * "before" the reference, and the negative delta shifts the reference by
 * centuries (every frame then dated ~2305).  Make the first copy here,
 * with a timestamp slightly ahead, and throw it away.
 */
static void
prime_clock(struct pcapng_tap *c)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(c->pool), *copy;

	if (m == NULL)
		return;
	rte_pktmbuf_append(m, RTE_ETHER_MIN_LEN);
	copy = rte_pcapng_copy(c->port_id, 0, m, c->pool, UINT32_MAX,
			       rte_get_tsc_cycles() + rte_get_tsc_hz() / 1000,
			       RTE_PCAPNG_DIRECTION_UNKNOWN);
	rte_pktmbuf_free(copy);
	rte_pktmbuf_free(m);
}

static void
pcapng_tap(void *arg, uint16_t q, struct rte_mbuf *const *pkts, uint16_t n, bool tx)
{
	struct pcapng_tap *c = arg;
	enum rte_pcapng_direction dir = tx ? RTE_PCAPNG_DIRECTION_OUT :
					     RTE_PCAPNG_DIRECTION_IN;
	struct rte_mbuf *copy[PCAPNG_BURST];

	for (uint16_t i = 0; i < n;) {
		uint16_t k = 0;
		uint64_t ts = rte_get_tsc_cycles();

		for (; i < n && k < PCAPNG_BURST; i++) {
			copy[k] = rte_pcapng_copy(c->port_id, q, pkts[i], c->pool,
						  UINT32_MAX, ts, dir);
			if (copy[k] == NULL)
				c->dropped[q]++;
			else
				k++;
		}
		if (k == 0)
			continue;
		if (rte_pcapng_write_packets(c->pcapng, copy, k) < 0)
			c->dropped[q] += k;
		else
			c->written[q] += k;
		/*
		 * 22.11's write does not free the copies (whatever its header
		 * says; dpdk-dumpcap frees them itself): without this the pool
		 * ran out and every capture stopped there.
		 */
		rte_pktmbuf_free_bulk(copy, k);
	}
}

static void
pcapng_tap_close(struct pcapng_tap *c)
{
	uint64_t written = 0, dropped = 0;

	if (c == NULL)
		return;
	for (unsigned int q = 0; q < TAP_MAX_QUEUES; q++) {
		written += c->written[q];
		dropped += c->dropped[q];
	}
	rte_pcapng_write_stats(c->pcapng, c->port_id, NULL, c->start_ns, now_ns(),
			       written + dropped, dropped);
	rte_pcapng_close(c->pcapng);	/* closes the file */
	rte_mempool_free(c->pool);
	free(c);
}

static int
pcapng_tap_open(const char *path, uint16_t port_id, const char *name,
		struct pcapng_tap **out)
{
	static uint32_t seq;
	uint32_t id = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);
	char pool_name[RTE_MEMPOOL_NAMESIZE];
	struct pcapng_tap *c;
	int fd, rc;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->port_id = port_id;
	snprintf(pool_name, sizeof(pool_name), "droce_cap_%u_%u", port_id, id);
	c->pool = rte_pktmbuf_pool_create(pool_name, PCAPNG_POOL, 0, 0,
					  (uint16_t)rte_pcapng_mbuf_size(PCAPNG_SNAPLEN),
					  SOCKET_ID_ANY);
	if (c->pool == NULL) {
		rc = -rte_errno;
		fprintf(stderr, "droce: %s: capture pool: %s\n", name,
			rte_strerror(rte_errno));
		free(c);
		return rc;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		fprintf(stderr, "droce: %s: cannot create capture %s\n", name, path);
		rte_mempool_free(c->pool);
		free(c);
		return rc;
	}
	/* one interface block per ethdev port; frames name theirs by port id */
	c->pcapng = rte_pcapng_fdopen(fd, NULL, NULL, "droce", name);
	if (c->pcapng == NULL) {
		rc = -rte_errno;
		close(fd);
		rte_mempool_free(c->pool);
		free(c);
		return rc != 0 ? rc : -EIO;
	}
	prime_clock(c);
	c->start_ns = now_ns();
	*out = c;
	return 0;
}

int
droce_link_capture_wrap(struct droce_link *inner, const char *path, uint16_t port_id,
			const char *name, struct droce_link **out)
{
	struct pcapng_tap *c = NULL;
	int rc;

	if (inner == NULL || path == NULL || out == NULL ||
	    droce_link_queues(inner) > TAP_MAX_QUEUES)
		return -EINVAL;
	rc = pcapng_tap_open(path, port_id, name != NULL ? name : inner->name, &c);
	if (rc != 0)
		return rc;
	rc = droce_link_tap_wrap(inner, pcapng_tap, c, out);
	if (rc != 0) {
		pcapng_tap_close(c);
		return rc;
	}
	tap_of(*out)->pcap = c;
	return 0;
}
