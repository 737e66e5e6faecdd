/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced_table.h - inside droced: the applications' handle tables
 * (droced_apps.c) and the persistent regions built on them
 * (droced_persist.c, README.md "Persistent regions").
 */
#ifndef DROCED_TABLE_H
#define DROCED_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "verbs_daemon.h"

struct rte_ring;

/*
 * After a release or a death revokes the keys, the QPs stay connected this
 * long before they go to ERR and away: a peer's access in that time is
 * NAKed (REM_ACCESS_ERR at once) instead of dropped by a QP that is gone
 * (IBTA 10.3.1: a retry timeout at the peer, RETRY_EXC_ERR after all
 * retries).  A quarter of a second: a loaded host delays the engine's
 * lcore and the peer by that much (262 ms seen on a 2-core VM at load
 * average 5).
 */
#define DROCED_LINGER_US 250000

/*
 * What lingers after such a revocation (a released region, a dead
 * application's table): teardown(l) once teardown_us has come
 * (droced_linger_tick, droced.h).
 */
struct droced_linger {
	uint64_t teardown_us;
	void (*teardown)(struct droced_linger *l);
	struct droced_linger *next;
};

/* l (inside its owner) torn down DROCED_LINGER_US after revoked_us. */
void droced_linger(struct droced_linger *l, uint64_t revoked_us,
		   void (*teardown)(struct droced_linger *l));

/* OBJ_MAP: droced's mapping of an application's pages, one per MR on them */
enum obj_type { OBJ_BUF, OBJ_PD, OBJ_MR, OBJ_CQ, OBJ_QP, OBJ_MAP, OBJ_CHANNEL,
		OBJ_MW, OBJ_SRQ, OBJ_AH, OBJ_NTYPES };

struct obj {
	enum obj_type type;
	void *p;
	uint64_t len;		/* a buffer's, a mapping's */
	/* a CQ's, QP's, SRQ's, MR's, MW's name in its events (0: none); a
	 * mapping's (OBJ_MAP) address in the application */
	uint64_t app_ptr;
	/* the context (struct dmn_msg's ctx) a PD's or CQ's request named, a
	 * QP's, SRQ's, MR's, MW's PD's: whose events its are; DQ_NO_CTX
	 * after that context closed */
	uint32_t ctx;
};

/* A MEM_PIECE received: [addr, addr + len) of the application at off in fd. */
struct mem_piece {
	uint64_t addr, len, off;
	int fd;			/* -1: System V segment shmid */
	int shmid;
};

/* An application: its connection and its table (a region's table: fd -1). */
struct droced_app {
	int fd;
	pid_t pid;
	bool hello;		/* served: counted in droced's --max-apps */
	void *owner;		/* owner id: never reused */
	/* its asynchronous events (OPEN_EVENTS): the ring they go into and a
	 * copy of the application's async_fd, which counts them */
	struct rte_ring *ev_ring;
	int ev_fd;
	uint64_t ev_dropped;
	struct obj *obj;
	uint32_t nobj, cap;
	uint32_t count[OBJ_NTYPES];
	uint64_t buf_bytes;
	uint64_t map_bytes;
	/* dead: seen at seen_us, its keys revoked in revoke_us, the rest freed
	 * when linger is over */
	uint64_t seen_us, revoke_us;
	uint32_t revoked;	/* MRs */
	struct droced_linger linger;
	int rx_fd;		/* the request's SCM_RIGHTS fd, -1: none or taken */
	int tx_fd;		/* the reply's (then closed), -1: none */
	struct droced_dq *dq;	/* its queue region (droced_dq.c), or NULL */
	struct droced_cm_app *cm;	/* its CM relay (droced_cm.c), or NULL */
	struct mem_piece piece[DMN_MEM_PIECES];	/* for the next REG_MEM */
	uint32_t npiece;
	struct droced_app *next;
};

/* ---- droced_apps.c ---- */

/* The request's SCM_RIGHTS fd is an eventfd: 0, EBADF (none) or EINVAL. */
int passed_eventfd(const struct droced_app *a);

/* 0 or ENOMEM. */
int obj_add(struct droced_app *a, enum obj_type type, void *p, uint64_t len);
/* The caller's object of that type with handle h, or NULL. */
struct obj *obj_find(struct droced_app *a, enum obj_type type, uint64_t h);
void obj_remove(struct droced_app *a, struct obj *o);
/* A dealloc/dereg/destroy request: 0, ENOENT for a handle not a's, or the verb's errno. */
int release_handle(struct droced_app *a, enum obj_type type, uint64_t h);
/* The dereg of a's MR h, then of the mapping of the application's pages
 * it lies in (if any): 0, ENOENT, or the verb's errno. */
int dereg_handle(struct droced_app *a, uint64_t h);
/* The mapping of the application's own pages (OBJ_MAP) mr lies in, or NULL. */
struct obj *map_of(struct droced_app *a, const struct droce_mr *mr);
/* Every object of that type in a's table freed, the newest first (QPs to ERR first). */
void reap_type(struct droced_app *a, enum obj_type type);
/* Every object of a's table freed (keys first). */
void reap_objects(struct droced_app *a);
/* Telemetry's copy of the lists, after a change. */
void tel_snapshot(void);
uint64_t now_us(void);

/* The fd passed with the request is an eventfd: 0, EBADF (none), EINVAL. */
int passed_eventfd(const struct droced_app *a);

/* ---- droced_dq.c: queue regions (README.md "Queue regions") ---- */

struct droced_dq;
/* The requests: 0 or a positive errno. */
int on_dq_open(struct droced_app *a, struct dmn_msg *m);
int on_dq_attach(struct droced_app *a, struct dmn_msg *m);
/* a's CQ or QP p was destroyed: its slot is free. */
void dq_forget(struct droced_app *a, const void *p);
/* a's region unmapped (its death), its rings no longer read. */
void dq_close(struct droced_app *a);
/* A context index of none (its context closed), and of every context. */
#define DQ_NO_CTX (UINT32_MAX - 1)
#define DQ_EVERY_CTX UINT32_MAX
/* An event (type) of a's object named name into a's region, if it has
 * one, for context ctx (DQ_EVERY_CTX: a port's or the device's). */
void dq_event(struct droced_app *a, uint32_t ctx, uint32_t type, uint64_t name);
/* ctx is an open context of a's (without a region: 0 only). */
bool dq_ctx_valid(const struct droced_app *a, uint32_t ctx);
/* DQ_CTX_OPEN, DQ_CTX_CLOSE: 0 or a positive errno. */
int on_dq_ctx_open(struct droced_app *a, struct dmn_msg *m);
int on_dq_ctx_close(struct droced_app *a, struct dmn_msg *m);
/* Descriptors and indices of a's region refused so far. */
uint64_t dq_bad_count(const struct droced_app *a);
/* One round over a's rings (on droced's engine lcore): how many
 * descriptors and completions moved. */
unsigned int dq_poll(struct droced_app *a);
/* DQ_DOORBELL: the socket pair's application end in the reply. */
int on_dq_doorbell(struct droced_app *a, struct dmn_msg *m);

/* ---- droced_persist.c ---- */

/* a's dereg of handle h, its persistent region's MR: released (true). */
bool persist_dereg(struct droced_app *a, uint64_t h);
/* a is gone: the groups of the regions it made go to their own tables
 * (an expired region it attached is released). */
void persist_orphan(struct droced_app *a);
/* The attached owner of the kept region whose MR is mr (*owner), the
 * context of its that takes the MR's events (*ctx), and its name of the
 * MR in its events; 0: none. */
uint64_t persist_event_owner(const void *mr, struct droced_app **owner, uint32_t *ctx);
/* a's context ctx closed: the regions it attached there take no events. */
void persist_ctx_closed(const struct droced_app *a, uint32_t ctx);
/* The regions as --ctl list shows them, at most DMN_LIST_MAX from the
 * from-th on: how many; *total: all of them. */
int list_persist(struct dmn_persist_info *out, uint32_t from, uint32_t *total);
/* The requests (DMN_PERSIST_MR ... DMN_QUERY_LEASE): 0 or a positive errno. */
int on_persist_mr(struct droced_app *a, struct dmn_msg *m);
int on_attach_mr(struct droced_app *a, struct dmn_msg *m);
int on_release(struct droced_app *a, struct dmn_msg *m);
int on_set_lease(struct droced_app *a, struct dmn_msg *m);
int on_renew_lease(struct droced_app *a, struct dmn_msg *m);
int on_query_lease(struct droced_app *a, struct dmn_msg *m);

/* ---- droced_cm.c ---- */

/* Request CM (verbs_daemon.h): a positive errno. */
int droced_cm_request(struct droced_app *a, struct dmn_msg *m);
/* a's listens and comm IDs released (its death, or CLOSE). */
void droced_cm_reap(struct droced_app *a);

#endif /* DROCED_TABLE_H */
