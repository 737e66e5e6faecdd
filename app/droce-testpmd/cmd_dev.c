/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_dev.c - devices (list, show with port state and GIDs) and the small
 * commands: sleep, echo, sync, quit.
 */
#include <inttypes.h>
#include <string.h>

#include "tpd.h"

static void
dev_print(int i)
{
	struct tpd_dev *d = &tpd.dev[i];
	struct droce_port_attr pa;
	union droce_gid gid;
	char s[64];

	memset(&pa, 0, sizeof(pa));
	printf("dev %d: %s", i, droce_get_device_name(d->device));
	if (d->ctx == NULL) {
		printf(" (not open)\n");
		return;
	}
	if (droce_query_port(d->ctx, 1, &pa) == 0)
		printf(" port %s mtu %d gids %d", pa.state == DROCE_PORT_ACTIVE ? "ACTIVE" :
		       "DOWN", droce_mtu_to_num(pa.active_mtu), pa.gid_tbl_len);
	printf("\n");
	for (int g = 0; g < pa.gid_tbl_len; g++)
		if (droce_query_gid(d->ctx, 1, g, &gid) == 0) {
			tpd_gid_str(&gid, s, sizeof(s));
			printf("  gid %d: %s\n", g, s);
		}
}

static int
dev_list(struct tpd_cmd *c)
{
	if (tpd_kv_check_used(c) != 0)
		return -1;
	for (int i = 0; i < tpd.ndev; i++)
		dev_print(i);
	if (tpd.ndev == 0)
		printf("no devices\n");
	return 0;
}

static int
dev_show(struct tpd_cmd *c)
{
	uint64_t i;

	if (tpd_pos_u64(c, 1, TPD_MAX_DEV - 1, &i, "DEV") != 0 || tpd_kv_check_used(c) != 0)
		return -1;
	if ((int)i >= tpd.ndev) {
		tpd_err("no such device %" PRIu64, i);
		return -1;
	}
	dev_print((int)i);
	return 0;
}

static const struct tpd_subcmd dev_cmds[] = {
	{ "list", dev_list, "device list", "devices with port state, MTU and GIDs" },
	{ "show", dev_show, "device show DEV", "one device" },
	{ NULL, NULL, NULL, NULL },
};
const struct tpd_group tpd_group_device = { "device", "droce devices (one per DPDK port)", dev_cmds };

/* ---- misc ---------------------------------------------------------------- */

static int
sleep_cmd(struct tpd_cmd *c)
{
	uint64_t ms;

	if (tpd_pos_u64(c, 1, 3600000, &ms, "MS") != 0 || tpd_kv_check_used(c) != 0)
		return -1;
	tpd_idle_for((unsigned int)ms);
	return 0;
}

static int
echo_cmd(struct tpd_cmd *c)
{
	for (int i = 1; i < c->npos; i++)
		printf("%s%s", i > 1 ? " " : "", c->pos[i]);
	for (int i = 0; i < c->nkv; i++) {
		printf("%s%s=%s", c->npos > 1 || i ? " " : "", c->kv[i].key, c->kv[i].val);
		c->kv[i].used = true;
	}
	printf("\n");
	return 0;
}

static int
quit_cmd(struct tpd_cmd *c)
{
	if (tpd_kv_check_used(c) != 0)
		return -1;
	tpd.quit = true;
	return 0;
}

static int
help_cmd(struct tpd_cmd *c)
{
	if (tpd_kv_check_used(c) != 0)
		return -1;
	return tpd_help(c->npos > 1 ? c->pos[1] : NULL);
}

extern const struct tpd_subcmd tpd_sync_cmd;

static int
misc_sync(struct tpd_cmd *c)
{
	return tpd_sync_cmd.fn(c);
}

static const struct tpd_subcmd misc_cmds[] = {
	{ "help", help_cmd, "help [GROUP]", "this list, or one group's commands" },
	{ "sleep", sleep_cmd, "sleep MS", "wait MS milliseconds (devices and engines keep running)" },
	{ "echo", echo_cmd, "echo TEXT", "print TEXT (marks places in script output)" },
	{ "sync", misc_sync, "sync [tag=WORD] [timeout=S]",
	  "barrier with the peer linked by qp exchange (both sides give the same tag)" },
	{ "expect", NULL, "expect ok|error",
	  "script lines: the next command must succeed / must fail (else the script fails)" },
	{ "quit", quit_cmd, "quit", "leave (destroys everything, closes the devices)" },
	{ NULL, NULL, NULL, NULL },
};
const struct tpd_group tpd_group_misc = { "", "general", misc_cmds };
