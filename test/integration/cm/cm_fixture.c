/* SPDX-License-Identifier: BSD-3-Clause */
/* The RDMA CM tests' helpers (cm_fixture.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "cm_fixture.h"
#include "tp_fixture.h"

struct droce_rdma_event_channel *
cmfx_channel(void)
{
	struct droce_rdma_event_channel *ch = droce_rdma_create_event_channel();

	assert_non_null(ch);
	assert_int_equal(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);
	return ch;
}

void
cmfx_sin(struct sockaddr_in *sin, uint8_t host, uint16_t port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	sin->sin_addr.s_addr = htonl(198u << 24 | 18u << 16 | host);
}

struct droce_rdma_cm_event *
cmfx_expect(struct droce_rdma_event_channel *ch, enum droce_rdma_cm_event_type type)
{
	struct droce_rdma_cm_event *ev = NULL;
	double end = fx_now() + 10;

	while (droce_rdma_get_cm_event(ch, &ev) != 0) {
		assert_int_equal(errno, EAGAIN);
		if (fx_now() > end)
			fail_msg("no %s within 10 s", droce_rdma_event_str(type));
	}
	if (ev->event != type)
		fail_msg("got %s (status %d), expected %s", droce_rdma_event_str(ev->event),
			 ev->status, droce_rdma_event_str(type));
	return ev;
}

void
cmfx_spin(struct droce_rdma_event_channel *a, struct droce_rdma_event_channel *b,
	  double seconds)
{
	struct droce_rdma_cm_event *ev;
	double end = fx_now() + seconds;

	while (fx_now() < end) {
		if (droce_rdma_get_cm_event(a, &ev) == 0 || droce_rdma_get_cm_event(b, &ev) == 0)
			fail_msg("unexpected %s", droce_rdma_event_str(ev->event));
	}
}

void
cmfx_ack(struct droce_rdma_cm_event *ev)
{
	assert_int_equal(droce_rdma_ack_cm_event(ev), 0);
}
