/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw_fwd: the bare DPDK forwarding rate and round trip of a port, the
 * baseline droce's numbers are divided by (usertools/droce-bench).  Frames
 * of a given size with an experimental ethertype, no protocol, no payload
 * copies, rte_eth_rx_burst/tx_burst on queue 0.  The port is opened the way
 * droce opens it (drivers/ethdev's ethdev_link_open: same descriptors, mbuf
 * pool and data room, and for net_memif the guard that keeps 22.11's memif
 * from crashing at exit); same vdev arguments as droce's apps.
 *
 *   raw_fwd [EAL] -- sink                      count frames until the end marker
 *   raw_fwd [EAL] -- gen  -s SIZE -t SECONDS   send SIZE-byte frames, then the marker
 *   raw_fwd [EAL] -- echo                      send back every frame until the marker
 *   raw_fwd [EAL] -- ping -s SIZE -n ITERS     one frame at a time, wait for its echo
 *   raw_fwd [EAL] -- ring-rate -s SIZE -t SECONDS   net_ring, one process: gen on
 *                                             the main lcore, sink on a worker
 *   raw_fwd [EAL] -- ring-ping -s SIZE -n ITERS     ping / echo likewise
 * Options of every mode:
 *   -b BURST   frames per rx/tx_burst (default 32, at most RF_BURST_MAX)
 *   -r DESC    rx/tx descriptors per queue (default: ethdev_link's)
 *   -w PAYLOAD the protocol ceiling: every frame is a RoCEv2 RDMA WRITE
 *              (ONLY with a RETH when SIZE = PAYLOAD + pad + 74, MIDDLE when
 *              SIZE = PAYLOAD + pad + 58) and each end does the per-byte work
 *              no RoCEv2 implementation can avoid: the sender copies PAYLOAD
 *              bytes from a buffer into the frame and computes and stores its
 *              ICRC; the receiver recomputes the ICRC, compares it and copies
 *              the payload out (echo does both: it answers with a WRITE).
 *              Both ends need -w (sink and gen, echo and ping).
 *
 * The port is the first ethdev port (an EAL --vdev); ring-* make two net_ring
 * ports joined by crossed rings.  Results are one line each, "raw_fwd: key=value ...":
 *   sink: frames, bytes, seconds (first to last frame), mpps, gbps (frame
 *         bytes), icrc_bad (-w), link_mbps (the PMD's reported link speed,
 *         0: none; virtual PMDs report a nominal figure)
 *   ping: rtt_min_us, rtt_median_us, rtt_avg_us, rtt_p99_us, lost
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "bench_roce.h"
#include "droce_link.h"
#include "ethdev_link.h"
#include "roce_icrc.h"
#include "roce_wire.h"

#define RF_ETHERTYPE_DATA	0x88b5	/* IEEE local experimental 1 */
#define RF_ETHERTYPE_END	0x88b6	/* local experimental 2: stop */
#define RF_BURST		32
#define RF_BURST_MAX		256
#define RF_ROCE_OVH		58	/* Ethernet, IPv4, UDP, BTH, ICRC */
#define RF_RETH_LEN		16
#define RF_MIN_SIZE		60
#define RF_MAX_SIZE		9000
#define RF_IDLE_S		20.0	/* sink/echo: give up after this long silent */
#define RF_PING_TIMEOUT_S	0.2
#define RF_END_COPIES		64
#define RF_WORK_BUF		65536	/* the payload buffers: a 64 KiB message's */

/* What every frame carries after the Ethernet header. */
struct rf_hdr {
	uint64_t seq;
	uint64_t tsc;
};

/*
 * The ceiling's per-byte work (-w): a RoCEv2 frame template, the buffers
 * its payload is copied from (gen) and into (sink).
 */
struct rf_work {
	uint32_t payload;		/* 0: no work, plain frames */
	uint16_t payload_off;
	uint16_t frame_len;
	uint8_t tmpl[RF_MAX_SIZE];
	uint8_t *src;
	uint8_t *dst;
	uint32_t off;			/* next payload's offset in src / dst */
	uint64_t icrc_bad;
};

struct rf_port {
	uint16_t id;
	struct rte_ether_addr mac;
	struct rte_mempool *pool;
	struct droce_link *link;
	uint16_t burst;
	struct rf_work *work;
};

/* Set by parse(): -b, -r. */
static uint16_t rf_burst = RF_BURST;
static uint16_t rf_desc;
static volatile sig_atomic_t stop_req;

static void
on_signal(int sig)
{
	(void)sig;
	stop_req = 1;
}

static double
now_s(void)
{
	return (double)rte_get_tsc_cycles() / (double)rte_get_tsc_hz();
}

/* Open port id as droce would (ethdev_link_open), mac: 0 = the PMD's. */
static int
port_setup(uint16_t id, struct rf_port *p)
{
	struct ethdev_link_config lc = { .port_id = id, .nb_rxd = rf_desc, .nb_txd = rf_desc };
	int ret;

	ret = ethdev_link_open(&lc, &p->link);
	if (ret != 0) {
		fprintf(stderr, "raw_fwd: port %u: %s\n", id, rte_strerror(-ret));
		return ret;
	}
	p->id = id;
	p->mac = p->link->mac;
	p->pool = p->link->pool;
	p->burst = rf_burst;
	p->work = NULL;
	return 0;
}

/* Wait for the link (memif connects asynchronously). */
static int
port_wait_up(uint16_t id, double seconds)
{
	double end = now_s() + seconds;
	struct rte_eth_link l;

	while (now_s() < end && !stop_req) {
		if (rte_eth_link_get_nowait(id, &l) == 0 && l.link_status == RTE_ETH_LINK_UP)
			return 0;
		rte_delay_us_sleep(1000);
	}
	fprintf(stderr, "raw_fwd: port %u: link not up after %.0f s\n", id, seconds);
	return -ETIMEDOUT;
}

static void
port_close(struct rf_port *p)
{
	droce_link_close(p->link);
	p->link = NULL;
}

/* One frame of size bytes: broadcast, ethertype, seq and TSC. */
static struct rte_mbuf *
frame_make(const struct rf_port *p, uint16_t size, uint16_t type, uint64_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	struct rte_ether_hdr *eh;
	struct rf_hdr *h;

	if (m == NULL)
		return NULL;
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, size);
	if (eh == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(&eh->dst_addr, 0xff, sizeof(eh->dst_addr));
	eh->src_addr = p->mac;
	eh->ether_type = rte_cpu_to_be_16(type);
	h = (struct rf_hdr *)(eh + 1);
	h->seq = seq;
	h->tsc = rte_get_tsc_cycles();
	return m;
}

static uint16_t
frame_type(const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

	if (m->data_len < sizeof(*eh) + sizeof(struct rf_hdr))
		return 0;
	return rte_be_to_cpu_16(eh->ether_type);
}

static uint64_t
frame_seq(const struct rte_mbuf *m)
{
	const struct rf_hdr *h = rte_pktmbuf_mtod_offset(m, const struct rf_hdr *,
							 sizeof(struct rte_ether_hdr));
	return h->seq;
}

/* ---- the ceiling's per-byte work (-w) ------------------------------------ */

static int
work_init(struct rf_work *w, unsigned long size, uint32_t payload)
{
	struct roce_pkt p;
	uint32_t padded = payload + (-payload & 3u);	/* 9.2.1: pad to 4 bytes */
	size_t len;

	if (size == padded + RF_ROCE_OVH + RF_RETH_LEN)
		bench_write_pkt(&p, ROCE_OP_RDMA_WRITE_ONLY, payload);
	else if (size == padded + RF_ROCE_OVH)
		bench_write_pkt(&p, ROCE_OP_RDMA_WRITE_MIDDLE, payload);
	else
		return -EINVAL;
	w->src = malloc(RF_WORK_BUF);
	w->dst = malloc(RF_WORK_BUF);
	if (w->src == NULL || w->dst == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < RF_WORK_BUF; i++)
		w->src[i] = (uint8_t)(i * 131);
	len = roce_build(w->tmpl, sizeof(w->tmpl), &p, w->src);
	if (len != size)
		return -EINVAL;
	/* sink and echo tell data from the end marker by the ethertype; the
	 * ICRC starts at the IP header, so the Ethernet header is free */
	((struct rte_ether_hdr *)w->tmpl)->ether_type = rte_cpu_to_be_16(RF_ETHERTYPE_DATA);
	w->payload = payload;
	w->payload_off = p.payload_off;
	w->frame_len = (uint16_t)len;
	w->off = 0;
	w->icrc_bad = 0;
	return 0;
}

static void
work_fini(struct rf_work *w)
{
	free(w->src);
	free(w->dst);
}

/* The next payload's offset: consecutive payloads through the buffer. */
static uint32_t
work_next_off(struct rf_work *w)
{
	uint32_t off = w->off;

	w->off = off + 2 * w->payload > RF_WORK_BUF ? 0 : off + w->payload;
	return off;
}

/* Sender side of a frame whose headers are in place: payload in, ICRC. */
static void
work_fill(struct rf_work *w, uint8_t *d)
{
	memcpy(d + w->payload_off, w->src + work_next_off(w), w->payload);
	roce_icrc_store(d + w->frame_len - ROCE_ICRC_LEN,
			roce_icrc_compute(d + RTE_ETHER_HDR_LEN,
					  w->frame_len - RTE_ETHER_HDR_LEN, 4));
}

/* A new frame: headers (and pad) from the template, then work_fill. */
static struct rte_mbuf *
work_frame_make(const struct rf_port *p)
{
	struct rf_work *w = p->work;
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	uint32_t tail = w->frame_len - w->payload_off - w->payload;	/* pad + ICRC */
	uint8_t *d;

	if (m == NULL)
		return NULL;
	d = (uint8_t *)rte_pktmbuf_append(m, w->frame_len);
	if (d == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(d, w->tmpl, w->payload_off);
	memcpy(d + w->payload_off + w->payload, w->tmpl + w->payload_off + w->payload, tail);
	work_fill(w, d);
	return m;
}

/* Receiver side: ICRC recomputed and compared, payload copied out; false
 * (and counted) if the frame is not the template's shape or fails the ICRC. */
static bool
work_frame_take(struct rf_work *w, const struct rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);

	if (m->nb_segs != 1 || m->data_len != w->frame_len ||
	    roce_icrc_compute(d + RTE_ETHER_HDR_LEN, w->frame_len - RTE_ETHER_HDR_LEN, 4) !=
	    roce_icrc_load(d + w->frame_len - ROCE_ICRC_LEN)) {
		w->icrc_bad++;
		return false;
	}
	memcpy(w->dst + work_next_off(w), d + w->payload_off, w->payload);
	return true;
}

static void
send_end(const struct rf_port *p)
{
	for (int i = 0; i < RF_END_COPIES; i++) {
		struct rte_mbuf *m = frame_make(p, RF_MIN_SIZE, RF_ETHERTYPE_END, 0);

		if (m != NULL && rte_eth_tx_burst(p->id, 0, &m, 1) != 1)
			rte_pktmbuf_free(m);
		rte_delay_us_sleep(500);
	}
}

/* ---- rate: gen and sink ---------------------------------------------------- */

struct sink_args {
	struct rf_port port;
	uint64_t frames, bytes;
	double first, last;
	int rc;
};

static int
sink_run(void *arg)
{
	struct sink_args *a = arg;
	struct rte_mbuf *m[RF_BURST_MAX];
	double idle_since = now_s();
	bool done = false;

	a->first = a->last = 0;
	while (!done && !stop_req) {
		uint16_t n = rte_eth_rx_burst(a->port.id, 0, m, a->port.burst);
		double t;

		if (n == 0) {
			if (now_s() - idle_since > RF_IDLE_S) {
				a->rc = -ETIMEDOUT;
				break;
			}
			continue;
		}
		t = now_s();
		idle_since = t;
		for (uint16_t i = 0; i < n; i++) {
			uint16_t type = frame_type(m[i]);

			if (type == RF_ETHERTYPE_DATA) {
				if (a->frames++ == 0)
					a->first = t;
				a->last = t;
				a->bytes += m[i]->pkt_len;
				if (a->port.work != NULL)
					work_frame_take(a->port.work, m[i]);
			} else if (type == RF_ETHERTYPE_END) {
				done = true;
			}
			rte_pktmbuf_free(m[i]);
		}
	}
	return 0;
}

static void
sink_report(const struct sink_args *a)
{
	double s = a->last - a->first;
	struct rte_eth_link l = { 0 };

	(void)rte_eth_link_get_nowait(a->port.id, &l);
	printf("raw_fwd: mode=sink frames=%" PRIu64 " bytes=%" PRIu64 " seconds=%.6f mpps=%.4f "
	       "gbps=%.4f burst=%u icrc_bad=%" PRIu64 " link_mbps=%u\n",
	       a->frames, a->bytes, s, s > 0 ? (double)a->frames / s / 1e6 : 0.0,
	       s > 0 ? (double)a->bytes * 8 / s / 1e9 : 0.0, a->port.burst,
	       a->port.work != NULL ? a->port.work->icrc_bad : 0, l.link_speed);
	fflush(stdout);
}

struct gen_args {
	struct rf_port port;
	uint16_t size;
	double seconds;
	uint64_t sent, refused;
};

/*
 * Frames the port refused (its ring full) are offered again, in order,
 * before new ones are made: a generator that dropped them would spend
 * the ceiling's copy and ICRC on frames nobody receives, taking memory
 * bandwidth and cache from the sink, which a flow-controlled sender
 * (droce) does not.
 */
static int
gen_run(struct gen_args *a)
{
	struct rte_mbuf *m[RF_BURST_MAX];
	double end = now_s() + a->seconds;
	uint64_t seq = 0;
	uint16_t n = 0;

	while (now_s() < end && !stop_req) {
		uint16_t k;

		for (; n < a->port.burst; n++) {
			m[n] = a->port.work != NULL ? work_frame_make(&a->port) :
			       frame_make(&a->port, a->size, RF_ETHERTYPE_DATA, seq++);
			if (m[n] == NULL)
				break;
		}
		k = rte_eth_tx_burst(a->port.id, 0, m, n);
		a->sent += k;
		a->refused += n - k;
		memmove(m, m + k, (size_t)(n - k) * sizeof(m[0]));
		n -= k;
	}
	for (uint16_t i = 0; i < n; i++)
		rte_pktmbuf_free(m[i]);
	send_end(&a->port);
	printf("raw_fwd: mode=gen size=%u sent=%" PRIu64 " refused=%" PRIu64 "\n",
	       a->size, a->sent, a->refused);
	fflush(stdout);
	return 0;
}

/* ---- round trip: ping and echo -------------------------------------------- */

static int
echo_run(void *arg)
{
	const struct rf_port *p = arg;
	struct rte_mbuf *m[RF_BURST_MAX];
	double idle_since = now_s();

	while (!stop_req) {
		uint16_t n = rte_eth_rx_burst(p->id, 0, m, p->burst), k = 0;

		if (n == 0) {
			if (now_s() - idle_since > RF_IDLE_S)
				return -ETIMEDOUT;
			continue;
		}
		idle_since = now_s();
		for (uint16_t i = 0; i < n; i++) {
			if (frame_type(m[i]) == RF_ETHERTYPE_END) {
				for (uint16_t j = i; j < n; j++)
					rte_pktmbuf_free(m[j]);
				n = i;
				stop_req = 1;
				break;
			}
			/* -w: receive the WRITE, answer with one (same frame) */
			if (p->work != NULL && work_frame_take(p->work, m[i]))
				work_fill(p->work, rte_pktmbuf_mtod(m[i], uint8_t *));
		}
		if (n > 0)
			k = rte_eth_tx_burst(p->id, 0, m, n);
		for (uint16_t i = k; i < n; i++)
			rte_pktmbuf_free(m[i]);
	}
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Wait for the echo of seq; its round trip in TSC cycles, or 0 if lost. */
static uint64_t
ping_one(const struct rf_port *p, uint16_t size, uint64_t seq)
{
	struct rte_mbuf *m = p->work != NULL ? work_frame_make(p) :
			     frame_make(p, size, RF_ETHERTYPE_DATA, seq);
	struct rte_mbuf *r[RF_BURST_MAX];
	uint64_t t0 = rte_get_tsc_cycles(), limit;

	if (m == NULL)
		return 0;
	if (rte_eth_tx_burst(p->id, 0, &m, 1) != 1) {
		rte_pktmbuf_free(m);
		return 0;
	}
	limit = (uint64_t)(RF_PING_TIMEOUT_S * (double)rte_get_tsc_hz());
	while (rte_get_tsc_cycles() - t0 < limit && !stop_req) {
		uint16_t n = rte_eth_rx_burst(p->id, 0, r, p->burst);
		uint64_t t1;
		bool got = false;

		/* -w frames carry no sequence number: with one frame in flight
		 * the echo is the next good one */
		for (uint16_t i = 0; i < n; i++) {
			if (frame_type(r[i]) == RF_ETHERTYPE_DATA)
				got |= p->work != NULL ? work_frame_take(p->work, r[i]) :
				       frame_seq(r[i]) == seq;
			rte_pktmbuf_free(r[i]);
		}
		t1 = rte_get_tsc_cycles();
		if (got)
			return t1 - t0 > 0 ? t1 - t0 : 1;
	}
	return 0;
}

static int
ping_run(const struct rf_port *p, uint16_t size, uint32_t iters)
{
	uint64_t *rtt = calloc(iters, sizeof(*rtt));
	uint32_t got = 0, warm = iters / 10 + 1;
	double hz = (double)rte_get_tsc_hz() / 1e6, sum = 0;

	if (rtt == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < warm && !stop_req; i++)	/* caches, rings */
		(void)ping_one(p, size, UINT64_MAX - i);
	for (uint32_t i = 0; i < iters && !stop_req; i++) {
		uint64_t c = ping_one(p, size, i);

		if (c != 0)
			rtt[got++] = c;
	}
	send_end(p);
	if (got == 0) {
		fprintf(stderr, "raw_fwd: no echo\n");
		free(rtt);
		return -ETIMEDOUT;
	}
	qsort(rtt, got, sizeof(*rtt), cmp_u64);
	for (uint32_t i = 0; i < got; i++)
		sum += (double)rtt[i];
	printf("raw_fwd: mode=ping size=%u iters=%u lost=%u rtt_min_us=%.3f rtt_median_us=%.3f rtt_avg_us=%.3f rtt_p99_us=%.3f\n",
	       size, iters, iters - got, (double)rtt[0] / hz, (double)rtt[got / 2] / hz,
	       sum / got / hz, (double)rtt[(uint64_t)got * 99 / 100] / hz);
	fflush(stdout);
	free(rtt);
	return 0;
}

/* ---- net_ring in one process ------------------------------------------------ */

/* Two ports whose tx ring is the other's rx ring. */
static int
ring_pair(struct rf_port *a, struct rf_port *b)
{
	struct rte_ring *r0 = rte_ring_create("rf_r0", 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_ring *r1 = rte_ring_create("rf_r1", 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	int pa, pb;

	if (r0 == NULL || r1 == NULL)
		return -ENOMEM;
	pa = rte_eth_from_rings("rf_a", &r0, 1, &r1, 1, SOCKET_ID_ANY);
	pb = rte_eth_from_rings("rf_b", &r1, 1, &r0, 1, SOCKET_ID_ANY);
	if (pa < 0 || pb < 0)
		return -ENODEV;
	if (port_setup((uint16_t)pa, a) != 0)
		return -EIO;
	if (port_setup((uint16_t)pb, b) != 0) {
		port_close(a);
		return -EIO;
	}
	return 0;
}

static unsigned int
worker_lcore(void)
{
	unsigned int l = rte_get_next_lcore(-1, 1, 0);

	if (l >= RTE_MAX_LCORE)
		fprintf(stderr, "raw_fwd: ring modes need two lcores (-l 0-1)\n");
	return l;
}

/* ---- main ------------------------------------------------------------------- */

static void
usage(void)
{
	fprintf(stderr, "usage: raw_fwd [EAL options] -- sink | echo | gen -s SIZE -t SECONDS |\n"
		"       ping -s SIZE -n ITERS | ring-rate -s SIZE -t SECONDS | ring-ping -s SIZE -n ITERS\n"
		"       [-b BURST] [-r DESCRIPTORS] [-w PAYLOAD (with -s; not ring-ping)]\n");
}

struct opts {
	const char *mode;
	unsigned long size, iters, burst, desc, payload;
	double seconds;
};

static int
parse(int argc, char **argv, struct opts *o)
{
	o->size = 64;
	o->iters = 10000;
	o->seconds = 3;
	o->burst = RF_BURST;
	o->desc = 0;
	o->payload = 0;
	if (argc < 2)
		return -1;
	o->mode = argv[1];
	for (int i = 2; i + 1 < argc; i += 2) {
		char *end;

		if (strcmp(argv[i], "-s") == 0)
			o->size = strtoul(argv[i + 1], &end, 10);
		else if (strcmp(argv[i], "-n") == 0)
			o->iters = strtoul(argv[i + 1], &end, 10);
		else if (strcmp(argv[i], "-t") == 0)
			o->seconds = strtod(argv[i + 1], &end);
		else if (strcmp(argv[i], "-b") == 0)
			o->burst = strtoul(argv[i + 1], &end, 10);
		else if (strcmp(argv[i], "-r") == 0)
			o->desc = strtoul(argv[i + 1], &end, 10);
		else if (strcmp(argv[i], "-w") == 0)
			o->payload = strtoul(argv[i + 1], &end, 10);
		else
			return -1;
		if (*end != '\0')
			return -1;
	}
	if ((argc % 2) != 0 || o->size < RF_MIN_SIZE || o->size > RF_MAX_SIZE ||
	    o->iters == 0 || o->iters > 10000000 || !(o->seconds > 0 && o->seconds < 3600) ||
	    o->burst == 0 || o->burst > RF_BURST_MAX || o->desc > 32768 ||
	    o->payload > RF_WORK_BUF / 2)
		return -1;
	if (o->payload != 0 && strcmp(o->mode, "ring-ping") == 0)
		return -1;
	rf_burst = (uint16_t)o->burst;
	rf_desc = (uint16_t)o->desc;
	return 0;
}

static int
run_ring(const struct opts *o)
{
	struct rf_port a, b;
	unsigned int w = worker_lcore();
	int ret;

	if (w >= RTE_MAX_LCORE)
		return -EINVAL;
	ret = ring_pair(&a, &b);
	if (ret != 0)
		return ret;
	if (strcmp(o->mode, "ring-rate") == 0) {
		struct sink_args s = { .port = b };
		struct gen_args g = { .port = a, .size = (uint16_t)o->size, .seconds = o->seconds };
		static struct rf_work wg, ws;

		if (o->payload != 0) {
			if (work_init(&wg, o->size, (uint32_t)o->payload) != 0 ||
			    work_init(&ws, o->size, (uint32_t)o->payload) != 0) {
				fprintf(stderr, "raw_fwd: -w %lu does not fit -s %lu\n", o->payload, o->size);
				return -EINVAL;
			}
			g.port.work = &wg;
			s.port.work = &ws;
		}
		rte_eal_remote_launch(sink_run, &s, w);
		gen_run(&g);
		rte_eal_wait_lcore(w);
		sink_report(&s);
		ret = s.rc;
		work_fini(&wg);
		work_fini(&ws);
	} else {
		rte_eal_remote_launch(echo_run, &b, w);
		ret = ping_run(&a, (uint16_t)o->size, (uint32_t)o->iters);
		stop_req = 1;
		rte_eal_wait_lcore(w);
	}
	port_close(&a);
	port_close(&b);
	return ret;
}

static int
run_port(const struct opts *o)
{
	static struct rf_work work;
	struct rf_port p;
	int ret;

	if (rte_eth_dev_count_avail() < 1) {
		fprintf(stderr, "raw_fwd: no port (give EAL a --vdev)\n");
		return -ENODEV;
	}
	if (o->payload != 0) {
		ret = work_init(&work, o->size, (uint32_t)o->payload);
		if (ret != 0) {
			fprintf(stderr, "raw_fwd: -w %lu does not fit -s %lu\n", o->payload, o->size);
			work_fini(&work);
			return ret;
		}
	}
	ret = port_setup(0, &p);
	if (ret != 0) {
		work_fini(&work);
		return ret;
	}
	if (o->payload != 0)
		p.work = &work;
	if (strcmp(o->mode, "sink") == 0 || strcmp(o->mode, "echo") == 0) {
		/* a memif server's link comes up only once the client starts */
		printf("raw_fwd: ready\n");
		fflush(stdout);
	}
	ret = port_wait_up(p.id, 30);
	if (ret != 0) {
		port_close(&p);
		work_fini(&work);
		return ret;
	}
	if (strcmp(o->mode, "sink") == 0) {
		struct sink_args s = { .port = p };

		sink_run(&s);
		sink_report(&s);
		ret = s.rc;
	} else if (strcmp(o->mode, "echo") == 0) {
		ret = echo_run(&p);
	} else if (strcmp(o->mode, "gen") == 0) {
		struct gen_args g = { .port = p, .size = (uint16_t)o->size, .seconds = o->seconds };

		ret = gen_run(&g);
	} else {
		ret = ping_run(&p, (uint16_t)o->size, (uint32_t)o->iters);
	}
	port_close(&p);
	work_fini(&work);
	return ret;
}

int
main(int argc, char **argv)
{
	struct opts o;
	int n, ret;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "raw_fwd: EAL: %s\n", rte_strerror(rte_errno));
		return 2;
	}
	if (parse(argc - n, argv + n, &o) != 0 ||
	    (strcmp(o.mode, "sink") != 0 && strcmp(o.mode, "echo") != 0 &&
	     strcmp(o.mode, "gen") != 0 && strcmp(o.mode, "ping") != 0 &&
	     strcmp(o.mode, "ring-rate") != 0 && strcmp(o.mode, "ring-ping") != 0)) {
		usage();
		rte_eal_cleanup();
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	ret = strncmp(o.mode, "ring-", 5) == 0 ? run_ring(&o) : run_port(&o);
	rte_eal_cleanup();
	return ret == 0 ? 0 : 1;
}
