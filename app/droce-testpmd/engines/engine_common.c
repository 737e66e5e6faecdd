/* SPDX-License-Identifier: BSD-3-Clause */
/* engine_common.c - posting and polling shared by the traffic engines. */
#include <inttypes.h>
#include <errno.h>
#include <string.h>

#include <errno.h>
#include <string.h>

#include "engine.h"

int
engine_post_rdma(struct tpd_engine *e, enum droce_wr_opcode op)
{
	struct droce_sge sge = {
		.addr = (uint64_t)(uintptr_t)e->mr->buf,
		.length = op == DROCE_WR_ATOMIC_FETCH_AND_ADD ? 8 : e->size,
		.lkey = e->mr->mr->lkey,
	};
	struct droce_send_wr wr, *bad;
	int rc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = e->posted;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = DROCE_SEND_SIGNALED;
	if (op == DROCE_WR_ATOMIC_FETCH_AND_ADD) {
		/* each op fetches into its own slot of the local buffer */
		sge.addr += (e->posted % e->depth) * 8;
		wr.wr.atomic.remote_addr = e->raddr;
		wr.wr.atomic.rkey = e->rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = e->raddr;
		wr.wr.rdma.rkey = e->rkey;
	}
	rc = droce_post_send(e->qp->qp, &wr, &bad);
	if (rc == 0)
		e->posted++;
	return rc;
}

int
engine_post_send(struct tpd_engine *e)
{
	struct droce_sge sge = {
		.addr = (uint64_t)(uintptr_t)e->mr->buf, .length = e->size,
		.lkey = e->mr->mr->lkey,
	};
	struct droce_send_wr wr, *bad;
	int rc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = e->posted;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_SEND;
	wr.send_flags = DROCE_SEND_SIGNALED;
	if (e->qp->qp->qp_type == DROCE_QPT_UD) {
		wr.wr.ud.ah = e->qp->ah;
		wr.wr.ud.remote_qpn = e->qp->peer.qpn;
		wr.wr.ud.remote_qkey = e->qp->peer.qkey;
	}
	rc = droce_post_send(e->qp->qp, &wr, &bad);
	if (rc == 0)
		e->posted++;
	return rc;
}

int
engine_post_recv(struct tpd_engine *e)
{
	/* receives land in the upper half of the buffer (the engine checks
	 * the buffer is at least 2 * (size + 40) bytes, room for a UD GRH) */
	struct droce_sge sge = {
		.addr = (uint64_t)(uintptr_t)e->mr->buf + e->mr->len / 2,
		.length = e->size + (e->qp->qp->qp_type == DROCE_QPT_UD ? 40 : 0),
		.lkey = e->mr->mr->lkey,
	};
	struct droce_recv_wr wr = { .wr_id = 0, .sg_list = &sge, .num_sge = 1 };
	struct droce_recv_wr *bad;

	return droce_post_recv(e->qp->qp, &wr, &bad);
}

int
engine_poll(struct tpd_engine *e, bool recv, struct droce_wc *wc, int n)
{
	struct tpd_cq *cq = tpd.cq[recv ? e->qp->rcq : e->qp->scq];
	int k = cq != NULL ? droce_poll_cq(cq->cq, n, wc) : -1;

	if (k < 0) {
		tpd_err("engine %d: poll failed", e->id);
		return -1;
	}
	for (int i = 0; i < k; i++)
		if (wc[i].status != DROCE_WC_SUCCESS) {
			e->errors++;
			/* when it was polled, CLOCK_MONOTONIC (lifetime_kill.py) */
			tpd_err("engine %d (%s): completion %s (%s) at %" PRIu64 " us",
				e->id, e->ops->name, tpd_wc_status_name(wc[i].status),
				droce_wc_status_str(wc[i].status), tpd_now_ns() / 1000);
			return -1;
		}
	return k;
}

bool
engine_target_reached(const struct tpd_engine *e, uint64_t now)
{
	if (e->count != 0 && e->done >= e->count)
		return true;
	return e->secs > 0 && (double)(now - e->t_start) / 1e9 >= e->secs;
}

int
engine_window_step(struct tpd_engine *e, enum droce_wr_opcode op)
{
	struct droce_wc wc[32];
	bool stop_posting = engine_target_reached(e, tpd_now_ns()) ||
		(e->count != 0 && e->posted >= e->count);
	int k;

	while (!stop_posting && e->posted - e->done < e->depth &&
	       (e->count == 0 || e->posted < e->count)) {
		int rc = engine_post_rdma(e, op);

		if (rc == ENOMEM)
			break;		/* send queue full: later */
		if (rc != 0) {
			tpd_err("engine %d: post failed: %s", e->id, strerror(rc));
			return -1;
		}
	}
	k = engine_poll(e, false, wc, 32);
	if (k < 0)
		return -1;
	for (int i = 0; i < k; i++) {
		e->done++;
		e->bytes += op == DROCE_WR_ATOMIC_FETCH_AND_ADD ? 8 : e->size;
	}
	/* finished when the target is met and nothing is in flight */
	return engine_target_reached(e, tpd_now_ns()) && e->done == e->posted ? 1 : 0;
}
