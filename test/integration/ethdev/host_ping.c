/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * host_ping: a droce host stack on a kernel interface, for kernel_peer.sh.
 * Opens an ethdev link on net_af_packet (iface=IF, framesz=8192), puts a
 * net_host with the given addresses on it, resolves the peers' MACs with
 * ARP and ND (printing them), answers ARP/ND/ICMP echo for the kernel side
 * until SIGINT/SIGTERM or --seconds pass, then prints its counters and,
 * with --learned A, the neighbour entry it has for A (learned from the
 * kernel, never resolved by host_ping): "neigh A STATE MAC".
 * Exit status 0 when every --peer was resolved, 2 otherwise, 1 on errors.
 *
 *   host_ping --iface IF --ip4 A/N --ip6 A/N [--peer4 A] [--peer6 A]
 *             [--learned A] [--seconds S] [--mtu M]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "droce_link.h"
#include "ethdev_link.h"
#include "net_host.h"

#define BURST 32

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct peer {
	const char *text;
	uint8_t gid[16];
	bool wanted;
	bool resolved;
};

/* "a.b.c.d" or an IPv6 address to a GID; false when unparsable. */
static bool
parse_gid(const char *s, uint8_t gid[16])
{
	struct in_addr a4;

	memset(gid, 0, 16);
	if (inet_pton(AF_INET, s, &a4) == 1) {
		gid[10] = 0xff;
		gid[11] = 0xff;
		memcpy(gid + 12, &a4, 4);
		return true;
	}
	return inet_pton(AF_INET6, s, gid) == 1;
}

/* "addr/len" to a GID and prefix length. */
static bool
parse_prefix(const char *s, uint8_t gid[16], uint8_t *len)
{
	char buf[64];
	char *slash;
	long n;

	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash == NULL)
		return false;
	*slash = '\0';
	n = strtol(slash + 1, NULL, 10);
	if (n < 0 || n > 128)
		return false;
	*len = (uint8_t)n;
	return parse_gid(buf, gid);
}

static unsigned int
free_hugepages(void)
{
	FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "r");
	unsigned int n = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%u", &n) != 1)
		n = 0;
	fclose(f);
	return n;
}

static void
print_learned(const struct net_host *h, const char *text)
{
	static const char *const states[] = {
		[NET_NEIGH_NONE] = "NONE", [NET_NEIGH_INCOMPLETE] = "INCOMPLETE",
		[NET_NEIGH_REACHABLE] = "REACHABLE", [NET_NEIGH_STALE] = "STALE",
		[NET_NEIGH_FAILED] = "FAILED", [NET_NEIGH_PERMANENT] = "PERMANENT",
	};
	struct net_neigh_info info;
	uint8_t gid[16];

	if (!parse_gid(text, gid)) {
		printf("neigh %s unparsable\n", text);
		return;
	}
	net_host_neigh_info(h, gid, &info);
	printf("neigh %s %s " RTE_ETHER_ADDR_PRT_FMT "\n", text, states[info.state],
	       RTE_ETHER_ADDR_BYTES(&info.mac));
}

static void
try_resolve(struct net_host *h, struct peer *p)
{
	struct rte_ether_addr mac;
	int ret;

	if (!p->wanted || p->resolved)
		return;
	ret = net_host_resolve(h, p->gid, &mac);
	if (ret == 0) {
		p->resolved = true;
		printf("resolved %s " RTE_ETHER_ADDR_PRT_FMT "\n", p->text,
		       RTE_ETHER_ADDR_BYTES(&mac));
		fflush(stdout);
	} else if (ret != -EAGAIN && ret != -EHOSTUNREACH) {
		printf("resolve %s: %s\n", p->text, strerror(-ret));
	}
}

int
main(int argc, char **argv)
{
	char *eal_huge[] = { argv[0], "--no-pci", "--in-memory", "-l", "0",
			     "--log-level=lib.eal:error", NULL };
	char *eal_nohuge[] = { argv[0], "--no-pci", "--no-huge", "-m", "512",
			       "--no-shconf", "-l", "0", "--log-level=lib.eal:error", NULL };
	char **eal_argv = free_hugepages() >= 128 ? eal_huge : eal_nohuge;
	const char *iface = NULL, *ip4 = NULL, *ip6 = NULL, *learned = NULL;
	struct peer peers[2] = { { .text = NULL }, { .text = NULL } };
	struct ethdev_link_config lc = { .pool_size = 4095 };
	struct net_host_config hc = { 0 };
	struct droce_link *link = NULL;
	struct net_host *host = NULL;
	struct ethdev_link_stats st;
	char devargs[160];
	unsigned int seconds = 20;
	uint64_t hz, end, next_try = 0;
	int eal_argc = 0, rc = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--iface") == 0)
			iface = argv[i + 1];
		else if (strcmp(argv[i], "--ip4") == 0)
			ip4 = argv[i + 1];
		else if (strcmp(argv[i], "--ip6") == 0)
			ip6 = argv[i + 1];
		else if (strcmp(argv[i], "--peer4") == 0)
			peers[0].text = argv[i + 1];
		else if (strcmp(argv[i], "--peer6") == 0)
			peers[1].text = argv[i + 1];
		else if (strcmp(argv[i], "--learned") == 0)
			learned = argv[i + 1];
		else if (strcmp(argv[i], "--seconds") == 0)
			seconds = (unsigned int)strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--mtu") == 0)
			lc.mtu = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		else {
			fprintf(stderr, "unknown option %s\n", argv[i]);
			return 1;
		}
	}
	if (iface == NULL || (ip4 == NULL && ip6 == NULL)) {
		fprintf(stderr, "usage: %s --iface IF --ip4 A/N --ip6 A/N [--peer4 A] [--peer6 A] [--learned A] [--seconds S] [--mtu M]\n",
			argv[0]);
		return 1;
	}
	for (int i = 0; i < 2; i++) {
		if (peers[i].text == NULL)
			continue;
		if (!parse_gid(peers[i].text, peers[i].gid)) {
			fprintf(stderr, "bad address %s\n", peers[i].text);
			return 1;
		}
		peers[i].wanted = true;
	}
	while (eal_argv[eal_argc] != NULL)
		eal_argc++;
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	/* af_packet: 8 KiB frames into 9 KiB mbufs; its 1518 max frame stays */
	snprintf(devargs, sizeof(devargs),
		 "net_af_packet0,iface=%s,framesz=8192,blocksz=8192,framecnt=512,qpairs=1",
		 iface);
	lc.devargs = devargs;
	lc.mtu_assume = lc.mtu != 0;
	rc = ethdev_link_open(&lc, &link);
	if (rc == 0) {
		hc.link = link;
		rc = net_host_create(&hc, &host);
	}
	if (rc == 0 && ip4 != NULL) {
		uint8_t gid[16], len;

		rc = parse_prefix(ip4, gid, &len) ? net_host_add_addr(host, gid, len) : -EINVAL;
	}
	if (rc == 0 && ip6 != NULL) {
		uint8_t gid[16], len;

		rc = parse_prefix(ip6, gid, &len) ? net_host_add_addr(host, gid, len) : -EINVAL;
	}
	if (rc != 0) {
		fprintf(stderr, "setup failed: %s\n", strerror(-rc));
		net_host_destroy(host);
		droce_link_close(link);
		rte_eal_cleanup();
		return 1;
	}
	printf("ready %s MAC " RTE_ETHER_ADDR_PRT_FMT " MTU %u\n", link->name,
	       RTE_ETHER_ADDR_BYTES(&link->mac), link->mtu);
	fflush(stdout);

	hz = rte_get_timer_hz();
	end = rte_get_timer_cycles() + seconds * hz;
	while (!stop) {
		struct rte_mbuf *pkts[BURST];
		uint64_t now = rte_get_timer_cycles();
		uint16_t n, k;

		if (now >= end)
			break;
		n = droce_link_rx(link, pkts, BURST);
		k = net_host_rx(host, pkts, n);
		rte_pktmbuf_free_bulk(pkts, k);	/* no transport here */
		net_host_timer(host, now);
		if (now >= next_try) {
			try_resolve(host, &peers[0]);
			try_resolve(host, &peers[1]);
			next_try = now + hz / 5;
		}
		if (n == 0)
			rte_delay_us_sleep(100);
	}

	for (unsigned int i = 0; i < NET_CNT_MAX; i++)
		if (net_host_counters(host)[i] != 0)
			printf("counter %s %" PRIu64 "\n", net_counter_name(i),
			       net_host_counters(host)[i]);
	if (learned != NULL)
		print_learned(host, learned);
	if (ethdev_link_stats_get(link, &st) == 0)
		printf("link rx %" PRIu64 " tx %" PRIu64 " tx_full %" PRIu64
		       " multiseg_drops %" PRIu64 " hw_imissed %" PRIu64 "\n",
		       st.rx_pkts, st.tx_pkts, st.tx_full, st.rx_multiseg_drops,
		       st.hw_imissed);
	rc = 0;
	for (int i = 0; i < 2; i++) {
		if (peers[i].wanted && !peers[i].resolved) {
			printf("unresolved %s\n", peers[i].text);
			rc = 2;
		}
	}
	fflush(stdout);
	net_host_destroy(host);
	droce_link_close(link);
	rte_eal_cleanup();
	return rc;
}
