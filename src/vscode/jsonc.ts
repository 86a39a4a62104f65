// Parses JSON with comments and trailing commas, the dialect of VS Code's settings files, so the
// extension can see what a workspace's .vscode/settings.json tries to set. Pure TypeScript.

export type JsoncResult = { ok: true; value: unknown } | { ok: false; reason: string };

/** Replaces `//` and `/* *\/` comments outside strings with spaces (offsets stay put for errors). */
function stripComments(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const char = text[i];
    if (char === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (char === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') {
        out += ' ';
        i++;
      }
    } else if (char === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      const end = close < 0 ? text.length : close + 2;
      out += text.slice(i, end).replace(/[^\n]/g, ' ');
      i = end;
    } else {
      out += char;
      i++;
    }
  }
  return out;
}

/** Drops a comma whose next significant character closes an object or an array. */
function stripTrailingCommas(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const char = text[i];
    if (char === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end;
      continue;
    }
    if (char === ',') {
      let next = i + 1;
      while (next < text.length && /\s/.test(text[next])) next++;
      if (text[next] === '}' || text[next] === ']') {
        out += ' ';
        i++;
        continue;
      }
    }
    out += char;
    i++;
  }
  return out;
}

/** The index just past the string literal that starts at `start` (or the end of an unclosed one). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    if (text[i] === '\\') i += 2;
    else if (text[i] === '"') return i + 1;
    else i++;
  }
  return text.length;
}

export function parseJsonc(text: string): JsoncResult {
  const plain = stripTrailingCommas(stripComments(text.replace(/^\uFEFF/, '')));
  if (plain.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(plain) as unknown };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}
