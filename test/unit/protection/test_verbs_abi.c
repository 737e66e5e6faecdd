/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_verbs_abi.c - droce.h's protection section against rdma-core's
 * <infiniband/verbs.h>: same enum values, same struct layouts, so porting
 * an ibverbs program is a rename.  Built only when libibverbs is present.
 * Debian 12's rdma-core predates IBV_ACCESS_FLUSH_* (1<<8, 1<<9) and
 * IBV_WR_FLUSH (14): those are checked against their documented values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <infiniband/verbs.h>

#include "droce.h"

#define SAME(d, i) assert_int_equal((long)(d), (long)(i))
#define SAME_OFF(ds, is, f) \
	assert_int_equal(offsetof(struct ds, f), offsetof(struct is, f))

static void
test_abi_enums(void **state)
{
	(void)state;
	SAME(DROCE_ACCESS_LOCAL_WRITE, IBV_ACCESS_LOCAL_WRITE);
	SAME(DROCE_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_WRITE);
	SAME(DROCE_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_READ);
	SAME(DROCE_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_REMOTE_ATOMIC);
	SAME(DROCE_ACCESS_MW_BIND, IBV_ACCESS_MW_BIND);
	SAME(DROCE_ACCESS_ZERO_BASED, IBV_ACCESS_ZERO_BASED);
	SAME(DROCE_ACCESS_ON_DEMAND, IBV_ACCESS_ON_DEMAND);
	SAME(DROCE_ACCESS_HUGETLB, IBV_ACCESS_HUGETLB);
	SAME(DROCE_ACCESS_RELAXED_ORDERING, IBV_ACCESS_RELAXED_ORDERING);
	SAME(DROCE_MW_TYPE_1, IBV_MW_TYPE_1);
	SAME(DROCE_MW_TYPE_2, IBV_MW_TYPE_2);
	SAME(DROCE_REREG_MR_CHANGE_TRANSLATION,
	     IBV_REREG_MR_CHANGE_TRANSLATION);
	SAME(DROCE_REREG_MR_CHANGE_PD, IBV_REREG_MR_CHANGE_PD);
	SAME(DROCE_REREG_MR_CHANGE_ACCESS, IBV_REREG_MR_CHANGE_ACCESS);
	SAME(DROCE_REREG_MR_FLAGS_SUPPORTED, IBV_REREG_MR_FLAGS_SUPPORTED);
	SAME(DROCE_REREG_MR_ERR_INPUT, IBV_REREG_MR_ERR_INPUT);
	SAME(DROCE_REREG_MR_ERR_DONT_FORK_NEW, IBV_REREG_MR_ERR_DONT_FORK_NEW);
	SAME(DROCE_REREG_MR_ERR_DO_FORK_OLD, IBV_REREG_MR_ERR_DO_FORK_OLD);
	SAME(DROCE_REREG_MR_ERR_CMD, IBV_REREG_MR_ERR_CMD);
	SAME(DROCE_REREG_MR_ERR_CMD_AND_DO_FORK_NEW,
	     IBV_REREG_MR_ERR_CMD_AND_DO_FORK_NEW);
	SAME(DROCE_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE);
	SAME(DROCE_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM);
	SAME(DROCE_WR_SEND, IBV_WR_SEND);
	SAME(DROCE_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM);
	SAME(DROCE_WR_RDMA_READ, IBV_WR_RDMA_READ);
	SAME(DROCE_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP);
	SAME(DROCE_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD);
	SAME(DROCE_WR_LOCAL_INV, IBV_WR_LOCAL_INV);
	SAME(DROCE_WR_BIND_MW, IBV_WR_BIND_MW);
	SAME(DROCE_WR_SEND_WITH_INV, IBV_WR_SEND_WITH_INV);
	SAME(DROCE_WR_TSO, IBV_WR_TSO);
	SAME(DROCE_WR_DRIVER1, IBV_WR_DRIVER1);
	SAME(DROCE_WR_ATOMIC_WRITE, IBV_WR_ATOMIC_WRITE);
	SAME(DROCE_ACCESS_FLUSH_GLOBAL, 1 << 8);
	SAME(DROCE_ACCESS_FLUSH_PERSISTENT, 1 << 9);
	SAME(DROCE_WR_FLUSH, 14);
	SAME(droce_inc_rkey(0x12345678), ibv_inc_rkey(0x12345678));
	SAME(droce_inc_rkey(0x123456ff), ibv_inc_rkey(0x123456ff));
}

static void
test_abi_structs(void **state)
{
	(void)state;
	SAME(sizeof(struct droce_pd), sizeof(struct ibv_pd));
	SAME_OFF(droce_pd, ibv_pd, handle);
	SAME(sizeof(struct droce_mr), sizeof(struct ibv_mr));
	SAME_OFF(droce_mr, ibv_mr, pd);
	SAME_OFF(droce_mr, ibv_mr, addr);
	SAME_OFF(droce_mr, ibv_mr, length);
	SAME_OFF(droce_mr, ibv_mr, handle);
	SAME_OFF(droce_mr, ibv_mr, lkey);
	SAME_OFF(droce_mr, ibv_mr, rkey);
	SAME(sizeof(struct droce_mw), sizeof(struct ibv_mw));
	SAME_OFF(droce_mw, ibv_mw, pd);
	SAME_OFF(droce_mw, ibv_mw, rkey);
	SAME_OFF(droce_mw, ibv_mw, handle);
	SAME_OFF(droce_mw, ibv_mw, type);
	SAME(sizeof(struct droce_mw_bind_info), sizeof(struct ibv_mw_bind_info));
	SAME_OFF(droce_mw_bind_info, ibv_mw_bind_info, addr);
	SAME_OFF(droce_mw_bind_info, ibv_mw_bind_info, length);
	SAME_OFF(droce_mw_bind_info, ibv_mw_bind_info, mw_access_flags);
	SAME(sizeof(struct droce_mw_bind), sizeof(struct ibv_mw_bind));
	SAME_OFF(droce_mw_bind, ibv_mw_bind, send_flags);
	SAME_OFF(droce_mw_bind, ibv_mw_bind, bind_info);
}

/* Asynchronous events: enum ibv_event_type and struct ibv_async_event. */
static void
test_abi_events(void **state)
{
	(void)state;
	SAME(DROCE_EVENT_CQ_ERR, IBV_EVENT_CQ_ERR);
	SAME(DROCE_EVENT_QP_FATAL, IBV_EVENT_QP_FATAL);
	SAME(DROCE_EVENT_QP_REQ_ERR, IBV_EVENT_QP_REQ_ERR);
	SAME(DROCE_EVENT_QP_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	SAME(DROCE_EVENT_COMM_EST, IBV_EVENT_COMM_EST);
	SAME(DROCE_EVENT_SQ_DRAINED, IBV_EVENT_SQ_DRAINED);
	SAME(DROCE_EVENT_PATH_MIG, IBV_EVENT_PATH_MIG);
	SAME(DROCE_EVENT_PATH_MIG_ERR, IBV_EVENT_PATH_MIG_ERR);
	SAME(DROCE_EVENT_DEVICE_FATAL, IBV_EVENT_DEVICE_FATAL);
	SAME(DROCE_EVENT_PORT_ACTIVE, IBV_EVENT_PORT_ACTIVE);
	SAME(DROCE_EVENT_PORT_ERR, IBV_EVENT_PORT_ERR);
	SAME(DROCE_EVENT_LID_CHANGE, IBV_EVENT_LID_CHANGE);
	SAME(DROCE_EVENT_PKEY_CHANGE, IBV_EVENT_PKEY_CHANGE);
	SAME(DROCE_EVENT_SM_CHANGE, IBV_EVENT_SM_CHANGE);
	SAME(DROCE_EVENT_SRQ_ERR, IBV_EVENT_SRQ_ERR);
	SAME(DROCE_EVENT_SRQ_LIMIT_REACHED, IBV_EVENT_SRQ_LIMIT_REACHED);
	SAME(DROCE_EVENT_QP_LAST_WQE_REACHED, IBV_EVENT_QP_LAST_WQE_REACHED);
	SAME(DROCE_EVENT_CLIENT_REREGISTER, IBV_EVENT_CLIENT_REREGISTER);
	SAME(DROCE_EVENT_GID_CHANGE, IBV_EVENT_GID_CHANGE);
	SAME(DROCE_EVENT_WQ_FATAL, IBV_EVENT_WQ_FATAL);
	SAME(sizeof(struct droce_async_event), sizeof(struct ibv_async_event));
	SAME_OFF(droce_async_event, ibv_async_event, element);
	SAME_OFF(droce_async_event, ibv_async_event, event_type);
}

/* Device and port attributes: struct ibv_device_attr, ibv_port_attr, the
 * leading fields of ibv_device_attr_ex and their flags. */
static void
test_abi_device(void **state)
{
	(void)state;
	SAME(DROCE_ATOMIC_NONE, IBV_ATOMIC_NONE);
	SAME(DROCE_ATOMIC_HCA, IBV_ATOMIC_HCA);
	SAME(DROCE_ATOMIC_GLOB, IBV_ATOMIC_GLOB);
	SAME(DROCE_DEVICE_CURR_QP_STATE_MOD, IBV_DEVICE_CURR_QP_STATE_MOD);
	SAME(DROCE_DEVICE_PORT_ACTIVE_EVENT, IBV_DEVICE_PORT_ACTIVE_EVENT);
	SAME(DROCE_DEVICE_SYS_IMAGE_GUID, IBV_DEVICE_SYS_IMAGE_GUID);
	SAME(DROCE_DEVICE_RC_RNR_NAK_GEN, IBV_DEVICE_RC_RNR_NAK_GEN);
	SAME(DROCE_DEVICE_SRQ_RESIZE, IBV_DEVICE_SRQ_RESIZE);
	SAME(DROCE_DEVICE_MEM_WINDOW, IBV_DEVICE_MEM_WINDOW);
	SAME(DROCE_DEVICE_MEM_WINDOW_TYPE_2B, IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	/* (Debian 12's rdma-core predates these three: rdma-core 43's values) */
	assert_true(DROCE_DEVICE_FLUSH_GLOBAL == 1ULL << 38);
	assert_true(DROCE_DEVICE_FLUSH_PERSISTENT == 1ULL << 39);
	assert_true(DROCE_DEVICE_ATOMIC_WRITE == 1ULL << 40);
	SAME(DROCE_PORT_CM_SUP, IBV_PORT_CM_SUP);
	SAME(DROCE_PORT_IP_BASED_GIDS, IBV_PORT_IP_BASED_GIDS);
	SAME(DROCE_WIDTH_1X, 1);
	SAME(DROCE_WIDTH_4X, 2);
	SAME(DROCE_SPEED_FDR10, 8);
	SAME(DROCE_SPEED_NDR, 128);
	SAME(sizeof(struct droce_device_attr), sizeof(struct ibv_device_attr));
	SAME_OFF(droce_device_attr, ibv_device_attr, fw_ver);
	SAME_OFF(droce_device_attr, ibv_device_attr, node_guid);
	SAME_OFF(droce_device_attr, ibv_device_attr, sys_image_guid);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_mr_size);
	SAME_OFF(droce_device_attr, ibv_device_attr, page_size_cap);
	SAME_OFF(droce_device_attr, ibv_device_attr, vendor_id);
	SAME_OFF(droce_device_attr, ibv_device_attr, vendor_part_id);
	SAME_OFF(droce_device_attr, ibv_device_attr, hw_ver);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_qp);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_qp_wr);
	SAME_OFF(droce_device_attr, ibv_device_attr, device_cap_flags);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_sge);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_sge_rd);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_cq);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_cqe);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_mr);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_pd);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_qp_rd_atom);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_ee_rd_atom);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_res_rd_atom);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_qp_init_rd_atom);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_ee_init_rd_atom);
	SAME_OFF(droce_device_attr, ibv_device_attr, atomic_cap);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_ee);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_rdd);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_mw);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_raw_ipv6_qp);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_raw_ethy_qp);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_mcast_grp);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_mcast_qp_attach);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_total_mcast_qp_attach);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_ah);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_fmr);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_map_per_fmr);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_srq);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_srq_wr);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_srq_sge);
	SAME_OFF(droce_device_attr, ibv_device_attr, max_pkeys);
	SAME_OFF(droce_device_attr, ibv_device_attr, local_ca_ack_delay);
	SAME_OFF(droce_device_attr, ibv_device_attr, phys_port_cnt);
	SAME(sizeof(struct droce_port_attr), sizeof(struct ibv_port_attr));
	SAME_OFF(droce_port_attr, ibv_port_attr, state);
	SAME_OFF(droce_port_attr, ibv_port_attr, max_mtu);
	SAME_OFF(droce_port_attr, ibv_port_attr, active_mtu);
	SAME_OFF(droce_port_attr, ibv_port_attr, gid_tbl_len);
	SAME_OFF(droce_port_attr, ibv_port_attr, port_cap_flags);
	SAME_OFF(droce_port_attr, ibv_port_attr, max_msg_sz);
	SAME_OFF(droce_port_attr, ibv_port_attr, bad_pkey_cntr);
	SAME_OFF(droce_port_attr, ibv_port_attr, qkey_viol_cntr);
	SAME_OFF(droce_port_attr, ibv_port_attr, pkey_tbl_len);
	SAME_OFF(droce_port_attr, ibv_port_attr, lid);
	SAME_OFF(droce_port_attr, ibv_port_attr, sm_lid);
	SAME_OFF(droce_port_attr, ibv_port_attr, lmc);
	SAME_OFF(droce_port_attr, ibv_port_attr, max_vl_num);
	SAME_OFF(droce_port_attr, ibv_port_attr, sm_sl);
	SAME_OFF(droce_port_attr, ibv_port_attr, subnet_timeout);
	SAME_OFF(droce_port_attr, ibv_port_attr, init_type_reply);
	SAME_OFF(droce_port_attr, ibv_port_attr, active_width);
	SAME_OFF(droce_port_attr, ibv_port_attr, active_speed);
	SAME_OFF(droce_port_attr, ibv_port_attr, phys_state);
	SAME_OFF(droce_port_attr, ibv_port_attr, link_layer);
	SAME_OFF(droce_port_attr, ibv_port_attr, flags);
	SAME_OFF(droce_port_attr, ibv_port_attr, port_cap_flags2);
	SAME(sizeof(struct droce_odp_caps), sizeof(struct ibv_odp_caps));
	SAME_OFF(droce_device_attr_ex, ibv_device_attr_ex, orig_attr);
	SAME_OFF(droce_device_attr_ex, ibv_device_attr_ex, comp_mask);
	SAME_OFF(droce_device_attr_ex, ibv_device_attr_ex, odp_caps);
	SAME_OFF(droce_device_attr_ex, ibv_device_attr_ex, completion_timestamp_mask);
	SAME_OFF(droce_device_attr_ex, ibv_device_attr_ex, hca_core_clock);
	SAME_OFF(droce_device_attr_ex, ibv_device_attr_ex, device_cap_flags_ex);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abi_enums),
		cmocka_unit_test(test_abi_structs),
		cmocka_unit_test(test_abi_events),
		cmocka_unit_test(test_abi_device),
	};

	return cmocka_run_group_tests_name("verbs_abi", tests, NULL, NULL);
}
