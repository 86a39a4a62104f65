// `shell-check`: the read-only verdict of the bash-AST classifier for each command.
import { isShellCommandReadOnly } from '../core/shell';
import { processJsonLines, requireString, type JsonLinesIo } from './jsonLines';

export async function runShellCheck(io: JsonLinesIo): Promise<number> {
  await processJsonLines(io, async (value) => {
    const command = requireString(value, 'command');
    const verdict = await isShellCommandReadOnly(command);
    return { command, readOnly: verdict.readOnly, reason: verdict.reason };
  });
  return 0;
}
