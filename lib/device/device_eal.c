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
 *    now and then (also when given by hand), so such a process still
 *    leaves its runtime directory's config and fbarray files.
 *  - What such a process still leaves is its runtime directory: holding
 *    only its telemetry socket after a crash, empty after a clean exit.
 *    droce_init removes the directories that hold sockets nobody listens
 *    on and nothing else, unchanged for DEVICE_SWEEP_AGE_S (so a process
 *    between mkdir, bind and listen is never taken for dead).  An empty
 *    directory (a clean exit's) is left alone: the next process of its
 *    prefix may have just entered it, and EAL fails if it vanishes under
 *    it.  Directories with anything else (a shared configuration's
 *    files) are left alone too.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>

#include "device_private.h"

#define DEVICE_SWEEP_AGE_S 2

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

/* ---- stale runtime directories ------------------------------------------- */

/* Nobody listens on the socket at path (and it is old enough to tell). */
static bool
dead_socket(const char *path, const struct stat *st, time_t now)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd, rc;

	if (!S_ISSOCK(st->st_mode) || now - st->st_ctime < DEVICE_SWEEP_AGE_S ||
	    strlen(path) >= sizeof(a.sun_path))
		return false;
	memcpy(a.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return rc != 0 && errno == ECONNREFUSED;
}

/*
 * dir holds dead sockets and nothing else (a crash's: a clean exit unlinks
 * its socket) and has not changed for DEVICE_SWEEP_AGE_S: remove them and
 * it.
 */
static void
sweep_dir(const char *dir, time_t now)
{
	char path[PATH_MAX];
	unsigned int dead = 0;
	struct dirent *d;
	struct stat st;
	DIR *dp;

	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) ||
	    now - st.st_mtime < DEVICE_SWEEP_AGE_S || (dp = opendir(dir)) == NULL)
		return;
	while ((d = readdir(dp)) != NULL) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, d->d_name) >= (int)sizeof(path) ||
		    lstat(path, &st) != 0 || !dead_socket(path, &st, now)) {
			closedir(dp);
			return;		/* something alive, or not ours to judge */
		}
		dead++;
	}
	if (dead == 0) {
		closedir(dp);
		return;
	}
	rewinddir(dp);
	while ((d = readdir(dp)) != NULL) {
		if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0 &&
		    snprintf(path, sizeof(path), "%s/%s", dir, d->d_name) < (int)sizeof(path))
			(void)unlink(path);
	}
	closedir(dp);
	(void)rmdir(dir);
}

int
device_runtime_base(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	if (getuid() == 0)
		n = snprintf(buf, len, "/var/run/dpdk");
	else
		n = snprintf(buf, len, "%s/dpdk", xdg != NULL ? xdg : "/tmp");
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

void
device_sweep_runtime_dirs(void)
{
	char base[PATH_MAX], dir[PATH_MAX];
	time_t now = time(NULL);
	struct dirent *d;
	DIR *dp;

	if (device_runtime_base(base, sizeof(base)) != 0 || (dp = opendir(base)) == NULL)
		return;
	while ((d = readdir(dp)) != NULL) {
		if (d->d_name[0] == '.' ||
		    snprintf(dir, sizeof(dir), "%s/%s", base, d->d_name) >= (int)sizeof(dir))
			continue;
		sweep_dir(dir, now);
	}
	closedir(dp);
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
