/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EAL's runtime directory (BASE/PREFIX, BASE = /var/run/dpdk as root):
 * DPDK 22.11 creates it and never removes it, also not in
 * rte_eal_cleanup.  droce removes the directories it created, and no
 * other:
 *  - droce_init, before EAL, claims the directory of the prefix EAL will
 *    use: it creates it and the file droce.lock in it, and holds a shared
 *    flock(2) on that file for the life of the process (a daemon's
 *    application, a secondary of droced's prefix, claims nothing).
 *    The lock, not a pid, tells a live owner from a dead one: the kernel
 *    drops it when the process dies, however it dies.
 *  - At exit (an atexit handler registered before EAL's own, so it runs
 *    after EAL's telemetry has unlinked its socket) the last droce process
 *    of the directory (its lock upgraded to exclusive without waiting)
 *    removes it: its files, droce.lock, then the directory.
 *  - droce_init first sweeps BASE: a directory with a droce.lock that
 *    nobody holds is a dead droce process's and goes the same way.
 * Only a directory with droce.lock is ever touched.  Before removing one
 * the remover checks that no other process still uses it (a program of
 * another kind given the same prefix): a socket someone listens on (after
 * a crash; DEVICE_SWEEP_AGE_S old at least, so a socket bound but not yet
 * listening is not taken for dead) or a `config` file another process
 * holds EAL's lock on.  Such a directory keeps its files and loses only
 * droce.lock: it is no longer droce's.
 * Races: a remover holds droce.lock exclusively while it removes, and
 * unlinks droce.lock last; a claimant that locked a droce.lock which was
 * unlinked meanwhile (its inode no longer the path's) starts over, so
 * EAL never starts in a directory being removed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "device_private.h"

#define DEVICE_LOCK_NAME "droce.lock"
#define DEVICE_SWEEP_AGE_S 2
#define DEVICE_CLAIM_TRIES 8

/* This process's claim (one: droce_init runs once). */
static struct {
	int fd;			/* droce.lock, shared lock held; -1: none */
	pid_t pid;		/* the claimant: a forked child's exit is not its */
	char dir[PATH_MAX];
} claim = { .fd = -1 };

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

/* ---- is it still in use ---------------------------------------------------- */

static bool
refused(const struct sockaddr_un *a, int type)
{
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	int rc;

	if (fd < 0)
		return false;
	rc = connect(fd, (const struct sockaddr *)a, sizeof(*a));
	close(fd);
	return rc != 0 && errno == ECONNREFUSED;
}

/*
 * Nobody listens on the socket at path (and it is old enough to tell):
 * telemetry's is a SOCK_SEQPACKET, EAL's multi-process one a SOCK_DGRAM.
 */
static bool
dead_socket(const char *path, const struct stat *st, time_t now)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	if (now - st->st_ctime < DEVICE_SWEEP_AGE_S || strlen(path) >= sizeof(a.sun_path))
		return false;
	memcpy(a.sun_path, path, strlen(path) + 1);
	return refused(&a, SOCK_SEQPACKET) || refused(&a, SOCK_DGRAM);
}

/* Another process holds an fcntl lock on path (EAL's on its config). */
static bool
locked_by_other(const char *path)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool locked;

	if (fd < 0)
		return false;
	locked = fcntl(fd, F_GETLK, &fl) != 0 || fl.l_type != F_UNLCK;
	close(fd);
	return locked;
}

/* Something in dp (dir) another process may still use. */
static bool
in_use(DIR *dp, const char *dir, bool at_exit)
{
	time_t now = time(NULL);
	char path[PATH_MAX];
	struct dirent *d;
	struct stat st;

	while ((d = readdir(dp)) != NULL) {
		if (d->d_name[0] == '.' || strcmp(d->d_name, DEVICE_LOCK_NAME) == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, d->d_name) >= (int)sizeof(path) ||
		    lstat(path, &st) != 0)
			return true;
		/* at exit this process's own sockets may still be open */
		if (S_ISSOCK(st.st_mode) && !at_exit && !dead_socket(path, &st, now))
			return true;
		if (strcmp(d->d_name, "config") == 0 && locked_by_other(path))
			return true;
	}
	return false;
}

/* ---- removal ---------------------------------------------------------------- */

/*
 * dir is droce's and fd, its droce.lock, is held exclusively: remove the
 * directory, or only droce.lock if another process still uses it.
 */
static void
remove_dir(const char *dir, bool at_exit)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dp = opendir(dir);

	if (dp == NULL)
		return;
	if (!in_use(dp, dir, at_exit)) {
		rewinddir(dp);
		while ((d = readdir(dp)) != NULL)
			if (d->d_name[0] != '.' && strcmp(d->d_name, DEVICE_LOCK_NAME) != 0 &&
			    snprintf(path, sizeof(path), "%s/%s", dir, d->d_name) <
			    (int)sizeof(path))
				(void)unlink(path);
	}
	closedir(dp);
	if (snprintf(path, sizeof(path), "%s/%s", dir, DEVICE_LOCK_NAME) < (int)sizeof(path))
		(void)unlink(path);
	(void)rmdir(dir);	/* fails while anything is left */
}

/* fd is the file at path still (not unlinked or replaced meanwhile). */
static bool
same_file(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A dead droce process's directory: remove it. */
static void
sweep_dir(const char *dir)
{
	char lock[PATH_MAX];
	int fd;

	if (snprintf(lock, sizeof(lock), "%s/%s", dir, DEVICE_LOCK_NAME) >= (int)sizeof(lock))
		return;
	fd = open(lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;			/* not droce's */
	if (flock(fd, LOCK_EX | LOCK_NB) == 0 && same_file(fd, lock))
		remove_dir(dir, false);
	close(fd);
}

void
device_sweep_runtime_dirs(void)
{
	char base[PATH_MAX], dir[PATH_MAX];
	struct dirent *d;
	DIR *dp;

	if (device_runtime_base(base, sizeof(base)) != 0 || (dp = opendir(base)) == NULL)
		return;
	while ((d = readdir(dp)) != NULL) {
		if (d->d_name[0] == '.' ||
		    snprintf(dir, sizeof(dir), "%s/%s", base, d->d_name) >= (int)sizeof(dir))
			continue;
		sweep_dir(dir);
	}
	closedir(dp);
}

/* ---- this process's directory ---------------------------------------------- */

/* At exit: the last droce process of the directory removes it. */
static void
release_claim(void)
{
	if (claim.fd < 0 || getpid() != claim.pid)
		return;
	if (flock(claim.fd, LOCK_EX | LOCK_NB) == 0)
		remove_dir(claim.dir, true);
	close(claim.fd);
	claim.fd = -1;
}

/* The value of EAL option opt (--opt=V or --opt V; the last one), or NULL. */
static const char *
eal_opt_value(int argc, char **argv, const char *opt)
{
	size_t n = strlen(opt);
	const char *v = NULL;

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strncmp(argv[i], opt, n) != 0)
			continue;
		if (argv[i][n] == '=')
			v = argv[i] + n + 1;
		else if (argv[i][n] == '\0' && i + 1 < argc)
			v = argv[++i];
	}
	return v;
}

/* Create dir (and base) and lock its droce.lock shared: the fd, or -errno. */
static int
lock_dir(const char *base, const char *dir)
{
	char lock[PATH_MAX];
	int fd;

	if (snprintf(lock, sizeof(lock), "%s/%s", dir, DEVICE_LOCK_NAME) >= (int)sizeof(lock))
		return -ENAMETOOLONG;
	if ((mkdir(base, 0700) != 0 && errno != EEXIST) ||
	    (mkdir(dir, 0700) != 0 && errno != EEXIST))
		return -errno;
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_SH) != 0)
		if (errno != EINTR) {
			close(fd);
			return -EAGAIN;
		}
	if (!same_file(fd, lock)) {	/* a sweep removed it meanwhile */
		close(fd);
		return -EAGAIN;
	}
	return fd;
}

void
device_runtime_claim(int argc, char **argv)
{
	const char *type = eal_opt_value(argc, argv, "--proc-type");
	const char *prefix = eal_opt_value(argc, argv, "--file-prefix");
	char base[PATH_MAX];
	int fd = -EAGAIN;

	if (claim.fd >= 0 || (type != NULL && strcmp(type, "secondary") == 0))
		return;			/* another process's directory */
	if (device_runtime_base(base, sizeof(base)) != 0 ||
	    snprintf(claim.dir, sizeof(claim.dir), "%s/%s", base,
		     prefix != NULL ? prefix : "rte") >= (int)sizeof(claim.dir))
		return;
	for (int i = 0; i < DEVICE_CLAIM_TRIES && fd == -EAGAIN; i++)
		fd = lock_dir(base, claim.dir);
	if (fd < 0)
		return;			/* unclaimed: left as EAL leaves it */
	claim.fd = fd;
	claim.pid = getpid();
	if (atexit(release_claim) != 0) {
		close(fd);
		claim.fd = -1;
	}
}
