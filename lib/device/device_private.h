/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_DEVICE_PRIVATE_H
#define DROCE_DEVICE_PRIVATE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "droce.h"
#include "transport.h"

/* transport lcores per device (lib/transport TP_MAX_SHARDS) */
#define DEVICE_MAX_TRANSPORT_LCORES 8
#define DEVICE_MAX 16
#define DEVICE_MAX_ADDRS 8
/* P_Key table entries (lib/transport TP_MAX_PKEYS) */
#define DEVICE_MAX_PKEYS 16
#define DEVICE_NAME_LEN 32

struct droce_link;
struct droce_link_driver;
struct rte_mbuf;

struct device_addr {
	uint8_t gid[16];		/* IPv4-mapped or IPv6 */
	uint8_t prefix;			/* prefix length of the address family */
};

/* What droce_open_device() built (freed by droce_close_device()). */
struct device_open {
	struct droce_device *device;
	const struct droce_link_driver *driver;	/* that opened link */
	/* the port's link; with --droce-capture, the capture around it
	 * (lib/link droce_link_capture_wrap) */
	struct droce_link *link;
	struct droce_context *ctx;
};

/* The opaque struct droce_device of droce.h. */
struct droce_device {
	char name[DEVICE_NAME_LEN];	/* "droce0", ... */
	char port_name[64];		/* ethdev name or port id as configured */
	uint16_t port_id;
	uint32_t mtu;			/* 0: the port's */
	uint32_t max_qp;		/* 0: default */
	double drop;			/* test knob: frames lost each way */
	uint64_t drop_seed;		/* its seed ("drop_seed =", DROCE_SEED) */
	bool drop_seed_given;		/* else a fresh one per open */
	uint32_t drop_limit;		/* frames lost per queue at most; 0: no limit */
	bool rxe_retry_compat;
	struct tp_cc_config cc;		/* cc, ecn, dscp, udp_sport, rp_*, np_* */
	bool daemon;			/* droced's device (daemon mode) */
	bool regions;			/* ... opened by a plain process: no EAL (provider_dq) */		/* retry_cnt 7 = forever, as Linux rxe */
	/* transport_lcores: the engine's dedicated lcore(s); false: the
	 * opener's.  Several: QPs sharded over them, one port queue each */
	bool dedicated;
	unsigned int transport_lcore;	/* the first (shard 0) */
	unsigned int transport_lcores[DEVICE_MAX_TRANSPORT_LCORES];
	unsigned int ntransport_lcores;
	struct droce_context_attr tables;
	struct device_addr addr[DEVICE_MAX_ADDRS];
	unsigned int naddr;
	uint16_t pkeys[DEVICE_MAX_PKEYS];	/* "pkeys =", after 0xffff */
	unsigned int npkeys;
	char capture[256];		/* pcapng file ("capture ="), or "" */
	struct device_open *open;
	/* the port's link, open from the first droce_open_device to
	 * droce_cleanup (NULL before): a closed vdev port cannot come back */
	struct droce_link *link;
	/*
	 * What the telemetry thread may read (device_telemetry.c): open is
	 * published here once complete and withdrawn, before close frees
	 * anything, after the readers counted in tel_readers left.
	 */
	struct device_open *tel_open;	/* atomic */
	uint32_t tel_readers;		/* atomic */
};

struct device_table {
	bool initialized;
	/*
	 * This process is a child of fork() of the one that started droce:
	 * EAL's memory, ports and lcores are the parent's (hugepages shared,
	 * threads not copied), so the child has no device and must never
	 * close the parent's (device.c, "fork").
	 */
	bool forked;			/* atomic: a child renews droced's */
	/* droced's socket (daemon mode), for a child of fork(); "" in process */
	char daemon_path[PATH_MAX];
	/*
	 * --droce-progress=adaptive: the devices not on transport lcores run
	 * to completion with a progress thread behind (tp_adaptive.c); the
	 * drop-in libibverbs' default.  inline (the default): the engine runs
	 * only inside the application's calls.
	 */
	bool adaptive;
	bool no_eal;			/* droced's device on queue regions: EAL never started */
	struct droce_device dev[DEVICE_MAX];
	unsigned int ndev;
};

extern struct device_table device_table;

void device_links_close(void);

/*
 * Take droce's options out of args (the arguments after EAL's; args[0]
 * is EAL's last, usually "--") and record them; returns how many were
 * taken (they are moved to the front, see device_config.c) or -errno.
 */
int device_config_parse(int nargs, char **args);
/* Resolve the configured ports (or take every port) into device_table. */
int device_table_build(void);

/* device_telemetry.c: /droce/... telemetry commands (droce_init). */
void device_telemetry_register(void);
/* Let telemetry see an open device / withdraw it (waits for readers). */
void device_telemetry_publish(struct droce_device *d);
void device_telemetry_withdraw(struct droce_device *d);

/*
 * device_eal.c: rte_eal_init with --in-memory added unless the application
 * chose its memory or configuration mode (--no-huge, --no-shconf,
 * --proc-type, --in-memory); same return
 * and argv contract as rte_eal_init.
 */
int device_eal_init(int argc, char **argv);
/* rte_eal_init with n options added after argv[0] (the same contract). */
int device_eal_init_with(int argc, char **argv, const char *const *opts, int n);
/*
 * device_rundir.c: EAL's runtime directories.  Remove those of dead droce
 * processes (a droce.lock nobody holds); claim this process's (before
 * EAL; not a secondary's), removed at exit by the last droce process in it.
 */
void device_sweep_runtime_dirs(void);
void device_runtime_claim(int argc, char **argv);
/* EAL's runtime base: /var/run/dpdk as root, else XDG_RUNTIME_DIR or /tmp
 * (+ /dpdk); 0 or -ENAMETOOLONG. */
int device_runtime_base(char *buf, size_t len);

/*
 * device_daemon.c: daemon mode.  The socket path (--droce-daemon=, the
 * [droce] section's daemon = of --droce-config's file, DROCE_DAEMON), or
 * NULL; EAL as a secondary of that daemon (the device_eal_init contract);
 * the one device, droced's.
 */
const char *device_daemon_path(int argc, char **argv);
int device_daemon_eal_init(const char *path, int argc, char **argv);
/* Queue regions asked for (--droce-queues=, queues = in the [droce]
 * section, DROCE_QUEUES): 1 region (the default), 0 shared, -EINVAL. */
int device_daemon_queues(int argc, char **argv);
/* Queue regions: the connection only, no EAL; the device_eal_init
 * contract (EAL's options skipped, -1 with errno). */
int device_daemon_connect_plain(const char *path, int argc, char **argv);
int device_daemon_table(void);
/* A child of fork() of droced's application: connected to droced anew as
 * a plain process (its device then opened on queue regions); 0 or -errno. */
int device_daemon_renew(void);

#endif /* DROCE_DEVICE_PRIVATE_H */
