/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-access: the target of interop case file 70_guest_access.sh.  The
 * guest's guest-access (a libibverbs program, Linux Soft-RoCE as the
 * requester) tries the remote accesses of access_cases.h against droce's
 * memory; droce must refuse the ones without a valid key, range or right
 * with the right NAK, and its memory must stay exactly as it was, except
 * for what the valid operations do.
 *
 *   droce-access --list                      the case names, one a line
 *   droce-access [EAL] -- [--droce-*] [-g GID_INDEX] [-L MODEL] [-m MTU] [-p PORT]
 *
 * -L plain|lease|daemon|reattach: lifetime mode instead of the cases
 * (access_cases.h; 75_lifetime.sh).  daemon and reattach run on droced
 * (--droce-daemon=PATH).
 *
 * It listens on PORT (TCP), then runs every case with the guest (the
 * handshake is in access_cases.h).  For each case it prints
 *   case NAME: droce ok|FAIL (memory ..., NAK counters ...)
 * and at the end OK or FAIL; exit 0 when every case passed on droce's side.
 * droce's checks per case: the whole buffer equals the shadow copy (the
 * initial pattern plus the effect of the cases that must succeed), and
 * droce's own NAK counter for the expected NAK went up by exactly one (by
 * none for a case that must succeed).
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include "droce.h"
#include "access_cases.h"

#define BUF_LEN ((size_t)ACC_NREG * ACC_REG)
#define CQ_DEPTH 64
#define WAIT_NS (60ull * 1000000000ull)	/* TCG guest: generous */

#define DIE(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

/* The daemon model's persistent region: MR_ALL under this name. */
#define LIFETIME_REGION "droce-access"

static struct droce_context *ctx;
static struct droce_pd *pd;
static struct droce_cq *cq;
static struct droce_mr *mrs[ACC_NREG];
static uint8_t *buf, *shadow;
static int gidx;
static enum droce_mtu path_mtu = DROCE_MTU_1024;

static const unsigned int region_access[ACC_NREG] = {
	[ACC_MR_ALL] = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
		       DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC |
		       DROCE_ACCESS_MW_BIND,
	[ACC_MR_LOCAL] = DROCE_ACCESS_LOCAL_WRITE,
	[ACC_MR_RONLY] = DROCE_ACCESS_REMOTE_READ,
	[ACC_MR_WONLY] = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE,
	[ACC_MR_RW] = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
		      DROCE_ACCESS_REMOTE_READ,
	[ACC_MR_DEREG] = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
			 DROCE_ACCESS_REMOTE_READ,
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Wait for fd while droce keeps answering ARP/ND and RoCE packets. */
static void
wait_fd(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t end = now_ns() + WAIT_NS;

	while (poll(&p, 1, 1) == 0) {
		droce_progress(ctx);
		if (now_ns() > end)
			DIE("timeout waiting for the guest");
	}
}

static int
tcp_accept(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, c;

	if (fd < 0)
		DIE("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 1) != 0)
		DIE("bind/listen: %s", strerror(errno));
	wait_fd(fd);
	c = accept(fd, NULL, NULL);
	close(fd);
	if (c < 0)
		DIE("accept: %s", strerror(errno));
	return c;
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
		ssize_t r;

		wait_fd(fd);
		r = read(fd, (char *)p + got, n - got);
		if (r <= 0)
			DIE("tcp read: the guest went away");
		got += (size_t)r;
	}
}

/* One completion of droce's own work requests (bind, invalidate). */
static void
poll_one(struct droce_wc *wc)
{
	uint64_t end = now_ns() + WAIT_NS;
	int n;

	while ((n = droce_poll_cq(cq, 1, wc)) == 0)
		if (now_ns() > end)
			DIE("timeout waiting for a completion");
	if (n < 0)
		DIE("droce_poll_cq failed");
}

static struct droce_qp *
make_qp(const struct acc_case *c)
{
	struct droce_qp_init_attr qia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct droce_qp_attr a = { .qp_state = DROCE_QPS_INIT, .port_num = 1 };
	struct droce_qp *qp = droce_create_qp(pd, &qia);

	a.qp_access_flags = DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC |
			    (c->qp_no_remote_write ? 0 : DROCE_ACCESS_REMOTE_WRITE);
	if (qp == NULL || droce_modify_qp(qp, &a, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX |
					  DROCE_QP_PORT | DROCE_QP_ACCESS_FLAGS))
		DIE("QP creation failed");
	return qp;
}

static void
connect_qp(struct droce_qp *qp, uint32_t my_psn, const struct acc_qp_info *peer)
{
	struct droce_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTR;
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
	if (droce_modify_qp(qp, &a, DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PATH_MTU |
			    DROCE_QP_DEST_QPN | DROCE_QP_RQ_PSN |
			    DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER))
		DIE("modify RTR failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTS;
	a.sq_psn = my_psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (droce_modify_qp(qp, &a, DROCE_QP_STATE | DROCE_QP_SQ_PSN | DROCE_QP_TIMEOUT |
			    DROCE_QP_RETRY_CNT | DROCE_QP_RNR_RETRY |
			    DROCE_QP_MAX_QP_RD_ATOMIC))
		DIE("modify RTS failed");
}

/* A type-2 window over MR_ALL [ACC_MW_OFF, +ACC_MW_LEN), bound on qp. */
static struct droce_mw *
bind_window(struct droce_qp *qp)
{
	struct droce_mw *mw = droce_alloc_mw(pd, DROCE_MW_TYPE_2);
	struct droce_send_wr wr, *bad;
	struct droce_wc wc;

	if (mw == NULL)
		DIE("droce_alloc_mw: %s", strerror(errno));
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = DROCE_WR_BIND_MW;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = droce_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = mrs[ACC_MR_ALL];
	wr.bind_mw.bind_info.addr = (uintptr_t)buf + ACC_MW_OFF;
	wr.bind_mw.bind_info.length = ACC_MW_LEN;
	wr.bind_mw.bind_info.mw_access_flags = DROCE_ACCESS_REMOTE_WRITE |
					       DROCE_ACCESS_REMOTE_READ;
	if (droce_post_send(qp, &wr, &bad))
		DIE("post BIND_MW failed");
	poll_one(&wc);
	if (wc.status != DROCE_WC_SUCCESS || wc.opcode != DROCE_WC_BIND_MW)
		DIE("BIND_MW: %s", droce_wc_status_str(wc.status));
	mw->rkey = wr.bind_mw.rkey;
	return mw;
}

static void
invalidate_window(struct droce_qp *qp, struct droce_mw *mw)
{
	struct droce_send_wr wr, *bad;
	struct droce_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2;
	wr.opcode = DROCE_WR_LOCAL_INV;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.invalidate_rkey = mw->rkey;
	if (droce_post_send(qp, &wr, &bad))
		DIE("post LOCAL_INV failed");
	poll_one(&wc);
	if (wc.status != DROCE_WC_SUCCESS)
		DIE("LOCAL_INV: %s", droce_wc_status_str(wc.status));
}

/* The shadow copy after a case that must succeed. */
static void
apply_effect(const struct acc_case *c)
{
	uint64_t at = acc_target_offset(c->target) + (uint64_t)(int64_t)c->off;

	if (c->expect != ACC_SUCCESS)
		return;
	if (c->op == ACC_WRITE) {
		for (uint32_t k = 0; k < c->len; k++)
			shadow[at + k] = acc_wpattern(k);
	} else if (c->op == ACC_FETCH_ADD) {
		uint64_t v;

		memcpy(&v, shadow + at, sizeof(v));
		v += ACC_FADD;
		memcpy(shadow + at, &v, sizeof(v));
	}
}

/* -1 when the buffer equals the shadow, else the first differing offset. */
static long
first_difference(void)
{
	for (size_t i = 0; i < BUF_LEN; i++)
		if (buf[i] != shadow[i])
			return (long)i;
	return -1;
}

static uint64_t
nak_count(enum acc_expect e)
{
	return droce_get_counter(ctx, e == ACC_REM_INV_REQ_ERR ? "sent_inv_req_nak" :
							  "sent_rem_access_nak");
}

static void
drain_cq(void)
{
	struct droce_wc wc[8];

	while (droce_poll_cq(cq, 8, wc) > 0)
		;
}

/* A fresh QP for case c, connected to the guest's through the handshake. */
static struct droce_qp *
exchange_qp(int fd, const struct acc_case *c)
{
	struct acc_qp_info me, peer;
	struct droce_qp *qp = make_qp(c);
	union droce_gid gid;

	if (droce_query_gid(ctx, 1, gidx, &gid))
		DIE("droce_query_gid %d failed", gidx);
	me.qpn = qp->qp_num;
	me.psn = (uint32_t)rand() & 0xffffff;
	memcpy(me.gid, gid.raw, 16);
	recv_all(fd, &peer, sizeof(peer));
	send_all(fd, &me, sizeof(me));
	connect_qp(qp, me.psn, &peer);
	return qp;
}

/* One case; 0 when droce's side of it passed. */
static int
run_case(int fd, const struct acc_case *c)
{
	struct acc_target t;
	struct acc_result res;
	struct droce_mr *dereg_mr = NULL;
	struct droce_mw *mw = NULL;
	struct droce_qp *qp = exchange_qp(fd, c);
	uint64_t naks_access, naks_inv;
	char go = 'g', verdict;
	long diff;
	int fail;

	t.addr = (uintptr_t)buf + acc_target_offset(c->target);
	if (c->target == ACC_MR_DEREG) {
		dereg_mr = droce_reg_mr(pd, buf + (size_t)ACC_MR_DEREG * ACC_REG, ACC_REG,
					(int)region_access[ACC_MR_DEREG]);
		if (dereg_mr == NULL)
			DIE("droce_reg_mr: %s", strerror(errno));
		t.len = ACC_REG;
		t.rkey = dereg_mr->rkey;
	} else if (c->target == ACC_MW) {
		mw = bind_window(qp);
		t.len = ACC_MW_LEN;
		t.rkey = mw->rkey;
	} else {
		t.len = ACC_REG;
		t.rkey = mrs[c->target]->rkey;
	}
	send_all(fd, &t, sizeof(t));
	if (c->after == ACC_DEREG) {
		if (droce_dereg_mr(dereg_mr))
			DIE("droce_dereg_mr failed");
		dereg_mr = NULL;
	} else if (c->after == ACC_INVALIDATE) {
		invalidate_window(qp, mw);
	}
	naks_access = nak_count(ACC_REM_ACCESS_ERR);
	naks_inv = nak_count(ACC_REM_INV_REQ_ERR);
	send_all(fd, &go, 1);

	recv_all(fd, &res, sizeof(res));	/* the guest has its completion */
	apply_effect(c);
	diff = first_difference();
	{
		uint64_t d_access = nak_count(ACC_REM_ACCESS_ERR) - naks_access;
		uint64_t d_inv = nak_count(ACC_REM_INV_REQ_ERR) - naks_inv;
		uint64_t want = c->expect == ACC_SUCCESS ? 0 : 1;
		uint64_t got = c->expect == ACC_REM_INV_REQ_ERR ? d_inv : d_access;

		fail = diff >= 0 || got != want || d_access + d_inv != want;
		printf("case %s: droce %s (memory %s", c->name, fail ? "FAIL" : "ok",
		       diff < 0 ? "as expected" : "CHANGED");
		if (diff >= 0)
			printf(" at buffer offset %ld: 0x%02x, expected 0x%02x", diff, buf[diff],
			       shadow[diff]);
		printf("; NAKs sent: remote access %lu, invalid request %lu; guest status %d)\n",
		       (unsigned long)d_access, (unsigned long)d_inv, res.status);
	}
	verdict = fail ? 'n' : 'y';
	send_all(fd, &verdict, 1);
	/* the region as the guest left it becomes the reference for the next case */
	if (diff >= 0)
		memcpy(shadow, buf, BUF_LEN);

	drain_cq();
	if (droce_destroy_qp(qp))
		DIE("droce_destroy_qp failed");
	if (mw != NULL && droce_dealloc_mw(mw))
		DIE("droce_dealloc_mw failed");
	if (dereg_mr != NULL && droce_dereg_mr(dereg_mr))
		DIE("droce_dereg_mr failed");
	return fail;
}

static uint64_t
load_seq(const uint8_t *p)
{
	uint64_t v;

	/* the engine (or a transport lcore) writes it: read it anew each time */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Lifetime mode (access_cases.h): hand the guest MR_ALL, wait for its
 * first WRITE, then die (plain: the harness SIGKILLs this process; until
 * then it only keeps the engine running) or let the region's lease run out
 * while this thread hangs (lease: the engine runs on a transport lcore and
 * revokes the key by itself).  0 when (lease) the memory holds exactly the
 * guest's last successful WRITE, the key is expired and droce sent exactly
 * one Remote Access Error NAK.  daemon: as plain, but MR_ALL is first made
 * a persistent region of droced's (droce_persist_mr), which outlives this
 * process: -L reattach then finds it.
 */
static int
run_lifetime(int fd, const char *model)
{
	static const struct acc_case c = { "lifetime", ACC_MR_ALL, ACC_KEEP, 0, ACC_WRITE, 0, 0,
					   8, ACC_SUCCESS };
	struct droce_qp *qp = exchange_qp(fd, &c);
	const uint8_t *seqp = buf + acc_target_offset(ACC_MR_ALL);
	struct acc_target t = {
		.addr = (uintptr_t)seqp, .len = ACC_REG, .rkey = mrs[ACC_MR_ALL]->rkey,
	};
	struct acc_lifetime_result res;
	struct droce_lease_attr lease;
	uint64_t initial = load_seq(seqp), end = now_ns() + WAIT_NS, naks, seq;
	char go = 'g', verdict;
	int fail;

	if (strcmp(model, "daemon") == 0 &&
	    (errno = droce_persist_mr(mrs[ACC_MR_ALL], LIFETIME_REGION, 0)) != 0)
		DIE("droce_persist_mr: %s", strerror(errno));
	send_all(fd, &t, sizeof(t));
	send_all(fd, &go, 1);
	while (load_seq(seqp) == initial) {
		droce_progress(ctx);
		if (now_ns() > end)
			DIE("lifetime: no WRITE from the guest");
	}
	printf("lifetime %s: the guest's WRITEs arrive (memory holds WRITE %llu)\n", model,
	       (unsigned long long)load_seq(seqp));
	fflush(stdout);
	if (strcmp(model, "lease") != 0) {
		while (now_ns() < end + WAIT_NS)	/* until the SIGKILL */
			droce_progress(ctx);
		DIE("lifetime %s: not killed", model);
	}
	naks = nak_count(ACC_REM_ACCESS_ERR);
	if (droce_set_mr_lease(mrs[ACC_MR_ALL], ACC_LEASE_MS))
		DIE("droce_set_mr_lease: %s", strerror(errno));
	printf("lifetime lease: a lease of %d ms set; this thread stops renewing\n", ACC_LEASE_MS);
	fflush(stdout);
	sleep(ACC_LEASE_MS / 1000 + 3);		/* the hang: no droce call at all */
	seq = load_seq(seqp);
	recv_all(fd, &res, sizeof(res));
	naks = nak_count(ACC_REM_ACCESS_ERR) - naks;
	fail = droce_query_mr_lease(mrs[ACC_MR_ALL], &lease) != 0 || !lease.expired ||
	       res.status != DROCE_WC_REM_ACCESS_ERR || seq != res.last_ok_seq || naks != 1;
	printf("case lifetime_lease: droce %s (memory holds WRITE %llu, the guest's last "
	       "success %llu; lease %s; Remote Access Error NAKs sent %llu)\n",
	       fail ? "FAIL" : "ok", (unsigned long long)seq,
	       (unsigned long long)res.last_ok_seq, lease.expired ? "expired" : "NOT expired",
	       (unsigned long long)naks);
	verdict = fail ? 'n' : 'y';
	send_all(fd, &verdict, 1);
	drain_cq();
	droce_destroy_qp(qp);
	return fail;
}

static bool daemon_buf;		/* buf from droce_alloc_buf */

/*
 * The daemon model's second application: attach the region the killed one
 * left (same address: droced's memory), see the guest's WRITEs still
 * landing in it, release it.  The guest's next WRITE then fails.
 */
static int
run_reattach(void)
{
	struct droce_mr *mr = droce_attach_mr(ctx, LIFETIME_REGION);
	uint64_t first, later, end = now_ns() + WAIT_NS;

	if (mr == NULL)
		DIE("droce_attach_mr: %s", strerror(errno));
	first = load_seq(mr->addr);
	printf("lifetime reattach: attached %s (%zu bytes), memory holds WRITE %llu\n",
	       LIFETIME_REGION, mr->length, (unsigned long long)first);
	while ((later = load_seq(mr->addr)) == first)
		if (now_ns() > end)
			DIE("lifetime reattach: no WRITE after the attach");
	printf("lifetime reattach: then WRITE %llu\n", (unsigned long long)later);
	if ((errno = droce_release(ctx, LIFETIME_REGION)) != 0)
		DIE("droce_release: %s", strerror(errno));
	printf("lifetime reattach: released\n");
	(void)droce_dereg_mr(mr);	/* frees the proxy of a released region */
	return 0;
}

static void
open_device(void)
{
	struct droce_device **list = droce_get_device_list(NULL);

	if (list == NULL || list[0] == NULL)
		DIE("no droce device");
	ctx = droce_open_device(list[0]);
	droce_free_device_list(list);
	if (ctx == NULL)
		DIE("droce_open_device failed");
}

static void
setup(void)
{
	open_device();
	/* a persistent region must be droced's memory (droce_persist_mr) */
	buf = daemon_buf ? droce_alloc_buf(ctx, BUF_LEN) : aligned_alloc(4096, BUF_LEN);
	shadow = malloc(BUF_LEN);
	pd = droce_alloc_pd(ctx);
	cq = droce_create_cq(ctx, CQ_DEPTH, NULL, NULL, 0);
	if (buf == NULL || shadow == NULL || pd == NULL || cq == NULL)
		DIE("allocation failed");
	for (size_t k = 0; k < BUF_LEN; k++)
		buf[k] = acc_pattern(k);
	memcpy(shadow, buf, BUF_LEN);
	/* MR_DEREG's slice is registered per case */
	for (int r = 0; r < ACC_NREG; r++) {
		if (r == ACC_MR_DEREG)
			continue;
		mrs[r] = droce_reg_mr(pd, buf + (size_t)r * ACC_REG, ACC_REG,
				      (int)region_access[r]);
		if (mrs[r] == NULL)
			DIE("droce_reg_mr %d: %s", r, strerror(errno));
	}
}

static void
teardown(void)
{
	for (int r = 0; r < ACC_NREG; r++)
		if (mrs[r] != NULL)
			droce_dereg_mr(mrs[r]);
	droce_destroy_cq(cq);
	droce_dealloc_pd(pd);
	if (daemon_buf)
		droce_free_buf(ctx, buf);
	else
		free(buf);
	droce_close_device(ctx);
	droce_cleanup();
	free(shadow);
}

int
main(int argc, char **argv)
{
	const char *lifetime = NULL;
	int port = ACC_PORT, mtu = 1024, used, c, fd, fails = 0;

	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (size_t i = 0; i < ACC_NCASES; i++)
			printf("%s\n", acc_cases[i].name);
		return 0;
	}
	used = droce_init(argc, argv);
	if (used < 0)
		DIE("droce_init: %s", strerror(errno));
	argc -= used;
	argv += used;
	while ((c = getopt(argc, argv, "g:L:m:p:")) != -1) {
		switch (c) {
		case 'g': gidx = atoi(optarg); break;
		case 'L': lifetime = optarg; break;
		case 'm': mtu = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		default: DIE("usage: droce-access --list | [EAL] -- [--droce-*] [-g gid] [-L plain|lease|daemon|reattach] [-m mtu] [-p port]");
		}
	}
	path_mtu = mtu == 4096 ? DROCE_MTU_4096 : mtu == 2048 ? DROCE_MTU_2048 :
		   mtu == 512 ? DROCE_MTU_512 : mtu == 256 ? DROCE_MTU_256 : DROCE_MTU_1024;
	srand((unsigned int)getpid());
	if (lifetime != NULL && strcmp(lifetime, "reattach") == 0) {
		open_device();	/* the region is the daemon's: nothing to set up */
		fails = run_reattach();
		droce_close_device(ctx);
		droce_cleanup();
		printf("%s\n", fails ? "FAIL" : "OK");
		return fails;
	}
	daemon_buf = lifetime != NULL && strcmp(lifetime, "daemon") == 0;
	setup();
	fd = tcp_accept(port);
	if (lifetime != NULL)
		fails = run_lifetime(fd, lifetime);
	for (size_t i = 0; lifetime == NULL && i < ACC_NCASES; i++)
		fails += run_case(fd, &acc_cases[i]);
	close(fd);
	teardown();
	printf("%s (%d of %zu cases failed on droce's side)\n", fails ? "FAIL" : "OK", fails,
	       lifetime != NULL ? (size_t)1 : ACC_NCASES);
	return fails ? 1 : 0;
}
