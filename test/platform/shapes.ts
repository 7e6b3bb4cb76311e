// Process-tree shapes used by the containment tests and the benchmark. Each shape is a real
// command line; `sleepers` is how many long-lived processes (sleep/perl) it ends up with, so a
// test can wait until the whole tree exists before stopping it.

export interface TreeShape {
  name: string;
  argv: string[];
  sleepers: number;
  /** Ignores SIGTERM: stop must escalate to SIGKILL. */
  ignoresTerm?: boolean;
  /** Ready only once one of its processes is in the stopped state (T). */
  hasStoppedMember?: boolean;
  /** Starts processes while it is being stopped: the shapes a stop proof must hold against. */
  forksDuringStop?: boolean;
}

/** A tree of 1 + fan * (1 + leaves) processes built from nested shells. */
export function nestedTree(fan: number, leaves: number, escapeWithSetsid = false): string[] {
  const leaf = escapeWithSetsid ? "setsid sleep 1000 &" : "sleep 1000 &";
  const branch = `sh -c '${Array.from({ length: leaves }, () => leaf).join(" ")} wait'`;
  return ["sh", "-c", `${Array.from({ length: fan }, () => `${branch} &`).join(" ")} wait`];
}

export const SHAPES: TreeShape[] = [
  { name: "child", argv: ["sleep", "1000"], sleepers: 1 },
  { name: "grandchild", argv: ["sh", "-c", "sleep 1000 & wait"], sleepers: 1 },
  {
    // One grandchild in its own session that stays a child; one that forks away (`setsid -f`)
    // and is orphaned immediately.
    name: "setsid-grandchild",
    argv: ["sh", "-c", "setsid sleep 1000 & setsid -f sleep 1000; wait"],
    sleepers: 2,
  },
  {
    // Classic daemonizer: fork, setsid, fork again, both intermediate parents exit; the leader
    // exits too, so only the daemon is left, with no living ancestor in the tree.
    name: "double-fork-daemon",
    argv: ["sh", "-c", "( setsid sh -c 'sleep 1000 & exit 0' & ) ; exit 0"],
    sleepers: 1,
  },
  {
    name: "term-ignoring",
    argv: ["sh", "-c", "trap '' TERM; sleep 1000 & sleep 1000 & wait"],
    sleepers: 2,
    ignoresTerm: true,
  },
  {
    name: "own-process-group",
    argv: ["sh", "-c", "perl -e 'setpgrp(0,0); sleep 1000' & wait"],
    sleepers: 1,
  },
  {
    // Daemonizes only when told to stop: the daemon appears during the stop itself.
    name: "daemonizes-on-term",
    argv: ["sh", "-c", `trap '( setsid sh -c "sleep 1000 & exit 0" & ); sleep 0.05; exit 0' TERM; sleep 1000 & wait`],
    sleepers: 1,
    forksDuringStop: true,
  },
  {
    // Forks daemons on SIGTERM in a loop and does not stop by itself for far longer than any stop
    // takes (5,000 forks): the race is wide on any machine, and only a stop that freezes (or kills
    // a whole cgroup) can finish it. Bounded, and the daemons sleep 300 s, so a test run killed
    // mid-stop leaves a bounded number of processes that end by themselves.
    name: "forks-on-term-forever",
    argv: ["sh", "-c", "trap 'i=0; while [ $i -lt 5000 ]; do (setsid sleep 300 &); i=$((i+1)); done' TERM; sleep 1000 & wait"],
    sleepers: 1,
    ignoresTerm: true,
    forksDuringStop: true,
  },
  {
    // The leader answers SIGTERM with SIGHUP to a child in its own process group, which forks
    // three daemons on SIGHUP; both ignore SIGTERM. A SIGHUP also comes from the kernel when the
    // child's group is orphaned while it is stopped, with a SIGCONT that resumes it.
    name: "forks-on-hup",
    argv: [
      "sh",
      "-c",
      `trap '' TERM; perl -e 'use POSIX; setpgrp(0,0); $SIG{TERM}=q(IGNORE); $SIG{HUP}=sub{ for (1..3) { if (!fork) { POSIX::setsid(); exec q(sleep), 1000 } } }; sleep 1 while 1' & p=$!; trap "kill -HUP $p" TERM; while :; do wait; done`,
    ],
    sleepers: 1,
    ignoresTerm: true,
    forksDuringStop: true,
  },
  {
    // A child (not the leader) forks two daemons while it is being stopped, and the leader dies
    // meanwhile, so the child is orphaned as it forks.
    name: "fork-from-dying-child",
    argv: ["sh", "-c", `sh -c 'trap "(setsid sleep 1000 &); (setsid sleep 1000 &); exit 0" TERM; sleep 1000 & wait' & wait`],
    sleepers: 1,
    forksDuringStop: true,
  },
  {
    // Clears its environment (no marker) and is orphaned: found only through its group/session.
    name: "env-cleared-orphan",
    argv: ["sh", "-c", "( env -i /bin/sh -c 'sleep 1000 & sleep 1000 & wait' & ) ; sleep 1000"],
    sleepers: 3,
  },
  {
    // A stopped process keeps SIGTERM pending forever; only SIGKILL ends it.
    name: "stopped-member",
    argv: ["sh", "-c", "perl -e 'kill q(STOP), $$; sleep 1000' & wait"],
    sleepers: 1,
    ignoresTerm: true,
    hasStoppedMember: true,
  },
  {
    // Ignores TERM and immediately restarts its child in a fresh session whenever it dies.
    name: "respawning-escaper",
    argv: ["sh", "-c", "trap '' TERM; while :; do setsid sleep 1000; done"],
    sleepers: 1,
    ignoresTerm: true,
  },
];

/**
 * A parent blocked in vfork whose child stopped itself before its exec: the parent waits (state D,
 * not T) until the child goes on, which a freeze never lets it do. dash runs every foreground
 * command through vfork, so a freeze that stops such a child at the wrong instant meets this.
 * Python's ctypes makes the instant certain. The parent ignores SIGTERM (it would die of it).
 */
const VFORK_SCRIPT = [
  "import ctypes, signal",
  "signal.signal(signal.SIGTERM, signal.SIG_IGN)",
  "libc = ctypes.CDLL(None)",
  "pid = libc.vfork()",
  "if pid == 0:",
  "    libc.kill(libc.getpid(), signal.SIGSTOP)",
  "    libc.execl(b'/bin/sleep', b'sleep', b'1000', None)",
  "    libc._exit(127)",
].join("\n");

export const VFORK_STOPPED_CHILD: TreeShape = {
  name: "vfork-child-stopped-before-exec",
  argv: ["/usr/bin/python3", "-c", VFORK_SCRIPT],
  sleepers: 0,
  ignoresTerm: true,
  hasStoppedMember: true,
};

/** 1 + 7 * (1 + 6) = 50 processes. */
export const TREE_50: TreeShape = { name: "tree-50", argv: nestedTree(7, 6), sleepers: 42 };
