/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-imm: the droce side of ../shared/peers/rxevm-imm (same TCP
 * handshake and the same five operations), so RDMA WRITE with immediate
 * and SEND with immediate are tested both ways against Linux Soft-RoCE:
 *
 *   1. WRITE_WITH_IMM   64 B  imm 0x11111111
 *   2. WRITE_WITH_IMM 3000 B  imm 0x22222222  (FIRST/MIDDLE/LAST at MTU 1024)
 *   3. WRITE_WITH_IMM    0 B  imm 0x33333333  (no payload)
 *   4. SEND_WITH_IMM    64 B  imm 0x44444444
 *   5. SEND_WITH_IMM  3000 B  imm 0x55555555
 * Byte k of operation i is ((i * 4096 + k) * 7 + 3) mod 256.
 *
 *   droce-imm [EAL] -- [--droce-*] [-g GID] [-m MTU] [-p PORT] [SERVER_IP]
 * The side given an address sends; the other receives and checks every
 * completion (opcode, immediate, byte count) and every byte.  Exit 0 on
 * success.
 *
 * -b rkey|range (sender only): the first WRITE uses a wrong R_Key, or an
 * address past the peer's region; the peer's kernel must answer with a
 * remote access error NAK, so droce must complete it with
 * DROCE_WC_REM_ACCESS_ERR (exit 0 then; the peer's QP goes to the error
 * state and rxevm-imm exits non-zero).  The handshake is rxevm-imm's: a packed {qpn, psn, rkey, addr,
 * gid} in host byte order (both ends x86), then one sync byte each way
 * before and after the operations.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "droce.h"

#define BUF_SIZE (64 * 1024)
#define NOPS 5

struct conn_info {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	uint8_t gid[16];
} __attribute__((packed));

static const struct {
	int write;
	uint32_t len;
	uint32_t imm;
} ops[NOPS] = {
	{ 1, 64, 0x11111111 }, { 1, 3000, 0x22222222 }, { 1, 0, 0x33333333 },
	{ 0, 64, 0x44444444 }, { 0, 3000, 0x55555555 },
};

static struct droce_context *ctx;

#define DIE(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

/* Wait for fd while droce keeps answering ARP/ND and packets. */
static void
wait_fd(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	while (poll(&p, 1, 1) == 0)
		droce_progress(ctx);
}

static int
tcp_open(const char *host, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, c;

	if (fd < 0)
		DIE("socket: %s", strerror(errno));
	if (host == NULL) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 1) != 0)
			DIE("bind/listen: %s", strerror(errno));
		wait_fd(fd, POLLIN);
		c = accept(fd, NULL, NULL);
		close(fd);
		if (c < 0)
			DIE("accept: %s", strerror(errno));
		return c;
	}
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		DIE("bad IPv4 address %s", host);
	for (int i = 0; i < 100; i++) {
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		for (int k = 0; k < 100; k++) {
			droce_progress(ctx);
			usleep(1000);
		}
	}
	DIE("connect %s:%d: %s", host, port, strerror(errno));
}

static void
xfer(int fd, const void *out, void *in, size_t n)
{
	size_t got = 0;

	if (write(fd, out, n) != (ssize_t)n)
		DIE("tcp write");
	while (got < n) {
		ssize_t r;

		wait_fd(fd, POLLIN);
		r = read(fd, (char *)in + got, n - got);
		if (r <= 0)
			DIE("tcp read");
		got += (size_t)r;
	}
}

static void
poll_one(struct droce_cq *cq, struct droce_wc *wc)
{
	for (long spins = 0;; spins++) {
		int n = droce_poll_cq(cq, 1, wc);

		if (n < 0)
			DIE("droce_poll_cq failed");
		if (n == 1)
			break;
		if (spins > 200000000L)
			DIE("timeout waiting for a completion");
	}
	if (wc->status != DROCE_WC_SUCCESS)
		DIE("completion error: %s (wr_id %lu)", droce_wc_status_str(wc->status),
		    (unsigned long)wc->wr_id);
}

static void
connect_qp(struct droce_qp *qp, const struct conn_info *me,
	   const struct conn_info *peer, int gidx, enum droce_mtu mtu)
{
	struct droce_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)gidx;
	a.ah_attr.grh.hop_limit = 64;
	if (droce_modify_qp(qp, &a, DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PATH_MTU |
			    DROCE_QP_DEST_QPN | DROCE_QP_RQ_PSN |
			    DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER))
		DIE("modify RTR failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTS;
	a.sq_psn = me->psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (droce_modify_qp(qp, &a, DROCE_QP_STATE | DROCE_QP_SQ_PSN | DROCE_QP_TIMEOUT |
			    DROCE_QP_RETRY_CNT | DROCE_QP_RNR_RETRY |
			    DROCE_QP_MAX_QP_RD_ATOMIC))
		DIE("modify RTS failed");
}

/* -b: one WRITE the peer must refuse; 0 when it did, with REM_ACCESS_ERR. */
static int
send_bad(struct droce_qp *qp, struct droce_cq *cq, struct droce_mr *mr, char *buf,
	 const struct conn_info *peer, const char *mode)
{
	struct droce_sge sge = { (uintptr_t)buf, 64, mr->lkey };
	struct droce_send_wr wr, *bad;
	struct droce_wc wc;
	int n;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.imm_data = htonl(0xbad);
	wr.wr.rdma.remote_addr = peer->addr;
	wr.wr.rdma.rkey = peer->rkey;
	if (strcmp(mode, "rkey") == 0)
		wr.wr.rdma.rkey ^= 0x00100000;	/* another index: no such key */
	else
		wr.wr.rdma.remote_addr += BUF_SIZE - 32;	/* ends past the region */
	if (droce_post_send(qp, &wr, &bad))
		DIE("droce_post_send failed");
	for (long spins = 0; (n = droce_poll_cq(cq, 1, &wc)) == 0; spins++)
		if (spins > 200000000L)
			DIE("timeout waiting for a completion");
	if (n != 1)
		DIE("droce_poll_cq failed");
	printf("bad %s WRITE: %s\n", mode, droce_wc_status_str(wc.status));
	if (wc.status != DROCE_WC_REM_ACCESS_ERR)
		return 1;
	printf("REM_ACCESS_ERR as expected\n");
	return 0;
}

static void
send_all(struct droce_qp *qp, struct droce_cq *cq, struct droce_mr *mr, char *buf,
	 const struct conn_info *peer)
{
	for (int i = 0; i < NOPS; i++) {
		struct droce_sge sge = { (uintptr_t)buf + (uint64_t)i * 4096, ops[i].len,
					 mr->lkey };
		struct droce_send_wr wr, *bad;
		struct droce_wc wc;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uint64_t)i;
		wr.sg_list = &sge;
		wr.num_sge = ops[i].len != 0;
		wr.opcode = ops[i].write ? DROCE_WR_RDMA_WRITE_WITH_IMM : DROCE_WR_SEND_WITH_IMM;
		wr.send_flags = DROCE_SEND_SIGNALED;
		wr.imm_data = htonl(ops[i].imm);
		if (ops[i].write) {
			wr.wr.rdma.remote_addr = peer->addr + (uint64_t)i * 4096;
			wr.wr.rdma.rkey = peer->rkey;
		}
		if (droce_post_send(qp, &wr, &bad))
			DIE("droce_post_send %d failed", i);
		poll_one(cq, &wc);
		printf("sent op %d: %s %u bytes imm 0x%08x\n", i,
		       ops[i].write ? "RDMA_WRITE_WITH_IMM" : "SEND_WITH_IMM", ops[i].len,
		       ops[i].imm);
	}
}

static int
receive_all(struct droce_cq *cq, const char *buf)
{
	int fails = 0;

	for (int i = 0; i < NOPS; i++) {
		enum droce_wc_opcode want = ops[i].write ? DROCE_WC_RECV_RDMA_WITH_IMM :
							    DROCE_WC_RECV;
		struct droce_wc wc;
		const char *data;
		int ok;

		poll_one(cq, &wc);
		data = ops[i].write ? buf + i * 4096 :
				      buf + 32768 + (wc.wr_id - 100) * 4096;
		ok = wc.opcode == want && (wc.wc_flags & DROCE_WC_WITH_IMM) &&
		     ntohl(wc.imm_data) == ops[i].imm && wc.byte_len == ops[i].len;
		for (uint32_t k = 0; ok && k < ops[i].len; k++)
			ok = data[k] == (char)((i * 4096 + (int)k) * 7 + 3);
		printf("recv op %d: opcode %d imm 0x%08x byte_len %u -> %s\n", i, wc.opcode,
		       ntohl(wc.imm_data), wc.byte_len, ok ? "ok" : "MISMATCH");
		fails += !ok;
	}
	return fails;
}

int
main(int argc, char **argv)
{
	int gidx = 0, mtu = 1024, port = 18520, c, fails = 0;
	struct droce_device **list;
	const char *peer_ip = NULL, *bad_mode = NULL;
	struct conn_info me, peer;
	union droce_gid gid;
	struct droce_pd *pd;
	struct droce_mr *mr;
	struct droce_cq *cq;
	struct droce_qp *qp;
	char sync = 'r', psync;
	char *buf;
	int used, fd;

	used = droce_init(argc, argv);
	if (used < 0)
		DIE("droce_init: %s", strerror(errno));
	argc -= used;
	argv += used;
	while ((c = getopt(argc, argv, "b:g:m:p:")) != -1) {
		switch (c) {
		case 'b': bad_mode = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		case 'm': mtu = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		default: DIE("usage: droce-imm [EAL] -- [--droce-*] [-b rkey|range] [-g gid] [-m mtu] [-p port] [server_ip]");
		}
	}
	if (optind < argc)
		peer_ip = argv[optind];

	list = droce_get_device_list(NULL);
	if (list == NULL || list[0] == NULL)
		DIE("no droce device");
	ctx = droce_open_device(list[0]);
	droce_free_device_list(list);
	buf = aligned_alloc(4096, BUF_SIZE);
	if (ctx == NULL || buf == NULL)
		DIE("open device failed");
	memset(buf, 0, BUF_SIZE);
	for (int i = 0; peer_ip != NULL && i < BUF_SIZE; i++)
		buf[i] = (char)(i * 7 + 3);
	pd = droce_alloc_pd(ctx);
	mr = pd ? droce_reg_mr(pd, buf, BUF_SIZE, DROCE_ACCESS_LOCAL_WRITE |
			       DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ) : NULL;
	cq = droce_create_cq(ctx, 64, NULL, NULL, 0);
	if (mr == NULL || cq == NULL)
		DIE("mr/cq failed");
	{
		struct droce_qp_init_attr qia = {
			.send_cq = cq, .recv_cq = cq, .qp_type = DROCE_QPT_RC,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};
		struct droce_qp_attr a = { .qp_state = DROCE_QPS_INIT, .port_num = 1,
			.qp_access_flags = DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ };

		qp = droce_create_qp(pd, &qia);
		if (qp == NULL || droce_modify_qp(qp, &a, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX |
						  DROCE_QP_PORT | DROCE_QP_ACCESS_FLAGS))
			DIE("QP creation failed");
	}
	if (droce_query_gid(ctx, 1, gidx, &gid))
		DIE("droce_query_gid %d failed", gidx);
	memset(&me, 0, sizeof(me));
	me.qpn = qp->qp_num;
	me.psn = (uint32_t)(getpid() * 4099) & 0xffffff;
	me.rkey = mr->rkey;
	me.addr = (uintptr_t)buf;
	memcpy(me.gid, gid.raw, 16);
	if (peer_ip == NULL) {
		for (int i = 0; i < NOPS; i++) {
			struct droce_sge sge = { (uintptr_t)buf + 32768 + (uint64_t)i * 4096, 4096,
						 mr->lkey };
			struct droce_recv_wr wr = { .wr_id = 100 + (uint64_t)i, .sg_list = &sge,
						    .num_sge = 1 }, *bad;

			if (droce_post_recv(qp, &wr, &bad))
				DIE("droce_post_recv failed");
		}
	}
	fd = tcp_open(peer_ip, port);
	xfer(fd, &me, &peer, sizeof(me));
	connect_qp(qp, &me, &peer, gidx, mtu == 4096 ? DROCE_MTU_4096 :
		   mtu == 2048 ? DROCE_MTU_2048 : mtu == 512 ? DROCE_MTU_512 :
		   mtu == 256 ? DROCE_MTU_256 : DROCE_MTU_1024);
	xfer(fd, &sync, &psync, 1);
	printf("local QPN 0x%06x PSN 0x%06x, remote QPN 0x%06x PSN 0x%06x\n", me.qpn, me.psn,
	       peer.qpn, peer.psn);
	if (bad_mode != NULL) {
		if (peer_ip == NULL)
			DIE("-b needs a server address (droce sends)");
		/* the peer's QP is in the error state now: no final sync */
		fails = send_bad(qp, cq, mr, buf, &peer, bad_mode);
	} else {
		if (peer_ip != NULL)
			send_all(qp, cq, mr, buf, &peer);
		else
			fails = receive_all(cq, buf);
		sync = 'd';
		xfer(fd, &sync, &psync, 1);
	}
	/* everything closed: the device writes its capture's statistics */
	close(fd);
	droce_destroy_qp(qp);
	droce_destroy_cq(cq);
	droce_dereg_mr(mr);
	droce_dealloc_pd(pd);
	droce_close_device(ctx);
	droce_cleanup();
	free(buf);
	printf("%s\n", fails ? "FAIL" : "OK");
	return fails ? 1 : 0;
}
