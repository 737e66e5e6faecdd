/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copies between packets and scatter/gather lists.  Every chunk is checked
 * against its L_Key when it is copied, not when the WR was posted, so a
 * region deregistered while a WQE waits is never touched (the L_Key checks
 * happen at execution, as on an RNIC).  The transport writes into receive
 * buffers, READ targets and atomic result buffers, which need LOCAL_WRITE,
 * as a DMA would (tp_place.h: each byte once, the last ones last).
 */
#include <string.h>

#include "tp_place.h"
#include "tp_private.h"

bool
tp_sge_copy_pd(struct tp_qp *qp, uint32_t pd, const struct droce_sge *sge,
	       unsigned int nsge, uint32_t off, void *buf, uint32_t len, bool into_sges)
{
	uint8_t *p = buf;

	for (unsigned int i = 0; i < nsge && len > 0; i++) {
		const struct droce_sge *s = &sge[i];
		uint32_t chunk;
		void *mem;

		if (off >= s->length) {
			off -= s->length;
			continue;
		}
		chunk = RTE_MIN(len, s->length - off);
		if (tp_prot_local(qp->eng, qp->dev->prot, s->lkey, pd, s->addr + off,
				     chunk, into_sges, &mem) != PROT_OK)
			return false;
		if (into_sges)
			tp_place(mem, p, chunk);
		else
			memcpy(p, mem, chunk);
		p += chunk;
		len -= chunk;
		off = 0;
	}
	return len == 0;
}
