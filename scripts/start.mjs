// `npm start`: builds, installs VS Code's server if needed, starts the built-in demo model and the
// server on 127.0.0.1 (free ports, no auth) with a temporary copy of the demo workspace, and prints
// the URL. The extension is packaged and installed as a user gets it (so the window is a plain one,
// not an "[Extension Development Host]"); `npm start -- --dev` loads it from this work tree instead,
// so a window reload picks up a rebuild. Ctrl-C stops everything and removes the temp dir.
// The demo's settings are the server's user settings: a workspace may not set the approval mode.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { packageExtension } from './lib/package.mjs';
import { repoRoot, startVsCodeServer, workbenchUrl } from './lib/vscodeServer.mjs';

process.chdir(repoRoot);
const dev = process.argv.includes('--dev');
execFileSync('bash', ['scripts/setup-vscode.sh'], { stdio: 'inherit' });
execFileSync(process.execPath, ['esbuild.mjs'], { stdio: 'inherit' });

const scratch = mkdtempSync(join(tmpdir(), 'speculate-start-'));
const workspace = join(scratch, 'demo-workspace');
cpSync(join(repoRoot, 'test/fixtures/workspaces/demo'), workspace, { recursive: true });

/**
 * The demo lets edits run ahead (speculation prepares edits only in auto-edit and yolo). The rest
 * makes the first screen the chat: no welcome page or walkthrough, no tips or recommendations, no
 * telemetry (and so no notice about it).
 */
const DEMO_USER_SETTINGS = {
  'speculate.approvalMode': 'auto-edit',
  'workbench.startupEditor': 'none',
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'extensions.ignoreRecommendations': true,
  'telemetry.telemetryLevel': 'off',
};

const children = [];
let server;
let stopping = false;
async function stopAll(code = 0) {
  if (stopping) return;
  stopping = true;
  console.log('\nStopping…');
  for (const child of children) {
    try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
  }
  if (server) await server.stop();
  rmSync(scratch, { recursive: true, force: true });
  process.exit(code);
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

/** Starts the scripted demo model (bundled on the fly) and resolves with its base URL. */
async function startDemoModel() {
  const entry = 'test/fixtures/scriptedServerMain.ts';
  if (!existsSync(entry)) return undefined;
  const bundle = join(scratch, 'demo-model.js');
  const esbuild = await import('esbuild');
  await esbuild.build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'cjs', outfile: bundle, logLevel: 'warning' });
  const child = spawn(process.execPath, [bundle, '--demo'], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const firstLine = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`demo model exited with code ${code}`)));
  });
  return String(firstLine).trim();
}

try {
  const demoUrl = await startDemoModel();
  if (!dev) console.log('Packaging the extension (npm start -- --dev skips this and loads it from the work tree)…');
  server = await startVsCodeServer({
    dataDir: join(scratch, 'vscode'),
    // SPECULATE_OPEN_CHAT: the window opens on the chat with its input focused.
    env: { SPECULATE_OPEN_CHAT: '1', ...(demoUrl ? { SPECULATE_DEMO_MODEL_URL: demoUrl } : {}) },
    userSettings: DEMO_USER_SETTINGS,
    ...(dev ? {} : { installExtensions: [packageExtension(join(scratch, 'speculate.vsix'), { quiet: true })] }),
  });
  const url = workbenchUrl(server.origin, { folder: workspace, ...(dev ? { extensionPath: repoRoot } : {}) });
  console.log('\nSpeculate is running in VS Code (server on 127.0.0.1 only, no auth):\n');
  console.log(`  ${url}\n`);
  if (demoUrl) console.log(`The chat uses the built-in demo model (${demoUrl}) until you set speculate.baseUrl in the user settings.`);
  console.log(`User settings of this VS Code (approval mode auto-edit): ${server.userSettingsFile}`);
  console.log(`Demo workspace (a temporary copy): ${workspace}`);
  console.log('Press Ctrl-C to stop.');
} catch (error) {
  console.error(`npm start failed: ${error instanceof Error ? error.message : error}`);
  await stopAll(1);
}
