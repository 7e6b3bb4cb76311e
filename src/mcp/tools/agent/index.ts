// The ten agent tools, built for `serve` when the surface allows them (src/mcp/surface.ts).
import type { Registry } from "../../../config/types.ts";
import type { FileService } from "../../../fs/index.ts";
import { bridgeClientFor } from "../../../bridge/ipc/connect.ts";
import type { McpTool } from "../../tool.ts";
import type { AgentToolDeps } from "./common.ts";
import { answerAgentQuestionTool } from "./answer-agent-question.ts";
import { cancelAgentTaskTool } from "./cancel-agent-task.ts";
import { getAgentTaskTool } from "./get-agent-task.ts";
import { listAgentModelsTool } from "./list-agent-models.ts";
import { listAgentRuntimesTool } from "./list-agent-runtimes.ts";
import { readAgentTaskEventsTool } from "./read-agent-task-events.ts";
import { readAgentTaskResultTool } from "./read-agent-task-result.ts";
import { respondAgentApprovalTool } from "./respond-agent-approval.ts";
import { sendAgentMessageTool } from "./send-agent-message.ts";
import { submitAgentTaskTool } from "./submit-agent-task.ts";

export function agentToolsFrom(deps: AgentToolDeps): McpTool[] {
  return [
    listAgentRuntimesTool(deps),
    listAgentModelsTool(deps),
    submitAgentTaskTool(deps),
    getAgentTaskTool(deps),
    readAgentTaskEventsTool(deps),
    readAgentTaskResultTool(deps),
    respondAgentApprovalTool(deps),
    answerAgentQuestionTool(deps),
    sendAgentMessageTool(deps),
    cancelAgentTaskTool(deps),
  ];
}

export function buildAgentTools(registry: Registry, files: Pick<FileService, "statFile">): McpTool[] {
  return agentToolsFrom({ registry, files, client: bridgeClientFor(registry) });
}
