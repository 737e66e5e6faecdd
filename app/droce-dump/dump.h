/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-dump: decode the RoCEv2 packets of a capture with lib/wire.
 * main.c reads the capture and classifies frames; dump_fmt.c prints one
 * decoded packet (text or JSON) and the summary.
 */
#ifndef DROCE_DUMP_H
#define DROCE_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "roce_wire.h"

struct dump_stats {
	uint64_t frames;
	uint64_t roce;
	uint64_t non_roce;
	uint64_t malformed;
	uint64_t icrc_bad;
	uint64_t per_opcode[256];
};

/* Where and when a frame was seen. */
struct dump_frame {
	uint64_t index;		/* 1-based, like tshark's frame.number */
	double time;		/* seconds since the first frame */
	bool json;
};

void dump_packet(FILE *out, const struct dump_frame *f,
		 const struct roce_pkt *p, bool icrc_ok);
void dump_malformed(FILE *out, const struct dump_frame *f,
		    enum roce_parse_err err);
void dump_summary(FILE *out, const struct dump_stats *s, bool json);

/* AETH syndrome in words: "ACK credit=31", "NAK PSN seq err", "RNR timer=14". */
void dump_aeth_text(char *buf, size_t cap, uint8_t syndrome);

#endif /* DROCE_DUMP_H */
