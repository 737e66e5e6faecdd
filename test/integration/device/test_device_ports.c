/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two droce devices on real DPDK ports in one process, configured only
 * through droce_init()'s --droce-* options, peers found by ARP (IPv4) and
 * neighbour discovery (IPv6) through lib/net.  RC WRITE/READ/SEND/atomics
 * with byte checks.
 *
 * The ports: net_af_packet on the two ends of a veth pair when
 * DROCE_TEST_VETH="ifa,ifb" is set (run_in_netns.sh makes the pair in a
 * namespace of its own: what meson runs), else a net_memif server and
 * client joined by a socket.  (DPDK 22.11's memif PMD now and then dies in
 * its interrupt thread when one side closes, so the suite uses veth.)
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

#include "dev_pair.h"
#include "droce.h"

#define BUF (4u << 20)

static struct dp_end a, b;

static int
poll_one(struct dp_end *e, struct dp_end *other, struct droce_wc *wc, double timeout)
{
	double end = dp_now() + timeout;

	while (dp_now() < end) {
		int n;

		droce_progress(other->ctx);
		n = droce_poll_cq(e->cq, 1, wc);
		if (n != 0)
			return n;
	}
	return 0;
}

static void
open_end(struct dp_end *e, struct droce_device *dev)
{
	struct droce_port_attr pa;

	e->ctx = droce_open_device(dev);
	assert_non_null(e->ctx);
	assert_int_equal(droce_query_port(e->ctx, 1, &pa), 0);
	assert_int_equal(pa.link_layer, DROCE_LINK_LAYER_ETHERNET);
	assert_int_equal(pa.gid_tbl_len, 2);
	assert_int_equal(pa.state, DROCE_PORT_ACTIVE);
	assert_int_equal(pa.phys_state, DROCE_PORT_PHYS_STATE_LINK_UP);
	assert_int_equal(pa.max_mtu, DROCE_MTU_4096);
	assert_int_equal(pa.port_cap_flags, DROCE_PORT_IP_BASED_GIDS);
	assert_int_equal(pa.max_msg_sz, 1u << 31);
	assert_int_equal(pa.pkey_tbl_len, 16);
	assert_int_equal(pa.bad_pkey_cntr, 0);
	assert_int_equal(pa.qkey_viol_cntr, 0);
	assert_int_equal(pa.max_vl_num, 1);
	assert_int_equal(pa.lid, 0);
	assert_int_equal(pa.sm_lid, 0);
	/* net_af_packet (the suite runs it on veth) reports 10 Gb/s: 1X FDR10, as Linux */
	printf("# port speed: width %u speed %u\n", pa.active_width, pa.active_speed);
	assert_int_equal(pa.active_width, DROCE_WIDTH_1X);
	assert_int_equal(pa.active_speed, DROCE_SPEED_FDR10);
	dp_alloc_end(e->ctx, BUF, DP_REMOTE_ALL, 256, &e->pd, &e->buf, &e->mr, &e->cq);
}

static void
make_qps(int gid_index)
{
	const struct dp_rc_params p = DP_RC_PARAMS(gid_index);

	a.qp = dp_create_rc_qp(a.pd, a.cq);
	b.qp = dp_create_rc_qp(b.pd, b.cq);
	dp_connect_rc(a.qp, b.ctx, b.qp->qp_num, &p);
	dp_connect_rc(b.qp, a.ctx, a.qp->qp_num, &p);
}

static int
post(struct droce_qp *qp, enum droce_wr_opcode op, void *l, uint32_t len,
     uint32_t lkey, void *r, uint32_t rkey, uint64_t add)
{
	return dp_post(qp, op, 0, l, len, lkey, r, rkey, add, 0);
}

static void
exercise(void)
{
	struct droce_sge rs = { (uintptr_t)b.buf + 3 * 65536, 65536, b.mr->lkey };
	struct droce_recv_wr rw = { .wr_id = 7, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct droce_wc wc;

	for (uint32_t i = 0; i < 65536; i++)
		a.buf[i] = (uint8_t)(i * 13 + 5);
	/* WRITE: the first packet needs ARP/ND first; it waits in lib/net */
	assert_int_equal(post(a.qp, DROCE_WR_RDMA_WRITE, a.buf, 65536, a.mr->lkey,
			      b.buf, b.mr->rkey, 0), 0);
	assert_int_equal(poll_one(&a, &b, &wc, 10), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_memory_equal(b.buf, a.buf, 65536);
	/* READ it back elsewhere */
	assert_int_equal(post(a.qp, DROCE_WR_RDMA_READ, a.buf + 65536, 65536, a.mr->lkey,
			      b.buf, b.mr->rkey, 0), 0);
	assert_int_equal(poll_one(&a, &b, &wc, 10), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_memory_equal(a.buf + 65536, a.buf, 65536);
	/* SEND into a posted buffer */
	assert_int_equal(droce_post_recv(b.qp, &rw, &rbad), 0);
	assert_int_equal(post(a.qp, DROCE_WR_SEND, a.buf, 5000, a.mr->lkey, NULL, 0, 0), 0);
	assert_int_equal(poll_one(&a, &b, &wc, 10), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(poll_one(&b, &a, &wc, 10), 1);
	assert_int_equal(wc.byte_len, 5000);
	assert_memory_equal(b.buf + 3 * 65536, a.buf, 5000);
	/* FETCH_ADD */
	*(uint64_t *)(b.buf + 2 * 65536) = 1000;
	assert_int_equal(post(a.qp, DROCE_WR_ATOMIC_FETCH_AND_ADD, a.buf + 4 * 65536, 8,
			      a.mr->lkey, b.buf + 2 * 65536, b.mr->rkey, 24), 0);
	assert_int_equal(poll_one(&a, &b, &wc, 10), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_true(*(uint64_t *)(a.buf + 4 * 65536) == 1000);
	assert_true(*(uint64_t *)(b.buf + 2 * 65536) == 1024);
}

static void
test_two_devices_over_memif_ipv4_and_ipv6(void **state)
{
	struct droce_device **list;
	int n;

	(void)state;
	list = droce_get_device_list(&n);
	assert_non_null(list);
	assert_int_equal(n, 2);
	assert_string_equal(droce_get_device_name(list[0]), "droce0");
	open_end(&a, list[0]);
	open_end(&b, list[1]);
	droce_free_device_list(list);

	make_qps(0);			/* IPv4-mapped GIDs: ARP */
	exercise();
	assert_int_equal(droce_destroy_qp(a.qp), 0);
	assert_int_equal(droce_destroy_qp(b.qp), 0);
	make_qps(1);			/* IPv6 GIDs: neighbour discovery */
	exercise();
	assert_int_equal(droce_destroy_qp(a.qp), 0);
	assert_int_equal(droce_destroy_qp(b.qp), 0);

	/* the memif client (b) first: a DPDK 22.11 memif server closed while
	 * its in-process client is still connected raced with the EAL
	 * interrupt thread (a rare crash seen under meson test) */
	for (struct dp_end *e = &b; e != NULL; e = e == &b ? &a : NULL) {
		assert_int_equal(droce_destroy_cq(e->cq), 0);
		assert_int_equal(droce_dereg_mr(e->mr), 0);
		assert_int_equal(droce_dealloc_pd(e->pd), 0);
		assert_int_equal(droce_close_device(e->ctx), 0);
		free(e->buf);
	}
}

int
main(int argc, char **argv)
{
	char sock[64], v0[160], v1[160], prefix[64];
	const char *veth = getenv("DROCE_TEST_VETH");
	const char *port0 = "--droce-port=net_memif0", *port1 = "--droce-port=net_memif1";
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_devices_over_memif_ipv4_and_ipv6),
	};
	char *args[32];
	int nargs = 0, rc, consumed;

	(void)argc;
	snprintf(sock, sizeof(sock), "/tmp/droce-memif-%d.sock", getpid());
	if (veth != NULL && strchr(veth, ',') != NULL) {
		snprintf(v0, sizeof(v0), "net_af_packet0,iface=%.*s,framesz=8192,blocksz=8192",
			 (int)(strchr(veth, ',') - veth), veth);
		snprintf(v1, sizeof(v1), "net_af_packet1,iface=%s,framesz=8192,blocksz=8192",
			 strchr(veth, ',') + 1);
		port0 = "--droce-port=net_af_packet0";
		port1 = "--droce-port=net_af_packet1";
		printf("# ports: net_af_packet on veth %s\n", veth);
	} else {
		snprintf(v0, sizeof(v0), "net_memif0,role=server,socket=%s,bsize=8192", sock);
		snprintf(v1, sizeof(v1), "net_memif1,role=client,socket=%s,bsize=8192", sock);
		printf("# ports: net_memif server and client\n");
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=droce-memif-%d", getpid());
	if (dp_eal_args(args, &nargs, argv[0], "-l", "0", prefix))
		printf("# WARNING: EAL with --no-huge (DROCE_NO_HUGE=1)\n");
	else
		printf("# EAL with hugepages\n");
	dp_vdev_args(args, &nargs, v0, v1);
	args[nargs++] = (char *)port0;
	args[nargs++] = "--droce-ipv4=198.18.9.1/24";
	args[nargs++] = "--droce-ipv6=2001:2:0:9::1/64";
	args[nargs++] = "--droce-mtu=4200";
	args[nargs++] = (char *)port1;
	args[nargs++] = "--droce-ipv4=198.18.9.2/24";
	args[nargs++] = "--droce-ipv6=2001:2:0:9::2/64";
	args[nargs++] = "--droce-mtu=4200";
	args[nargs++] = "app-arg";
	args[nargs] = NULL;
	consumed = droce_init(nargs, args);
	if (consumed < 0) {
		perror("droce_init");
		return 1;
	}
	/* droce's options were taken; the program's own argument remains */
	if (nargs - consumed != 2 || strcmp(args[consumed + 1], "app-arg") != 0) {
		fprintf(stderr, "droce_init left %d arguments\n", nargs - consumed);
		return 1;
	}
	rc = cmocka_run_group_tests_name("device_two_ports", tests, NULL, NULL);
	droce_cleanup();
	unlink(sock);
	return rc;
}
