// The fast search backend: runs ripgrep over a list of files the walk already chose and reads its
// JSON output. ripgrep only reads; which files are searched is decided by our own walk, so this
// backend and the JavaScript one agree on what they cover.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import * as path from 'node:path';
import type { SearchMatch } from './workspaceFs';
import { clipLine, compareMatches, SearchPatternError } from './textSearch';

/** Finds an executable on PATH, or undefined. */
export function findExecutable(name: string, searchPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of searchPath.split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  return undefined;
}

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

/**
 * Searches `files` (paths relative to `cwd`) for `pattern`. Binary files (a NUL byte anywhere)
 * contribute nothing. Returns at most `limit` matches in path/line order.
 */
export function ripgrepFiles(
  rgPath: string,
  cwd: string,
  pattern: string,
  files: readonly string[],
  limit: number,
  signal?: AbortSignal,
): Promise<SearchMatch[]> {
  if (files.length === 0) return Promise.resolve([]);
  signal?.throwIfAborted();
  // --no-config: no user config can add --pre or other flags. Files are named explicitly, so
  // ripgrep's own ignore logic never runs. --no-mmap keeps binary detection over the whole file.
  const args = ['--json', '--no-config', '--no-mmap', '--crlf', '--no-messages', '-e', pattern, '--', ...files];
  return new Promise((resolve, reject) => {
    const child = spawn(rgPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RIPGREP_CONFIG_PATH: '' } });
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
      // Bounded memory: only the first `limit` in order can survive, so trim as we go.
      if (results.length > limit * 4) results = results.sort(compareMatches).slice(0, limit);
    }

    function handle(line: string) {
      if (line === '') return;
      let message: RgMessage;
      try {
        message = JSON.parse(line) as RgMessage;
      } catch {
        return;
      }
      const file = decode(message.data.path).replace(/^\.\//, '');
      if (message.type === 'begin') {
        sawOutput = true;
        pending.set(file, []);
      } else if (message.type === 'match') {
        const perFile = pending.get(file) ?? [];
        if (perFile.length < limit) {
          const text = decode(message.data.lines).replace(/\r?\n$/, '');
          perFile.push({ path: file, line: message.data.line_number ?? 0, text: clipLine(text) });
        }
        pending.set(file, perFile);
      } else if (message.type === 'end') {
        const perFile = pending.get(file) ?? [];
        pending.delete(file);
        if (message.data.binary_offset === null || message.data.binary_offset === undefined) keep(perFile);
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
    child.on('error', (error) => finish(() => reject(new Error(`Could not run ripgrep (${rgPath}): ${error.message}`))));
    child.on('close', (code) => {
      handle(buffered);
      // Exit 2 with nothing searched is a failure of the whole call (most often a bad pattern).
      if (code === 2 && !sawOutput && stderr.trim() !== '') {
        const detail = stderr.trim().split('\n').filter((l) => l.trim() !== '').slice(-1)[0] ?? stderr.trim();
        const isPattern = /regex parse error|error parsing|unclosed|unrecognized|repetition/i.test(stderr);
        finish(() => reject(isPattern ? new SearchPatternError(pattern, detail.replace(/^error:\s*/, '')) : new Error(`ripgrep failed: ${detail}`)));
        return;
      }
      finish(() => resolve(results.sort(compareMatches).slice(0, limit)));
    });
  });
}
