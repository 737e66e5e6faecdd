/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Daemon mode's start-up (app/droced/README.md): find the daemon's socket,
 * connect, and list droced's device as the only one.  By default (queue
 * regions) EAL does not start at all: the process is a plain one, its
 * device opened by lib/verbs' provider_dq.  With shared queues
 * (--droce-queues=shared, queues = shared in the [droce] section,
 * DROCE_QUEUES=shared; being retired) EAL starts as a secondary process
 * of the file prefix droced's HELLO names, which maps all of droced's
 * memory.  The connection itself is lib/verbs' (provider_droced).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>
#include <rte_common.h>

#include "verbs_daemon.h"
#include "device_private.h"

static char daemon_path[PATH_MAX];
static bool daemon_regions;

/* The value of --droce-KEY=value among the options after EAL's "--". */
static const char *
droce_arg(int argc, char **argv, const char *key)
{
	size_t n = strlen(key);
	int i = 1;

	while (i < argc && strcmp(argv[i], "--") != 0)
		i++;
	for (; i < argc; i++)
		if (strncmp(argv[i], key, n) == 0 && argv[i][n] == '=')
			return argv[i] + n + 1;
	return NULL;
}

/* KEY = value in the [droce] section of the configuration file, into buf. */
static const char *
file_entry(const char *file, const char *key, char *buf, size_t len)
{
	struct rte_cfgfile *cfg = rte_cfgfile_load(file, 0);
	const char *v;

	if (cfg == NULL)
		return NULL;	/* device_config_parse reports it */
	v = rte_cfgfile_get_entry(cfg, "droce", key);
	if (v != NULL)
		snprintf(buf, len, "%s", v);
	rte_cfgfile_close(cfg);
	return v != NULL ? buf : NULL;
}

const char *
device_daemon_path(int argc, char **argv)
{
	const char *v = droce_arg(argc, argv, "--droce-daemon");
	const char *file = droce_arg(argc, argv, "--droce-config");

	if (v == NULL && file != NULL)
		v = file_entry(file, "daemon", daemon_path, sizeof(daemon_path));
	if (v == NULL)
		v = getenv("DROCE_DAEMON");
	return v != NULL && *v != '\0' ? v : NULL;
}

int
device_daemon_queues(int argc, char **argv)
{
	static char buf[16];
	const char *v = droce_arg(argc, argv, "--droce-queues");
	const char *file = droce_arg(argc, argv, "--droce-config");

	if (v == NULL && file != NULL)
		v = file_entry(file, "queues", buf, sizeof(buf));
	if (v == NULL)
		v = getenv("DROCE_QUEUES");
	if (v == NULL || *v == '\0' || strcmp(v, "region") == 0)
		return 1;
	if (strcmp(v, "shared") == 0)
		return 0;
	fprintf(stderr, "droce: queues=%s: region or shared\n", v);
	return -EINVAL;
}

/*
 * No EAL: what it would have taken is skipped, as rte_eal_init returns
 * it (the options before the first "--", which argv[ret] then holds the
 * program's name in place of), and ignored.
 */
static int
skip_eal_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			argv[i] = argv[0];
			return i;
		}
	return 0;
}

int
device_daemon_connect_plain(const char *path, int argc, char **argv)
{
	char prefix[DMN_PREFIX_LEN];
	int rc = verbs_daemon_connect(path, prefix, sizeof(prefix));

	if (rc != 0) {
		fprintf(stderr, "droce: daemon %s: %s\n", path, strerror(-rc));
		errno = -rc;
		return -1;
	}
	daemon_regions = true;
	return skip_eal_args(argc, argv);
}

int
device_daemon_eal_init(const char *path, int argc, char **argv)
{
	static char prefix_opt[DMN_PREFIX_LEN + 16];
	char prefix[DMN_PREFIX_LEN];
	const char *opts[] = { "--proc-type=secondary", prefix_opt,
			       /* droced's is the telemetry socket of the prefix */
			       "--no-telemetry" };
	int rc = verbs_daemon_connect(path, prefix, sizeof(prefix));

	if (rc != 0) {
		fprintf(stderr, "droce: daemon %s: %s\n", path, strerror(-rc));
		errno = -rc;
		return -1;
	}
	if (prefix[0] == '\0') {
		/* droced --no-secondaries: its EAL is --in-memory, nothing to join */
		fprintf(stderr, "droce: daemon %s serves no secondaries "
			"(droced --no-secondaries): queues=shared refused\n", path);
		errno = EOPNOTSUPP;
		return -1;
	}
	snprintf(prefix_opt, sizeof(prefix_opt), "--file-prefix=%s", prefix);
	return device_eal_init_with(argc, argv, opts, (int)RTE_DIM(opts));
}

int
device_daemon_table(void)
{
	struct droce_device *d = &device_table.dev[0];

	if (device_table.ndev > 0)
		fprintf(stderr, "droce: daemon mode: the device options are droced's; "
			"the application's are ignored\n");
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "droce0");
	d->daemon = true;
	d->regions = daemon_regions;
	device_table.ndev = 1;
	return 0;
}

int
device_daemon_renew(void)
{
	int rc = verbs_daemon_renew();

	if (rc != 0) {
		fprintf(stderr, "droce: fork: daemon %s: %s\n", device_table.daemon_path,
			strerror(-rc));
		return rc;
	}
	device_table.dev[0].regions = true;
	device_table.no_eal = true;
	return 0;
}
