/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_dev.h"

char **
app_program_args(int argc, char **argv, int consumed, char *argv0, int *pargc)
{
	char **rest = argv + consumed;
	int n = argc - consumed;
	char **v;
	int j = 0;

	v = calloc((size_t)n + 2, sizeof(*v));
	if (v == NULL)
		return NULL;
	v[j++] = argv0;
	for (int i = 0; i < n; i++) {
		if (i == 0 && (rest[i] == argv0 || strcmp(rest[i], argv0) == 0 ||
			       strcmp(rest[i], "--") == 0))
			continue;
		v[j++] = rest[i];
	}
	*pargc = j;
	return v;
}

struct droce_device *
app_pick_device(struct droce_device **list, const char *name)
{
	int i;

	if (name == NULL) {
		if (list[0] == NULL)
			fprintf(stderr, "No IB devices found (droce: give EAL "
				"a port, e.g. --vdev=net_af_packet0,iface=...)\n");
		return list[0];
	}
	for (i = 0; list[i] != NULL; i++) {
		const char *n = droce_get_device_name(list[i]);

		if (n != NULL && strcmp(n, name) == 0)
			return list[i];
	}
	fprintf(stderr, "IB device %s not found", name);
	for (i = 0; list[i] != NULL; i++)
		fprintf(stderr, "%s%s", i == 0 ? " (droce devices: " : ", ",
			droce_get_device_name(list[i]));
	fprintf(stderr, "%s\n", i == 0 ? " (no droce devices)" : ")");
	return NULL;
}

void
app_progress_idle(void *context)
{
	droce_progress(context);
}
