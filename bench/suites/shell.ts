// How fast the shell classifier is: cold start (web-tree-sitter runtime + bash grammar, measured in
// a fresh Node process per sample), per-command classification over the corpus after warm-up, and
// how many of the corpus's inspection commands it lets speculation run.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { isShellCommandReadOnly, type ShellCheckContext } from '../../src/core/shell';
import type { Figure } from '../types';

interface CorpusCase {
  command: string;
  readOnly: boolean;
  kind: 'inspection' | 'adversarial';
}

const COLD_SAMPLES = 5;
const WARM_UP_ROUNDS = 3;
const MEASURED_ROUNDS = 10;

/** One cold start: require the module and classify one command, in a process of its own. */
function coldStart(): number {
  const shellModule = path.join(__dirname, '..', '..', 'src', 'core', 'shell', 'index.js');
  const script = `
    const start = performance.now();
    const shell = require(${JSON.stringify(shellModule)});
    shell.isShellCommandReadOnly('git status').then((verdict) => {
      if (!verdict.readOnly) throw new Error(verdict.reason);
      console.log(performance.now() - start);
    });`;
  return Number(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim());
}

export default async function shell(): Promise<Figure[]> {
  const cases = JSON.parse(readFileSync(path.join(process.cwd(), 'test', 'fixtures', 'shell-corpus.json'), 'utf8')) as CorpusCase[];
  // The corpus test's workspace: a few folders, the system PATH (verdicts must not depend on shims).
  const workspace = realpathSync(mkdtempSync(path.join(tmpdir(), 'bench-shell-')));
  for (const folder of ['src', 'docs', 'test']) mkdirSync(path.join(workspace, folder));
  const context: ShellCheckContext = { workspaceRoot: workspace, pathValue: '/usr/bin:/bin' };
  try {
    return await measure(cases, context);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

async function measure(cases: CorpusCase[], context: ShellCheckContext): Promise<Figure[]> {

  const cold: number[] = [];
  for (let i = 0; i < COLD_SAMPLES; i++) cold.push(coldStart());

  for (let round = 0; round < WARM_UP_ROUNDS; round++) {
    for (const c of cases) await isShellCommandReadOnly(c.command, context);
  }
  const perCommand: number[] = [];
  for (let round = 0; round < MEASURED_ROUNDS; round++) {
    for (const c of cases) {
      const start = process.hrtime.bigint();
      await isShellCommandReadOnly(c.command, context);
      perCommand.push(Number(process.hrtime.bigint() - start) / 1000);
    }
  }

  const inspection = cases.filter((c) => c.kind === 'inspection');
  let accepted = 0;
  for (const c of inspection) if ((await isShellCommandReadOnly(c.command, context)).readOnly) accepted++;

  return [
    {
      name: 'cold initialisation (require + runtime + grammar + first verdict)',
      unit: 'ms',
      samples: cold,
      target: '≤ 120 ms',
      note: `fresh node process per sample, ${COLD_SAMPLES} samples`,
    },
    {
      name: 'classification per command',
      unit: 'µs',
      samples: perCommand,
      target: '≤ 25 µs median, ≤ 300 µs p99',
      note: `${cases.length} corpus commands × ${MEASURED_ROUNDS} rounds after ${WARM_UP_ROUNDS} warm-up rounds`,
    },
    {
      name: 'inspection commands accepted',
      unit: '%',
      samples: [(100 * accepted) / inspection.length],
      target: '≥ 95%',
      note: `${accepted} of ${inspection.length} inspection commands in the corpus of ${cases.length} (${cases.length - inspection.length} adversarial; the rest refused for safety, each with its reason)`,
    },
  ];
}
