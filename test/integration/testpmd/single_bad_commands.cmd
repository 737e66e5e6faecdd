# Bad input of every kind gets a clear message and nothing breaks: the
# last commands still work.
#! want ^error: unknown command 'frobnicate' \(help lists the commands\)
#! want ^error: pd nothing: unknown command; pd commands:
#! want ^error: qp \(nothing\): unknown command; qp commands:
#! want ^error: bad number '0x' for SIZE
#! want ^error: bad number '-5' for SIZE
#! want ^error: bad number '12abc' for SIZE
#! want ^error: bad number '99999999999999999999999' for SIZE
#! want ^error: missing SIZE
#! want ^error: missing pd handle|^error: bad number 'x' for pd
#! want ^error: no such mr 63
#! want ^error: bad number '64' for mr|^error: no such mr 64
#! want ^error: option len given twice
#! want ^error: a line starts with a command, not an option
#! want ^error: too many words
#! want ^error: line too long
#! want ^error: unknown OP 'teleport'
#! want ^error: missing OP
#! want ^error: this work request needs mr=MR
#! want ^error: local range 65000\+1000 is outside the MR \(65536 bytes\)
#! want ^error: droce_post_send send \(0 of 1 posted\): Invalid argument
#! want ^error: no remote buffer
#! want ^error: unknown completion status 'GREAT'
#! want ^error: cq 0: 0 of 1 completions in 50 ms
#! want ^error: sync needs a peer
#! want ^error: qp exchange QP listen \| qp exchange QP connect HOST
#! want ^error: count 5000 is too large \(at most 4096\)
#! want ^error: droce_post_recv \(\d+ of 100 posted\): Cannot allocate memory
#! want ^error: unknown option 'bogus' for this command
#! want ^error: droce_create_cq: Invalid argument|^error: DEPTH 0 is too large
#! want ^wc cq=0 wr_id=1 status=SUCCESS
#! want ^cmdfile .*: 4\d commands, 0 unexpected results
pd create dev=0
pd create dev=1
mr reg 0 65536 access=local_write,remote_write,remote_read
mr reg 1 65536 access=local_write,remote_write,remote_read
cq create 64 dev=0
cq create 64 dev=1
qp create 0 rc cq=0 rq=16
qp create 1 rc cq=1
expect error
frobnicate
expect error
pd nothing
expect error
qp
expect error
mr reg 0 0x
expect error
mr reg 0 -5
expect error
mr reg 0 12abc
expect error
mr reg 0 99999999999999999999999
expect error
mr reg 0
expect error
mr reg x 10
expect error
mr dereg 63
expect error
mr show 64
expect error
mr fill 0 pattern=1 len=1 len=2
expect error
len=5
expect error
echo 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50
expect error
echo yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy
expect error
post 0 teleport
expect error
post 0
expect error
post 0 send len=10
expect error
post 0 write mr=0 off=65000 len=1000
expect error
post 0 send mr=0 len=10
expect error
post 0 write mr=0 len=10
qp connect 0 peer=1 rmr=1
qp connect 1 peer=0
expect error
poll 0 status=GREAT
expect error
poll 0 timeout=50
expect error
sync
expect error
qp exchange 0 teleport
expect error
post 1 recv mr=1 len=10 count=5000
expect error
post 0 recv mr=0 len=10 count=100
expect error
cq show bogus=1
expect error
cq create 0
# still alive: a write works
post 0 write mr=0 len=100
poll 0 status=SUCCESS
