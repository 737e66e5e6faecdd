/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Opening a port as a link (probe, configure, queues, start, MAC, MTU),
 * closing it, and the counters.  The fast path is in ethdev_rxtx.c, the
 * rte_flow rules for bifurcated PMDs in ethdev_flow.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_string_fns.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "ethdev_link.h"
#include "ethdev_private.h"

RTE_LOG_REGISTER(ethdev_link_logtype, droce.ethdev, NOTICE);

#define ETHDEV_MTU_MIN		68	/* IPv4 minimum */
#define ETHDEV_MTU_MAX		9216
/* Ethernet header + CRC, what ethdev assumes when a PMD does not say */
#define ETHDEV_L2_OVERHEAD	(RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN)
/* Header + one VLAN tag: the largest frame for an MTU, as received */
#define ETHDEV_FRAME_OVERHEAD	(RTE_ETHER_HDR_LEN + 4)

static void ethdev_close(struct droce_link *link);
static int ethdev_link_status(struct droce_link *link);

static const struct droce_link_ops ethdev_ops = {
	.rx_burst = ethdev_rx_burst,
	.tx_burst = ethdev_tx_burst,
	.close = ethdev_close,
	.rx_burst_q = ethdev_rx_burst_q,
	.tx_burst_q = ethdev_tx_burst_q,
	.link_status = ethdev_link_status,
};

/* The port's carrier as the PMD last saw it (no wait: the engine asks). */
static int
ethdev_link_status(struct droce_link *link)
{
	struct rte_eth_link l;

	if (rte_eth_link_get_nowait(ethdev_priv(link)->port_id, &l) != 0)
		return -1;
	return l.link_status == RTE_ETH_LINK_UP;
}

static bool
ethdev_is_link(const struct droce_link *link)
{
	return link != NULL && link->ops == &ethdev_ops;
}

/* Pool names must be unique in the process. */
static uint32_t
ethdev_next_id(void)
{
	static uint32_t next_id;

	return __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
}

static int
ethdev_config_check(const struct ethdev_link_config *cfg)
{
	if (cfg->nb_rxq > ETHDEV_LINK_MAX_QUEUES ||
	    cfg->nb_txq > ETHDEV_LINK_MAX_QUEUES ||
	    RTE_MAX(cfg->nb_rxq, 1) != RTE_MAX(cfg->nb_txq, 1)) {
		ETHDEV_LOG(ERR, "%u rx / %u tx queues: as many of each, at most %u",
			   cfg->nb_rxq, cfg->nb_txq, ETHDEV_LINK_MAX_QUEUES);
		return -ENOTSUP;
	}
	if (cfg->mtu != 0 && (cfg->mtu < ETHDEV_MTU_MIN || cfg->mtu > ETHDEV_MTU_MAX)) {
		ETHDEV_LOG(ERR, "mtu %u outside [%u, %u]", cfg->mtu,
			   ETHDEV_MTU_MIN, ETHDEV_MTU_MAX);
		return -EINVAL;
	}
	if (cfg->data_room != 0 &&
	    cfg->data_room < RTE_PKTMBUF_HEADROOM + RTE_ETHER_MIN_LEN) {
		ETHDEV_LOG(ERR, "data room %u too small", cfg->data_room);
		return -EINVAL;
	}
	if (cfg->devargs == NULL && !rte_eth_dev_is_valid_port(cfg->port_id)) {
		ETHDEV_LOG(ERR, "no port %u", cfg->port_id);
		return -EINVAL;
	}
	return 0;
}

/* Probe the vdev of cfg->devargs and find its port. */
static int
ethdev_probe(struct ethdev_priv *p, const char *devargs)
{
	size_t len = strcspn(devargs, ",");
	uint16_t port;
	int ret;

	if (len == 0 || len >= sizeof(p->dev_name)) {
		ETHDEV_LOG(ERR, "bad devargs \"%s\"", devargs);
		return -EINVAL;
	}
	memcpy(p->dev_name, devargs, len);
	p->dev_name[len] = '\0';
	if (rte_eth_dev_get_port_by_name(p->dev_name, &port) == 0) {
		ETHDEV_LOG(ERR, "%s exists already (port %u)", p->dev_name, port);
		return -EEXIST;
	}
	ret = rte_dev_probe(devargs);
	if (ret < 0) {
		ETHDEV_LOG(ERR, "probing \"%s\": %s", devargs, rte_strerror(-ret));
		return ret;
	}
	if (rte_eth_dev_get_port_by_name(p->dev_name, &port) != 0) {
		ETHDEV_LOG(ERR, "\"%s\" probed but is not an ethdev port", devargs);
		(void)rte_eal_hotplug_remove("vdev", p->dev_name);
		return -EINVAL;
	}
	p->port_id = port;
	p->probed = true;
	return 0;
}

/*
 * Whether the PMD accepts mtu at configure time, by ethdev's own rule:
 * mtu within [min_mtu, max_mtu] and mtu + overhead within max_rx_pktlen,
 * the overhead being max_rx_pktlen - max_mtu when the PMD gives both.
 */
static bool
ethdev_mtu_fits(const struct rte_eth_dev_info *info, uint32_t mtu)
{
	uint32_t overhead = ETHDEV_L2_OVERHEAD;

	if (info->max_mtu != UINT16_MAX && info->max_rx_pktlen > info->max_mtu)
		overhead = info->max_rx_pktlen - info->max_mtu;
	return mtu >= info->min_mtu && mtu <= info->max_mtu &&
	       (uint64_t)mtu + overhead <= info->max_rx_pktlen;
}

static int
ethdev_pool_create(struct ethdev_priv *p, const struct ethdev_link_config *cfg,
		   int socket)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	uint32_t size = cfg->pool_size != 0 ? cfg->pool_size :
					      ETHDEV_LINK_POOL_SIZE_DEFAULT;
	uint32_t cache = cfg->pool_cache != 0 ? cfg->pool_cache :
						ETHDEV_LINK_POOL_CACHE_DEFAULT;
	uint16_t room = cfg->data_room != 0 ? cfg->data_room :
					      ETHDEV_LINK_DATA_ROOM_DEFAULT;

	cache = RTE_MIN(cache, (uint32_t)RTE_MEMPOOL_CACHE_MAX_SIZE);
	if (cache > size / 2)	/* the mempool library's own limit */
		cache = size / 2;
	snprintf(name, sizeof(name), "droce_eth%u", ethdev_next_id());
	p->link.pool = rte_pktmbuf_pool_create(name, size, cache, 0, room, socket);
	if (p->link.pool == NULL) {
		ETHDEV_LOG(ERR, "pool %s of %u mbufs of %u bytes: %s", name,
			   size, room, rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
}

/*
 * Several queues: as many as the PMD has (else -ENOTSUP), and RSS over IP
 * addresses and UDP ports (the RoCE UDP source port differs per QP) when
 * the PMD offers any of it.  Without RSS the PMD spreads frames its own
 * way (net_af_packet: the kernel's PACKET_FANOUT hash over the qpairs
 * sockets) or delivers everything to queue 0 (net_ring, net_memif: one
 * ring per queue pair, filled by whoever sends on it); the transport hands
 * frames to the lcore owning their QP, so any spreading is correct.
 */
static int
ethdev_queues(struct ethdev_priv *p, const struct ethdev_link_config *cfg,
	      const struct rte_eth_dev_info *info, struct rte_eth_conf *conf)
{
	uint16_t nq = RTE_MAX(cfg->nb_rxq, 1);
	uint64_t hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) & info->flow_type_rss_offloads;

	if (nq > info->max_rx_queues || nq > info->max_tx_queues) {
		ETHDEV_LOG(ERR, "port %u (%s): %u queue pairs wanted, it has %u rx / %u tx"
			   " (net_af_packet: qpairs=N)", p->port_id, info->driver_name,
			   nq, info->max_rx_queues, info->max_tx_queues);
		return -ENOTSUP;
	}
	p->nb_queues = nq;
	p->link.nb_queues = nq;
	if (nq > 1 && hf != 0) {
		conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf->rx_adv_conf.rss_conf.rss_key = NULL;	/* the PMD's */
		conf->rx_adv_conf.rss_conf.rss_hf = hf;
		p->rss = true;
	} else if (nq > 1) {
		ETHDEV_LOG(INFO, "port %u (%s): %u queues without RSS", p->port_id,
			   info->driver_name, nq);
	}
	return 0;
}

/*
 * IPv4 header checksums in the port when it offers them (mlx5 and tap do;
 * ring, memif and af_packet do not): enabled, and reported in
 * link.offloads for the transport to use.
 */
static void
ethdev_cksum_offloads(struct ethdev_priv *p, const struct rte_eth_dev_info *info,
		      struct rte_eth_conf *conf)
{
	if (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) {
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
		p->link.offloads |= DROCE_LINK_TX_IPV4_CKSUM;
	}
	if (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM) {
		conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
		p->link.offloads |= DROCE_LINK_RX_IPV4_CKSUM;
	}
}

/*
 * Zero-copy transmit's threshold per PMD when the configuration names
 * none: the payload size from which sending from registered memory beats
 * the copy (BENCHMARKS.md, "Zero copy per PMD"), off where it won at no
 * size measured (these three copy the payload themselves: memif and
 * af_packet into their ring, net_ring's receiver when it linearizes the
 * chain; zero copy only adds mbufs to that).  A PMD not listed never
 * gets it by default: a physical port needs the memory DMA-mapped
 * (rte_dev_dma_map), which droce does not do.
 */
static const struct {
	const char *driver;
	uint32_t min;
} zc_default[] = {
	{ "net_memif", DROCE_LINK_ZC_OFF },
	{ "net_af_packet", DROCE_LINK_ZC_OFF },
	{ "net_ring", DROCE_LINK_ZC_OFF },
};

static uint32_t
zc_min(const struct ethdev_link_config *cfg, const struct rte_eth_dev_info *info)
{
	if (cfg->tx_zc != 0)
		return cfg->tx_zc;
	for (size_t i = 0; i < RTE_DIM(zc_default); i++)
		if (strcmp(info->driver_name, zc_default[i].driver) == 0)
			return zc_default[i].min;
	return DROCE_LINK_ZC_OFF;
}

/*
 * Zero copy needs frames of several segments; the segment that holds the
 * payload is an external buffer, which a virtual PMD only reads (memif
 * and af_packet copy it into their ring, net_ring hands it to the peer,
 * whose receive linearizes it: ethdev_rx_single).
 */
static void
ethdev_zc_offload(struct ethdev_priv *p, const struct ethdev_link_config *cfg,
		  const struct rte_eth_dev_info *info, struct rte_eth_conf *conf)
{
	uint32_t min = zc_min(cfg, info);

	if (min == DROCE_LINK_ZC_OFF ||
	    !(info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS))
		return;
	conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	p->link.offloads |= DROCE_LINK_TX_ZC;
	p->link.tx_zc_min = min;
}

/* Configure, set up the queues each way, start.  The pool exists. */
static int
ethdev_port_setup(struct ethdev_priv *p, const struct ethdev_link_config *cfg,
		  const struct rte_eth_dev_info *info, uint32_t mtu, int socket,
		  bool mtu_fits)
{
	struct rte_eth_conf conf;
	uint16_t nb_rxd = cfg->nb_rxd != 0 ? cfg->nb_rxd : ETHDEV_LINK_RXD_DEFAULT;
	uint16_t nb_txd = cfg->nb_txd != 0 ? cfg->nb_txd : ETHDEV_LINK_TXD_DEFAULT;
	uint32_t seg = rte_pktmbuf_data_room_size(p->link.pool) - RTE_PKTMBUF_HEADROOM;
	uint16_t port = p->port_id;
	int ret;

	memset(&conf, 0, sizeof(conf));
	ret = ethdev_queues(p, cfg, info, &conf);
	if (ret != 0)
		return ret;
	/* 0 keeps the PMD's default (1500) when it cannot take ours */
	conf.rxmode.mtu = mtu_fits ? mtu : 0;
	if (seg < mtu + ETHDEV_FRAME_OVERHEAD &&
	    (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER) != 0)
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
	ethdev_cksum_offloads(p, info, &conf);
	ethdev_zc_offload(p, cfg, info, &conf);
	if (cfg->flow_isolate) {
		struct rte_flow_error err = { .message = NULL };

		/* before configure: a bifurcated PMD sets its queues up for it */
		ret = rte_flow_isolate(port, 1, &err);
		if (ret != 0) {
			ETHDEV_LOG(ERR, "port %u: flow isolation refused (%s): %s",
				   port, rte_strerror(-ret),
				   err.message != NULL ? err.message : "no rte_flow support");
			return -ENOTSUP;
		}
	}
	ret = rte_eth_dev_configure(port, p->nb_queues, p->nb_queues, &conf);
	if (ret != 0) {
		ETHDEV_LOG(ERR, "port %u: configure: %s", port, rte_strerror(-ret));
		return ret;
	}
	p->configured = true;
	ret = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	if (ret != 0)
		return ret;
	for (uint16_t q = 0; q < p->nb_queues; q++) {
		ret = rte_eth_rx_queue_setup(port, q, nb_rxd, socket, NULL, p->link.pool);
		if (ret != 0) {
			ETHDEV_LOG(ERR, "port %u: rx queue %u of %u: %s", port, q, nb_rxd,
				   rte_strerror(-ret));
			return ret;
		}
		ret = rte_eth_tx_queue_setup(port, q, nb_txd, socket, NULL);
		if (ret != 0) {
			ETHDEV_LOG(ERR, "port %u: tx queue %u of %u: %s", port, q, nb_txd,
				   rte_strerror(-ret));
			return ret;
		}
	}
	if (cfg->flow_isolate) {
		/* queues exist now, which PMDs check for QUEUE actions */
		ret = ethdev_flow_validate(port, p->nb_queues, cfg->flow_arp_nd);
		if (ret != 0)
			return ret;
	}
	ret = rte_eth_dev_start(port);
	if (ret != 0) {
		ETHDEV_LOG(ERR, "port %u: start: %s", port, rte_strerror(-ret));
		return ret;
	}
	p->started = true;
	if (cfg->flow_isolate) {
		ret = ethdev_flow_create(p, cfg->flow_arp_nd);
		if (ret != 0)
			return ret;
	}
	return 0;
}

/* Promiscuous on request; allmulticast always (IPv6 ND), tolerated if absent. */
static int
ethdev_rx_modes(struct ethdev_priv *p, const struct ethdev_link_config *cfg)
{
	int ret;

	if (cfg->promiscuous) {
		ret = rte_eth_promiscuous_enable(p->port_id);
		if (ret != 0) {
			ETHDEV_LOG(ERR, "port %u: promiscuous mode: %s", p->port_id,
				   rte_strerror(-ret));
			return ret;
		}
	}
	ret = rte_eth_allmulticast_enable(p->port_id);
	if (ret != 0)
		ETHDEV_LOG(INFO, "port %u: no allmulticast control (%s): IPv6 ND works only if the PMD passes multicast (af_packet, ring, tap do)",
			   p->port_id, rte_strerror(-ret));
	return 0;
}

/* link->mac: cfg->mac if given, else the PMD's (random if it has none). */
static int
ethdev_mac_setup(struct ethdev_priv *p, const struct ethdev_link_config *cfg)
{
	struct rte_ether_addr want = cfg->mac;
	int ret = rte_eth_macaddr_get(p->port_id, &p->link.mac);

	if (ret != 0)
		return ret;
	if (rte_is_zero_ether_addr(&want)) {
		if (!rte_is_zero_ether_addr(&p->link.mac))
			return 0;
		rte_eth_random_addr(want.addr_bytes);
	}
	if (!rte_is_valid_assigned_ether_addr(&want)) {
		ETHDEV_LOG(ERR, "port %u: " RTE_ETHER_ADDR_PRT_FMT " is not a unicast MAC",
			   p->port_id, RTE_ETHER_ADDR_BYTES(&want));
		return -EINVAL;
	}
	ret = rte_eth_dev_default_mac_addr_set(p->port_id, &want);
	if (ret == -ENOTSUP)
		ETHDEV_LOG(INFO, "port %u: PMD cannot set its MAC; using " RTE_ETHER_ADDR_PRT_FMT " (it does not filter)",
			   p->port_id, RTE_ETHER_ADDR_BYTES(&want));
	else if (ret != 0)
		return ret;
	p->link.mac = want;
	return 0;
}

static int
ethdev_mtu_report(struct ethdev_priv *p, const struct ethdev_link_config *cfg,
		  uint32_t want, bool fits)
{
	uint16_t real = 0;
	int ret = rte_eth_dev_get_mtu(p->port_id, &real);

	if (ret != 0)
		return ret;
	if (!fits && cfg->mtu_assume) {
		ETHDEV_LOG(NOTICE, "port %u: PMD keeps MTU %u; assuming %u as configured (mtu_assume)",
			   p->port_id, real, want);
		p->link.mtu = want;
	} else {
		if (real != want)
			ETHDEV_LOG(NOTICE, "port %u: MTU %u instead of %u (PMD limit)",
				   p->port_id, real, want);
		p->link.mtu = real;
	}
	return 0;
}

/* Undo what open did so far. */
static void
ethdev_teardown(struct ethdev_priv *p)
{
	struct rte_eth_dev_info info;
	struct rte_device *dev = NULL;

	ethdev_fault_remove(p);
	ethdev_flow_destroy(p);
	if (p->probed && rte_eth_dev_info_get(p->port_id, &info) == 0)
		dev = info.device;
	if (p->memif_guarded)
		ethdev_memif_guard_close(p);	/* stops and closes */
	if (p->started) {
		int ret = rte_eth_dev_stop(p->port_id);

		if (ret != 0)
			ETHDEV_LOG(WARNING, "port %u: stop: %s", p->port_id,
				   rte_strerror(-ret));
		p->started = false;
	}
	ethdev_fault_free(p);
	/* the port's queues point into our pool: the port goes before it */
	if ((p->configured || p->probed) && !p->memif_closed)
		rte_eth_dev_close(p->port_id);
	if (p->probed && dev != NULL) {
		int ret = rte_dev_remove(dev);

		if (ret != 0)
			ETHDEV_LOG(WARNING, "removing %s: %s", p->dev_name,
				   rte_strerror(-ret));
	}
	rte_mempool_free(p->link.pool);
	rte_free(p);
}

int
ethdev_link_open(const struct ethdev_link_config *cfg, struct droce_link **out)
{
	struct rte_eth_dev_info info;
	struct ethdev_priv *p;
	uint32_t mtu;
	bool fits;
	int socket, ret;

	if (cfg == NULL || out == NULL)
		return -EINVAL;
	ret = ethdev_config_check(cfg);
	if (ret != 0)
		return ret;
	p = rte_zmalloc("droce_ethdev_link", sizeof(*p), RTE_CACHE_LINE_SIZE);
	if (p == NULL)
		return -ENOMEM;
	p->link.ops = &ethdev_ops;
	p->link.priv = p;
	if (cfg->devargs != NULL) {
		ret = ethdev_probe(p, cfg->devargs);
	} else {
		p->port_id = cfg->port_id;
		ret = rte_eth_dev_get_name_by_port(p->port_id, p->dev_name);
	}
	if (ret == 0)
		ret = rte_eth_dev_info_get(p->port_id, &info);
	if (ret != 0) {
		ethdev_teardown(p);
		return ret;
	}
	socket = rte_eth_dev_socket_id(p->port_id);
	if (socket < 0)
		socket = SOCKET_ID_ANY;
	mtu = cfg->mtu != 0 ? cfg->mtu : ETHDEV_LINK_MTU_DEFAULT;
	fits = ethdev_mtu_fits(&info, mtu);

	ret = ethdev_pool_create(p, cfg, socket);
	if (ret != 0) {
		ethdev_teardown(p);
		return ret;
	}
	ret = ethdev_port_setup(p, cfg, &info, mtu, socket, fits);
	if (ret == 0 && cfg->drop > 0)
		ret = ethdev_fault_install(p, cfg->drop, cfg->seed,
					   cfg->drop_limit);
	if (ret == 0)
		ret = ethdev_rx_modes(p, cfg);
	if (ret == 0)
		ret = ethdev_mac_setup(p, cfg);
	if (ret == 0)
		ret = ethdev_mtu_report(p, cfg, mtu, fits);
	/* a failed guard only warns: the port works, with 22.11's races */
	if (ret == 0 && strcmp(info.driver_name, "net_memif") == 0)
		(void)ethdev_memif_guard_add(p);
	if (ret != 0) {
		/* a refused isolation comes before configure: port untouched */
		ethdev_teardown(p);
		return ret;
	}
	/* truncated to fit: the name is for logs */
	strlcpy(p->link.name, cfg->name != NULL ? cfg->name : p->dev_name,
		sizeof(p->link.name));
	ETHDEV_LOG(INFO, "%s: port %u (%s) MTU %u MAC " RTE_ETHER_ADDR_PRT_FMT,
		   p->link.name, p->port_id, info.driver_name, p->link.mtu,
		   RTE_ETHER_ADDR_BYTES(&p->link.mac));
	*out = &p->link;
	return 0;
}

static void
ethdev_close(struct droce_link *link)
{
	ethdev_teardown(ethdev_priv(link));
}

int
ethdev_link_port_id(const struct droce_link *link)
{
	if (!ethdev_is_link(link))
		return -EINVAL;
	return ethdev_priv(link)->port_id;
}

int
ethdev_link_stats_get(const struct droce_link *link, struct ethdev_link_stats *st)
{
	const struct ethdev_priv *p;
	struct rte_eth_stats hw;

	if (!ethdev_is_link(link) || st == NULL)
		return -EINVAL;
	p = ethdev_priv(link);
	memset(st, 0, sizeof(*st));
	/* the queues' own counts, summed */
	for (unsigned int q = 0; q < ETHDEV_LINK_MAX_QUEUES; q++) {
		const struct ethdev_counters *c = &p->q[q].cnt;

		st->rx_pkts += __atomic_load_n(&c->rx_pkts, __ATOMIC_RELAXED);
		st->rx_bytes += __atomic_load_n(&c->rx_bytes, __ATOMIC_RELAXED);
		st->tx_pkts += __atomic_load_n(&c->tx_pkts, __ATOMIC_RELAXED);
		st->tx_bytes += __atomic_load_n(&c->tx_bytes, __ATOMIC_RELAXED);
		st->tx_full += __atomic_load_n(&c->tx_full, __ATOMIC_RELAXED);
		st->rx_linearized += __atomic_load_n(&c->rx_linearized,
						     __ATOMIC_RELAXED);
		st->rx_multiseg_drops += __atomic_load_n(&c->rx_multiseg_drops,
							 __ATOMIC_RELAXED);
		st->fault_drops += __atomic_load_n(&p->q[q].fault_drops,
						   __ATOMIC_RELAXED);
	}
	if (rte_eth_stats_get(p->port_id, &hw) == 0) {
		st->hw_ipackets = hw.ipackets;
		st->hw_opackets = hw.opackets;
		st->hw_imissed = hw.imissed;
		st->hw_ierrors = hw.ierrors;
		st->hw_oerrors = hw.oerrors;
		st->hw_rx_nombuf = hw.rx_nombuf;
	}
	return 0;
}
