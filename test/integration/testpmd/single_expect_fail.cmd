# The script's own verdict: a command that fails without "expect error",
# one that succeeds despite it, and a malformed expect line make the exit
# status 1, each with an UNEXPECTED (or error) line naming the script line.
#! exit 1
#! want single_expect_fail\.cmd:10: UNEXPECTED: the command failed \(expected ok\)
#! want single_expect_fail\.cmd:12: UNEXPECTED: the command succeeded \(expected error\)
#! want single_expect_fail\.cmd:13: error: expect ok \| expect error
#! want ^cmdfile .*: 3 commands, 3 unexpected results
#! count 2 UNEXPECTED
mr reg 7 100
expect error
pd create
expect maybe
expect ok
pd show
