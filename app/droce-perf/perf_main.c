/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-perf [EAL options] -- [droce options] <test> [options] [host]
 * droce_<test> [EAL options] -- [droce options] [options] [host]
 *
 * perftest's ib_<test> on droce (see perf.h for the files).  The server is
 * the side without a host name.  The side channel is perftest 4.5-0.17's
 * (perf_exch.c; over RDMA CM with -R, perf_cm.c), so either side may be
 * the real perftest; a droce-perf
 * server with a droce-perf client adopts the client's size, iteration,
 * duration, -a and -A values.  Exit status 0 on success, 1 on any failure
 * (including wrong data), with everything released and EAL stopped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app_dev.h"
#include "perf.h"

static const char *
verb_title(enum perf_verb v)
{
	switch (v) {
	case PERF_SEND: return "Send";
	case PERF_WRITE: return "RDMA_Write";
	case PERF_READ: return "RDMA_Read";
	default: return "Atomic";
	}
}

static void
print_dest(const char *what, const struct perf_dest *d)
{
	char gid[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, d->gid.raw, gid, sizeof(gid));
	printf(" %s address: LID %04x QPN %#06x PSN %#06x OUT %#04x RKey "
	       "%#08x VAddr %#016lx\n", what, d->lid, d->qpn, d->psn,
	       d->out_reads, d->rkey, (unsigned long)d->vaddr);
	printf(" GID: %s\n", gid);
}

/* A droce-perf server takes its droce-perf client's test parameters. */
static int
adopt(struct perf_opts *o, const struct perf_params *rem)
{
	if (strcmp(rem->test, o->test) != 0) {
		fprintf(stderr, "the client runs %s, this server %s\n",
			rem->test, o->test);
		return 1;
	}
	o->size = rem->size;
	o->iters = rem->iters;
	o->duration = rem->duration;
	o->all_sizes = (int)rem->all_sizes;
	o->atomic = rem->atomic ? PERF_FETCH_AND_ADD : PERF_CMP_AND_SWAP;
	if (o->rx_depth > o->iters && o->duration == 0)
		o->rx_depth = o->iters;
	return 0;
}

static void
print_banner(const struct perf_opts *o, const struct perf_ctx *c)
{
	printf("---------------------------------------------------------------------------------------\n");
	printf("                    %s %s Test\n", verb_title(o->verb),
	       o->tst == PERF_BW ? "BW" : "Latency");
	printf(" Number of qps   : 1\t\tTransport type : IB\n");
	printf(" Connection type : RC\t\tUsing SRQ      : OFF\n");
	printf(" TX depth        : %u\n", o->tx_depth);
	if (o->verb == PERF_ATOMIC)
		printf(" Atomic type     : %s\n", o->atomic == PERF_CMP_AND_SWAP ?
		       "CMP_AND_SWAP" : "FETCH_AND_ADD");
	printf(" Mtu             : %d[B]\n", droce_mtu_to_num(c->mtu));
	printf(" Link type       : Ethernet (droce, RoCEv2)\n");
	printf(" Peer            : %s\n", c->peer_droce ? "droce-perf" :
	       "perftest");
	printf(" GID index       : %d\n", o->gid_index);
	if (o->tst == PERF_BW && o->duration == 0)
		printf(" CQ Moderation   : %u\n", o->cq_mod);
	printf("---------------------------------------------------------------------------------------\n");
	print_dest("local", &c->my);
	print_dest("remote", &c->rem);
}

/* As perftest 4.5-0.17: the client always; the server for the bw tests
 * (the client's report, or its own for send_bw) and the ping-pongs. */
static int
prints_table(const struct perf_opts *o, int client)
{
	return client || o->tst == PERF_BW || o->verb == PERF_WRITE ||
		o->verb == PERF_SEND;
}

/* n perftest barriers of msg (our key message, or -R's zeroed one) */
static int
barriers(struct perf_ctx *c, const void *msg, size_t len, int n)
{
	while (n-- > 0)
		if (perf_handshake(&c->chan, c->client, msg, len) != 0) {
			fprintf(stderr, " Failed to exchange data between "
				"server and clients\n");
			return 1;
		}
	return 0;
}

/* A fresh seed each run, so repeated runs move different bytes. */
static uint32_t
pattern_seed(void)
{
	uint64_t t = perf_now_ns();

	return (uint32_t)(t ^ t >> 32) ^ (uint32_t)getpid() * 0x9e3779b1u;
}

/* Versions, droce-perf's parameters, page and cache line sizes. */
static int
negotiate(struct perf_ctx *c, struct perf_opts *o)
{
	char mine[PERF_VERSION_SIZE], theirs[PERF_VERSION_SIZE];
	uint8_t sys[2][4], rsys[2][4];
	struct perf_params p, rp;
	double version;
	uint32_t rcycle;

	perf_version_format(mine);
	if (perf_xchg(&c->chan, c->client, mine, theirs, sizeof(theirs)) ||
	    perf_version_parse(theirs, &version, &c->peer_droce) != 0) {
		fprintf(stderr, "Couldn't exchange versions with the peer\n");
		return 1;
	}
	if (version < PERF_MIN_PEER_VERSION) {
		fprintf(stderr, "perftest %.2f is too old (droce-perf speaks "
			"%s's exchange)\n", version, PERF_PERFTEST_VERSION);
		return 1;
	}
	if (c->peer_droce) {
		memset(&p, 0, sizeof(p));
		snprintf(p.test, sizeof(p.test), "%s", o->test);
		p.size = o->size;
		p.iters = o->iters;
		p.duration = o->duration;
		p.all_sizes = (uint32_t)o->all_sizes;
		p.atomic = o->atomic == PERF_FETCH_AND_ADD;
		p.seed = c->client ? pattern_seed() : 0;
		if (perf_params_xchg(&c->chan, c->client, &p, &rp) != 0)
			return 1;
		if (!c->client && adopt(o, &rp) != 0)
			return 1;
		/* the client's seed, printed on both sides to reproduce */
		c->seed = c->client ? p.seed : rp.seed;
		fprintf(stderr, "droce-perf: data pattern seed 0x%08x\n",
			c->seed);
		if (c->client && strcmp(rp.test, o->test) != 0) {
			fprintf(stderr, "the server runs %s, this client %s\n",
				rp.test, o->test);
			return 1;
		}
	} else if (o->all_sizes) {
		fprintf(stderr, "-a is for droce-perf peers only\n");
		return 1;
	}
	perf_be32_put(sys[0], PERF_CYCLE_BUFFER);
	perf_be32_put(sys[1], PERF_CACHE_LINE);
	if (perf_xchg(&c->chan, c->client, sys[0], rsys[0], 4) != 0 ||
	    perf_xchg(&c->chan, c->client, sys[1], rsys[1], 4) != 0) {
		fprintf(stderr, "Couldn't exchange page sizes\n");
		return 1;
	}
	rcycle = perf_be32_get(rsys[0]);
	c->cycle_buffer = rcycle > PERF_CYCLE_BUFFER && rcycle <= (1u << 24) ?
		rcycle : PERF_CYCLE_BUFFER;
	return 0;
}

/* perftest's MTU exchange: both take the smaller. */
static int
negotiate_mtu(struct perf_ctx *c)
{
	char mine[PERF_MTU_MSG_SIZE], theirs[PERF_MTU_MSG_SIZE];
	enum droce_mtu rem;

	c->mtu = c->o->mtu != 0 ? c->o->mtu : c->active_mtu;
	perf_mtu_format(c->mtu, mine);
	if (perf_xchg(&c->chan, c->client, mine, theirs, sizeof(theirs))) {
		fprintf(stderr, "Couldn't exchange the MTU\n");
		return 1;
	}
	if (perf_mtu_parse(theirs, &rem) == 0 && rem < c->mtu)
		c->mtu = rem;
	return 0;
}

/* The key message: perftest's text, or with -R its binary struct. */
static int
exchange_keys(struct perf_ctx *c)
{
	char theirs[PERF_KEY_MSG_SIZE];
	int rc;

	c->key_len = c->o->rdma_cm ? PERF_CM_MSG_SIZE : PERF_KEY_MSG_SIZE;
	if (c->o->rdma_cm)
		perf_cm_key_format(&c->my, (uint8_t *)c->key);
	if ((!c->o->rdma_cm && perf_key_format(&c->my, c->key) < 0) ||
	    perf_xchg(&c->chan, c->client, c->key, theirs, c->key_len)) {
		fprintf(stderr, "Couldn't exchange addresses\n");
		return 1;
	}
	rc = c->o->rdma_cm ? perf_cm_key_parse((uint8_t *)theirs, &c->rem) :
		perf_key_parse(theirs, &c->rem);
	if (rc != 0) {
		fprintf(stderr, "Couldn't parse the peer's address message\n");
		return 1;
	}
	return 0;
}

/* -R: the test QP's CM connection between zeroed barriers. */
static int
connect_cm(struct perf_ctx *c)
{
	static const uint8_t zeros[PERF_CM_MSG_SIZE];
	struct perf_seq seq;

	perf_sequence(c->o->verb, c->o->tst, 1, &seq);
	return barriers(c, zeros, sizeof(zeros), seq.cm_sync_before) != 0 ||
		perf_cm_connect_test(c) != 0 ||
		barriers(c, zeros, sizeof(zeros), seq.cm_sync_after) != 0;
}

/* After the last size: perftest's closing sequence. */
static int
finish(struct perf_ctx *c, uint32_t size)
{
	const struct perf_opts *o = c->o;
	struct perf_report theirs, mine;
	struct perf_bw_result res;
	struct perf_seq seq;

	perf_sequence(o->verb, o->tst, o->rdma_cm, &seq);
	if (barriers(c, c->key, c->key_len, seq.handshakes_before_report) != 0)
		return 1;
	if (seq.reports) {
		memset(&mine, 0, sizeof(mine));
		if (c->client)
			mine = c->report;
		else
			mine.size = size;
		if (perf_report_xchg(&c->chan, c->client, &mine, &theirs)) {
			fprintf(stderr, " Failed to exchange reports\n");
			return 1;
		}
		if (!c->client && !c->peer_droce) {
			/* perftest's server prints its client's report */
			memset(&res, 0, sizeof(res));
			perf_result_from_report(o, &theirs, &res);
			perf_print_bw_line(o, &res, stdout);
			if (perf_server_verify(c, size, theirs.iters) != 0)
				return 1;
		}
	}
	if (barriers(c, c->key, c->key_len, seq.handshakes_after) != 0)
		return 1;
	/* read_lat/atomic_lat: perftest's client is done, -n operations */
	if (!c->client && !c->peer_droce && o->tst == PERF_LAT &&
	    (o->verb == PERF_ATOMIC || o->verb == PERF_READ) &&
	    perf_server_verify(c, size, o->iters))
		return 1;
	return seq.done && perf_done(&c->chan) != 0;
}

static int
run_sizes(struct perf_ctx *c, uint32_t first, uint32_t max)
{
	const struct perf_opts *o = c->o;
	uint32_t size, last = first;

	for (size = first; size <= max; size *= 2) {
		if (size != first)
			perf_prepare(c, size);
		/* droce-perf only: a barrier per size (perftest has none) */
		if (c->peer_droce && perf_barrier(&c->chan) != 0) {
			fprintf(stderr, "lost the peer (side channel)\n");
			return 1;
		}
		if (o->tst == PERF_BW ? perf_run_bw(c, size) :
		    perf_run_lat(c, size))
			return 1;
		last = size;
		if (!o->all_sizes)
			break;
	}
	return finish(c, last);
}

static void
print_waiting(void)
{
	printf("\n************************************\n"
	       "* Waiting for client to connect... *\n"
	       "************************************\n");
}

/* The side channel: perftest's TCP connection, or with -R its RDMA CM
 * connection (a server says it waits once its CM listener is up).  0 or
 * 1. */
static int
open_chan(struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;
	int fd;

	if (o->rdma_cm) {
		if (perf_cm_open(c) != 0)
			return 1;
		if (!c->client)
			print_waiting();
		return perf_cm_connect_chan(c);
	}
	if (!c->client)
		print_waiting();
	fd = c->client ? perf_tcp_connect(o->servername, o->port) :
		perf_tcp_accept(o->port);
	if (fd < 0)
		return 1;
	perf_chan_tcp(&c->chan, fd);
	return 0;
}

static int
run(struct perf_opts *o, struct droce_device *dev)
{
	struct perf_ctx c;
	struct perf_seq seq;
	uint32_t first, max;
	size_t half;
	int ret = 1;

	if (perf_ctx_open(&c, dev, o) != 0)
		goto out;
	c.client = o->servername != NULL;
	perf_exch_set_idle(app_progress_idle, c.context);
	if (open_chan(&c) != 0 || negotiate(&c, o) != 0 ||
	    negotiate_mtu(&c) != 0)
		goto out;
	first = o->all_sizes ? 2 : o->size;
	max = o->all_sizes ? PERF_MAX_SIZE : o->size;
	half = max > c.cycle_buffer ? max : c.cycle_buffer;
	if (perf_ctx_alloc(&c, 2 * half) != 0)
		goto out;
	if (o->rdma_cm ? connect_cm(&c) != 0 || exchange_keys(&c) != 0 :
	    exchange_keys(&c) != 0 || perf_ctx_wait_port(&c) != 0 ||
	    perf_ctx_connect(&c) != 0)
		goto out;

	if (o->output == PERF_OUT_FULL)
		print_banner(o, &c);
	if (prints_table(o, c.client)) {
		if (o->tst == PERF_BW)
			perf_print_bw_header(o, stdout);
		else
			perf_print_lat_header(o, stdout);
	}
	/* everything the peer may touch once the barriers are passed */
	perf_prepare(&c, first);
	if (o->verb == PERF_SEND && (o->tst == PERF_LAT || !c.client) &&
	    perf_fill_recv(&c) != 0)
		goto out;
	perf_sequence(o->verb, o->tst, o->rdma_cm, &seq);
	if (barriers(&c, c.key, c.key_len, seq.pre_handshakes) != 0 ||
	    run_sizes(&c, first, max) != 0)
		goto out;
	if (prints_table(o, c.client) || o->output == PERF_OUT_FULL)
		perf_print_footer(o, stdout);
	ret = 0;
out:
	perf_exch_set_idle(NULL, NULL);
	perf_ctx_close(&c);
	return ret;
}

int
main(int argc, char **argv)
{
	struct droce_device **list;
	struct droce_device *dev;
	struct perf_opts o;
	char *argv0 = argv[0];
	char **pargv;
	int pargc = 0, consumed, rc, ret = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	perf_opts_default(&o, argv0);
	o.test = perf_test_from_argv0(argv0);
	if (perf_wants_help(argc, argv)) {
		perf_usage(argv0, stdout);
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
	if (pargv == NULL)
		goto out_cleanup;
	rc = perf_parse_opts(&o, pargc, pargv, stdout, stderr);
	if (rc == PERF_OPTS_HELP)
		ret = 0;
	if (rc != PERF_OPTS_RUN)
		goto out_args;
	srand48(getpid() * time(NULL));
	list = droce_get_device_list(NULL);
	if (list == NULL) {
		perror("Failed to get IB devices list");
		goto out_args;
	}
	dev = app_pick_device(list, o.ib_devname);
	if (dev != NULL)
		ret = run(&o, dev);
	droce_free_device_list(list);
out_args:
	free(pargv);
out_cleanup:
	droce_cleanup();
	return ret;
}
