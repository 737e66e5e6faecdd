/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_main.c - the program flow of rc_pingpong.c / ud_pingpong.c /
 * srq_pingpong.c main() on
 * droce: droce_init (EAL and droce options first), options, device, the
 * resources, the address exchange, the loop, the report, cleanup.
 *
 * Output and exit status are the examples': the "local address" and
 * "remote address" lines, the two result lines, "invalid data in page %d"
 * with -c; 0 on success, 1 on any failure.  With -c droce checks in both
 * roles, adds a "data check ..." line and fails on wrong data (pp_chk.c),
 * where the examples only print.  Unlike the
 * examples, a failure after droce_init still releases what was created and
 * stops EAL (droce_cleanup), so hugepage files and vdev sockets go away.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app_dev.h"
#include "pingpong.h"

struct server_cb {
	struct pp_ctx *ctx;
	const struct pp_opts *o;
	const struct pp_dest *my;
};


static void
print_dest(const char *what, const struct pp_dest *d, enum pp_kind kind)
{
	char gid[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, &d->gid, gid, sizeof(gid));
	/* ud_pingpong's local line has "PSN 0x%06x: GID", the others ", GID". */
	printf("  %s LID 0x%04x, QPN 0x%06x, PSN 0x%06x%s GID %s\n", what,
	       d->lid, d->qpn, d->psn,
	       kind == PP_UD && strcmp(what, "local address: ") == 0 ?
	       ":" : ",", gid);
}

/*
 * Each side waits until its port is ACTIVE before RoCE traffic.  A
 * hardware port is up long before ibv_rc_pingpong runs; a droce vdev
 * (net_memif) comes up when the peer process has started, possibly after
 * the address exchange, and a SEND into a down link costs the first ARP
 * request, which lib/net retries only after 1 s -- longer than the whole
 * RC retry budget of timeout 14 (8 x 67 ms).  Nothing is printed unless
 * the port stays down.
 */
#define PP_PORT_WAIT_MS 10000

static int
wait_port_active(struct pp_ctx *ctx, const struct pp_opts *o)
{
	struct droce_port_attr pa;
	int ms, rc = 0;

	for (ms = 0; ms <= PP_PORT_WAIT_MS; ms++) {
		memset(&pa, 0, sizeof(pa));
		rc = droce_query_port(ctx->context, (uint8_t)o->ib_port, &pa);
		if (rc != 0 || pa.state == DROCE_PORT_ACTIVE)
			break;
		droce_progress(ctx->context);
		usleep(1000);
	}
	if (rc != 0) {
		fprintf(stderr, "Couldn't get port info: %s\n", strerror(rc));
		return 1;
	}
	if (pa.state != DROCE_PORT_ACTIVE) {
		fprintf(stderr, "Port %d is not ACTIVE after %d ms (state %d): "
			"is the link up (peer process started)?\n",
			o->ib_port, PP_PORT_WAIT_MS, (int)pa.state);
		return 1;
	}
	return 0;
}

/*
 * rc_pingpong's server connects its QP before it answers.  It also waits
 * for its port first, so the client's first packets (ARP, the first SEND)
 * never meet a link that is up at one end only.
 */
static int
server_connect(void *arg, const struct pp_dest *rem)
{
	struct server_cb *cb = arg;

	if (wait_port_active(cb->ctx, cb->o) != 0)
		return 1;
	return pp_connect_ctx(cb->ctx, cb->o, cb->my, rem);
}

/*
 * After the last completion, keep answering for a while: the peer's last
 * SEND is complete here once it arrived, but the peer completes it only
 * when our ACK arrives; if that ACK was lost, the peer retransmits and
 * needs us to ACK the duplicate (rxe with retry_cnt 7 retries forever, an
 * exited droce leaves it hanging).  Linger until nothing has arrived for
 * LINGER_QUIET_MS, at most LINGER_MAX_MS.
 */
#define LINGER_QUIET_MS 300
#define LINGER_MAX_MS 3000

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
linger(struct pp_ctx *ctx)
{
	uint64_t start = now_ms(), quiet_since = start;
	uint64_t seen = droce_get_counter(ctx->context, "rcvd_pkts");

	while (now_ms() - quiet_since < LINGER_QUIET_MS &&
	       now_ms() - start < LINGER_MAX_MS) {
		uint64_t rcvd;

		droce_progress(ctx->context);
		rcvd = droce_get_counter(ctx->context, "rcvd_pkts");
		if (rcvd != seen) {
			seen = rcvd;
			quiet_since = now_ms();
		}
	}
}

/* This side's addresses, printed; my[num_qp..] stay zero (pp_exch.h). */
static int
fill_my_dests(struct pp_ctx *ctx, const struct pp_opts *o,
	      struct pp_dest my[PP_MAX_QP])
{
	union droce_gid gid;
	int i, rc;

	memset(my, 0, PP_MAX_QP * sizeof(*my));
	if (ctx->portinfo.link_layer != DROCE_LINK_LAYER_ETHERNET &&
	    !ctx->portinfo.lid) {
		fprintf(stderr, "Couldn't get local LID\n");
		return 1;
	}
	rc = droce_query_gid(ctx->context, (uint8_t)o->ib_port, o->gidx, &gid);
	if (rc != 0) {
		if (o->kind == PP_RC)
			fprintf(stderr, "can't read sgid of index %d: %s\n",
				o->gidx, strerror(rc));
		else
			fprintf(stderr, "Could not get local gid for gid index "
				"%d: %s\n", o->gidx, strerror(rc));
		return 1;
	}
	for (i = 0; i < ctx->num_qp; i++) {
		my[i].lid = ctx->portinfo.lid;
		my[i].gid = gid;
		my[i].qpn = (int)ctx->qp[i]->qp_num;
		my[i].psn = (int)(lrand48() & 0xffffff);
		print_dest("local address: ", &my[i], o->kind);
	}
	return 0;
}

static int
run(struct pp_opts *o, struct droce_device *dev)
{
	struct pp_dest my_dest[PP_MAX_QP], rem_dest[PP_MAX_QP];
	/* srq_pingpong exchanges all PP_MAX_QP addresses (pp_exch.h) */
	unsigned int n_msgs = o->kind == PP_SRQ ? PP_MAX_QP : 1;
	struct pp_result res;
	struct pp_ctx *ctx;
	int page_size;
	int routs, rc, i;
	int ret = 1;

	page_size = (int)sysconf(_SC_PAGESIZE);
	if (page_size <= 0)
		page_size = 4096;

	ctx = pp_init_ctx(dev, o, page_size);
	if (ctx == NULL)
		return 1;

	routs = pp_post_recv(ctx, ctx->rx_depth);
	if (routs < ctx->rx_depth) {
		fprintf(stderr, "Couldn't post receive (%d)\n", routs);
		goto out;
	}
	/* -e: a no-op in poll mode (droce.h), called as the example does. */
	if (o->use_event && droce_req_notify_cq(ctx->cq, 0) != 0) {
		fprintf(stderr, "Couldn't request CQ notification\n");
		goto out;
	}

	rc = droce_query_port(ctx->context, (uint8_t)o->ib_port, &ctx->portinfo);
	if (rc != 0) {
		fprintf(stderr, "Couldn't get port info: %s\n", strerror(rc));
		goto out;
	}
	if (fill_my_dests(ctx, o, my_dest) != 0)
		goto out;

	/* keep the stack answering ARP/ND/ping while the handshake waits */
	pp_exch_set_idle(app_progress_idle, ctx->context);
	if (o->servername != NULL) {
		rc = pp_client_exch(o->servername, o->port, my_dest, rem_dest,
				    n_msgs);
	} else {
		struct server_cb cb = { .ctx = ctx, .o = o, .my = my_dest };

		rc = pp_server_exch(o->port, my_dest, rem_dest, n_msgs,
				    server_connect, &cb);
	}
	if (rc != 0)
		goto out;
	for (i = 0; i < ctx->num_qp; i++)
		print_dest("remote address:", &rem_dest[i], o->kind);

	if (o->servername != NULL &&
	    (wait_port_active(ctx, o) != 0 ||
	     pp_connect_ctx(ctx, o, my_dest, rem_dest) != 0))
		goto out;

	memset(&res, 0, sizeof(res));
	if (pp_run(ctx, o, routs, &res) != 0)
		goto out;
	pp_report(o, &res, stdout);
	if (o->kind != PP_UD)
		linger(ctx);
	/* both roles, every byte; a mismatch fails (pp_chk.c) */
	if (o->validate_buf &&
	    pp_chk_verify(ctx->rbuf + (o->kind == PP_UD ? PP_UD_GRH_LEN : 0),
			  o->size, (size_t)page_size, pp_chk_fill_byte(o->kind),
			  stdout) != 0)
		goto out;
	ret = 0;
out:
	if (pp_close_ctx(ctx) != 0)
		ret = 1;
	return ret;
}

int
pp_main(int argc, char **argv, enum pp_kind kind)
{
	struct droce_device **dev_list;
	struct droce_device *dev;
	struct pp_opts o;
	char *argv0 = argv[0];
	char **pargv;
	int pargc = 0;
	int consumed, rc;
	int ret = 1;

	/* Lines reach a pipe as soon as they are printed (scripts wait for
	 * "local address" before starting the client). */
	setvbuf(stdout, NULL, _IOLBF, 0);
	pp_opts_default(&o, kind, argv0);
	if (pp_wants_help(argc, argv)) {
		pp_usage(&o, stdout);
		return 0;
	}

	consumed = droce_init(argc, argv);
	if (consumed < 0) {
		fprintf(stderr, "%s: droce_init failed: %s (check the EAL "
			"arguments before \"--\" and the --droce-* options)\n",
			argv0, strerror(errno));
		return 1;
	}
	pargv = app_program_args(argc, argv, consumed, argv0, &pargc);
	if (pargv == NULL) {
		fprintf(stderr, "%s: out of memory\n", argv0);
		goto out_cleanup;
	}
	rc = pp_parse_opts(&o, pargc, pargv, stdout, stderr);
	if (rc == PP_OPTS_HELP)
		ret = 0;
	if (rc != PP_OPTS_RUN)
		goto out_args;

	srand48(getpid() * time(NULL));

	dev_list = droce_get_device_list(NULL);
	if (dev_list == NULL) {
		perror("Failed to get IB devices list");
		goto out_args;
	}
	dev = app_pick_device(dev_list, o.ib_devname);
	if (dev != NULL)
		ret = run(&o, dev);
	droce_free_device_list(dev_list);
out_args:
	free(pargv);
out_cleanup:
	droce_cleanup();
	return ret;
}
