/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf.h - droce-perf: perftest's ib_{write,read,send,atomic}_{bw,lat} on
 * droce's verbs (include/droce.h), one binary.
 *
 *   perf_opts.c    test names, command line (no device)
 *   perf_report.c  perftest's result tables, statistics (no device)
 *   perf_exch.c    the side channel: perftest 4.5-0.17's exchange (TCP)
 *   perf_cm.c      -R: the side channel and the test QP over RDMA CM
 *   perf_ctx.c     resources: device, PD, MR, CQs, QP, connect, posting
 *   perf_bw.c      bandwidth tests (client posts, server waits or receives)
 *   perf_lat.c     latency tests (ping-pong or client round trips)
 *   perf_main.c    program flow: droce_init, options, device, sizes, cleanup
 */
#ifndef DROCE_PERF_H
#define DROCE_PERF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <droce.h>

enum perf_verb { PERF_SEND, PERF_WRITE, PERF_READ, PERF_ATOMIC };
enum perf_tst { PERF_LAT, PERF_BW };
enum perf_atomic { PERF_CMP_AND_SWAP, PERF_FETCH_AND_ADD };
enum perf_output { PERF_OUT_FULL, PERF_OUT_BW, PERF_OUT_MR, PERF_OUT_LAT };

#define PERF_DEF_PORT 18515
#define PERF_QP_TIMEOUT 14	/* perftest DEF_QP_TIME (-u) */
#define PERF_MAX_SIZE (1u << 23)	/* perftest MAX_SIZE, -a's last size */
#define PERF_MIN_ITER 5
#define PERF_MAX_ITER 100000000u

struct perf_opts {
	const char *prog;
	const char *test;		/* "write_bw", ... */
	enum perf_verb verb;
	enum perf_tst tst;
	const char *ib_devname;		/* -d */
	const char *servername;		/* NULL: server */
	unsigned int port;		/* -p */
	int ib_port;			/* -i */
	uint32_t size;			/* -s */
	uint32_t iters;			/* -n */
	unsigned int duration;		/* -D seconds, 0: iterations */
	int all_sizes;			/* -a */
	enum droce_mtu mtu;		/* -m, 0: port's active MTU */
	int gid_index;			/* -x */
	int num_qps;			/* -q (1) */
	uint32_t tx_depth;		/* -t */
	uint32_t rx_depth;		/* -r (send tests) */
	uint32_t cq_mod;		/* -Q */
	uint8_t qp_timeout;		/* -u: local ACK timeout (not with -R) */
	int inline_size;		/* -I, -1: default */
	enum perf_atomic atomic;	/* -A */
	int report_gbits;		/* --report_gbits */
	enum perf_output output;	/* --output */
	int json;			/* --json */
	int histogram;			/* -H: every latency sample */
	int ignore_cpufreq;		/* -F: accepted */
	int rdma_cm;			/* -R: connect through RDMA CM */
};

/* perf_parse_opts() results. */
enum {
	PERF_OPTS_RUN = 0,
	PERF_OPTS_HELP = 1,
	PERF_OPTS_USAGE = -1,
};

/* Test name ("write_bw", "ib_write_bw", "droce_write_bw") to verb/tst;
 * 0 or -1 when unknown. */
int perf_test_lookup(const char *name, enum perf_verb *verb,
		     enum perf_tst *tst, const char **canon);
/* The test named by argv[0]'s basename (droce_write_bw symlinks), or NULL. */
const char *perf_test_from_argv0(const char *argv0);
void perf_opts_default(struct perf_opts *o, const char *prog);
/* Defaults that depend on the test (size, iterations, depths). */
void perf_opts_test_defaults(struct perf_opts *o);
/* argv[0] is the program name; the test name is the first argument unless
 * o->test is already set (argv[0] dispatch). */
int perf_parse_opts(struct perf_opts *o, int argc, char **argv, FILE *out,
		    FILE *err);
void perf_usage(const char *prog, FILE *out);
/* Before droce_init: does the command line ask for help? */
int perf_wants_help(int argc, char **argv);

/* ---- perf_report.c ------------------------------------------------------ */
struct perf_bw_result {
	uint64_t size;
	uint64_t iters;
	double bw_peak;		/* bytes per second */
	double bw_avg;		/* bytes per second */
	double msg_rate;	/* messages per second */
};

struct perf_lat_result {
	uint64_t size;
	uint64_t iters;
	double t_min, t_max, t_typical, t_avg, t_stdev, p99, p999; /* usec */
};

void perf_print_bw_header(const struct perf_opts *o, FILE *out);
void perf_print_bw_line(const struct perf_opts *o,
			const struct perf_bw_result *r, FILE *out);
void perf_print_lat_header(const struct perf_opts *o, FILE *out);
void perf_print_lat_line(const struct perf_opts *o,
			 const struct perf_lat_result *r, FILE *out);
void perf_print_footer(const struct perf_opts *o, FILE *out);
/*
 * Latency statistics from n samples in nanoseconds (sorted in place),
 * each divided by div (2 for half round trips).  n >= 1.
 */
void perf_lat_stats(uint64_t *ns, size_t n, unsigned int div,
		    struct perf_lat_result *r);
/* -H: the sorted samples (perf_lat_stats sorts them), one "i, usec" a line */
void perf_print_lat_samples(const uint64_t *ns, size_t n, unsigned int div, FILE *out);

/* ---- perf_exch.c ------------------------------------------------------- */
/* perftest 4.5-0.17's out-of-band exchange (see perf_exch.c). */
#define PERF_PERFTEST_VERSION "6.06"	/* what that perftest calls itself */
#define PERF_DROCE_MARKER "droce-perf"	/* after the version's NUL */
#define PERF_MIN_PEER_VERSION 5.33	/* 64-bit report iterations, 2-byte MTU */
#define PERF_VERSION_SIZE 16
#define PERF_MTU_MSG_SIZE 2
#define PERF_KEY_MSG_SIZE 108
#define PERF_CM_MSG_SIZE 56		/* -R: sizeof(struct pingpong_dest) */
#define PERF_DONE_SIZE 5
#define PERF_REPORT_FIELDS 5
#define PERF_PARAMS_MSG_SIZE 64
#define PERF_CYCLE_BUFFER 4096		/* perftest: the page size */
#define PERF_CACHE_LINE 64

/* The address message ("keys"). */
struct perf_dest {
	uint32_t lid;
	uint32_t out_reads;		/* reads/atomics it accepts in flight */
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint64_t vaddr;			/* where the peer writes, reads, adds */
	union droce_gid gid;
	uint32_t srqn;
};

/* The bw report, in the sender's printed units (MB/s or Gb/s, Mpps). */
struct perf_report {
	uint64_t size;
	uint64_t iters;
	double bw_peak, bw_avg, msg_rate;
};

/* droce-perf peers only: the client's test parameters. */
struct perf_params {
	char test[16];
	uint32_t size;
	uint32_t iters;
	uint32_t duration;
	uint32_t all_sizes;
	uint32_t atomic;
	uint32_t seed;			/* the data pattern's (perf_pattern) */
};

/*
 * The side channel: perftest's TCP stream, or with -R messages on an RDMA
 * CM connection (perf_cm.c).  write and read move n bytes (the pieces of
 * one message pair up: every read matches the peer's write of the same n);
 * 0 or -errno.  ready: 1 when a read would not wait.
 */
struct perf_chan;
struct perf_chan_ops {
	int (*write)(struct perf_chan *ch, const void *buf, size_t n);
	int (*read)(struct perf_chan *ch, void *buf, size_t n);
	int (*ready)(struct perf_chan *ch);
};

struct perf_chan {
	const struct perf_chan_ops *ops;
	int fd;				/* TCP; -1 with -R */
	void *cm;			/* -R: perf_cm.c's state */
};

/* A channel on a connected TCP socket. */
void perf_chan_tcp(struct perf_chan *ch, int fd);
int perf_chan_write(struct perf_chan *ch, const void *buf, size_t n);
int perf_chan_read(struct perf_chan *ch, void *buf, size_t n);

/*
 * perftest's sequence after the first key exchange: that many barriers
 * (the key message again) before the run, then after it the barriers
 * before the reports, the reports (bw tests), the barriers after, "done".
 */
struct perf_seq {
	int cm_sync_before;		/* -R: zeroed key messages before the
					 * test QP's connection */
	int cm_sync_after;		/* and after it, before the keys */
	int pre_handshakes;
	int handshakes_before_report;
	int reports;
	int handshakes_after;
	int done;
};

void perf_sequence(enum perf_verb verb, enum perf_tst tst, int rdma_cm,
		   struct perf_seq *s);
/* Keep fn(arg) running while waiting on a socket. */
void perf_exch_set_idle(void (*fn)(void *arg), void *arg);
/* Connect / accept one connection: a socket, or -1 (reported). */
int perf_tcp_connect(const char *host, unsigned int port);
int perf_tcp_accept(unsigned int port);
/* perftest's exchange: the client writes then reads, the server reads then
 * writes n bytes.  0 or -errno. */
int perf_xchg(struct perf_chan *ch, int client, const void *mine, void *theirs,
	      size_t n);
void perf_be32_put(uint8_t p[4], uint32_t v);
uint32_t perf_be32_get(const uint8_t p[4]);
void perf_version_format(char msg[PERF_VERSION_SIZE]);
/* 0, or -EINVAL when not a version; *droce: the peer is droce-perf. */
int perf_version_parse(const char msg[PERF_VERSION_SIZE], double *version,
		       int *droce);
void perf_mtu_format(enum droce_mtu mtu, char msg[PERF_MTU_MSG_SIZE]);
int perf_mtu_parse(const char msg[PERF_MTU_MSG_SIZE], enum droce_mtu *mtu);
/* Returns PERF_KEY_MSG_SIZE or -EINVAL. */
int perf_key_format(const struct perf_dest *d, char msg[PERF_KEY_MSG_SIZE]);
int perf_key_parse(const char msg[PERF_KEY_MSG_SIZE], struct perf_dest *d);
/* -R: the key message is perftest's struct pingpong_dest in binary, its
 * integers big endian (perf_exch.c).  parse: 0 or -EINVAL. */
void perf_cm_key_format(const struct perf_dest *d,
			uint8_t msg[PERF_CM_MSG_SIZE]);
int perf_cm_key_parse(const uint8_t msg[PERF_CM_MSG_SIZE], struct perf_dest *d);
/* One perftest barrier: the key message (len bytes) exchanged again. */
int perf_handshake(struct perf_chan *ch, int client, const void *key,
		   size_t len);
void perf_report_encode(const struct perf_report *r,
			uint8_t out[PERF_REPORT_FIELDS][8]);
void perf_report_decode(const uint8_t in[PERF_REPORT_FIELDS][8],
			struct perf_report *r);
int perf_report_xchg(struct perf_chan *ch, int client, const struct perf_report *mine,
		     struct perf_report *theirs);
/* The closing "done": write, then read (the peer may have closed). */
int perf_done(struct perf_chan *ch);
int perf_params_format(const struct perf_params *p,
		       char msg[PERF_PARAMS_MSG_SIZE]);
int perf_params_parse(const char msg[PERF_PARAMS_MSG_SIZE],
		      struct perf_params *p);
int perf_params_xchg(struct perf_chan *ch, int client, const struct perf_params *mine,
		     struct perf_params *theirs);
/* droce-perf peers only: framed messages, a 4-character tag, 4 zero bytes
 * and a 64-bit big-endian value.  0 or -errno. */
int perf_send_msg(struct perf_chan *ch, const char tag[4], uint64_t val);
int perf_recv_msg(struct perf_chan *ch, const char tag[4], uint64_t *val);
/* 1 when something can be read without blocking, else 0. */
int perf_msg_ready(struct perf_chan *ch);
/* Both sides: send SYNC, receive SYNC.  0 or -errno. */
int perf_barrier(struct perf_chan *ch);

/* ---- perf_ctx.c -------------------------------------------------------- */
struct perf_ctx {
	const struct perf_opts *o;
	struct droce_context *context;
	struct droce_pd *pd;
	struct droce_mr *mr;
	struct droce_cq *scq;
	struct droce_cq *rcq;
	struct droce_qp *qp;
	uint8_t *buf;			/* buf_size bytes, registered */
	size_t buf_size;
	unsigned int send_flags;	/* DROCE_SEND_INLINE when -I allows */
	uint32_t max_inline;
	struct perf_chan chan;		/* the side channel */
	struct perf_cm *cm;		/* -R: the CM's ids (perf_cm.c) */
	int client;			/* has a server name */
	int peer_droce;			/* the peer is droce-perf, not perftest */
	uint32_t cycle_buffer;		/* negotiated (the larger page size) */
	uint32_t seed;			/* droce-perf peers: the pattern's */
	enum droce_mtu mtu;		/* negotiated path MTU (the smaller) */
	char key[PERF_KEY_MSG_SIZE];	/* our key message (every barrier) */
	size_t key_len;			/* its size: text, or -R's binary */
	struct perf_dest my, rem;
	enum droce_mtu active_mtu;
	uint32_t rx_posted;		/* receives outstanding (send tests) */
	struct perf_report report;	/* the client's last result */
	uint64_t count;			/* operations of the last size */
};

int perf_ctx_open(struct perf_ctx *c, struct droce_device *dev,
		  const struct perf_opts *o);
/* PD, MR (buf_size bytes), CQs, QP in INIT (with -R the CM creates the QP:
 * perf_cm_connect_test).  0 or 1 (reported). */
int perf_ctx_alloc(struct perf_ctx *c, size_t buf_size);
/* The QP's creation attributes, and our key message's fields once it
 * exists. */
void perf_ctx_qp_attr(const struct perf_ctx *c, struct droce_qp_init_attr *ia);
void perf_ctx_set_dest(struct perf_ctx *c);
int perf_ctx_wait_port(struct perf_ctx *c);
int perf_ctx_connect(struct perf_ctx *c);
void perf_ctx_close(struct perf_ctx *c);
/* Post helpers: 0 or a positive errno. */
int perf_post_recv(struct perf_ctx *c, uint64_t wr_id, uint32_t len);
/* Operation number seq: atomics' operand (FETCH_AND_ADD adds 1;
 * CMP_AND_SWAP seq -> seq+1) and result slot. */
int perf_post_op(struct perf_ctx *c, uint64_t wr_id, uint32_t size,
		 int signaled, uint64_t seq);
/* The local halves: what we send from; what the peer targets. */
uint8_t *perf_tx_half(struct perf_ctx *c);
uint8_t *perf_rx_half(struct perf_ctx *c);
size_t perf_half_size(const struct perf_ctx *c);
/* Poll a CQ; a failed completion is reported and returns -1. */
int perf_poll(struct perf_ctx *c, struct droce_cq *cq, int n,
	      struct droce_wc *wc);
/* Monotonic nanoseconds. */
uint64_t perf_now_ns(void);
/* A byte the peer must overwrite (in no fill droce-perf checks for). */
#define PERF_UNWRITTEN 0xa5
/* Byte i of the data pattern of a size (write/send/read verification
 * between droce-perfs), for the client's seed: drawn afresh each run. */
uint8_t perf_pattern(uint32_t seed, size_t i, uint32_t size);

/* ---- perf_cm.c (-R) ----------------------------------------------------- */
/*
 * perftest's rdma_cm mode: the side channel is itself an RDMA CM
 * connection to port -p (perftest's messages, each one SEND), then a
 * second connection to the same port carries the test QP, its attributes
 * from the CM.  0 or 1 (reported).
 */
/* The CM on the context, the channel's resources; a server listens. */
int perf_cm_open(struct perf_ctx *c);
int perf_cm_connect_chan(struct perf_ctx *c);
int perf_cm_connect_test(struct perf_ctx *c);
void perf_cm_close(struct perf_ctx *c);

/* ---- perf_bw.c / perf_lat.c -------------------------------------------- */
/* One size.  0, or 1 after a reported failure. */
int perf_run_bw(struct perf_ctx *c, uint32_t size);
int perf_run_lat(struct perf_ctx *c, uint32_t size);
/* Before a size's barrier: the server's buffer as the checks expect it. */
void perf_server_prepare(struct perf_ctx *c, uint32_t size);
/* Before a size's barrier, both sides: buffers (the peer may start at
 * once after it). */
void perf_prepare(struct perf_ctx *c, uint32_t size);
/* Server of write/read/atomic tests (and read/atomic_lat): nothing to do
 * during the run; with a droce-perf client wait for its END and verify.
 * 0 or 1. */
int perf_passive_server(struct perf_ctx *c, uint32_t size);
/* The server's check after a run of count operations.  0 or 1. */
int perf_server_verify(struct perf_ctx *c, uint32_t size, uint64_t count);
/* droce-perf peers: the client's END (count, report), the server's VERI
 * (after perf_server_verify when verify; the client's row printed when
 * print_row).  0 or 1. */
int perf_client_end(struct perf_ctx *c, uint64_t count,
		    const struct perf_report *rep);
int perf_server_end(struct perf_ctx *c, uint32_t size, int print_row,
		    int verify);
/* perf_perftest_bytes (perf_peerdata.h) on len bytes at p, within our
 * buffer's size, and "data check passed" with what it found.  0 or 1. */
int perf_check_perftest_bytes(struct perf_ctx *c, const uint8_t *p,
			      uint32_t len, const char *what);
/* "droce-perf: data check passed: what" / "no data check: why" on stderr. */
void perf_check_passed(const char *what);
void perf_no_check(const char *why);
/* Keep rx_depth receives posted.  0 or 1. */
int perf_fill_recv(struct perf_ctx *c);
/* Client-side checks after a read or atomic run of n operations.  0 or 1
 * (reported). */
int perf_check_read(struct perf_ctx *c, uint32_t size);
int perf_check_atomic(struct perf_ctx *c, uint64_t n);
/* The report of a bw result, in o's printed units, and back. */
void perf_report_from_result(const struct perf_opts *o,
			     const struct perf_bw_result *r,
			     struct perf_report *rep);
void perf_result_from_report(const struct perf_opts *o,
			     const struct perf_report *rep,
			     struct perf_bw_result *r);
/* A wait that made no progress for this long is a failure. */
#define PERF_STALL_NS (10ull * 1000000000ull)

#endif /* DROCE_PERF_H */
