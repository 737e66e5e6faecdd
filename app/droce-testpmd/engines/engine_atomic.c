/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine_atomic.c - FETCH_AND_ADD 1 on the peer's 64-bit word at raddr,
 * depth in flight.  Every fetched value must be new (a counter nobody
 * else adds to never returns the same value twice within a window): a
 * repeat counts as an error.  After count operations the word holds its
 * start value + count (scripts check it with "mr u64 ... expect=").
 */
#include <errno.h>
#include <string.h>

#include "engine.h"

static int
start(struct tpd_engine *e)
{
	if (e->rkey == 0) {
		tpd_err("atomic needs the peer's buffer (rmr=, rkey= raddr=, or the exchanged one)");
		return -1;
	}
	if (e->raddr % 8 != 0) {
		tpd_err("atomic: the remote address must be 8-byte aligned");
		return -1;
	}
	if (e->mr->len < (size_t)e->depth * 8) {
		tpd_err("atomic needs an MR of at least depth * 8 bytes");
		return -1;
	}
	e->size = 8;
	e->check = UINT64_MAX;
	return 0;
}

static int
step(struct tpd_engine *e)
{
	struct droce_wc wc[32];
	int k;

	while (!engine_target_reached(e, tpd_now_ns()) && e->posted - e->done < e->depth &&
	       (e->count == 0 || e->posted < e->count)) {
		int rc = engine_post_rdma(e, DROCE_WR_ATOMIC_FETCH_AND_ADD);

		if (rc == ENOMEM)
			break;
		if (rc != 0) {
			tpd_err("atomic: post: %s", strerror(rc));
			return -1;
		}
	}
	k = engine_poll(e, false, wc, 32);
	if (k < 0)
		return -1;
	for (int i = 0; i < k; i++) {
		uint64_t v;

		memcpy(&v, e->mr->buf + (wc[i].wr_id % e->depth) * 8, 8);
		/* completions come in order: each fetch is one more than the last */
		if (e->check != UINT64_MAX && v != e->check + 1)
			e->errors++;
		e->check = v;
		e->done++;
		e->bytes += 8;
	}
	return engine_target_reached(e, tpd_now_ns()) && e->done == e->posted ? 1 : 0;
}

const struct tpd_engine_ops tpd_engine_atomic = {
	.name = "atomic",
	.help = "qp=QP mr=MR [depth=16] [count=N|secs=S] [rmr=MR|rkey=K raddr=A] [roff=N] "
		"(fetch_add 1; every fetched value must be the previous + 1)",
	.start = start,
	.step = step,
	.drains = true,
};
