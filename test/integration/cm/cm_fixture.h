/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RDMA CM tests' helpers (test_cm.c, test_sidr.c): non-blocking event
 * channels, 198.18.0.x addresses, and running the CM until an event comes.
 */
#ifndef CM_FIXTURE_H
#define CM_FIXTURE_H

#include <netinet/in.h>
#include <stdint.h>

#include "droce.h"

/* a channel whose fd is O_NONBLOCK: each get_cm_event is one pass */
struct droce_rdma_event_channel *cmfx_channel(void);
/* 198.18.0.host:port */
void cmfx_sin(struct sockaddr_in *sin, uint8_t host, uint16_t port);
/* Run the CM until ch has an event (10 s at most); it must be type. */
struct droce_rdma_cm_event *cmfx_expect(struct droce_rdma_event_channel *ch,
					enum droce_rdma_cm_event_type type);
/* Run the CM for seconds: no event on either channel. */
void cmfx_spin(struct droce_rdma_event_channel *a, struct droce_rdma_event_channel *b,
	       double seconds);
void cmfx_ack(struct droce_rdma_cm_event *ev);

#endif /* CM_FIXTURE_H */
