/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The P_Key table from the configuration (lib/device "pkeys ="), one
 * droce_init per process on a net_null port (the argument says which):
 *   ini     pkeys = 0x8001,0xffff,0x7fff in an INI file: droce_query_pkey
 *           reads 0xffff, 0x8001, 0x7fff at indexes 0..2 (0xffff keeps
 *           index 0), index 3 is EINVAL; a QP takes pkey_index 2, not 3;
 *   invalid --droce-pkeys=0x8000 (an invalid P_Key): the device does not
 *           open (EINVAL).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>

#include "dev_pair.h"
#include "droce.h"

#define CHECK(c) do {							\
	if (!(c)) {							\
		fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);	\
		exit(1);						\
	}								\
} while (0)

static int
init(const char *const *extra, int nextra)
{
	static char prefix[64];
	char *args[24];
	int n = 0;

	snprintf(prefix, sizeof(prefix), "--file-prefix=droce-pkc-%d", getpid());
	dp_eal_args(args, &n, "test_pkey_config", "-l", "0", prefix);
	args[n++] = "--vdev=net_null0";
	args[n++] = "--";
	for (int i = 0; i < nextra; i++)
		args[n++] = (char *)extra[i];
	args[n] = NULL;
	return droce_init(n, args);
}

static int
to_init(struct droce_qp *qp, uint16_t pkey_index)
{
	struct droce_qp_attr a = { .qp_state = DROCE_QPS_INIT, .port_num = 1,
				   .pkey_index = pkey_index };

	return droce_modify_qp(qp, &a, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX |
			       DROCE_QP_PORT | DROCE_QP_ACCESS_FLAGS);
}

static void
case_ini(void)
{
	char path[64], opt[80];
	const char *extra[] = { opt };
	struct droce_device **list;
	struct droce_context *ctx;
	struct droce_pd *pd;
	struct droce_cq *cq;
	struct droce_qp *qp;
	uint16_t pk;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/droce-pkc-%d.ini", getpid());
	f = fopen(path, "w");
	CHECK(f != NULL);
	fprintf(f, "[device0]\nport = net_null0\nipv4 = 198.18.15.1/24\n"
		"pkeys = 0x8001,0xffff,0x7fff\n");
	fclose(f);
	snprintf(opt, sizeof(opt), "--droce-config=%s", path);
	CHECK(init(extra, 1) >= 0);
	unlink(path);
	list = droce_get_device_list(NULL);
	CHECK(list != NULL && list[0] != NULL);
	ctx = droce_open_device(list[0]);
	CHECK(ctx != NULL);
	CHECK(droce_query_pkey(ctx, 1, 0, &pk) == 0 && pk == rte_cpu_to_be_16(0xffff));
	CHECK(droce_query_pkey(ctx, 1, 1, &pk) == 0 && pk == rte_cpu_to_be_16(0x8001));
	CHECK(droce_query_pkey(ctx, 1, 2, &pk) == 0 && pk == rte_cpu_to_be_16(0x7fff));
	CHECK(droce_query_pkey(ctx, 1, 3, &pk) == EINVAL);

	pd = droce_alloc_pd(ctx);
	CHECK(pd != NULL);
	cq = droce_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(cq != NULL);
	qp = droce_create_qp(pd, &(struct droce_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 } });
	CHECK(qp != NULL);
	CHECK(to_init(qp, 3) == EINVAL);
	CHECK(to_init(qp, 2) == 0);
	CHECK(droce_destroy_qp(qp) == 0);
	CHECK(droce_destroy_cq(cq) == 0);
	CHECK(droce_dealloc_pd(pd) == 0);
	CHECK(droce_close_device(ctx) == 0);
	droce_free_device_list(list);
	droce_cleanup();
	printf("ok: pkeys from the INI file fill the P_Key table after 0xffff\n");
}

static void
case_invalid(void)
{
	const char *extra[] = { "--droce-port=net_null0",
				"--droce-ipv4=198.18.15.1/24", "--droce-pkeys=0x8000" };
	struct droce_device **list;

	CHECK(init(extra, 3) >= 0);
	list = droce_get_device_list(NULL);
	CHECK(list != NULL && list[0] != NULL);
	errno = 0;
	CHECK(droce_open_device(list[0]) == NULL);
	CHECK(errno == EINVAL);
	droce_free_device_list(list);
	droce_cleanup();
	printf("ok: an invalid P_Key in the configuration keeps the device closed\n");
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s ini|invalid\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "ini") == 0)
		case_ini();
	else if (strcmp(argv[1], "invalid") == 0)
		case_invalid();
	else
		return 2;
	return 0;
}
