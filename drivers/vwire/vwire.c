/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vwire pairs: creation, the link ops table, runtime faults, counters and
 * closing.  The fast path is in vwire_tx.c and vwire_rx.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_spinlock.h>

#include "vwire.h"
#include "vwire_private.h"

RTE_LOG_REGISTER(vwire_logtype, droce.vwire, NOTICE);

#define VWIRE_POOL_CACHE 32

static void vwire_close(struct droce_link *link);
static int vwire_link_status(struct droce_link *link);

static const struct droce_link_ops vwire_ops = {
	.rx_burst = vwire_rx_burst,
	.tx_burst = vwire_tx_burst,
	.close = vwire_close,
	.link_status = vwire_link_status,
};

static bool
vwire_is_end(const struct droce_link *link)
{
	return link != NULL && link->ops == &vwire_ops;
}

/* Ring and pool names must be unique in the process. */
static uint32_t
vwire_next_pair_id(void)
{
	static uint32_t next_id;

	return __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
}

static int
vwire_config_check(const struct vwire_config *cfg)
{
	int ret;

	if (cfg->mtu != 0 &&
	    (cfg->mtu < VWIRE_MTU_MIN || cfg->mtu > VWIRE_MTU_MAX)) {
		VWIRE_LOG(ERR, "mtu %u outside [%u, %u]", cfg->mtu,
			  VWIRE_MTU_MIN, VWIRE_MTU_MAX);
		return -EINVAL;
	}
	ret = vwire_faults_check(&cfg->a_to_b);
	if (ret == 0)
		ret = vwire_faults_check(&cfg->b_to_a);
	if (ret != 0)
		VWIRE_LOG(ERR, "fault probabilities must be in [0, 1], reorder_window in [1, %u]",
			  VWIRE_REORDER_WINDOW_MAX);
	return ret;
}

/* Room for the largest frame in one segment, at least 8 KiB like a NIC's. */
static uint16_t
vwire_data_room(uint32_t max_frame_len)
{
	uint32_t room = RTE_MAX(max_frame_len, 8192u);

	return (uint16_t)(room + RTE_PKTMBUF_HEADROOM);
}

static int
vwire_pool_attach(struct vwire_pair *pair, const struct vwire_config *cfg,
		  uint32_t id)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	uint32_t size = cfg->pool_size != 0 ? cfg->pool_size :
						VWIRE_POOL_SIZE_DEFAULT;

	if (cfg->pool != NULL) {
		if (rte_pktmbuf_data_room_size(cfg->pool) <
		    RTE_PKTMBUF_HEADROOM + pair->max_frame_len) {
			VWIRE_LOG(ERR, "pool %s: data room too small for mtu",
				  cfg->pool->name);
			return -EINVAL;
		}
		pair->pool = cfg->pool;
		return 0;
	}
	snprintf(name, sizeof(name), "vwire%u", id);
	pair->pool = rte_pktmbuf_pool_create(name, size, VWIRE_POOL_CACHE, 0,
			vwire_data_room(pair->max_frame_len), SOCKET_ID_ANY);
	if (pair->pool == NULL) {
		VWIRE_LOG(ERR, "pool %s of %u mbufs: %s", name, size,
			  rte_strerror(rte_errno));
		return -rte_errno;
	}
	pair->own_pool = true;
	return 0;
}

static int
vwire_ring_attach(struct vwire_dir *dir, uint32_t size, uint32_t id,
		  const char *suffix)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "vwire%u_%s", id, suffix);
	/* exact size: ring_size is the number of frames in flight */
	dir->ring = rte_ring_create_elem(name, sizeof(struct vwire_slot), size,
			SOCKET_ID_ANY,
			RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (dir->ring == NULL) {
		VWIRE_LOG(ERR, "ring %s of %u: %s", name, size,
			  rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
}

static void
vwire_dir_init(struct vwire_dir *dir, const struct vwire_faults *f)
{
	rte_spinlock_init(&dir->box.lock);
	dir->box.next = *f;
	dir->box.gen = 0;
	vwire_tx_apply_faults(&dir->tx, f);
	dir->tx.faults_gen = 0;
}

static void
vwire_end_init(struct droce_link *end, struct vwire_pair *pair,
	       const struct vwire_config *cfg, uint32_t id,
	       enum vwire_end_id which)
{
	static const struct rte_ether_addr default_mac[VWIRE_END_MAX] = {
		{ .addr_bytes = { 0x02, 0, 0, 0, 0, 0x01 } },
		{ .addr_bytes = { 0x02, 0, 0, 0, 0, 0x02 } },
	};
	const struct rte_ether_addr *mac = which == VWIRE_END_A ?
					   &cfg->mac_a : &cfg->mac_b;
	const char *suffix = which == VWIRE_END_A ? "a" : "b";

	end->ops = &vwire_ops;
	if (cfg->name != NULL)
		snprintf(end->name, sizeof(end->name), "%s.%s", cfg->name, suffix);
	else
		snprintf(end->name, sizeof(end->name), "vwire%u.%s", id, suffix);
	rte_ether_addr_copy(rte_is_zero_ether_addr(mac) ? &default_mac[which] :
			    mac, &end->mac);
	end->mtu = cfg->mtu != 0 ? cfg->mtu : VWIRE_MTU_DEFAULT;
	end->offloads = cfg->offloads;
	end->pool = pair->pool;
	end->priv = pair;
}

/* Release what a pair holds; safe on a partly built pair. */
static void
vwire_pair_free(struct vwire_pair *pair)
{
	for (int d = 0; d < VWIRE_END_MAX; d++) {
		if (pair->dir[d].ring == NULL)
			continue;
		vwire_rx_flush(&pair->dir[d]);
		rte_ring_free(pair->dir[d].ring);
	}
	if (pair->own_pool)
		rte_mempool_free(pair->pool);
	rte_free(pair);
}

int
vwire_pair_create(const struct vwire_config *cfg, struct droce_link **a,
		  struct droce_link **b)
{
	static const struct vwire_config defaults;
	struct vwire_pair *pair;
	uint32_t id = vwire_next_pair_id();
	uint32_t ring_size;
	int ret;

	if (a == NULL || b == NULL)
		return -EINVAL;
	if (cfg == NULL)
		cfg = &defaults;
	ret = vwire_config_check(cfg);
	if (ret != 0)
		return ret;
	ring_size = cfg->ring_size != 0 ? cfg->ring_size : VWIRE_RING_SIZE_DEFAULT;

	/* cache-aligned members: rte_zmalloc honours the alignment */
	pair = rte_zmalloc("vwire_pair", sizeof(*pair), RTE_CACHE_LINE_SIZE);
	if (pair == NULL)
		return -ENOMEM;
	pair->max_frame_len = (cfg->mtu != 0 ? cfg->mtu : VWIRE_MTU_DEFAULT) +
			      VWIRE_FRAME_OVERHEAD;
	ret = vwire_pool_attach(pair, cfg, id);
	if (ret == 0)
		ret = vwire_ring_attach(&pair->dir[VWIRE_END_A], ring_size, id, "ab");
	if (ret == 0)
		ret = vwire_ring_attach(&pair->dir[VWIRE_END_B], ring_size, id, "ba");
	if (ret != 0) {
		vwire_pair_free(pair);
		return ret;
	}
	vwire_dir_init(&pair->dir[VWIRE_END_A], &cfg->a_to_b);
	vwire_dir_init(&pair->dir[VWIRE_END_B], &cfg->b_to_a);
	vwire_end_init(&pair->end[VWIRE_END_A], pair, cfg, id, VWIRE_END_A);
	vwire_end_init(&pair->end[VWIRE_END_B], pair, cfg, id, VWIRE_END_B);
	pair->open_ends = VWIRE_END_MAX;
	*a = &pair->end[VWIRE_END_A];
	*b = &pair->end[VWIRE_END_B];
	return 0;
}

int
vwire_set_faults(struct droce_link *end, const struct vwire_faults *tx_faults)
{
	struct vwire_pair *pair;
	struct vwire_faults_box *box;
	int ret;

	if (!vwire_is_end(end) || tx_faults == NULL)
		return -EINVAL;
	ret = vwire_faults_check(tx_faults);
	if (ret != 0)
		return ret;
	pair = end->priv;
	box = &pair->dir[vwire_end_id(end)].box;
	rte_spinlock_lock(&box->lock);
	box->next = *tx_faults;
	/* the sender's next tx_burst sees the new generation and takes them */
	__atomic_store_n(&box->gen, box->gen + 1, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&box->lock);
	return 0;
}

static int
vwire_link_status(struct droce_link *link)
{
	const struct vwire_pair *pair = link->priv;

	return !__atomic_load_n(&pair->carrier_down, __ATOMIC_RELAXED);
}

int
vwire_set_carrier(struct droce_link *end, bool up)
{
	struct vwire_pair *pair;

	if (!vwire_is_end(end))
		return -EINVAL;
	pair = end->priv;
	__atomic_store_n(&pair->carrier_down, !up, __ATOMIC_RELAXED);
	return 0;
}

void
vwire_get_stats(const struct droce_link *end, struct vwire_stats *tx_side)
{
	const struct vwire_pair *pair;
	const struct vwire_dir *dir;

	memset(tx_side, 0, sizeof(*tx_side));
	if (!vwire_is_end(end))
		return;
	pair = end->priv;
	dir = &pair->dir[vwire_end_id(end)];
	tx_side->tx = vwire_counter_read(&dir->tx.tx);
	tx_side->delivered = vwire_counter_read(&dir->rx.delivered);
	tx_side->dropped = vwire_counter_read(&dir->tx.dropped);
	tx_side->duplicated = vwire_counter_read(&dir->tx.duplicated);
	tx_side->reordered = vwire_counter_read(&dir->rx.reordered);
	tx_side->corrupted = vwire_counter_read(&dir->tx.corrupted);
	tx_side->delayed = vwire_counter_read(&dir->tx.delayed);
	tx_side->ring_full = vwire_counter_read(&dir->tx.ring_full);
	tx_side->refused_calls = vwire_counter_read(&dir->tx.refused_calls);
	tx_side->oversize = vwire_counter_read(&dir->tx.oversize);
	tx_side->bn_marked = vwire_counter_read(&dir->tx.bn_marked);
	tx_side->bn_dropped = vwire_counter_read(&dir->tx.bn_dropped);
	tx_side->bn_backlog_max = vwire_counter_read(&dir->tx.bn_backlog_max);
	for (int i = 0; i < VWIRE_BN_HIST; i++)
		tx_side->bn_hist[i] = vwire_counter_read(&dir->tx.bn_hist[i]);
}

/*
 * Unplug one end: what was on its way to it is freed at once, and from now
 * on the peer's frames vanish (counted as dropped).  Frames this end sent
 * stay on the wire for the peer.  The last end to close frees the rest.
 * The caller must not use the end concurrently with closing it.
 */
static void
vwire_close(struct droce_link *link)
{
	struct vwire_pair *pair = link->priv;
	enum vwire_end_id me = vwire_end_id(link);

	__atomic_store_n(&pair->closed[me], true, __ATOMIC_RELEASE);
	/* we are this ring's only consumer, so draining it here is safe */
	vwire_rx_flush(&pair->dir[vwire_peer_id(me)]);
	if (__atomic_sub_fetch(&pair->open_ends, 1, __ATOMIC_ACQ_REL) == 0)
		vwire_pair_free(pair);
}
