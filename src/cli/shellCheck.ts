// `shell-check`: the read-only verdict of the bash-AST classifier for each command, judged for the
// workspace and folder the line names ("workspace", "directory"; default: the current folder).
import { isShellCommandReadOnly } from '../core/shell';
import { InputError, processJsonLines, requireString, type JsonLinesIo } from './jsonLines';

export async function runShellCheck(io: JsonLinesIo): Promise<number> {
  await processJsonLines(io, async (value) => {
    const command = requireString(value, 'command');
    const workspace = value.workspace ?? process.cwd();
    const directory = value.directory;
    if (typeof workspace !== 'string') throw new InputError('"workspace" must be a string');
    if (directory !== undefined && typeof directory !== 'string') throw new InputError('"directory" must be a string');
    const verdict = await isShellCommandReadOnly(command, { workspaceRoot: workspace, ...(directory !== undefined ? { cwd: directory } : {}) });
    return { command, readOnly: verdict.readOnly, reason: verdict.reason };
  });
  return 0;
}
