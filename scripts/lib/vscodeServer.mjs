// Starts VS Code's own server (from code-server's npm package) on 127.0.0.1 with every folder it
// writes kept inside one temporary directory, and stops it with its whole process group.
import { spawn } from 'node:child_process';
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
 * @param {{port?: number, env?: Record<string,string>, log?: (line: string) => void, dataDir?: string,
 *   userSettings?: Record<string, unknown>, workspaceTrust?: boolean}} options
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
  const args = [
    serverMain, '--host', '127.0.0.1', '--port', String(port), '--without-connection-token',
    '--accept-server-license-terms', '--enable-smoke-test-driver',
    ...(options.workspaceTrust ? [] : ['--disable-workspace-trust']),
    '--telemetry-level', 'off', '--user-data-dir', join(dataDir, 'user'), '--server-data-dir', join(dataDir, 'server'),
    '--extensions-dir', join(dataDir, 'ext'),
  ];
  const child = spawn(process.execPath, args, {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    // VSCODE_AGENT_FOLDER, TMPDIR and a HOME of its own keep the server (and its device id cache)
    // out of the user's home folder and /tmp.
    env: {
      ...process.env,
      ...options.env,
      VSCODE_AGENT_FOLDER: join(dataDir, 'agent'),
      TMPDIR: join(dataDir, 'tmp'),
      HOME: join(dataDir, 'home'),
      XDG_CACHE_HOME: join(dataDir, 'home', '.cache'),
      XDG_CONFIG_HOME: join(dataDir, 'home', '.config'),
    },
  });
  const log = options.log ?? (() => {});
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

/** The workbench URL for a folder, with the extension loaded from `extensionPath` and optional tests. */
export function workbenchUrl(origin, { folder, extensionPath, testsPath }) {
  const authority = origin.replace(/^http:\/\//, '');
  const payload = [['extensionDevelopmentPath', `vscode-remote://${authority}${extensionPath}`]];
  if (testsPath) payload.push(['extensionTestsPath', `vscode-remote://${authority}${testsPath}`]);
  return `${origin}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
}
