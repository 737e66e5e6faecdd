/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine_pingpong.c - one message of size bytes back and forth: the client
 * sends and waits for the echo, the server (role=server) echoes each
 * message it receives.  Reports round trips per second and the round-trip
 * time (min/avg/max) on the client.
 */
#include <string.h>

#include "engine.h"

static int
start(struct tpd_engine *e)
{
	if (e->mr->len < 2 * ((size_t)e->size + 40)) {
		tpd_err("pingpong needs an MR of at least 2 * (size + 40) bytes");
		return -1;
	}
	e->depth = 1;
	e->lat_min_ns = UINT64_MAX;
	if (engine_post_recv(e) != 0) {
		tpd_err("pingpong: cannot post a receive");
		return -1;
	}
	if (!e->server) {
		e->t_sent = tpd_now_ns();
		if (engine_post_send(e) != 0) {
			tpd_err("pingpong: cannot post the first send");
			return -1;
		}
	}
	return 0;
}

static void
round_trip(struct tpd_engine *e)
{
	uint64_t now = tpd_now_ns(), rtt = now - e->t_sent;

	e->lat_sum_ns += rtt;
	if (rtt < e->lat_min_ns)
		e->lat_min_ns = rtt;
	if (rtt > e->lat_max_ns)
		e->lat_max_ns = rtt;
}

static int
on_recv(struct tpd_engine *e)
{
	e->done++;
	e->bytes += e->size;
	if (!e->server)
		round_trip(e);
	if (engine_post_recv(e) != 0) {
		tpd_err("pingpong: cannot repost a receive");
		return -1;
	}
	if (!e->server && engine_target_reached(e, tpd_now_ns()))
		return 1;
	e->t_sent = tpd_now_ns();
	if (engine_post_send(e) != 0) {
		tpd_err("pingpong: cannot post a send");
		return -1;
	}
	return 0;
}

static int
step(struct tpd_engine *e)
{
	struct droce_wc wc[8];

	for (int pass = 0; pass < 2; pass++) {
		bool recv = pass == 1;
		int k;

		if (recv && e->qp->rcq == e->qp->scq)
			break;		/* one CQ: the first pass saw everything */
		k = engine_poll(e, recv, wc, 8);
		if (k < 0)
			return -1;
		for (int i = 0; i < k; i++) {
			int rc;

			if (!(wc[i].opcode & DROCE_WC_RECV)) {
				e->check++;	/* one of our sends completed */
				continue;
			}
			rc = on_recv(e);
			if (rc < 0)
				return -1;
		}
	}
	/* done when the target is met and our sends have completed (nothing
	 * of this engine is left in the CQ) */
	return engine_target_reached(e, tpd_now_ns()) && e->check == e->posted ? 1 : 0;
}

const struct tpd_engine_ops tpd_engine_pingpong = {
	.name = "pingpong",
	.help = "qp=QP mr=MR [role=client|server] [size=64] [count=N|secs=S] "
		"(MR >= 2*(size+40); run the server first)",
	.start = start,
	.step = step,
};
