# Memory windows: type 1 (mw bind) and type 2 (post bind_mw), access
# through them, and an invalidated window's rkey refused (send_inv,
# local_inv, unbind, dealloc).
#! want ^mw 0: type 1 rkey 0x[0-9a-f]{8}
#! want ^mw 0: bound rkey 0x[0-9a-f]{8} addr 0x[0-9a-f]+ len 1000
#! want ^mr 1: 100 bytes at offset 40010 match
#! want ^mw 1: type 2 rkey
#! want ^qp 3: posted bind_mw, mw rkey 0x[0-9a-f]{8}
#! want ^wc cq=1 wr_id=1 status=SUCCESS \(success\) opcode=BIND_MW
#! want ^mw 1: pd 1 type 2 rkey 0x[0-9a-f]{8} addr 0x[0-9a-f]+ len 2000
#! want ^mr 1: 200 bytes at offset 50000 match
#! want opcode=RECV byte_len=16 .*inv_rkey=0x[0-9a-f]{8}
#! want ^wc cq=0 wr_id=31 status=REM_ACCESS_ERR
#! want ^wc cq=0 wr_id=32 status=REM_ACCESS_ERR
#! want ^wc cq=1 wr_id=1 status=SUCCESS \(success\) opcode=LOCAL_INV
#! want ^wc cq=0 wr_id=33 status=REM_ACCESS_ERR
#! want ^mw 0: unbound, rkey 0x[0-9a-f]{8} revoked
#! want ^mw 1: posted local_inv of rkey 0x[0-9a-f]{8} on qp 7
#! want ^wc cq=0 wr_id=34 status=REM_ACCESS_ERR
#! want ^mw 2 deallocated
#! want ^error: droce_alloc_mw: Invalid argument
#! want ^error: droce_bind_mw: Invalid argument
#! want ^error: no such mw 9
#! want ^mr 1: 1000 bytes at offset 40000 match
#! want ^cmdfile .*: \d+ commands, 0 unexpected results
pd create dev=0
pd create dev=1
mr reg 0 65536 access=local_write,remote_write,remote_read
mr reg 1 65536 access=local_write,remote_write,remote_read,mw_bind
cq create 256 dev=0
cq create 256 dev=1
# five RC pairs: a refused access moves the requester's QP to ERR
qp create 0 rc cq=0
qp create 1 rc cq=1
qp connect 0 peer=1
qp connect 1 peer=0
# type 1: bind, write through it, out of its range refused
mw alloc 1 type=1
mw bind 0 qp=1 mr=1 off=40000 len=1000 access=remote_write,remote_read
poll 1 status=SUCCESS opcode=BIND_MW
mr fill 0 pattern=0x42 len=100
post 0 write mr=0 len=100 rmw=0 roff=10
poll 0 status=SUCCESS
mr check 1 off=40010 len=100 pattern=0x42
mr check 1 off=40000 len=10 pattern=0
post 0 write mr=0 len=100 rmw=0 roff=950 wrid=31
poll 0 status=REM_ACCESS_ERR
mr check 1 off=40000 len=10 pattern=0
# type 2: bind by a work request, write, invalidate by send_inv
qp create 0 rc cq=0
qp create 1 rc cq=1
qp connect 2 peer=3
qp connect 3 peer=2
mw alloc 1 type=2
post 3 bind_mw mw=1 mr=1 off=50000 len=2000 access=remote_write,remote_read
poll 1 status=SUCCESS opcode=BIND_MW
mw show
mr fill 0 pattern=0x99 len=200
post 2 write mr=0 len=200 rmw=1
poll 0 status=SUCCESS
mr check 1 off=50000 len=200 pattern=0x99
post 3 recv mr=1 off=4096 len=1024
post 2 send_inv mr=0 len=16 inv=mw1
poll 0 status=SUCCESS
poll 1 status=SUCCESS opcode=RECV
post 2 write mr=0 len=200 rmw=1 wrid=32
poll 0 status=REM_ACCESS_ERR
# type 2 again: rebind, then local_inv on the owner's QP
qp create 0 rc cq=0
qp create 1 rc cq=1
qp connect 4 peer=5
qp connect 5 peer=4
post 5 bind_mw mw=1 mr=1 off=50000 len=2000 access=remote_read
poll 1 status=SUCCESS opcode=BIND_MW
post 4 read mr=0 len=64 rmw=1
poll 0 status=SUCCESS opcode=RDMA_READ
post 5 local_inv inv=mw1
poll 1 status=SUCCESS opcode=LOCAL_INV
post 4 read mr=0 len=64 rmw=1 wrid=33
poll 0 status=REM_ACCESS_ERR
# mw invalidate: type 2 (a LOCAL_INV), then type 1 (unbound): refused
qp create 0 rc cq=0
qp create 1 rc cq=1
qp connect 6 peer=7
qp connect 7 peer=6
post 7 bind_mw mw=1 mr=1 off=50000 len=2000 access=remote_read
poll 1 status=SUCCESS opcode=BIND_MW
post 6 read mr=0 len=64 rmw=1
poll 0 status=SUCCESS opcode=RDMA_READ
mw invalidate 1 qp=7
poll 1 status=SUCCESS opcode=LOCAL_INV
mw invalidate 0 qp=7
poll 1 status=SUCCESS opcode=BIND_MW
post 6 write mr=0 len=8 rmw=0 wrid=34
poll 0 status=REM_ACCESS_ERR
# dealloc: a bound window is unbound first
qp create 0 rc cq=0
qp create 1 rc cq=1
qp connect 8 peer=9
qp connect 9 peer=8
mw alloc 1 type=1
mw bind 2 qp=9 mr=1 off=40000 len=1000
poll 1 status=SUCCESS opcode=BIND_MW
post 8 write mr=0 len=8 rmw=2
poll 0 status=SUCCESS
mr fill 1 pattern=0 off=40000 len=1000
mw dealloc 2
expect error
post 8 write mr=0 len=8 rmw=2
# wrong uses
expect error
mw alloc 1 type=3
expect error
mw bind 1 qp=1 mr=1 len=100
expect error
mw dealloc 9
expect error
post 9 local_inv
mr check 1 off=40000 len=1000 pattern=0
