/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_qp.c - queue pairs: create (RC, UC, UD), modify to a state with
 * attributes (missing ones get the defaults droce's tools use), connect
 * to a peer (RESET..RTS in one command), destroy, show.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tpd.h"

#define TPD_QKEY_DEFAULT 0x11111111u
#define TPD_RD_ATOMIC 16

static int
qp_type_parse(const char *s, enum droce_qp_type *t)
{
	if (s != NULL && (strcmp(s, "rc") == 0 || strcmp(s, "RC") == 0))
		*t = DROCE_QPT_RC;
	else if (s != NULL && (strcmp(s, "uc") == 0 || strcmp(s, "UC") == 0))
		*t = DROCE_QPT_UC;
	else if (s != NULL && (strcmp(s, "ud") == 0 || strcmp(s, "UD") == 0))
		*t = DROCE_QPT_UD;
	else {
		tpd_err("QP type must be rc, uc or ud");
		return -1;
	}
	return 0;
}

/* qp create PD TYPE cq=CQ [rcq=CQ] [sq=N] [rq=N] [sge=N] [inline=N] [sig_all=0|1] */
static int
qp_create(struct tpd_cmd *c)
{
	struct tpd_pd *p = tpd_get_pd(c, 1);
	struct droce_qp_init_attr ia;
	enum droce_qp_type type;
	uint64_t sq, rq, sge, inl, sig_all;
	struct tpd_cq *scq, *rcq;
	int scqi = -1, rcqi = -1, i;
	struct tpd_qp *q;

	if (p == NULL || qp_type_parse(c->npos > 2 ? c->pos[2] : NULL, &type) != 0)
		return -1;
	scq = tpd_lookup((void *const *)tpd.cq, tpd_kv_str(c, "cq"), "cq", &scqi);
	if (scq == NULL)
		return -1;
	rcq = scq;
	rcqi = scqi;
	if (tpd_kv_has(c, "rcq")) {
		rcq = tpd_lookup((void *const *)tpd.cq, tpd_kv_str(c, "rcq"), "cq", &rcqi);
		if (rcq == NULL)
			return -1;
	}
	if (tpd_kv_u64(c, "sq", 64, UINT32_MAX, &sq) != 0 ||
	    tpd_kv_u64(c, "rq", 64, UINT32_MAX, &rq) != 0 ||
	    tpd_kv_u64(c, "sge", 1, UINT32_MAX, &sge) != 0 ||
	    tpd_kv_u64(c, "inline", 0, UINT32_MAX, &inl) != 0 ||
	    tpd_kv_u64(c, "sig_all", 0, 1, &sig_all) != 0 ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	i = tpd_free_slot((void *const *)tpd.qp, "qp");
	if (i < 0)
		return -1;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = scq->cq;
	ia.recv_cq = rcq->cq;
	ia.cap.max_send_wr = (uint32_t)sq;
	ia.cap.max_recv_wr = (uint32_t)rq;
	ia.cap.max_send_sge = (uint32_t)sge;
	ia.cap.max_recv_sge = (uint32_t)sge;
	ia.cap.max_inline_data = (uint32_t)inl;
	ia.qp_type = type;
	ia.sq_sig_all = (int)sig_all;
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		tpd_err("out of memory");
		return -1;
	}
	q->qp = droce_create_qp(p->pd, &ia);
	if (q->qp == NULL) {
		tpd_err("droce_create_qp: %s", strerror(errno));
		free(q);
		return -1;
	}
	q->pd = tpd_handle(c->pos[1]);
	q->scq = scqi;
	q->rcq = rcqi;
	q->max_inline = ia.cap.max_inline_data;
	q->sq_psn = (uint32_t)(lrand48() & 0xffffff);
	tpd.qp[i] = q;
	printf("qp %d: %s qpn 0x%06" PRIx32 " (%" PRIu32 ") psn 0x%06" PRIx32
	       " state RESET\n", i, tpd_qp_type_name(type), q->qp->qp_num,
	       q->qp->qp_num, q->sq_psn);
	return 0;
}

/* Attributes for one transition: defaults, overridden by options. */
struct qp_mod {
	struct droce_qp_attr a;
	int mask;
};

static int
opt_u8(struct tpd_cmd *c, const char *key, uint8_t def, uint8_t max,
       uint8_t *out, int bit, int *mask, bool required)
{
	uint64_t v;

	if (!required && !tpd_kv_has(c, key))
		return 0;
	if (tpd_kv_u64(c, key, def, max, &v) != 0)
		return -1;
	*out = (uint8_t)v;
	*mask |= bit;
	return 0;
}

static int
opt_u32(struct tpd_cmd *c, const char *key, uint32_t def, uint32_t max,
	uint32_t *out, int bit, int *mask, bool required)
{
	uint64_t v;

	if (!required && !tpd_kv_has(c, key))
		return 0;
	if (tpd_kv_u64(c, key, def, max, &v) != 0)
		return -1;
	*out = (uint32_t)v;
	*mask |= bit;
	return 0;
}

/*
 * Every attribute option: the ones the transition needs are filled (from
 * the option, else q->peer or a default); any other given option is set
 * too, so a wrong one reaches droce_modify_qp (and is refused there).
 */
static int
qp_mod_build(struct tpd_cmd *c, struct tpd_qp *q, enum droce_qp_state to,
	     struct qp_mod *m)
{
	enum droce_qp_type t = q->qp->qp_type;
	bool init = to == DROCE_QPS_INIT, rtr = to == DROCE_QPS_RTR,
	     rts = to == DROCE_QPS_RTS, conn = t != DROCE_QPT_UD, rc = t == DROCE_QPT_RC;
	const char *s;
	int access = rc ? DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ |
		DROCE_ACCESS_REMOTE_ATOMIC : DROCE_ACCESS_REMOTE_WRITE;
	int *mk = &m->mask;
	struct droce_qp_attr *a = &m->a;

	memset(m, 0, sizeof(*m));
	a->qp_state = to;
	*mk = DROCE_QP_STATE;
	if (opt_u8(c, "port", 1, 255, &a->port_num, DROCE_QP_PORT, mk, init) ||
	    opt_u32(c, "qkey", TPD_QKEY_DEFAULT, UINT32_MAX, &a->qkey, DROCE_QP_QKEY, mk,
		    init && !conn) ||
	    opt_u32(c, "dqpn", q->peer.qpn, 0xffffff, &a->dest_qp_num, DROCE_QP_DEST_QPN,
		    mk, rtr && conn) ||
	    opt_u32(c, "rq_psn", q->peer.psn, 0xffffff, &a->rq_psn, DROCE_QP_RQ_PSN, mk,
		    rtr && conn) ||
	    opt_u8(c, "max_dest_rd_atomic", TPD_RD_ATOMIC, 255, &a->max_dest_rd_atomic,
		   DROCE_QP_MAX_DEST_RD_ATOMIC, mk, rtr && rc) ||
	    opt_u8(c, "min_rnr_timer", 12, 31, &a->min_rnr_timer, DROCE_QP_MIN_RNR_TIMER,
		   mk, rtr && rc) ||
	    opt_u32(c, "sq_psn", q->sq_psn, 0xffffff, &a->sq_psn, DROCE_QP_SQ_PSN, mk, rts) ||
	    opt_u8(c, "timeout", 14, 31, &a->timeout, DROCE_QP_TIMEOUT, mk, rts && rc) ||
	    opt_u8(c, "retry", 7, 7, &a->retry_cnt, DROCE_QP_RETRY_CNT, mk, rts && rc) ||
	    opt_u8(c, "rnr_retry", 7, 7, &a->rnr_retry, DROCE_QP_RNR_RETRY, mk, rts && rc) ||
	    opt_u8(c, "max_rd_atomic", TPD_RD_ATOMIC, 255, &a->max_rd_atomic,
		   DROCE_QP_MAX_QP_RD_ATOMIC, mk, rts && rc))
		return -1;
	if (tpd_kv_has(c, "pkey") || init) {
		uint64_t v;

		if (tpd_kv_u64(c, "pkey", 0, UINT16_MAX, &v) != 0)
			return -1;
		a->pkey_index = (uint16_t)v;
		*mk |= DROCE_QP_PKEY_INDEX;
	}
	s = tpd_kv_str(c, "access");
	if (s != NULL || (init && conn)) {
		if (s != NULL && tpd_parse_access(s, &access) != 0)
			return -1;
		a->qp_access_flags = (unsigned int)access;
		*mk |= DROCE_QP_ACCESS_FLAGS;
	}
	s = tpd_kv_str(c, "mtu");
	if (s != NULL || (rtr && conn)) {
		const struct tpd_dev *d = &tpd.dev[tpd_dev_of_pd(q->pd)];

		a->path_mtu = d->active_mtu != 0 ? d->active_mtu : DROCE_MTU_1024;
		if (s != NULL && tpd_mtu_parse(s, &a->path_mtu) != 0)
			return -1;
		*mk |= DROCE_QP_PATH_MTU;
	}
	s = tpd_kv_str(c, "dgid");
	if (s != NULL || (rtr && conn)) {
		uint64_t sgid;

		if (s != NULL && tpd_gid_parse(s, &q->peer.gid) != 0)
			return -1;
		if (s == NULL && !q->peer.valid) {
			tpd_err("RTR needs the peer: dgid= dqpn= rq_psn= (or qp connect)");
			return -1;
		}
		if (tpd_kv_u64(c, "sgid_index", 0, 255, &sgid) != 0)
			return -1;
		a->ah_attr.is_global = 1;
		a->ah_attr.port_num = 1;
		a->ah_attr.grh.dgid = q->peer.gid;
		a->ah_attr.grh.sgid_index = (uint8_t)sgid;
		a->ah_attr.grh.hop_limit = 64;
		*mk |= DROCE_QP_AV;
	}
	return 0;
}

static int
qp_modify_to(struct tpd_cmd *c, struct tpd_qp *q, enum droce_qp_state to)
{
	struct qp_mod m;
	int rc;

	if (qp_mod_build(c, q, to, &m) != 0)
		return -1;
	if (c != NULL && tpd_kv_check_used(c) != 0)
		return -1;
	rc = droce_modify_qp(q->qp, &m.a, m.mask);
	if (rc != 0) {
		tpd_err("droce_modify_qp to %s (from %s, mask 0x%x): %s",
			tpd_qp_state_name(to), tpd_qp_state_name(q->qp->state),
			m.mask, strerror(rc));
		return -1;
	}
	if (m.mask & DROCE_QP_DEST_QPN) {
		q->peer.qpn = m.a.dest_qp_num;
		q->peer.valid = true;
	}
	if (m.mask & DROCE_QP_RQ_PSN)
		q->peer.psn = m.a.rq_psn;
	if (m.mask & DROCE_QP_SQ_PSN)
		q->sq_psn = m.a.sq_psn;
	return 0;
}

static int
qp_modify(struct tpd_cmd *c)
{
	struct tpd_qp *q = tpd_get_qp(c, 1);
	enum droce_qp_state to;

	if (q == NULL)
		return -1;
	if (c->npos < 3) {
		tpd_err("missing STATE (RESET, INIT, RTR, RTS, SQD, ERR)");
		return -1;
	}
	if (tpd_qp_state_parse(c->pos[2], &to) != 0 || qp_modify_to(c, q, to) != 0)
		return -1;
	printf("qp %s: state %s\n", c->pos[1], tpd_qp_state_name(q->qp->state));
	return 0;
}

/* Build a UD AH to the peer (replacing an older one). */
static int
qp_make_ah(struct tpd_qp *q)
{
	struct droce_ah_attr ah;

	if (q->ah != NULL)
		droce_destroy_ah(q->ah);
	memset(&ah, 0, sizeof(ah));
	ah.is_global = 1;
	ah.port_num = 1;
	ah.grh.dgid = q->peer.gid;
	ah.grh.hop_limit = 64;
	q->ah = droce_create_ah(tpd.pd[q->pd]->pd, &ah);
	if (q->ah == NULL) {
		tpd_err("droce_create_ah: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int
tpd_qp_connect_peer(struct tpd_qp *q)
{
	static const enum droce_qp_state path[] = {
		DROCE_QPS_INIT, DROCE_QPS_RTR, DROCE_QPS_RTS,
	};
	struct tpd_cmd none;

	memset(&none, 0, sizeof(none));
	if (q->qp->state != DROCE_QPS_RESET) {
		tpd_err("connect needs a QP in RESET (this one is %s)",
			tpd_qp_state_name(q->qp->state));
		return -1;
	}
	q->peer.valid = true;
	for (unsigned int i = 0; i < sizeof(path) / sizeof(path[0]); i++)
		if (qp_modify_to(&none, q, path[i]) != 0)
			return -1;
	if (q->qp->qp_type == DROCE_QPT_UD)
		return qp_make_ah(q);
	return 0;
}

/*
 * qp connect QP peer=QP2 [rmr=MR]  (a QP of this process)
 * qp connect QP dgid=GID dqpn=N [psn=N] [rkey=K raddr=A rlen=N] [qkey=N]
 */
static int
qp_connect(struct tpd_cmd *c)
{
	struct tpd_qp *q = tpd_get_qp(c, 1);
	struct tpd_peer p;
	uint64_t v;

	if (q == NULL)
		return -1;
	memset(&p, 0, sizeof(p));
	p.qkey = TPD_QKEY_DEFAULT;
	if (tpd_kv_has(c, "peer")) {
		struct tpd_qp *o = tpd_lookup((void *const *)tpd.qp,
					      tpd_kv_str(c, "peer"), "qp", NULL);
		int dev;

		if (o == NULL)
			return -1;
		dev = tpd_dev_of_pd(o->pd);
		if (droce_query_gid(tpd.dev[dev].ctx, 1, 0, &p.gid) != 0) {
			tpd_err("device %d has no GID (give it --droce-ipv4)", dev);
			return -1;
		}
		p.qpn = o->qp->qp_num;
		p.psn = o->sq_psn;
		if (tpd_kv_has(c, "rmr")) {
			struct tpd_mr *m = tpd_lookup((void *const *)tpd.mr,
						      tpd_kv_str(c, "rmr"), "mr", NULL);
			if (m == NULL)
				return -1;
			p.rkey = m->mr->rkey;
			p.addr = (uint64_t)(uintptr_t)m->buf;
			p.len = m->len;
		}
	} else {
		const char *g = tpd_kv_str(c, "dgid");

		if (g == NULL) {
			tpd_err("give peer=QP or dgid=GID dqpn=N [psn=N]");
			return -1;
		}
		if (tpd_gid_parse(g, &p.gid) != 0 ||
		    tpd_kv_u64(c, "dqpn", 0, 0xffffff, &v) != 0)
			return -1;
		p.qpn = (uint32_t)v;
		if (tpd_kv_u64(c, "psn", 0, 0xffffff, &v) != 0)
			return -1;
		p.psn = (uint32_t)v;
		if (tpd_kv_u64(c, "rkey", 0, UINT32_MAX, &v) != 0)
			return -1;
		p.rkey = (uint32_t)v;
		if (tpd_kv_u64(c, "raddr", 0, UINT64_MAX, &p.addr) != 0 ||
		    tpd_kv_u64(c, "rlen", 0, UINT64_MAX, &p.len) != 0)
			return -1;
	}
	if (tpd_kv_u64(c, "qkey", TPD_QKEY_DEFAULT, UINT32_MAX, &v) != 0 ||
	    tpd_kv_check_used(c) != 0)
		return -1;
	p.qkey = (uint32_t)v;
	p.valid = true;
	q->peer = p;
	if (tpd_qp_connect_peer(q) != 0)
		return -1;
	printf("qp %s: state %s, peer qpn 0x%06" PRIx32 "\n", c->pos[1],
	       tpd_qp_state_name(q->qp->state), q->peer.qpn);
	return 0;
}

static int
qp_destroy(struct tpd_cmd *c)
{
	struct tpd_qp *q = tpd_get_qp(c, 1);
	int rc, i;

	if (q == NULL || tpd_kv_check_used(c) != 0 || tpd_engine_busy(q, NULL))
		return -1;
	i = tpd_handle(c->pos[1]);
	rc = droce_destroy_qp(q->qp);
	if (rc != 0) {
		tpd_err("droce_destroy_qp: %s", strerror(rc));
		return -1;
	}
	if (q->ah != NULL)
		droce_destroy_ah(q->ah);
	free(q);
	tpd.qp[i] = NULL;
	printf("qp %d destroyed\n", i);
	return 0;
}

static void
qp_print(int i, struct tpd_qp *q)
{
	struct droce_qp_init_attr ia;
	struct droce_qp_attr a;
	char gid[64];
	int rc;

	memset(&a, 0, sizeof(a));
	rc = droce_query_qp(q->qp, &a, ~0, &ia);
	printf("qp %d: %s qpn 0x%06" PRIx32 " pd %d cq %d/%d state %s", i,
	       tpd_qp_type_name(q->qp->qp_type), q->qp->qp_num, q->pd, q->scq,
	       q->rcq, rc == 0 ? tpd_qp_state_name(a.qp_state) : "?");
	if (rc == 0)
		printf(" mtu %d dest_qpn 0x%06" PRIx32 " sq_psn 0x%06" PRIx32
		       " rq_psn 0x%06" PRIx32 " qkey 0x%" PRIx32 " timeout %u retry %u"
		       " rnr_retry %u max_rd_atomic %u max_dest_rd_atomic %u"
		       " sq %u rq %u inline %u", droce_mtu_to_num(a.path_mtu),
		       a.dest_qp_num, a.sq_psn, a.rq_psn, a.qkey, a.timeout,
		       a.retry_cnt, a.rnr_retry, a.max_rd_atomic,
		       a.max_dest_rd_atomic, a.cap.max_send_wr, a.cap.max_recv_wr,
		       a.cap.max_inline_data);
	printf("\n");
	if (q->peer.valid) {
		tpd_gid_str(&q->peer.gid, gid, sizeof(gid));
		printf("  peer gid %s qpn 0x%06" PRIx32 " psn 0x%06" PRIx32
		       " rkey 0x%08" PRIx32 " addr 0x%" PRIx64 " len %" PRIu64 "\n",
		       gid, q->peer.qpn, q->peer.psn, q->peer.rkey, q->peer.addr,
		       q->peer.len);
	}
}

static int
qp_show(struct tpd_cmd *c)
{
	if (c->npos > 2) {
		tpd_err("qp show takes at most one QP");
		return -1;
	}
	if (c->npos == 2) {
		struct tpd_qp *q = tpd_get_qp(c, 1);

		if (q == NULL || tpd_kv_check_used(c) != 0)
			return -1;
		qp_print(tpd_handle(c->pos[1]), q);
		return 0;
	}
	if (tpd_kv_check_used(c) != 0)
		return -1;
	for (int i = 0; i < TPD_MAX_OBJ; i++)
		if (tpd.qp[i] != NULL)
			qp_print(i, tpd.qp[i]);
	return 0;
}

int tpd_qp_exchange(struct tpd_cmd *c);

static const struct tpd_subcmd qp_cmds[] = {
	{ "create", qp_create, "qp create PD rc|uc|ud cq=CQ [rcq=CQ] [sq=64] [rq=64] [sge=1] [inline=0] [sig_all=0|1]",
	  "create a QP (rcq defaults to cq); prints its QPN and the PSN it will start with" },
	{ "modify", qp_modify, "qp modify QP RESET|INIT|RTR|RTS|SQD|ERR [port=] [pkey=] [access=] [qkey=] "
	  "[mtu=] [dgid=] [sgid_index=] [dqpn=] [rq_psn=] [max_dest_rd_atomic=] [min_rnr_timer=] "
	  "[sq_psn=] [timeout=] [retry=] [rnr_retry=] [max_rd_atomic=]",
	  "one transition; what it needs and is not given comes from the defaults and the known peer" },
	{ "connect", qp_connect, "qp connect QP peer=QP2 [rmr=MR] | qp connect QP dgid=GID dqpn=N [psn=N] "
	  "[rkey=K raddr=A rlen=N] [qkey=N]",
	  "RESET -> INIT -> RTR -> RTS towards the peer (UD: an AH to it); remembers its rkey/addr" },
	{ "exchange", tpd_qp_exchange, "qp exchange QP listen [port=N] [mr=MR] [timeout=S] | "
	  "qp exchange QP connect HOST [port=N] [mr=MR] [timeout=S]",
	  "swap GID/QPN/PSN/rkey/addr with another droce-testpmd over TCP, then connect (the link stays for sync)" },
	{ "destroy", qp_destroy, "qp destroy QP", "destroy a QP" },
	{ "show", qp_show, "qp show [QP]", "state and attributes (droce_query_qp) and the known peer" },
	{ NULL, NULL, NULL, NULL },
};
const struct tpd_group tpd_group_qp = { "qp", "queue pairs", qp_cmds };
