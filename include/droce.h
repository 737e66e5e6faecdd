/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce.h - the verbs-like public API of droce, a userspace RoCEv2 stack.
 *
 * The API is libibverbs' with the prefix changed (ibv_ -> droce_,
 * IBV_ -> DROCE_): the same argument order, struct field names, enum values
 * and return conventions, so porting an ibverbs program is a rename.
 * Anything droce adds is marked "droce extension" where it is declared.
 *
 * Return conventions (as rdma-core documents them):
 *  - creators return a pointer, or NULL with errno set;
 *  - other calls return 0 on success or a positive errno value
 *    (ibv_dereg_mr, ibv_dealloc_pd, ibv_modify_qp, ...);
 *  - post calls return 0 or a positive errno and set *bad_wr.
 */
#ifndef DROCE_H
#define DROCE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DROCE_VERSION_MAJOR 0
#define DROCE_VERSION_MINOR 1

struct droce_device;

#include "droce_provider.h"

/*
 * A device context (struct ibv_context): the device, the operations of the
 * provider behind it (droce_provider.h: the in-process engine, droced's
 * client) and its fds.  Everything else is the provider's, behind it.
 */
struct droce_context {
	struct droce_device *device;	/* droce_open_device()'s, or NULL */
	const struct droce_context_ops *ops;	/* its provider's */
	/*
	 * Asynchronous events (droce_get_async_event): an eventfd, readable
	 * (poll/epoll) while an event is pending.  Set O_NONBLOCK on it with
	 * fcntl() for a droce_get_async_event that does not block.
	 */
	int async_fd;
};

/* ---- Protection domains, memory regions, memory windows ------------------ */
/* (section owned by lib/protection + lib/verbs; see docs in those folders) */

/*
 * Access flags (enum ibv_access_flags, same values).
 * DROCE_ACCESS_ZERO_BASED on droce_reg_mr is a droce extension: the region's
 * I/O virtual address starts at 0, so peers address it by offset.
 */
enum droce_access_flags {
	DROCE_ACCESS_LOCAL_WRITE = 1,
	DROCE_ACCESS_REMOTE_WRITE = (1 << 1),
	DROCE_ACCESS_REMOTE_READ = (1 << 2),
	DROCE_ACCESS_REMOTE_ATOMIC = (1 << 3),
	DROCE_ACCESS_MW_BIND = (1 << 4),
	DROCE_ACCESS_ZERO_BASED = (1 << 5),
	DROCE_ACCESS_ON_DEMAND = (1 << 6),	/* not supported: EOPNOTSUPP */
	DROCE_ACCESS_HUGETLB = (1 << 7),	/* accepted, no effect */
	DROCE_ACCESS_FLUSH_GLOBAL = (1 << 8),
	DROCE_ACCESS_FLUSH_PERSISTENT = (1 << 9),
	DROCE_ACCESS_RELAXED_ORDERING = (1 << 20), /* accepted, no effect */
};

/* Protection domain (struct ibv_pd). */
struct droce_pd {
	struct droce_context *context;
	uint32_t handle;
};

/* Memory region (struct ibv_mr).  lkey == rkey in droce (as in rxe). */
struct droce_mr {
	struct droce_context *context;
	struct droce_pd *pd;
	void *addr;
	size_t length;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
};

enum droce_mw_type {
	DROCE_MW_TYPE_1 = 1,
	DROCE_MW_TYPE_2 = 2,
};

/* Memory window (struct ibv_mw). */
struct droce_mw {
	struct droce_context *context;
	struct droce_pd *pd;
	uint32_t rkey;
	uint32_t handle;
	enum droce_mw_type type;
};

struct droce_mw_bind_info {
	struct droce_mr *mr;
	uint64_t addr;
	uint64_t length;
	unsigned int mw_access_flags;	/* DROCE_ACCESS_REMOTE_* only */
};

struct droce_mw_bind {
	uint64_t wr_id;
	unsigned int send_flags;
	struct droce_mw_bind_info bind_info;
};

/*
 * ---- Leases on MRs and MWs (droce extension) ----
 * A lease of lease_ms on a region or window: unless the owner renews it
 * (droce_renew_mr / droce_renew_mw: deadline = now + lease_ms) the device
 * revokes its key at the deadline exactly as droce_dereg_mr (a region) or
 * an invalidation (a window) does: when the revocation is done no access
 * with the key succeeds (peers' requests are NAKed with Remote Access
 * Error, local SGEs fail), and every window bound to a leased region is
 * unbound with it (its rkey dead too).  Then the owner gets the async
 * event DROCE_EVENT_MR_LEASE_EXPIRED / DROCE_EVENT_MW_LEASE_EXPIRED
 * naming the object, once.  The handle stays until the owner frees it:
 * droce_dereg_mr / droce_dealloc_mw of an expired object succeed (after
 * the event, if got, was acked); renewing, setting a lease or binding an
 * expired window fail with ETIME (bind: the BIND_MW WR fails).  Expiry
 * runs on the device's engines (the application's lcore in
 * run-to-completion mode, so only while it calls droce_progress /
 * droce_poll_cq; the transport lcores otherwise), each checking every
 * DROCE_LEASE_TICK_US and before it handles the packets that came while
 * it did not run: a lease expires within one tick of its deadline (plus
 * the revocation's grace period), and an engine that was not running at
 * the deadline revokes before it executes anything received since.
 * Between the deadline and that revocation the lease is already over:
 * renew and set fail with ETIME (nothing extends a lease once due, even
 * when the owner's call runs before the engine), and the query reports
 * expired = true, remaining_us = 0; the event follows the revocation.  A
 * context without a device
 * (droce_open_context alone) has no engine: EOPNOTSUPP.  In daemon mode
 * these calls are requests to droced, whose engine expires the lease; its
 * event reaches the owner as in process (a persistent region's: its
 * maker, or the application that attached it), and the owner's handle
 * of an expired object answers as in process, also that of a persistent
 * region its lease ended (droce_persist_mr).  In both modes no event
 * names a freed object: a destroy drops the object's events not taken
 * and waits until those taken were acked (as ibverbs' destroy of a QP or CQ).
 */
#define DROCE_LEASE_TICK_US 1000

struct droce_lease_attr {
	uint32_t lease_ms;	/* the period; 0: no lease */
	bool expired;		/* its deadline passed (revoked, or about to be) */
	uint64_t remaining_us;	/* until the deadline; 0 once due */
};

/* droce_reg_mr with a lease of lease_ms (> 0) from now: NULL + errno. */
struct droce_mr *droce_reg_mr_lease(struct droce_pd *pd, void *addr,
				    size_t length, int access,
				    uint32_t lease_ms);
/* Lease (lease_ms > 0, deadline now + lease_ms) or unlease (0): 0 or errno. */
int droce_set_mr_lease(struct droce_mr *mr, uint32_t lease_ms);
int droce_set_mw_lease(struct droce_mw *mw, uint32_t lease_ms);
/* 0, ENOENT (no lease), ETIME (expired), EINVAL. */
int droce_renew_mr(struct droce_mr *mr);
int droce_renew_mw(struct droce_mw *mw);
/* 0 (an expired object: expired true, lease_ms its period, remaining_us
 * 0) or EINVAL; in daemon mode ENOENT for a handle not the caller's. */
int droce_query_mr_lease(struct droce_mr *mr, struct droce_lease_attr *attr);
int droce_query_mw_lease(struct droce_mw *mw, struct droce_lease_attr *attr);

/* Queue pair: defined by the transport issue; opaque here. */
struct droce_qp;
struct droce_srq;

/*
 * Work-request opcodes (enum ibv_wr_opcode, same values).  The send work
 * request itself comes with the transport; DROCE_WR_BIND_MW binds a type-2
 * window to the posting QP (a type-1 window: what droce_bind_mw posts),
 * DROCE_WR_LOCAL_INV invalidates a type-2 window's rkey,
 * DROCE_WR_SEND_WITH_INV asks the peer to invalidate one; all three
 * execute in order when the transport processes the WR (lib/protection:
 * prot_mw_bind_type2 / prot_mw_bind_type1_key, prot_local_invalidate,
 * prot_remote_invalidate).  RC only: DROCE_WR_ATOMIC_WRITE writes the 8
 * bytes of its SGE list (or 8 inline bytes) with one 64-bit store at
 * wr.rdma.remote_addr, 8-byte aligned (the region needs REMOTE_WRITE);
 * DROCE_WR_FLUSH takes wr.flush and no SGEs (the region needs
 * DROCE_ACCESS_FLUSH_GLOBAL and/or _PERSISTENT as its type asks).
 */
enum droce_wr_opcode {
	DROCE_WR_RDMA_WRITE = 0,
	DROCE_WR_RDMA_WRITE_WITH_IMM = 1,
	DROCE_WR_SEND = 2,
	DROCE_WR_SEND_WITH_IMM = 3,
	DROCE_WR_RDMA_READ = 4,
	DROCE_WR_ATOMIC_CMP_AND_SWP = 5,
	DROCE_WR_ATOMIC_FETCH_AND_ADD = 6,
	DROCE_WR_LOCAL_INV = 7,
	DROCE_WR_BIND_MW = 8,
	DROCE_WR_SEND_WITH_INV = 9,
	DROCE_WR_TSO = 10,
	DROCE_WR_DRIVER1 = 11,
	DROCE_WR_FLUSH = 14,
	DROCE_WR_ATOMIC_WRITE = 15,
};

/* droce_rereg_mr flags (enum ibv_rereg_mr_flags). */
enum droce_rereg_mr_flags {
	DROCE_REREG_MR_CHANGE_TRANSLATION = (1 << 0),
	DROCE_REREG_MR_CHANGE_PD = (1 << 1),
	DROCE_REREG_MR_CHANGE_ACCESS = (1 << 2),
	DROCE_REREG_MR_FLAGS_SUPPORTED = ((DROCE_REREG_MR_CHANGE_ACCESS << 1) - 1),
};

/* droce_rereg_mr return values (enum ibv_rereg_mr_err_code); errno is set. */
enum droce_rereg_mr_err_code {
	/* Old MR is valid, invalid input detected. */
	DROCE_REREG_MR_ERR_INPUT = -1,
	/* Old MR is valid (fork protection: never returned by droce). */
	DROCE_REREG_MR_ERR_DONT_FORK_NEW = -2,
	/* New MR is valid (fork protection: never returned by droce). */
	DROCE_REREG_MR_ERR_DO_FORK_OLD = -3,
	/* MR shouldn't be used, command error. */
	DROCE_REREG_MR_ERR_CMD = -4,
	/* (never returned by droce) */
	DROCE_REREG_MR_ERR_CMD_AND_DO_FORK_NEW = -5,
};

/*
 * droce extension: a context without a link (devices and ports come later;
 * droce_open_device will build on this).  Every field 0 means "default":
 *   max_pd 1024, max_mr 65536, max_mw 65536 (max_mr + max_mw <= 2^24 - 1);
 *   socket_id: NUMA socket of the tables under EAL; 0 is socket 0, use
 *   DROCE_SOCKET_ID_ANY (-1) for any.  A NULL attr means all defaults with
 *   DROCE_SOCKET_ID_ANY.
 * Under an initialised EAL the protection tables live in hugepage memory
 * (rte_zmalloc_socket); otherwise in ordinary memory.
 * Returns NULL with errno set (EINVAL, ENOMEM) on failure.
 */
#define DROCE_SOCKET_ID_ANY (-1)

struct droce_context_attr {
	uint32_t max_pd;
	uint32_t max_mr;
	uint32_t max_mw;
	int socket_id;
};

struct droce_context *droce_open_context(const struct droce_context_attr *attr);
/* droce extension.  Returns 0, or EBUSY while PDs are still allocated. */
int droce_close_context(struct droce_context *context);

/* Returns NULL with errno set (ENOMEM when max_pd are allocated). */
struct droce_pd *droce_alloc_pd(struct droce_context *context);
/* Returns 0, or EBUSY while MRs/MWs (later QPs) of the PD exist. */
int droce_dealloc_pd(struct droce_pd *pd);

/*
 * Register [addr, addr+length).  Returns NULL with errno set:
 * EINVAL for length 0, NULL addr, an address range that wraps, unknown
 * access bits, or REMOTE_WRITE/REMOTE_ATOMIC without LOCAL_WRITE;
 * EOPNOTSUPP for ON_DEMAND; ENOMEM when max_mr are registered.
 * Overlapping and repeated registrations are allowed, each with its own keys.
 */
struct droce_mr *droce_reg_mr(struct droce_pd *pd, void *addr, size_t length,
			      int access);
/*
 * droce_reg_mr under the I/O virtual address iova (ibv_reg_mr_iova2): SGEs
 * and peers name addr + k as iova + k.  Also EINVAL when [iova,
 * iova+length) wraps, or for an iova other than 0 with ZERO_BASED.
 * droce_reg_mr is this with iova = addr (0 with ZERO_BASED).
 */
struct droce_mr *droce_reg_mr_iova(struct droce_pd *pd, void *addr,
				   size_t length, uint64_t iova, int access);
/*
 * Returns 0, EINVAL (NULL mr) or EBUSY while memory windows are bound to
 * it.  Also EBUSY when frames sent by zero copy (DROCE_TX_ZC, lib/transport
 * README "Zero copy") still send from its memory after a wait of up to
 * 100 ms for the link to free them: the keys are dead from the first call
 * (peers' accesses NAKed), but the memory is still read by the link and
 * must not be freed; call droce_dereg_mr again later (a run-to-completion
 * engine hands its queued frames to the link in its next droce_progress).
 */
int droce_dereg_mr(struct droce_mr *mr);
/*
 * Returns 0 on success (new lkey/rkey in mr), or a negative
 * enum droce_rereg_mr_err_code with errno set.  Every successful call
 * changes the keys' variant; the old keys stop working before it returns.
 * EBUSY (ERR_INPUT) while windows are bound.  droce never leaves the MR
 * unusable: every error is DROCE_REREG_MR_ERR_INPUT with the old MR intact.
 */
int droce_rereg_mr(struct droce_mr *mr, int flags, struct droce_pd *pd,
		   void *addr, size_t length, int access);

/* Returns NULL with errno set (EINVAL bad type, ENOMEM at max_mw). */
struct droce_mw *droce_alloc_mw(struct droce_pd *pd, enum droce_mw_type type);
/* Returns 0; a bound window is unbound (its rkey revoked) first. */
int droce_dealloc_mw(struct droce_mw *mw);
/*
 * Bind a type-1 window (ibv_bind_mw): posts a BIND_MW work request on qp's
 * send queue with the new rkey droce_inc_rkey(mw->rkey), and on success
 * sets mw->rkey to it.  The bind executes in order with the QP's other
 * work requests: once it (or a later WR of the QP) has completed, peers
 * may use the new rkey.  With DROCE_SEND_SIGNALED (or sq_sig_all) it
 * completes with a DROCE_WC_BIND_MW CQE; a bind that fails when it executes (range outside the MR, rights
 * the MR does not allow: remote write/atomic need LOCAL_WRITE on it, MR
 * without MW_BIND, ZERO_BASED) completes with DROCE_WC_MW_BIND_ERR,
 * signalled or not, and moves the QP to ERR.  bind_info.length 0 unbinds.
 * Returns 0 or an errno found at post time: EINVAL (type-2 window, NULL
 * MR, objects of another context, a UD QP, a QP in RESET/INIT/RTR), EPERM
 * (window and MR in different PDs), ENOMEM (send queue full).
 */
int droce_bind_mw(struct droce_qp *qp, struct droce_mw *mw,
		  struct droce_mw_bind *mw_bind);

/* Increment the 8-bit variant of a key (ibv_inc_rkey): for type-2 binds. */
static inline uint32_t droce_inc_rkey(uint32_t rkey)
{
	const uint32_t mask = 0x000000ff;
	uint8_t newtag = (uint8_t)((rkey + 1) & mask);

	return (rkey & ~mask) | newtag;
}


/* ---- Completion queues, queue pairs, work requests ----------------------- */
/*
 * Shapes and values are libibverbs' (verbs.h).  droce runs in poll mode:
 * the transport advances when the application calls droce_poll_cq() or
 * droce_progress() on the lcore that owns the context.  With a dedicated
 * transport lcore (transport_lcores in the device configuration) that
 * lcore advances it; the application's calls go through rings (post,
 * completion and command rings, lib/transport/README.md "Run modes"): one
 * thread at a time may post to a QP and one may poll a CQ.
 */

union droce_gid {
	uint8_t raw[16];
	struct {
		uint64_t subnet_prefix;	/* big-endian */
		uint64_t interface_id;	/* big-endian */
	} global;
};

enum droce_wc_status {
	DROCE_WC_SUCCESS,
	DROCE_WC_LOC_LEN_ERR,
	DROCE_WC_LOC_QP_OP_ERR,
	DROCE_WC_LOC_EEC_OP_ERR,
	DROCE_WC_LOC_PROT_ERR,
	DROCE_WC_WR_FLUSH_ERR,
	DROCE_WC_MW_BIND_ERR,
	DROCE_WC_BAD_RESP_ERR,
	DROCE_WC_LOC_ACCESS_ERR,
	DROCE_WC_REM_INV_REQ_ERR,
	DROCE_WC_REM_ACCESS_ERR,
	DROCE_WC_REM_OP_ERR,
	DROCE_WC_RETRY_EXC_ERR,
	DROCE_WC_RNR_RETRY_EXC_ERR,
	DROCE_WC_LOC_RDD_VIOL_ERR,
	DROCE_WC_REM_INV_RD_REQ_ERR,
	DROCE_WC_REM_ABORT_ERR,
	DROCE_WC_INV_EECN_ERR,
	DROCE_WC_INV_EEC_STATE_ERR,
	DROCE_WC_FATAL_ERR,
	DROCE_WC_RESP_TIMEOUT_ERR,
	DROCE_WC_GENERAL_ERR,
	DROCE_WC_TM_ERR,
	DROCE_WC_TM_RNDV_INCOMPLETE,
};

/* ibv_wc_status_str() */
const char *droce_wc_status_str(enum droce_wc_status status);

enum droce_wc_opcode {
	DROCE_WC_SEND,
	DROCE_WC_RDMA_WRITE,
	DROCE_WC_RDMA_READ,
	DROCE_WC_COMP_SWAP,
	DROCE_WC_FETCH_ADD,
	DROCE_WC_BIND_MW,
	DROCE_WC_LOCAL_INV,
	DROCE_WC_TSO,
	DROCE_WC_FLUSH,
	DROCE_WC_ATOMIC_WRITE = 9,
	DROCE_WC_RECV = 1 << 7,
	DROCE_WC_RECV_RDMA_WITH_IMM,
};

enum {
	DROCE_WC_GRH = 1 << 0,
	DROCE_WC_WITH_IMM = 1 << 1,
	DROCE_WC_IP_CSUM_OK = 1 << 2,
	DROCE_WC_WITH_INV = 1 << 3,
};

struct droce_wc {
	uint64_t wr_id;
	enum droce_wc_status status;
	enum droce_wc_opcode opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	union {
		uint32_t imm_data;		/* network byte order, as ibverbs */
		uint32_t invalidated_rkey;
	};
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned int wc_flags;
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;		/* UD receive: DROCE_WC_SL_ROCE_IPV4 or _IPV6 */
	uint8_t dlid_path_bits;
};

/*
 * A UD receive's sl names the L3 header of the packet, as RoCE NICs report
 * it there (mlx5's CQE; RoCEv2 has no SL on the wire): UCX's UD transport
 * reads it to find the destination address in the GRH slot (IPv4: its
 * last 4 bytes, Annex A17.4.5.2) and drops the datagram otherwise.
 */
#define DROCE_WC_SL_ROCE_IPV6 1
#define DROCE_WC_SL_ROCE_IPV4 2

/*
 * Completion channels (ibverbs' ibv_comp_channel): fd is an eventfd,
 * written once for each armed CQ of the channel that gets its event, and
 * droce_get_cq_event takes the events one at a time.  fcntl(O_NONBLOCK)
 * on it makes droce_get_cq_event return EAGAIN instead of waiting.
 *
 * Who writes fd: the transport engine that makes the armed CQ's
 * completion visible (one write per arm, none per completion).  With a
 * dedicated transport lcore that is the lcore, with adaptive progress
 * (--droce-progress=adaptive) the progress thread while the application
 * is not in droce, so an application may wait for fd with poll/epoll.  In
 * run-to-completion mode alone the engine runs only
 * inside droce calls on the application's lcore: fd becomes readable
 * during a droce_poll_cq/droce_progress, never while the application
 * sleeps in poll(); there droce_get_cq_event runs the engine itself
 * (droce_progress, busy) until an event is there.
 */
struct droce_comp_channel {
	struct droce_context *context;
	int fd;
	int refcnt;			/* CQs on it */
};

/* NULL with errno (EINVAL, ENODEV: no transport, EMFILE, ENOMEM). */
struct droce_comp_channel *droce_create_comp_channel(struct droce_context *context);
/* 0, or EBUSY while CQs are on it. */
int droce_destroy_comp_channel(struct droce_comp_channel *channel);

struct droce_cq {
	struct droce_context *context;
	struct droce_comp_channel *channel;	/* NULL: no events */
	void *cq_context;
	uint32_t handle;
	int cqe;			/* capacity */
};

/*
 * Returns NULL with errno set (EINVAL: cqe < 1 or > DROCE_MAX_CQE, a
 * channel of another context, comp_vector not 0).
 */
#define DROCE_MAX_CQE (1 << 20)
struct droce_cq *droce_create_cq(struct droce_context *context, int cqe,
				 void *cq_context, struct droce_comp_channel *channel,
				 int comp_vector);
/*
 * 0, or EBUSY while QPs use it.  As ibverbs, waits until every completion
 * event taken for it (droce_get_cq_event) was acked (droce_ack_cq_events).
 */
int droce_destroy_cq(struct droce_cq *cq);
/*
 * Up to num_entries completions into wc; returns how many (>= 0) or -1 on
 * error.  Also advances the transport (droce_progress) of the context
 * (with a dedicated transport lcore: only takes what it completed).
 */
static inline int
droce_poll_cq(struct droce_cq *cq, int num_entries, struct droce_wc *wc)
{
	int n;

	if (cq == NULL || (num_entries > 0 && wc == NULL)) {
		errno = EINVAL;
		return -1;
	}
	n = cq->context->ops->poll_cq(cq, num_entries, wc);
	if (n < 0) {
		errno = -n;
		return -1;
	}
	return n;
}
/*
 * Arm the CQ for one completion event on its channel (IBTA 11.4.2.2): the
 * next completion, or with solicited_only the next receive completion of
 * a message with the solicited bit, or the next error completion.  One
 * event per arm; a completion placed before the arm gives none, so: arm,
 * poll the CQ again, then wait.  0 or EINVAL.  Without a channel the arm
 * is kept and gives nothing.
 */
int droce_req_notify_cq(struct droce_cq *cq, int solicited_only);
/*
 * The next completion event of the channel: its CQ and cq_context; 0, or
 * -1 with errno (EAGAIN: none and fd is O_NONBLOCK; EINVAL).  Waits in
 * read(fd) on a dedicated transport lcore or with adaptive progress, runs
 * the engine (busy) in run-to-completion mode alone.  Every event taken
 * must be acked.
 */
int droce_get_cq_event(struct droce_comp_channel *channel, struct droce_cq **cq,
		       void **cq_context);
void droce_ack_cq_events(struct droce_cq *cq, unsigned int nevents);

/* droce extension: run the transport once (receive, send, timers).
 * Returns the number of packets handled.  With a dedicated transport
 * lcore: a no-op returning 0 (that lcore runs the transport). */
int droce_progress(struct droce_context *context);

/*
 * droce extension: a transport counter of the context by its name (the
 * Linux rxe names: sent_pkts, rcvd_pkts, duplicate_request,
 * out_of_seq_request, rcvd_seq_err, completer_retry_err, ... and droce's:
 * retransmitted_pkts, retransmit_timeouts, icrc_err, ...; the full list:
 * droce_counter_name()).  UINT64_MAX for an unknown name.
 */
uint64_t droce_get_counter(struct droce_context *context, const char *name);

/*
 * droce extension: the name of transport counter index (0, 1, ...), or
 * NULL past the last; counting up to the NULL lists every name
 * droce_get_counter() knows.
 */
const char *droce_counter_name(unsigned int index);

enum droce_qp_type {
	DROCE_QPT_RC = 2,
	DROCE_QPT_UC,
	DROCE_QPT_UD,
};

enum droce_qp_state {
	DROCE_QPS_RESET,
	DROCE_QPS_INIT,
	DROCE_QPS_RTR,
	DROCE_QPS_RTS,
	DROCE_QPS_SQD,
	DROCE_QPS_SQE,
	DROCE_QPS_ERR,
	DROCE_QPS_UNKNOWN,
};

enum droce_mtu {
	DROCE_MTU_256 = 1,
	DROCE_MTU_512 = 2,
	DROCE_MTU_1024 = 3,
	DROCE_MTU_2048 = 4,
	DROCE_MTU_4096 = 5,
};

static inline int
droce_mtu_to_num(enum droce_mtu mtu)
{
	return mtu >= DROCE_MTU_256 && mtu <= DROCE_MTU_4096 ? 128 << mtu : -1;
}

enum droce_mig_state {
	DROCE_MIG_MIGRATED,
	DROCE_MIG_REARM,
	DROCE_MIG_ARMED,
};

struct droce_global_route {
	union droce_gid dgid;
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
};

struct droce_ah_attr {
	struct droce_global_route grh;
	uint16_t dlid;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t static_rate;
	uint8_t is_global;	/* RoCE: must be 1 */
	uint8_t port_num;
};

struct droce_ah {
	struct droce_context *context;
	struct droce_pd *pd;
	uint32_t handle;	/* the engine's index of it: what a UD WQE carries */
};

/* Returns NULL with errno set (EINVAL: not global, bad sgid_index). */
struct droce_ah *droce_create_ah(struct droce_pd *pd,
				 struct droce_ah_attr *attr);
int droce_destroy_ah(struct droce_ah *ah);

/*
 * Multicast (ibv_attach_mcast / ibv_detach_mcast): a UD QP joins or leaves
 * the group gid on its device; every UD SEND to the group (an AH whose
 * DGID is gid: the permissive DQPN goes out, whatever remote_qpn says)
 * reaching the device then takes one receive WQE of every QP attached.
 * On RoCE the join is local: gid is the IP group address (IPv6 ff00::/8,
 * or IPv4-mapped 224.0.0.0/4) and lid is ignored.  0, or EINVAL (not a UD
 * QP, not a group; detach: the QP is not in the group), ENOMEM (the
 * limits of droce_query_device: max_mcast_grp, max_mcast_qp_attach,
 * max_total_mcast_qp_attach), EOPNOTSUPP (a device without multicast:
 * those limits 0).  Attaching twice is one attachment; a QP destroyed
 * leaves its groups.
 */
int droce_attach_mcast(struct droce_qp *qp, const union droce_gid *gid, uint16_t lid);
int droce_detach_mcast(struct droce_qp *qp, const union droce_gid *gid, uint16_t lid);

struct droce_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

/* Limits (reported by droce_query_device). */
#define DROCE_MAX_QP_WR 16384
#define DROCE_MAX_SGE 16
#define DROCE_MAX_INLINE_DATA 256
#define DROCE_MAX_RD_ATOMIC 16		/* responder resources (max_dest_rd_atomic) */
/*
 * Initiator depth (max_rd_atomic): the requester only counts its READs and
 * atomics in flight, no table is sized by it.  As deep as Linux rxe's
 * responder: perftest sets max_rd_atomic to the peer's max_qp_rd_atom.
 */
#define DROCE_MAX_INIT_RD_ATOMIC 128

struct droce_qp_init_attr {
	void *qp_context;
	struct droce_cq *send_cq;
	struct droce_cq *recv_cq;
	struct droce_srq *srq;		/* NULL, or receive WQEs come from it */
	struct droce_qp_cap cap;	/* with srq: max_recv_wr/sge ignored */
	enum droce_qp_type qp_type;
	int sq_sig_all;
};

struct droce_qp {
	struct droce_context *context;
	void *qp_context;
	struct droce_pd *pd;
	struct droce_cq *send_cq;
	struct droce_cq *recv_cq;
	struct droce_srq *srq;
	uint32_t handle;
	uint32_t qp_num;
	enum droce_qp_state state;
	enum droce_qp_type qp_type;
};

enum droce_qp_attr_mask {
	DROCE_QP_STATE = 1 << 0,
	DROCE_QP_CUR_STATE = 1 << 1,
	DROCE_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	DROCE_QP_ACCESS_FLAGS = 1 << 3,
	DROCE_QP_PKEY_INDEX = 1 << 4,
	DROCE_QP_PORT = 1 << 5,
	DROCE_QP_QKEY = 1 << 6,
	DROCE_QP_AV = 1 << 7,
	DROCE_QP_PATH_MTU = 1 << 8,
	DROCE_QP_TIMEOUT = 1 << 9,
	DROCE_QP_RETRY_CNT = 1 << 10,
	DROCE_QP_RNR_RETRY = 1 << 11,
	DROCE_QP_RQ_PSN = 1 << 12,
	DROCE_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	DROCE_QP_ALT_PATH = 1 << 14,
	DROCE_QP_MIN_RNR_TIMER = 1 << 15,
	DROCE_QP_SQ_PSN = 1 << 16,
	DROCE_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	DROCE_QP_PATH_MIG_STATE = 1 << 18,
	DROCE_QP_CAP = 1 << 19,
	DROCE_QP_DEST_QPN = 1 << 20,
	DROCE_QP_RATE_LIMIT = 1 << 25,
};

struct droce_qp_attr {
	enum droce_qp_state qp_state;
	enum droce_qp_state cur_qp_state;
	enum droce_mtu path_mtu;
	enum droce_mig_state path_mig_state;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	unsigned int qp_access_flags;
	struct droce_qp_cap cap;
	struct droce_ah_attr ah_attr;
	struct droce_ah_attr alt_ah_attr;
	uint16_t pkey_index;
	uint16_t alt_pkey_index;
	uint8_t en_sqd_async_notify;
	uint8_t sq_draining;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t alt_port_num;
	uint8_t alt_timeout;
	uint32_t rate_limit;
};

/* Returns NULL with errno set (EINVAL on bad attributes, ENOMEM). */
struct droce_qp *droce_create_qp(struct droce_pd *pd,
				 struct droce_qp_init_attr *qp_init_attr);
/* 0 or EINVAL, as ibv_modify_qp (IBTA table 91 / ib_modify_qp_is_ok). */
int droce_modify_qp(struct droce_qp *qp, struct droce_qp_attr *attr,
		    int attr_mask);
int droce_query_qp(struct droce_qp *qp, struct droce_qp_attr *attr,
		   int attr_mask, struct droce_qp_init_attr *init_attr);
int droce_destroy_qp(struct droce_qp *qp);
/*
 * droce extension: the congestion-control algorithm of this QP ("none",
 * "dcqcn"), instead of its device's (the configuration's cc =).  Before the
 * QP enters RTS (RESET, INIT or RTR).  0, EINVAL (unknown name), EBUSY (RTS
 * or later), EOPNOTSUPP (a provider without it: droced).  Nothing on the
 * wire changes but the pace of the QP's requests.
 */
int droce_qp_set_cc(struct droce_qp *qp, const char *algo);
/*
 * droce extension: selective repeat on this RC QP (lib/transport README,
 * "Selective repeat between droce peers"), for an application that knows
 * its peer is droce and set it there too (through its own out-of-band
 * exchange).  Before the QP enters RTR (RESET or INIT).  It runs only once
 * the peer's packets show that it set it as well: until then, and always
 * with a peer that did not, the QP is go-back-N as without it.  0, EINVAL
 * (not RC), EBUSY (RTR or later), EOPNOTSUPP (a provider without it:
 * droced).
 */
int droce_qp_set_sr(struct droce_qp *qp, bool on);

enum droce_send_flags {
	DROCE_SEND_FENCE = 1 << 0,
	DROCE_SEND_SIGNALED = 1 << 1,
	DROCE_SEND_SOLICITED = 1 << 2,
	DROCE_SEND_INLINE = 1 << 3,
	DROCE_SEND_IP_CSUM = 1 << 4,
};

struct droce_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/*
 * A QP's inline room is at least its send WQE's SGE area (as rxe's, whose
 * WQE holds either): droce_create_qp grants max(max_inline_data, this) and
 * reports it in the init attributes.
 */
static inline uint32_t
droce_qp_min_inline(uint32_t max_send_sge)
{
	uint32_t sges = max_send_sge * (uint32_t)sizeof(struct droce_sge);

	return sges < DROCE_MAX_INLINE_DATA ? sges : DROCE_MAX_INLINE_DATA;
}

struct droce_send_wr {
	uint64_t wr_id;
	struct droce_send_wr *next;
	struct droce_sge *sg_list;
	int num_sge;
	enum droce_wr_opcode opcode;
	unsigned int send_flags;
	union {
		uint32_t imm_data;	/* network byte order, as ibverbs */
		uint32_t invalidate_rkey;
	};
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			struct droce_ah *ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
		/*
		 * DROCE_WR_FLUSH (ibv_wr_flush's arguments): type is a
		 * set of enum droce_placement_type, level an enum
		 * droce_selectivity_level; length 0 with DROCE_FLUSH_RANGE
		 * flushes nothing but still checks the R_Key.
		 */
		struct {
			uint64_t remote_addr;
			uint32_t length;
			uint32_t rkey;
			uint8_t type;
			uint8_t level;
		} flush;
	} wr;
	union {
		struct {
			uint32_t remote_srqn;
		} xrc;
	} qp_type;
	union {
		struct {
			struct droce_mw *mw;
			uint32_t rkey;
			struct droce_mw_bind_info bind_info;
		} bind_mw;
	};
};

/*
 * FLUSH placement types and selectivity levels (enum ibv_placement_type,
 * enum ibv_selectivity_level; the FETH's values, IBTA 1.5 annex A19).
 * droce registers ordinary memory (DRAM): persistence is global
 * visibility there, and both are a store fence at the responder.
 */
enum droce_placement_type {
	DROCE_FLUSH_GLOBAL = 1 << 0,
	DROCE_FLUSH_PERSISTENT = 1 << 1,
};

enum droce_selectivity_level {
	DROCE_FLUSH_RANGE = 0,
	DROCE_FLUSH_MR = 1,
};

struct droce_recv_wr {
	uint64_t wr_id;
	struct droce_recv_wr *next;
	struct droce_sge *sg_list;
	int num_sge;
};

/* 0, or an errno (EINVAL, ENOMEM when the queue is full) with *bad_wr set. */
static inline int
droce_post_send(struct droce_qp *qp, struct droce_send_wr *wr,
		struct droce_send_wr **bad_wr)
{
	if (qp == NULL || bad_wr == NULL)
		return EINVAL;
	return -qp->context->ops->post_send(qp, wr, bad_wr);
}

static inline int
droce_post_recv(struct droce_qp *qp, struct droce_recv_wr *wr,
		struct droce_recv_wr **bad_wr)
{
	if (qp == NULL || bad_wr == NULL)
		return EINVAL;
	return -qp->context->ops->post_recv(qp, wr, bad_wr);
}


/* ---- Shared receive queues (ibv_create_srq & co.) ------------------------ */
/*
 * Receive WQEs shared by the QPs created with init_attr.srq (RC, UC, UD):
 * each message that needs one takes the oldest, and its completion names
 * the QP that received (wc.qp_num; UD also src_qp).  Its SGEs are checked
 * against the SRQ's PD.  An RC QP finding the SRQ empty answers RNR NAK.
 * One thread at a time posts to (and modifies) an SRQ, as for a QP's
 * queues; its QPs live on the SRQ's engine (lib/transport/README.md).
 */
struct droce_srq {
	struct droce_context *context;
	void *srq_context;
	struct droce_pd *pd;
	uint32_t handle;
};

struct droce_srq_attr {
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;	/* 0: no limit event armed */
};

struct droce_srq_init_attr {
	void *srq_context;
	struct droce_srq_attr attr;
};

enum droce_srq_attr_mask {
	DROCE_SRQ_MAX_WR = 1 << 0,
	DROCE_SRQ_LIMIT = 1 << 1,
};

/*
 * NULL with errno (EINVAL: max_wr 0 or above DROCE_MAX_QP_WR, max_sge above
 * DROCE_MAX_SGE; ENOMEM).  srq_limit is ignored (armed by modify only, as
 * ibv_create_srq) and returned as 0.
 */
struct droce_srq *droce_create_srq(struct droce_pd *pd,
				   struct droce_srq_init_attr *srq_init_attr);
/*
 * DROCE_SRQ_MAX_WR resizes (EINVAL: 0, above DROCE_MAX_QP_WR or below the
 * WQEs it holds now); DROCE_SRQ_LIMIT arms the limit event (EINVAL: not
 * below max_wr).  Nothing changes unless all is valid.  0 or a positive errno.
 */
int droce_modify_srq(struct droce_srq *srq, struct droce_srq_attr *srq_attr,
		     int srq_attr_mask);
/* max_wr, max_sge, and srq_limit (0 once the event fired). */
int droce_query_srq(struct droce_srq *srq, struct droce_srq_attr *srq_attr);
/* EBUSY while QPs use it; its WQEs not taken are discarded. */
int droce_destroy_srq(struct droce_srq *srq);
/* 0, or EINVAL (num_sge above max_sge) / ENOMEM (full) with *bad_wr set. */
int droce_post_srq_recv(struct droce_srq *srq, struct droce_recv_wr *recv_wr,
			struct droce_recv_wr **bad_recv_wr);


/* ---- Asynchronous events (ibv_get_async_event) --------------------------- */
/*
 * Same values as enum ibv_event_type.  droce raises:
 *   QP_REQ_ERR     an RC responder NAKed an invalid request that used no
 *                  receive WQE (a WRITE/READ/atomic the QP's access flags
 *                  forbid, a bad opcode sequence...), QP now in ERR
 *                  (IBTA 11.6.3.2 "invalid request local work queue error");
 *   QP_ACCESS_ERR  the same for a remote access (R_Key) error (IBTA
 *                  11.6.3.2 "local access violation work queue error");
 *   QP_FATAL       a QP went to ERR for another reason no completion reports;
 *   COMM_EST       the first packet reached a QP in RTR (IBTA 11.6.3.1);
 *   SQ_DRAINED     a QP moved to SQD with en_sqd_async_notify finished the
 *                  messages it had started (IBTA 10.3.1, 11.6.3.1);
 *   CQ_ERR         a CQ overran (a completion was lost, IBTA 11.4.2.1);
 *   PORT_ACTIVE / PORT_ERR  the link came up / went down;
 *   MR_LEASE_EXPIRED / MW_LEASE_EXPIRED (droce extension, values outside
 *                  ibverbs' range) a region's or window's lease ran out
 *                  (element.mr / element.mw; see droce_set_mr_lease).
 *   SRQ_LIMIT_REACHED  an SRQ's armed srq_limit was passed: fewer WQEs left
 *                  than it (once, then disarmed; IBTA 10.2.9, 11.6.3.1);
 *   QP_LAST_WQE_REACHED  a QP on an SRQ entered the error state: it takes
 *                  no more WQEs from the SRQ (IBTA 10.3.1, 11.6.3.1).
 *   SRQ_ERR        only on droced's queue regions: the SRQ's ring held a
 *                  descriptor droced refused (app/droced/README.md, "Queue
 *                  regions"); its QPs then go to the error state.
 * The others are never raised (no paths to migrate, no SM).
 */
enum droce_event_type {
	DROCE_EVENT_CQ_ERR,
	DROCE_EVENT_QP_FATAL,
	DROCE_EVENT_QP_REQ_ERR,
	DROCE_EVENT_QP_ACCESS_ERR,
	DROCE_EVENT_COMM_EST,
	DROCE_EVENT_SQ_DRAINED,
	DROCE_EVENT_PATH_MIG,
	DROCE_EVENT_PATH_MIG_ERR,
	DROCE_EVENT_DEVICE_FATAL,
	DROCE_EVENT_PORT_ACTIVE,
	DROCE_EVENT_PORT_ERR,
	DROCE_EVENT_LID_CHANGE,
	DROCE_EVENT_PKEY_CHANGE,
	DROCE_EVENT_SM_CHANGE,
	DROCE_EVENT_SRQ_ERR,
	DROCE_EVENT_SRQ_LIMIT_REACHED,
	DROCE_EVENT_QP_LAST_WQE_REACHED,
	DROCE_EVENT_CLIENT_REREGISTER,
	DROCE_EVENT_GID_CHANGE,
	DROCE_EVENT_WQ_FATAL,
	DROCE_EVENT_MR_LEASE_EXPIRED = 0x80,	/* droce extension */
	DROCE_EVENT_MW_LEASE_EXPIRED,		/* droce extension */
};

struct droce_async_event {
	union {
		struct droce_cq *cq;
		struct droce_qp *qp;
		struct droce_mr *mr;	/* droce extension: leases */
		struct droce_mw *mw;	/* droce extension: leases */
		struct droce_srq *srq;
		void *wq;		/* no WQs */
		int port_num;
	} element;
	enum droce_event_type event_type;
};

/*
 * The next event of the context, oldest first: 0, or -1 with errno set
 * (EAGAIN: none pending and context->async_fd is O_NONBLOCK; EINVAL).
 * Blocks until one arrives otherwise.  Every event got must be acked.
 * Events nobody takes wait up to a limit (4096 in the engine, as many in
 * lib/verbs); beyond it an event is dropped and counted (async_event_drop).
 */
int droce_get_async_event(struct droce_context *context,
			  struct droce_async_event *event);
/*
 * Acknowledge an event got from droce_get_async_event.  droce_destroy_qp
 * and droce_destroy_cq wait until every event for the object that was got
 * has been acked (as ibverbs); events for it not got yet are discarded.
 */
void droce_ack_async_event(struct droce_async_event *event);
/* ibv_event_type_str() */
const char *droce_event_type_str(enum droce_event_type event);


/* ---- Devices: EAL start-up, the device list, ports and GIDs --------------- */
/*
 * droce owns DPDK ports.  A program starts with droce_init(argc, argv):
 *   prog [EAL options] -- [droce options] [program options]
 * droce_init() starts EAL, removes the droce options it recognizes from
 * argv and returns how many leading arguments were consumed (as
 * rte_eal_init does: the program continues with argc - ret, argv + ret;
 * argv[ret - 1] is "--" when there was one).  droce options:
 *   --droce-config=FILE     INI file describing devices (config/droce.ini)
 *   --droce-port=NAME       ethdev name or port id for the device (repeatable)
 *   --droce-ipv4=A.B.C.D/N  address of the last named port (or port 0)
 *   --droce-ipv6=ADDR/N     likewise
 *   --droce-mtu=N           link MTU (default: what the port reports)
 *   --droce-daemon=PATH     daemon mode: the device is droced's at socket
 *                           PATH (also "daemon = PATH" in the file's [droce]
 *                           section, or DROCE_DAEMON=PATH); the program is
 *                           then a plain process on droced's queue regions:
 *                           EAL does not start, EAL options before "--" are
 *                           skipped, and device options are droced's
 *                           (app/droced/README.md "Queue regions")
 *   --droce-queues=shared   with a daemon: a DPDK secondary process of
 *                           droced's instead, which maps all of droced's
 *                           memory; being retired (also "queues = shared" in
 *                           the [droce] section, or DROCE_QUEUES=shared;
 *                           "region", the default, names the other mode)
 * Command-line options override the file.  Without any, every ethdev port
 * becomes a device without addresses.  Returns -1 with errno on failure.
 */
int droce_init(int argc, char **argv);
/*
 * The socket droced listens on unless told otherwise (--socket=PATH, or
 * socket = PATH in its configuration's [droced] section).  The drop-in
 * libibverbs, started with none of DROCE_ARGS, DROCE_CONFIG and
 * DROCE_DAEMON, uses the droced that accepts a connection here.
 */
#define DROCE_DAEMON_SOCKET "/run/droce/droced.sock"
/* Stop every device and EAL (droce extension). */
void droce_cleanup(void);
/*
 * fork(): EAL's memory and ports stay the parent's (shared with the child,
 * whose threads are gone), so a child has no device: droce_init answers
 * EALREADY, droce_get_device_list and droce_open_device ENODEV, and
 * droce_cleanup (at the child's exit) does nothing.  A child that does no
 * RDMA runs normally; objects it inherited must not be used (the drop-in
 * libibverbs refuses their data path with EPERM).
 */

/* NULL-terminated; *num_devices (if not NULL) set.  NULL with errno on error. */
struct droce_device **droce_get_device_list(int *num_devices);
void droce_free_device_list(struct droce_device **list);
const char *droce_get_device_name(struct droce_device *device);
/*
 * Open a device: its port starts, its transport runs on the calling lcore
 * (run-to-completion).  NULL with errno on error.
 */
struct droce_context *droce_open_device(struct droce_device *device);
int droce_close_device(struct droce_context *context);

/*
 * Memory any mode can register (droce extension): rte_malloc memory in
 * process, the daemon's shared memory in daemon mode (where droce_reg_mr
 * of other memory moves the application's pages onto memfds the daemon
 * maps: app/droced/README.md, "Memory").  Zeroed, 64-byte aligned.  NULL with
 * errno (EINVAL: len 0, ENOMEM, ENOTCONN: the daemon is gone).
 */
void *droce_alloc_buf(struct droce_context *context, size_t len);
/* 0, EINVAL (not a buffer of this context), EBUSY (an MR on it), ENOTCONN. */
int droce_free_buf(struct droce_context *context, void *buf);

/*
 * ---- Persistent named regions (droce extension, daemon mode only) ----
 * droce_persist_mr marks an MR (in one of the caller's droce_alloc_buf
 * buffers, or on its own pages moved onto one memfd by a registration:
 * droced keeps that memfd) persistent under name, with a lease of
 * lease_ms (0: none).
 * When the application dies, droced keeps its group: the MR, the buffer
 * it lies in, its PD, the QPs on that PD and their CQs (peers connected
 * to those QPs go on WRITING and READING it); everything else of the
 * application is reclaimed as usual.  One persistent MR per PD and per
 * buffer.  droce_attach_mr gives a restarted application the region (same
 * addr, length, lkey and rkey; mr->pd is NULL: the group stays the
 * daemon's) and makes it the owner (its lease renewed); the region is kept
 * again at the owner's next death.  droce_release ends it: the key is
 * revoked first (dereg); then, if its maker is gone, the QPs go to ERR and
 * are destroyed (250 ms later, so that connected peers are NAKed), then
 * the CQs, the PD and the buffer are freed (a living maker keeps those:
 * they are its handles).  The caller's MRs of that name (from
 * droce_persist_mr or droce_attach_mr) then only free their proxy on
 * droce_dereg_mr, as does the dereg of one released meanwhile.  The
 * owner's droce_dereg_mr releases it too.  A lease (given here, or
 * droce_set_mr_lease; renewed by droce_renew_mr, also by an attached
 * owner) runs in droced and ends the region at expiry: its name is free,
 * and a region nobody owns is released as by droce_release.  A living
 * owner keeps its MR handle, expired as in process (droce_renew_mr and
 * droce_set_mr_lease ETIME, droce_query_mr_lease expired, the event
 * MR_LEASE_EXPIRED naming it) until its droce_dereg_mr (or death)
 * releases the rest; a maker keeps its MR with its QPs, CQs, PD and
 * buffer.  droced --ctl PATH list shows the regions, droced --ctl PATH
 * release NAME releases one.
 */
#define DROCE_PERSIST_NAME_MAX 32	/* bytes of a name, its NUL included */

/*
 * 0; EEXIST (name in use), EBUSY (the MR, its PD or buffer already
 * persistent), EFAULT (not all in one droce_alloc_buf buffer, nor all on
 * one memfd of the application's own pages), EINVAL
 * (empty name), ENAMETOOLONG, ENOENT (not the caller's MR), ETIME (its
 * lease ran out), EOPNOTSUPP (in process), ENOTCONN.
 */
int droce_persist_mr(struct droce_mr *mr, const char *name, uint32_t lease_ms);
/* The region's pages are mapped into the caller where they are not
 * already (a plain process: from the memfd droced passes, at the region's
 * address if that range is free; mr->addr says where).
 * NULL with errno: ENOENT (no such region), EBUSY (its owner lives),
 * EFAULT (a plain process, a region in droced's hugepages),
 * ETIME (its lease ran out: until the name is persistent again, for the
 * last 64 names whose leases ran out, while this droced runs; ENOENT
 * after), EINVAL, ENAMETOOLONG, EOPNOTSUPP, ENOTCONN. */
struct droce_mr *droce_attach_mr(struct droce_context *context, const char *name);
/* 0; ENOENT, EBUSY (owned by another live application), EINVAL,
 * ENAMETOOLONG, EOPNOTSUPP (in process), ENOTCONN. */
int droce_release(struct droce_context *context, const char *name);

enum droce_port_state {
	DROCE_PORT_NOP = 0,
	DROCE_PORT_DOWN = 1,
	DROCE_PORT_INIT = 2,
	DROCE_PORT_ARMED = 3,
	DROCE_PORT_ACTIVE = 4,
	DROCE_PORT_ACTIVE_DEFER = 5,
};

/* port_cap_flags (enum ibv_port_cap_flags, the bits droce sets) */
enum droce_port_cap_flags {
	DROCE_PORT_CM_SUP = 1 << 16,
	DROCE_PORT_IP_BASED_GIDS = 1 << 26,
};

/* active_width and active_speed (IBTA 14.2.5.6 PortInfo encodings) */
enum {
	DROCE_WIDTH_1X = 1,
	DROCE_WIDTH_4X = 2,
	DROCE_WIDTH_8X = 4,
	DROCE_WIDTH_12X = 8,
	DROCE_WIDTH_2X = 16,
};

enum {
	DROCE_SPEED_SDR = 1,
	DROCE_SPEED_DDR = 2,
	DROCE_SPEED_QDR = 4,
	DROCE_SPEED_FDR10 = 8,
	DROCE_SPEED_FDR = 16,
	DROCE_SPEED_EDR = 32,
	DROCE_SPEED_HDR = 64,
	DROCE_SPEED_NDR = 128,
};

/* phys_state (PortInfo PortPhysicalState) */
enum {
	DROCE_PORT_PHYS_STATE_DISABLED = 3,
	DROCE_PORT_PHYS_STATE_LINK_UP = 5,
};

/* struct ibv_port_attr, field for field. */
struct droce_port_attr {
	enum droce_port_state state;
	enum droce_mtu max_mtu;
	enum droce_mtu active_mtu;
	int gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint32_t bad_pkey_cntr;		/* requests dropped for their P_Key */
	uint32_t qkey_viol_cntr;	/* UD datagrams dropped for their Q_Key */
	uint16_t pkey_tbl_len;
	uint16_t lid;			/* 0 on RoCE */
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t max_vl_num;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t init_type_reply;
	uint8_t active_width;
	uint8_t active_speed;
	uint8_t phys_state;
	uint8_t link_layer;		/* DROCE_LINK_LAYER_ETHERNET */
	uint8_t flags;
	uint16_t port_cap_flags2;
};

#define DROCE_LINK_LAYER_ETHERNET 2

/* ---- Device attributes (ibv_query_device, ibv_query_device_ex) ---------- */

/* enum ibv_atomic_cap */
enum droce_atomic_cap {
	DROCE_ATOMIC_NONE,
	DROCE_ATOMIC_HCA,
	DROCE_ATOMIC_GLOB,
};

/* device_cap_flags (enum ibv_device_cap_flags, the bits droce may set) */
enum droce_device_cap_flags {
	DROCE_DEVICE_CURR_QP_STATE_MOD = 1 << 7,
	DROCE_DEVICE_PORT_ACTIVE_EVENT = 1 << 10,
	DROCE_DEVICE_SYS_IMAGE_GUID = 1 << 11,
	DROCE_DEVICE_RC_RNR_NAK_GEN = 1 << 12,
	DROCE_DEVICE_SRQ_RESIZE = 1 << 13,
	DROCE_DEVICE_MEM_WINDOW = 1 << 17,
	DROCE_DEVICE_MEM_WINDOW_TYPE_2B = 1 << 24,
};

/* device_cap_flags_ex beyond 32 bits (rdma-core 43's values) */
#define DROCE_DEVICE_FLUSH_GLOBAL (1ULL << 38)
#define DROCE_DEVICE_FLUSH_PERSISTENT (1ULL << 39)
#define DROCE_DEVICE_ATOMIC_WRITE (1ULL << 40)

/* struct ibv_device_attr, field for field. */
struct droce_device_attr {
	char fw_ver[64];
	uint64_t node_guid;		/* big-endian: EUI-64 of the port's MAC */
	uint64_t sys_image_guid;	/* big-endian: node_guid */
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	int max_qp;
	int max_qp_wr;
	unsigned int device_cap_flags;
	int max_sge;
	int max_sge_rd;
	int max_cq;
	int max_cqe;
	int max_mr;
	int max_pd;
	int max_qp_rd_atom;
	int max_ee_rd_atom;
	int max_res_rd_atom;
	int max_qp_init_rd_atom;
	int max_ee_init_rd_atom;
	enum droce_atomic_cap atomic_cap;
	int max_ee;
	int max_rdd;
	int max_mw;
	int max_raw_ipv6_qp;
	int max_raw_ethy_qp;
	int max_mcast_grp;
	int max_mcast_qp_attach;
	int max_total_mcast_qp_attach;
	int max_ah;
	int max_fmr;
	int max_map_per_fmr;
	int max_srq;
	int max_srq_wr;
	int max_srq_sge;
	uint16_t max_pkeys;
	uint8_t local_ca_ack_delay;
	uint8_t phys_port_cnt;
};

/* struct ibv_odp_caps (droce: no on-demand paging, all zero) */
struct droce_odp_caps {
	uint64_t general_caps;
	struct {
		uint32_t rc_odp_caps;
		uint32_t uc_odp_caps;
		uint32_t ud_odp_caps;
	} per_transport_caps;
};

/*
 * The leading fields of struct ibv_device_attr_ex, in its layout; droce
 * has none of the capabilities the later ones describe (TSO, RSS, tag
 * matching, device memory...), so the struct ends here.
 */
struct droce_device_attr_ex {
	struct droce_device_attr orig_attr;
	uint32_t comp_mask;
	struct droce_odp_caps odp_caps;
	uint64_t completion_timestamp_mask;
	uint64_t hca_core_clock;
	uint64_t device_cap_flags_ex;	/* device_cap_flags | DROCE_DEVICE_* above */
};

struct droce_query_device_ex_input {
	uint32_t comp_mask;		/* must be 0 */
};

/*
 * The device's limits, each the value its create/modify calls enforce
 * (the QP, CQ, MR, PD, MW counts of this context; work queue, SGE, CQE
 * and READ/atomic depth limits), and what it can do.  0 or a positive
 * errno (EINVAL).
 */
int droce_query_device(struct droce_context *context,
		       struct droce_device_attr *device_attr);
/* The same with device_cap_flags_ex; input NULL or comp_mask 0. */
int droce_query_device_ex(struct droce_context *context,
			  const struct droce_query_device_ex_input *input,
			  struct droce_device_attr_ex *attr);

/* 0 or a positive errno; port_num is 1. */
int droce_query_port(struct droce_context *context, uint8_t port_num,
		     struct droce_port_attr *port_attr);
/* RoCEv2 GIDs: the port's IPv4 addresses IPv4-mapped, then its IPv6 ones. */
int droce_query_gid(struct droce_context *context, uint8_t port_num, int index,
		    union droce_gid *gid);
/*
 * The P_Key at index of the port's P_Key table, in network byte order (as
 * ibv_query_pkey).  Index 0 is the default partition 0xffff; more come
 * from the device configuration (pkeys = ..., config/README.md).  0 or a
 * positive errno (EINVAL: no such port or index).
 */
int droce_query_pkey(struct droce_context *context, uint8_t port_num, int index,
		     uint16_t *pkey);

/* ---- RDMA connection manager (librdmacm's rdma_*; lib/cm) ---------------- */
/*
 * Connections over the IBTA CM protocol on each port's GSI QP (QP1),
 * interoperable with the Linux kernel's rdma_cm (RDMA_PS_TCP, IPv4 and
 * IPv6 addresses in annex A11's private-data header); UD ids
 * (RDMA_PS_UDP, RDMA_PS_IPOIB) by Service ID Resolution (IBTA 12.11).  Names, shapes and
 * conventions are librdmacm's with rdma_ -> droce_rdma_: calls return 0
 * or -1 with errno set.
 *
 * droce extension: a context serves connections once
 * droce_rdma_cm_attach() gave it its GSI QP; an id is bound to the
 * attached context that owns its source address (resolve_addr, bind_addr).
 * The CM advances inside droce_rdma_get_cm_event (one pass over every
 * attached context when the channel's fd is O_NONBLOCK; otherwise until an
 * event arrives), on the thread that owns the contexts' transport
 * (run-to-completion) or any thread (dedicated transport lcore).
 */
enum droce_rdma_cm_event_type {
	DROCE_RDMA_CM_EVENT_ADDR_RESOLVED,
	DROCE_RDMA_CM_EVENT_ADDR_ERROR,
	DROCE_RDMA_CM_EVENT_ROUTE_RESOLVED,
	DROCE_RDMA_CM_EVENT_ROUTE_ERROR,
	DROCE_RDMA_CM_EVENT_CONNECT_REQUEST,
	DROCE_RDMA_CM_EVENT_CONNECT_RESPONSE,
	DROCE_RDMA_CM_EVENT_CONNECT_ERROR,
	DROCE_RDMA_CM_EVENT_UNREACHABLE,
	DROCE_RDMA_CM_EVENT_REJECTED,
	DROCE_RDMA_CM_EVENT_ESTABLISHED,
	DROCE_RDMA_CM_EVENT_DISCONNECTED,
	DROCE_RDMA_CM_EVENT_DEVICE_REMOVAL,
	DROCE_RDMA_CM_EVENT_MULTICAST_JOIN,
	DROCE_RDMA_CM_EVENT_MULTICAST_ERROR,
	DROCE_RDMA_CM_EVENT_ADDR_CHANGE,
	DROCE_RDMA_CM_EVENT_TIMEWAIT_EXIT,
};

/* service IDs 0x0000000001 | PS | port (annex A11; rdma_cm's values) */
enum droce_rdma_port_space {
	DROCE_RDMA_PS_IPOIB = 0x0002,	/* UD ids (SIDR), as RDMA_PS_UDP */
	DROCE_RDMA_PS_TCP = 0x0106,	/* RC ids */
	DROCE_RDMA_PS_UDP = 0x0111,	/* UD ids: SIDR (IBTA 12.11), multicast */
};

/* droce_rdma_join_multicast's flags (rdma_cm_mc_join_flags). */
enum droce_rdma_mc_join_flags {
	DROCE_RDMA_MC_JOIN_FLAG_FULLMEMBER,
	DROCE_RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER,	/* the QP is not attached */
};

/* the Q_Key of a UD id's QP and its SIDR_REP (rdma_cm's RDMA_UDP_QKEY) */
#define DROCE_RDMA_UDP_QKEY 0x01234567u

struct droce_rdma_event_channel {
	int fd;		/* an eventfd, readable while events are queued */
};

struct sockaddr;

/* room for a struct sockaddr_in or sockaddr_in6 (as sockaddr_storage) */
union droce_rdma_sockaddr {
	uint8_t raw[128];
	uint64_t align;
};

struct droce_rdma_addr {
	union droce_rdma_sockaddr src_addr;
	union droce_rdma_sockaddr dst_addr;
};

struct droce_rdma_route {
	struct droce_rdma_addr addr;
	int num_paths;
};

struct droce_rdma_cm_id {
	struct droce_context *verbs;	/* set by resolve_addr / bind_addr */
	struct droce_rdma_event_channel *channel;
	void *context;
	struct droce_qp *qp;
	struct droce_rdma_route route;
	enum droce_rdma_port_space ps;
	uint8_t port_num;
	struct droce_pd *pd;
	enum droce_qp_type qp_type;
};

struct droce_rdma_conn_param {
	const void *private_data;
	uint8_t private_data_len;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;		/* ignored on accept */
	uint8_t rnr_retry_count;
	uint8_t srq;			/* must be 0 */
	uint32_t qp_num;		/* the caller's QP when the id has none */
};

/* a UD id's peer or group (librdmacm's rdma_ud_param) */
struct droce_rdma_ud_param {
	const void *private_data;	/* MULTICAST_JOIN: the join's context */
	uint8_t private_data_len;
	struct droce_ah_attr ah_attr;	/* the path to the peer, or the group */
	uint32_t qp_num;		/* a group's: 0xffffff, the permissive QPN */
	uint32_t qkey;
};

struct droce_rdma_cm_event {
	struct droce_rdma_cm_id *id;
	struct droce_rdma_cm_id *listen_id;	/* CONNECT_REQUEST */
	enum droce_rdma_cm_event_type event;
	/* REJECTED: the REJ's reason (IBTA table 112); UNREACHABLE of a UD
	 * id: the SIDR_REP's status (table 122), or -ETIMEDOUT */
	int status;
	union {
		/* CONNECT_REQUEST, ESTABLISHED (active), REJECTED, DISCONNECTED:
		 * the peer's private data and parameters, seen from this side */
		struct droce_rdma_conn_param conn;
		/* a UD id's CONNECT_REQUEST (the SIDR_REQ's private data),
		 * ESTABLISHED and UNREACHABLE (the SIDR_REP's); MULTICAST_JOIN:
		 * where to send to reach the group */
		struct droce_rdma_ud_param ud;
	} param;
};

/* droce extension: serve the CM on ctx's port (its GSI QP, QPN 1).
 * 0, or -1 with errno (EBUSY: already attached; ENOMEM). */
int droce_rdma_cm_attach(struct droce_context *ctx);
/* droce extension: 0, or -1 with errno EBUSY while ids use the context. */
int droce_rdma_cm_detach(struct droce_context *ctx);

struct droce_rdma_event_channel *droce_rdma_create_event_channel(void);
/* The channel must have no ids left. */
void droce_rdma_destroy_event_channel(struct droce_rdma_event_channel *channel);
int droce_rdma_create_id(struct droce_rdma_event_channel *channel,
			 struct droce_rdma_cm_id **id, void *context,
			 enum droce_rdma_port_space ps);
/* EBUSY while events of the id taken are not acked (those still queued
 * are dropped); its QP must be destroyed. */
int droce_rdma_destroy_id(struct droce_rdma_cm_id *id);
/* The id's events go to channel from now on, with those queued and not
 * yet taken; the ones taken are acked as before. */
int droce_rdma_migrate_id(struct droce_rdma_cm_id *id,
			  struct droce_rdma_event_channel *channel);
int droce_rdma_bind_addr(struct droce_rdma_cm_id *id, struct sockaddr *addr);
int droce_rdma_resolve_addr(struct droce_rdma_cm_id *id, struct sockaddr *src_addr,
			    struct sockaddr *dst_addr, int timeout_ms);
int droce_rdma_resolve_route(struct droce_rdma_cm_id *id, int timeout_ms);
/* A QP of type RC on the id's context, moved to INIT; the CM moves it to
 * RTR and RTS with the REQ's and REP's parameters.  A UD id's QP (type UD)
 * goes to RTS at once with Q_Key DROCE_RDMA_UDP_QKEY, as librdmacm's. */
int droce_rdma_create_qp(struct droce_rdma_cm_id *id, struct droce_pd *pd,
			 struct droce_qp_init_attr *qp_init_attr);
void droce_rdma_destroy_qp(struct droce_rdma_cm_id *id);
/*
 * droce extension: the id's QP becomes qp, which the caller created (RC,
 * on the id's context, in RESET) and destroys: moved to INIT as
 * droce_rdma_create_qp's, then driven by the CM.  qp NULL: the id forgets
 * its QP (before the caller destroys it).  0, or -1 with errno EINVAL.
 */
int droce_rdma_use_qp(struct droce_rdma_cm_id *id, struct droce_qp *qp);
/*
 * Multicast on a DROCE_RDMA_PS_UDP id bound to a device (bind_addr or
 * resolve_addr): on RoCE the join is local (no subnet administrator: the
 * kernel's cma_iboe_join_multicast).  addr is an IPv4 (224.0.0.0/4) or
 * IPv6 (ff00::/8) group; its MGID is the IPv4-mapped / IPv6 address.  The
 * id's QP, when it has one, is attached (droce_attach_mcast) unless flags
 * is SENDONLY_FULLMEMBER; the event MULTICAST_JOIN follows, carrying
 * param.ud (AH attributes to the group, QPN 0xffffff, Q_Key
 * DROCE_RDMA_UDP_QKEY, private_data the context).  Leave detaches it.
 * 0, or -1 with errno: EINVAL (not a UDP id, no device, not a group),
 * ENOMEM (the id's 16 groups, or the device's limits), EADDRNOTAVAIL
 * (leave: the id did not join addr).
 */
int droce_rdma_join_multicast(struct droce_rdma_cm_id *id, struct sockaddr *addr,
			      void *context, enum droce_rdma_mc_join_flags flags);
int droce_rdma_leave_multicast(struct droce_rdma_cm_id *id, struct sockaddr *addr);
/* conn_param: private data up to 56 bytes (92 minus annex A11's header);
 * a UD id: a SIDR_REQ, up to 180 bytes (216 minus the header), and
 * ESTABLISHED (or UNREACHABLE) when the SIDR_REP comes. */
int droce_rdma_connect(struct droce_rdma_cm_id *id,
		       struct droce_rdma_conn_param *conn_param);
int droce_rdma_listen(struct droce_rdma_cm_id *id, int backlog);
/* up to 196 bytes of private data; a UD id: a SIDR_REP (status 0, its
 * QP's number or conn_param's qp_num, Q_Key DROCE_RDMA_UDP_QKEY), up to
 * 136 bytes, and no event */
int droce_rdma_accept(struct droce_rdma_cm_id *id,
		      struct droce_rdma_conn_param *conn_param);
/* REJ with reason 28 "consumer reject"; up to 148 bytes of private data
 * (a UD id: a SIDR_REP with status 2 "rejected", up to 136 bytes) */
int droce_rdma_reject(struct droce_rdma_cm_id *id, const void *private_data,
		      uint8_t private_data_len);
/* DREQ (the QP goes to ERR); DISCONNECTED follows on both sides. */
int droce_rdma_disconnect(struct droce_rdma_cm_id *id);
/*
 * An id without a QP (the caller's own, named by conn_param->qp_num in
 * connect / accept): the attributes that move that QP to attr->qp_state
 * (INIT once the id has its device; RTR and RTS once the peer's REQ or
 * REP came) and their mask.  0, or -1 with errno EINVAL.
 */
int droce_rdma_init_qp_attr(struct droce_rdma_cm_id *id, struct droce_qp_attr *attr,
			    int *attr_mask);
/* The active side of such an id, after CONNECT_RESPONSE and moving its QP
 * to RTS: the RTU.  0, or -1 with errno EINVAL. */
int droce_rdma_establish(struct droce_rdma_cm_id *id);
/* DROCE_EVENT_COMM_EST on the passive side's QP before the RTU came: the
 * connection is established (ESTABLISHED).  EISCONN if it was; EINVAL. */
int droce_rdma_notify(struct droce_rdma_cm_id *id, enum droce_event_type event);
int droce_rdma_get_cm_event(struct droce_rdma_event_channel *channel,
			    struct droce_rdma_cm_event **event);
/*
 * droce extension: one pass of the CM (as droce_rdma_get_cm_event on an
 * O_NONBLOCK channel), whatever the fd's flags: the channel's oldest
 * event, or -1 with errno EAGAIN if none is queued.
 */
int droce_rdma_poll_cm_event(struct droce_rdma_event_channel *channel,
			     struct droce_rdma_cm_event **event);
int droce_rdma_ack_cm_event(struct droce_rdma_cm_event *event);
/*
 * droce extension: one pass of the CM for every channel (their events
 * queued, their fds readable), from any thread: what wakes a program
 * waiting in poll()/epoll on a channel's fd.  Only contexts whose engine
 * any thread may run are served: on a transport lcore, or with the
 * progress thread (--droce-progress=adaptive, the drop-in's default); a
 * plain run-to-completion engine runs on its application's thread only.
 */
void droce_rdma_cm_progress(void);
const char *droce_rdma_event_str(enum droce_rdma_cm_event_type event);
/*
 * droce extension: the CM response timeout of the id's REQ/REP (IBTA
 * 12.7.27: 4.096 us * 2^timeout, 0..31; default 20, rdma_cm's) and how
 * many times a MAD is resent before the connection fails (0..15; default
 * 15).  Before connect / accept.
 */
/* librdmacm's RDMA_OPTION_ID_TOS: the traffic class of the connection's
 * packets (its QP's GRH and the REQ's path), before connect / accept. */
int droce_rdma_set_tos(struct droce_rdma_cm_id *id, uint8_t tos);
/* RDMA_OPTION_ID_ACK_TIMEOUT: the QP's local ACK timeout (IBTA 9.7.6.1.3:
 * 4.096 us * 2^timeout, 1..31; 0 the default), before connect / accept. */
int droce_rdma_set_ack_timeout(struct droce_rdma_cm_id *id, uint8_t timeout);
int droce_rdma_set_cm_timeout(struct droce_rdma_cm_id *id, uint8_t timeout,
			      uint8_t retries);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_H */
