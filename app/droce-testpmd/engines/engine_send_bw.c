/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine_send_bw.c - SENDs of size bytes.  The sender (default role) keeps
 * depth sends in flight; the receiver (role=server) keeps depth receives
 * posted and counts what arrives.  Run one of each, here or in the peer.
 */
#include <errno.h>
#include <string.h>

#include "engine.h"

static int
start(struct tpd_engine *e)
{
	if (e->mr->len < 2 * ((size_t)e->size + 40)) {
		tpd_err("send_bw needs an MR of at least 2 * (size + 40) bytes");
		return -1;
	}
	if (!e->server)
		return 0;
	for (uint32_t i = 0; i < e->depth; i++) {
		int rc = engine_post_recv(e);

		if (rc != 0) {
			tpd_err("send_bw: post recv: %s (rq= of the QP smaller than depth?)",
				strerror(rc));
			return -1;
		}
	}
	return 0;
}

static int
step_server(struct tpd_engine *e)
{
	struct droce_wc wc[32];
	int k = engine_poll(e, true, wc, 32);

	if (k < 0)
		return -1;
	for (int i = 0; i < k; i++) {
		if (!(wc[i].opcode & DROCE_WC_RECV))
			continue;	/* not ours: the CQ may be shared */
		e->done++;
		e->bytes += wc[i].byte_len;
		if (engine_post_recv(e) != 0) {
			tpd_err("send_bw: cannot repost a receive");
			return -1;
		}
	}
	e->posted = e->done;
	return engine_target_reached(e, tpd_now_ns()) ? 1 : 0;
}

static int
step_client(struct tpd_engine *e)
{
	struct droce_wc wc[32];
	int k;

	while (!engine_target_reached(e, tpd_now_ns()) && e->posted - e->done < e->depth &&
	       (e->count == 0 || e->posted < e->count)) {
		int rc = engine_post_send(e);

		if (rc == ENOMEM)
			break;
		if (rc != 0) {
			tpd_err("send_bw: post send: %s", strerror(rc));
			return -1;
		}
	}
	k = engine_poll(e, false, wc, 32);
	if (k < 0)
		return -1;
	e->done += (uint64_t)k;
	e->bytes += (uint64_t)k * e->size;
	return engine_target_reached(e, tpd_now_ns()) && e->done == e->posted ? 1 : 0;
}

static int
step(struct tpd_engine *e)
{
	return e->server ? step_server(e) : step_client(e);
}

const struct tpd_engine_ops tpd_engine_send_bw = {
	.name = "send_bw",
	.help = "qp=QP mr=MR [role=client|server] [size=4096] [depth=16] [count=N|secs=S] "
		"(MR >= 2*(size+40); the server receives)",
	.start = start,
	.step = step,
	.drains = true,
};
