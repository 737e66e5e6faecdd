# Side a of two droce-testpmd processes: listens for qp exchange, lets
# side b write, read, send and run engines against it, checks its memory.
#! want ^exchange: listening on port
#! want ^exchange: peer gid ::ffff:198\.18\.13\.2 qpn 0x[0-9a-f]{6} psn 0x[0-9a-f]{6} rkey 0x[0-9a-f]{8} addr 0x[0-9a-f]+ len 1048576
#! want ^qp 0: state RTS
#! want ^mr 0: 5000 bytes at offset 1000 match
#! want ^wc cq=0 wr_id=5 status=SUCCESS .*opcode=RECV byte_len=200 .*imm=0xcafe0001
#! want ^mr 0: 200 bytes at offset 600000 match
#! want ^  sent_rem_access_nak: 1
#! want ^engine 0 send_bw: done ops 500 bytes 2048000 .* errors 0
#! want ^engine 0 pingpong: done ops 100 bytes 6400
#! want ^mr 0 u64 at 8: 300
#! want ^sync end: done
#! want ^cmdfile .*: \d+ commands, 0 unexpected results
pd create
mr reg 0 1048576 access=local_write,remote_write,remote_read,remote_atomic
mr reg 0 4096 access=local_write
cq create 256
qp create 0 rc cq=0 sq=128 rq=128
qp create 0 rc cq=0
mr fill 0 pattern=inc seed=200 off=700000 len=3000
qp exchange 0 listen port=@PORT@ mr=0
post 0 recv mr=0 off=600000 len=4096 wrid=5
sync tag=ready
# b writes 5000 bytes at 1000, reads 3000 at 700000, sends 200 with imm
sync tag=written
mr check 0 off=1000 len=5000 pattern=inc seed=11
poll 0 status=SUCCESS opcode=RECV
mr check 0 off=600000 len=200 pattern=0xee
# the second link: qp 1 offers mr 1, which has no remote_write
qp exchange 1 listen port=@PORT@ mr=1
sync tag=refused
show counters filter=sent_rem_access_nak
mr check 1 len=4096 pattern=0
# engines: b writes (one-sided), then sends to our receiver, then pingpong
mr u64 0 off=8 set=100
sync tag=engines
engine start send_bw qp=0 mr=0 role=server size=4096 count=500 depth=64
engine wait 0 timeout=60
engine start pingpong qp=0 mr=0 role=server count=100
engine wait 0 timeout=60
sync tag=atomic
sync tag=end
mr u64 0 off=8 expect=300
