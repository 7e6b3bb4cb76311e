// doctor's agent.approvals line: which path answers an agent's approvals, from the real CLI on a
// real deployment; `tools` (the assistant approves its own agent) is the one setting warned about.
import { afterAll, expect, test } from "bun:test";
import { cleanup, makeDeployment, runDoctor } from "./helpers.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach(cleanup));

async function approvalsLine(agent: string): Promise<string> {
  const d = makeDeployment({ agent });
  dirs.push(d.root);
  return (await runDoctor(d)).line("approvals");
}

test("the default and the human or terminal paths are OK and say who answers", async () => {
  expect(await approvalsLine("")).toStartWith('approvals: OK -- approvals = "auto": the human through MCP elicitation when the client supports forms');
  expect(await approvalsLine('approvals = "terminal"\n')).toBe('approvals: OK -- approvals = "terminal": only the operator with serverfs tasks approve / serverfs tasks answer');
  expect(await approvalsLine('approvals = "elicitation"\n')).toStartWith('approvals: OK -- approvals = "elicitation": only the human');
});

test('"tools" is a WARN with the fix', async () => {
  const line = await approvalsLine('approvals = "tools"\n');
  expect(line).toStartWith('approvals: WARN -- approvals = "tools": the assistant through respond_agent_approval');
});
