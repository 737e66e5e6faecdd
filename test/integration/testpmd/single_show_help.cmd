# help for every group, devices, counters by their telemetry names.
#! want ^device\s+droce devices
#! want ^qp\s+queue pairs
#! want ^  post QP OP \[mr=MR\]
#! want ^  mr reg PD SIZE
#! want ^  mw bind MW qp=QP mr=MR
#! want ^  cq create DEPTH
#! want ^  poll CQ \[n=N\]
#! want ^  qp connect QP peer=QP2
#! want ^  show counters \[dev=N\]
#! want ^  engine start write_bw\|read_bw\|send_bw\|pingpong\|atomic
#! want ^  pd create \[dev=N\]
#! want ^  device list
#! want ^  expect ok\|error
#! want ^  sleep MS
#! want ^error: no help for 'nonsense'
#! want ^dev 0: droce0 port ACTIVE mtu \d+ gids 1
#! want ^  gid 0: ::ffff:198\.18\.13\.1
#! want ^dev 1: droce1 port ACTIVE
#! want ^  gid 0: ::ffff:198\.18\.13\.2
#! want ^counters of dev 0 \(droce0\):
# dev 0's one 4096-byte WRITE at path MTU 1024: 4 packets, 1 ACK back
# (AckReq on the last only); dev 1 executes the 4.  The link adds dev 0's
# ARP request and, unless dev 1 learned its MAC from that request first, a
# reply to dev 1's: 5 or 6 frames.
#! want ^  sent_pkts: 4$
#! want ^  rcvd_pkts: 1$
#! want ^  rdma_sends: 4$
#! want ^  net_rx_arp_request: [01]$
#! want ^  link_tx_pkts: [56]$
#! want ^  prot_remote_
#! count 1 ^  rdma_recvs: 0$
#! count 1 ^  rdma_recvs: 4$
#! want ^qp 0 \(qpn 0x[0-9a-f]{6}\):
#! want ^  state: RTS
#! want ^  req_psn: \d+
#! want ^  retry_cnt: 7
#! want ^marker one two k=v
#! want ^error: show counters \[dev=N\] \[filter=TEXT\] \| show qp QP
#! want ^error: no such device 3
#! want ^cmdfile .*: \d+ commands, 0 unexpected results
help
help device
help pd
help mr
help mw
help cq
help poll
help qp
help post
help show
help engine
help sleep
expect error
help nonsense
device list
device show 1
expect error
device show 3
pd create dev=0
pd create dev=1
mr reg 0 65536 access=local_write,remote_write,remote_read
mr reg 1 65536 access=local_write,remote_write,remote_read
cq create 64 dev=0
cq create 64 dev=1
qp create 0 rc cq=0
qp create 1 rc cq=1
qp connect 0 peer=1 rmr=1
qp connect 1 peer=0 rmr=0
post 0 write mr=0 len=4096
poll 0 status=SUCCESS
show counters
show counters dev=1 filter=rdma_recvs
show qp 0
echo marker one two k=v
sleep 10
expect error
show
expect error
show counters dev=3
expect error
show qp 9
