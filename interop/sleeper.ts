// The cancel scenario's long-running tool on Windows (see host.ts): this process and two sleeping
// children, their pids written one per line to the file named by the first argument, then it waits.
import fs from "node:fs";

const file = process.argv[2]!;
const kids = [300, 301].map((s) => Bun.spawn([process.execPath, "-e", `setTimeout(() => {}, ${s}000)`], { stdin: "ignore", stdout: "ignore", stderr: "ignore" }));
// Written in one go so the scenario never reads a partial list.
fs.writeFileSync(`${file}.tmp`, `${process.pid}\n${kids.map((k) => k.pid).join("\n")}\n`);
fs.renameSync(`${file}.tmp`, file);
await Promise.all(kids.map((k) => k.exited));
