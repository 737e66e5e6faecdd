/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The traffic-engine interface.  An engine is a plug-in (one file each)
 * that keeps traffic going on one QP from the same lcore as the prompt:
 * cmd_engine.c calls step() from the idle loop, so the engine must never
 * block; it posts what its window allows, polls its CQ once and returns.
 *
 * A run ends when count operations completed (count > 0), after secs
 * seconds (secs > 0), on "engine stop", or on an error.
 */
#ifndef DROCE_TPD_ENGINE_H
#define DROCE_TPD_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "tpd.h"

struct tpd_engine;

struct tpd_engine_ops {
	const char *name;
	const char *help;	/* its options, one line */
	/* Check the setup and prime the queues: 0, or -1 (reported). */
	int (*start)(struct tpd_engine *e);
	/* One non-blocking turn: 0 keep going, 1 finished, -1 failed. */
	int (*step)(struct tpd_engine *e);
	/* posted/done count send-queue work: a stop waits for it (not for
	 * receives, which stay posted) */
	bool drains;
};

struct tpd_engine {
	const struct tpd_engine_ops *ops;
	int id;
	/* setup (from "engine start") */
	struct tpd_qp *qp;
	int qpi;
	struct tpd_mr *mr;	/* local buffer: [0, size) sent/read into */
	uint32_t size;		/* bytes per operation */
	uint64_t count;		/* operations to complete (0: until stopped/secs) */
	double secs;		/* seconds to run (0: until count/stopped) */
	uint32_t depth;		/* outstanding operations at most */
	bool server;		/* role=server (send_bw receiver, pingpong echo) */
	uint64_t raddr;		/* remote buffer (RDMA, atomics) */
	uint32_t rkey;
	/* progress */
	uint64_t posted, done, bytes, errors;
	uint64_t t_start, t_end, t_last_report, done_at_report;
	uint64_t lat_sum_ns, lat_min_ns, lat_max_ns, t_sent;
	uint64_t check;		/* engine-specific (atomic: last fetched value) */
	bool running;
};

extern const struct tpd_engine_ops tpd_engine_write_bw, tpd_engine_read_bw,
	tpd_engine_send_bw, tpd_engine_pingpong, tpd_engine_atomic;

/* Shared by engines (engine_common.c). */
int engine_post_rdma(struct tpd_engine *e, enum droce_wr_opcode op);
int engine_post_send(struct tpd_engine *e);
int engine_post_recv(struct tpd_engine *e);
/* Poll the QP's send (or receive) CQ: completions into wc, -1 on an error
 * completion (reported, counted). */
int engine_poll(struct tpd_engine *e, bool recv, struct droce_wc *wc, int n);
/* Window-driven one-sided engines (write_bw, read_bw): post, poll, count. */
int engine_window_step(struct tpd_engine *e, enum droce_wr_opcode op);
bool engine_target_reached(const struct tpd_engine *e, uint64_t now);

#endif /* DROCE_TPD_ENGINE_H */
