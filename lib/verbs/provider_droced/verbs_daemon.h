/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_daemon.h - droced's client provider (app/droced/README.md): the
 * request protocol between an application and droced, and the
 * application's side of the objects the daemon owns.
 *
 * One AF_UNIX SOCK_SEQPACKET connection per application; one struct
 * dmn_msg each way per request.  Handles are the daemon's object
 * addresses, valid in both processes (DPDK multi-process: the application
 * is a secondary of the daemon's file prefix); the daemon looks every
 * handle of a request up in the caller's own table.
 */
#ifndef DROCE_VERBS_DAEMON_H
#define DROCE_VERBS_DAEMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "droce.h"
#include "verbs_private.h"

struct rte_ring;

/* The request types, once: enum dmn_req and their names. */
#define DMN_REQUESTS(X)	\
	X(HELLO)	\
	X(ALLOC_BUF)	\
	X(FREE_BUF)	\
	X(ALLOC_PD)	\
	X(DEALLOC_PD)	\
	X(REG_MR)	\
	X(DEREG_MR)	\
	X(CREATE_CQ)	\
	X(DESTROY_CQ)	\
	X(CREATE_QP)	\
	X(MODIFY_QP)	\
	X(QUERY_QP)	\
	X(DESTROY_QP)	\
	X(QUERY_DEVICE)	\
	X(QUERY_PORT)	\
	X(QUERY_GID)	\
	X(QUERY_PKEY)	\
	X(REREG_MR)	\
	X(LIST)		\
	X(MEM_PIECE)	\
	X(REG_MEM)	\
	X(PERSIST_MR)	\
	X(ATTACH_MR)	\
	X(RELEASE)	\
	X(SET_LEASE)	\
	X(RENEW_LEASE)	\
	X(QUERY_LEASE)	\
	X(CREATE_CHANNEL)	\
	X(DESTROY_CHANNEL)	\
	X(OPEN_EVENTS)	\
	X(CLOSE_EVENTS)	\
	X(ALLOC_MW)	\
	X(DEALLOC_MW)	\
	X(DQ_OPEN)	\
	X(DQ_ATTACH)	\
	X(CREATE_SRQ)	\
	X(MODIFY_SRQ)	\
	X(QUERY_SRQ)	\
	X(DESTROY_SRQ)	\
	X(CREATE_AH)	\
	X(DESTROY_AH)	\
	X(DQ_DOORBELL)	\
	X(CM)		\
	X(ATTACH_MCAST)	\
	X(DETACH_MCAST)	\
	X(DQ_CTX_OPEN)	\
	X(DQ_CTX_CLOSE)

enum dmn_req {
#define DMN_ENUM(n) DMN_##n,
	DMN_REQUESTS(DMN_ENUM)
#undef DMN_ENUM
	DMN_NREQ
};

#define DMN_PREFIX_LEN 64
#define DMN_LIST_MAX 32
/* Pieces of one registration of the application's own memory (E2BIG). */
#define DMN_MEM_PIECES 8
/* MEM_PIECE's arg: the piece is System V segment h[1] (no fd), at offset
 * h[0] in it; else a memfd (SCM_RIGHTS) at offset h[0]. */
#define DMN_PIECE_SYSV 1

/* One application as droced --ctl list shows it. */
struct dmn_app_info {
	int32_t pid;
	uint32_t pd, mr, cq, qp, buf;
	uint64_t buf_bytes;
	uint32_t mem;			/* mappings of the application's pages */
	uint64_t mem_bytes;		/* their bytes */
	uint32_t mw;			/* memory windows */
	uint64_t dq_bad;		/* descriptors of its queue region refused */
	uint32_t srq, ah;		/* SRQs, address handles */
};

/* One persistent region as droced --ctl list shows it. */
struct dmn_persist_info {
	char name[DROCE_PERSIST_NAME_MAX];
	int32_t owner;			/* the owner's pid; 0: nobody's */
	uint32_t key;			/* lkey == rkey */
	uint64_t addr, bytes;
	uint32_t lease_ms;		/* 0: no lease */
	uint32_t qp;			/* the QPs kept with it */
	uint64_t remaining_us;		/* of the lease */
};

struct dmn_msg {
	uint32_t type;			/* enum dmn_req */
	int32_t err;			/* reply: 0 or a positive errno */
	uint64_t h[3];			/* handles */
	uint64_t addr, len;
	uint32_t key;			/* lkey == rkey */
	int32_t arg;			/* access, cqe, attr mask, GID index, count */
	/* ALLOC_PD, CREATE_CQ, ATTACH_MR, DQ_CTX_CLOSE: the requesting
	 * context's index on its process's queue region (DQ_OPEN's is 0,
	 * DQ_CTX_OPEN's reply gives the others'); its objects' events go to
	 * that context (a QP's, SRQ's, MR's, MW's: its PD's).  0 without a
	 * region. */
	uint32_t ctx;
	union {
		struct {		/* HELLO's reply */
			char prefix[DMN_PREFIX_LEN];	/* EAL --file-prefix */
			uint64_t owner;	/* the owner id of this application */
		} hello;
		/* pointers zeroed on the socket: their handles are in h[] */
		struct droce_qp_init_attr qp_init;
		struct {
			struct droce_qp_attr attr;
			struct droce_qp_init_attr init;
		} qp;
		struct droce_device_attr_ex dev;
		struct droce_port_attr port;
		union droce_gid gid;
		/* LIST's reply, a page: arg apps, len regions (from the
		 * offsets in h[0] and h[1]; then their totals there) */
		struct {
			struct dmn_app_info apps[DMN_LIST_MAX];
			struct dmn_persist_info persist[DMN_LIST_MAX];
		} list;
		char name[DROCE_PERSIST_NAME_MAX];	/* a persistent region's */
		struct droce_lease_attr lease;		/* QUERY_LEASE's reply */
		/* DQ_OPEN: the region's shape, lib/dq's struct dq_geom
		 * field by field; the reply's len is its size, the memfd
		 * comes with it (SCM_RIGHTS) */
		struct {
			uint32_t nqp, ncq, sq_depth, rq_depth, cq_depth;
		} dq;
		/* CREATE_SRQ (h[0] the PD), MODIFY_SRQ (arg the mask) and
		 * QUERY_SRQ's reply; the SRQ's name in its events in addr */
		struct droce_srq_attr srq;
		/* CREATE_AH: h[0] the PD; the reply's key is the AH's index
		 * in droced's engine, what a UD work request names */
		struct droce_ah_attr ah;
		/* CM: arg the enum droce_cm_relay_op, key a comm ID, len a
		 * port; OPEN passes an eventfd (SCM_RIGHTS) */
		struct {
			uint8_t sgid[16];
			uint8_t dgid[16];
			uint8_t mad[DROCE_CM_MAD_LEN];
		} cm;
	} u;
};

/* CREATE_QP: h[0] the PD, h[1] and h[2] the send and receive CQs, len the
 * SRQ's handle (0: none), addr the QP's name in its events. */

/* DQ_ATTACH: h[0] the CQ's, QP's or SRQ's handle, arg which (enum
 * dmn_dq_obj), key its slot in the region (an SRQ takes a QP slot: its
 * receive ring); a CQ's may carry its completion channel's
 * eventfd (SCM_RIGHTS), which droced counts the CQ's fired arms on.
 * DQ_DOORBELL: the reply carries the application's end of the region's
 * doorbell, a socket pair (lib/dq's struct dq_bell).
 * DQ_CTX_OPEN: another context of the process, its async_fd passed
 * (SCM_RIGHTS): the reply's ctx is its index, whose event ring (lib/dq
 * dq_evq) droced has emptied and counts on that eventfd.  DQ_CTX_CLOSE
 * (ctx): no more events for it; its index may be given again. */
enum dmn_dq_obj { DMN_DQ_CQ, DMN_DQ_QP, DMN_DQ_SRQ };

/* SET_LEASE, RENEW_LEASE and QUERY_LEASE: h[0] the object's handle, h[1]
 * which kind of object it is. */
enum dmn_lease_obj { DMN_LEASE_MR, DMN_LEASE_MW };

/* The application's objects: the public struct, then the daemon's handle. */
struct verbs_dmn_pd {
	struct droce_pd pub;
	uint64_t h;
};

struct verbs_dmn_mr {
	struct droce_mr pub;
	uint64_t h;
	uint64_t name;			/* its name in events */
	int access;			/* as registered (rereg keeps it) */
	/* an attached region's pages, mapped from the memfd droced passed
	 * (NULL: none; unmapped when the proxy is freed) */
	void *map;
	size_t map_len;
};

/* pub.handle is the window's index in droced's tables: a BIND_MW work
 * request built in the application names droced's window by it. */
struct verbs_dmn_mw {
	struct droce_mw pub;
	uint64_t h;
};

/*
 * CQs and QPs: remote is the daemon's object (in shared memory), whose
 * cq_context / qp_context the daemon set to the caller's owner id; the
 * data path compares it with this process's before it touches the rings.
 */
struct verbs_dmn_cq {
	struct droce_cq pub;
	uint64_t h;
	struct droce_cq *remote;
};

struct verbs_dmn_qp {
	struct droce_qp pub;
	uint64_t h;
	struct droce_qp *remote;
};

/* An SRQ: remote's srq_context is the owner id, as a CQ's cq_context. */
struct verbs_dmn_srq {
	struct droce_srq pub;
	uint64_t h;
	struct droce_srq *remote;
};

/* An address handle: pub.handle is droced's AH's index, which a UD work
 * request built in the application carries and droced's engine resolves
 * (only for a QP of the AH's PD: lib/transport tp_ah_get). */
struct verbs_dmn_ah {
	struct droce_ah pub;
	uint64_t h;
};

/* The process's connection (struct droced_context's conn). */
struct verbs_daemon {
	void *owner;			/* HELLO's owner id */
	int fd;				/* -1 once the daemon is gone */
	char path[108];			/* droced's socket (sockaddr_un's sun_path) */
	bool renew;			/* a child of fork(): connect at the next request */
	pthread_mutex_t lock;		/* one request at a time */
	/* asynchronous events: droced's ring of them for this application
	 * and the context whose async_fd counts them (the first opened) */
	struct rte_ring *events;
	struct droce_context *events_ctx;
};

/*
 * The application's side (droced_verbs.c).  Connect before EAL starts
 * (HELLO tells the file prefix to join): 0 or -errno.  The connection is
 * the process's; the first control verb that finds it closed fails with
 * ENOTCONN, as does every later one.
 */
int verbs_daemon_connect(const char *path, char *prefix, size_t len);
/*
 * For a child of fork() (lib/device's handler): the parent's connection
 * forgotten, the child's copy of its socket closed, and the child's next
 * request connects it anew; async-signal-safe.
 */
void verbs_daemon_fork_child(void);
/* The child's connection now (if no request made it yet): 0 or -errno. */
int verbs_daemon_renew(void);
/* A context on the daemon's device: NULL with errno. */
struct droce_context *verbs_daemon_open(struct droce_device *device);
/* One request and its reply: 0 or a positive errno (ENOTCONN: daemon gone). */
int verbs_daemon_call(struct dmn_msg *m);
/* The same with fd (not -1) passed to the daemon as SCM_RIGHTS. */
int verbs_daemon_call_fd(struct dmn_msg *m, int fd);
/* The same; the fd that came with the reply in *fd_out (-1: none). */
int verbs_daemon_call_fds(struct dmn_msg *m, int fd, int *fd_out);
/*
 * REG_MR of memory outside droce's hugepages (droced_mem.c): the
 * pages are moved onto memfds and passed as pieces.  m as for REG_MR;
 * 0 (m holds the reply) or a positive errno: EOPNOTSUPP (not anonymous
 * private memory), E2BIG (more than DMN_MEM_PIECES pieces), ENOMEM,
 * EFAULT (not mapped).
 */
int verbs_dmn_mem_reg(struct dmn_msg *m);
/*
 * m (a PERSIST_MR) with the memfd holding all of [addr, addr + len), the
 * application's own pages moved by a registration: 0 or a positive errno,
 * EFAULT when no one moved segment holds the range.
 */
int verbs_dmn_mem_call_fd(struct dmn_msg *m, const void *addr, size_t len);
/* droced_mem.c's fork handlers, registered before anyone else's (called
 * at the connection). */
void verbs_dmn_mem_init(void);

/*
 * REG_MR of [addr, addr + len) on pd (own_pages: the application's own
 * pages, moved onto memfds, verbs_dmn_mem_reg; else droce's hugepages):
 * the proxy (struct verbs_dmn_mr) in *out, named in events by name(): 0
 * or -errno.
 */
/* ALLOC_MW of a type-1 or type-2 window, named name(ctx, window) in its
 * events: 0 or -errno. */
int verbs_dmn_alloc_mw(struct droce_pd *pd, int type,
		       uint64_t (*name)(const struct droce_context *, const void *),
		       struct droce_mw **out);
int droced_dealloc_mw(struct droce_mw *mw);
int verbs_dmn_reg_mr(struct droce_pd *pd, void *addr, size_t len, uint64_t iova, int access,
		     bool own_pages,
		     uint64_t (*name)(const struct droce_context *, const void *),
		     struct droce_mr **out);

/*
 * rereg_mr on droced: a new PD or new rights by droced (its MR keeps its
 * keys, as in process); a new translation as a new registration (on the
 * new PD, with the new rights if asked) that replaces the old, deregistered
 * before this returns (new keys, the old ones dead).  Every failure leaves
 * the MR as it was.  own_pages: how addr's memory is registered
 * (verbs_dmn_reg_mr).  0 or -errno.
 */
int verbs_dmn_rereg_mr(struct droce_mr *mr, int flags, struct droce_pd *pd, void *addr,
		       size_t length, int access, bool own_pages);

/*
 * droced's client's ops that only make requests (droced_verbs.c), shared
 * with the queue-region provider (provider_dq): -errno as every op.
 */
int droced_alloc_pd(struct droce_context *ctx, struct droce_pd **out);
/* ALLOC_PD for context index ctx_index (struct dmn_msg's ctx). */
int verbs_dmn_alloc_pd(struct droce_context *ctx, uint32_t ctx_index, struct droce_pd **out);
int droced_dealloc_pd(struct droce_pd *pd);
int droced_dereg_mr(struct droce_mr *mr);
int droced_modify_qp(struct droce_qp *qp, struct droce_qp_attr *attr, int mask);
int droced_modify_srq(struct droce_srq *srq, struct droce_srq_attr *attr, int mask);
int droced_query_srq(struct droce_srq *srq, struct droce_srq_attr *attr);
int droced_query_qp(struct droce_qp *qp, struct droce_qp_attr *attr,
		    struct droce_qp_init_attr *init);
int droced_query_device_ex(struct droce_context *ctx, struct droce_device_attr_ex *a);
/* multicast: droced attaches its QP of the application's (h[0]) to u.gid */
int droced_attach_mcast(struct droce_qp *qp, const union droce_gid *gid);
int droced_detach_mcast(struct droce_qp *qp, const union droce_gid *gid);
int droced_query_port(struct droce_context *ctx, uint8_t port_num, struct droce_port_attr *a);
int droced_query_gid(struct droce_context *ctx, uint8_t port_num, int index, union droce_gid *gid);
int droced_query_pkey(struct droce_context *ctx, uint8_t port_num, int index, uint16_t *pkey);
int droced_create_ah(struct droce_pd *pd, struct droce_ah_attr *attr, struct droce_ah **out);
int droced_destroy_ah(struct droce_ah *ah);
int droced_progress(struct droce_context *ctx);
int droced_self_driven(struct droce_context *ctx);
/* lib/cm's relay through droced (droced_cm.c): request CM. */
int droced_cm_relay(struct droce_context *ctx, struct droce_cm_relay *r);

/* REG_MR's, CREATE_CQ's, ...: the name droced gives obj's events (obj
 * itself), 0 (none) in a context that takes no events. */
uint64_t verbs_dmn_event_name(const struct droce_context *ctx, const void *obj);
/* The daemon's handle of the application's MR or MW proxy. */
uint64_t verbs_dmn_mr_handle(const struct droce_mr *mr);
uint64_t verbs_dmn_mw_handle(const struct droce_mw *mw);

/* droced_persist.c: the persistent regions' and leases' ops (-errno). */
int droced_persist_mr(struct droce_mr *mr, const char *name, uint32_t lease_ms);
int droced_attach_mr(struct droce_context *ctx, const char *name, struct droce_mr **out);
/*
 * The two providers' persist and attach: own_pages, the MR lies on the
 * application's own pages (its memfd goes with the request, kept by
 * droced for a reattach); an attached region whose pages are a memfd
 * (its maker's own pages) is mapped from the fd droced passes, at the
 * region's address if that range is free here.  The attached proxy is
 * named name(ctx, proxy) in its lease's events.  0 or -errno.
 */
int verbs_dmn_persist_mr(struct droce_mr *mr, const char *name, uint32_t lease_ms,
			 bool own_pages);
int verbs_dmn_attach_mr(struct droce_context *ctx, uint32_t ctx_index, const char *name,
			uint64_t (*name_fn)(const struct droce_context *, const void *),
			struct droce_mr **out);
int droced_release(struct droce_context *ctx, const char *name);
int droced_set_mr_lease(struct droce_mr *mr, uint32_t lease_ms);
int droced_set_mw_lease(struct droce_mw *mw, uint32_t lease_ms);
int droced_renew_mr(struct droce_mr *mr);
int droced_renew_mw(struct droce_mw *mw);
int droced_query_mr_lease(struct droce_mr *mr, struct droce_lease_attr *attr);
int droced_query_mw_lease(struct droce_mw *mw, struct droce_lease_attr *attr);
/*
 * droced_persist.c: the daemon answered rc to the dereg of mr.  For the
 * proxy of a persistent region (its name remembered), ENOENT means the
 * region was released meanwhile (its lease, a release by droced --ctl):
 * 0, the proxy is to be freed; the name is forgotten when that is 0.
 */
int verbs_dmn_named_dereg(struct droce_mr *mr, int rc);

/* The object an event names: verbs_event_object (verbs_private.h). */

/* A CREATE_QP request's attributes: the application's pointers left out
 * (droced names the CQs and SRQ by handle). */
static inline void
verbs_dmn_qp_init_wire(struct droce_qp_init_attr *w, const struct droce_qp_init_attr *init)
{
	*w = *init;
	w->qp_context = NULL;
	w->send_cq = NULL;
	w->recv_cq = NULL;
	w->srq = NULL;
}

#endif /* DROCE_VERBS_DAEMON_H */
