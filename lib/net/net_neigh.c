/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The neighbour table: GID -> MAC with states, probing, aging, the frames
 * waiting for a resolution, and the timer.  A flat array scanned linearly
 * (a few hundred entries at most; the transport resolves per QP/AH, not
 * per packet).  Deadlines use the host's clock (h->now).
 *
 *   (none) --resolve--> INCOMPLETE --answer--> REACHABLE --reachable_ms--> STALE
 *   INCOMPLETE --tries exhausted--> FAILED --failed_ms--> (none)
 *   STALE --resolve--> STALE+probing --answer--> REACHABLE
 *                                    --tries exhausted--> FAILED
 *   any ARP/NA naming the GID (not PERMANENT) --> REACHABLE
 *   a solicited NA without the MAC (REACHABLE or STALE) --> REACHABLE
 *
 * Frames sent to an INCOMPLETE entry are held, linked through an mbuf
 * dynamic field (no allocation), within a byte budget per entry and one
 * for the host; resolution releases them in order.  What the output
 * refuses (its queue full, the link taking nothing) stays held on the
 * resolved entry and is offered again at the next timer call; meanwhile
 * the entry resolves -EAGAIN, so that nothing overtakes it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "net_private.h"

#define NET_NO_DEADLINE UINT64_MAX

static struct net_neigh *
neigh_find(const struct net_host *h, const uint8_t gid[16])
{
	for (uint32_t i = 0; i < h->neigh_used; i++) {
		struct net_neigh *e = &h->neigh[i];

		if (e->state != NET_NEIGH_NONE && memcmp(e->gid, gid, 16) == 0)
			return e;
	}
	return NULL;
}

/* e's state or MAC changed: handles to it (struct net_neigh_ref) resolve again. */
static void
neigh_changed(struct net_host *h, struct net_neigh *e)
{
	if (++h->neigh_gen == 0)
		h->neigh_gen = 1;	/* 0 is never valid */
	e->gen = h->neigh_gen;
}

static void
neigh_set_deadline(struct net_host *h, struct net_neigh *e, uint64_t deadline)
{
	e->deadline = deadline;
	if (deadline < h->next_deadline)
		h->next_deadline = deadline;
}

/* Take the oldest frame held for e (e has one). */
static struct rte_mbuf *
neigh_pend_pop(struct net_host *h, struct net_neigh *e)
{
	struct rte_mbuf *m = e->pend_head;

	e->pend_head = *net_pend_next(h, m);
	if (e->pend_head == NULL)
		e->pend_tail = NULL;
	e->pend_count--;
	e->pend_bytes -= m->pkt_len;
	h->pend_total -= m->pkt_len;
	return m;
}

static void
neigh_pend_drop(struct net_host *h, struct net_neigh *e)
{
	while (e->pend_count > 0) {
		rte_pktmbuf_free(neigh_pend_pop(h, e));
		net_count(h, NET_CNT_DROP_PENDING);
	}
}

/*
 * Hold m for e, within the byte budgets.  Over them, m is refused and the
 * frames held stay: they are the start of what the transport sent, and
 * keeping the start costs the least (go-back-N resends from the first
 * gap; a UC message without its FIRST is lost whole).
 */
static int
neigh_pend_add(struct net_host *h, struct net_neigh *e, struct rte_mbuf *m)
{
	if (m->pkt_len > h->pend_bytes_max - e->pend_bytes ||
	    m->pkt_len > h->pend_total_max - h->pend_total) {
		rte_pktmbuf_free(m);
		net_count(h, NET_CNT_DROP_PENDING_BUDGET);
		return -ENOBUFS;
	}
	*net_pend_next(h, m) = NULL;
	if (e->pend_tail != NULL)
		*net_pend_next(h, e->pend_tail) = m;
	else
		e->pend_head = m;
	e->pend_tail = m;
	e->pend_count++;
	e->pend_bytes += m->pkt_len;
	h->pend_total += m->pkt_len;
	return -EAGAIN;
}

static void
neigh_fill_macs(const struct net_host *h, struct rte_mbuf *m,
		const struct rte_ether_addr *dst)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);

	rte_ether_addr_copy(dst, &eth->dst_addr);
	rte_ether_addr_copy(&h->link->mac, &eth->src_addr);
}

/* Put m back as the oldest frame held for e (the output refused it). */
static void
neigh_pend_push_front(struct net_host *h, struct net_neigh *e, struct rte_mbuf *m)
{
	*net_pend_next(h, m) = e->pend_head;
	if (e->pend_tail == NULL)
		e->pend_tail = m;
	e->pend_head = m;
	e->pend_count++;
	e->pend_bytes += m->pkt_len;
	h->pend_total += m->pkt_len;
}

/* m, its MACs filled, to the output or the transmit buffer: 0 (taken) or
 * -EAGAIN (refused for the moment, still the caller's). */
static int
neigh_out(struct net_host *h, struct rte_mbuf *m)
{
	if (h->out != NULL)
		return h->out(h->out_arg, m);
	return net_tx_try(h, m);
}

/*
 * e is resolved: its held frames go out, oldest first, until the output
 * refuses one (kept, with those behind it, for net_host_timer).  The
 * owner hears when the last one was taken: they left only now.
 */
static void
neigh_pend_send(struct net_host *h, struct net_neigh *e)
{
	bool sent = false;

	while (e->pend_count > 0) {
		struct rte_mbuf *m = neigh_pend_pop(h, e);

		neigh_fill_macs(h, m, &e->mac);
		if (neigh_out(h, m) != 0) {
			neigh_pend_push_front(h, e, m);
			net_count(h, NET_CNT_TX_HELD);
			h->release_again = true;
			return;
		}
		net_count(h, NET_CNT_TX_PENDING);
		sent = true;
	}
	if (sent && h->released != NULL)
		h->released(h->out_arg, e->gid);
}

static bool
neigh_resolved(const struct net_neigh *e)
{
	return e->state == NET_NEIGH_REACHABLE || e->state == NET_NEIGH_STALE ||
	       e->state == NET_NEIGH_PERMANENT;
}

/* Offer again what the output refused (net_host_timer). */
void
net_neigh_release_again(struct net_host *h)
{
	h->release_again = false;
	/* a refusal stops the scan (the output is full for every entry) and
	 * sets release_again for the next call */
	for (uint32_t i = 0; i < h->neigh_used && !h->release_again; i++) {
		struct net_neigh *e = &h->neigh[i];

		if (e->pend_count > 0 && neigh_resolved(e))
			neigh_pend_send(h, e);
	}
}

static void
neigh_free(struct net_host *h, struct net_neigh *e)
{
	neigh_pend_drop(h, e);
	e->state = NET_NEIGH_NONE;
	neigh_changed(h, e);
	while (h->neigh_used > 0 &&
	       h->neigh[h->neigh_used - 1].state == NET_NEIGH_NONE)
		h->neigh_used--;
}

/*
 * A slot for a new entry: a free one, else the FAILED entry or the STALE
 * (not probing) entry used longest ago.  NULL when all are busy.
 */
static struct net_neigh *
neigh_alloc(struct net_host *h, const uint8_t gid[16])
{
	struct net_neigh *victim = NULL;
	struct net_neigh *e = NULL;

	for (uint32_t i = 0; i < h->neigh_used; i++) {
		struct net_neigh *c = &h->neigh[i];

		if (c->state == NET_NEIGH_NONE) {
			e = c;
			break;
		}
		if (c->state == NET_NEIGH_FAILED ||
		    (c->state == NET_NEIGH_STALE && !c->probing &&
		     c->pend_count == 0)) {
			if (victim == NULL ||
			    (victim->state != NET_NEIGH_FAILED &&
			     (c->state == NET_NEIGH_FAILED ||
			      c->last_used < victim->last_used)))
				victim = c;
		}
	}
	if (e == NULL && h->neigh_used < h->neigh_max)
		e = &h->neigh[h->neigh_used++];
	if (e == NULL && victim != NULL) {
		neigh_pend_drop(h, victim);
		net_count(h, NET_CNT_NEIGH_EVICTED);
		e = victim;
	}
	if (e == NULL) {
		net_count(h, NET_CNT_NEIGH_FULL);
		return NULL;
	}
	memcpy(e->gid, gid, 16);
	e->state = NET_NEIGH_INCOMPLETE;
	memset(&e->mac, 0, sizeof(e->mac));
	neigh_changed(h, e);
	e->deadline = NET_NO_DEADLINE;
	e->last_used = h->now;
	e->tries = 0;
	e->probing = false;
	e->pend_head = NULL;
	e->pend_tail = NULL;
	e->pend_count = 0;
	e->pend_bytes = 0;
	return e;
}

/* Send one ARP request / NS for e and schedule the next try. */
static void
neigh_probe(struct net_host *h, struct net_neigh *e)
{
	const struct rte_ether_addr *dmac = e->state == NET_NEIGH_STALE ? &e->mac : NULL;
	const struct net_addr *src;
	int err;

	e->tries++;
	neigh_set_deadline(h, e, h->now + h->retry_tsc);
	src = net_addr_for_peer(h, e->gid, &err);
	if (src == NULL)
		return;		/* the address went away: the tries run out */
	if (net_gid_is_v4(e->gid))
		(void)net_arp_probe(h, src, e->gid, dmac);
	else
		(void)net_nd_probe(h, src, e->gid, dmac);
}

static void
neigh_fail(struct net_host *h, struct net_neigh *e)
{
	neigh_pend_drop(h, e);
	e->state = NET_NEIGH_FAILED;
	neigh_changed(h, e);
	e->probing = false;
	neigh_set_deadline(h, e, h->now + h->failed_tsc);
	net_count(h, NET_CNT_NEIGH_FAILED);
}

void
net_neigh_learn(struct net_host *h, const uint8_t gid[16],
		const struct rte_ether_addr *mac, bool create)
{
	struct net_neigh *e = neigh_find(h, gid);

	if (!rte_is_valid_assigned_ether_addr(mac))
		return;
	if (e == NULL) {
		int err;

		if (!create || net_addr_for_peer(h, gid, &err) == NULL)
			return;
		e = neigh_alloc(h, gid);
		if (e == NULL)
			return;
	}
	if (e->state == NET_NEIGH_PERMANENT)
		return;
	if (e->state != NET_NEIGH_REACHABLE)
		net_count(h, NET_CNT_NEIGH_LEARNED);
	if (e->state != NET_NEIGH_REACHABLE || !rte_is_same_ether_addr(&e->mac, mac))
		neigh_changed(h, e);
	e->state = NET_NEIGH_REACHABLE;
	e->mac = *mac;
	e->tries = 0;
	e->probing = false;
	neigh_set_deadline(h, e, h->now + h->reachable_tsc);
	neigh_pend_send(h, e);
}

/*
 * A solicited advertisement without a target link-layer address: Linux
 * answers a unicast NS (our refresh of a STALE entry) that way.  It
 * confirms the MAC the entry has (RFC 4861 7.2.5); an INCOMPLETE entry
 * has none to confirm and keeps waiting.
 */
void
net_neigh_confirm(struct net_host *h, const uint8_t gid[16])
{
	struct net_neigh *e = neigh_find(h, gid);

	if (e != NULL && (e->state == NET_NEIGH_REACHABLE ||
			  e->state == NET_NEIGH_STALE))
		net_neigh_learn(h, gid, &e->mac, false);
}

static int
neigh_check_gid(const struct net_host *h, const uint8_t gid[16])
{
	if (net_gid_is_multicast_or_zero(gid) || net_addr_find(h, gid) != NULL)
		return -EINVAL;
	return 0;
}

/*
 * One of our own addresses as a neighbour (loopback, as on an RNIC: two
 * QPs of one port talk to each other): a permanent entry with our own
 * MAC.  The link hands frames to its own MAC back to the receive side
 * (lib/link's loopback).
 */
static struct net_neigh *
neigh_add_local(struct net_host *h, const uint8_t gid[16])
{
	struct net_neigh *e;

	if (h->link == NULL)
		return NULL;
	e = neigh_alloc(h, gid);
	if (e == NULL)
		return NULL;
	e->state = NET_NEIGH_PERMANENT;
	e->mac = h->link->mac;
	neigh_changed(h, e);
	return e;
}

/* Resolve; *ep is the entry (also on -EAGAIN), NULL when there is none. */
static int
neigh_resolve(struct net_host *h, const uint8_t gid[16],
	      struct rte_ether_addr *mac, struct net_neigh **ep)
{
	struct net_neigh *e;
	int ret;

	*ep = NULL;
	if (net_gid_is_multicast_or_zero(gid))
		return -EINVAL;
	e = neigh_find(h, gid);
	if (e == NULL && net_addr_find(h, gid) != NULL) {
		e = neigh_add_local(h, gid);
		if (e == NULL)
			return -ENOBUFS;
	}
	if (e == NULL) {
		if (net_addr_for_peer(h, gid, &ret) == NULL)
			return ret;
		if (h->table_only)
			return -EHOSTUNREACH;	/* nothing to probe with */
		e = neigh_alloc(h, gid);
		if (e == NULL)
			return -ENOBUFS;
		neigh_probe(h, e);
		net_tx_flush(h);
	}
	*ep = e;
	e->last_used = h->now;
	switch (e->state) {
	case NET_NEIGH_STALE:
		if (!e->probing) {
			e->probing = true;
			e->tries = 0;
			neigh_probe(h, e);
			net_tx_flush(h);
		}
		/* fall through - a stale MAC is still the best guess */
	case NET_NEIGH_REACHABLE:
	case NET_NEIGH_PERMANENT:
		if (e->pend_count > 0)
			return -EAGAIN;	/* behind what the output refused */
		if (mac != NULL)
			*mac = e->mac;
		return 0;
	case NET_NEIGH_INCOMPLETE:
		return -EAGAIN;
	default:
		return -EHOSTUNREACH;
	}
}

int
net_host_resolve(struct net_host *h, const uint8_t gid[16],
		 struct rte_ether_addr *mac)
{
	struct net_neigh *e;

	if (h == NULL || gid == NULL)
		return -EINVAL;
	return neigh_resolve(h, gid, mac, &e);
}

int
net_host_resolve_ref(struct net_host *h, const uint8_t gid[16],
		     struct rte_ether_addr *mac, struct net_neigh_ref *ref)
{
	struct net_neigh *e;
	int ret;

	ref->gen = 0;
	if (h == NULL || gid == NULL)
		return -EINVAL;
	ret = neigh_resolve(h, gid, mac, &e);
	if (ret == 0 && (e->state == NET_NEIGH_REACHABLE ||
			 e->state == NET_NEIGH_PERMANENT)) {
		ref->idx = (uint32_t)(e - h->neigh);
		ref->gen = e->gen;
	}
	return ret;
}

bool
net_host_neigh_mac(struct net_host *h, const struct net_neigh_ref *ref,
		   struct rte_ether_addr *mac)
{
	struct net_neigh *e;

	if (unlikely(ref->gen == 0 || ref->idx >= h->neigh_used))
		return false;
	e = &h->neigh[ref->idx];
	if (unlikely(e->gen != ref->gen || e->pend_count != 0))
		return false;
	e->last_used = h->now;
	*mac = e->mac;
	return true;
}

int
net_host_output(struct net_host *h, const uint8_t gid[16], struct rte_mbuf *m)
{
	struct rte_ether_addr mac;
	struct net_neigh *e;
	int ret;

	if (h == NULL || gid == NULL || m == NULL ||
	    m->data_len < RTE_ETHER_HDR_LEN) {
		rte_pktmbuf_free(m);
		return -EINVAL;
	}
	ret = neigh_resolve(h, gid, &mac, &e);
	if (ret == 0) {
		neigh_fill_macs(h, m, &mac);
		if (neigh_out(h, m) == 0) {
			net_tx_flush(h);
			return 0;
		}
		/* refused for the moment: held as a released frame is */
		ret = neigh_pend_add(h, e, m);
		if (ret == -EAGAIN) {
			net_count(h, NET_CNT_TX_HELD);
			h->release_again = true;
		}
		return ret;
	}
	if (ret == -EAGAIN)
		return neigh_pend_add(h, e, m);
	rte_pktmbuf_free(m);
	net_count(h, NET_CNT_DROP_PENDING);
	return ret;
}

int
net_host_add_static(struct net_host *h, const uint8_t gid[16],
		    const struct rte_ether_addr *mac)
{
	struct net_neigh *e;
	int ret;

	if (h == NULL || gid == NULL || mac == NULL ||
	    !rte_is_valid_assigned_ether_addr(mac))
		return -EINVAL;
	ret = neigh_check_gid(h, gid);
	if (ret != 0)
		return ret;
	e = neigh_find(h, gid);
	if (e == NULL)
		e = neigh_alloc(h, gid);
	if (e == NULL)
		return -ENOBUFS;
	e->state = NET_NEIGH_PERMANENT;
	e->mac = *mac;
	neigh_changed(h, e);
	e->probing = false;
	e->tries = 0;
	e->deadline = NET_NO_DEADLINE;
	neigh_pend_send(h, e);
	net_tx_flush(h);
	return 0;
}

int
net_host_del_neigh(struct net_host *h, const uint8_t gid[16])
{
	struct net_neigh *e;

	if (h == NULL || gid == NULL)
		return -EINVAL;
	e = neigh_find(h, gid);
	if (e == NULL)
		return -ENOENT;
	neigh_free(h, e);
	return 0;
}

void
net_host_neigh_info(const struct net_host *h, const uint8_t gid[16],
		    struct net_neigh_info *info)
{
	const struct net_neigh *e = neigh_find(h, gid);

	memset(info, 0, sizeof(*info));
	if (e == NULL)
		return;
	info->state = e->state;
	info->mac = e->mac;
	info->tries = e->tries;
	info->pending = e->pend_count;
	info->pending_bytes = e->pend_bytes;
}

/* One entry whose deadline passed. */
static void
neigh_expire(struct net_host *h, struct net_neigh *e)
{
	switch (e->state) {
	case NET_NEIGH_INCOMPLETE:
		if (e->tries >= h->tries)
			neigh_fail(h, e);
		else
			neigh_probe(h, e);
		break;
	case NET_NEIGH_STALE:
		if (!e->probing)
			e->deadline = NET_NO_DEADLINE;
		else if (e->tries >= h->tries)
			neigh_fail(h, e);
		else
			neigh_probe(h, e);
		break;
	case NET_NEIGH_REACHABLE:
		e->state = NET_NEIGH_STALE;
		neigh_changed(h, e);
		e->probing = false;
		e->deadline = NET_NO_DEADLINE;
		net_count(h, NET_CNT_NEIGH_STALE);
		break;
	case NET_NEIGH_FAILED:
		neigh_free(h, e);
		break;
	default:
		e->deadline = NET_NO_DEADLINE;
		break;
	}
}

void
net_host_timer(struct net_host *h, uint64_t now)
{
	uint64_t next = NET_NO_DEADLINE;

	if (now > h->now)
		h->now = now;
	if (unlikely(h->release_again))
		net_neigh_release_again(h);
	if (h->now < h->next_deadline) {
		net_tx_flush(h);
		return;
	}
	for (uint32_t i = 0; i < h->neigh_used; i++) {
		struct net_neigh *e = &h->neigh[i];

		if (e->state == NET_NEIGH_NONE)
			continue;
		if (h->now >= e->deadline)
			neigh_expire(h, e);
		if (e->state != NET_NEIGH_NONE && e->deadline < next)
			next = e->deadline;
	}
	h->next_deadline = next;
	net_tx_flush(h);
}
