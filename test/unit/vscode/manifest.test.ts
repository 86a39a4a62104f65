// What package.json declares about trust, as VS Code (and an outside static check) reads it: every
// speculate setting is either user-only (scope application) or restricted in untrusted workspaces.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { USER_ONLY_SETTINGS } from '../../../src/vscode/setup/settingPolicy';

interface Manifest {
  capabilities?: { untrustedWorkspaces?: { supported?: unknown; restrictedConfigurations?: string[] } };
  contributes: { configuration: { properties: Record<string, { scope?: string }> }; commands: { command: string }[] };
}

const manifest = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as Manifest;
const properties = manifest.contributes.configuration.properties;

describe('package.json: settings a workspace cannot use against the user', () => {
  it('declares limited support for untrusted workspaces', () => {
    assert.equal(manifest.capabilities?.untrustedWorkspaces?.supported, 'limited');
  });

  it('makes the settings that decide what runs unasked or where data and keys go user-only', () => {
    for (const key of Object.keys(USER_ONLY_SETTINGS)) assert.equal(properties[key]?.scope, 'application', key);
  });

  it('classifies every setting: user-only, or restricted until the workspace is trusted', () => {
    const restricted = new Set(manifest.capabilities?.untrustedWorkspaces?.restrictedConfigurations ?? []);
    const unclassified = Object.entries(properties)
      .filter(([key, schema]) => !(schema.scope === 'application' && key in USER_ONLY_SETTINGS) && !restricted.has(key))
      .map(([key]) => key);
    assert.deepEqual(
      unclassified,
      [],
      'a new speculate.* setting needs a decision: scope "application" plus an entry in USER_ONLY_SETTINGS (src/vscode/setup/settingPolicy.ts) ' +
        'when it decides what runs without asking or where data and keys go, else an entry in capabilities.untrustedWorkspaces.restrictedConfigurations',
    );
    for (const key of restricted) assert.ok(key in properties, `${key} is restricted but not contributed`);
  });

  it('contributes Set API Key and Clear API Key', () => {
    const commands = manifest.contributes.commands.map((c) => c.command);
    assert.ok(commands.includes('speculate.setApiKey'));
    assert.ok(commands.includes('speculate.clearApiKey'));
  });
});
