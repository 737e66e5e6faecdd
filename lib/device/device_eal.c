/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EAL start-up for droce applications, so that a crash leaves nothing
 * behind:
 *  - EAL runs --in-memory unless the application asked for shared
 *    configuration (--proc-type, --no-shconf or --in-memory given): its
 *    hugepages are then memfd-backed and go back to the kernel when the
 *    process dies, even by SIGKILL, instead of staying as files in
 *    hugetlbfs until someone removes them.  droce needs no secondary
 *    processes and net_memif / net_af_packet work this way.  With
 *    --no-huge (which DPDK 22.11 refuses together with --in-memory)
 *    nothing is added: there is no hugepage to leave, and the
 *    alternative, --no-shconf, makes DPDK 22.11's net_memif crash at exit
 *    now and then (also when given by hand), so such a process's runtime
 *    directory also holds EAL's config and fbarray files.
 *  - The runtime directory itself is removed at exit and swept after a
 *    crash (device_rundir.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>

#include "device_private.h"

static const char opt_in_memory[] = "--in-memory";

/* EAL's arguments: those before the first "--". */
static bool
has_eal_opt(int argc, char **argv, const char *opt)
{
	size_t n = strlen(opt);

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strncmp(argv[i], opt, n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '='))
			return true;
	return false;
}

/* The option droce adds, or NULL when the application chose itself. */
static const char *
default_opt(int argc, char **argv)
{
	if (has_eal_opt(argc, argv, opt_in_memory) ||
	    has_eal_opt(argc, argv, "--no-shconf") ||
	    has_eal_opt(argc, argv, "--proc-type") ||
	    has_eal_opt(argc, argv, "--no-huge"))
		return NULL;
	return opt_in_memory;
}

/*
 * rte_eal_init with the options opts (n of them) after argv[0]; the
 * application's argv gets EAL's result without them.
 */
int
device_eal_init_with(int argc, char **argv, const char *const *opts, int n)
{
	char **args;
	int ret, j = 0;

	/* argv[0], the options, the rest: EAL may permute and rewrites
	 * args[ret - 1] */
	args = calloc((size_t)argc + (size_t)n + 1, sizeof(*args));
	if (args == NULL) {
		errno = ENOMEM;
		return -1;
	}
	args[0] = argv[0];
	for (int i = 0; i < n; i++)
		args[1 + i] = (char *)(uintptr_t)opts[i];
	memcpy(&args[1 + n], &argv[1], (size_t)(argc - 1) * sizeof(*args));
	ret = rte_eal_init(argc + n, args);
	/* (when EAL's program name replaced an option, argc entries remain) */
	for (int i = 0; i < argc + n && j < argc; i++) {
		bool added = false;

		for (int k = 0; k < n; k++)
			added |= args[i] == opts[k];
		if (!added)
			argv[j++] = args[i];
	}
	free(args);
	return ret < 0 ? ret : ret - n;
}

int
device_eal_init(int argc, char **argv)
{
	const char *opt = default_opt(argc, argv);

	if (opt == NULL)
		return rte_eal_init(argc, argv);
	return device_eal_init_with(argc, argv, &opt, 1);
}
