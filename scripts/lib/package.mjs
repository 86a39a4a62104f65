// Packages the extension as `npm run package` does (vsce, production bundles, .vscodeignore) into
// a file of the caller's choosing: npm start installs it, the packaging test inspects it.
// The packaged README carries its screenshots inline (data: URIs): VS Code's extension page shows
// a README in a webview whose images may come only from https: or data:, never from the
// extension's own folder, and this extension has no public repository to point https: links at.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { repoRoot } from './vscodeServer.mjs';

/** The vsce flags of `npm run package` (no repository field; the README's images are inline). */
export const VSCE_FLAGS = ['--no-dependencies', '--allow-missing-repository', '--no-rewrite-relative-links'];

const IMAGE_TYPES = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp' };

/** README.md with every relative image (`![alt](media/…)`) as a data: URI. */
export function readmeWithInlineImages(markdown, root = repoRoot) {
  return markdown.replace(/!\[([^\]]*)\]\(([^)\s]+)\)/g, (all, alt, src) => {
    const type = IMAGE_TYPES[extname(src).toLowerCase()];
    if (/^[a-z][a-z0-9+.-]*:/i.test(src) || !type) return all;
    return `![${alt}](data:${type};base64,${readFileSync(join(root, src)).toString('base64')})`;
  });
}

/** The platform packages `npm run package` makes (vsce's --target), and the architecture of each one's Landlock helper. */
export const PLATFORM_TARGETS = { 'linux-x64': 'x64', 'linux-arm64': 'arm64' };

/**
 * Runs vsce package; returns `out`. quiet: without vsce's listing of the files. target: a vsce
 * platform (PLATFORM_TARGETS) — the package holds the Landlock helper built for it, and the build
 * fails rather than ship one without it; without a target, the helper of this machine goes in
 * when it could be built (npm start, the packaging test).
 */
export function packageExtension(out, { quiet = false, target } = {}) {
  const arch = target === undefined ? undefined : PLATFORM_TARGETS[target];
  if (target !== undefined && arch === undefined) throw new Error(`package: unknown target ${target} (known: ${Object.keys(PLATFORM_TARGETS).join(', ')})`);
  const vsce = join(repoRoot, 'node_modules/@vscode/vsce/vsce');
  // vsce takes the README path relative to the extension's folder: a git-ignored one (out*/).
  const scratch = mkdtempSync(join(repoRoot, 'out-package-'));
  try {
    const readme = join(scratch, 'README.md');
    writeFileSync(readme, readmeWithInlineImages(readFileSync(join(repoRoot, 'README.md'), 'utf8')));
    // vsce runs the prepublish build (esbuild.mjs --production), which builds the helper for SPECULATE_NATIVE_ARCH.
    const env = arch === undefined ? process.env : { ...process.env, SPECULATE_NATIVE_ARCH: arch, SPECULATE_NATIVE_REQUIRED: '1' };
    execFileSync(process.execPath, [vsce, 'package', ...VSCE_FLAGS, ...(target ? ['--target', target] : []), '--readme-path', relative(repoRoot, readme), '--out', out], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', quiet ? 'ignore' : 'inherit', 'inherit'],
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return out;
}
