/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_DEVICE_PRIVATE_H
#define DROCE_DEVICE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "droce.h"

#define DEVICE_MAX 16
#define DEVICE_MAX_ADDRS 8
#define DEVICE_NAME_LEN 32

struct droce_link;
struct net_host;

struct device_addr {
	uint8_t gid[16];		/* IPv4-mapped or IPv6 */
	uint8_t prefix;			/* prefix length of the address family */
};

/* What droce_open_device() built (freed by droce_close_device()). */
struct device_open {
	struct droce_device *device;
	struct droce_link *link;
	struct net_host *host;
	struct droce_context *ctx;
};

/* The opaque struct droce_device of droce.h. */
struct droce_device {
	char name[DEVICE_NAME_LEN];	/* "droce0", ... */
	char port_name[64];		/* ethdev name or port id as configured */
	uint16_t port_id;
	uint32_t mtu;			/* 0: the port's */
	uint32_t max_qp;		/* 0: default */
	struct droce_context_attr tables;
	struct device_addr addr[DEVICE_MAX_ADDRS];
	unsigned int naddr;
	struct device_open *open;
};

struct device_table {
	bool initialized;
	struct droce_device dev[DEVICE_MAX];
	unsigned int ndev;
};

extern struct device_table device_table;

/*
 * Take droce's options out of args (the arguments after EAL's; args[0]
 * is EAL's last, usually "--") and record them; returns how many were
 * taken (they are moved to the front, see device_config.c) or -errno.
 */
int device_config_parse(int nargs, char **args);
/* Resolve the configured ports (or take every port) into device_table. */
int device_table_build(void);

#endif /* DROCE_DEVICE_PRIVATE_H */
