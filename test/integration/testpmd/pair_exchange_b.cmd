# Side b: connects to side a's qp exchange and drives the traffic.
#! want ^exchange: peer gid ::ffff:198\.18\.13\.1 qpn 0x[0-9a-f]{6} psn 0x[0-9a-f]{6} rkey 0x[0-9a-f]{8} addr 0x[0-9a-f]+ len 1048576
#! want ^wc cq=0 wr_id=1 status=SUCCESS .*opcode=RDMA_WRITE byte_len=5000
#! want ^wc cq=0 wr_id=1 status=SUCCESS .*opcode=RDMA_READ byte_len=3000
#! want ^mr 0: 3000 bytes at offset 20000 match
#! want ^wc cq=0 wr_id=9 status=REM_ACCESS_ERR \(remote access error\)
#! want ^engine 0 write_bw: done ops 200 bytes 13107200 .* errors 0
#! want ^engine 0 send_bw: done ops 500 bytes 2048000 .* errors 0
#! want ^engine 0 pingpong: done ops 100 bytes 6400 .* rtt_us min
#! want ^engine 0 atomic: done ops 200 bytes 1600 .* errors 0
#! want ^cmdfile .*: \d+ commands, 0 unexpected results
pd create
mr reg 0 1048576 access=local_write,remote_write,remote_read,remote_atomic
cq create 256
qp create 0 rc cq=0 sq=128 rq=128
qp create 0 rc cq=0
qp exchange 0 connect @PEER@ port=@PORT@ mr=0
sync tag=ready
mr fill 0 pattern=inc seed=11 len=5000
post 0 write mr=0 len=5000 roff=1000
poll 0 status=SUCCESS opcode=RDMA_WRITE
post 0 read mr=0 off=20000 len=3000 roff=700000
poll 0 status=SUCCESS opcode=RDMA_READ
mr check 0 off=20000 len=3000 pattern=inc seed=200
mr fill 0 off=40000 len=200 pattern=0xee
post 0 send_imm mr=0 off=40000 len=200 imm=0xcafe0001
poll 0 status=SUCCESS opcode=SEND
sync tag=written
qp exchange 1 connect @PEER@ port=@PORT@
mr fill 0 pattern=0xff len=16
post 1 write mr=0 len=16 wrid=9
poll 0 status=REM_ACCESS_ERR
sync tag=refused
sync tag=engines
engine start write_bw qp=0 mr=0 size=65536 count=200 roff=65536
engine wait 0 timeout=60
engine start send_bw qp=0 mr=0 size=4096 count=500
engine wait 0 timeout=60
sleep 200
engine start pingpong qp=0 mr=0 count=100
engine wait 0 timeout=60
sync tag=atomic
engine start atomic qp=0 mr=0 count=200 roff=8
engine wait 0 timeout=60
sync tag=end
