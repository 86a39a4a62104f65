// Prefix-cache reuse by the forks: a ChatSession (no VS Code) replays a recorded session against the
// scripted server, and for every suggestion, speculation and pipelined-suggestion request we take the
// cached tokens the server's prefix-cache emulation reports, out of the prefix the request shares
// with the main chat's requests (from the server's canonical prompts).
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SUGGESTION_PROMPT } from '../../src/core/followup/suggestionGenerator';
import type { ChatRequest, LlmClient } from '../../src/core/llm/llmClient';
import { OpenAiCompatibleClient } from '../../src/core/llm/openAiCompatibleClient';
import type { ChatSession } from '../../src/core/session';
import { openWorkspaceServices } from '../../src/core/workspaceServices';
import { canonicalPrompt, commonPrefixLength } from '../../test/fixtures/scripted/canonicalPrompt';
import { demoReply } from '../../test/fixtures/scripted/demoScript';
import { ScriptedServer, type ChatRequestBody } from '../../test/fixtures/scriptedServer';
import { loadRecordedSession, recordedSessionChat, replayRecordedSession } from '../lib/recordedSession';
import type { Figure } from '../types';

type Kind = 'main' | 'suggestion' | 'speculation' | 'pipelined';
const FORK_KINDS: Exclude<Kind, 'main'>[] = ['suggestion', 'speculation', 'pipelined'];
const KIND_LABEL: Record<Exclude<Kind, 'main'>, string> = {
  suggestion: 'suggestion requests',
  speculation: 'speculation requests',
  pipelined: 'pipelined-suggestion requests',
};

/** Which part of the engine sent a request, judged when it is sent (nothing runs in parallel here). */
function classify(request: ChatRequest, session: ChatSession): Kind {
  const messages = request.messages;
  const last = messages[messages.length - 1];
  if (last?.role === 'user' && last.content === SUGGESTION_PROMPT) {
    // [system, ...saved history, prompt] is a suggestion; anything between history and prompt
    // (the speculated turns) makes it the pipelined suggestion.
    const saved = session.cacheSafeParams?.history.length ?? 0;
    return messages.length === saved + 2 ? 'suggestion' : 'pipelined';
  }
  return JSON.stringify(messages.slice(1)) === JSON.stringify(session.messages) ? 'main' : 'speculation';
}

export default async function cache(): Promise<Figure[]> {
  const recorded = loadRecordedSession();
  const scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'speculate-bench-cache-')));
  const workspace = path.join(scratch, 'workspace');
  const tmpRoot = path.join(scratch, 'tmp');
  cpSync(path.join(process.cwd(), 'test/fixtures/workspaces/demo'), workspace, { recursive: true });
  mkdirSync(tmpRoot);
  // The demo model without its pacing: timing plays no part in what is cached.
  const server = new ScriptedServer({ script: (request) => ({ ...demoReply(request.body ?? {}), latencyMs: 0, tokensPerSecond: undefined }) });
  await server.start();
  const sent: { kind: Kind; prompt: string }[] = [];
  let session: ChatSession | undefined;
  try {
    const services = await openWorkspaceServices(workspace, { tmpRoot });
    const client = new OpenAiCompatibleClient({ baseURL: server.baseUrl, apiKey: 'bench' });
    const llm: LlmClient = {
      stream: (request) => {
        if (session) sent.push({ kind: classify(request, session), prompt: canonicalPrompt({ messages: request.messages, tools: request.tools } as unknown as ChatRequestBody) });
        return client.stream(request);
      },
      listModels: (signal) => client.listModels(signal),
    };
    session = recordedSessionChat(recorded, services, llm);
    await replayRecordedSession(session, recorded);
  } finally {
    await session?.dispose();
    await server.close();
    rmSync(scratch, { recursive: true, force: true });
  }

  // Pair what the engine sent with what the server received (same canonical prompt, in order).
  const received = server.chatRequests.filter((r) => r.prompt !== '');
  const unmatched = [...sent];
  const requests = received.map((record) => {
    const at = unmatched.findIndex((s) => s.prompt === record.prompt);
    if (at < 0) throw new Error(`cache bench: the server got request #${record.index} that the engine did not send as such`);
    const [{ kind }] = unmatched.splice(at, 1);
    return { kind, prompt: record.prompt, cachedTokens: record.cachedTokens };
  });

  const shares: Record<Exclude<Kind, 'main'>, number[]> = { suggestion: [], speculation: [], pipelined: [] };
  const totals: Record<Exclude<Kind, 'main'>, { shared: number; cached: number }> = {
    suggestion: { shared: 0, cached: 0 },
    speculation: { shared: 0, cached: 0 },
    pipelined: { shared: 0, cached: 0 },
  };
  const mainPrompts: string[] = [];
  // A fork replays the main chat's last request byte for byte before adding its own messages; a
  // fork that diverged early would share a short prefix, which the shares above cannot see.
  const identical: number[] = [];
  for (const request of requests) {
    if (request.kind === 'main') {
      mainPrompts.push(request.prompt);
      continue;
    }
    const lastMain = mainPrompts[mainPrompts.length - 1];
    if (lastMain) identical.push((100 * commonPrefixLength(request.prompt, lastMain)) / lastMain.length);
    // 4 characters a token, as the server's emulation counts.
    const sharedTokens = Math.floor(Math.max(0, ...mainPrompts.map((main) => commonPrefixLength(request.prompt, main))) / 4);
    if (sharedTokens === 0) continue;
    const cached = Math.min(request.cachedTokens, sharedTokens);
    shares[request.kind].push((100 * cached) / sharedTokens);
    totals[request.kind].shared += sharedTokens;
    totals[request.kind].cached += cached;
  }
  const counts = `${requests.length} requests: ${mainPrompts.length} main, ${FORK_KINDS.map((k) => `${shares[k].length} ${k}`).join(', ')}`;
  const figures: Figure[] = FORK_KINDS.map((kind) => ({
    name: `cached share of the prefix shared with the main chat: ${KIND_LABEL[kind]}`,
    unit: '%' as const,
    samples: shares[kind],
    target: '100% of the shared prefix',
    note: `one sample per request; ${totals[kind].cached} of ${totals[kind].shared} shared-prefix tokens cached in all; ChatSession over test/fixtures/recorded/demo-tab-session.json with the demo model (${counts})`,
  }));
  figures.push({
    name: 'fork prompts that start with the main chat\'s whole last prompt',
    unit: '%',
    samples: identical,
    target: '100%',
    note: 'one sample per fork request (all three kinds): characters of the latest main request\'s canonical prompt that the fork repeats unchanged at its start',
  });
  return figures;
}
