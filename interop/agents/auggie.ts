// Augment's auggie over ACP. It has no custom model endpoint: AUGMENT_SESSION_AUTH (the session a
// `auggie login` would store) points its tenantURL at the scripted Augment API. It saves files and
// launches processes without asking unless told: `--permission <tool>:ask-user` for both.
// ~/.augment/settings.json puts the workdir on its indexing deny list.
import fs from "node:fs";
import path from "node:path";
import { AUGGIE_DIALECT, startAugmentModel } from "../models/augment.ts";
import { baseEnv, type AgentSpec } from "./types.ts";

export const auggie: AgentSpec = {
  name: "auggie",
  pkg: "@augmentcode/auggie",
  version: "0.36.0",
  source: "cache",
  runtime: { kind: "acp", id: "auggie", args: ["--acp", "--permission", "save-file:ask-user", "--permission", "launch-process:ask-user"], probe_timeout_seconds: 60 },
  command: (dir) => path.join(dir, "node_modules/.bin/auggie"),
  startModel: () => startAugmentModel(AUGGIE_DIALECT),
  configure(h, url) {
    // Without a decision in its settings it asks, on each session's first prompt, to index (upload)
    // the workspace: a permission request about no tool call. The deny list answers it once.
    fs.mkdirSync(path.join(h.home, ".augment"), { recursive: true });
    fs.writeFileSync(path.join(h.home, ".augment", "settings.json"), JSON.stringify({ indexingDenyDirs: [h.workdir], autoUpdate: false }));
    return { ...baseEnv(h), AUGMENT_SESSION_AUTH: JSON.stringify({ accessToken: "fake-token", tenantURL: `${url}/`, scopes: ["email"] }) };
  },
};
