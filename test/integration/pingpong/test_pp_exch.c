/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_pp_exch - droce-pingpong's address exchange, options and -c
 * pattern, without a device (suite 'unit').
 *
 * No RDMA device here, so the expected bytes are derived by hand from
 * rdma-core libibverbs/examples (rdma-core 44, as installed):
 *  - pingpong.c gid_to_wire_gid():
 *        for (i = 0; i < 4; ++i)
 *            sprintf(&wgid[i * 8], "%08x",
 *                    htonl(*(uint32_t *)(gid->raw + i * 4)));
 *    The word is loaded in host order and htonl() undoes that, so each
 *    group of 8 digits is raw[4i..4i+3] in memory order, on any host.
 *  - rc_pingpong.c pp_client_exch_dest()/pp_server_exch_dest():
 *        char msg[sizeof "0000:000000:000000:00000000000000000000000000000000"];
 *        sprintf(msg, "%04x:%06x:%06x:%s", lid, qpn, psn, gid);
 *        write(sockfd, msg, sizeof msg)            -> 52 bytes with the NUL
 *    client: write msg, read sizeof msg, write(sockfd, "done", sizeof "done")
 *    server: read sizeof msg, pp_connect_ctx(), write msg, then
 *            read(connfd, msg, sizeof msg) != sizeof "done" is an error.
 * The scripted peers below play the rdma-core side with those bytes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "pingpong.h"

/* ::ffff:198.18.5.1, the IPv4-mapped GID droce reports for 198.18.5.1. */
static const uint8_t gid_v4[16] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 5, 1,
};
/* Expected gid_to_wire_gid() output for gid_v4: the bytes in order. */
#define WIRE_V4 "00000000000000000000ffffc6120501"
/* Every byte different, so a swapped word or byte shows. */
static const uint8_t gid_seq[16] = {
	0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
	0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
};
#define WIRE_SEQ "00112233445566778899aabbccddeeff"

static void
mkdest(struct pp_dest *d, int lid, int qpn, int psn, const uint8_t *gid)
{
	memset(d, 0, sizeof(*d));
	d->lid = lid;
	d->qpn = qpn;
	d->psn = psn;
	memcpy(d->gid.raw, gid, 16);
}

/* ---- GID <-> wire ---------------------------------------------------------- */

static void
test_sizes(void **state)
{
	(void)state;
	/* sizeof "0000:000000:000000:" + 32 digits + NUL */
	assert_int_equal(PP_MSG_SIZE, 52);
	assert_int_equal(PP_DONE_SIZE, 5);
	assert_int_equal(PP_DEFAULT_TCP_PORT, 18515);
}

static void
test_gid_to_wire(void **state)
{
	union droce_gid g;
	char w[PP_WIRE_GID_LEN + 1];

	(void)state;
	memcpy(g.raw, gid_v4, 16);
	pp_gid_to_wire(&g, w);
	assert_string_equal(w, WIRE_V4);
	memcpy(g.raw, gid_seq, 16);
	pp_gid_to_wire(&g, w);
	assert_string_equal(w, WIRE_SEQ);
	/* inet_pton gives network order bytes: fe80::1 */
	assert_int_equal(inet_pton(AF_INET6, "fe80::1234:5678", g.raw), 1);
	pp_gid_to_wire(&g, w);
	assert_string_equal(w, "fe800000000000000000000012345678");
}

static void
test_wire_to_gid(void **state)
{
	union droce_gid g;

	(void)state;
	assert_int_equal(pp_wire_to_gid(WIRE_V4, &g), 0);
	assert_memory_equal(g.raw, gid_v4, 16);
	assert_int_equal(pp_wire_to_gid(WIRE_SEQ, &g), 0);
	assert_memory_equal(g.raw, gid_seq, 16);
	/* sscanf("%x") accepts upper case: so do we */
	assert_int_equal(pp_wire_to_gid("00112233445566778899AABBCCDDEEFF",
					&g), 0);
	assert_memory_equal(g.raw, gid_seq, 16);
}

static void
test_wire_to_gid_bad_flow(void **state)
{
	union droce_gid g;

	(void)state;
	assert_int_equal(pp_wire_to_gid("00112233445566778899aabbccddeef",
					&g), -EINVAL);	/* 31 digits */
	assert_int_equal(pp_wire_to_gid("00112233445566778899aabbccddeefg",
					&g), -EINVAL);
	assert_int_equal(pp_wire_to_gid("0011223 445566778899aabbccddeeff",
					&g), -EINVAL);
	assert_int_equal(pp_wire_to_gid(NULL, &g), -EINVAL);
}

/* ---- message ----------------------------------------------------------------- */

static void
test_msg_format(void **state)
{
	struct pp_dest d;
	char msg[PP_MSG_SIZE];
	/* sprintf("%04x:%06x:%06x:%s", 0, 0x11, 0xabcdef, WIRE_V4) + NUL */
	static const char expect[PP_MSG_SIZE] =
		"0000:000011:abcdef:" WIRE_V4;

	(void)state;
	mkdest(&d, 0, 0x11, 0xabcdef, gid_v4);
	memset(msg, 'x', sizeof(msg));
	assert_int_equal(pp_msg_format(&d, msg), 0);
	assert_memory_equal(msg, expect, PP_MSG_SIZE);
	assert_int_equal(msg[51], '\0');

	/* widths are minimums: full-width values fill them exactly */
	mkdest(&d, 0xffff, 0xffffff, 0x000001, gid_seq);
	assert_int_equal(pp_msg_format(&d, msg), 0);
	assert_memory_equal(msg, "ffff:ffffff:000001:" WIRE_SEQ, PP_MSG_SIZE);
}

static void
test_msg_format_bad_flow(void **state)
{
	struct pp_dest d;
	char msg[PP_MSG_SIZE];

	(void)state;
	mkdest(&d, 0x10000, 1, 1, gid_v4);
	assert_int_equal(pp_msg_format(&d, msg), -EINVAL);
	mkdest(&d, 0, 0x1000000, 1, gid_v4);
	assert_int_equal(pp_msg_format(&d, msg), -EINVAL);
	mkdest(&d, 0, 1, 0x1000000, gid_v4);
	assert_int_equal(pp_msg_format(&d, msg), -EINVAL);
	mkdest(&d, -1, 1, 1, gid_v4);
	assert_int_equal(pp_msg_format(&d, msg), -EINVAL);
}

static void
test_msg_parse(void **state)
{
	static const char m[PP_MSG_SIZE] = "0000:000011:abcdef:" WIRE_V4;
	struct pp_dest d;

	(void)state;
	assert_int_equal(pp_msg_parse(m, &d), 0);
	assert_int_equal(d.lid, 0);
	assert_int_equal(d.qpn, 0x11);
	assert_int_equal(d.psn, 0xabcdef);
	assert_memory_equal(d.gid.raw, gid_v4, 16);
	assert_int_equal(pp_msg_parse("BEEF:ABCDEF:123456:" WIRE_SEQ, &d), 0);
	assert_int_equal(d.lid, 0xbeef);
	assert_int_equal(d.qpn, 0xabcdef);
	assert_int_equal(d.psn, 0x123456);
}

static void
test_msg_parse_bad_flow(void **state)
{
	char m[PP_MSG_SIZE];
	struct pp_dest d;
	size_t i;
	static const size_t colons[] = { 4, 11, 18 };

	(void)state;
	memcpy(m, "0000:000011:abcdef:" WIRE_V4, PP_MSG_SIZE);
	d.qpn = 42;
	/* every single-byte corruption of a field or separator is refused */
	for (i = 0; i < PP_MSG_SIZE; i++) {
		char save = m[i];

		m[i] = 'z';
		assert_int_equal(pp_msg_parse(m, &d), -EINVAL);
		m[i] = save;
	}
	for (i = 0; i < 3; i++) {
		m[colons[i]] = '0';
		assert_int_equal(pp_msg_parse(m, &d), -EINVAL);
		m[colons[i]] = ':';
	}
	m[PP_MSG_SIZE - 1] = '0';		/* no NUL */
	assert_int_equal(pp_msg_parse(m, &d), -EINVAL);
	assert_int_equal(d.qpn, 42);		/* untouched on error */
}

static void
test_msg_round_trip(void **state)
{
	struct pp_dest a, b;
	char m[PP_MSG_SIZE];
	int i;

	(void)state;
	srand(7);
	for (i = 0; i < 1000; i++) {
		uint8_t g[16];
		int k;

		for (k = 0; k < 16; k++)
			g[k] = (uint8_t)rand();
		mkdest(&a, rand() & 0xffff, rand() & 0xffffff,
		       rand() & 0xffffff, g);
		assert_int_equal(pp_msg_format(&a, m), 0);
		assert_int_equal(pp_msg_parse(m, &b), 0);
		assert_int_equal(a.lid, b.lid);
		assert_int_equal(a.qpn, b.qpn);
		assert_int_equal(a.psn, b.psn);
		assert_memory_equal(a.gid.raw, b.gid.raw, 16);
	}
}

/* ---- conversation over a socket pair with a scripted rdma-core peer -------- */

static ssize_t
read_n(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);

		if (r <= 0)
			return r < 0 ? r : (ssize_t)got;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* What ibv_rc_pingpong's server does, byte for byte. */
struct fake_server {
	int fd;
	char got[PP_MSG_SIZE];	/* client's address */
	char got_done[16];
	ssize_t done_len;
	const char *reply;	/* 52 bytes */
	size_t reply_len;
	int send_done_check;
};

static void *
fake_server_main(void *arg)
{
	struct fake_server *s = arg;

	if (read_n(s->fd, s->got, PP_MSG_SIZE) != PP_MSG_SIZE)
		return NULL;
	if (write(s->fd, s->reply, s->reply_len) != (ssize_t)s->reply_len)
		return NULL;
	if (s->reply_len < PP_MSG_SIZE)		/* hang up mid-address */
		shutdown(s->fd, SHUT_WR);
	/* rc_pingpong: read(connfd, msg, sizeof msg) == sizeof "done" */
	s->done_len = read_n(s->fd, s->got_done, PP_DONE_SIZE);
	return NULL;
}

static void
test_client_conversation(void **state)
{
	static const char server_msg[PP_MSG_SIZE] =
		"0000:000022:123456:" WIRE_SEQ;
	struct fake_server s = { .reply = server_msg,
				 .reply_len = PP_MSG_SIZE };
	struct pp_dest my, rem;
	pthread_t th;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	s.fd = sv[1];
	assert_int_equal(pthread_create(&th, NULL, fake_server_main, &s), 0);
	mkdest(&my, 0, 0x11, 0xabcdef, gid_v4);
	assert_int_equal(pp_client_exch_fd(sv[0], &my, &rem, 1), 0);
	pthread_join(th, NULL);
	/* the client's 52 bytes, then "done\0" */
	assert_memory_equal(s.got, "0000:000011:abcdef:" WIRE_V4, PP_MSG_SIZE);
	assert_int_equal(s.done_len, PP_DONE_SIZE);
	assert_memory_equal(s.got_done, "done", PP_DONE_SIZE);
	assert_int_equal(rem.qpn, 0x22);
	assert_int_equal(rem.psn, 0x123456);
	assert_memory_equal(rem.gid.raw, gid_seq, 16);
	close(sv[0]);
	close(sv[1]);
}

static void
test_client_conversation_bad_flow(void **state)
{
	/* the server hangs up after 20 bytes of its address */
	static const char server_msg[PP_MSG_SIZE] =
		"0000:000022:123456:" WIRE_SEQ;
	struct fake_server s = { .reply = server_msg, .reply_len = 20 };
	struct pp_dest my, rem;
	pthread_t th;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	s.fd = sv[1];
	assert_int_equal(pthread_create(&th, NULL, fake_server_main, &s), 0);
	mkdest(&my, 0, 0x11, 0xabcdef, gid_v4);
	assert_int_equal(pp_client_exch_fd(sv[0], &my, &rem, 1), -EPROTO);
	/* fake_server waits for "done": end its wait */
	shutdown(sv[0], SHUT_WR);
	pthread_join(th, NULL);
	assert_int_equal(s.done_len, 0);	/* no "done" after a short read */
	close(sv[0]);
	close(sv[1]);
}

/*
 * ibv_srq_pingpong's server, byte for byte: it reads MAX_QP (256) messages,
 * writes 256 (its -q 2 QPs, then 254 zero entries), reads "done".
 */
#define ZERO_MSG "0000:000000:000000:00000000000000000000000000000000"

struct srq_fake_server {
	int fd;
	char got[PP_MAX_QP][PP_MSG_SIZE];
	ssize_t got_len;
	char done[PP_DONE_SIZE];
	ssize_t done_len;
};

static void *
srq_fake_server_main(void *arg)
{
	struct srq_fake_server *s = arg;
	static char reply[PP_MAX_QP][PP_MSG_SIZE];

	s->got_len = read_n(s->fd, s->got, sizeof(s->got));
	for (int i = 0; i < PP_MAX_QP; i++)
		memcpy(reply[i], ZERO_MSG, PP_MSG_SIZE);
	memcpy(reply[0], "0000:000031:000001:" WIRE_SEQ, PP_MSG_SIZE);
	memcpy(reply[1], "0000:000032:000002:" WIRE_SEQ, PP_MSG_SIZE);
	if (write(s->fd, reply, sizeof(reply)) != (ssize_t)sizeof(reply))
		return NULL;
	s->done_len = read_n(s->fd, s->done, sizeof(s->done));
	return NULL;
}

static void
test_srq_client_conversation(void **state)
{
	static struct srq_fake_server s;
	struct pp_dest my[PP_MAX_QP], rem[PP_MAX_QP];
	pthread_t th;
	int sv[2], i;

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(my, 0, sizeof(my));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	s.fd = sv[1];
	assert_int_equal(pthread_create(&th, NULL, srq_fake_server_main, &s), 0);
	mkdest(&my[0], 0, 0x11, 0xabcdef, gid_v4);
	mkdest(&my[1], 0, 0x12, 0x000001, gid_v4);
	assert_int_equal(pp_client_exch_fd(sv[0], my, rem, PP_MAX_QP), 0);
	pthread_join(th, NULL);
	assert_int_equal(s.got_len, PP_MAX_QP * PP_MSG_SIZE);
	assert_memory_equal(s.got[0], "0000:000011:abcdef:" WIRE_V4, PP_MSG_SIZE);
	assert_memory_equal(s.got[1], "0000:000012:000001:" WIRE_V4, PP_MSG_SIZE);
	for (i = 2; i < PP_MAX_QP; i++)
		assert_memory_equal(s.got[i], ZERO_MSG, PP_MSG_SIZE);
	assert_int_equal(s.done_len, PP_DONE_SIZE);
	assert_memory_equal(s.done, "done", PP_DONE_SIZE);
	assert_int_equal(rem[0].qpn, 0x31);
	assert_int_equal(rem[1].qpn, 0x32);
	assert_int_equal(rem[1].psn, 2);
	assert_memory_equal(rem[1].gid.raw, gid_seq, 16);
	assert_int_equal(rem[2].qpn, 0);
	assert_int_equal(rem[255].gid.global.interface_id, 0);
	close(sv[0]);
	close(sv[1]);
}

/* What ibv_rc_pingpong's client does, byte for byte. */
struct fake_client {
	int fd;
	const char *msg;	/* what to send first */
	size_t msg_len;
	const char *done;	/* what to send last */
	size_t done_len;
	char got[PP_MSG_SIZE];
	ssize_t got_len;
};

static void *
fake_client_main(void *arg)
{
	struct fake_client *c = arg;

	if (write(c->fd, c->msg, c->msg_len) != (ssize_t)c->msg_len)
		return NULL;
	if (c->msg_len < PP_MSG_SIZE) {
		shutdown(c->fd, SHUT_WR);
		return NULL;
	}
	c->got_len = read_n(c->fd, c->got, PP_MSG_SIZE);
	if (c->got_len == PP_MSG_SIZE && c->done_len > 0 &&
	    write(c->fd, c->done, c->done_len) != (ssize_t)c->done_len)
		return NULL;
	shutdown(c->fd, SHUT_WR);
	return NULL;
}

struct cb_rec {
	int calls;
	struct pp_dest seen;
	int fail;
};

static int
record_connect(void *arg, const struct pp_dest *rem)
{
	struct cb_rec *r = arg;

	r->calls++;
	r->seen = *rem;
	return r->fail;
}

static int
server_with(const char *msg, size_t msg_len, const char *done,
	    size_t done_len, struct cb_rec *rec, struct fake_client *out)
{
	struct fake_client c = { .msg = msg, .msg_len = msg_len,
				 .done = done, .done_len = done_len };
	struct pp_dest my, rem;
	pthread_t th;
	int sv[2], rc;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	c.fd = sv[1];
	assert_int_equal(pthread_create(&th, NULL, fake_client_main, &c), 0);
	mkdest(&my, 0, 0x33, 0x000fed, gid_seq);
	rc = pp_server_exch_fd(sv[0], &my, &rem, 1, record_connect, rec);
	shutdown(sv[0], SHUT_RDWR);
	pthread_join(th, NULL);
	close(sv[0]);
	close(sv[1]);
	if (out != NULL)
		*out = c;
	return rc;
}

static void
test_server_conversation(void **state)
{
	static const char client_msg[PP_MSG_SIZE] =
		"0000:000011:abcdef:" WIRE_V4;
	struct cb_rec rec = { 0 };
	struct fake_client c;

	(void)state;
	assert_int_equal(server_with(client_msg, PP_MSG_SIZE, "done",
				     PP_DONE_SIZE, &rec, &c), 0);
	/* connected with the client's address before answering */
	assert_int_equal(rec.calls, 1);
	assert_int_equal(rec.seen.qpn, 0x11);
	assert_int_equal(rec.seen.psn, 0xabcdef);
	assert_memory_equal(rec.seen.gid.raw, gid_v4, 16);
	assert_int_equal(c.got_len, PP_MSG_SIZE);
	assert_memory_equal(c.got, "0000:000033:000fed:" WIRE_SEQ, PP_MSG_SIZE);
}

static void
test_server_conversation_bad_flow(void **state)
{
	static const char client_msg[PP_MSG_SIZE] =
		"0000:000011:abcdef:" WIRE_V4;
	static const char bad_msg[PP_MSG_SIZE] =
		"0000:000011:abcdef:" "0000000000000000000000000000000g";
	struct cb_rec rec = { 0 };
	struct fake_client c;

	(void)state;
	/* short address: no connect, no answer */
	assert_int_equal(server_with(client_msg, 30, NULL, 0, &rec, &c),
			 -EPROTO);
	assert_int_equal(rec.calls, 0);
	/* malformed address */
	assert_int_equal(server_with(bad_msg, PP_MSG_SIZE, NULL, 0, &rec, &c),
			 -EPROTO);
	assert_int_equal(rec.calls, 0);
	/* the QP cannot connect: no answer is sent */
	rec.fail = 1;
	assert_int_equal(server_with(client_msg, PP_MSG_SIZE, "done",
				     PP_DONE_SIZE, &rec, &c), -ECONNREFUSED);
	assert_int_equal(rec.calls, 1);
	assert_int_equal(c.got_len, 0);
	rec.fail = 0;
	/* no "done" / a wrong one / a short one */
	assert_int_equal(server_with(client_msg, PP_MSG_SIZE, NULL, 0, &rec,
				     &c), -EPROTO);
	assert_int_equal(server_with(client_msg, PP_MSG_SIZE, "dome",
				     PP_DONE_SIZE, &rec, &c), -EPROTO);
	assert_int_equal(server_with(client_msg, PP_MSG_SIZE, "done",
				     4, &rec, &c), -EPROTO);
}

/* ---- both of ours over TCP loopback ----------------------------------------- */

struct server_thread {
	unsigned int port;
	struct pp_dest my, rem;
	struct cb_rec rec;
	int rc;
};

static void *
server_thread_main(void *arg)
{
	struct server_thread *s = arg;

	s->rc = pp_server_exch(s->port, &s->my, &s->rem, 1, record_connect,
			       &s->rec);
	return NULL;
}

static void
test_tcp_loopback(void **state)
{
	struct server_thread s = { 0 };
	struct pp_dest my, rem;
	pthread_t th;
	int rc = -1, tries;

	(void)state;
	s.port = 20000 + (unsigned int)getpid() % 20000;
	mkdest(&s.my, 0, 0x33, 0x000fed, gid_seq);
	mkdest(&my, 0, 0x11, 0xabcdef, gid_v4);
	assert_int_equal(pthread_create(&th, NULL, server_thread_main, &s), 0);
	for (tries = 0; tries < 200 && rc != 0; tries++) {
		rc = pp_client_exch("127.0.0.1", s.port, &my, &rem, 1);
		if (rc != 0)
			usleep(10000);
	}
	pthread_join(th, NULL);
	assert_int_equal(rc, 0);
	assert_int_equal(s.rc, 0);
	assert_int_equal(rem.qpn, 0x33);
	assert_memory_equal(rem.gid.raw, gid_seq, 16);
	assert_int_equal(s.rem.qpn, 0x11);
	assert_memory_equal(s.rem.gid.raw, gid_v4, 16);
	assert_int_equal(s.rec.calls, 1);
}

static void
test_tcp_bad_flow(void **state)
{
	struct pp_dest my, rem;

	(void)state;
	mkdest(&my, 0, 1, 1, gid_v4);
	/* nobody listens on port 1 of the loopback */
	assert_int_not_equal(pp_client_exch("127.0.0.1", 1, &my, &rem, 1), 0);
	assert_int_not_equal(pp_client_exch("no-such-host.invalid", 18515,
					    &my, &rem, 1), 0);
}

/* ---- options ------------------------------------------------------------------- */

static int
parse(struct pp_opts *o, enum pp_kind kind, const char *line)
{
	char buf[256];
	char *argv[32];
	int argc = 0;
	char *tok, *save = NULL;
	FILE *null = fopen("/dev/null", "w");
	int rc;

	argv[argc++] = (char *)"droce-pingpong";
	snprintf(buf, sizeof(buf), "%s", line);
	for (tok = strtok_r(buf, " ", &save); tok != NULL;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	pp_opts_default(o, kind, "droce-pingpong");
	rc = pp_parse_opts(o, argc, argv, null, null);
	fclose(null);
	if (o->servername != NULL)	/* points into buf */
		o->servername = "(set)";
	return rc;
}

static void
test_opts_defaults(void **state)
{
	struct pp_opts o;

	(void)state;
	/* rc_pingpong.c main(): port 18515, ib_port 1, size 4096,
	 * IBV_MTU_1024, rx_depth 500, iters 1000, sl 0 */
	assert_int_equal(parse(&o, PP_RC, ""), PP_OPTS_RUN);
	assert_int_equal(o.port, 18515);
	assert_int_equal(o.ib_port, 1);
	assert_int_equal(o.size, 4096);
	assert_int_equal(o.mtu, DROCE_MTU_1024);
	assert_int_equal(o.rx_depth, 500);
	assert_int_equal(o.iters, 1000);
	assert_int_equal(o.sl, 0);
	assert_int_equal(o.use_event, 0);
	assert_int_equal(o.validate_buf, 0);
	assert_int_equal(o.gidx, 0);
	assert_null(o.servername);
	assert_null(o.ib_devname);
	/* ud_pingpong.c main(): size 1024 (its usage text says 2048) */
	assert_int_equal(parse(&o, PP_UD, ""), PP_OPTS_RUN);
	assert_int_equal(o.size, 1024);
}

static void
test_opts_values(void **state)
{
	struct pp_opts o;

	(void)state;
	assert_int_equal(parse(&o, PP_RC, "-p 1234 -d ring0 -i 1 -s 65536 "
			       "-m 4096 -r 64 -n 10 -l 3 -e -g 1 -c 127.0.0.1"),
			 PP_OPTS_RUN);
	assert_int_equal(o.port, 1234);
	assert_string_equal(o.ib_devname, "ring0");
	assert_int_equal(o.size, 65536);
	assert_int_equal(o.mtu, DROCE_MTU_4096);
	assert_int_equal(o.rx_depth, 64);
	assert_int_equal(o.iters, 10);
	assert_int_equal(o.sl, 3);
	assert_int_equal(o.use_event, 1);
	assert_int_equal(o.gidx, 1);
	assert_int_equal(o.validate_buf, 1);
	assert_non_null(o.servername);
	/* long forms, and strtoul base 0 as the examples */
	assert_int_equal(parse(&o, PP_RC, "--port=0x10 --size=1 --mtu=256 "
			       "--rx-depth=8 --iters=5 --chk --events "
			       "--gid-idx=0 --ib-dev=x"), PP_OPTS_RUN);
	assert_int_equal(o.port, 16);
	assert_int_equal(o.size, 1);
	assert_int_equal(o.mtu, DROCE_MTU_256);
	assert_int_equal(o.validate_buf, 1);
}

static void
test_opts_bad_flow(void **state)
{
	struct pp_opts o;

	(void)state;
	assert_int_equal(parse(&o, PP_RC, "-p 65536"), PP_OPTS_USAGE);
	assert_int_equal(parse(&o, PP_RC, "-i 0"), PP_OPTS_USAGE);
	assert_int_equal(parse(&o, PP_RC, "-m 1000"), PP_OPTS_USAGE);
	assert_int_equal(parse(&o, PP_RC, "-s 12k"), PP_OPTS_USAGE);
	assert_int_equal(parse(&o, PP_RC, "-s -1"), PP_OPTS_USAGE);
	assert_int_equal(parse(&o, PP_RC, "-r 0"), PP_OPTS_USAGE);
	assert_int_equal(parse(&o, PP_RC, "-g -1"), PP_OPTS_USAGE);
	assert_int_equal(parse(&o, PP_RC, "-x"), PP_OPTS_USAGE);
	assert_int_equal(parse(&o, PP_RC, "host1 host2"), PP_OPTS_USAGE);
	/* ud_pingpong has no -m and none of the RC extras */
	assert_int_equal(parse(&o, PP_UD, "-m 1024"), PP_OPTS_USAGE);
	assert_int_equal(parse(&o, PP_UD, "-o"), PP_OPTS_USAGE);
	/* ibverbs features droce lacks are refused, not ignored */
	assert_int_equal(parse(&o, PP_RC, "-o"), PP_OPTS_UNSUPPORTED);
	assert_int_equal(parse(&o, PP_RC, "--odp"), PP_OPTS_UNSUPPORTED);
	assert_int_equal(parse(&o, PP_RC, "-O"), PP_OPTS_UNSUPPORTED);
	assert_int_equal(parse(&o, PP_RC, "-P"), PP_OPTS_UNSUPPORTED);
	assert_int_equal(parse(&o, PP_RC, "-t"), PP_OPTS_UNSUPPORTED);
	assert_int_equal(parse(&o, PP_RC, "--ts"), PP_OPTS_UNSUPPORTED);
	assert_int_equal(parse(&o, PP_RC, "-j"), PP_OPTS_UNSUPPORTED);
	assert_int_equal(parse(&o, PP_RC, "-N"), PP_OPTS_UNSUPPORTED);
	assert_int_equal(parse(&o, PP_RC, "-h"), PP_OPTS_HELP);
	assert_int_equal(parse(&o, PP_UD, "--help"), PP_OPTS_HELP);
}

static void
test_wants_help(void **state)
{
	char *a1[] = { "p", "-h", NULL };
	char *a2[] = { "p", "--no-pci", "--", "-s", "1", "--help", NULL };
	char *a3[] = { "p", "--no-pci", "--", "-s", "1", "host", NULL };
	char *a4[] = { "p", "--no-pci", "-h", NULL };	/* EAL's -h */

	(void)state;
	assert_int_equal(pp_wants_help(2, a1), 1);
	assert_int_equal(pp_wants_help(6, a2), 1);
	assert_int_equal(pp_wants_help(6, a3), 0);
	assert_int_equal(pp_wants_help(3, a4), 0);
	assert_int_equal(pp_mtu_to_enum(2048), DROCE_MTU_2048);
	assert_int_equal(pp_mtu_to_enum(1500), 0);
}

/* ---- -c pattern ----------------------------------------------------------------- */

static void
test_chk(void **state)
{
	char buf[3 * 4096 + 10];
	FILE *null = fopen("/dev/null", "w");

	(void)state;
	assert_non_null(null);
	memset(buf, PP_CHK_FILL, sizeof(buf));
	/* the server's buffer before any data: every page start is wrong */
	assert_int_equal(pp_chk_verify(buf, sizeof(buf), 4096, PP_CHK_FILL, null), 4);
	/* rc_pingpong: buf[i] = i / page_size % sizeof(char), i.e. 0 */
	pp_chk_fill(buf, sizeof(buf), 4096);
	assert_int_equal(buf[0], 0);
	assert_int_equal(buf[4096], 0);
	assert_int_equal(buf[3 * 4096], 0);
	assert_int_equal(buf[1], 0x7b);
	assert_int_equal(pp_chk_verify(buf, sizeof(buf), 4096, PP_CHK_FILL, null), 0);
	buf[2 * 4096] = 1;
	assert_int_equal(pp_chk_verify(buf, sizeof(buf), 4096, PP_CHK_FILL, null), 1);
	/* every byte counts, not only the page starts rdma-core checks */
	buf[2 * 4096] = 0;
	buf[4096 + 17] = 0x7a;
	buf[3 * 4096 + 9] = 0;
	assert_int_equal(pp_chk_verify(buf, sizeof(buf), 4096, PP_CHK_FILL, null), 2);
	/* a -c client's receive buffer before the echo: all wrong */
	memset(buf, PP_CHK_UNWRITTEN, sizeof(buf));
	assert_int_equal(pp_chk_verify(buf, sizeof(buf), 4096, PP_CHK_FILL, null),
			 sizeof(buf));
	/* -s 1: one byte, one page */
	memset(buf, PP_CHK_FILL, sizeof(buf));
	pp_chk_fill(buf, 1, 4096);
	assert_int_equal(pp_chk_verify(buf, 1, 4096, PP_CHK_FILL, null), 0);
	/* srq_pingpong's buffer is zeros: what its client sends with -c */
	assert_int_equal(pp_chk_fill_byte(PP_SRQ), 0);
	assert_int_equal(pp_chk_fill_byte(PP_RC), PP_CHK_FILL);
	assert_int_equal(pp_chk_fill_byte(PP_UD), PP_CHK_FILL);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(pp_chk_verify(buf, sizeof(buf), 4096, PP_CHK_FILL_SRQ,
				       null), 0);
	assert_int_equal(pp_chk_verify(buf, sizeof(buf), 4096, PP_CHK_FILL, null),
			 sizeof(buf) - 4);
	fclose(null);
}

/* What the -c lines say, exactly. */
static void
test_chk_report(void **state)
{
	char buf[4096 + 2], out[512];
	FILE *f;
	size_t n;

	(void)state;
	memset(buf, PP_CHK_FILL, sizeof(buf));
	pp_chk_fill(buf, sizeof(buf), 4096);
	buf[4097] = 0x11;
	f = tmpfile();
	assert_non_null(f);
	assert_int_equal(pp_chk_verify(buf, sizeof(buf), 4096, PP_CHK_FILL, f), 1);
	buf[4097] = 0x7b;
	assert_int_equal(pp_chk_verify(buf, sizeof(buf), 4096, PP_CHK_FILL, f), 0);
	rewind(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	fclose(f);
	assert_string_equal(out,
		"invalid data in page 1\n"
		"data check FAILED: 1 of 4098 bytes wrong, the first at offset "
		"4097 (0x11, expected 0x7b)\n"
		"data check passed: all 4098 bytes received as the -c pattern "
		"(2 page start(s) 0x00, the rest 0x7b)\n");
}

/*
 * The real tools' exchange, recorded between two Soft-RoCE guests
 * (rdma-core-44/, see its README): C/S lines of hex TCP payload.
 */
struct pp_recorded {
	const char *file;
	int cli_qpn, cli_psn, srv_qpn, srv_psn;
	uint8_t cli_ip4, srv_ip4;	/* last octet of ::ffff:198.18.0.x */
};

/* One line "C|S hex" into dir/bytes; returns the byte count or -1. */
static int
recorded_line(const char *line, char *dir, uint8_t *bytes, size_t cap)
{
	size_t n = 0;
	const char *h;

	if (line[0] != 'C' && line[0] != 'S')
		return -1;
	*dir = line[0];
	for (h = line + 2; h[0] != '\0' && h[0] != '\n'; h += 2) {
		unsigned int b;

		if (n == cap || sscanf(h, "%2x", &b) != 1)
			return -1;
		bytes[n++] = (uint8_t)b;
	}
	return (int)n;
}

static void
check_recorded(const struct pp_recorded *r)
{
	char path[512], line[512], dir = 0, msg[PP_MSG_SIZE];
	uint8_t bytes[128], gid[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0 };
	const char *order = "CSC";
	int i = 0, n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", PP_TRANSCRIPTS, r->file);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		struct pp_dest d;
		bool cli;

		if (line[0] == '#')
			continue;
		n = recorded_line(line, &dir, bytes, sizeof(bytes));
		assert_true(i < 3 && dir == order[i]);
		if (i++ == 2) {		/* the client's closing "done" */
			assert_int_equal(n, PP_DONE_SIZE);
			assert_memory_equal(bytes, PP_DONE_MSG, PP_DONE_SIZE);
			continue;
		}
		assert_int_equal(n, PP_MSG_SIZE);
		assert_int_equal(pp_msg_parse((const char *)bytes, &d), 0);
		cli = dir == 'C';
		gid[15] = cli ? r->cli_ip4 : r->srv_ip4;
		assert_int_equal(d.lid, 0);
		assert_int_equal(d.qpn, cli ? r->cli_qpn : r->srv_qpn);
		assert_int_equal(d.psn, cli ? r->cli_psn : r->srv_psn);
		assert_memory_equal(d.gid.raw, gid, 16);
		/* droce-pingpong says the same thing in the same bytes */
		assert_int_equal(pp_msg_format(&d, msg), 0);
		assert_memory_equal(msg, bytes, PP_MSG_SIZE);
	}
	fclose(f);
	assert_int_equal(i, 3);
}

static void
test_recorded_rc_pingpong(void **state)
{
	/* QPNs/PSNs as the tools printed them ("remote address: ...") */
	static const struct pp_recorded r = {
		"rc_pingpong.txt", 0x11, 0x965054, 0x11, 0xd503cb, 12, 11,
	};

	(void)state;
	check_recorded(&r);
}

static void
test_recorded_ud_pingpong(void **state)
{
	static const struct pp_recorded r = {
		"ud_pingpong.txt", 0x12, 0xd5a71b, 0x12, 0x8769a5, 12, 11,
	};

	(void)state;
	check_recorded(&r);
}

int
main(void)
{
	/* the scripted peers use write(); a hang-up must not kill the test */
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_gid_to_wire),
		cmocka_unit_test(test_wire_to_gid),
		cmocka_unit_test(test_wire_to_gid_bad_flow),
		cmocka_unit_test(test_msg_format),
		cmocka_unit_test(test_msg_format_bad_flow),
		cmocka_unit_test(test_msg_parse),
		cmocka_unit_test(test_msg_parse_bad_flow),
		cmocka_unit_test(test_msg_round_trip),
		cmocka_unit_test(test_recorded_rc_pingpong),
		cmocka_unit_test(test_recorded_ud_pingpong),
		cmocka_unit_test(test_client_conversation),
		cmocka_unit_test(test_client_conversation_bad_flow),
		cmocka_unit_test(test_srq_client_conversation),
		cmocka_unit_test(test_server_conversation),
		cmocka_unit_test(test_server_conversation_bad_flow),
		cmocka_unit_test(test_tcp_loopback),
		cmocka_unit_test(test_tcp_bad_flow),
		cmocka_unit_test(test_opts_defaults),
		cmocka_unit_test(test_opts_values),
		cmocka_unit_test(test_opts_bad_flow),
		cmocka_unit_test(test_wants_help),
		cmocka_unit_test(test_chk),
		cmocka_unit_test(test_chk_report),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
