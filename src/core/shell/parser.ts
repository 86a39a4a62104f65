// Loads web-tree-sitter (web-tree-sitter.wasm) and the bash grammar once (lazily, shared by concurrent first callers) and
// turns a command string into a plain SyntaxNode tree. The wasm tree is deleted before returning,
// so nothing from one parse can influence the next.
import * as path from 'node:path';
import { Language, Parser, type Tree } from 'web-tree-sitter';
import type { ParsedScript, SyntaxNode } from './syntaxTree';

export interface ShellParserOptions {
  /**
   * Folder holding web-tree-sitter.wasm and tree-sitter-bash.wasm. Defaults to the folder of the
   * running JS file, where the build copies both (dist/ and <out>/src/core/shell/).
   */
  wasmDir?: string;
}

/** A loaded parser; parse() is synchronous so nested scripts (bash -c '…') can be checked inline. */
export interface ShellParser {
  parse(source: string): ParsedScript;
}

const GRAMMAR_WASM = 'tree-sitter-bash.wasm';

let wasmDir: string = __dirname;
let runtimeReady: Promise<void> | undefined;
let loading: Promise<ShellParser> | undefined;

/**
 * Points the loader at another folder (hosts that move files around). Forgets any earlier load or
 * load failure, so the next check loads again from the new place.
 */
export function configureShellParser(options: ShellParserOptions): void {
  wasmDir = options.wasmDir ?? __dirname;
  loading = undefined;
}

/**
 * The shared parser, loading it on first use. A failed load stays failed (every later call gets
 * the same rejection) until configureShellParser is called again.
 */
export function loadShellParser(): Promise<ShellParser> {
  loading ??= load(wasmDir);
  return loading;
}

async function load(dir: string): Promise<ShellParser> {
  // The emscripten runtime is process-wide: initialise it once, but retry after a failure.
  runtimeReady ??= Parser.init({
    locateFile: (name: string) => path.join(dir, name),
    // Load errors come back as rejections with the message; keep emscripten from also printing.
    printErr: () => undefined,
  }).catch((error: unknown) => {
    runtimeReady = undefined;
    throw error;
  });
  await runtimeReady;
  const language = await Language.load(path.join(dir, GRAMMAR_WASM));
  const parser = new Parser();
  parser.setLanguage(language);
  /** Whether each type id of the grammar is a named node, filled in as types are met. */
  const namedTypes: boolean[] = [];
  return { parse: (source) => parseWith(parser, namedTypes, source) };
}

function parseWith(parser: Parser, namedTypes: boolean[], source: string): ParsedScript {
  let tree: Tree | null = null;
  try {
    tree = parser.parse(source);
    if (!tree) throw new Error('the parser returned no tree');
    const { root, sawError } = copyTree(tree, namedTypes);
    return { source, root, hasError: sawError || tree.rootNode.hasError };
  } catch (error) {
    // A parse that threw may leave the parser mid-document; start the next one clean.
    parser.reset();
    throw error;
  } finally {
    tree?.delete();
  }
}

/**
 * Copies the wasm tree into plain objects with one cursor walk (cheaper than Node wrappers). Every
 * cursor getter is a call into wasm, so each node costs four (type, field, start, end): whether a
 * type is named comes from the grammar once per type, and MISSING nodes need no look of their own —
 * tree-sitter counts them in the root's hasError, which every parse checks.
 */
function copyTree(tree: Tree, named: boolean[]): { root: SyntaxNode; sawError: boolean } {
  const cursor = tree.walk();
  const language = tree.language;
  let sawError = false;
  const current = (): SyntaxNode => {
    const typeId = cursor.nodeTypeId;
    const type = language.types[typeId] || 'ERROR';
    if (type === 'ERROR') sawError = true;
    return {
      type,
      named: (named[typeId] ??= language.nodeTypeIsNamed(typeId)),
      field: cursor.currentFieldName,
      start: cursor.startIndex,
      end: cursor.endIndex,
      children: [],
    };
  };
  try {
    const root = current();
    if (!cursor.gotoFirstChild()) return { root, sawError };
    const open: SyntaxNode[] = [root];
    for (;;) {
      const node = current();
      open[open.length - 1].children.push(node);
      if (cursor.gotoFirstChild()) {
        open.push(node);
        continue;
      }
      while (!cursor.gotoNextSibling()) {
        cursor.gotoParent();
        open.pop();
        if (open.length === 0) return { root, sawError };
      }
    }
  } finally {
    cursor.delete();
  }
}
