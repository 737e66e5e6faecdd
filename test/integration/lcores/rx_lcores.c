/* SPDX-License-Identifier: BSD-3-Clause */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "rx_lcores.h"

static uint16_t
note_lcore(uint16_t port, uint16_t queue, struct rte_mbuf *pkts[], uint16_t nb,
	   uint16_t max, void *arg)
{
	unsigned int lcore = rte_lcore_id();
	uint64_t *mask = arg;

	(void)port;
	(void)queue;
	(void)pkts;
	(void)max;
	/* a thread outside EAL (LCORE_ID_ANY) shows as bit 63 */
	if (nb != 0)
		__atomic_fetch_or(mask, UINT64_C(1) << (lcore < 63 ? lcore : 63),
				  __ATOMIC_RELAXED);
	return nb;
}

void
rx_lcores_watch(const char *name, uint16_t nb_queues, struct rx_lcores *seen)
{
	uint16_t port;

	memset(seen, 0, sizeof(*seen));
	assert_true(nb_queues <= RX_LCORES_MAX_QUEUES);
	assert_int_equal(rte_eth_dev_get_port_by_name(name, &port), 0);
	for (uint16_t q = 0; q < nb_queues; q++)
		assert_non_null(rte_eth_add_rx_callback(port, q, note_lcore,
							&seen->mask[q]));
}

uint64_t
rx_lcores_of(const struct rx_lcores *seen, uint16_t q)
{
	return __atomic_load_n(&seen->mask[q], __ATOMIC_RELAXED);
}
