/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_engine.c - traffic engines: start, stop, wait, show.  Engines run in
 * the idle loop of the prompt (tpd_engines_step), on this lcore, with a
 * live rate line once a second (interactive, or live=1) and a summary
 * when they finish.
 */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "engines/engine.h"

#define MAX_ENGINES 8

static const struct tpd_engine_ops *const engine_ops[] = {
	&tpd_engine_write_bw, &tpd_engine_read_bw, &tpd_engine_send_bw,
	&tpd_engine_pingpong, &tpd_engine_atomic,
};
#define N_OPS (sizeof(engine_ops) / sizeof(engine_ops[0]))

struct slot {
	struct tpd_engine e;
	bool used;
	bool failed;
	bool stopped;		/* by engine stop, before its target */
	bool live;
};

static struct slot slots[MAX_ENGINES];

static void
summary(struct slot *s)
{
	struct tpd_engine *e = &s->e;
	double secs = (double)(e->t_end - e->t_start) / 1e9;

	tpd_async_begin();
	if (secs <= 0)
		secs = 1e-9;
	printf("engine %d %s: %s ops %" PRIu64 " bytes %" PRIu64 " secs %.3f MB/s %.2f "
	       "Mops %.4f errors %" PRIu64, e->id, e->ops->name,
	       s->failed ? "FAILED" : s->stopped ? "stopped" : "done", e->done, e->bytes, secs,
	       (double)e->bytes / secs / 1e6, (double)e->done / secs / 1e6, e->errors);
	if (e->ops == &tpd_engine_pingpong && !e->server && e->done > 0)
		printf(" rtt_us min %.1f avg %.1f max %.1f", e->lat_min_ns / 1e3,
		       (double)e->lat_sum_ns / (double)e->done / 1e3, e->lat_max_ns / 1e3);
	printf("\n");
	tpd_async_end();
}

/* A stopped engine waits (1 s at most) for the work it posted, so the CQ
 * holds nothing of it afterwards. */
static void
drain(struct tpd_engine *e)
{
	uint64_t end = tpd_now_ns() + 1000000000u;
	struct droce_wc wc[32];

	if (!e->ops->drains || e->server)
		return;
	while (e->done < e->posted && tpd_now_ns() < end) {
		int k;

		tpd_progress_all();
		k = engine_poll(e, false, wc, 32);
		if (k < 0)
			return;
		e->done += (uint64_t)k;
		e->bytes += (uint64_t)k * e->size;
	}
}

static void
finish(struct slot *s, bool failed)
{
	s->stopped = !failed && !engine_target_reached(&s->e, tpd_now_ns());
	if (s->stopped)
		drain(&s->e);
	s->e.running = false;
	s->e.t_end = tpd_now_ns();
	s->failed = failed || s->e.errors != 0;
	summary(s);
}

static void
live_line(struct slot *s, uint64_t now)
{
	struct tpd_engine *e = &s->e;
	double dt = (double)(now - e->t_last_report) / 1e9;
	uint64_t d = e->done - e->done_at_report;

	tpd_async_begin();
	printf("engine %d %s: %.2f MB/s %.4f Mops (%" PRIu64 " ops)\n", e->id,
	       e->ops->name, (double)d * (e->bytes / (e->done ? e->done : 1)) / dt / 1e6,
	       (double)d / dt / 1e6, e->done);
	tpd_async_end();
	e->t_last_report = now;
	e->done_at_report = e->done;
}

bool
tpd_engines_step(void)
{
	bool any = false;
	uint64_t now = 0;

	for (int i = 0; i < MAX_ENGINES; i++) {
		struct slot *s = &slots[i];
		int rc;

		if (!s->used || !s->e.running)
			continue;
		rc = s->e.ops->step(&s->e);
		if (rc != 0) {
			finish(s, rc < 0);
			continue;
		}
		any = true;
		if (s->live) {
			now = now ? now : tpd_now_ns();
			if (now - s->e.t_last_report >= 1000000000u)
				live_line(s, now);
		}
	}
	return any;
}

void
tpd_engines_stop_all(void)
{
	for (int i = 0; i < MAX_ENGINES; i++)
		if (slots[i].used && slots[i].e.running)
			finish(&slots[i], false);
}

bool
tpd_engine_busy(const struct tpd_qp *qp, const struct tpd_mr *mr)
{
	for (int i = 0; i < MAX_ENGINES; i++) {
		const struct slot *s = &slots[i];

		if (s->used && s->e.running &&
		    ((qp != NULL && s->e.qp == qp) || (mr != NULL && s->e.mr == mr))) {
			tpd_err("engine %d (%s) uses it: engine stop %d first", i,
				s->e.ops->name, i);
			return true;
		}
	}
	return false;
}

/* The remote buffer of one-sided engines: rmr=, rkey= raddr=, or the peer. */
static int
engine_remote(struct tpd_cmd *c, struct tpd_engine *e)
{
	uint64_t roff, v;

	if (tpd_kv_u64(c, "roff", 0, UINT64_MAX, &roff) != 0)
		return -1;
	if (tpd_kv_has(c, "rmr")) {
		struct tpd_mr *m = tpd_lookup((void *const *)tpd.mr, tpd_kv_str(c, "rmr"),
					      "mr", NULL);
		if (m == NULL)
			return -1;
		e->rkey = m->mr->rkey;
		e->raddr = (uint64_t)(uintptr_t)m->buf;
	} else if (tpd_kv_has(c, "rkey")) {
		if (tpd_kv_u64(c, "rkey", 0, UINT32_MAX, &v) != 0 ||
		    tpd_kv_u64(c, "raddr", 0, UINT64_MAX, &e->raddr) != 0)
			return -1;
		e->rkey = (uint32_t)v;
	} else {
		e->rkey = e->qp->peer.rkey;
		e->raddr = e->qp->peer.addr;
	}
	e->raddr += roff;
	return 0;
}

static int
engine_setup(struct tpd_cmd *c, struct tpd_engine *e)
{
	const char *role = tpd_kv_str(c, "role");
	uint64_t size, depth, secs;
	bool pp = e->ops == &tpd_engine_pingpong;

	e->qp = tpd_lookup((void *const *)tpd.qp, tpd_kv_str(c, "qp"), "qp", &e->qpi);
	e->mr = e->qp == NULL ? NULL :
		tpd_lookup((void *const *)tpd.mr, tpd_kv_str(c, "mr"), "mr", NULL);
	if (e->mr == NULL ||
	    tpd_kv_u64(c, "size", pp ? 64 : e->ops == &tpd_engine_send_bw ? 4096 : 65536,
		       1u << 30, &size) != 0 ||
	    tpd_kv_u64(c, "depth", 16, 4096, &depth) != 0 ||
	    tpd_kv_u64(c, "count", 0, UINT64_MAX, &e->count) != 0 ||
	    tpd_kv_u64(c, "secs", 0, 86400, &secs) != 0 || engine_remote(c, e) != 0)
		return -1;
	if (role != NULL && strcmp(role, "server") != 0 && strcmp(role, "client") != 0) {
		tpd_err("role is client or server");
		return -1;
	}
	if (size == 0 || depth == 0) {
		tpd_err("size and depth must be at least 1");
		return -1;
	}
	if (size > e->mr->len && e->ops != &tpd_engine_atomic) {
		tpd_err("size %" PRIu64 " is larger than mr (%zu bytes)", size, e->mr->len);
		return -1;
	}
	if (e->qp->qp->state != DROCE_QPS_RTS) {
		tpd_err("qp %d is %s, not RTS: connect it first", e->qpi,
			tpd_qp_state_name(e->qp->qp->state));
		return -1;
	}
	e->size = (uint32_t)size;
	e->depth = (uint32_t)depth;
	e->secs = (double)secs;
	e->server = role != NULL && strcmp(role, "server") == 0;
	return 0;
}

/* engine start NAME qp=QP mr=MR [...] */
static int
engine_start(struct tpd_cmd *c)
{
	const struct tpd_engine_ops *ops = NULL;
	struct slot *s = NULL;
	uint64_t live;
	int i;

	if (c->npos < 3) {
		tpd_err("missing engine name (write_bw, read_bw, send_bw, pingpong, atomic)");
		return -1;
	}
	for (size_t k = 0; k < N_OPS; k++)
		if (strcmp(c->pos[2], engine_ops[k]->name) == 0)
			ops = engine_ops[k];
	if (ops == NULL) {
		tpd_err("unknown engine '%s' (write_bw, read_bw, send_bw, pingpong, atomic)",
			c->pos[2]);
		return -1;
	}
	for (i = 0; i < MAX_ENGINES; i++)
		if (!slots[i].used || !slots[i].e.running)
			break;
	if (i == MAX_ENGINES) {
		tpd_err("%d engines are running already", MAX_ENGINES);
		return -1;
	}
	s = &slots[i];
	memset(s, 0, sizeof(*s));
	s->e.ops = ops;
	s->e.id = i;
	if (tpd_kv_u64(c, "live", tpd.interactive, 1, &live) != 0 ||
	    engine_setup(c, &s->e) != 0 || tpd_kv_check_used(c) != 0)
		return -1;
	for (int k = 0; k < MAX_ENGINES; k++)
		if (k != i && slots[k].used && slots[k].e.running && slots[k].e.qp == s->e.qp) {
			tpd_err("engine %d already runs on qp %d", k, s->e.qpi);
			return -1;
		}
	if (ops->start(&s->e) != 0)
		return -1;
	s->used = true;
	s->live = live != 0;
	s->e.running = true;
	s->e.t_start = s->e.t_last_report = tpd_now_ns();
	printf("engine %d: %s started on qp %d\n", i, ops->name, s->e.qpi);
	return 0;
}

static struct slot *
engine_arg(struct tpd_cmd *c, int *id)
{
	uint64_t v;

	if (tpd_pos_u64(c, 2, MAX_ENGINES - 1, &v, "engine id") != 0)
		return NULL;
	if (!slots[v].used) {
		tpd_err("no engine %" PRIu64, v);
		return NULL;
	}
	*id = (int)v;
	return &slots[v];
}

static int
engine_stop(struct tpd_cmd *c)
{
	struct slot *s;
	int id;

	if (c->npos >= 3 && strcmp(c->pos[2], "all") == 0) {
		tpd_engines_stop_all();
		return tpd_kv_check_used(c);
	}
	s = engine_arg(c, &id);
	if (s == NULL || tpd_kv_check_used(c) != 0)
		return -1;
	if (s->e.running)
		finish(s, false);
	else
		summary(s);
	return 0;
}

/* engine wait ID [timeout=S]: run until it finishes; fails if it failed. */
static int
engine_wait(struct tpd_cmd *c)
{
	uint64_t timeout, end;
	struct slot *s;
	int id;

	s = engine_arg(c, &id);
	if (s == NULL || tpd_kv_u64(c, "timeout", 60, 86400, &timeout) != 0 ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	end = tpd_now_ns() + timeout * 1000000000u;
	while (s->e.running && tpd_now_ns() < end) {
		tpd_progress_all();
		tpd_engines_step();
	}
	if (s->e.running) {
		tpd_err("engine %d still running after %" PRIu64 " s: stopped", id, timeout);
		finish(s, true);
		return -1;
	}
	if (s->failed) {
		tpd_err("engine %d failed", id);
		return -1;
	}
	return 0;
}

static int
engine_show(struct tpd_cmd *c)
{
	if (tpd_kv_check_used(c) != 0)
		return -1;
	for (size_t k = 0; k < N_OPS; k++)
		printf("engine type %s: %s\n", engine_ops[k]->name, engine_ops[k]->help);
	for (int i = 0; i < MAX_ENGINES; i++)
		if (slots[i].used)
			printf("engine %d: %s on qp %d, %s, %" PRIu64 " ops\n", i,
			       slots[i].e.ops->name, slots[i].e.qpi,
			       slots[i].e.running ? "running" : slots[i].failed ? "failed" : "done",
			       slots[i].e.done);
	return 0;
}

static int
engine_cmd(struct tpd_cmd *c)
{
	static const struct {
		const char *name;
		tpd_cmd_fn fn;
	} sub[] = {
		{ "start", engine_start }, { "stop", engine_stop },
		{ "wait", engine_wait }, { "show", engine_show },
	};

	for (size_t k = 0; c->npos >= 2 && k < sizeof(sub) / sizeof(sub[0]); k++)
		if (strcmp(c->pos[1], sub[k].name) == 0)
			return sub[k].fn(c);
	tpd_err("engine start|stop|wait|show (see help engine)");
	return -1;
}

static const struct tpd_subcmd engine_cmds[] = {
	{ "", engine_cmd, "engine start write_bw|read_bw|send_bw|pingpong|atomic qp=QP mr=MR [size=N] "
	  "[depth=N] [count=N] [secs=S] [role=client|server] [rmr=MR|rkey=K raddr=A] [roff=N] [live=0|1]",
	  "start a traffic engine on a connected QP (runs while the prompt is idle); "
	  "engine stop ID|all, engine wait ID [timeout=S] (fails if the engine failed), "
	  "engine show (types and their options, running engines)" },
	{ NULL, NULL, NULL, NULL },
};
const struct tpd_group tpd_group_engine = { "engine", "traffic engines (engines/)", engine_cmds };
