/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-srq-pingpong [EAL options] -- [droce options] [options] [servername]
 *
 * libibverbs' ibv_srq_pingpong on droce: RC SENDs on -q QPs (16) whose
 * receives all come from one shared receive queue, addresses exchanged
 * over TCP in ibv_srq_pingpong's format, so either side may be the
 * rdma-core program.  See pingpong.h for the files.
 */
#include "pingpong.h"

int
main(int argc, char **argv)
{
	return pp_main(argc, argv, PP_SRQ);
}
