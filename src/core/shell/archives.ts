// Listing archives: tar -t and unzip -l/-v/-t/-Z show what an archive holds without extracting it.
// Every other mode writes files, and some tar options run programs or write side files.
import type { CommandRule } from './ruleTypes';
import { OK, refuse } from './verdict';

/** tar letters allowed in list mode; f takes the archive as its value. */
const TAR_LETTERS = 'tvfzjJZO';
const TAR_LONG = ['list', 'verbose', 'file', 'gzip', 'gunzip', 'ungzip', 'bzip2', 'xz', 'lzma', 'lzip', 'zstd', 'auto-compress', 'wildcards', 'no-wildcards', 'exclude', 'numeric-owner', 'full-time', 'utc', 'force-local', 'quiet', 'to-stdout', 'anchored', 'no-anchored', 'ignore-case'];

/**
 * tar -t: list only. Refused: every other mode (-x -c -r -u -A --delete), programs
 * (-I/--use-compress-program, --to-command, --rsh-command, -F/--info-script, --checkpoint-action),
 * files it writes (-g/--listed-incremental, --index-file, --volno-file), and an archive name with a
 * colon, which tar opens on another machine over rsh/ssh.
 */
export const tar: CommandRule = (args) => {
  let listing = false;
  let archiveNext = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg.kind !== 'literal') {
      if (archiveNext || arg.mayBeOption) return refuse('argument', 'tar: an argument only known at run time may be an option or a remote archive');
      continue;
    }
    const text = arg.value;
    if (archiveNext) {
      archiveNext = false;
      if (text.includes(':') && !args.some((a) => a.value === '--force-local')) return refuse('argument', `tar -f ${text}: a name with a colon is an archive on another machine (rsh/ssh)`);
      continue;
    }
    if (text.startsWith('--')) {
      const [name, value] = [text.slice(2).split('=')[0], text.includes('=') ? text.slice(text.indexOf('=') + 1) : undefined];
      if (!TAR_LONG.includes(name)) return refuse('argument', `tar --${name} is not on the read-only list`);
      if (name === 'list') listing = true;
      if (name === 'file') {
        if (value === undefined) archiveNext = true;
        else if (value.includes(':') && !args.some((a) => a.value === '--force-local')) return refuse('argument', `tar --file=${value}: a name with a colon is an archive on another machine (rsh/ssh)`);
      }
      continue;
    }
    // The first word may bundle letters without a dash (tar tzf x.tgz).
    const bundled = i === 0 && !text.startsWith('-');
    if (!bundled && (!text.startsWith('-') || text === '-')) continue; // a member name
    const letters = bundled ? text : text.slice(1);
    for (let j = 0; j < letters.length; j++) {
      const letter = letters[j];
      if (!TAR_LETTERS.includes(letter)) return refuse('argument', `tar -${letter} is not read-only (only tar -t lists)`);
      if (letter === 't') listing = true;
      if (letter === 'f') {
        const attached = bundled ? '' : letters.slice(j + 1);
        if (attached === '') archiveNext = true;
        else if (attached.includes(':') && !args.some((a) => a.value === '--force-local')) return refuse('argument', `tar -f${attached}: a name with a colon is an archive on another machine (rsh/ssh)`);
        if (!bundled) break;
      }
    }
  }
  return listing ? OK : refuse('command', 'tar writes or extracts files; only tar -t lists');
};

/** zipinfo, or unzip -Z (which must come first): zipinfo's options, where -T is a time format. */
function listingOnlyInfo(name: string, args: Parameters<CommandRule>[0]): boolean {
  const first = args[0];
  return name === 'zipinfo' || (first?.kind === 'literal' && first.value.startsWith('-Z'));
}

/** unzip in a mode that only lists, tests or prints to standard output. */
export const unzip: CommandRule = (args, _context, name) => {
  let listing = name === 'zipinfo';
  for (const arg of args) {
    if (arg.kind !== 'literal') {
      if (arg.mayBeOption) return refuse('argument', `${name}: an argument only known at run time may be an option`);
      continue;
    }
    if (!arg.value.startsWith('-') || arg.value === '-') continue;
    for (const letter of arg.value.slice(1)) {
      // -T sets the archive's time stamp (it writes), except in zipinfo's mode, where it is a time format.
      if (letter === 'T' && !listingOnlyInfo(name, args)) return refuse('argument', `${name} -T changes the archive's time stamp`);
      if (!'lvtzZpcqCsmhTM12'.includes(letter)) return refuse('argument', `${name} -${letter} is not read-only (unzip -l lists)`);
      if ('lvtzZpc'.includes(letter)) listing = true;
    }
  }
  return listing ? OK : refuse('command', `${name} extracts files; unzip -l lists them`);
};
