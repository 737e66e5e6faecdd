/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdmacm_addrinfo.c - rdma_getaddrinfo on getaddrinfo(3), as librdmacm
 * without ib_acm: the first address found, as the destination (or with
 * RAI_PASSIVE the source), RC over RDMA_PS_TCP unless the hints say
 * otherwise.  Errors are getaddrinfo's (EAI_*), as librdmacm returns them.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rdmacm_private.h"

static struct sockaddr *
addr_dup(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *copy = malloc(len);

	if (copy != NULL)
		memcpy(copy, sa, len);
	return copy;
}

static void
gai_hints(const struct rdma_addrinfo *hints, struct addrinfo *ai)
{
	memset(ai, 0, sizeof(*ai));
	ai->ai_socktype = SOCK_STREAM;
	ai->ai_protocol = IPPROTO_TCP;
	if (hints == NULL)
		return;
	if (hints->ai_flags & RAI_PASSIVE)
		ai->ai_flags |= AI_PASSIVE;
	if (hints->ai_flags & RAI_NUMERICHOST)
		ai->ai_flags |= AI_NUMERICHOST;
	if (hints->ai_flags & RAI_FAMILY)
		ai->ai_family = hints->ai_family;
	if (hints->ai_port_space == RDMA_PS_UDP) {
		ai->ai_socktype = SOCK_DGRAM;
		ai->ai_protocol = IPPROTO_UDP;
	}
}

int
rdma_getaddrinfo(const char *node, const char *service,
		 const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *rai;
	struct addrinfo want, *ai;
	struct sockaddr **slot;
	bool src_ok = true;
	int rc;

	if (res == NULL)
		return EAI_FAIL;
	gai_hints(hints, &want);
	rc = getaddrinfo(node, service, &want, &ai);
	if (rc != 0)
		return rc;
	rai = calloc(1, sizeof(*rai));
	if (rai == NULL) {
		freeaddrinfo(ai);
		return EAI_MEMORY;
	}
	rai->ai_flags = hints != NULL ? hints->ai_flags : 0;
	rai->ai_family = ai->ai_family;
	rai->ai_qp_type = hints != NULL && hints->ai_qp_type != 0 ? hints->ai_qp_type : IBV_QPT_RC;
	rai->ai_port_space = hints != NULL && hints->ai_port_space != 0 ?
			     hints->ai_port_space : RDMA_PS_TCP;
	if (rai->ai_flags & RAI_PASSIVE) {
		slot = &rai->ai_src_addr;
		rai->ai_src_len = ai->ai_addrlen;
	} else {
		slot = &rai->ai_dst_addr;
		rai->ai_dst_len = ai->ai_addrlen;
	}
	*slot = addr_dup(ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (*slot != NULL && hints != NULL && hints->ai_src_addr != NULL &&
	    !(rai->ai_flags & RAI_PASSIVE)) {
		rai->ai_src_addr = addr_dup(hints->ai_src_addr, hints->ai_src_len);
		rai->ai_src_len = hints->ai_src_len;
		src_ok = rai->ai_src_addr != NULL;
	}
	if (*slot == NULL || !src_ok) {
		rdma_freeaddrinfo(rai);
		return EAI_MEMORY;
	}
	*res = rai;
	return 0;
}

void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res != NULL) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = next;
	}
}
