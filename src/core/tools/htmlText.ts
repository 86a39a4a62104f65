// Turns an HTML page into readable plain text for web_fetch: drops scripts, styles and markup,
// keeps headings, paragraphs, list items and link targets on lines of their own.

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  ndash: '–',
  mdash: '—',
  hellip: '…',
  copy: '©',
  reg: '®',
  trade: '™',
  laquo: '«',
  raquo: '»',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  middot: '·',
  bull: '•',
};

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? whole;
  });
}

const BLOCK_TAGS = 'p|div|section|article|header|footer|main|nav|aside|blockquote|pre|table|tr|ul|ol|dl|dt|dd|figure|figcaption|form|fieldset|details|summary|h[1-6]|hr|br';

export function htmlToText(html: string): string {
  let text = html;
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1];
  text = text.replace(/<!--[\s\S]*?-->/g, '');
  text = text.replace(/<(script|style|noscript|template|svg|head|iframe)\b[\s\S]*?<\/\1\s*>/gi, '');
  text = text.replace(/<a\b[^>]*?href\s*=\s*(["'])(https?:[^"']*)\1[^>]*>([\s\S]*?)<\/a\s*>/gi, (_, _q: string, href: string, inner: string) => {
    const label = inner.replace(/<[^>]*>/g, '').trim();
    return label === '' ? '' : label === href ? href : `${label} (${href})`;
  });
  text = text.replace(/<h([1-6])\b[^>]*>/gi, (_, level: string) => `\n\n${'#'.repeat(Number(level))} `);
  text = text.replace(/<li\b[^>]*>/gi, '\n- ');
  text = text.replace(/<(td|th)\b[^>]*>/gi, ' | ');
  text = text.replace(new RegExp(`</?(?:${BLOCK_TAGS})\\b[^>]*>`, 'gi'), '\n\n');
  text = text.replace(/<[^>]*>/g, '');
  text = decodeEntities(text);
  text = text
    .split('\n')
    .map((line) => line.replace(/[ \t\f\v\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const cleanTitle = title ? decodeEntities(title.replace(/\s+/g, ' ').trim()) : '';
  return cleanTitle !== '' && !text.startsWith(cleanTitle) ? `${cleanTitle}\n\n${text}` : text;
}
