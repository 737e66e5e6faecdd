/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Start-up steps droce's tools share: the program's own arguments after
 * droce_init(), picking a device by name, the idle hook that keeps a
 * device polled while a tool waits.
 */
#ifndef DROCE_APP_DEV_H
#define DROCE_APP_DEV_H

#include "droce.h"

/*
 * droce_init() returns how many leading arguments it consumed; what is
 * left may start with EAL's "--" (or the program name).  Returns a new
 * vector (free() it) whose [0] is argv0, for getopt; NULL on no memory.
 */
char **app_program_args(int argc, char **argv, int consumed, char *argv0,
			int *pargc);
/* The device called name, or the first one when name is NULL; says why not. */
struct droce_device *app_pick_device(struct droce_device **list, const char *name);
/* For app_sock_set_idle(): arg is the struct droce_context. */
void app_progress_idle(void *context);

#endif /* DROCE_APP_DEV_H */
