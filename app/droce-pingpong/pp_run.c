/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_run.c - the ping-pong loop of rc_pingpong.c (parse_single_wc and the
 * polling branch of main), ud_pingpong.c and srq_pingpong.c, which are the
 * same loop over one QP or num_qp of them.
 *
 * Each side keeps rx_depth receives posted and refills them when at most
 * num_qp are left; a QP sends again once both its previous send and a
 * receive on it have completed (ctx->pending[QP]); the client sends first
 * on every QP.  The loop ends when iters sends and iters receives have
 * completed, counted over all QPs (srq_pingpong's -n too).
 * droce is poll-mode: droce_poll_cq() also advances the transport, so the
 * busy loop below is what moves packets.  With -e the examples sleep on a
 * completion channel; droce has none, and -e polls the same way.
 */
#include <string.h>
#include <sys/time.h>

#include "pingpong.h"

/* srq_pingpong.c find_qp: the index of the QP a completion belongs to. */
static int
find_qp(const struct pp_ctx *ctx, uint32_t qpn)
{
	int i;

	for (i = 0; i < ctx->num_qp; i++)
		if (ctx->qp[i]->qp_num == qpn)
			return i;
	return -1;
}

static int
post_send(struct pp_ctx *ctx, int qp_index)
{
	int rc = pp_post_send(ctx, qp_index);

	if (rc != 0) {
		fprintf(stderr, "Couldn't post send: %s\n", strerror(rc));
		return 1;
	}
	ctx->pending[qp_index] = PINGPONG_RECV_WRID | PINGPONG_SEND_WRID;
	return 0;
}

static int
parse_single_wc(struct pp_ctx *ctx, const struct pp_opts *o, int *scnt,
		int *rcnt, int *routs, const struct droce_wc *wc)
{
	int iters = (int)o->iters;
	int qp_index;

	if (wc->status != DROCE_WC_SUCCESS) {
		fprintf(stderr, "Failed status %s (%d) for wr_id %d\n",
			droce_wc_status_str(wc->status), (int)wc->status,
			(int)wc->wr_id);
		return 1;
	}
	qp_index = find_qp(ctx, wc->qp_num);
	if (qp_index < 0) {
		fprintf(stderr, "Couldn't find QPN %06x\n", wc->qp_num);
		return 1;
	}

	switch ((int)wc->wr_id) {
	case PINGPONG_SEND_WRID:
		++(*scnt);
		break;
	case PINGPONG_RECV_WRID:
		if (--(*routs) <= ctx->num_qp) {
			*routs += pp_post_recv(ctx, ctx->rx_depth - *routs);
			if (*routs < ctx->rx_depth) {
				fprintf(stderr, "Couldn't post receive (%d)\n",
					*routs);
				return 1;
			}
		}
		++(*rcnt);
		break;
	default:
		fprintf(stderr, "Completion for unknown wr_id %d\n",
			(int)wc->wr_id);
		return 1;
	}

	ctx->pending[qp_index] &= ~(int)wc->wr_id;
	if (*scnt < iters && !ctx->pending[qp_index])
		return post_send(ctx, qp_index);
	return 0;
}

int
pp_run(struct pp_ctx *ctx, const struct pp_opts *o, int routs,
       struct pp_result *res)
{
	struct timeval start, end;
	int iters = (int)o->iters;
	int rcnt, scnt, i;

	if (o->servername != NULL && o->validate_buf)
		pp_chk_fill(ctx->buf + (ctx->kind == PP_UD ? PP_UD_GRH_LEN : 0),
			    o->size, (size_t)ctx->page_size);
	for (i = 0; i < ctx->num_qp; i++) {
		ctx->pending[i] = PINGPONG_RECV_WRID;
		if (o->servername != NULL && post_send(ctx, i) != 0)
			return 1;
	}

	if (gettimeofday(&start, NULL)) {
		perror("gettimeofday");
		return 1;
	}

	rcnt = scnt = 0;
	while (rcnt < iters || scnt < iters) {
		struct droce_wc wc[2];
		int ne, i;

		do {
			ne = droce_poll_cq(ctx->cq, 2, wc);
			if (ne < 0) {
				fprintf(stderr, "poll CQ failed %d\n", ne);
				return 1;
			}
		} while (ne < 1);

		for (i = 0; i < ne; ++i) {
			if (parse_single_wc(ctx, o, &scnt, &rcnt, &routs,
					    &wc[i])) {
				fprintf(stderr, "parse WC failed %d\n", ne);
				return 1;
			}
		}
	}

	if (gettimeofday(&end, NULL)) {
		perror("gettimeofday");
		return 1;
	}
	/* rc_pingpong computes in float; keep it for identical rounding. */
	res->usec = (float)((end.tv_sec - start.tv_sec) * 1000000 +
			    (end.tv_usec - start.tv_usec));
	res->scnt = scnt;
	res->rcnt = rcnt;
	return 0;
}

void
pp_report(const struct pp_opts *o, const struct pp_result *res, FILE *out)
{
	float usec = res->usec;
	long long bytes = (long long)o->size * o->iters * 2;

	fprintf(out, "%lld bytes in %.2f seconds = %.2f Mbit/sec\n",
		bytes, usec / 1000000., bytes * 8. / usec);
	fprintf(out, "%d iters in %.2f seconds = %.2f usec/iter\n",
		(int)o->iters, usec / 1000000., usec / o->iters);
}
