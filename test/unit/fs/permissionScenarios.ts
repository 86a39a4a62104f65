// Writes into files and folders the user made read-only, run by the engine's own code: in-process
// (as root in CI) and as a child process of an unprivileged user, so both must refuse alike.
import { OverlayFs } from '../../../src/core/followup/overlayFs';
import { NodeWorkspaceFs } from '../../../src/core/fs/nodeWorkspaceFs';
import { editTool } from '../../../src/core/tools/edit';
import { writeFileTool } from '../../../src/core/tools/writeFile';

export interface ScenarioInput {
  /** A workspace holding ro.txt (0444), ok.txt, locked/ (0555) with locked/existing.txt. */
  ws: string;
  /** Where overlays go. */
  tmp: string;
}

export interface ScenarioOutcome {
  live: Record<string, { ok: boolean; output: string }>;
  accept: { applied: string[]; conflicts: [string, string, boolean][] };
}

export async function runPermissionScenarios(input: ScenarioInput): Promise<ScenarioOutcome> {
  const fs = await NodeWorkspaceFs.open(input.ws, { ripgrepPath: null });
  const live: ScenarioOutcome['live'] = {};
  const record = async (name: string, result: Promise<{ ok: boolean; output: string }>) => {
    const { ok, output } = await result;
    live[name] = { ok, output };
  };
  await record('edit ro.txt', editTool.execute({ file_path: 'ro.txt', old_string: 'read only', new_string: 'changed' }, { fs }));
  await record('write ro.txt', writeFileTool.execute({ file_path: 'ro.txt', content: 'replaced\n' }, { fs }));
  await record('write locked/new.txt', writeFileTool.execute({ file_path: 'locked/new.txt', content: 'new\n' }, { fs }));
  await record('edit locked/existing.txt', editTool.execute({ file_path: 'locked/existing.txt', old_string: 'existing', new_string: 'changed' }, { fs }));
  await record('write locked/deeper/new.txt', writeFileTool.execute({ file_path: 'locked/deeper/new.txt', content: 'new\n' }, { fs }));

  const overlay = await OverlayFs.create({ base: fs, tmpRoot: input.tmp, fallbackTmpRoots: [] });
  try {
    await overlay.writeFile('ro.txt', 'speculated\n');
    await overlay.writeFile('locked/new.txt', 'speculated\n');
    await overlay.writeFile('locked/existing.txt', 'speculated\n');
    await overlay.writeFile('ok.txt', 'speculated\n');
    const result = await overlay.applyToReal();
    return { live, accept: { applied: result.applied, conflicts: result.conflicts.map((c) => [c.path, c.reason, c.canOverwrite]) } };
  } finally {
    await overlay.cleanup();
  }
}

// Run as a child: node permissionScenarios.js '<json input>' prints the outcome as JSON.
if (require.main === module) {
  runPermissionScenarios(JSON.parse(process.argv[2]) as ScenarioInput).then(
    (outcome) => process.stdout.write(JSON.stringify(outcome)),
    (error: unknown) => {
      process.stderr.write(String((error as Error)?.stack ?? error));
      process.exitCode = 1;
    },
  );
}
