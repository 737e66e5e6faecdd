/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <cmocka.h>
#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "net_host.h"
#include "roce_wire.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "tp_fixture.h"

double
fx_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long
free_hugepages(void)
{
	char line[128];
	long n = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Free: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * Hugepages when droce-setup reserved some (and DROCE_NO_HUGE is not 1),
 * otherwise --no-huge with a warning; the mode is printed either way.
 * (DPDK 22.11 refuses --in-memory together with --no-huge.)
 */
void
fx_eal_init_lcores(const char *prog, const char *lcores)
{
	const char *no_huge = getenv("DROCE_NO_HUGE");
	/* "1@0,2@1": an lcore-to-CPU map (more lcores than cores) */
	char *opt = strchr(lcores, '@') != NULL ? "--lcores" : "-l";
	char *argv_huge[] = { (char *)prog, "--no-pci", "--in-memory", opt, (char *)lcores,
			      "--log-level=lib.eal:error", NULL };
	char *argv_nohuge[] = { (char *)prog, "--no-pci", "--no-huge", "-m", "1024",
				"--no-shconf", opt, (char *)lcores,
				"--log-level=lib.eal:error", NULL };
	bool use_huge = (no_huge == NULL || strcmp(no_huge, "1") != 0) &&
			free_hugepages() >= 256;
	char **argv = use_huge ? argv_huge : argv_nohuge;
	int argc = 0;

	while (argv[argc] != NULL)
		argc++;
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "%s: EAL init failed\n", prog);
		exit(1);
	}
	if (getenv("DROCE_TP_DEBUG") != NULL)
		rte_log_set_level_pattern("droce.transport", RTE_LOG_DEBUG);
	if (use_huge)
		printf("# EAL with 2 MiB hugepages\n");
	else
		printf("# WARNING: EAL with --no-huge (no free hugepages or DROCE_NO_HUGE=1)\n");
}

void
fx_eal_init(const char *prog)
{
	fx_eal_init_lcores(prog, "0");
}

/* -1: run-to-completion (the tests' thread progresses both engines). */
static int fx_transport_lcore = -1;

void
fx_set_transport_lcore(int lcore)
{
	fx_transport_lcore = lcore;
}

void
fx_eal_init_with_lcore(const char *prog, int lcore)
{
	char list[32];

	snprintf(list, sizeof(list), "0,%d", lcore);
	fx_eal_init_lcores(prog, list);
	if (!rte_lcore_is_enabled((unsigned int)lcore)) {
		fprintf(stderr, "lcore %d not available\n", lcore);
		exit(1);
	}
}

void
fx_eal_init_transport_lcore(const char *prog, int lcore)
{
	fx_eal_init_with_lcore(prog, lcore);
	fx_set_transport_lcore(lcore);
	printf("# application on lcore %u, transport on lcore %d\n", rte_lcore_id(),
	       lcore);
}

static unsigned int fx_lcores[8];
static unsigned int fx_nlcores;

void
fx_set_transport_lcores(const unsigned int *lcores, unsigned int n)
{
	assert_true(n <= RTE_DIM(fx_lcores));
	memcpy(fx_lcores, lcores, n * sizeof(*lcores));
	fx_nlcores = n;
}

static bool fx_seed_drawn;
static uint64_t fx_run_seed;

uint64_t
fx_seed(void)
{
	const char *env = getenv("DROCE_SEED");

	if (fx_seed_drawn)
		return fx_run_seed;
	if (env != NULL && *env != '\0')
		fx_run_seed = strtoull(env, NULL, 0);
	else if (getrandom(&fx_run_seed, sizeof(fx_run_seed), 0) !=
		 (ssize_t)sizeof(fx_run_seed))
		fail_msg("getrandom failed");
	fx_seed_drawn = true;
	printf("# fault seed %" PRIu64 " (DROCE_SEED=%" PRIu64 " replays this run)\n",
	       fx_run_seed, fx_run_seed);
	fflush(stdout);
	return fx_run_seed;
}

int
fx_result(int failed)
{
	if (failed != 0 && fx_seed_drawn)
		printf("# FAILED with fault seed %" PRIu64 ": rerun with DROCE_SEED=%"
		       PRIu64 " to reproduce\n", fx_run_seed, fx_run_seed);
	return failed;
}

enum fx_mode { FX_RUN_TO_COMPLETION, FX_TRANSPORT_LCORE, FX_TWO_SHARDS };
static enum fx_mode fx_mode_now;

bool
fx_dedicated(void)
{
	return fx_mode_now != FX_RUN_TO_COMPLETION;
}

uint8_t
fx_qp_timeout(void)
{
	return fx_mode_now == FX_TWO_SHARDS ? 14 : 8;
}

int
fx_run_modes(const char *prog, const char *name, const struct CMUnitTest *tests,
	     size_t ntests)
{
	static const char *const suffix[] = {
		[FX_RUN_TO_COMPLETION] = "run_to_completion",
		[FX_TRANSPORT_LCORE] = "transport_lcore",
		[FX_TWO_SHARDS] = "two_shards",
	};
	const unsigned int shard_lcores[] = { 1, 2 };
	int failed = 0;

	fx_eal_init_lcores(prog, "0@0,1@1,2@1");
	if (!rte_lcore_is_enabled(1) || !rte_lcore_is_enabled(2)) {
		fprintf(stderr, "lcores 1 and 2 not available\n");
		return 1;
	}
	for (enum fx_mode m = FX_RUN_TO_COMPLETION; m <= FX_TWO_SHARDS; m++) {
		char group[128];

		if (m == FX_TRANSPORT_LCORE)
			fx_set_transport_lcore(1);
		if (m == FX_TWO_SHARDS) {
			fx_set_transport_lcore(-1);
			fx_set_transport_lcores(shard_lcores, 2);
		}
		fx_mode_now = m;
		snprintf(group, sizeof(group), "%s_%s", name, suffix[m]);
		failed += _cmocka_run_group_tests(group, tests, ntests, NULL, NULL);
	}
	return fx_result(failed);
}

/*
 * The bytes of a RoCEv2 frame (as droce sends them: no VLAN tag, no IPv4
 * options) that no receiver check covers, as a mask of their bits: the UDP
 * checksum and BTH byte 4 (FECN, BECN, resv6a), both masked in the ICRC
 * and neither verified; in IPv6 also the traffic class, flow label and hop
 * limit, masked in the ICRC and under no header checksum.  In IPv4 the
 * ICRC's masked TOS, TTL and header checksum are under the IPv4 checksum.
 */
static uint8_t
unchecked_bits(uint16_t ether_type, uint64_t byte)
{
	const uint64_t l3 = RTE_ETHER_HDR_LEN;

	if (ether_type == RTE_ETHER_TYPE_IPV4) {
		const uint64_t udp = l3 + 20, bth = udp + 8;

		return byte == udp + 6 || byte == udp + 7 || byte == bth + 4 ? 0xff : 0;
	}
	if (ether_type == RTE_ETHER_TYPE_IPV6) {
		const uint64_t udp = l3 + 40, bth = udp + 8;

		if (byte == l3)
			return 0x0f;	/* the traffic class's high nibble */
		if ((byte > l3 && byte < l3 + 4) || byte == l3 + 7 ||
		    byte == udp + 6 || byte == udp + 7 || byte == bth + 4)
			return 0xff;
	}
	return 0;
}

/* The frame as it was sent (bit flipped back when one was flipped), parsed. */
static void
report_lost(const struct fx_faults_seen *seen, const struct rte_mbuf *m,
	    enum vwire_fault_kind kind, uint64_t bit)
{
	uint8_t frame[VWIRE_MTU_MAX + VWIRE_FRAME_OVERHEAD];
	const uint8_t *p;
	struct roce_pkt pkt;

	assert_true(m->pkt_len <= sizeof(frame));
	p = rte_pktmbuf_read(m, 0, m->pkt_len, frame);
	assert_non_null(p);
	if (p != frame)
		memcpy(frame, p, m->pkt_len);
	if (kind == VWIRE_FAULT_CORRUPT)
		frame[bit / 8] ^= (uint8_t)(1u << bit % 8);
	assert_int_equal(roce_parse_eth(frame, m->pkt_len, &pkt), ROCE_PARSE_OK);
	seen->lost(seen->lost_arg, &pkt, frame);
}

static void
count_fault(void *arg, enum vwire_fault_kind kind, const struct rte_mbuf *m,
	    uint64_t bit)
{
	struct fx_faults_seen *seen = arg;
	uint16_t type_be, ether_type = 0;
	const uint16_t *t = rte_pktmbuf_read(m, 12, sizeof(type_be), &type_be);
	unsigned int lcore = rte_lcore_id();
	bool detectable = true;

	if (lcore < 64)
		__atomic_fetch_or(&seen->lcores, UINT64_C(1) << lcore, __ATOMIC_RELAXED);
	if (t != NULL)
		ether_type = rte_be_to_cpu_16(*t);
	if (kind == VWIRE_FAULT_DROP) {
		__atomic_fetch_add(&seen->dropped, 1, __ATOMIC_RELAXED);
	} else if (unchecked_bits(ether_type, bit / 8) & (1u << bit % 8)) {
		__atomic_fetch_add(&seen->undetectable, 1, __ATOMIC_RELAXED);
		detectable = false;
	} else {
		__atomic_fetch_add(&seen->detectable, 1, __ATOMIC_RELAXED);
	}
	if (detectable && seen->lost != NULL)
		report_lost(seen, m, kind, bit);
}

void
fx_watch_faults(struct vwire_faults *faults, struct fx_faults_seen *seen)
{
	memset(seen, 0, sizeof(*seen));
	faults->on_fault = count_fault;
	faults->on_fault_arg = seen;
}

uint64_t
fx_wire_in_flight(const struct droce_link *sender)
{
	struct vwire_stats st;

	vwire_get_stats(sender, &st);
	return st.tx + st.duplicated - st.dropped - st.oversize - st.delivered;
}

static void
check_faults_one_way(struct fx_end *sender, struct fx_end *receiver,
		     const struct fx_faults_seen *seen)
{
	uint64_t detectable = __atomic_load_n(&seen->detectable, __ATOMIC_RELAXED);
	uint64_t undetectable = __atomic_load_n(&seen->undetectable, __ATOMIC_RELAXED);
	struct vwire_stats st;

	vwire_get_stats(sender->link, &st);
	assert_int_equal(st.dropped, __atomic_load_n(&seen->dropped, __ATOMIC_RELAXED));
	assert_int_equal(st.corrupted, detectable + undetectable);
	assert_int_equal(fx_counter(receiver, "icrc_err") +
			 fx_counter(receiver, "malformed_pkts"), detectable);
}

void
fx_check_faults(struct fx *f, const struct fx_faults_seen *ab,
		const struct fx_faults_seen *ba)
{
	double end = fx_now() + 10;

	while (fx_wire_in_flight(f->a.link) + fx_wire_in_flight(f->b.link) != 0) {
		if (fx_now() > end)
			fail_msg("frames still on the wire after 10 s");
		fx_spin(f, 0.001);
	}
	/* a transport lcore counts what its last burst brought */
	fx_spin(f, 0.01);
	assert_int_equal(fx_wire_in_flight(f->a.link) + fx_wire_in_flight(f->b.link), 0);
	check_faults_one_way(&f->a, &f->b, ab);
	check_faults_one_way(&f->b, &f->a, ba);
}

void
fx_fill(uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

static struct tp_dev_config fx_dev_cfg;
static droce_link_tap_fn *fx_tap;

void
fx_set_tap(droce_link_tap_fn *fn)
{
	fx_tap = fn;
}

static bool fx_loopback;

void
fx_set_loopback(bool on)
{
	fx_loopback = on;
}

void
fx_set_dev_config(const struct tp_dev_config *cfg)
{
	if (cfg != NULL)
		fx_dev_cfg = *cfg;
	else
		memset(&fx_dev_cfg, 0, sizeof(fx_dev_cfg));
}

/*
 * The device configuration of a new end: fx_set_dev_config's, with the
 * congestion control DROCE_TEST_CC names (none, dcqcn) when it is set, so
 * a test runs again under another algorithm from its meson entry.
 */
static struct tp_dev_config
end_config(bool host_stack)
{
	struct tp_dev_config cfg = fx_dev_cfg;
	const char *cc = getenv("DROCE_TEST_CC");

	cfg.host_stack = host_stack;
	if (cc != NULL && *cc != '\0')
		assert_int_equal(tp_cc_config_set(&cfg.cc, "cc", cc), 0);
	return cfg;
}

static void
open_end(struct fx_end *e, struct droce_link *link, uint8_t host, size_t buflen,
	 bool host_stack)
{
	uint8_t ip[4] = { 198, 18, 0, host };
	struct tp_dev_config cfg = end_config(host_stack);
	int access = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
		     DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC |
		     DROCE_ACCESS_MW_BIND;

	e->ctx = droce_open_context(NULL);
	assert_non_null(e->ctx);
	e->link = link;
	e->tap = NULL;
	if (fx_tap != NULL) {
		assert_int_equal(droce_link_tap_wrap(link, fx_tap,
						     (void *)(uintptr_t)(host - 1), &e->tap), 0);
		link = e->tap;
	}
	e->loop = NULL;
	if (fx_loopback) {
		assert_null(fx_tap);
		assert_int_equal(droce_link_loop_wrap(link, &e->loop), 0);
		link = e->loop;
	}
	assert_int_equal(verbs_attach_link(e->ctx, link, &cfg), 0);
	roce_gid_from_ipv4(e->gid, ip);
	assert_int_equal(net_host_add_addr(tp_dev_host(verbs_tp(e->ctx)), e->gid, 24), 0);
	/* GID index 1: IPv6 in the benchmarking range 2001:2::/48 */
	{
		uint8_t g6[16] = { 0x20, 0x01, 0x00, 0x02, [15] = host };

		assert_int_equal(net_host_add_addr(tp_dev_host(verbs_tp(e->ctx)), g6, 64), 0);
	}
	e->pd = droce_alloc_pd(e->ctx);
	assert_non_null(e->pd);
	e->len = buflen;
	e->buf = rte_zmalloc("fx_buf", buflen, 64);
	assert_non_null(e->buf);
	e->mr = droce_reg_mr(e->pd, e->buf, buflen, access);
	assert_non_null(e->mr);
}

/* After the static neighbours: the engine may move to a transport lcore. */
static void
start_end(struct fx_end *e)
{
	if (fx_nlcores != 0)
		assert_int_equal(verbs_run_on_lcores(e->ctx, fx_lcores, fx_nlcores), 0);
	else if (fx_transport_lcore >= 0)
		assert_int_equal(verbs_run_on_lcore(e->ctx,
						    (unsigned int)fx_transport_lcore), 0);
	e->cq = droce_create_cq(e->ctx, 8192, NULL, NULL, 0);
	assert_non_null(e->cq);
}

void
fx_open(struct fx *f, const struct vwire_config *wire, size_t buflen)
{
	struct vwire_config def = { 0 };
	struct droce_link *la, *lb;

	memset(f, 0, sizeof(*f));
	assert_int_equal(vwire_pair_create(wire != NULL ? wire : &def, &la, &lb), 0);
	open_end(&f->a, la, 1, buflen, false);
	open_end(&f->b, lb, 2, buflen, false);
	/* static neighbours for both address families (ARP/ND: port issue) */
	for (int i = 0; i < 2; i++) {
		uint8_t g[16];

		assert_int_equal(tp_dev_query_gid(verbs_tp(f->b.ctx), i, g), 0);
		assert_int_equal(net_host_add_static(tp_dev_host(verbs_tp(f->a.ctx)), g,
						     &lb->mac), 0);
		assert_int_equal(tp_dev_query_gid(verbs_tp(f->a.ctx), i, g), 0);
		assert_int_equal(net_host_add_static(tp_dev_host(verbs_tp(f->b.ctx)), g,
						     &la->mac), 0);
	}
	start_end(&f->a);
	start_end(&f->b);
}

void
fx_open_resolving(struct fx *f, const struct vwire_config *wire, size_t buflen)
{
	struct vwire_config def = { 0 };
	struct droce_link *la, *lb;

	memset(f, 0, sizeof(*f));
	assert_int_equal(vwire_pair_create(wire != NULL ? wire : &def, &la, &lb), 0);
	open_end(&f->a, la, 1, buflen, true);
	open_end(&f->b, lb, 2, buflen, true);
	start_end(&f->a);
	start_end(&f->b);
}

static void
close_end(struct fx_end *e)
{
	if (e->qp != NULL)
		assert_int_equal(droce_destroy_qp(e->qp), 0);
	assert_int_equal(droce_destroy_cq(e->cq), 0);
	assert_int_equal(droce_dereg_mr(e->mr), 0);
	assert_int_equal(droce_dealloc_pd(e->pd), 0);
	rte_free(e->buf);
	assert_int_equal(verbs_detach_link(e->ctx), 0);
	assert_int_equal(droce_close_context(e->ctx), 0);
}

void
fx_close(struct fx *f)
{
	close_end(&f->a);
	close_end(&f->b);
	/* a loop wrapper closes the end it wraps */
	droce_link_close(f->a.loop != NULL ? f->a.loop : f->a.link);
	droce_link_close(f->b.loop != NULL ? f->b.loop : f->b.link);
	(void)droce_link_tap_unwrap(f->a.tap);
	(void)droce_link_tap_unwrap(f->b.tap);
}

void
fx_destroy_qps(struct fx *f)
{
	assert_int_equal(droce_destroy_qp(f->a.qp), 0);
	assert_int_equal(droce_destroy_qp(f->b.qp), 0);
	f->a.qp = f->b.qp = NULL;
}

static void
connect_one(struct fx_end *self, struct fx_end *peer, const struct fx_qp_opts *o,
	    bool to_rts)
{
	struct droce_qp_attr a;
	int mask;

	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x11111111;
	a.qp_access_flags = o->access;
	mask = DROCE_QP_STATE | DROCE_QP_PKEY_INDEX | DROCE_QP_PORT;
	mask |= o->type == DROCE_QPT_UD ? DROCE_QP_QKEY : DROCE_QP_ACCESS_FLAGS;
	assert_int_equal(droce_modify_qp(self->qp, &a, mask), 0);

	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTR;
	mask = DROCE_QP_STATE;
	if (o->type != DROCE_QPT_UD) {
		a.path_mtu = o->mtu;
		a.dest_qp_num = peer->qp->qp_num;
		a.rq_psn = o->psn;
		a.max_dest_rd_atomic = 16;
		a.min_rnr_timer = o->min_rnr_timer;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.sgid_index = o->ipv6 ? 1 : 0;
		a.ah_attr.grh.hop_limit = 64;
		assert_int_equal(tp_dev_query_gid(verbs_tp(peer->ctx), o->ipv6 ? 1 : 0,
						  a.ah_attr.grh.dgid.raw), 0);
		mask |= DROCE_QP_AV | DROCE_QP_PATH_MTU | DROCE_QP_DEST_QPN |
			DROCE_QP_RQ_PSN;
		if (o->type == DROCE_QPT_RC)
			mask |= DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER;
	}
	assert_int_equal(droce_modify_qp(self->qp, &a, mask), 0);
	if (!to_rts)
		return;

	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTS;
	a.sq_psn = o->psn;
	a.timeout = o->timeout;
	a.retry_cnt = o->retry_cnt;
	a.rnr_retry = o->rnr_retry;
	a.max_rd_atomic = o->max_rd_atomic;
	mask = DROCE_QP_STATE | DROCE_QP_SQ_PSN;
	if (o->type == DROCE_QPT_RC)
		mask |= DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT | DROCE_QP_RNR_RETRY |
			DROCE_QP_MAX_QP_RD_ATOMIC;
	assert_int_equal(droce_modify_qp(self->qp, &a, mask), 0);
}

static void
connect_pair(struct fx *f, const struct fx_qp_opts *opts, struct droce_qp **qa,
	     struct droce_qp **qb)
{
	struct fx_qp_opts o = opts != NULL ? *opts : (struct fx_qp_opts){ 0 };
	struct droce_qp_init_attr init;
	struct droce_qp *keep_a = f->a.qp, *keep_b = f->b.qp;

	if (o.type == 0)
		o.type = DROCE_QPT_RC;
	if (o.mtu == 0)
		o.mtu = DROCE_MTU_1024;
	if (o.timeout == 0)
		o.timeout = 8;
	if (!o.retry_set) {
		o.retry_cnt = 7;
		o.rnr_retry = 7;
	}
	if (o.min_rnr_timer == 0)
		o.min_rnr_timer = 1;
	if (o.max_rd_atomic == 0)
		o.max_rd_atomic = 16;
	if (o.access == 0)
		o.access = DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ |
			   DROCE_ACCESS_REMOTE_ATOMIC;
	if (o.max_wr == 0)
		o.max_wr = 256;

	memset(&init, 0, sizeof(init));
	init.qp_type = o.type;
	init.cap.max_send_wr = o.max_wr;
	init.cap.max_recv_wr = o.max_wr;
	init.cap.max_send_sge = DROCE_MAX_SGE;
	init.cap.max_recv_sge = DROCE_MAX_SGE;
	init.cap.max_inline_data = o.no_inline ? 0 : DROCE_MAX_INLINE_DATA;
	init.sq_sig_all = o.sq_sig_all;
	init.send_cq = f->a.cq;
	init.recv_cq = f->a.cq;
	f->a.qp = droce_create_qp(f->a.pd, &init);
	assert_non_null(f->a.qp);
	if (o.a_cc != NULL)
		assert_int_equal(droce_qp_set_cc(f->a.qp, o.a_cc), 0);
	init.send_cq = f->b.cq;
	init.recv_cq = f->b.cq;
	init.srq = o.b_srq;
	f->b.qp = droce_create_qp(f->b.pd, &init);
	assert_non_null(f->b.qp);
	if (o.a_sr)
		assert_int_equal(droce_qp_set_sr(f->a.qp, true), 0);
	if (o.b_sr)
		assert_int_equal(droce_qp_set_sr(f->b.qp, true), 0);
	connect_one(&f->a, &f->b, &o, true);
	connect_one(&f->b, &f->a, &o, !o.b_rtr_only);
	*qa = f->a.qp;
	*qb = f->b.qp;
	if (qa != &f->a.qp) {
		f->a.qp = keep_a;
		f->b.qp = keep_b;
	}
}

void
fx_connect(struct fx *f, const struct fx_qp_opts *opts)
{
	connect_pair(f, opts, &f->a.qp, &f->b.qp);
}

void
fx_connect_more(struct fx *f, const struct fx_qp_opts *opts, struct droce_qp **qa,
		struct droce_qp **qb)
{
	connect_pair(f, opts, qa, qb);
}

int
fx_poll(struct fx *f, struct droce_cq *cq, struct droce_wc *wc, int n,
	double timeout_s)
{
	double end = fx_now() + timeout_s;
	int got = 0;

	while (got < n) {
		int r;

		droce_progress(f->a.ctx);
		droce_progress(f->b.ctx);
		r = droce_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return r;
		got += r;
		if (got < n && fx_now() > end)
			break;
	}
	return got;
}

void
fx_spin(struct fx *f, double seconds)
{
	double end = fx_now() + seconds;

	while (fx_now() < end) {
		droce_progress(f->a.ctx);
		droce_progress(f->b.ctx);
	}
}

int
fx_post(struct droce_qp *qp, enum droce_wr_opcode op, uint64_t wr_id,
	void *laddr, uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey,
	unsigned int flags)
{
	struct droce_sge sge = { (uintptr_t)laddr, len, lkey };
	struct droce_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = flags;
	if (op == DROCE_WR_ATOMIC_CMP_AND_SWP || op == DROCE_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return droce_post_send(qp, &wr, &bad);
}

enum droce_wc_status
fx_post_wait(struct fx *f, struct fx_end *e, enum droce_wr_opcode op, uint64_t wr_id,
	     void *laddr, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct droce_wc wc;

	assert_int_equal(fx_post(e->qp, op, wr_id, laddr, len, e->mr->lkey, raddr, rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(f, e->cq, &wc, 1, 10), 1);
	assert_int_equal(wc.wr_id, wr_id);
	return wc.status;
}

void
fx_assert_wc(const struct droce_wc *wc, uint64_t wr_id, enum droce_wc_opcode opcode,
	     enum droce_wc_status status)
{
	assert_int_equal(wc->wr_id, wr_id);
	if (wc->status != status)
		fail_msg("wr_id %" PRIu64 ": %s, expected %s", wr_id,
			 droce_wc_status_str(wc->status), droce_wc_status_str(status));
	assert_int_equal(wc->opcode, opcode);
}

void
fx_assert_bytes(const uint8_t *p, size_t len, uint8_t val)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != val)
			fail_msg("byte %zu is 0x%02x, not 0x%02x", i, p[i], val);
}

enum droce_qp_state
fx_qp_state(struct droce_qp *qp)
{
	struct droce_qp_attr attr;
	struct droce_qp_init_attr init;

	assert_int_equal(droce_query_qp(qp, &attr, 0, &init), 0);
	return attr.qp_state;
}

int
fx_post_recv(struct droce_qp *qp, uint64_t wr_id, void *addr, uint32_t len,
	     uint32_t lkey)
{
	struct droce_sge sge = { (uintptr_t)addr, len, lkey };
	struct droce_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct droce_recv_wr *bad = NULL;

	return droce_post_recv(qp, &wr, &bad);
}

uint64_t
fx_counter(struct fx_end *e, const char *name)
{
	return tp_dev_counter(verbs_tp(e->ctx), name);
}

/* ---- asynchronous events ---------------------------------------------------- */

void
fx_events_nonblock(struct fx_end *e)
{
	int fl = fcntl(e->ctx->async_fd, F_GETFL);

	assert_true(fl >= 0);
	assert_int_equal(fcntl(e->ctx->async_fd, F_SETFL, fl | O_NONBLOCK), 0);
}

bool
fx_event_ready(const struct fx_end *e)
{
	struct pollfd p = { .fd = e->ctx->async_fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

void
fx_wait_event(struct fx *f, struct fx_end *e, struct droce_async_event *ev)
{
	double end = fx_now() + 10;

	while (!fx_event_ready(e)) {
		if (fx_now() > end)
			fail_msg("no asynchronous event within 10 s");
		fx_spin(f, 0.001);
	}
	assert_int_equal(droce_get_async_event(e->ctx, ev), 0);
}

/* The object an event of this type names (droce.h's element union). */
static const void *
event_element(const struct droce_async_event *ev)
{
	switch (ev->event_type) {
	case DROCE_EVENT_CQ_ERR:
		return ev->element.cq;
	case DROCE_EVENT_SRQ_ERR:
	case DROCE_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq;
	case DROCE_EVENT_MR_LEASE_EXPIRED:
		return ev->element.mr;
	case DROCE_EVENT_MW_LEASE_EXPIRED:
		return ev->element.mw;
	default:
		return ev->element.qp;
	}
}

void
fx_expect_event(struct fx *f, struct fx_end *e, enum droce_event_type type,
		const void *obj)
{
	struct droce_async_event ev;

	fx_wait_event(f, e, &ev);
	if (ev.event_type != type)
		fail_msg("got event \"%s\", expected \"%s\"",
			 droce_event_type_str(ev.event_type), droce_event_type_str(type));
	assert_ptr_equal(event_element(&ev), obj);
	droce_ack_async_event(&ev);
}

void
fx_expect_no_event(struct fx_end *e)
{
	struct droce_async_event ev;

	assert_false(fx_event_ready(e));
	errno = 0;
	assert_int_equal(droce_get_async_event(e->ctx, &ev), -1);
	assert_int_equal(errno, EAGAIN);
}
