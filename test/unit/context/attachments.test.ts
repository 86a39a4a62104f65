// Attachments: the fixed form they take in a user message, the user's words kept apart for Edit,
// and files read only from inside the workspace (no escape by path or symlink, no binary, cut when long).
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import {
  ATTACHMENT_MAX_LINES,
  attachmentLabel,
  composeUserMessage,
  readFileAttachment,
  replaceUserText,
  userTextOf,
  type Attachment,
} from '../../../src/core/context/attachments';
import { makeWorkspace, SECRET, type TempWorkspace } from '../tools/workspaceFixture';

describe('attachments', () => {
  let ws: TempWorkspace;
  beforeEach(async () => {
    ws = await makeWorkspace({ 'src/a.ts': 'export const a = 1;\n', 'bin.dat': new Uint8Array([1, 0, 2]), 'long.txt': Array.from({ length: 2000 }, (_, i) => `line ${i + 1}`).join('\n') });
  });
  afterEach(() => ws.cleanup());

  it('writes each kind in one fixed form, and a message without attachments is just the words', () => {
    const attachments: Attachment[] = [
      { kind: 'file', path: 'src/a "quoted".ts', text: 'x', cutLines: 3 },
      { kind: 'selection', path: 'src/a.ts', startLine: 4, endLine: 9, text: 'y\n' },
      { kind: 'problems', path: 'src/a.ts', problems: [] },
    ];
    assert.equal(composeUserMessage('plain', []), 'plain');
    const composed = composeUserMessage('look', attachments);
    assert.equal(
      composed,
      "look\n\n<attached_context>\n<file path=\"src/a 'quoted'.ts\">\nx\n</file>\n[3 more lines not attached; read_file can read them]\n" +
        '<selection path="src/a.ts" lines="4-9">\ny\n</selection>\n<problems path="src/a.ts">\nNo problems reported.\n</problems>\n</attached_context>',
    );
    assert.equal(composeUserMessage('look', attachments), composed, 'the same input gives the same bytes');
    assert.equal(userTextOf(composed), 'look');
    assert.equal(replaceUserText(composed, 'look closer'), composed.replace(/^look/, 'look closer'));
    assert.equal(replaceUserText('no context', 'new words'), 'new words');
  });

  it('labels chips the way a person names them', () => {
    assert.equal(attachmentLabel({ kind: 'file', path: 'src/a.ts', text: '', cutLines: 0 }), 'a.ts');
    assert.equal(attachmentLabel({ kind: 'selection', path: 'src/a.ts', startLine: 3, endLine: 5, text: '' }), 'a.ts:3-5');
    assert.equal(attachmentLabel({ kind: 'selection', path: 'src/a.ts', startLine: 3, endLine: 3, text: '' }), 'a.ts:3');
    assert.equal(attachmentLabel({ kind: 'problems', path: 'src/a.ts', problems: [] }), 'problems in a.ts (0)');
  });

  it('reads a workspace file as it is', async () => {
    const result = await readFileAttachment(ws.fs, path.join(ws.root, 'src/a.ts'));
    assert.deepEqual(result, { ok: true, attachment: { kind: 'file', path: 'src/a.ts', text: 'export const a = 1;\n', cutLines: 0 } });
  });

  it('cuts a long file and says how much was left out', async () => {
    const result = await readFileAttachment(ws.fs, 'long.txt');
    assert.ok(result.ok && result.attachment.kind === 'file');
    assert.equal(result.attachment.text.split('\n').length - 1, ATTACHMENT_MAX_LINES);
    assert.equal(result.attachment.cutLines, 2000 - ATTACHMENT_MAX_LINES);
  });

  it('refuses what is outside the workspace (also through a symlink), a folder, a binary or a missing file', async () => {
    await ws.link('escape.txt', path.join(ws.outside, 'secret.txt'));
    const refusals = await Promise.all(['../outside/secret.txt', path.join(ws.outside, 'secret.txt'), 'escape.txt', 'src', 'bin.dat', 'gone.ts'].map((p) => readFileAttachment(ws.fs, p)));
    for (const result of refusals) {
      assert.equal(result.ok, false);
      assert.ok(!result.ok && !result.reason.includes(SECRET));
    }
    assert.deepEqual(refusals.map((r) => (!r.ok ? /outside the workspace|folder|binary|does not exist/.exec(r.reason)?.[0] : 'read')), [
      'outside the workspace', 'outside the workspace', 'outside the workspace', 'folder', 'binary', 'does not exist',
    ]);
  });
});
