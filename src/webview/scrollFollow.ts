// The transcript follows the user: a message they send brings the view to the end wherever they had
// scrolled, and while an answer streams below a scrolled-up view a "Jump to latest" button appears.
import { button, h, isScrolledToEnd } from './dom';
import { icon } from './icons';

export class ScrollFollow {
  readonly jumpButton: HTMLButtonElement;
  private busy = false;

  constructor(private readonly scroller: HTMLElement) {
    this.jumpButton = button(h('span', { class: 'button-label' }, icon('arrowDown'), 'Jump to latest'), () => this.follow(), {
      class: 'button secondary jump-latest',
      hidden: true,
      title: 'Scroll to the newest message',
    });
    scroller.addEventListener('scroll', () => this.refresh(), { passive: true });
  }

  /** To the end, and stay there as content grows. */
  follow(): void {
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.jumpButton.hidden = true;
  }

  setBusy(busy: boolean): void {
    this.busy = busy;
    this.refresh();
  }

  /** Content changed: offer the jump when the user is reading further up while something streams. */
  refresh(): void {
    this.jumpButton.hidden = !this.busy || isScrolledToEnd(this.scroller);
  }
}
