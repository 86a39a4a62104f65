// Maps whatever a request to an OpenAI-compatible endpoint threw into an LlmError: the status, the
// server's own words (whatever the body's shape), what to do, the buttons that do it, and whether
// trying again could help. The API key never appears in any of it.
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { readServerError, type ServerError } from './errorBody';
import { LlmError, type ErrorAction, type LlmErrorKind } from './llmClient';
import { MalformedChunkError, StreamErrorReport } from './streamAssembler';

export interface ErrorContext {
  /** The endpoint as it may be shown (no query, no credentials). */
  baseURL: string;
  model: string;
  /** "Mistral", "Azure OpenAI", "the endpoint". */
  label?: string;
  azure?: boolean;
  /** Redacted from every text: the key must never be shown or logged. */
  secret?: string;
  /** The raw body of an HTTP error response, when the client kept it. */
  bodyOf?: (error: APIError) => string | undefined;
}

export interface ClassifiedError {
  error: LlmError;
  /** 429, 5xx and connection resets: transient, worth another attempt (if nothing reached the caller). */
  retryable: boolean;
  /** Worth exactly one more attempt (Groq's tool_use_failed usually passes the second time). */
  retryOnce?: boolean;
  /** The server's Retry-After, in ms, when it sent one. */
  retryAfterMs?: number;
  /** What the server said, for the request-shape logic (which field it refused). */
  server?: ServerError;
  status?: number;
}

/** Codes meaning "nobody answers at that address": retrying at once will not change that. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);
/** Codes meaning "the connection broke": a new connection usually works. */
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNABORTED']);
const TOO_BIG = /context (length|window)|too long|too large|maximum (context|length)|reduce the length|prompt is too long|exceeds? the (context|maximum)/i;
const UNKNOWN_MODEL = /model.{0,40}(not (exist|found)|does not exist|unknown|invalid|not available|no such)|(unknown|invalid|no such) model|model_not_found|deployment.{0,40}(not (exist|found)|does not exist)|DeploymentNotFound/i;

export function classifyError(error: unknown, context: ErrorContext): ClassifiedError {
  const classified = classifyRaw(error, context);
  return { ...classified, error: redact(classified.error, context.secret) };
}

function classifyRaw(error: unknown, context: ErrorContext): ClassifiedError {
  if (error instanceof LlmError) return { error, retryable: false };
  if (error instanceof APIUserAbortError) return { error: abortedError(), retryable: false };
  if (error instanceof APIConnectionTimeoutError) return { error: silentServerError(context), retryable: false };
  if (error instanceof StreamErrorReport) return classifyStreamError(error.server, context);
  if (error instanceof APIError && typeof error.status === 'number') {
    const raw = context.bodyOf?.(error);
    const server = raw !== undefined ? readServerError(raw) : fromApiError(error);
    return classifyStatus(error.status, server, context, error.headers);
  }
  if (error instanceof MalformedChunkError || error instanceof SyntaxError) {
    return { error: badResponse(context, error.message), retryable: false };
  }
  const code = findErrorCode(error);
  if (code && UNREACHABLE_CODES.has(code)) {
    return {
      error: new LlmError(
        'network',
        `Cannot reach the model endpoint at ${context.baseURL} (${code}). Check that the server is running and that the setting speculate.baseUrl is right.`,
        { reason: `cannot reach ${context.baseURL} (${code})`, actions: ['set_up_endpoint', 'open_settings'] },
      ),
      retryable: false,
    };
  }
  if ((code && RESET_CODES.has(code)) || /terminated|other side closed|socket hang up/i.test(describe(error))) {
    return {
      error: new LlmError('network', `The connection to ${context.baseURL} broke before the answer was complete (${code ?? 'connection closed'}). Try again.`, {
        reason: 'the connection broke',
      }),
      retryable: true,
    };
  }
  if (error instanceof APIConnectionError) {
    return {
      error: new LlmError('network', `Cannot connect to the model endpoint at ${context.baseURL}: ${describe(error)}. Check speculate.baseUrl and your network.`, {
        reason: `cannot connect to ${context.baseURL}`,
        actions: ['set_up_endpoint', 'open_settings'],
      }),
      retryable: false,
    };
  }
  return { error: badResponse(context, describe(error)), retryable: false };
}

/** An HTTP error: status + the server's words + what to do. */
export function classifyStatus(status: number, server: ServerError, context: ErrorContext, headers?: Headers): ClassifiedError {
  const who = context.label ?? 'The endpoint';
  const Who = who.charAt(0).toUpperCase() + who.slice(1);
  const said = `HTTP ${status}: ${server.text}`;
  const base = { server, status };
  const fail = (kind: LlmErrorKind, message: string, actions: ErrorAction[] = [], retryable = false): ClassifiedError => ({
    ...base,
    error: new LlmError(kind, message, { status, reason: server.text, actions }),
    retryable,
  });
  const quota = /insufficient_quota|billing|credit|quota exceeded|exceeded your current quota|payment/i.test(`${server.code ?? ''} ${server.type ?? ''} ${server.text}`);

  if (status === 401 || status === 403) {
    const what = context.azure
      ? `Check that the key belongs to this Azure resource (it is sent in the api-key header), then run "Speculate: Set API Key" to store it.`
      : `Run "Speculate: Set API Key" to enter a valid key for ${context.baseURL}.`;
    const refused = status === 401 ? 'rejected the API key' : 'refused access';
    return fail('auth', `${Who} ${refused} (${said}). ${what}`, ['set_api_key', 'set_up_endpoint', 'open_settings']);
  }
  if (status === 402 || (status === 429 && quota)) {
    return fail('quota', `${Who} refused the request for billing reasons (${said}). Add credit or raise the limit with the provider; waiting will not help.`);
  }
  if (status === 404 || (status < 500 && UNKNOWN_MODEL.test(server.text))) {
    return fail(
      'not_found',
      `${Who} answered ${status} for model "${context.model}" at ${context.baseURL} (${server.text}). Check the model name ("Speculate: Select Model" lists what the endpoint offers) and that speculate.baseUrl points at the API root, usually ending in /v1.`,
      ['select_model', 'open_settings'],
    );
  }
  if (status === 429) {
    return { ...fail('rate_limit', `${Who} is rate-limiting requests (${said}). Wait a moment, then retry.`, [], true), retryAfterMs: retryAfterMs(headers) };
  }
  if (/--jinja|tools param requires/i.test(server.text)) {
    return fail('bad_request', `${Who} cannot take tools (${said}): start llama.cpp's server with --jinja so it can use tools.`, ['open_settings']);
  }
  if (/enable-auto-tool-choice|tool-call-parser/i.test(server.text)) {
    return fail('bad_request', `${Who} cannot take tools (${said}): start vLLM with --enable-auto-tool-choice and a --tool-call-parser for this model.`, ['open_settings']);
  }
  if (status >= 500) {
    return { ...fail('server', `${Who} failed with HTTP ${status} (${server.text}). Retry later; if it persists, check the server.`, [], true), retryAfterMs: retryAfterMs(headers) };
  }
  if (server.code === 'content_filter' || /content management policy|content_filter|ResponsibleAIPolicyViolation/i.test(server.text)) {
    return fail('content_filter', `${Who}'s content filter refused the request (${said}). Rephrase the message; retrying it unchanged will be refused again.`);
  }
  if (server.code === 'tool_use_failed') {
    return { ...fail('bad_request', `${Who} could not turn the model's reply into a tool call (${said}). Retry the turn.`), retryOnce: true };
  }
  if (TOO_BIG.test(server.text)) {
    return fail('bad_request', `${Who} refused the request: the conversation is longer than the model's context (${said}). Start a new chat, or pick a model with a longer context.`, ['select_model']);
  }
  return fail('bad_request', `${Who} refused the request (${said}). Check the model and endpoint settings.`, ['open_settings']);
}

/** An error the server reported inside a stream (HTTP 200): it ends the turn with the server's text. */
function classifyStreamError(server: ServerError, context: ErrorContext): ClassifiedError {
  // LM Studio answers a wrong path with 200 and {"error":"Unexpected endpoint or method. (POST /chat/completions)"}.
  if (/unexpected endpoint|no route|not found/i.test(server.text) || UNKNOWN_MODEL.test(server.text)) {
    const message = `The endpoint at ${context.baseURL} answered with an error instead of a completion (${server.text}). Check that speculate.baseUrl points at the API root (usually ending in /v1) and that model "${context.model}" exists there.`;
    return { server, error: new LlmError('not_found', message, { reason: server.text, actions: ['open_settings', 'select_model'] }), retryable: false };
  }
  if (server.status !== undefined && server.status >= 400 && server.status !== 500 && server.status < 600) {
    const classified = classifyStatus(server.status, server, context);
    return { ...classified, error: new LlmError(classified.error.kind, `${classified.error.message} (reported inside the stream)`, classified.error) };
  }
  return {
    server,
    error: new LlmError('server', `The endpoint reported an error while answering: ${server.text}. Try again.`, { reason: server.text }),
    retryable: true,
  };
}

function fromApiError(error: APIError): ServerError {
  const body = error.error;
  if (body && typeof body === 'object') {
    const found = readServerError(JSON.stringify({ error: body }));
    if (found.text !== 'no details') return found;
  }
  // APIError's own message starts with the status; strip it so it is not repeated.
  return { text: error.message.replace(/^\d{3}\s+/, '').replace(/^status code \(no body\)$/, 'no details') || 'no details' };
}

export function abortedError(): LlmError {
  return new LlmError('aborted', 'The request was cancelled.');
}

export function silentServerError(context: ErrorContext, silentMs?: number): LlmError {
  const how = silentMs === undefined ? 'went silent' : `sent nothing for ${Math.round(silentMs / 1000)} s`;
  return new LlmError('timeout', `The model endpoint at ${context.baseURL} ${how}. Try again; if it keeps happening, the server may be overloaded.`, {
    reason: `the endpoint ${how}`,
  });
}

export function badResponse(context: ErrorContext, why: string): LlmError {
  return new LlmError(
    'bad_response',
    `The endpoint at ${context.baseURL} sent a reply that is not a valid OpenAI-compatible chat stream (${why}). Check that speculate.baseUrl points at an OpenAI-compatible API.`,
    { reason: why, actions: ['open_settings'] },
  );
}

/** `text` with every occurrence of the key replaced (servers quote a rejected key back). */
export function redactSecret(text: string, secret: string | undefined): string {
  return secret && secret.length >= 4 ? text.split(secret).join('[your API key]') : text;
}

/** Replaces the key wherever a server echoed it. */
function redact(error: LlmError, secret: string | undefined): LlmError {
  if (!secret || secret.length < 4 || (!error.message.includes(secret) && !error.reason.includes(secret))) return error;
  const clean = (text: string) => text.split(secret).join('[your API key]');
  return new LlmError(error.kind, clean(error.message), { ...(error.status !== undefined ? { status: error.status } : {}), reason: clean(error.reason), actions: error.actions });
}

/** Retry-After / retry-after-ms in milliseconds, if present and sensible. */
export function retryAfterMs(headers: Headers | undefined, now: () => number = Date.now): number | undefined {
  if (!headers) return undefined;
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers.get('retry-after');
  if (raw === null) return undefined;
  const seconds = Number.parseFloat(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.max(0, date - now()) : undefined;
}

/** The first `code` found walking the cause chain (undici hides the socket error two levels down). */
function findErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    if ('code' in current && typeof current.code === 'string') return current.code;
    if (current instanceof AggregateError && current.errors.length > 0) {
      current = current.errors[0];
      continue;
    }
    current = 'cause' in current ? current.cause : undefined;
  }
  return undefined;
}

function describe(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth++) {
    parts.push(current instanceof Error ? current.message : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.filter(Boolean).join(': ');
}
