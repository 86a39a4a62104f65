// Starts VS Code's own server (from code-server's npm package) on 127.0.0.1 with every folder it
// writes kept inside one temporary directory, and stops it with its whole process group.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CODE_SERVER_VERSION = '4.100.3';
export const serverMain = join(
  repoRoot, '.vscode-test', `code-server-${CODE_SERVER_VERSION}`, 'node_modules', 'code-server', 'lib', 'vscode', 'out', 'server-main.js',
);

/** A free TCP port on the loopback interface. */
export function freePort() {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolvePort(port));
    });
  });
}

/**
 * Options:
 * - userSettings: written as the server's user settings (`<dataDir>/user/User/settings.json`), where
 *   the settings a workspace may not set (speculate.baseUrl, approvalMode, …) have to live.
 * - workspaceTrust: true keeps VS Code's workspace trust on (folders open in Restricted Mode until
 *   trusted; the startup prompt is switched off); by default trust is disabled, so every folder is trusted.
 * - installExtensions: .vsix files installed into the server's extensions folder before it starts
 *   (as a user installs them: no extension development host).
 * @param {{port?: number, env?: Record<string,string>, log?: (line: string) => void, dataDir?: string,
 *   userSettings?: Record<string, unknown>, workspaceTrust?: boolean, installExtensions?: string[]}} options
 * @returns {Promise<{port: number, origin: string, dataDir: string, userSettingsFile: string, stop: () => Promise<void>}>}
 */
export async function startVsCodeServer(options = {}) {
  const port = options.port ?? (await freePort());
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'speculate-vscode-'));
  for (const sub of ['user/User', 'server', 'ext', 'agent', 'tmp', 'home']) mkdirSync(join(dataDir, sub), { recursive: true });
  const userSettingsFile = join(dataDir, 'user', 'User', 'settings.json');
  const userSettings = {
    ...(options.workspaceTrust ? { 'security.workspace.trust.startupPrompt': 'never' } : {}),
    ...options.userSettings,
  };
  writeFileSync(userSettingsFile, JSON.stringify(userSettings, null, 2) + '\n');
  const log = options.log ?? (() => {});
  const folders = ['--user-data-dir', join(dataDir, 'user'), '--server-data-dir', join(dataDir, 'server'), '--extensions-dir', join(dataDir, 'ext')];
  // VSCODE_AGENT_FOLDER, TMPDIR and a HOME of its own keep the server (and its device id cache)
  // out of the user's home folder and /tmp.
  const env = {
    ...process.env,
    ...options.env,
    VSCODE_AGENT_FOLDER: join(dataDir, 'agent'),
    TMPDIR: join(dataDir, 'tmp'),
    HOME: join(dataDir, 'home'),
    XDG_CACHE_HOME: join(dataDir, 'home', '.cache'),
    XDG_CONFIG_HOME: join(dataDir, 'home', '.config'),
  };
  for (const vsix of options.installExtensions ?? []) {
    // The server's own CLI mode: installs and exits (the same code path as `code --install-extension`).
    const installed = spawnSync(process.execPath, [serverMain, '--accept-server-license-terms', ...folders, '--install-extension', vsix, '--force'], { env, encoding: 'utf8' });
    if (installed.status !== 0 || !/successfully installed/i.test(installed.stdout)) {
      throw new Error(`installing ${vsix} into the VS Code server failed: ${(installed.stdout + installed.stderr).trim()}`);
    }
    log(installed.stdout.trim());
  }
  const args = [
    serverMain, '--host', '127.0.0.1', '--port', String(port), '--without-connection-token',
    '--accept-server-license-terms', '--enable-smoke-test-driver',
    ...(options.workspaceTrust ? [] : ['--disable-workspace-trust']),
    '--telemetry-level', 'off', ...folders,
  ];
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
  let exited = false;
  const exitPromise = new Promise((res) => child.on('exit', () => { exited = true; res(); }));

  await new Promise((res, reject) => {
    const timer = setTimeout(() => reject(new Error('VS Code server did not start within 60 s')), 60_000);
    const onData = (chunk) => {
      const text = chunk.toString();
      for (const line of text.split('\n')) if (line.trim()) log(line);
      if (text.includes('Extension host agent started')) {
        clearTimeout(timer);
        res();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`VS Code server exited early with code ${code}`));
    });
  });

  const stop = async () => {
    if (!exited) {
      try { process.kill(-child.pid, 'SIGTERM'); } catch { /* already gone */ }
      const killer = setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } }, 3000);
      await exitPromise;
      clearTimeout(killer);
    }
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  return { port, origin: `http://127.0.0.1:${port}`, dataDir, userSettingsFile, stop };
}

/**
 * The workbench URL for a folder (or a .code-workspace file: `workspace`), with the extension
 * loaded from `extensionPath` (none: the installed extensions only) and optional tests.
 */
export function workbenchUrl(origin, { folder, workspace, extensionPath, testsPath }) {
  const authority = origin.replace(/^http:\/\//, '');
  const payload = [];
  if (extensionPath) payload.push(['extensionDevelopmentPath', `vscode-remote://${authority}${extensionPath}`]);
  if (testsPath) payload.push(['extensionTestsPath', `vscode-remote://${authority}${testsPath}`]);
  const target = workspace ? `workspace=${encodeURIComponent(workspace)}` : `folder=${encodeURIComponent(folder)}`;
  return `${origin}/?${target}${payload.length > 0 ? `&payload=${encodeURIComponent(JSON.stringify(payload))}` : ''}`;
}
