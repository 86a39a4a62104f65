// The agent's system prompt: it names the workspace root and says paths are workspace-relative,
// and it is stable (the first block of every cached prefix).
import * as assert from 'node:assert/strict';
import { buildSystemPrompt } from '../../../src/core/chat/systemPrompt';

describe('buildSystemPrompt', () => {
  it('names the workspace root and asks for workspace-relative paths', () => {
    const prompt = buildSystemPrompt({ workspaceRoot: '/home/ada/project', platform: 'linux' });
    assert.match(prompt, /Workspace root: \/home\/ada\/project/);
    assert.match(prompt, /relative to the workspace root/);
    assert.match(prompt, /Platform: linux/);
  });

  it('is the same text for the same input (nothing time- or turn-dependent)', () => {
    const input = { workspaceRoot: '/w' };
    assert.equal(buildSystemPrompt(input), buildSystemPrompt({ ...input }));
    assert.doesNotMatch(buildSystemPrompt(input), /\d{4}-\d{2}-\d{2}/);
  });
});
