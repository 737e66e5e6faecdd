/* SPDX-License-Identifier: BSD-3-Clause */
/* A test acting as a hostile RoCEv2 peer: see raw_peer.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_eal.h>
#include <rte_mbuf.h>

#include "dev_pair.h"
#include "net_host.h"
#include "raw_peer.h"
#include "transport.h"
#include "prot.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "vwire.h"

/*
 * No runtime files and no hugepage files left behind, so that any number
 * of raw-peer tests run at once: --in-memory, or with --no-huge (which
 * DPDK 22.11 refuses together with --in-memory) --no-shconf in its slot.
 */
void
rp_eal_init(char *prog)
{
	char *args[12];
	int n = 0;

	if (dp_eal_args(args, &n, prog, "-l", "0", "--in-memory"))
		args[4] = "--no-shconf";
	args[n] = NULL;
	if (rte_eal_init(n, args) < 0) {
		fprintf(stderr, "%s: EAL init failed\n", prog);
		exit(1);
	}
}

void
rp_open_wire(struct raw_peer *rp, size_t buf_len, const struct vwire_config *wire)
{
	const uint8_t ip[4] = { 198, 18, 0, 1 }, peer_ip[4] = { 198, 18, 0, 2 };
	struct tp_dev_config cfg = { 0 };

	memset(rp, 0, sizeof(*rp));
	assert_int_equal(vwire_pair_create(wire, &rp->link, &rp->peer), 0);
	rp->ctx = droce_open_context(NULL);
	assert_non_null(rp->ctx);
	assert_int_equal(verbs_attach_link(rp->ctx, rp->link, &cfg), 0);
	roce_gid_from_ipv4(rp->gid, ip);
	roce_gid_from_ipv4(rp->peer_gid, peer_ip);
	assert_int_equal(net_host_add_addr(tp_dev_host(verbs_tp(rp->ctx)), rp->gid, 24), 0);
	assert_int_equal(net_host_add_static(tp_dev_host(verbs_tp(rp->ctx)), rp->peer_gid,
					     &rp->peer->mac), 0);
	rp->len = buf_len;
	dp_alloc_end(rp->ctx, buf_len, DP_REMOTE_ALL | DROCE_ACCESS_MW_BIND, 256,
		     &rp->pd, &rp->buf, &rp->mr, &rp->cq);
}

void
rp_open(struct raw_peer *rp, size_t buf_len)
{
	rp_open_wire(rp, buf_len, NULL);
}

void
rp_close(struct raw_peer *rp)
{
	assert_int_equal(droce_destroy_cq(rp->cq), 0);
	assert_int_equal(droce_dereg_mr(rp->mr), 0);
	assert_int_equal(droce_dealloc_pd(rp->pd), 0);
	free(rp->buf);
	assert_int_equal(verbs_detach_link(rp->ctx), 0);
	assert_int_equal(droce_close_context(rp->ctx), 0);
	droce_link_close(rp->link);
	droce_link_close(rp->peer);
}

static void
qp_to_init(struct droce_qp *qp, enum droce_qp_type type, uint16_t pkey_index)
{
	struct droce_qp_attr a;
	int mask = DROCE_QP_STATE | DROCE_QP_PKEY_INDEX | DROCE_QP_PORT;

	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_INIT;
	a.port_num = 1;
	a.pkey_index = pkey_index;
	a.qkey = RP_QKEY;
	a.qp_access_flags = DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ |
			    DROCE_ACCESS_REMOTE_ATOMIC;
	mask |= type == DROCE_QPT_UD ? DROCE_QP_QKEY : DROCE_QP_ACCESS_FLAGS;
	assert_int_equal(droce_modify_qp(qp, &a, mask), 0);
}

static void
qp_to_rtr(struct raw_peer *rp, struct droce_qp *qp, enum droce_qp_type type)
{
	struct droce_qp_attr a;
	int mask = DROCE_QP_STATE;

	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTR;
	if (type != DROCE_QPT_UD) {
		a.path_mtu = DROCE_MTU_1024;
		a.dest_qp_num = RP_PEER_QPN;
		a.rq_psn = RP_PSN;
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.hop_limit = 64;
		memcpy(a.ah_attr.grh.dgid.raw, rp->peer_gid, 16);
		mask |= DROCE_QP_AV | DROCE_QP_PATH_MTU | DROCE_QP_DEST_QPN |
			DROCE_QP_RQ_PSN;
		if (type == DROCE_QPT_RC)
			mask |= DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER;
	}
	assert_int_equal(droce_modify_qp(qp, &a, mask), 0);
}

static void
qp_to_rts(struct droce_qp *qp, enum droce_qp_type type)
{
	struct droce_qp_attr a;
	int mask = DROCE_QP_STATE | DROCE_QP_SQ_PSN;

	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTS;
	a.sq_psn = RP_PSN;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	if (type == DROCE_QPT_RC)
		mask |= DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT | DROCE_QP_RNR_RETRY |
			DROCE_QP_MAX_QP_RD_ATOMIC;
	assert_int_equal(droce_modify_qp(qp, &a, mask), 0);
}

struct droce_qp *
rp_new_qp(struct raw_peer *rp, enum droce_qp_type type)
{
	struct droce_qp_init_attr init = {
		.send_cq = rp->cq,
		.recv_cq = rp->cq,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = type,
	};
	struct droce_qp *qp = droce_create_qp(rp->pd, &init);

	assert_non_null(qp);
	return qp;
}

void
rp_connect_qp(struct raw_peer *rp, struct droce_qp *qp, uint16_t pkey_index)
{
	qp_to_init(qp, qp->qp_type, pkey_index);
	qp_to_rtr(rp, qp, qp->qp_type);
	qp_to_rts(qp, qp->qp_type);
}

struct droce_qp *
rp_create_qp(struct raw_peer *rp, enum droce_qp_type type, uint16_t pkey_index)
{
	struct droce_qp *qp = rp_new_qp(rp, type);

	rp_connect_qp(rp, qp, pkey_index);
	return qp;
}

void
rp_destroy_qp(struct droce_qp *qp)
{
	assert_int_equal(droce_destroy_qp(qp), 0);
}

struct roce_pkt
rp_pkt(const struct raw_peer *rp, const struct droce_qp *qp, uint8_t opcode,
       uint32_t psn)
{
	struct roce_pkt p;

	memset(&p, 0, sizeof(p));
	memcpy(p.dst_mac, rp->link->mac.addr_bytes, 6);
	memcpy(p.src_mac, rp->peer->mac.addr_bytes, 6);
	p.ip_version = 4;
	p.ip_ttl = 64;
	p.ip_df = 1;
	memcpy(p.src_gid, rp->peer_gid, 16);
	memcpy(p.dst_gid, rp->gid, 16);
	p.udp_sport = roce_udp_sport(RP_PEER_QPN, qp->qp_num);
	p.opcode = opcode;
	p.pkey = 0xffff;
	p.dest_qpn = qp->qp_num;
	p.ackreq = 1;
	p.psn = psn & ROCE_PSN_MASK;
	p.deth.qkey = RP_QKEY;
	p.deth.src_qpn = RP_PEER_QPN;
	return p;
}

struct rte_mbuf *
rp_build(struct raw_peer *rp, struct roce_pkt *p, const void *payload, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(rp->peer->pool);
	size_t flen;

	assert_non_null(m);
	p->payload_len = len;
	flen = roce_build(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m), p,
			  payload);
	assert_true(flen != 0);
	assert_non_null(rte_pktmbuf_append(m, (uint16_t)flen));
	return m;
}

void
rp_send_as(struct raw_peer *rp, struct roce_pkt *p, const void *payload,
	   uint32_t len, uint8_t wire_opcode, bool bad_icrc)
{
	struct rte_mbuf *m = rp_build(rp, p, payload, len);
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	size_t flen = m->data_len;

	if (wire_opcode != p->opcode) {
		/* the opcode is not masked: the ICRC must be computed again */
		f[p->bth_off] = wire_opcode;
		roce_icrc_store(f + flen - ROCE_ICRC_LEN,
				roce_icrc_compute(f + p->l3_off, flen - p->l3_off,
						  p->ip_version));
	}
	if (bad_icrc)
		f[flen - 1] ^= 0x01;
	assert_int_equal(droce_link_tx(rp->peer, &m, 1), 1);
}

void
rp_send(struct raw_peer *rp, struct roce_pkt *p, const void *payload,
	uint32_t len, bool bad_icrc)
{
	rp_send_as(rp, p, payload, len, p->opcode, bad_icrc);
}

static void
keep_frame(struct rp_frame *out, const struct rte_mbuf *m)
{
	out->len = rte_pktmbuf_data_len(m);
	assert_true(out->len <= sizeof(out->data));
	memcpy(out->data, rte_pktmbuf_mtod(m, const uint8_t *), out->len);
	out->err = roce_parse_eth(out->data, out->len, &out->pkt);
	out->icrc_ok = out->err == ROCE_PARSE_OK && roce_icrc_verify(out->data, &out->pkt);
}

int
rp_collect(struct raw_peer *rp, struct rp_frame *out, int max, double seconds)
{
	double end = dp_now() + seconds;
	int got = 0;

	while (got < max && dp_now() < end) {
		struct rte_mbuf *m[16];
		uint16_t n;

		droce_progress(rp->ctx);
		n = droce_link_rx(rp->peer, m, RTE_DIM(m));
		for (uint16_t i = 0; i < n; i++) {
			if (got < max)
				keep_frame(&out[got++], m[i]);
			rte_pktmbuf_free(m[i]);
		}
	}
	return got;
}

int
rp_poll_cq(struct raw_peer *rp, struct droce_wc *wc, int n, double seconds)
{
	double end = dp_now() + seconds;
	int got = 0;

	while (got < n) {
		int r;

		droce_progress(rp->ctx);
		r = droce_poll_cq(rp->cq, n - got, wc + got);
		assert_true(r >= 0);
		got += r;
		if (got < n && dp_now() > end)
			break;
	}
	return got;
}

uint64_t
rp_counter(const struct raw_peer *rp, const char *name)
{
	return tp_dev_counter(verbs_tp(rp->ctx), name);
}

uint64_t
rp_rkey_checks(const struct raw_peer *rp)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < PROT_STATUS_MAX; i++)
		n += tp_dev_prot_counter(verbs_tp(rp->ctx), true, i);
	return n;
}

void
rp_expect_frame(const struct rp_frame *f, uint8_t opcode, uint32_t psn)
{
	assert_int_equal(f->err, ROCE_PARSE_OK);
	assert_true(f->icrc_ok);
	assert_int_equal(f->pkt.dest_qpn, RP_PEER_QPN);
	assert_int_equal(f->pkt.opcode, opcode);
	assert_int_equal(f->pkt.psn, psn);
}

void
rp_expect_aeth(const struct rp_frame *f, uint32_t psn, unsigned int type,
	       unsigned int value, uint32_t msn)
{
	rp_expect_frame(f, ROCE_OP_ACKNOWLEDGE, psn);
	assert_int_equal(roce_aeth_type(f->pkt.aeth.syndrome), type);
	if (type != ROCE_AETH_ACK)
		assert_int_equal(roce_aeth_value(f->pkt.aeth.syndrome), value);
	assert_int_equal(f->pkt.aeth.msn, msn);
}

enum droce_qp_state
rp_qp_state(struct droce_qp *qp)
{
	struct droce_qp_attr a;
	struct droce_qp_init_attr init;

	assert_int_equal(droce_query_qp(qp, &a, DROCE_QP_STATE, &init), 0);
	return a.qp_state;
}
