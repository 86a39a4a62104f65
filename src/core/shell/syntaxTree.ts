// A plain copy of one tree-sitter bash parse: the classifier walks this instead of wasm-backed
// nodes, so the wasm tree can be deleted right after parsing and no parser state outlives a call.

export interface SyntaxNode {
  /** tree-sitter node type: "command", "word", or the literal text of an anonymous token (";"). */
  type: string;
  /** false for anonymous tokens such as ";", "|", "$(" and keywords. */
  named: boolean;
  /** The field this node fills in its parent ("name", "argument", "redirect", …), if any. */
  field: string | null;
  /** Offsets into the source string (UTF-16 code units, as web-tree-sitter reports them). */
  start: number;
  end: number;
  children: SyntaxNode[];
}

/** The parsed script with its source, which node offsets index into. */
export interface ParsedScript {
  source: string;
  root: SyntaxNode;
  /** True when tree-sitter recovered from a syntax error or inserted a missing token. */
  hasError: boolean;
}

export function textOf(script: ParsedScript, node: SyntaxNode): string {
  return script.source.slice(node.start, node.end);
}

