// The review list under the input: recomputed as the run writes, sent only when what the user would
// see changes — a run that ends with the list already on screen sends no second copy, which would
// otherwise reach the webview after the user's Tab.
import * as assert from 'node:assert/strict';
import type { HostToWebview } from '../../../src/shared/protocol';
import type { ChatSession } from '../../../src/core/session';
import type { WorkspaceFs } from '../../../src/core/fs/workspaceFs';
import { ChatPresenter } from '../../../src/vscode/chat/chatPresenter';
import { SpeculationReview } from '../../../src/vscode/speculation/speculationReview';

const DEBOUNCE_WAIT_MS = 200;
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function rig() {
  const base = new Map<string, string>([['src/a.ts', 'one\n']]);
  const overlay = new Map<string, string>([['src/a.ts', 'one\ntwo\n']]);
  const reader = (files: Map<string, string>) => ({
    readFile: async (path: string) => {
      const text = files.get(path);
      if (text === undefined) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      return new TextEncoder().encode(text);
    },
  });
  const speculation = { id: 'run1', status: 'running', filesWritten: [{ path: 'src/a.ts', kind: 'modified' }] };
  const dropped: { path: string; total: number; dropped: string[] }[] = [];
  const session = {
    get currentSpeculation() {
      return speculation;
    },
    currentOverlay: reader(overlay),
    excludedFiles: () => [],
    setExcluded: () => undefined,
    droppedHunks: () => dropped,
  } as unknown as ChatSession;
  // The real presenter: what reaches the webview is what it posts.
  const posted: HostToWebview[] = [];
  const presenter = new ChatPresenter({ post: (message) => posted.push(message), model: () => ({ label: 'm', demo: false }), settings: () => ({ enterAcceptsSuggestion: false }) });
  const postedFiles = () => posted.flatMap((m) => (m.type === 'speculationFiles' ? [m.files] : []));
  const review = new SpeculationReview({ session: () => session, workspaceFs: () => reader(base) as unknown as WorkspaceFs, presenter, log: () => undefined });
  return { review, speculation, overlay, presenter, postedFiles, dropped };
}

describe('SpeculationReview', () => {
  it('sends the list once when the run ends with the files already shown, and again when a count changes', async () => {
    const { review, postedFiles, speculation, overlay } = rig();
    const sent = postedFiles;
    review.update();
    await wait(DEBOUNCE_WAIT_MS);
    assert.deepEqual(sent(), [{ runId: 'run1', files: [{ path: 'src/a.ts', change: 'modified', added: 1, removed: 0, excluded: false }] }]);

    speculation.status = 'completed';
    review.update();
    await wait(DEBOUNCE_WAIT_MS);
    assert.equal(sent().length, 1, 'the run ended with the same list: nothing more is sent');

    overlay.set('src/a.ts', 'one\ntwo\nthree\n');
    review.update();
    await wait(DEBOUNCE_WAIT_MS);
    assert.equal(sent().length, 2);
    assert.equal(sent()[1]?.files[0]?.added, 2);
    review.dispose();
  });

  it('hides the list when the run is gone, and shows it again for the next run even if it looks the same', async () => {
    const { review, postedFiles, speculation } = rig();
    const sent = postedFiles;
    review.update();
    await wait(DEBOUNCE_WAIT_MS);
    speculation.status = 'aborted';
    review.update();
    await wait(DEBOUNCE_WAIT_MS);
    assert.equal(sent()[1], null);
    speculation.status = 'running';
    review.update();
    await wait(DEBOUNCE_WAIT_MS);
    assert.equal(sent().length, 3, 'hidden, then the same list shown again');
    assert.deepEqual(sent()[2], sent()[0]);
    review.dispose();
  });

  it('sends the same list again after the chat was cleared (the webview forgot it)', async () => {
    const { review, postedFiles, presenter } = rig();
    review.update();
    await wait(DEBOUNCE_WAIT_MS);
    presenter.clear();
    review.update();
    await wait(DEBOUNCE_WAIT_MS);
    assert.equal(postedFiles().length, 2);
    assert.deepEqual(postedFiles()[1], postedFiles()[0]);
    review.dispose();
  });

  it('says how many of a file\'s changes are still kept once some were dropped', async () => {
    const { review, postedFiles, dropped, speculation } = rig();
    speculation.status = 'completed';
    review.update();
    await wait(DEBOUNCE_WAIT_MS);
    assert.equal(postedFiles()[0]?.files[0]?.hunks, undefined, 'nothing dropped: no count');
    dropped.push({ path: 'src/a.ts', total: 3, dropped: ['line 2 (+1)'] });
    review.refreshNow();
    await wait(DEBOUNCE_WAIT_MS);
    assert.deepEqual(postedFiles()[1]?.files[0]?.hunks, { kept: 2, total: 3 });
    review.dispose();
  });
});
