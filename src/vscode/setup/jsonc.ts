// Parses JSON with comments and trailing commas, the dialect of VS Code's settings files, so the
// extension can see what a workspace's .vscode/settings.json tries to set. Pure TypeScript.

export type JsoncResult = { ok: true; value: unknown } | { ok: false; reason: string };

/** Where a comment starting at `i` ends, or `i` itself when none starts there. */
function commentEnd(text: string, i: number): number {
  if (text[i] !== '/') return i;
  if (text[i + 1] === '/') {
    const newline = text.indexOf('\n', i);
    return newline < 0 ? text.length : newline;
  }
  if (text[i + 1] === '*') {
    const close = text.indexOf('*/', i + 2);
    return close < 0 ? text.length : close + 2;
  }
  return i;
}

/** The index of the next character that is neither whitespace nor part of a comment. */
function nextSignificant(text: string, i: number): number {
  for (;;) {
    while (i < text.length && /\s/.test(text[i])) i++;
    const end = commentEnd(text, i);
    if (end === i) return i;
    i = end;
  }
}

/** Plain JSON: comments outside strings become spaces, a comma before `}` or `]` goes. */
function toPlainJson(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end;
      continue;
    }
    const end = commentEnd(text, i);
    if (end > i) {
      out += ' ';
      i = end;
    } else if (text[i] === ',' && /[}\]]/.test(text[nextSignificant(text, i + 1)] ?? '')) {
      i++;
    } else {
      out += text[i];
      i++;
    }
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
  const plain = toPlainJson(text.replace(/^\uFEFF/, ''));
  if (plain.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(plain) as unknown };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}
