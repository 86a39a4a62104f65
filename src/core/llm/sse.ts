// Reads a server-sent event stream from raw bytes: `data:` payloads, `event:` names, comments. Every
// byte that arrives counts as life, so keep-alive comments (": OPENROUTER PROCESSING") keep a slow
// reasoning model from being taken for a silent server.

export interface SseEvent {
  /** The `event:` field, or null for the default "message" event. */
  event: string | null;
  data: string;
}

/**
 * Yields the events of `body` in order. `onBytes` is called for every chunk read, comments
 * included. A malformed framing is read leniently: a `data:` line that is complete JSON on its own
 * is not glued to the next one (some servers forget the blank line between events).
 */
export async function* readSse(body: AsyncIterable<Uint8Array>, onBytes: () => void = () => undefined): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event: string | null = null;
  let data: string[] = [];
  const dispatch = (): SseEvent | undefined => {
    if (data.length === 0) {
      event = null;
      return undefined;
    }
    const out = { event, data: data.join('\n') };
    event = null;
    data = [];
    return out;
  };
  const lines = function* (final: boolean): Generator<string> {
    for (;;) {
      const match = /\r\n|\n|\r/.exec(buffer);
      // A lone \r at the very end may be the first half of \r\n: wait for more bytes.
      if (!match || (match[0] === '\r' && match.index === buffer.length - 1 && !final)) break;
      yield buffer.slice(0, match.index);
      buffer = buffer.slice(match.index + match[0].length);
    }
    if (final && buffer !== '') {
      yield buffer;
      buffer = '';
    }
  };
  const handle = function* (line: string): Generator<SseEvent> {
    if (line === '') {
      const out = dispatch();
      if (out) yield out;
      return;
    }
    if (line.startsWith(':')) return; // a comment: life, nothing else
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      if (data.length > 0 && isWholeJson(data.join('\n'))) {
        const out = dispatch();
        if (out) yield out;
      }
      data.push(value);
    } else if (field === 'event') {
      event = value;
    }
    // id and retry do not matter for a one-shot completion stream.
  };
  for await (const chunk of body) {
    onBytes();
    buffer += decoder.decode(chunk, { stream: true });
    for (const line of lines(false)) yield* handle(line);
  }
  buffer += decoder.decode();
  for (const line of lines(true)) yield* handle(line);
  const last = dispatch();
  if (last) yield last;
}

function isWholeJson(text: string): boolean {
  const trimmed = text.trim();
  if (!/^[[{]/.test(trimmed)) return false;
  try {
    JSON.parse(trimmed);
    return true;
  } catch {
    return false;
  }
}
