/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drivers/ethdev: any DPDK ethdev port as a droce link (struct
 * droce_link_ops).  The driver configures and starts the port, owns an
 * mbuf pool sized for jumbo frames, and moves frames; it knows nothing
 * of RoCE, ARP or IP (that is lib/net and lib/transport).
 *
 * Naming the port:
 *   - cfg->devargs: a vdev string, probed with rte_dev_probe() and removed
 *     again by close:  "net_ring0"  (a loopback port),
 *     "net_af_packet0,iface=veth1,framesz=8192,blocksz=8192",
 *     "net_memif0,role=server,socket=/run/droce/x.sock,bsize=8192",
 *     "net_tap0,iface=droce0".  The device name is the part before ','.
 *   - cfg->devargs == NULL: the existing port cfg->port_id (a PCI port given
 *     to EAL with -a, a port from rte_eth_from_rings()...).  It must be
 *     stopped (never started or stopped again).
 *
 * Ownership: on success the link owns the port; droce_link_close() stops
 * and closes it (and removes the vdev it probed) and frees the pool.  On a
 * failure before the port is configured (bad config, rte_flow isolation
 * refused) a port given by id is untouched; after that it is closed (its
 * queues point into the link's pool).  A vdev probed by open is removed.
 *
 * MTU: the link tries cfg->mtu (0: ETHDEV_LINK_MTU_DEFAULT) at configure
 * time when the PMD's limits allow it (net_ring, memif, tap, mlx5).
 * Otherwise the port keeps the MTU the PMD has and link->mtu reports that
 * real value, unless cfg->mtu_assume says the wire carries cfg->mtu anyway:
 * DPDK 22.11's net_af_packet reports a 1518-byte max frame but receives
 * frames up to framesz (8192) into large mbufs, so a 4200-MTU veth works
 * with mtu_assume = true.  Never raise the max frame on af_packet.
 *
 * Receive: frames are one mbuf each as the transport expects.  A
 * multi-segment frame (a PMD doing scatter because the data room is
 * smaller than the frame) is linearized in place when the first segment
 * has the room, else copied into one mbuf of the link's pool, else dropped
 * and counted (rx_multiseg_drops).  Neither happens with the default data
 * room (ETHDEV_LINK_DATA_ROOM_DEFAULT holds a 9216-byte frame).
 *
 * Threading: as every link, one polling lcore; stats may be read from
 * elsewhere (relaxed atomic counters).
 */
#ifndef ETHDEV_LINK_H
#define ETHDEV_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "droce_link.h"

#define ETHDEV_LINK_MTU_DEFAULT		4200	/* RoCE 4096 + headers */
#define ETHDEV_LINK_RXD_DEFAULT		1024
#define ETHDEV_LINK_TXD_DEFAULT		1024
#define ETHDEV_LINK_POOL_SIZE_DEFAULT	8191
#define ETHDEV_LINK_POOL_CACHE_DEFAULT	256
/* One segment per frame up to 9216 bytes (jumbo), plus the headroom. */
#define ETHDEV_LINK_DATA_ROOM_DEFAULT	(9216 + RTE_PKTMBUF_HEADROOM)
#define ETHDEV_LINK_MAX_QUEUES		8	/* rx/tx queue pairs; see README */

struct ethdev_link_config {
	/* vdev string probed by open; NULL: use port_id */
	const char *devargs;
	uint16_t port_id;
	/* link->name; NULL: the device name */
	const char *name;
	/*
	 * rx/tx queue pairs, 0: 1; nb_rxq == nb_txq (else -ENOTSUP), at most
	 * ETHDEV_LINK_MAX_QUEUES and what the PMD offers (max_rx_queues: for
	 * net_af_packet its qpairs=N devarg).  Several: link->nb_queues says
	 * how many, rx_burst_q/tx_burst_q poll queue q (one lcore per queue),
	 * and the port spreads received frames over them by RSS on IP
	 * addresses and UDP ports when the PMD offers it (dev_info's
	 * flow_type_rss_offloads); else by its own means (af_packet: kernel
	 * PACKET_FANOUT hashing) or not at all.  rx_burst/tx_burst: queue 0.
	 */
	uint16_t nb_rxq;
	uint16_t nb_txq;
	/* descriptors per queue; 0: defaults, adjusted to the PMD's limits */
	uint16_t nb_rxd;
	uint16_t nb_txd;
	/* mbufs in the link's pool (rx rings + tx in flight + the
	 * transport's retained frames); 0: default */
	uint32_t pool_size;
	uint32_t pool_cache;		/* 0: default */
	uint16_t data_room;		/* mbuf data room incl. headroom; 0: default */
	/*
	 * MAC address for the port; all zero: the PMD's.  Set with
	 * rte_eth_dev_default_mac_addr_set(); a PMD that cannot (net_ring) is
	 * logged and link->mac is mac anyway: such PMDs do not filter.  A PMD
	 * whose own MAC is all zero gets a random locally administered one.
	 */
	struct rte_ether_addr mac;
	uint32_t mtu;			/* IP MTU wanted; 0: default */
	bool mtu_assume;		/* report mtu even if the PMD cannot set it */
	/* receive every unicast MAC (default off: frames to our MAC, broadcast
	 * and multicast are enough).  Allmulticast is always requested (IPv6
	 * neighbour discovery uses solicited-node multicast); a PMD without it
	 * is logged, not refused. */
	bool promiscuous;
	/*
	 * Bifurcated PMDs (mlx5): isolate the port (rte_flow_isolate) so that
	 * only flows droce asks for reach its queues and the kernel keeps the
	 * rest, and install rules steering UDP/4791 over IPv4 and IPv6 (and
	 * with flow_arp_nd also ARP and ICMPv6) to rx queue 0 (with several
	 * queues: UDP/4791 by an RSS action over all of them).  open fails with
	 * -ENOTSUP when the PMD cannot validate or create them.  UNTESTED on
	 * hardware; see README.
	 */
	bool flow_isolate;
	bool flow_arp_nd;
	/*
	 * Test knob: lose this fraction (0..1) of the frames received and of
	 * those sent, from a PRNG seeded with seed (queue q: seed + q); the
	 * way to make a real peer (Linux Soft-RoCE) recover from loss where
	 * tc netem is not available.  DPDK rx/tx callbacks (ethdev_fault.c):
	 * 0 installs none and costs nothing.
	 */
	double drop;
	uint64_t seed;
	/*
	 * At most this many frames lost per queue pair, then none: a run's
	 * last frames (an unmodified peer's last ACK, which nothing
	 * retransmits once that peer has exited) arrive.  0: no limit.
	 */
	uint64_t drop_limit;
	/*
	 * Zero-copy transmit (DROCE_LINK_TX_ZC, struct droce_link_params'
	 * tx_zc): 0 this PMD's default (ethdev_link.c, zc_default: measured
	 * per PMD, BENCHMARKS.md), DROCE_LINK_ZC_OFF never, else from tx_zc
	 * payload bytes on.  Never on a port without
	 * RTE_ETH_TX_OFFLOAD_MULTI_SEGS.
	 */
	uint32_t tx_zc;
};

struct ethdev_link_stats {
	/* the driver's own counts */
	uint64_t rx_pkts;		/* frames returned by rx_burst */
	uint64_t rx_bytes;
	uint64_t tx_pkts;		/* frames taken by tx_burst */
	uint64_t tx_bytes;
	uint64_t tx_full;		/* frames refused (tx ring full) */
	uint64_t rx_linearized;		/* multi-segment frames made single */
	uint64_t rx_multiseg_drops;	/* multi-segment frames dropped */
	uint64_t fault_drops;		/* frames lost to the drop knob */
	/* from rte_eth_stats_get() (zero when the PMD does not tell) */
	uint64_t hw_ipackets;
	uint64_t hw_opackets;
	uint64_t hw_imissed;		/* dropped by the port: rx ring full */
	uint64_t hw_ierrors;
	uint64_t hw_oerrors;
	uint64_t hw_rx_nombuf;
};

/*
 * Open a link on a port (see above).  cfg must not be NULL.  Returns 0 and
 * *out, or -EINVAL (bad config, no such port), -ENOTSUP (queue count,
 * flow_isolate on a PMD without rte_flow support), -EEXIST (devargs names
 * a device that exists already), -ENOMEM, or the -errno of the failing
 * ethdev call.  Close with droce_link_close().
 */
int ethdev_link_open(const struct ethdev_link_config *cfg,
		     struct droce_link **out);

/* The ethdev port under a link opened by ethdev_link_open, or -EINVAL. */
int ethdev_link_port_id(const struct droce_link *link);

/* Counters of a link opened by ethdev_link_open.  -EINVAL otherwise. */
int ethdev_link_stats_get(const struct droce_link *link,
			  struct ethdev_link_stats *st);

/*
 * Check (rte_flow_validate, nothing created) whether the port accepts the
 * flow_isolate rules steering to rx queue 0.  Returns 0, -EINVAL (no such
 * port) or -ENOTSUP (the PMD refuses a rule or has no rte_flow; logged with
 * the PMD's reason).  Some PMDs validate QUEUE actions only once the queues
 * are set up.
 */
int ethdev_link_flow_validate(uint16_t port_id, bool arp_nd);

#endif /* ETHDEV_LINK_H */
