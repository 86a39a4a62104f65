// Start overhead vs workspace size: the time from startSpeculation() to the first model request
// reaching the (scripted, local) server, for workspaces of 100, 10 000 and 100 000 small files.
// Starting must not look at the tree (the overlay is copy-on-write), so the figure must stay flat.
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CacheSafeParamsStore } from '../../src/core/followup/forkedQuery';
import { startSpeculation } from '../../src/core/followup/speculation';
import { OpenAiCompatibleClient } from '../../src/core/llm/openAiCompatibleClient';
import { openWorkspaceServices } from '../../src/core/workspaceServices';
import { ScriptedServer } from '../../test/fixtures/scriptedServer';
import type { Figure } from '../types';

const SIZES = [100, 10_000, 100_000];
const SAMPLES = 9;
const FILES_PER_FOLDER = 100;
const WRITE_BATCH = 128;

/** `count` files of ~60 bytes, 100 per folder, like a source tree. */
async function makeWorkspace(root: string, count: number): Promise<void> {
  const folders = Math.ceil(count / FILES_PER_FOLDER);
  for (let f = 0; f < folders; f++) await mkdir(path.join(root, `pkg${f}`), { recursive: true });
  for (let start = 0; start < count; start += WRITE_BATCH) {
    const batch: Promise<void>[] = [];
    for (let i = start; i < Math.min(count, start + WRITE_BATCH); i++) {
      batch.push(writeFile(path.join(root, `pkg${Math.floor(i / FILES_PER_FOLDER)}`, `file${i}.ts`), `export const value${i} = ${i};\n// padding for a small file\n`));
    }
    await Promise.all(batch);
  }
}

async function measure(root: string, tmpRoot: string): Promise<number[]> {
  let arrived: (() => void) | undefined;
  const server = new ScriptedServer({
    script: () => {
      // The moment the request body reached the server (headers and JSON body parsed).
      arrived?.();
      return { text: 'Done.' };
    },
  });
  await server.start();
  const services = await openWorkspaceServices(root, { tmpRoot });
  const llm = new OpenAiCompatibleClient({ baseURL: server.baseUrl, apiKey: 'bench' });
  const params = new CacheSafeParamsStore().save({
    systemPrompt: services.systemPrompt,
    tools: services.tools.definitions(),
    history: [
      { role: 'user', content: 'what does pkg0/file0.ts export?' },
      { role: 'assistant', content: 'It exports value0.' },
    ],
    model: 'scripted-model',
  });
  const samples: number[] = [];
  try {
    // One warm-up run (module loading, first socket) is left out of the figure.
    for (let i = 0; i <= SAMPLES; i++) {
      let reachedAt = 0;
      const reached = new Promise<void>((resolve) => {
        arrived = () => {
          reachedAt = performance.now();
          resolve();
        };
      });
      const startedAt = performance.now();
      const speculation = startSpeculation('now export value1 too', {
        llm,
        params,
        tools: services.tools,
        approvalMode: 'auto-edit',
        createOverlay: services.createOverlay,
        classifyShell: services.classifyShell,
        toolContext: services.toolContext,
      });
      await reached;
      const final = await speculation.done;
      await speculation.disposeOverlay();
      if (final.status !== 'completed') throw new Error(`speculation ended ${final.status}: ${final.error ?? ''}`);
      if (i > 0) samples.push(reachedAt - startedAt);
    }
  } finally {
    arrived = undefined;
    await server.close();
  }
  return samples;
}

export default async function engineStart(): Promise<Figure[]> {
  const scratch = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-bench-start-')));
  const tmpRoot = path.join(scratch, 'tmp');
  const figures: Figure[] = [];
  try {
    await mkdir(tmpRoot);
    for (const size of SIZES) {
      const root = path.join(scratch, `ws-${size}`);
      await makeWorkspace(root, size);
      const samples = await measure(root, tmpRoot);
      figures.push({
        name: `start → first model request, ${size.toLocaleString('en-US')} files`,
        unit: 'ms',
        samples,
        target: 'flat across workspace sizes',
        note: `startSpeculation() until the scripted server on 127.0.0.1 has the request (overlay folder created, fork request built and sent); ${SAMPLES} samples after one warm-up, workspace of ${size} files × ~60 B, ${FILES_PER_FOLDER} per folder`,
      });
      // The big trees are removed as soon as they are measured, so at most one is on disk.
      await rm(root, { recursive: true, force: true });
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return figures;
}
