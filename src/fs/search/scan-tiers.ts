// Keeps search_text's per-file code (here) and its per-entry walk code (walk-tiers.ts) out of
// JavaScriptCore's top JIT tier (FTL).
//
// Why: that code spends its time in syscalls (getdents64, openat2, statx, read, close). Every
// function in it runs tens of thousands of times in the first search of a fresh process, which
// is enough for the engine to compile each one four times (bytecode, baseline, DFG, FTL), and
// FTL's compiles are the expensive ones. On the 2-core bench machine the JIT threads became the
// third busy thread of a two-thread search: with these lists, the first search_text call of a
// fresh serve (20,000 files) took 176 instead of 205 ms and 324 instead of 362 ms of CPU, while the
// fifth call took the same time either way (126 vs 125 ms): FTL code made no later search faster.
// DFG code is kept: it is what later searches run.
//
// What stays eligible for FTL: the byte loops that do real work per byte (case folding, newline
// counting, UTF-8 checks, the regex engine), where the top tier does pay.
//
// Each thread that scans calls keepScanBelowFtl once (the main thread and the search worker have
// engines, and compiled code, of their own); both walk too (the worker walks find_files units),
// so both call keepWalkBelowFtl. noFTL affects compilations after the call, so both run when the
// search modules load, before any search.
import { noFTL } from "bun:jsc";
import { scanSyscalls } from "../../../platform/fs/search-port.ts";
import { Scanner } from "./scan.ts";
import { scanBatch } from "./search-batch.ts";

/** Mark `fns` never to be compiled by FTL (bun:jsc's noFTL: baseline and DFG stay). */
export function belowFtl(fns: readonly unknown[]): void {
  for (const f of fns) if (typeof f === "function") noFTL(f as (...args: unknown[]) => unknown);
}

/** The per-file functions kept below FTL (exported for the test that checks each is still a function). */
export function scanHotPath(): unknown[] {
  return [
    // the syscalls of every file, as the platform lists them
    ...scanSyscalls(),
    // the batch loop and the one-read fast path (the byte scans it calls stay eligible)
    scanBatch,
    Scanner.prototype.scanFile,
    Scanner.prototype.scanUnstatted,
  ];
}

/** Called once per thread, by the module that loads first (noFTL marks are idempotent anyway). */
export function keepScanBelowFtl(): void {
  belowFtl(scanHotPath());
}
