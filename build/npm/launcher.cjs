#!/usr/bin/env node
// The `serverfs` command of the npm package: finds the executable in the platform package npm
// installed beside it (serverfs-linux-x64, ...: optionalDependencies with `os` and `cpu`, so npm
// installs only the one for this machine) and runs it. Plain CommonJS for Node 18 and later, no
// dependencies, no install script. It writes nothing to stdout: an MCP host reads the
// executable's stdout as if it had started it. Signals are passed on, and the executable's exit
// status or signal becomes the launcher's own.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

const PLATFORM_PACKAGES = {
  "linux x64": "serverfs-linux-x64",
  "linux arm64": "serverfs-linux-arm64",
  "darwin arm64": "serverfs-darwin-arm64",
  "darwin x64": "serverfs-darwin-x64",
  "win32 x64": "serverfs-windows-x64",
};

function fail(code, why) {
  process.stderr.write(`serverfs: ${code}: ${why}\n`);
  process.exit(1);
}

function executablePath() {
  const name = PLATFORM_PACKAGES[`${process.platform} ${process.arch}`];
  if (name === undefined) {
    fail("PLATFORM_UNSUPPORTED", `no serverfs build for ${process.platform}-${process.arch}; there are builds for ${Object.values(PLATFORM_PACKAGES).map((p) => p.slice("serverfs-".length)).join(", ")}`);
  }
  let manifest;
  try {
    manifest = require.resolve(`${name}/package.json`);
  } catch {
    fail(
      "PLATFORM_PACKAGE_MISSING",
      `the package ${name}, which holds the serverfs executable for this machine, is not installed; ` +
        "npm leaves it out when optional dependencies are omitted (--omit=optional, --no-optional): reinstall serverfs without that",
    );
  }
  return path.join(path.dirname(manifest), "bin", process.platform === "win32" ? "serverfs.exe" : "serverfs");
}

const executable = executablePath();
const child = spawn(executable, process.argv.slice(2), { stdio: "inherit", windowsHide: true });

// On Windows a console Ctrl-C already reaches every process attached to the console, and
// child.kill() there would terminate the executable instead of letting it shut down.
const FORWARDED = process.platform === "win32" ? ["SIGTERM", "SIGHUP"] : ["SIGINT", "SIGTERM", "SIGHUP"];
const forward = (signal) => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of FORWARDED) process.on(signal, forward);

child.on("error", (err) => {
  fail(err.code === "ENOENT" ? "EXECUTABLE_MISSING" : "LAUNCH_FAILED", `could not start ${path.basename(executable)} from its platform package (${err.code || err.message})`);
});

child.on("exit", (code, signal) => {
  if (signal !== null) {
    // Die of the same signal, so whoever started us sees what the executable saw.
    for (const s of FORWARDED) process.removeAllListeners(s);
    process.kill(process.pid, signal);
    // Still here: a signal whose default action does not end a process (or Windows).
    const number = require("node:os").constants.signals[signal];
    process.exit(typeof number === "number" ? 128 + number : 1);
  }
  process.exit(code === null ? 1 : code);
});
