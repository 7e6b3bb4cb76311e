// Which path answers an agent's approvals and questions ([agent] approvals). `tools` lets the
// assistant approve what its own delegated agent asks, so it is the one setting worth a warning.
import type { Registry } from "../../config/types.ts";
import { describeApprovalsPath } from "../../mcp/approvals/path.ts";
import { ok, warn, type CheckResult } from "../types.ts";

export function approvalsCheck(registry: Registry): CheckResult {
  const setting = registry.agent.approvals;
  const detail = `approvals = "${setting}": ${describeApprovalsPath(setting)}`;
  if (setting === "tools") {
    return warn("agent.approvals", "approvals", detail, 'set [agent] approvals = "auto" (or "elicitation" / "terminal") so a human answers');
  }
  return ok("agent.approvals", "approvals", detail);
}
