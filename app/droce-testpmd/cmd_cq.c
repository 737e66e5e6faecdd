/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_cq.c - completion queues (create/destroy/show) and poll, which
 * prints completions: wr_id, status (the API's enum name and droce's text),
 * opcode, byte_len, imm / invalidated rkey, QPN.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tpd.h"

static int
cq_create(struct tpd_cmd *c)
{
	uint64_t depth, dev;
	struct tpd_cq *q;
	int i;

	if (tpd_pos_u64(c, 1, DROCE_MAX_CQE, &depth, "DEPTH") != 0 ||
	    tpd_kv_u64(c, "dev", 0, TPD_MAX_DEV - 1, &dev) != 0 ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	if ((int)dev >= tpd.ndev || tpd.dev[dev].ctx == NULL) {
		tpd_err("no such device %" PRIu64, dev);
		return -1;
	}
	i = tpd_free_slot((void *const *)tpd.cq, "cq");
	if (i < 0)
		return -1;
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		tpd_err("out of memory");
		return -1;
	}
	q->cq = droce_create_cq(tpd.dev[dev].ctx, (int)depth, NULL, NULL, 0);
	if (q->cq == NULL) {
		tpd_err("droce_create_cq: %s", strerror(errno));
		free(q);
		return -1;
	}
	q->dev = (int)dev;
	q->depth = (int)depth;
	tpd.cq[i] = q;
	printf("cq %d created (dev %d, %d entries)\n", i, q->dev, q->cq->cqe);
	return 0;
}

static int
cq_destroy(struct tpd_cmd *c)
{
	struct tpd_cq *q = tpd_get_cq(c, 1);
	int rc, i;

	if (q == NULL || tpd_kv_check_used(c) != 0)
		return -1;
	i = tpd_handle(c->pos[1]);
	rc = droce_destroy_cq(q->cq);
	if (rc != 0) {
		tpd_err("droce_destroy_cq: %s%s", strerror(rc),
			rc == EBUSY ? " (QPs still use it)" : "");
		return -1;
	}
	free(q);
	tpd.cq[i] = NULL;
	printf("cq %d destroyed\n", i);
	return 0;
}

static int
cq_show(struct tpd_cmd *c)
{
	if (tpd_kv_check_used(c) != 0)
		return -1;
	for (int i = 0; i < TPD_MAX_OBJ; i++)
		if (tpd.cq[i] != NULL)
			printf("cq %d: dev %d entries %d\n", i, tpd.cq[i]->dev,
			       tpd.cq[i]->cq->cqe);
	return 0;
}

static const struct tpd_subcmd cq_cmds[] = {
	{ "create", cq_create, "cq create DEPTH [dev=N]", "create a completion queue" },
	{ "destroy", cq_destroy, "cq destroy CQ", "destroy (refused while QPs use it)" },
	{ "show", cq_show, "cq show", "list CQs" },
	{ NULL, NULL, NULL, NULL },
};
const struct tpd_group tpd_group_cq = { "cq", "completion queues", cq_cmds };

/* ---- poll ---------------------------------------------------------------- */

static void
wc_print(int cq, const struct droce_wc *wc)
{
	printf("wc cq=%d wr_id=%" PRIu64 " status=%s (%s) opcode=%s byte_len=%" PRIu32
	       " qpn=0x%06" PRIx32, cq, wc->wr_id, tpd_wc_status_name(wc->status),
	       droce_wc_status_str(wc->status), tpd_wc_opcode_name(wc->opcode),
	       wc->byte_len, wc->qp_num);
	if (wc->wc_flags & DROCE_WC_WITH_IMM)
		printf(" imm=0x%08" PRIx32, ntohl(wc->imm_data));
	if (wc->wc_flags & DROCE_WC_WITH_INV)
		printf(" inv_rkey=0x%08" PRIx32, wc->invalidated_rkey);
	if (wc->opcode & DROCE_WC_RECV)
		printf(" src_qp=0x%06" PRIx32, wc->src_qp);
	printf("\n");
}

/*
 * poll CQ [n=N] [timeout=MS] [status=S] [opcode=O]: wait (running the
 * devices and engines) for N completions, print them.  Fails when fewer
 * arrive in time or one has another status / opcode than asked.  n=0:
 * print what is there now.
 */
static int
poll_cmd(struct tpd_cmd *c)
{
	const char *st_s = tpd_kv_str(c, "status"), *op_s = tpd_kv_str(c, "opcode");
	struct tpd_cq *q = tpd_get_cq(c, 0 + 1);
	enum droce_wc_status want = DROCE_WC_SUCCESS;
	uint64_t n, timeout, got = 0, deadline;
	int bad = 0, cqi;

	if (q == NULL || tpd_kv_u64(c, "n", 1, 4096, &n) != 0 ||
	    tpd_kv_u64(c, "timeout", 2000, 3600000, &timeout) != 0 ||
	    (st_s != NULL && tpd_wc_status_parse(st_s, &want) != 0) ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	cqi = tpd_handle(c->pos[1]);
	deadline = tpd_now_ns() + timeout * 1000000u;
	do {
		struct droce_wc wc[16];
		int k = droce_poll_cq(q->cq, 16 < n - got || n == 0 ? 16 : (int)(n - got), wc);

		if (k < 0) {
			tpd_err("droce_poll_cq failed");
			return -1;
		}
		for (int i = 0; i < k; i++) {
			wc_print(cqi, &wc[i]);
			if (st_s != NULL && wc[i].status != want)
				bad++;
			if (op_s != NULL && strcmp(op_s, tpd_wc_opcode_name(wc[i].opcode)) != 0)
				bad++;
		}
		got += (uint64_t)k;
		if (n == 0 && k == 0)
			break;
		if (k == 0) {
			tpd_idle();
			usleep(20);
		}
	} while ((n == 0 || got < n) && tpd_now_ns() < deadline);
	if (n != 0 && got < n) {
		tpd_err("cq %d: %" PRIu64 " of %" PRIu64 " completions in %" PRIu64 " ms",
			cqi, got, n, timeout);
		return -1;
	}
	if (bad) {
		tpd_err("cq %d: %d completion(s) not %s%s%s", cqi, bad,
			st_s != NULL ? st_s : "", st_s && op_s ? "/" : "",
			op_s != NULL ? op_s : "");
		return -1;
	}
	if (n == 0 && got == 0)
		printf("cq %d: empty\n", cqi);
	return 0;
}

static const struct tpd_subcmd poll_cmds[] = {
	{ "", poll_cmd, "poll CQ [n=N] [timeout=MS] [status=SUCCESS|REM_ACCESS_ERR|...] [opcode=RDMA_WRITE|RECV|...]",
	  "wait for N completions (default 1, timeout 2000 ms) and print them; n=0: print what is there; "
	  "fails on too few, or on another status/opcode than asked" },
	{ NULL, NULL, NULL, NULL },
};
const struct tpd_group tpd_group_poll = { "poll", "poll and print completions", poll_cmds };
