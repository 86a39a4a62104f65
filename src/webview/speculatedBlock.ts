// The running suggestion's speculated turns, rendered off-screen as the host sends them, so that Tab
// only has to reveal them: the result is on screen in the key's own frame, marked until the host answers.
import type { AcceptGesture, RevealOutcome, SpeculationPreview, Suggestion, TranscriptItem, WebviewToHost } from '../shared/protocol';
import { h } from './dom';
import { icon } from './icons';
import { Transcript } from './transcript';

export interface SpeculatedBlockActions {
  post(message: WebviewToHost): void;
  /** Says something through the live region; `keep`: what is said right after is added, not swapped in. */
  announce(text: string, keep?: boolean): void;
  /** The next suggestion shown with the block must wait after all (conflicts) or was wrong (withdrawn). */
  retractSuggestion(id: string): void;
}

/** The version of the preview this webview holds, put together from the host's partial updates. */
interface Preview {
  seq: number;
  suggestionId: string;
  final: boolean;
  items: TranscriptItem[];
  next: Suggestion | null;
}

interface Revealed {
  seq: number;
  mark: HTMLElement;
  next: Suggestion | null;
  remove(): void;
}

type MarkState = 'applying' | 'waiting' | 'not-applied';

export class SpeculatedBlock {
  /** Renders the preview out of sight; its element sits in the transcript, hidden. */
  private readonly stage: Transcript;
  private preview: Preview | null = null;
  /** How many of the preview's items the stage has rendered. */
  private rendered = 0;
  /** What the stage would have announced (the final answer): said when the block is revealed. */
  private result = '';
  private revealed: Revealed | null = null;

  constructor(
    private readonly transcript: Transcript,
    private readonly actions: SpeculatedBlockActions,
  ) {
    this.stage = Transcript.offscreen({
      post: (message) => actions.post(message),
      announce: (text) => (this.result = text),
      // Nothing off-screen may take the focus.
      isTyping: () => true,
      focusInput: () => undefined,
    });
  }

  /** The hidden stage; main.ts places it inside the transcript. */
  get element(): HTMLElement {
    return this.stage.element;
  }

  /** A new version from the host: only items from `from` on are rendered again. */
  update(preview: SpeculationPreview | null): void {
    if (preview === null) {
      this.preview = null;
      this.resetStage();
      return;
    }
    const base = this.preview?.suggestionId === preview.suggestionId ? this.preview.items : [];
    if (preview.from > base.length) {
      // A version this copy cannot be brought up to: better none (Tab asks the host) than a wrong one.
      this.preview = null;
      this.resetStage();
      return;
    }
    const items = [...base.slice(0, preview.from), ...preview.items];
    if (preview.from < this.rendered || base.length === 0) this.resetStage();
    for (let i = this.rendered; i < items.length; i++) this.stage.append(items[i]);
    this.rendered = items.length;
    this.preview = { seq: preview.seq, suggestionId: preview.suggestionId, final: preview.final, items, next: preview.next };
  }

  /**
   * Tab (or Enter, or a click) on `suggestion`: when its finished run is rendered, it moves into the
   * transcript now, marked "applying…", and the host is told which version is on screen. Returns
   * the suggestion to show next (the pipelined one, when known), or null when there was nothing to
   * reveal and the host must be asked the usual way.
   */
  reveal(suggestion: Suggestion, method: AcceptGesture): { next: Suggestion | null } | null {
    const preview = this.preview;
    if (!preview || !preview.final || preview.suggestionId !== suggestion.id || this.revealed || this.rendered === 0) return null;
    const block = this.transcript.adopt(this.stage);
    const mark = h('span', { class: 'badge apply-mark' });
    setMark(mark, 'applying', []);
    markHolder(block.elements)?.append(mark);
    this.revealed = { seq: preview.seq, mark, next: preview.next, remove: block.remove };
    this.preview = null;
    this.rendered = 0;
    this.actions.post({ type: 'acceptRevealed', suggestionId: suggestion.id, seq: preview.seq, method });
    if (this.result !== '') this.actions.announce(this.result, true);
    this.result = '';
    return { next: preview.next };
  }

  /** The host's answer for the revealed block `seq`. */
  answer(seq: number, outcome: RevealOutcome, notApplied: string[]): void {
    const revealed = this.revealed;
    if (!revealed || revealed.seq !== seq) return;
    if (outcome === 'conflicts') {
      // The conflict block follows; the next suggestion comes once every file is settled.
      setMark(revealed.mark, 'waiting', notApplied);
      this.retract(revealed);
      return;
    }
    this.revealed = null;
    if (outcome === 'withdrawn') {
      revealed.remove();
      this.retract(revealed);
      return;
    }
    if (notApplied.length === 0) revealed.mark.remove();
    else setMark(revealed.mark, 'not-applied', notApplied);
  }

  /** Init or a new chat: the transcript was rebuilt, so nothing revealed is pending any more. */
  reset(preview: SpeculationPreview | null): void {
    this.revealed = null;
    this.preview = null;
    this.resetStage();
    if (preview) this.update({ ...preview, from: 0 });
  }

  private retract(revealed: Revealed): void {
    if (revealed.next) this.actions.retractSuggestion(revealed.next.id);
    revealed.next = null;
  }

  private resetStage(): void {
    this.stage.clear();
    this.rendered = 0;
    this.result = '';
  }
}

/** The header of the block's response (or of its only turn), where the mark goes. */
function markHolder(elements: HTMLElement[]): HTMLElement | null {
  const response = [...elements].reverse().find((element) => element.matches('.turn.response'));
  return (response ?? elements.at(-1))?.querySelector<HTMLElement>('.turn-header') ?? null;
}

function files(paths: string[]): string {
  return paths.length === 1 ? paths[0] : `${paths.length} files`;
}

function setMark(mark: HTMLElement, state: MarkState, paths: string[]): void {
  mark.dataset.state = state;
  if (state === 'applying') {
    mark.replaceChildren(icon('spinner', 'spin'), 'applying…');
    mark.title = 'Speculate is writing these changes to your files';
  } else if (state === 'waiting') {
    mark.replaceChildren(icon('warning'), `${files(paths)} not applied yet`);
    mark.title = `Not applied until you choose below: ${paths.join(', ')}`;
  } else {
    mark.replaceChildren(icon('denied'), `${files(paths)} not applied`);
    mark.title = `You kept your own version of ${paths.join(', ')}`;
  }
}
