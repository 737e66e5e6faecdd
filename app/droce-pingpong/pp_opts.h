/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_opts.h - command line of droce-pingpong (ibv_rc_pingpong's) and
 * droce-ud-pingpong (ibv_ud_pingpong's).  No dependency on the droce
 * library, so the unit test links it alone.
 */
#ifndef PP_OPTS_H
#define PP_OPTS_H

#include <stdio.h>

#include <droce.h>

enum pp_kind {
	PP_RC,		/* ibv_rc_pingpong */
	PP_UD,		/* ibv_ud_pingpong */
	PP_SRQ,		/* ibv_srq_pingpong: RC, num_qp QPs on one SRQ */
};

/* srq_pingpong.c MAX_QP: the size of its address exchange (pp_exch.h). */
#define PP_MAX_QP 256

struct pp_opts {
	enum pp_kind kind;
	const char *prog;	/* for messages */
	const char *ib_devname;	/* -d; NULL: first device */
	const char *servername;	/* NULL: server */
	unsigned int port;	/* -p, TCP, 18515 */
	int ib_port;		/* -i, 1 */
	unsigned int size;	/* -s, RC 4096, UD 1024 */
	enum droce_mtu mtu;	/* -m, RC only, 1024 */
	unsigned int rx_depth;	/* -r, 500 */
	unsigned int iters;	/* -n, 1000 */
	int sl;			/* -l, 0 */
	int use_event;		/* -e: accepted, droce polls */
	int gidx;		/* -g, 0 (see pp_usage) */
	int validate_buf;	/* -c */
	unsigned int num_qp;	/* -q, SRQ only, 16; 1 otherwise */
};

/* pp_parse_opts() results. */
enum {
	PP_OPTS_RUN = 0,
	PP_OPTS_HELP = 1,	/* usage printed: exit 0 */
	PP_OPTS_USAGE = -1,	/* bad command line, usage printed: exit 1 */
	PP_OPTS_UNSUPPORTED = -2, /* an ibverbs feature droce lacks: exit 1 */
	PP_OPTS_INVALID = -3,	/* srq_pingpong's -q/-r checks failed: exit 1 */
};

/* Defaults of the kind (as the libibverbs example). */
void pp_opts_default(struct pp_opts *o, enum pp_kind kind, const char *prog);
/*
 * Parse program options: argv[0] is the program name (getopt_long, state
 * reset first).  Messages go to out (usage) and err (errors).
 */
int pp_parse_opts(struct pp_opts *o, int argc, char **argv, FILE *out,
		  FILE *err);
void pp_usage(const struct pp_opts *o, FILE *out);

/* "256".."4096" to DROCE_MTU_*; 0 when not a valid path MTU. */
enum droce_mtu pp_mtu_to_enum(long mtu);

/*
 * Before droce_init: 1 when the program options (after "--", or all
 * arguments when there is no "--" and the first is -h/--help) ask for
 * help, so usage can be printed without starting EAL.
 */
int pp_wants_help(int argc, char **argv);

#endif /* PP_OPTS_H */
