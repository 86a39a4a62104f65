// The YAML-ish front matter of a SKILL.md (Agent Skills format): `---`, `key: value` lines (quoted
// or plain, or a `|` / `>` block of indented lines), `---`, then the body. Only flat keys are read;
// nested maps (metadata) are skipped. A malformed head is an error naming the line, never a guess.

export type FrontMatter = { ok: true; fields: Record<string, string>; body: string } | { ok: false; error: string };

export function parseFrontMatter(source: string): FrontMatter {
  const text = source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const lines = text.split('\n');
  if (lines[0]?.trim() !== '---') return { ok: false, error: 'it does not start with front matter (a line "---", then name: and description:, then "---")' };
  const end = lines.findIndex((line, i) => i > 0 && line.trim() === '---');
  if (end < 0) return { ok: false, error: 'its front matter is not closed by a line "---"' };
  const fields: Record<string, string> = {};
  for (let i = 1; i < end; i++) {
    const line = lines[i];
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    if (/^\s/.test(line)) continue; // belongs to a nested map or block read below
    const match = /^([A-Za-z][\w-]*)\s*:(.*)$/.exec(line);
    if (!match) return { ok: false, error: `line ${i + 1} of its front matter is not "key: value" (${JSON.stringify(line.slice(0, 60))})` };
    const key = match[1];
    let value = match[2].trim();
    if (value === '' || value === '|' || value === '>' || value === '|-' || value === '>-') {
      const block: string[] = [];
      while (i + 1 < end && (/^\s/.test(lines[i + 1]) || lines[i + 1].trim() === '')) block.push(lines[++i].trim());
      value = value.startsWith('|') ? block.join('\n').trim() : block.filter((l) => l !== '').join(' ');
    } else {
      const unquoted = unquote(value);
      if (unquoted === undefined) return { ok: false, error: `the value of ${key} (line ${i + 1}) has an unclosed quote` };
      value = unquoted;
    }
    if (key in fields) return { ok: false, error: `${key} is given twice in its front matter` };
    fields[key] = value;
  }
  return { ok: true, fields, body: lines.slice(end + 1).join('\n').replace(/^\n+/, '') };
}

function unquote(value: string): string | undefined {
  const quote = value[0];
  if (quote !== '"' && quote !== "'") return value;
  if (value.length < 2 || value[value.length - 1] !== quote) return undefined;
  const inner = value.slice(1, -1);
  return quote === "'" ? inner.replace(/''/g, "'") : inner.replace(/\\(["\\n])/g, (_m, ch: string) => (ch === 'n' ? '\n' : ch));
}
