/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_wire.c - CM MAD layouts (IBTA 12.6, SIDR 12.11) and the annex A11 IP
 * CM header.
 * Offsets are from the start of the attribute data (MAD byte 24).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "cm_wire.h"

static uint64_t
be_get(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void
be_put(uint8_t *p, unsigned int n, uint64_t v)
{
	while (n-- != 0) {
		p[n] = (uint8_t)v;
		v >>= 8;
	}
}

int
cm_mad_check(const uint8_t *mad, size_t len, struct cm_mad_hdr *hdr)
{
	if (len < CM_MAD_LEN || mad[0] != CM_MAD_BASE_VERSION ||
	    mad[1] != CM_MAD_CLASS || mad[2] != CM_MAD_CLASS_VERSION)
		return -EINVAL;
	hdr->method = mad[3];
	hdr->status = (uint16_t)be_get(mad + 4, 2);
	hdr->tid = be_get(mad + 8, 8);
	hdr->attr_id = (uint16_t)be_get(mad + 16, 2);
	hdr->attr_mod = (uint32_t)be_get(mad + 20, 4);
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
	be_put(mad + 4, 2, hdr->status);
	be_put(mad + 8, 8, hdr->tid);
	be_put(mad + 16, 2, hdr->attr_id);
	be_put(mad + 20, 4, hdr->attr_mod);
}

/*
 * ---- the messages (IBTA 12.6.5 - 12.6.11) ------------------------------
 *
 * Each message is one table of its fields, read by both directions: a
 * field is `bits` wide at bit `shift` (from the least significant end) of
 * the `bytes`-byte big-endian word at `off`, or, with `bytes` 0, `len`
 * bytes copied as they are.  Fields that share a word are written into the
 * zeroed MAD (cm_mad_put_hdr) by read-modify-write.
 */
struct cm_field {
	uint16_t off;
	uint8_t bytes;
	uint8_t shift;
	uint8_t bits;
	uint8_t msize;		/* the member's size: 1 (also bool), 2, 4 or 8 */
	uint16_t member;	/* offsetof in the message's structure */
	uint16_t len;		/* a byte string's length */
};

#define CM_FIELD(type, m, o, nbytes, sh, nbits)					\
	{ .off = (o), .bytes = (nbytes), .shift = (sh), .bits = (nbits),	\
	  .msize = sizeof(((type *)0)->m), .member = offsetof(type, m) }
#define CM_BYTES(type, m, o)							\
	{ .off = (o), .member = offsetof(type, m), .len = sizeof(((type *)0)->m) }
#define CM_IDS(type)								\
	CM_FIELD(type, local_comm_id, 0, 4, 0, 32),				\
	CM_FIELD(type, remote_comm_id, 4, 4, 0, 32)
/* The primary path of a REQ, at 52 (12.6.5 table 99) */
#define CM_PATH(type, p)							\
	CM_FIELD(type, p.local_lid, 52, 2, 0, 16),				\
	CM_FIELD(type, p.remote_lid, 54, 2, 0, 16),				\
	CM_BYTES(type, p.local_gid, 56),					\
	CM_BYTES(type, p.remote_gid, 72),					\
	CM_FIELD(type, p.flow_label, 88, 4, 12, 20),				\
	CM_FIELD(type, p.packet_rate, 88, 4, 0, 6),				\
	CM_FIELD(type, p.traffic_class, 92, 1, 0, 8),				\
	CM_FIELD(type, p.hop_limit, 93, 1, 0, 8),				\
	CM_FIELD(type, p.sl, 94, 1, 4, 4),					\
	CM_FIELD(type, p.subnet_local, 94, 1, 3, 1),				\
	CM_FIELD(type, p.local_ack_timeout, 95, 1, 3, 5)

static const struct cm_field req_fields[] = {
	CM_FIELD(struct cm_req, local_comm_id, 0, 4, 0, 32),
	CM_FIELD(struct cm_req, service_id, 8, 8, 0, 64),
	CM_FIELD(struct cm_req, local_ca_guid, 16, 8, 0, 64),
	CM_FIELD(struct cm_req, local_qkey, 28, 4, 0, 32),
	CM_FIELD(struct cm_req, local_qpn, 32, 3, 0, 24),
	CM_FIELD(struct cm_req, responder_resources, 35, 1, 0, 8),
	CM_FIELD(struct cm_req, initiator_depth, 39, 1, 0, 8),
	CM_FIELD(struct cm_req, remote_cm_timeout, 43, 1, 3, 5),
	CM_FIELD(struct cm_req, transport, 43, 1, 1, 2),
	CM_FIELD(struct cm_req, flow_control, 43, 1, 0, 1),
	CM_FIELD(struct cm_req, starting_psn, 44, 3, 0, 24),
	CM_FIELD(struct cm_req, local_cm_timeout, 47, 1, 3, 5),
	CM_FIELD(struct cm_req, retry_count, 47, 1, 0, 3),
	CM_FIELD(struct cm_req, pkey, 48, 2, 0, 16),
	CM_FIELD(struct cm_req, path_mtu, 50, 1, 4, 4),
	CM_FIELD(struct cm_req, rnr_retry, 50, 1, 0, 3),
	CM_FIELD(struct cm_req, max_cm_retries, 51, 1, 4, 4),
	CM_FIELD(struct cm_req, srq, 51, 1, 3, 1),
	CM_PATH(struct cm_req, primary),
	CM_BYTES(struct cm_req, pdata, 140),
};

static const struct cm_field mra_fields[] = {
	CM_IDS(struct cm_mra),
	CM_FIELD(struct cm_mra, msg_mraed, 8, 1, 6, 2),
	CM_FIELD(struct cm_mra, service_timeout, 9, 1, 3, 5),
	CM_BYTES(struct cm_mra, pdata, 10),
};

static const struct cm_field rej_fields[] = {
	CM_IDS(struct cm_rej),
	CM_FIELD(struct cm_rej, msg_rejected, 8, 1, 6, 2),
	CM_FIELD(struct cm_rej, ari_len, 9, 1, 1, 7),
	CM_FIELD(struct cm_rej, reason, 10, 2, 0, 16),
	CM_BYTES(struct cm_rej, ari, 12),
	CM_BYTES(struct cm_rej, pdata, 84),
};

static const struct cm_field rep_fields[] = {
	CM_IDS(struct cm_rep),
	CM_FIELD(struct cm_rep, local_qkey, 8, 4, 0, 32),
	CM_FIELD(struct cm_rep, local_qpn, 12, 3, 0, 24),
	CM_FIELD(struct cm_rep, starting_psn, 20, 3, 0, 24),
	CM_FIELD(struct cm_rep, responder_resources, 24, 1, 0, 8),
	CM_FIELD(struct cm_rep, initiator_depth, 25, 1, 0, 8),
	CM_FIELD(struct cm_rep, target_ack_delay, 26, 1, 3, 5),
	CM_FIELD(struct cm_rep, failover, 26, 1, 1, 2),
	CM_FIELD(struct cm_rep, flow_control, 26, 1, 0, 1),
	CM_FIELD(struct cm_rep, rnr_retry, 27, 1, 5, 3),
	CM_FIELD(struct cm_rep, srq, 27, 1, 4, 1),
	CM_FIELD(struct cm_rep, local_ca_guid, 28, 8, 0, 64),
	CM_BYTES(struct cm_rep, pdata, 36),
};

/* RTU and DREP */
static const struct cm_field rtu_fields[] = {
	CM_IDS(struct cm_rtu),
	CM_BYTES(struct cm_rtu, pdata, 8),
};

static const struct cm_field dreq_fields[] = {
	CM_IDS(struct cm_dreq),
	CM_FIELD(struct cm_dreq, remote_qpn, 8, 3, 0, 24),
	CM_BYTES(struct cm_dreq, pdata, 12),
};

/* IBTA 12.11: SIDR_REQ (table 121) and SIDR_REP (table 122) */
static const struct cm_field sidr_req_fields[] = {
	CM_FIELD(struct cm_sidr_req, request_id, 0, 4, 0, 32),
	CM_FIELD(struct cm_sidr_req, pkey, 4, 2, 0, 16),
	CM_FIELD(struct cm_sidr_req, service_id, 8, 8, 0, 64),
	CM_BYTES(struct cm_sidr_req, pdata, 16),
};

static const struct cm_field sidr_rep_fields[] = {
	CM_FIELD(struct cm_sidr_rep, request_id, 0, 4, 0, 32),
	CM_FIELD(struct cm_sidr_rep, status, 4, 1, 0, 8),
	CM_FIELD(struct cm_sidr_rep, info_len, 5, 1, 0, 8),
	CM_FIELD(struct cm_sidr_rep, qpn, 8, 4, 8, 24),
	CM_FIELD(struct cm_sidr_rep, service_id, 12, 8, 0, 64),
	CM_FIELD(struct cm_sidr_rep, qkey, 20, 4, 0, 32),
	CM_BYTES(struct cm_sidr_rep, info, 24),
	CM_BYTES(struct cm_sidr_rep, pdata, 96),
};

static uint64_t
member_get(const void *msg, const struct cm_field *f)
{
	const uint8_t *m = (const uint8_t *)msg + f->member;
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (f->msize) {
	case 1:
		memcpy(&v8, m, 1);
		return v8;
	case 2:
		memcpy(&v16, m, 2);
		return v16;
	case 4:
		memcpy(&v32, m, 4);
		return v32;
	default:
		memcpy(&v64, m, 8);
		return v64;
	}
}

static void
member_set(void *msg, const struct cm_field *f, uint64_t v)
{
	uint8_t *m = (uint8_t *)msg + f->member;
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (f->msize) {
	case 1:
		memcpy(m, &v8, 1);	/* a bool's field is one bit: 0 or 1 */
		break;
	case 2:
		memcpy(m, &v16, 2);
		break;
	case 4:
		memcpy(m, &v32, 4);
		break;
	default:
		memcpy(m, &v, 8);
		break;
	}
}

static uint64_t
field_mask(const struct cm_field *f)
{
	return f->bits == 64 ? UINT64_MAX : (UINT64_C(1) << f->bits) - 1;
}

static void
fields_put(uint8_t *mad, const struct cm_field *f, size_t n, const void *msg)
{
	uint8_t *d = mad + CM_MAD_HDR_LEN;

	for (; n != 0; n--, f++) {
		uint64_t mask = field_mask(f) << f->shift;
		uint64_t word;

		if (f->bytes == 0) {
			memcpy(d + f->off, (const uint8_t *)msg + f->member, f->len);
			continue;
		}
		word = be_get(d + f->off, f->bytes) & ~mask;
		word |= (member_get(msg, f) << f->shift) & mask;
		be_put(d + f->off, f->bytes, word);
	}
}

static void
fields_get(const uint8_t *mad, const struct cm_field *f, size_t n, void *msg)
{
	const uint8_t *d = mad + CM_MAD_HDR_LEN;

	for (; n != 0; n--, f++) {
		if (f->bytes == 0)
			memcpy((uint8_t *)msg + f->member, d + f->off, f->len);
		else
			member_set(msg, f, be_get(d + f->off, f->bytes) >> f->shift & field_mask(f));
	}
}

#define CM_DIM(a) (sizeof(a) / sizeof((a)[0]))
#define CM_MSG_CODEC(kind)							\
	void cm_##kind##_put(uint8_t *mad, const struct cm_##kind *m)		\
	{									\
		fields_put(mad, kind##_fields, CM_DIM(kind##_fields), m);	\
	}									\
	void cm_##kind##_get(const uint8_t *mad, struct cm_##kind *m)		\
	{									\
		fields_get(mad, kind##_fields, CM_DIM(kind##_fields), m);	\
	}

CM_MSG_CODEC(req)
CM_MSG_CODEC(mra)
CM_MSG_CODEC(rej)
CM_MSG_CODEC(rep)
CM_MSG_CODEC(rtu)
CM_MSG_CODEC(dreq)
CM_MSG_CODEC(sidr_req)
CM_MSG_CODEC(sidr_rep)

/* ---- annex A11 ------------------------------------------------------------ */

void
cm_ip_hdr_put(uint8_t *p, const struct cm_ip_hdr *h)
{
	p[0] = CM_IP_HDR_VERSION;
	p[1] = (uint8_t)(h->ip_version << 4);
	be_put(p + 2, 2, h->src_port);
	memcpy(p + 4, h->src, 16);
	memcpy(p + 20, h->dst, 16);
}

int
cm_ip_hdr_get(const uint8_t *p, struct cm_ip_hdr *h)
{
	h->ip_version = p[1] >> 4;
	if (p[0] != CM_IP_HDR_VERSION || (h->ip_version != 4 && h->ip_version != 6))
		return -EINVAL;
	h->src_port = (uint16_t)be_get(p + 2, 2);
	memcpy(h->src, p + 4, 16);
	memcpy(h->dst, p + 20, 16);
	return 0;
}

uint64_t
cm_timeout_ns(uint8_t t)
{
	return 4096ull << (t & 0x1f);
}
