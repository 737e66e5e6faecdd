/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-perf [EAL options] -- [droce options] <test> [options] [host]
 * droce_<test> [EAL options] -- [droce options] [options] [host]
 *
 * perftest's ib_<test> on droce (see perf.h for the files).  The server is
 * the side without a host name; it adopts the client's size, iteration,
 * duration, -a, -A and -m values from the address message.  Exit status 0
 * on success, 1 on any failure (including wrong data), with everything
 * released and EAL stopped.
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
	printf(" %s address: LID 0x0000 QPN %#06x PSN %#06x RKey %#08x "
	       "VAddr %#016lx\n", what, d->qpn, d->psn, d->rkey,
	       (unsigned long)d->vaddr);
	printf(" GID: %s\n", gid);
}

/* The server takes the client's test parameters. */
static int
adopt(struct perf_opts *o, const struct perf_dest *rem)
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
	if (rem->mtu != 0)
		o->mtu = (enum droce_mtu)rem->mtu;
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
	printf(" Mtu             : %d[B]\n", droce_mtu_to_num(
		       o->mtu != 0 ? o->mtu : c->active_mtu));
	printf(" Link type       : Ethernet (droce, RoCEv2)\n");
	printf(" GID index       : %d\n", o->gid_index);
	if (o->tst == PERF_BW && o->duration == 0)
		printf(" CQ Moderation   : %u\n", o->cq_mod);
	printf("---------------------------------------------------------------------------------------\n");
	print_dest("local", &c->my);
	print_dest("remote", &c->rem);
}

static int
prints_table(const struct perf_opts *o)
{
	return o->servername != NULL || o->verb == PERF_SEND ||
		(o->tst == PERF_LAT && o->verb == PERF_WRITE);
}

static int
run(struct perf_opts *o, struct droce_device *dev)
{
	struct perf_ctx c;
	uint32_t size, max;
	int client = o->servername != NULL;
	int ret = 1;

	if (perf_ctx_open(&c, dev, o) != 0)
		goto out;
	perf_exch_set_idle(app_progress_idle, c.context);
	if (client) {
		c.sock = perf_tcp_connect(o->servername, o->port);
	} else {
		printf("\n************************************\n"
		       "* Waiting for client to connect... *\n"
		       "************************************\n");
		c.sock = perf_tcp_accept(o->port);
	}
	if (c.sock < 0)
		goto out;
	if (!client && (perf_recv_dest(c.sock, &c.rem) != 0 ||
			adopt(o, &c.rem) != 0))
		goto out;
	max = o->all_sizes ? PERF_MAX_SIZE : o->size;
	if (perf_ctx_alloc(&c, 2 * (size_t)(max < 8 ? 8 : max)) != 0)
		goto out;
	snprintf(c.my.test, sizeof(c.my.test), "%s", o->test);
	c.my.size = o->size;
	c.my.iters = o->iters;
	c.my.duration = o->duration;
	c.my.all_sizes = (uint32_t)o->all_sizes;
	c.my.atomic = o->atomic == PERF_FETCH_AND_ADD;
	c.my.mtu = (uint32_t)o->mtu;
	if (perf_send_dest(c.sock, &c.my) != 0 ||
	    (client && perf_recv_dest(c.sock, &c.rem) != 0)) {
		fprintf(stderr, "Couldn't exchange addresses\n");
		goto out;
	}
	if (client && strcmp(c.rem.test, o->test) != 0) {
		fprintf(stderr, "the server runs %s, this client %s\n",
			c.rem.test, o->test);
		goto out;
	}
	if (perf_ctx_wait_port(&c) != 0 || perf_ctx_connect(&c) != 0)
		goto out;

	if (o->output == PERF_OUT_FULL)
		print_banner(o, &c);
	if (prints_table(o)) {
		if (o->tst == PERF_BW)
			perf_print_bw_header(o, stdout);
		else
			perf_print_lat_header(o, stdout);
	}
	for (size = o->all_sizes ? 2 : o->size; size <= max; size *= 2) {
		if (o->tst == PERF_BW ? perf_run_bw(&c, size) :
		    perf_run_lat(&c, size))
			goto out;
		if (!o->all_sizes)
			break;
	}
	if (prints_table(o))
		perf_print_footer(o, stdout);
	else if (o->output == PERF_OUT_FULL)
		printf("---------------------------------------------------------------------------------------\n");
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
