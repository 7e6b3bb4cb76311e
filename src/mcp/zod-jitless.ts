// Imported first by `serve`, before the MCP SDK builds its schemas: zod reads `jitless` when each
// object schema is constructed. With JIT on, the first parse of every object schema (the wire
// gate's and the SDK's, for initialize and tools/list) generates and compiles a parser with
// `new Function`; a stdio server parses each schema a handful of times, so that compile is pure
// start-up cost (about 4 ms of a ~60 ms cold start, bench/fs/startup.ts). Results are the same.
import { config } from "zod";

config({ jitless: true });
