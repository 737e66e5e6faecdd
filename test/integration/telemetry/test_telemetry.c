/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Observability on two droce devices over net_memif in one process:
 * RC WRITE/READ/SEND traffic, then droce's DPDK telemetry commands read
 * back through the telemetry socket (as dpdk-telemetry.py does, and with
 * dpdk-telemetry.py itself when installed), checked against the traffic;
 * device 0 captures every frame its port moves (--droce-capture=FILE).
 *
 * usage: test_telemetry CAPTURE.pcapng   (run by telemetry.py, which then
 * checks the capture with tshark, droce-dump and check_icrc.py; the last
 * output line "# capture frames=N roce=M" says how many frames it must
 * hold: N, those the port received and sent, M of them the RoCEv2 frames
 * the transport received and sent)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_eal.h>

#include "dev_pair.h"
#include "droce.h"
#include "roce_wire.h"

#define BUF (1u << 20)
#define WRITE_LEN 65536u
#define READ_LEN 65536u
#define SEND_LEN 5000u
#define MTU 1024u

/* the responder port's ethdev name (telemetry accepts it as DEV) */
static const char *port1_name = "net_memif1";

static struct dp_end a, b;
static char file_prefix[64];
static uint64_t capture_expect, capture_roce;

/* Progress both ends until e's CQ has a completion (or timeout). */
static int
poll_one(struct dp_end *e, struct droce_wc *wc, double timeout)
{
	double end = dp_now() + timeout;

	while (dp_now() < end) {
		int n;

		droce_progress(a.ctx);
		droce_progress(b.ctx);
		n = droce_poll_cq(e->cq, 1, wc);
		if (n != 0)
			return n;
	}
	return 0;
}

/* Let the last ACKs and responses land (both ends idle afterwards). */
static void
settle(double seconds)
{
	double end = dp_now() + seconds;

	while (dp_now() < end) {
		droce_progress(a.ctx);
		droce_progress(b.ctx);
	}
}

/* ---- telemetry client: the protocol of usertools/dpdk-telemetry.py ------ */

static int
tel_query(const char *cmd, char *out, size_t len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ssize_t n;

	if (fd < 0)
		return -1;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/dpdk_telemetry.v2",
		 rte_eal_get_runtime_dir());
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0)
		goto fail;
	n = recv(fd, out, len - 1, 0);		/* {"version": ..., "pid": ...} */
	if (n <= 0)
		goto fail;
	out[n] = '\0';
	if (strstr(out, "\"pid\"") == NULL)
		goto fail;
	if (send(fd, cmd, strlen(cmd), 0) < 0)
		goto fail;
	n = recv(fd, out, len - 1, 0);
	if (n <= 0)
		goto fail;
	out[n] = '\0';
	close(fd);
	printf("# %s -> %.300s%s\n", cmd, out, strlen(out) > 300 ? "..." : "");
	return 0;
fail:
	close(fd);
	return -1;
}

/* The number after "key": in a JSON reply; a missing key fails the test. */
static uint64_t
json_u64(const char *json, const char *key)
{
	char pat[96];
	const char *p;
	char *end;
	uint64_t v;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	if (p == NULL)
		fail_msg("telemetry reply without \"%s\"", key);
	p += strlen(pat);
	v = strtoull(p, &end, 10);
	if (end == p)
		fail_msg("telemetry \"%s\" is not a number: %.20s", key, p);
	return v;
}

static uint64_t
stat_of(const char *dev, const char *key)
{
	char cmd[64], out[32768];

	snprintf(cmd, sizeof(cmd), "/droce/stats,%s", dev);
	assert_int_equal(tel_query(cmd, out, sizeof(out)), 0);
	return json_u64(out, key);
}

/* ---- setup ----------------------------------------------------------------- */

static void
open_end(struct dp_end *e)
{
	dp_alloc_end(e->ctx, BUF, DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ,
		     256, &e->pd, &e->buf, &e->mr, &e->cq);
}

/* GID 0, and no atomic rights: the traffic has none */
static void
connect_qp(struct dp_end *self, struct dp_end *peer)
{
	struct dp_rc_params p = DP_RC_PARAMS(0);

	p.access = DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ;
	dp_connect_rc(self->qp, peer->ctx, peer->qp->qp_num, &p);
}

static int
post(struct droce_qp *qp, enum droce_wr_opcode op, void *l, uint32_t len,
     uint32_t lkey, void *r, uint32_t rkey)
{
	return dp_post(qp, op, 0, l, len, lkey, r, rkey, 0, 0);
}

static void
traffic(void)
{
	struct droce_sge rs = { (uintptr_t)b.buf + 3 * 65536, 65536, b.mr->lkey };
	struct droce_recv_wr rw = { .wr_id = 7, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct droce_wc wc;

	for (uint32_t i = 0; i < WRITE_LEN; i++)
		a.buf[i] = (uint8_t)(i * 13 + 5);
	assert_int_equal(post(a.qp, DROCE_WR_RDMA_WRITE, a.buf, WRITE_LEN, a.mr->lkey,
			      b.buf, b.mr->rkey), 0);
	assert_int_equal(poll_one(&a, &wc, 10), 1);
	if (wc.status != DROCE_WC_SUCCESS) {
		char o[32768];

		/* what went wrong, in the counters */
		if (tel_query("/droce/stats,0", o, sizeof(o)) == 0)
			puts(o);
		if (tel_query("/droce/stats,1", o, sizeof(o)) == 0)
			puts(o);
	}
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_memory_equal(b.buf, a.buf, WRITE_LEN);
	assert_int_equal(post(a.qp, DROCE_WR_RDMA_READ, a.buf + 65536, READ_LEN,
			      a.mr->lkey, b.buf, b.mr->rkey), 0);
	assert_int_equal(poll_one(&a, &wc, 10), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_memory_equal(a.buf + 65536, a.buf, READ_LEN);
	assert_int_equal(droce_post_recv(b.qp, &rw, &rbad), 0);
	assert_int_equal(post(a.qp, DROCE_WR_SEND, a.buf, SEND_LEN, a.mr->lkey, NULL, 0), 0);
	assert_int_equal(poll_one(&a, &wc, 10), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(poll_one(&b, &wc, 10), 1);
	assert_int_equal(wc.byte_len, SEND_LEN);
	settle(0.2);
}

/*
 * dpdk-telemetry.py (DPDK's own client, in Debian's dpdk-dev package that
 * usertools/droce-setup installs) against this live process; without it
 * the check fails.
 */
static void
check_with_dpdk_telemetry_py(uint32_t qpn)
{
	char cmd[256], line[512];
	bool rts = false, qpn_seen = false;
	FILE *p;

	if (access("/usr/bin/dpdk-telemetry.py", X_OK) != 0)
		fail_msg("/usr/bin/dpdk-telemetry.py not installed (package dpdk-dev, usertools/droce-setup)");
	snprintf(cmd, sizeof(cmd),
		 "echo /droce/qp/info,%u,droce0 | /usr/bin/dpdk-telemetry.py -f %s 2>&1",
		 qpn, file_prefix);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p) != NULL) {
		printf("# dpdk-telemetry.py: %s", line);
		if (strstr(line, "\"state\": \"RTS\"") != NULL)
			rts = true;
		if (strstr(line, "\"qpn\":") != NULL &&
		    strtoul(strstr(line, "\"qpn\":") + 6, NULL, 10) == qpn)
			qpn_seen = true;
	}
	assert_int_equal(pclose(p), 0);
	assert_true(rts);
	assert_true(qpn_seen);
}

static void
test_telemetry_and_capture_over_memif(void **state)
{
	const uint64_t write_pkts = (WRITE_LEN + MTU - 1) / MTU;
	const uint64_t send_pkts = (SEND_LEN + MTU - 1) / MTU;
	char out[32768], cmd[64];
	struct droce_device **list;
	uint64_t sent, rcvd, retrans;
	int n;

	(void)state;
	list = droce_get_device_list(&n);
	assert_non_null(list);
	assert_int_equal(n, 2);
	a.ctx = droce_open_device(list[0]);
	assert_non_null(a.ctx);
	b.ctx = droce_open_device(list[1]);
	assert_non_null(b.ctx);
	droce_free_device_list(list);
	/*
	 * The memif pair connects in EAL's interrupt thread.  Allocate nothing
	 * meanwhile: DPDK 22.11's memif handshake raced with the main thread
	 * in EAL (a rare SIGSEGV in eal-intr-thread, seen with
	 * test/integration/device on memif); wait for both links first.
	 */
	for (double end = dp_now() + 10; dp_now() < end; usleep(1000)) {
		struct droce_port_attr pa, pb;

		assert_int_equal(droce_query_port(a.ctx, 1, &pa), 0);
		assert_int_equal(droce_query_port(b.ctx, 1, &pb), 0);
		if (pa.state == DROCE_PORT_ACTIVE && pb.state == DROCE_PORT_ACTIVE)
			break;
	}
	usleep(20000);
	open_end(&a);
	open_end(&b);

	/* the commands are there, the devices listed, counters all zero */
	assert_int_equal(tel_query("/", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "\"/droce/stats\""));
	assert_non_null(strstr(out, "\"/droce/qp/info\""));
	assert_int_equal(tel_query("/droce/dev/list", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "[\"droce0\",\"droce1\"]"));
	assert_int_equal(stat_of("droce0", "sent_pkts"), 0);

	a.qp = dp_create_rc_qp(a.pd, a.cq);
	b.qp = dp_create_rc_qp(b.pd, b.cq);
	/* a memif server transmits only once its client polled (refilled
	 * its ring): ARP before that is refused by the port and lost */
	settle(0.2);
	connect_qp(&a, &b);
	connect_qp(&b, &a);
	traffic();

	/* /droce/stats: the requester side (droce0, by index and by name) */
	assert_int_equal(tel_query("/droce/stats,0", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "\"device\":\"droce0\""));
	sent = json_u64(out, "sent_pkts");
	rcvd = json_u64(out, "rcvd_pkts");
	retrans = json_u64(out, "retransmitted_pkts");
	/* WRITE packets and one READ request; SEND packets are not RDMA */
	if (retrans == 0)
		assert_int_equal(json_u64(out, "rdma_sends"), write_pkts + 1);
	/* WRITE + READ request + SEND (+ what was sent again); back come
	 * the READ responses and the ACKs */
	assert_int_equal(sent, write_pkts + 1 + send_pkts + retrans);
	assert_int_equal(rcvd, READ_LEN / MTU + json_u64(out, "rcvd_acks"));
	assert_int_equal(json_u64(out, "icrc_err"), 0);
	assert_int_equal(json_u64(out, "retry_exceeded_err"), 0);
	assert_true(json_u64(out, "net_rx_arp_reply") + json_u64(out, "net_rx_arp_request") >= 1);
	/* the port sent droce's RoCE packets and its ARP frames, nothing else */
	assert_int_equal(json_u64(out, "link_tx_pkts"),
			 sent + json_u64(out, "net_tx_arp_request") +
			 json_u64(out, "net_tx_arp_reply"));
	assert_true(json_u64(out, "prot_local_ok") >= 3);
	assert_int_equal(json_u64(out, "prot_local_bad_key"), 0);
	/* the responder side */
	assert_int_equal(stat_of("droce1", "rdma_recvs"), write_pkts + 1 + retrans);
	assert_int_equal(stat_of(port1_name, "prot_remote_ok") >= write_pkts + 1, 1);
	assert_int_equal(stat_of("droce1", "icrc_err"), 0);

	/* /droce/qp/list and /droce/qp/info */
	assert_int_equal(tel_query("/droce/qp/list", out, sizeof(out)), 0);
	snprintf(cmd, sizeof(cmd), "[%u]", a.qp->qp_num);
	assert_non_null(strstr(out, cmd));
	snprintf(cmd, sizeof(cmd), "/droce/qp/info,%u,droce1", b.qp->qp_num);
	assert_int_equal(tel_query(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "\"state\":\"RTS\""));
	assert_non_null(strstr(out, "\"type\":\"RC\""));
	assert_int_equal(json_u64(out, "dest_qpn"), a.qp->qp_num);
	assert_int_equal(json_u64(out, "mtu"), MTU);
	assert_int_equal(json_u64(out, "sq_outstanding"), 0);
	/* the responder expects the PSN after WRITE, READ and SEND */
	assert_int_equal(json_u64(out, "resp_psn"),
			 100 + write_pkts + READ_LEN / MTU + send_pkts);
	snprintf(cmd, sizeof(cmd), "/droce/qp/info,%u", a.qp->qp_num);
	assert_int_equal(tel_query(cmd, out, sizeof(out)), 0);
	assert_int_equal(json_u64(out, "req_psn"),
			 100 + write_pkts + READ_LEN / MTU + send_pkts);
	assert_int_equal(json_u64(out, "comp_psn"), json_u64(out, "req_psn"));
	/* the UDP source port, the QP's congestion control */
	assert_int_equal(json_u64(out, "udp_sport"),
			 roce_udp_sport(a.qp->qp_num, b.qp->qp_num));
	assert_non_null(strstr(out, "\"cc\":\"none\""));
	/* /droce/cc: droce0 at the defaults (mlx5's), droce1 as configured */
	assert_int_equal(tel_query("/droce/cc,droce0", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "\"cc\":\"none\""));
	assert_int_equal(json_u64(out, "ecn"), 2);
	assert_int_equal(json_u64(out, "rp_time_reset"), 300);
	assert_int_equal(json_u64(out, "rp_ai_rate"), 5);
	assert_int_equal(json_u64(out, "np_cnp_dscp"), 48);
	assert_int_equal(tel_query("/droce/cc,droce1", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "\"cc\":\"dcqcn\""));
	assert_int_equal(json_u64(out, "rp_ai_rate"), 10);
	snprintf(cmd, sizeof(cmd), "/droce/qp/info,%u,droce1", b.qp->qp_num);
	assert_int_equal(tel_query(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "\"cc\":\"dcqcn\""));
	assert_int_equal(json_u64(out, "cc_alpha"), 1023);
	/* errors: unknown QP, bad parameters */
	assert_int_equal(tel_query("/droce/qp/info,99999", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "null"));
	assert_int_equal(tel_query("/droce/stats,droce9", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "null"));
	check_with_dpdk_telemetry_py(a.qp->qp_num);

	assert_int_equal(droce_destroy_qp(a.qp), 0);
	assert_int_equal(droce_destroy_qp(b.qp), 0);
	assert_int_equal(tel_query("/droce/qp/list,0", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "[]"));
	/* nothing moves any more: what droce0 captured is fixed */
	sent = stat_of("0", "sent_pkts");
	rcvd = stat_of("0", "rcvd_pkts");
	assert_int_equal(stat_of("0", "link_tx_full"), 0);
	capture_roce = sent + rcvd;
	/* the capture is the port's: ARP and ND too */
	capture_expect = stat_of("0", "link_rx_pkts") + stat_of("0", "link_tx_pkts");
	assert_true(capture_expect > capture_roce);

	/* the memif client (b) first: see test/integration/device */
	for (struct dp_end *e = &b; e != NULL; e = e == &b ? &a : NULL) {
		assert_int_equal(droce_destroy_cq(e->cq), 0);
		assert_int_equal(droce_dereg_mr(e->mr), 0);
		assert_int_equal(droce_dealloc_pd(e->pd), 0);
		assert_int_equal(droce_close_device(e->ctx), 0);
		free(e->buf);
	}
	/* closed devices stay listed, without counters */
	assert_int_equal(tel_query("/droce/stats,droce0", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "\"open\":0"));
	assert_null(strstr(out, "sent_pkts"));
}

int
main(int argc, char **argv)
{
	char sock[64], v0[128], v1[128], prefix[96], capture[512];
	const char *veth = getenv("DROCE_TEST_VETH");
	const char *port0 = "--droce-port=net_memif0", *port1 = "--droce-port=net_memif1";
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_telemetry_and_capture_over_memif),
	};
	char *args[32];
	int nargs = 0, rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CAPTURE.pcapng\n", argv[0]);
		return 2;
	}
	snprintf(capture, sizeof(capture), "--droce-capture=%s", argv[1]);
	snprintf(sock, sizeof(sock), "/tmp/droce-tel-%d.sock", getpid());
	/* net_af_packet on a veth pair when run_in_netns.sh made one (the
	 * suite: memif in one process is racy in DPDK 22.11), else memif */
	if (veth != NULL && strchr(veth, ',') != NULL) {
		snprintf(v0, sizeof(v0), "net_af_packet0,iface=%.*s,framesz=8192,blocksz=8192",
			 (int)(strchr(veth, ',') - veth), veth);
		snprintf(v1, sizeof(v1), "net_af_packet1,iface=%s,framesz=8192,blocksz=8192",
			 strchr(veth, ',') + 1);
		port0 = "--droce-port=net_af_packet0";
		port1 = "--droce-port=net_af_packet1";
		port1_name = "net_af_packet1";
	} else {
		snprintf(v0, sizeof(v0), "net_memif0,role=server,socket=%s,bsize=8192", sock);
		snprintf(v1, sizeof(v1), "net_memif1,role=client,socket=%s,bsize=8192", sock);
	}
	/* a unique prefix: a telemetry socket of our own */
	snprintf(file_prefix, sizeof(file_prefix), "droce-tel-%d", getpid());
	snprintf(prefix, sizeof(prefix), "--file-prefix=%s", file_prefix);
	if (dp_eal_args(args, &nargs, argv[0], "-l", "0", prefix))
		printf("# WARNING: EAL with --no-huge (DROCE_NO_HUGE=1)\n");
	dp_vdev_args(args, &nargs, v0, v1);
	args[nargs++] = (char *)port0;
	args[nargs++] = "--droce-ipv4=198.18.10.1/24";
	args[nargs++] = "--droce-mtu=4200";
	args[nargs++] = capture;
	args[nargs++] = (char *)port1;
	args[nargs++] = "--droce-ipv4=198.18.10.2/24";
	args[nargs++] = "--droce-mtu=4200";
	/* congestion control options, by key and by parameter name */
	args[nargs++] = "--droce-cc=dcqcn";
	args[nargs++] = "--droce-rp_ai_rate=10";
	args[nargs] = NULL;
	if (droce_init(nargs, args) < 0) {
		perror("droce_init");
		return 1;
	}
	rc = cmocka_run_group_tests_name("telemetry", tests, NULL, NULL);
	droce_cleanup();
	unlink(sock);
	if (rc == 0)
		printf("# capture frames=%" PRIu64 " roce=%" PRIu64 "\n", capture_expect,
		       capture_roce);
	return rc;
}
