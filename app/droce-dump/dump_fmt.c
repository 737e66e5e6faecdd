/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Printing one decoded packet.  Text and JSON share one field walk through
 * a tiny emitter: text prints "key=value" (hex where IBTA tools do), JSON
 * prints "key":value; a group is "name(...)" in text and "name":{...} in
 * JSON.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dump.h"

struct emitter {
	FILE *out;
	bool json;
	bool first;		/* no field printed yet at this level */
};

static void
em_str_json(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void
em_key(struct emitter *e, const char *key)
{
	if (e->json) {
		fputs(e->first ? "" : ",", e->out);
		em_str_json(e->out, key);
		fputc(':', e->out);
	} else {
		fprintf(e->out, "%s%s=", e->first ? "" : " ", key);
	}
	e->first = false;
}

static void
em_u64(struct emitter *e, const char *key, uint64_t v, bool hex)
{
	em_key(e, key);
	if (hex && !e->json)
		fprintf(e->out, "0x%" PRIx64, v);
	else
		fprintf(e->out, "%" PRIu64, v);
}

static void
em_str(struct emitter *e, const char *key, const char *s)
{
	em_key(e, key);
	if (e->json)
		em_str_json(e->out, s);
	else
		fputs(s, e->out);
}

static void
em_open(struct emitter *e, const char *name)
{
	if (e->json) {
		em_key(e, name);
		fputc('{', e->out);
	} else {
		fprintf(e->out, " %s(", name);
	}
	e->first = true;
}

static void
em_close(struct emitter *e)
{
	fputc(e->json ? '}' : ')', e->out);
	e->first = false;
}

static const char *const nak_names[] = {
	"PSN seq err", "invalid req", "remote access err", "remote op err",
	"invalid RD req",
};

void
dump_aeth_text(char *buf, size_t cap, uint8_t syndrome)
{
	unsigned int v = roce_aeth_value(syndrome);

	switch (roce_aeth_type(syndrome)) {
	case ROCE_AETH_ACK:
		snprintf(buf, cap, "ACK credit=%u", v);
		break;
	case ROCE_AETH_RNR_NAK:
		snprintf(buf, cap, "RNR timer=%u", v);
		break;
	case ROCE_AETH_NAK:
		if (v < sizeof(nak_names) / sizeof(nak_names[0]))
			snprintf(buf, cap, "NAK %s", nak_names[v]);
		else
			snprintf(buf, cap, "NAK reserved code %u", v);
		break;
	default:
		snprintf(buf, cap, "reserved syndrome 0x%02x", syndrome);
		break;
	}
}

static void
emit_aeth(struct emitter *e, const struct roce_pkt *p)
{
	char text[48];

	dump_aeth_text(text, sizeof(text), p->aeth.syndrome);
	em_open(e, "aeth");
	em_u64(e, "syndrome", p->aeth.syndrome, true);
	em_str(e, "decoded", text);
	em_u64(e, "msn", p->aeth.msn, false);
	em_close(e);
}

static void
emit_reth_atomic(struct emitter *e, const struct roce_pkt *p)
{
	if (roce_pkt_has(p, ROCE_OPM_RETH)) {
		em_open(e, "reth");
		em_u64(e, "va", p->reth.va, true);
		em_u64(e, "rkey", p->reth.rkey, true);
		em_u64(e, "len", p->reth.len, false);
		em_close(e);
	}
	if (roce_pkt_has(p, ROCE_OPM_ATMETH)) {
		em_open(e, "atomiceth");
		em_u64(e, "va", p->atmeth.va, true);
		em_u64(e, "rkey", p->atmeth.rkey, true);
		em_u64(e, "swap", p->atmeth.swap, true);
		em_u64(e, "comp", p->atmeth.comp, true);
		em_close(e);
	}
}

/* The extended headers, in wire order. */
static void
emit_ext_headers(struct emitter *e, const struct roce_pkt *p)
{
	if (roce_pkt_has(p, ROCE_OPM_DETH)) {
		em_open(e, "deth");
		em_u64(e, "qkey", p->deth.qkey, true);
		em_u64(e, "src_qpn", p->deth.src_qpn, true);
		em_close(e);
	}
	if (roce_pkt_has(p, ROCE_OPM_FETH)) {
		em_open(e, "feth");
		em_u64(e, "sel", p->feth.sel, false);
		em_u64(e, "plt", p->feth.plt, false);
		em_close(e);
	}
	emit_reth_atomic(e, p);
	if (roce_pkt_has(p, ROCE_OPM_AETH))
		emit_aeth(e, p);
	if (roce_pkt_has(p, ROCE_OPM_ATMACK)) {
		em_open(e, "atomicacketh");
		em_u64(e, "orig", p->atmack_orig, true);
		em_close(e);
	}
	if (roce_pkt_has(p, ROCE_OPM_IMM))
		em_u64(e, "imm", p->imm, true);
	if (roce_pkt_has(p, ROCE_OPM_IETH)) {
		em_open(e, "ieth");
		em_u64(e, "rkey", p->ieth_rkey, true);
		em_close(e);
	}
}

/* IPv4 dotted, IPv6 in RFC 5952 form (inet_ntop). */
static void
gid_to_str(const uint8_t gid[16], char *buf, size_t cap)
{
	if (roce_gid_is_ipv4(gid))
		inet_ntop(AF_INET, gid + 12, buf, (socklen_t)cap);
	else
		inet_ntop(AF_INET6, gid, buf, (socklen_t)cap);
}

static void
print_text_prefix(FILE *out, const struct dump_frame *f,
		  const struct roce_pkt *p)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	const char *l = p->ip_version == 6 ? "[" : "";
	const char *r = p->ip_version == 6 ? "]" : "";

	gid_to_str(p->src_gid, src, sizeof(src));
	gid_to_str(p->dst_gid, dst, sizeof(dst));
	fprintf(out, "%" PRIu64 " %.6f %s%s%s:%u \u2192 %s%s%s:%u %s",
		f->index, f->time, l, src, r, p->udp_sport, l, dst, r,
		p->udp_dport, p->op->name);
}

static void
emit_json_prefix(struct emitter *e, const struct dump_frame *f,
		 const struct roce_pkt *p)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];

	gid_to_str(p->src_gid, src, sizeof(src));
	gid_to_str(p->dst_gid, dst, sizeof(dst));
	fputc('{', e->out);
	em_u64(e, "index", f->index, false);
	em_key(e, "time");
	fprintf(e->out, "%.6f", f->time);
	em_u64(e, "ip_version", p->ip_version, false);
	em_str(e, "src", src);
	em_u64(e, "sport", p->udp_sport, false);
	em_str(e, "dst", dst);
	em_u64(e, "dport", p->udp_dport, false);
	em_u64(e, "opcode", p->opcode, false);
	em_str(e, "name", p->op->name);
}

void
dump_packet(FILE *out, const struct dump_frame *f, const struct roce_pkt *p,
	    bool icrc_ok)
{
	struct emitter e = { .out = out, .json = f->json, .first = true };

	if (e.json)
		emit_json_prefix(&e, f, p);
	else
		print_text_prefix(out, f, p);
	e.first = false;
	em_u64(&e, e.json ? "dest_qpn" : "qpn", p->dest_qpn, true);
	em_u64(&e, "psn", p->psn, false);
	em_u64(&e, "ackreq", p->ackreq, false);
	if (e.json) {
		em_u64(&e, "se", p->se, false);
		em_u64(&e, "pkey", p->pkey, false);
		em_u64(&e, "padcnt", p->padcnt, false);
	}
	emit_ext_headers(&e, p);
	em_u64(&e, "payload", p->payload_len, false);
	em_str(&e, "icrc", icrc_ok ? "ok" : "BAD");
	fputs(e.json ? "}\n" : "\n", out);
}

void
dump_malformed(FILE *out, const struct dump_frame *f, enum roce_parse_err err)
{
	struct emitter e = { .out = out, .json = f->json, .first = true };

	if (!e.json) {
		fprintf(out, "%" PRIu64 " %.6f malformed RoCEv2 packet: %s\n",
			f->index, f->time, roce_parse_strerror(err));
		return;
	}
	fputc('{', out);
	em_u64(&e, "index", f->index, false);
	em_key(&e, "time");
	fprintf(out, "%.6f", f->time);
	em_str(&e, "malformed", roce_parse_strerror(err));
	fputs("}\n", out);
}

static void
emit_opcode_counts(struct emitter *e, const struct dump_stats *s)
{
	em_open(e, "opcodes");
	for (unsigned int op = 0; op < 256; op++) {
		if (s->per_opcode[op] == 0)
			continue;
		if (e->json) {
			em_u64(e, roce_opcode_name((uint8_t)op), s->per_opcode[op],
			       false);
		} else {
			fprintf(e->out, "%s%s: %" PRIu64, e->first ? "" : ", ",
				roce_opcode_name((uint8_t)op), s->per_opcode[op]);
			e->first = false;
		}
	}
	em_close(e);
}

void
dump_summary(FILE *out, const struct dump_stats *s, bool json)
{
	struct emitter e = { .out = out, .json = json, .first = true };

	fputs(json ? "{\"summary\":{" : "summary: ", out);
	em_u64(&e, "frames", s->frames, false);
	em_u64(&e, "roce", s->roce, false);
	em_u64(&e, "non_roce", s->non_roce, false);
	em_u64(&e, "malformed", s->malformed, false);
	em_u64(&e, "icrc_bad", s->icrc_bad, false);
	emit_opcode_counts(&e, s);
	fputs(json ? "}}\n" : "\n", out);
}
