// The native Qoder runtime: `qodercli` (@qoder-ai/qodercli) in its non-interactive streaming mode,
// one contained child per task. Qoder cannot run a turn without a Qoder account (docs/runtimes.md,
// Qoder), so what this adapter advertises is proved against a recorded-protocol fixture plus the
// real CLI's version and not-logged-in paths; `capability_state: "unmeasured"` says so to callers
// until a live acceptance run exists (docs/runtimes.md).
import { NATIVE_DESCRIPTORS, parseNativeVersion } from "../../config/runtime-catalog.ts";
import { NativeTurnAdapter } from "../kernel/turn-adapter.ts";
import type { TaskContext } from "../types.ts";
import { QoderTurn } from "./turn.ts";

export function parseQoderVersion(line: string): string | null {
  return parseNativeVersion(NATIVE_DESCRIPTORS.qoder, line);
}

export class QoderAdapter extends NativeTurnAdapter<QoderTurn> {
  protected override readonly descriptor = NATIVE_DESCRIPTORS.qoder;

  async listModels(): Promise<Record<string, unknown>> {
    return {
      runtime: this.name,
      status: "unsupported",
      scope: "none",
      source: "qodercli",
      models: [],
      detail: "Qoder's model catalog needs a logged-in account and is not read by ServerFS; pass an explicit model id",
    };
  }

  protected override createTurn(ctx: TaskContext, exe: string): QoderTurn {
    return new QoderTurn(ctx, { ...this.opts, exe });
  }
}
