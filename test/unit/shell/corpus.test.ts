// The shell corpus (test/fixtures/shell-corpus.json): adversarial commands that must stop
// speculation and ordinary inspection commands that should let it go on.
import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isShellCommandReadOnly, type ShellCheckContext } from '../../../src/core/shell';

interface CorpusCase {
  command: string;
  readOnly: boolean;
  /** "inspection": something an agent runs to look around; "adversarial": an escape attempt. */
  kind: 'inspection' | 'adversarial';
  why: string;
}

const cases = JSON.parse(readFileSync(join(process.cwd(), 'test', 'fixtures', 'shell-corpus.json'), 'utf8')) as CorpusCase[];

describe('shell classifier: corpus', () => {
  // An empty workspace and the system PATH: the verdicts must not depend on this machine's PATH
  // (version managers' shims) or on what the test's working directory holds.
  let workspace: string;
  let context: ShellCheckContext;
  before(() => {
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'shell-corpus-')));
    for (const folder of ['src', 'docs', 'test']) mkdirSync(join(workspace, folder));
    context = { workspaceRoot: workspace, pathValue: '/usr/bin:/bin' };
  });
  after(() => rmSync(workspace, { recursive: true, force: true }));

  it('holds at least 300 cases, a good part of them refusals, without duplicates', () => {
    assert.ok(cases.length >= 300, `${cases.length} cases`);
    const refused = cases.filter((c) => !c.readOnly).length;
    assert.ok(refused >= cases.length * 0.4 && refused <= cases.length * 0.7, `${refused} of ${cases.length} refused`);
    assert.equal(new Set(cases.map((c) => c.command)).size, cases.length);
  });

  it('accepts at least 95% of the inspection commands', async () => {
    const inspection = cases.filter((c) => c.kind === 'inspection');
    let accepted = 0;
    for (const c of inspection) if ((await isShellCommandReadOnly(c.command, context)).readOnly) accepted++;
    assert.ok(accepted / inspection.length >= 0.95, `${accepted} of ${inspection.length} accepted`);
  });

  for (const c of cases) {
    it(`${c.readOnly ? 'accepts' : 'refuses'} ${JSON.stringify(c.command)}`, async () => {
      const verdict = await isShellCommandReadOnly(c.command, context);
      assert.equal(verdict.readOnly, c.readOnly, `${JSON.stringify(c.command)} → ${verdict.reason} (expected because: ${c.why})`);
      if (verdict.readOnly) assert.equal(verdict.reason, 'ok');
      else assert.match(verdict.reason, /^[a-z]+: \S/, 'a refusal says "code: words"');
    });
  }
});
