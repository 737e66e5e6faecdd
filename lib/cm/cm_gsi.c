/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_gsi.c - a context's General Services Interface QP (IBTA 13.4.6:
 * QP1, UD, Q_Key 0x80010000): 256-byte MADs out and in.  Receive WQEs
 * hold the 40-byte GRH in front of the MAD, from which a MAD's sender and
 * the address it was sent to are read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "roce_wire.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "cm_private.h"

#define RECV_LEN (CM_GRH_LEN + CM_MAD_LEN)
#define SEND_WR_ID (1ull << 32)

static uint8_t *
recv_slot(struct cm_agent *a, unsigned int i)
{
	return a->buf + (size_t)i * RECV_LEN;
}

static uint8_t *
send_slot(struct cm_agent *a, unsigned int i)
{
	return a->buf + (size_t)CM_RECV_SLOTS * RECV_LEN + (size_t)i * CM_MAD_LEN;
}

static int
post_recv(struct cm_agent *a, unsigned int i)
{
	struct droce_sge sge = {
		.addr = (uintptr_t)recv_slot(a, i), .length = RECV_LEN, .lkey = a->mr->lkey,
	};
	struct droce_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct droce_recv_wr *bad;

	return -droce_post_recv(a->qp, &wr, &bad);
}

bool
cm_gid_is_v4(const uint8_t gid[16])
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

int
cm_gid_index(const struct cm_agent *a, const uint8_t gid[16])
{
	for (unsigned int i = 0; i < a->ngids; i++)
		if (memcmp(a->gids[i], gid, 16) == 0)
			return (int)i;
	return -1;
}

/* the first local GID of gid's address family */
static int
sgid_for(const struct cm_agent *a, const uint8_t gid[16])
{
	for (unsigned int i = 0; i < a->ngids; i++)
		if (cm_gid_is_v4(a->gids[i]) == cm_gid_is_v4(gid))
			return (int)i;
	return -1;
}

static bool
gid_zero(const uint8_t gid[16])
{
	static const uint8_t zero[16];

	return memcmp(gid, zero, 16) == 0;
}

/* a relay's GIDs: the port's table as its provider answers it (droced's) */
static void
query_gids(struct cm_agent *a)
{
	union droce_gid g;

	while (a->ngids < CM_MAX_GIDS &&
	       droce_query_gid(a->ctx, 1, (int)a->ngids, &g) == 0 && !gid_zero(g.raw))
		memcpy(a->gids[a->ngids++], g.raw, 16);
}

static int
load_gids(struct cm_agent *a)
{
	struct tp_dev *tp = verbs_tp(a->ctx);

	if (tp == NULL && !a->relay)
		return -EINVAL;
	a->ngids = 0;
	if (a->relay)
		query_gids(a);
	while (!a->relay && a->ngids < CM_MAX_GIDS &&
	       tp_dev_query_gid(tp, a->ngids, a->gids[a->ngids]) == 0)
		a->ngids++;
	if (a->ngids == 0)
		return -EADDRNOTAVAIL;
	/* a CA GUID for the REQ/REP: the low half of GID 0 */
	a->guid = 0;
	for (unsigned int i = 8; i < 16; i++)
		a->guid = a->guid << 8 | a->gids[0][i];
	return 0;
}

static int
relay_call(struct cm_agent *a, struct droce_cm_relay *r)
{
	return a->ctx->ops->cm_relay(a->ctx, r);
}

/*
 * A context whose provider has no engine here (droced's client): droced
 * owns QP1; its relay takes this context's MADs (app/droced/README.md,
 * "RDMA CM").  The port's MTU is asked once, as the engine's is read.
 */
static int
relay_open(struct cm_agent *a)
{
	struct droce_cm_relay r = { .op = DROCE_CM_RELAY_OPEN };
	struct droce_port_attr pa;
	int rc;

	if (droce_query_port(a->ctx, 1, &pa) != 0)
		return -errno;
	a->mtu = pa.active_mtu;
	a->relay_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (a->relay_fd < 0)
		return -errno;
	r.fd = a->relay_fd;
	rc = relay_call(a, &r);
	if (rc != 0) {
		close(a->relay_fd);
		a->relay_fd = -1;
	}
	return rc;
}

static int
gsi_to_rts(struct cm_agent *a)
{
	struct droce_qp_attr at = {
		.qp_state = DROCE_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qkey = CM_GSI_QKEY,
	};
	struct droce_qp_init_attr init;
	int rc;

	rc = droce_modify_qp(a->qp, &at, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX |
				DROCE_QP_PORT | DROCE_QP_QKEY);
	at.qp_state = DROCE_QPS_RTR;
	if (rc == 0)
		rc = droce_modify_qp(a->qp, &at, DROCE_QP_STATE);
	at.qp_state = DROCE_QPS_RTS;
	at.sq_psn = 0;
	if (rc == 0)
		rc = droce_modify_qp(a->qp, &at, DROCE_QP_STATE | DROCE_QP_SQ_PSN);
	if (rc == 0)
		rc = droce_query_qp(a->qp, &at, DROCE_QP_PATH_MTU, &init);
	a->mtu = at.path_mtu;
	return -rc;
}

static int
create_gsi_qp(struct cm_agent *a)
{
	struct droce_qp_init_attr init = {
		.send_cq = a->cq, .recv_cq = a->cq, .qp_type = DROCE_QPT_UD,
		.cap = { .max_send_wr = CM_SEND_SLOTS, .max_recv_wr = CM_RECV_SLOTS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int rc;

	a->qp = droce_create_qp(a->pd, &init);
	if (a->qp == NULL)
		return -errno;
	rc = tp_qp_make_gsi(tp_qp_from_pub(a->qp));
	if (rc == 0)
		rc = gsi_to_rts(a);
	for (unsigned int i = 0; rc == 0 && i < CM_RECV_SLOTS; i++)
		rc = post_recv(a, i);
	return rc;
}

int
cm_gsi_open(struct cm_agent *a)
{
	size_t len = (size_t)CM_RECV_SLOTS * RECV_LEN + (size_t)CM_SEND_SLOTS * CM_MAD_LEN;
	int rc;

	/* not the engine's context: the provider's relay, or its EOPNOTSUPP */
	a->relay = verbs_prot(a->ctx) == NULL;
	a->relay_fd = -1;
	rc = load_gids(a);
	if (rc != 0 || a->relay)
		return rc != 0 ? rc : relay_open(a);
	a->buf = calloc(1, len);
	a->pd = droce_alloc_pd(a->ctx);
	a->cq = droce_create_cq(a->ctx, CM_RECV_SLOTS + CM_SEND_SLOTS, NULL, a->channel, 0);
	if (a->buf == NULL || a->pd == NULL || a->cq == NULL) {
		cm_gsi_close(a);
		return -ENOMEM;
	}
	a->mr = droce_reg_mr(a->pd, a->buf, len, DROCE_ACCESS_LOCAL_WRITE);
	rc = a->mr == NULL ? -errno : create_gsi_qp(a);
	if (rc != 0)
		cm_gsi_close(a);
	return rc;
}

void
cm_gsi_close(struct cm_agent *a)
{
	if (a->relay) {
		relay_call(a, &(struct droce_cm_relay){ .op = DROCE_CM_RELAY_CLOSE });
		if (a->relay_fd >= 0)
			close(a->relay_fd);
		a->relay_fd = -1;
		return;
	}
	if (a->qp != NULL)
		droce_destroy_qp(a->qp);
	for (unsigned int i = 0; i < a->nah; i++)
		droce_destroy_ah(a->ah[i].ah);
	if (a->mr != NULL)
		droce_dereg_mr(a->mr);
	if (a->cq != NULL)
		droce_destroy_cq(a->cq);
	if (a->pd != NULL)
		droce_dealloc_pd(a->pd);
	free(a->buf);
	a->qp = NULL;
	a->nah = 0;
	a->mr = NULL;
	a->cq = NULL;
	a->pd = NULL;
	a->buf = NULL;
}

/*
 * droced's port (a->rx set): its peers are whatever GIDs its clients send
 * to, so a full cache gives up an AH no send in flight uses (a WQE never
 * names a destroyed AH) rather than refusing every new peer.
 */
static bool
ah_evict(struct cm_agent *a)
{
	for (unsigned int j = 0; j < a->nah; j++) {
		bool used = false;

		for (unsigned int i = 0; i < CM_SEND_SLOTS && !used; i++)
			used = a->send_busy[i] && a->send_ah[i] == a->ah[j].ah;
		if (used)
			continue;
		droce_destroy_ah(a->ah[j].ah);
		a->ah[j] = a->ah[--a->nah];
		return true;
	}
	return false;
}

/* The address handle to gid, kept for the agent's lifetime (a peer per
 * entry; on droced's port, until the cache is full: ah_evict). */
static struct droce_ah *
ah_for(struct cm_agent *a, const uint8_t gid[16])
{
	struct droce_ah_attr at = { .is_global = 1, .port_num = 1 };
	int sgid = sgid_for(a, gid);
	struct droce_ah *ah;

	for (unsigned int i = 0; i < a->nah; i++)
		if (memcmp(a->ah[i].gid, gid, 16) == 0)
			return a->ah[i].ah;
	if (sgid < 0 || (a->nah == CM_AH_CACHE && (a->rx == NULL || !ah_evict(a))))
		return NULL;
	memcpy(at.grh.dgid.raw, gid, 16);
	at.grh.sgid_index = (uint8_t)sgid;
	at.grh.hop_limit = CM_HOP_LIMIT;
	ah = droce_create_ah(a->pd, &at);
	if (ah == NULL)
		return NULL;
	memcpy(a->ah[a->nah].gid, gid, 16);
	a->ah[a->nah++].ah = ah;
	return ah;
}

static int
qp1_send(struct cm_agent *a, const uint8_t gid[16], const uint8_t *mad)
{
	struct droce_sge sge = { .length = CM_MAD_LEN, .lkey = a->mr->lkey };
	struct droce_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = DROCE_WR_SEND,
		.send_flags = DROCE_SEND_SIGNALED,
	};
	struct droce_send_wr *bad;
	struct droce_ah *ah = ah_for(a, gid);
	unsigned int i;

	if (ah == NULL)
		return -EHOSTUNREACH;
	for (i = 0; i < CM_SEND_SLOTS && a->send_busy[i]; i++)
		;
	/* no slot: the timer resends it, as if the MAD were lost */
	if (i == CM_SEND_SLOTS)
		return -EAGAIN;
	memcpy(send_slot(a, i), mad, CM_MAD_LEN);
	sge.addr = (uintptr_t)send_slot(a, i);
	wr.wr_id = SEND_WR_ID | i;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 1;
	wr.wr.ud.remote_qkey = CM_GSI_QKEY;
	if (droce_post_send(a->qp, &wr, &bad) != 0)
		return -EAGAIN;
	a->send_busy[i] = true;
	a->send_ah[i] = ah;
	return 0;
}

int
cm_gsi_send(struct cm_agent *a, const uint8_t gid[16], const uint8_t *mad)
{
	struct droce_cm_relay r = { .op = DROCE_CM_RELAY_SEND };

	if (!a->relay)
		return qp1_send(a, gid, mad);
	memcpy(r.dgid, gid, 16);
	memcpy(r.mad, mad, CM_MAD_LEN);
	return relay_call(a, &r);
}

/* The sender's and destination GIDs of a received GRH (RoCEv2: the IPv6
 * header, or the IPv4 header in its last 20 bytes). */
static void
grh_gids(const uint8_t *grh, uint8_t src[16], uint8_t dst[16])
{
	if (grh[0] >> 4 == 6) {
		memcpy(src, grh + 8, 16);
		memcpy(dst, grh + 24, 16);
		return;
	}
	roce_gid_from_ipv4(src, grh + 20 + 12);
	roce_gid_from_ipv4(dst, grh + 20 + 16);
}

static void
handle_wc(struct cm_agent *a, const struct droce_wc *wc)
{
	uint8_t src[16], dst[16];
	unsigned int i = (unsigned int)(wc->wr_id & 0xffffffffu);

	if (wc->wr_id & SEND_WR_ID) {
		if (i < CM_SEND_SLOTS)
			a->send_busy[i] = false;
		return;
	}
	if (i >= CM_RECV_SLOTS || wc->status == DROCE_WC_WR_FLUSH_ERR)
		return;
	if (wc->status == DROCE_WC_SUCCESS && wc->byte_len >= RECV_LEN &&
	    (wc->wc_flags & DROCE_WC_GRH)) {
		grh_gids(recv_slot(a, i), src, dst);
		if (a->rx != NULL)
			a->rx(a->rx_arg, src, dst, recv_slot(a, i) + CM_GRH_LEN);
		else
			cm_proto_recv(a, src, dst, recv_slot(a, i) + CM_GRH_LEN);
	}
	/* cannot fail: the slot's WQE just completed, so the RQ has room */
	post_recv(a, i);
}

/*
 * A relay's MADs: droced counts each it queues for this context on
 * relay_fd after queueing it, so a count read means one or more to take
 * (a MAD queued between the read and the last RECV is taken with the
 * others and leaves a count for one more RECV that answers none).
 */
static void
relay_poll(struct cm_agent *a)
{
	struct droce_cm_relay r = { .op = DROCE_CM_RELAY_RECV };
	uint64_t n;

	if (read(a->relay_fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
		return;
	while (relay_call(a, &r) == 1) {
		cm_proto_recv(a, r.sgid, r.dgid, r.mad);
		r.op = DROCE_CM_RELAY_RECV;
	}
}

int
cm_gsi_listen(struct cm_agent *a, uint16_t port, bool on)
{
	struct droce_cm_relay r = {
		.op = on ? DROCE_CM_RELAY_LISTEN : DROCE_CM_RELAY_UNLISTEN, .port = port,
	};

	return a->relay ? relay_call(a, &r) : 0;
}

void
cm_gsi_poll(struct cm_agent *a)
{
	struct droce_wc wc[16];
	int n;

	if (a->relay) {
		relay_poll(a);
		return;
	}
	while ((n = droce_poll_cq(a->cq, 16, wc)) > 0)
		for (int k = 0; k < n; k++)
			handle_wc(a, &wc[k]);
}
