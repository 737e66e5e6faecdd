/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/transport: the RoCEv2 transport engine (what an RNIC does in
 * hardware).  This header is the library's interface for lib/verbs and
 * for tests; the public API stays in include/droce.h.
 *
 * Calls return 0 / -errno, creators return NULL and set errno.  Every call
 * must come from the lcore that owns the device (run-to-completion).
 */
#ifndef DROCE_TRANSPORT_H
#define DROCE_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>

#include "droce.h"

struct droce_link;
struct prot_tables;
struct tp_dev;
struct tp_qp;
struct tp_cq;
struct tp_ah;

#define TP_MAX_GIDS 16
#define TP_DEFAULT_MAX_QP 1024

struct tp_dev_config {
	uint32_t max_qp;	/* 0: TP_DEFAULT_MAX_QP */
	/*
	 * Linux rxe treats retry_cnt 7 as "retry forever"; IBTA says 7 retries.
	 * Default false (spec); true copies rxe (compatibility switch).
	 */
	bool retry_cnt_7_infinite;
};

int tp_dev_create(struct droce_context *ctx, struct prot_tables *prot,
		  const struct tp_dev_config *cfg, struct tp_dev **out);
/* -EBUSY while QPs exist. */
int tp_dev_destroy(struct tp_dev *dev);
/* The link packets go out on and come in from (one per device for now). */
int tp_dev_attach_link(struct tp_dev *dev, struct droce_link *link);
/*
 * The host stack of a real port (lib/net): it takes the non-RoCE frames
 * (ARP, ND, ICMP echo) out of every received burst, resolves peers' MAC
 * addresses and holds frames for peers still being resolved.  Without one
 * (virtual wire tests) MACs come from tp_dev_add_neigh().
 */
struct net_host;
int tp_dev_attach_host(struct tp_dev *dev, struct net_host *host);

/* Add a local GID (IPv4-mapped or IPv6); returns its index or -errno. */
int tp_dev_add_gid(struct tp_dev *dev, const uint8_t gid[16]);
int tp_dev_query_gid(const struct tp_dev *dev, unsigned int index,
		     uint8_t gid[16]);
/* Static neighbour entry: the MAC address of a peer GID. */
int tp_dev_add_neigh(struct tp_dev *dev, const uint8_t gid[16],
		     const struct rte_ether_addr *mac);
/* Receive, run timers, send.  Returns packets handled. */
int tp_progress(struct tp_dev *dev);

/* Counters: values by enum tp_counter (tp_counters.h), names alike. */
const uint64_t *tp_dev_counters(const struct tp_dev *dev);
uint64_t tp_dev_counter(const struct tp_dev *dev, const char *name);
unsigned int tp_counter_count(void);
const char *tp_counter_name(unsigned int i);

struct tp_cq *tp_cq_create(struct tp_dev *dev, int cqe);
int tp_cq_destroy(struct tp_cq *cq);
int tp_cq_poll(struct tp_cq *cq, int n, struct droce_wc *wc);
struct droce_cq *tp_cq_pub(struct tp_cq *cq);
struct tp_cq *tp_cq_from_pub(struct droce_cq *cq);

struct tp_qp *tp_qp_create(struct tp_dev *dev, uint32_t pd,
			   struct tp_cq *scq, struct tp_cq *rcq,
			   const struct droce_qp_init_attr *init);
int tp_qp_modify(struct tp_qp *qp, const struct droce_qp_attr *attr, int mask);
int tp_qp_query(struct tp_qp *qp, struct droce_qp_attr *attr,
		struct droce_qp_init_attr *init);
int tp_qp_destroy(struct tp_qp *qp);
struct droce_qp *tp_qp_pub(struct tp_qp *qp);
struct tp_qp *tp_qp_from_pub(struct droce_qp *qp);

int tp_post_send(struct tp_qp *qp, struct droce_send_wr *wr,
		 struct droce_send_wr **bad_wr);
int tp_post_recv(struct tp_qp *qp, struct droce_recv_wr *wr,
		 struct droce_recv_wr **bad_wr);

struct tp_ah *tp_ah_create(struct tp_dev *dev, const struct droce_ah_attr *attr);
void tp_ah_destroy(struct tp_ah *ah);
struct droce_ah *tp_ah_pub(struct tp_ah *ah);
struct tp_ah *tp_ah_from_pub(struct droce_ah *ah);

#endif /* DROCE_TRANSPORT_H */
