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

#include "dev_pair.h"
#include "droce.h"
#include "rx_lcores.h"

#define BUF (4u << 20)
#define NWR 32
#define MSG 65536u

static struct dp_end a, b;

/* n completions of e, in order from wr_id first, all successful. */
static void
poll_ok(struct dp_end *e, int n, uint64_t first)
{
	double end = dp_now() + 20;
	int got = 0;

	while (got < n && dp_now() < end) {
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
open_end(struct dp_end *e, struct droce_device *dev)
{
	e->ctx = droce_open_device(dev);
	assert_non_null(e->ctx);
	dp_alloc_end(e->ctx, BUF, DP_REMOTE_ALL, 256, &e->pd, &e->buf, &e->mr, &e->cq);
}

static void
connect_qp(struct dp_end *self, struct dp_end *peer, int gid_index)
{
	const struct dp_rc_params p = DP_RC_PARAMS(gid_index);

	dp_connect_rc(self->qp, peer->ctx, peer->qp->qp_num, &p);
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
	a.qp = dp_create_rc_qp(a.pd, a.cq);
	b.qp = dp_create_rc_qp(b.pd, b.cq);
	connect_qp(&a, &b, gid_index);
	connect_qp(&b, &a, gid_index);
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
		assert_int_equal(dp_post(a.qp, DROCE_WR_RDMA_WRITE, (uint64_t)i,
				      src + i * (MSG / 2), len_of(i) / 2, a.mr->lkey,
				      dst + i * (MSG / 2), b.mr->rkey, 0, 0), 0);
	poll_ok(&a, NWR / 2, 0);
	for (int i = 0; i < NWR / 2; i++)
		assert_memory_equal(dst + i * (MSG / 2), src + i * (MSG / 2),
				    len_of(i) / 2);
	/* READ them back */
	for (int i = 0; i < NWR / 2; i++)
		assert_int_equal(dp_post(a.qp, DROCE_WR_RDMA_READ, 100 + (uint64_t)i,
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
		assert_int_equal(dp_post(a.qp, DROCE_WR_SEND, 300 + (uint64_t)i,
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
	assert_int_equal(dp_post(a.qp, DROCE_WR_ATOMIC_FETCH_AND_ADD, 400, &res[0], 8,
			      a.mr->lkey, &word[0], b.mr->rkey, 24, 0), 0);
	assert_int_equal(dp_post(a.qp, DROCE_WR_ATOMIC_CMP_AND_SWP, 401, &res[1], 8,
			      a.mr->lkey, &word[0], b.mr->rkey, 1024, 5), 0);
	poll_ok(&a, 2, 400);
	assert_true(res[0] == 1000);
	assert_true(res[1] == 1024);
	assert_true(word[0] == 5);
}

static void
test_two_devices_on_transport_lcore(void **state)
{
	static struct rx_lcores rx0, rx1;
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
	rx_lcores_watch("net_af_packet0", 1, &rx0);
	rx_lcores_watch("net_af_packet1", 1, &rx1);

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

	for (struct dp_end *e = &a; e != NULL; e = e == &a ? &b : NULL) {
		assert_int_equal(droce_destroy_cq(e->cq), 0);
		assert_int_equal(droce_dereg_mr(e->mr), 0);
		assert_int_equal(droce_dealloc_pd(e->pd), 0);
		assert_int_equal(droce_close_device(e->ctx), 0);
		free(e->buf);
	}
	/* the last device closed: lcore 1 was stopped and waited for */
	assert_int_equal(rte_eal_get_lcore_state(1), WAIT);
	/* every frame either port received, lcore 1 took from it */
	assert_int_equal(rx_lcores_of(&rx0, 0), UINT64_C(1) << 1);
	assert_int_equal(rx_lcores_of(&rx1, 0), UINT64_C(1) << 1);
}

int
main(int argc, char **argv)
{
	char v0[160], v1[160], prefix[64];
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
	(void)dp_eal_args(args, &nargs, argv[0], "-l", "0,1", prefix);
	dp_vdev_args(args, &nargs, v0, v1);
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
