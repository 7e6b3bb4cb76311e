// What the Bridge service's parts need of a task running in this process and of the interaction
// broker, as interfaces: the service core keeps a map of active runs, the broker parks a run's
// adapter on a human's answer, and the run asks the broker to open and abandon requests. With the
// shapes here, core.ts, task-run.ts and interactions.ts never import one another in a circle.
import type { ServerfsError } from "../../errors.ts";
import type { Redactor } from "../../runtimes/kernel/redact.ts";
import type { ApprovalRequest, ApprovalResolution, QuestionRequest, QuestionResolution } from "../../runtimes/types.ts";

export type AbortReason = "cancel" | "timeout" | "interaction_timeout" | "shutdown";

/** A task running in this process (task-run.ts's TaskRun). */
export interface ActiveRun {
  readonly taskId: string;
  readonly redactor: Redactor;
  readonly signal: AbortSignal;
  /** Settles once the run released everything; proved: the platform proved its processes gone. */
  readonly released: Promise<{ proved: boolean }>;
  /** Settles when the run has finished its whole course (see TaskRun.run). */
  readonly done: Promise<void>;
  addTimer(fn: () => void, ms: number): void;
  openWaiter(requestId: string): Promise<unknown>;
  resolveWaiter(requestId: string, value: unknown): void;
  rejectWaiter(requestId: string | null, err: ServerfsError): void;
  abort(reason: AbortReason): void;
}

/** The interaction broker as a run sees it (interactions.ts's InteractionBroker). */
export interface RunBroker {
  openApproval(run: ActiveRun, req: ApprovalRequest): Promise<ApprovalResolution>;
  openQuestion(run: ActiveRun, req: QuestionRequest): Promise<QuestionResolution>;
  abandon(run: ActiveRun): void;
}
