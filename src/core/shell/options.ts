// Reads command-line options the way getopt does (short clusters, --long[=value], GNU permutation
// and unambiguous abbreviations of long options) so rules can refuse the options that write or run
// programs wherever they appear.
import type { Arg } from './words';
import { refuse, type ShellVerdict } from './verdict';

export interface OptionSpec {
  /** Short letters that take a value, attached (-ofile) or as the next argument (-o file). */
  shortWithValue?: string;
  /** Long options (without "--") that take a value: --name=value or --name value. */
  longWithValue?: readonly string[];
  /** Refused short letters with why, e.g. { o: 'writes its output to a file' }. */
  refusedShort?: Readonly<Record<string, string>>;
  /**
   * Refused long options with why. Any abbreviation is refused too, since getopt_long accepts
   * unambiguous prefixes (sort --out=x is sort --output=x).
   */
  refusedLong?: Readonly<Record<string, string>>;
  /** When given, every other short letter is refused. */
  allowedShort?: string;
  /** When given, every other long option is refused (exact names only). */
  allowedLong?: readonly string[];
  /** POSIX style: the first operand ends the options (awk, xargs, env, timeout, …). */
  stopAtOperand?: boolean;
  /**
   * Not getopt: each value-taking letter of a cluster takes the next word and the cluster goes on
   * (tree -Lo 1 out.txt is -L 1 -o out.txt).
   */
  valuesFromNextWords?: boolean;
}

export interface ParsedOption {
  /** "o" for -o, "output" for --output. */
  name: string;
  long: boolean;
  value?: Arg;
}

export interface ScannedArgs {
  options: ParsedOption[];
  /** Operands in order; with stopAtOperand, everything from the first operand on. */
  operands: Arg[];
}

export type ScanResult = { ok: true; args: ScannedArgs } | { ok: false; verdict: ShellVerdict };

export function scanOptions(command: string, args: readonly Arg[], spec: OptionSpec): ScanResult {
  const options: ParsedOption[] = [];
  const operands: Arg[] = [];
  const fail = (verdict: ShellVerdict): ScanResult => ({ ok: false, verdict });
  let endOfOptions = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (endOfOptions) {
      operands.push(arg);
      continue;
    }
    if (arg.kind !== 'literal') {
      if (arg.mayBeOption) {
        return fail(refuse('argument', `${command}: an argument that is only known at run time may be an option`));
      }
      operands.push(arg);
      if (spec.stopAtOperand) endOfOptions = true;
      continue;
    }
    const text = arg.value;
    if (text === '--') {
      endOfOptions = true;
      continue;
    }
    if (!text.startsWith('-') || text === '-') {
      operands.push(arg);
      if (spec.stopAtOperand) endOfOptions = true;
      continue;
    }
    if (text.startsWith('--')) {
      const eq = text.indexOf('=');
      const name = eq < 0 ? text.slice(2) : text.slice(2, eq);
      const refused = refusedLongMatch(name, spec.refusedLong);
      if (refused) return fail(refuse('argument', `${command} --${refused[0]} ${refused[1]}`));
      if (spec.allowedLong && !spec.allowedLong.includes(name)) {
        return fail(refuse('argument', `${command}: option --${name} is not on the read-only list`));
      }
      const option: ParsedOption = { name, long: true };
      if (eq >= 0) option.value = { value: text.slice(eq + 1), kind: 'literal', mayBeOption: false };
      else if (spec.longWithValue?.includes(name) && i + 1 < args.length) option.value = args[++i];
      options.push(option);
      continue;
    }
    // Every letter of the word is checked against the refused ones, even after a value-taking
    // letter: getopt reads -Lo as -L with the value "o", but a tool with its own parser (tree) reads
    // it as -L -o, and refusing both readings is the safe side.
    for (const letter of text.slice(1)) {
      const why = spec.refusedShort?.[letter];
      if (why) return fail(refuse('argument', `${command} -${letter} ${why}`));
    }
    for (let j = 1; j < text.length; j++) {
      const letter = text[j];
      if (spec.allowedShort !== undefined && !spec.allowedShort.includes(letter)) {
        return fail(refuse('argument', `${command}: option -${letter} is not on the read-only list`));
      }
      const option: ParsedOption = { name: letter, long: false };
      options.push(option);
      if (spec.shortWithValue?.includes(letter)) {
        if (spec.valuesFromNextWords) {
          if (i + 1 < args.length) option.value = args[++i];
          continue;
        }
        const attached = text.slice(j + 1);
        if (attached) option.value = { value: attached, kind: 'literal', mayBeOption: false };
        else if (i + 1 < args.length) option.value = args[++i];
        break;
      }
    }
  }
  return { ok: true, args: { options, operands } };
}

function refusedLongMatch(name: string, refused: Readonly<Record<string, string>> | undefined): [string, string] | undefined {
  if (!refused) return undefined;
  for (const [option, why] of Object.entries(refused)) {
    if (option === name || (name.length > 0 && option.startsWith(name))) return [option, why];
  }
  return undefined;
}

export function hasOption(scanned: ScannedArgs, ...names: string[]): boolean {
  return scanned.options.some((option) => names.includes(option.name));
}
