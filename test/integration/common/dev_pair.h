/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared setup for the integration tests that run two droce devices over
 * a veth pair (test_device_ports, test_telemetry, test_lcores_device,
 * test_lcores_shards_device): the resources of one end, RC QPs taken
 * through INIT/RTR/RTS, and a one-SGE signalled post.  Every helper
 * asserts (cmocka) on each verb's result, so a failure points at the step.
 * Where the tests' setups differ, the difference is a parameter.
 */
#ifndef DROCE_TEST_DEV_PAIR_H
#define DROCE_TEST_DEV_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "droce.h"

/* every remote right, for MRs and QPs */
#define DP_REMOTE_ALL (DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ | \
		       DROCE_ACCESS_REMOTE_ATOMIC)

/* the attributes of an RC connection that differ between the tests */
struct dp_rc_params {
	int gid_index;			/* the SGID and the peer's DGID index */
	unsigned int access;		/* INIT qp_access_flags */
	enum droce_mtu path_mtu;	/* RTR */
	uint8_t timeout;		/* RTS local ACK timeout (4.096 us * 2^t) */
};

/* What all the tests use: all remote rights, MTU 1024, timeout 14. */
#define DP_RC_PARAMS(gid) \
	((struct dp_rc_params){ .gid_index = (gid), .access = DP_REMOTE_ALL, \
				.path_mtu = DROCE_MTU_1024, .timeout = 14 })

/* One device of the pair with one QP (the shards test keeps its own, with many). */
struct dp_end {
	struct droce_context *ctx;
	struct droce_pd *pd;
	struct droce_mr *mr;
	struct droce_cq *cq;
	struct droce_qp *qp;
	uint8_t *buf;
};

/* Monotonic time in seconds. */
double dp_now(void);

/*
 * One end's resources on the open context ctx: a PD, a zeroed
 * 4096-aligned buffer of buf_len bytes (free() it), an MR over all of it
 * with LOCAL_WRITE | mr_access, and a CQ of cqe entries.
 */
void dp_alloc_end(struct droce_context *ctx, size_t buf_len, unsigned int mr_access,
		  int cqe, struct droce_pd **pd, uint8_t **buf, struct droce_mr **mr,
		  struct droce_cq **cq);

/* Undo dp_alloc_end and close e's device (its QP destroyed already). */
void dp_close_end(struct dp_end *e);

/* An RC QP on pd with both queues on cq, 64 WRs and 1 SGE each way. */
struct droce_qp *dp_create_rc_qp(struct droce_pd *pd, struct droce_cq *cq);

/*
 * Take self through INIT, RTR and RTS towards peer_qpn on peer_ctx (port
 * 1): PSNs 100, 4 reads/atomics in flight each way, RNR timer 12, retry
 * and RNR retry 7, hop limit 1; the rest from p.
 */
void dp_connect_rc(struct droce_qp *self, struct droce_context *peer_ctx,
		   uint32_t peer_qpn, const struct dp_rc_params *p);

/*
 * Post one signalled WR with one SGE (l, len, lkey).  Atomics
 * (FETCH_AND_ADD, CMP_AND_SWP) target r with add/swap; every other opcode
 * takes r/rkey as its RDMA address.  Returns droce_post_send's result.
 */
int dp_post(struct droce_qp *qp, enum droce_wr_opcode op, uint64_t id, void *l,
	    uint32_t len, uint32_t lkey, void *r, uint32_t rkey, uint64_t add,
	    uint64_t swap);


/*
 * Append the EAL arguments the tests start with to args[*nargs...]:
 * argv0, --no-pci, lcore_opt lcores (e.g. "-l" "0,1"), prefix (the
 * --file-prefix=... option), EAL log level error, and "--no-huge -m 1024"
 * when DROCE_NO_HUGE=1.  At most 9 entries; true when --no-huge was added.
 */
bool dp_eal_args(char **args, int *nargs, char *argv0, char *lcore_opt,
		 char *lcores, char *prefix);

/* Append "--vdev v0 --vdev v1 --" (the droce options follow). */
void dp_vdev_args(char **args, int *nargs, char *v0, char *v1);

/*
 * Poll cq for one completion into *wc for up to timeout seconds, running
 * the other context's transport too.  Returns droce_poll_cq's last result.
 */
int dp_poll_one(struct droce_cq *cq, struct droce_context *other, struct droce_wc *wc,
		double timeout);

/*
 * The net_af_packet0/1 devargs (frames up to 8192 bytes) on the veth pair
 * run_in_netns.sh names in DROCE_TEST_VETH="ifa,ifb".  False when unset.
 */
bool dp_veth_vdevs(char *v0, char *v1, size_t size);

#endif
