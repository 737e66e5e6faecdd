/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_wire.h - the Communication Management MADs of IBTA chapter 12 (class
 * 0x07, version 2) and the IP-based CM private-data header of annex A11
 * ("RDMA IP CM Service"), as plain structs with encode/decode.  Pure C:
 * no EAL, no transport (unit test: test/unit/cm).
 *
 * Encoders write a whole 256-byte MAD; decoders read one and need every
 * one of its 256 bytes (cm_mad_check), so no field read is out of bounds.
 */
#ifndef DROCE_CM_WIRE_H
#define DROCE_CM_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CM_MAD_LEN 256
#define CM_MAD_HDR_LEN 24
#define CM_DATA_LEN (CM_MAD_LEN - CM_MAD_HDR_LEN)

/* MAD common header (IBTA 13.4.3) values of the CM class */
#define CM_MAD_BASE_VERSION 1
#define CM_MAD_CLASS 0x07
#define CM_MAD_CLASS_VERSION 2
#define CM_MAD_METHOD_SEND 0x03

/* the GSI QP's well-known Q_Key (IBTA 13.4.6.1) */
#define CM_GSI_QKEY 0x80010000u

/* CM attribute IDs (IBTA table 104) */
enum cm_attr {
	CM_ATTR_REQ = 0x0010,
	CM_ATTR_MRA = 0x0011,
	CM_ATTR_REJ = 0x0012,
	CM_ATTR_REP = 0x0013,
	CM_ATTR_RTU = 0x0014,
	CM_ATTR_DREQ = 0x0015,
	CM_ATTR_DREP = 0x0016,
	CM_ATTR_SIDR_REQ = 0x0017,
	CM_ATTR_SIDR_REP = 0x0018,
};

/* private data sizes (IBTA 12.6) */
#define CM_REQ_PDATA 92
#define CM_MRA_PDATA 222
#define CM_REJ_PDATA 148
#define CM_REP_PDATA 196
#define CM_RTU_PDATA 224
#define CM_DREQ_PDATA 220
#define CM_DREP_PDATA 224
#define CM_REJ_ARI_LEN 72
#define CM_SIDR_REQ_PDATA 216
#define CM_SIDR_REP_PDATA 136
#define CM_SIDR_REP_INFO_LEN 72

/* REJ reasons used here (IBTA table 112) */
enum cm_rej_reason {
	CM_REJ_NO_QP = 1,
	CM_REJ_NO_RESOURCES = 3,
	CM_REJ_TIMEOUT = 4,
	CM_REJ_INVALID_SERVICE_ID = 8,
	CM_REJ_INVALID_TRANSPORT = 9,
	CM_REJ_STALE_CONN = 10,
	CM_REJ_CONSUMER = 28,
	CM_REJ_UNSUPPORTED_VERSION = 31,
};

/* REJ's "Message REJected" and MRA's "Message MRAed" (2 bits) */
enum cm_msg_ref {
	CM_MSG_REQ = 0,
	CM_MSG_REP = 1,
	CM_MSG_OTHER = 2,
};

struct cm_mad_hdr {
	uint8_t method;
	uint16_t status;
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
};

/* a REQ's primary path (RoCEv2: the GIDs are the IP addresses) */
struct cm_path {
	uint16_t local_lid;
	uint16_t remote_lid;
	uint8_t local_gid[16];
	uint8_t remote_gid[16];
	uint32_t flow_label;		/* 20 bits */
	uint8_t packet_rate;		/* 6 bits */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;			/* 4 bits */
	bool subnet_local;
	uint8_t local_ack_timeout;	/* 5 bits */
};

/* IBTA 12.6.5 */
struct cm_req {
	uint32_t local_comm_id;
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn;		/* 24 bits */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t remote_cm_timeout;	/* 5 bits: 4.096 us * 2^t */
	uint8_t transport;		/* 2 bits: 0 RC, 1 UC */
	bool flow_control;
	uint32_t starting_psn;		/* 24 bits */
	uint8_t local_cm_timeout;	/* 5 bits */
	uint8_t retry_count;		/* 3 bits */
	uint16_t pkey;
	uint8_t path_mtu;		/* 4 bits, enum droce_mtu */
	uint8_t rnr_retry;		/* 3 bits */
	uint8_t max_cm_retries;		/* 4 bits */
	bool srq;
	struct cm_path primary;
	uint8_t pdata[CM_REQ_PDATA];
};

/* IBTA 12.6.6 */
struct cm_mra {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_mraed;		/* enum cm_msg_ref */
	uint8_t service_timeout;	/* 5 bits */
	uint8_t pdata[CM_MRA_PDATA];
};

/* IBTA 12.6.7 */
struct cm_rej {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_rejected;		/* enum cm_msg_ref */
	uint8_t ari_len;		/* 7 bits */
	uint16_t reason;		/* enum cm_rej_reason */
	uint8_t ari[CM_REJ_ARI_LEN];
	uint8_t pdata[CM_REJ_PDATA];
};

/* IBTA 12.6.8 */
struct cm_rep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn;		/* 24 bits */
	uint32_t starting_psn;		/* 24 bits */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;	/* 5 bits */
	uint8_t failover;		/* 2 bits */
	bool flow_control;
	uint8_t rnr_retry;		/* 3 bits */
	bool srq;
	uint64_t local_ca_guid;
	uint8_t pdata[CM_REP_PDATA];
};

/* IBTA 12.6.9 RTU, 12.6.11 DREP: the comm IDs and private data */
struct cm_rtu {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t pdata[CM_RTU_PDATA];
};

/* IBTA 12.6.10 */
struct cm_dreq {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;		/* 24 bits */
	uint8_t pdata[CM_DREQ_PDATA];
};

#define cm_drep cm_rtu

/* IBTA 12.11.1 (table 121) */
struct cm_sidr_req {
	uint32_t request_id;
	uint16_t pkey;
	uint64_t service_id;
	uint8_t pdata[CM_SIDR_REQ_PDATA];
};

/* SIDR_REP's status (IBTA 12.11.2, table 122) */
enum cm_sidr_status {
	CM_SIDR_OK = 0,
	CM_SIDR_UNSUPPORTED = 1,	/* no such service ID */
	CM_SIDR_REJECT = 2,		/* the service provider rejected it */
	CM_SIDR_NO_QP = 3,
	CM_SIDR_REDIRECT = 4,
	CM_SIDR_UNSUPPORTED_VERSION = 5,
};

/* IBTA 12.11.2 (table 122) */
struct cm_sidr_rep {
	uint32_t request_id;		/* the SIDR_REQ's */
	uint8_t status;			/* enum cm_sidr_status */
	uint8_t info_len;
	uint32_t qpn;			/* 24 bits */
	uint64_t service_id;
	uint32_t qkey;
	uint8_t info[CM_SIDR_REP_INFO_LEN];	/* ClassPortInfo on REDIRECT */
	uint8_t pdata[CM_SIDR_REP_PDATA];
};

/* annex A11: the header rdma_cm puts at the start of a REQ's private data */
#define CM_IP_HDR_LEN 36
#define CM_IP_HDR_VERSION 0
/* service IDs of the RDMA IP CM service: 0x0000000001 | port space | port */
#define CM_PS_TCP 0x0106u
#define CM_PS_UDP 0x0111u
#define CM_PS_IPOIB 0x0002u

struct cm_ip_hdr {
	uint8_t ip_version;		/* 4 or 6 */
	uint16_t src_port;
	/* IPv6 as is; IPv4 in the last 4 bytes, the first 12 zero */
	uint8_t src[16];
	uint8_t dst[16];
};

/* The MAD header of mad (len bytes): 0, or -EINVAL when it is not a CM
 * MAD of class version 2 or shorter than CM_MAD_LEN. */
int cm_mad_check(const uint8_t *mad, size_t len, struct cm_mad_hdr *hdr);
/* Zero mad[CM_MAD_LEN] and write the header (base/class/version set). */
void cm_mad_put_hdr(uint8_t *mad, const struct cm_mad_hdr *hdr);

/* Messages: put writes the attribute data of a zeroed, header-filled MAD;
 * get reads it from one cm_mad_check accepted. */
void cm_req_put(uint8_t *mad, const struct cm_req *m);
void cm_req_get(const uint8_t *mad, struct cm_req *m);
void cm_mra_put(uint8_t *mad, const struct cm_mra *m);
void cm_mra_get(const uint8_t *mad, struct cm_mra *m);
void cm_rej_put(uint8_t *mad, const struct cm_rej *m);
void cm_rej_get(const uint8_t *mad, struct cm_rej *m);
void cm_rep_put(uint8_t *mad, const struct cm_rep *m);
void cm_rep_get(const uint8_t *mad, struct cm_rep *m);
void cm_rtu_put(uint8_t *mad, const struct cm_rtu *m);
void cm_rtu_get(const uint8_t *mad, struct cm_rtu *m);
void cm_dreq_put(uint8_t *mad, const struct cm_dreq *m);
void cm_dreq_get(const uint8_t *mad, struct cm_dreq *m);
void cm_sidr_req_put(uint8_t *mad, const struct cm_sidr_req *m);
void cm_sidr_req_get(const uint8_t *mad, struct cm_sidr_req *m);
void cm_sidr_rep_put(uint8_t *mad, const struct cm_sidr_rep *m);
void cm_sidr_rep_get(const uint8_t *mad, struct cm_sidr_rep *m);

/* Annex A11 header at p[CM_IP_HDR_LEN]: get returns 0, or -EINVAL for
 * another header version or an IP version other than 4 and 6. */
void cm_ip_hdr_put(uint8_t *p, const struct cm_ip_hdr *h);
int cm_ip_hdr_get(const uint8_t *p, struct cm_ip_hdr *h);

/* 4.096 us * 2^t in nanoseconds (t 0..31: CM response timeouts, 12.7.27) */
uint64_t cm_timeout_ns(uint8_t t);

#endif /* DROCE_CM_WIRE_H */
