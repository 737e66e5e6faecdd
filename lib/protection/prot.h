/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prot.h - droce protection library: PD, MR and MW tables and the checks an
 * RNIC applies to every local SGE and every remote access.
 *
 * Pure C, no EAL.  Interface for lib/verbs (control path) and the transport
 * (data path: prot_check_remote, prot_check_local, type-2 bind, invalidate).
 * Design note: README.md in this folder.
 *
 * Conventions: control functions return 0 or -errno and are thread-safe
 * (one mutex per table).  Lookups (prot_check_*) take no lock, allocate
 * nothing, write nothing shared (the caller counts the status they
 * return, on its own cache lines) and must run on a registered reader
 * thread (see "Readers").
 */
#ifndef DROCE_PROT_H
#define DROCE_PROT_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- keys ---------------------------------------------------------------- */

/* key = index << 8 | variant; index 0 is never allocated. */
#define PROT_KEY_VARIANT_BITS 8
#define PROT_KEY_INDEX_BITS 24
#define PROT_KEY_INDEX_MAX ((1u << PROT_KEY_INDEX_BITS) - 1)

static inline uint32_t
prot_key_index(uint32_t key)
{
	return key >> PROT_KEY_VARIANT_BITS;
}

static inline uint8_t
prot_key_variant(uint32_t key)
{
	return (uint8_t)(key & 0xff);
}

static inline uint32_t
prot_key_make(uint32_t index, uint8_t variant)
{
	return (index << PROT_KEY_VARIANT_BITS) | variant;
}

/* ---- access bits: the ibverbs / DROCE_ACCESS_* values -------------------- */

#define PROT_ACC_LOCAL_WRITE		(1u << 0)
#define PROT_ACC_REMOTE_WRITE		(1u << 1)
#define PROT_ACC_REMOTE_READ		(1u << 2)
#define PROT_ACC_REMOTE_ATOMIC		(1u << 3)
#define PROT_ACC_MW_BIND		(1u << 4)
#define PROT_ACC_ZERO_BASED		(1u << 5)
#define PROT_ACC_ON_DEMAND		(1u << 6)
#define PROT_ACC_HUGETLB		(1u << 7)
#define PROT_ACC_FLUSH_GLOBAL		(1u << 8)
#define PROT_ACC_FLUSH_PERSISTENT	(1u << 9)
#define PROT_ACC_RELAXED_ORDERING	(1u << 20)

#define PROT_ACC_REMOTE_ANY (PROT_ACC_REMOTE_WRITE | PROT_ACC_REMOTE_READ | \
	PROT_ACC_REMOTE_ATOMIC | PROT_ACC_FLUSH_GLOBAL | PROT_ACC_FLUSH_PERSISTENT)
/* Bits droce_reg_mr accepts. */
#define PROT_ACC_MR_SUPPORTED (PROT_ACC_LOCAL_WRITE | PROT_ACC_REMOTE_ANY | \
	PROT_ACC_MW_BIND | PROT_ACC_ZERO_BASED | PROT_ACC_HUGETLB | \
	PROT_ACC_RELAXED_ORDERING)
/* Bits a window may carry. */
#define PROT_ACC_MW_SUPPORTED PROT_ACC_REMOTE_ANY

/* ---- check results: one table generates enum, names and counters -------- */

#define PROT_STATUS_LIST(X)						\
	X(OK,          "ok")						\
	X(BAD_KEY,     "key unknown, revoked or stale")			\
	X(PD_MISMATCH, "object in another protection domain")		\
	X(MW_WRONG_QP, "type-2 window bound to another QP")		\
	X(RANGE,       "outside the registered range")			\
	X(ACCESS,      "access right not granted")			\
	X(ALIGN,       "atomic not 8-byte aligned")

enum prot_status {
#define PROT_STATUS_ENUM(name, str) PROT_##name,
	PROT_STATUS_LIST(PROT_STATUS_ENUM)
#undef PROT_STATUS_ENUM
	PROT_STATUS_MAX
};

/* Human-readable name of a status ("ok", ...); "?" when out of range. */
const char *prot_status_str(enum prot_status st);
/* Short identifier ("OK", "BAD_KEY", ...) for counters and traces. */
const char *prot_status_name(enum prot_status st);

/* Remote operations, each with its required right and alignment. */
enum prot_remote_op {
	PROT_OP_WRITE,		/* RDMA WRITE: REMOTE_WRITE */
	PROT_OP_READ,		/* RDMA READ: REMOTE_READ */
	PROT_OP_ATOMIC,		/* CMP_SWAP, FETCH_ADD: REMOTE_ATOMIC, 8-aligned */
	PROT_OP_ATOMIC_WRITE,	/* ATOMIC WRITE: REMOTE_WRITE, 8-aligned */
	PROT_OP_FLUSH_GLOBAL,	/* FLUSH, global visibility: FLUSH_GLOBAL */
	PROT_OP_FLUSH_PERSISTENT, /* FLUSH, persistence: FLUSH_PERSISTENT */
	PROT_OP_MAX
};

/* ---- tables -------------------------------------------------------------- */

enum prot_obj_type {
	PROT_OBJ_NONE = 0,
	PROT_OBJ_MR,
	PROT_OBJ_MW1,
	PROT_OBJ_MW2,
};

/* Published key word: PROT_TAG_VALID | key while lookups may succeed. */
#define PROT_TAG_VALID (UINT64_C(1) << 32)

/*
 * One MR or MW, one cache line.  The hot fields are read by lookups only
 * after an acquire load of tag matched; the control path writes them only
 * while tag is revoked and after a grace period (README.md, "Revocation").
 */
struct prot_entry {
	alignas(64) uint64_t tag;	/* atomic */
	uint64_t iova;		/* first address as the peer/SGE names it */
	uint64_t length;	/* bytes; a valid entry has length > 0 */
	uint64_t host;		/* host virtual address of iova */
	uint32_t pd;		/* PD handle */
	uint32_t access;	/* PROT_ACC_* rights */
	uint32_t qpn;		/* type-2 MW: the QP it is bound to */
	uint8_t type;		/* enum prot_obj_type */
	/* control-path only, under the table lock: */
	uint8_t variant;	/* variant of the current / last key */
	uint8_t bound;		/* MW: bound to an MR */
	uint8_t lease;		/* enum prot_lease_state */
	uint32_t parent;	/* MW: index of the MR it is bound to */
	uint32_t mw_count;	/* MR: windows bound to it */
	/* MR: frames the link still holds whose payload is this region's
	 * memory (zero-copy transmit, prot_tx_hold); atomic, any thread */
	uint32_t tx_holds;
	uint8_t draining;	/* MR: dereg revoked it, tx_holds was not 0 */
};

#define PROT_MAX_READERS 16

/* A data-path thread's quiescent-state slot (QSBR). */
struct prot_reader {
	alignas(64) uint64_t seen;	/* atomic; 0 = offline, else epoch */
	uint64_t owner;			/* atomic; pthread_t as integer, 0 free */
};

struct prot_ctl;	/* control-path state (prot_private.h) */

struct prot_tables {
	struct prot_entry *entries;	/* nentries, indexed by key >> 8 */
	uint32_t nentries;
	uint32_t reader_max;		/* highest reader slot used + 1 */
	alignas(64) uint64_t epoch;	/* atomic; grace-period counter */
	struct prot_reader readers[PROT_MAX_READERS];
	/* atomic; earliest lease deadline (ns), UINT64_MAX: no lease */
	alignas(64) uint64_t lease_next;
	struct prot_ctl *ctl;
};

/*
 * Allocator hook: the only place where memory comes from.  lib/verbs passes
 * rte_zmalloc_socket/rte_free under EAL; NULL ops means libc.
 * zalloc returns zeroed memory aligned to align (a power of two), or NULL.
 */
struct prot_alloc_ops {
	void *(*zalloc)(void *arg, size_t size, size_t align, int socket);
	void (*free)(void *arg, void *ptr);
	void *arg;
};

struct prot_config {
	uint32_t max_pd;	/* 0: PROT_DEFAULT_MAX_PD */
	uint32_t max_mr;	/* 0: PROT_DEFAULT_MAX_MR */
	uint32_t max_mw;	/* 0: PROT_DEFAULT_MAX_MW */
	int socket_id;		/* passed to zalloc */
	uint64_t seed;		/* index permutation / variants; 0: getrandom */
};

#define PROT_DEFAULT_MAX_PD 1024u
#define PROT_DEFAULT_MAX_MR 65536u
#define PROT_DEFAULT_MAX_MW 65536u

/*
 * Create tables; *out is set on success.  -EINVAL if max_mr + max_mw
 * exceeds PROT_KEY_INDEX_MAX, -ENOMEM if an allocation fails.
 */
int prot_tables_create(const struct prot_config *cfg,
		       const struct prot_alloc_ops *ops,
		       struct prot_tables **out);
/* -EBUSY while PDs are allocated (t stays usable); 0 and t freed otherwise. */
int prot_tables_destroy(struct prot_tables *t);
/* The limits the tables enforce (max_pd, max_mr, max_mw; the rest untouched). */
void prot_tables_limits(const struct prot_tables *t, struct prot_config *limits);
/* Live objects (for tests/diagnostics). */
uint32_t prot_mr_count(const struct prot_tables *t);
uint32_t prot_mw_count(const struct prot_tables *t);

/* ---- protection domains -------------------------------------------------- */

int prot_pd_alloc(struct prot_tables *t, uint32_t *pd);
/* -EINVAL unknown pd, -EBUSY while it has MRs, MWs or other references. */
int prot_pd_dealloc(struct prot_tables *t, uint32_t pd);
/* References held by other objects (QPs, later): keep the PD alive. */
int prot_pd_get(struct prot_tables *t, uint32_t pd);
int prot_pd_put(struct prot_tables *t, uint32_t pd);

/* ---- memory regions ------------------------------------------------------ */

/*
 * Register [addr, addr+length) with access; *key receives lkey == rkey.
 * iova is addr, or 0 with PROT_ACC_ZERO_BASED.  Errors: -EINVAL (unknown
 * pd, length 0, NULL addr, wrap-around, unknown access bits, remote
 * write/atomic without LOCAL_WRITE), -EOPNOTSUPP (ON_DEMAND), -ENOMEM (full).
 */
int prot_mr_reg(struct prot_tables *t, uint32_t pd, void *addr,
		uint64_t length, unsigned int access, uint32_t *key);
/*
 * prot_mr_reg with the iova peers and SGEs name the region by: an address
 * iova + k resolves to addr + k (ibv_reg_mr_iova2).  Also -EINVAL when
 * [iova, iova+length) wraps, or iova != 0 with PROT_ACC_ZERO_BASED.
 */
int prot_mr_reg_iova(struct prot_tables *t, uint32_t pd, void *addr,
		     uint64_t length, uint64_t iova, unsigned int access,
		     uint32_t *key);
/*
 * -EINVAL unknown key, -EBUSY while windows are bound.  Revokes first.
 * -EINPROGRESS: the key is dead (every lookup fails from now on) but
 * frames the link has not yet freed still send from the region's memory
 * (prot_tx_holds != 0): the entry is kept, and a later prot_mr_dereg of
 * the same key frees it once they are gone.
 */
int prot_mr_dereg(struct prot_tables *t, uint32_t key);
/* Frames still holding the MR of key (any state but freed); 0 if none. */
uint32_t prot_mr_tx_holds(const struct prot_tables *t, uint32_t key);
/*
 * Change translation (addr/length), PD and/or access of a registered MR.
 * flags are the DROCE_REREG_MR_CHANGE_* bits.  On success *key is the new
 * key (same index, new variant) and the old one is dead.  Errors leave the
 * MR unchanged: -EINVAL (bad input), -EBUSY (windows bound).
 */
int prot_mr_rereg(struct prot_tables *t, uint32_t *key, unsigned int flags,
		  uint32_t pd, void *addr, uint64_t length,
		  unsigned int access);

#define PROT_REREG_TRANSLATION	(1u << 0)
#define PROT_REREG_PD		(1u << 1)
#define PROT_REREG_ACCESS	(1u << 2)

/* ---- memory windows ------------------------------------------------------ */

/* type 1 or 2; *key is the window's initial (unbound, invalid) rkey. */
int prot_mw_alloc(struct prot_tables *t, uint32_t pd, int type, uint32_t *key);
/* Unbinds (revokes) if bound, then frees.  -EINVAL unknown handle. */
int prot_mw_dealloc(struct prot_tables *t, uint32_t mw_index);

/*
 * Type-1 bind (droce_bind_mw): bind the window mw_index onto the MR mr_key
 * at [addr, addr+length) with access; length 0 unbinds (mr_key ignored).
 * *rkey is the window's new rkey (variant + 1, as ibv_inc_rkey).
 * -EINVAL: not a type-1 MW, bad MR key, MR without MW_BIND (C10-73),
 *          writable window on an MR without LOCAL_WRITE (C10-74), outside
 *          the MR (C10-75), ZERO_BASED (o10-36.2.2), unsupported bits;
 * -EPERM:  MR in another PD.
 */
int prot_mw_bind_type1(struct prot_tables *t, uint32_t mw_index,
		       uint32_t mr_key, uint64_t addr, uint64_t length,
		       unsigned int access, uint32_t *rkey);
/*
 * The same, executed by the transport for the BIND_MW work request that
 * droce_bind_mw posts: the window gets new_rkey (the WR's, the window's
 * index with a variant other than its current one), so the key the
 * application was given at post time is the one that works.  Errors as
 * above; -EINVAL also for a bad new_rkey; -EPERM also for a window not in
 * qp_pd, the PD of the posting QP.
 */
int prot_mw_bind_type1_key(struct prot_tables *t, uint32_t mw_index,
			   uint32_t new_rkey, uint32_t mr_key, uint64_t addr,
			   uint64_t length, unsigned int access, uint32_t qp_pd);

/*
 * Type-2 bind, executed by the transport for a DROCE_WR_BIND_MW on QP qpn
 * of PD qp_pd.  new_rkey is the WR's rkey: same index as the window, a
 * variant different from the last one used.  The window is then usable only
 * through qpn.  -EINVAL: not type 2, bad new_rkey, window already bound
 * (o10-37.2.30), length 0 (o10-37.2.40), bad MR key, MR rules as type 1;
 * -EPERM: QP, MW and MR not all in one PD (C10-72).
 */
int prot_mw_bind_type2(struct prot_tables *t, uint32_t mw_index,
		       uint32_t new_rkey, uint32_t mr_key, uint64_t addr,
		       uint64_t length, unsigned int access, uint32_t qp_pd,
		       uint32_t qpn);

/*
 * DROCE_WR_LOCAL_INV of rkey on a QP of PD qp_pd: the rkey is dead when
 * this returns.  -EINVAL: rkey not a currently valid type-2 window key
 * (type 1: o10-37.2.26; MRs cannot be invalidated: no fast-reg MRs yet);
 * -EPERM: window in another PD.
 */
int prot_local_invalidate(struct prot_tables *t, uint32_t rkey,
			  uint32_t qp_pd);
/* SEND_WITH_INV received on QP qpn: as local, and the window must be bound
 * to qpn (-EPERM otherwise). */
int prot_remote_invalidate(struct prot_tables *t, uint32_t rkey,
			   uint32_t qp_pd, uint32_t qpn);

/*
 * QP qpn is being destroyed: invalidate every type-2 window bound to it
 * (their rkeys are dead when this returns; the windows are free to be
 * bound again).  Returns how many were invalidated, or -EINVAL.
 */
int prot_mw_invalidate_qp(struct prot_tables *t, uint32_t qpn);

/* Whether the window mw_index is bound now (*bound). -EINVAL: no window. */
int prot_mw_bound(struct prot_tables *t, uint32_t mw_index, bool *bound);

/* Current key of an MW / MR by index (tests, verbs). -EINVAL if none. */
int prot_entry_key(struct prot_tables *t, uint32_t index, uint32_t *key);

/* ---- leases (droce extension) --------------------------------------------- */

/*
 * A lease on an MR or MW: unless renewed within its period, the object's
 * key is revoked exactly as dereg (MR) or invalidate/unbind (MW) revokes
 * it, and every window bound to a leased MR is unbound with it.  The
 * entry then stays EXPIRED, its key dead, until the owner deregisters /
 * deallocates it (which succeeds), so the owner's handle can report the
 * state and the index is not reused behind its back.  An expired window
 * cannot be bound again.  Times are nanoseconds of the caller's monotonic
 * clock (prot_lease_clock()).  Objects are named as dereg/dealloc name
 * them: an MR by its key, an MW by its index (mw = true).
 */
enum prot_lease_state {
	PROT_LEASE_NONE = 0,
	PROT_LEASE_ACTIVE,
	PROT_LEASE_EXPIRED,
};

struct prot_lease_info {
	enum prot_lease_state state;
	uint64_t period;	/* ns; 0 with PROT_LEASE_NONE */
	uint64_t remaining;	/* ns until the deadline; 0 once due */
};

/* CLOCK_MONOTONIC in ns: the clock lease deadlines are kept in. */
uint64_t prot_lease_clock(void);
/*
 * A lease is over once now reaches its deadline, whether or not
 * prot_lease_expire has revoked the key yet: set and renew then fail
 * -ETIME and query reports PROT_LEASE_EXPIRED, so no call made after the
 * deadline extends it, whoever runs first.
 *
 * Lease the object for period ns from now (period 0: no lease any more);
 * cookie is handed to the expiry callback.  -EINVAL unknown object,
 * -ETIME over, -ENOMEM (the lease table could not be made).
 */
int prot_lease_set(struct prot_tables *t, bool mw, uint32_t id,
		   uint64_t period, uint64_t cookie, uint64_t now);
/* Deadline = now + period.  -EINVAL unknown, -ENOENT no lease, -ETIME over. */
int prot_lease_renew(struct prot_tables *t, bool mw, uint32_t id, uint64_t now);
/* -EINVAL unknown object. */
int prot_lease_query(struct prot_tables *t, bool mw, uint32_t id, uint64_t now,
		     struct prot_lease_info *info);

/* Called under the table lock for each lease expiry, after the revocation. */
typedef void (*prot_lease_cb)(void *arg, bool mw, uint64_t cookie);
/*
 * Expire every lease due at now (deadline <= now): revoke, then cb.
 * Returns how many.  Cheap to skip: call only when now >= prot_lease_next().
 */
int prot_lease_expire(struct prot_tables *t, uint64_t now, prot_lease_cb cb,
		      void *arg);

/* Earliest deadline of any active lease, UINT64_MAX if none (any thread). */
static inline uint64_t
prot_lease_next(const struct prot_tables *t)
{
	return __atomic_load_n(&t->lease_next, __ATOMIC_RELAXED);
}

/* ---- readers (QSBR) ------------------------------------------------------ */

/*
 * Every thread that runs prot_check_* registers once, then calls
 * prot_reader_quiescent() whenever it holds no pointer obtained from a
 * check (after each burst).  Revoking calls (dereg, rereg, bind, unbind,
 * invalidate, dealloc) return only after every online reader passed a
 * quiescent point, so no lookup or copy that started with the old key is
 * still running.  A registered reader that itself calls a control
 * function is offline for its duration.  Returns a slot id or -ENOSPC.
 */
int prot_reader_register(struct prot_tables *t);
void prot_reader_unregister(struct prot_tables *t, int id);
/* Offline readers (idle lcores) are not waited for. */
void prot_reader_offline(struct prot_tables *t, int id);
void prot_reader_online(struct prot_tables *t, int id);

static inline void
prot_reader_quiescent(struct prot_tables *t, int id)
{
	uint64_t e = __atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE);

	__atomic_store_n(&t->readers[id].seen, e, __ATOMIC_RELEASE);
}

/* Wait for a grace period (called by the revoking functions). */
void prot_synchronize(struct prot_tables *t);

/* ---- the checks (hot path) ----------------------------------------------- */

struct prot_op_rule {
	uint32_t need;		/* PROT_ACC_* required */
	uint32_t align_mask;	/* va & mask must be 0 */
};

extern const struct prot_op_rule prot_op_rules[PROT_OP_MAX];

/*
 * The check order, each step citing the IBTA text it implements (Vol. 1
 * release 1.4; 1.5 for FLUSH and ATOMIC WRITE; section numbers where the
 * compliance number was not verified, see README.md).  The first failing
 * step is returned and nothing is written to *host_addr.
 */
static inline enum prot_status
prot_lookup(const struct prot_tables *t, uint32_t key, bool remote,
	    uint32_t pd, uint32_t qpn, uint64_t va, uint64_t len,
	    uint32_t need, uint32_t align_mask, void **host_addr)
{
	uint32_t idx = prot_key_index(key);
	const struct prot_entry *e;
	uint64_t off;

	/* 1. The key names a valid object and its variant is current
	 *    (IBTA Vol.1 10.6: R_Key/L_Key validation; an invalidated
	 *    window's rkey fails at once, o10-37.2.26 context).  Index 0
	 *    is never allocated. */
	if (idx == 0 || idx >= t->nentries)
		return PROT_BAD_KEY;
	e = &t->entries[idx];
	if (__atomic_load_n(&e->tag, __ATOMIC_ACQUIRE) !=
	    (PROT_TAG_VALID | key))
		return PROT_BAD_KEY;
	/* An L_Key names a memory region, never a window (windows have
	 *    only an R_Key, 10.6.7). */
	if (!remote && e->type != PROT_OBJ_MR)
		return PROT_BAD_KEY;
	/* 2. Same protection domain as the QP (10.6.3: a QP may use only
	 *    MRs/MWs of its own PD; C10-72 for type-2 windows). */
	if (e->pd != pd)
		return PROT_PD_MISMATCH;
	/* 3. A type-2 window is usable only through the QP it was bound
	 *    on (C10-72 ties the bind to that QP; 10.6.7.2). */
	if (e->type == PROT_OBJ_MW2 && e->qpn != qpn)
		return PROT_MW_WRONG_QP;
	/* 4. [va, va+len) inside [iova, iova+length) (10.6.7.3 bounds
	 *    check), overflow-free: va + len is never computed. */
	if (va < e->iova)
		return PROT_RANGE;
	off = va - e->iova;
	if (len > e->length || off > e->length - len)
		return PROT_RANGE;
	/* 5. The access right for this operation (10.6.7.3; local writes
	 *    by the HCA need LOCAL_WRITE). */
	if ((e->access & need) != need)
		return PROT_ACCESS;
	/* 6. Atomics (and ATOMIC WRITE) are 8-byte aligned (9.4.5:
	 *    misaligned atomic va is a remote access error here). */
	if ((va & align_mask) != 0)
		return PROT_ALIGN;
	*host_addr = (void *)(uintptr_t)(e->host + off);
	return PROT_OK;
}

/*
 * Responder check of an incoming remote access on QP qpn of PD qp_pd.
 * Any status but PROT_OK means nothing may be touched; the responder answers
 * PROT_ALIGN (a misaligned atomic) with NAK Invalid Request and every other
 * status with NAK Remote Access Error.  Zero-length READ/WRITE
 * need no R_Key (C9-88): the transport skips this call for them.
 */
static inline enum prot_status
prot_check_remote(struct prot_tables *t, uint32_t rkey, uint32_t qp_pd,
		  uint32_t qpn, enum prot_remote_op op, uint64_t va,
		  uint64_t len, void **host_addr)
{
	enum prot_status st;

	if ((unsigned int)op >= PROT_OP_MAX) {
		st = PROT_ACCESS;
	} else {
		const struct prot_op_rule *r = &prot_op_rules[op];

		st = prot_lookup(t, rkey, true, qp_pd, qpn, va, len, r->need,
				 r->align_mask, host_addr);
	}
	return st;
}

/*
 * Local SGE check: lkey valid and an MR, same PD, range inside, and
 * LOCAL_WRITE when the HCA writes into it (receive buffers, READ and atomic
 * response targets): pass write = true then.
 */
static inline enum prot_status
prot_check_local(struct prot_tables *t, uint32_t lkey, uint32_t qp_pd,
		 uint64_t addr, uint64_t len, bool write, void **host_addr)
{
	return prot_lookup(t, lkey, false, qp_pd, 0, addr, len,
			   write ? PROT_ACC_LOCAL_WRITE : 0, 0, host_addr);
}

/*
 * Zero-copy transmit: a frame whose payload stays in the memory of the
 * MR of key (the link reads it when it sends) holds the region: call
 * prot_tx_hold after a successful prot_check_local / prot_check_remote of
 * key (an L_Key, or an R_Key of the region or of a window bound to it), in the same
 * read-side section (before prot_reader_quiescent), and prot_tx_release
 * with what it returned once the link freed the frame (from any thread).
 * The section makes the count exact for prot_mr_dereg: its grace period
 * ends after every hold taken under the old key is counted.
 */
static inline uint32_t *
prot_tx_hold(struct prot_tables *t, uint32_t key)
{
	struct prot_entry *e = &t->entries[prot_key_index(key)];
	uint32_t *h;

	/* a window's R_Key (a READ response): the memory is its region's,
	 * which stays bound while the key checked is valid */
	if (e->type != PROT_OBJ_MR)
		e = &t->entries[e->parent];
	h = &e->tx_holds;

	__atomic_add_fetch(h, 1, __ATOMIC_RELEASE);
	return h;
}

static inline void
prot_tx_release(uint32_t *holds)
{
	__atomic_sub_fetch(holds, 1, __ATOMIC_RELEASE);
}

#endif /* DROCE_PROT_H */
