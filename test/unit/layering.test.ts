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
  vscode: ['core/session.ts', 'core/workspaceServices.ts', 'core/chatStore', 'core/mcp', 'shared'],
  cli: ['core/session.ts', 'core/workspaceServices.ts', 'core/mcp'],
  webview: ['shared'],
  shared: [],
  'core/session.ts': ['core/followup', 'core/stats', 'core/usage', 'core/context'],
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
      const to = roomOf(target) in BELOW ? roomOf(target) : roomOf(`${target}.ts`);
      if (to === from || allowed.has(to)) continue;
      violations.push(`src/${file.path} imports "${specifier}" (${to}), but ${from} may import only: ${[...allowed].sort().join(', ') || 'nothing'}`);
    }
  }
  return violations;
}

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

  it('rejects a file in a room the table does not know', () => {
    const found = findLayerViolations([{ path: 'core/newRoom/thing.ts', text: '' }]);
    assert.match(found[0] ?? '', /not a room of the house/);
  });

});
