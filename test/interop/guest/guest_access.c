/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * guest-access: the initiator of interop case file 70_guest_access.sh.  A
 * libibverbs program built on the host (Debian 12, rdma-core 44, as the
 * guest) and run inside the rxe-vm guest: Linux Soft-RoCE posts the remote
 * accesses of ../access_cases.h against droce-access, one fresh RC QP per
 * case, and checks each completion's status, the data a READ returns and
 * the original value an ATOMIC returns (and that a refused READ or ATOMIC
 * left the local buffer untouched).
 *
 *   guest-access [-d rxe0] [-g GID_INDEX] [-L plain|lease] [-m MTU] [-p PORT] DROCE_HOST_IP
 *
 * -L: lifetime mode instead of the cases (access_cases.h; 75_lifetime.sh).
 *
 * For each case it prints
 *   case NAME: guest ok|FAIL (status S, expected E ...); droce memory ok|FAIL
 * and at the end OK or FAIL; exit 0 when every case passed on both sides.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "access_cases.h"

#define LOCAL_LEN 16384
#define WAIT_NS (60ull * 1000000000ull)	/* TCG: generous */

#define DIE(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static uint8_t *local;
static int gidx = 1;
static enum ibv_mtu path_mtu = IBV_MTU_1024;
/* 7 means "retry forever" to rxe (as to IBTA for rnr_retry only): lifetime
 * mode's plain model needs the QP to give up */
static uint8_t retry_cnt = 7;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
tcp_connect(const char *host, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		DIE("bad IPv4 address %s", host);
	for (int i = 0; i < 200; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			DIE("socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		close(fd);
		usleep(100000);
	}
	DIE("connect %s:%d: %s", host, port, strerror(errno));
}

static void
send_all(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n)
		DIE("tcp write: %s", strerror(errno));
}

static void
recv_all(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)p + got, n - got);

		if (r <= 0)
			DIE("tcp read: droce went away");
		got += (size_t)r;
	}
}

static const char *
status_name(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_SUCCESS: return "SUCCESS";
	case IBV_WC_REM_ACCESS_ERR: return "REM_ACCESS_ERR";
	case IBV_WC_REM_INV_REQ_ERR: return "REM_INV_REQ_ERR";
	case IBV_WC_REM_OP_ERR: return "REM_OP_ERR";
	case IBV_WC_RETRY_EXC_ERR: return "RETRY_EXC_ERR";
	default: return ibv_wc_status_str(s);
	}
}

static enum ibv_wc_status
expected_status(enum acc_expect e)
{
	return e == ACC_SUCCESS ? IBV_WC_SUCCESS :
	       e == ACC_REM_ACCESS_ERR ? IBV_WC_REM_ACCESS_ERR : IBV_WC_REM_INV_REQ_ERR;
}

static struct ibv_qp *
make_qp(void)
{
	struct ibv_qp_init_attr qia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp = ibv_create_qp(pd, &qia);

	if (qp == NULL || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					IBV_QP_ACCESS_FLAGS))
		DIE("QP creation failed");
	return qp;
}

static void
connect_qp(struct ibv_qp *qp, uint32_t my_psn, const struct acc_qp_info *peer)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = path_mtu;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)gidx;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		DIE("modify RTR failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = my_psn;
	a.timeout = 14;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		DIE("modify RTS failed");
}

/* Post the case's operation and wait for its completion. */
static enum ibv_wc_status
do_op(struct ibv_qp *qp, const struct acc_case *c, const struct acc_target *t)
{
	struct ibv_sge sge = { .addr = (uintptr_t)local, .length = c->len, .lkey = mr->lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	uint64_t raddr = t->addr + (uint64_t)(int64_t)c->off, end;
	int n;

	memset(local, 0, LOCAL_LEN);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 7;
	wr.sg_list = &sge;
	wr.num_sge = c->len != 0;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (c->op == ACC_FETCH_ADD) {
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = t->rkey ^ c->key_xor;
		wr.wr.atomic.compare_add = ACC_FADD;
	} else {
		wr.opcode = c->op == ACC_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = t->rkey ^ c->key_xor;
		for (uint32_t k = 0; c->op == ACC_WRITE && k < c->len; k++)
			local[k] = acc_wpattern(k);
	}
	if (ibv_post_send(qp, &wr, &bad))
		DIE("ibv_post_send: %s", strerror(errno));
	end = now_ns() + WAIT_NS;
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		if (now_ns() > end)
			DIE("case %s: no completion in %llu s", c->name,
			    (unsigned long long)(WAIT_NS / 1000000000ull));
	if (n < 0)
		DIE("ibv_poll_cq failed");
	return wc.status;
}

/*
 * What came back: a READ's data is droce's initial pattern at the target,
 * an ATOMIC's original value too; a refused READ/ATOMIC writes nothing.
 */
static int
data_ok(const struct acc_case *c, enum ibv_wc_status st, uint64_t *orig)
{
	uint64_t at = acc_target_offset(c->target) + (uint64_t)(int64_t)c->off;

	*orig = 0;
	if (c->op == ACC_WRITE)
		return 1;
	if (st != IBV_WC_SUCCESS) {
		for (uint32_t k = 0; k < c->len; k++)
			if (local[k] != 0)
				return 0;
		return 1;
	}
	if (c->op == ACC_FETCH_ADD) {
		memcpy(orig, local, sizeof(*orig));
		return *orig == acc_pattern_u64(at);
	}
	for (uint32_t k = 0; k < c->len; k++)
		if (local[k] != acc_pattern(at + k))
			return 0;
	return 1;
}

/* A fresh QP, connected to droce's through the case's handshake; *t the target. */
static struct ibv_qp *
handshake(int fd, struct acc_target *t)
{
	struct ibv_qp *qp = make_qp();
	struct acc_qp_info me, peer;
	union ibv_gid gid;
	char go;

	if (ibv_query_gid(ctx, 1, gidx, &gid))
		DIE("ibv_query_gid %d failed", gidx);
	me.qpn = qp->qp_num;
	me.psn = (uint32_t)rand() & 0xffffff;
	memcpy(me.gid, gid.raw, 16);
	send_all(fd, &me, sizeof(me));
	recv_all(fd, &peer, sizeof(peer));
	connect_qp(qp, me.psn, &peer);
	recv_all(fd, t, sizeof(*t));
	recv_all(fd, &go, 1);
	if (go != 'g')
		DIE("handshake: got 0x%02x", (unsigned char)go);
	return qp;
}

/* One case; 0 when both sides passed it. */
static int
run_case(int fd, const struct acc_case *c)
{
	struct acc_target t;
	struct ibv_qp *qp = handshake(fd, &t);
	struct acc_result res;
	enum ibv_wc_status st, want = expected_status(c->expect);
	char verdict;
	int guest_ok;

	st = do_op(qp, c, &t);
	memset(&res, 0, sizeof(res));
	res.status = (int32_t)st;
	{
		uint64_t orig;

		res.data_ok = data_ok(c, st, &orig);
		res.atomic_orig = orig;
	}
	send_all(fd, &res, sizeof(res));
	recv_all(fd, &verdict, 1);

	guest_ok = st == want && res.data_ok;
	printf("case %s: guest %s (status %s, expected %s", c->name, guest_ok ? "ok" : "FAIL",
	       status_name(st), status_name(want));
	if (c->op != ACC_WRITE)
		printf(", %s %s", c->op == ACC_READ ? "data" : "original value",
		       res.data_ok ? "as expected" : "WRONG");
	printf("); droce memory %s\n", verdict == 'y' ? "ok" : "FAIL");
	if (ibv_destroy_qp(qp))
		DIE("ibv_destroy_qp failed");
	return !(guest_ok && verdict == 'y');
}

/* One signalled 8-byte WRITE of seq to the target; its completion status. */
static enum ibv_wc_status
write_seq(struct ibv_qp *qp, const struct acc_target *t, uint64_t seq)
{
	struct ibv_sge sge = { .addr = (uintptr_t)local, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = seq, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = t->addr, .rkey = t->rkey },
	}, *bad;
	struct ibv_wc wc;
	uint64_t end = now_ns() + WAIT_NS;
	int n;

	memcpy(local, &seq, sizeof(seq));
	if (ibv_post_send(qp, &wr, &bad))
		DIE("ibv_post_send: %s", strerror(errno));
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		if (now_ns() > end)
			DIE("lifetime: no completion of WRITE %llu in %llu s",
			    (unsigned long long)seq, (unsigned long long)(WAIT_NS / 1000000000ull));
	if (n < 0)
		DIE("ibv_poll_cq failed");
	return wc.status;
}

/*
 * Lifetime mode (access_cases.h): WRITE until the first failure, print it;
 * report it to droce when droce lives on (lease).  0 when the failure is
 * `want` and (lease) droce's memory holds exactly the last successful WRITE.
 */
static int
run_lifetime(int fd, const char *model)
{
	bool lease = strcmp(model, "lease") == 0;
	enum ibv_wc_status want = lease || strcmp(model, "daemon") == 0 ?
				  IBV_WC_REM_ACCESS_ERR : IBV_WC_RETRY_EXC_ERR;
	struct acc_lifetime_result res = { 0 };
	struct acc_target t;
	struct ibv_qp *qp = handshake(fd, &t);
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	uint64_t seq, t_ok = now_ns();
	char verdict = 'y';

	for (seq = 1; st == IBV_WC_SUCCESS; seq++) {
		st = write_seq(qp, &t, seq);
		if (st == IBV_WC_SUCCESS) {
			res.last_ok_seq = seq;
			t_ok = now_ns();
		}
	}
	res.status = (int32_t)st;
	res.gap_ns = now_ns() - t_ok;
	printf("lifetime %s: guest's first failure %s (expected %s) after %llu WRITEs, "
	       "%.1f ms after the last success\n", model, status_name(st), status_name(want),
	       (unsigned long long)res.last_ok_seq, (double)res.gap_ns / 1e6);
	if (lease) {		/* droce's server lives on: it checks its memory */
		send_all(fd, &res, sizeof(res));
		recv_all(fd, &verdict, 1);
		printf("lifetime %s: droce memory %s\n", model, verdict == 'y' ? "ok" : "FAIL");
	}
	ibv_destroy_qp(qp);
	return !(st == want && verdict == 'y');
}

int
main(int argc, char **argv)
{
	const char *devname = "rxe0";
	const char *lifetime = NULL;
	int port = ACC_PORT, mtu = 1024, c, fd, fails = 0;
	struct ibv_device **list, *dev = NULL;

	while ((c = getopt(argc, argv, "d:g:L:m:p:")) != -1) {
		switch (c) {
		case 'd': devname = optarg; break;
		case 'L': lifetime = optarg; retry_cnt = 6; break;
		case 'g': gidx = atoi(optarg); break;
		case 'm': mtu = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		default: DIE("usage: guest-access [-d dev] [-g gid] [-L plain|lease] [-m mtu] [-p port] droce_host_ip");
		}
	}
	if (optind >= argc)
		DIE("usage: guest-access [-d dev] [-g gid] [-L plain|lease] [-m mtu] [-p port] droce_host_ip");
	path_mtu = mtu == 4096 ? IBV_MTU_4096 : mtu == 2048 ? IBV_MTU_2048 :
		   mtu == 512 ? IBV_MTU_512 : mtu == 256 ? IBV_MTU_256 : IBV_MTU_1024;
	srand((unsigned int)getpid());

	list = ibv_get_device_list(NULL);
	for (int i = 0; list != NULL && list[i] != NULL; i++)
		if (strcmp(ibv_get_device_name(list[i]), devname) == 0)
			dev = list[i];
	if (dev == NULL)
		DIE("device %s not found", devname);
	ctx = ibv_open_device(dev);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = ctx ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	local = aligned_alloc(4096, LOCAL_LEN);
	if (pd == NULL || cq == NULL || local == NULL)
		DIE("open device / PD / CQ failed");
	mr = ibv_reg_mr(pd, local, LOCAL_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (mr == NULL)
		DIE("ibv_reg_mr: %s", strerror(errno));

	fd = tcp_connect(argv[optind], port);
	if (lifetime != NULL)
		fails = run_lifetime(fd, lifetime);
	for (size_t i = 0; lifetime == NULL && i < ACC_NCASES; i++)
		fails += run_case(fd, &acc_cases[i]);
	close(fd);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(local);
	printf("%s (%d of %zu cases failed)\n", fails ? "FAIL" : "OK", fails,
	       lifetime != NULL ? (size_t)1 : ACC_NCASES);
	return fails ? 1 : 0;
}
