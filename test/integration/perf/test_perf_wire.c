/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_perf_wire - droce-perf's side channel against the real thing: the
 * TCP streams recorded between two perftest 4.5-0.17 tools (Debian 12, in
 * the Soft-RoCE guests; perftest-4.5-0.17/NAME.txt, one segment a line).
 * For every recorded test, each direction's stream is walked with
 * perf_sequence()'s message order; each message is parsed by droce-perf's
 * decoder (fields checked) and encoded again by its encoder, which must
 * give the recorded bytes (the version message differs only after its
 * NUL, where droce-perf puts its marker).  The stream must end exactly
 * where the sequence ends.
 *
 * Usage: test_perf_wire DIR   (the transcripts' directory)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perf.h"

#define MAX_STREAM 4096

static const char *dir = ".";

struct stream {
	uint8_t b[MAX_STREAM];
	size_t len, pos;
};

struct transcript {
	struct stream dir[2];		/* 0: client to server, 1: back */
};

static int
hexval(int ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' :
		ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

static void
load(const char *name, struct transcript *t)
{
	char path[512], line[2 * MAX_STREAM + 8];
	FILE *f;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/%s.txt", dir, name);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		struct stream *s;
		size_t i;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		assert_true(line[0] == 'C' || line[0] == 'S');
		assert_int_equal(line[1], ' ');
		s = &t->dir[line[0] == 'S'];
		for (i = 2; hexval(line[i]) >= 0; i += 2) {
			assert_true(hexval(line[i + 1]) >= 0);
			assert_true(s->len < MAX_STREAM);
			s->b[s->len++] = (uint8_t)(hexval(line[i]) << 4 |
						   hexval(line[i + 1]));
		}
	}
	fclose(f);
}

static const uint8_t *
take(struct stream *s, size_t n)
{
	const uint8_t *p = s->b + s->pos;

	assert_true(s->pos + n <= s->len);
	s->pos += n;
	return p;
}

static void
check_version(struct stream *s)
{
	char ours[PERF_VERSION_SIZE];
	const char *m = (const char *)take(s, PERF_VERSION_SIZE);
	double v = 0;
	int droce = 1;

	assert_int_equal(perf_version_parse(m, &v, &droce), 0);
	assert_true(v > 6.05 && v < 6.07);
	assert_false(droce);
	/* ours: the same string and NUL; our marker only after it */
	perf_version_format(ours);
	assert_memory_equal(ours, m, strlen(PERF_PERFTEST_VERSION) + 1);
	assert_int_equal(perf_version_parse(ours, &v, &droce), 0);
	assert_true(v > 6.05 && v < 6.07);
	assert_true(droce);
}

static void
check_be32(struct stream *s, uint32_t want)
{
	const uint8_t *m = take(s, 4);
	uint8_t ours[4];

	assert_int_equal(perf_be32_get(m), want);
	perf_be32_put(ours, want);
	assert_memory_equal(ours, m, 4);
}

static void
check_mtu(struct stream *s, enum droce_mtu want)
{
	const char *m = (const char *)take(s, PERF_MTU_MSG_SIZE);
	char ours[PERF_MTU_MSG_SIZE];
	enum droce_mtu mtu;

	assert_int_equal(perf_mtu_parse(m, &mtu), 0);
	assert_int_equal(mtu, want);
	perf_mtu_format(mtu, ours);
	assert_memory_equal(ours, m, sizeof(ours));
}

/* The key message: parsed, plausible, re-encoded to the same bytes. */
static void
check_key(struct stream *s, struct perf_dest *d, uint8_t ip_last,
	  uint32_t out_reads)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	const char *m = (const char *)take(s, PERF_KEY_MSG_SIZE);
	char ours[PERF_KEY_MSG_SIZE];

	assert_int_equal(perf_key_parse(m, d), 0);
	assert_int_equal(d->lid, 0);
	assert_int_equal(d->out_reads, out_reads);
	assert_true(d->qpn > 0 && d->qpn <= 0xffffff);
	assert_true(d->psn <= 0xffffff);
	assert_true(d->vaddr != 0);
	assert_memory_equal(d->gid.raw, v4mapped, 12);
	assert_int_equal(d->gid.raw[12], 198);
	assert_int_equal(d->gid.raw[13], 18);
	assert_int_equal(d->gid.raw[14], 0);
	assert_int_equal(d->gid.raw[15], ip_last);
	assert_int_equal(d->srqn, 0);
	assert_int_equal(perf_key_format(d, ours), PERF_KEY_MSG_SIZE);
	assert_memory_equal(ours, m, PERF_KEY_MSG_SIZE);
}

static void
check_handshake(struct stream *s, const struct perf_dest *first)
{
	const char *m = (const char *)take(s, PERF_KEY_MSG_SIZE);
	char ours[PERF_KEY_MSG_SIZE];

	/* every barrier repeats the first key message */
	assert_int_equal(perf_key_format(first, ours), PERF_KEY_MSG_SIZE);
	assert_memory_equal(ours, m, PERF_KEY_MSG_SIZE);
}

static void
check_report(struct stream *s, int client, uint64_t size, uint64_t iters)
{
	uint8_t raw[PERF_REPORT_FIELDS][8], ours[PERF_REPORT_FIELDS][8];
	struct perf_report r;
	int i;

	for (i = 0; i < PERF_REPORT_FIELDS; i++)
		memcpy(raw[i], take(s, 8), 8);
	perf_report_decode(raw, &r);
	perf_report_encode(&r, ours);
	assert_memory_equal(ours, raw, sizeof(raw));
	if (!client)
		return;		/* perftest's server sends stack garbage */
	assert_int_equal(r.size, size);
	assert_int_equal(r.iters, iters);
	assert_true(r.bw_peak >= 0 && r.bw_peak < 1e6);
	assert_true(r.bw_avg >= 0 && r.bw_avg <= r.bw_peak + 1e-9);
	assert_true(r.msg_rate > 0 && r.msg_rate < 1e3);
}

static void
check_done(struct stream *s)
{
	assert_memory_equal(take(s, PERF_DONE_SIZE), "done", PERF_DONE_SIZE);
}

struct recorded {
	const char *file;
	enum perf_verb verb;
	enum perf_tst tst;
	enum droce_mtu mtu;
	uint64_t size;
};

static void
walk(const struct recorded *r)
{
	struct transcript t;
	struct perf_seq seq;
	int side, i;

	load(r->file, &t);
	perf_sequence(r->verb, r->tst, 0, &seq);
	for (side = 0; side < 2; side++) {
		struct stream *s = &t.dir[side];
		uint8_t ip_last = side == 0 ? 12 : 11;	/* client .12 */
		uint32_t out_reads = r->verb == PERF_READ ||
			r->verb == PERF_ATOMIC ? 128 : 1;
		struct perf_dest d;

		check_version(s);
		check_be32(s, PERF_CYCLE_BUFFER);
		check_be32(s, PERF_CACHE_LINE);
		check_mtu(s, r->mtu);
		check_key(s, &d, ip_last, out_reads);
		for (i = 0; i < seq.pre_handshakes +
		     seq.handshakes_before_report; i++)
			check_handshake(s, &d);
		if (seq.reports)
			check_report(s, side == 0, r->size, 5);
		for (i = 0; i < seq.handshakes_after; i++)
			check_handshake(s, &d);
		if (seq.done)
			check_done(s);
		assert_int_equal(s->pos, s->len);
	}
}

#define RECORDED(name, file, verb, tst, mtu, size)			\
static void								\
name(void **state)							\
{									\
	static const struct recorded r = { file, verb, tst, mtu, size };\
	(void)state;							\
	walk(&r);							\
}

RECORDED(test_write_bw, "write_bw", PERF_WRITE, PERF_BW, DROCE_MTU_1024, 8192)
RECORDED(test_write_lat, "write_lat", PERF_WRITE, PERF_LAT, DROCE_MTU_1024, 8192)
RECORDED(test_read_bw, "read_bw", PERF_READ, PERF_BW, DROCE_MTU_1024, 8192)
RECORDED(test_read_lat, "read_lat", PERF_READ, PERF_LAT, DROCE_MTU_1024, 8192)
RECORDED(test_send_bw, "send_bw", PERF_SEND, PERF_BW, DROCE_MTU_1024, 8192)
RECORDED(test_send_lat, "send_lat", PERF_SEND, PERF_LAT, DROCE_MTU_1024, 8192)
RECORDED(test_atomic_bw_cas, "atomic_bw_cas", PERF_ATOMIC, PERF_BW, DROCE_MTU_4096, 8)
RECORDED(test_atomic_bw_faa, "atomic_bw_faa", PERF_ATOMIC, PERF_BW, DROCE_MTU_4096, 8)
RECORDED(test_atomic_lat, "atomic_lat", PERF_ATOMIC, PERF_LAT, DROCE_MTU_4096, 8)

/* One recorded message with every field known (write_bw's client keys). */
static void
test_write_bw_client_key(void **state)
{
	struct transcript t;
	struct perf_dest d;
	const char *m;

	(void)state;
	load("write_bw", &t);
	take(&t.dir[0], PERF_VERSION_SIZE + 4 + 4 + PERF_MTU_MSG_SIZE);
	m = (const char *)take(&t.dir[0], PERF_KEY_MSG_SIZE);
	assert_int_equal(perf_key_parse(m, &d), 0);
	assert_int_equal(d.out_reads, 1);
	assert_int_equal(d.qpn, 0x11);
	assert_int_equal(d.psn, 0xff6a54);
	assert_int_equal(d.rkey, 0x22c);
	assert_int_equal(d.vaddr, 0x55cf7df28000ull);
	assert_int_equal(d.gid.raw[15], 12);
}

/* Messages that are not perftest's are refused. */
static void
test_malformed(void **state)
{
	char v[PERF_VERSION_SIZE] = "x.yz", m[PERF_MTU_MSG_SIZE] = "7";
	char full[PERF_VERSION_SIZE];
	enum droce_mtu mtu;
	double ver;
	int droce;

	(void)state;
	assert_int_equal(perf_version_parse(v, &ver, &droce), -EINVAL);
	memset(full, '6', sizeof(full));	/* no NUL */
	assert_int_equal(perf_version_parse(full, &ver, &droce), -EINVAL);
	assert_int_equal(perf_mtu_parse(m, &mtu), -EINVAL);
	m[0] = '3';
	m[1] = 'x';
	assert_int_equal(perf_mtu_parse(m, &mtu), -EINVAL);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_bw),
		cmocka_unit_test(test_write_lat),
		cmocka_unit_test(test_read_bw),
		cmocka_unit_test(test_read_lat),
		cmocka_unit_test(test_send_bw),
		cmocka_unit_test(test_send_lat),
		cmocka_unit_test(test_atomic_bw_cas),
		cmocka_unit_test(test_atomic_bw_faa),
		cmocka_unit_test(test_atomic_lat),
		cmocka_unit_test(test_write_bw_client_key),
		cmocka_unit_test(test_malformed),
	};

	if (argc > 1)
		dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
