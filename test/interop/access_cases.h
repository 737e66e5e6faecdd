/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The remote access cases of interop case file 70_guest_access.sh, shared
 * by both ends: droce-access (droce, the target: test/interop/
 * droce_access.c) and guest-access (a libibverbs program run in the rxe-vm
 * guest, the initiator: test/interop/guest/guest_access.c).  Plain C, no
 * droce or ibverbs types, so both programs include it.
 *
 * droce registers five MRs over one buffer of ACC_NREG slices of ACC_REG
 * bytes, each with its own rights, fills the buffer with acc_pattern() and
 * keeps a shadow copy.  For every case, in this order, both ends make a
 * fresh RC QP (an access error puts both QPs into the error state), and
 * the guest posts one operation.  The guest checks the completion status
 * (and the data of a READ / the original value of an ATOMIC); droce
 * compares its whole buffer with the shadow, to which it has applied the
 * effect of the cases that must succeed.
 *
 * Expected statuses follow what rxe's completer makes of droce's NAK:
 * Remote Access Error (syndrome 0x62) -> IBV_WC_REM_ACCESS_ERR for R_Key
 * violations (bad key, range, missing right, invalidated window,
 * deregistered region: IBTA 9.7.5.2.x / 10.6.7.x, as rxe's own responder);
 * Invalid Request (0x61) -> IBV_WC_REM_INV_REQ_ERR for an operation the QP
 * does not enable (as rxe's check_op_valid); a zero-length WRITE needs no
 * valid R_Key (C9-88).
 *
 * TCP handshake (host byte order, both ends x86-64), per case:
 *   guest -> droce  struct acc_qp_info (QPN, PSN, GID)
 *   droce -> guest  struct acc_qp_info
 *   (both move their QP to RTR/RTS; droce binds a window if the case has one)
 *   droce -> guest  struct acc_target (address, length, R_Key of the target)
 *   (droce deregisters the region / invalidates the window if the case says)
 *   droce -> guest  one byte 'g'
 *   guest -> droce  struct acc_result (completion status, data check)
 *   droce -> guest  one byte: 'y' memory as expected, 'n' not
 */
#ifndef DROCE_TEST_INTEROP_ACCESS_CASES_H
#define DROCE_TEST_INTEROP_ACCESS_CASES_H

#include <stdint.h>
#include <string.h>

#define ACC_PORT 18530
#define ACC_REG 16384			/* bytes per region slice */

/* regions: one slice of the buffer each, registered with these rights */
enum acc_region {
	ACC_MR_ALL,	/* LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC | MW_BIND */
	ACC_MR_LOCAL,	/* LOCAL_WRITE only: no remote rights */
	ACC_MR_RONLY,	/* REMOTE_READ only */
	ACC_MR_WONLY,	/* LOCAL_WRITE | REMOTE_WRITE */
	ACC_MR_RW,	/* LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ: no atomic */
	ACC_MR_DEREG,	/* registered per case, deregistered after its key was sent */
	ACC_MW,		/* type-2 window on MR_ALL, bound per case on the case's QP */
	ACC_NTARGET
};
#define ACC_NREG 6	/* slices: the MRs above (the window lies in MR_ALL) */
#define ACC_MW_OFF 12288	/* the window: MR_ALL bytes [12288, 13312) */
#define ACC_MW_LEN 1024

enum acc_op { ACC_WRITE, ACC_READ, ACC_FETCH_ADD };

enum acc_expect { ACC_SUCCESS, ACC_REM_ACCESS_ERR, ACC_REM_INV_REQ_ERR };

enum acc_after {		/* what droce does after sending the key */
	ACC_KEEP,
	ACC_DEREG,		/* droce_dereg_mr */
	ACC_INVALIDATE,		/* DROCE_WR_LOCAL_INV of the window */
};

#define ACC_FADD 0x0101010101010101ull	/* what the FETCH_ADD cases add */

struct acc_case {
	const char *name;
	enum acc_region target;
	enum acc_after after;
	int qp_no_remote_write;		/* droce's QP without REMOTE_WRITE */
	enum acc_op op;
	uint32_t key_xor;		/* the guest alters the R_Key it was sent */
	int32_t off;			/* from the target's start (may be < 0) */
	uint32_t len;
	enum acc_expect expect;
};

/*
 * The refusals first, each on a fresh QP pair; then the operations that
 * must work (on fresh QPs too), which show the checks do not simply refuse
 * everything.  Offsets of the successful cases do not overlap, so each
 * READ/ATOMIC sees the initial pattern.
 */
static const struct acc_case acc_cases[] = {
	{ "write_wrong_rkey_variant", ACC_MR_ALL, ACC_KEEP, 0, ACC_WRITE, 0x5a, 0, 64,
	  ACC_REM_ACCESS_ERR },
	{ "write_wrong_rkey_index", ACC_MR_ALL, ACC_KEEP, 0, ACC_WRITE, 0x00100000, 0, 64,
	  ACC_REM_ACCESS_ERR },
	{ "write_past_region_end", ACC_MR_ALL, ACC_KEEP, 0, ACC_WRITE, 0, ACC_REG - 32, 64,
	  ACC_REM_ACCESS_ERR },
	{ "write_before_region_start", ACC_MR_RW, ACC_KEEP, 0, ACC_WRITE, 0,
	  -64, 64, ACC_REM_ACCESS_ERR },
	{ "write_no_remote_rights", ACC_MR_LOCAL, ACC_KEEP, 0, ACC_WRITE, 0, 0, 64,
	  ACC_REM_ACCESS_ERR },
	{ "write_read_only_region", ACC_MR_RONLY, ACC_KEEP, 0, ACC_WRITE, 0, 0, 64,
	  ACC_REM_ACCESS_ERR },
	{ "read_no_remote_read", ACC_MR_WONLY, ACC_KEEP, 0, ACC_READ, 0, 0, 64,
	  ACC_REM_ACCESS_ERR },
	{ "read_no_remote_rights", ACC_MR_LOCAL, ACC_KEEP, 0, ACC_READ, 0, 0, 64,
	  ACC_REM_ACCESS_ERR },
	{ "atomic_no_remote_atomic", ACC_MR_RW, ACC_KEEP, 0, ACC_FETCH_ADD, 0, 64, 8,
	  ACC_REM_ACCESS_ERR },
	{ "write_multi_packet_past_end", ACC_MR_ALL, ACC_KEEP, 0, ACC_WRITE, 0,
	  ACC_REG - 2048, 3000, ACC_REM_ACCESS_ERR },
	{ "write_invalidated_window", ACC_MW, ACC_INVALIDATE, 0, ACC_WRITE, 0, 0, 64,
	  ACC_REM_ACCESS_ERR },
	{ "write_past_window_end", ACC_MW, ACC_KEEP, 0, ACC_WRITE, 0, ACC_MW_LEN - 32, 64,
	  ACC_REM_ACCESS_ERR },
	{ "write_deregistered_region", ACC_MR_DEREG, ACC_DEREG, 0, ACC_WRITE, 0, 0, 64,
	  ACC_REM_ACCESS_ERR },
	{ "read_deregistered_region", ACC_MR_DEREG, ACC_DEREG, 0, ACC_READ, 0, 0, 64,
	  ACC_REM_ACCESS_ERR },
	{ "write_qp_without_remote_write", ACC_MR_ALL, ACC_KEEP, 1, ACC_WRITE, 0, 0, 64,
	  ACC_REM_INV_REQ_ERR },
	/* (no misaligned atomic: the guest's rxe provider refuses to post one,
	 * ibv_post_send fails locally; droce's answer to one, NAK Invalid
	 * Request, is tested droce to droce in transport_rc_errors) */
	/* must succeed */
	{ "write_zero_length_wrong_rkey", ACC_MR_LOCAL, ACC_KEEP, 0, ACC_WRITE, 0x5a, 0, 0,
	  ACC_SUCCESS },
	{ "write_valid", ACC_MR_ALL, ACC_KEEP, 0, ACC_WRITE, 0, 0, 256, ACC_SUCCESS },
	{ "write_valid_multi_packet", ACC_MR_WONLY, ACC_KEEP, 0, ACC_WRITE, 0, 1000, 3000,
	  ACC_SUCCESS },
	{ "read_valid", ACC_MR_ALL, ACC_KEEP, 0, ACC_READ, 0, 4096, 1024, ACC_SUCCESS },
	{ "read_valid_read_only_region", ACC_MR_RONLY, ACC_KEEP, 0, ACC_READ, 0, 100, 3000,
	  ACC_SUCCESS },
	{ "atomic_valid_fetch_add", ACC_MR_ALL, ACC_KEEP, 0, ACC_FETCH_ADD, 0, 8192, 8,
	  ACC_SUCCESS },
	{ "write_valid_window", ACC_MW, ACC_KEEP, 0, ACC_WRITE, 0, 0, ACC_MW_LEN,
	  ACC_SUCCESS },
};
#define ACC_NCASES (sizeof(acc_cases) / sizeof(acc_cases[0]))

struct acc_qp_info {
	uint32_t qpn, psn;
	uint8_t gid[16];
} __attribute__((packed));

struct acc_target {
	uint64_t addr;		/* the target's first byte, in droce's addresses */
	uint32_t len, rkey;
} __attribute__((packed));

struct acc_result {
	int32_t status;		/* enum ibv_wc_status of the guest's completion */
	int32_t data_ok;	/* READ data / ATOMIC original value as expected */
	uint64_t atomic_orig;
} __attribute__((packed));

/*
 * Lifetime mode (75_lifetime.sh, issue 13's models seen from a real peer):
 * after one handshake as above (a QP with REMOTE_WRITE, the target MR_ALL,
 * no 'y'/'n' verdict), the guest WRITEs its sequence number 1, 2, 3 ...
 * (8 bytes, host order) to the target's first byte, one at a time, until
 * the first failed completion.  droce's server is SIGKILLed (plain) or lets
 * the region's lease of ACC_LEASE_MS run out while its application thread
 * hangs (lease); in the lease model droce then reads the sequence number in
 * its memory, and the guest sends it this result.  In the daemon model
 * droce's server is an application on droced whose region outlives it
 * (persistent): the guest WRITEs on until another application releases it.
 */
#define ACC_LEASE_MS 1000

struct acc_lifetime_result {
	int32_t status;		/* the first failed completion's ibv_wc_status */
	uint32_t pad;
	uint64_t last_ok_seq;	/* the last WRITE that completed successfully */
	uint64_t gap_ns;	/* from that completion to the failed one */
} __attribute__((packed));

/* Byte k of droce's buffer before any case. */
static inline uint8_t
acc_pattern(uint64_t k)
{
	return (uint8_t)(k * 13 + 7 + (k >> 8));
}

/* Byte k of what the guest writes. */
static inline uint8_t
acc_wpattern(uint64_t k)
{
	return (uint8_t)(k * 5 + 0xa1);
}

/* Where a target starts in droce's buffer (the slice, or the window). */
static inline uint64_t
acc_target_offset(enum acc_region t)
{
	return t == ACC_MW ? ACC_MW_OFF : (uint64_t)t * ACC_REG;
}

/* The 8 bytes of the initial pattern at buffer offset k, as a host u64. */
static inline uint64_t
acc_pattern_u64(uint64_t k)
{
	uint8_t b[8];
	uint64_t v;

	for (int i = 0; i < 8; i++)
		b[i] = acc_pattern(k + (uint64_t)i);
	memcpy(&v, b, sizeof(v));
	return v;
}

static inline const char *
acc_expect_str(enum acc_expect e)
{
	return e == ACC_SUCCESS ? "SUCCESS" :
	       e == ACC_REM_ACCESS_ERR ? "REM_ACCESS_ERR" : "REM_INV_REQ_ERR";
}

#endif
