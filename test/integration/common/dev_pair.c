/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared two-device setup for the integration tests: see dev_pair.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "dev_pair.h"

double
dp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void
dp_alloc_end(struct droce_context *ctx, size_t buf_len, unsigned int mr_access,
	     int cqe, struct droce_pd **pd, uint8_t **buf, struct droce_mr **mr,
	     struct droce_cq **cq)
{
	*pd = droce_alloc_pd(ctx);
	assert_non_null(*pd);
	*buf = aligned_alloc(4096, buf_len);
	assert_non_null(*buf);
	memset(*buf, 0, buf_len);
	*mr = droce_reg_mr(*pd, *buf, buf_len, (int)(DROCE_ACCESS_LOCAL_WRITE | mr_access));
	assert_non_null(*mr);
	*cq = droce_create_cq(ctx, cqe, NULL, NULL, 0);
	assert_non_null(*cq);
}

struct droce_qp *
dp_create_rc_qp(struct droce_pd *pd, struct droce_cq *cq)
{
	struct droce_qp_init_attr init = {
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = DROCE_QPT_RC,
	};
	struct droce_qp *qp;

	init.send_cq = init.recv_cq = cq;
	qp = droce_create_qp(pd, &init);
	assert_non_null(qp);
	return qp;
}

void
dp_connect_rc(struct droce_qp *self, struct droce_context *peer_ctx,
	      uint32_t peer_qpn, const struct dp_rc_params *p)
{
	struct droce_qp_attr at;
	union droce_gid dgid;

	assert_int_equal(droce_query_gid(peer_ctx, 1, p->gid_index, &dgid), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = DROCE_QPS_INIT;
	at.port_num = 1;
	at.qp_access_flags = p->access;
	assert_int_equal(droce_modify_qp(self, &at, DROCE_QP_STATE |
					 DROCE_QP_PKEY_INDEX | DROCE_QP_PORT |
					 DROCE_QP_ACCESS_FLAGS), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = DROCE_QPS_RTR;
	at.path_mtu = p->path_mtu;
	at.dest_qp_num = peer_qpn;
	at.rq_psn = 100;
	at.max_dest_rd_atomic = 4;
	at.min_rnr_timer = 12;
	at.ah_attr.is_global = 1;
	at.ah_attr.port_num = 1;
	at.ah_attr.grh.dgid = dgid;
	at.ah_attr.grh.sgid_index = (uint8_t)p->gid_index;
	at.ah_attr.grh.hop_limit = 1;
	assert_int_equal(droce_modify_qp(self, &at, DROCE_QP_STATE | DROCE_QP_AV |
					 DROCE_QP_PATH_MTU | DROCE_QP_DEST_QPN |
					 DROCE_QP_RQ_PSN | DROCE_QP_MAX_DEST_RD_ATOMIC |
					 DROCE_QP_MIN_RNR_TIMER), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = DROCE_QPS_RTS;
	at.sq_psn = 100;
	at.timeout = p->timeout;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.max_rd_atomic = 4;
	assert_int_equal(droce_modify_qp(self, &at, DROCE_QP_STATE | DROCE_QP_SQ_PSN |
					 DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT |
					 DROCE_QP_RNR_RETRY |
					 DROCE_QP_MAX_QP_RD_ATOMIC), 0);
}

int
dp_post(struct droce_qp *qp, enum droce_wr_opcode op, uint64_t id, void *l,
	uint32_t len, uint32_t lkey, void *r, uint32_t rkey, uint64_t add,
	uint64_t swap)
{
	struct droce_sge sge = { (uintptr_t)l, len, lkey };
	struct droce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = DROCE_SEND_SIGNALED;
	if (op == DROCE_WR_ATOMIC_FETCH_AND_ADD || op == DROCE_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = (uintptr_t)r;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)r;
		wr.wr.rdma.rkey = rkey;
	}
	return droce_post_send(qp, &wr, &bad);
}

bool
dp_eal_args(char **args, int *nargs, char *argv0, char *lcore_opt, char *lcores,
	    char *prefix)
{
	const char *env = getenv("DROCE_NO_HUGE");
	bool no_huge = env != NULL && strcmp(env, "1") == 0;

	args[(*nargs)++] = argv0;
	args[(*nargs)++] = "--no-pci";
	args[(*nargs)++] = lcore_opt;
	args[(*nargs)++] = lcores;
	args[(*nargs)++] = prefix;
	args[(*nargs)++] = "--log-level=lib.eal:error";
	if (no_huge) {
		args[(*nargs)++] = "--no-huge";
		args[(*nargs)++] = "-m";
		args[(*nargs)++] = "1024";
	}
	return no_huge;
}

void
dp_vdev_args(char **args, int *nargs, char *v0, char *v1)
{
	args[(*nargs)++] = "--vdev";
	args[(*nargs)++] = v0;
	args[(*nargs)++] = "--vdev";
	args[(*nargs)++] = v1;
	args[(*nargs)++] = "--";
}

int
dp_poll_one(struct droce_cq *cq, struct droce_context *other, struct droce_wc *wc,
	    double timeout)
{
	double end = dp_now() + timeout;

	while (dp_now() < end) {
		int n;

		droce_progress(other);
		n = droce_poll_cq(cq, 1, wc);
		if (n != 0)
			return n;
	}
	return 0;
}

bool
dp_veth_vdevs(char *v0, char *v1, size_t size)
{
	const char *veth = getenv("DROCE_TEST_VETH");
	const char *comma = veth != NULL ? strchr(veth, ',') : NULL;

	if (comma == NULL)
		return false;
	snprintf(v0, size, "net_af_packet0,iface=%.*s,framesz=8192,blocksz=8192",
		 (int)(comma - veth), veth);
	snprintf(v1, size, "net_af_packet1,iface=%s,framesz=8192,blocksz=8192", comma + 1);
	return true;
}

void
dp_close_end(struct dp_end *e)
{
	assert_int_equal(droce_destroy_cq(e->cq), 0);
	assert_int_equal(droce_dereg_mr(e->mr), 0);
	assert_int_equal(droce_dealloc_pd(e->pd), 0);
	assert_int_equal(droce_close_device(e->ctx), 0);
	free(e->buf);
}
