/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced_cm.c - lib/cm's GSI relay on droced (app/droced/README.md, "RDMA
 * CM"): droced owns the port's QP1, so a client's CM MADs go out and come
 * in as requests CM on its connection.  Shared by both of droced's client
 * providers (provider_droced, provider_dq).
 */
#include <errno.h>
#include <string.h>

#include "verbs_daemon.h"

int
droced_cm_relay(struct droce_context *ctx, struct droce_cm_relay *r)
{
	struct dmn_msg m = { .type = DMN_CM, .arg = (int32_t)r->op, .key = r->comm_id,
			     .len = r->port };
	int rc;

	(void)ctx;
	if (r->op == DROCE_CM_RELAY_SEND) {
		memcpy(m.u.cm.dgid, r->dgid, 16);
		memcpy(m.u.cm.mad, r->mad, DROCE_CM_MAD_LEN);
	}
	rc = r->op == DROCE_CM_RELAY_OPEN ? verbs_daemon_call_fd(&m, r->fd) :
	     verbs_daemon_call(&m);
	if (rc != 0)
		return -rc;
	if (r->op == DROCE_CM_RELAY_COMM_ID)
		r->comm_id = m.key;
	if (r->op == DROCE_CM_RELAY_RECV && m.len == 1) {
		memcpy(r->sgid, m.u.cm.sgid, 16);
		memcpy(r->dgid, m.u.cm.dgid, 16);
		memcpy(r->mad, m.u.cm.mad, DROCE_CM_MAD_LEN);
	}
	return r->op == DROCE_CM_RELAY_RECV ? (int)(m.len == 1) : 0;
}
