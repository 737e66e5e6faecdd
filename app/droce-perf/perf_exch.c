/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_exch.c - droce-perf's side channel: the out-of-band exchange of
 * perftest 4.5-0.17 (Debian 12; it calls itself version 6.06), recorded
 * byte for byte from the real tools (test/integration/perf/
 * perftest-4.5-0.17/).  Without -R it runs over TCP (here); with -R over
 * an RDMA CM connection (perf_cm.c), where every write below is one
 * SEND, the key message is binary (perf_cm_key_format, 56 bytes), one of
 * zeros is exchanged before the test QP's connection and one after it
 * (then the keys), and there is no "done".  Every perftest message is an "exchange": the client
 * writes its message and then reads the server's; the server reads first
 * and then writes.  In order:
 *
 *   version      16 bytes: "6.06", NUL padded
 *   cycle buffer 4 bytes, big endian (the page size; both take the larger)
 *   cache line   4 bytes, big endian
 *   MTU          2 bytes: the ibv_mtu enum as "%d" and a NUL; both take
 *                the smaller
 *   keys         108 bytes of text, "%04x:%04x:%06x:%06x:%08x:%016x:" (LID,
 *                out_reads, QPN, PSN, rkey, buffer address), 16 GID bytes
 *                as "%02x:", then "%08x:" (SRQ number) and a NUL.  The same
 *                message is exchanged again as each later barrier
 *                ("handshake") of the test (perf_main.c has the counts).
 *   report       bw tests after the run: size and iterations (64-bit big
 *                endian), BW peak, BW average and message rate (doubles as
 *                big-endian 64-bit patterns, in the sender's printed units),
 *                each exchanged separately; the server prints the client's
 *   "done"       5 bytes at the very end, both sides write then read (not
 *                in write_lat)
 *
 * droce-perf recognises its own kind by the bytes after the version's NUL
 * ("6.06\0droce-perf\0": perftest parses the string with atof and never
 * looks further).  Only when both sides are droce-perf does it add its own
 * messages, which perftest therefore never sees: the client's test
 * parameters (the server adopts them), a barrier before each size and an
 * END/VERI pair after it (the client's count and report; each side's data
 * verdict).
 *
 * While a side waits on the socket the idle hook runs droce_progress, so
 * the stack keeps answering ARP and the peer's packets.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "app_sock.h"
#include "perf.h"

#define PERF_MSG_LEN 16

void
perf_exch_set_idle(void (*fn)(void *arg), void *arg)
{
	app_sock_set_idle(fn, arg);
}

/* ---- the TCP channel ---------------------------------------------------- */
static int
tcp_write(struct perf_chan *ch, const void *buf, size_t n)
{
	return app_sock_write_full(ch->fd, buf, n);
}

/* Exactly n bytes, or an error (the end of the stream is one). */
static int
tcp_read(struct perf_chan *ch, void *buf, size_t n)
{
	ssize_t r = app_sock_read_full(ch->fd, buf, n);

	return r < 0 ? (int)r : (size_t)r == n ? 0 : -ECONNRESET;
}

static int
tcp_ready(struct perf_chan *ch)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0 && pfd.revents != 0;
}

void
perf_chan_tcp(struct perf_chan *ch, int fd)
{
	static const struct perf_chan_ops ops = {
		.write = tcp_write, .read = tcp_read, .ready = tcp_ready,
	};

	ch->ops = &ops;
	ch->fd = fd;
	ch->cm = NULL;
}

int
perf_chan_write(struct perf_chan *ch, const void *buf, size_t n)
{
	return ch->ops->write(ch, buf, n);
}

int
perf_chan_read(struct perf_chan *ch, void *buf, size_t n)
{
	return ch->ops->read(ch, buf, n);
}

int
perf_xchg(struct perf_chan *ch, int client, const void *mine, void *theirs,
	  size_t n)
{
	int rc;

	if (client) {
		rc = perf_chan_write(ch, mine, n);
		return rc != 0 ? rc : perf_chan_read(ch, theirs, n);
	}
	rc = perf_chan_read(ch, theirs, n);
	return rc != 0 ? rc : perf_chan_write(ch, mine, n);
}

/* ---- big-endian helpers ------------------------------------------------ */
static void
put_be(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t
get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

void
perf_be32_put(uint8_t p[4], uint32_t v)
{
	put_be(p, v, 4);
}

uint32_t
perf_be32_get(const uint8_t p[4])
{
	return (uint32_t)get_be(p, 4);
}

/* ---- version ----------------------------------------------------------- */
void
perf_version_format(char msg[PERF_VERSION_SIZE])
{
	static const char marker[] = PERF_DROCE_MARKER;

	memset(msg, 0, PERF_VERSION_SIZE);
	memcpy(msg, PERF_PERFTEST_VERSION, strlen(PERF_PERFTEST_VERSION));
	memcpy(msg + strlen(PERF_PERFTEST_VERSION) + 1, marker,
	       sizeof(marker) - 1);
}

int
perf_version_parse(const char msg[PERF_VERSION_SIZE], double *version,
		   int *droce)
{
	char v[PERF_VERSION_SIZE + 1], *end;
	size_t len = strnlen(msg, PERF_VERSION_SIZE);
	size_t mlen = sizeof(PERF_DROCE_MARKER) - 1;

	if (len == 0 || len == PERF_VERSION_SIZE)
		return -EINVAL;
	memcpy(v, msg, len);
	v[len] = '\0';
	*version = strtod(v, &end);
	if (end == v || *end != '\0')
		return -EINVAL;
	*droce = len + 1 + mlen <= PERF_VERSION_SIZE &&
		memcmp(msg + len + 1, PERF_DROCE_MARKER, mlen) == 0;
	return 0;
}

/* ---- MTU --------------------------------------------------------------- */
void
perf_mtu_format(enum droce_mtu mtu, char msg[PERF_MTU_MSG_SIZE])
{
	msg[0] = (char)('0' + (int)mtu % 10);
	msg[1] = '\0';
}

int
perf_mtu_parse(const char msg[PERF_MTU_MSG_SIZE], enum droce_mtu *mtu)
{
	if (msg[0] < '1' || msg[0] > '5' || msg[1] != '\0')
		return -EINVAL;
	*mtu = (enum droce_mtu)(msg[0] - '0');
	return 0;
}

/* ---- keys (the address message) ---------------------------------------- */
int
perf_key_format(const struct perf_dest *d, char msg[PERF_KEY_MSG_SIZE])
{
	char *p = msg;
	size_t left = PERF_KEY_MSG_SIZE;
	int i, n;

	memset(msg, 0, PERF_KEY_MSG_SIZE);
	n = snprintf(p, left, "%04x:%04x:%06x:%06x:%08x:%016" PRIx64 ":",
		     d->lid & 0xffffu, d->out_reads & 0xffffu,
		     d->qpn & 0xffffffu, d->psn & 0xffffffu, d->rkey,
		     d->vaddr);
	if (n != 50)
		return -EINVAL;
	p += n;
	left -= (size_t)n;
	for (i = 0; i < 16; i++, p += 3, left -= 3)
		snprintf(p, left, "%02x:", d->gid.raw[i]);
	n = snprintf(p, left, "%08x:", d->srqn);
	return n == 9 ? PERF_KEY_MSG_SIZE : -EINVAL;
}

/* One hexadecimal field of exactly width digits and its ':'. */
static int
hex_field(const char **p, int width, uint64_t *v)
{
	uint64_t r = 0;
	int i;

	for (i = 0; i < width; i++) {
		char ch = (*p)[i];
		int d = ch >= '0' && ch <= '9' ? ch - '0' :
			ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 :
			ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;

		if (d < 0)
			return -EINVAL;
		r = r << 4 | (uint64_t)d;
	}
	if ((*p)[width] != ':')
		return -EINVAL;
	*p += width + 1;
	*v = r;
	return 0;
}

int
perf_key_parse(const char msg[PERF_KEY_MSG_SIZE], struct perf_dest *d)
{
	static const int widths[] = { 4, 4, 6, 6, 8, 16 };
	const char *p = msg;
	uint64_t f[6], v;
	struct perf_dest r;
	int i;

	/* the text is 107 characters: the last byte must end it */
	if (msg[PERF_KEY_MSG_SIZE - 1] != '\0')
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	for (i = 0; i < 6; i++)
		if (hex_field(&p, widths[i], &f[i]) != 0)
			return -EINVAL;
	for (i = 0; i < 16; i++) {
		if (hex_field(&p, 2, &v) != 0)
			return -EINVAL;
		r.gid.raw[i] = (uint8_t)v;
	}
	if (hex_field(&p, 8, &v) != 0 || *p != '\0')
		return -EINVAL;
	r.lid = (uint32_t)f[0];
	r.out_reads = (uint32_t)f[1];
	r.qpn = (uint32_t)f[2];
	r.psn = (uint32_t)f[3];
	r.rkey = (uint32_t)f[4];
	r.vaddr = f[5];
	r.srqn = (uint32_t)v;
	*d = r;
	return 0;
}

/*
 * -R: perftest's struct pingpong_dest as it lies in memory (x86-64), its
 * integers big endian: LID, out_reads, QPN, PSN, rkey at 0..19, 4 bytes
 * of padding, the buffer address at 24, the GID at 32, the SRQ number at
 * 48, the GID index at 52.
 */
void
perf_cm_key_format(const struct perf_dest *d, uint8_t msg[PERF_CM_MSG_SIZE])
{
	memset(msg, 0, PERF_CM_MSG_SIZE);
	put_be(msg, d->lid, 4);
	put_be(msg + 4, d->out_reads, 4);
	put_be(msg + 8, d->qpn, 4);
	put_be(msg + 12, d->psn, 4);
	put_be(msg + 16, d->rkey, 4);
	put_be(msg + 24, d->vaddr, 8);
	memcpy(msg + 32, d->gid.raw, 16);
	put_be(msg + 48, d->srqn, 4);
}

int
perf_cm_key_parse(const uint8_t msg[PERF_CM_MSG_SIZE], struct perf_dest *d)
{
	struct perf_dest r;

	memset(&r, 0, sizeof(r));
	r.lid = (uint32_t)get_be(msg, 4);
	r.out_reads = (uint32_t)get_be(msg + 4, 4);
	r.qpn = (uint32_t)get_be(msg + 8, 4);
	r.psn = (uint32_t)get_be(msg + 12, 4);
	r.rkey = (uint32_t)get_be(msg + 16, 4);
	r.vaddr = get_be(msg + 24, 8);
	memcpy(r.gid.raw, msg + 32, 16);
	r.srqn = (uint32_t)get_be(msg + 48, 4);
	/* 24-bit fields as the BTH carries them */
	if (r.qpn > 0xffffffu || r.psn > 0xffffffu)
		return -EINVAL;
	*d = r;
	return 0;
}

/* ---- bw report ---------------------------------------------------------- */
static uint64_t
dbl_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static double
bits_dbl(uint64_t u)
{
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

void
perf_report_encode(const struct perf_report *r,
		   uint8_t out[PERF_REPORT_FIELDS][8])
{
	put_be(out[0], r->size, 8);
	put_be(out[1], r->iters, 8);
	put_be(out[2], dbl_bits(r->bw_peak), 8);
	put_be(out[3], dbl_bits(r->bw_avg), 8);
	put_be(out[4], dbl_bits(r->msg_rate), 8);
}

void
perf_report_decode(const uint8_t in[PERF_REPORT_FIELDS][8],
		   struct perf_report *r)
{
	r->size = get_be(in[0], 8);
	r->iters = get_be(in[1], 8);
	r->bw_peak = bits_dbl(get_be(in[2], 8));
	r->bw_avg = bits_dbl(get_be(in[3], 8));
	r->msg_rate = bits_dbl(get_be(in[4], 8));
}

int
perf_report_xchg(struct perf_chan *ch, int client, const struct perf_report *mine,
		 struct perf_report *theirs)
{
	uint8_t out[PERF_REPORT_FIELDS][8], in[PERF_REPORT_FIELDS][8];
	int i, rc;

	perf_report_encode(mine, out);
	for (i = 0; i < PERF_REPORT_FIELDS; i++) {
		rc = perf_xchg(ch, client, out[i], in[i], 8);
		if (rc != 0)
			return rc;
	}
	perf_report_decode(in, theirs);
	return 0;
}

/* ---- the rest of perftest's sequence ------------------------------------ */
int
perf_handshake(struct perf_chan *ch, int client, const void *key, size_t len)
{
	char theirs[PERF_KEY_MSG_SIZE];

	if (len > sizeof(theirs))
		return -EINVAL;
	return perf_xchg(ch, client, key, theirs, len);
}

int
perf_done(struct perf_chan *ch)
{
	static const char done[PERF_DONE_SIZE] = "done";
	char theirs[PERF_DONE_SIZE];
	int rc = perf_chan_write(ch, done, sizeof(done));

	if (rc != 0)
		return rc;
	/* the peer may already have closed: its "done" is enough, or none */
	(void)perf_chan_read(ch, theirs, sizeof(theirs));
	return 0;
}

/* ---- which barriers each test has -------------------------------------- */
void
perf_sequence(enum perf_verb verb, enum perf_tst tst, int rdma_cm,
	      struct perf_seq *s)
{
	memset(s, 0, sizeof(*s));
	/* -R: a barrier of zeroed key messages before the test QP's
	 * connection and one after it, then the keys; the CM connection
	 * closes the channel, no "done" */
	s->cm_sync_before = rdma_cm ? 1 : 0;
	s->cm_sync_after = rdma_cm ? 1 : 0;
	s->done = !rdma_cm;
	if (tst == PERF_BW && verb != PERF_SEND) {
		/* write/read/atomic_bw: the server waits in the 4th */
		s->pre_handshakes = 2;
		s->handshakes_before_report = 1;
		s->reports = 1;
		s->handshakes_after = 1;
		return;
	}
	s->pre_handshakes = 3;
	if (tst == PERF_LAT && verb == PERF_WRITE) {
		s->done = 0;		/* write_lat just closes */
		return;
	}
	s->handshakes_after = 1;
}

/* ---- droce-perf's own parameters (droce-perf peers only) --------------- */
int
perf_params_format(const struct perf_params *p,
		   char msg[PERF_PARAMS_MSG_SIZE])
{
	int n;

	memset(msg, 0, PERF_PARAMS_MSG_SIZE);
	n = snprintf(msg, PERF_PARAMS_MSG_SIZE, "DPERF3 %.15s %" PRIu32 " %"
		     PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu32 " %08" PRIx32,
		     p->test[0] ? p->test : "-", p->size, p->iters,
		     p->duration, p->all_sizes, p->atomic, p->seed);
	return n > 0 && n < PERF_PARAMS_MSG_SIZE ? n : -EINVAL;
}

int
perf_params_parse(const char msg[PERF_PARAMS_MSG_SIZE], struct perf_params *p)
{
	struct perf_params r;
	char test[16], tail;

	if (memchr(msg, '\0', PERF_PARAMS_MSG_SIZE) == NULL)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	if (sscanf(msg, "DPERF3 %15s %" SCNu32 " %" SCNu32 " %" SCNu32 " %"
		   SCNu32 " %" SCNu32 " %8" SCNx32 "%c", test, &r.size,
		   &r.iters, &r.duration, &r.all_sizes, &r.atomic, &r.seed,
		   &tail) != 7)
		return -EINVAL;
	if (strcmp(test, "-") != 0)
		snprintf(r.test, sizeof(r.test), "%s", test);
	*p = r;
	return 0;
}

int
perf_params_xchg(struct perf_chan *ch, int client, const struct perf_params *mine,
		 struct perf_params *theirs)
{
	char out[PERF_PARAMS_MSG_SIZE], in[PERF_PARAMS_MSG_SIZE];
	int rc;

	if (perf_params_format(mine, out) < 0)
		return -EINVAL;
	rc = perf_xchg(ch, client, out, in, sizeof(in));
	if (rc != 0)
		return rc;
	if (perf_params_parse(in, theirs) != 0) {
		fprintf(stderr, "malformed parameter message from the peer\n");
		return -EPROTO;
	}
	return 0;
}

/* ---- framed droce-perf messages ----------------------------------------- */
int
perf_send_msg(struct perf_chan *ch, const char tag[4], uint64_t val)
{
	uint8_t m[PERF_MSG_LEN] = { 0 };

	memcpy(m, tag, 4);
	put_be(m + 8, val, 8);
	return perf_chan_write(ch, m, sizeof(m));
}

int
perf_recv_msg(struct perf_chan *ch, const char tag[4], uint64_t *val)
{
	uint8_t m[PERF_MSG_LEN];
	int rc;

	rc = perf_chan_read(ch, m, sizeof(m));
	if (rc != 0)
		return rc;
	if (memcmp(m, tag, 4) != 0) {
		fprintf(stderr, "side channel: expected '%.4s', got '%.4s'\n",
			tag, (const char *)m);
		return -EPROTO;
	}
	if (val != NULL)
		*val = get_be(m + 8, 8);
	return 0;
}

int
perf_msg_ready(struct perf_chan *ch)
{
	return ch->ops->ready(ch);
}

int
perf_barrier(struct perf_chan *ch)
{
	int rc = perf_send_msg(ch, "SYNC", 0);

	return rc != 0 ? rc : perf_recv_msg(ch, "SYNC", NULL);
}

/* ---- TCP ---------------------------------------------------------------- */
int
perf_tcp_connect(const char *host, unsigned int port)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res, *t;
	char service[16];
	int fd = -1, n, tries;

	snprintf(service, sizeof(service), "%u", port);
	n = getaddrinfo(host, service, &hints, &res);
	if (n != 0) {
		fprintf(stderr, "%s for %s:%u\n", gai_strerror(n), host, port);
		return -1;
	}
	/* the server may still be starting: retry for 10 s */
	for (tries = 0; fd < 0 && tries < 100; tries++) {
		for (t = res; t != NULL; t = t->ai_next) {
			fd = socket(t->ai_family, t->ai_socktype,
				    t->ai_protocol);
			if (fd < 0)
				continue;
			if (connect(fd, t->ai_addr, t->ai_addrlen) == 0)
				break;
			close(fd);
			fd = -1;
		}
		if (fd < 0) {
			app_sock_idle();
			usleep(100000);
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		fprintf(stderr, "Couldn't connect to %s:%u\n", host, port);
	return fd;
}

int
perf_tcp_accept(unsigned int port)
{
	struct addrinfo hints = {
		.ai_flags = AI_PASSIVE, .ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res, *t;
	char service[16];
	int lfd = -1, fd, n;

	snprintf(service, sizeof(service), "%u", port);
	n = getaddrinfo(NULL, service, &hints, &res);
	if (n != 0) {
		fprintf(stderr, "%s for port %u\n", gai_strerror(n), port);
		return -1;
	}
	for (t = res; t != NULL; t = t->ai_next) {
		int one = 1;

		lfd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
		if (lfd < 0)
			continue;
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(lfd, t->ai_addr, t->ai_addrlen) == 0 &&
		    listen(lfd, 1) == 0)
			break;
		close(lfd);
		lfd = -1;
	}
	freeaddrinfo(res);
	if (lfd < 0) {
		fprintf(stderr, "Couldn't listen to port %u\n", port);
		return -1;
	}
	do {
		app_sock_wait_connection(lfd);
		fd = accept(lfd, NULL, NULL);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		fprintf(stderr, "accept() failed: %s\n", strerror(errno));
	close(lfd);
	return fd;
}
