// Content hashes without holding up the caller: small contents are hashed on the spot (cheaper than
// a hand-off), large ones on the thread pool (WebCrypto copies the bytes at the call, as its spec says).
import { webcrypto } from 'node:crypto';
import { sha256 } from './entries';

/** Up to this size hashing in line costs less than handing the bytes to another thread. */
export const HASH_INLINE_LIMIT = 256 * 1024;

/** The SHA-256 (hex) of `data` as it is now, whatever the caller does with the bytes afterwards. */
export function digestOf(data: Uint8Array): Promise<string> {
  if (data.byteLength <= HASH_INLINE_LIMIT) return Promise.resolve(sha256(data));
  const pending = webcrypto.subtle.digest('SHA-256', data).then((hash) => Buffer.from(hash).toString('hex'));
  // Whoever needs the hash awaits it; one nobody needs must not become an unhandled rejection.
  pending.catch(() => undefined);
  return pending;
}
