// The fast search backend: ripgrep, read through its JSON output. Two ways to run it: walking a
// folder itself (fastest; flags set so it skips exactly what our own walk skips), or over a list of
// files our walk chose (for the cases its ignore rules cannot express). ripgrep only ever reads.
import { spawn } from 'node:child_process';
import { findProgram } from './programSearch';
import type { SearchMatch } from './workspaceFs';
import { clipLine, compareMatches, SearchPatternError } from './textSearch';
import { ALWAYS_SKIPPED_DIRS } from './treeWalk';

/**
 * Finds an executable on this process's PATH by absolute path, or undefined. Relative and empty
 * entries, and entries in `excluded` (the workspace), are skipped: the PATH the editor was started
 * with may hold `./bin` or a direnv's `node_modules/.bin`, and a search must not run the workspace's
 * own `rg`.
 */
export function findExecutable(name: string, excluded: readonly string[] = [], searchPath = process.env.PATH ?? ''): string | undefined {
  return findProgram(name, { pathValue: searchPath, excluded });
}

/**
 * Flags for every run. --no-config: no user config can add --pre or other flags. --no-mmap keeps
 * binary detection over the whole file. --crlf lets `$` match before a CRLF line end, as the
 * JavaScript backend does after dropping the `\r`.
 */
const BASE_FLAGS = ['--json', '--no-config', '--no-mmap', '--crlf', '--no-messages'];

interface RgText {
  text?: string;
  bytes?: string;
}

function decode(value: RgText | undefined): string {
  if (!value) return '';
  if (value.text !== undefined) return value.text;
  return Buffer.from(value.bytes ?? '', 'base64').toString('utf8');
}

interface RgMessage {
  type: string;
  data: { path?: RgText; lines?: RgText; line_number?: number; binary_offset?: number | null };
}

interface RgRun {
  rgPath: string;
  cwd: string;
  args: string[];
  pattern: string;
  limit: number;
  /** Only matches in files this accepts are kept. */
  keep?: (path: string) => boolean;
  /** ripgrep prints files in path order (--sort path), so it can be stopped at the limit. */
  ordered: boolean;
  signal?: AbortSignal;
}

function runRipgrep(run: RgRun): Promise<SearchMatch[]> {
  const { limit, signal } = run;
  signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const child = spawn(run.rgPath, run.args, { cwd: run.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RIPGREP_CONFIG_PATH: '' } });
    let results: SearchMatch[] = [];
    const pending = new Map<string, SearchMatch[]>();
    let buffered = '';
    let stderr = '';
    let sawOutput = false;
    let settled = false;

    const onAbort = () => {
      child.kill('SIGKILL');
      finish(() => reject(signal?.reason ?? new Error('Search aborted')));
    };
    signal?.addEventListener('abort', onAbort, { once: true });

    function finish(action: () => void) {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      action();
    }

    function keep(matches: SearchMatch[]) {
      results.push(...matches);
      if (run.ordered) {
        if (results.length >= limit) {
          child.kill('SIGKILL');
          finish(() => resolve(results.slice(0, limit)));
        }
      } else if (results.length > limit * 4) {
        // Bounded memory: only the first `limit` in order can survive, so trim as we go.
        results = results.sort(compareMatches).slice(0, limit);
      }
    }

    function handle(line: string) {
      if (line === '' || settled) return;
      let message: RgMessage;
      try {
        message = JSON.parse(line) as RgMessage;
      } catch {
        return;
      }
      const file = decode(message.data.path).replace(/^\.\//, '');
      if (message.type === 'begin') {
        sawOutput = true;
        if (!run.keep || run.keep(file)) pending.set(file, []);
      } else if (message.type === 'match') {
        const perFile = pending.get(file);
        if (perFile && perFile.length < limit) {
          const text = decode(message.data.lines).replace(/\r?\n$/, '');
          perFile.push({ path: file, line: message.data.line_number ?? 0, text: clipLine(text) });
        }
      } else if (message.type === 'end') {
        const perFile = pending.get(file);
        pending.delete(file);
        // A NUL byte anywhere makes the file binary: drop whatever matched before it.
        if (perFile && (message.data.binary_offset === null || message.data.binary_offset === undefined)) keep(perFile);
      }
    }

    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        handle(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 8192) stderr += chunk;
    });
    child.on('error', (error) => finish(() => reject(new Error(`Could not run ripgrep (${run.rgPath}): ${error.message}`))));
    child.on('close', (code) => {
      handle(buffered);
      // Exit 2 with nothing searched is a failure of the whole call (most often a bad pattern).
      if (code === 2 && !sawOutput && stderr.trim() !== '') {
        const detail = stderr.trim().split('\n').filter((l) => l.trim() !== '').slice(-1)[0] ?? stderr.trim();
        const isPattern = /regex parse error|error parsing|unclosed|unrecognized|repetition/i.test(stderr);
        finish(() => reject(isPattern ? new SearchPatternError(run.pattern, detail.replace(/^error:\s*/, '')) : new Error(`ripgrep failed: ${detail}`)));
        return;
      }
      finish(() => resolve(results.sort(compareMatches).slice(0, limit)));
    });
  });
}

/**
 * Searches `files` (paths relative to `cwd`) for `pattern`. Binary files contribute nothing.
 * Returns at most `limit` matches in path/line order.
 */
export function ripgrepFiles(rgPath: string, cwd: string, pattern: string, files: readonly string[], limit: number, signal?: AbortSignal): Promise<SearchMatch[]> {
  if (files.length === 0) return Promise.resolve([]);
  // Files are named explicitly, so ripgrep's own ignore logic never runs.
  return runRipgrep({ rgPath, cwd, pattern, limit, signal, ordered: false, args: [...BASE_FLAGS, '-e', pattern, '--', ...files] });
}

export interface RipgrepTreeOptions {
  /** Folder to walk, relative to cwd ('' = cwd). */
  start: string;
  /** .gitignore files above `start` whose patterns are relative to cwd (ripgrep ignores parents). */
  ignoreFiles: string[];
  /** A glob without `/` that file names must match (a fast pre-filter; `keep` decides). */
  nameGlob?: string;
  keep?: (path: string) => boolean;
  maxFileBytes: number;
  limit: number;
  signal?: AbortSignal;
}

/**
 * Lets ripgrep walk `start` below `cwd` (the workspace root), skipping what our own walk skips:
 * .gitignore/.ignore/.rgignore rules from the workspace down (never from above it, nor global or
 * .git/info/exclude ones), .git and node_modules, symlinks, files over the size limit; dot files are searched.
 */
export function ripgrepTree(rgPath: string, cwd: string, pattern: string, options: RipgrepTreeOptions): Promise<SearchMatch[]> {
  const args = [
    ...BASE_FLAGS,
    '--hidden',
    '--no-require-git',
    '--no-ignore-parent',
    '--no-ignore-global',
    '--no-ignore-exclude',
    '--sort',
    'path',
    '--max-filesize',
    String(options.maxFileBytes),
  ];
  for (const dir of ALWAYS_SKIPPED_DIRS) args.push('--glob', `!${dir}`);
  for (const file of options.ignoreFiles) args.push('--ignore-file', file);
  if (options.nameGlob) args.push('--type-add', `speculate:${options.nameGlob}`, '--type', 'speculate');
  args.push('-e', pattern, '--', options.start === '' ? '.' : options.start);
  return runRipgrep({ rgPath, cwd, pattern, limit: options.limit, keep: options.keep, signal: options.signal, ordered: true, args });
}
