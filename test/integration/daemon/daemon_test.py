#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Applications on droced (app/droced), over net_memif to an in-process
peer (daemon_app peer), each case with its own droced, peer and tmp dir.
The applications are plain processes on queue regions (the default) but
the applications of SHARED_APPS (below, each with why) and those
persist_cross pins, which are droced's DPDK secondaries
(DROCE_QUEUES=shared):

  traffic        two applications at once (one given the daemon by
                 DROCE_DAEMON, one by its INI file's [droce] daemon =), each
                 WRITE / READ back / SEND-echo rounds with bytes compared;
                 droced --ctl list shows each with exactly its objects while
                 they run, none after (every case checks telemetry's
                 /droced/apps against the list)
  forge          B names A's PD, CQ, QP, MR, buffer and lkey, passes a
                 pipe as a channel's and as its events' fd (EINVAL), names
                 a handle not its own as a CQ's channel (ENOENT) (daemon_app
                 forge checks each exact refusal); A's traffic goes on
  crash          the peer WRITEs and READs A's buffer in a loop (READs
                 checked against a shadow); A is SIGKILLed; the peer's first
                 failed completion must be REM_ACCESS_ERR (a NAK, not a
                 timeout), after droced saw the EOF; no round posted after
                 droced's revocation (the processes' CLOCK_MONOTONIC) succeeds,
                 and nothing succeeds after the first failure; droced reaps A
                 to the baseline (list and its log line)
  crash_paced    the same, but once A's socket closed the peer's rounds are
                 20 ms apart, so that none is in flight when droced reaps A:
                 its next access must still be NAKed (A's QPs linger after
                 the revocation), not dropped by a QP that is gone
  kill_in_verb   an application creating and destroying objects in a loop
                 is SIGKILLed KILLS times; droced reaps it and serves B
  own            an application registers its own malloc'd memory (not
                 page aligned; the rest of the block on the same pages must
                 survive the move byte for byte) and a second MR over part of
                 the first's pages and new ones; the peer WRITEs through the
                 second and READs back through the first (bytes compared in
                 the peer and in the application), then WRITE / READ /
                 SEND-echo rounds from the first; droce_persist_mr of the
                 second is EFAULT (its pages on two memfds: no one file droced could
                 keep for a reattach); shared
                 file mappings, shared anonymous memory and the stack are
                 refused (EOPNOTSUPP); a MAP_PRIVATE file mapping and a
                 static buffer (.data) are registered with their bytes
                 kept, the file unchanged by a later write; nine pieces
                 (E2BIG), eight registered under an iova (a WRITE from
                 iova + k sends the bytes at addr + k); droced --ctl list counts exactly
                 the mapped bytes, droced maps exactly the 11 pieces; after
                 a SIGKILL droced has unmapped them all, its list is empty
  channel        a completion channel: the application blocks in read(2)
                 (droce_get_cq_event) and in poll(2) on its fd and wakes on
                 the peer's echo; armed solicited-only, an unsolicited echo
                 gives no event, a solicited one exactly one; both acked,
                 everything destroyed; droced's copy of the channel's
                 eventfd closed
  channel_kill   the same application SIGKILLed with its last event
                 unacked: reaped (0 objects left), droced's copy of its
                 eventfd (held while it ran) closed
  async          the peer WRITEs to A's QP with a wrong rkey: A blocks in
                 poll(2) on its async_fd and gets exactly one event,
                 QP_ACCESS_ERR naming its QP (its QP in ERR), acks it,
                 destroys everything; B0 and B1 on the same droced (started
                 before and after A; traffic, their own events open) get
                 none; droced's copy of A's async_fd closed
  async_kill     the same A SIGKILLed with the event unacked: reaped (0
                 objects left), droced's copy of its async_fd closed
  daemon_killed  droced is SIGKILLed under two idle applications: their
                 next control verbs fail with ENOTCONN, posting and polling
                 do not crash (post 0: room in the ring, poll 0); the next
                 droced removes the dead one's hugepage files and runtime
                 directory; a droced that fails to start leaves none
  persist        A marks its buffer persistent, the peer WRITEs and READs it
                 (shadow); A is SIGKILLed: droced keeps the region (log, list,
                 telemetry) and exactly AFTER more rounds all succeed; B
                 attaches it (same addr, len, keys; B owns it, the objects
                 stay droced's), finds exactly the last
                 WRITE's bytes; the peer hammers again and B releases: the
                 peer's first failure is REM_ACCESS_ERR, nothing succeeds
                 after it; baseline after
  persist_lease  A's region has a lease of LEASE_MS (renewed once); A is
                 SIGKILLed; the peer's first failure is REM_ACCESS_ERR, not
                 before the deadline and within one lease tick (plus
                 EXPIRY_SLACK_MS: the engine's lcore and the peer share a
                 loaded machine's cores) after it; nothing succeeds after;
                 baseline after; B's attach of the name then ETIME
  persist_ctl    B may not attach or release A's live region (EBUSY), unknown
                 names are ENOENT, B's own MR's rules (EEXIST, ENAMETOOLONG,
                 EINVAL, EBUSY; dereg ends the persistence; a release while
                 the maker lives revokes the key and leaves it the rest, its
                 dereg then frees the proxy; a lease's expiry leaves it the
                 expired MR: its event, renew and set ETIME, query expired,
                 attach ETIME before and after its dereg, ENOENT once the
                 name was persistent and released again); in process the
                 verbs are EOPNOTSUPP; A is SIGKILLed; C attaches (the owner
                 again) and is SIGKILLed: the region persists again;
                 droced --ctl release
                 ends the region under the peer's hammer (REM_ACCESS_ERR, no
                 success after), a second release is refused; baseline
                 after; D's region kept at D's SIGKILL is released by E's
                 dereg after E attached it (the peer: REM_ACCESS_ERR); F's by
                 droced's own exit (SIGTERM: exit 0, its log line)

  persist_cross  A, a plain process (--droce-queues=region), persists its
                 own pages and is SIGKILLed; B, a secondary, attaches the
                 region (the last WRITE's bytes; its mapping droced's memfd)
                 and releases it (the peer: REM_ACCESS_ERR, nothing after);
                 C, a secondary, persists a droce_alloc_buf buffer and is
                 SIGKILLed; D, a plain process, cannot attach it (EFAULT:
                 droced's hugepages are not its to map), the region stays
                 kept until droced --ctl release

  mw             A binds a type-1 window (droce_bind_mw) and a type-2 one
                 (a BIND_MW work request) on its MR; the peer WRITEs through
                 each (bytes compared), its SEND_WITH_INV of the type-2 one
                 arrives with that rkey and the next WRITE through it is
                 REM_ACCESS_ERR; --ctl list counts A's 2 windows; B's
                 dealloc of A's window is ENOENT, B's BIND_MW of A's type-2
                 window, of its own onto A's MR and its unbind of A's type-1
                 window end in MW_BIND_ERR; A's windows and all freed
  mw_lease       A's windows as in mw; a 100 ms lease on its type-1 window,
                 set, queried and renewed through droced: MW_LEASE_EXPIRED
                 naming it reaches A no earlier than the deadline (100 ms
                 after the renewal was asked) and within one lease tick +
                 EXPIRY_SLACK_MS after it, the
                 peer's next WRITE through it is REM_ACCESS_ERR, the query
                 says expired, a renewal ETIME (and the query of the MR's
                 lease, none: 0 ms); all freed, droced's list empty
  persist_expire A's region (lease 10 s) kept at A's SIGKILL; B attaches it,
                 sets a lease of 500 ms, renews and queries it, gets
                 MR_LEASE_EXPIRED naming its MR; then renew and set ETIME,
                 query expired, attach ETIME, release ENOENT, dereg 0 (the
                 group released then), attach still ETIME; the peer's first
                 failure REM_ACCESS_ERR, no success after
  srq            A: an RC QP on an SRQ (limit armed at 6 of 8 receives, a
                 limit of 16 EINVAL, resized to 32; each queried: exact
                 values), three SENDs echoed by the peer received from the
                 SRQ (wr_ids, lengths, QP number, bytes), exactly one
                 SRQ_LIMIT_REACHED naming A's SRQ (its limit 0 after), an AH
                 and a UD QP whose SEND succeeds; --ctl list counts A's SRQ
                 and AH.  B names A's SRQ and AH: modify, query, create_qp
                 on it, destroy: ENOENT; post_srq_recv: EINVAL; destroy_ah:
                 ENOENT; a UD SEND with A's AH index, and with an index of
                 none, LOC_QP_OP_ERR, with B's own AH to A's UD QP (both on
                 the one droced) success.  A's SRQ unchanged; A's UD receive
                 of it: B's QP number, 40 + 64 bytes, the GRH slot's IPv4
                 source droced's address, the bytes; A's QP to ERR: QP_LAST_WQE_REACHED naming it;
                 A SIGKILLed: droced frees all of it (0 objects left), no
                 application left
  unsupported    what droced does not serve (rereg_mr, query_pkey) fails
                 with EOPNOTSUPP, the one answer
                 of a verb a provider lacks (daemon_app unsupported); nothing
                 of the application's left in droced afterwards
  evfree         an MR and a window whose leases ran out are freed with
                 their event queued (none left to take) and taken (the free
                 waits for its ack)
  persist_inv    A's persistent region has a type-2 window the peer was
                 given; A is SIGKILLed (droced keeps the region); exactly
                 MW_AFTER WRITEs through the window succeed, the peer's
                 SEND_WITH_INV of it releases the region (droced's log: its
                 last window invalidated by a peer, after the linger), the
                 next WRITE with the region's own key is REM_ACCESS_ERR;
                 no application and no region left
  many           MANY (70) applications at once (started four at a time), each a PD,
                 buffer, MR, CQ and QP (daemon_app hold): all ready, droced --ctl list (three
                 pages of LIST) shows exactly them, telemetry's /droced/apps
                 their first 32; all freed and gone after
  no_secondaries droced --no-secondaries (EAL --in-memory): no hugepage
                 file of its prefix; a plain process's traffic right and
                 listed; a secondary's droce_init EOPNOTSUPP, not listed
  max_apps       droced --max-apps=2 with two applications: a third's
                 droce_init fails EUSERS ("Too many users") and nothing of
                 it is listed; once one of the two is SIGKILLed and reaped
                 a fourth is served

With DROCE_QUEUES=shared in the environment the applications would be
droced's secondaries and a case asserts the same, but that --ctl list
counts their 64 KiB buffer as droced's buffer (buf) rather than the
application's own pages droced maps (mem) (shared, objs_64k), and that
an attached region is not mapped from a memfd.

Usage: daemon_test.py CASE DROCED DAEMON_APP.  Only processes this script
started are killed (by their Popen handle).  Needs hugepages: DPDK
multi-process cannot run with --no-huge (exit 77 when DROCE_NO_HUGE=1).
"""
import glob
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

RETRY_MS = 4.096e-3 * 2 ** 17	# the peer QP's local ACK timeout (timeout=17)
KILLS = 3
AFTER = 200			# the peer's rounds on a persistent region after its owner died
LEASE_MS = 3000			# persist_lease: its checks before the deadline take up to ~1 s on a loaded machine
LEASE_TICK_MS = 1.0		# DROCE_LEASE_TICK_US
TP_LINK_POLL_MS = 10		# lib/transport tp_event.c: the engine's look at the link
EXPIRY_SLACK_MS = 300		# the engine's and the peer's scheduling on a loaded 2-core VM
MW_LEASE_MS = 500		# daemon_app.c's: long enough for the set and the renewal to reach droced before it runs out
LINGER_US = 250000	# droced_table.h DROCED_LINGER_US
MW_AFTER = 100		# daemon_app.c: the peer's WRITEs through a window after the death
GIDS = ("198.18.20.1/24", "198.18.20.2/24")


class Proc:
    """A child whose output lines are collected by a thread."""

    def __init__(self, name, argv, stdin=None):
        self.name = name
        self.lines = []
        self.eof = False	# every line of its output collected
        self.cv = threading.Condition()
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  stdin=stdin, text=True, bufsize=1)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            with self.cv:
                self.lines.append(line.rstrip("\n"))
                self.cv.notify_all()
        with self.cv:
            self.eof = True
            self.cv.notify_all()

    def mark(self):
        """Where the next line will be: wait_line(..., since=mark()) skips the older."""
        with self.cv:
            return len(self.lines)

    def wait_line(self, pattern, timeout=30, since=0):
        rx = re.compile(pattern)
        end = time.monotonic() + timeout
        with self.cv:
            i = since
            while True:
                while i < len(self.lines):
                    m = rx.search(self.lines[i])
                    i += 1
                    if m:
                        return m
                left = end - time.monotonic()
                # its exit alone is not the end: the reader may have lines to add
                if left <= 0 or (self.eof and i == len(self.lines)):
                    fail(f"{self.name}: no line /{pattern}/ (exit {self.p.poll()})",
                         self)
                self.cv.wait(min(left, 0.2))

    def wait(self, timeout=60):
        """Its exit status once it exited and its output is all read (the
        reader thread may still hold its last lines when the process is
        gone: a check of output() right after would miss them)."""
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            fail(f"{self.name}: still running after {timeout} s", self)
        with self.cv:
            if not self.cv.wait_for(lambda: self.eof, timeout=10):
                fail(f"{self.name}: its output not closed 10 s after its exit", self)
        return rc

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()

    def output(self):
        with self.cv:
            return "\n".join(self.lines)


def fail(msg, proc=None):
    if proc is not None:
        print(f"--- {proc.name}:\n{proc.output()}")
    raise SystemExit(f"FAIL: {msg}")


class Setup:
    def __init__(self, droced, app):
        self.droced_bin, self.app = droced, app
        self.tmp = tempfile.mkdtemp(prefix="droce-dmn-")
        self.sock = f"{self.tmp}/d.sock"
        self.peer_sock = f"{self.tmp}/peer.sock"
        self.procs = []
        self.droced = None
        self.prefix = None
        self.droced_opts = []	# droced's options of the case (DROCED_OPTS)
        self.case = None

    def start_droced(self):
        memif = f"net_memif0,role=server,socket={self.tmp}/memif.sock,socket-abstract=no"
        self.droced = self.spawn("droced", [self.droced_bin, "-l", "0,1", "--no-pci",
                                            f"--vdev={memif}", "--",
                                            f"--droce-ipv4={GIDS[0]}",
                                            "--droce-transport-lcores=1",
                                            f"--socket={self.sock}", *self.droced_opts])
        self.prefix = self.droced.wait_line(r"droced: ready on .*, EAL file prefix (\S+)").group(1)

    def start(self):
        self.start_droced()
        memif = f"net_memif0,role=client,socket={self.tmp}/memif.sock,socket-abstract=no"
        self.peer = self.spawn("peer", [self.app, "-l", "0", "--no-pci", f"--vdev={memif}",
                                        "--", f"--droce-ipv4={GIDS[1]}", "peer",
                                        self.peer_sock])
        self.peer.wait_line(r"^peer: ready")
        self.wait_link_up()

    def telemetry(self, cmd):
        """One command on droced's telemetry socket: its JSON value."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as t:
            t.connect(f"{runtime_dir(self.prefix)}/dpdk_telemetry.v2")
            t.recv(4096)			# the greeting
            t.send(cmd.encode())
            return json.loads(t.recv(1 << 16))[cmd.split(",")[0]]

    def wait_link_up(self, timeout=10):
        """droced's port up before any application starts: its engine raises
        PORT_ACTIVE to every application connected when it sees the link
        come up (a poll every TP_LINK_POLL_MS), and a plain process starts
        in milliseconds, before memif's connection may be up."""
        end = time.monotonic() + timeout
        while self.telemetry("/ethdev/link_status,0").get("status") != "UP":
            if time.monotonic() > end:
                fail("droced's link not up", self.droced)
            time.sleep(0.01)
        time.sleep(5 * TP_LINK_POLL_MS / 1000)	# its engine's next poll has seen it

    def spawn(self, name, argv, stdin=None):
        p = Proc(name, argv, stdin)
        self.procs.append(p)
        return p

    def app_proc(self, name, *args, stdin=None, select="option", queues=None):
        """An application on droced, selected by --droce-daemon (option),
        DROCE_DAEMON (env) or the [droce] section of --droce-config (ini);
        queues: its --droce-queues (region: a plain process, shared:
        droced's secondary; None: as the environment says)."""
        opts = [f"--droce-daemon={self.sock}"]
        why = SHARED_APPS.get(self.case, {}).get(name)
        if why is not None:
            print(f"{name} as droced's secondary: {why}")
            os.environ["DROCE_QUEUES"] = "shared"
        if select == "env":
            os.environ["DROCE_DAEMON"] = self.sock
            opts = []
        elif select == "ini":
            with open(f"{self.tmp}/droce.ini", "w") as f:
                f.write(f"[droce]\ndaemon = {self.sock}\n")
            opts = [f"--droce-config={self.tmp}/droce.ini"]
        if queues is not None:
            opts.append(f"--droce-queues={queues}")
        try:
            return self.spawn(name, [self.app, "-l", "0", "--no-pci", "--", *opts, *args],
                              stdin)
        finally:
            os.environ.pop("DROCE_DAEMON", None)
            if why is not None:
                os.environ.pop("DROCE_QUEUES", None)

    def ctl_list(self):
        """droced --ctl list: ({pid: (pd, mr, cq, qp, buf, buf_bytes, mem, mem_bytes)},
        {name: (owner, bytes, key, addr, qp, lease_ms)}), remaining_us left
        out (it changes)."""
        out = subprocess.run([self.droced_bin, "--ctl", self.sock, "list"], text=True,
                             capture_output=True, timeout=10)
        if out.returncode != 0:
            fail(f"droced --ctl list: {out.stderr}")
        tables = []
        for head, row, conv in (
                (r"applications: (\d+)", r"pid (\d+): pd (\d+) mr (\d+) cq (\d+) qp (\d+) "
                 r"buf (\d+) buf_bytes (\d+) mem (\d+) mem_bytes (\d+)", (int,) * 8),
                (r"persistent regions: (\d+)", r"region (\S+): owner (\d+) bytes (\d+) key "
                 r"(0x[0-9a-f]+) addr (0x[0-9a-f]+) qp (\d+) lease_ms (\d+) remaining_us \d+",
                 (int, int, hex_int, hex_int, int, int))):
            n = int(re.search(head, out.stdout).group(1))
            rows = {}
            for m in re.finditer(row, out.stdout):
                key = int(m.group(1)) if m.group(1).isdigit() else m.group(1)
                rows[key] = tuple(f(x) for f, x in zip(conv, m.groups()[1:]))
            if len(rows) != n:
                fail(f"droced --ctl list: {out.stdout}")
            tables.append(rows)
        return tables

    def apps(self):
        return self.ctl_list()[0]

    def regions(self):
        return self.ctl_list()[1]

    def telemetry_regions(self):
        """/droced/persistent, as regions() gives it."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as t:
            t.connect(f"{runtime_dir(self.prefix)}/dpdk_telemetry.v2")
            t.recv(4096)
            t.send(b"/droced/persistent")
            regs = json.loads(t.recv(1 << 16))["/droced/persistent"]
        return {name: (v["owner"], v["bytes"], v["key"], v["qp"], v["lease_ms"])
                for name, v in regs.items()}

    def expect_regions(self, want, what):
        """want: {name: (owner, bytes, key, addr, qp, lease_ms)}, list and telemetry."""
        got = self.regions()
        tel = self.telemetry_regions()
        tel_want = {n: (o, b, k, q, l) for n, (o, b, k, a, q, l) in want.items()}
        print(f"{what}: persistent regions: {got}, telemetry /droced/persistent the same: "
              f"{tel == tel_want}")
        if got != want or tel != tel_want:
            fail(f"{what}: regions {got} (telemetry {tel}), expected {want}", self.droced)

    def wait_apps(self, want, timeout=10):
        end = time.monotonic() + timeout
        while True:
            got = self.apps()
            if got == want or time.monotonic() > end:
                return got
            time.sleep(0.05)

    def telemetry_apps(self):
        """/droced/apps from droced's telemetry socket, as apps() gives it."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as t:
            t.connect(f"{runtime_dir(self.prefix)}/dpdk_telemetry.v2")
            t.recv(4096)			# the greeting
            t.send(b"/droced/apps")
            apps = json.loads(t.recv(1 << 16))["/droced/apps"]
        keys = ("pd", "mr", "cq", "qp", "buf", "buf_bytes", "mem", "mem_bytes")
        return {int(pid): tuple(v[k] for k in keys) for pid, v in apps.items()}

    def expect_apps(self, want, what):
        got = self.wait_apps(want)
        tel = self.telemetry_apps()
        print(f"{what}: droced --ctl list: {got}, telemetry /droced/apps the same: "
              f"{tel == got}")
        if got != want or tel != want:
            fail(f"{what}: applications {got} (telemetry {tel}), expected {want}",
                 self.droced)

    def cleanup(self):
        for p in reversed(self.procs):
            if p.p.poll() is None:
                p.p.kill() if p.name not in ("droced", "peer") else p.stop()
                p.p.wait()
        remove_leftovers(self.prefix)
        for f in glob.glob(f"{self.tmp}/*"):
            os.unlink(f)
        os.rmdir(self.tmp)


def hex_int(x):
    return int(x, 16)


def hugepage_files(prefix):
    files = []
    with open("/proc/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            if fstype == "hugetlbfs":
                files += glob.glob(f"{mnt}/{prefix}map_*")
    return files


def runtime_dir(prefix):
    """EAL's (lib/device device_runtime_base)."""
    if os.getuid() == 0:
        return f"/var/run/dpdk/{prefix}"
    return f"{os.environ.get('XDG_RUNTIME_DIR', '/tmp')}/dpdk/{prefix}"


def remove_leftovers(prefix):
    """What a droced killed by this script left (none after a clean exit)."""
    if prefix is None:
        return
    for f in hugepage_files(prefix):
        os.unlink(f)
    d = runtime_dir(prefix)
    if os.path.isdir(d):
        for f in os.listdir(d):
            os.unlink(f"{d}/{f}")
        os.rmdir(d)


def wait_file(path, proc, timeout=30):
    """The handle file an application writes once it is set up."""
    end = time.monotonic() + timeout
    while not os.path.exists(path):
        if proc.p.poll() is not None or time.monotonic() > end:
            fail(f"{proc.name}: no {path}", proc)
        time.sleep(0.02)


def shared():
    """The case's applications are droced's secondaries (DROCE_QUEUES=shared:
    SHARED_APPS), not plain processes on queue regions (the default: no EAL,
    lib/verbs provider_dq): the one place a case's mode is read."""
    return os.environ.get("DROCE_QUEUES") == "shared"


def objs_64k():
    """pd mr cq qp buf buf_bytes mem mem_bytes of a daemon_app: its 64 KiB
    droce_alloc_buf buffer is droced's memory for a secondary (buf), its own
    pages on a queue region (mem)."""
    return (1, 1, 1, 1, 1, 65536, 0, 0) if shared() else (1, 1, 1, 1, 0, 0, 1, 65536)


def buf_bytes():
    """The buffer bytes droced frees at a daemon_app's reap (objs_64k)."""
    return 65536 if shared() else 0


def finish_traffic(s, procs, note):
    """Stop traffic applications (their last rounds, checked) and reap them."""
    open(f"{s.tmp}/stop", "w").close()
    for p in procs:
        m = p.wait_line(r"traffic: (\d+) rounds ok", 120)
        if p.wait() != 0:
            fail("traffic failed", p)
        print(f"{p.name}: {m.group(0)} ({note})")
    s.expect_apps({}, "after")


def case_traffic(s):
    s.expect_apps({}, "baseline")
    # the two other ways to name the daemon (the rest of the cases: the option)
    a = [s.app_proc(f"app{i}", "traffic", s.peer_sock, "200", f"{s.tmp}/h{i}",
                    f"{s.tmp}/stop", select=how) for i, how in enumerate(("env", "ini"))]
    for i in range(2):
        wait_file(f"{s.tmp}/h{i}", a[i])
    s.expect_apps({a[0].p.pid: objs_64k(), a[1].p.pid: objs_64k()}, "both running")
    finish_traffic(s, a, "at once with the other")


def case_forge(s):
    s.expect_apps({}, "baseline")
    a = s.app_proc("A", "traffic", s.peer_sock, "200", f"{s.tmp}/hA", f"{s.tmp}/stop")
    wait_file(f"{s.tmp}/hA", a)
    b = s.app_proc("B", "forge", s.peer_sock, f"{s.tmp}/hA")
    rc = b.wait()
    print(b.output())
    if rc != 0:
        fail(f"forge exited {rc}")
    if a.p.poll() is not None:
        fail("A died during the forgery", a)
    finish_traffic(s, [a], "B's attempts during them")


def case_crash(s, paced=False):
    s.expect_apps({}, "baseline")
    a = s.app_proc("A", "target", s.peer_sock, "65536", *(["paced"] if paced else []))
    a.wait_line(r"^target: ready")
    s.peer.wait_line(r"^peer: hammer running")
    s.expect_apps({a.p.pid: objs_64k()}, "A registered, the peer hammering")
    t_kill = time.clock_gettime(time.CLOCK_MONOTONIC) * 1000
    a.p.kill()
    m = s.peer.wait_line(r"peer: first failure (.*) \((\d+)\) at (\d+) us, after (\d+) good")
    g = s.peer.wait_line(r"peer: the last good round was posted at (\d+) us")
    r = s.droced.wait_line(rf"droced: pid {a.p.pid} gone: (.*) \(seen at (\d+) us\)")
    rv = re.match(r"\d+ MRs revoked in (\d+) us", r.group(1))
    if rv is None:
        fail(f"droced's reap line: {r.group(0)}", s.droced)
    t_fail, t_seen = int(m.group(3)) / 1000, int(r.group(2)) / 1000
    t_revoked = t_seen + int(rv.group(1)) / 1000
    t_good = int(g.group(1)) / 1000
    after_ms = t_fail - t_kill
    print(f"crash: the peer's first failure: {m.group(1)}, {after_ms:.2f} ms after the "
          f"SIGKILL (the peer's retry timeout: {RETRY_MS:.1f} ms), after {m.group(4)} good "
          f"WRITE+READ rounds; droced saw the EOF {t_seen - t_kill:.2f} ms after the kill "
          f"(the kernel's exit of the process), the failure came "
          f"{t_fail - t_seen:.2f} ms after that")
    print(f"crash: droced: {r.group(0)}")
    print(f"lifetime: daemon REM_ACCESS_ERR {after_ms:.1f}" if m.group(1) ==
          "remote access error" else f"lifetime: daemon {m.group(1)} {after_ms:.1f}")
    if m.group(1) != "remote access error":
        fail(f"first failure {m.group(1)}, expected remote access error", s.peer)
    # The design's bounds, whatever the scheduler does: the failure is seen
    # after droced saw the death, and a round posted once droced's revocation
    # was done never succeeds (how long the peer then takes to post and poll
    # is its scheduling, not droce's).
    if t_fail < t_seen:
        fail(f"first failure {t_seen - t_fail:.2f} ms before droced saw the death")
    if t_good >= t_revoked:
        fail(f"a round posted {t_good - t_revoked:.2f} ms after droced's revocation "
             f"succeeded")
    n = s.peer.wait_line(r"peer: successes after the failure: (\d+)")
    print(f"crash: {n.group(0)}")
    if n.group(1) != "0":
        fail("a WRITE or READ succeeded after the revocation")
    lingered(s, r.group(1), rf"1 MRs revoked in \d+ us, 1 QPs, {buf_bytes()} buffer bytes")
    s.expect_apps({}, "after the kill")


def lingered(s, got, head):
    """A dead application's reap line (less its "(seen at"): head, then its QPs
    freed no earlier than LINGER_US after its keys (droced_table.h)."""
    m = re.fullmatch(head + r" freed (\d+) us later, 0 objects left", got)
    if m is None or int(m.group(1)) < LINGER_US:
        fail(f"droced's reclaim: {got}", s.droced)


def case_kill_in_verb(s):
    s.expect_apps({}, "baseline")
    rnd = random.Random(os.getpid())
    for k in range(KILLS):
        c = s.app_proc(f"churn{k}", "churn")
        c.wait_line(r"^churn: running")
        delay = rnd.uniform(0.05, 0.3)
        time.sleep(delay)
        c.p.kill()
        r = s.droced.wait_line(rf"droced: pid {c.p.pid} gone: (.*)")
        print(f"kill_in_verb: killed {delay * 1000:.0f} ms into its create/destroy loop; "
              f"{r.group(0)}")
        if " 0 objects left " not in r.group(1):
            fail("objects left behind", s.droced)
        if s.droced.p.poll() is not None:
            fail("droced died", s.droced)
        s.expect_apps({}, f"after kill {k + 1}")
    b = s.app_proc("B", "traffic", s.peer_sock, "200")
    m = b.wait_line(r"traffic: 200 rounds ok", 60)
    if b.wait() != 0:
        fail("B failed", b)
    print(f"B: {m.group(0)}")
    s.expect_apps({}, "after B")


def droced_memfd_maps(s):
    """droced's mappings of applications' pages (memfds named droce-mr)."""
    with open(f"/proc/{s.droced.p.pid}/maps") as f:
        return sum("/memfd:droce-mr" in line for line in f)


def case_own(s):
    s.expect_apps({}, "baseline")
    a = s.app_proc("A", "own", s.peer_sock)
    m = a.wait_line(r"^own: (ready|WRONG), mem_bytes (\d+)")
    print(a.output())
    if m.group(1) != "ready":
        fail("own memory", a)
    if not re.search(r"^own: persist of an MR on its own memory: Bad address$", a.output(),
                     re.M):
        fail("droce_persist_mr of an MR on the application's own memory not EFAULT", a)
    s.peer.wait_line(r"peer: WRITE and READ back of the application's memory: same bytes")
    s.expect_apps({a.p.pid: (1, 3, 1, 1, 0, 0, 3, int(m.group(2)))}, "A's three MRs")
    n = droced_memfd_maps(s)
    print(f"own: droced maps {n} pieces of A's pages")
    if n != 11:
        fail(f"droced maps {n} pieces of A's pages, not 11 (1 + 2 + 8)")
    a.p.kill()
    r = s.droced.wait_line(rf"droced: pid {a.p.pid} gone: (.*) \(seen at")
    print(f"own: {r.group(0)}")
    lingered(s, r.group(1), r"3 MRs revoked in \d+ us, 1 QPs, 0 buffer bytes")
    s.expect_apps({}, "after the kill")
    n = droced_memfd_maps(s)
    print(f"own: after the kill droced maps {n} pieces")
    if n != 0:
        fail(f"droced still maps {n} pieces of the dead application's pages")


def case_daemon_killed(s):
    a = [s.app_proc(f"app{i}", "idle", s.peer_sock, stdin=subprocess.PIPE)
         for i in range(2)]
    for p in a:
        p.wait_line(r"^idle: ready")
    s.expect_apps({a[0].p.pid: objs_64k(), a[1].p.pid: objs_64k()}, "both ready")
    s.droced.p.kill()
    s.droced.p.wait()
    for p in a:
        p.p.stdin.write("go\n")
        p.p.stdin.flush()
    for p in a:
        m = p.wait_line(r"idle: post_send (.*)")
        rc = p.wait()
        print(f"{p.name} after the daemon's SIGKILL: {m.group(0)} (exit {rc})")
        want = ("0, poll_cq 0, alloc_pd Transport endpoint is not connected, create_cq "
                "Transport endpoint is not connected, destroy_qp Transport endpoint is "
                "not connected")
        if m.group(1) != want or rc != 0:
            fail(f"expected: idle: post_send {want}", p)
    dead = s.prefix
    left = hugepage_files(dead)
    print(f"daemon_killed: the killed droced left {len(left)} hugepage files")
    os.unlink(f"{s.tmp}/memif.sock")	# net_memif's server socket, not droced's
    s.start_droced()
    gone = not hugepage_files(dead) and not os.path.exists(runtime_dir(dead))
    print(f"daemon_killed: the next droced removed them and its runtime directory: {gone}")
    if not gone:
        remove_leftovers(dead)
        fail("the next droced left the dead one's files")
    s.expect_apps({}, "the next droced")
    # a droced that cannot start (no transport lcore) leaves nothing either
    bad = subprocess.run([s.droced_bin, "-l", "0", "--no-pci",
                          f"--vdev=net_memif1,role=server,socket={s.tmp}/memif1.sock,"
                          "socket-abstract=no", "--", f"--droce-ipv4={GIDS[0]}",
                          f"--socket={s.tmp}/bad.sock"], capture_output=True, text=True,
                         timeout=60)
    # its prefix, from EAL's "Multi-process socket .../droced-<pid>/mp_socket"
    m = re.search(r"/(droced-\d+)/mp_socket", bad.stdout + bad.stderr)
    if m is None:
        fail(f"no EAL prefix in droced's output: {bad.stdout}{bad.stderr}")
    dead = m.group(1)
    files = hugepage_files(dead) + ([runtime_dir(dead)] if os.path.exists(runtime_dir(dead))
                                   else [])
    print(f"daemon_killed: droced without a transport lcore: exit {bad.returncode}, "
          f"{len(files)} files of {dead} left")
    if bad.returncode != 1 or "needs --droce-transport-lcores" not in bad.stderr or files:
        remove_leftovers(dead)
        fail(f"a failed start: exit {bad.returncode}, left {files}: {bad.stderr}")


def persist_owner(s, proc, name, lease_ms, mode, queues=None):
    """proc on droced with its buffer persistent as name, the peer hammering it:
    (proc, its region's (addr, len, key), its lease's (earliest, latest) deadline
    in ms)."""
    since = s.peer.mark()
    a = s.app_proc(proc, "persist", s.peer_sock, name, str(lease_ms), mode, str(AFTER),
                   queues=queues)
    r = a.wait_line(r"^persist: ready addr (0x[0-9a-f]+) len (\d+) lkey (0x[0-9a-f]+) "
                    r"rkey (0x[0-9a-f]+)")
    s.peer.wait_line(r"^peer: hammer running", since=since)
    region = (int(r.group(1), 16), int(r.group(2)), int(r.group(3), 16))
    if r.group(3) != r.group(4):
        fail(f"lkey {r.group(3)} != rkey {r.group(4)}", a)
    deadline = None
    if lease_ms:
        t = a.wait_line(r"^persist: renewed between (\d+) and (\d+) us")
        deadline = (int(t.group(1)) / 1000 + lease_ms, int(t.group(2)) / 1000 + lease_ms)
    return a, region, deadline


def kill_owner(s, a, name):
    """SIGKILL A; droced keeps name's region and reaps the rest of A."""
    a.p.kill()
    kept = s.droced.wait_line(rf"droced: pid {a.p.pid} gone: region {name} kept: (.*)")
    gone = s.droced.wait_line(rf"droced: pid {a.p.pid} gone: (\d+ MRs.*)")
    print(f"{a.name} killed: droced: {kept.group(0)}; the rest: {gone.group(1)}")
    if not re.fullmatch(r"1 QPs, 65536 buffer bytes, key 0x[0-9a-f]+", kept.group(1)) or \
            not re.fullmatch(r"0 MRs revoked in \d+ us, 0 QPs, 0 buffer bytes freed \d+ us "
                             r"later, 0 objects left \(seen at \d+ us\)", gone.group(1)):
        fail("droced's reap of a persistent region's owner", s.droced)


def expect_released(s, name, why):
    r = s.droced.wait_line(rf"droced: region {name} released \({why}\): (.*)")
    print(f"droced: {r.group(0)}")
    m = re.fullmatch(r"1 MRs revoked in \d+ us, 1 QPs, 65536 buffer bytes freed (\d+) us "
                     r"later, 0 objects left \(seen at \d+ us\)", r.group(1))
    if m is None or int(m.group(1)) < LINGER_US:
        fail("droced's release", s.droced)


def resume_peer(s):
    """The peer, idle since its AFTER rounds, hammers the region again."""
    open(f"{s.peer_sock}.resume", "w").close()
    s.peer.wait_line(r"^peer: persist: hammering again")


def revoked_at_peer(s, what, since=0):
    """The release while the peer hammers: its first failure REM_ACCESS_ERR
    (the key is revoked before the QP goes), nothing succeeds after it."""
    m = s.peer.wait_line(r"peer: first failure (.*) \((\d+)\) at (\d+) us, after (\d+) good",
                         since=since)
    n = s.peer.wait_line(r"peer: successes after the failure: (\d+)", since=since)
    print(f"{what}: the peer's first failure: {m.group(1)}; {n.group(0)}")
    if m.group(1) != "remote access error" or n.group(1) != "0":
        fail(f"{what}: the peer's accesses", s.peer)
    return int(m.group(3)) / 1000


def peer_kept_writing(s):
    """Exactly AFTER rounds after the owner's death, all successful: the last pattern."""
    c = s.peer.wait_line(r"peer: persist: the owner's socket closed after (\d+)")
    m = s.peer.wait_line(r"peer: persist: (\d+ rounds after the owner's death.*|failure.*)",
                         60)
    print(f"{c.group(0)}; {m.group(0)}")
    r = re.fullmatch(rf"{AFTER} rounds after the owner's death, all ok, last pattern (\d+)",
                     m.group(1))
    if r is None:
        fail("the peer's WRITEs and READs after the owner's death", s.peer)
    return int(r.group(1))


def mapping_at(pid, addr):
    """The line of /proc/PID/maps that holds addr."""
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if lo <= addr < hi:
                return line.rstrip("\n")
    return "none"


def attach(s, name, region, last, mr, stdin=None, keep=(), queues=None, memfd=None):
    """An application attaching region: the same MR (addr, len, keys), the
    last WRITE's bytes in it, its owner now (its objects in its table);
    memfd: the region is its maker's own pages (None: the maker was a
    plain process as the environment says)."""
    addr, length, key = mr
    b = s.app_proc(name, "attach", region, str(last), *keep, stdin=stdin, queues=queues)
    r = b.wait_line(r"^attach: addr (0x[0-9a-f]+) len (\d+) lkey (0x[0-9a-f]+) "
                    r"rkey (0x[0-9a-f]+) pd (\S+)")
    got = (int(r.group(1), 16), int(r.group(2)), int(r.group(3), 16), int(r.group(4), 16))
    print(f"{name} attached: {r.group(0)}")
    if got != (addr, length, key, key) or r.group(5) != "null":
        fail(f"attached {got}, pd {r.group(5)}; the owner had {(addr, length, key, key)}", b)
    m = b.wait_line(r"^attach: the region holds the last WRITE and zeros after it: (\S+)")
    a = b.wait_line(r"^attach: attach again (.*)")
    print(f"{name}: {m.group(0)}; {a.group(0)}")
    if m.group(1) != "yes" or a.group(1) != "Device or resource busy":
        fail(f"{name}: the attached region", b)
    if memfd if memfd is not None else not shared():
        # the maker's own pages, mapped from the memfd droced passed: no
        # file another process could open by its name
        line = mapping_at(b.p.pid, addr)
        print(f"{name}: its mapping of the region: {line}")
        if not re.search(r" /memfd:droce-mr \(deleted\)$", line):
            fail(f"{name}: the region mapped from {line}", b)
    # the group stays droced's (b holds no handle of it but the MR's)
    s.expect_apps({b.p.pid: (0, 0, 0, 0, 0, 0, 0, 0)}, f"{name} attached")
    s.expect_regions({region: (b.p.pid, length, key, addr, 1, 0)}, f"{name} attached")
    return b


def case_persist(s):
    s.expect_apps({}, "baseline")
    s.expect_regions({}, "baseline")
    a, (addr, length, key), _ = persist_owner(s, "A", "pers", 0, "persist")
    s.expect_apps({a.p.pid: objs_64k()}, "A alive")
    s.expect_regions({"pers": (a.p.pid, length, key, addr, 1, 0)}, "A alive")
    kill_owner(s, a, "pers")
    last = peer_kept_writing(s)
    s.expect_apps({}, "A gone")
    s.expect_regions({"pers": (0, length, key, addr, 1, 0)}, "A gone")
    b = attach(s, "B", "pers", last, (addr, length, key), stdin=subprocess.PIPE)
    resume_peer(s)
    b.p.stdin.write("go\n")
    b.p.stdin.flush()
    rc = b.wait()
    print(b.output())
    if rc != 0 or "attach: release Success, release again No such file or directory, " \
            "dereg Success" not in b.output():
        fail("B's release", b)
    expect_released(s, "pers", "droce_release")
    revoked_at_peer(s, "persist: B's release")
    s.expect_apps({}, "after")
    s.expect_regions({}, "after")
    # droce-demo --lifetime: rounds ok after the kill, of how many; read back after attach
    print(f"lifetime: persistent {AFTER} {AFTER} yes")


def case_persist_lease(s):
    s.expect_apps({}, "baseline")
    s.expect_regions({}, "baseline")
    a, (addr, length, key), (early, late) = persist_owner(s, "A", "leased", LEASE_MS,
                                                          "hammer")
    s.expect_regions({"leased": (a.p.pid, length, key, addr, 1, LEASE_MS)}, "A alive")
    t_kill = time.clock_gettime(time.CLOCK_MONOTONIC) * 1000
    if t_kill >= early - 100:
        fail(f"A killed {t_kill - early:.0f} ms after its lease's deadline: too slow a start")
    kill_owner(s, a, "leased")
    s.expect_regions({"leased": (0, length, key, addr, 1, LEASE_MS)}, "A gone")
    m = s.peer.wait_line(r"peer: first failure (.*) \((\d+)\) at (\d+) us, after (\d+) good",
                         LEASE_MS / 1000 + 30)
    t_fail = int(m.group(3)) / 1000
    expect_released(s, "leased", "lease expired")
    print(f"persist_lease: the peer's first failure: {m.group(1)}, "
          f"{t_fail - late:.2f} ms after the lease's deadline (renewal between "
          f"{early - LEASE_MS:.1f} and {late - LEASE_MS:.1f} ms + {LEASE_MS} ms; bound: "
          f"{LEASE_TICK_MS} ms tick + {EXPIRY_SLACK_MS} ms scheduling), "
          f"{t_fail - t_kill:.1f} ms after the SIGKILL, after {m.group(4)} good rounds")
    status = "REM_ACCESS_ERR" if m.group(1) == "remote access error" else m.group(1)
    print(f"lifetime: persistent-lease {status.replace(' ', '_')} {t_fail - late:.2f}")
    if m.group(1) != "remote access error":
        fail(f"first failure {m.group(1)}, expected remote access error", s.peer)
    if t_fail < early:
        fail(f"revoked {early - t_fail:.2f} ms before the lease's deadline")
    if t_fail - late > LEASE_TICK_MS + EXPIRY_SLACK_MS:
        fail(f"revoked {t_fail - late:.2f} ms after the lease's deadline")
    n = s.peer.wait_line(r"peer: successes after the failure: (\d+)")
    print(f"persist_lease: {n.group(0)}")
    if n.group(1) != "0":
        fail("a WRITE or READ succeeded after the expiry")
    s.expect_apps({}, "after")
    s.expect_regions({}, "after")
    # its lease ended it: attach says so (the name's tombstone), not ENOENT
    b = s.app_proc("B", "attach", "leased", "-")
    rc = b.wait()
    m = b.wait_line(r"^attach: droce_attach_mr: (.*)")
    print(f"persist_lease: B's attach after the expiry: exit {rc}: {m.group(0)}")
    if rc != 1 or m.group(1) != "Timer expired":
        fail("attach of a region its lease released", b)


def ctl_release(s, name):
    out = subprocess.run([s.droced_bin, "--ctl", s.sock, "release", name], text=True,
                         capture_output=True, timeout=10)
    return out.returncode, (out.stdout + out.stderr).strip()


def case_persist_ctl(s):
    m = s.peer.wait_line(r"^peer: in process: (.*)")
    print(m.group(0))
    if m.group(1) != ("persist_mr Operation not supported, attach_mr Operation not supported, "
                      "release Operation not supported"):
        fail("in process, the persistent-region verbs", s.peer)
    s.expect_apps({}, "baseline")
    s.expect_regions({}, "baseline")
    a, (addr, length, key), _ = persist_owner(s, "A", "ctl", 0, "persist")
    b = s.app_proc("B", "refuse", "ctl")
    rc = b.wait()
    print(b.output())
    if rc != 0:
        fail("B's refusals", b)
    for region, why, what in (
            ("refuse-rel", "droce_release", r"1 MRs revoked in \d+ us; its QPs"),
            ("refuse-lease", "lease expired", r"its key revoked by its lease; the MR, its QPs")):
        r = s.droced.wait_line(rf"droced: region {region} released \({why}\): (.*)")
        print(f"droced: {r.group(0)}")
        if not re.fullmatch(rf"{what}, CQs, PD and buffer stay pid {b.p.pid}'s", r.group(1)):
            fail("the release of a region whose maker lives", s.droced)
    rc, out = ctl_release(s, "ctl")
    print(f"droced --ctl release ctl while A lives: exit {rc}: {out}")
    if rc != 1 or not out.endswith("Device or resource busy"):
        fail("ctl release of a live owner's region")
    s.expect_apps({a.p.pid: objs_64k()}, "B gone, A alive")
    s.expect_regions({"ctl": (a.p.pid, length, key, addr, 1, 0)}, "B gone, A alive")
    kill_owner(s, a, "ctl")
    last = peer_kept_writing(s)
    s.expect_regions({"ctl": (0, length, key, addr, 1, 0)}, "A gone")
    # the owner again, and at its death persistent again
    c = attach(s, "C", "ctl", last, (addr, length, key), keep=("keep",))
    kill_owner(s, c, "ctl")
    s.expect_apps({}, "C gone")
    s.expect_regions({"ctl": (0, length, key, addr, 1, 0)}, "C gone")
    resume_peer(s)
    rc, out = ctl_release(s, "ctl")
    print(f"droced --ctl release ctl: exit {rc}: {out}")
    if rc != 0 or out != "released ctl":
        fail("droced --ctl release")
    expect_released(s, "ctl", "droced --ctl release")
    revoked_at_peer(s, "persist_ctl: droced --ctl release")
    rc, out = ctl_release(s, "ctl")
    print(f"droced --ctl release ctl again: exit {rc}: {out}")
    if rc != 1 or not out.endswith("No such file or directory"):
        fail("a second ctl release")
    s.expect_apps({}, "after")
    s.expect_regions({}, "after")
    # an attached owner's dereg releases the region as droce_release does
    since = s.peer.mark()
    d, _, _ = persist_owner(s, "D", "by-dereg", 0, "hammer")
    kill_owner(s, d, "by-dereg")
    e = s.app_proc("E", "attach", "by-dereg", "-", "dereg")
    rc = e.wait()
    print(e.output())
    if rc != 0 or "attach: dereg Success" not in e.output():
        fail("E's attach and dereg", e)
    expect_released(s, "by-dereg", "dereg by its owner")
    revoked_at_peer(s, "persist_ctl: E's dereg", since)
    s.expect_apps({}, "after E")
    s.expect_regions({}, "after E")
    # droced's own exit releases a kept region (its engine closes with no QP left)
    d, _, _ = persist_owner(s, "F", "at-exit", 0, "persist")
    kill_owner(s, d, "at-exit")
    s.droced.stop()
    r = s.droced.wait_line(r"droced: region at-exit released \(droced exits\): (.*)")
    print(f"droced's SIGTERM: exit {s.droced.p.returncode}; {r.group(0)}")
    if s.droced.p.returncode != 0 or not re.fullmatch(
            r"1 MRs revoked in \d+ us, 1 QPs, 65536 buffer bytes freed \d+ us later, "
            r"0 objects left \(seen at \d+ us\)", r.group(1)):
        fail("droced's exit with a kept region", s.droced)


def case_persist_cross(s):
    """A plain process's region attached by a secondary (the memfd mapped
    there too), a secondary's (droced's hugepages) refused to a plain
    process (EFAULT); each mode pinned by --droce-queues."""
    s.expect_apps({}, "baseline")
    s.expect_regions({}, "baseline")
    a, (addr, length, key), _ = persist_owner(s, "A", "own", 0, "persist", queues="region")
    s.expect_apps({a.p.pid: (1, 1, 1, 1, 0, 0, 1, 65536)}, "A, a plain process")
    kill_owner(s, a, "own")
    last = peer_kept_writing(s)
    b = attach(s, "B", "own", last, (addr, length, key), stdin=subprocess.PIPE,
               queues="shared", memfd=True)
    resume_peer(s)
    b.p.stdin.write("go\n")
    b.p.stdin.flush()
    if b.wait() != 0 or "attach: release Success" not in b.output():
        fail("B's release", b)
    expect_released(s, "own", "droce_release")
    revoked_at_peer(s, "persist_cross: B's release")
    s.expect_regions({}, "after B")
    since = s.peer.mark()
    c, (addr, length, key), _ = persist_owner(s, "C", "huge", 0, "hammer", queues="shared")
    s.expect_apps({c.p.pid: (1, 1, 1, 1, 1, 65536, 0, 0)}, "C, a secondary")
    kill_owner(s, c, "huge")
    d = s.app_proc("D", "attach", "huge", "-", queues="region")
    rc = d.wait()
    m = d.wait_line(r"^attach: droce_attach_mr: (.*)")
    print(f"persist_cross: a plain process's attach of a secondary's region: exit {rc}: "
          f"{m.group(0)}")
    if rc != 1 or m.group(1) != "Bad address":
        fail("a plain process's attach of a region in droced's hugepages", d)
    s.expect_regions({"huge": (0, length, key, addr, 1, 0)}, "D refused")
    rc, out = ctl_release(s, "huge")
    if rc != 0 or out != "released huge":
        fail(f"droced --ctl release: exit {rc}: {out}")
    expect_released(s, "huge", "droced --ctl release")
    revoked_at_peer(s, "persist_cross: --ctl release", since)
    s.expect_apps({}, "after")
    s.expect_regions({}, "after")


def droced_eventfds(s):
    """The kernel ids of droced's eventfds (fdinfo's eventfd-id)."""
    ids = set()
    d = f"/proc/{s.droced.p.pid}/fdinfo"
    for fd in os.listdir(d):
        try:
            with open(f"{d}/{fd}") as f:
                m = re.search(r"^eventfd-id:\s*(\d+)", f.read(), re.M)
        except FileNotFoundError:
            continue
        if m:
            ids.add(int(m.group(1)))
    return ids


def expect_held(s, ev_id, held, what):
    """droced holds (or, once reaped, no longer holds) the application's eventfd."""
    end = time.monotonic() + 10
    while (ev_id in droced_eventfds(s)) != held and time.monotonic() < end:
        time.sleep(0.05)
    got = ev_id in droced_eventfds(s)
    print(f"{what}: droced holds the application's eventfd {ev_id}: {got}")
    if got != held:
        fail(f"{what}: droced holds eventfd {ev_id}: {got}, expected {held}", s.droced)


def kill_unacked(s, a, ev_id, what):
    """SIGKILL a holding an unacked event: reaped, droced's copy of its eventfd closed."""
    expect_held(s, ev_id, True, what)
    a.p.kill()
    r = s.droced.wait_line(rf"droced: pid {a.p.pid} gone: (.*) \(seen at")
    print(f"{what}, SIGKILLed: {r.group(0)}")
    if not r.group(1).endswith(", 0 objects left"):
        fail("objects left behind", s.droced)
    s.expect_apps({}, "after the kill")
    expect_held(s, ev_id, False, "after the kill")


def channel_app(s, how):
    """A channel application and its channel's eventfd id."""
    s.expect_apps({}, "baseline")
    a = s.app_proc("A", "channel", s.peer_sock, how)
    return a, int(a.wait_line(r"^channel: eventfd-id (\d+)").group(1))


def case_channel(s):
    a, ev_id = channel_app(s, "ack")
    m = a.wait_line(r"^channel: \d+ events.*")
    if a.wait() != 0:
        fail("the channel application failed", a)
    print(f"A: {m.group(0)}")
    s.expect_apps({}, "after")
    expect_held(s, ev_id, False, "after the destroy")


def case_channel_kill(s):
    a, ev_id = channel_app(s, "keep")
    a.wait_line(r"^channel: 2 events, the last unacked")
    kill_unacked(s, a, ev_id, "A with its channel, an event unacked")


def go(p):
    p.p.stdin.write("go\n")
    p.p.stdin.flush()


def case_async(s):
    """B0 before A and B1 after it: droced's list of applications in both orders."""
    s.expect_apps({}, "baseline")
    b = [s.app_proc("B0", "quiet", s.peer_sock, stdin=subprocess.PIPE)]
    b[0].wait_line(r"^quiet: ready")
    a = s.app_proc("A", "async", s.peer_sock, "ack", stdin=subprocess.PIPE)
    ev_id = int(a.wait_line(r"^async: eventfd-id (\d+)").group(1))
    a.wait_line(r"^async: connected")
    b.append(s.app_proc("B1", "quiet", s.peer_sock, stdin=subprocess.PIPE))
    b[1].wait_line(r"^quiet: ready")
    go(a)
    m = a.wait_line(r"^async: exactly one event.*")
    if a.wait() != 0:
        fail("A failed", a)
    print(f"A: {m.group(0)}")
    print(s.peer.wait_line(r"^peer: bad write: .*").group(0))
    for p in b:
        go(p)
        m = p.wait_line(r"^quiet: no event")
        if p.wait() != 0:
            fail(f"{p.name} failed", p)
        print(f"{p.name} (on the same droced): {m.group(0)}")
    s.expect_apps({}, "after")
    expect_held(s, ev_id, False, "after A's exit")


def case_async_kill(s):
    s.expect_apps({}, "baseline")
    a = s.app_proc("A", "async", s.peer_sock, "keep", stdin=subprocess.PIPE)
    ev_id = int(a.wait_line(r"^async: eventfd-id (\d+)").group(1))
    a.wait_line(r"^async: connected")
    go(a)
    a.wait_line(r"^async: .*, unacked")
    kill_unacked(s, a, ev_id, "A, its event unacked")


def mw_counts(s):
    """droced --ctl list's windows per application: {pid: mw}."""
    out = subprocess.run([s.droced_bin, "--ctl", s.sock, "list"], text=True,
                         capture_output=True, timeout=10).stdout
    return {int(m.group(1)): int(m.group(2))
            for m in re.finditer(r"pid (\d+): .* mw (\d+)", out)}


def expect_lines(p, want):
    for line in want:
        p.wait_line("^" + re.escape(line) + "$")
        print(f"{p.name}: {line}")


def case_mw(s):
    s.expect_apps({}, "baseline")
    a = s.app_proc("A", "mw", s.peer_sock, f"{s.tmp}/hA", stdin=subprocess.PIPE)
    a.wait_line(r"^mw: ready")
    expect_lines(a, [
        "mw: the peer's WRITE through the type-1 window: success, bytes the same",
        "mw: the peer's WRITE through the type-2 window: success, bytes the same",
        "mw: the peer's SEND_WITH_INV: success; received: success, with invalidate, "
        "rkey the window's",
        "mw: the peer's WRITE through the invalidated window: remote access error"])
    got = mw_counts(s)
    print(f"droced --ctl list: windows {got}")
    if got != {a.p.pid: 2}:
        fail(f"windows {got}, expected A's 2", s.droced)
    b = s.app_proc("B", "mwforge", s.peer_sock, f"{s.tmp}/hA")
    if b.wait() != 0:
        fail("mwforge", b)
    # a plain process's forged binds are refused by droced before its
    # engine (the event), a secondary's by the engine (the completion)
    refused = "memory management operation error" if shared() else "QP_REQ_ERR naming its QP"
    expect_lines(b, [
        "mwforge: dealloc of another's window: No such file or directory",
        f"mwforge: bind of another's window: {refused}",
        f"mwforge: bind onto another's MR: {refused}",
        f"mwforge: unbind of another's type-1 window: {refused}"])
    a.p.stdin.write("go\n")
    a.p.stdin.flush()
    if a.wait() != 0:
        fail("A's frees", a)
    a.wait_line(r"^mw: all freed")
    s.expect_apps({}, "after")


def case_mw_lease(s):
    s.expect_apps({}, "baseline")
    a = s.app_proc("A", "mwlease", s.peer_sock)
    if a.wait() != 0:
        fail("A's window lease", a)
    m = a.wait_line(rf"^mw: lease of {MW_LEASE_MS} ms on the type-1 window: "
                    r"MW_LEASE_EXPIRED (\d+) us after its renewal was asked$")
    print(m.group(0))
    # the design (droce.h): droced's engine revokes within a lease tick of
    # the deadline (the request's time + MW_LEASE_MS), never before it; the event
    # then crosses droced's ring to A, scheduled on a loaded machine
    # (EXPIRY_SLACK_MS, as persist_lease)
    late_ms = int(m.group(1)) / 1000 - MW_LEASE_MS
    if not 0 <= late_ms <= LEASE_TICK_MS + EXPIRY_SLACK_MS:
        fail(f"MW_LEASE_EXPIRED {late_ms:.3f} ms after the deadline of a {MW_LEASE_MS} ms lease "
             f"(bounds: 0 to {LEASE_TICK_MS + EXPIRY_SLACK_MS} ms)", a)
    expect_lines(a, ["mw: after the expiry the peer's WRITE: remote access error; query: "
                     "expired; renew: Timer expired", "mw: all freed"])
    s.expect_apps({}, "after")


def case_persist_expire(s):
    s.expect_apps({}, "baseline")
    s.expect_regions({}, "baseline")
    a, (addr, length, key), _ = persist_owner(s, "A", "expire", 10000, "hammer")
    kill_owner(s, a, "expire")
    b = s.app_proc("B", "attachlease", "expire")
    rc = b.wait()
    print(b.output())
    expect_lines(b, [
        "attachlease: set a lease: Success", "attachlease: renew: Success",
        "attachlease: query: Success",
        "attachlease: query: lease_ms 500, expired 0, remaining at most the period: yes",
        "attachlease: event MR lease expired naming its MR: yes",
        "attachlease: renew after the expiry: Timer expired",
        "attachlease: set a lease after the expiry: Timer expired",
        "attachlease: query after the expiry: Success",
        "attachlease: query after the expiry: lease_ms 500, expired 1, remaining_us 0",
        "attachlease: attach after the expiry: Timer expired",
        "attachlease: release after the expiry: No such file or directory",
        "attachlease: dereg after the expiry: Success",
        "attachlease: attach after the dereg: Timer expired",
        "attachlease: every answer as expected"])
    if rc != 0:
        fail("B's lease on the attached region", b)
    r = s.droced.wait_line(r"droced: region expire expired: (.*)")
    print(f"droced: {r.group(0)}")
    if r.group(1) != f"its key revoked by its lease; released at pid {b.p.pid}'s dereg or death":
        fail("droced's expiry of an attached region", s.droced)
    expect_released(s, "expire", "dereg by its owner")
    revoked_at_peer(s, "persist_expire: the attached owner's lease")
    s.expect_apps({}, "after")
    s.expect_regions({}, "after")


def case_unsupported(s):
    s.expect_apps({}, "baseline")
    a = s.app_proc("A", "unsupported")
    rc = a.wait()
    print(a.output())
    expect_lines(a, [
        "unsupported: dealloc_pd of the MR's new PD: Device or resource busy",
        "unsupported: rereg without flags: Invalid argument",
        "unsupported: rereg to no memory: Invalid argument",
        "unsupported: query_pkey past the table: Invalid argument",
        "unsupported: a piece past the segment's end: Invalid argument",
        "unsupported: another process's segment: Operation not permitted",
        "unsupported: rereg_mr, query_pkey, System V memory through droced"])
    if rc != 0:
        fail("unsupported failed", a)
    s.expect_apps({}, "after")


def case_fork(s):
    s.expect_apps({}, "baseline")
    a = s.app_proc("A", "fork")
    rc = a.wait()
    print(a.output())
    expect_lines(a, ["fork: the child's copy of the moved page is its own"])
    if rc != 0:
        fail("fork failed", a)
    s.expect_apps({}, "after")


def srq_ah_counts(s):
    """droced --ctl list's SRQs and address handles per application: {pid: (srq, ah)}."""
    out = subprocess.run([s.droced_bin, "--ctl", s.sock, "list"], text=True,
                         capture_output=True, timeout=10).stdout
    return {int(m.group(1)): (int(m.group(2)), int(m.group(3)))
            for m in re.finditer(r"pid (\d+): .* srq (\d+) ah (\d+)", out)}


def case_srq(s):
    s.expect_apps({}, "baseline")
    a = s.app_proc("A", "srq", s.peer_sock, f"{s.tmp}/hA", stdin=subprocess.PIPE)
    a.wait_line(r"^srq: ready")
    expect_lines(a, [
        "srq: limit armed: max_wr 16 max_sge 1 limit 6",
        "srq: a limit not below max_wr: Invalid argument",
        "srq: resized: max_wr 32 max_sge 1 limit 6",
        "srq: 3 echoes received from the SRQ, bytes the same",
        "srq: SRQ limit reached of its SRQ",
        "srq: after the event: max_wr 32 max_sge 1 limit 0",
        "srq: UD SEND with its AH: success"])
    got = srq_ah_counts(s)
    print(f"droced --ctl list: SRQs and AHs {got}")
    if got != {a.p.pid: (1, 1)}:
        fail(f"SRQs and AHs {got}, expected A's (1, 1)", s.droced)
    b = s.app_proc("B", "srqforge", f"{s.tmp}/hA")
    if b.wait() != 0:
        fail("srqforge", b)
    expect_lines(b, [
        "srqforge: modify_srq of another's SRQ: No such file or directory",
        "srqforge: query_srq of another's SRQ: No such file or directory",
        "srqforge: create_qp on another's SRQ: No such file or directory",
        "srqforge: post_srq_recv on another's SRQ: Invalid argument",
        "srqforge: destroy_srq of another's SRQ: No such file or directory",
        "srqforge: destroy_ah of another's AH: No such file or directory",
        "srqforge: UD SEND with another's AH index: local QP operation error",
        "srqforge: UD SEND with an index of none: local QP operation error",
        "srqforge: every attempt refused"])
    bqp = b.wait_line(r"^srqforge: UD SEND with its own AH to the other's UD QP: success "
                      r"\(from QP (\d+)\)$").group(1)
    print(f"B: UD SEND with its own AH to A's UD QP: success (from QP {bqp})")
    a.p.stdin.write("go\n")
    a.p.stdin.flush()
    expect_lines(a, [
        "srq: after the forgery: max_wr 32 max_sge 1 limit 0",
        f"srq: UD receive from QP {bqp}: 104 bytes, GRH IPv4 source 198.18.20.1, "
        "bytes the same",
        "srq: last WQE reached of its QP",
        "srq: holding"])
    a.p.kill()
    gone = s.droced.wait_line(rf"droced: pid {a.p.pid} gone: (.*)")
    print(f"A killed: {gone.group(0)}")
    if re.search(r", 0 objects left \(seen at \d+ us\)$", gone.group(1)) is None:
        fail("A's objects not all freed", s.droced)
    s.expect_apps({}, "after")
    if srq_ah_counts(s) != {}:
        fail("SRQs or AHs left", s.droced)


def case_evfree(s):
    s.expect_apps({}, "baseline")
    a = s.app_proc("A", "evfree")
    rc = a.wait()
    print(a.output())
    expect_lines(a, [
        "evfree: MR freed with its expiry event queued: Success, no event left",
        "evfree: MW freed with its expiry event queued: Success, no event left",
        "evfree: MR freed with its expiry event taken: Success, returned after the ack, "
        "no event left",
        "evfree: MW freed with its expiry event taken: Success, returned after the ack, "
        "no event left"])
    if rc != 0:
        fail("evfree failed", a)
    s.expect_apps({}, "after")


def case_persist_inv(s):
    s.expect_apps({}, "baseline")
    s.expect_regions({}, "baseline")
    a = s.app_proc("A", "mwpersist", s.peer_sock, "inv")
    a.wait_line(r"^mwpersist: ready")
    expect_lines(a, [
        "mw: the peer's WRITE through the type-1 window: success, bytes the same",
        "mw: the peer's WRITE through the type-2 window: success, bytes the same"])
    a.p.kill()
    kept = s.droced.wait_line(rf"droced: pid {a.p.pid} gone: region inv kept: (.*)")
    print(f"A killed: {kept.group(0)}")
    open(f"{s.peer_sock}.resume", "w").close()
    m = s.peer.wait_line(r"^peer: ops: after the owner's death (.*)", 60)
    print(m.group(0))
    if m.group(1) != f"{MW_AFTER} of {MW_AFTER} WRITEs through the window ok, " \
            "SEND_WITH_INV success, then a WRITE with the region's key: remote access error":
        fail("the peer's accesses after the owner's death", s.droced)
    r = s.droced.wait_line(r"droced: region inv released \(its last window invalidated "
                           r"by a peer\): (.*)")
    print(r.group(0))
    m = re.fullmatch(r"1 MRs revoked in \d+ us, 1 QPs, 65536 buffer bytes freed (\d+) us "
                     r"later, 0 objects left \(seen at \d+ us\)", r.group(1))
    if m is None or int(m.group(1)) < LINGER_US:
        fail("droced's release", s.droced)
    s.expect_apps({}, "after")
    s.expect_regions({}, "after")


def case_max_apps(s):
    """droced --max-apps=2: a third application's droce_init fails EUSERS,
    nothing of it in the list; once one of the two is gone a fourth is served."""
    s.expect_apps({}, "baseline")
    a = [s.app_proc(f"app{i}", "idle", s.peer_sock, stdin=subprocess.PIPE) for i in range(2)]
    for p in a:
        p.wait_line(r"^idle: ready")
    s.expect_apps({a[0].p.pid: objs_64k(), a[1].p.pid: objs_64k()}, "two served")
    c = s.app_proc("C", "idle", s.peer_sock)
    rc = c.wait()
    print(f"a third: exit {rc}")
    if rc != 2 or not re.search(r"^daemon_app: droce_init: Too many users$", c.output(), re.M):
        fail("a third application not refused with EUSERS", c)
    s.expect_apps({a[0].p.pid: objs_64k(), a[1].p.pid: objs_64k()}, "after the third")
    a[0].p.kill()
    s.droced.wait_line(rf"droced: pid {a[0].p.pid} gone")
    d = s.app_proc("D", "idle", s.peer_sock, stdin=subprocess.PIPE)
    d.wait_line(r"^idle: ready")
    s.expect_apps({a[1].p.pid: objs_64k(), d.p.pid: objs_64k()}, "one gone, a fourth served")


def case_no_secondaries(s):
    """droced --no-secondaries: it says so, its EAL is --in-memory (no
    hugepage file of its prefix), a plain process's traffic rounds are
    right and it is listed with its objects (list and telemetry); B, asking
    for shared queues, fails droce_init with EOPNOTSUPP after droced's
    refusal, nothing of it listed; A's rounds go on."""
    s.droced.wait_line(r"^droced: no secondaries \(EAL --in-memory\): queue regions only$")
    files = hugepage_files(s.prefix)
    print(f"no_secondaries: hugepage files of {s.prefix}: {len(files)}")
    if files:
        fail(f"droced --no-secondaries left hugepage files {files}", s.droced)
    s.expect_apps({}, "baseline")
    a = s.app_proc("A", "traffic", s.peer_sock, "200", f"{s.tmp}/hA", f"{s.tmp}/stop")
    wait_file(f"{s.tmp}/hA", a)
    s.expect_apps({a.p.pid: objs_64k()}, "A running")
    b = s.app_proc("B", "idle", s.peer_sock)
    rc = b.wait()
    print(f"B, a secondary: exit {rc}")
    if rc != 2 or not re.search(r"serves no secondaries \(droced --no-secondaries\)",
                                b.output()) or \
            not re.search(r"^daemon_app: droce_init: Operation not supported$", b.output(),
                          re.M):
        fail("a secondary of droced --no-secondaries not refused with EOPNOTSUPP", b)
    s.expect_apps({a.p.pid: objs_64k()}, "after B")
    finish_traffic(s, [a], "B refused meanwhile")


MANY = 70	# applications at once: over the 64 droced once took, three list pages


def case_many(s):
    s.expect_apps({}, "baseline")
    t0 = time.monotonic()
    apps = []
    for i in range(0, MANY, 4):
        # four at a time (as dropin_daemon starts them; seventy EAL
        # secondaries starting at the same instant could hang in DPDK
        # 22.11's multi-process start, "Cannot find action:
        # mp_malloc_response"); served at once is the point here
        batch = [s.app_proc(f"h{k}", "hold", stdin=subprocess.PIPE)
                 for k in range(i, min(i + 4, MANY))]
        for a in batch:
            a.wait_line(r"^hold: ready")
        apps += batch
    hold = (1, 1, 1, 1, 1, 4096, 0, 0) if shared() else (1, 1, 1, 1, 0, 0, 1, 4096)
    want = {a.p.pid: hold for a in apps}
    got = s.wait_apps(want, timeout=30)
    tel = s.telemetry_apps()
    print(f"many: {len(apps)} applications ready in {time.monotonic() - t0:.1f} s; droced "
          f"--ctl list: {len(got)}, all as expected: {got == want}; telemetry: {len(tel)}")
    if got != want:
        fail(f"droced --ctl list: {got}, expected {want}", s.droced)
    if len(tel) != 32 or any(want.get(p) != v for p, v in tel.items()):
        fail(f"telemetry /droced/apps: {tel}, expected 32 of {want}", s.droced)
    for a in apps:
        a.p.stdin.write("go\n")
        a.p.stdin.flush()
    for a in apps:
        if a.wait() != 0:
            fail("an application's frees", a)
        a.wait_line(r"^hold: freed")
    s.expect_apps({}, "after")


CASES = {"traffic": case_traffic, "forge": case_forge, "crash": case_crash,
         "crash_paced": lambda s: case_crash(s, paced=True),
         "kill_in_verb": case_kill_in_verb, "daemon_killed": case_daemon_killed,
         "own": case_own,
         "persist": case_persist, "persist_lease": case_persist_lease,
         "persist_ctl": case_persist_ctl, "persist_cross": case_persist_cross,
         "channel": case_channel, "channel_kill": case_channel_kill,
         "async": case_async, "async_kill": case_async_kill,
         "mw": case_mw, "mw_lease": case_mw_lease, "persist_inv": case_persist_inv,
         "persist_expire": case_persist_expire, "evfree": case_evfree,
         "unsupported": case_unsupported, "srq": case_srq, "fork": case_fork,
         "max_apps": case_max_apps, "many": case_many,
         "no_secondaries": case_no_secondaries}
# droced's own options of a case
DROCED_OPTS = {"max_apps": ["--max-apps=2"], "no_secondaries": ["--no-secondaries"]}
# The applications that are droced's DPDK secondaries (DROCE_QUEUES=shared,
# the mode being retired) in a case whose others are plain processes on
# queue regions, the default ({case: {application: why}}); persist_cross
# pins each of its applications' modes itself (app_proc's queues).
FORGE = ("it forges a secondary's proxy objects (provider_droced's struct "
         "verbs_dmn_*) through the verbs; a plain process's forgeries: "
         "daemon_dq_hostile")
SHARED_APPS = {
    "forge": {"B": FORGE},
    "srq": {"B": FORGE},
    "no_secondaries": {"B": "what droced --no-secondaries refuses"},
}


def use_lsan_supp():
    """test/lsan.supp for every child (ASan builds)."""
    supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lsan.supp")
    os.environ["LSAN_OPTIONS"] = ":".join(
        x for x in (os.environ.get("LSAN_OPTIONS"), f"suppressions={supp}") if x)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        raise SystemExit(__doc__)
    if os.environ.get("DROCE_NO_HUGE") == "1":
        print("daemon mode needs hugepages (DPDK multi-process), DROCE_NO_HUGE=1")
        return 77
    use_lsan_supp()
    s = Setup(sys.argv[2], sys.argv[3])
    s.droced_opts = DROCED_OPTS.get(sys.argv[1], [])
    s.case = sys.argv[1]
    try:
        s.start()
        CASES[sys.argv[1]](s)
    finally:
        s.cleanup()
    print(f"daemon {sys.argv[1]}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
