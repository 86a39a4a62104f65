// `gate`: the speculation tool gate's decision (allow / redirect / sandbox / boundary) for tool calls;
// `sandbox` only where this machine's sandbox passes its probe (SANDBOX.md), else today's answer.
import { APPROVAL_MODES, type ApprovalMode } from '../core/chat/approvals';
import { gateToolCall } from '../core/followup/speculationToolGate';
import { NodeWorkspaceFs } from '../core/fs/nodeWorkspaceFs';
import { toAbsolute } from '../core/fs/paths';
import { isShellCommandReadOnly } from '../core/shell';
import { createToolRegistry } from '../core/tools';
import { commandNeeds } from '../core/sandbox/commandNeeds';
import type { SandboxAvailability } from '../core/sandbox/shellSandbox';
import { cliShellSandbox } from './sandbox';
import { InputError, processJsonLines, requireString, type JsonLinesIo } from './jsonLines';

/** What the gate needs to know of the probe: whether a sandbox runs, and whether it can take writes (namespaces) or read-only commands only (Landlock). */
function sandboxContext(answer: SandboxAvailability) {
  if (!answer.available) return { sandboxAvailable: false, commandNeeds };
  return { sandboxAvailable: true, commandNeeds, gitAhead: true, sandboxWrites: answer.writes, ...(answer.why ? { sandboxWhy: answer.why } : {}) };
}

export async function runGate(io: JsonLinesIo): Promise<number> {
  const tools = createToolRegistry();
  const sandbox = cliShellSandbox();
  let availability: Promise<SandboxAvailability> | undefined;
  const workspaces = new Map<string, Promise<NodeWorkspaceFs>>();
  const openWorkspace = (dir: string) => {
    let opened = workspaces.get(dir);
    if (!opened) {
      opened = NodeWorkspaceFs.open(dir);
      workspaces.set(dir, opened);
    }
    return opened;
  };
  await processJsonLines(io, async (value) => {
    const tool = requireString(value, 'tool');
    const args = value.args ?? {};
    if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new InputError('"args" must be an object');
    const mode = value.approvalMode ?? 'default';
    if (typeof mode !== 'string' || !(APPROVAL_MODES as readonly string[]).includes(mode)) throw new InputError(`"approvalMode" must be one of ${APPROVAL_MODES.join(', ')}`);
    const workspace = value.workspace ?? process.cwd();
    if (typeof workspace !== 'string') throw new InputError('"workspace" must be a string');
    let fs: NodeWorkspaceFs;
    try {
      fs = await openWorkspace(workspace);
    } catch (error) {
      workspaces.delete(workspace);
      throw new InputError(`cannot open workspace "${workspace}": ${error instanceof Error ? error.message : String(error)}`);
    }
    const result = await gateToolCall(tool, tools.get(tool), args as Record<string, unknown>, {
      approvalMode: mode as ApprovalMode,
      fs,
      overlayHasWrites: false,
      classifyShell: async (command, directory) => {
        const cwd = directory ? toAbsolute(fs.root, await fs.resolve(directory)) : fs.root;
        return isShellCommandReadOnly(command, { workspaceRoot: fs.root, cwd });
      },
      ...(tools.get(tool)?.kind === 'shell' && sandbox ? sandboxContext(await (availability ??= sandbox.probe())) : {}),
    });
    return { tool, decision: result.decision, reason: result.reason };
  });
  return 0;
}
