// The webview's one link to the host: typed postMessage, and the small state VS Code keeps for a
// hidden webview (draft text, scroll position) through setState/getState.
import type { WebviewToHost } from '../shared/protocol';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

/** What survives the webview being hidden or reloaded (the host resends the transcript). */
export interface SavedState {
  draft: string;
  /** Pixels from the top of the transcript; null means "stuck to the bottom". */
  scrollTop: number | null;
}

export interface HostLink {
  post(message: WebviewToHost): void;
  loadState(): SavedState | undefined;
  saveState(state: SavedState): void;
}

export function connectToHost(): HostLink {
  // acquireVsCodeApi may be called only once per page load.
  const api: VsCodeApi =
    typeof acquireVsCodeApi === 'function'
      ? acquireVsCodeApi()
      : { postMessage: () => undefined, getState: () => undefined, setState: () => undefined };
  return {
    post: (message) => api.postMessage(message),
    loadState: () => {
      const raw = api.getState();
      if (typeof raw !== 'object' || raw === null) return undefined;
      const { draft, scrollTop } = raw as Record<string, unknown>;
      return {
        draft: typeof draft === 'string' ? draft : '',
        scrollTop: typeof scrollTop === 'number' && Number.isFinite(scrollTop) && scrollTop >= 0 ? scrollTop : null,
      };
    },
    saveState: (state) => api.setState(state),
  };
}
