/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport counters, defined once.  The first group carries the names the
 * Linux Soft-RoCE driver exposes (rdma statistic / hw_counters), so tools
 * and people comparing the two see the same words; the rest are droce's.
 * X(enum suffix, name, description)
 * Each is a count summed over a device's engines, but SCHED_GAP_MAX_US, a
 * maximum (tp_dev_counter_read).
 */
#ifndef TP_COUNTERS_H
#define TP_COUNTERS_H

#define TP_COUNTER_LIST(X)						\
	X(SENT_PKTS,            "sent_pkts", "packets sent")			\
	X(RCVD_PKTS,            "rcvd_pkts", "RoCEv2 packets received")		\
	X(DUPLICATE_REQUEST,    "duplicate_request", "duplicate requests received") \
	X(OUT_OF_SEQ_REQUEST,   "out_of_seq_request", "requests ahead of the expected PSN") \
	X(RCVD_RNR_ERR,         "rcvd_rnr_err", "RNR NAKs received")		\
	X(SEND_RNR_ERR,         "send_rnr_err", "RNR NAKs sent")		\
	X(RCVD_SEQ_ERR,         "rcvd_seq_err", "PSN sequence NAKs received")	\
	X(RETRY_EXCEEDED_ERR,   "retry_exceeded_err", "WRs failed: retry count exhausted") \
	X(RETRY_RNR_EXCEEDED_ERR, "retry_rnr_exceeded_err", "WRs failed: RNR retry count exhausted") \
	X(COMPLETER_RETRY_ERR,  "completer_retry_err", "go-back-N retransmissions started") \
	X(SEND_ERR,             "send_err", "frames dropped at the transmit side (none: what the queue has no room for waits, in the transport or in lib/net, net_tx_held)")	\
	X(LINK_DOWNED,          "link_downed", "link down events")		\
	X(RDMA_SENDS,           "rdma_sends", "RDMA requests sent")		\
	X(RDMA_RECVS,           "rdma_recvs", "RDMA requests executed")	\
	X(ICRC_ERR,             "icrc_err", "packets dropped: ICRC mismatch")	\
	X(MALFORMED,            "malformed_pkts", "packets dropped: malformed")	\
	X(NOT_FOR_US,           "not_for_us_pkts", "packets dropped: unknown QP or address") \
	X(TRANSPORT_MISMATCH,   "transport_mismatch", "packets dropped: opcode of another QP type") \
	X(TIMEOUTS,             "retransmit_timeouts", "retransmit timer expiries") \
	X(RETRANSMITTED_PKTS,   "retransmitted_pkts", "request packets sent again") \
	X(SENT_SEQ_NAK,         "sent_seq_nak", "PSN sequence NAKs sent")	\
	X(SENT_INV_REQ_NAK,     "sent_inv_req_nak", "invalid request NAKs sent") \
	X(SENT_REM_ACCESS_NAK,  "sent_rem_access_nak", "remote access error NAKs sent") \
	X(SENT_REM_OP_NAK,      "sent_rem_op_nak", "remote operational error NAKs sent") \
	X(RCVD_ERR_NAK,         "rcvd_err_nak", "error NAKs received")		\
	X(SENT_ACKS,            "sent_acks", "ACK packets sent")		\
	X(RCVD_ACKS,            "rcvd_acks", "ACK packets received")		\
	X(DUP_RESPONSE,         "duplicate_response", "stale responses ignored") \
	X(UD_QKEY_DROP,         "ud_qkey_drop", "UD packets dropped: Q_Key mismatch") \
	X(UC_MSG_DROP,          "uc_msg_drop", "UC messages dropped after a lost packet") \
	X(RX_NO_BUF_DROP,       "rx_no_recv_wqe_drop", "UD/UC packets dropped: no receive WQE") \
	X(CQ_OVERFLOW,          "cq_overflow", "completions lost: CQ full")	\
	X(TX_NOMBUF,            "tx_nombuf", "mbuf allocation failures") \
	X(HANDOFF_RX,           "shard_handoff_rx", "frames received on one shard, handed to the owner") \
	X(HANDOFF_TX,           "shard_handoff_tx", "frames handed to shard 0 to send") \
	X(HANDOFF_DROP,         "shard_handoff_drop", "frames dropped: a shard's handoff ring full") \
	X(SHARD_LINK_RX,        "shard_link_rx", "frames a shard took from its own link queue") \
	X(PKEY_VIOLATION,       "pkey_violation", "packets dropped: P_Key does not match the QP's") \
	X(RSVD_OPCODE_DROP,     "rsvd_opcode_drop", "packets dropped: reserved opcode (or RD, not in RoCEv2)") \
	X(VENDOR_OPCODE_DROP,   "vendor_opcode_drop", "packets dropped: manufacturer-specific opcode (0xc0-0xff)") \
	X(RCVD_CNP,             "rcvd_cnp", "CNPs received for a QP") \
	X(RP_CNP_HANDLED,       "rp_cnp_handled", "CNPs the QP's congestion control acted on (a rate cut)") \
	X(RP_CNP_IGNORED,       "rp_cnp_ignored", "CNPs ignored (algorithm none, or within rp_rate_reduce_monitor_period)") \
	X(NP_ECN_MARKED,        "np_ecn_marked_roce_packets", "RoCEv2 packets received marked ECN-CE") \
	X(NP_CNP_SENT,          "np_cnp_sent", "CNPs sent") \
	X(NP_CNP_LIMITED,       "np_cnp_rate_limited", "CE-marked packets not answered: a CNP went to the QP less than np_min_time_between_cnps ago") \
	X(CC_PACE_WAITS,        "cc_pace_waits", "requester stops: the pacer held a QP back to its rate") \
	X(SPORT_ROTATIONS,      "udp_sport_rotations", "UDP source ports changed at a retransmit timeout (udp_sport = rotate)") \
	X(ASYNC_EVENTS,         "async_events", "asynchronous events raised") \
	X(ASYNC_EVENT_DROP,     "async_event_drop", "asynchronous events lost: the context's queue full") \
	X(TX_BACKPRESSURE,      "tx_backpressure", "packets deferred: the transmit queue was full") \
	X(IP_CKSUM_BAD,         "ip_cksum_bad", "frames dropped: the port found a bad IPv4 header checksum") \
	X(QP_RUNS,              "qp_runs", "QP visits by a round (QPs on the ready list)") \
	X(DOORBELLS,            "doorbells", "dedicated lcore: doorbells answered (a QP's posted heads taken)") \
	X(LEASE_EXPIRED,        "lease_expired", "MR/MW leases that ran out (keys revoked, event raised)") \
	X(SCHED_GAPS,           "sched_gaps", "rounds after a gap of 1 ms or more with timers armed (the engine was not running)") \
	X(SCHED_GAP_MAX_US,     "sched_gap_max_us", "the longest gap between two rounds with timers armed, in us (a maximum: the largest engine's, not a sum)") \
	X(TIMEOUTS_IN_GAP,      "retransmit_timeouts_in_gap", "retransmit timer expiries in the engine's own gap: re-armed, no retry charged") \
	X(RX_TMPL_PARSED,       "rx_tmpl_parsed", "RoCEv2 frames parsed by their QP's receive template (the others field by field)") \
	X(RCVD_MCAST,           "rcvd_mcast_pkts", "multicast packets received for a group of the device (each counted once in rcvd_pkts)") \
	X(MCAST_DELIVERED,      "mcast_qp_deliveries", "multicast packets handed to an attached QP (one per QP; its Q_Key and receive queue decide)") \
	X(SR_SACK_SENT,         "sr_sack_sent", "selective repeat: selective ACKs sent (both ends agreed)") \
	X(SR_SACK_RCVD,         "sr_sack_rcvd", "selective repeat: selective ACKs received") \
	X(SR_OOO_PLACED,        "sr_ooo_placed", "selective repeat: WRITE packets placed out of order") \
	X(SR_OOO_DROPPED,       "sr_ooo_dropped", "selective repeat: packets out of order not placed (SEND, READ, atomic, WRITE with immediate's last, unknown message, beyond the window)") \
	X(SR_RESENT_PKTS,       "sr_resent_pkts", "selective repeat: holes resent (each also in retransmitted_pkts)") \
	X(SR_TIMEOUT_HOLE,      "sr_timeout_hole", "selective repeat: retransmit timeouts answered by resending the oldest hole only") \
	X(TX_ZC_PKTS,           "tx_zc_pkts", "packets sent with their payload from registered memory (zero copy, DROCE_LINK_TX_ZC)")

enum tp_counter {
#define TP_COUNTER_ENUM(e, n, d) TP_CNT_##e,
	TP_COUNTER_LIST(TP_COUNTER_ENUM)
#undef TP_COUNTER_ENUM
	TP_CNT_MAX
};

extern const char *const tp_counter_names[TP_CNT_MAX];

#endif /* TP_COUNTERS_H */
