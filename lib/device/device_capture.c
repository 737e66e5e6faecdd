/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet capture of a device (--droce-capture=FILE, "capture = FILE" in a
 * [device*] section): every RoCEv2 frame the transport sends and receives,
 * written as pcapng with DPDK's rte_pcapng.
 *
 * The transport calls device_capture_burst() through its capture hook
 * (struct tp_dev_config.capture) on the owning lcore: received frames
 * after the host stack kept the RoCEv2 ones, sent frames before tx_burst
 * (a frame the link refuses is captured again when retried, as with
 * dpdk-dumpcap).  A frame lib/net held for ARP/ND comes back to the
 * transport's transmit queue when its neighbour answers and is captured
 * then, with its MAC; one dropped while held (over the budget, failed
 * resolution) is never captured.  Off, it costs the
 * transport one pointer test per burst.  On, it copies each frame into a
 * pool of its own (rte_pcapng_copy) and writes synchronously to the file:
 * a debugging tool, not for line rate.  Frames that cannot be copied are
 * counted (dropped) and the file records them in its statistics block.
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
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pcapng.h>

#include "device_private.h"

#define CAPTURE_BURST 32
#define CAPTURE_POOL 255	/* copies in flight: one burst at a time */
#define CAPTURE_SNAPLEN 9216	/* the largest frame a link carries */

struct device_capture {
	rte_pcapng_t *pcapng;
	struct rte_mempool *pool;
	uint16_t port_id;
	uint64_t written;
	uint64_t dropped;
	uint64_t start_ns;
};

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
prime_clock(struct device_capture *c)
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

int
device_capture_open(const char *path, uint16_t port_id, const char *name,
		    struct device_capture **out)
{
	char pool_name[RTE_MEMPOOL_NAMESIZE];
	struct device_capture *c;
	int fd;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->port_id = port_id;
	snprintf(pool_name, sizeof(pool_name), "droce_cap_%u", port_id);
	c->pool = rte_pktmbuf_pool_create(pool_name, CAPTURE_POOL, 0, 0,
					  (uint16_t)rte_pcapng_mbuf_size(CAPTURE_SNAPLEN),
					  SOCKET_ID_ANY);
	if (c->pool == NULL) {
		int rc = -rte_errno;

		fprintf(stderr, "droce: %s: capture pool: %s\n", name,
			rte_strerror(rte_errno));
		free(c);
		return rc;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		int rc = -errno;

		fprintf(stderr, "droce: %s: cannot create capture %s\n", name, path);
		rte_mempool_free(c->pool);
		free(c);
		return rc;
	}
	/* one interface block per ethdev port; frames name theirs by port id */
	c->pcapng = rte_pcapng_fdopen(fd, NULL, NULL, "droce", name);
	if (c->pcapng == NULL) {
		int rc = -rte_errno;

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

/* The transport's capture hook (struct tp_dev_config.capture). */
void
device_capture_burst(void *arg, struct rte_mbuf *const *pkts, uint16_t n,
		     bool tx)
{
	struct device_capture *c = arg;
	enum rte_pcapng_direction dir = tx ? RTE_PCAPNG_DIRECTION_OUT :
					     RTE_PCAPNG_DIRECTION_IN;
	struct rte_mbuf *copy[CAPTURE_BURST];

	for (uint16_t i = 0; i < n;) {
		uint16_t k = 0;
		uint64_t ts = rte_get_tsc_cycles();

		for (; i < n && k < CAPTURE_BURST; i++) {
			copy[k] = rte_pcapng_copy(c->port_id, 0, pkts[i], c->pool,
						  UINT32_MAX, ts, dir);
			if (copy[k] == NULL)
				c->dropped++;
			else
				k++;
		}
		if (k == 0)
			continue;
		if (rte_pcapng_write_packets(c->pcapng, copy, k) < 0)
			c->dropped += k;
		else
			c->written += k;
		/*
		 * 22.11's write does not free the copies (whatever its header
		 * says; dpdk-dumpcap frees them itself): without this the pool's
		 * CAPTURE_POOL copies ran out and every capture stopped there.
		 */
		rte_pktmbuf_free_bulk(copy, k);
	}
}

void
device_capture_close(struct device_capture *c)
{
	if (c == NULL)
		return;
	rte_pcapng_write_stats(c->pcapng, c->port_id, NULL, c->start_ns,
			       now_ns(), c->written + c->dropped, c->dropped);
	rte_pcapng_close(c->pcapng);	/* closes the file */
	rte_mempool_free(c->pool);
	free(c);
}
