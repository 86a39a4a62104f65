// sed: read-only unless it edits in place (-i), reads a script we cannot see (-f), or its script
// writes files (w, W, s///w) or runs commands (e, s///e). The script is scanned command by command.
import { scanOptions } from './options';
import type { CommandRule } from './ruleTypes';
import { OK, refuse, type ShellVerdict } from './verdict';
import { checkPathArg } from './workspacePaths';

export const sed: CommandRule = (args, context, name) => {
  const result = scanOptions(name, args, {
    shortWithValue: 'elf',
    longWithValue: ['expression', 'line-length', 'file'],
    refusedShort: { i: 'edits files in place', I: 'edits files in place', f: 'reads its script from a file this check cannot see' },
    refusedLong: {
      'in-place': 'edits files in place',
      file: 'reads its script from a file this check cannot see',
      'follow-symlinks': 'only matters when editing in place',
    },
  });
  if (!result.ok) return result.verdict;
  const { options, operands } = result.args;
  const expressions = options.filter((option) => option.name === 'e' || option.name === 'expression');
  const scripts = expressions.length > 0 ? expressions.map((option) => option.value) : [operands[0]];
  if (scripts.length === 0 || scripts.some((script) => !script || script.kind !== 'literal')) {
    return refuse('argument', 'sed: the script is missing or only known at run time');
  }
  const reads: string[] = [];
  const verdict = checkSedScript(scripts.map((script) => script?.value ?? '').join('\n'), reads);
  if (!verdict.readOnly) return verdict;
  for (const file of reads) {
    const placed = checkPathArg({ value: file, kind: 'literal', mayBeOption: false }, context.workspace);
    if (!placed.readOnly) return refuse('path', `sed r ${file}: ${placed.reason.replace(/^path: /, '')}`);
  }
  return OK;
};

const SIMPLE_COMMANDS = new Set(['=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F']);
const NUMBER_ARGUMENT_COMMANDS = new Set(['q', 'Q', 'l', 'L']);
const S_FLAGS = new Set(['g', 'p', 'i', 'I', 'm', 'M', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);

/**
 * Walks a sed script. Where GNU and BSD sed differ (labels may or may not end at ";"), the
 * shorter reading is taken so that nothing that might be a command is skipped as text.
 */
export function checkSedScript(script: string, reads: string[] = []): ShellVerdict {
  const s = script;
  let i = 0;
  const skipBlanks = () => {
    while (i < s.length && (s[i] === ' ' || s[i] === '\t')) i++;
  };
  const toEndOfLine = () => {
    while (i < s.length && s[i] !== '\n') {
      if (s[i] === '\\') i++;
      i++;
    }
  };
  /** Skips a delimited part (regex or replacement); false when unterminated. */
  const delimited = (delimiter: string): boolean => {
    while (i < s.length) {
      const ch = s[i];
      if (ch === '\\') {
        i += 2;
        continue;
      }
      i++;
      if (ch === delimiter) return true;
      if (ch === '\n' && delimiter !== '\n') return false;
    }
    return false;
  };
  const address = (): boolean => {
    const ch = s[i];
    if (ch === '/') {
      i++;
      if (!delimited('/')) return false;
    } else if (ch === '\\') {
      const delimiter = s[i + 1];
      if (delimiter === undefined || delimiter === '\n') return false;
      i += 2;
      if (!delimited(delimiter)) return false;
    } else if (ch === '$') {
      i++;
      return true;
    } else if (ch !== undefined && /[0-9+~]/.test(ch)) {
      i++;
      while (i < s.length && /[0-9~]/.test(s[i])) i++;
      return true;
    } else {
      return true; // no address
    }
    while (s[i] === 'I' || s[i] === 'M') i++;
    return true;
  };
  while (i < s.length) {
    const ch = s[i];
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === ';') {
      i++;
      continue;
    }
    if (ch === '#') {
      toEndOfLine();
      continue;
    }
    if (!address()) return refuse('argument', 'sed: a script this check cannot read');
    skipBlanks();
    if (s[i] === ',') {
      i++;
      skipBlanks();
      if (!address()) return refuse('argument', 'sed: a script this check cannot read');
      skipBlanks();
    }
    while (s[i] === '!' || s[i] === ' ' || s[i] === '\t') i++;
    const command = s[i];
    i++;
    if (command === undefined) return refuse('argument', 'sed: a script this check cannot read');
    if (command === 'w' || command === 'W') return refuse('argument', `sed script command ${command} writes a file`);
    if (command === 'e') return refuse('argument', 'sed script command e runs a command');
    if (command === '{' || command === '}' || SIMPLE_COMMANDS.has(command)) continue;
    if (NUMBER_ARGUMENT_COMMANDS.has(command)) {
      skipBlanks();
      while (i < s.length && /[0-9]/.test(s[i])) i++;
      continue;
    }
    if (command === ':' || command === 'b' || command === 't' || command === 'T' || command === 'v') {
      skipBlanks();
      while (i < s.length && !/[;\n \t}]/.test(s[i])) i++;
      continue;
    }
    if (command === 'a' || command === 'i' || command === 'c' || command === 'r' || command === 'R') {
      // Text or a file name runs to the end of the line in every sed; r and R read that file.
      skipBlanks();
      const start = i;
      toEndOfLine();
      if (command === 'r' || command === 'R') reads.push(s.slice(start, i));
      continue;
    }
    if (command === 's' || command === 'y') {
      const delimiter = s[i];
      if (delimiter === undefined || delimiter === '\n' || delimiter === '\\') return refuse('argument', 'sed: a script this check cannot read');
      i++;
      if (!delimited(delimiter) || !delimited(delimiter)) return refuse('argument', 'sed: a script this check cannot read');
      if (command === 'y') continue;
      while (i < s.length && !/[;\n}#]/.test(s[i])) {
        const flag = s[i];
        if (flag === 'w' || flag === 'W') return refuse('argument', 'sed s///w writes a file');
        if (flag === 'e') return refuse('argument', 'sed s///e runs the pattern space as a command');
        if (flag !== ' ' && flag !== '\t' && !S_FLAGS.has(flag)) return refuse('argument', `sed: unknown s/// flag ${flag}`);
        i++;
      }
      continue;
    }
    return refuse('argument', `sed: unknown script command ${command}`);
  }
  return OK;
}
