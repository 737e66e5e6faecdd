/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_dq.h - the queue-region provider's entry for whoever enumerates
 * devices (lib/device): droced's device opened by a plain process.
 */
#ifndef VERBS_DQ_H
#define VERBS_DQ_H

struct droce_context;
struct droce_device;

/*
 * A context on droced's device over the process's connection (made by
 * verbs_daemon_connect, no EAL) and its queue region (opened with the
 * first context): NULL with errno.
 */
struct droce_context *verbs_dq_open(struct droce_device *device);

/*
 * For a child of fork() (lib/device's handler): the region is the
 * parent's (a shared mapping of droced's memfd), so the child's mapping
 * of it is replaced by private zero pages (what the child's inherited
 * queues write reaches nobody) and the region forgotten, with its
 * doorbell; the child's next context opens a region of its own on its
 * own connection.  Async-signal-safe.
 */
void verbs_dq_fork_child(void);

#endif /* VERBS_DQ_H */
