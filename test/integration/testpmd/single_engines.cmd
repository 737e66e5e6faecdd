# Traffic engines on one lcore between the two devices: each finishes with
# a summary; written bytes and the atomic counter are checked afterwards.
#! want ^engine 0: write_bw started on qp 0
#! want ^engine 0 write_bw: done ops 300 bytes 19660800 secs [0-9.]+ MB/s [0-9.]+ Mops [0-9.]+ errors 0
#! want ^engine 0 read_bw: done ops 200 bytes 3276800 .* errors 0
#! want ^engine 0 send_bw: done ops 1000 bytes 4096000 .* errors 0
#! want ^engine 1 send_bw: done ops 1000 bytes 4096000 .* errors 0
#! want ^engine 1 send_bw: done ops 50 bytes 51200 .* errors 0
#! want ^engine 0 send_bw: done ops 50 bytes 53200 .* errors 0
#! want ^engine 1 pingpong: done ops 200 bytes 12800 .* errors 0 rtt_us min [0-9.]+ avg [0-9.]+ max [0-9.]+
#! want ^engine 0 atomic: done ops 500 bytes 4000 .* errors 0
#! want ^mr 1 u64 at 0: 1500 \(0x5dc\)
#! want ^mr 1: 65536 bytes at offset 0 match
#! want ^engine 0 write_bw: [0-9.]+ MB/s [0-9.]+ Mops \(\d+ ops\)
#! want ^engine 0 write_bw: done ops \d+ bytes \d+ secs 2\.\d+
#! want ^engine type atomic: qp=QP
#! want ^error: unknown engine 'warp'
#! want ^error: qp 2 is RESET, not RTS: connect it first
#! want ^error: engine 0 already runs on qp 0
#! want ^error: send_bw needs an MR of at least 2 \* \(size \+ 40\) bytes
#! want ^error: write_bw needs the peer's buffer
#! want ^error: no engine 7
#! want ^engine 0 write_bw: stopped ops [1-9]\d* bytes
#! want ^cq 0: empty
#! count 2 ^error: engine 0 \(write_bw\) uses it: engine stop 0 first
#! want ^error: no such mr 9
#! want ^cmdfile .*: \d+ commands, 0 unexpected results
pd create dev=0
pd create dev=1
mr reg 0 1048576 access=local_write,remote_write,remote_read,remote_atomic
mr reg 1 1048576 access=local_write,remote_write,remote_read,remote_atomic
cq create 512 dev=0
cq create 512 dev=1
qp create 0 rc cq=0 sq=128 rq=128
qp create 1 rc cq=1 sq=128 rq=128
qp connect 0 peer=1 rmr=1
qp connect 1 peer=0 rmr=0
mr fill 0 pattern=inc seed=5 len=65536
engine start write_bw qp=0 mr=0 size=65536 count=300
engine wait 0
mr cmp 0 1 len=65536
engine start read_bw qp=0 mr=0 size=16384 count=200 depth=8
engine wait 0
engine start send_bw qp=1 mr=1 role=server size=4096 count=1000 depth=64
engine start send_bw qp=0 mr=0 size=4096 count=1000
engine wait 1
engine wait 0
engine start pingpong qp=1 mr=1 role=server count=200
engine start pingpong qp=0 mr=0 count=200
engine wait 1
engine wait 0
# UD: fewer messages than the receiver's posted receives (UD drops
# what finds no receive); a UD receive counts the 40-byte GRH too
qp create 0 ud cq=0
qp create 1 ud cq=1
qp connect 2 peer=3
qp connect 3 peer=2
engine start send_bw qp=3 mr=1 role=server size=1024 count=50 depth=64
engine start send_bw qp=2 mr=0 size=1024 count=50
engine wait 1
engine wait 0
qp destroy 2
qp destroy 3
mr u64 1 off=0 set=1000
engine start atomic qp=0 mr=0 count=500
engine wait 0
mr u64 1 off=0 expect=1500
engine start write_bw qp=0 mr=0 size=4096 secs=2 live=1
expect error
engine start read_bw qp=0 mr=0
engine wait 0 timeout=20
engine show
mr fill 0 pattern=0x66 len=65536
engine start write_bw qp=0 mr=0 count=1000000
sleep 300
expect error
qp destroy 0
expect error
mr dereg 0
engine stop 0
engine wait 0
mr check 1 len=65536 pattern=0x66
poll 0 n=0
qp create 0 rc cq=0
expect error
engine start warp qp=0 mr=0
expect error
engine start write_bw qp=2 mr=0
qp create 1 rc cq=1
qp connect 2 peer=3
qp connect 3 peer=2
expect error
engine start write_bw qp=2 mr=0
expect error
engine start send_bw qp=0 mr=0 size=1048576
expect error
engine start write_bw qp=1 mr=1 rmr=9
expect error
engine wait 7
expect error
engine stop 7
expect error
engine frob
