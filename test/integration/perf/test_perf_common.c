/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_perf_common - droce-perf's test names, options, side-channel
 * messages, statistics and result rows, without a device (suite 'unit').
 * The expected header strings are perftest's (src/perftest_parameters.h,
 * RESULT_FMT, RESULT_FMT_G, RESULT_FMT_LAT), typed from the source.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include <time.h>

#include "perf.h"
#include "perf_peerdata.h"

static FILE *devnull;

static int
parse(struct perf_opts *o, const char *test_from_name, ...)
{
	char *argv[32];
	int argc = 0;
	const char *a;
	va_list ap;

	perf_opts_default(o, "droce-perf");
	o->test = test_from_name;
	argv[argc++] = (char *)"droce-perf";
	va_start(ap, test_from_name);
	while ((a = va_arg(ap, const char *)) != NULL)
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	return perf_parse_opts(o, argc, argv, devnull, devnull);
}

static void
test_names(void **state)
{
	enum perf_verb v;
	enum perf_tst t;
	const char *c;

	(void)state;
	assert_int_equal(perf_test_lookup("write_bw", &v, &t, &c), 0);
	assert_int_equal(v, PERF_WRITE);
	assert_int_equal(t, PERF_BW);
	assert_int_equal(perf_test_lookup("ib_read_lat", &v, &t, &c), 0);
	assert_int_equal(v, PERF_READ);
	assert_int_equal(t, PERF_LAT);
	assert_string_equal(c, "read_lat");
	assert_int_equal(perf_test_lookup("droce_atomic_bw", &v, &t, &c), 0);
	assert_int_equal(v, PERF_ATOMIC);
	assert_int_equal(perf_test_lookup("write", &v, &t, &c), -1);
	assert_string_equal(perf_test_from_argv0("/usr/bin/droce_send_lat"),
			    "send_lat");
	assert_null(perf_test_from_argv0("/usr/bin/droce-perf"));
	assert_null(perf_test_from_argv0("droce_bogus"));
}

static void
test_defaults(void **state)
{
	struct perf_opts o;

	(void)state;
	assert_int_equal(parse(&o, NULL, "write_bw", NULL), PERF_OPTS_RUN);
	assert_int_equal(o.size, 65536);
	assert_int_equal(o.iters, 5000);
	assert_int_equal(o.tx_depth, 128);
	assert_int_equal(o.cq_mod, 100);
	assert_int_equal(o.port, 18515);
	assert_null(o.servername);
	assert_int_equal(parse(&o, NULL, "send_lat", "host", NULL),
			 PERF_OPTS_RUN);
	assert_int_equal(o.size, 2);
	assert_int_equal(o.iters, 1000);
	assert_int_equal(o.tx_depth, 1);
	assert_int_equal(o.cq_mod, 1);
	assert_string_equal(o.servername, "host");
	assert_int_equal(parse(&o, "atomic_bw", NULL), PERF_OPTS_RUN);
	assert_int_equal(o.size, 8);
	assert_int_equal(o.atomic, PERF_FETCH_AND_ADD);
}

static void
test_options(void **state)
{
	struct perf_opts o;

	(void)state;
	assert_int_equal(parse(&o, NULL, "read_bw", "-s", "4096", "-n", "50",
			       "-a", "-m", "512", "-x", "1", "-p", "20000",
			       "-t", "16", "-Q", "4", "-I", "64", "-F",
			       "--report_gbits", "--json", "10.0.0.1", NULL),
			 PERF_OPTS_RUN);
	assert_int_equal(o.size, 4096);
	assert_int_equal(o.iters, 50);
	assert_true(o.all_sizes);
	assert_int_equal(o.mtu, DROCE_MTU_512);
	assert_int_equal(o.gid_index, 1);
	assert_int_equal(o.port, 20000);
	assert_int_equal(o.tx_depth, 16);
	assert_int_equal(o.cq_mod, 4);
	assert_int_equal(o.inline_size, 64);
	assert_true(o.report_gbits && o.json && o.ignore_cpufreq);
	assert_string_equal(o.servername, "10.0.0.1");
	/* the tx depth never exceeds the iterations, nor CQ moderation it */
	assert_int_equal(parse(&o, NULL, "write_bw", "-n", "10", NULL),
			 PERF_OPTS_RUN);
	assert_int_equal(o.tx_depth, 10);
	assert_int_equal(o.cq_mod, 10);
	assert_int_equal(parse(&o, NULL, "atomic_lat", "-A", "CMP_AND_SWAP",
			       NULL), PERF_OPTS_RUN);
	assert_int_equal(o.atomic, PERF_CMP_AND_SWAP);
	assert_int_equal(parse(&o, NULL, "write_bw", "--output=bandwidth",
			       NULL), PERF_OPTS_RUN);
	assert_int_equal(o.output, PERF_OUT_BW);
	assert_int_equal(parse(&o, NULL, "send_bw", "-D", "2", NULL),
			 PERF_OPTS_RUN);
	assert_int_equal(o.duration, 2);
	assert_false(o.rdma_cm);
	assert_int_equal(parse(&o, NULL, "read_lat", "-R", NULL), PERF_OPTS_RUN);
	assert_true(o.rdma_cm);
	assert_int_equal(parse(&o, NULL, "write_bw", "--rdma_cm", NULL),
			 PERF_OPTS_RUN);
	assert_true(o.rdma_cm);
}

static void
test_bad_options(void **state)
{
	struct perf_opts o;

	(void)state;
	assert_int_equal(parse(&o, NULL, NULL), PERF_OPTS_USAGE);
	assert_int_equal(parse(&o, NULL, "bogus", NULL), PERF_OPTS_USAGE);
	assert_int_equal(parse(&o, NULL, "-s", "4", NULL), PERF_OPTS_USAGE);
	assert_int_equal(parse(&o, NULL, "write_bw", "-q", "2", NULL),
			 PERF_OPTS_USAGE);
	assert_int_equal(parse(&o, NULL, "write_bw", "-s", "0", NULL),
			 PERF_OPTS_USAGE);
	assert_int_equal(parse(&o, NULL, "write_bw", "-s", "8388609", NULL),
			 PERF_OPTS_USAGE);
	assert_int_equal(parse(&o, NULL, "write_bw", "-n", "4", NULL),
			 PERF_OPTS_USAGE);
	assert_int_equal(parse(&o, NULL, "write_bw", "-m", "1500", NULL),
			 PERF_OPTS_USAGE);
	assert_int_equal(parse(&o, NULL, "write_bw", "-s", "12x", NULL),
			 PERF_OPTS_USAGE);
	assert_int_equal(parse(&o, NULL, "atomic_bw", "-s", "16", NULL),
			 PERF_OPTS_USAGE);
	assert_int_equal(parse(&o, NULL, "atomic_bw", "-A", "SWAP", NULL),
			 PERF_OPTS_USAGE);
	assert_int_equal(parse(&o, NULL, "write_bw", "--output=latency",
			       NULL), PERF_OPTS_USAGE);
	assert_int_equal(parse(&o, NULL, "write_lat", "--output=bandwidth",
			       NULL), PERF_OPTS_USAGE);
	assert_int_equal(parse(&o, NULL, "write_lat", "-D", "1", NULL),
			 PERF_OPTS_USAGE);
	assert_int_equal(parse(&o, NULL, "write_bw", "a", "b", NULL),
			 PERF_OPTS_USAGE);
	assert_int_equal(parse(&o, NULL, "write_bw", "-h", NULL),
			 PERF_OPTS_HELP);
}

static void
test_wants_help(void **state)
{
	char *a1[] = { "p", "--help", NULL };
	char *a2[] = { "p", "--no-pci", "--", "write_bw", "-h", NULL };
	char *a3[] = { "p", "--no-pci", "--", "write_bw", NULL };

	(void)state;
	assert_true(perf_wants_help(2, a1));
	assert_true(perf_wants_help(5, a2));
	assert_false(perf_wants_help(4, a3));
}

static void
test_dest_roundtrip(void **state)
{
	struct perf_dest d, r;
	struct perf_params p, q;
	char msg[PERF_KEY_MSG_SIZE], pmsg[PERF_PARAMS_MSG_SIZE];
	int i;

	(void)state;
	memset(&d, 0, sizeof(d));
	for (i = 0; i < 16; i++)
		d.gid.raw[i] = (uint8_t)(i * 17);
	d.out_reads = 16;
	d.qpn = 0xabcdef;
	d.psn = 0x123456;
	d.rkey = 0xdeadbeef;
	d.vaddr = 0x7f0012345000ull;
	assert_int_equal(perf_key_format(&d, msg), PERF_KEY_MSG_SIZE);
	assert_int_equal(perf_key_parse(msg, &r), 0);
	assert_memory_equal(&r, &d, sizeof(d));
	/* malformed: a bad digit, a missing ':', no final NUL */
	msg[40] = 'z';
	assert_int_equal(perf_key_parse(msg, &r), -EINVAL);
	assert_int_equal(perf_key_format(&d, msg), PERF_KEY_MSG_SIZE);
	msg[4] = '-';
	assert_int_equal(perf_key_parse(msg, &r), -EINVAL);
	memset(msg, 'a', sizeof(msg));
	assert_int_equal(perf_key_parse(msg, &r), -EINVAL);

	memset(&p, 0, sizeof(p));
	snprintf(p.test, sizeof(p.test), "atomic_lat");
	p.size = 8;
	p.iters = 100000000;
	p.duration = 3;
	p.all_sizes = 1;
	p.atomic = 1;
	p.seed = 0xfedcba98;
	assert_true(perf_params_format(&p, pmsg) > 0);
	assert_string_equal(pmsg, "DPERF3 atomic_lat 8 100000000 3 1 1 fedcba98");
	assert_int_equal(perf_params_parse(pmsg, &q), 0);
	assert_memory_equal(&p, &q, sizeof(p));
	memcpy(pmsg, "XPERF3", 6);
	assert_int_equal(perf_params_parse(pmsg, &q), -EINVAL);
	memset(pmsg, 'a', sizeof(pmsg));
	assert_int_equal(perf_params_parse(pmsg, &q), -EINVAL);
}

/* -R's key message: perftest's struct pingpong_dest, big endian */
static void
test_cm_key(void **state)
{
	static const uint8_t want[PERF_CM_MSG_SIZE] = {
		0, 0, 0, 0, 0, 0, 0, 16, 0, 0xab, 0xcd, 0xef, 0, 0x12, 0x34,
		0x56, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0,
		0, 0, 0x7f, 0, 0x12, 0x34, 0x50, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 3,
		0, 0, 0, 7, 0, 0, 0, 0,
	};
	struct perf_dest d, r;
	uint8_t msg[PERF_CM_MSG_SIZE];
	struct perf_seq seq;

	(void)state;
	memset(&d, 0, sizeof(d));
	memcpy(d.gid.raw, want + 32, 16);
	d.out_reads = 16;
	d.qpn = 0xabcdef;
	d.psn = 0x123456;
	d.rkey = 0xdeadbeef;
	d.vaddr = 0x7f0012345000ull;
	d.srqn = 7;
	perf_cm_key_format(&d, msg);
	assert_memory_equal(msg, want, sizeof(want));
	assert_int_equal(perf_cm_key_parse(msg, &r), 0);
	assert_memory_equal(&r, &d, sizeof(d));
	/* a QPN wider than 24 bits did not come from a QP */
	msg[8] = 1;
	assert_int_equal(perf_cm_key_parse(msg, &r), -EINVAL);
	/* -R: zeroed barriers before and after the test QP's connection;
	 * it closes with the CM, not with "done" */
	perf_sequence(PERF_WRITE, PERF_BW, 1, &seq);
	assert_int_equal(seq.cm_sync_before, 1);
	assert_int_equal(seq.cm_sync_after, 1);
	assert_int_equal(seq.pre_handshakes, 2);
	assert_int_equal(seq.reports, 1);
	assert_int_equal(seq.handshakes_after, 1);
	assert_int_equal(seq.done, 0);
	perf_sequence(PERF_WRITE, PERF_BW, 0, &seq);
	assert_int_equal(seq.cm_sync_before, 0);
	assert_int_equal(seq.cm_sync_after, 0);
	assert_int_equal(seq.done, 1);
	perf_sequence(PERF_READ, PERF_LAT, 1, &seq);
	assert_int_equal(seq.pre_handshakes, 3);
	assert_int_equal(seq.handshakes_after, 1);
	assert_int_equal(seq.done, 0);
}

static void
test_messages(void **state)
{
	struct perf_chan ch[2];
	int sv[2];
	uint64_t v = 0;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	perf_chan_tcp(&ch[0], sv[0]);
	perf_chan_tcp(&ch[1], sv[1]);
	assert_false(perf_msg_ready(&ch[1]));
	assert_int_equal(perf_send_msg(&ch[0], "END ", 0x0102030405060708ull),
			 0);
	assert_true(perf_msg_ready(&ch[1]));
	assert_int_equal(perf_recv_msg(&ch[1], "END ", &v), 0);
	assert_int_equal(v, 0x0102030405060708ull);
	assert_int_equal(perf_send_msg(&ch[1], "SYNC", 0), 0);
	assert_int_equal(perf_barrier(&ch[0]), 0);
	assert_int_equal(perf_recv_msg(&ch[1], "SYNC", NULL), 0);
	assert_int_equal(perf_send_msg(&ch[0], "VERI", 1), 0);
	assert_int_equal(perf_recv_msg(&ch[1], "END ", &v), -EPROTO);
	close(sv[0]);
	assert_int_equal(perf_recv_msg(&ch[1], "END ", &v), -ECONNRESET);
	close(sv[1]);
}

static void
test_lat_stats(void **state)
{
	uint64_t ns[1000];
	struct perf_lat_result r;
	int i;

	(void)state;
	/* 1..1000 us round trips, shuffled; half round trips reported */
	for (i = 0; i < 1000; i++)
		ns[i] = (uint64_t)((i * 7919) % 1000 + 1) * 1000;
	perf_lat_stats(ns, 1000, 2, &r);
	assert_true(r.t_min == 0.5);
	assert_true(r.t_max == 500.0);
	assert_true(r.t_typical == 250.5);	/* sample 500 (0-based) */
	assert_true(r.t_avg > 250.24 && r.t_avg < 250.26);
	assert_true(r.p99 == 495.5);
	assert_true(r.p999 == 500.0);
	assert_true(r.t_stdev > 144.3 && r.t_stdev < 144.4);
	ns[0] = 3000;
	perf_lat_stats(ns, 1, 1, &r);
	assert_true(r.t_min == 3.0 && r.t_max == 3.0 && r.p999 == 3.0);
}

static char *
capture(void (*fn)(FILE *, void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, arg);
	fclose(f);
	return buf;
}

static void
bw_table(FILE *f, void *arg)
{
	struct perf_opts *o = arg;
	struct perf_bw_result r = {
		.size = 65536, .iters = 5000,
		.bw_peak = 1024.0 * 1048576, .bw_avg = 512.0 * 1048576,
		.msg_rate = 8192,
	};

	perf_print_bw_header(o, f);
	perf_print_bw_line(o, &r, f);
	perf_print_footer(o, f);
}

static void
lat_table(FILE *f, void *arg)
{
	struct perf_opts *o = arg;
	struct perf_lat_result r = {
		.size = 2, .iters = 1000, .t_min = 1.5, .t_max = 20.25,
		.t_typical = 2.0, .t_avg = 2.5, .t_stdev = 0.75, .p99 = 9.0,
		.p999 = 20.25,
	};

	perf_print_lat_header(o, f);
	perf_print_lat_line(o, &r, f);
	perf_print_footer(o, f);
}

#define DASHES "---------------------------------------------------------------------------------------\n"

static void
test_tables(void **state)
{
	struct perf_opts o;
	char *s;

	(void)state;
	perf_opts_default(&o, "droce-perf");
	o.test = "write_bw";
	s = capture(bw_table, &o);
	assert_string_equal(s, DASHES
		" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
		" 65536      5000             1024.00            512.00 \t\t   0.008192\n"
		DASHES);
	free(s);
	o.report_gbits = 1;
	s = capture(bw_table, &o);
	assert_non_null(strstr(s, " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"));
	assert_non_null(strstr(s, " 65536      5000             8.59               4.29   \t\t   0.008192\n"));
	free(s);
	o.report_gbits = 0;
	o.output = PERF_OUT_BW;
	s = capture(bw_table, &o);
	assert_string_equal(s, "512.000000\n");
	free(s);
	o.output = PERF_OUT_FULL;
	o.json = 1;
	s = capture(bw_table, &o);
	assert_non_null(strstr(s, "{\"test\":\"write_bw\",\"bytes\":65536,\"iterations\":5000,"));
	free(s);
	o.json = 0;
	o.test = "write_lat";
	s = capture(lat_table, &o);
	assert_string_equal(s, DASHES
		" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
		" 2       1000          1.50           20.25        2.00     \t       2.50        \t0.75   \t\t9.00    \t\t20.25  \n"
		DASHES);
	free(s);
	o.output = PERF_OUT_LAT;
	s = capture(lat_table, &o);
	assert_string_equal(s, "2.500000\n");
	free(s);
}

/* A buffer as perftest 4.5-0.17's create_single_mr fills it, t_ago
 * seconds ago: srand(time(NULL)), then (char)rand() per byte. */
static void
perftest_fill(uint8_t *buf, size_t n, long t_ago)
{
	size_t i;

	srand((unsigned int)(time(NULL) - t_ago));
	for (i = 0; i < n; i++)
		buf[i] = (uint8_t)(char)rand();
}

static void
test_perftest_bytes(void **state)
{
	static uint8_t peer[2 * 8192], got[8192];
	char found[256], want[128];

	(void)state;
	perftest_fill(peer, sizeof(peer), 5);
	/* a READ of the peer's rx half: offset 8192 of its buffer */
	memcpy(got, peer + 8192, sizeof(got));
	assert_int_equal(perf_perftest_bytes(got, sizeof(got), sizeof(peer),
					     "t", found, sizeof(found)), 0);
	snprintf(want, sizeof(want), "all 8192 bytes equal perftest's buffer "
		 "(rand() after srand(%ld), ", (long)time(NULL) - 5);
	/* (the "s before" figure may tick over: compare up to it) */
	assert_memory_equal(found, want, strlen(want));
	assert_non_null(strstr(found, "; offset 8192 of its 16384 bytes)"));
	/* a WRITE from its tx half at a cache-line offset */
	assert_int_equal(perf_perftest_bytes(peer + 640, 64, sizeof(peer), "t",
					     found, sizeof(found)), 0);
	assert_non_null(strstr(found, "offset 640 "));
	/* 7 bytes could match by chance: not checked, and said so */
	assert_int_equal(perf_perftest_bytes(peer, 7, sizeof(peer), "t",
					     found, sizeof(found)), 2);
	assert_string_equal(found, "7 bytes are too few to tell perftest's "
			    "buffer from chance");
	/* one wrong byte anywhere fails */
	got[4000] ^= 0x01;
	assert_int_equal(perf_perftest_bytes(got, sizeof(got), sizeof(peer),
					     "t", found, sizeof(found)), 1);
	got[4000] ^= 0x01;
	got[8191] ^= 0x80;
	assert_int_equal(perf_perftest_bytes(got, sizeof(got), sizeof(peer),
					     "t", found, sizeof(found)), 1);
	/* bytes nobody wrote, a seed older than the window, an unaligned
	 * window, a window that does not fit */
	memset(got, 0, sizeof(got));
	assert_int_equal(perf_perftest_bytes(got, sizeof(got), sizeof(peer),
					     "t", found, sizeof(found)), 1);
	perftest_fill(peer, sizeof(peer), 700);
	assert_int_equal(perf_perftest_bytes(peer, 64, sizeof(peer), "t",
					     found, sizeof(found)), 1);
	perftest_fill(peer, sizeof(peer), 0);
	assert_int_equal(perf_perftest_bytes(peer + 8, 64, sizeof(peer), "t",
					     found, sizeof(found)), 1);
	assert_int_equal(perf_perftest_bytes(peer, 64, 32, "t", found,
					     sizeof(found)), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_wants_help),
		cmocka_unit_test(test_dest_roundtrip),
		cmocka_unit_test(test_cm_key),
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_lat_stats),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_perftest_bytes),
	};
	int rc;

	devnull = fopen("/dev/null", "w");
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	fclose(devnull);
	return rc;
}
