// Who answers a pending agent approval or question (`[agent] approvals`, docs/tools.md#approval-paths).
// The choice is made per request, because the 2026 era declares client capabilities per request:
// `auto` puts the request to the human through form elicitation when the client can show a form,
// and leaves it to the assistant's tools otherwise.
import type { ClientCapabilities } from "@modelcontextprotocol/server";
import type { ApprovalsPath } from "../../config/types.ts";
import { ServerfsError } from "../../errors.ts";

/** The path in force for one request. */
export type ApprovalRoute = "elicitation" | "tools" | "terminal" | "none";

/**
 * A bare `elicitation: {}` is form support (its meaning before modes existed); a client that
 * declares only `url` cannot show a form.
 */
export function supportsFormElicitation(caps: ClientCapabilities | undefined): boolean {
  const e = caps?.elicitation as Record<string, unknown> | undefined;
  if (!e || typeof e !== "object") return false;
  return Object.keys(e).length === 0 || e.form !== undefined;
}

export function approvalRoute(path: ApprovalsPath, caps: ClientCapabilities | undefined): ApprovalRoute {
  switch (path) {
    case "tools":
      return "tools";
    case "terminal":
      return "terminal";
    case "auto":
      return supportsFormElicitation(caps) ? "elicitation" : "tools";
    case "elicitation":
      // Nobody in this session may answer: the operator still can, with `serverfs tasks approve`.
      return supportsFormElicitation(caps) ? "elicitation" : "none";
  }
}

/** Refuses an answer from the assistant (respond_agent_approval, answer_agent_question) unless the tools path is in force. */
export function assertToolsMayAnswer(path: ApprovalsPath, caps: ClientCapabilities | undefined): void {
  const route = approvalRoute(path, caps);
  if (route === "tools") return;
  const why =
    route === "elicitation"
      ? "this request is put to the human through the client's form (get_agent_task asks)"
      : route === "terminal"
        ? "approvals are answered only in a terminal with `serverfs tasks approve` / `serverfs tasks answer`"
        : "approvals are answered only by the human through elicitation, which this client does not support; use `serverfs tasks approve`";
  throw new ServerfsError("APPROVAL_PATH_NOT_ALLOWED", `[agent] approvals = "${path}": ${why}`);
}

/** One line for doctor and list_agent_runtimes: what the setting means. */
export function describeApprovalsPath(path: ApprovalsPath): string {
  switch (path) {
    case "auto":
      return "the human through MCP elicitation when the client supports forms, otherwise the assistant through respond_agent_approval / answer_agent_question";
    case "elicitation":
      return "only the human through MCP elicitation (or the operator with serverfs tasks approve)";
    case "tools":
      return "the assistant through respond_agent_approval / answer_agent_question";
    case "terminal":
      return "only the operator with serverfs tasks approve / serverfs tasks answer";
  }
}
