# --stop-on-error: the script stops at the first unexpected result.
#! args --stop-on-error
#! exit 1
#! want UNEXPECTED: the command failed
#! want-not ^pd 0 created
#! want ^cmdfile .*: 1 commands, 1 unexpected results
mr reg 7 100
pd create
