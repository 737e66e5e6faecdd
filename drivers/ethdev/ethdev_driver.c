/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drivers/ethdev registered as the link driver "ethdev" (droce_link.h):
 * how lib/device opens a configured port and reads the link's counters
 * without including this driver.
 */
#include <errno.h>

#include <rte_common.h>

#include "droce_link.h"
#include "ethdev_link.h"
#include "ethdev_private.h"

static int
ethdev_driver_open(const struct droce_link_params *params, struct droce_link **out)
{
	struct ethdev_link_config cfg = {
		.port_id = params->port_id,
		.name = params->name,
		.mtu = params->mtu,
		.mtu_assume = params->mtu_assume,
		.nb_rxq = params->nb_queues,
		.nb_txq = params->nb_queues,
		.drop = params->drop,
		.seed = params->seed,
		.drop_limit = params->drop_limit,
		.tx_zc = params->tx_zc,
	};

	return ethdev_link_open(&cfg, out);
}

static int
ethdev_driver_stats(const struct droce_link *link, droce_link_stat_cb cb, void *arg)
{
	struct ethdev_link_stats st;
	int rc = ethdev_link_stats_get(link, &st);

	if (rc != 0)
		return rc;
#define ETHDEV_STAT(f) cb(arg, #f, st.f)
	ETHDEV_STAT(rx_pkts); ETHDEV_STAT(rx_bytes);
	ETHDEV_STAT(tx_pkts); ETHDEV_STAT(tx_bytes);
	ETHDEV_STAT(tx_full); ETHDEV_STAT(rx_linearized);
	ETHDEV_STAT(rx_multiseg_drops); ETHDEV_STAT(fault_drops);
	ETHDEV_STAT(hw_ipackets); ETHDEV_STAT(hw_opackets);
	ETHDEV_STAT(hw_imissed); ETHDEV_STAT(hw_ierrors);
	ETHDEV_STAT(hw_oerrors); ETHDEV_STAT(hw_rx_nombuf);
#undef ETHDEV_STAT
	return 0;
}

static const struct droce_link_driver ethdev_driver = {
	.name = "ethdev",
	.open = ethdev_driver_open,
	.stats = ethdev_driver_stats,
};

RTE_INIT(ethdev_driver_register)
{
	if (droce_link_driver_register(&ethdev_driver) != 0)
		ETHDEV_LOG(ERR, "cannot register the link driver \"ethdev\"");
}
