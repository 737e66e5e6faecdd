/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pingpong.h - droce-pingpong / droce-ud-pingpong / droce-srq-pingpong:
 * libibverbs' ibv_rc_pingpong, ibv_ud_pingpong and ibv_srq_pingpong on
 * droce's verbs (include/droce.h).  The SRQ program is the RC one with
 * num_qp QPs whose receives all come from one SRQ.
 *
 *   pp_exch.c  address messages and the TCP conversation (no device)
 *   pp_opts.c  command line (no device)
 *   pp_chk.c   the -c buffer pattern (no device)
 *   pp_ctx.c   resources: pp_init_ctx, pp_connect_ctx, posting, pp_close_ctx
 *   pp_run.c   the ping-pong loop (parse_single_wc) and the report
 *   pp_main.c  program flow shared by the programs
 *   rc_main.c, ud_main.c, srq_main.c  the three main()s
 */
#ifndef PINGPONG_H
#define PINGPONG_H

#include <stddef.h>
#include <stdio.h>

#include <droce.h>

#include "pp_exch.h"
#include "pp_opts.h"

/* wr_id values of the examples. */
enum {
	PINGPONG_RECV_WRID = 1,
	PINGPONG_SEND_WRID = 2,
};

/* ud_pingpong: receive buffers start with the 40-byte GRH. */
#define PP_UD_GRH_LEN 40
/* ud_pingpong's Q_Key. */
#define PP_UD_QKEY 0x11111111u

/* struct pingpong_context of the examples. */
struct pp_ctx {
	enum pp_kind kind;
	struct droce_context *context;
	struct droce_pd *pd;
	struct droce_mr *mr;
	struct droce_cq *cq;
	struct droce_srq *srq;		/* SRQ: every QP's receives */
	struct droce_qp *qp[PP_MAX_QP];	/* num_qp of them */
	int num_qp;			/* 1, or SRQ's -q */
	struct droce_ah *ah;		/* UD */
	char *buf;			/* RC: size bytes; UD: 40 + size */
	char *rbuf;			/* receives: buf, or buf + buf_len */
	size_t buf_len;
	int size;
	int send_flags;
	int rx_depth;
	int pending[PP_MAX_QP];		/* per QP, PINGPONG_*_WRID bits */
	int page_size;			/* sysconf(_SC_PAGESIZE), for -c */
	uint32_t remote_qpn;		/* UD: destination of every send */
	struct droce_port_attr portinfo;
};

/* pp_ctx.c */
struct pp_ctx *pp_init_ctx(struct droce_device *dev, const struct pp_opts *o,
			   int page_size);
/*
 * Move every QP i to RTR/RTS with my[i].psn and dest[i] (RC, SRQ) or
 * RTR/RTS + address handle (UD).  0 or 1.
 */
int pp_connect_ctx(struct pp_ctx *ctx, const struct pp_opts *o,
		   const struct pp_dest *my, const struct pp_dest *dest);
/* Post n receives (to the SRQ if there is one); returns how many. */
int pp_post_recv(struct pp_ctx *ctx, int n);
/* A send on QP qp_index: 0 or a positive errno. */
int pp_post_send(struct pp_ctx *ctx, int qp_index);
/* Destroy everything; 0, or 1 after the first failure (reported). */
int pp_close_ctx(struct pp_ctx *ctx);

/* pp_chk.c: the -c pattern of rc_pingpong/ud_pingpong. */
/* The examples' memset of the whole buffer: rc/ud_pingpong's 0x7b, and
 * srq_pingpong's 0 (rdma-core 44's binary: memset(buf, 0, size)). */
#define PP_CHK_FILL 0x7b
#define PP_CHK_FILL_SRQ 0x00
unsigned char pp_chk_fill_byte(enum pp_kind kind);
/* A -c client's receive buffer before any data: in no pattern byte. */
#define PP_CHK_UNWRITTEN 0xa5
void pp_chk_fill(char *buf, size_t size, size_t page_size);
/*
 * Checks every byte of buf against a -c client's buffer (page starts 0,
 * the rest fill: pp_chk_fill_byte).  Prints "invalid data in page %d" per
 * bad page and one line saying what was verified (or how it failed) to
 * out; returns the number of wrong bytes.
 */
size_t pp_chk_verify(const char *buf, size_t size, size_t page_size,
		     unsigned char fill, FILE *out);

/* pp_run.c */
struct pp_result {
	int scnt;
	int rcnt;
	float usec;
};
/* The loop; 0, or 1 after an error (reported). */
int pp_run(struct pp_ctx *ctx, const struct pp_opts *o, int routs,
	   struct pp_result *res);
/* The two lines of the examples' report. */
void pp_report(const struct pp_opts *o, const struct pp_result *res,
	       FILE *out);

/* pp_main.c */
int pp_main(int argc, char **argv, enum pp_kind kind);

#endif /* PINGPONG_H */
