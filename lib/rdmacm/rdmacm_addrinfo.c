/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdmacm_addrinfo.c - rdma_getaddrinfo on getaddrinfo(3), as librdmacm
 * without ib_acm: the first address found, as the destination (or with
 * RAI_PASSIVE the source), RC over RDMA_PS_TCP unless the hints say
 * otherwise; without node and service, the hints' addresses.  Errors are
 * getaddrinfo's (EAI_*), as librdmacm returns them.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rdmacm_private.h"

/* *to becomes a copy of sa (len bytes): 0 or EAI_MEMORY */
static int
addr_copy(struct sockaddr **to, socklen_t *to_len, const struct sockaddr *sa, socklen_t len)
{
	*to = malloc(len);
	if (*to == NULL)
		return EAI_MEMORY;
	memcpy(*to, sa, len);
	*to_len = len;
	return 0;
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

/* node and/or service through getaddrinfo(3): its first address */
static int
rai_resolve(const char *node, const char *service, const struct rdma_addrinfo *hints,
	    struct rdma_addrinfo *rai)
{
	struct addrinfo want, *ai;
	int rc;

	gai_hints(hints, &want);
	rc = getaddrinfo(node, service, &want, &ai);
	if (rc != 0)
		return rc;
	rai->ai_flags = hints != NULL ? hints->ai_flags : 0;
	rai->ai_family = ai->ai_family;
	/* as librdmacm's: a datagram socket type (RDMA_PS_UDP's) is UD */
	rai->ai_qp_type = hints != NULL && hints->ai_qp_type != 0 ? hints->ai_qp_type :
			  ai->ai_socktype == SOCK_DGRAM ? IBV_QPT_UD : IBV_QPT_RC;
	rai->ai_port_space = hints != NULL && hints->ai_port_space != 0 ?
			     hints->ai_port_space : RDMA_PS_TCP;
	if (rai->ai_flags & RAI_PASSIVE)
		rc = addr_copy(&rai->ai_src_addr, &rai->ai_src_len, ai->ai_addr, ai->ai_addrlen);
	else
		rc = addr_copy(&rai->ai_dst_addr, &rai->ai_dst_len, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return rc;
}

/* Neither node nor service: the hints' own (libfabric's verbs provider
 * passes its peer's address so), as librdmacm. */
static int
rai_from_hints(const struct rdma_addrinfo *hints, struct rdma_addrinfo *rai)
{
	rai->ai_flags = hints->ai_flags;
	rai->ai_family = hints->ai_family;
	rai->ai_qp_type = hints->ai_qp_type;
	rai->ai_port_space = hints->ai_port_space;
	if (hints->ai_dst_len == 0)
		return 0;
	return addr_copy(&rai->ai_dst_addr, &rai->ai_dst_len, hints->ai_dst_addr,
			 hints->ai_dst_len);
}

int
rdma_getaddrinfo(const char *node, const char *service,
		 const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *rai;
	int rc;

	if (res == NULL)
		return EAI_FAIL;
	if (node == NULL && service == NULL && hints == NULL) {
		errno = EINVAL;
		return -1;
	}
	rai = calloc(1, sizeof(*rai));
	if (rai == NULL)
		return EAI_MEMORY;
	rc = node != NULL || service != NULL ? rai_resolve(node, service, hints, rai) :
					       rai_from_hints(hints, rai);
	/* the hints' source where none was found */
	if (rc == 0 && rai->ai_src_len == 0 && hints != NULL && hints->ai_src_len != 0)
		rc = addr_copy(&rai->ai_src_addr, &rai->ai_src_len, hints->ai_src_addr,
			       hints->ai_src_len);
	if (rc != 0) {
		rdma_freeaddrinfo(rai);
		return rc;
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
