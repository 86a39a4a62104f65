// How the host routes the webview's messages to the rooms by feature: each room lists the message
// types it answers (a type guard made from that list) and ends its switch in unhandledMessage, typed
// `never`, so a message type that no room takes, or that a room's switch forgets, is a compile error.
import type { WebviewToHost } from '../../shared/protocol';

/** A type guard for the messages whose type is in `types`. */
export function messageTypeGuard<M extends WebviewToHost>(types: readonly M['type'][]): (message: WebviewToHost) => message is M {
  const known = new Set<string>(types);
  return (message): message is M => known.has(message.type);
}

/** The end of an exhaustive switch or chain of guards; a message that still arrives at run time is named. */
export function unhandledMessage(message: never, room: string): never {
  throw new Error(`the ${room} has no handler for the webview message ${JSON.stringify((message as { type?: unknown }).type)}`);
}
