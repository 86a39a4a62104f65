// Here-documents read the way bash reads them: tree-sitter leaves backticks and bodies of <<- as
// plain text and may end a body on a different line, so the body is checked from the source.
import type { ParsedScript, SyntaxNode } from './syntaxTree';
import { textOf } from './syntaxTree';
import { OK, refuse, type ShellVerdict } from './verdict';

/**
 * tree-sitter does not always parse a here-doc body the way bash reads it (backticks and bodies of
 * <<- are left as plain text), so the body is read here: where bash ends it, and, when the
 * delimiter is unquoted, whether it holds anything beyond plain $name expansions.
 */
export function checkHeredocBody(script: ParsedScript, node: SyntaxNode): ShellVerdict {
  const start = node.children.find((child) => child.type === 'heredoc_start');
  const end = node.children.find((child) => child.type === 'heredoc_end');
  const body = node.children.find((child) => child.type === 'heredoc_body');
  if (!start || !end) return refuse('parse', 'a here-document without an end');
  const rawDelimiter = textOf(script, start);
  const quoted = /['"\\]/.test(rawDelimiter);
  const delimiter = rawDelimiter.replace(/['"\\]/g, '');
  const stripTabs = node.children.some((child) => !child.named && child.type === '<<-');
  const source = script.source;
  const bodyStart = body ? body.start : end.start;
  const endLineStart = source.lastIndexOf('\n', end.start - 1) + 1;
  // Bash ends the body at the first line that is exactly the delimiter (after leading tabs for <<-).
  let lineStart = source.lastIndexOf('\n', bodyStart - 1) + 1;
  let bashEnd = -1;
  while (lineStart <= source.length) {
    const lineEnd = source.indexOf('\n', lineStart);
    const line = source.slice(lineStart, lineEnd < 0 ? source.length : lineEnd);
    if ((stripTabs ? line.replace(/^\t+/, '') : line) === delimiter) {
      bashEnd = lineStart;
      break;
    }
    if (lineEnd < 0) break;
    lineStart = lineEnd + 1;
  }
  if (bashEnd !== endLineStart) return refuse('parse', 'bash would end this here-document somewhere else');
  if (quoted || !body) return OK;
  return unquotedBodyHazard(source.slice(body.start, body.end));
}

/** In an unquoted here-doc bash expands $…, ${…}, $(…), $((…)) and `…`; only $name is plain. */
function unquotedBodyHazard(text: string): ShellVerdict {
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '`') return refuse('substitution', 'backticks in a here-document run a command');
    if (ch !== '$') continue;
    const rest = text.slice(i + 1);
    if (/^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.test(rest) || /^\{[A-Za-z_][A-Za-z0-9_]*\}/.test(rest) || rest === '' || /^[\s"'.,:;/]/.test(rest)) {
      continue;
    }
    return refuse('substitution', 'an expansion in a here-document may run a command or assign a variable');
  }
  return OK;
}
