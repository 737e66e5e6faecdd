/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pingpong.h - droce-pingpong / droce-ud-pingpong: libibverbs'
 * ibv_rc_pingpong and ibv_ud_pingpong on droce's verbs (include/droce.h).
 *
 *   pp_exch.c  address messages and the TCP conversation (no device)
 *   pp_opts.c  command line (no device)
 *   pp_chk.c   the -c buffer pattern (no device)
 *   pp_ctx.c   resources: pp_init_ctx, pp_connect_ctx, posting, pp_close_ctx
 *   pp_run.c   the ping-pong loop (parse_single_wc) and the report
 *   pp_main.c  program flow shared by both programs
 *   rc_main.c, ud_main.c  the two main()s
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
	struct droce_qp *qp;
	struct droce_ah *ah;		/* UD */
	char *buf;			/* RC: size bytes; UD: 40 + size */
	char *rbuf;			/* receives: buf, or buf + buf_len */
	size_t buf_len;
	int size;
	int send_flags;
	int rx_depth;
	int pending;
	int page_size;			/* sysconf(_SC_PAGESIZE), for -c */
	uint32_t remote_qpn;		/* UD: destination of every send */
	struct droce_port_attr portinfo;
};

/* pp_ctx.c */
struct pp_ctx *pp_init_ctx(struct droce_device *dev, const struct pp_opts *o,
			   int page_size);
/* Move to RTR/RTS (RC) or RTR/RTS + address handle (UD).  0 or 1. */
int pp_connect_ctx(struct pp_ctx *ctx, const struct pp_opts *o, int my_psn,
		   const struct pp_dest *dest);
/* Post n receives; returns how many were posted. */
int pp_post_recv(struct pp_ctx *ctx, int n);
/* 0 or a positive errno. */
int pp_post_send(struct pp_ctx *ctx);
/* Destroy everything; 0, or 1 after the first failure (reported). */
int pp_close_ctx(struct pp_ctx *ctx);

/* pp_chk.c: the -c pattern of rc_pingpong/ud_pingpong. */
/* The examples' memset of the whole buffer. */
#define PP_CHK_FILL 0x7b
/* A -c client's receive buffer before any data: in no pattern byte. */
#define PP_CHK_UNWRITTEN 0xa5
void pp_chk_fill(char *buf, size_t size, size_t page_size);
/*
 * Checks every byte of buf against a -c client's buffer (page starts 0,
 * the rest PP_CHK_FILL).  Prints "invalid data in page %d" per bad page
 * and one line saying what was verified (or how it failed) to out;
 * returns the number of wrong bytes.
 */
size_t pp_chk_verify(const char *buf, size_t size, size_t page_size,
		     FILE *out);

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
