# PDs and MRs: create, show, the buffer tools, destroy; refusals.
#! want ^pd 0 created \(dev 0\)
#! want ^pd 1 created \(dev 1\)
#! want ^pd 0: dev 0 handle
#! want ^mr 0: pd 0 lkey 0x[0-9a-f]{8} rkey 0x[0-9a-f]{8} addr 0x[0-9a-f]+ len 4096 access local_write,remote_write,remote_read,remote_atomic,mw_bind$
#! want ^mr 1: pd 1 .* len 100 access local_write$
#! want ^mr 0: 256 bytes at offset 16 match
#! want ^00000010: 10 11 12 13 14 15 16 17 18 19 1a 1b 1c 1d 1e 1f$
#! want ^00000020: 20 21 22 23$
#! want ^mr 0 and mr 1: 50 bytes equal
#! want ^error: mr 0: mismatch at offset 20: 0x14, expected 0xee
#! want ^error: mr 0 and mr 1 differ at \+0: 0x00 != 0x10
#! want ^mr 0 u64 at 8: 12345 \(0x3039\)
#! want ^error: expected 1
#! want ^error: droce_dealloc_pd: Device or resource busy \(MRs, MWs or QPs still use it\)
#! want ^error: droce_reg_mr: Invalid argument
#! want ^error: SIZE 268435457 is too large \(at most 268435456\)
#! want ^error: SIZE must be at least 1
#! want ^error: no such pd 5
#! want ^error: unknown access flag 'remote_everything'
#! want ^error: range 4000\+100 is outside the MR \(4096 bytes\)
#! want ^error: offset 5000 is outside the MR \(4096 bytes\)
#! want ^error: offset 4092 \+ 8 is outside the MR \(4096 bytes\)
#! want ^error: bad number 'zz' for pattern
#! want ^error: unknown option 'colour' for this command
#! want ^mr 1 deregistered
#! want ^pd 1 destroyed
#! want ^cmdfile .*: \d+ commands, 0 unexpected results
pd create
pd create dev=1
pd show
mr reg 0 4096 access=local_write,remote_write,remote_read,remote_atomic,mw_bind
mr reg 1 100
mr show
mr show 0
mr fill 0 pattern=inc seed=16 off=16 len=256
mr check 0 pattern=inc seed=16 off=16 len=256
mr dump 0 off=16 len=20
expect error
mr check 0 pattern=0xee off=20 len=4
mr fill 1 pattern=inc seed=16 len=50
mr cmp 0 1 off=16 len=50
expect error
mr cmp 0 1 len=50
mr u64 0 off=8 set=12345 expect=12345
expect error
mr u64 0 off=8 expect=1
expect error
pd destroy 0
expect error
mr reg 0 4096 access=remote_write
expect error
mr reg 0 268435457
expect error
mr reg 0 0
expect error
mr reg 5 100
expect error
mr reg 0 100 access=remote_everything
expect error
mr fill 0 pattern=1 off=4000 len=100
expect error
mr dump 0 off=5000
expect error
mr u64 0 off=4092
expect error
mr fill 0 pattern=zz
expect error
mr show 0 colour=blue
expect error
mr dereg 7
mr dereg 1
pd destroy 1
expect error
pd destroy 1
