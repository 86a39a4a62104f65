// Loaded into the real extension host as an "extension tests" module (extensionTestsPath) by the
// benchmarks: reads the extension's activationMs and timestamps the host's side of Tab and Enter.
// It writes JSON lines to SPECULATE_BENCH_PROBE_OUT and never ends the test run (the bench closes VS Code).
import { appendFileSync } from 'node:fs';
import * as vscode from 'vscode';
import type { SpeculateApi } from '../../src/extension';
import type { HostToWebview, WebviewToHost } from '../../src/shared/protocol';

const EXTENSION_ID = 'speculate.speculate';
/** Host → webview messages whose send time the Tab benchmark needs (not the per-token deltas). */
const POSTS_TO_RECORD = new Set<HostToWebview['type']>(['appendItems', 'userMessage', 'assistantEnd', 'notice', 'turnState', 'revealAnswer']);

export interface ProbeLine {
  ev: 'probe_start' | 'activated' | 'recv' | 'apply_start' | 'apply_end' | 'handled' | 'post' | 'error';
  /** Wall-clock milliseconds with sub-millisecond precision (comparable across processes). */
  at: number;
  type?: string;
  activationMs?: number;
  wasActive?: boolean;
  detail?: string;
  /** For an appendItems post: the kinds of the items it carried (a turn's own items, or only its turn-end line). */
  kinds?: string[];
}

/** performance.timeOrigin + performance.now(): the same clock in Node and in Chromium. */
function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

export async function run(): Promise<void> {
  const out = process.env.SPECULATE_BENCH_PROBE_OUT;
  const pending: ProbeLine[] = [];
  const flush = () => {
    if (!out || pending.length === 0) return;
    appendFileSync(out, pending.splice(0).map((line) => JSON.stringify(line) + '\n').join(''));
  };
  // Off the hot path: lines are buffered and written a few times a second.
  setInterval(flush, 100).unref();
  const record = (line: ProbeLine) => pending.push(line);

  const extension = vscode.extensions.getExtension<SpeculateApi>(EXTENSION_ID);
  if (!extension) {
    record({ ev: 'error', at: wallNow(), detail: `extension ${EXTENSION_ID} is not installed` });
    flush();
    return new Promise<void>(() => undefined);
  }
  record({ ev: 'probe_start', at: wallNow(), wasActive: extension.isActive });
  // The probe does not activate the extension: the bench opens the chat view (its activation event).
  while (!extension.isActive) await new Promise((resolve) => setTimeout(resolve, 5));
  const api = extension.exports;
  record({ ev: 'activated', at: wallNow(), activationMs: api.activationMs });
  instrument(api, record);
  flush();
  // Never resolves: a resolved run() would close the workbench under the benchmark.
  return new Promise<void>(() => undefined);
}

/** Per-kind count and summed milliseconds of what an apply is made of. */
export type DiskOps = Record<string, { count: number; ms: number }>;

/**
 * Wraps the overlay's disk port (a private field, reached for measurement only) so every
 * operation of the accept is timed; returns a reader of the totals.
 */
function timeDiskOperations(overlay: object): () => DiskOps {
  const holder = overlay as { applyFs?: Record<string, unknown> };
  const original = holder.applyFs;
  const totals: DiskOps = {};
  if (!original) return () => totals;
  const timed: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(original)) {
    if (typeof value !== 'function') continue;
    timed[name] = async (...args: unknown[]) => {
      const started = performance.now();
      try {
        return await (value as (...a: unknown[]) => Promise<unknown>).apply(original, args);
      } finally {
        const entry = (totals[name] ??= { count: 0, ms: 0 });
        entry.count++;
        entry.ms += performance.now() - started;
      }
    };
  }
  holder.applyFs = timed;
  return () => {
    holder.applyFs = original;
    return totals;
  };
}

/** A 1 ms timer whose lateness shows how busy the host's event loop is; returns the worst lag. */
function sampleLoopLag(): () => number {
  let worst = 0;
  let last = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 1);
    last = now;
    timer = setTimeout(tick, 1);
  };
  timer = setTimeout(tick, 1);
  return () => {
    clearTimeout(timer);
    return Math.max(worst, performance.now() - last - 1);
  };
}

function instrument(api: SpeculateApi, record: (line: ProbeLine) => void): void {
  const controller = api.controller;
  const handle = controller.handleWebviewMessage.bind(controller);
  // The chat view calls controller.handleWebviewMessage through `this`, so an own property wins.
  controller.handleWebviewMessage = async (message: WebviewToHost) => {
    const accept = message.type === 'acceptSuggestion' || message.type === 'acceptRevealed';
    const timed = accept || message.type === 'submit';
    if (timed) {
      record({ ev: 'recv', at: wallNow(), type: message.type });
      const overlay = controller.currentSession?.currentOverlay;
      if (accept && overlay) {
        const apply = overlay.applyToReal.bind(overlay);
        overlay.applyToReal = async (options) => {
          const ops = timeDiskOperations(overlay);
          const lag = sampleLoopLag();
          record({ ev: 'apply_start', at: wallNow() });
          try {
            return await apply(options);
          } finally {
            record({ ev: 'apply_end', at: wallNow(), detail: JSON.stringify({ ops: ops(), maxLagMs: lag() }) });
          }
        };
      }
    }
    await handle(message);
    if (timed) record({ ev: 'handled', at: wallNow(), type: message.type });
  };
  controller.onDidPostToWebview((message) => {
    if (!POSTS_TO_RECORD.has(message.type)) return;
    record({ ev: 'post', at: wallNow(), type: message.type, ...(message.type === 'appendItems' ? { kinds: message.items.map((item) => item.kind) } : {}) });
  });
}
