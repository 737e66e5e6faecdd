/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced: the memory-owner daemon (README.md).  droced_main.c: options,
 * the socket, the loop, --ctl; droced_apps.c: the applications, their
 * handle tables, the requests and the reclaim of a dead application;
 * droced_persist.c: the persistent regions (droced_table.h is what the
 * two share); droced_files.c: the files a daemon's EAL leaves;
 * droced_config.c: --config=FILE.
 */
#ifndef DROCED_H
#define DROCED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "droce.h"
#include "verbs_daemon.h"
#include "verbs_engine.h"

struct droced_app;

/* The application on a new connection fd (pid from SO_PEERCRED), or NULL. */
struct droced_app *droced_app_new(int fd, pid_t pid);
/* One request of app answered: false when the connection is to be closed. */
bool droced_app_serve(struct droced_app *app);
/* The application is gone: revoke its keys, then free all it held (its QPs
 * and what they use DROCED_LINGER_US later: droced_linger_tick). */
void droced_app_reap(struct droced_app *app);
/* What lingered long enough torn down (dead applications' tables, released
 * regions): how long poll may wait (at most wait_ms) for the next. */
int droced_linger_tick(int wait_ms);
/* droced exits: all that lingers torn down now. */
void droced_linger_shutdown(void);
int droced_app_fd(const struct droced_app *app);
/*
 * The queue regions' poller on droced's engine lcore (droced_dq.c): start
 * (after the device opened: 0 or a positive errno) and stop.  The main
 * thread holds it off (hold: returns once no round of it is running)
 * while it serves requests and reaps, and releases it before it sleeps.
 */
int droced_dq_start(struct droce_context *ctx);
void droced_dq_stop(struct droce_context *ctx);
void droced_dq_hold(void);
void droced_dq_release(void);
/* droced's own eventfd the poller counts a refusal on (-1: none), and
 * what the main thread does when it fires (telemetry's counters). */
int droced_dq_wake_fd(void);
void droced_dq_woken(void);
/* A lease of droced's expired (its event acked): a persistent region's is released. */
void droced_lease_expired(struct droce_mr *mr);
/* Kept regions' windows looked at (the client-side release): how long
 * poll may wait (at most wait_ms) for the next look. */
int droced_persist_tick(int wait_ms);
/* droced exits: every region released (its teardown lingers). */
void droced_persist_shutdown(void);
/*
 * An event of droced's engine to the application whose object it names
 * (that object's name in the application), a port or device event to
 * every application; an event of no application's object is dropped.
 */
void droced_route_event(const struct droce_async_event *ev);

/* The daemon's device and EAL prefix (set once, before any application). */
/* max_apps: the applications served at once (--max-apps); the HELLO of
 * one more is answered EUSERS. */
void droced_apps_init(struct droce_context *ctx, const char *prefix, unsigned int max_apps);

/*
 * droced_cm.c: the RDMA CM relay (README.md "RDMA CM"): droced's GSI QP
 * on ctx (its absence logged: CM requests then answer EOPNOTSUPP), the fd
 * the loop polls (-1: none) and what to do when it is readable, the held
 * REQs' deadlines (how long poll may wait, at most wait_ms).
 */
void droced_cm_init(struct droce_context *ctx);
void droced_cm_shutdown(void);
int droced_cm_fd(void);
void droced_cm_poll(void);
int droced_cm_tick(int wait_ms);

/*
 * droced_config.c: droced --config=FILE [-- droce options]: the command
 * line (EAL's options, --, droce's, --socket, --max-apps, then extra) that
 * FILE's [droced] section and device sections stand for, or NULL (said why).
 */
char **droced_config_argv(const char *argv0, const char *file, int nextra, char **extra,
			  int *argc);

/*
 * droced_files.c: remove the hugepage files and runtime directories of
 * dead droced-<pid> prefixes (at start), of ours (after EAL's clean-up).
 */
void droced_sweep_dead(void);
void droced_remove_own(const char *prefix);

#endif /* DROCED_H */
