/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_wire.c - CM MAD layouts (IBTA 12.6) and the annex A11 IP CM header.
 * Offsets are from the start of the attribute data (MAD byte 24).
 */
#include <errno.h>
#include <string.h>

#include "cm_wire.h"

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | get24(p + 1);
}

static uint64_t
get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	put24(p + 1, v);
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

int
cm_mad_check(const uint8_t *mad, size_t len, struct cm_mad_hdr *hdr)
{
	if (len < CM_MAD_LEN || mad[0] != CM_MAD_BASE_VERSION ||
	    mad[1] != CM_MAD_CLASS || mad[2] != CM_MAD_CLASS_VERSION)
		return -EINVAL;
	hdr->method = mad[3];
	hdr->status = get16(mad + 4);
	hdr->tid = get64(mad + 8);
	hdr->attr_id = get16(mad + 16);
	hdr->attr_mod = get32(mad + 20);
	return 0;
}

void
cm_mad_put_hdr(uint8_t *mad, const struct cm_mad_hdr *hdr)
{
	memset(mad, 0, CM_MAD_LEN);
	mad[0] = CM_MAD_BASE_VERSION;
	mad[1] = CM_MAD_CLASS;
	mad[2] = CM_MAD_CLASS_VERSION;
	mad[3] = hdr->method;
	put16(mad + 4, hdr->status);
	put64(mad + 8, hdr->tid);
	put16(mad + 16, hdr->attr_id);
	put32(mad + 20, hdr->attr_mod);
}

/* ---- REQ (12.6.5) ------------------------------------------------------- */

static void
path_put(uint8_t *d, const struct cm_path *p)
{
	put16(d + 0, p->local_lid);
	put16(d + 2, p->remote_lid);
	memcpy(d + 4, p->local_gid, 16);
	memcpy(d + 20, p->remote_gid, 16);
	put32(d + 36, (p->flow_label & 0xfffff) << 12 | (p->packet_rate & 0x3f));
	d[40] = p->traffic_class;
	d[41] = p->hop_limit;
	d[42] = (uint8_t)((p->sl & 0xf) << 4 | (p->subnet_local ? 0x08 : 0));
	d[43] = (uint8_t)((p->local_ack_timeout & 0x1f) << 3);
}

static void
path_get(const uint8_t *d, struct cm_path *p)
{
	uint32_t fl = get32(d + 36);

	p->local_lid = get16(d + 0);
	p->remote_lid = get16(d + 2);
	memcpy(p->local_gid, d + 4, 16);
	memcpy(p->remote_gid, d + 20, 16);
	p->flow_label = fl >> 12;
	p->packet_rate = fl & 0x3f;
	p->traffic_class = d[40];
	p->hop_limit = d[41];
	p->sl = d[42] >> 4;
	p->subnet_local = (d[42] & 0x08) != 0;
	p->local_ack_timeout = d[43] >> 3;
}

void
cm_req_put(uint8_t *mad, const struct cm_req *m)
{
	uint8_t *d = mad + CM_MAD_HDR_LEN;

	put32(d + 0, m->local_comm_id);
	put64(d + 8, m->service_id);
	put64(d + 16, m->local_ca_guid);
	put32(d + 28, m->local_qkey);
	put24(d + 32, m->local_qpn);
	d[35] = m->responder_resources;
	d[39] = m->initiator_depth;
	d[43] = (uint8_t)((m->remote_cm_timeout & 0x1f) << 3 |
			  (m->transport & 0x3) << 1 | (m->flow_control ? 1 : 0));
	put24(d + 44, m->starting_psn);
	d[47] = (uint8_t)((m->local_cm_timeout & 0x1f) << 3 | (m->retry_count & 0x7));
	put16(d + 48, m->pkey);
	d[50] = (uint8_t)((m->path_mtu & 0xf) << 4 | (m->rnr_retry & 0x7));
	d[51] = (uint8_t)((m->max_cm_retries & 0xf) << 4 | (m->srq ? 0x08 : 0));
	path_put(d + 52, &m->primary);
	memcpy(d + 140, m->pdata, CM_REQ_PDATA);
}

void
cm_req_get(const uint8_t *mad, struct cm_req *m)
{
	const uint8_t *d = mad + CM_MAD_HDR_LEN;

	m->local_comm_id = get32(d + 0);
	m->service_id = get64(d + 8);
	m->local_ca_guid = get64(d + 16);
	m->local_qkey = get32(d + 28);
	m->local_qpn = get24(d + 32);
	m->responder_resources = d[35];
	m->initiator_depth = d[39];
	m->remote_cm_timeout = d[43] >> 3;
	m->transport = (d[43] >> 1) & 0x3;
	m->flow_control = (d[43] & 1) != 0;
	m->starting_psn = get24(d + 44);
	m->local_cm_timeout = d[47] >> 3;
	m->retry_count = d[47] & 0x7;
	m->pkey = get16(d + 48);
	m->path_mtu = d[50] >> 4;
	m->rnr_retry = d[50] & 0x7;
	m->max_cm_retries = d[51] >> 4;
	m->srq = (d[51] & 0x08) != 0;
	path_get(d + 52, &m->primary);
	memcpy(m->pdata, d + 140, CM_REQ_PDATA);
}

/* ---- the messages that start with both comm IDs -------------------------- */

static void
ids_put(uint8_t *d, uint32_t local, uint32_t remote)
{
	put32(d, local);
	put32(d + 4, remote);
}

void
cm_mra_put(uint8_t *mad, const struct cm_mra *m)
{
	uint8_t *d = mad + CM_MAD_HDR_LEN;

	ids_put(d, m->local_comm_id, m->remote_comm_id);
	d[8] = (uint8_t)((m->msg_mraed & 0x3) << 6);
	d[9] = (uint8_t)((m->service_timeout & 0x1f) << 3);
	memcpy(d + 10, m->pdata, CM_MRA_PDATA);
}

void
cm_mra_get(const uint8_t *mad, struct cm_mra *m)
{
	const uint8_t *d = mad + CM_MAD_HDR_LEN;

	m->local_comm_id = get32(d);
	m->remote_comm_id = get32(d + 4);
	m->msg_mraed = d[8] >> 6;
	m->service_timeout = d[9] >> 3;
	memcpy(m->pdata, d + 10, CM_MRA_PDATA);
}

void
cm_rej_put(uint8_t *mad, const struct cm_rej *m)
{
	uint8_t *d = mad + CM_MAD_HDR_LEN;

	ids_put(d, m->local_comm_id, m->remote_comm_id);
	d[8] = (uint8_t)((m->msg_rejected & 0x3) << 6);
	d[9] = (uint8_t)((m->ari_len & 0x7f) << 1);
	put16(d + 10, m->reason);
	memcpy(d + 12, m->ari, CM_REJ_ARI_LEN);
	memcpy(d + 84, m->pdata, CM_REJ_PDATA);
}

void
cm_rej_get(const uint8_t *mad, struct cm_rej *m)
{
	const uint8_t *d = mad + CM_MAD_HDR_LEN;

	m->local_comm_id = get32(d);
	m->remote_comm_id = get32(d + 4);
	m->msg_rejected = d[8] >> 6;
	m->ari_len = d[9] >> 1;
	m->reason = get16(d + 10);
	memcpy(m->ari, d + 12, CM_REJ_ARI_LEN);
	memcpy(m->pdata, d + 84, CM_REJ_PDATA);
}

void
cm_rep_put(uint8_t *mad, const struct cm_rep *m)
{
	uint8_t *d = mad + CM_MAD_HDR_LEN;

	ids_put(d, m->local_comm_id, m->remote_comm_id);
	put32(d + 8, m->local_qkey);
	put24(d + 12, m->local_qpn);
	put24(d + 20, m->starting_psn);
	d[24] = m->responder_resources;
	d[25] = m->initiator_depth;
	d[26] = (uint8_t)((m->target_ack_delay & 0x1f) << 3 |
			  (m->failover & 0x3) << 1 | (m->flow_control ? 1 : 0));
	d[27] = (uint8_t)((m->rnr_retry & 0x7) << 5 | (m->srq ? 0x10 : 0));
	put64(d + 28, m->local_ca_guid);
	memcpy(d + 36, m->pdata, CM_REP_PDATA);
}

void
cm_rep_get(const uint8_t *mad, struct cm_rep *m)
{
	const uint8_t *d = mad + CM_MAD_HDR_LEN;

	m->local_comm_id = get32(d);
	m->remote_comm_id = get32(d + 4);
	m->local_qkey = get32(d + 8);
	m->local_qpn = get24(d + 12);
	m->starting_psn = get24(d + 20);
	m->responder_resources = d[24];
	m->initiator_depth = d[25];
	m->target_ack_delay = d[26] >> 3;
	m->failover = (d[26] >> 1) & 0x3;
	m->flow_control = (d[26] & 1) != 0;
	m->rnr_retry = d[27] >> 5;
	m->srq = (d[27] & 0x10) != 0;
	m->local_ca_guid = get64(d + 28);
	memcpy(m->pdata, d + 36, CM_REP_PDATA);
}

void
cm_rtu_put(uint8_t *mad, const struct cm_rtu *m)
{
	uint8_t *d = mad + CM_MAD_HDR_LEN;

	ids_put(d, m->local_comm_id, m->remote_comm_id);
	memcpy(d + 8, m->pdata, CM_RTU_PDATA);
}

void
cm_rtu_get(const uint8_t *mad, struct cm_rtu *m)
{
	const uint8_t *d = mad + CM_MAD_HDR_LEN;

	m->local_comm_id = get32(d);
	m->remote_comm_id = get32(d + 4);
	memcpy(m->pdata, d + 8, CM_RTU_PDATA);
}

void
cm_dreq_put(uint8_t *mad, const struct cm_dreq *m)
{
	uint8_t *d = mad + CM_MAD_HDR_LEN;

	ids_put(d, m->local_comm_id, m->remote_comm_id);
	put24(d + 8, m->remote_qpn);
	memcpy(d + 12, m->pdata, CM_DREQ_PDATA);
}

void
cm_dreq_get(const uint8_t *mad, struct cm_dreq *m)
{
	const uint8_t *d = mad + CM_MAD_HDR_LEN;

	m->local_comm_id = get32(d);
	m->remote_comm_id = get32(d + 4);
	m->remote_qpn = get24(d + 8);
	memcpy(m->pdata, d + 12, CM_DREQ_PDATA);
}

/* ---- annex A11 ------------------------------------------------------------ */

void
cm_ip_hdr_put(uint8_t *p, const struct cm_ip_hdr *h)
{
	p[0] = CM_IP_HDR_VERSION;
	p[1] = (uint8_t)(h->ip_version << 4);
	put16(p + 2, h->src_port);
	memcpy(p + 4, h->src, 16);
	memcpy(p + 20, h->dst, 16);
}

int
cm_ip_hdr_get(const uint8_t *p, struct cm_ip_hdr *h)
{
	h->ip_version = p[1] >> 4;
	if (p[0] != CM_IP_HDR_VERSION || (h->ip_version != 4 && h->ip_version != 6))
		return -EINVAL;
	h->src_port = get16(p + 2);
	memcpy(h->src, p + 4, 16);
	memcpy(h->dst, p + 20, 16);
	return 0;
}

uint64_t
cm_timeout_ns(uint8_t t)
{
	return 4096ull << (t & 0x1f);
}
