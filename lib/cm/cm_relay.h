/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_relay.h - what droced needs of lib/cm to own a port's GSI QP for its
 * clients and relay their CM MADs (app/droced/README.md, "RDMA CM"): the
 * port's QP1, and the reading of a MAD that routing and the checks of a
 * client's MADs need.  Control path only.
 */
#ifndef DROCE_CM_RELAY_H
#define DROCE_CM_RELAY_H

#include <stdbool.h>
#include <stdint.h>

#include "droce.h"

#define CM_RELAY_MAD_LEN 256

struct cm_port;

/* a MAD that reached the port: its sender's and destination GIDs */
typedef void (*cm_port_rx_t)(void *arg, const uint8_t src_gid[16],
			     const uint8_t dst_gid[16], const uint8_t *mad);

/* ctx's GSI QP (QP1 of port 1), its CQ on a completion channel: NULL with errno. */
struct cm_port *cm_port_open(struct droce_context *ctx, cm_port_rx_t rx, void *arg);
void cm_port_close(struct cm_port *p);
/* the fd to poll: readable when MADs completed (then cm_port_poll) */
int cm_port_fd(const struct cm_port *p);
/* the completions taken, each received MAD to rx; the CQ armed again */
void cm_port_poll(struct cm_port *p);
/* mad (CM_RELAY_MAD_LEN bytes) to QP1 at gid: 0 or -errno */
int cm_port_send(struct cm_port *p, const uint8_t gid[16], const uint8_t *mad);
/* gid is one of the port's: true, and src the GID a MAD to it is sent from */
bool cm_port_local(const struct cm_port *p, const uint8_t gid[16], uint8_t src[16]);

/* What routing needs of a received MAD (cm_relay_route). */
struct cm_relay_route {
	bool req;		/* a REQ or SIDR_REQ: by port; else by comm_id */
	uint16_t port;		/* a REQ's RDMA_PS_TCP port, a SIDR_REQ's UDP / IPoIB one */
	/* a REQ's Local Comm ID, a SIDR_REQ's or SIDR_REP's Request ID, else
	 * the Remote Comm ID */
	uint32_t comm_id;
};

/* mad (len bytes) a CM MAD to route: 0, or -EINVAL (not one: dropped). */
int cm_relay_route(const uint8_t *mad, size_t len, struct cm_relay_route *r);

/* What the check of a MAD a client sends needs. */
struct cm_relay_out {
	uint32_t local_comm_id;		/* whose it is sent as (0: none) */
	uint32_t remote_comm_id;	/* a SIDR_REP's: its Request ID */
	/* a REJ answering a REQ, or a SIDR_REP (which answers a SIDR_REQ) */
	bool rej_of_req;
};

/* mad (len bytes) a CM MAD a client may send (a Send of REQ ... DREP,
 * SIDR_REQ, SIDR_REP): 0 or -EINVAL. */
int cm_relay_out(const uint8_t *mad, size_t len, struct cm_relay_out *o);

/* out: the REJ (reason 8, invalid service ID) answering the REQ req; for
 * a SIDR_REQ the SIDR_REP with status 1 "service ID not supported". */
void cm_relay_rej_req(uint8_t *out, const uint8_t *req);

#endif /* DROCE_CM_RELAY_H */
