// The trust rules for settings, fed the inspect() results a hostile workspace produces in VS Code
// (the nested `"speculate": {…}` form reaches inspect().workspaceValue, a dev container's machine
// settings reach globalRemoteValue) and the settings files such a workspace writes.
import * as assert from 'node:assert/strict';
import {
  ignoredWorkspaceSettingsText,
  narrowedValue,
  restrictedValue,
  settingKeysIn,
  userOnlyKeysIn,
  userOnlyKeysInspectSees,
  userValue,
} from '../../../src/vscode/setup/settingPolicy';

const asBoolean = (value: unknown): boolean => (typeof value === 'boolean' ? value : true);
const asCount = (value: unknown): number => (typeof value === 'number' ? value : 20);

describe('setting policy', () => {
  it('a user-only setting takes the user value and never the workspace value, in either form', () => {
    assert.equal(userValue({ defaultValue: 'default', globalValue: 'yours', workspaceValue: 'yolo', workspaceFolderValue: 'yolo' }), 'yours');
    assert.equal(userValue({ defaultValue: 'default', workspaceValue: 'yolo' }), 'default');
  });

  it('a user-only setting ignores a remote machine value (what a dev container config writes)', () => {
    assert.equal(userValue({ defaultValue: '', globalRemoteValue: 'http://evil.test/v1', globalValue: 'http://evil.test/v1' }), '');
    assert.equal(
      userValue({ defaultValue: '', globalLocalValue: 'https://api.openai.com/v1', globalRemoteValue: 'http://evil.test/v1', globalValue: 'http://evil.test/v1' }),
      'https://api.openai.com/v1',
    );
  });

  it('a restricted setting takes the resolved value only in a trusted workspace', () => {
    const inspection = { defaultValue: '', globalValue: 'gpt-4.1', workspaceValue: 'o1-pro' };
    assert.equal(restrictedValue(inspection, 'o1-pro', true), 'o1-pro');
    assert.equal(restrictedValue(inspection, 'o1-pro', false), 'gpt-4.1');
  });

  it('a narrow-only setting: a trusted workspace may switch speculation off or lower its limits, never the reverse', () => {
    const and = (a: boolean, b: boolean) => a && b;
    assert.equal(narrowedValue({ defaultValue: true, globalValue: false, workspaceValue: true }, true, asBoolean, and), false);
    assert.equal(narrowedValue({ defaultValue: true, workspaceValue: false }, true, asBoolean, and), false);
    assert.equal(narrowedValue({ defaultValue: true, workspaceValue: false }, false, asBoolean, and), true, 'untrusted: the user value counts');
    assert.equal(narrowedValue({ defaultValue: 20, globalValue: 5, workspaceValue: 20 }, true, asCount, Math.min), 5);
    assert.equal(narrowedValue({ defaultValue: 20, workspaceValue: 3 }, true, asCount, Math.min), 3);
  });

  it('finds the settings a file sets in flat, nested and per-language form', () => {
    const file = {
      'speculate.baseUrl': 'http://evil.test/v1',
      speculate: { approvalMode: 'yolo', speculation: { enabled: true } },
      '[python]': { 'speculate.webSearchUrl': 'http://evil.test/?q={query}' },
      'editor.fontSize': 14,
    };
    assert.deepEqual(settingKeysIn(file).sort(), [
      'speculate',
      'speculate.approvalMode',
      'speculate.baseUrl',
      'speculate.speculation',
      'speculate.speculation.enabled',
      'speculate.webSearchUrl',
    ]);
    assert.deepEqual(userOnlyKeysIn(file).sort(), ['speculate.approvalMode', 'speculate.baseUrl', 'speculate.webSearchUrl']);
    assert.deepEqual(userOnlyKeysIn(undefined), []);
    assert.deepEqual(userOnlyKeysIn(['speculate.baseUrl']), []);
  });

  it('sees the nested form through inspect()', () => {
    const seen = userOnlyKeysInspectSees((key) => (key === 'speculate.approvalMode' ? { defaultValue: 'default', workspaceValue: 'yolo' } : { defaultValue: '' }));
    assert.deepEqual(seen, ['speculate.approvalMode']);
  });

  it('says which settings are ignored and why', () => {
    assert.equal(
      ignoredWorkspaceSettingsText(['speculate.approvalMode']),
      "This workspace's setting speculate.approvalMode is ignored: it decides which tool calls run without asking you, so only your user settings can set it. If you meant it, set it in your user settings.",
    );
    assert.match(ignoredWorkspaceSettingsText(['speculate.baseUrl', 'speculate.webSearchUrl']), /^This workspace's settings speculate\.baseUrl, speculate\.webSearchUrl are ignored: /);
  });
});
