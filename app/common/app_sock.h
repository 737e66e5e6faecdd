/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The out-of-band TCP plumbing droce's tools share.  While a tool waits on
 * its peer, droce must keep running: the peer resolves our MAC (ARP/ND)
 * during the handshake, and only a polled stack answers.  So every wait
 * here calls an idle hook (droce_progress): back to back once a peer is
 * connected (it may be waiting for our responses: READ, atomics, ACKs),
 * about once a millisecond while a server waits for its peer to connect.
 */
#ifndef DROCE_APP_SOCK_H
#define DROCE_APP_SOCK_H

#include <stddef.h>
#include <sys/types.h>

/* fn(arg) runs while a socket has nothing to read; NULL: plain blocking. */
void app_sock_set_idle(void (*fn)(void *arg), void *arg);
/* One turn of the idle hook (for the tools' own wait loops). */
void app_sock_idle(void);
/* Wait until fd is readable (or has an error), running the idle hook
 * back to back (busy polling: a connected peer may be waiting on us). */
void app_sock_wait_readable(int fd);
/* The same for a listening socket, with the hook about once a millisecond:
 * a server may wait long for its client, and need not spin a core for it. */
void app_sock_wait_connection(int listen_fd);
/* Read n bytes: returns how many (fewer only at end of stream) or -errno. */
ssize_t app_sock_read_full(int fd, void *buf, size_t n);
/* Write n bytes (no SIGPIPE): 0 or -errno. */
int app_sock_write_full(int fd, const void *buf, size_t n);

#endif /* DROCE_APP_SOCK_H */
