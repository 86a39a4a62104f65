// The extension loads in a real VS Code: it activates, contributes its commands and its chat view.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID, speculateApi } from './api';

describe('activation', () => {
  it('activates and records how long activation took', async () => {
    const api = await speculateApi();
    assert.equal(vscode.extensions.getExtension(EXTENSION_ID)?.isActive, true);
    assert.ok(api.activationMs >= 0);
    console.log(`[speculate] activate() took ${api.activationMs.toFixed(1)} ms`);
  });

  it('registers every command the manifest contributes', async () => {
    await speculateApi();
    const extensionPath = vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath;
    const manifest = JSON.parse(readFileSync(join(extensionPath, 'package.json'), 'utf8')) as { contributes: { commands: { command: string }[] } };
    const contributed = manifest.contributes.commands.map((c) => c.command);
    assert.ok(contributed.length >= 8);
    const registered = new Set(await vscode.commands.getCommands(true));
    assert.deepEqual(contributed.filter((id) => !registered.has(id)), []);
  });

  it('opens the chat view and its webview says it is ready', async () => {
    const api = await speculateApi();
    const ready = new Promise<void>((resolve) => {
      const subscription = api.chatView.onMessage((message) => {
        if (message.type !== 'ready') return;
        subscription.dispose();
        resolve();
      });
    });
    await vscode.commands.executeCommand('speculate.chat.focus');
    await ready;
    assert.equal(api.chatView.visible, true);
  });

  it('"Show Statistics" opens a readable summary that stays on this machine', async () => {
    await speculateApi();
    await vscode.commands.executeCommand('speculate.showStatistics');
    const editor = vscode.window.activeTextEditor;
    assert.ok(editor, 'a document with the statistics is shown');
    assert.match(editor.document.getText(), /Suggestions/);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });
});
