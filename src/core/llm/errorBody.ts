// Finds the server's own words in an error body, whatever shape the server sends it in: OpenAI's
// {"error":{…}}, the bare {"object":"error","message":…} of older vLLM and friends, Mistral's
// pydantic details, Gemini's JSON array, FastAPI's {"detail":…}, a plain string, or an HTML page.

export interface ServerError {
  /** The server's message, one line, never empty ("no details" when it said nothing). */
  text: string;
  /** `code` / `type` as the server sent them (strings), when present. */
  code?: string;
  type?: string;
  /** The request field the server named in `param` or a pydantic `loc`, when it did. */
  param?: string;
  /** An HTTP status the body itself carries (mid-stream errors have no HTTP status of their own). */
  status?: number;
}

const MAX_TEXT = 400;

/** The error in a raw body (JSON, HTML or text). */
export function readServerError(raw: string): ServerError {
  const trimmed = raw.trim();
  if (trimmed === '') return { text: 'no details' };
  if (/^[[{]/.test(trimmed)) {
    try {
      return fromJson(JSON.parse(trimmed));
    } catch {
      // not JSON after all: judged as text below
    }
  }
  if (/^<(!doctype|html|head|body|\?xml)/i.test(trimmed) || /<\/html>\s*$/i.test(trimmed)) return { text: htmlSummary(trimmed) };
  return { text: oneLine(trimmed) };
}

/** The error in an already parsed body (a stream chunk or a JSON error response). */
export function fromJson(value: unknown): ServerError {
  // Gemini's OpenAI endpoint answers errors as a one-element array: [{"error": {…}}].
  if (Array.isArray(value)) return value.length > 0 ? fromJson(value[0]) : { text: 'no details' };
  if (typeof value === 'string') return { text: oneLine(value) || 'no details' };
  if (!isRecord(value)) return { text: 'no details' };
  const inner = value.error;
  if (isRecord(inner)) return withOuter(fromErrorObject(inner), value);
  // Ollama's and LM Studio's native errors: {"error": "model 'x' not found"}.
  if (typeof inner === 'string' && inner.trim() !== '') return withOuter({ text: oneLine(inner) }, value);
  return fromErrorObject(value);
}

/** True for a stream chunk that is an error report rather than a completion chunk. */
export function isErrorChunk(value: unknown): boolean {
  if (Array.isArray(value)) return value.some((item) => isRecord(item) && 'error' in item);
  if (!isRecord(value)) return false;
  if (value.error !== undefined && value.error !== null) return true;
  if (value.object === 'error' || value.object === 'Error') return true;
  // A FastAPI / pydantic validation body has `detail` and nothing a chunk would have.
  return value.choices === undefined && (value.detail !== undefined || typeof value.message === 'string');
}

function fromErrorObject(object: Record<string, unknown>): ServerError {
  const result: ServerError = { text: messageOf(object.message) ?? messageOf(object.detail) ?? messageOf(object.msg) ?? 'no details' };
  const code = scalar(object.code);
  const type = scalar(object.type);
  if (code !== undefined) result.code = code;
  if (type !== undefined) result.type = type;
  const param = typeof object.param === 'string' && object.param !== '' ? object.param : (locOf(object.message) ?? locOf(object.detail));
  if (param) result.param = param;
  const status = numberOf(object.status_code) ?? numberOf(object.status) ?? numberOf(object.code);
  if (status !== undefined && status >= 100 && status < 600) result.status = status;
  return result;
}

/** Fields of the outer object (OpenRouter puts `code` inside, vLLM puts `code` outside). */
function withOuter(result: ServerError, outer: Record<string, unknown>): ServerError {
  if (result.status === undefined) {
    const status = numberOf(outer.status_code) ?? numberOf(outer.code);
    if (status !== undefined && status >= 100 && status < 600) result.status = status;
  }
  return result;
}

/**
 * A message may be a string, a list of pydantic errors, an object holding `detail`, or a JSON
 * string of any of those (Mistral has sent all of them). The result is one readable line.
 */
function messageOf(value: unknown, depth = 0): string | undefined {
  if (depth > 3 || value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    const text = value.trim();
    if (text === '') return undefined;
    if (/^[[{]/.test(text)) {
      try {
        return messageOf(JSON.parse(text), depth + 1) ?? oneLine(text);
      } catch {
        return oneLine(text);
      }
    }
    return oneLine(text);
  }
  if (Array.isArray(value)) {
    const parts = value.map((item) => pydanticLine(item) ?? messageOf(item, depth + 1)).filter((part): part is string => Boolean(part));
    return parts.length > 0 ? oneLine(parts.join('; ')) : undefined;
  }
  if (isRecord(value)) return messageOf(value.detail, depth + 1) ?? messageOf(value.message, depth + 1) ?? messageOf(value.msg, depth + 1);
  return undefined;
}

/** "body.stream_options.include_usage: Extra inputs are not permitted" from one pydantic error. */
function pydanticLine(item: unknown): string | undefined {
  if (!isRecord(item) || typeof item.msg !== 'string') return undefined;
  const loc = Array.isArray(item.loc) ? item.loc.map(String).join('.') : '';
  return loc ? `${loc}: ${item.msg}` : item.msg;
}

/** The request field a pydantic error points at: ["body", "stream_options", …] → stream_options. */
function locOf(value: unknown, depth = 0): string | undefined {
  if (depth > 3) return undefined;
  if (typeof value === 'string' && /^[[{]/.test(value.trim())) {
    try {
      return locOf(JSON.parse(value), depth + 1);
    } catch {
      return undefined;
    }
  }
  if (Array.isArray(value)) {
    for (const item of value) {
      if (isRecord(item) && Array.isArray(item.loc)) {
        const path = item.loc.map(String);
        const start = path[0] === 'body' ? 1 : 0;
        const field = path.slice(start).filter((part) => !/^\d+$/.test(part) && !['user', 'assistant', 'system', 'tool'].includes(part));
        // The deepest named field is the one that was refused ("messages.3.assistant.reasoning_content").
        if (field.length > 0) return field.length > 1 && field[0] === 'messages' ? field[field.length - 1] : field[0];
      }
    }
    return undefined;
  }
  if (isRecord(value)) return locOf(value.detail, depth + 1);
  return undefined;
}

/** An HTML error page (nginx, Cloudflare, a login portal) reduced to its title or first heading. */
function htmlSummary(html: string): string {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1] ?? /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(html)?.[1];
  const text = title ? decodeEntities(title.replace(/<[^>]+>/g, ' ')) : '';
  return text.trim() ? `${oneLine(text)} (an HTML page, not an API answer)` : 'an HTML page instead of an API answer';
}

function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: ' ' })[name] ?? '');
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_TEXT ? `${line.slice(0, MAX_TEXT)}…` : line;
}

function scalar(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^\d{3}$/.test(value)) return Number(value);
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
