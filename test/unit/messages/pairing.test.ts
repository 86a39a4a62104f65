// Pairing repair before speculated messages join the main chat: nothing dangles, nothing is invented.
import * as assert from 'node:assert/strict';
import type { ChatMessage } from '../../../src/core/messages';
import { ensureToolResultPairing, isToolResultPairingValid } from '../../../src/core/messages/pairing';

const call = (id: string, name = 'read_file') => ({ id, type: 'function' as const, function: { name, arguments: '{}' } });

describe('ensureToolResultPairing', () => {
  it('keeps a well-paired conversation unchanged', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
      { role: 'tool', tool_call_id: 'b', content: 'B' },
      { role: 'assistant', content: 'done' },
    ];
    assert.deepEqual(ensureToolResultPairing(messages), messages);
    assert.equal(isToolResultPairingValid(messages), true);
  });

  it('removes calls without a result and keeps the executed ones in order', () => {
    const messages: ChatMessage[] = [
      { role: 'assistant', content: 'reading', tool_calls: [call('a'), call('b'), call('c')] },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
      { role: 'tool', tool_call_id: 'c', content: 'C' },
    ];
    const repaired = ensureToolResultPairing(messages);
    assert.deepEqual(repaired, [
      { role: 'assistant', content: 'reading', tool_calls: [call('a'), call('c')] },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
      { role: 'tool', tool_call_id: 'c', content: 'C' },
    ]);
    assert.equal(isToolResultPairingValid(messages), false);
  });

  it('drops results that no call claims, duplicates, and assistant messages left empty', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'tool', tool_call_id: 'orphan', content: 'x' },
      { role: 'assistant', content: null, tool_calls: [call('a')] },
      { role: 'assistant', content: null, tool_calls: [call('b')] },
      { role: 'tool', tool_call_id: 'b', content: 'B' },
      { role: 'tool', tool_call_id: 'b', content: 'B again' },
    ];
    assert.deepEqual(ensureToolResultPairing(messages), [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call('b')] },
      { role: 'tool', tool_call_id: 'b', content: 'B' },
    ]);
  });

  it('returns copies, so repairing never mutates the input', () => {
    const messages: ChatMessage[] = [{ role: 'assistant', content: null, tool_calls: [call('a')] }, { role: 'tool', tool_call_id: 'a', content: 'A' }];
    const repaired = ensureToolResultPairing(messages);
    (repaired[0] as { content: string | null }).content = 'changed';
    assert.equal(messages[0].content, null);
  });

  it('keeps what else an assistant message carries (reasoning a thinking server needs back), so a well-paired history stays valid', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call('a'), call('b')], reasoning_content: 'Read both.' },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
    ];
    assert.deepEqual(ensureToolResultPairing(messages)[1], { role: 'assistant', content: null, tool_calls: [call('a')], reasoning_content: 'Read both.' });
    assert.equal(isToolResultPairingValid(messages.slice(0, 2).concat([{ role: 'tool', tool_call_id: 'a', content: 'A' }, { role: 'tool', tool_call_id: 'b', content: 'B' }])), true);
  });
});
