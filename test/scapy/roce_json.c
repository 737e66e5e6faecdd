/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test helper: lib/wire as a line-oriented filter for the scapy tests.
 *
 *   roce_json opcodes   one JSON object per defined opcode (table dump)
 *   roce_json parse     stdin: one Ethernet frame in hex per line;
 *                       stdout: droce's parse of it as one JSON object
 *   roce_json build     stdin: "key=value ..." per line (see build_key());
 *                       stdout: the frame roce_build() makes, in hex
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_wire.h"

#define LINE_MAX_LEN 65536
#define FRAME_CAP 16384

static const char *const hdr_names[ROCE_HDR_MAX] = {
	[ROCE_HDR_DETH] = "deth", [ROCE_HDR_FETH] = "feth",
	[ROCE_HDR_RETH] = "reth", [ROCE_HDR_ATMETH] = "atmeth",
	[ROCE_HDR_AETH] = "aeth", [ROCE_HDR_ATMACK] = "atmack",
	[ROCE_HDR_IMM] = "imm", [ROCE_HDR_IETH] = "ieth",
	[ROCE_HDR_CNP] = "cnp",
};

static int
cmd_opcodes(void)
{
	for (unsigned int op = 0; op < 256; op++) {
		const struct roce_opcode_info *i = roce_opcode_get((uint8_t)op);
		const char *sep = "";

		if (i->name == NULL)
			continue;
		printf("{\"opcode\":%u,\"name\":\"%s\",\"hdr_len\":%u,"
		       "\"payload\":%s,\"fixed8\":%s,\"hdrs\":[", op, i->name,
		       i->hdr_len, i->mask & ROCE_OPM_PAYLOAD ? "true" : "false",
		       i->mask & ROCE_OPM_FIXED8 ? "true" : "false");
		for (unsigned int h = 0; h < ROCE_HDR_MAX; h++) {
			if (i->mask & (1u << h)) {
				printf("%s\"%s\"", sep, hdr_names[h]);
				sep = ",";
			}
		}
		printf("]}\n");
	}
	return 0;
}

static size_t
hex_decode(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;
	unsigned int b;

	while (n < cap && sscanf(s, "%2x", &b) == 1) {
		out[n++] = (uint8_t)b;
		s += 2;
	}
	return n;
}

static void
print_addr(const char *key, const uint8_t gid[16])
{
	char s[INET6_ADDRSTRLEN];

	if (roce_gid_is_ipv4(gid))
		inet_ntop(AF_INET, gid + 12, s, sizeof(s));
	else
		inet_ntop(AF_INET6, gid, s, sizeof(s));
	printf(",\"%s\":\"%s\"", key, s);
}

#define U(key, v) printf(",\"%s\":%" PRIu64, key, (uint64_t)(v))

static void
print_ext(const struct roce_pkt *p)
{
	if (roce_pkt_has(p, ROCE_OPM_DETH)) {
		U("deth_qkey", p->deth.qkey); U("deth_src_qpn", p->deth.src_qpn);
	}
	if (roce_pkt_has(p, ROCE_OPM_FETH)) {
		U("feth_sel", p->feth.sel); U("feth_plt", p->feth.plt);
	}
	if (roce_pkt_has(p, ROCE_OPM_RETH)) {
		U("reth_va", p->reth.va); U("reth_rkey", p->reth.rkey);
		U("reth_len", p->reth.len);
	}
	if (roce_pkt_has(p, ROCE_OPM_ATMETH)) {
		U("atm_va", p->atmeth.va); U("atm_rkey", p->atmeth.rkey);
		U("atm_swap", p->atmeth.swap); U("atm_comp", p->atmeth.comp);
	}
	if (roce_pkt_has(p, ROCE_OPM_AETH)) {
		U("aeth_syndrome", p->aeth.syndrome); U("aeth_msn", p->aeth.msn);
	}
	if (roce_pkt_has(p, ROCE_OPM_ATMACK))
		U("atmack_orig", p->atmack_orig);
	if (roce_pkt_has(p, ROCE_OPM_IMM))
		U("imm", p->imm);
	if (roce_pkt_has(p, ROCE_OPM_IETH))
		U("ieth_rkey", p->ieth_rkey);
}

static void
print_parse(const uint8_t *f, size_t len)
{
	struct roce_pkt p;
	enum roce_parse_err err = roce_parse_eth(f, len, &p);

	if (err != ROCE_PARSE_OK) {
		printf("{\"err\":\"%s\"}\n", roce_parse_strerror(err));
		return;
	}
	printf("{\"err\":null,\"name\":\"%s\"", p.op->name);
	U("ip_version", p.ip_version); U("tos", p.ip_dscp_ecn);
	U("ttl", p.ip_ttl); U("ip_id", p.ip_id); U("flow", p.ip_flow_label);
	print_addr("src", p.src_gid);
	print_addr("dst", p.dst_gid);
	U("sport", p.udp_sport); U("dport", p.udp_dport);
	U("opcode", p.opcode); U("se", p.se); U("migreq", p.migreq);
	U("padcnt", p.padcnt); U("tver", p.tver); U("pkey", p.pkey);
	U("fecn", p.fecn); U("becn", p.becn); U("qpn", p.dest_qpn);
	U("ackreq", p.ackreq); U("psn", p.psn);
	print_ext(&p);
	U("payload_off", p.payload_off); U("payload_len", p.payload_len);
	U("icrc", p.icrc);
	printf(",\"icrc_ok\":%s}\n", roce_icrc_verify(f, &p) ? "true" : "false");
}

static int
cmd_parse(void)
{
	static char line[LINE_MAX_LEN];
	static uint8_t frame[LINE_MAX_LEN / 2];

	while (fgets(line, sizeof(line), stdin) != NULL)
		print_parse(frame, hex_decode(line, frame, sizeof(frame)));
	return 0;
}

static int
set_addr(struct roce_pkt *p, uint8_t gid[16], const char *s)
{
	uint8_t v4[4];

	if (p->ip_version == 4 && inet_pton(AF_INET, s, v4) == 1) {
		roce_gid_from_ipv4(gid, v4);
		return 0;
	}
	return inet_pton(AF_INET6, s, gid) == 1 ? 0 : -1;
}

/* Table of the numeric build keys: name -> where the value goes. */
struct num_key {
	const char *name;
	size_t off;
	size_t size;
};

#define K(n, field) { n, offsetof(struct roce_pkt, field), \
		      sizeof(((struct roce_pkt *)0)->field) }
static const struct num_key num_keys[] = {
	K("ipver", ip_version), K("tos", ip_dscp_ecn), K("ttl", ip_ttl),
	K("df", ip_df), K("ip_id", ip_id), K("flow", ip_flow_label),
	K("sport", udp_sport), K("dport", udp_dport), K("opcode", opcode),
	K("se", se), K("migreq", migreq), K("pkey", pkey), K("fecn", fecn),
	K("becn", becn), K("qpn", dest_qpn), K("ackreq", ackreq),
	K("psn", psn), K("payload_len", payload_len),
	K("deth_qkey", deth.qkey), K("deth_src_qpn", deth.src_qpn),
	K("feth_sel", feth.sel), K("feth_plt", feth.plt),
	K("reth_va", reth.va), K("reth_rkey", reth.rkey),
	K("reth_len", reth.len), K("atm_va", atmeth.va),
	K("atm_rkey", atmeth.rkey), K("atm_swap", atmeth.swap),
	K("atm_comp", atmeth.comp), K("aeth_syndrome", aeth.syndrome),
	K("aeth_msn", aeth.msn), K("atmack_orig", atmack_orig),
	K("imm", imm), K("ieth_rkey", ieth_rkey),
};

static int
set_num(struct roce_pkt *p, const char *key, const char *val)
{
	uint64_t v = strtoull(val, NULL, 0);

	for (size_t i = 0; i < sizeof(num_keys) / sizeof(num_keys[0]); i++) {
		const struct num_key *k = &num_keys[i];
		uint8_t *dst = (uint8_t *)p + k->off;

		if (strcmp(k->name, key) != 0)
			continue;
		if (k->size == 1)
			*dst = (uint8_t)v;
		else if (k->size == 2)
			memcpy(dst, &(uint16_t){ (uint16_t)v }, 2);
		else if (k->size == 4)
			memcpy(dst, &(uint32_t){ (uint32_t)v }, 4);
		else
			memcpy(dst, &v, 8);
		return 0;
	}
	return -1;
}

/* src/dst need ipver first: the caller puts ipver first on the line. */
static int
build_key(struct roce_pkt *p, char *tok)
{
	char *eq = strchr(tok, '=');

	if (eq == NULL)
		return -1;
	*eq = '\0';
	if (strcmp(tok, "src") == 0)
		return set_addr(p, p->src_gid, eq + 1);
	if (strcmp(tok, "dst") == 0)
		return set_addr(p, p->dst_gid, eq + 1);
	return set_num(p, tok, eq + 1);
}

static int
build_line(char *line)
{
	static uint8_t frame[FRAME_CAP], payload[FRAME_CAP];
	struct roce_pkt p;
	size_t len;

	memset(&p, 0, sizeof(p));
	for (char *t = strtok(line, " \t\n"); t != NULL; t = strtok(NULL, " \t\n")) {
		if (build_key(&p, t) != 0) {
			fprintf(stderr, "roce_json: bad key/value '%s'\n", t);
			return -1;
		}
	}
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);	/* same rule as the test */
	len = roce_build(frame, sizeof(frame), &p, payload);
	if (len == 0) {
		fprintf(stderr, "roce_json: roce_build refused the packet\n");
		return -1;
	}
	for (size_t i = 0; i < len; i++)
		printf("%02x", frame[i]);
	printf("\n");
	return 0;
}

static int
cmd_build(void)
{
	static char line[LINE_MAX_LEN];

	while (fgets(line, sizeof(line), stdin) != NULL)
		if (build_line(line) != 0)
			return 1;
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "opcodes") == 0)
		return cmd_opcodes();
	if (argc == 2 && strcmp(argv[1], "parse") == 0)
		return cmd_parse();
	if (argc == 2 && strcmp(argv[1], "build") == 0)
		return cmd_build();
	fprintf(stderr, "usage: roce_json opcodes|parse|build\n");
	return 2;
}
