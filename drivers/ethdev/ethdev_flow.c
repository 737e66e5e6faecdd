/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_flow rules for bifurcated PMDs (mlx5) in isolated mode: only the
 * traffic these rules match reaches droce's queue, everything else stays
 * with the kernel netdev.  UNTESTED on hardware (no such NIC here); on PMDs
 * without rte_flow the validation fails cleanly and open returns -ENOTSUP.
 *
 *   udp4:  ETH / IPV4 / UDP dst 4791        -> QUEUE 0
 *   udp6:  ETH / IPV6 / UDP dst 4791        -> QUEUE 0
 *   arp:   ETH type 0x0806                  -> QUEUE 0   (flow_arp_nd)
 *   icmp6: ETH / IPV6 / ICMP6               -> QUEUE 0   (flow_arp_nd)
 *
 * With several queues (several transport lcores) the two RoCE rules end
 * in an RSS action over all of them instead, hashing addresses and UDP
 * ports (the UDP source port differs per QP); ARP and ICMPv6 stay on
 * queue 0, whose lcore runs lib/net.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_flow.h>

#include "ethdev_private.h"

#define ETHDEV_ROCE_PORT 4791

enum ethdev_rule {
	ETHDEV_RULE_UDP4,
	ETHDEV_RULE_UDP6,
	ETHDEV_RULE_ARP,
	ETHDEV_RULE_ICMP6,
	ETHDEV_RULE_MAX
};

static const char *const ethdev_rule_names[ETHDEV_RULE_MAX] = {
	"udp4", "udp6", "arp", "icmp6",
};

/* One rule's pattern and actions, in storage that lives for the call. */
struct ethdev_rule_buf {
	struct rte_flow_attr attr;
	struct rte_flow_item pattern[5];
	struct rte_flow_action actions[2];
	struct rte_flow_action_queue queue;
	struct rte_flow_action_rss rss;
	uint16_t queues[ETHDEV_LINK_MAX_QUEUES];
	struct rte_flow_item_eth eth_spec, eth_mask;
	struct rte_flow_item_udp udp_spec, udp_mask;
};

/* The rule's action: queue 0, or RSS over nb_queues for RoCE. */
static void
ethdev_rule_action(struct ethdev_rule_buf *b, enum ethdev_rule rule,
		   uint16_t nb_queues)
{
	bool roce = rule == ETHDEV_RULE_UDP4 || rule == ETHDEV_RULE_UDP6;

	if (roce && nb_queues > 1) {
		for (uint16_t q = 0; q < nb_queues; q++)
			b->queues[q] = q;
		b->rss.func = RTE_ETH_HASH_FUNCTION_DEFAULT;
		b->rss.level = 0;
		b->rss.types = rule == ETHDEV_RULE_UDP4 ? RTE_ETH_RSS_NONFRAG_IPV4_UDP :
							  RTE_ETH_RSS_NONFRAG_IPV6_UDP;
		b->rss.queue_num = nb_queues;
		b->rss.queue = b->queues;
		b->actions[0].type = RTE_FLOW_ACTION_TYPE_RSS;
		b->actions[0].conf = &b->rss;
	} else {
		b->queue.index = 0;
		b->actions[0].type = RTE_FLOW_ACTION_TYPE_QUEUE;
		b->actions[0].conf = &b->queue;
	}
	b->actions[1].type = RTE_FLOW_ACTION_TYPE_END;
}

static void
ethdev_rule_build(struct ethdev_rule_buf *b, enum ethdev_rule rule,
		  uint16_t nb_queues)
{
	unsigned int i = 0;

	memset(b, 0, sizeof(*b));
	b->attr.ingress = 1;
	ethdev_rule_action(b, rule, nb_queues);

	b->pattern[i].type = RTE_FLOW_ITEM_TYPE_ETH;
	if (rule == ETHDEV_RULE_ARP) {
		b->eth_spec.type = RTE_BE16(RTE_ETHER_TYPE_ARP);
		b->eth_mask.type = RTE_BE16(0xffff);
		b->pattern[i].spec = &b->eth_spec;
		b->pattern[i].mask = &b->eth_mask;
	}
	i++;
	switch (rule) {
	case ETHDEV_RULE_UDP4:
		b->pattern[i++].type = RTE_FLOW_ITEM_TYPE_IPV4;
		break;
	case ETHDEV_RULE_UDP6:
	case ETHDEV_RULE_ICMP6:
		b->pattern[i++].type = RTE_FLOW_ITEM_TYPE_IPV6;
		break;
	default:
		break;
	}
	if (rule == ETHDEV_RULE_UDP4 || rule == ETHDEV_RULE_UDP6) {
		b->udp_spec.hdr.dst_port = RTE_BE16(ETHDEV_ROCE_PORT);
		b->udp_mask.hdr.dst_port = RTE_BE16(0xffff);
		b->pattern[i].type = RTE_FLOW_ITEM_TYPE_UDP;
		b->pattern[i].spec = &b->udp_spec;
		b->pattern[i].mask = &b->udp_mask;
		i++;
	} else if (rule == ETHDEV_RULE_ICMP6) {
		b->pattern[i++].type = RTE_FLOW_ITEM_TYPE_ICMP6;
	}
	b->pattern[i].type = RTE_FLOW_ITEM_TYPE_END;
}

static unsigned int
ethdev_rule_count(bool arp_nd)
{
	return arp_nd ? ETHDEV_RULE_MAX : ETHDEV_RULE_ARP;
}

int
ethdev_flow_validate(uint16_t port_id, uint16_t nb_queues, bool arp_nd)
{
	struct ethdev_rule_buf b;

	for (unsigned int r = 0; r < ethdev_rule_count(arp_nd); r++) {
		struct rte_flow_error err = { .message = NULL };
		int ret;

		ethdev_rule_build(&b, (enum ethdev_rule)r, nb_queues);
		ret = rte_flow_validate(port_id, &b.attr, b.pattern, b.actions, &err);
		if (ret != 0) {
			ETHDEV_LOG(ERR, "port %u: flow rule %s not supported (%s): %s",
				   port_id, ethdev_rule_names[r], rte_strerror(-ret),
				   err.message != NULL ? err.message : "no detail");
			return -ENOTSUP;
		}
	}
	return 0;
}

int
ethdev_flow_create(struct ethdev_priv *p, bool arp_nd)
{
	struct ethdev_rule_buf b;

	RTE_BUILD_BUG_ON(ETHDEV_RULE_MAX > ETHDEV_FLOW_MAX);
	for (unsigned int r = 0; r < ethdev_rule_count(arp_nd); r++) {
		struct rte_flow_error err = { .message = NULL };
		struct rte_flow *flow;

		ethdev_rule_build(&b, (enum ethdev_rule)r, p->nb_queues);
		flow = rte_flow_create(p->port_id, &b.attr, b.pattern, b.actions, &err);
		if (flow == NULL) {
			ETHDEV_LOG(ERR, "port %u: creating flow rule %s: %s",
				   p->port_id, ethdev_rule_names[r],
				   err.message != NULL ? err.message : "no detail");
			return -ENOTSUP;
		}
		p->flows[p->nb_flows++] = flow;
	}
	return 0;
}

void
ethdev_flow_destroy(struct ethdev_priv *p)
{
	while (p->nb_flows > 0) {
		struct rte_flow_error err;

		p->nb_flows--;
		(void)rte_flow_destroy(p->port_id, p->flows[p->nb_flows], &err);
	}
}

int
ethdev_link_flow_validate(uint16_t port_id, bool arp_nd)
{
	if (!rte_eth_dev_is_valid_port(port_id))
		return -EINVAL;
	return ethdev_flow_validate(port_id, 1, arp_nd);
}
