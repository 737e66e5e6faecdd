/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transport_lcores in the configuration, one droce_init per process (the
 * first argument says which case; meson runs each):
 *   list     --droce-transport-lcores=1,2 on a net_null port: the device
 *            opens with both lcores RUNNING (QPs sharded over them, two
 *            port queues), control verbs work, close stops both (WAIT);
 *   badlist  a list naming an lcore twice is refused by droce_init (EINVAL);
 *   ini      transport_lcores = 1 from an INI file (--droce-config) on a
 *            net_null port: droce_open_device starts lcore 1 (RUNNING),
 *            droce_close_device stops it (WAIT); "none" in a second
 *            device keeps run-to-completion (lcore 1 stays WAIT);
 *   main     transport_lcores naming the main lcore (the caller's): the
 *            device does not open (EINVAL) and nothing is left running.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_launch.h>
#include <rte_lcore.h>

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
	const char *no_huge = getenv("DROCE_NO_HUGE");
	char *args[32];
	int n = 0;

	snprintf(prefix, sizeof(prefix), "--file-prefix=droce-lcc-%d", getpid());
	args[n++] = "test_lcores_config";
	args[n++] = "--no-pci";
	/* 3 lcores on 2 CPUs: 2 shares CPU 1 with lcore 1 */
	args[n++] = "--lcores";
	args[n++] = "0@0,1@1,2@1";
	args[n++] = prefix;
	args[n++] = "--log-level=lib.eal:error";
	args[n++] = "--vdev=net_null0";
	args[n++] = "--vdev=net_null1";
	if (no_huge != NULL && strcmp(no_huge, "1") == 0) {
		args[n++] = "--no-huge";
		args[n++] = "-m";
		args[n++] = "512";
	}
	args[n++] = "--";
	for (int i = 0; i < nextra; i++)
		args[n++] = (char *)extra[i];
	args[n] = NULL;
	return droce_init(n, args);
}

static void
case_list(void)
{
	const char *extra[] = { "--droce-port=net_null0",
				"--droce-ipv4=198.18.14.1/24",
				"--droce-transport-lcores=1,2" };
	struct droce_device **list;
	struct droce_context *ctx;
	struct droce_cq *cq;
	struct droce_wc wc;

	CHECK(init(extra, 3) >= 0);
	list = droce_get_device_list(NULL);
	CHECK(list != NULL && list[0] != NULL);
	CHECK(rte_eal_get_lcore_state(1) == WAIT);
	CHECK(rte_eal_get_lcore_state(2) == WAIT);
	ctx = droce_open_device(list[0]);
	CHECK(ctx != NULL);
	CHECK(rte_eal_get_lcore_state(1) == RUNNING);
	CHECK(rte_eal_get_lcore_state(2) == RUNNING);
	cq = droce_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(cq != NULL);
	CHECK(droce_poll_cq(cq, 1, &wc) == 0);
	CHECK(droce_destroy_cq(cq) == 0);
	CHECK(droce_close_device(ctx) == 0);
	CHECK(rte_eal_get_lcore_state(1) == WAIT);
	CHECK(rte_eal_get_lcore_state(2) == WAIT);
	droce_free_device_list(list);
	droce_cleanup();
	printf("ok: transport_lcores = 1,2 starts and stops both lcores\n");
}

static void
case_badlist(void)
{
	const char *extra[] = { "--droce-port=net_null0",
				"--droce-transport-lcores=1,1" };

	errno = 0;
	CHECK(init(extra, 2) < 0);
	CHECK(errno == EINVAL);
	printf("ok: a list naming an lcore twice is refused\n");
}

static void
case_ini(void)
{
	char path[64], opt[80];
	const char *extra[] = { opt };
	struct droce_device **list;
	struct droce_context *ctx0, *ctx1;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/tmp/droce-lcc-%d.ini", getpid());
	f = fopen(path, "w");
	CHECK(f != NULL);
	fprintf(f, "[device0]\nport = net_null0\nipv4 = 198.18.14.1/24\n"
		"transport_lcores = 1\n\n[device1]\nport = net_null1\n"
		"ipv4 = 198.18.14.2/24\ntransport_lcores = none\n");
	fclose(f);
	snprintf(opt, sizeof(opt), "--droce-config=%s", path);
	CHECK(init(extra, 1) >= 0);
	unlink(path);
	list = droce_get_device_list(&n);
	CHECK(list != NULL && n == 2);
	CHECK(rte_eal_get_lcore_state(1) == WAIT);
	ctx1 = droce_open_device(list[1]);		/* "none" */
	CHECK(ctx1 != NULL);
	CHECK(rte_eal_get_lcore_state(1) == WAIT);
	ctx0 = droce_open_device(list[0]);		/* lcore 1 */
	CHECK(ctx0 != NULL);
	CHECK(rte_eal_get_lcore_state(1) == RUNNING);
	/* control verbs through the command ring, and back */
	{
		struct droce_cq *cq = droce_create_cq(ctx0, 16, NULL, NULL, 0);
		struct droce_wc wc;

		CHECK(cq != NULL);
		CHECK(droce_poll_cq(cq, 1, &wc) == 0);
		CHECK(droce_destroy_cq(cq) == 0);
	}
	CHECK(droce_close_device(ctx0) == 0);
	CHECK(rte_eal_get_lcore_state(1) == WAIT);
	CHECK(droce_close_device(ctx1) == 0);
	droce_free_device_list(list);
	droce_cleanup();
	printf("ok: transport_lcores from the INI file starts and stops lcore 1\n");
}

static void
case_main(void)
{
	const char *extra[] = { "--droce-port=net_null0",
				"--droce-ipv4=198.18.14.1/24",
				"--droce-transport_lcores=0" };
	struct droce_device **list;

	CHECK(init(extra, 3) >= 0);
	list = droce_get_device_list(NULL);
	CHECK(list != NULL && list[0] != NULL);
	errno = 0;
	CHECK(droce_open_device(list[0]) == NULL);
	CHECK(errno == EINVAL);
	CHECK(rte_eal_get_lcore_state(1) == WAIT);
	/* nothing of the failed open is left behind: a second try gets as
	 * far again (not EBUSY) and fails the same way */
	errno = 0;
	CHECK(droce_open_device(list[0]) == NULL);
	CHECK(errno == EINVAL);
	droce_free_device_list(list);
	droce_cleanup();
	printf("ok: the main lcore cannot be the transport lcore\n");
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s list|badlist|ini|main\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "list") == 0)
		case_list();
	else if (strcmp(argv[1], "badlist") == 0)
		case_badlist();
	else if (strcmp(argv[1], "ini") == 0)
		case_ini();
	else if (strcmp(argv[1], "main") == 0)
		case_main();
	else
		return 2;
	return 0;
}
