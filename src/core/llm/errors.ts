// Maps whatever a request to an OpenAI-compatible endpoint threw into an LlmError whose message
// tells the user what happened and what to do, plus whether trying again could help.
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { LlmError } from './llmClient';
import { MalformedChunkError } from './streamAssembler';

export interface ErrorContext {
  baseURL: string;
  model: string;
}

export interface ClassifiedError {
  error: LlmError;
  /** 429, 5xx and connection resets: transient, worth another attempt (if nothing reached the caller). */
  retryable: boolean;
  /** The server's Retry-After, in ms, when it sent one. */
  retryAfterMs?: number;
}

/** Codes meaning "nobody answers at that address": retrying at once will not change that. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);
/** Codes meaning "the connection broke": a new connection usually works. */
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNABORTED']);

export function classifyError(error: unknown, context: ErrorContext): ClassifiedError {
  if (error instanceof LlmError) return { error, retryable: false };
  if (error instanceof APIUserAbortError) return { error: abortedError(), retryable: false };
  if (error instanceof APIConnectionTimeoutError) return { error: silentServerError(context), retryable: false };
  if (error instanceof APIError && typeof error.status === 'number') return classifyStatus(error, error.status, context);
  if (error instanceof APIError && !(error instanceof APIConnectionError)) {
    // An `error` object inside the stream (no HTTP status): the server gave up mid-answer.
    return {
      error: new LlmError('server', `The endpoint reported an error while answering: ${serverText(error)}. Try again.`),
      retryable: false,
    };
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
      ),
      retryable: false,
    };
  }
  if ((code && RESET_CODES.has(code)) || /terminated|other side closed|socket hang up/i.test(describe(error))) {
    return {
      error: new LlmError(
        'network',
        `The connection to ${context.baseURL} broke before the answer was complete (${code ?? 'connection closed'}). Try again.`,
      ),
      retryable: true,
    };
  }
  if (error instanceof APIConnectionError) {
    return {
      error: new LlmError('network', `Cannot connect to the model endpoint at ${context.baseURL}: ${describe(error)}. Check speculate.baseUrl and your network.`),
      retryable: false,
    };
  }
  return { error: badResponse(context, describe(error)), retryable: false };
}

function classifyStatus(error: APIError, status: number, context: ErrorContext): ClassifiedError {
  const detail = serverText(error);
  if (status === 401 || status === 403) {
    return {
      error: new LlmError(
        'auth',
        `The endpoint rejected the API key (HTTP ${status}: ${detail}). Run "Speculate: Set API Key" to enter a valid key for ${context.baseURL}.`,
        status,
      ),
      retryable: false,
    };
  }
  if (status === 404) {
    return {
      error: new LlmError(
        'not_found',
        `The endpoint answered 404 for model "${context.model}" at ${context.baseURL} (${detail}). Check the model name ("Speculate: Select Model" lists what the endpoint offers) and that speculate.baseUrl points at the API root, usually ending in /v1.`,
        status,
      ),
      retryable: false,
    };
  }
  if (status === 429) {
    return {
      error: new LlmError('rate_limit', `The endpoint is rate-limiting requests (HTTP 429: ${detail}). Wait a moment, then retry.`, status),
      retryable: true,
      retryAfterMs: retryAfterMs(error.headers),
    };
  }
  if (status >= 500) {
    return {
      error: new LlmError('server', `The endpoint failed with HTTP ${status} (${detail}). Retry later; if it persists, check the server.`, status),
      retryable: true,
      retryAfterMs: retryAfterMs(error.headers),
    };
  }
  return {
    error: new LlmError(
      'bad_request',
      `The endpoint refused the request with HTTP ${status}: ${detail}. If the conversation is very long, start a new chat; otherwise check the model settings.`,
      status,
    ),
    retryable: false,
  };
}

export function abortedError(): LlmError {
  return new LlmError('aborted', 'The request was cancelled.');
}

export function silentServerError(context: ErrorContext, silentMs?: number): LlmError {
  const how = silentMs === undefined ? 'went silent' : `sent nothing for ${Math.round(silentMs / 1000)} s`;
  return new LlmError('timeout', `The model endpoint at ${context.baseURL} ${how}. Try again; if it keeps happening, the server may be overloaded.`);
}

export function badResponse(context: ErrorContext, why: string): LlmError {
  return new LlmError(
    'bad_response',
    `The endpoint at ${context.baseURL} sent a reply that is not a valid OpenAI-compatible chat stream (${why}). Check that speculate.baseUrl points at an OpenAI-compatible API.`,
  );
}

function serverText(error: APIError): string {
  const body = error.error;
  if (body && typeof body === 'object' && 'message' in body && typeof body.message === 'string') return body.message;
  // APIError's own message starts with the status; strip it so it is not repeated.
  return error.message.replace(/^\d{3}\s+/, '') || 'no details';
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
