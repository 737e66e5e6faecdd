/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Device configuration: an INI file (DPDK's rte_cfgfile; commented
 * default in config/droce.ini) and --droce-* options, which override it.
 *
 *   [device0]               any section whose name starts with "device"
 *   port = net_memif0       ethdev name or port id
 *   ipv4 = 198.18.0.1/24    repeatable, comma-separated
 *   ipv6 = 2001:2::1/64
 *   mtu = 4200              link MTU; absent: the port's
 *   max_qp = 1024           table sizes; absent: defaults
 *   max_pd = 1024
 *   max_mr = 65536
 *   max_mw = 65536
 *   capture = /tmp/droce0.pcapng   pcapng of every RoCEv2 frame (off if absent)
 *   pkeys = 0x8001,0x7fff   P_Key table entries after the default 0xffff
 *                           (index 0); repeatable, comma-separated
 *   transport_lcores = 1    run the engine on this EAL lcore (dedicated mode);
 *                           "1,2": on both, QPs sharded by QPN, one port
 *                           queue pair each; absent or "none":
 *                           run-to-completion
 *   cc = dcqcn              congestion control: none (default) or dcqcn;
 *   rp_ai_rate = 5          its parameters under mlx5's names (tp_cc_params.h)
 *   ecn = 2                 ECN codepoint of the packets sent (2: ECT(0))
 *   dscp = 26               DSCP when the address vector gives none
 *   udp_sport = hash        hash | fixed | rotate; udp_sport_fixed = 49152
 *
 * Option names may spell the key with '-' or '_' (--droce-transport-lcores).
 * Process-wide, not in the file: --droce-progress=adaptive|inline (the
 * devices without transport_lcores: a progress thread behind
 * run-to-completion, the drop-in libibverbs' default; or the application's
 * calls alone, the default elsewhere).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>
#include <rte_ethdev.h>

#include "roce_wire.h"
#include "device_private.h"

/* The device the next --droce-ipv4/ipv6/mtu applies to. */
static struct droce_device *
current_device(bool create)
{
	if (device_table.ndev == 0 || create) {
		struct droce_device *d;

		if (device_table.ndev == DEVICE_MAX)
			return NULL;
		d = &device_table.dev[device_table.ndev++];
		memset(d, 0, sizeof(*d));
		d->tables.socket_id = -1;
		return d;
	}
	return &device_table.dev[device_table.ndev - 1];
}

static struct droce_device *
device_by_port(const char *port)
{
	for (unsigned int i = 0; i < device_table.ndev; i++)
		if (strcmp(device_table.dev[i].port_name, port) == 0)
			return &device_table.dev[i];
	return NULL;
}

/* "198.18.0.1/24" or "2001:2::1/64" -> GID and prefix. */
static int
parse_addr(struct droce_device *d, const char *text, int family)
{
	char buf[INET6_ADDRSTRLEN + 8];
	struct device_addr *a;
	uint8_t v4[4];
	char *slash, *end;
	long prefix;

	if (d->naddr == DEVICE_MAX_ADDRS || strlen(text) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, text);
	slash = strchr(buf, '/');
	if (slash == NULL)
		return -EINVAL;
	*slash = '\0';
	prefix = strtol(slash + 1, &end, 10);
	if (*end != '\0' || prefix < 1 || prefix > (family == AF_INET ? 32 : 128))
		return -EINVAL;
	a = &d->addr[d->naddr];
	if (family == AF_INET) {
		if (inet_pton(AF_INET, buf, v4) != 1)
			return -EINVAL;
		roce_gid_from_ipv4(a->gid, v4);
	} else if (inet_pton(AF_INET6, buf, a->gid) != 1) {
		return -EINVAL;
	}
	a->prefix = (uint8_t)prefix;
	d->naddr++;
	return 0;
}

static int
parse_addr_list(struct droce_device *d, const char *list, int family)
{
	char buf[512], *save = NULL;

	if (strlen(list) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, list);
	for (char *tok = strtok_r(buf, ", ", &save); tok != NULL;
	     tok = strtok_r(NULL, ", ", &save)) {
		int rc = parse_addr(d, tok, family);

		if (rc != 0)
			return rc;
	}
	return 0;
}

static int
parse_u32(const char *text, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v = strtoul(text, &end, 0);

	if (*text == '\0' || *end != '\0' || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/*
 * pkeys: P_Keys for the device's table, in order after index 0 (0xffff,
 * always there).  Whether each is a valid P_Key is checked when the
 * device is opened (lib/transport tp_dev_add_pkey), where the rule lives.
 */
static int
parse_pkeys(struct droce_device *d, const char *list)
{
	char buf[256], *save = NULL;

	if (strlen(list) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, list);
	for (char *tok = strtok_r(buf, ", ", &save); tok != NULL;
	     tok = strtok_r(NULL, ", ", &save)) {
		uint32_t v;

		if (d->npkeys == DEVICE_MAX_PKEYS || parse_u32(tok, 0xffff, &v) != 0)
			return -EINVAL;
		d->pkeys[d->npkeys++] = (uint16_t)v;
	}
	return 0;
}

/*
 * transport_lcores: the EAL lcore(s) that run the device's engine, "1" or
 * a comma list "1,2" (up to DEVICE_MAX_TRANSPORT_LCORES, distinct): QPs
 * sharded over them by QPN, the port opened with one queue pair per
 * lcore.  "none" (or an empty value) keeps run-to-completion.  That the
 * lcores exist is checked when the device is opened.
 */
static int
parse_transport_lcores(struct droce_device *d, const char *value)
{
	char buf[128], *save = NULL, *tok;
	unsigned int n = 0;

	if (value[0] == '\0' || strcmp(value, "none") == 0) {
		d->dedicated = false;
		d->ntransport_lcores = 0;
		return 0;
	}
	if (strlen(value) >= sizeof(buf) || strchr(value, '-') != NULL ||
	    strstr(value, ",,") != NULL || value[0] == ',' ||
	    value[strlen(value) - 1] == ',')
		goto bad;
	strcpy(buf, value);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		uint32_t lcore;

		if (n == DEVICE_MAX_TRANSPORT_LCORES ||
		    parse_u32(tok, RTE_MAX_LCORE - 1, &lcore) != 0)
			goto bad;
		for (unsigned int i = 0; i < n; i++)
			if (d->transport_lcores[i] == lcore)
				goto bad;
		d->transport_lcores[n++] = lcore;
	}
	if (n == 0)
		goto bad;
	d->dedicated = true;
	d->transport_lcore = d->transport_lcores[0];
	d->ntransport_lcores = n;
	return 0;
bad:
	fprintf(stderr, "droce: transport_lcores = %s: one EAL lcore or a list of up "
		"to %u distinct ones (\"1,2\"), or none\n", value,
		DEVICE_MAX_TRANSPORT_LCORES);
	return -EINVAL;
}

/* One "key = value" of a [device*] section or a --droce-KEY=value option. */
static int
apply_key(struct droce_device *d, const char *key, const char *value)
{
	if (strcmp(key, "port") == 0) {
		if (strlen(value) >= sizeof(d->port_name))
			return -EINVAL;
		strcpy(d->port_name, value);
		return 0;
	}
	if (strcmp(key, "ipv4") == 0)
		return parse_addr_list(d, value, AF_INET);
	if (strcmp(key, "ipv6") == 0)
		return parse_addr_list(d, value, AF_INET6);
	if (strcmp(key, "mtu") == 0)
		return parse_u32(value, 9216, &d->mtu);
	if (strcmp(key, "rxe_retry_compat") == 0) {
		uint32_t on;

		if (parse_u32(value, 1, &on) != 0)
			return -EINVAL;
		d->rxe_retry_compat = on != 0;
		return 0;
	}
	if (strcmp(key, "drop") == 0) {
		char *end;

		d->drop = strtod(value, &end);
		return *value != '\0' && *end == '\0' && d->drop >= 0 && d->drop <= 1 ?
		       0 : -EINVAL;
	}
	if (strcmp(key, "drop_seed") == 0) {
		char *end;

		errno = 0;
		d->drop_seed = strtoull(value, &end, 0);
		d->drop_seed_given = true;
		return *value != '\0' && *value != '-' && *end == '\0' && errno == 0 ?
		       0 : -EINVAL;
	}
	if (strcmp(key, "drop_limit") == 0)
		return parse_u32(value, UINT32_MAX, &d->drop_limit);
	if (strcmp(key, "max_qp") == 0)
		return parse_u32(value, 1u << 20, &d->max_qp);
	if (strcmp(key, "max_pd") == 0)
		return parse_u32(value, 1u << 24, &d->tables.max_pd);
	if (strcmp(key, "max_mr") == 0)
		return parse_u32(value, 1u << 24, &d->tables.max_mr);
	if (strcmp(key, "max_mw") == 0)
		return parse_u32(value, 1u << 24, &d->tables.max_mw);
	if (strcmp(key, "transport_lcores") == 0)
		return parse_transport_lcores(d, value);
	if (strcmp(key, "pkeys") == 0)
		return parse_pkeys(d, value);
	if (strcmp(key, "capture") == 0) {
		if (value[0] == '\0' || strlen(value) >= sizeof(d->capture))
			return -EINVAL;
		strcpy(d->capture, value);
		return 0;
	}
	/* congestion control, ECN, UDP source ports (lib/transport) */
	return tp_cc_config_set(&d->cc, key, value) == 0 ? 0 : -EINVAL;
}

static int
load_file(const char *path)
{
	struct rte_cfgfile *cfg = rte_cfgfile_load(path, 0);
	int nsec, rc = 0;
	char **names;

	if (cfg == NULL) {
		fprintf(stderr, "droce: cannot read configuration %s\n", path);
		return -ENOENT;
	}
	nsec = rte_cfgfile_num_sections(cfg, NULL, 0);
	names = calloc((size_t)nsec + 1, sizeof(*names));
	for (int i = 0; names != NULL && i < nsec; i++)
		names[i] = calloc(1, CFG_NAME_LEN);
	if (names == NULL || (nsec > 0 && names[nsec - 1] == NULL)) {
		rc = -ENOMEM;
		goto out;
	}
	rte_cfgfile_sections(cfg, names, nsec);
	for (int i = 0; i < nsec && rc == 0; i++) {
		struct rte_cfgfile_entry entries[32];
		struct droce_device *d;
		int n;

		if (strncmp(names[i], "device", 6) != 0)
			continue;
		d = current_device(true);
		if (d == NULL) {
			rc = -ENOSPC;
			break;
		}
		n = rte_cfgfile_section_entries(cfg, names[i], entries, 32);
		for (int e = 0; e < n && rc == 0; e++) {
			rc = apply_key(d, entries[e].name, entries[e].value);
			if (rc != 0)
				fprintf(stderr, "droce: %s: [%s] %s = %s: invalid\n",
					path, names[i], entries[e].name,
					entries[e].value);
		}
	}
out:
	for (int i = 0; names != NULL && i < nsec; i++)
		free(names[i]);
	free(names);
	rte_cfgfile_close(cfg);
	return rc;
}

/* --droce-progress=adaptive|inline: process-wide, the last one counts. */
static int
parse_progress(const char *value)
{
	if (strcmp(value, "adaptive") == 0)
		device_table.adaptive = true;
	else if (strcmp(value, "inline") == 0)
		device_table.adaptive = false;
	else
		return -EINVAL;
	return 0;
}

/* --droce-KEY=value -> value; '-' in the option name matches '_' in KEY. */
static const char *
droce_option(const char *arg, const char *key)
{
	size_t n = strlen(key);

	if (strncmp(arg, "--droce-", 8) != 0)
		return NULL;
	arg += 8;
	for (size_t i = 0; i < n; i++)
		if (arg[i] != key[i] && !(arg[i] == '-' && key[i] == '_'))
			return NULL;
	return arg[n] == '=' ? arg + n + 1 : NULL;
}

/* Apply one --droce-* option; -EINVAL if it is not one of ours. */
static int
apply_option(const char *arg)
{
	static const char *const keys[] = { "ipv4", "ipv6", "mtu", "max_qp",
					  "capture", "drop", "drop_seed", "drop_limit",
					  "rxe_retry_compat",
					  "transport_lcores", "pkeys", "cc", "ecn", "dscp",
					  "udp_sport", "udp_sport_fixed" };
	struct droce_device *d;
	const char *v;

	if ((v = droce_option(arg, "config")) != NULL)
		return load_file(v);
	if (droce_option(arg, "daemon") != NULL || droce_option(arg, "queues") != NULL)
		return 0;	/* taken before EAL started (device_daemon.c) */
	if ((v = droce_option(arg, "progress")) != NULL)
		return parse_progress(v);
	if ((v = droce_option(arg, "port")) != NULL) {
		d = device_by_port(v);
		if (d == NULL)
			d = current_device(true);
		if (d == NULL)
			return -ENOSPC;
		/* make it the current one: move it to the end */
		if (d != &device_table.dev[device_table.ndev - 1]) {
			struct droce_device tmp = *d;

			memmove(d, d + 1, (size_t)(&device_table.dev[device_table.ndev - 1] - d) *
				sizeof(*d));
			device_table.dev[device_table.ndev - 1] = tmp;
			d = &device_table.dev[device_table.ndev - 1];
		}
		return apply_key(d, "port", v);
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		v = droce_option(arg, keys[i]);
		if (v != NULL) {
			d = current_device(false);
			return d == NULL ? -ENOSPC : apply_key(d, keys[i], v);
		}
	}
	/* --droce-rp_ai_rate=10 & co. (tp_cc_params.h) */
	for (unsigned int i = 0; i < TP_CC_PARAM_MAX; i++) {
		v = droce_option(arg, tp_cc_param_name(i));
		if (v != NULL) {
			d = current_device(false);
			return d == NULL ? -ENOSPC : apply_key(d, tp_cc_param_name(i), v);
		}
	}
	return -EINVAL;
}

/*
 * args[0] is EAL's last argument (the "--" slot that the program will use
 * as its argv[0]).  The --droce-* options among args[1..] are applied and
 * moved in front of that slot, so the program, skipping what droce_init
 * returns, sees only its own arguments behind a program-name slot.
 */
int
device_config_parse(int nargs, char **args)
{
	char **mine, **theirs;
	int nmine = 0, ntheirs = 0;

	if (nargs <= 1)
		return 0;
	mine = calloc((size_t)nargs, sizeof(*mine));
	theirs = calloc((size_t)nargs, sizeof(*theirs));
	if (mine == NULL || theirs == NULL) {
		free(mine);
		free(theirs);
		return -ENOMEM;
	}
	for (int i = 1; i < nargs; i++) {
		if (strncmp(args[i], "--droce-", 8) == 0) {
			int rc = apply_option(args[i]);

			if (rc != 0) {
				fprintf(stderr, "droce: bad option %s\n", args[i]);
				free(mine);
				free(theirs);
				return rc;
			}
			mine[nmine++] = args[i];
		} else {
			theirs[ntheirs++] = args[i];
		}
	}
	if (nmine > 0) {
		char *slot = args[0];

		for (int i = 0; i < nmine; i++)
			args[i] = mine[i];
		args[nmine] = slot;
		for (int i = 0; i < ntheirs; i++)
			args[nmine + 1 + i] = theirs[i];
	}
	free(mine);
	free(theirs);
	return nmine;
}

static int
resolve_port(struct droce_device *d)
{
	char *end;
	unsigned long id = strtoul(d->port_name, &end, 10);

	if (d->port_name[0] != '\0' && *end == '\0') {
		if (!rte_eth_dev_is_valid_port((uint16_t)id))
			return -ENODEV;
		d->port_id = (uint16_t)id;
		return 0;
	}
	if (d->port_name[0] == '\0') {
		d->port_id = 0;		/* options without --droce-port: port 0 */
		return rte_eth_dev_is_valid_port(0) ? 0 : -ENODEV;
	}
	return rte_eth_dev_get_port_by_name(d->port_name, &d->port_id) == 0 ? 0 :
	       -ENODEV;
}

int
device_table_build(void)
{
	uint16_t port;

	if (device_table.ndev == 0) {
		/* nothing configured: every port is a device, no addresses */
		RTE_ETH_FOREACH_DEV(port) {
			struct droce_device *d = current_device(true);

			if (d == NULL)
				break;
			d->port_id = port;
			snprintf(d->port_name, sizeof(d->port_name), "%u", port);
		}
	}
	for (unsigned int i = 0; i < device_table.ndev; i++) {
		struct droce_device *d = &device_table.dev[i];
		int rc = resolve_port(d);

		if (rc != 0) {
			fprintf(stderr, "droce: no DPDK port '%s' (give it to EAL with --vdev)\n",
				d->port_name[0] != '\0' ? d->port_name : "0");
			return rc;
		}
		snprintf(d->name, sizeof(d->name), "droce%u", i);
	}
	return 0;
}
