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

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DROCE_VERSION_MAJOR 0
#define DROCE_VERSION_MINOR 1

/* A device context (ibv_context).  Opaque: fields are private to lib/verbs. */
struct droce_context;

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

/* Queue pair: defined by the transport issue; opaque here. */
struct droce_qp;

/*
 * Work-request opcodes (enum ibv_wr_opcode, same values).  The send work
 * request itself comes with the transport; DROCE_WR_BIND_MW binds a type-2
 * window to the posting QP, DROCE_WR_LOCAL_INV invalidates a type-2 window's
 * rkey, DROCE_WR_SEND_WITH_INV asks the peer to invalidate one; all three
 * execute in order when the transport processes the WR (lib/protection:
 * prot_mw_bind_type2, prot_local_invalidate, prot_remote_invalidate).
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
/* Returns 0, EINVAL (NULL mr) or EBUSY while memory windows are bound to it. */
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
 * Bind a type-1 window (ibv_bind_mw).  Returns 0 and a new mw->rkey, or an
 * errno: EINVAL (type 2, MR without MW_BIND, range outside the MR, rights
 * not allowed by the MR (remote write/atomic need LOCAL_WRITE on it),
 * ZERO_BASED), EPERM (MR in another PD).  bind_info.length 0 unbinds.
 * The bind executes synchronously: qp must be non-NULL but is not otherwise
 * used until QPs exist (a type-1 bind is not ordered with the QP's WRs yet).
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

#ifdef __cplusplus
}
#endif

#endif /* DROCE_H */
