/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dedicated transport lcore mode on real DPDK ports: two droce devices
 * on net_af_packet over a veth pair (run_in_netns.sh makes it in a
 * namespace of the test's own), configured only through droce_init()'s
 * options with --droce-transport-lcores=1 (EAL -l 0,1): both engines, with
 * lib/net's ARP and neighbour discovery, run on lcore 1; the test runs on
 * the main lcore and never calls droce_progress (it would be a no-op).
 * RC WRITE, READ, SEND, CMP_SWP and FETCH_ADD with byte checks over
 * IPv4-mapped and IPv6 GIDs, then the devices close (lcore 1 stops).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "droce.h"

#define BUF (4u << 20)
#define NWR 32
#define MSG 65536u

struct end {
	struct droce_context *ctx;
	struct droce_pd *pd;
	struct droce_mr *mr;
	struct droce_cq *cq;
	struct droce_qp *qp;
	uint8_t *buf;
};

static struct end a, b;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* n completions of e, in order from wr_id first, all successful. */
static void
poll_ok(struct end *e, int n, uint64_t first)
{
	double end = now() + 20;
	int got = 0;

	while (got < n && now() < end) {
		struct droce_wc wc[8];
		int r = droce_poll_cq(e->cq, 8, wc);

		assert_true(r >= 0);
		for (int i = 0; i < r; i++, got++) {
			if (wc[i].status != DROCE_WC_SUCCESS)
				fail_msg("wr %llu: %s", (unsigned long long)wc[i].wr_id,
					 droce_wc_status_str(wc[i].status));
			assert_int_equal(wc[i].wr_id, first + (uint64_t)got);
		}
	}
	assert_int_equal(got, n);
}

static void
open_end(struct end *e, struct droce_device *dev)
{
	e->ctx = droce_open_device(dev);
	assert_non_null(e->ctx);
	e->pd = droce_alloc_pd(e->ctx);
	assert_non_null(e->pd);
	e->buf = aligned_alloc(4096, BUF);
	assert_non_null(e->buf);
	memset(e->buf, 0, BUF);
	e->mr = droce_reg_mr(e->pd, e->buf, BUF, DROCE_ACCESS_LOCAL_WRITE |
			     DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ |
			     DROCE_ACCESS_REMOTE_ATOMIC);
	assert_non_null(e->mr);
	e->cq = droce_create_cq(e->ctx, 256, NULL, NULL, 0);
	assert_non_null(e->cq);
}

static void
connect_qp(struct end *self, struct end *peer, int gid_index)
{
	struct droce_qp_attr at;
	union droce_gid dgid;

	assert_int_equal(droce_query_gid(peer->ctx, 1, gid_index, &dgid), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = DROCE_QPS_INIT;
	at.port_num = 1;
	at.qp_access_flags = DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ |
			     DROCE_ACCESS_REMOTE_ATOMIC;
	assert_int_equal(droce_modify_qp(self->qp, &at, DROCE_QP_STATE |
					 DROCE_QP_PKEY_INDEX | DROCE_QP_PORT |
					 DROCE_QP_ACCESS_FLAGS), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = DROCE_QPS_RTR;
	at.path_mtu = DROCE_MTU_1024;
	at.dest_qp_num = peer->qp->qp_num;
	at.rq_psn = 100;
	at.max_dest_rd_atomic = 4;
	at.min_rnr_timer = 12;
	at.ah_attr.is_global = 1;
	at.ah_attr.port_num = 1;
	at.ah_attr.grh.dgid = dgid;
	at.ah_attr.grh.sgid_index = (uint8_t)gid_index;
	at.ah_attr.grh.hop_limit = 1;
	assert_int_equal(droce_modify_qp(self->qp, &at, DROCE_QP_STATE | DROCE_QP_AV |
					 DROCE_QP_PATH_MTU | DROCE_QP_DEST_QPN |
					 DROCE_QP_RQ_PSN | DROCE_QP_MAX_DEST_RD_ATOMIC |
					 DROCE_QP_MIN_RNR_TIMER), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = DROCE_QPS_RTS;
	at.sq_psn = 100;
	at.timeout = 14;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.max_rd_atomic = 4;
	assert_int_equal(droce_modify_qp(self->qp, &at, DROCE_QP_STATE | DROCE_QP_SQ_PSN |
					 DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT |
					 DROCE_QP_RNR_RETRY |
					 DROCE_QP_MAX_QP_RD_ATOMIC), 0);
	/* the state a post is checked against is the one modify_qp set */
	{
		struct droce_qp_attr q;
		struct droce_qp_init_attr qi;

		assert_int_equal(droce_query_qp(self->qp, &q, DROCE_QP_STATE, &qi), 0);
		assert_int_equal(q.qp_state, DROCE_QPS_RTS);
	}
}

static void
make_qps(int gid_index)
{
	struct droce_qp_init_attr init = {
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = DROCE_QPT_RC,
	};

	init.send_cq = init.recv_cq = a.cq;
	a.qp = droce_create_qp(a.pd, &init);
	assert_non_null(a.qp);
	init.send_cq = init.recv_cq = b.cq;
	b.qp = droce_create_qp(b.pd, &init);
	assert_non_null(b.qp);
	connect_qp(&a, &b, gid_index);
	connect_qp(&b, &a, gid_index);
}

static int
post(struct droce_qp *qp, enum droce_wr_opcode op, uint64_t id, void *l,
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

static uint32_t
len_of(int i)
{
	return 1 + ((uint32_t)i * 7877u) % MSG;
}

static void
exercise(uint32_t seed)
{
	uint8_t *src = a.buf, *dst = b.buf, *back = a.buf + 2 * (BUF / 4);
	uint64_t *word = (uint64_t *)(b.buf + 3 * (BUF / 4));
	uint64_t *res = (uint64_t *)(a.buf + 3 * (BUF / 4));

	for (uint32_t i = 0; i < NWR * (MSG / 4); i++)
		src[i] = (uint8_t)(i * 13 + seed);
	/* WRITEs (the first needs ARP/ND: lib/net on lcore 1 holds it) */
	for (int i = 0; i < NWR / 2; i++)
		assert_int_equal(post(a.qp, DROCE_WR_RDMA_WRITE, (uint64_t)i,
				      src + i * (MSG / 2), len_of(i) / 2, a.mr->lkey,
				      dst + i * (MSG / 2), b.mr->rkey, 0, 0), 0);
	poll_ok(&a, NWR / 2, 0);
	for (int i = 0; i < NWR / 2; i++)
		assert_memory_equal(dst + i * (MSG / 2), src + i * (MSG / 2),
				    len_of(i) / 2);
	/* READ them back */
	for (int i = 0; i < NWR / 2; i++)
		assert_int_equal(post(a.qp, DROCE_WR_RDMA_READ, 100 + (uint64_t)i,
				      back + i * (MSG / 2), len_of(i) / 2, a.mr->lkey,
				      dst + i * (MSG / 2), b.mr->rkey, 0, 0), 0);
	poll_ok(&a, NWR / 2, 100);
	for (int i = 0; i < NWR / 2; i++)
		assert_memory_equal(back + i * (MSG / 2), src + i * (MSG / 2),
				    len_of(i) / 2);
	/* SENDs into posted receives */
	memset(dst + BUF / 4, 0, NWR * 8192);
	for (int i = 0; i < NWR; i++) {
		struct droce_sge rs = { (uintptr_t)dst + BUF / 4 + i * 8192, 8192,
					b.mr->lkey };
		struct droce_recv_wr rw = { .wr_id = 200 + (uint64_t)i, .sg_list = &rs,
					    .num_sge = 1 }, *rbad;

		assert_int_equal(droce_post_recv(b.qp, &rw, &rbad), 0);
	}
	for (int i = 0; i < NWR; i++)
		assert_int_equal(post(a.qp, DROCE_WR_SEND, 300 + (uint64_t)i,
				      src + i * 8192, 1 + (uint32_t)i * 255, a.mr->lkey,
				      NULL, 0, 0, 0), 0);
	poll_ok(&a, NWR, 300);
	poll_ok(&b, NWR, 200);
	for (int i = 0; i < NWR; i++)
		assert_memory_equal(dst + BUF / 4 + i * 8192, src + i * 8192,
				    1 + (uint32_t)i * 255);
	/* FETCH_ADD then CMP_SWP on the same word */
	word[0] = 1000;
	res[0] = res[1] = 0;
	assert_int_equal(post(a.qp, DROCE_WR_ATOMIC_FETCH_AND_ADD, 400, &res[0], 8,
			      a.mr->lkey, &word[0], b.mr->rkey, 24, 0), 0);
	assert_int_equal(post(a.qp, DROCE_WR_ATOMIC_CMP_AND_SWP, 401, &res[1], 8,
			      a.mr->lkey, &word[0], b.mr->rkey, 1024, 5), 0);
	poll_ok(&a, 2, 400);
	assert_true(res[0] == 1000);
	assert_true(res[1] == 1024);
	assert_true(word[0] == 5);
}

static void
test_two_devices_on_transport_lcore(void **state)
{
	struct droce_device **list;
	int n;

	(void)state;
	list = droce_get_device_list(&n);
	assert_non_null(list);
	assert_int_equal(n, 2);
	open_end(&a, list[0]);
	open_end(&b, list[1]);
	droce_free_device_list(list);
	/* lcore 1 runs the engines now */
	assert_int_equal(rte_eal_get_lcore_state(1), RUNNING);
	assert_int_equal(droce_progress(a.ctx), 0);	/* a no-op here */

	make_qps(0);			/* IPv4-mapped GIDs: ARP */
	exercise(1);
	assert_int_equal(droce_destroy_qp(a.qp), 0);
	assert_int_equal(droce_destroy_qp(b.qp), 0);
	make_qps(1);			/* IPv6 GIDs: neighbour discovery */
	exercise(2);
	assert_int_equal(droce_destroy_qp(a.qp), 0);
	assert_int_equal(droce_destroy_qp(b.qp), 0);
	assert_true(droce_get_counter(a.ctx, "sent_pkts") > 0);
	assert_true(droce_get_counter(b.ctx, "rcvd_pkts") > 0);

	for (struct end *e = &a; e != NULL; e = e == &a ? &b : NULL) {
		assert_int_equal(droce_destroy_cq(e->cq), 0);
		assert_int_equal(droce_dereg_mr(e->mr), 0);
		assert_int_equal(droce_dealloc_pd(e->pd), 0);
		assert_int_equal(droce_close_device(e->ctx), 0);
		free(e->buf);
	}
	/* the last device closed: lcore 1 was stopped and waited for */
	assert_int_equal(rte_eal_get_lcore_state(1), WAIT);
}

int
main(int argc, char **argv)
{
	char v0[160], v1[160], prefix[64];
	const char *no_huge = getenv("DROCE_NO_HUGE");
	const char *veth = getenv("DROCE_TEST_VETH");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_devices_on_transport_lcore),
	};
	char *args[40];
	int nargs = 0, rc, consumed;

	(void)argc;
	if (veth == NULL || strchr(veth, ',') == NULL) {
		fprintf(stderr, "DROCE_TEST_VETH=ifa,ifb not set (run via run_in_netns.sh)\n");
		return 1;
	}
	snprintf(v0, sizeof(v0), "net_af_packet0,iface=%.*s,framesz=8192,blocksz=8192",
		 (int)(strchr(veth, ',') - veth), veth);
	snprintf(v1, sizeof(v1), "net_af_packet1,iface=%s,framesz=8192,blocksz=8192",
		 strchr(veth, ',') + 1);
	printf("# ports: net_af_packet on veth %s; app lcore 0, transport lcore 1\n",
	       veth);
	snprintf(prefix, sizeof(prefix), "--file-prefix=droce-lcores-%d", getpid());
	args[nargs++] = argv[0];
	args[nargs++] = "--no-pci";
	args[nargs++] = "-l";
	args[nargs++] = "0,1";
	args[nargs++] = prefix;
	args[nargs++] = "--log-level=lib.eal:error";
	if (no_huge != NULL && strcmp(no_huge, "1") == 0) {
		args[nargs++] = "--no-huge";
		args[nargs++] = "-m";
		args[nargs++] = "1024";
	}
	args[nargs++] = "--vdev";
	args[nargs++] = v0;
	args[nargs++] = "--vdev";
	args[nargs++] = v1;
	args[nargs++] = "--";
	args[nargs++] = "--droce-port=net_af_packet0";
	args[nargs++] = "--droce-ipv4=198.18.12.1/24";
	args[nargs++] = "--droce-ipv6=2001:2:0:12::1/64";
	args[nargs++] = "--droce-mtu=4200";
	args[nargs++] = "--droce-transport-lcores=1";	/* '-' spelling */
	args[nargs++] = "--droce-port=net_af_packet1";
	args[nargs++] = "--droce-ipv4=198.18.12.2/24";
	args[nargs++] = "--droce-ipv6=2001:2:0:12::2/64";
	args[nargs++] = "--droce-mtu=4200";
	args[nargs++] = "--droce-transport_lcores=1";	/* INI key spelling */
	args[nargs] = NULL;
	consumed = droce_init(nargs, args);
	if (consumed < 0) {
		perror("droce_init");
		return 1;
	}
	rc = cmocka_run_group_tests_name("lcores_af_packet", tests, NULL, NULL);
	droce_cleanup();
	return rc;
}
