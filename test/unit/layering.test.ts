// The floors of ARCHITECTURE.md as a table, checked against every import line of src/: every arrow
// points down, src/core never imports vscode, the webview never imports node or vscode.
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';

/**
 * Each room of the house and the rooms directly below it; a room may import what is below it,
 * directly or further down (the table's transitive closure), and nothing else.
 */
const BELOW: Record<string, readonly string[]> = {
  'extension.ts': ['vscode'],
  'cli.ts': ['cli'],
  // vscode/: controller.ts and commands.ts wire the rooms by feature below them.
  vscode: ['vscode/chat', 'vscode/mcp'],
  'vscode/chat': ['vscode/speculation', 'vscode/checkpoints', 'vscode/history', 'vscode/setup'],
  'vscode/checkpoints': ['vscode/speculation', 'vscode/setup'],
  'vscode/speculation': ['vscode/common'],
  'vscode/history': ['vscode/common'],
  'vscode/mcp': ['vscode/setup'],
  'vscode/setup': ['vscode/common'],
  'vscode/common': ['core/session.ts', 'core/workspaceServices.ts', 'core/chatStore', 'core/mcp', 'shared'],
  cli: ['core/session.ts', 'core/workspaceServices.ts', 'core/mcp'],
  webview: ['shared'],
  shared: [],
  // core/session.ts is the facade; core/session/ holds its parts (the chat, undo, the events).
  'core/session.ts': ['core/session'],
  'core/session': ['core/followup', 'core/stats', 'core/usage', 'core/context'],
  'core/chatStore': ['core/usage', 'core/messages'],
  'core/usage': ['core/llm'],
  'core/context': ['core/fs'],
  'core/workspaceServices.ts': ['core/followup', 'core/context'],
  'core/stats': ['core/followup'],
  'core/followup': ['core/chat', 'core/checkpoints', 'core/git'],
  'core/git': ['core/sandbox', 'core/shell', 'core/fs'],
  'core/checkpoints': ['core/fs', 'core/git'],
  'core/chat': ['core/tools', 'core/llm'],
  'core/mcp': ['core/tools'],
  'core/tools': ['core/sandbox', 'core/shell', 'core/process', 'core/fs', 'core/messages'],
  'core/sandbox': ['core/process', 'core/shell', 'core/fs'],
  'core/process': ['core/shell', 'core/fs'],
  'core/shell': ['core/fs'],
  'core/fs': [],
  'core/llm': ['core/messages'],
  'core/messages': [],
};

/** The room a file of src/ lives in: a folder of src/ or src/core/, or a file directly in one of them. */
export function roomOf(fromSrc: string): string {
  const parts = fromSrc.split('/');
  if (parts[0] === 'core') return parts.length === 2 ? fromSrc : `core/${parts[1]}`;
  if (parts[0] === 'vscode') return parts.length === 2 ? 'vscode' : `vscode/${parts[1]}`;
  return parts.length === 1 ? fromSrc : parts[0];
}

function reachableFrom(room: string): Set<string> {
  const seen = new Set<string>();
  const visit = (r: string) => {
    for (const below of BELOW[r] ?? []) {
      if (seen.has(below)) continue;
      seen.add(below);
      visit(below);
    }
  };
  visit(room);
  return seen;
}

const IMPORT_SPECIFIER = /\b(?:import|export)\b[^;'"`]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)|\brequire\(\s*['"]([^'"]+)['"]\s*\)/g;

export interface SourceFile {
  /** Relative to src/, with forward slashes. */
  path: string;
  text: string;
}

/** Every import that leaves its room for one not below it, as a sentence naming the import. */
export function findLayerViolations(files: readonly SourceFile[]): string[] {
  const violations: string[] = [];
  const known = new Set(files.map((f) => f.path));
  for (const file of files) {
    const from = roomOf(file.path);
    if (!(from in BELOW)) {
      violations.push(`src/${file.path} is in "${from}", which is not a room of the house; add it to BELOW in layering.test.ts`);
      continue;
    }
    const allowed = reachableFrom(from);
    for (const match of file.text.matchAll(IMPORT_SPECIFIER)) {
      const specifier = match[1] ?? match[2] ?? match[3] ?? match[4];
      if (specifier === 'vscode' && from.startsWith('core')) violations.push(`src/${file.path} imports vscode: src/core never imports vscode`);
      if (from === 'webview' && (specifier === 'vscode' || specifier.startsWith('node:'))) {
        violations.push(`src/${file.path} imports "${specifier}": the webview runs in a browser`);
      }
      if (!specifier.startsWith('.')) continue;
      const target = posix.normalize(posix.join(posix.dirname(file.path), specifier));
      if (target.startsWith('..')) {
        violations.push(`src/${file.path} imports "${specifier}" from outside src/`);
        continue;
      }
      // `../core/session` names the file session.ts when there is one, not the folder beside it.
      const isFolder = !known.has(`${target}.ts`) && [...known].some((f) => f.startsWith(`${target}/`));
      const to = isFolder || !(roomOf(`${target}.ts`) in BELOW) ? roomOf(target) : roomOf(`${target}.ts`);
      if (to === from || allowed.has(to)) continue;
      violations.push(`src/${file.path} imports "${specifier}" (${to}), but ${from} may import only: ${[...allowed].sort().join(', ') || 'nothing'}`);
    }
  }
  return violations;
}

/** The files of src/ each relative import names (a folder means its index.ts); type-only imports count too. */
function importGraph(files: readonly SourceFile[]): Map<string, string[]> {
  const known = new Set(files.map((f) => f.path));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = new Set<string>();
    for (const match of file.text.matchAll(IMPORT_SPECIFIER)) {
      const specifier = match[1] ?? match[2] ?? match[3] ?? match[4];
      if (!specifier.startsWith('.')) continue;
      const target = posix.normalize(posix.join(posix.dirname(file.path), specifier));
      const resolved = [`${target}.ts`, `${target}/index.ts`, target].find((candidate) => known.has(candidate));
      if (resolved && resolved !== file.path) targets.add(resolved);
    }
    graph.set(file.path, [...targets]);
  }
  return graph;
}

/**
 * Every set of files that import each other round in a circle (Tarjan's strongly connected
 * components of the import graph), each as a sentence: a circle means no file of it can be read,
 * tested or moved without the others.
 */
export function findImportCircles(files: readonly SourceFile[]): string[] {
  const graph = importGraph(files);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) circles.push(`these files import each other in a circle: ${component.sort().map((f) => `src/${f}`).join(', ')}`);
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return circles;
}

/** No hand-written source file is longer (ARCHITECTURE.md: small modules with one job). */
const MAX_FILE_LINES = 500;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : name.endsWith('.ts') ? [full] : [];
  });
}

function readSources(): SourceFile[] {
  const src = join(process.cwd(), 'src');
  return sourceFiles(src).map((full) => ({ path: relative(src, full).split('\\').join('/'), text: readFileSync(full, 'utf8') }));
}

describe('layering', () => {
  it('every import in src/ points down the floors of ARCHITECTURE.md', () => {
    const files = readSources();
    assert.ok(files.length > 50, 'src/ has source files');
    assert.deepEqual(findLayerViolations(files), []);
  });

  it('names an import that runs back up, wherever it hides', () => {
    const upward: SourceFile[] = [
      { path: 'core/chat/conversation.ts', text: `import type { CacheSafeParams } from '../followup/forkedQuery';` },
      { path: 'core/llm/requestBody.ts', text: `import type { ChatMessage } from '../chat/messages';` },
      { path: 'core/process/nodeProcessRunner.ts', text: `export type { ProcessRunner } from '../tools/types';` },
      { path: 'core/fs/paths.ts', text: `const s = require('../session');` },
      { path: 'core/tools/edit.ts', text: `const g = await import('../followup/speculationToolGate');` },
      { path: 'core/shell/parser.ts', text: `import {\n  a,\n  b,\n} from '../chat/approvals';` },
      { path: 'core/fs/globMatch.ts', text: `import '../llm/errors';` },
    ];
    const found = findLayerViolations(upward);
    assert.equal(found.length, upward.length, found.join('\n'));
    assert.match(found[0], /src\/core\/chat\/conversation\.ts imports "\.\.\/followup\/forkedQuery" \(core\/followup\), but core\/chat may import only: /);
    assert.match(found[3], /\(core\/session\.ts\)/);
  });

  it('lets a room import its own files and anything further down', () => {
    const fine: SourceFile[] = [
      { path: 'core/followup/speculation.ts', text: `import { x } from './overlayFs';\nimport type { ToolArgs } from '../messages';\nimport { y } from '../fs/paths';` },
      { path: 'core/session.ts', text: `import { Conversation } from './chat/conversation';` },
      { path: 'vscode/controller.ts', text: `import * as vscode from 'vscode';\nimport { ChatSession } from '../core/session';` },
      { path: 'core/fs/paths.ts', text: `export const hint = 'see ../session for why';` },
    ];
    assert.deepEqual(findLayerViolations(fine), []);
  });

  it('keeps vscode out of src/core and node and vscode out of the webview', () => {
    const found = findLayerViolations([
      { path: 'core/fs/paths.ts', text: `import * as vscode from 'vscode';` },
      { path: 'core/llm/errors.ts', text: `const v = require("vscode");` },
      { path: 'webview/main.ts', text: `import { readFile } from 'node:fs';` },
    ]);
    assert.equal(found.length, 3, found.join('\n'));
  });

  it('keeps every source file of src/ under 500 lines (a longer one has more than one job; split it along its seams)', () => {
    const long = readSources()
      .map((file) => ({ path: file.path, lines: file.text.split('\n').length - (file.text.endsWith('\n') ? 1 : 0) }))
      .filter((file) => file.lines > MAX_FILE_LINES)
      .map((file) => `src/${file.path}: ${file.lines} lines`);
    assert.deepEqual(long, []);
  });

  it('has no import circle between the files of src/', () => {
    assert.deepEqual(findImportCircles(readSources()), []);
  });

  it('names the files of an import circle, also one closed by a type-only import or a folder index', () => {
    const found = findImportCircles([
      { path: 'vscode/chat/chatPresenter.ts', text: `import { SpeculationPreviewRelay } from '../speculation/speculationPreview';` },
      { path: 'vscode/speculation/speculationPreview.ts', text: `import type { ChatPresenter } from '../chat/chatPresenter';` },
      { path: 'core/checkpoints/index.ts', text: `export { CheckpointStore } from './store';` },
      { path: 'core/checkpoints/store.ts', text: `import { prune } from './prune';` },
      { path: 'core/checkpoints/prune.ts', text: `import type { Store } from '.';` },
      { path: 'core/fs/paths.ts', text: `import { x } from './paths';` },
    ]);
    assert.equal(found.length, 2, found.join('\n'));
    assert.match(found.join('\n'), /src\/vscode\/chat\/chatPresenter\.ts, src\/vscode\/speculation\/speculationPreview\.ts/);
    assert.match(found.join('\n'), /src\/core\/checkpoints\/index\.ts, src\/core\/checkpoints\/prune\.ts, src\/core\/checkpoints\/store\.ts/);
  });

  it('names a feature room of vscode/ that imports the chat presenter above it', () => {
    const found = findLayerViolations([
      { path: 'vscode/speculation/speculationPreview.ts', text: `import type { ChatPresenter } from '../chat/chatPresenter';` },
      { path: 'vscode/setup/settings.ts', text: `import { McpServers } from '../mcp/mcpServers';` },
    ]);
    assert.equal(found.length, 2, found.join('\n'));
    assert.match(found[0], /\(vscode\/chat\), but vscode\/speculation may import only: /);
  });

  it('rejects a file in a room the table does not know', () => {
    const found = findLayerViolations([{ path: 'core/newRoom/thing.ts', text: '' }]);
    assert.match(found[0] ?? '', /not a room of the house/);
  });

});
