/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_show.c - counters, under the names of droce's telemetry.
 *
 * The counters of /droce/stats (transport, net_*, link_*, prot_*) and
 * /droce/qp/info are read from this process's own DPDK telemetry socket,
 * so droce-testpmd prints exactly what dpdk-telemetry.py would.  Without
 * telemetry (EAL --no-telemetry) it falls back to droce_get_counter() for
 * the transport counters (droce_counter_name()).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_eal.h>

#include "tpd.h"

#define TEL_BUF (64 * 1024)

/* Send one telemetry command, reply (NUL-terminated) into buf. */
static int
tel_query(const char *cmd, char *buf, size_t n)
{
	struct sockaddr_un sa;
	ssize_t r;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/dpdk_telemetry.v2",
			     rte_eal_get_runtime_dir()) >= sizeof(sa.sun_path))
		return -1;
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    recv(fd, buf, n - 1, 0) <= 0 ||	/* the greeting */
	    send(fd, cmd, strlen(cmd), 0) < 0) {
		close(fd);
		return -1;
	}
	r = recv(fd, buf, n - 1, 0);
	close(fd);
	if (r <= 0)
		return -1;
	buf[r] = '\0';
	return 0;
}

/*
 * Print the flat object inside {"cmd": {...}} as "key: value" lines
 * (values are numbers or strings: the droce commands' dictionaries).
 */
static int
print_dict(const char *json, const char *filter, const char *indent)
{
	const char *p = strchr(json, '{');
	int n = 0;

	p = p != NULL ? strchr(p + 1, '{') : NULL;
	if (p == NULL)
		return -1;
	p++;
	while (*p != '\0' && *p != '}') {
		char key[128], val[128];
		size_t k = 0, v = 0;

		while (*p == ' ' || *p == ',')
			p++;
		if (*p != '"')
			return -1;
		for (p++; *p != '\0' && *p != '"'; p++)
			if (k < sizeof(key) - 1)
				key[k++] = *p;
		key[k] = '\0';
		if (*p != '"' || p[1] != ':')
			return -1;
		p += 2;
		if (*p == '"')
			p++;
		for (; *p != '\0' && *p != ',' && *p != '}' && *p != '"'; p++)
			if (v < sizeof(val) - 1)
				val[v++] = *p;
		val[v] = '\0';
		if (*p == '"')
			p++;
		if (filter == NULL || strstr(key, filter) != NULL) {
			printf("%s%s: %s\n", indent, key, val);
			n++;
		}
	}
	return n;
}

/* show counters [dev=N] [filter=TEXT] */
static int
show_counters(struct tpd_cmd *c)
{
	const char *filter = tpd_kv_str(c, "filter");
	const char *name;
	char cmd[64], *buf;
	uint64_t dev;

	if (tpd_kv_u64(c, "dev", 0, TPD_MAX_DEV - 1, &dev) != 0 || tpd_kv_check_used(c) != 0)
		return -1;
	if ((int)dev >= tpd.ndev || tpd.dev[dev].ctx == NULL) {
		tpd_err("no such device %" PRIu64, dev);
		return -1;
	}
	buf = malloc(TEL_BUF);
	if (buf == NULL)
		return -1;
	snprintf(cmd, sizeof(cmd), "/droce/stats,%" PRIu64, dev);
	printf("counters of dev %" PRIu64 " (%s):\n", dev,
	       droce_get_device_name(tpd.dev[dev].device));
	if (tel_query(cmd, buf, TEL_BUF) != 0 || print_dict(buf, filter, "  ") < 0) {
		printf("  (telemetry unavailable: transport counters only)\n");
		for (unsigned int i = 0; (name = droce_counter_name(i)) != NULL; i++)
			if (filter == NULL || strstr(name, filter) != NULL)
				printf("  %s: %" PRIu64 "\n", name,
				       droce_get_counter(tpd.dev[dev].ctx, name));
	}
	free(buf);
	return 0;
}

/* show qp QP: /droce/qp/info (requester/responder PSNs, retries). */
static int
show_qp(struct tpd_cmd *c)
{
	struct tpd_qp *q = tpd_get_qp(c, 2);
	char cmd[64], *buf;
	int rc = 0;

	if (q == NULL || tpd_kv_check_used(c) != 0)
		return -1;
	buf = malloc(TEL_BUF);
	if (buf == NULL)
		return -1;
	snprintf(cmd, sizeof(cmd), "/droce/qp/info,%" PRIu32 ",%d", q->qp->qp_num,
		 tpd_dev_of_pd(q->pd));
	printf("qp %s (qpn 0x%06" PRIx32 "):\n", c->pos[2], q->qp->qp_num);
	if (tel_query(cmd, buf, TEL_BUF) != 0 || print_dict(buf, NULL, "  ") < 0) {
		tpd_err("telemetry unavailable (EAL --no-telemetry?): see qp show");
		rc = -1;
	}
	free(buf);
	return rc;
}

static int
show_cmd(struct tpd_cmd *c)
{
	if (c->npos >= 2 && strcmp(c->pos[1], "counters") == 0)
		return show_counters(c);
	if (c->npos >= 2 && strcmp(c->pos[1], "qp") == 0)
		return show_qp(c);
	tpd_err("show counters [dev=N] [filter=TEXT] | show qp QP");
	return -1;
}

static const struct tpd_subcmd show_cmds[] = {
	{ "", show_cmd, "show counters [dev=N] [filter=TEXT] | show qp QP",
	  "device counters by their telemetry names (/droce/stats), or one QP's (/droce/qp/info)" },
	{ NULL, NULL, NULL, NULL },
};
const struct tpd_group tpd_group_show = { "show", "counters (telemetry names)", show_cmds };
