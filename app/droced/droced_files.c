/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced_files.c - what a daemon's EAL leaves: a primary with shared
 * configuration (not --in-memory, which secondaries cannot join) keeps
 * its hugepages as files in hugetlbfs (the secondaries open them by path)
 * and its runtime directory, also after a clean exit.  droced removes its
 * own at exit, and at start those of droced-<pid> prefixes whose process
 * is gone (a daemon killed with SIGKILL).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device_private.h"
#include "droced.h"

/* A runtime directory ("P") or hugepage file ("Pmap_N") of the prefix P. */
typedef bool (*owner_match)(const char *name, const char *prefix);

static bool
of_prefix(const char *name, size_t n)
{
	return name[n] == '\0' || strncmp(name + n, "map_", 4) == 0;
}

static bool
own(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(name, prefix, n) == 0 && of_prefix(name, n);
}

static bool
any(const char *name, const char *prefix)
{
	(void)name;
	(void)prefix;
	return true;
}

static bool
dead_daemon(const char *name, const char *prefix)
{
	char *end;
	long pid;

	(void)prefix;
	if (strncmp(name, "droced-", 7) != 0)
		return false;
	pid = strtol(name + 7, &end, 10);
	return end != name + 7 && pid > 0 && pid <= INT_MAX && of_prefix(end, 0) &&
	       kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Remove dir's entries that match (directories: their files, then them). */
static void
remove_matching(const char *dir, owner_match match, const char *prefix, bool dirs)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dp = opendir(dir);

	if (dp == NULL)
		return;
	while ((d = readdir(dp)) != NULL) {
		if (d->d_name[0] == '.' || !match(d->d_name, prefix) ||
		    snprintf(path, sizeof(path), "%s/%s", dir, d->d_name) >= (int)sizeof(path))
			continue;
		if (dirs && d->d_type == DT_DIR) {
			remove_matching(path, any, NULL, false);
			(void)rmdir(path);
		} else if (!dirs) {
			(void)unlink(path);
		}
	}
	closedir(dp);
}

static void
remove_files(owner_match match, const char *prefix)
{
	char base[PATH_MAX], mnt[PATH_MAX], type[64];
	FILE *f = fopen("/proc/mounts", "r");

	while (f != NULL && fscanf(f, "%*s %4095s %63s %*[^\n]", mnt, type) == 2)
		if (strcmp(type, "hugetlbfs") == 0)
			remove_matching(mnt, match, prefix, false);
	if (f != NULL)
		fclose(f);
	if (device_runtime_base(base, sizeof(base)) == 0)
		remove_matching(base, match, prefix, true);
}

void
droced_sweep_dead(void)
{
	remove_files(dead_daemon, NULL);
}

void
droced_remove_own(const char *prefix)
{
	remove_files(own, prefix);
}
