/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-dump FILE.pcap|pcapng [--json]
 *
 * Prints one line per RoCEv2 packet (UDP destination port 4791) decoded by
 * lib/wire, with its ICRC checked, then a summary.  Other packets are
 * counted and skipped; UDP/4791 packets that do not parse are reported as
 * malformed.  Exit status: 0 all good, 1 an ICRC failed or a packet was
 * malformed, 2 usage or file error.
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include "dump.h"

#define EXIT_PROBLEMS 1
#define EXIT_USAGE 2

#ifndef DLT_IPV4
#define DLT_IPV4 228
#endif
#ifndef DLT_IPV6
#define DLT_IPV6 229
#endif
#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

#define SLL_HDR_LEN 16
#define SLL2_HDR_LEN 20

struct dump_ctx {
	pcap_t *pcap;
	int linktype;
	bool json;
	bool have_t0;
	double t0;
	struct dump_stats st;
};

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: droce-dump FILE.pcap|FILE.pcapng [--json]\n"
		"Decode the RoCEv2 packets (UDP port 4791) of a capture and check\n"
		"their ICRC.  Link types: Ethernet, raw IPv4/IPv6, Linux SLL/SLL2.\n"
		"  --json      one JSON object per packet, then a summary object\n"
		"  -h, --help  this text\n"
		"Exit status: 0 ok, 1 ICRC failure or malformed packet, 2 usage or\n"
		"file error.\n");
}

/* Returns 0 to run, 1 after --help, -1 on a usage error. */
static int
parse_args(int argc, char **argv, const char **path, bool *json)
{
	*path = NULL;
	*json = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
		if (strcmp(argv[i], "--json") == 0) {
			*json = true;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			fprintf(stderr, "droce-dump: unknown option '%s'\n", argv[i]);
			return -1;
		} else if (*path != NULL) {
			fprintf(stderr, "droce-dump: only one capture file\n");
			return -1;
		} else {
			*path = argv[i];
		}
	}
	if (*path == NULL) {
		fprintf(stderr, "droce-dump: no capture file given\n");
		return -1;
	}
	return 0;
}

static bool
linktype_supported(int dlt)
{
	return dlt == DLT_EN10MB || dlt == DLT_RAW || dlt == DLT_IPV4 ||
	       dlt == DLT_IPV6 || dlt == DLT_LINUX_SLL || dlt == DLT_LINUX_SLL2;
}

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static bool
is_ip_ethertype(uint16_t type)
{
	return type == ROCE_ETHERTYPE_IPV4 || type == ROCE_ETHERTYPE_IPV6;
}

/* Offset of the IP header in a frame, or -1 when the frame carries no IP. */
static long
l3_offset(int dlt, const uint8_t *f, size_t len)
{
	size_t off = ROCE_ETH_HDR_LEN;

	switch (dlt) {
	case DLT_EN10MB:
		if (len >= off && be16(f + 12) == ROCE_ETHERTYPE_VLAN) {
			off += ROCE_VLAN_HDR_LEN;
			if (len < off)
				return -1;
		}
		return len >= off && is_ip_ethertype(be16(f + off - 2)) ?
		       (long)off : -1;
	case DLT_LINUX_SLL:
		return len >= SLL_HDR_LEN && is_ip_ethertype(be16(f + 14)) ?
		       SLL_HDR_LEN : -1;
	case DLT_LINUX_SLL2:
		return len >= SLL2_HDR_LEN && is_ip_ethertype(be16(f)) ?
		       SLL2_HDR_LEN : -1;
	default:
		return 0;
	}
}

/* True when an IP packet is UDP to port 4791, i.e. claims to be RoCEv2. */
static bool
is_roce_udp(const uint8_t *ip, size_t len)
{
	size_t ihl;

	if (len >= ROCE_IPV4_HDR_LEN && ip[0] >> 4 == 4) {
		ihl = (size_t)(ip[0] & 0x0f) * 4;
		if (ip[9] != ROCE_IPPROTO_UDP || (be16(ip + 6) & 0x1fff) != 0)
			return false;	/* not UDP, or a non-first fragment */
		return ihl >= ROCE_IPV4_HDR_LEN && len >= ihl + 4 &&
		       be16(ip + ihl + 2) == ROCE_UDP_PORT;
	}
	if (len >= ROCE_IPV6_HDR_LEN + 4 && ip[0] >> 4 == 6)
		return ip[6] == ROCE_IPPROTO_UDP &&
		       be16(ip + ROCE_IPV6_HDR_LEN + 2) == ROCE_UDP_PORT;
	return false;
}

static void
handle_roce(struct dump_ctx *c, const struct dump_frame *df,
	    const uint8_t *f, size_t len, size_t l3)
{
	struct roce_pkt pkt;
	enum roce_parse_err err;
	const uint8_t *base = c->linktype == DLT_EN10MB ? f : f + l3;
	bool ok;

	if (c->linktype == DLT_EN10MB)
		err = roce_parse_eth(f, len, &pkt);
	else
		err = roce_parse_ip(f + l3, len - l3, &pkt);
	if (err != ROCE_PARSE_OK) {
		c->st.malformed++;
		dump_malformed(stdout, df, err);
		return;
	}
	ok = roce_icrc_verify(base, &pkt);
	c->st.roce++;
	c->st.per_opcode[pkt.opcode]++;
	if (!ok)
		c->st.icrc_bad++;
	dump_packet(stdout, df, &pkt, ok);
}

static void
handle_frame(struct dump_ctx *c, const struct pcap_pkthdr *h,
	     const uint8_t *f)
{
	double t = (double)h->ts.tv_sec + (double)h->ts.tv_usec / 1e6;
	struct dump_frame df = { .index = ++c->st.frames, .json = c->json };
	long l3 = l3_offset(c->linktype, f, h->caplen);

	if (!c->have_t0) {
		c->t0 = t;
		c->have_t0 = true;
	}
	df.time = t - c->t0;
	if (l3 < 0 || !is_roce_udp(f + l3, h->caplen - (size_t)l3)) {
		c->st.non_roce++;
		return;
	}
	handle_roce(c, &df, f, h->caplen, (size_t)l3);
}

static int
run(struct dump_ctx *c)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc;

	while ((rc = pcap_next_ex(c->pcap, &h, &data)) == 1)
		handle_frame(c, h, data);
	if (rc == PCAP_ERROR) {
		fprintf(stderr, "droce-dump: read error: %s\n",
			pcap_geterr(c->pcap));
		return EXIT_USAGE;
	}
	dump_summary(stdout, &c->st, c->json);
	return c->st.icrc_bad != 0 || c->st.malformed != 0 ? EXIT_PROBLEMS : 0;
}

int
main(int argc, char **argv)
{
	static struct dump_ctx ctx;
	char errbuf[PCAP_ERRBUF_SIZE];
	const char *path;
	int rc = parse_args(argc, argv, &path, &ctx.json);

	if (rc != 0) {
		usage(rc > 0 ? stdout : stderr);
		return rc > 0 ? 0 : EXIT_USAGE;
	}
	ctx.pcap = pcap_open_offline(path, errbuf);
	if (ctx.pcap == NULL) {
		/* libpcap names the file in some messages, not in others */
		if (strstr(errbuf, path) != NULL)
			fprintf(stderr, "droce-dump: %s\n", errbuf);
		else
			fprintf(stderr, "droce-dump: %s: %s\n", path, errbuf);
		return EXIT_USAGE;
	}
	ctx.linktype = pcap_datalink(ctx.pcap);
	if (!linktype_supported(ctx.linktype)) {
		fprintf(stderr, "droce-dump: %s: unsupported link type %s (%d)\n",
			path, pcap_datalink_val_to_name(ctx.linktype),
			ctx.linktype);
		pcap_close(ctx.pcap);
		return EXIT_USAGE;
	}
	rc = run(&ctx);
	pcap_close(ctx.pcap);
	return rc;
}
