/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine_read_bw.c - RDMA reads of size bytes to the peer's buffer, keeping
 * depth of them in flight (one-sided: the peer needs no engine).
 */
#include "engine.h"

static int
start(struct tpd_engine *e)
{
	if (e->rkey == 0) {
		tpd_err("read_bw needs the peer's buffer (exchange with mr=, connect with "
			"rmr=/rkey=, or rmr=/rkey= raddr= here)");
		return -1;
	}
	return 0;
}

static int
step(struct tpd_engine *e)
{
	return engine_window_step(e, DROCE_WR_RDMA_READ);
}

const struct tpd_engine_ops tpd_engine_read_bw = {
	.name = "read_bw",
	.help = "qp=QP mr=MR [size=65536] [depth=16] [count=N|secs=S] [rmr=MR|rkey=K raddr=A]",
	.start = start,
	.step = step,
	.drains = true,
};
