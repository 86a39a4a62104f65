// The words with the native keeper: requests as NUL-separated fields, and its messages split back
// out of a stream that arrives in arbitrary pieces (output frames carry any bytes, newlines included).
import * as assert from 'node:assert/strict';
import { encodeRun, KeeperStream, type KeeperMessage } from '../../../src/core/sandbox/keeperProtocol';

describe('keeper protocol', () => {
  it('reads messages and output frames however the stream is cut', () => {
    const payload = Buffer.from('line one\nline two\n\u00e9\0binary', 'utf8');
    const whole = Buffer.concat([
      Buffer.from('ready 4242\nstarted c1 4300\n'),
      Buffer.from(`out c1 ${payload.length}\n`),
      payload,
      Buffer.from('exit c1 0\nnoise from nowhere\ngone c1\ncfail c2 mount 1\nfail mount 1 Operation not permitted\n'),
    ]);
    const expected: KeeperMessage[] = [
      { type: 'ready', pid: 4242 },
      { type: 'started', id: 'c1', pid: 4300 },
      { type: 'out', id: 'c1', data: payload },
      { type: 'exit', id: 'c1', status: 0 },
      { type: 'gone', id: 'c1' },
      { type: 'cfail', id: 'c2', step: 'mount', errno: 1 },
      { type: 'fail', step: 'mount', detail: '1 Operation not permitted' },
    ];
    for (const size of [1, 3, 7, whole.length]) {
      const stream = new KeeperStream();
      const got: KeeperMessage[] = [];
      for (let at = 0; at < whole.length; at += size) got.push(...stream.feed(whole.subarray(at, at + size)));
      assert.deepEqual(got, expected, `in pieces of ${size}`);
    }
  });

  it('writes a run request as NUL-terminated fields, env and mounts counted, and refuses a NUL inside one', () => {
    const request = encodeRun({ id: 'c3', cwd: '/w', fileKb: 1.5, memoryKb: 10, cpuSeconds: 2, processes: 8, env: { A: '1', B: 'x y' }, mounts: [{ source: 'tmpfs', target: '/tmp', type: 'tmpfs', options: 'nosuid' }], command: 'echo "a\nb"' });
    assert.deepEqual(request.toString('utf8').split('\0'), ['run', 'c3', '/w', '2', '10', '2', '8', '2', 'A=1', 'B=x y', '1', 'tmpfs', '/tmp', 'tmpfs', 'nosuid', 'echo "a\nb"', '']);
    assert.throws(() => encodeRun({ id: 'c4', cwd: '/w', fileKb: 1, memoryKb: 1, cpuSeconds: 1, processes: 1, env: {}, mounts: [], command: 'a\0b' }), /NUL/);
  });
});
