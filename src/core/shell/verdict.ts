// The answer every shell check gives: read-only or not, with a short reason a user can read
// ("stopped: redirect: output redirection to file"). Refusals are values, never exceptions.

export interface ShellVerdict {
  readOnly: boolean;
  /** A short code, a colon, then words: "ok", "command: rm is not read-only", … */
  reason: string;
}

export const OK: ShellVerdict = Object.freeze({ readOnly: true, reason: 'ok' });

/** A refusal: `code` groups reasons (redirect, command, git, …); `words` says what was seen. */
export function refuse(code: string, words: string): ShellVerdict {
  return { readOnly: false, reason: `${code}: ${words}` };
}

