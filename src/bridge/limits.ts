// Effective Bridge limits (docs/agent-bridge.md, docs/configuration.md): fixed bounds plus the operator's agent policy.
import type { AgentConfig } from "../config/types.ts";

export interface BridgeLimits {
  max_prompt_bytes: number;
  max_final_response_bytes: number;
  max_spooled_result_bytes: number;
  max_result_chunk_bytes: number;
  result_preview_bytes: number;
  task_timeout_seconds: number;
  interaction_timeout_seconds: number;
  retention_seconds: number;
  max_event_bytes: number;
  max_interaction_bytes: number;
  max_message_bytes: number;
  max_events_per_task: number;
  max_active_tasks: number;
}

export const PROVIDER_CANCEL_BOUND_MS = 10_000;
/**
 * How long task.cancel waits past the stop grace for the proof: the platform's KILL phase (2 s of
 * looking for stragglers) plus slack. Past it the answer is `stop_pending`, never a guess.
 */
export const CANCEL_PROOF_SLACK_MS = 2_500;
export const MAX_MODEL_BYTES = 512;
export const MAX_CORRELATION_BYTES = 256;

export function bridgeLimits(agent: AgentConfig, override: Partial<BridgeLimits> = {}): BridgeLimits {
  const threshold = agent.result_spool_threshold_bytes;
  return {
    max_prompt_bytes: 65_536,
    max_final_response_bytes: threshold,
    max_spooled_result_bytes: 8_388_608,
    max_result_chunk_bytes: 65_536,
    result_preview_bytes: Math.min(65_536, threshold),
    task_timeout_seconds: agent.task_timeout_seconds,
    interaction_timeout_seconds: agent.interaction_timeout_seconds,
    retention_seconds: agent.retention_seconds,
    max_event_bytes: 65_536,
    max_interaction_bytes: 65_536,
    max_message_bytes: 65_536,
    max_events_per_task: 10_000,
    max_active_tasks: agent.max_active_tasks,
    ...override,
  };
}
