// The speculation gate's and the approval scheduler's rows for the four interaction tools with the
// real tool definitions (TOOLS.md): agent and skill run ahead, save_memory and exit_plan_mode stop
// it; in plan mode a read-only sub-agent and skills run, and leaving plan mode is asked.
import * as assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApprovalScheduler, APPROVAL_MODES } from '../../../src/core/chat/approvals';
import { gateToolCall, type GateContext } from '../../../src/core/followup/speculationToolGate';
import { NodeWorkspaceFs } from '../../../src/core/fs/nodeWorkspaceFs';
import { agentTool, exitPlanModeTool, saveMemoryTool, skillTool } from '../../../src/core/tools';

describe('gate and approvals: agent, skill, save_memory, exit_plan_mode', () => {
  let base: string;
  let context: (mode: GateContext['approvalMode']) => GateContext;
  before(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'gate-agent-')));
    const fs = await NodeWorkspaceFs.open(base);
    context = (approvalMode) => ({ approvalMode, fs, overlayHasWrites: false, classifyShell: async () => ({ readOnly: false, reason: 'x' }) });
  });
  after(async () => rm(base, { recursive: true, force: true }));

  it('lets agent and skill run ahead in every mode; save_memory and exit_plan_mode are boundaries', async () => {
    for (const mode of APPROVAL_MODES) {
      assert.equal((await gateToolCall('agent', agentTool, { description: 'd', prompt: 'p' }, context(mode))).decision, 'allow', mode);
      assert.equal((await gateToolCall('skill', skillTool, { name: 'pdf' }, context(mode))).decision, 'allow', mode);
      const memory = await gateToolCall('save_memory', saveMemoryTool, { fact: 'x' }, context(mode));
      assert.equal(memory.decision === 'boundary' && memory.boundary.detail, 'save_memory needs you: it saves a memory');
      const plan = await gateToolCall('exit_plan_mode', exitPlanModeTool, { plan: 'x' }, context(mode));
      assert.equal(plan.decision === 'boundary' && plan.boundary.type, 'denied_tool');
    }
  });

  it('plan mode runs the sub-agent and skills, asks about exit_plan_mode and refuses save_memory', async () => {
    const plan = new ApprovalScheduler({ mode: 'plan', isReadOnly: async () => false });
    assert.deepEqual(await plan.decide(agentTool, { description: 'd', prompt: 'p' }), { action: 'run' });
    assert.deepEqual(await plan.decide(skillTool, { name: 'pdf' }), { action: 'run' });
    assert.deepEqual(await plan.decide(exitPlanModeTool, { plan: 'x' }), { action: 'ask' });
    assert.equal((await plan.decide(saveMemoryTool, { fact: 'x' })).action, 'refuse');
    const normal = new ApprovalScheduler({ mode: 'default', isReadOnly: async () => false });
    assert.deepEqual(await normal.decide(saveMemoryTool, { fact: 'x' }), { action: 'run' }, "the user's own memory file, asked for by the user");
  });
});
