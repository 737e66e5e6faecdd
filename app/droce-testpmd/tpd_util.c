/* SPDX-License-Identifier: BSD-3-Clause */
/* tpd_util.c - names of states, statuses and opcodes; GIDs; the idle loop. */
#define ALLOW_EXPERIMENTAL_API	/* cmdline_get_rdline is experimental in 22.11 */
#include <arpa/inet.h>
#include <strings.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmdline.h>
#include <cmdline_rdline.h>

#include "tpd.h"

static const char *const qp_state_names[] = {
	[DROCE_QPS_RESET] = "RESET", [DROCE_QPS_INIT] = "INIT",
	[DROCE_QPS_RTR] = "RTR", [DROCE_QPS_RTS] = "RTS",
	[DROCE_QPS_SQD] = "SQD", [DROCE_QPS_SQE] = "SQE",
	[DROCE_QPS_ERR] = "ERR", [DROCE_QPS_UNKNOWN] = "UNKNOWN",
};

const char *
tpd_qp_state_name(enum droce_qp_state s)
{
	return (unsigned int)s < sizeof(qp_state_names) / sizeof(qp_state_names[0]) ?
		qp_state_names[s] : "UNKNOWN";
}

int
tpd_qp_state_parse(const char *s, enum droce_qp_state *out)
{
	for (unsigned int i = 0; i < DROCE_QPS_UNKNOWN; i++)
		if (strcasecmp(s, qp_state_names[i]) == 0) {
			*out = (enum droce_qp_state)i;
			return 0;
		}
	tpd_err("unknown QP state '%s' (RESET, INIT, RTR, RTS, SQD, SQE, ERR)", s);
	return -1;
}

const char *
tpd_qp_type_name(enum droce_qp_type t)
{
	switch (t) {
	case DROCE_QPT_RC: return "RC";
	case DROCE_QPT_UC: return "UC";
	case DROCE_QPT_UD: return "UD";
	}
	return "?";
}

/* The enum's own names (DROCE_WC_ without the prefix), as the API spells them. */
static const char *const wc_status_names[] = {
	"SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR",
	"LOC_PROT_ERR", "WR_FLUSH_ERR", "MW_BIND_ERR", "BAD_RESP_ERR",
	"LOC_ACCESS_ERR", "REM_INV_REQ_ERR", "REM_ACCESS_ERR", "REM_OP_ERR",
	"RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR",
	"REM_INV_RD_REQ_ERR", "REM_ABORT_ERR", "INV_EECN_ERR",
	"INV_EEC_STATE_ERR", "FATAL_ERR", "RESP_TIMEOUT_ERR", "GENERAL_ERR",
	"TM_ERR", "TM_RNDV_INCOMPLETE",
};
#define N_STATUS (sizeof(wc_status_names) / sizeof(wc_status_names[0]))

const char *
tpd_wc_status_name(enum droce_wc_status s)
{
	return (unsigned int)s < N_STATUS ? wc_status_names[s] : "UNKNOWN";
}

int
tpd_wc_status_parse(const char *s, enum droce_wc_status *out)
{
	for (unsigned int i = 0; i < N_STATUS; i++)
		if (strcasecmp(s, wc_status_names[i]) == 0) {
			*out = (enum droce_wc_status)i;
			return 0;
		}
	tpd_err("unknown completion status '%s' (SUCCESS, REM_ACCESS_ERR, ...)", s);
	return -1;
}

const char *
tpd_wc_opcode_name(enum droce_wc_opcode op)
{
	switch (op) {
	case DROCE_WC_SEND: return "SEND";
	case DROCE_WC_RDMA_WRITE: return "RDMA_WRITE";
	case DROCE_WC_RDMA_READ: return "RDMA_READ";
	case DROCE_WC_COMP_SWAP: return "COMP_SWAP";
	case DROCE_WC_FETCH_ADD: return "FETCH_ADD";
	case DROCE_WC_BIND_MW: return "BIND_MW";
	case DROCE_WC_LOCAL_INV: return "LOCAL_INV";
	case DROCE_WC_TSO: return "TSO";
	case DROCE_WC_FLUSH: return "FLUSH";
	case DROCE_WC_ATOMIC_WRITE: return "ATOMIC_WRITE";
	case DROCE_WC_RECV: return "RECV";
	case DROCE_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	}
	return "UNKNOWN";
}

int
tpd_mtu_parse(const char *s, enum droce_mtu *out)
{
	static const char *const v[] = { "256", "512", "1024", "2048", "4096" };

	for (unsigned int i = 0; i < 5; i++)
		if (strcmp(s, v[i]) == 0) {
			*out = (enum droce_mtu)(DROCE_MTU_256 + i);
			return 0;
		}
	tpd_err("bad MTU '%s' (256, 512, 1024, 2048 or 4096)", s);
	return -1;
}

void
tpd_gid_str(const union droce_gid *gid, char *buf, size_t n)
{
	if (inet_ntop(AF_INET6, gid->raw, buf, (socklen_t)n) == NULL)
		snprintf(buf, n, "?");
}

/* IPv6 text, or IPv4 dotted (becomes the IPv4-mapped GID). */
int
tpd_gid_parse(const char *s, union droce_gid *gid)
{
	struct in_addr a4;

	memset(gid, 0, sizeof(*gid));
	if (inet_pton(AF_INET6, s, gid->raw) == 1)
		return 0;
	if (inet_pton(AF_INET, s, &a4) == 1) {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &a4, 4);
		return 0;
	}
	tpd_err("bad GID '%s' (an IPv6 address, or IPv4 for a mapped GID)", s);
	return -1;
}

uint64_t
tpd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
tpd_progress_all(void)
{
	for (int i = 0; i < tpd.ndev; i++)
		if (tpd.dev[i].ctx != NULL)
			droce_progress(tpd.dev[i].ctx);
}

void
tpd_idle(void)
{
	tpd_progress_all();
	tpd_engines_step();
}

void
tpd_idle_for(unsigned int ms)
{
	uint64_t end = tpd_now_ns() + (uint64_t)ms * 1000000u;

	while (tpd_now_ns() < end) {
		tpd_progress_all();
		if (!tpd_engines_step())
			usleep(50);
	}
}

static bool
async_output(void)
{
	return tpd.interactive && !tpd.in_command && tpd.cl != NULL;
}

void
tpd_async_begin(void)
{
	if (async_output()) {
		fputs("\r\033[K", stdout);
		fflush(stdout);
	}
}

void
tpd_async_end(void)
{
	if (async_output()) {
		fflush(stdout);
		rdline_redisplay(cmdline_get_rdline(tpd.cl));
	}
}
