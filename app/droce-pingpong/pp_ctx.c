/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_ctx.c - resources of the ping-pong, as rc_pingpong.c / ud_pingpong.c
 * create them (pp_init_ctx, pp_connect_ctx, pp_post_recv, pp_post_send,
 * pp_close_ctx), on droce's verbs.  Error messages are the examples' with
 * the reason appended.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pingpong.h"

static const char *
dev_name(struct droce_device *dev)
{
	const char *n = droce_get_device_name(dev);

	return n != NULL ? n : "?";
}

static int
init_qp(struct pp_ctx *ctx, const struct pp_opts *o, int i)
{
	struct droce_qp_init_attr init_attr = {
		.send_cq = ctx->cq,
		.recv_cq = ctx->cq,
		.srq = ctx->srq,
		.cap = {
			.max_send_wr = 1,
			.max_recv_wr = (uint32_t)ctx->rx_depth,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = o->kind == PP_UD ? DROCE_QPT_UD : DROCE_QPT_RC,
	};
	struct droce_qp_attr attr;
	int rc;

	ctx->qp[i] = droce_create_qp(ctx->pd, &init_attr);
	if (ctx->qp[i] == NULL) {
		fprintf(stderr, "Couldn't create QP[%d]: %s\n", i,
			strerror(errno));
		return -1;
	}
	/* As the examples: send inline when the QP can carry the message. */
	memset(&attr, 0, sizeof(attr));
	if (droce_query_qp(ctx->qp[i], &attr, DROCE_QP_CAP, &init_attr) == 0 &&
	    init_attr.cap.max_inline_data >= (uint32_t)ctx->size)
		ctx->send_flags |= DROCE_SEND_INLINE;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = DROCE_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = (uint8_t)o->ib_port;
	if (o->kind == PP_UD) {
		attr.qkey = PP_UD_QKEY;
		rc = droce_modify_qp(ctx->qp[i], &attr, DROCE_QP_STATE |
				     DROCE_QP_PKEY_INDEX | DROCE_QP_PORT |
				     DROCE_QP_QKEY);
	} else {
		attr.qp_access_flags = 0;
		rc = droce_modify_qp(ctx->qp[i], &attr, DROCE_QP_STATE |
				     DROCE_QP_PKEY_INDEX | DROCE_QP_PORT |
				     DROCE_QP_ACCESS_FLAGS);
	}
	if (rc != 0) {
		fprintf(stderr, "Failed to modify QP[%d] to INIT: %s\n", i,
			strerror(rc));
		return -1;
	}
	return 0;
}

/* srq_pingpong: max_wr rx_depth, one SGE. */
static int
init_srq(struct pp_ctx *ctx)
{
	struct droce_srq_init_attr attr = {
		.attr = {
			.max_wr = (uint32_t)ctx->rx_depth,
			.max_sge = 1,
		},
	};

	ctx->srq = droce_create_srq(ctx->pd, &attr);
	if (ctx->srq == NULL) {
		fprintf(stderr, "Couldn't create SRQ: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

struct pp_ctx *
pp_init_ctx(struct droce_device *dev, const struct pp_opts *o, int page_size)
{
	struct pp_ctx *ctx;
	size_t extra = o->kind == PP_UD ? PP_UD_GRH_LEN : 0;
	void *buf = NULL;
	int rc;

	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		fprintf(stderr, "Couldn't allocate context: %s\n",
			strerror(errno));
		return NULL;
	}
	ctx->kind = o->kind;
	ctx->size = (int)o->size;
	ctx->send_flags = DROCE_SEND_SIGNALED;
	ctx->rx_depth = (int)o->rx_depth;
	ctx->num_qp = (int)o->num_qp;
	ctx->buf_len = o->size + extra;
	ctx->page_size = page_size;

	rc = posix_memalign(&buf, (size_t)page_size,
			    2 * ctx->buf_len > 0 ? 2 * ctx->buf_len : 1);
	if (rc != 0) {
		fprintf(stderr, "Couldn't allocate work buf: %s\n",
			strerror(rc));
		goto clean_ctx;
	}
	ctx->buf = buf;
	memset(ctx->buf, pp_chk_fill_byte(o->kind), ctx->buf_len);
	/*
	 * The examples receive into the buffer they send from.  A -c client
	 * receives into a second half instead, which starts as bytes the
	 * pattern never holds: the client's check then sees the server's
	 * echo, not its own pattern (the bytes on the wire are unchanged).
	 */
	ctx->rbuf = ctx->buf;
	if (o->validate_buf && o->servername != NULL) {
		ctx->rbuf = ctx->buf + ctx->buf_len;
		memset(ctx->rbuf, PP_CHK_UNWRITTEN, ctx->buf_len);
	}

	ctx->context = droce_open_device(dev);
	if (ctx->context == NULL) {
		fprintf(stderr, "Couldn't get context for %s: %s\n",
			dev_name(dev), strerror(errno));
		goto clean_buffer;
	}

	if (o->kind == PP_UD) {
		struct droce_port_attr pa;
		int mtu;

		memset(&pa, 0, sizeof(pa));
		rc = droce_query_port(ctx->context, (uint8_t)o->ib_port, &pa);
		if (rc != 0) {
			fprintf(stderr, "Unable to query port info for port "
				"%d: %s\n", o->ib_port, strerror(rc));
			goto clean_device;
		}
		mtu = droce_mtu_to_num(pa.active_mtu);
		if (mtu < 0 || (int)o->size > mtu) {
			fprintf(stderr, "Requested size larger than port MTU "
				"(%d)\n", mtu);
			goto clean_device;
		}
	}

	ctx->pd = droce_alloc_pd(ctx->context);
	if (ctx->pd == NULL) {
		fprintf(stderr, "Couldn't allocate PD: %s\n", strerror(errno));
		goto clean_device;
	}

	ctx->mr = droce_reg_mr(ctx->pd, ctx->buf, 2 * ctx->buf_len,
			       DROCE_ACCESS_LOCAL_WRITE);
	if (ctx->mr == NULL) {
		fprintf(stderr, "Couldn't register MR: %s\n", strerror(errno));
		goto clean_pd;
	}

	ctx->cq = droce_create_cq(ctx->context, ctx->rx_depth + ctx->num_qp,
				  NULL, NULL, 0);
	if (ctx->cq == NULL) {
		fprintf(stderr, "Couldn't create CQ: %s\n", strerror(errno));
		goto clean_mr;
	}

	if (o->kind == PP_SRQ && init_srq(ctx) != 0)
		goto clean_cq;
	for (int i = 0; i < ctx->num_qp; i++)
		if (init_qp(ctx, o, i) != 0)
			goto clean_qp;
	return ctx;

clean_qp:
	for (int i = 0; i < ctx->num_qp && ctx->qp[i] != NULL; i++)
		droce_destroy_qp(ctx->qp[i]);
	if (ctx->srq != NULL)
		droce_destroy_srq(ctx->srq);
clean_cq:
	droce_destroy_cq(ctx->cq);
clean_mr:
	droce_dereg_mr(ctx->mr);
clean_pd:
	droce_dealloc_pd(ctx->pd);
clean_device:
	droce_close_device(ctx->context);
clean_buffer:
	free(ctx->buf);
clean_ctx:
	free(ctx);
	return NULL;
}

static int
fill_ah(struct droce_ah_attr *ah, const struct pp_opts *o,
	const struct pp_dest *dest)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 0;
	ah->dlid = (uint16_t)dest->lid;
	ah->sl = (uint8_t)o->sl;
	ah->src_path_bits = 0;
	ah->port_num = (uint8_t)o->ib_port;
	/* The examples route by GID when the peer sent one. */
	if (dest->gid.global.interface_id) {
		ah->is_global = 1;
		ah->grh.hop_limit = 1;
		ah->grh.dgid = dest->gid;
		ah->grh.sgid_index = (uint8_t)o->gidx;
		return 0;
	}
	fprintf(stderr, "The remote address carries no GID: RoCEv2 needs "
		"one (run the peer with -g <gid index>)\n");
	return -1;
}

static int
connect_rc(struct droce_qp *qp, const struct pp_opts *o, int my_psn,
	   const struct pp_dest *dest)
{
	struct droce_qp_attr attr;
	int rc;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = DROCE_QPS_RTR;
	attr.path_mtu = o->mtu;
	attr.dest_qp_num = (uint32_t)dest->qpn;
	attr.rq_psn = (uint32_t)dest->psn;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	if (fill_ah(&attr.ah_attr, o, dest) != 0) {
		fprintf(stderr, "Failed to modify QP to RTR\n");
		return 1;
	}
	rc = droce_modify_qp(qp, &attr, DROCE_QP_STATE | DROCE_QP_AV |
			     DROCE_QP_PATH_MTU | DROCE_QP_DEST_QPN |
			     DROCE_QP_RQ_PSN | DROCE_QP_MAX_DEST_RD_ATOMIC |
			     DROCE_QP_MIN_RNR_TIMER);
	if (rc != 0) {
		fprintf(stderr, "Failed to modify QP to RTR: %s\n",
			strerror(rc));
		return 1;
	}

	attr.qp_state = DROCE_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = (uint32_t)my_psn;
	attr.max_rd_atomic = 1;
	rc = droce_modify_qp(qp, &attr, DROCE_QP_STATE |
			     DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT |
			     DROCE_QP_RNR_RETRY | DROCE_QP_SQ_PSN |
			     DROCE_QP_MAX_QP_RD_ATOMIC);
	if (rc != 0) {
		fprintf(stderr, "Failed to modify QP to RTS: %s\n",
			strerror(rc));
		return 1;
	}
	return 0;
}

static int
connect_ud(struct pp_ctx *ctx, const struct pp_opts *o, int my_psn,
	   const struct pp_dest *dest)
{
	struct droce_ah_attr ah_attr;
	struct droce_qp_attr attr;
	int rc;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = DROCE_QPS_RTR;
	rc = droce_modify_qp(ctx->qp[0], &attr, DROCE_QP_STATE);
	if (rc != 0) {
		fprintf(stderr, "Failed to modify QP to RTR: %s\n",
			strerror(rc));
		return 1;
	}
	attr.qp_state = DROCE_QPS_RTS;
	attr.sq_psn = (uint32_t)my_psn;
	rc = droce_modify_qp(ctx->qp[0], &attr, DROCE_QP_STATE | DROCE_QP_SQ_PSN);
	if (rc != 0) {
		fprintf(stderr, "Failed to modify QP to RTS: %s\n",
			strerror(rc));
		return 1;
	}
	if (fill_ah(&ah_attr, o, dest) != 0) {
		fprintf(stderr, "Failed to create AH\n");
		return 1;
	}
	ctx->ah = droce_create_ah(ctx->pd, &ah_attr);
	if (ctx->ah == NULL) {
		fprintf(stderr, "Failed to create AH: %s\n", strerror(errno));
		return 1;
	}
	ctx->remote_qpn = (uint32_t)dest->qpn;
	return 0;
}

int
pp_connect_ctx(struct pp_ctx *ctx, const struct pp_opts *o,
	       const struct pp_dest *my, const struct pp_dest *dest)
{
	int i;

	if (o->kind == PP_UD)
		return connect_ud(ctx, o, my[0].psn, &dest[0]);
	for (i = 0; i < ctx->num_qp; i++)
		if (connect_rc(ctx->qp[i], o, my[i].psn, &dest[i]) != 0)
			return 1;
	return 0;
}

int
pp_post_recv(struct pp_ctx *ctx, int n)
{
	struct droce_sge list = {
		.addr = (uintptr_t)ctx->rbuf,
		.length = (uint32_t)ctx->buf_len,
		.lkey = ctx->mr->lkey,
	};
	struct droce_recv_wr wr = {
		.wr_id = PINGPONG_RECV_WRID,
		.sg_list = &list,
		.num_sge = 1,
	};
	struct droce_recv_wr *bad_wr;
	int i, rc;

	for (i = 0; i < n; ++i) {
		rc = ctx->srq != NULL ?
			droce_post_srq_recv(ctx->srq, &wr, &bad_wr) :
			droce_post_recv(ctx->qp[0], &wr, &bad_wr);
		if (rc != 0)
			break;
	}
	return i;
}

int
pp_post_send(struct pp_ctx *ctx, int qp_index)
{
	size_t off = ctx->kind == PP_UD ? PP_UD_GRH_LEN : 0;
	struct droce_sge list = {
		.addr = (uintptr_t)ctx->buf + off,
		.length = (uint32_t)ctx->size,
		.lkey = ctx->mr->lkey,
	};
	struct droce_send_wr wr = {
		.wr_id = PINGPONG_SEND_WRID,
		.sg_list = &list,
		.num_sge = 1,
		.opcode = DROCE_WR_SEND,
		.send_flags = (unsigned int)ctx->send_flags,
	};
	struct droce_send_wr *bad_wr;

	if (ctx->kind == PP_UD) {
		wr.wr.ud.ah = ctx->ah;
		wr.wr.ud.remote_qpn = ctx->remote_qpn;
		wr.wr.ud.remote_qkey = PP_UD_QKEY;
	}
	return droce_post_send(ctx->qp[qp_index], &wr, &bad_wr);
}

/*
 * DROCE_COUNTERS=1: the transport's recovery counters on stderr at the end
 * (tests check that a lossy link really made droce retransmit).
 */
static void
print_counters(struct droce_context *context)
{
	static const char *const names[] = {
		"sent_pkts", "rcvd_pkts", "retransmitted_pkts", "completer_retry_err",
		"retransmit_timeouts", "rcvd_seq_err", "out_of_seq_request",
		"duplicate_request", "sent_seq_nak", "icrc_err", "sched_gaps",
		"sched_gap_max_us", "retransmit_timeouts_in_gap", "sent_acks", "rcvd_acks",
		"not_for_us_pkts", "malformed_pkts", "tx_backpressure", "link_downed",
	};

	if (getenv("DROCE_COUNTERS") == NULL)
		return;
	fprintf(stderr, "droce counters:");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		fprintf(stderr, " %s=%" PRIu64, names[i],
			droce_get_counter(context, names[i]));
	fprintf(stderr, "\n");
}

int
pp_close_ctx(struct pp_ctx *ctx)
{
	int rc, i;

	for (i = 0; i < ctx->num_qp; i++) {
		rc = droce_destroy_qp(ctx->qp[i]);
		if (rc != 0) {
			fprintf(stderr, "Couldn't destroy QP[%d]: %s\n", i,
				strerror(rc));
			return 1;
		}
	}
	if (ctx->srq != NULL) {
		rc = droce_destroy_srq(ctx->srq);
		if (rc != 0) {
			fprintf(stderr, "Couldn't destroy SRQ: %s\n",
				strerror(rc));
			return 1;
		}
	}
	rc = droce_destroy_cq(ctx->cq);
	if (rc != 0) {
		fprintf(stderr, "Couldn't destroy CQ: %s\n", strerror(rc));
		return 1;
	}
	rc = droce_dereg_mr(ctx->mr);
	if (rc != 0) {
		fprintf(stderr, "Couldn't deregister MR: %s\n", strerror(rc));
		return 1;
	}
	if (ctx->ah != NULL) {
		rc = droce_destroy_ah(ctx->ah);
		if (rc != 0) {
			fprintf(stderr, "Couldn't destroy AH: %s\n",
				strerror(rc));
			return 1;
		}
	}
	rc = droce_dealloc_pd(ctx->pd);
	if (rc != 0) {
		fprintf(stderr, "Couldn't deallocate PD: %s\n", strerror(rc));
		return 1;
	}
	print_counters(ctx->context);
	rc = droce_close_device(ctx->context);
	if (rc != 0) {
		fprintf(stderr, "Couldn't release context: %s\n",
			strerror(rc));
		return 1;
	}
	free(ctx->buf);
	free(ctx);
	return 0;
}
