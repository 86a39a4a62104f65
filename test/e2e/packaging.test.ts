// The .vsix a user installs: built as `npm run package` builds it, holding only the bundles, media,
// README, CHANGELOG, LICENSE and package.json, at most 3 MB; installed into VS Code's server it
// chats with the scripted model, and its extension page shows the README with its images.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoReply } from '../fixtures/scripted/demoScript';
import { ScriptedServer } from '../fixtures/scriptedServer';
import { openChatView, openWorkbench, repoRoot, sendMessage, waitIdle, screenshotFailures, type Workbench } from './workbench';
import { zipEntries, zipText, type ZipEntry } from './zipEntries';

const MAX_VSIX_BYTES = 3 * 1024 * 1024;
/** What may be in the package besides media/: the manifest files vsce writes, and our own. */
const ALLOWED = [
  '[Content_Types].xml',
  'extension.vsixmanifest',
  'extension/package.json',
  'extension/readme.md',
  'extension/changelog.md',
  'extension/LICENSE.txt',
  'extension/dist/extension.js',
  'extension/dist/cli.js',
  'extension/dist/webview.js',
  'extension/dist/tree-sitter-bash.wasm',
  'extension/dist/web-tree-sitter.wasm',
  // The sandbox's helpers (the Landlock launcher, the namespace keeper), built for this machine (a platform package holds its own).
  ...(process.platform === 'linux' ? ['extension/dist/native/landlock-exec', 'extension/dist/native/sandbox-keeper'] : []),
];

describe('the packaged extension', function () {
  this.timeout(300_000);
  const scratch = mkdtempSync(join(tmpdir(), 'speculate-vsix-'));
  const vsix = join(scratch, 'speculate.vsix');
  let entries: ZipEntry[] = [];
  let model: ScriptedServer | undefined;
  let workbench: Workbench | undefined;

  before(async () => {
    const { packageExtension } = (await import(join(repoRoot, 'scripts/lib/package.mjs'))) as { packageExtension(out: string, options?: { quiet?: boolean }): string };
    packageExtension(vsix, { quiet: true });
    entries = zipEntries(vsix);
  });
  screenshotFailures(() => workbench);
  after(async () => {
    await workbench?.close();
    await model?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('holds only the bundles, media, README, CHANGELOG, LICENSE and package.json, at most 3 MB', () => {
    const names = entries.map((entry) => entry.name);
    const unexpected = names.filter((name) => !ALLOWED.includes(name) && !name.startsWith('extension/media/'));
    assert.deepEqual(unexpected, [], 'nothing else is packaged (no sources, tests, maps or node_modules)');
    for (const name of ALLOWED) assert.ok(names.includes(name), `${name} is packaged`);
    assert.ok(!names.some((name) => name.endsWith('.map')), 'no source maps');
    const size = statSync(vsix).size;
    assert.ok(size <= MAX_VSIX_BYTES, `${size} bytes ≤ 3 MB`);
    console.log(`      speculate.vsix: ${names.length} files, ${(size / 1024).toFixed(0)} KB packed, ${(entries.reduce((sum, e) => sum + e.size, 0) / 1024).toFixed(0)} KB installed`);

    // Every image the README shows travels inside the packaged README: the extension page's
    // webview takes images only from https: or data:.
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1]);
    assert.ok(images.length >= 3, 'the README has screenshots');
    const packagedReadme = zipText(vsix, 'extension/readme.md');
    const packagedImages = [...packagedReadme.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1]);
    assert.equal(packagedImages.length, images.length);
    for (const image of packagedImages) assert.match(image.slice(0, 40), /^data:image\/png;base64,/);
    assert.ok(!names.some((name) => name.startsWith('extension/media/readme/')), 'the screenshots are not packaged twice');
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { icon: string; contributes: { walkthroughs: { steps: { media: { markdown?: string } }[] }[] } };
    assert.ok(names.includes(`extension/${manifest.icon}`), 'the icon is packaged');
    for (const step of manifest.contributes.walkthroughs.flatMap((w) => w.steps)) {
      if (step.media.markdown) assert.ok(names.includes(`extension/${step.media.markdown}`), `${step.media.markdown} is packaged`);
    }
  });

  it('installs into VS Code, chats with the model, and its extension page shows the README with its images', async () => {
    model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}) });
    await model.start();
    workbench = await openWorkbench({
      installVsix: vsix,
      settings: { 'speculate.baseUrl': model.baseUrl, 'speculate.model': 'scripted-demo', 'workbench.welcomePage.walkthroughs.openOnInstall': false },
    });
    const { page } = workbench;
    assert.doesNotMatch(await page.title(), /Extension Development Host/, 'the installed extension, not a development one');
    const chat = await openChatView(workbench);
    await sendMessage(chat, 'list the files');
    await chat.locator('.assistant-text', { hasText: 'Here is what the workspace holds' }).waitFor();
    await waitIdle(chat);
    assert.ok(model.chatRequests.length > 0);

    // The extension page (Extensions view → Speculate) renders the packaged README.
    await page.locator('.activitybar [aria-label^="Extensions"]').first().click();
    const search = page.locator('.extensions-viewlet .suggest-input-container .monaco-editor textarea, .extensions-viewlet .suggest-input-container textarea').first();
    await search.waitFor();
    await search.fill('@installed Speculate');
    await page.locator('.extensions-viewlet .monaco-list-row', { hasText: 'Speculate' }).first().click();
    const editor = page.locator('.extension-editor');
    await editor.locator('.name', { hasText: 'Speculate' }).waitFor();
    // The README is a webview of its own (VS Code lays webviews over the editor, outside its DOM):
    // found as the frame whose page has the README's headings.
    const readmeFrame = async () => {
      for (const frame of page.frames()) {
        const found = await frame.locator('h2', { hasText: 'Getting started' }).count().catch(() => 0);
        if (found > 0) return frame;
      }
      return undefined;
    };
    let frame = await readmeFrame();
    for (let tries = 0; !frame && tries < 150; tries++) {
      await page.waitForTimeout(200);
      frame = await readmeFrame();
    }
    assert.ok(frame, 'the extension page shows the README');
    const loaded = async () =>
      frame!.locator('img').evaluateAll((imgs) => imgs.map((img) => ({ src: (img as HTMLImageElement).getAttribute('src') ?? '', ok: (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth > 0 })));
    let images = await loaded();
    for (let tries = 0; tries < 50 && !(images.length >= 4 && images.every((i) => i.ok)); tries++) {
      await page.waitForTimeout(200);
      images = await loaded();
    }
    assert.ok(images.length >= 4, `the README shows its screenshots (${images.length} images)`);
    assert.deepEqual(images.filter((i) => !i.ok), [], 'every README image loaded');
    await workbench.screenshot('extension-page-readme');
  });
});
