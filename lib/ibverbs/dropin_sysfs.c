/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_sysfs.c - droce's devices as the kernel's sysfs describes RDMA
 * devices, for the programs that read it beside the verbs (UCX's GID types
 * and netdevs, libfabric, rdma-core's tests: the device's netdev).
 *
 * At start, with DROCE_SYSFS=DIR (usertools/droce-run sets it to
 * /sys/class/infiniband in a mount namespace where that is a tmpfs), each
 * device DEV gets DIR/DEV laid out as the kernel's
 * /sys/class/infiniband/DEV (drivers/infiniband/core/sysfs.c): node_type,
 * node_guid, sys_image_guid, fw_ver, ports/P/{state, phys_state,
 * link_layer, lid, sm_lid, lid_mask_count, gids/I, gid_attrs/types/I,
 * gid_attrs/ndevs/I, pkeys/I}, device/numa_node and device/net/IFNAME
 * (a link to /sys/class/net/IFNAME when a kernel netdev holds one of the
 * device's addresses).  As in the kernel, an empty GID slot reads as the
 * zero GID and has no type or netdev file.  ibv_device.ibdev_path then
 * names DIR/DEV.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dropin_private.h"

#define SYSFS_PATH_MAX 4096

/* out = dir/name (out: SYSFS_PATH_MAX bytes); 0 or -ENAMETOOLONG. */
static int
sysfs_join(char *out, const char *dir, const char *name)
{
	return snprintf(out, SYSFS_PATH_MAX, "%s/%s", dir, name) >= SYSFS_PATH_MAX ?
		-ENAMETOOLONG : 0;
}

/* mkdir -p of dir (its parents up to an existing one); 0 or -errno. */
static int
sysfs_mkdirs(const char *dir)
{
	char p[SYSFS_PATH_MAX];

	if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = strchr(p + 1, '/');; s = strchr(s + 1, '/')) {
		if (s != NULL)
			*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return -errno;
		if (s == NULL)
			return 0;
		*s = '/';
	}
}

/* dir/name holding the formatted text and a newline, as sysfs prints. */
__attribute__((format(printf, 3, 4))) static int
sysfs_put(const char *dir, const char *name, const char *fmt, ...)
{
	char path[SYSFS_PATH_MAX], text[256];
	va_list ap;
	int fd, n, rc = 0;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(text) - 1 ||
	    snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	text[n++] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
	if (fd < 0)
		return -errno;
	if (write(fd, text, (size_t)n) != n)
		rc = -EIO;
	close(fd);
	return rc;
}

/* The GUID as sysfs prints it: four groups of four hex digits. */
static int
sysfs_put_guid(const char *dir, const char *name, uint64_t be_guid)
{
	uint64_t g = be64toh(be_guid);

	return sysfs_put(dir, name, "%04x:%04x:%04x:%04x",
			 (unsigned int)(g >> 48), (unsigned int)(g >> 32) & 0xffff,
			 (unsigned int)(g >> 16) & 0xffff, (unsigned int)g & 0xffff);
}

static bool
gid_is_zero(const union droce_gid *gid)
{
	static const uint8_t zero[16];

	return memcmp(gid->raw, zero, sizeof(zero)) == 0;
}

/*
 * The kernel netdev holding the GID's address (IPv4-mapped: the IPv4
 * one) into ifname; false when none does.
 */
static bool
gid_netdev(const union droce_gid *gid, char ifname[IF_NAMESIZE])
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	bool v4 = memcmp(gid->raw, v4mapped, sizeof(v4mapped)) == 0;
	struct ifaddrs *list;
	bool found = false;

	if (getifaddrs(&list) != 0)
		return false;
	for (struct ifaddrs *a = list; a != NULL && !found; a = a->ifa_next) {
		if (a->ifa_addr == NULL)
			continue;
		if (v4 && a->ifa_addr->sa_family == AF_INET)
			found = memcmp(&((struct sockaddr_in *)a->ifa_addr)->sin_addr,
				       gid->raw + 12, 4) == 0;
		else if (!v4 && a->ifa_addr->sa_family == AF_INET6)
			found = memcmp(&((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr,
				       gid->raw, 16) == 0;
		if (found)
			snprintf(ifname, IF_NAMESIZE, "%s", a->ifa_name);
	}
	freeifaddrs(list);
	return found;
}

/* ports/P/gids/I, and for a valid GID its type, netdev and the device's
 * device/net/IFNAME link. */
static int
sysfs_put_gid(struct droce_context *c, const char *devdir, const char *portdir,
	      uint8_t port, int i)
{
	char dir[SYSFS_PATH_MAX], name[16], ifname[IF_NAMESIZE], target[64];
	union droce_gid gid;
	const uint8_t *r = gid.raw;
	int rc;

	if (droce_query_gid(c, port, i, &gid) != 0)
		memset(&gid, 0, sizeof(gid));
	snprintf(name, sizeof(name), "%d", i);
	rc = sysfs_join(dir, portdir, "gids");
	rc = rc != 0 ? rc : sysfs_put(dir, name, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
		       "%02x%02x:%02x%02x:%02x%02x:%02x%02x", r[0], r[1], r[2], r[3],
		       r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
		       r[13], r[14], r[15]);
	if (rc != 0 || gid_is_zero(&gid))
		return rc;
	/* every droce GID is a RoCEv2 one (the kernel's name for the type) */
	rc = sysfs_join(dir, portdir, "gid_attrs/types");
	rc = rc != 0 ? rc : sysfs_put(dir, name, "RoCE v2");
	if (rc != 0 || !gid_netdev(&gid, ifname))
		return rc;
	rc = sysfs_join(dir, portdir, "gid_attrs/ndevs");
	rc = rc != 0 ? rc : sysfs_put(dir, name, "%s", ifname);
	if (rc != 0)
		return rc;
	/*
	 * device/net exists only when a netdev holds a GID's address, as for
	 * a kernel device: programs take its first entry as the device's
	 * interface (rdma-core's tests, base.py), so an empty one would name
	 * no interface at all.
	 */
	rc = sysfs_join(dir, devdir, "device/net");
	rc = rc != 0 ? rc : sysfs_mkdirs(dir);
	if (rc != 0)
		return rc;
	if (snprintf(dir, sizeof(dir), "%s/device/net/%s", devdir, ifname) >=
	    (int)sizeof(dir))
		return -ENAMETOOLONG;
	snprintf(target, sizeof(target), "/sys/class/net/%s", ifname);
	if (symlink(target, dir) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static const char *
port_state_name(enum droce_port_state s)
{
	static const char *const names[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
	};

	return (unsigned int)s < sizeof(names) / sizeof(names[0]) ? names[s] : "UNKNOWN";
}

static int
sysfs_put_port(struct droce_context *c, const char *devdir, uint8_t port)
{
	char dir[SYSFS_PATH_MAX], sub[SYSFS_PATH_MAX];
	struct droce_port_attr pa;
	int rc = droce_query_port(c, port, &pa);

	if (rc != 0)
		return -rc;
	if (snprintf(dir, sizeof(dir), "%s/ports/%u", devdir, port) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	for (const char *s = "gids\0gid_attrs/types\0gid_attrs/ndevs\0pkeys\0";
	     *s != '\0'; s += strlen(s) + 1) {
		rc = sysfs_join(sub, dir, s);
		rc = rc != 0 ? rc : sysfs_mkdirs(sub);
		if (rc != 0)
			return rc;
	}
	rc = sysfs_put(dir, "state", "%d: %s", (int)pa.state, port_state_name(pa.state));
	rc = rc != 0 ? rc : sysfs_put(dir, "phys_state", "%s",
				      pa.state == DROCE_PORT_ACTIVE ? "5: LinkUp" : "3: Disabled");
	rc = rc != 0 ? rc : sysfs_put(dir, "link_layer", "Ethernet");
	rc = rc != 0 ? rc : sysfs_put(dir, "lid", "0x%x", pa.lid);
	rc = rc != 0 ? rc : sysfs_put(dir, "sm_lid", "0x%x", pa.sm_lid);
	rc = rc != 0 ? rc : sysfs_put(dir, "lid_mask_count", "%u", pa.lmc);
	rc = rc != 0 ? rc : sysfs_join(sub, dir, "pkeys");
	for (int i = 0; rc == 0; i++) {
		__be16 pkey;
		char name[16];

		if (droce_query_pkey(c, port, i, &pkey) != 0)
			break;
		snprintf(name, sizeof(name), "%d", i);
		rc = sysfs_put(sub, name, "0x%04x", ntohs(pkey));
	}
	for (int i = 0; rc == 0 && i < pa.gid_tbl_len; i++)
		rc = sysfs_put_gid(c, devdir, dir, port, i);
	return rc;
}

static int
sysfs_put_device(struct droce_context *c, const char *devdir)
{
	struct droce_device_attr a;
	char sub[SYSFS_PATH_MAX];
	int rc = droce_query_device(c, &a);

	if (rc != 0)
		return -rc;
	rc = sysfs_put(devdir, "node_type", "1: CA");
	rc = rc != 0 ? rc : sysfs_put_guid(devdir, "node_guid", a.node_guid);
	rc = rc != 0 ? rc : sysfs_put_guid(devdir, "sys_image_guid", a.sys_image_guid);
	rc = rc != 0 ? rc : sysfs_put(devdir, "fw_ver", "%s", a.fw_ver);
	/* no PCI function behind it: no NUMA node, as a virtual device */
	rc = rc != 0 ? rc : sysfs_join(sub, devdir, "device");
	rc = rc != 0 ? rc : sysfs_mkdirs(sub);
	rc = rc != 0 ? rc : sysfs_put(sub, "numa_node", "-1");
	for (uint8_t p = 1; rc == 0 && p <= a.phys_port_cnt; p++)
		rc = sysfs_put_port(c, devdir, p);
	return rc;
}

int
dropin_sysfs_write(struct dropin_device *dd, const char *root)
{
	char devdir[SYSFS_PATH_MAX];
	struct droce_context *c;
	int rc;

	if (snprintf(devdir, sizeof(devdir), "%s/%s", root, dd->ibv.name) >=
	    (int)sizeof(devdir) || strlen(devdir) >= sizeof(dd->ibv.ibdev_path))
		return -ENAMETOOLONG;
	c = droce_open_device(dd->d);
	if (c == NULL)
		return -errno;
	rc = sysfs_mkdirs(devdir);
	rc = rc != 0 ? rc : sysfs_put_device(c, devdir);
	(void)droce_close_device(c);
	if (rc == 0)
		snprintf(dd->ibv.ibdev_path, sizeof(dd->ibv.ibdev_path), "%s", devdir);
	return rc;
}
