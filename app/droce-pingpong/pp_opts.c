/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_opts.c - the options of rdma-core 44's ibv_rc_pingpong,
 * ibv_ud_pingpong and ibv_srq_pingpong (libibverbs/examples/rc_pingpong.c,
 * ud_pingpong.c, srq_pingpong.c: the long_options tables and optstrings
 * "p:d:i:s:m:r:n:l:eg:oOPtcjN", "p:d:i:s:r:n:l:eg:c" and
 * "p:d:i:s:m:q:r:n:l:eog:c"), plus -h.
 *
 * Deviations, all on the side of a clearer error:
 *  - numbers must be whole numbers (strtoul base 0 as the examples, but
 *    trailing garbage is a usage error instead of being ignored);
 *  - -m with an invalid MTU is a usage error (rc_pingpong's check compares
 *    pp_mtu_to_enum()'s -1 with 0 and lets it through to modify_qp);
 *  - -g defaults to 0: droce is RoCEv2 only and every RoCE path needs a
 *    GID, while the examples' default (no GID, LID routing) only works on
 *    InfiniBand; a negative index is rejected;
 *  - -o/-O/-P (on-demand paging), -t (timestamps), -j (device memory) and
 *    -N (ibv_wr_* API) are recognised and refused with a reason.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pp_exch.h"
#include "pp_opts.h"

void
pp_opts_default(struct pp_opts *o, enum pp_kind kind, const char *prog)
{
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->prog = prog;
	o->port = PP_DEFAULT_TCP_PORT;
	o->ib_port = 1;
	o->size = kind == PP_UD ? 1024 : 4096;
	o->mtu = DROCE_MTU_1024;
	o->rx_depth = 500;
	o->iters = 1000;
	o->gidx = 0;
	o->num_qp = kind == PP_SRQ ? 16 : 1;
}

enum droce_mtu
pp_mtu_to_enum(long mtu)
{
	switch (mtu) {
	case 256: return DROCE_MTU_256;
	case 512: return DROCE_MTU_512;
	case 1024: return DROCE_MTU_1024;
	case 2048: return DROCE_MTU_2048;
	case 4096: return DROCE_MTU_4096;
	default: return (enum droce_mtu)0;
	}
}

void
pp_usage(const struct pp_opts *o, FILE *out)
{
	const char *p = o->prog;

	fprintf(out, "Usage:\n");
	fprintf(out, "  %s [EAL options] -- [options]            start a server and wait for connection\n", p);
	fprintf(out, "  %s [EAL options] -- [options] <host>     connect to server at <host>\n", p);
	fprintf(out, "\n");
	fprintf(out, "EAL options come first (DPDK's: -l, --vdev, --no-pci, --file-prefix, ...),\n"
		"then \"--\", then droce's options and this program's:\n");
	fprintf(out, "  --droce-config=FILE --droce-port=NAME --droce-ipv4=A.B.C.D/N\n"
		"  --droce-ipv6=ADDR/N --droce-mtu=N   (see include/droce.h, droce_init)\n");
	fprintf(out, "\n");
	fprintf(out, "Options:\n");
	fprintf(out, "  -p, --port=<port>      listen on/connect to port <port> (default 18515)\n");
	fprintf(out, "  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)\n");
	fprintf(out, "  -i, --ib-port=<port>   use port <port> of IB device (default 1)\n");
	if (o->kind == PP_UD) {
		fprintf(out, "  -s, --size=<size>      size of message to exchange (default 1024)\n");
	} else {
		fprintf(out, "  -s, --size=<size>      size of message to exchange (default 4096)\n");
		fprintf(out, "  -m, --mtu=<size>       path MTU (default 1024)\n");
	}
	if (o->kind == PP_SRQ)
		fprintf(out, "  -q, --num-qp=<num>     number of QPs to use (default 16)\n");
	fprintf(out, "  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n");
	/* srq_pingpong's text; its -n counts the exchanges of all QPs */
	fprintf(out, "  -n, --iters=<iters>    number of exchanges%s (default 1000)\n",
		o->kind == PP_SRQ ? " per QP" : "");
	if (o->kind == PP_UD)
		fprintf(out, "  -l, --sl=<SL>          send messages with service level <SL> (default 0)\n");
	else
		fprintf(out, "  -l, --sl=<sl>          service level value\n");
	fprintf(out, "  -e, --events           sleep on CQ events (default poll); droce is poll-mode:\n"
		"                         accepted, and completions are still polled\n");
	fprintf(out, "  -g, --gid-idx=<gid index> local port gid index (default 0: RoCEv2 always\n"
		"                         needs a GID; 0 is the port's first IPv4 address)\n");
	fprintf(out, "  -c, --chk              validate received buffer\n");
	if (o->kind != PP_UD)
		fprintf(out, "  -o, --odp              use on demand paging: not supported by droce\n");
	if (o->kind == PP_RC) {
		fprintf(out, "  -O, --iodp             use implicit on demand paging: not supported by droce\n");
		fprintf(out, "  -P, --prefetch         prefetch an ODP MR: not supported by droce\n");
		fprintf(out, "  -t, --ts               get CQE with timestamp: not supported by droce\n");
		fprintf(out, "  -j, --dm               use device memory: not supported by droce\n");
		fprintf(out, "  -N, --new_send         use new post send WR API: not supported by droce\n");
	}
	fprintf(out, "  -h, --help             print this help\n");
}

static int
parse_ulong(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (s == NULL || *s == '\0' || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoul(s, &end, 0);
	if (errno != 0 || *end != '\0' || *v > max)
		return -EINVAL;
	return 0;
}

static int
parse_long(const char *s, long min, long max, long *v)
{
	char *end;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	errno = 0;
	*v = strtol(s, &end, 0);
	if (errno != 0 || *end != '\0' || *v < min || *v > max)
		return -EINVAL;
	return 0;
}

/* srq_pingpong.c main()'s checks, in its words. */
static int
check_num_qp(const struct pp_opts *o, FILE *err)
{
	if (o->num_qp > o->rx_depth) {
		fprintf(err, "rx_depth %u is too small for %u QPs -- must have "
			"at least one receive per QP.\n", o->rx_depth, o->num_qp);
		return PP_OPTS_INVALID;
	}
	/* srq_pingpong accepts 255, its message notwithstanding */
	if (o->num_qp >= PP_MAX_QP) {
		fprintf(err, "num_qp %u must be less than %d\n", o->num_qp,
			PP_MAX_QP - 1);
		return PP_OPTS_INVALID;
	}
	return PP_OPTS_RUN;
}

static int
unsupported(const struct pp_opts *o, FILE *err, const char *opt,
	    const char *why)
{
	fprintf(err, "%s: %s is not supported: %s\n", o->prog, opt, why);
	return PP_OPTS_UNSUPPORTED;
}

static int
bad_value(const struct pp_opts *o, FILE *out, FILE *err, const char *opt,
	  const char *val, const char *expect)
{
	fprintf(err, "%s: invalid %s '%s' (%s)\n", o->prog, opt,
		val != NULL ? val : "", expect);
	pp_usage(o, out);
	return PP_OPTS_USAGE;
}

int
pp_parse_opts(struct pp_opts *o, int argc, char **argv, FILE *out, FILE *err)
{
	static const struct option rc_long[] = {
		{ .name = "port",     .has_arg = 1, .val = 'p' },
		{ .name = "ib-dev",   .has_arg = 1, .val = 'd' },
		{ .name = "ib-port",  .has_arg = 1, .val = 'i' },
		{ .name = "size",     .has_arg = 1, .val = 's' },
		{ .name = "mtu",      .has_arg = 1, .val = 'm' },
		{ .name = "rx-depth", .has_arg = 1, .val = 'r' },
		{ .name = "iters",    .has_arg = 1, .val = 'n' },
		{ .name = "sl",       .has_arg = 1, .val = 'l' },
		{ .name = "events",   .has_arg = 0, .val = 'e' },
		{ .name = "gid-idx",  .has_arg = 1, .val = 'g' },
		{ .name = "odp",      .has_arg = 0, .val = 'o' },
		{ .name = "iodp",     .has_arg = 0, .val = 'O' },
		{ .name = "prefetch", .has_arg = 0, .val = 'P' },
		{ .name = "ts",       .has_arg = 0, .val = 't' },
		{ .name = "chk",      .has_arg = 0, .val = 'c' },
		{ .name = "dm",       .has_arg = 0, .val = 'j' },
		{ .name = "new_send", .has_arg = 0, .val = 'N' },
		{ .name = "help",     .has_arg = 0, .val = 'h' },
		{ 0 }
	};
	static const struct option ud_long[] = {
		{ .name = "port",     .has_arg = 1, .val = 'p' },
		{ .name = "ib-dev",   .has_arg = 1, .val = 'd' },
		{ .name = "ib-port",  .has_arg = 1, .val = 'i' },
		{ .name = "size",     .has_arg = 1, .val = 's' },
		{ .name = "rx-depth", .has_arg = 1, .val = 'r' },
		{ .name = "iters",    .has_arg = 1, .val = 'n' },
		{ .name = "sl",       .has_arg = 1, .val = 'l' },
		{ .name = "events",   .has_arg = 0, .val = 'e' },
		{ .name = "gid-idx",  .has_arg = 1, .val = 'g' },
		{ .name = "chk",      .has_arg = 0, .val = 'c' },
		{ .name = "help",     .has_arg = 0, .val = 'h' },
		{ 0 }
	};
	static const struct option srq_long[] = {
		{ .name = "port",     .has_arg = 1, .val = 'p' },
		{ .name = "ib-dev",   .has_arg = 1, .val = 'd' },
		{ .name = "ib-port",  .has_arg = 1, .val = 'i' },
		{ .name = "size",     .has_arg = 1, .val = 's' },
		{ .name = "mtu",      .has_arg = 1, .val = 'm' },
		{ .name = "num-qp",   .has_arg = 1, .val = 'q' },
		{ .name = "rx-depth", .has_arg = 1, .val = 'r' },
		{ .name = "iters",    .has_arg = 1, .val = 'n' },
		{ .name = "sl",       .has_arg = 1, .val = 'l' },
		{ .name = "events",   .has_arg = 0, .val = 'e' },
		{ .name = "odp",      .has_arg = 0, .val = 'o' },
		{ .name = "gid-idx",  .has_arg = 1, .val = 'g' },
		{ .name = "chk",      .has_arg = 0, .val = 'c' },
		{ .name = "help",     .has_arg = 0, .val = 'h' },
		{ 0 }
	};
	static const struct option *const longopts_of[] = {
		[PP_RC] = rc_long, [PP_UD] = ud_long, [PP_SRQ] = srq_long,
	};
	static const char *const optstring_of[] = {
		[PP_RC] = "p:d:i:s:m:r:n:l:eg:oOPtcjNh",
		[PP_UD] = "p:d:i:s:r:n:l:eg:ch",
		[PP_SRQ] = "p:d:i:s:m:q:r:n:l:eog:ch",
	};
	const struct option *longopts = longopts_of[o->kind];
	const char *optstring = optstring_of[o->kind];
	unsigned long u;
	long l;

	optind = 0;		/* glibc: full reset (EAL used getopt before) */
	opterr = 1;
	for (;;) {
		int c = getopt_long(argc, argv, optstring, longopts, NULL);

		if (c == -1)
			break;
		switch (c) {
		case 'p':
			if (parse_ulong(optarg, 65535, &u) != 0)
				return bad_value(o, out, err, "port", optarg,
						 "0..65535");
			o->port = (unsigned int)u;
			break;
		case 'd':
			o->ib_devname = optarg;
			break;
		case 'i':
			if (parse_long(optarg, 1, 255, &l) != 0)
				return bad_value(o, out, err, "IB port", optarg,
						 "1..255");
			o->ib_port = (int)l;
			break;
		case 's':
			if (parse_ulong(optarg, INT_MAX, &u) != 0)
				return bad_value(o, out, err, "size", optarg,
						 "a byte count");
			o->size = (unsigned int)u;
			break;
		case 'm':
			if (parse_long(optarg, 0, LONG_MAX, &l) != 0 ||
			    pp_mtu_to_enum(l) == 0)
				return bad_value(o, out, err, "MTU", optarg,
						 "256, 512, 1024, 2048 or 4096");
			o->mtu = pp_mtu_to_enum(l);
			break;
		case 'q':
			if (parse_ulong(optarg, INT_MAX, &u) != 0 || u == 0)
				return bad_value(o, out, err, "QP count", optarg,
						 "1..255");
			o->num_qp = (unsigned int)u;
			break;
		case 'r':
			if (parse_ulong(optarg, DROCE_MAX_QP_WR, &u) != 0 ||
			    u == 0)
				return bad_value(o, out, err, "rx depth", optarg,
						 "1..16384");
			o->rx_depth = (unsigned int)u;
			break;
		case 'n':
			if (parse_ulong(optarg, INT_MAX, &u) != 0)
				return bad_value(o, out, err, "iteration count",
						 optarg, "0..2^31-1");
			o->iters = (unsigned int)u;
			break;
		case 'l':
			if (parse_long(optarg, 0, 15, &l) != 0)
				return bad_value(o, out, err, "service level",
						 optarg, "0..15");
			o->sl = (int)l;
			break;
		case 'e':
			++o->use_event;
			break;
		case 'g':
			if (parse_long(optarg, 0, INT_MAX, &l) != 0)
				return bad_value(o, out, err, "GID index", optarg,
						 "a GID table index >= 0; RoCEv2 "
						 "needs a GID");
			o->gidx = (int)l;
			break;
		case 'c':
			o->validate_buf = 1;
			break;
		case 'o':
			return unsupported(o, err, "-o/--odp",
				"droce has no on-demand paging; it registers "
				"ordinary memory");
		case 'O':
			return unsupported(o, err, "-O/--iodp",
				"droce has no (implicit) on-demand paging");
		case 'P':
			return unsupported(o, err, "-P/--prefetch",
				"droce has no on-demand paging to prefetch");
		case 't':
			return unsupported(o, err, "-t/--ts",
				"droce completions carry no timestamp "
				"(no ibv_create_cq_ex)");
		case 'j':
			return unsupported(o, err, "-j/--dm",
				"droce has no device memory");
		case 'N':
			return unsupported(o, err, "-N/--new_send",
				"droce has no ibv_wr_* send API; the default "
				"post_send path is the same operation");
		case 'h':
			pp_usage(o, out);
			return PP_OPTS_HELP;
		default:
			pp_usage(o, out);
			return PP_OPTS_USAGE;
		}
	}
	if (optind == argc - 1) {
		o->servername = argv[optind];
	} else if (optind < argc) {
		fprintf(err, "%s: unexpected argument '%s' (one server name "
			"at most)\n", o->prog, argv[optind + 1]);
		pp_usage(o, out);
		return PP_OPTS_USAGE;
	}
	return check_num_qp(o, err);
}

static int
is_help(const char *a)
{
	return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0;
}

int
pp_wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			break;
	if (i == argc)		/* no "--": only a leading -h/--help */
		return argc > 1 && is_help(argv[1]);
	for (i++; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (is_help(argv[i]))
			return 1;
	}
	return 0;
}
