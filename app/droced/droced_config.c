/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced_config.c - droced --config=FILE: the command line a configuration
 * file stands for (config/droced.ini).  Its [droced] section holds what
 * droced's own command line would:
 *   eal = -l 0,1 --no-pci --vdev=...   EAL's options, split at white space
 *   socket = PATH                      default DROCE_DAEMON_SOCKET
 *   max_apps = N                       default 1024
 *   secondaries = no                   --no-secondaries (default yes)
 * and the rest of the file is droce's device configuration, read through
 * --droce-config=FILE (config/droce.ini's sections).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>

#include "droced.h"

#define CONFIG_MAX_ARGS 128

/* The file's strings outlive the parse: EAL and droce keep pointers into argv. */
static struct {
	char *eal;
	char opt[3][4200];	/* --droce-config=, --socket=, --max-apps= */
	char *argv[CONFIG_MAX_ARGS + 1];
} config;

static int
add_arg(int *argc, char *arg)
{
	if (*argc >= CONFIG_MAX_ARGS)
		return -E2BIG;
	config.argv[(*argc)++] = arg;
	return 0;
}

/* "--name=" VALUE of [droced] key, or nothing when the key is absent. */
static int
add_entry_opt(struct rte_cfgfile *cfg, const char *key, const char *name, char *buf,
	      int *argc)
{
	const char *v = rte_cfgfile_get_entry(cfg, "droced", key);

	if (v == NULL)
		return 0;
	if (snprintf(buf, sizeof(config.opt[0]), "--%s=%s", name, v) >=
	    (int)sizeof(config.opt[0]))
		return -ENAMETOOLONG;
	return add_arg(argc, buf);
}

/* secondaries = yes | no: no is --no-secondaries; another value -EINVAL. */
static int
secondaries_opt(struct rte_cfgfile *cfg, int *argc)
{
	const char *v = rte_cfgfile_get_entry(cfg, "droced", "secondaries");

	if (v == NULL || strcmp(v, "yes") == 0)
		return 0;
	if (strcmp(v, "no") != 0)
		return -EINVAL;
	return add_arg(argc, "--no-secondaries");
}

static int
config_args(struct rte_cfgfile *cfg, const char *argv0, const char *file, int nextra,
	    char **extra, int *argc)
{
	const char *eal = rte_cfgfile_get_entry(cfg, "droced", "eal");
	int rc;

	*argc = 0;
	config.argv[(*argc)++] = (char *)argv0;
	if (eal == NULL)
		return -ENOENT;
	config.eal = strdup(eal);
	if (config.eal == NULL)
		return -ENOMEM;
	for (char *save = NULL, *t = strtok_r(config.eal, " \t", &save); t != NULL;
	     t = strtok_r(NULL, " \t", &save))
		if ((rc = add_arg(argc, t)) != 0)
			return rc;
	if ((rc = add_arg(argc, "--")) != 0)
		return rc;
	if (snprintf(config.opt[0], sizeof(config.opt[0]), "--droce-config=%s", file) >=
	    (int)sizeof(config.opt[0]))
		return -ENAMETOOLONG;
	if ((rc = add_arg(argc, config.opt[0])) != 0 ||
	    (rc = add_entry_opt(cfg, "socket", "socket", config.opt[1], argc)) != 0 ||
	    (rc = add_entry_opt(cfg, "max_apps", "max-apps", config.opt[2], argc)) != 0 ||
	    (rc = secondaries_opt(cfg, argc)) != 0)
		return rc;
	for (int i = 0; i < nextra; i++)	/* the command line's, after the file's */
		if ((rc = add_arg(argc, extra[i])) != 0)
			return rc;
	config.argv[*argc] = NULL;
	return 0;
}

char **
droced_config_argv(const char *argv0, const char *file, int nextra, char **extra, int *argc)
{
	struct rte_cfgfile *cfg = rte_cfgfile_load(file, 0);
	int rc;

	if (cfg == NULL) {
		fprintf(stderr, "droced: cannot read %s\n", file);
		return NULL;
	}
	rc = config_args(cfg, argv0, file, nextra, extra, argc);
	rte_cfgfile_close(cfg);
	if (rc == -ENOENT)
		fprintf(stderr, "droced: %s: no eal = in its [droced] section\n", file);
	else if (rc != 0)
		fprintf(stderr, "droced: %s: %s\n", file, strerror(-rc));
	return rc == 0 ? config.argv : NULL;
}
