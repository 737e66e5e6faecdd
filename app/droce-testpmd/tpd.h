/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-testpmd: an interactive verbs shell in the spirit of dpdk-testpmd.
 *
 * Files, by command group:
 *   tpd_main.c     options, device opening, the interactive and cmdfile loops
 *   tpd_cmdline.c  the rte_cmdline instructions (one per group) and dispatch
 *   tpd_args.c     the line tokenizer and argument parsers (numbers, keys)
 *   tpd_util.c     names (states, statuses, opcodes), GIDs, the idle loop
 *   cmd_dev.c      device list/show, sleep, sync, echo
 *   cmd_pd_mr.c    pd and mr commands
 *   cmd_mw.c       mw commands
 *   cmd_cq.c       cq commands and poll
 *   cmd_qp.c       qp create/modify/connect/destroy/show
 *   cmd_exch.c     qp exchange (TCP with another droce-testpmd) and sync
 *   cmd_post.c     post: every work request and receives
 *   cmd_show.c     show counters / show qp (telemetry names)
 *   cmd_engine.c   engine start/stop/wait/show; engines/ hold the engines
 *
 * Every object lives in a fixed table and is named by its index (the
 * "handle" the commands print and take).  Everything runs on one lcore:
 * commands, engines and droce_progress() of every open device.
 */
#ifndef DROCE_TPD_H
#define DROCE_TPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "droce.h"

#define TPD_MAX_DEV 4
#define TPD_MAX_OBJ 64
#define TPD_MAX_MR_SIZE (256u << 20)	/* one MR's buffer: 256 MiB at most */
#define TPD_MAX_ARGS 48

/* ---- objects ------------------------------------------------------------- */

struct tpd_dev {
	struct droce_device *device;
	struct droce_context *ctx;
	enum droce_mtu active_mtu;
};

struct tpd_pd {
	struct droce_pd *pd;
	int dev;
};

struct tpd_mr {
	struct droce_mr *mr;
	uint8_t *buf;
	size_t len;
	int pd;
	int access;
};

struct tpd_mw {
	struct droce_mw *mw;
	int pd;
	uint32_t rkey;		/* current rkey (type 2: the one last bound) */
	uint64_t addr;		/* bound range (0 length: not bound) */
	uint64_t len;
};

struct tpd_cq {
	struct droce_cq *cq;
	int dev;
	int depth;
};

/* What a QP knows of its peer (from connect or exchange). */
struct tpd_peer {
	bool valid;
	union droce_gid gid;
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;		/* the peer's MR, for RDMA and atomics */
	uint64_t addr;
	uint64_t len;
	uint32_t qkey;		/* UD */
};

struct tpd_qp {
	struct droce_qp *qp;
	int pd, scq, rcq;
	uint32_t sq_psn;	/* the PSN we start sending with */
	uint32_t max_inline;
	struct tpd_peer peer;
	struct droce_ah *ah;	/* UD: the peer's address handle */
};

struct tpd_state {
	struct tpd_dev dev[TPD_MAX_DEV];
	int ndev;
	struct tpd_pd *pd[TPD_MAX_OBJ];
	struct tpd_mr *mr[TPD_MAX_OBJ];
	struct tpd_mw *mw[TPD_MAX_OBJ];
	struct tpd_cq *cq[TPD_MAX_OBJ];
	struct tpd_qp *qp[TPD_MAX_OBJ];
	int exch_fd;		/* TCP link to the peer droce-testpmd, or -1 */
	bool interactive;
	bool in_command;	/* a prompt command runs (its output is in order) */
	bool quit;
	void *cl;		/* struct cmdline * (interactive) */
};

extern struct tpd_state tpd;

/* ---- command lines ------------------------------------------------------- */

struct tpd_kv {
	const char *key;
	const char *val;
	bool used;
};

/* One tokenized line: positional words, then key=value options. */
struct tpd_cmd {
	char *pos[TPD_MAX_ARGS];
	int npos;
	struct tpd_kv kv[TPD_MAX_ARGS];
	int nkv;
	char buf[1024];
};

/* A command: returns 0 on success, -1 on failure (already reported). */
typedef int (*tpd_cmd_fn)(struct tpd_cmd *c);

struct tpd_subcmd {
	const char *name;	/* positional word after the group (NULL: any) */
	tpd_cmd_fn fn;
	const char *usage;	/* one line: syntax */
	const char *help;	/* one line: what it does */
};

struct tpd_group {
	const char *name;
	const char *summary;
	const struct tpd_subcmd *cmds;	/* NULL-name terminated */
};

extern const struct tpd_group tpd_group_device, tpd_group_pd, tpd_group_mr,
	tpd_group_mw, tpd_group_cq, tpd_group_poll, tpd_group_qp,
	tpd_group_post, tpd_group_show, tpd_group_engine, tpd_group_misc;
extern const struct tpd_group *const tpd_groups[];

/* Tokenize line into c; -1 (reported) on too many words or a long line. */
int tpd_tokenize(struct tpd_cmd *c, const char *line);
/* Run one line: 0 success (or empty/comment), -1 failure. */
int tpd_run_line(const char *line);
/* The group list, or one group's commands; -1 for an unknown group. */
int tpd_help(const char *group);

/* Error output: "error: ..." on stdout (scripts see it in order). */
void tpd_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int tpd_parse_u64(const char *s, uint64_t max, uint64_t *out, const char *what);
/* Positional i as a number / a handle of the given table. */
int tpd_pos_u64(struct tpd_cmd *c, int i, uint64_t max, uint64_t *out,
		const char *what);
/* Option key: 0 and *out (def when absent), -1 on a bad value. */
int tpd_kv_u64(struct tpd_cmd *c, const char *key, uint64_t def,
	       uint64_t max, uint64_t *out);
const char *tpd_kv_str(struct tpd_cmd *c, const char *key);
bool tpd_kv_has(struct tpd_cmd *c, const char *key);
/* -1 (reported) if an option was not consumed by the command. */
int tpd_kv_check_used(struct tpd_cmd *c);
/* Comma-separated access names -> DROCE_ACCESS_* bits; -1 on a bad name. */
int tpd_parse_access(const char *s, int *out);
void tpd_format_access(int access, char *buf, size_t n);

/* Handles: the object or NULL with "error: no such X" reported. */
struct tpd_pd *tpd_get_pd(struct tpd_cmd *c, int pos);
struct tpd_mr *tpd_get_mr(struct tpd_cmd *c, int pos);
struct tpd_mw *tpd_get_mw(struct tpd_cmd *c, int pos);
struct tpd_cq *tpd_get_cq(struct tpd_cmd *c, int pos);
struct tpd_qp *tpd_get_qp(struct tpd_cmd *c, int pos);
/* Same, from a string (for key=value options). */
void *tpd_lookup(void *const *table, const char *s, const char *what, int *idx);
int tpd_free_slot(void *const *table, const char *what);
int tpd_dev_of_pd(int pd);
/* The index of a handle string that tpd_lookup already accepted. */
int tpd_handle(const char *s);

/* ---- names, GIDs, the idle loop (tpd_util.c) ------------------------------ */

const char *tpd_qp_state_name(enum droce_qp_state s);
int tpd_qp_state_parse(const char *s, enum droce_qp_state *out);
const char *tpd_qp_type_name(enum droce_qp_type t);
const char *tpd_wc_status_name(enum droce_wc_status s);
int tpd_wc_status_parse(const char *s, enum droce_wc_status *out);
const char *tpd_wc_opcode_name(enum droce_wc_opcode op);
int tpd_mtu_parse(const char *s, enum droce_mtu *out);
void tpd_gid_str(const union droce_gid *gid, char *buf, size_t n);
int tpd_gid_parse(const char *s, union droce_gid *gid);
uint64_t tpd_now_ns(void);
/* One turn of every open device (and nothing else). */
void tpd_progress_all(void);
/* One turn of the background work: devices, running engines. */
void tpd_idle(void);
/* Around output printed while the prompt waits for input (engine lines):
 * clear the prompt line, then redraw it with what was typed. */
void tpd_async_begin(void);
void tpd_async_end(void);
/* Run tpd_idle for ms milliseconds. */
void tpd_idle_for(unsigned int ms);

/* ---- shared by several command files -------------------------------------- */

/* Move qp to RTS (RC/UC) or RTS with an AH (UD) using qp->peer. */
int tpd_qp_connect_peer(struct tpd_qp *q);
/* Engines: background steps; true while any engine runs. */
bool tpd_engines_step(void);
void tpd_engines_stop_all(void);
/* true (reported) when a running engine uses this QP or MR */
bool tpd_engine_busy(const struct tpd_qp *qp, const struct tpd_mr *mr);
/* Destroy every object (at exit). */
void tpd_destroy_all(void);
int tpd_mr_index(const struct droce_mr *mr);

#endif /* DROCE_TPD_H */
