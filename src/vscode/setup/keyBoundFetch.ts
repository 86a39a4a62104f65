// The fetch the model client goes through: credential headers leave only for the origin the key
// was stored for, and no request follows a redirect to another origin (fetch itself drops only
// `Authorization` there, not Azure's `api-key`, and the conversation would go along). Pure.

/** Headers that carry a key: OpenAI-style bearer, Azure's api-key, and the common x-api-key. */
const CREDENTIAL_HEADERS = ['authorization', 'api-key', 'x-api-key'];
const MAX_REDIRECTS = 5;

/** Thrown (the client reports it as a connection error) when an endpoint redirects elsewhere. */
export class CrossOriginRedirectError extends Error {
  readonly code = 'ERR_CROSS_ORIGIN_REDIRECT';
  constructor(readonly from: string, readonly to: string) {
    super(
      `${from} redirected the request to ${to}. Speculate does not follow a redirect to another address, so your code and key ` +
        `stay where you sent them; if ${to} is right, set speculate.baseUrl to it in your user settings`,
    );
    this.name = 'CrossOriginRedirectError';
  }
}

/**
 * Wraps `base` so that credential headers reach `credentialOrigin` only (none at all when it is
 * undefined), same-origin redirects are followed and cross-origin ones refused.
 */
export function keyBoundFetch(credentialOrigin: string | undefined, base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const request = input instanceof Request ? input : undefined;
    let url = new URL(request ? request.url : input instanceof URL ? input.href : String(input));
    let method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
    let body = init?.body;
    const headers = new Headers(request?.headers);
    new Headers(init?.headers).forEach((value, name) => headers.set(name, value));
    for (let hop = 0; ; hop++) {
      const sent = new Headers(headers);
      if (url.origin !== credentialOrigin) for (const name of CREDENTIAL_HEADERS) sent.delete(name);
      const response = await base(url.href, { ...init, method, body, headers: sent, redirect: 'manual' });
      const location = isRedirect(response.status) ? response.headers.get('location') : null;
      if (!location || hop >= MAX_REDIRECTS) return response;
      const next = new URL(location, url);
      if (next.origin !== url.origin) {
        await response.body?.cancel().catch(() => undefined);
        throw new CrossOriginRedirectError(url.origin, next.origin);
      }
      // A body that was a stream cannot be sent twice: hand the redirect back as it is.
      if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof URLSearchParams)) return response;
      await response.body?.cancel().catch(() => undefined);
      // Fetch's rules: 303, and 301/302 after a POST, continue as GET without a body.
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        headers.delete('content-type');
      }
      url = next;
    }
  };
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}
