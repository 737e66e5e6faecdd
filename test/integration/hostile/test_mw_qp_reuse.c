/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A type-2 memory window does not survive its QP (IBTA Vol. 1 10.6.7.2:
 * a type-2 window is bound to the QP it was bound through, C10-72, and
 * is invalidated when that QP is destroyed).  The raw peer binds nothing
 * itself: droce's own QP X binds the window (DROCE_WR_BIND_MW), the peer
 * WRITEs through it, X is destroyed, QPs are created until one gets X's
 * QPN again, and the same WRITE to that QP must be NAKed with Remote
 * Access Error (9.7.5.2.4) and leave the memory untouched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "raw_peer.h"

#define WIN_OFF 1024
#define WIN_LEN 1024
#define LEN 64

static struct raw_peer rp;
static uint8_t data[LEN];

/* Bind mw over buf[WIN_OFF, +WIN_LEN) to qp with REMOTE_WRITE; the status. */
static enum droce_wc_status
bind_type2(struct droce_qp *qp, struct droce_mw *mw, uint32_t rkey)
{
	struct droce_send_wr wr, *bad;
	struct droce_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 77;
	wr.opcode = DROCE_WR_BIND_MW;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = rp.mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)rp.buf + WIN_OFF;
	wr.bind_mw.bind_info.length = WIN_LEN;
	wr.bind_mw.bind_info.mw_access_flags = DROCE_ACCESS_REMOTE_WRITE;
	assert_int_equal(droce_post_send(qp, &wr, &bad), 0);
	assert_int_equal(rp_poll_cq(&rp, &wc, 1, 2.0), 1);
	assert_int_equal(wc.wr_id, 77);
	assert_int_equal(wc.opcode, DROCE_WC_BIND_MW);
	return wc.status;
}

/* The raw peer's WRITE ONLY of data into the window, and droce's answer. */
static void
write_through(struct droce_qp *qp, uint32_t rkey, struct rp_frame *f)
{
	struct roce_pkt p = rp_pkt(&rp, qp, ROCE_OP_RDMA_WRITE_ONLY, RP_PSN);

	p.reth.va = (uintptr_t)rp.buf + WIN_OFF;
	p.reth.rkey = rkey;
	p.reth.len = LEN;
	rp_send(&rp, &p, data, LEN, false);
	assert_int_equal(rp_collect(&rp, f, 1, 1.0), 1);
	assert_int_equal(f->err, ROCE_PARSE_OK);
	assert_int_equal(f->pkt.opcode, ROCE_OP_ACKNOWLEDGE);
	assert_int_equal(f->pkt.psn, RP_PSN);
}

/* A new QP with QP number qpn (QPNs come back after all others did). */
static struct droce_qp *
qp_with_qpn(uint32_t qpn)
{
	for (int i = 0; i < 1 << 16; i++) {
		struct droce_qp *qp = rp_new_qp(&rp, DROCE_QPT_RC);

		if (qp->qp_num == qpn)
			return qp;
		rp_destroy_qp(qp);
	}
	fail_msg("QPN 0x%x never handed out again", qpn);
	return NULL;
}

static void
test_type2_window_dies_with_its_qp(void **state)
{
	struct droce_mw *mw;
	struct droce_qp *x, *y, *z;
	struct rp_frame f;
	uint32_t rkey, qpn;
	uint64_t naks;

	(void)state;
	memset(data, 0xe7, sizeof(data));
	rp_open(&rp, 4096);
	mw = droce_alloc_mw(rp.pd, DROCE_MW_TYPE_2);
	assert_non_null(mw);
	x = rp_create_qp(&rp, DROCE_QPT_RC, 0);
	qpn = x->qp_num;
	rkey = droce_inc_rkey(mw->rkey);
	assert_int_equal(bind_type2(x, mw, rkey), DROCE_WC_SUCCESS);
	/* the window works through X */
	write_through(x, rkey, &f);
	assert_int_equal(roce_aeth_type(f.pkt.aeth.syndrome), ROCE_AETH_ACK);
	assert_int_equal(f.pkt.aeth.msn, 1);
	assert_memory_equal(rp.buf + WIN_OFF, data, LEN);
	memset(rp.buf, 0, rp.len);

	rp_destroy_qp(x);
	y = qp_with_qpn(qpn);
	rp_connect_qp(&rp, y, 0);
	naks = rp_counter(&rp, "sent_rem_access_nak");
	write_through(y, rkey, &f);
	assert_int_equal(f.pkt.aeth.syndrome,
			 ROCE_AETH_SYNDROME(ROCE_AETH_NAK, ROCE_NAK_REM_ACCESS_ERR));
	assert_int_equal(f.pkt.aeth.msn, 0);
	assert_int_equal(rp_counter(&rp, "sent_rem_access_nak"), naks + 1);
	for (size_t i = 0; i < rp.len; i++)
		assert_int_equal(rp.buf[i], 0);

	/* the window is free again: a new bind (o10-37.2.30 needs a free
	 * window) on another QP succeeds */
	z = rp_create_qp(&rp, DROCE_QPT_RC, 0);
	assert_int_equal(bind_type2(z, mw, droce_inc_rkey(rkey)), DROCE_WC_SUCCESS);

	rp_destroy_qp(z);
	rp_destroy_qp(y);
	assert_int_equal(droce_dealloc_mw(mw), 0);
	rp_close(&rp);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_type2_window_dies_with_its_qp),
	};

	(void)argc;
	rp_eal_init(argv[0]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
