// The pure parts behind provider handling: the error-body extractor, the SSE reader, endpoint URLs,
// how a refusal is read, what is learned and kept, and that nothing learned can make a request fail.
import * as assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { displayUrl, endpointKey, parseEndpoint } from '../../../src/core/llm/endpointUrl';
import { readServerError } from '../../../src/core/llm/errorBody';
import { stopKind } from '../../../src/core/llm/finishReason';
import { emptyLearnedEndpoint, FileLearnedProfileStore, LearnedProfiles, sanitize } from '../../../src/core/llm/learnedProfiles';
import { OpenAiCompatibleClient } from '../../../src/core/llm/openAiCompatibleClient';
import { parseEndpoint as shapeOf } from '../../../src/core/llm/endpointUrl';
import { providerProfile } from '../../../src/core/llm/providerProfile';
import { buildChatCompletionBody, PLAIN_SHAPE, wireArguments } from '../../../src/core/llm/requestBody';
import { adaptationsFor, learnAdaptation, resolveShape, type SentOptional } from '../../../src/core/llm/requestShape';
import { readSse } from '../../../src/core/llm/sse';
import { textualToolCallHint } from '../../../src/core/llm/textualToolCalls';
import { ReplayServer, routedFetch } from '../../fixtures/replay/replayServer';
import { requiresReasoningBack } from '../../fixtures/replay/servers/deepseek';
import { answerChunks, isChat, jsonReply, sse, streamReply } from '../../fixtures/replay/wire';
import { replayHistory, REPLAY_TOOLS } from '../../fixtures/replay/history';

async function events(text: string | string[], onBytes?: () => void): Promise<{ event: string | null; data: string }[]> {
  const encoder = new TextEncoder();
  const pieces = Array.isArray(text) ? text : [text];
  const source = (async function* () {
    for (const piece of pieces) yield encoder.encode(piece);
  })();
  const out: { event: string | null; data: string }[] = [];
  for await (const event of readSse(source, onBytes)) out.push(event);
  return out;
}

const NOTHING_SENT: SentOptional = { usage: false, thinkingSwitch: null, reasoning: false, toolExtras: false, couldSendReasoning: false };

describe('provider handling parts', () => {
  describe('readServerError: the server\'s words from any body', () => {
    const cases: [string, string, string][] = [
      ['OpenAI', '{"error":{"message":"Invalid model","type":"invalid_request_error","param":"model","code":null}}', 'Invalid model'],
      ['vLLM < 0.10.1', '{"object":"error","message":"maximum context length is 4096","type":"BadRequestError","param":null,"code":400}', 'maximum context length is 4096'],
      ['Mistral', '{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","stream_options","include_usage"],"msg":"Extra inputs are not permitted","input":true}]},"type":"invalid_request_error","param":null,"code":null}', 'body.stream_options.include_usage: Extra inputs are not permitted'],
      ['Mistral (message as a JSON string)', '{"object":"error","message":"{\\"detail\\":[{\\"type\\":\\"extra_forbidden\\",\\"loc\\":[\\"body\\",\\"frequency_penalty\\"],\\"msg\\":\\"Extra inputs are not permitted\\"}]}","type":"internal_error_proxy","param":null,"code":"1000"}', 'body.frequency_penalty: Extra inputs are not permitted'],
      ['Gemini array', '[{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \\"reasoning\\": Cannot find field.","status":"INVALID_ARGUMENT"}}]', 'Invalid JSON payload received. Unknown name "reasoning": Cannot find field.'],
      ['FastAPI detail', '{"detail":"Not authenticated"}', 'Not authenticated'],
      ['Ollama native', '{"error":"model \\"llama9\\" not found, try pulling it first"}', 'model "llama9" not found, try pulling it first'],
      ['plain text', 'upstream connect error or disconnect/reset before headers', 'upstream connect error or disconnect/reset before headers'],
      ['empty', '', 'no details'],
    ];
    for (const [name, body, text] of cases) {
      it(name, () => assert.equal(readServerError(body).text, text));
    }

    it('an HTML page comes down to its title', () => {
      assert.equal(readServerError('<html>\r\n<head><title>502 Bad Gateway</title></head><body><h1>502</h1></body></html>').text, '502 Bad Gateway (an HTML page, not an API answer)');
      assert.equal(readServerError('<!DOCTYPE html><html><body><h1>Just a moment&amp;…</h1></body></html>').text, 'Just a moment&… (an HTML page, not an API answer)');
    });

    it('names the refused field from param or a pydantic loc', () => {
      assert.equal(readServerError('{"error":{"message":"x","param":"stream_options","code":"unknown_parameter"}}').param, 'stream_options');
      assert.equal(readServerError('{"object":"error","message":{"detail":[{"loc":["body","messages",3,"assistant","reasoning_content"],"msg":"Extra inputs are not permitted"}]}}').param, 'reasoning_content');
    });

    it('keeps a status a body carries (mid-stream errors have no HTTP status of their own)', () => {
      assert.equal(readServerError('{"error":{"message":"x","code":"tool_use_failed","status_code":400}}').status, 400);
    });
  });

  describe('readSse', () => {
    it('reads data and event fields, skips comments, and counts every chunk as life', async () => {
      let bytes = 0;
      const got = await events([': OPENROUTER PROCESSING\n\n', ': OPENROUTER PROCESSING\n\n', 'data: {"a":1}\n\n', 'event: error\ndata: {"error":{}}\n\n', 'data: [DONE]\n\n'], () => bytes++);
      assert.deepEqual(got, [{ event: null, data: '{"a":1}' }, { event: 'error', data: '{"error":{}}' }, { event: null, data: '[DONE]' }]);
      assert.equal(bytes, 5, 'the comments counted');
    });

    it('handles CRLF, events split across chunks, multi-byte characters split in half, and no final blank line', async () => {
      const euro = new TextEncoder().encode('data: {"t":"€"}\r\n\r\ndata: {"t":"end"}');
      const source = (async function* () {
        yield euro.slice(0, 13);
        yield euro.slice(13);
      })();
      const out: string[] = [];
      for await (const event of readSse(source)) out.push(event.data);
      assert.deepEqual(out, ['{"t":"€"}', '{"t":"end"}']);
    });

    it('does not glue two JSON data lines when a server forgets the blank line between them', async () => {
      assert.deepEqual((await events('data: {"a":1}\ndata: {"b":2}\n\n')).map((e) => e.data), ['{"a":1}', '{"b":2}']);
    });
  });

  describe('endpoint URLs', () => {
    it('recognises Azure deployment URLs, keeping api-version out of the path', () => {
      assert.deepEqual(parseEndpoint('https://contoso.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-06-01'), {
        kind: 'azure-deployment',
        baseURL: 'https://contoso.openai.azure.com/openai',
        deployment: 'gpt4o',
        apiVersion: '2024-06-01',
        query: {},
      });
      const bare = parseEndpoint('https://contoso.openai.azure.com/', { apiVersion: '2025-01-01-preview' });
      assert.deepEqual(bare, { kind: 'azure-deployment', baseURL: 'https://contoso.openai.azure.com/openai', apiVersion: '2025-01-01-preview', query: {} });
      assert.equal(parseEndpoint('https://apim.example.com/gw/openai/deployments/x').kind, 'azure-deployment', 'a gateway path in front of Azure too');
    });

    it('recognises the /openai/v1 API and keeps other query parameters for a plain endpoint', () => {
      assert.deepEqual(parseEndpoint('https://contoso.openai.azure.com/openai/v1/'), { kind: 'azure-v1', baseURL: 'https://contoso.openai.azure.com/openai/v1', query: {} });
      assert.deepEqual(parseEndpoint('https://gw.example.com/v1?tenant=a'), { kind: 'openai', baseURL: 'https://gw.example.com/v1', query: { tenant: 'a' } });
    });

    it('never keys or shows a URL with its query or credentials', () => {
      assert.equal(endpointKey('https://Gw.Example.com/v1/?key=secret'), 'https://gw.example.com/v1');
      assert.equal(displayUrl('https://user:pw@gw.example.com/v1?key=secret'), 'https://gw.example.com/v1');
    });
  });

  describe('reading a refusal', () => {
    const sent: SentOptional = { usage: true, thinkingSwitch: 'chat_template_kwargs', reasoning: true, toolExtras: false, couldSendReasoning: true };
    it('drops every optional field a validator names at once', () => {
      const error = readServerError('{"object":"error","message":{"detail":[{"loc":["body","stream_options","include_usage"],"msg":"Extra inputs are not permitted"},{"loc":["body","chat_template_kwargs"],"msg":"Extra inputs are not permitted"},{"loc":["body","messages",2,"assistant","reasoning_content"],"msg":"Extra inputs are not permitted"}]}}');
      assert.deepEqual(adaptationsFor(422, error, sent, false).map((a) => a.kind === 'add' ? `add ${a.field}` : a.kind === 'drop' ? `drop ${a.field}` : `switch ${a.id}`), ['switch chat_template_kwargs', 'drop stream_options', 'drop reasoning_content']);
    });

    it('adds reasoning_content when the server asks for it, and never blames a field that was not sent', () => {
      const asks = readServerError('{"error":{"message":"The `reasoning_content` in the thinking mode must be passed back to the API."}}');
      assert.deepEqual(adaptationsFor(400, asks, { ...NOTHING_SENT, couldSendReasoning: true }, false), [{ kind: 'add', field: 'reasoning_content' }]);
      assert.deepEqual(adaptationsFor(400, readServerError('{"error":{"message":"Unrecognized request argument supplied: stream_options"}}'), NOTHING_SENT, false), []);
    });

    it('a refusal naming nothing costs at most one guess; a too-long request or another status none', () => {
      const vague = readServerError('{"error":{"message":"Budget 0 is invalid. This model only works in thinking mode."}}');
      assert.deepEqual(adaptationsFor(400, vague, sent, false), [{ kind: 'drop_switch', id: 'chat_template_kwargs', named: false }]);
      assert.deepEqual(adaptationsFor(400, vague, sent, true), []);
      assert.deepEqual(adaptationsFor(400, readServerError('{"error":{"message":"invalid: maximum context length is 8192 tokens"}}'), sent, false), []);
      assert.deepEqual(adaptationsFor(401, readServerError('{"error":{"message":"Unrecognized request argument supplied: stream_options"}}'), sent, false), []);
    });

    it('a strict validator refusing one switch is taken to refuse every non-OpenAI one: at most two refused forks', () => {
      const entry = emptyLearnedEndpoint();
      const [a] = adaptationsFor(400, readServerError('{"error":{"message":"Unrecognized request argument supplied: chat_template_kwargs"}}'), sent, false);
      learnAdaptation(entry, 'm', a!);
      const generic = providerProfile(shapeOf('https://gw.example.com/v1'), 'm');
      assert.equal(resolveShape(generic, entry, 'm', true).thinkingSwitch, 'reasoning_effort', 'then the one OpenAI field');
      learnAdaptation(entry, 'm', { kind: 'drop_switch', id: 'reasoning_effort', named: true });
      assert.equal(resolveShape(generic, entry, 'm', true).thinkingSwitch, null, 'then none');
    });
  });

  describe('learned profiles', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'speculate-learned-'));
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('are saved to the state file and read back by a new process', async () => {
      const first = new LearnedProfiles(new FileLearnedProfileStore(dir));
      await first.update('https://gw.example.com/v1', (entry) => learnAdaptation(entry, 'm', { kind: 'drop', field: 'stream_options', named: true }));
      const again = new LearnedProfiles(new FileLearnedProfileStore(dir));
      assert.deepEqual((await again.endpoint('https://gw.example.com/v1')).refused, ['stream_options']);
      assert.deepEqual((await again.endpoint('https://other.example.com/v1')).refused, []);
    });

    it('a damaged or foreign state file is ignored, never trusted', async () => {
      await writeFile(path.join(dir, 'provider-profiles.json'), '{not json');
      const logs: string[] = [];
      const profiles = new LearnedProfiles(new FileLearnedProfileStore(dir), (line) => logs.push(line));
      assert.deepEqual(await profiles.endpoint('x'), emptyLearnedEndpoint());
      assert.equal(logs.length, 1);
      assert.deepEqual(sanitize({ version: 1, endpoints: { x: { refused: ['stream_options', 'messages', 42], models: { m: { required: ['tools'], thinkingFailed: ['rm -rf'] } } } } }), {
        version: 1,
        endpoints: { x: { refused: ['stream_options'], models: { m: { refused: [], required: [], thinkingFailed: [] } } } },
      });
    });

    it('a learned "leave reasoning_content out" never makes a request that needs it fail', async () => {
      // Learned for this model from an earlier refusal (say, a Mistral route of the same gateway)…
      await writeFile(
        path.join(dir, 'provider-profiles.json'),
        JSON.stringify({ version: 1, endpoints: { 'https://gw.example.com/v1': { refused: [], models: { 'deepseek-v4-pro': { refused: ['reasoning_content'], required: [], thinkingFailed: [] } } } } }),
      );
      const server = new ReplayServer([requiresReasoningBack, (request) => (isChat(request) ? streamReply(sse(answerChunks({ id: 'x', object: 'chat.completion.chunk' }, { text: 'ok' }))) : undefined)]);
      await server.start();
      try {
        const client = new OpenAiCompatibleClient({ baseURL: 'https://gw.example.com/v1', fetch: routedFetch(server), learned: new LearnedProfiles(new FileLearnedProfileStore(dir)), retry: { baseDelayMs: 1 } });
        let text = '';
        for await (const event of client.stream({ model: 'deepseek-v4-pro', messages: replayHistory('after-tool-call'), tools: REPLAY_TOOLS })) if (event.type === 'text') text += event.delta;
        assert.equal(text, 'ok', '…the request that needs it still succeeds');
        const saved = JSON.parse(await readFile(path.join(dir, 'provider-profiles.json'), 'utf8'));
        assert.deepEqual(saved.endpoints['https://gw.example.com/v1'].models['deepseek-v4-pro'], { refused: [], required: ['reasoning_content'], thinkingFailed: [] }, 'and the wrong lesson is unlearned');
      } finally {
        await server.close();
      }
    });
  });

  describe('request bodies', () => {
    it('sends cut or empty tool-call arguments as {} (what the model sent stays in our history)', () => {
      assert.equal(wireArguments(''), '{}');
      assert.equal(wireArguments('{"file_path": "a.t'), '{}');
      assert.equal(wireArguments('[1]'), '{}');
      assert.equal(wireArguments('{"a":1}'), '{"a":1}');
      const history = replayHistory('bad-arguments');
      const { body } = buildChatCompletionBody({ model: 'm', messages: history }, { prefixCaching: 'none', shape: PLAIN_SHAPE });
      assert.equal((body.messages[2] as { tool_calls: { function: { arguments: string } }[] }).tool_calls[0]!.function.arguments, '{}');
      assert.equal((history[2] as { tool_calls: { function: { arguments: string } }[] }).tool_calls[0]!.function.arguments, '{"file_path": "a.t', 'the stored history is unchanged');
    });

    it('sends reasoning_content and tool-call extras only where the shape says so', () => {
      const history = replayHistory('after-tool-call');
      const plain = buildChatCompletionBody({ model: 'm', messages: history }, { prefixCaching: 'none', shape: PLAIN_SHAPE }).body;
      assert.ok(!('reasoning_content' in plain.messages[2]!) && !('extra_content' in (plain.messages[2] as { tool_calls: object[] }).tool_calls[0]!));
      const echo = buildChatCompletionBody({ model: 'm', messages: history }, { prefixCaching: 'none', shape: { ...PLAIN_SHAPE, passReasoning: true, passToolExtras: true } });
      assert.equal((echo.body.messages[2] as { reasoning_content?: string }).reasoning_content, 'I should read a.ts.');
      assert.ok(echo.sent.reasoning && echo.sent.toolExtras);
    });
  });

  it('finish reasons in every spelling', () => {
    assert.deepEqual(['stop', 'tool_calls', 'length', 'MAX_TOKENS', 'content_filter', 'SAFETY', 'error', null, 'eos'].map(stopKind), ['complete', 'complete', 'length', 'length', 'content_filter', 'content_filter', 'error', 'complete', 'complete']);
  });

  it('spots tool calls written as text only when tools were offered', () => {
    assert.match(textualToolCallHint('<tool_call>\n{"name":"x"}', true) ?? '', /--jinja/);
    assert.match(textualToolCallHint('[TOOL_CALLS][{"name":"x"}]', true) ?? '', /parser/);
    assert.equal(textualToolCallHint('<tool_call>\n{"name":"x"}', false), undefined);
    assert.equal(textualToolCallHint('Use the <tool_call> tag carefully.', true), undefined);
  });

  it('an Azure 401 is answered with what to do, through the real client', async () => {
    const server = new ReplayServer([() => jsonReply(401, { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint.' } })]);
    await server.start();
    try {
      const client = new OpenAiCompatibleClient({ baseURL: 'https://contoso.openai.azure.com/openai/deployments/d?api-version=2024-10-21', apiKey: 'k', fetch: routedFetch(server) });
      await assert.rejects(
        (async () => {
          for await (const event of client.stream({ model: 'd', messages: replayHistory() })) void event;
        })(),
        (error: { actions?: string[]; message?: string }) => /api-key header/.test(error.message ?? '') && JSON.stringify(error.actions) === '["set_api_key","set_up_endpoint","open_settings"]',
      );
    } finally {
      await server.close();
    }
  });
});
