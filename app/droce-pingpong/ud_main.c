/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-ud-pingpong [EAL options] -- [droce options] [options] [servername]
 *
 * libibverbs' ibv_ud_pingpong on droce: UD SENDs (Q_Key 0x11111111, one
 * address handle for the peer, receive buffers with the 40-byte GRH
 * first), addresses exchanged over TCP in ibv_ud_pingpong's format.
 */
#include "pingpong.h"

int
main(int argc, char **argv)
{
	return pp_main(argc, argv, PP_UD);
}
