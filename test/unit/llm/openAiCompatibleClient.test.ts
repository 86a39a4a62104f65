// The OpenAI-compatible client against the scripted server: streaming, tool-call assembly, abort,
// retries, timeouts, error texts, DashScope cache marks and the thinking switch.
import * as assert from 'node:assert/strict';
import type { ChatMessage, ToolDefinition } from '../../../src/core/messages';
import { LlmError, type ChatRequest, type LlmEvent } from '../../../src/core/llm/llmClient';
import { OpenAiCompatibleClient, type OpenAiCompatibleClientOptions } from '../../../src/core/llm/openAiCompatibleClient';
import { ScriptedServer } from '../../fixtures/scriptedServer';

const TOOLS: ToolDefinition[] = [
  { type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] } } },
  { type: 'function', function: { name: 'edit', description: 'Edit a file', parameters: { type: 'object', properties: { file_path: { type: 'string' } } } } },
];

function request(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: 'scripted-model',
    messages: [
      { role: 'system', content: 'You are a test.' },
      { role: 'user', content: 'Read a.ts' },
    ],
    tools: TOOLS,
    ...overrides,
  };
}

async function collect(events: AsyncIterable<LlmEvent>): Promise<LlmEvent[]> {
  const seen: LlmEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

async function failure(events: AsyncIterable<LlmEvent>): Promise<LlmError> {
  try {
    await collect(events);
  } catch (error) {
    assert.ok(error instanceof LlmError, `expected an LlmError, got ${String(error)}`);
    return error;
  }
  assert.fail('the stream was expected to fail');
}

function doneOf(events: LlmEvent[]): Extract<LlmEvent, { type: 'done' }> {
  const done = events.find((e): e is Extract<LlmEvent, { type: 'done' }> => e.type === 'done');
  assert.ok(done, 'a done event');
  return done;
}

describe('OpenAiCompatibleClient', () => {
  let server: ScriptedServer;
  const client = (options: Partial<OpenAiCompatibleClientOptions> = {}) =>
    new OpenAiCompatibleClient({ baseURL: server.baseUrl, apiKey: 'test-key', retry: { baseDelayMs: 1 }, ...options });

  beforeEach(async () => {
    server = new ScriptedServer();
    await server.start();
  });
  afterEach(async () => {
    await server.close();
  });

  it('streams text and reasoning deltas and ends with the whole message and usage', async () => {
    server.setScript([{ reasoning: 'Let me think.', text: 'Hello there, world.' }]);
    const events = await collect(client().stream(request()));
    const text = events.flatMap((e) => (e.type === 'text' ? [e.delta] : [])).join('');
    const reasoning = events.flatMap((e) => (e.type === 'reasoning' ? [e.delta] : [])).join('');
    assert.equal(text, 'Hello there, world.');
    assert.equal(reasoning, 'Let me think.');
    assert.ok(events.filter((e) => e.type === 'text').length > 1, 'the text arrived in several deltas');
    const done = doneOf(events);
    assert.deepEqual(done.message, { role: 'assistant', content: 'Hello there, world.' });
    assert.equal(done.finishReason, 'stop');
    assert.ok(done.usage.promptTokens > 0);
    assert.deepEqual(server.chatRequests[0].body?.stream_options, { include_usage: true });
  });

  it('assembles tool-call arguments that arrive in fragments, by index', async () => {
    server.setScript([
      {
        text: 'Reading both.',
        toolCalls: [
          { name: 'read_file', arguments: { file_path: 'src/a.ts', offset: 10 } },
          { id: 'call_given', name: 'edit', arguments: { file_path: 'b.ts', old_string: 'x', new_string: 'y' } },
        ],
      },
    ]);
    const events = await collect(client().stream(request()));
    const starts = events.filter((e) => e.type === 'tool_call_start');
    assert.deepEqual(
      starts.map((e) => (e.type === 'tool_call_start' ? [e.index, e.name] : [])),
      [
        [0, 'read_file'],
        [1, 'edit'],
      ],
    );
    const done = doneOf(events);
    assert.equal(done.finishReason, 'tool_calls');
    assert.equal(done.message.content, 'Reading both.');
    const calls = done.message.tool_calls ?? [];
    assert.equal(calls.length, 2);
    assert.deepEqual(JSON.parse(calls[0].function.arguments), { file_path: 'src/a.ts', offset: 10 });
    assert.equal(calls[1].id, 'call_given');
    assert.equal(calls[1].function.name, 'edit');
    assert.deepEqual(JSON.parse(calls[1].function.arguments), { file_path: 'b.ts', old_string: 'x', new_string: 'y' });
  });

  it('passes malformed arguments through raw so the loop can answer them', async () => {
    server.setScript([{ toolCalls: [{ name: 'read_file', arguments: '{"file_path": "a.ts"' }] }]);
    const done = doneOf(await collect(client().stream(request())));
    assert.equal(done.message.content, null);
    assert.equal(done.message.tool_calls?.[0].function.arguments, '{"file_path": "a.ts"');
  });

  it('aborting mid-stream throws "aborted" and the server sees the connection close', async () => {
    server.setScript([{ text: 'one two three four five six seven eight nine ten', tokensPerSecond: 50 }]);
    const abort = new AbortController();
    const error = await failure(
      (async function* () {
        for await (const event of client().stream(request({ signal: abort.signal }))) {
          yield event;
          if (event.type === 'text') abort.abort();
        }
      })(),
    );
    assert.equal(error.kind, 'aborted');
    assert.equal(await server.waitForClientClose(server.chatRequests[0]), true);
  });

  it('aborting before the first token (while the server is still thinking) also closes the socket', async () => {
    server.setScript([{ text: 'late', latencyMs: 5_000 }]);
    const abort = new AbortController();
    const pending = failure(client().stream(request({ signal: abort.signal })));
    assert.equal(await server.waitForChatRequests(1), true);
    abort.abort();
    assert.equal((await pending).kind, 'aborted');
    assert.equal(await server.waitForClientClose(server.chatRequests[0]), true);
  });

  it('a consumer that stops iterating early closes the socket too', async () => {
    server.setScript([{ text: 'one two three four five six seven eight', tokensPerSecond: 50 }]);
    for await (const event of client().stream(request())) {
      if (event.type === 'text') break;
    }
    assert.equal(await server.waitForClientClose(server.chatRequests[0]), true);
  });

  it('retries a 503 and then streams the answer', async () => {
    server.setScript([{ status: 503 }, { text: 'recovered' }]);
    const done = doneOf(await collect(client().stream(request())));
    assert.equal(done.message.content, 'recovered');
    assert.equal(server.chatRequests.length, 2);
  });

  it('retries a 429 that carries Retry-After', async () => {
    server.setScript([{ status: 429, headers: { 'retry-after': '0' } }, { text: 'ok' }]);
    const done = doneOf(await collect(client().stream(request())));
    assert.equal(done.message.content, 'ok');
    assert.equal(server.chatRequests.length, 2);
  });

  it('gives up after the configured attempts with a server error that says so', async () => {
    server.setScript([{ status: 502 }, { status: 502 }, { status: 502 }, { text: 'too late' }]);
    const error = await failure(client({ retry: { maxAttempts: 3, baseDelayMs: 1 } }).stream(request()));
    assert.equal(error.kind, 'server');
    assert.equal(error.status, 502);
    assert.match(error.message, /502/);
    assert.match(error.message, /3 attempts/);
    assert.equal(server.chatRequests.length, 3);
  });

  it('a rejected key is an auth error that points at "Speculate: Set API Key", without retrying', async () => {
    server.setScript([{ status: 401, body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } } }]);
    const error = await failure(client().stream(request()));
    assert.equal(error.kind, 'auth');
    assert.match(error.message, /rejected the API key/);
    assert.match(error.message, /Speculate: Set API Key/);
    assert.match(error.message, /Incorrect API key provided/);
    assert.equal(server.chatRequests.length, 1);
  });

  it('403 is an auth error too', async () => {
    server.setScript([{ status: 403 }]);
    assert.equal((await failure(client().stream(request()))).kind, 'auth');
  });

  it('404 names both the model and the base URL', async () => {
    server.setScript([{ status: 404, body: { error: { message: 'The model `nope` does not exist', type: 'invalid_request_error' } } }]);
    const error = await failure(client().stream(request({ model: 'nope' })));
    assert.equal(error.kind, 'not_found');
    assert.match(error.message, /"nope"/);
    assert.ok(error.message.includes(server.baseUrl), error.message);
    assert.match(error.message, /speculate\.baseUrl/);
  });

  it('400 is a bad_request that shows the server reason', async () => {
    server.setScript([{ status: 400, body: { error: { message: 'maximum context length exceeded', type: 'invalid_request_error' } } }]);
    const error = await failure(client().stream(request()));
    assert.equal(error.kind, 'bad_request');
    assert.match(error.message, /maximum context length exceeded/);
    assert.equal(server.chatRequests.length, 1);
  });

  it('an unreachable endpoint is a network error naming the URL and the setting', async () => {
    const closed = new ScriptedServer();
    const url = await closed.start();
    await closed.close();
    const error = await failure(new OpenAiCompatibleClient({ baseURL: url, retry: { baseDelayMs: 1 } }).stream(request()));
    assert.equal(error.kind, 'network');
    assert.ok(error.message.includes(url), error.message);
    assert.match(error.message, /ECONNREFUSED/);
    assert.match(error.message, /speculate\.baseUrl/);
  });

  it('a stream cut after tokens reached the caller fails without a retry', async () => {
    server.setScript([{ text: 'one two three four five six', cutAfterChunks: 3 }, { text: 'should not be requested' }]);
    const seen: LlmEvent[] = [];
    const error = await failure(
      (async function* () {
        for await (const event of client().stream(request())) {
          seen.push(event);
          yield event;
        }
      })(),
    );
    assert.equal(error.kind, 'network');
    assert.ok(seen.some((e) => e.type === 'text'), 'some text arrived before the cut');
    assert.equal(server.chatRequests.length, 1);
  });

  it('a stream cut before any token is retried', async () => {
    server.setScript([{ text: 'lost', cutAfterChunks: 1 }, { text: 'second try' }]);
    const done = doneOf(await collect(client().stream(request())));
    assert.equal(done.message.content, 'second try');
    assert.equal(server.chatRequests.length, 2);
  });

  it('a stream that ends without finishing is an error, not a short answer', async () => {
    server.setScript([{ text: 'half an answer', finishReason: null }]);
    const error = await failure(client({ retry: { maxAttempts: 1 } }).stream(request()));
    assert.equal(error.kind, 'network');
    assert.match(error.message, /stopped before the model finished/);
  });

  it('a server silent before the first token times out', async () => {
    server.setScript([{ text: 'late', latencyMs: 3_000 }]);
    // Short against the server's 3 s, long enough that a stall on a loaded machine still lets the
    // request reach the server before the watchdog fires.
    const error = await failure(client({ firstTokenTimeoutMs: 500 }).stream(request()));
    assert.equal(error.kind, 'timeout');
    assert.ok(error.message.includes(server.baseUrl));
    assert.equal(await server.waitForChatRequests(1), true, 'the request reached the server');
    assert.equal(await server.waitForClientClose(server.chatRequests[0]), true);
  });

  it('a server that goes silent mid-stream times out', async () => {
    server.setScript([{ text: 'one two three four', stallAfterChunks: 2 }]);
    const error = await failure(client({ idleTimeoutMs: 50 }).stream(request()));
    assert.equal(error.kind, 'timeout');
  });

  it('a chunk that is not JSON is a bad_response', async () => {
    server.setScript([{ rawData: '{not json' }]);
    const error = await failure(client({ retry: { maxAttempts: 1 } }).stream(request()));
    assert.equal(error.kind, 'bad_response');
    assert.match(error.message, /not a valid OpenAI-compatible/);
  });

  it('an already aborted signal sends nothing', async () => {
    const abort = new AbortController();
    abort.abort();
    assert.equal((await failure(client().stream(request({ signal: abort.signal })))).kind, 'aborted');
    assert.equal(server.chatRequests.length, 0);
  });

  it('sends the key as a bearer token, and a placeholder when there is none', async () => {
    server.setScript([{ text: 'a' }, { text: 'b' }]);
    await collect(client({ apiKey: 'sk-real' }).stream(request()));
    await collect(client({ apiKey: '' }).stream(request()));
    assert.equal(server.chatRequests[0].headers.authorization, 'Bearer sk-real');
    assert.equal(server.chatRequests[1].headers.authorization, 'Bearer not-needed');
  });

  it('sends through a fetch passed in the options', async () => {
    server.setScript([{ text: 'via custom fetch' }]);
    const seen: string[] = [];
    const customFetch: typeof fetch = (input, init) => {
      seen.push(String(input instanceof Request ? input.url : input));
      return fetch(input, init);
    };
    const done = doneOf(await collect(client({ fetch: customFetch }).stream(request())));
    assert.equal(done.message.content, 'via custom fetch');
    assert.deepEqual(seen, [`${server.baseUrl}/chat/completions`]);
  });

  it('lists the endpoint models', async () => {
    assert.deepEqual(await client().listModels(), ['scripted-fast', 'scripted-model']);
  });

  it('listing models on a wrong base URL says to check the setting', async () => {
    const wrong = new OpenAiCompatibleClient({ baseURL: server.baseUrl.replace(/\/v1$/, '/wrong'), retry: { baseDelayMs: 1 } });
    await assert.rejects(wrong.listModels(), (error: unknown) => error instanceof LlmError && error.kind === 'not_found' && /speculate\.baseUrl/.test(error.message));
  });

  describe('thinking switch', () => {
    it('thinking:false sends chat_template_kwargs to a local server; otherwise nothing', async () => {
      server.setScript([{ text: 'a' }, { text: 'b' }]);
      await collect(client().stream(request({ thinking: false })));
      await collect(client().stream(request()));
      assert.deepEqual(server.chatRequests[0].body?.chat_template_kwargs, { enable_thinking: false });
      assert.equal(server.chatRequests[1].body?.chat_template_kwargs, undefined);
    });

    it('a profile override replaces the default switch', async () => {
      server.setScript([{ text: 'a' }]);
      await collect(client({ profile: { thinkingSwitches: ['enable_thinking'] } }).stream(request({ thinking: false })));
      assert.equal(server.chatRequests[0].body?.enable_thinking, false);
      assert.equal(server.chatRequests[0].body?.chat_template_kwargs, undefined);
    });
  });

  describe('DashScope prefix caching', () => {
    const history: ChatMessage[] = [
      { role: 'system', content: 'System prompt.' },
      { role: 'user', content: 'Read a.ts' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"file_path":"a.ts"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'export const a = 1;' },
    ];

    it('sends the header and marks the system message, the last tool and the latest message', async () => {
      server.setScript([{ text: 'ok' }]);
      const before = structuredClone(history);
      await collect(client({ prefixCaching: 'dashscope' }).stream(request({ messages: history })));
      const sent = server.chatRequests[0];
      assert.equal(sent.headers['x-dashscope-cachecontrol'], 'enable');
      const messages = sent.body?.messages ?? [];
      assert.deepEqual(messages[0].content, [{ type: 'text', text: 'System prompt.', cache_control: { type: 'ephemeral' } }]);
      assert.equal(messages[1].content, 'Read a.ts', 'older messages stay plain strings');
      assert.deepEqual(messages[3].content, [{ type: 'text', text: 'export const a = 1;', cache_control: { type: 'ephemeral' } }]);
      const tools = sent.body?.tools ?? [];
      assert.equal(tools[0].cache_control, undefined);
      assert.deepEqual(tools[1].cache_control, { type: 'ephemeral' });
      assert.deepEqual(history, before, 'the stored history is never changed');
    });

    it('when the latest message has no text, the mark goes on the message before it', async () => {
      server.setScript([{ text: 'ok' }]);
      await collect(client({ prefixCaching: 'dashscope' }).stream(request({ messages: history.slice(0, 3) })));
      const messages = server.chatRequests[0].body?.messages ?? [];
      assert.equal(messages[2].content, null);
      assert.deepEqual(messages[1].content, [{ type: 'text', text: 'Read a.ts', cache_control: { type: 'ephemeral' } }]);
    });

    it('is off by default: no header, no marks, string content', async () => {
      server.setScript([{ text: 'ok' }]);
      await collect(client().stream(request({ messages: history })));
      const sent = server.chatRequests[0];
      assert.equal(sent.headers['x-dashscope-cachecontrol'], undefined);
      assert.equal(sent.body?.messages?.[0].content, 'System prompt.');
      assert.ok((sent.body?.tools ?? []).every((t) => t.cache_control === undefined));
    });

    it('records the cached tokens the server reports', async () => {
      server.setScript([{ text: 'first' }, { text: 'second' }]);
      const first = doneOf(await collect(client({ prefixCaching: 'dashscope' }).stream(request({ messages: history }))));
      const second = doneOf(
        await collect(
          client({ prefixCaching: 'dashscope' }).stream(
            request({ messages: [...history, { role: 'assistant', content: 'first' }, { role: 'user', content: 'again' }] }),
          ),
        ),
      );
      assert.equal(first.usage.cachedTokens, 0);
      assert.equal(second.usage.cachedTokens, Math.floor(server.chatRequests[0].prompt.length / 4));
    });
  });
});
