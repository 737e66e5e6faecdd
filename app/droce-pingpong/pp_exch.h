/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_exch.h - the out-of-band address exchange of libibverbs' pingpong
 * examples (ibv_rc_pingpong, ibv_ud_pingpong), byte for byte.
 *
 * Wire format (rdma-core libibverbs/examples/rc_pingpong.c,
 * pp_client_exch_dest / pp_server_exch_dest):
 *   message  = sprintf("%04x:%06x:%06x:%s", lid, qpn, psn, wire_gid)
 *              sent as sizeof "0000:000000:000000:0000...0000" = 52 bytes,
 *              the terminating NUL included;
 *   wire_gid = pingpong.c gid_to_wire_gid: the 16 GID bytes as four
 *              32-bit words, each printed "%08x" after htonl() of the word
 *              loaded from memory, i.e. the GID bytes in order as 32
 *              lowercase hex digits on any host.
 * TCP conversation (client connects to servername:port, default 18515):
 *   client -> server  52-byte message (client's address)
 *   server            moves its QP to RTR/RTS with the client's address
 *   server -> client  52-byte message (server's address)
 *   client -> server  "done" and its NUL: 5 bytes
 * Both sides then close the socket.
 * srq_pingpong.c sends PP_MAX_QP (256) messages where the others send one,
 * whatever its -q: the first -q carry its QPs, the rest are all zeros
 * (its my_dest[] is memset; rdma-core 44's loops run to MAX_QP); each side
 * writes all of its messages before it reads the peer's.
 *
 * No dependency on the droce library: only union droce_gid from droce.h,
 * so the unit test links this file alone.
 */
#ifndef PP_EXCH_H
#define PP_EXCH_H

#include <stddef.h>
#include <stdint.h>

#include <droce.h>

/* The template whose size rc_pingpong uses for every address message. */
#define PP_MSG_TEMPLATE "0000:000000:000000:00000000000000000000000000000000"
#define PP_MSG_SIZE (sizeof PP_MSG_TEMPLATE)	/* 52, NUL included */
#define PP_WIRE_GID_LEN 32			/* hex digits, no NUL */
#define PP_DONE_MSG "done"
#define PP_DONE_SIZE (sizeof PP_DONE_MSG)	/* 5, NUL included */
#define PP_DEFAULT_TCP_PORT 18515

/* struct pingpong_dest of the examples. */
struct pp_dest {
	int lid;
	int qpn;
	int psn;
	union droce_gid gid;
};

/* pingpong.c gid_to_wire_gid: 32 hex digits and a NUL into wire[33]. */
void pp_gid_to_wire(const union droce_gid *gid, char wire[PP_WIRE_GID_LEN + 1]);
/*
 * pingpong.c wire_gid_to_gid, strict: exactly 32 hex digits (either case)
 * are required.  Returns 0 or -EINVAL.
 */
int pp_wire_to_gid(const char *wire, union droce_gid *gid);

/*
 * Build the 52-byte message (NUL-padded to PP_MSG_SIZE).  Returns 0, or
 * -EINVAL when a field does not fit its width (lid > 0xffff, qpn or
 * psn > 0xffffff, negative values): rc_pingpong would overflow its buffer.
 */
int pp_msg_format(const struct pp_dest *dest, char msg[PP_MSG_SIZE]);
/*
 * Parse a received message.  Accepts what rc_pingpong's
 * sscanf("%x:%x:%x:%s") accepts from a well-behaved peer (the exact
 * layout above, hex in either case) and rejects anything else: returns 0
 * or -EINVAL.
 */
int pp_msg_parse(const char msg[PP_MSG_SIZE], struct pp_dest *dest);

/*
 * The server's step between reading the client's addresses (rem[0..n-1])
 * and answering: rc_pingpong moves its QP to RTR/RTS there
 * (pp_connect_ctx).  Returns 0 to continue; anything else aborts the
 * exchange.
 */
typedef int (*pp_server_connect_fn)(void *arg, const struct pp_dest *rem);

/*
 * Keep fn(arg) running while the exchange waits on a socket (droce's
 * progress: the peer resolves our MAC meanwhile).  NULL: block.
 */
void pp_exch_set_idle(void (*fn)(void *arg), void *arg);

/*
 * The conversation on a connected stream socket, n messages each way
 * (1, or PP_MAX_QP for srq_pingpong); messages go to stderr in
 * rc_pingpong's words.  Return 0 with rem[0..n-1] filled, or a negative
 * errno.  The socket is not closed.
 */
int pp_client_exch_fd(int fd, const struct pp_dest *my, struct pp_dest *rem,
		      unsigned int n);
int pp_server_exch_fd(int fd, const struct pp_dest *my, struct pp_dest *rem,
		      unsigned int n, pp_server_connect_fn connect_fn,
		      void *arg);

/*
 * Whole exchanges as rc_pingpong does them: the client resolves servername
 * (any address family) and connects to the first address that answers;
 * the server binds the first passive address for port with SO_REUSEADDR,
 * listens, accepts one connection and closes the listening socket.
 * Return 0 or a negative errno.
 */
int pp_client_exch(const char *servername, unsigned int port,
		   const struct pp_dest *my, struct pp_dest *rem,
		   unsigned int n);
int pp_server_exch(unsigned int port, const struct pp_dest *my,
		   struct pp_dest *rem, unsigned int n,
		   pp_server_connect_fn connect_fn, void *arg);

#endif /* PP_EXCH_H */
