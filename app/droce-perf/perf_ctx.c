/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_ctx.c - droce-perf's resources: the device context, one PD, one
 * registered buffer, a send CQ and a receive CQ, one RC QP.
 *
 * The buffer has two halves of buf_size / 2 bytes (at least perftest's
 * cycle buffer, a page, each), as perftest lays its buffer out: the local
 * side sends and writes from the first ("tx") half; the second ("rx") half
 * is the one the address message advertises: the peer writes, reads and
 * adds there, receives land there, and so do our reads' data and atomics'
 * results (one 8-byte slot per operation, round robin).  Remote operations
 * target rem.vaddr, at offset 0, whoever the peer is.
 *
 * QP attributes as perftest sets them (perftest_resources.c,
 * ctx_modify_qp_to_rtr/rts): path MTU the negotiated one, min_rnr_timer 12,
 * max_dest_rd_atomic our out_reads, max_rd_atomic the peer's out_reads
 * (capped at ours), timeout 14 (-u), retry_cnt 7, rnr_retry 7, hop limit 0xFF,
 * the PSNs and GIDs from the key messages.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perf.h"

#define PERF_PORT_WAIT_MS 10000
#define PERF_MIN_RNR_TIMER 12
#define PERF_HOP_LIMIT 0xff

uint64_t
perf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint8_t
perf_pattern(uint32_t seed, size_t i, uint32_t size)
{
	/* a 32-bit mix (murmur3's finaliser) of the offset, size and seed:
	 * neighbouring bytes, sizes and runs all differ */
	uint32_t x = (uint32_t)i * 0x9e3779b1u ^ size * 0x85ebca6bu ^ seed;

	x ^= x >> 16;
	x *= 0x85ebca6bu;
	x ^= x >> 13;
	x *= 0xc2b2ae35u;
	x ^= x >> 16;
	return (uint8_t)x;
}

int
perf_ctx_open(struct perf_ctx *c, struct droce_device *dev,
	      const struct perf_opts *o)
{
	struct droce_port_attr pa;
	int rc;

	memset(c, 0, sizeof(*c));
	c->o = o;
	c->chan.fd = -1;
	c->context = droce_open_device(dev);
	if (c->context == NULL) {
		fprintf(stderr, "Couldn't get context for %s: %s\n",
			droce_get_device_name(dev), strerror(errno));
		return 1;
	}
	memset(&pa, 0, sizeof(pa));
	rc = droce_query_port(c->context, (uint8_t)o->ib_port, &pa);
	if (rc != 0) {
		fprintf(stderr, "Unable to query port %d: %s\n", o->ib_port,
			strerror(rc));
		return 1;
	}
	c->active_mtu = pa.active_mtu;
	rc = droce_query_gid(c->context, (uint8_t)o->ib_port, o->gid_index,
			     &c->my.gid);
	if (rc != 0) {
		fprintf(stderr, "Couldn't read GID index %d: %s (give the "
			"port an address with --droce-ipv4)\n", o->gid_index,
			strerror(rc));
		return 1;
	}
	return 0;
}

void
perf_ctx_qp_attr(const struct perf_ctx *c, struct droce_qp_init_attr *ia)
{
	const struct perf_opts *o = c->o;

	memset(ia, 0, sizeof(*ia));
	ia->send_cq = c->scq;
	ia->recv_cq = c->rcq;
	ia->cap.max_send_wr = o->tx_depth;
	ia->cap.max_recv_wr = o->rx_depth;
	ia->cap.max_send_sge = 1;
	ia->cap.max_recv_sge = 1;
	ia->cap.max_inline_data = o->inline_size > 0 ?
		(uint32_t)o->inline_size : 0;
	ia->qp_type = DROCE_QPT_RC;
}

void
perf_ctx_set_dest(struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;

	c->my.qpn = c->qp->qp_num;
	c->my.psn = (uint32_t)(lrand48() & 0xffffff);
	c->my.rkey = c->mr->rkey;
	c->my.vaddr = (uintptr_t)perf_rx_half(c);
	/* perftest: the device's maximum for reads and atomics, else 1 */
	c->my.out_reads = o->verb == PERF_READ || o->verb == PERF_ATOMIC ?
		DROCE_MAX_RD_ATOMIC : 1;
}

static int
create_qp(struct perf_ctx *c)
{
	struct droce_qp_init_attr ia;
	struct droce_qp_attr attr;
	int rc;

	perf_ctx_qp_attr(c, &ia);
	c->qp = droce_create_qp(c->pd, &ia);
	if (c->qp == NULL) {
		fprintf(stderr, "Couldn't create QP: %s\n", strerror(errno));
		return 1;
	}
	c->max_inline = ia.cap.max_inline_data;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = DROCE_QPS_INIT;
	attr.port_num = (uint8_t)c->o->ib_port;
	attr.qp_access_flags = DROCE_ACCESS_REMOTE_WRITE |
		DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC;
	rc = droce_modify_qp(c->qp, &attr, DROCE_QP_STATE |
			     DROCE_QP_PKEY_INDEX | DROCE_QP_PORT |
			     DROCE_QP_ACCESS_FLAGS);
	if (rc != 0) {
		fprintf(stderr, "Failed to modify QP to INIT: %s\n",
			strerror(rc));
		return 1;
	}
	perf_ctx_set_dest(c);
	return 0;
}

int
perf_ctx_alloc(struct perf_ctx *c, size_t buf_size)
{
	const struct perf_opts *o = c->o;
	const int access = DROCE_ACCESS_LOCAL_WRITE |
		DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ |
		DROCE_ACCESS_REMOTE_ATOMIC;

	/* memory the daemon can reach in daemon mode (droced registers only
	 * its own buffers); rte_malloc in process; zeroed in both */
	c->buf = droce_alloc_buf(c->context, buf_size);
	if (c->buf == NULL) {
		fprintf(stderr, "Couldn't allocate %zu bytes: %s\n", buf_size,
			strerror(errno));
		return 1;
	}
	c->buf_size = buf_size;
	if (c->pd == NULL)
		c->pd = droce_alloc_pd(c->context);
	if (c->pd == NULL) {
		fprintf(stderr, "Couldn't allocate PD: %s\n", strerror(errno));
		return 1;
	}
	c->mr = droce_reg_mr(c->pd, c->buf, buf_size, access);
	if (c->mr == NULL) {
		fprintf(stderr, "Couldn't register MR: %s\n", strerror(errno));
		return 1;
	}
	c->scq = droce_create_cq(c->context, (int)o->tx_depth + 1, NULL,
				 NULL, 0);
	c->rcq = droce_create_cq(c->context, (int)o->rx_depth + 1, NULL,
				 NULL, 0);
	if (c->scq == NULL || c->rcq == NULL) {
		fprintf(stderr, "Couldn't create CQ: %s\n", strerror(errno));
		return 1;
	}
	return o->rdma_cm ? 0 : create_qp(c);
}

int
perf_ctx_wait_port(struct perf_ctx *c)
{
	struct droce_port_attr pa;
	int ms, rc = 0;

	for (ms = 0; ms <= PERF_PORT_WAIT_MS; ms++) {
		memset(&pa, 0, sizeof(pa));
		rc = droce_query_port(c->context, (uint8_t)c->o->ib_port, &pa);
		if (rc != 0 || pa.state == DROCE_PORT_ACTIVE)
			break;
		droce_progress(c->context);
		usleep(1000);
	}
	if (rc != 0 || pa.state != DROCE_PORT_ACTIVE) {
		fprintf(stderr, "Port %d is not ACTIVE after %d ms\n",
			c->o->ib_port, PERF_PORT_WAIT_MS);
		return 1;
	}
	return 0;
}

int
perf_ctx_connect(struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;
	struct droce_qp_attr attr;
	int rc;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = DROCE_QPS_RTR;
	attr.path_mtu = c->mtu;
	attr.dest_qp_num = c->rem.qpn;
	attr.rq_psn = c->rem.psn;
	attr.max_dest_rd_atomic = (uint8_t)c->my.out_reads;
	attr.min_rnr_timer = PERF_MIN_RNR_TIMER;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.grh.dgid = c->rem.gid;
	attr.ah_attr.grh.sgid_index = (uint8_t)o->gid_index;
	attr.ah_attr.grh.hop_limit = PERF_HOP_LIMIT;
	attr.ah_attr.port_num = (uint8_t)o->ib_port;
	rc = droce_modify_qp(c->qp, &attr, DROCE_QP_STATE | DROCE_QP_AV |
			     DROCE_QP_PATH_MTU | DROCE_QP_DEST_QPN |
			     DROCE_QP_RQ_PSN | DROCE_QP_MAX_DEST_RD_ATOMIC |
			     DROCE_QP_MIN_RNR_TIMER);
	if (rc != 0) {
		fprintf(stderr, "Failed to modify QP to RTR: %s\n",
			strerror(rc));
		return 1;
	}
	attr.qp_state = DROCE_QPS_RTS;
	attr.timeout = c->o->qp_timeout;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = c->my.psn;
	attr.max_rd_atomic = (uint8_t)(c->rem.out_reads < DROCE_MAX_RD_ATOMIC ?
				       c->rem.out_reads : DROCE_MAX_RD_ATOMIC);
	rc = droce_modify_qp(c->qp, &attr, DROCE_QP_STATE | DROCE_QP_TIMEOUT |
			     DROCE_QP_RETRY_CNT | DROCE_QP_RNR_RETRY |
			     DROCE_QP_SQ_PSN | DROCE_QP_MAX_QP_RD_ATOMIC);
	if (rc != 0) {
		fprintf(stderr, "Failed to modify QP to RTS: %s\n",
			strerror(rc));
		return 1;
	}
	return 0;
}

/*
 * DROCE_COUNTERS=1: the transport's recovery counters on stderr at the end,
 * as droce-pingpong prints them (tests check that a lossy link really made
 * droce retransmit).
 */
static void
print_counters(struct droce_context *context)
{
	static const char *const names[] = {
		"sent_pkts", "rcvd_pkts", "retransmitted_pkts",
		"completer_retry_err", "retransmit_timeouts", "rcvd_seq_err",
		"out_of_seq_request", "duplicate_request", "sent_seq_nak",
		"icrc_err", "sched_gaps", "sched_gap_max_us", "retransmit_timeouts_in_gap",
		"tx_zc_pkts",
	};
	size_t i;

	if (getenv("DROCE_COUNTERS") == NULL || context == NULL)
		return;
	/* UINT64_MAX: an application of droced, whose engine counts for
	 * every application at once (droced's telemetry /droce/stats) */
	if (droce_get_counter(context, names[0]) == UINT64_MAX) {
		fprintf(stderr, "droce counters: not counted here (the engine is droced's)\n");
		return;
	}
	fprintf(stderr, "droce counters:");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		fprintf(stderr, " %s=%" PRIu64, names[i],
			droce_get_counter(context, names[i]));
	fprintf(stderr, "\n");
}

/*
 * The engine's own scheduling gaps (lib/transport tp_timer.c), always: a
 * run whose peer gave up ("transport retry counter exceeded") after this
 * side was descheduled longer than the peer's retry budget shows it here.
 */
static void
print_gaps(struct droce_context *context)
{
	if (context == NULL)
		return;
	/* UINT64_MAX: no such counter here (an application of droced:
	 * the engine and its counters are droced's) */
	if (droce_get_counter(context, "sched_gap_max_us") == UINT64_MAX) {
		fprintf(stderr, "droce-perf: engine gaps: not counted here (the engine is droced's)\n");
		return;
	}
	fprintf(stderr, "droce-perf: engine gaps: longest %" PRIu64 " us, %" PRIu64
		" of 1 ms or more, %" PRIu64 " retransmit timeouts in them re-armed\n",
		droce_get_counter(context, "sched_gap_max_us"),
		droce_get_counter(context, "sched_gaps"),
		droce_get_counter(context, "retransmit_timeouts_in_gap"));
}

void
perf_ctx_close(struct perf_ctx *c)
{
	print_gaps(c->context);
	print_counters(c->context);
	if (c->chan.fd >= 0)
		close(c->chan.fd);
	perf_cm_close(c);
	if (c->qp != NULL)
		droce_destroy_qp(c->qp);
	if (c->scq != NULL)
		droce_destroy_cq(c->scq);
	if (c->rcq != NULL)
		droce_destroy_cq(c->rcq);
	if (c->mr != NULL)
		droce_dereg_mr(c->mr);
	if (c->pd != NULL)
		droce_dealloc_pd(c->pd);
	if (c->buf != NULL)
		droce_free_buf(c->context, c->buf);
	if (c->context != NULL)
		droce_close_device(c->context);
	memset(c, 0, sizeof(*c));
	c->chan.fd = -1;
}

uint8_t *
perf_tx_half(struct perf_ctx *c)
{
	return c->buf;
}

uint8_t *
perf_rx_half(struct perf_ctx *c)
{
	return c->buf + c->buf_size / 2;
}

size_t
perf_half_size(const struct perf_ctx *c)
{
	return c->buf_size / 2;
}

int
perf_post_recv(struct perf_ctx *c, uint64_t wr_id, uint32_t len)
{
	struct droce_sge sge = {
		.addr = (uintptr_t)perf_rx_half(c),
		.length = len,
		.lkey = c->mr->lkey,
	};
	struct droce_recv_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
	};
	struct droce_recv_wr *bad;

	return droce_post_recv(c->qp, &wr, &bad);
}

int
perf_post_op(struct perf_ctx *c, uint64_t wr_id, uint32_t size, int signaled,
	     uint64_t seq)
{
	const struct perf_opts *o = c->o;
	size_t slots = perf_half_size(c) / 8;
	struct droce_sge sge = {
		.addr = (uintptr_t)perf_tx_half(c), .length = size,
		.lkey = c->mr->lkey,
	};
	struct droce_send_wr wr;
	struct droce_send_wr *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = signaled ? DROCE_SEND_SIGNALED : 0;
	switch (o->verb) {
	case PERF_SEND:
		wr.opcode = DROCE_WR_SEND;
		break;
	case PERF_WRITE:
		wr.opcode = DROCE_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = c->rem.vaddr;
		wr.wr.rdma.rkey = c->rem.rkey;
		break;
	case PERF_READ:
		wr.opcode = DROCE_WR_RDMA_READ;
		sge.addr = (uintptr_t)perf_rx_half(c);
		wr.wr.rdma.remote_addr = c->rem.vaddr;
		wr.wr.rdma.rkey = c->rem.rkey;
		break;
	case PERF_ATOMIC:
		wr.opcode = o->atomic == PERF_CMP_AND_SWAP ?
			DROCE_WR_ATOMIC_CMP_AND_SWP :
			DROCE_WR_ATOMIC_FETCH_AND_ADD;
		/* each operation's result in its own slot (checked after) */
		sge.addr = (uintptr_t)perf_rx_half(c) + 8 * (seq % slots);
		sge.length = 8;
		wr.wr.atomic.remote_addr = c->rem.vaddr;
		wr.wr.atomic.rkey = c->rem.rkey;
		wr.wr.atomic.compare_add = o->atomic == PERF_CMP_AND_SWAP ?
			seq : 1;
		wr.wr.atomic.swap = seq + 1;
		break;
	}
	if ((o->verb == PERF_SEND || o->verb == PERF_WRITE) &&
	    o->inline_size > 0 && size <= (uint32_t)o->inline_size &&
	    size <= c->max_inline)
		wr.send_flags |= DROCE_SEND_INLINE;
	return droce_post_send(c->qp, &wr, &bad);
}

int
perf_poll(struct perf_ctx *c, struct droce_cq *cq, int n, struct droce_wc *wc)
{
	int ne = droce_poll_cq(cq, n, wc);
	int i;

	(void)c;
	if (ne < 0) {
		fprintf(stderr, "poll CQ failed %d\n", ne);
		return -1;
	}
	for (i = 0; i < ne; i++) {
		if (wc[i].status != DROCE_WC_SUCCESS) {
			fprintf(stderr, " Completion with error at %s:\n"
				" Failed status %d: %s wr_id %d\n",
				cq == c->scq ? "client" : "server",
				(int)wc[i].status,
				droce_wc_status_str(wc[i].status),
				(int)wc[i].wr_id);
			return -1;
		}
	}
	return ne;
}
