// Builds the three bundles (extension host, webview, headless CLI) into dist/ and, with --tests,
// transpiles src/ and test/ one file per file into out/ so mocha runs on plain CommonJS.
import * as esbuild from 'esbuild';
import { existsSync, cpSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { buildNative } from './scripts/build-native.mjs';

const require = createRequire(import.meta.url);
const args = new Set(process.argv.slice(2));
const watch = args.has('--watch');
const production = args.has('--production');
const withTests = args.has('--tests');
// Parallel workers (helpers, CI shards) each transpile into their own folder.
const testOut = process.env.SPECULATE_OUT_DIR || 'out';

// web-tree-sitter's ESM entry uses createRequire(import.meta.url), which is undefined in a
// CommonJS bundle; its .cjs build has no such problem, so every bundle takes that file.
const webTreeSitterCjs = require.resolve('web-tree-sitter').replace(/\.js$/, '.cjs');

const common = {
  bundle: true,
  sourcemap: true,
  minify: production,
  logLevel: 'warning',
  target: 'es2022',
};

const nodeBundle = {
  ...common,
  platform: 'node',
  format: 'cjs',
  alias: { 'web-tree-sitter': webTreeSitterCjs },
  // The grammar and runtime wasm files are loaded at run time from next to the bundle.
  external: ['vscode'],
};

/** The wasm files the shell classifier loads, copied next to every Node bundle. */
function copyWasm(outDir) {
  mkdirSync(outDir, { recursive: true });
  cpSync(require.resolve('web-tree-sitter/web-tree-sitter.wasm'), join(outDir, 'web-tree-sitter.wasm'));
  cpSync(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'), join(outDir, 'tree-sitter-bash.wasm'));
}

function listTs(dir) {
  const found = [];
  if (!existsSync(dir)) return found;
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) found.push(...listTs(full));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) found.push(full);
  }
  return found;
}

const builds = [
  { ...nodeBundle, entryPoints: { extension: 'src/extension.ts' }, outdir: 'dist' },
  { ...nodeBundle, entryPoints: { cli: 'src/cli.ts' }, outdir: 'dist', banner: { js: '#!/usr/bin/env node' } },
  { ...common, platform: 'browser', format: 'iife', entryPoints: { webview: 'src/webview/main.ts' }, outdir: 'dist' },
];

if (withTests) {
  builds.push({
    entryPoints: [...listTs('src'), ...listTs('test'), ...listTs('bench')],
    outdir: testOut,
    outbase: '.',
    bundle: false,
    platform: 'node',
    format: 'cjs',
    sourcemap: 'inline',
    target: 'es2022',
    logLevel: 'warning',
  });
}

copyWasm('dist');
// The Landlock sandbox's helper (C), next to the bundles that run it. `npm run package` sets
// SPECULATE_NATIVE_ARCH for each platform package (vsce reruns this build as its prepublish step),
// and SPECULATE_NATIVE_REQUIRED so that a package never ships without its helper.
buildNative(join('dist', 'native'), process.env.SPECULATE_NATIVE_ARCH || process.arch, { required: process.env.SPECULATE_NATIVE_REQUIRED === '1' });
if (withTests) {
  rmSync(testOut, { recursive: true, force: true });
  copyWasm(join(testOut, 'src/core/shell'));
}

if (watch) {
  const contexts = await Promise.all(builds.map((b) => esbuild.context(b)));
  await Promise.all(contexts.map((c) => c.watch()));
  console.log('[esbuild] watching for changes…');
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
