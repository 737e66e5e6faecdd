/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-pingpong [EAL options] -- [droce options] [options] [servername]
 *
 * libibverbs' ibv_rc_pingpong on droce: RC SENDs between two processes,
 * addresses exchanged over TCP in ibv_rc_pingpong's format, so either side
 * may be the rdma-core program.  See pingpong.h for the files.
 */
#include "pingpong.h"

int
main(int argc, char **argv)
{
	return pp_main(argc, argv, PP_RC);
}
