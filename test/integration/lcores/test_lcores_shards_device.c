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
 *
 * Device a captures (--droce-capture, lib/link's capture around its link):
 * the pcapng holds every frame both queues received (at least as many as
 * the shards counted from their queues, ARP included) and frames each
 * queue sent, queue 1's (shard 1's) too; a frame to UDP port 4791 with a
 * wrong IPv4 header checksum sent to a from a raw socket, which a's
 * receive classification drops (malformed_pkts + 1), is in it byte for
 * byte: the capture sees frames before they are classified or parsed.
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

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <rte_ip.h>
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
static char cap_path[96];
static char ifa[IFNAMSIZ], ifb[IFNAMSIZ];

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

/* ---- the capture ------------------------------------------------------------ */

#define BAD_LEN 60

/*
 * A frame for UDP port 4791 from b's side of the veth to a's MAC and
 * address whose IPv4 header checksum is wrong (and whose UDP payload is
 * too short for a BTH): receive's classification drops it (lib/net hands
 * it back, malformed_pkts), before any RoCEv2 parse.
 */
static void
bad_frame(uint8_t f[BAD_LEN])
{
	static const uint8_t ip_a[4] = { 198, 18, 13, 1 }, ip_b[4] = { 198, 18, 13, 2 };
	struct rte_ipv4_hdr ip = {
		.version_ihl = 0x45,
		.total_length = htons(20 + 8 + 4),
		.time_to_live = 64,
		.next_proto_id = IPPROTO_UDP,
	};
	unsigned int mac[6];
	char path[64];
	FILE *fp;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifa);
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_int_equal(fscanf(fp, "%x:%x:%x:%x:%x:%x", &mac[0], &mac[1], &mac[2],
				&mac[3], &mac[4], &mac[5]), 6);
	fclose(fp);
	memset(f, 0x5a, BAD_LEN);
	for (int i = 0; i < 6; i++)
		f[i] = (uint8_t)mac[i];
	memcpy(f + 6, (const uint8_t[6]){ 0x02, 0, 0, 0, 0x7b, 0x01 }, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	memcpy(&ip.src_addr, ip_b, 4);
	memcpy(&ip.dst_addr, ip_a, 4);
	ip.hdr_checksum = (uint16_t)(rte_ipv4_cksum(&ip) ^ 0x0101);
	memcpy(f + 14, &ip, 20);
	/* UDP: source 49152, destination 4791, length 12, no checksum */
	memcpy(f + 34, (const uint8_t[8]){ 0xc0, 0x00, 0x12, 0xb7, 0x00, 0x0c, 0, 0 }, 8);
	memcpy(f + 42, (const uint8_t[4]){ 0x77, 0x66, 0x55, 0x44 }, 4);
}

/* Send the bad frame on b's veth (so that a's port receives it). */
static void
send_bad_frame(const uint8_t f[BAD_LEN])
{
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET,
		.sll_ifindex = (int)if_nametoindex(ifb),
		.sll_halen = 6,
	};
	int s = socket(AF_PACKET, SOCK_RAW, 0);

	assert_true(s >= 0);
	assert_true(to.sll_ifindex > 0);
	memcpy(to.sll_addr, f, 6);
	assert_int_equal(sendto(s, f, BAD_LEN, 0, (struct sockaddr *)&to, sizeof(to)),
			 BAD_LEN);
	close(s);
}

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

struct cap_count {
	uint64_t in[2], out[2];		/* frames per direction and queue */
	uint64_t bad;			/* received frames equal to the bad one */
};

/*
 * Read a pcapng as rte_pcapng writes it (little-endian on x86): per
 * enhanced packet block its direction (epb_flags, option 2: 1 in, 2 out)
 * and queue (DPDK's option 6).
 */
static void
read_capture(const char *path, const uint8_t bad[BAD_LEN], struct cap_count *c)
{
	static uint8_t blk[16384];
	FILE *f = fopen(path, "rb");

	assert_non_null(f);
	memset(c, 0, sizeof(*c));
	while (fread(blk, 1, 8, f) == 8) {
		uint32_t type = le32(blk), len = le32(blk + 4), caplen, off;
		uint32_t dir = 0, queue = UINT32_MAX;

		assert_true(len >= 12 && len <= sizeof(blk) && len % 4 == 0);
		assert_int_equal(fread(blk + 8, 1, len - 8, f), len - 8);
		if (type != 6)			/* enhanced packet block */
			continue;
		caplen = le32(blk + 20);
		assert_true(28 + caplen <= len - 4);
		for (off = 28 + ((caplen + 3) & ~3u); off + 4 <= len - 4;) {
			uint16_t code = (uint16_t)(blk[off] | blk[off + 1] << 8);
			uint16_t olen = (uint16_t)(blk[off + 2] | blk[off + 3] << 8);

			if (code == 0)
				break;
			if (code == 2 && olen == 4)
				dir = le32(blk + off + 4) & 3;
			if (code == 6 && olen == 4)
				queue = le32(blk + off + 4);
			off += 4 + ((olen + 3u) & ~3u);
		}
		assert_true(queue < 2);
		assert_true(dir == 1 || dir == 2);
		if (dir == 1) {
			c->in[queue]++;
			if (caplen == BAD_LEN && memcmp(blk + 28, bad, BAD_LEN) == 0)
				c->bad++;
		} else {
			c->out[queue]++;
		}
	}
	fclose(f);
}

static void
test_sharded_devices(void **state)
{
	static struct rx_lcores rx0, rx1;
	struct droce_device **list;
	uint64_t link_rx[2], malformed;
	uint8_t bad[BAD_LEN];
	struct cap_count cap;
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

	/* a malformed frame: dropped by a's receive, in a's capture */
	bad_frame(bad);
	malformed = droce_get_counter(a.ctx, "malformed_pkts");
	send_bad_frame(bad);
	for (double end = dp_now() + T_OUT;
	     droce_get_counter(a.ctx, "malformed_pkts") == malformed && dp_now() < end;)
		usleep(1000);
	assert_int_equal(droce_get_counter(a.ctx, "malformed_pkts"), malformed + 1);
	link_rx[0] = shard_counter(&a, 0, "shard_link_rx");
	link_rx[1] = shard_counter(&a, 1, "shard_link_rx");
	close_end(&a);
	close_end(&b);
	read_capture(cap_path, bad, &cap);
	printf("# a's capture: in %llu + %llu (queues 0, 1; the shards took %llu + %llu "
	       "from them), out %llu + %llu, the malformed frame %llu\n",
	       (unsigned long long)cap.in[0], (unsigned long long)cap.in[1],
	       (unsigned long long)link_rx[0], (unsigned long long)link_rx[1],
	       (unsigned long long)cap.out[0], (unsigned long long)cap.out[1],
	       (unsigned long long)cap.bad);
	/* every frame either queue brought (frames may arrive after the count) */
	assert_true(cap.in[0] >= link_rx[0]);
	assert_true(cap.in[1] >= link_rx[1]);
	/* shard 1 sent on queue 1 */
	assert_true(cap.out[0] > 0);
	assert_true(cap.out[1] > 0);
	assert_int_equal(cap.bad, 1);
	unlink(cap_path);
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
	char v0[160], v1[160], prefix[64], cap_opt[128];
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
	snprintf(ifa, sizeof(ifa), "%.*s", (int)(strchr(veth, ',') - veth), veth);
	snprintf(ifb, sizeof(ifb), "%s", strchr(veth, ',') + 1);
	snprintf(cap_path, sizeof(cap_path), "/tmp/droce-shards-%d.pcapng", getpid());
	snprintf(cap_opt, sizeof(cap_opt), "--droce-capture=%s", cap_path);
	snprintf(prefix, sizeof(prefix), "--file-prefix=droce-shards-%d", getpid());
	(void)dp_eal_args(args, &nargs, argv[0], "--lcores", "0@0,1@1,2@1", prefix);
	dp_vdev_args(args, &nargs, v0, v1);
	args[nargs++] = "--droce-port=net_af_packet0";
	args[nargs++] = "--droce-ipv4=198.18.13.1/24";
	args[nargs++] = "--droce-ipv6=2001:2:0:13::1/64";
	args[nargs++] = "--droce-mtu=4200";
	args[nargs++] = "--droce-transport-lcores=1,2";
	args[nargs++] = cap_opt;
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
