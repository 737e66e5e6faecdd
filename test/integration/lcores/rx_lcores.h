/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which EAL lcores received on a DPDK port's queues: an ethdev rx callback
 * on each queue records rte_lcore_id() of every rx_burst that returned
 * frames, so that a test can assert that the transport lcore, not the
 * application's, ran the engine that polled the port.
 */
#ifndef RX_LCORES_H
#define RX_LCORES_H

#include <stdint.h>

#define RX_LCORES_MAX_QUEUES 8

struct rx_lcores {
	uint64_t mask[RX_LCORES_MAX_QUEUES];	/* per queue: a bit per lcore */
};

/* Watch queues 0 .. nb_queues - 1 of the port named name (cleared). */
void rx_lcores_watch(const char *name, uint16_t nb_queues, struct rx_lcores *seen);
/* The lcores that received on queue q so far. */
uint64_t rx_lcores_of(const struct rx_lcores *seen, uint16_t q);

#endif /* RX_LCORES_H */
