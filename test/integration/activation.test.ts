// The extension loads in a real VS Code: it activates, contributes its commands and its chat view.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

const EXTENSION_ID = 'speculate.speculate';

describe('activation', () => {
  it('activates and records how long activation took', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `extension ${EXTENSION_ID} is installed`);
    const started = Date.now();
    await extension.activate();
    assert.equal(extension.isActive, true);
    console.log(`[speculate] activation took ${Date.now() - started} ms`);
  });
});
