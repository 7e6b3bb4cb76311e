// JSON-lines logger. Every log line is one JSON object on stderr: stdout of `serve` belongs to
// the MCP protocol, so nothing here may ever touch it. Callers pass only values they have
// already judged safe (codes, counts, aliases); the logger adds no context of its own beyond
// the timestamp, level and event name.
import type { LogLevel } from "./config/types.ts";

export type LogValue = string | number | boolean | null | undefined | readonly string[];
export type LogFields = Record<string, LogValue>;

export interface Logger {
  debug(event: string, fields?: LogFields): void;
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
}

/** Where finished lines go. The default writes to stderr; tests may collect them instead. */
export type LogSink = (line: string) => void;

const RANK: Record<LogLevel, number> = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40 };

export const stderrSink: LogSink = (line) => {
  process.stderr.write(line);
};

export function createLogger(options: { level?: LogLevel; sink?: LogSink } = {}): Logger {
  const threshold = RANK[options.level ?? "INFO"];
  const sink = options.sink ?? stderrSink;
  const emit = (level: LogLevel, event: string, fields: LogFields | undefined): void => {
    if (RANK[level] < threshold) return;
    // Fields never overwrite the three envelope keys: a caller cannot forge an event name.
    const record: Record<string, unknown> = { ts: new Date().toISOString(), level, event };
    if (fields) {
      for (const [key, value] of Object.entries(fields)) {
        if (value !== undefined && !(key in record)) record[key] = value;
      }
    }
    sink(`${JSON.stringify(record)}\n`);
  };
  return {
    debug: (event, fields) => emit("DEBUG", event, fields),
    info: (event, fields) => emit("INFO", event, fields),
    warn: (event, fields) => emit("WARNING", event, fields),
    error: (event, fields) => emit("ERROR", event, fields),
  };
}
