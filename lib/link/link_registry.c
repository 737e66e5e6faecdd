/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The link-driver registry (droce_link.h).  Filled by constructors before
 * main() and read-only afterwards, so it takes no lock.
 */
#include <errno.h>
#include <string.h>

#include "droce_link.h"

#define LINK_DRIVERS_MAX 8

static const struct droce_link_driver *link_drivers[LINK_DRIVERS_MAX];
static unsigned int link_ndrivers;

int
droce_link_driver_register(const struct droce_link_driver *drv)
{
	if (drv == NULL || drv->name == NULL || drv->open == NULL)
		return -EINVAL;
	if (droce_link_driver_find(drv->name) != NULL)
		return -EEXIST;
	if (link_ndrivers == LINK_DRIVERS_MAX)
		return -ENOSPC;
	link_drivers[link_ndrivers++] = drv;
	return 0;
}

const struct droce_link_driver *
droce_link_driver_find(const char *name)
{
	for (unsigned int i = 0; name != NULL && i < link_ndrivers; i++)
		if (strcmp(link_drivers[i]->name, name) == 0)
			return link_drivers[i];
	return NULL;
}
