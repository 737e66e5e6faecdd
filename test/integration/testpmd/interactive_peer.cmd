# The scripted peer of the interactive test: the other side sits idle at
# its prompt while this one writes into, reads from and sends to it.
#! want ^exchange: peer gid ::ffff:198\.18\.13\.1 qpn
#! want ^wc cq=0 wr_id=1 status=SUCCESS \(success\) opcode=RDMA_WRITE byte_len=3000
#! want ^wc cq=0 wr_id=1 status=SUCCESS \(success\) opcode=RDMA_READ byte_len=1000
#! want ^mr 0: 1000 bytes at offset 20000 match
#! want ^cmdfile .*: 14 commands, 0 unexpected results
pd create
mr reg 0 65536 access=local_write,remote_write,remote_read
cq create 64
qp create 0 rc cq=0
qp exchange 0 connect @PEER@ port=@PORT@ mr=0
mr fill 0 pattern=inc seed=1 len=3000
post 0 write mr=0 len=3000 roff=8192
poll 0 status=SUCCESS opcode=RDMA_WRITE
post 0 read mr=0 off=20000 len=1000 roff=2000
poll 0 status=SUCCESS opcode=RDMA_READ
mr check 0 off=20000 len=1000 pattern=0x5a
mr fill 0 off=30000 len=100 pattern=0x77
post 0 send mr=0 off=30000 len=100
poll 0 status=SUCCESS opcode=SEND
