# QPs by hand: modify through each state with attributes, show them; UC
# and UD; wrong transitions and attributes refused.
#! want ^qp 0: state INIT$
#! want ^qp 0: state RTR$
#! want ^qp 0: state RTS$
#! want ^qp 0: RC qpn 0x[0-9a-f]{6} pd 0 cq 0/0 state RTS mtu 512 dest_qpn 0x[0-9a-f]{6} sq_psn 0x000100 rq_psn 0x000200 .* timeout 10 retry 5 rnr_retry 6 max_rd_atomic 4 max_dest_rd_atomic 8
#! want ^error: droce_modify_qp to RTS \(from RESET, mask 0x[0-9a-f]+\): Invalid argument
#! want ^error: RTR needs the peer: dgid= dqpn= rq_psn=
#! want ^error: bad MTU '1000'
#! want ^error: bad GID 'nowhere'
#! want ^error: connect needs a QP in RESET \(this one is RTS\)
#! want ^qp 2: UC qpn
#! want ^wc cq=1 wr_id=1 status=SUCCESS .*opcode=RECV byte_len=500
#! want ^mr 1: 500 bytes at offset 0 match
#! want ^qp 4: UD qpn
#! want ^wc cq=1 wr_id=1 status=SUCCESS .*opcode=RECV byte_len=1064 .*src_qp=0x[0-9a-f]{6}
#! want ^mr 1: 1024 bytes at offset 40 match
#! want ^qp 1: state SQD$
#! want ^qp 1: state ERR$
#! want ^qp 1: state RESET$
#! want ^qp 6 destroyed
#! want ^error: droce_create_qp: Invalid argument
#! want ^qp 6: RC qpn 0x[0-9a-f]{6} .*state RESET
#! want ^error: no such cq 9
#! want ^error: QP type must be rc, uc or ud
#! want ^cmdfile .*: \d+ commands, 0 unexpected results
pd create dev=0
pd create dev=1
mr reg 0 65536 access=local_write,remote_write,remote_read
mr reg 1 65536 access=local_write,remote_write,remote_read
cq create 64 dev=0
cq create 64 dev=1
qp create 0 rc cq=0
qp create 1 rc cq=1
device list
expect error
qp modify 0 RTS
expect error
qp modify 0 RTR
qp modify 0 INIT access=remote_write,remote_read
expect error
qp modify 0 RTR dgid=198.18.13.2 dqpn=17 mtu=1000
expect error
qp modify 0 RTR dgid=nowhere dqpn=17
qp modify 0 RTR dgid=198.18.13.2 dqpn=17 rq_psn=0x200 mtu=512 max_dest_rd_atomic=8 min_rnr_timer=5
qp modify 0 RTS sq_psn=0x100 timeout=10 retry=5 rnr_retry=6 max_rd_atomic=4
qp show 0
expect error
qp connect 0 peer=1
qp modify 1 INIT
qp modify 1 RTR dgid=::ffff:198.18.13.1 dqpn=17 rq_psn=0x100
qp modify 1 RTS sq_psn=0x200
mr fill 0 pattern=0x11 len=64
post 0 write mr=0 len=64 rmr=1
poll 0 status=SUCCESS
mr check 1 len=64 pattern=0x11
# SQD, ERR, RESET
qp modify 1 SQD
qp modify 1 ERR
qp modify 1 RESET
# UC
qp create 0 uc cq=0
qp create 1 uc cq=1
qp connect 2 peer=3
qp connect 3 peer=2
post 3 recv mr=1 len=1000
mr fill 0 pattern=inc seed=9 len=500
post 2 send mr=0 len=500
poll 0 status=SUCCESS
poll 1 status=SUCCESS opcode=RECV
mr check 1 len=500 pattern=inc seed=9
expect error
post 2 read mr=0 len=8 rmr=1
# UD: a receive holds the 40-byte GRH space first
qp create 0 ud cq=0
qp create 1 ud cq=1
qp connect 4 peer=5
qp connect 5 peer=4
post 5 recv mr=1 len=1064
mr fill 0 pattern=inc seed=1 len=1024
post 4 send mr=0 len=1024
poll 0 status=SUCCESS
poll 1 status=SUCCESS opcode=RECV
mr check 1 off=40 len=1024 pattern=inc seed=1
qp show 4
expect error
post 4 write mr=0 len=8 rmr=1
# create/destroy and refusals
expect error
qp create 0 rc cq=0 rcq=1
cq create 16 dev=0
qp create 0 rc cq=0 rcq=2
qp destroy 6
expect error
qp create 0 rc cq=0 sq=100000
expect error
qp create 0 rc cq=9
expect error
qp create 0 xrc cq=0
expect error
qp destroy 6
expect error
qp show 1 2
