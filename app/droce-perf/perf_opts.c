/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_opts.c - test names and perftest's common options (perftest
 * src/perftest_parameters.c): defaults DEF_SIZE_BW 65536, DEF_SIZE_LAT 2,
 * DEF_ITERS 1000, DEF_ITERS_WB 5000, DEF_TX_BW 128, DEF_TX_LAT 1,
 * DEF_CQ_MOD 100, DEF_RX_SEND 512, port 18515; atomics are 8 bytes.
 * Differences: -x defaults to 0 (RoCEv2 always needs a GID), -q takes 1 only,
 * numbers with trailing garbage are usage errors.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

static const struct {
	const char *name;
	enum perf_verb verb;
	enum perf_tst tst;
} tests[] = {
	{ "write_bw", PERF_WRITE, PERF_BW },
	{ "write_lat", PERF_WRITE, PERF_LAT },
	{ "read_bw", PERF_READ, PERF_BW },
	{ "read_lat", PERF_READ, PERF_LAT },
	{ "send_bw", PERF_SEND, PERF_BW },
	{ "send_lat", PERF_SEND, PERF_LAT },
	{ "atomic_bw", PERF_ATOMIC, PERF_BW },
	{ "atomic_lat", PERF_ATOMIC, PERF_LAT },
};

int
perf_test_lookup(const char *name, enum perf_verb *verb, enum perf_tst *tst,
		 const char **canon)
{
	size_t i;

	if (name == NULL)
		return -1;
	if (strncmp(name, "droce_", 6) == 0)
		name += 6;
	else if (strncmp(name, "ib_", 3) == 0)
		name += 3;
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (strcmp(name, tests[i].name) == 0) {
			*verb = tests[i].verb;
			*tst = tests[i].tst;
			*canon = tests[i].name;
			return 0;
		}
	}
	return -1;
}

const char *
perf_test_from_argv0(const char *argv0)
{
	const char *base = strrchr(argv0, '/');
	const char *canon;
	enum perf_verb v;
	enum perf_tst t;

	base = base != NULL ? base + 1 : argv0;
	if (strncmp(base, "droce_", 6) != 0 && strncmp(base, "ib_", 3) != 0)
		return NULL;
	return perf_test_lookup(base, &v, &t, &canon) == 0 ? canon : NULL;
}

void
perf_opts_default(struct perf_opts *o, const char *prog)
{
	memset(o, 0, sizeof(*o));
	o->prog = prog;
	o->port = PERF_DEF_PORT;
	o->ib_port = 1;
	o->num_qps = 1;
	o->inline_size = -1;
	o->atomic = PERF_FETCH_AND_ADD;
	o->qp_timeout = PERF_QP_TIMEOUT;
}

void
perf_opts_test_defaults(struct perf_opts *o)
{
	if (o->size == 0)
		o->size = o->verb == PERF_ATOMIC ? 8 :
			o->tst == PERF_BW ? 65536 : 2;
	if (o->iters == 0)
		o->iters = o->tst == PERF_BW ? 5000 : 1000;
	if (o->tx_depth == 0)
		o->tx_depth = o->tst == PERF_BW ? 128 : 1;
	if (o->rx_depth == 0)
		o->rx_depth = 512;
	if (o->cq_mod == 0)
		o->cq_mod = 100;
	if (o->cq_mod > o->tx_depth)
		o->cq_mod = o->tx_depth;
	if (o->tst == PERF_BW && o->iters < o->tx_depth && o->duration == 0)
		o->tx_depth = o->iters;
	if (o->cq_mod > o->tx_depth)
		o->cq_mod = o->tx_depth;
	if (o->rx_depth > o->iters && o->duration == 0)
		o->rx_depth = o->iters;
}

void
perf_usage(const char *p, FILE *out)
{
	fprintf(out, "Usage:\n"
		"  %s [EAL options] -- [droce options] <test> [options]          start a server\n"
		"  %s [EAL options] -- [droce options] <test> [options] <host>   connect to the server at <host>\n"
		"  droce_<test> [EAL options] -- ...                     (symlinks: the test is the name)\n\n", p, p);
	fprintf(out, "Tests: write_bw write_lat read_bw read_lat send_bw send_lat atomic_bw atomic_lat\n\n");
	fprintf(out, "droce options (see include/droce.h, droce_init):\n"
		"  --droce-config=FILE --droce-port=NAME --droce-ipv4=A.B.C.D/N\n"
		"  --droce-ipv6=ADDR/N --droce-mtu=N\n\n");
	fprintf(out, "Options (perftest's):\n"
		"  -p, --port=<port>        the side channel's TCP port, RDMA CM's with -R (18515)\n"
		"  -d, --ib-dev=<dev>       droce device (default: the first)\n"
		"  -i, --ib-port=<port>     device port (default 1)\n"
		"  -s, --size=<size>        message size (bw 65536, lat 2, atomic 8)\n"
		"  -n, --iters=<iters>      iterations (bw 5000, lat 1000; at least 5)\n"
		"  -D, --duration=<sec>     run for <sec> seconds instead of -n (bw tests)\n"
		"  -a, --all                all sizes 2 .. 2^23\n"
		"  -m, --mtu=<mtu>          path MTU 256..4096 (default: the port's)\n"
		"  -x, --gid-index=<index>  source GID index (default 0)\n"
		"  -q, --qp=<num>           number of QPs (droce-perf: 1)\n"
		"  -t, --tx-depth=<dep>     send queue depth (bw 128, lat 1)\n"
		"  -r, --rx-depth=<dep>     receives posted (send tests, 512)\n"
		"  -Q, --cq-mod=<n>         signal every <n> sends (default 100)\n"
		"  -u, --qp-timeout=<t>     local ACK timeout 4.096 us x 2^<t> (default 14)\n"
		"  -I, --inline_size=<n>    send messages up to <n> bytes inline (max %d)\n"
		"  -A, --atomic_type=<t>    CMP_AND_SWAP or FETCH_AND_ADD (default)\n"
		"  -F, --CPU-freq           accepted (no cpufreq check in droce-perf)\n"
		"  -H, --report-histogram   latency tests: also every sample, sorted (usec)\n"
		"  -R, --rdma_cm            connect through RDMA CM (side channel and test QP)\n"
		"  --report_gbits           bandwidth in Gb/sec\n"
		"  --output=<what>          bandwidth | message_rate | latency: only that number\n"
		"  --json                   also one JSON object per result line\n"
		"  -h, --help               this help\n", DROCE_MAX_INLINE_DATA);
}

static int
num(const char *s, unsigned long min, unsigned long max, unsigned long *v)
{
	char *end;

	if (s == NULL || *s == '\0' || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoul(s, &end, 0);
	if (errno != 0 || *end != '\0' || *v < min || *v > max)
		return -EINVAL;
	return 0;
}

static int
bad(const struct perf_opts *o, FILE *err, const char *what, const char *val,
    unsigned long min, unsigned long max)
{
	fprintf(err, "%s: %s should be between %lu and %lu (got '%s')\n",
		o->prog, what, min, max, val != NULL ? val : "");
	return PERF_OPTS_USAGE;
}

enum {
	OPT_REPORT_GBITS = 256,
	OPT_OUTPUT,
	OPT_JSON,
};

static enum droce_mtu
mtu_enum(unsigned long m)
{
	switch (m) {
	case 256: return DROCE_MTU_256;
	case 512: return DROCE_MTU_512;
	case 1024: return DROCE_MTU_1024;
	case 2048: return DROCE_MTU_2048;
	case 4096: return DROCE_MTU_4096;
	default: return (enum droce_mtu)0;
	}
}

#define NUM(var, min, max, what) do {					\
	if (num(optarg, (min), (max), &u) != 0)				\
		return bad(o, err, (what), optarg, (min), (max));	\
	(var) = u;							\
} while (0)

int
perf_parse_opts(struct perf_opts *o, int argc, char **argv, FILE *out,
		FILE *err)
{
	static const struct option longopts[] = {
		{ "port", 1, NULL, 'p' }, { "ib-dev", 1, NULL, 'd' },
		{ "ib-port", 1, NULL, 'i' }, { "size", 1, NULL, 's' },
		{ "iters", 1, NULL, 'n' }, { "duration", 1, NULL, 'D' },
		{ "all", 0, NULL, 'a' }, { "mtu", 1, NULL, 'm' },
		{ "gid-index", 1, NULL, 'x' }, { "qp", 1, NULL, 'q' },
		{ "tx-depth", 1, NULL, 't' }, { "rx-depth", 1, NULL, 'r' },
		{ "cq-mod", 1, NULL, 'Q' }, { "inline_size", 1, NULL, 'I' },
		{ "atomic_type", 1, NULL, 'A' }, { "CPU-freq", 0, NULL, 'F' },
		{ "report_gbits", 0, NULL, OPT_REPORT_GBITS },
		{ "output", 1, NULL, OPT_OUTPUT }, { "json", 0, NULL, OPT_JSON },
		{ "report-histogram", 0, NULL, 'H' },
		{ "rdma_cm", 0, NULL, 'R' }, { "qp-timeout", 1, NULL, 'u' },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 }
	};
	unsigned long u;
	int size_set = 0;

	optind = 0;		/* glibc: full reset (EAL used getopt) */
	opterr = 1;
	if (o->test == NULL) {
		/* the test name is the first program argument */
		if (argc < 2 || argv[1][0] == '-') {
			if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
					  strcmp(argv[1], "--help") == 0)) {
				perf_usage(o->prog, out);
				return PERF_OPTS_HELP;
			}
			fprintf(err, "%s: the first argument after the droce "
				"options must be a test name\n", o->prog);
			perf_usage(o->prog, out);
			return PERF_OPTS_USAGE;
		}
		if (perf_test_lookup(argv[1], &o->verb, &o->tst, &o->test)) {
			fprintf(err, "%s: unknown test '%s'\n", o->prog,
				argv[1]);
			perf_usage(o->prog, out);
			return PERF_OPTS_USAGE;
		}
		argv[1] = argv[0];
		argc--;
		argv++;
	} else if (perf_test_lookup(o->test, &o->verb, &o->tst, &o->test)) {
		return PERF_OPTS_USAGE;
	}
	for (;;) {
		int c = getopt_long(argc, argv, "p:d:i:s:n:D:am:x:q:t:r:Q:I:A:FHRu:h",
				    longopts, NULL);

		if (c == -1)
			break;
		switch (c) {
		case 'p': NUM(o->port, 0, 65535, "port"); break;
		case 'd': o->ib_devname = optarg; break;
		case 'i': NUM(o->ib_port, 1, 255, "IB port"); break;
		case 's':
			NUM(o->size, 1, PERF_MAX_SIZE, "Message size");
			size_set = 1;
			break;
		case 'n':
			NUM(o->iters, PERF_MIN_ITER, PERF_MAX_ITER,
			    "Iteration num");
			break;
		case 'D': NUM(o->duration, 1, 3600, "Duration"); break;
		case 'a': o->all_sizes = 1; break;
		case 'H': o->histogram = 1; break;
		case 'm':
			if (num(optarg, 256, 4096, &u) != 0 || !mtu_enum(u)) {
				fprintf(err, "%s: invalid MTU '%s' (256, 512, "
					"1024, 2048 or 4096)\n", o->prog,
					optarg);
				return PERF_OPTS_USAGE;
			}
			o->mtu = mtu_enum(u);
			break;
		case 'x': NUM(o->gid_index, 0, 64, "Source GID index"); break;
		case 'q':
			NUM(o->num_qps, 1, 1, "Number of QPs (droce-perf "
			    "runs one QP)");
			break;
		case 't': NUM(o->tx_depth, 1, 15000, "Tx depth"); break;
		case 'r': NUM(o->rx_depth, 1, 16384, "Rx depth"); break;
		case 'Q': NUM(o->cq_mod, 1, 1024, "CQ moderation"); break;
		case 'u': NUM(o->qp_timeout, 0, 31, "QP timeout"); break;
		case 'I':
			NUM(o->inline_size, 0, DROCE_MAX_INLINE_DATA,
			    "Inline size");
			break;
		case 'A':
			if (strcmp(optarg, "CMP_AND_SWAP") == 0)
				o->atomic = PERF_CMP_AND_SWAP;
			else if (strcmp(optarg, "FETCH_AND_ADD") == 0)
				o->atomic = PERF_FETCH_AND_ADD;
			else {
				fprintf(err, "%s: invalid atomic type '%s' "
					"(CMP_AND_SWAP or FETCH_AND_ADD)\n",
					o->prog, optarg);
				return PERF_OPTS_USAGE;
			}
			break;
		case 'F': o->ignore_cpufreq = 1; break;
		case 'R': o->rdma_cm = 1; break;
		case OPT_REPORT_GBITS: o->report_gbits = 1; break;
		case OPT_JSON: o->json = 1; break;
		case OPT_OUTPUT:
			if (strcmp(optarg, "bandwidth") == 0)
				o->output = PERF_OUT_BW;
			else if (strcmp(optarg, "message_rate") == 0)
				o->output = PERF_OUT_MR;
			else if (strcmp(optarg, "latency") == 0)
				o->output = PERF_OUT_LAT;
			else {
				fprintf(err, "%s: invalid --output '%s' "
					"(bandwidth, message_rate, latency)\n",
					o->prog, optarg);
				return PERF_OPTS_USAGE;
			}
			break;
		case 'h':
			perf_usage(o->prog, out);
			return PERF_OPTS_HELP;
		default:
			perf_usage(o->prog, out);
			return PERF_OPTS_USAGE;
		}
	}
	if (optind == argc - 1) {
		o->servername = argv[optind];
	} else if (optind < argc) {
		fprintf(err, "%s: unexpected argument '%s'\n", o->prog,
			argv[optind + 1]);
		return PERF_OPTS_USAGE;
	}
	if (o->verb == PERF_ATOMIC && size_set && o->size != 8) {
		fprintf(err, "%s: atomic tests use 8-byte messages\n", o->prog);
		return PERF_OPTS_USAGE;
	}
	if (o->verb == PERF_ATOMIC)
		o->all_sizes = 0;
	if (o->output == PERF_OUT_LAT && o->tst != PERF_LAT) {
		fprintf(err, " Output verbosity level for BW can be: "
			"bandwidth, message_rate\n");
		return PERF_OPTS_USAGE;
	}
	if ((o->output == PERF_OUT_BW || o->output == PERF_OUT_MR) &&
	    o->tst != PERF_BW) {
		fprintf(err, " Output verbosity level for LAT can be: "
			"latency\n");
		return PERF_OPTS_USAGE;
	}
	if (o->duration != 0 && o->tst == PERF_LAT) {
		fprintf(err, "%s: -D is implemented for the bw tests only\n",
			o->prog);
		return PERF_OPTS_USAGE;
	}
	if (o->duration != 0 && o->all_sizes) {
		fprintf(err, "%s: -D and -a together are not supported\n",
			o->prog);
		return PERF_OPTS_USAGE;
	}
	perf_opts_test_defaults(o);
	return PERF_OPTS_RUN;
}

static int
is_help(const char *a)
{
	return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0;
}

int
perf_wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			break;
	if (i == argc)
		return argc > 1 && is_help(argv[1]);
	for (i++; i < argc; i++)
		if (is_help(argv[i]))
			return 1;
	return 0;
}
