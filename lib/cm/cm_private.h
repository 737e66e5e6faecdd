/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_private.h - lib/cm's objects: the agent of an attached context (its
 * GSI QP), the ids (one connection end each) and their channels.
 *
 * Everything is reached through one registry (cm_api.c) under one mutex:
 * the CM is a control path, and librdmacm's API has no context argument
 * to hang it on.  Files by role: cm_wire.c (MAD layouts), cm_gsi.c (QP1:
 * MAD send and receive), cm_proto.c (the state machine of IBTA 12.9),
 * cm_api.c (the droce_rdma_* calls and events).
 */
#ifndef DROCE_CM_PRIVATE_H
#define DROCE_CM_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "droce.h"
#include "cm_wire.h"

#define CM_GRH_LEN 40
#define CM_RECV_SLOTS 64
#define CM_SEND_SLOTS 64
#define CM_AH_CACHE 64
#define CM_MAX_GIDS 16

/* rdma_cm's defaults (cma.c): CM response timeout 20 (about 4.3 s), 15 retries */
#define CM_DEFAULT_TIMEOUT 20
#define CM_DEFAULT_RETRIES 15
/* the QPs' local ACK timeout (about 67 ms) and the REQ's hop limit */
#define CM_ACK_TIMEOUT 14
#define CM_HOP_LIMIT 64
/* RNR NAK timer the QPs ask for: 0, 655.36 ms (IBTA table 45), as the
 * kernel's ib_cm (cm_init_qp_rtr_attr): a peer whose receive is not posted
 * yet gets its RNR retries' worth of seconds, not milliseconds (rdma-core's
 * test_rdmacm_async_traffic_external_qp sends as soon as it connected) */
#define CM_MIN_RNR_TIMER 0
/* REQs for a port nobody listens on, held for a listener (cm_proto.c) */
#define CM_HELD_REQS 16
#define CM_REQ_HOLD_NS (250u * 1000 * 1000)

struct cm_held_req {
	uint64_t deadline_ns;		/* 0: a free slot */
	uint64_t tid;
	uint32_t comm_id;		/* the REQ's Local Communication ID */
	uint16_t ps;			/* its service ID's port space */
	uint16_t port;
	uint8_t src_gid[16];
	uint8_t dst_gid[16];
	uint8_t mad[CM_MAD_LEN];
};

/* a MAD received on a GSI QP not lib/cm's own state machine's (cm_relay.c) */
typedef void (*cm_gsi_rx_t)(void *arg, const uint8_t src_gid[16],
			    const uint8_t dst_gid[16], const uint8_t *mad);

struct cm_agent {
	TAILQ_ENTRY(cm_agent) link;
	struct droce_context *ctx;
	/*
	 * relay: the context cannot own QP1 (droced's client): MADs go and
	 * come through its provider's cm_relay op, relay_fd (an eventfd
	 * droced adds to) counting those waiting; no QP, CQ, MR or AH here.
	 */
	bool relay;
	int relay_fd;
	/* droced's own port (cm_relay.c): MADs to rx, the CQ on channel */
	cm_gsi_rx_t rx;
	void *rx_arg;
	struct droce_comp_channel *channel;
	struct droce_pd *pd;
	struct droce_cq *cq;
	struct droce_qp *qp;		/* the GSI QP, QPN 1 */
	struct droce_mr *mr;
	uint8_t *buf;			/* receive slots, then send slots */
	bool send_busy[CM_SEND_SLOTS];
	struct droce_ah *send_ah[CM_SEND_SLOTS];	/* a busy slot's AH */
	struct {
		uint8_t gid[16];
		struct droce_ah *ah;
	} ah[CM_AH_CACHE];
	unsigned int nah;
	uint8_t gids[CM_MAX_GIDS][16];	/* the port's GID table */
	unsigned int ngids;
	enum droce_mtu mtu;		/* the port's active MTU */
	uint64_t guid;
	struct cm_held_req held[CM_HELD_REQS];
};

enum cm_state {
	CM_IDLE,
	CM_ADDR_BOUND,		/* resolve_addr / bind_addr done */
	CM_ROUTE_RESOLVED,
	CM_LISTEN,
	CM_REQ_SENT,		/* active: waiting for REP */
	CM_REP_RCVD,		/* active, the caller's QP: waiting for establish */
	CM_REQ_RCVD,		/* passive: waiting for accept / reject */
	CM_REP_SENT,		/* passive: waiting for RTU */
	CM_ESTABLISHED,
	CM_DREQ_SENT,		/* waiting for DREP */
	CM_TIMEWAIT,		/* duplicate DREQs answered until it ends */
	CM_CLOSED,		/* rejected, timed out or timewait over */
	/* a UD id whose SIDR is over: active, the SIDR_REP came; passive,
	 * its SIDR_REP sent (kept in mad, sent again to a duplicate SIDR_REQ) */
	CM_SIDR_DONE,
};

struct cm_channel {
	struct droce_rdma_event_channel pub;
	TAILQ_HEAD(cm_event_list, cm_event) events;
	unsigned int nids;
};

struct cm_event {
	struct droce_rdma_cm_event pub;
	TAILQ_ENTRY(cm_event) link;
	uint8_t pdata[CM_RTU_PDATA];	/* the largest private data */
};

/* what one side of a connection negotiated (REQ / REP / accept) */
struct cm_qp_params {
	uint32_t remote_qpn;
	/*
	 * A REQ's or REP's Starting PSN is the one its sender's receive queue
	 * expects (as the kernel's ib_cm: the REQ's is the active side's
	 * rq_psn and the passive side's sq_psn, the REP's the reverse).
	 */
	uint32_t rq_psn;		/* ours, sent in our REQ / REP */
	uint32_t sq_psn;		/* the peer's, from its REP / REQ */
	enum droce_mtu mtu;
	uint8_t responder_resources;	/* max_dest_rd_atomic */
	uint8_t initiator_depth;	/* max_rd_atomic */
	uint8_t retry_count;
	uint8_t rnr_retry;
	uint8_t ack_timeout;
};

/* multicast groups one RDMA_PS_UDP id may join */
#define CM_ID_MAX_MC 16

struct cm_id {
	struct droce_rdma_cm_id pub;
	TAILQ_ENTRY(cm_id) link;
	struct cm_channel *ch;
	struct cm_agent *agent;		/* NULL: a listener on every address */
	enum cm_state state;
	uint16_t port;			/* bound or source port (host order) */
	uint8_t local_gid[16];
	uint8_t remote_gid[16];
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint64_t tid;
	struct cm_qp_params qp;
	/*
	 * The caller moves its own QP (pub.qp NULL; rdma_init_qp_attr), whose
	 * number came in the conn param of connect / accept: the CM sends it
	 * in the REQ / REP and never touches the QP.
	 */
	uint32_t ext_qpn;
	uint8_t tos;			/* the connection's traffic class */
	uint8_t ack_timeout;		/* 0: the REQ's (rdma_set_option) */
	uint8_t cm_timeout;		/* ours, 4.096 us * 2^t */
	uint8_t peer_cm_timeout;	/* the peer's (its REQ's local one) */
	uint8_t max_retries;
	uint8_t retries_left;
	uint64_t deadline_ns;		/* 0: no timer */
	uint8_t mad[CM_MAD_LEN];	/* the last MAD sent, resent on timeout */
	uint8_t req_pdata[CM_REQ_PDATA];	/* passive: the REQ's, for the event */
	unsigned int unacked;		/* its events got, not acked */
	/* destroyed by the application while its DREQ waits for the DREP:
	 * kept for the protocol only, no event posted (cm_api.c) */
	bool departing;
	/* RDMA_PS_UDP: the multicast groups it joined (cm_api.c) */
	struct cm_mc {
		uint8_t mgid[16];
		bool send_only;		/* its QP was not attached */
	} mc[CM_ID_MAX_MC];
	unsigned int nmc;
};

static inline struct cm_id *
cm_id_of(struct droce_rdma_cm_id *id)
{
	return (struct cm_id *)id;
}

/* cm_api.c: the registry, for cm_proto.c (the lock is held) */
struct cm_id *cm_find_local(struct cm_agent *a, uint32_t local_comm_id);
struct cm_id *cm_find_remote(struct cm_agent *a, const uint8_t gid[16],
			     uint32_t remote_comm_id);
/* a's (or a wildcard) listener on port of port space ps */
struct cm_id *cm_find_listener(struct cm_agent *a, uint16_t port, uint16_t ps);
struct cm_id *cm_new_passive(struct cm_id *listener, struct cm_agent *a);
/* a new local comm ID for an id of a (0: none to be had, a relay's refusal) */
uint32_t cm_next_comm_id(struct cm_agent *a);
/* a relayed agent's comm ID of an id being freed given back */
void cm_free_comm_id(struct cm_agent *a, uint32_t comm_id);
uint64_t cm_now_ns(void);
/* queue an event on id's channel; pdata (len bytes) copied */
int cm_event_post(struct cm_id *id, enum droce_rdma_cm_event_type type,
		  int status, const uint8_t *pdata, uint8_t len);
struct cm_event *cm_event_last(struct cm_id *id);

/* cm_gsi.c */
int cm_gsi_open(struct cm_agent *a);
void cm_gsi_close(struct cm_agent *a);
/* send a MAD to QP1 at gid from the local GID of the same family */
int cm_gsi_send(struct cm_agent *a, const uint8_t gid[16], const uint8_t *mad);
/* poll the GSI CQ (which runs the transport), each MAD to cm_proto_recv
 * (a->rx when set); a relay: the MADs droced holds for this context */
void cm_gsi_poll(struct cm_agent *a);
/* a relay: ask droced for port's REQs (on) or stop (0 or -errno) */
int cm_gsi_listen(struct cm_agent *a, uint16_t port, bool on);
int cm_gid_index(const struct cm_agent *a, const uint8_t gid[16]);
bool cm_gid_is_v4(const uint8_t gid[16]);

/* cm_proto.c */
void cm_proto_recv(struct cm_agent *a, const uint8_t src_gid[16],
		   const uint8_t dst_gid[16], const uint8_t *mad);
void cm_proto_timer(struct cm_id *id, uint64_t now);
/* a's held REQs: to a listener that appeared, or rejected at their deadline */
void cm_proto_held(struct cm_agent *a, uint64_t now);
/* a held REQ's slot for a MAD (NULL: all taken) */
struct cm_held_req *cm_proto_hold_slot(struct cm_agent *a);
int cm_proto_connect(struct cm_id *id, const struct droce_rdma_conn_param *p);
int cm_proto_accept(struct cm_id *id, const struct droce_rdma_conn_param *p);
/* REJ reason 28 "consumer reject", p's private data (p may be NULL) */
int cm_proto_reject(struct cm_id *id, const struct droce_rdma_conn_param *p);
int cm_proto_disconnect(struct cm_id *id);
/* the caller's QP (ext_qpn): the RTU after its REP (rdma_establish) */
int cm_proto_establish(struct cm_id *id);
/* a communication-established event of the passive side's QP: as the RTU */
int cm_proto_comm_est(struct cm_id *id);
/* the attributes that move a QP to attr->qp_state for this connection */
int cm_proto_init_qp_attr(struct cm_id *id, struct droce_qp_attr *attr, int *mask);

/* the annex A11 header of an active id's REQ / SIDR_REQ; its peer's port */
void cm_ip_hdr_of(const struct cm_id *id, struct cm_ip_hdr *h);
uint16_t cm_dst_port(const struct cm_id *id);

/* cm_sidr.c: UD ids (RDMA_PS_UDP, RDMA_PS_IPOIB), SIDR of IBTA 12.11 */
static inline bool
cm_id_is_ud(const struct cm_id *id)
{
	return id->pub.qp_type == DROCE_QPT_UD;
}

void cm_sidr_recv_req(struct cm_agent *a, const uint8_t src_gid[16],
		      const uint8_t dst_gid[16], const struct cm_mad_hdr *h,
		      const uint8_t *mad);
void cm_sidr_recv_rep(struct cm_agent *a, const uint8_t *mad);
/* a held SIDR_REQ nobody listened for in time: SIDR_REP "unsupported" */
void cm_sidr_refuse(struct cm_agent *a, const struct cm_held_req *r);
void cm_sidr_timer(struct cm_id *id, uint64_t now);
int cm_sidr_connect(struct cm_id *id, const struct droce_rdma_conn_param *p);
int cm_sidr_accept(struct cm_id *id, const struct droce_rdma_conn_param *p);
int cm_sidr_reject(struct cm_id *id, const struct droce_rdma_conn_param *p);
/* a UD QP of the id's: INIT (Q_Key DROCE_RDMA_UDP_QKEY), RTR, RTS; 0 or an errno */
int cm_sidr_qp_ready(struct droce_qp *qp);
/* rdma_init_qp_attr of a UD id: INIT with the Q_Key, RTR, RTS (SQ PSN 0) */
int cm_sidr_init_qp_attr(struct cm_id *id, struct droce_qp_attr *attr, int *mask);

#endif /* DROCE_CM_PRIVATE_H */
