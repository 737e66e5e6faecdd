/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The link-driver interface: what the transport needs from "a wire".
 *
 * A link moves whole Ethernet frames in rte_mbufs and knows nothing about
 * RoCE: protocol logic never lives in drivers/.  Drivers implement
 * struct droce_link_ops (drivers/vwire: an in-process virtual wire with
 * fault injection; drivers/ethdev: any DPDK port) and the transport calls
 * them only through the inline wrappers below, the way rte_eth_rx_burst()
 * calls into a PMD.
 *
 * Threading: a link is polled by exactly one lcore (the one owning the
 * QPs that use it); rx_burst and tx_burst are not thread-safe.
 *
 * Queues: a link may offer nb_queues > 1 rx/tx queue pairs (drivers/ethdev
 * with RSS or af_packet fanout), each polled by one lcore of its own
 * through rx_burst_q / tx_burst_q.  Queue 0 of a link without the _q ops
 * is rx_burst / tx_burst, so single-queue drivers (drivers/vwire) need
 * nothing new.
 *
 * Drivers by name: a driver that can be opened from a device's
 * configuration registers a struct droce_link_driver at load time
 * (RTE_INIT); lib/device finds it with droce_link_driver_find() and never
 * includes drivers/.  Executables link such drivers whole (meson
 * link_whole) so that their constructors are kept.
 */
#ifndef DROCE_LINK_H
#define DROCE_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

struct droce_link;

struct droce_link_ops {
	/* Receive up to n frames; the caller owns (and frees) what it gets. */
	uint16_t (*rx_burst)(struct droce_link *link, struct rte_mbuf **pkts,
			     uint16_t n);
	/*
	 * Send up to n frames; returns how many were taken.  The link owns the
	 * taken mbufs (and frees them); the caller keeps the rest.
	 */
	uint16_t (*tx_burst)(struct droce_link *link, struct rte_mbuf **pkts,
			     uint16_t n);
	/* Release the link and everything it holds. */
	void (*close)(struct droce_link *link);
	/* Optional: the same on queue q < nb_queues (q 0 may differ from the
	 * above only in which hardware queue it uses). */
	uint16_t (*rx_burst_q)(struct droce_link *link, uint16_t q,
			       struct rte_mbuf **pkts, uint16_t n);
	uint16_t (*tx_burst_q)(struct droce_link *link, uint16_t q,
			       struct rte_mbuf **pkts, uint16_t n);
	/* Optional: the carrier, 1 up, 0 down, < 0 unknown.  Asked every few
	 * ms by the lcore that polls queue 0 (port events). */
	int (*link_status)(struct droce_link *link);
};

/*
 * Offloads a link has enabled (struct droce_link.offloads).  A driver sets
 * them from what its port offers and configures; the transport decides
 * per frame what to ask of them.
 *   TX_IPV4_CKSUM: frames with RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM,
 *     l2_len and l3_len set and the header checksum field 0 get their IPv4
 *     header checksum from the port (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM).
 *   RX_IPV4_CKSUM: received IPv4 frames carry the port's verdict in
 *     RTE_MBUF_F_RX_IP_CKSUM_MASK (GOOD, BAD, or UNKNOWN/NONE: not
 *     checked; RTE_ETH_RX_OFFLOAD_IPV4_CKSUM).
 *   TX_ZC: the port takes multi-segment frames (RTE_ETH_TX_OFFLOAD_
 *     MULTI_SEGS) whose segments may be external buffers
 *     (rte_pktmbuf_attach_extbuf), and zero copy pays on it from
 *     tx_zc_min payload bytes: the transport then sends a payload of at
 *     least that many bytes from the application's registered memory
 *     (headers, payload, pad + ICRC: three segments) instead of copying
 *     it into the frame.  The port reads the memory when it sends and
 *     frees the frame after (or its peer does, net_ring).
 */
#define DROCE_LINK_TX_IPV4_CKSUM	(UINT32_C(1) << 0)
#define DROCE_LINK_RX_IPV4_CKSUM	(UINT32_C(1) << 1)
#define DROCE_LINK_TX_ZC		(UINT32_C(1) << 2)

struct droce_link {
	const struct droce_link_ops *ops;
	char name[32];
	struct rte_ether_addr mac;	/* this end's MAC address */
	uint32_t mtu;			/* IP MTU of the link (1500, 4200, 9000...) */
	struct rte_mempool *pool;	/* mbufs for frames this end sends */
	void *priv;			/* driver state */
	uint16_t nb_queues;		/* rx/tx queue pairs; 0 means 1 */
	uint32_t offloads;		/* DROCE_LINK_*: enabled offloads */
	uint32_t tx_zc_min;		/* TX_ZC: from this payload size on */
};

static inline uint16_t
droce_link_queues(const struct droce_link *link)
{
	return link->ops->rx_burst_q == NULL || link->nb_queues == 0 ? 1 :
	       link->nb_queues;
}

static inline uint16_t
droce_link_rx(struct droce_link *link, struct rte_mbuf **pkts, uint16_t n)
{
	return link->ops->rx_burst(link, pkts, n);
}

static inline uint16_t
droce_link_tx(struct droce_link *link, struct rte_mbuf **pkts, uint16_t n)
{
	return link->ops->tx_burst(link, pkts, n);
}

/* Queue q of the link (q < droce_link_queues(link)). */
static inline uint16_t
droce_link_rx_q(struct droce_link *link, uint16_t q, struct rte_mbuf **pkts,
		uint16_t n)
{
	if (link->ops->rx_burst_q == NULL)
		return link->ops->rx_burst(link, pkts, n);
	return link->ops->rx_burst_q(link, q, pkts, n);
}

static inline uint16_t
droce_link_tx_q(struct droce_link *link, uint16_t q, struct rte_mbuf **pkts,
		uint16_t n)
{
	if (link->ops->tx_burst_q == NULL)
		return link->ops->tx_burst(link, pkts, n);
	return link->ops->tx_burst_q(link, q, pkts, n);
}

/* The carrier: 1 up, 0 down, < 0 unknown (no link_status op). */
static inline int
droce_link_status(struct droce_link *link)
{
	return link->ops->link_status != NULL ? link->ops->link_status(link) : -1;
}

static inline void
droce_link_close(struct droce_link *link)
{
	if (link != NULL)
		link->ops->close(link);
}

/* What a device's configuration asks of a link driver's open. */
struct droce_link_params {
	uint16_t port_id;		/* the port the device names */
	const char *name;		/* link->name; NULL: the driver's */
	uint32_t mtu;			/* IP MTU wanted; 0: the driver's default */
	bool mtu_assume;		/* report mtu even if the port cannot set it */
	uint16_t nb_queues;		/* rx/tx queue pairs; 0: 1 */
	double drop;			/* test knob: fraction lost each way; 0: off */
	uint64_t seed;			/* the knob's PRNG seed */
	uint64_t drop_limit;		/* frames it loses per queue at most; 0: no limit */
	/* zero-copy transmit (DROCE_LINK_TX_ZC): 0 the driver's default for
	 * the port, DROCE_LINK_ZC_OFF never, else from tx_zc payload bytes
	 * on (1: every payload) */
	uint32_t tx_zc;
};

#define DROCE_LINK_ZC_OFF UINT32_MAX

/* Called once per counter by droce_link_driver.stats. */
typedef void (*droce_link_stat_cb)(void *arg, const char *name, uint64_t value);

struct droce_link_driver {
	const char *name;		/* "ethdev", ... */
	/* Open a link; 0 and *out, or -errno.  Close with droce_link_close. */
	int (*open)(const struct droce_link_params *params,
		    struct droce_link **out);
	/* Optional: report every counter of a link this driver opened
	 * (callable from any thread); 0 or -errno. */
	int (*stats)(const struct droce_link *link, droce_link_stat_cb cb,
		     void *arg);
};

/*
 * Register a driver (from a constructor; drv must outlive the process).
 * 0, -EINVAL (no name or open), -EEXIST (the name is taken) or -ENOSPC.
 */
int droce_link_driver_register(const struct droce_link_driver *drv);

/* The driver registered under name, or NULL. */
const struct droce_link_driver *droce_link_driver_find(const char *name);

/*
 * Loopback around a link (link_loop.c): frames sent to the link's own MAC
 * are received again on the same queue, never sent out (an RNIC's
 * loopback between QPs of one port).  On success *out is the wrapper; it
 * owns inner from then on (closing it closes inner).  -EINVAL, -ENOMEM.
 */
int droce_link_loop_wrap(struct droce_link *inner, struct droce_link **out);
/* The link a loopback wraps (link itself if it is no wrapper). */
struct droce_link *droce_link_loop_inner(struct droce_link *link);
/* Frames looped back so far (any thread; 0 for a link that is no wrapper). */
uint64_t droce_link_loop_count(const struct droce_link *link);

/*
 * Capture around a link (link_capture.c): fn sees every frame of every
 * queue, received as the wrapped link hands it over (before anyone parses
 * it) and sent as it is offered to the wrapped link (after it was built;
 * a frame the link refuses is seen again when offered again), on the
 * lcore that polls queue q.  fn must not keep or modify the mbufs.  On
 * success *out is the wrapper; closing it closes inner too.  -EINVAL,
 * -ENOMEM.
 */
typedef void droce_link_tap_fn(void *arg, uint16_t q, struct rte_mbuf *const *pkts,
			       uint16_t n, bool tx);
int droce_link_tap_wrap(struct droce_link *inner, droce_link_tap_fn *fn, void *arg,
			struct droce_link **out);
/*
 * The same, writing every frame to the pcapng file path with DPDK's
 * rte_pcapng (the queue and direction of each frame recorded; frames
 * name ethdev port port_id's interface block; name: the capture's
 * application name, NULL: the link's).  -errno when the file or its
 * copy pool cannot be made.
 */
int droce_link_capture_wrap(struct droce_link *inner, const char *path,
			    uint16_t port_id, const char *name, struct droce_link **out);
/* Free a capture wrapper (a pcapng file gets its statistics block and is
 * closed) and return the link it wrapped; link itself if it is none. */
struct droce_link *droce_link_tap_unwrap(struct droce_link *link);
/* The link a capture wraps (link itself if it is none). */
struct droce_link *droce_link_tap_inner(struct droce_link *link);

#endif /* DROCE_LINK_H */
