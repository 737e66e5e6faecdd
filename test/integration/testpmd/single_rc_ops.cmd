# RC between the two devices of one process: every operation, bytes and
# completions checked; REM_ACCESS_ERR for a write to an MR without
# remote_write, and for a read from one without remote_read.
#! want ^qp 0: RC qpn 0x[0-9a-f]{6} \(\d+\) psn 0x[0-9a-f]{6} state RESET
#! want ^qp 0: state RTS, peer qpn
#! want ^wc cq=0 wr_id=1 status=SUCCESS \(success\) opcode=RDMA_WRITE byte_len=8192 qpn=
#! want ^mr 1: 8192 bytes at offset 100 match
#! want ^wc cq=1 wr_id=77 status=SUCCESS \(success\) opcode=RECV byte_len=300 .* imm=0x00001234
#! want ^wc cq=1 wr_id=1 status=SUCCESS \(success\) opcode=RECV_RDMA_WITH_IMM byte_len=128 .* imm=0x0000002a
#! want ^wc cq=0 wr_id=1 status=SUCCESS \(success\) opcode=RDMA_READ byte_len=4000
#! want ^mr 0 and mr 1: 4000 bytes equal
#! want ^wc cq=0 wr_id=1 status=SUCCESS \(success\) opcode=FETCH_ADD byte_len=8
#! want ^mr 1 u64 at 1024: 99 \(0x63\)
#! want ^wc cq=0 wr_id=5 status=REM_ACCESS_ERR \(remote access error\)
#! want ^wc cq=0 wr_id=7 status=WR_FLUSH_ERR \(Work Request Flushed Error\)
#! want ^wc cq=0 wr_id=6 status=REM_ACCESS_ERR \(remote access error\)
#! want ^wc cq=0 wr_id=10 status=SUCCESS .*opcode=RDMA_WRITE
#! want ^wc cq=0 wr_id=12 status=SUCCESS .*opcode=RDMA_WRITE
#! want ^mr 2: 4096 bytes at offset 0 match
#! want ^cq 0: empty
#! want ^  sent_rem_access_nak: 2$
#! count 1 ^wc cq=1 wr_id=77
#! want ^cmdfile .*: \d+ commands, 0 unexpected results
pd create dev=0
pd create dev=1
mr reg 0 65536 access=local_write,remote_write,remote_read,remote_atomic
mr reg 1 65536 access=local_write,remote_write,remote_read,remote_atomic
mr reg 1 4096 access=local_write
cq create 256 dev=0
cq create 256 dev=1
qp create 0 rc cq=0 inline=128
qp create 1 rc cq=1
qp connect 0 peer=1 rmr=1
qp connect 1 peer=0 rmr=0
# write: bytes land at the remote offset
mr fill 0 pattern=inc seed=7 len=8192
post 0 write mr=0 len=8192 roff=100
poll 0 status=SUCCESS opcode=RDMA_WRITE
mr check 1 off=100 len=8192 pattern=inc seed=7
# send with immediate into a posted receive
post 1 recv mr=1 off=4096 len=1024 wrid=77
mr fill 0 pattern=0xab len=300
post 0 send_imm mr=0 len=300 imm=0x1234
poll 0 status=SUCCESS opcode=SEND
poll 1 status=SUCCESS opcode=RECV
mr check 1 off=4096 len=300 pattern=0xab
# inline send, zero-length receive of a write with immediate
post 1 recv mr=1 off=4096 len=1024
post 0 send mr=0 len=64 inline=1
poll 0 status=SUCCESS opcode=SEND
poll 1 status=SUCCESS opcode=RECV
post 1 recv
post 0 write_imm mr=0 len=128 roff=30000 imm=42
poll 0 status=SUCCESS opcode=RDMA_WRITE
poll 1 status=SUCCESS opcode=RECV_RDMA_WITH_IMM
# read back what the peer holds
mr fill 1 off=8192 len=4000 pattern=inc seed=3
post 0 read mr=0 off=20000 len=4000 roff=8192
poll 0 status=SUCCESS opcode=RDMA_READ
mr cmp 0 1 off=20000 off2=8192 len=4000
# atomics
mr u64 1 off=1024 set=10
post 0 fetch_add mr=0 off=512 roff=1024 add=5
poll 0 status=SUCCESS opcode=FETCH_ADD
mr u64 0 off=512 expect=10
mr u64 1 off=1024 expect=15
post 0 cmp_swap mr=0 off=512 roff=1024 compare=15 swap=99
poll 0 status=SUCCESS opcode=COMP_SWAP
mr u64 0 off=512 expect=15
mr u64 1 off=1024 expect=99
# unsignaled writes: only the signaled one completes
post 0 write mr=0 len=64 sig=0 count=3 wrid=20
post 0 write mr=0 len=64 wrid=10
poll 0 status=SUCCESS
poll 0 n=0
# several at once
post 0 write mr=0 len=64 count=3 wrid=10
poll 0 n=3 status=SUCCESS
# no remote_write on mr 2: the peer refuses (and the QP goes to ERR)
post 0 write mr=0 len=16 rmr=2 wrid=5
poll 0 status=REM_ACCESS_ERR
# a WR posted to a QP in ERR is flushed
post 0 write mr=0 len=16 wrid=7
poll 0 status=WR_FLUSH_ERR
show counters dev=1 filter=sent_rem_access_nak
# a second pair for the read refusal
qp create 0 rc cq=0
qp create 1 rc cq=1
qp connect 2 peer=3
qp connect 3 peer=2
post 2 read mr=0 len=16 rmr=2 wrid=6
poll 0 status=REM_ACCESS_ERR
show counters dev=1 filter=sent_rem_access_nak
# the reference case: the same write to an MR with remote_write works
qp create 0 rc cq=0
qp create 1 rc cq=1
qp connect 4 peer=5 rmr=1
qp connect 5 peer=4
mr fill 0 pattern=0x3c len=16
post 4 write mr=0 len=16 wrid=12
poll 0 status=SUCCESS
mr check 1 len=16 pattern=0x3c
mr check 2 len=4096 pattern=0
cq show
