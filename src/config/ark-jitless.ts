// Imported first by schema.ts, before @ark/schema's core loads: the core reads `jitless` once, as
// it resolves its configuration. With JIT on, every node the schema builds is precompiled into a
// validator with `new Function`, and the first check compiles the rest; a configuration is
// checked once per process, so that compile is pure start-up cost (about half of what loading a
// config costs, bench/startup/config-load.ts). Interpreted checks give the same ArkErrors.
import { configureSchema } from "@ark/schema/config";

configureSchema({ jitless: true });
