/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several transport lcores on real DPDK ports: two droce devices on
 * net_af_packet with qpairs=2 over a veth pair (run_in_netns.sh makes it
 * in a namespace of the test's own), each configured through droce_init's
 * options with --droce-transport-lcores=1,2: the port gets two queue
 * pairs, the kernel's PACKET_FANOUT hash spreads received frames over
 * them, and each device's QPs are sharded over lcores 1 and 2 (QP n on
 * lcore 1 + n % 2); lib/net (ARP, ND) runs on shard 0.  EAL
 * "--lcores 0@0,1@1,2@1": three lcores on a 2-CPU machine, so the busy
 * lcores 1 and 2 share a CPU (timeouts generous, no speed asserted).
 *
 * Eight RC QP pairs, one CQ per device for all of them (QPs of both
 * shards complete into it), WRITE, READ, SEND, FETCH_ADD and CMP_SWP on
 * every QP at once, byte and completion checks, IPv4-mapped and IPv6
 * GIDs; then: both shards received frames from their own queue (fanout
 * put frames on queue 1) and worked, and what landed on the wrong queue
 * was handed over (shard_handoff_rx), never lost; once shard 0 resolved a
 * peer's MAC for shard 1, shard 1 sends on its own queue only.
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
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"

#define NQP 8
#define REGION (256u << 10)
#define BUF (NQP * REGION + (64u << 10))
#define MSG (24u << 10)
#define NOPS 5
#define T_OUT 60.0

#define OFF_WRITE 0u
#define OFF_READ (64u << 10)
#define OFF_SEND (128u << 10)
#define OFF_RES (192u << 10)		/* the atomics' old values */
#define OFF_ATOMIC (NQP * REGION)	/* one word per QP, in b */

struct end {
	struct droce_context *ctx;
	struct droce_pd *pd;
	struct droce_mr *mr;
	struct droce_cq *cq;
	struct droce_qp *qp[NQP];
	uint8_t *buf;
};

static struct end a, b;

static void
open_end(struct end *e, struct droce_device *dev)
{
	e->ctx = droce_open_device(dev);
	assert_non_null(e->ctx);
	dp_alloc_end(e->ctx, BUF, DP_REMOTE_ALL, 1024, &e->pd, &e->buf, &e->mr, &e->cq);
}

static void
close_end(struct end *e)
{
	assert_int_equal(droce_destroy_cq(e->cq), 0);
	assert_int_equal(droce_dereg_mr(e->mr), 0);
	assert_int_equal(droce_dealloc_pd(e->pd), 0);
	assert_int_equal(droce_close_device(e->ctx), 0);
	free(e->buf);
}

static void
make_qps(int gid_index)
{
	/* timeout 14 (67 ms): lcores 1 and 2 share a CPU */
	const struct dp_rc_params p = DP_RC_PARAMS(gid_index);
	unsigned int shard1 = 0;

	for (int q = 0; q < NQP; q++) {
		a.qp[q] = dp_create_rc_qp(a.pd, a.cq);
		b.qp[q] = dp_create_rc_qp(b.pd, b.cq);
		dp_connect_rc(a.qp[q], b.ctx, b.qp[q]->qp_num, &p);
		dp_connect_rc(b.qp[q], a.ctx, a.qp[q]->qp_num, &p);
		shard1 += a.qp[q]->qp_num % 2;
	}
	assert_int_equal(shard1, NQP / 2);	/* spread over both shards */
}

static void
destroy_qps(void)
{
	for (int q = 0; q < NQP; q++) {
		assert_int_equal(droce_destroy_qp(a.qp[q]), 0);
		assert_int_equal(droce_destroy_qp(b.qp[q]), 0);
	}
}

static uint32_t
msg_len(uint32_t seed, int q)
{
	return 1 + (seed * 7919u + (uint32_t)q * 2713u) % MSG;
}

static int
poll_n(struct end *e, struct droce_wc *wc, int n)
{
	double end = dp_now() + T_OUT;
	int got = 0;

	while (got < n && dp_now() < end) {
		int r = droce_poll_cq(e->cq, n - got, wc + got);

		assert_true(r >= 0);
		got += r;
	}
	return got;
}

static void
exercise(uint32_t seed)
{
	static const enum droce_wc_opcode ops[NOPS] = {
		DROCE_WC_RDMA_WRITE, DROCE_WC_RDMA_READ, DROCE_WC_SEND,
		DROCE_WC_FETCH_ADD, DROCE_WC_COMP_SWAP,
	};
	struct droce_wc wc[NQP * NOPS];
	int next[NQP] = { 0 };

	for (int q = 0; q < NQP; q++) {
		uint8_t *la = a.buf + q * REGION, *lb = b.buf + q * REGION;
		uint64_t *word = (uint64_t *)(b.buf + OFF_ATOMIC) + q;
		uint32_t n = msg_len(seed, q), k = a.mr->lkey, rk = b.mr->rkey;
		struct droce_sge rs = { (uintptr_t)(lb + OFF_SEND), MSG, b.mr->lkey };
		struct droce_recv_wr rw = { .wr_id = (uint64_t)q * 100 + 9,
					    .sg_list = &rs, .num_sge = 1 }, *rbad;

		for (uint32_t i = 0; i < MSG; i++)
			la[OFF_WRITE + i] = (uint8_t)(i * 13 + seed + (uint32_t)q);
		memset(lb + OFF_WRITE, 0, MSG + 1);
		memset(la + OFF_READ, 0, MSG + 1);
		memset(lb + OFF_SEND, 0, MSG + 1);
		*word = 1000 + (uint64_t)q;
		assert_int_equal(droce_post_recv(b.qp[q], &rw, &rbad), 0);
		assert_int_equal(dp_post(a.qp[q], DROCE_WR_RDMA_WRITE, (uint64_t)q * 100,
				      la + OFF_WRITE, n, k, lb + OFF_WRITE, rk, 0, 0), 0);
		assert_int_equal(dp_post(a.qp[q], DROCE_WR_RDMA_READ, (uint64_t)q * 100 + 1,
				      la + OFF_READ, n, k, lb + OFF_WRITE, rk, 0, 0), 0);
		assert_int_equal(dp_post(a.qp[q], DROCE_WR_SEND, (uint64_t)q * 100 + 2,
				      la + OFF_WRITE, n, k, NULL, 0, 0, 0), 0);
		assert_int_equal(dp_post(a.qp[q], DROCE_WR_ATOMIC_FETCH_AND_ADD,
				      (uint64_t)q * 100 + 3, la + OFF_RES, 8, k, word, rk,
				      5, 0), 0);
		assert_int_equal(dp_post(a.qp[q], DROCE_WR_ATOMIC_CMP_AND_SWP,
				      (uint64_t)q * 100 + 4, la + OFF_RES + 8, 8, k, word,
				      rk, 1005 + (uint64_t)q, 0xABCD0000u + (uint64_t)q), 0);
	}
	/* one CQ for the QPs of both shards */
	assert_int_equal(poll_n(&a, wc, NQP * NOPS), NQP * NOPS);
	for (int i = 0; i < NQP * NOPS; i++) {
		int q = (int)(wc[i].wr_id / 100), op = (int)(wc[i].wr_id % 100);

		if (wc[i].status != DROCE_WC_SUCCESS)
			fail_msg("wr %llu: %s", (unsigned long long)wc[i].wr_id,
				 droce_wc_status_str(wc[i].status));
		assert_true(q < NQP);
		assert_int_equal(op, next[q]);	/* a QP's WRs complete in order */
		next[q]++;
		assert_int_equal(wc[i].opcode, ops[op]);
		assert_int_equal(wc[i].qp_num, a.qp[q]->qp_num);
	}
	assert_int_equal(poll_n(&b, wc, NQP), NQP);
	for (int i = 0; i < NQP; i++) {
		int q = (int)(wc[i].wr_id / 100);

		assert_int_equal(wc[i].status, DROCE_WC_SUCCESS);
		assert_true(q < NQP);
		assert_int_equal(wc[i].opcode, DROCE_WC_RECV);
		assert_int_equal(wc[i].qp_num, b.qp[q]->qp_num);
		assert_int_equal(wc[i].byte_len, msg_len(seed, q));
	}
	for (int q = 0; q < NQP; q++) {
		uint8_t *la = a.buf + q * REGION, *lb = b.buf + q * REGION;
		uint64_t old[2], word = ((uint64_t *)(b.buf + OFF_ATOMIC))[q];
		uint32_t n = msg_len(seed, q);

		assert_memory_equal(lb + OFF_WRITE, la + OFF_WRITE, n);
		assert_int_equal(lb[OFF_WRITE + n], 0);
		assert_memory_equal(la + OFF_READ, la + OFF_WRITE, n);
		assert_memory_equal(lb + OFF_SEND, la + OFF_WRITE, n);
		memcpy(old, la + OFF_RES, sizeof(old));
		assert_true(old[0] == 1000 + (uint64_t)q);
		assert_true(old[1] == 1005 + (uint64_t)q);
		assert_true(word == 0xABCD0000u + (uint64_t)q);
	}
}

static uint64_t
shard_counter(struct end *e, unsigned int shard, const char *name)
{
	for (unsigned int i = 0; i < tp_counter_count(); i++)
		if (strcmp(tp_counter_name(i), name) == 0)
			return tp_dev_shard_counter(verbs_tp(e->ctx), shard, i);
	fail_msg("no counter %s", name);
	return 0;
}

static void
check_shards(struct end *e, const char *name)
{
	struct tp_dev *dev = verbs_tp(e->ctx);

	assert_int_equal(tp_dev_shards(dev), 2);
	printf("# %s: from own queue: shard 0 %llu, shard 1 %llu; rcvd: shard 0 %llu, "
	       "shard 1 %llu; handed over %llu, to shard 0 for tx %llu, dropped %llu\n",
	       name,
	       (unsigned long long)shard_counter(e, 0, "shard_link_rx"),
	       (unsigned long long)shard_counter(e, 1, "shard_link_rx"),
	       (unsigned long long)shard_counter(e, 0, "rcvd_pkts"),
	       (unsigned long long)shard_counter(e, 1, "rcvd_pkts"),
	       (unsigned long long)droce_get_counter(e->ctx, "shard_handoff_rx"),
	       (unsigned long long)droce_get_counter(e->ctx, "shard_handoff_tx"),
	       (unsigned long long)droce_get_counter(e->ctx, "shard_handoff_drop"));
	/* the kernel's fanout put frames on both queues */
	assert_true(shard_counter(e, 0, "shard_link_rx") > 0);
	assert_true(shard_counter(e, 1, "shard_link_rx") > 0);
	/* both shards ran their QPs */
	assert_true(shard_counter(e, 0, "rcvd_pkts") > 0);
	assert_true(shard_counter(e, 1, "rcvd_pkts") > 0);
}

static void
test_sharded_devices(void **state)
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
	assert_int_equal(rte_eal_get_lcore_state(1), RUNNING);
	assert_int_equal(rte_eal_get_lcore_state(2), RUNNING);
	rx_lcores_watch("net_af_packet0", 2, &rx0);
	rx_lcores_watch("net_af_packet1", 2, &rx1);

	make_qps(0);			/* IPv4-mapped GIDs: ARP on shard 0 */
	exercise(1);
	/*
	 * Shard 1's QPs went to RTR before ARP had answered: their first
	 * frames went through shard 0, which resolved them and told shard 1
	 * the MAC.  From now on shard 1 sends on its own queue only.
	 */
	{
		uint64_t via0 = droce_get_counter(a.ctx, "shard_handoff_tx") +
				droce_get_counter(b.ctx, "shard_handoff_tx");

		exercise(2);
		assert_true(droce_get_counter(a.ctx, "shard_handoff_tx") +
			    droce_get_counter(b.ctx, "shard_handoff_tx") == via0);
	}
	destroy_qps();
	make_qps(1);			/* IPv6 GIDs: neighbour discovery */
	exercise(3);
	destroy_qps();
	check_shards(&a, "a");
	check_shards(&b, "b");
	close_end(&a);
	close_end(&b);
	/* shard k took the frames of queue k, on lcore 1 + k */
	for (uint16_t q = 0; q < 2; q++) {
		assert_int_equal(rx_lcores_of(&rx0, q), UINT64_C(1) << (1 + q));
		assert_int_equal(rx_lcores_of(&rx1, q), UINT64_C(1) << (1 + q));
	}
	/* the last device closed: both lcores stopped and waited for */
	assert_int_equal(rte_eal_get_lcore_state(1), WAIT);
	assert_int_equal(rte_eal_get_lcore_state(2), WAIT);
}

int
main(int argc, char **argv)
{
	char v0[160], v1[160], prefix[64];
	const char *veth = getenv("DROCE_TEST_VETH");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sharded_devices),
	};
	char *args[40];
	int nargs = 0, rc;

	(void)argc;
	if (veth == NULL || strchr(veth, ',') == NULL) {
		fprintf(stderr, "DROCE_TEST_VETH=ifa,ifb not set (run via run_in_netns.sh)\n");
		return 1;
	}
	snprintf(v0, sizeof(v0),
		 "net_af_packet0,iface=%.*s,qpairs=2,framesz=8192,blocksz=8192",
		 (int)(strchr(veth, ',') - veth), veth);
	snprintf(v1, sizeof(v1),
		 "net_af_packet1,iface=%s,qpairs=2,framesz=8192,blocksz=8192",
		 strchr(veth, ',') + 1);
	printf("# ports: net_af_packet qpairs=2 on veth %s; app lcore 0, "
	       "transport lcores 1 and 2\n", veth);
	snprintf(prefix, sizeof(prefix), "--file-prefix=droce-shards-%d", getpid());
	(void)dp_eal_args(args, &nargs, argv[0], "--lcores", "0@0,1@1,2@1", prefix);
	dp_vdev_args(args, &nargs, v0, v1);
	args[nargs++] = "--droce-port=net_af_packet0";
	args[nargs++] = "--droce-ipv4=198.18.13.1/24";
	args[nargs++] = "--droce-ipv6=2001:2:0:13::1/64";
	args[nargs++] = "--droce-mtu=4200";
	args[nargs++] = "--droce-transport-lcores=1,2";
	args[nargs++] = "--droce-port=net_af_packet1";
	args[nargs++] = "--droce-ipv4=198.18.13.2/24";
	args[nargs++] = "--droce-ipv6=2001:2:0:13::2/64";
	args[nargs++] = "--droce-mtu=4200";
	args[nargs++] = "--droce-transport-lcores=1,2";
	args[nargs] = NULL;
	if (droce_init(nargs, args) < 0) {
		perror("droce_init");
		return 1;
	}
	rc = cmocka_run_group_tests_name("lcores_shards_af_packet", tests, NULL, NULL);
	droce_cleanup();
	return rc;
}
