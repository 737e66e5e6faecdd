/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_kernel.c - rdma-core's provider interface (IBVERBS_PRIVATE_34)
 * and the calls of the kernel's uverbs ABI, with no kernel device behind
 * them.
 *
 * rdma-core's providers (libmlx5, libmlx4) are loaded by programs linked
 * with them (perftest) and by DPDK's mlx PMD plugins, which EAL loads from
 * its plugin folder at droce_init; they must resolve these symbols against
 * the libibverbs.so.1 of the process, this one.  They never get a device:
 * ibv_get_device_list lists only droce's and no provider's constructor is
 * consulted.  So a provider's registration is accepted and ignored, its
 * context creation finds no device (NULL, ENODEV), and each kernel command
 * fails with EOPNOTSUPP, what rdma-core returns for a device without the
 * command.  The callers pass arguments this file does not use; on the
 * platform ABI a function may ignore its arguments, so none are declared.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

/* rdma-core's variable of the same name: a device may be destroyed after
 * disassociation.  droce's devices are never disassociated. */
bool verbs_allow_disassociate_destroy;

/* The kernel commands of rdma-core's driver.h, each an int errno. */
#define DROPIN_KERNEL_COMMANDS(X) \
	X(execute_ioctl) X(__ioctl_final_num_attrs) \
	X(ibv_cmd_advise_mr) X(ibv_cmd_alloc_dm) X(ibv_cmd_alloc_mw) \
	X(ibv_cmd_alloc_pd) X(ibv_cmd_attach_mcast) X(ibv_cmd_close_xrcd) \
	X(ibv_cmd_create_ah) X(ibv_cmd_create_counters) X(ibv_cmd_create_cq) \
	X(ibv_cmd_create_cq_ex) X(ibv_cmd_create_flow) \
	X(ibv_cmd_create_flow_action_esp) X(ibv_cmd_create_qp) \
	X(ibv_cmd_create_qp_ex) X(ibv_cmd_create_qp_ex2) \
	X(ibv_cmd_create_rwq_ind_table) X(ibv_cmd_create_srq) \
	X(ibv_cmd_create_srq_ex) X(ibv_cmd_create_wq) X(ibv_cmd_dealloc_mw) \
	X(ibv_cmd_dealloc_pd) X(ibv_cmd_dereg_mr) X(ibv_cmd_destroy_ah) \
	X(ibv_cmd_destroy_counters) X(ibv_cmd_destroy_cq) \
	X(ibv_cmd_destroy_flow) X(ibv_cmd_destroy_flow_action) \
	X(ibv_cmd_destroy_qp) X(ibv_cmd_destroy_rwq_ind_table) \
	X(ibv_cmd_destroy_srq) X(ibv_cmd_destroy_wq) X(ibv_cmd_detach_mcast) \
	X(ibv_cmd_free_dm) X(ibv_cmd_get_context) X(ibv_cmd_modify_cq) \
	X(ibv_cmd_modify_flow_action_esp) X(ibv_cmd_modify_qp) \
	X(ibv_cmd_modify_qp_ex) X(ibv_cmd_modify_srq) X(ibv_cmd_modify_wq) \
	X(ibv_cmd_open_qp) X(ibv_cmd_open_xrcd) X(ibv_cmd_poll_cq) \
	X(ibv_cmd_post_recv) X(ibv_cmd_post_send) X(ibv_cmd_post_srq_recv) \
	X(ibv_cmd_query_context) X(ibv_cmd_query_device_any) \
	X(ibv_cmd_query_mr) X(ibv_cmd_query_port) X(ibv_cmd_query_qp) \
	X(ibv_cmd_query_srq) X(ibv_cmd_read_counters) X(ibv_cmd_reg_dm_mr) \
	X(ibv_cmd_reg_dmabuf_mr) X(ibv_cmd_reg_mr) X(ibv_cmd_req_notify_cq) \
	X(ibv_cmd_rereg_mr) X(ibv_cmd_resize_cq)

#define DROPIN_NO_KERNEL_COMMAND(name) \
	int name(void); \
	int name(void) { return EOPNOTSUPP; }
DROPIN_KERNEL_COMMANDS(DROPIN_NO_KERNEL_COMMAND)

/* The provider's side of a context: there is no kernel device to open. */
#define DROPIN_NO_KERNEL_OBJECT(name) \
	void *name(void); \
	void *name(void) { errno = ENODEV; return NULL; }
DROPIN_NO_KERNEL_OBJECT(_verbs_init_and_alloc_context)
DROPIN_NO_KERNEL_OBJECT(verbs_open_device)

/* Registration and setup calls of a provider: nothing to record. */
#define DROPIN_PROVIDER_NOOP(name) \
	void name(void); \
	void name(void) {}
DROPIN_PROVIDER_NOOP(verbs_register_driver_34)
DROPIN_PROVIDER_NOOP(verbs_set_ops)
DROPIN_PROVIDER_NOOP(verbs_uninit_context)
DROPIN_PROVIDER_NOOP(verbs_init_cq)
DROPIN_PROVIDER_NOOP(__verbs_log)

/* sysfs of a kernel device: droce's devices have none. */
int ibv_read_ibdev_sysfs_file(void);
int
ibv_read_ibdev_sysfs_file(void)
{
	errno = ENOENT;
	return -1;
}
