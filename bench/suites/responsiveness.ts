// Does a speculation with heavy tool output keep the extension host responsive? The event-loop delay
// (perf_hooks.monitorEventLoopDelay) of this process while startSpeculation runs in it — as it does
// in the extension host — over a generated workspace: grep_search across thousands of files,
// read_file of multi-megabyte files, a large glob and a large write. The scripted model runs in a
// child process so its own work (prefix comparisons of long prompts) is not counted.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { CacheSafeParamsStore } from '../../src/core/followup/forkedQuery';
import { OverlayFs } from '../../src/core/followup/overlayFs';
import { startSpeculation } from '../../src/core/followup/speculation';
import { NodeWorkspaceFs } from '../../src/core/fs/nodeWorkspaceFs';
import { buildSystemPrompt } from '../../src/core/chat/systemPrompt';
import { OpenAiCompatibleClient } from '../../src/core/llm/openAiCompatibleClient';
import { NodeProcessRunner } from '../../src/core/process/nodeProcessRunner';
import { isShellCommandReadOnly } from '../../src/core/shell';
import { createToolRegistry } from '../../src/core/tools';
import type { ScriptedReply } from '../../test/fixtures/scriptedServer';
import type { Figure } from '../types';

const SOURCE_FILES = 3000;
const FILES_PER_FOLDER = 100;
const BIG_FILES = 3;
const BIG_FILE_BYTES = 8 * 1024 * 1024;
const WRITE_BYTES = 100 * 1024;
const SAMPLES = 5;
/** Finer than Node's default 10 ms: a run lasts well under a second of busy work. */
const RESOLUTION_MS = 1;
/** Event-loop stalls at least this long are attributed to what was running. */
const STALL_MS = 5;

type Backend = 'ripgrep' | 'javascript';

/** ~8 KB of TypeScript-looking text; every 20th file holds one rare marker line. */
function sourceText(i: number): string {
  const lines: string[] = [];
  for (let n = 0; n < 120; n++) lines.push(`export function item${i}_${n}Handler(input: string): string { return input.trim() + '${n}'; }`);
  if (i % 20 === 0) lines.splice(60, 0, `// TODO(bench): revisit item ${i}`);
  return lines.join('\n') + '\n';
}

async function makeWorkspace(root: string): Promise<void> {
  for (let f = 0; f < SOURCE_FILES / FILES_PER_FOLDER; f++) await mkdir(path.join(root, `pkg${f}`), { recursive: true });
  for (let start = 0; start < SOURCE_FILES; start += 100) {
    const batch: Promise<void>[] = [];
    for (let i = start; i < Math.min(SOURCE_FILES, start + 100); i++) {
      batch.push(writeFile(path.join(root, `pkg${Math.floor(i / FILES_PER_FOLDER)}`, `file${i}.ts`), sourceText(i)));
    }
    await Promise.all(batch);
  }
  await mkdir(path.join(root, 'logs'));
  const line = '2024-05-01T12:00:00Z INFO request handled in 12 ms path=/api/items status=200 bytes=5123\n';
  const big = line.repeat(Math.ceil(BIG_FILE_BYTES / line.length));
  for (let b = 0; b < BIG_FILES; b++) await writeFile(path.join(root, 'logs', `server${b}.log`), big);
}

/** One speculation's replies: six heavy tool turns, then the answer. */
function speculationReplies(): ScriptedReply[] {
  const report = `# Findings\n\n${'- item handled, see logs for timing details and the call sites listed above\n'.repeat(Math.ceil(WRITE_BYTES / 80))}`;
  return [
    { text: 'Looking for the open TODOs.', toolCalls: [{ name: 'grep_search', arguments: { pattern: 'TODO\\(bench\\)' } }] },
    { text: 'And the handlers.', toolCalls: [{ name: 'grep_search', arguments: { pattern: 'function\\s+item\\d+_\\d+Handler', glob: '*.ts' } }] },
    { text: 'Reading the server log.', toolCalls: [{ name: 'read_file', arguments: { file_path: 'logs/server0.log' } }] },
    { text: 'Further down.', toolCalls: [{ name: 'read_file', arguments: { file_path: 'logs/server1.log', offset: 50_000, limit: 2_000 } }] },
    { text: 'All sources.', toolCalls: [{ name: 'glob', arguments: { pattern: '**/*.ts' } }] },
    { text: 'Writing the report.', toolCalls: [{ name: 'write_file', arguments: { file_path: 'REPORT.md', content: report } }] },
    { text: 'I wrote REPORT.md with what I found.' },
  ];
}

/** The scripted model in a child process, answering a fixed queue of replies in order. */
async function startModel(scriptFile: string): Promise<{ url: string; child: ChildProcess }> {
  const main = path.join(__dirname, '..', '..', 'test', 'fixtures', 'scriptedServerMain.js');
  const child = spawn(process.execPath, [main, '--script', scriptFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolve(line.trim()));
    child.once('exit', (code) => reject(new Error(`the scripted model exited with code ${code}`)));
  });
  return { url, child };
}

interface RunResult {
  p99: number[];
  max: number[];
  seconds: number[];
  /** The longest stall seen in each phase (a tool's run, or "model I/O" between tools). */
  worstByPhase: Map<string, number>;
}

/**
 * Times every turn of a 1 ms timer; a turn that came late was blocked, and the block is charged
 * to the phase that was running when it began.
 */
class StallRecorder {
  private phases: { name: string; from: number }[] = [];
  private stalls: { start: number; ms: number }[] = [];
  private timer: NodeJS.Timeout | undefined;

  start(): void {
    this.phases = [{ name: 'model I/O', from: performance.now() }];
    this.stalls = [];
    let last = performance.now();
    const tick = () => {
      const now = performance.now();
      const late = now - last - 1;
      if (late >= STALL_MS) this.stalls.push({ start: now - late, ms: late });
      last = now;
      this.timer = setTimeout(tick, 1);
    };
    this.timer = setTimeout(tick, 1);
  }

  phase(name: string): void {
    this.phases.push({ name, from: performance.now() });
  }

  stop(into: Map<string, number>): void {
    clearTimeout(this.timer);
    for (const stall of this.stalls) {
      let name = 'model I/O';
      for (const phase of this.phases) if (phase.from <= stall.start) name = phase.name;
      into.set(name, Math.max(into.get(name) ?? 0, stall.ms));
    }
  }
}

async function measure(backend: Backend, root: string, tmpRoot: string, modelUrl: string): Promise<RunResult> {
  const fs = await NodeWorkspaceFs.open(root, backend === 'javascript' ? { ripgrepPath: null } : {});
  if (fs.searchBackend !== backend) throw new Error(`responsiveness bench: wanted the ${backend} search but got ${fs.searchBackend} (is rg on PATH?)`);
  const tools = createToolRegistry();
  const llm = new OpenAiCompatibleClient({ baseURL: modelUrl, apiKey: 'bench' });
  const params = new CacheSafeParamsStore().save({
    systemPrompt: buildSystemPrompt({ workspaceRoot: fs.root, platform: process.platform }),
    tools: tools.definitions(),
    history: [
      { role: 'user', content: 'how is the workspace organised?' },
      { role: 'assistant', content: 'Thirty packages of handlers and a logs folder.' },
    ],
    model: 'scripted-model',
  });
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  const result: RunResult = { p99: [], max: [], seconds: [], worstByPhase: new Map() };
  const stalls = new StallRecorder();
  // One warm-up run (module loading, JIT, first ripgrep spawn) is left out.
  for (let i = 0; i <= SAMPLES; i++) {
    histogram.reset();
    histogram.enable();
    stalls.start();
    const started = performance.now();
    const speculation = startSpeculation('summarise the open TODOs and the server log', {
      llm,
      params,
      tools,
      approvalMode: 'auto-edit',
      createOverlay: () => OverlayFs.create({ base: fs, tmpRoot }),
      classifyShell: (command, directory) => isShellCommandReadOnly(command, { workspaceRoot: fs.root, cwd: directory }),
      toolContext: { processRunner: new NodeProcessRunner(), todos: { items: [] } },
      onEvent: (event) => {
        if (event.type === 'tool_start') stalls.phase(event.record.name);
        else if (event.type === 'tool_end') stalls.phase('model I/O');
      },
    });
    const final = await speculation.done;
    histogram.disable();
    const worst = i === 0 ? new Map<string, number>() : result.worstByPhase;
    stalls.stop(worst);
    const elapsed = (performance.now() - started) / 1000;
    await speculation.disposeOverlay();
    if (final.status !== 'completed') throw new Error(`responsiveness bench: the speculation ended ${final.status}: ${final.error ?? ''}`);
    const failed = final.toolCalls.filter((call) => !call.ok);
    if (final.toolCalls.length !== 6 || failed.length > 0) throw new Error(`responsiveness bench: tool calls failed: ${failed.map((c) => `${c.name}: ${c.result}`).join('; ')}`);
    if (i === 0) continue;
    result.p99.push(histogram.percentile(99) / 1e6);
    result.max.push(histogram.max / 1e6);
    result.seconds.push(elapsed);
  }
  return result;
}

/** The same histogram over an idle stretch: what this (shared, noisy) machine gives at rest. */
async function idleBaseline(seconds: number): Promise<{ p99: number; max: number }> {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  histogram.disable();
  return { p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6 };
}

function phaseSummary(worst: Map<string, number>): string {
  if (worst.size === 0) return 'none';
  return [...worst].sort((a, b) => b[1] - a[1]).map(([name, ms]) => `${name} ${ms.toFixed(0)} ms`).join(', ');
}

export default async function responsiveness(): Promise<Figure[]> {
  const scratch = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-bench-resp-')));
  const root = path.join(scratch, 'ws');
  const tmpRoot = path.join(scratch, 'tmp');
  const scriptFile = path.join(scratch, 'replies.json');
  const backends: Backend[] = ['ripgrep', 'javascript'];
  let model: ChildProcess | undefined;
  const figures: Figure[] = [];
  try {
    await mkdir(root);
    await mkdir(tmpRoot);
    await makeWorkspace(root);
    const runs = backends.length * (SAMPLES + 1);
    await writeFile(scriptFile, JSON.stringify(Array.from({ length: runs }, speculationReplies).flat()));
    const started = await startModel(scriptFile);
    model = started.child;
    const idle = await idleBaseline(2);
    for (const backend of backends) {
      const result = await measure(backend, root, tmpRoot, started.url);
      const what = `speculation of 6 tool turns (grep_search ×2 over ${SOURCE_FILES} files × 8 KB, read_file of ${BIG_FILE_BYTES / 2 ** 20} MB logs ×2, glob of ${SOURCE_FILES} paths, write_file of ${WRITE_BYTES / 1024} KB) with the ${backend === 'ripgrep' ? 'ripgrep (rg on PATH)' : 'JavaScript (no rg)'} search`;
      const seconds = result.seconds.reduce((a, b) => a + b, 0) / result.seconds.length;
      figures.push(
        {
          name: `event-loop delay p99 during a heavy speculation, ${backend} search`,
          unit: 'ms',
          samples: result.p99,
          note: `monitorEventLoopDelay(resolution ${RESOLUTION_MS} ms) over one ${what}; ${SAMPLES} runs after a warm-up, ~${seconds.toFixed(1)} s each; idle baseline p99 ${idle.p99.toFixed(1)} ms`,
        },
        {
          name: `event-loop delay max during a heavy speculation, ${backend} search`,
          unit: 'ms',
          samples: result.max,
          note: `the longest single block of the event loop per run; idle baseline max ${idle.max.toFixed(1)} ms; longest stall (≥ ${STALL_MS} ms) by phase over all runs: ${phaseSummary(result.worstByPhase)}`,
        },
      );
    }
  } finally {
    model?.kill('SIGTERM');
    await rm(scratch, { recursive: true, force: true });
  }
  return figures;
}
