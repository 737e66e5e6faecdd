/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The first message to a new peer: two droce devices (net_af_packet on the
 * two ends of a veth pair, run_in_netns.sh) that have never talked: the
 * program runs the RC cases or the UC cases (argument "rc" or "uc", one
 * process each), and within one the IPv4 and the IPv6 peer are different
 * neighbours, each new to the other side.  The QPs go to RTR
 * (which starts the ARP/ND resolution) and RTS, and a many-packet message
 * is posted at once, before any answer can have been received: lib/net
 * holds the packets within its byte budget and sends them, in order, when
 * the peer's MAC is known.
 *   RC: a 64-packet WRITE arrives with no PSN sequence NAK at the
 *       responder and no packet sent again (exact counters), IPv4 and IPv6;
 *   UC: a 16-packet SEND is delivered (UC never resends: one packet lost
 *       and the message is gone), IPv4 and IPv6.
 * Path MTU 1024 and payload sizes are chosen so the packet counts are
 * exact.  Device a captures (--droce-capture): every RoCEv2 frame it sent
 * is in the file once, when it was sent, with the peer's MAC (a held frame
 * is captured when lib/net releases it, never while it waits; the file
 * also holds the port's ARP and ND frames).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dev_pair.h"
#include "droce.h"

#define BUF (1u << 20)
#define RC_PKTS 64		/* 64 KiB at path MTU 1024 */
#define UC_PKTS 16
#define GID_IPV4 0
#define GID_IPV6 1

static struct droce_device **devs;
static struct dp_end a, b;
static uint64_t a_sent;		/* a's sent_pkts when it closed */

static int
open_pair(void **state)
{
	(void)state;
	a.ctx = droce_open_device(devs[0]);
	b.ctx = droce_open_device(devs[1]);
	assert_non_null(a.ctx);
	assert_non_null(b.ctx);
	dp_alloc_end(a.ctx, BUF, DP_REMOTE_ALL, 64, &a.pd, &a.buf, &a.mr, &a.cq);
	dp_alloc_end(b.ctx, BUF, DP_REMOTE_ALL, 64, &b.pd, &b.buf, &b.mr, &b.cq);
	for (uint32_t i = 0; i < BUF; i++)
		a.buf[i] = (uint8_t)(i * 7 + 3);
	return 0;
}

static int
close_pair(void **state)
{
	(void)state;
	a_sent = droce_get_counter(a.ctx, "sent_pkts");
	dp_close_end(&a);
	dp_close_end(&b);
	return 0;
}

static int
destroy_qps(void **state)
{
	(void)state;
	assert_int_equal(droce_destroy_qp(a.qp), 0);
	assert_int_equal(droce_destroy_qp(b.qp), 0);
	memset(b.buf, 0, BUF);
	return 0;
}

/* The counters of both ends when a case starts: its own are the deltas. */
static const char *const names[] = {
	"sent_pkts", "retransmitted_pkts", "sent_seq_nak", "out_of_seq_request",
};
#define NNAMES (sizeof(names) / sizeof(names[0]))
static uint64_t base_a[NNAMES], base_b[NNAMES];

static unsigned int
name_index(const char *name)
{
	for (unsigned int i = 0; i < NNAMES; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	fail_msg("counter %s not sampled", name);
	return 0;
}

static uint64_t
counter_now(struct dp_end *e, const char *name)
{
	uint64_t v = droce_get_counter(e->ctx, name);

	assert_int_not_equal(v, UINT64_MAX);
	return v;
}

static void
sample_base(void)
{
	for (unsigned int i = 0; i < NNAMES; i++) {
		base_a[i] = counter_now(&a, names[i]);
		base_b[i] = counter_now(&b, names[i]);
	}
}

/* How much the counter of end e grew in this case. */
static uint64_t
counter(struct dp_end *e, const char *name)
{
	unsigned int i = name_index(name);

	return counter_now(e, name) - (e == &a ? base_a[i] : base_b[i]);
}

/*
 * a is in RTS and has posted; b has not been polled (nor moved its QP to
 * RTR), so no answer to a's ARP request / NS can be in: a builds its
 * packets now, and lib/net holds every one of them until b answers.
 */
static void
hold_first_packets(uint64_t npkts)
{
	for (int i = 0; i < 100 && counter(&a, "sent_pkts") < npkts; i++)
		droce_progress(a.ctx);
	assert_int_equal(counter(&a, "sent_pkts"), npkts);
}

static void
check_first_rc_write(int gid_index)
{
	const struct dp_rc_params p = DP_RC_PARAMS(gid_index);
	struct droce_wc wc;

	sample_base();
	a.qp = dp_create_rc_qp(a.pd, a.cq);
	b.qp = dp_create_rc_qp(b.pd, b.cq);
	dp_connect_rc(a.qp, b.ctx, b.qp->qp_num, &p);
	assert_int_equal(dp_post(a.qp, DROCE_WR_RDMA_WRITE, 1, a.buf, RC_PKTS * 1024,
				 a.mr->lkey, b.buf, b.mr->rkey, 0, 0), 0);
	hold_first_packets(RC_PKTS);
	dp_connect_rc(b.qp, a.ctx, a.qp->qp_num, &p);
	assert_int_equal(dp_poll_one(a.cq, b.ctx, &wc, 10), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 1);
	assert_memory_equal(b.buf, a.buf, RC_PKTS * 1024);
	/* every packet once, in order: no gap at the responder, no resend */
	assert_int_equal(counter(&a, "sent_pkts"), RC_PKTS);
	assert_int_equal(counter(&a, "retransmitted_pkts"), 0);
	assert_int_equal(counter(&b, "sent_seq_nak"), 0);
	assert_int_equal(counter(&b, "out_of_seq_request"), 0);
}

static void
test_rc_first_write_ipv4(void **state)
{
	(void)state;
	check_first_rc_write(GID_IPV4);
}

static void
test_rc_first_write_ipv6(void **state)
{
	(void)state;
	check_first_rc_write(GID_IPV6);
}

static struct droce_qp *
create_uc_qp(struct dp_end *e)
{
	struct droce_qp_init_attr ia = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = DROCE_QPT_UC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct droce_qp *qp = droce_create_qp(e->pd, &ia);

	assert_non_null(qp);
	return qp;
}

static void
connect_uc(struct droce_qp *self, struct droce_context *peer_ctx, uint32_t peer_qpn,
	   int gid_index)
{
	struct droce_qp_attr at;
	union droce_gid dgid;

	assert_int_equal(droce_query_gid(peer_ctx, 1, gid_index, &dgid), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = DROCE_QPS_INIT;
	at.port_num = 1;
	assert_int_equal(droce_modify_qp(self, &at, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX |
					 DROCE_QP_PORT | DROCE_QP_ACCESS_FLAGS), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = DROCE_QPS_RTR;
	at.path_mtu = DROCE_MTU_1024;
	at.dest_qp_num = peer_qpn;
	at.rq_psn = 200;
	at.ah_attr.is_global = 1;
	at.ah_attr.port_num = 1;
	at.ah_attr.grh.dgid = dgid;
	at.ah_attr.grh.sgid_index = (uint8_t)gid_index;
	at.ah_attr.grh.hop_limit = 1;
	assert_int_equal(droce_modify_qp(self, &at, DROCE_QP_STATE | DROCE_QP_AV |
					 DROCE_QP_PATH_MTU | DROCE_QP_DEST_QPN |
					 DROCE_QP_RQ_PSN), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = DROCE_QPS_RTS;
	at.sq_psn = 200;
	assert_int_equal(droce_modify_qp(self, &at, DROCE_QP_STATE | DROCE_QP_SQ_PSN), 0);
}

static void
check_first_uc_send(int gid_index)
{
	struct droce_sge rs = { (uintptr_t)b.buf, UC_PKTS * 1024, b.mr->lkey };
	struct droce_recv_wr rw = { .wr_id = 9, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct droce_wc wc;

	sample_base();
	a.qp = create_uc_qp(&a);
	b.qp = create_uc_qp(&b);
	connect_uc(a.qp, b.ctx, b.qp->qp_num, gid_index);
	assert_int_equal(dp_post(a.qp, DROCE_WR_SEND, 2, a.buf, UC_PKTS * 1024,
				 a.mr->lkey, NULL, 0, 0, 0), 0);
	hold_first_packets(UC_PKTS);
	connect_uc(b.qp, a.ctx, a.qp->qp_num, gid_index);
	assert_int_equal(droce_post_recv(b.qp, &rw, &rbad), 0);
	assert_int_equal(dp_poll_one(a.cq, b.ctx, &wc, 10), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(dp_poll_one(b.cq, a.ctx, &wc, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 9);
	assert_int_equal(wc.byte_len, UC_PKTS * 1024);
	assert_memory_equal(b.buf, a.buf, UC_PKTS * 1024);
	assert_int_equal(counter(&a, "sent_pkts"), UC_PKTS);
}

static void
test_uc_first_send_ipv4(void **state)
{
	(void)state;
	check_first_uc_send(GID_IPV4);
}

static void
test_uc_first_send_ipv6(void **state)
{
	(void)state;
	check_first_uc_send(GID_IPV6);
}

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* A RoCEv2 frame (UDP destination port 4791 over IPv4 or IPv6)? */
static bool
is_roce(const uint8_t *f, uint32_t len)
{
	uint16_t type = (uint16_t)(f[12] << 8 | f[13]);
	uint32_t udp;

	if (type == 0x0800 && len >= 14 + 20 && f[14 + 9] == 17)
		udp = 14 + (uint32_t)(f[14] & 0xf) * 4;
	else if (type == 0x86dd && len >= 14 + 40 && f[14 + 6] == 17)
		udp = 14 + 40;
	else
		return false;
	return len >= udp + 8 && f[udp + 2] == 0x12 && f[udp + 3] == 0xb7;
}

/*
 * a's capture (pcapng, little-endian as rte_pcapng writes it on x86): its
 * own RoCEv2 frames are those from the source MAC of the first one (a
 * sends first).  Each must name the peer's MAC, and there must be a_sent.
 */
static int
check_capture(const char *path)
{
	static const uint8_t zero[6];
	uint8_t blk[16384], src[6] = { 0 }, dst[6] = { 0 };
	uint64_t out = 0, in = 0;
	FILE *f = fopen(path, "rb");
	int bad = 0;

	if (f == NULL) {
		perror(path);
		return 1;
	}
	while (fread(blk, 1, 8, f) == 8) {
		uint32_t type = le32(blk), len = le32(blk + 4);

		if (len < 12 || len > sizeof(blk) || fread(blk + 8, 1, len - 8, f) != len - 8) {
			fprintf(stderr, "capture: bad block\n");
			bad = 1;
			break;
		}
		if (type != 6 || len < 28 + 14)		/* enhanced packet block */
			continue;
		if (!is_roce(blk + 28, le32(blk + 20)))
			continue;		/* ARP, ND */
		if (out == 0 && in == 0) {
			memcpy(src, blk + 28 + 6, 6);
			memcpy(dst, blk + 28, 6);
		}
		if (memcmp(blk + 28 + 6, src, 6) != 0) {
			in++;
			continue;
		}
		out++;
		if (memcmp(blk + 28, zero, 6) == 0 || memcmp(blk + 28, dst, 6) != 0)
			bad = 1;
	}
	fclose(f);
	printf("# capture: %" PRIu64 " frames out (sent_pkts %" PRIu64 "), %" PRIu64
	       " in%s\n", out, a_sent, in, bad ? ", a frame without the peer's MAC" : "");
	return bad || out != a_sent;
}

int
main(int argc, char **argv)
{
	char v0[160], v1[160], prefix[64], cap_path[64], cap_opt[96];
	const struct CMUnitTest rc_tests[] = {
		cmocka_unit_test_teardown(test_rc_first_write_ipv4, destroy_qps),
		cmocka_unit_test_teardown(test_rc_first_write_ipv6, destroy_qps),
	};
	const struct CMUnitTest uc_tests[] = {
		cmocka_unit_test_teardown(test_uc_first_send_ipv4, destroy_qps),
		cmocka_unit_test_teardown(test_uc_first_send_ipv6, destroy_qps),
	};
	const char *which = argc == 2 ? argv[1] : "";
	char *args[32];
	int nargs = 0, n, rc;

	if (strcmp(which, "rc") != 0 && strcmp(which, "uc") != 0) {
		fprintf(stderr, "usage: %s rc|uc\n", argv[0]);
		return 1;
	}
	if (!dp_veth_vdevs(v0, v1, sizeof(v0))) {
		fprintf(stderr, "DROCE_TEST_VETH=ifa,ifb is needed (run_in_netns.sh sets it)\n");
		return 1;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=droce-first-%d", getpid());
	if (dp_eal_args(args, &nargs, argv[0], "-l", "0", prefix))
		printf("# WARNING: EAL with --no-huge (DROCE_NO_HUGE=1)\n");
	dp_vdev_args(args, &nargs, v0, v1);
	args[nargs++] = "--droce-port=net_af_packet0";
	args[nargs++] = "--droce-ipv4=198.18.10.1/24";
	args[nargs++] = "--droce-ipv6=2001:2:0:10::1/64";
	args[nargs++] = "--droce-mtu=4200";
	snprintf(cap_path, sizeof(cap_path), "/tmp/droce-first-%d.pcapng", getpid());
	snprintf(cap_opt, sizeof(cap_opt), "--droce-capture=%s", cap_path);
	args[nargs++] = cap_opt;
	args[nargs++] = "--droce-port=net_af_packet1";
	args[nargs++] = "--droce-ipv4=198.18.10.2/24";
	args[nargs++] = "--droce-ipv6=2001:2:0:10::2/64";
	args[nargs++] = "--droce-mtu=4200";
	args[nargs] = NULL;
	if (droce_init(nargs, args) < 0) {
		perror("droce_init");
		return 1;
	}
	devs = droce_get_device_list(&n);
	if (devs == NULL || n != 2) {
		fprintf(stderr, "expected 2 devices\n");
		return 1;
	}
	if (strcmp(which, "rc") == 0)
		rc = cmocka_run_group_tests_name("first_frames_rc", rc_tests, open_pair,
						 close_pair);
	else
		rc = cmocka_run_group_tests_name("first_frames_uc", uc_tests, open_pair,
						 close_pair);
	droce_free_device_list(devs);
	droce_cleanup();
	if (rc == 0)
		rc = check_capture(cap_path);
	unlink(cap_path);
	return rc;
}
