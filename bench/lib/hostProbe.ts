// Loaded into the real extension host as an "extension tests" module (extensionTestsPath) by the
// benchmarks: reads the extension's activationMs and timestamps the host's side of Tab and Enter.
// It writes JSON lines to SPECULATE_BENCH_PROBE_OUT and never ends the test run (the bench closes VS Code).
import { appendFileSync } from 'node:fs';
import * as vscode from 'vscode';
import type { SpeculateApi } from '../../src/extension';
import type { HostToWebview, WebviewToHost } from '../../src/shared/protocol';

const EXTENSION_ID = 'speculate.speculate';
/** Host → webview messages whose send time the Tab benchmark needs (not the per-token deltas). */
const POSTS_TO_RECORD = new Set<HostToWebview['type']>(['appendItems', 'userMessage', 'assistantEnd', 'notice', 'turnState']);

export interface ProbeLine {
  ev: 'probe_start' | 'activated' | 'recv' | 'apply_start' | 'apply_end' | 'handled' | 'post' | 'error';
  /** Wall-clock milliseconds with sub-millisecond precision (comparable across processes). */
  at: number;
  type?: string;
  activationMs?: number;
  wasActive?: boolean;
  detail?: string;
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

function instrument(api: SpeculateApi, record: (line: ProbeLine) => void): void {
  const controller = api.controller;
  const handle = controller.handleWebviewMessage.bind(controller);
  // The chat view calls controller.handleWebviewMessage through `this`, so an own property wins.
  controller.handleWebviewMessage = async (message: WebviewToHost) => {
    const timed = message.type === 'acceptSuggestion' || message.type === 'submit';
    if (timed) {
      record({ ev: 'recv', at: wallNow(), type: message.type });
      const overlay = controller.currentSession?.currentOverlay;
      if (message.type === 'acceptSuggestion' && overlay) {
        const apply = overlay.applyToReal.bind(overlay);
        overlay.applyToReal = async (options) => {
          record({ ev: 'apply_start', at: wallNow() });
          try {
            return await apply(options);
          } finally {
            record({ ev: 'apply_end', at: wallNow() });
          }
        };
      }
    }
    await handle(message);
    if (timed) record({ ev: 'handled', at: wallNow(), type: message.type });
  };
  controller.onDidPostToWebview((message) => {
    if (POSTS_TO_RECORD.has(message.type)) record({ ev: 'post', at: wallNow(), type: message.type });
  });
}
