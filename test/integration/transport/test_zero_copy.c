/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zero-copy transmit (lib/transport README.md, "Zero copy") against a raw
 * peer on a virtual wire that reports DROCE_LINK_TX_ZC (vwire_config
 * offloads; the wire hands the sender's mbufs over as they are, so the
 * peer sees the segments droce built):
 *   - a 4001-byte RDMA WRITE at MTU 1024, threshold 0 (every payload):
 *     four frames of three segments each, the payload segment an external
 *     buffer pointing into the source MR at the packet's offset, the bytes
 *     as sent, the ICRC right by lib/wire and by a CRC-32 written here from
 *     the IBTA's definition (annex A17.3.3), the pad of the last packet
 *     (929 bytes: 3) in the trailer; tx_zc_pkts exactly 4;
 *   - while the peer (the "PMD") still holds those frames, droce_dereg_mr
 *     of the source MR reports EBUSY after its wait and does not free the
 *     region, whose R_Key is dead at once: the peer's WRITE to it is
 *     NAKed (remote access error); the frames' bytes are still the
 *     buffer's; once the peer frees them the dereg succeeds;
 *   - SEND and READ responses from the same path (frames, bytes, counter);
 *   - a threshold of 1000 bytes: the 1024-byte packets zero-copy, the
 *     929-byte one copied (tx_zc_pkts 3);
 *   - the same WRITE on a wire without the offload: one segment per frame,
 *     tx_zc_pkts 0.
 * The zero-copy frames of the first two cases also go to a pcap file that
 * ../shared/vectors/check_icrc.py (DROCE_VECTORS, the reference checker of
 * the captures from Linux Soft-RoCE) must find all RoCEv2 with good ICRCs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "droce_link.h"
#include "raw_peer.h"
#include "vwire.h"

#define MSG 4001u		/* 3 x 1024 + 929 (pad 3) at MTU 1024 */
#define MTU 1024u
#define NPKT 4u
#define RVA 0x10000u
#define RKEY 0x4242u

static void
open_zc(struct raw_peer *rp, bool zc, uint32_t min, struct droce_qp **qp)
{
	struct vwire_config w = { .offloads = zc ? DROCE_LINK_TX_ZC : 0 };

	rp_open_wire(rp, 8192, &w);
	rp->link->tx_zc_min = min;
	for (uint32_t i = 0; i < rp->len; i++)
		rp->buf[i] = (uint8_t)(i * 37 + (i >> 8) + 1);
	*qp = rp_create_qp(rp, DROCE_QPT_RC, 0);
}

static void
post(struct raw_peer *rp, struct droce_qp *qp, enum droce_wr_opcode op, uint32_t len)
{
	struct droce_sge sge = {
		.addr = (uintptr_t)rp->buf, .length = len, .lkey = rp->mr->lkey,
	};
	struct droce_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = RVA;
	wr.wr.rdma.rkey = RKEY;
	assert_int_equal(droce_post_send(qp, &wr, &bad), 0);
}

/* Run droce until the peer holds n frames (kept, not freed). */
static void
take(struct raw_peer *rp, struct rte_mbuf **m, uint16_t n)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz();
	uint16_t got = 0;

	while (got < n && rte_get_timer_cycles() < end) {
		(void)droce_progress(rp->ctx);
		got += droce_link_rx(rp->peer, m + got, (uint16_t)(n - got));
	}
	assert_int_equal(got, n);
	(void)droce_progress(rp->ctx);
	assert_int_equal(droce_link_rx(rp->peer, m + got, 1), 0);	/* no more */
}

/* CRC-32 (IEEE 802.3, reflected, as zlib), bit by bit: not lib/wire's. */
static uint32_t
crc32_bits(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n-- > 0) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

/*
 * The ICRC of an IPv4 RoCEv2 frame as annex A17.3.3 defines it: 8 bytes
 * of ones, the IP header with TOS, TTL and checksum as ones, the UDP
 * header with its checksum as ones, the BTH with byte 4 as ones, the rest
 * up to the ICRC.
 */
static uint32_t
icrc_reference(const uint8_t *f, size_t len)
{
	uint8_t ones[8], hdr[20 + 8 + 12];
	uint32_t crc;

	memset(ones, 0xff, sizeof(ones));
	memcpy(hdr, f + 14, sizeof(hdr));
	hdr[1] = 0xff;
	hdr[8] = 0xff;
	hdr[10] = hdr[11] = 0xff;
	hdr[20 + 6] = hdr[20 + 7] = 0xff;
	hdr[28 + 4] = 0xff;
	crc = crc32_bits(0, ones, sizeof(ones));
	crc = crc32_bits(crc, hdr, sizeof(hdr));
	return crc32_bits(crc, f + 14 + sizeof(hdr), len - 14 - sizeof(hdr) - 4);
}

/* The peer acknowledges droce's requests up to psn (message msn). */
static void
ack(struct raw_peer *rp, struct droce_qp *qp, uint32_t psn, uint32_t msn)
{
	struct roce_pkt p = rp_pkt(rp, qp, ROCE_OP_ACKNOWLEDGE, psn);
	struct droce_wc wc;

	p.ackreq = 0;
	p.aeth.syndrome = ROCE_AETH_ACK_NO_CREDIT;
	p.aeth.msn = msn;
	rp_send(rp, &p, NULL, 0, false);
	assert_int_equal(rp_poll_cq(rp, &wc, 1, 1.0), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
}

/* The pcap of the zero-copy frames checked (classic format, Ethernet). */
static FILE *pcap;
static char pcap_path[64];
static unsigned int pcap_frames;

static void
pcap_put32(uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 24) };

	assert_int_equal(fwrite(b, 1, 4, pcap), 4);
}

static void
pcap_open(void)
{
	int fd;

	snprintf(pcap_path, sizeof(pcap_path), "/tmp/droce-zc-%d-XXXXXX", (int)getpid());
	fd = mkstemp(pcap_path);
	assert_true(fd >= 0);
	pcap = fdopen(fd, "wb");
	assert_non_null(pcap);
	pcap_put32(0xa1b2c3d4u);
	pcap_put32(2u | 4u << 16);		/* version 2.4 */
	pcap_put32(0);
	pcap_put32(0);
	pcap_put32(65535);
	pcap_put32(1);				/* LINKTYPE_ETHERNET */
	pcap_frames = 0;
}

static void
pcap_frame(const uint8_t *f, uint32_t len)
{
	pcap_put32(pcap_frames++);
	pcap_put32(0);
	pcap_put32(len);
	pcap_put32(len);
	assert_int_equal(fwrite(f, 1, len, pcap), len);
}

/* The reference checker's verdict on every frame written. */
static void
pcap_check(void)
{
	const char *vectors = getenv("DROCE_VECTORS");
	char cmd[512], want[128], line[256] = "";
	FILE *p;

	assert_int_equal(fclose(pcap), 0);
	assert_non_null(vectors);
	snprintf(cmd, sizeof(cmd), "python3 %s/check_icrc.py %s", vectors, pcap_path);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(line, sizeof(line), p));
	assert_int_equal(pclose(p), 0);
	snprintf(want, sizeof(want), "%s: %u packets, %u RoCEv2, ICRC ok %u, bad 0",
		 pcap_path, pcap_frames, pcap_frames, pcap_frames);
	assert_non_null(strstr(line, want));
	unlink(pcap_path);
}

/*
 * Frame i of a zero-copy message whose payload starts at src: three
 * segments, the middle one external and at src + i * MTU, the bytes as a
 * whole frame parsed, payload as the buffer's, ICRC right both ways.
 */
static void
check_zc_frame(struct rte_mbuf *m, uint32_t i, const uint8_t *src, uint32_t msg,
	       uint8_t opcode)
{
	uint32_t plen = RTE_MIN(MTU, msg - i * MTU);
	static uint8_t f[RP_FRAME_MAX];
	struct rte_mbuf *pl = m->next;
	struct roce_pkt p;

	assert_int_equal(m->nb_segs, 3);
	assert_non_null(pl);
	assert_true(RTE_MBUF_HAS_EXTBUF(pl));
	assert_ptr_equal(rte_pktmbuf_mtod(pl, const uint8_t *), src + i * MTU);
	assert_int_equal(pl->data_len, plen);
	assert_int_equal(pl->next->data_len, ((4 - (plen & 3)) & 3) + 4);
	assert_true(m->pkt_len <= sizeof(f));
	assert_ptr_equal(rte_pktmbuf_read(m, 0, m->pkt_len, f), f);
	assert_int_equal(roce_parse_eth(f, m->pkt_len, &p), ROCE_PARSE_OK);
	assert_int_equal(p.opcode, opcode);
	assert_int_equal(p.payload_len, plen);
	assert_int_equal(p.padcnt, (4 - (plen & 3)) & 3);
	assert_memory_equal(f + p.payload_off, src + i * MTU, plen);
	assert_true(roce_icrc_verify(f, &p));
	assert_int_equal(icrc_reference(f, m->pkt_len), p.icrc);
	if (pcap != NULL)
		pcap_frame(f, m->pkt_len);
}

static void
free_all(struct rte_mbuf **m, uint16_t n)
{
	rte_pktmbuf_free_bulk(m, n);
}

static void
test_write_zc_and_dereg_waits(void **state)
{
	static const uint8_t ops[NPKT] = {
		ROCE_OP_RDMA_WRITE_FIRST, ROCE_OP_RDMA_WRITE_MIDDLE,
		ROCE_OP_RDMA_WRITE_MIDDLE, ROCE_OP_RDMA_WRITE_LAST,
	};
	struct rte_mbuf *m[NPKT + 1];
	struct rp_frame fr[2];
	struct droce_qp *qp;
	struct raw_peer rp;
	uint8_t data[64];
	uint64_t t0;

	(void)state;
	open_zc(&rp, true, 0, &qp);
	post(&rp, qp, DROCE_WR_RDMA_WRITE, MSG);
	take(&rp, m, NPKT);
	pcap_open();
	for (uint32_t i = 0; i < NPKT; i++)
		check_zc_frame(m[i], i, rp.buf, MSG, ops[i]);
	pcap_check();
	pcap = NULL;
	assert_int_equal(rp_counter(&rp, "tx_zc_pkts"), NPKT);
	assert_int_equal(rp_counter(&rp, "sent_pkts"), NPKT);
	ack(&rp, qp, RP_PSN + NPKT - 1, 1);	/* done, but the frames are held */

	/* the peer holds the frames: the dereg waits, then EBUSY */
	t0 = rte_get_timer_cycles();
	assert_int_equal(droce_dereg_mr(rp.mr), EBUSY);
	assert_int_equal(errno, EBUSY);
	assert_true(rte_get_timer_cycles() - t0 >= rte_get_timer_hz() / 20);
	/* ... but the R_Key died at once: the peer's WRITE is refused */
	memset(data, 0x5a, sizeof(data));
	{
		struct roce_pkt p = rp_pkt(&rp, qp, ROCE_OP_RDMA_WRITE_ONLY, RP_PSN);

		p.reth.va = (uintptr_t)rp.buf + 6000;
		p.reth.rkey = rp.mr->rkey;
		p.reth.len = sizeof(data);
		rp_send(&rp, &p, data, sizeof(data), false);
	}
	assert_int_equal(rp_collect(&rp, fr, 2, RP_WAIT_S), 1);
	rp_expect_aeth(&fr[0], RP_PSN, ROCE_AETH_NAK, ROCE_NAK_REM_ACCESS_ERR, 0);
	assert_int_not_equal(rp.buf[6000], 0x5a);
	/* the held frames still carry the buffer's bytes */
	for (uint32_t i = 0; i < NPKT; i++)
		check_zc_frame(m[i], i, rp.buf, MSG, ops[i]);
	assert_int_equal(droce_dereg_mr(rp.mr), EBUSY);
	free_all(m, NPKT);
	/* the link freed them: the region goes at once */
	t0 = rte_get_timer_cycles();
	assert_int_equal(droce_dereg_mr(rp.mr), 0);
	assert_true(rte_get_timer_cycles() - t0 < rte_get_timer_hz() / 20);
	rp.mr = droce_reg_mr(rp.pd, rp.buf, rp.len, DROCE_ACCESS_LOCAL_WRITE);
	assert_non_null(rp.mr);
	rp_destroy_qp(qp);
	rp_close(&rp);
}

/* A SEND and the READ responses to a peer's READ go out the same way. */
static void
test_send_and_read_response_zc(void **state)
{
	static const uint8_t send_ops[2] = { ROCE_OP_SEND_FIRST, ROCE_OP_SEND_LAST };
	static const uint8_t read_ops[3] = {
		ROCE_OP_RDMA_READ_RESPONSE_FIRST, ROCE_OP_RDMA_READ_RESPONSE_MIDDLE,
		ROCE_OP_RDMA_READ_RESPONSE_LAST,
	};
	struct rte_mbuf *m[4];
	struct droce_qp *qp;
	struct raw_peer rp;
	struct roce_pkt p;

	(void)state;
	open_zc(&rp, true, 0, &qp);
	pcap_open();
	post(&rp, qp, DROCE_WR_SEND, 2000);
	take(&rp, m, 2);
	for (uint32_t i = 0; i < 2; i++)
		check_zc_frame(m[i], i, rp.buf, 2000, send_ops[i]);
	free_all(m, 2);
	ack(&rp, qp, RP_PSN + 1, 1);

	p = rp_pkt(&rp, qp, ROCE_OP_RDMA_READ_REQUEST, RP_PSN);
	p.reth.va = (uintptr_t)rp.buf + 512;
	p.reth.rkey = rp.mr->rkey;
	p.reth.len = 3000;
	rp_send(&rp, &p, NULL, 0, false);
	take(&rp, m, 3);
	for (uint32_t i = 0; i < 3; i++)
		check_zc_frame(m[i], i, rp.buf + 512, 3000, read_ops[i]);
	free_all(m, 3);
	pcap_check();
	pcap = NULL;
	assert_int_equal(rp_counter(&rp, "tx_zc_pkts"), 5);
	rp_destroy_qp(qp);
	rp_close(&rp);
}

/* Payloads below the threshold are copied as ever. */
static void
test_threshold(void **state)
{
	struct rte_mbuf *m[NPKT + 1];
	struct droce_qp *qp;
	struct raw_peer rp;

	(void)state;
	open_zc(&rp, true, 1000, &qp);
	post(&rp, qp, DROCE_WR_RDMA_WRITE, MSG);
	take(&rp, m, NPKT);
	for (uint32_t i = 0; i < NPKT - 1; i++)
		assert_int_equal(m[i]->nb_segs, 3);
	assert_int_equal(m[NPKT - 1]->nb_segs, 1);
	assert_int_equal(m[NPKT - 1]->pkt_len, m[NPKT - 1]->data_len);
	assert_int_equal(rp_counter(&rp, "tx_zc_pkts"), NPKT - 1);
	free_all(m, NPKT);
	rp_destroy_qp(qp);
	rp_close(&rp);
}

/* A link without DROCE_LINK_TX_ZC: every frame one segment. */
static void
test_no_offload_copies(void **state)
{
	struct rte_mbuf *m[NPKT + 1];
	struct droce_qp *qp;
	struct raw_peer rp;

	(void)state;
	open_zc(&rp, false, 0, &qp);
	post(&rp, qp, DROCE_WR_RDMA_WRITE, MSG);
	take(&rp, m, NPKT);
	for (uint32_t i = 0; i < NPKT; i++) {
		assert_int_equal(m[i]->nb_segs, 1);
		assert_false(RTE_MBUF_HAS_EXTBUF(m[i]));
	}
	assert_int_equal(rp_counter(&rp, "tx_zc_pkts"), 0);
	free_all(m, NPKT);
	rp_destroy_qp(qp);
	rp_close(&rp);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_zc_and_dereg_waits),
		cmocka_unit_test(test_send_and_read_response_zc),
		cmocka_unit_test(test_threshold),
		cmocka_unit_test(test_no_offload_copies),
	};

	(void)argc;
	rp_eal_init(argv[0]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
