// An error in the transcript: what went wrong, the buttons that fix its cause (Set API Key, Select
// Model, Open Settings … each a fixed command on the host) and Retry last, since retrying before
// fixing the cause would fail the same way.
import type { ChatAction, WebviewToHost } from '../shared/protocol';
import { button, h, srOnly } from './dom';
import { icon, type IconName } from './icons';

/** The icon on an error's action button. */
const ACTION_ICONS: Record<ChatAction['action'], IconName> = { setApiKey: 'key', selectModel: 'sparkle', openUserSettings: 'gear', manageTrust: 'shield', runLive: 'send', setUpEndpoint: 'bolt' };

/** The message a chat action's button posts: the action's id, never a command. */
export function chatActionMessage(action: ChatAction): WebviewToHost {
  return { type: 'chatAction', action: action.action, ...(action.setting ? { setting: action.setting } : {}) };
}

export function renderErrorBlock(id: string, message: string, retryable: boolean, actions: readonly ChatAction[], post: (message: WebviewToHost) => void): HTMLElement {
  const buttons = h('div', { class: 'error-actions' });
  for (const action of actions) {
    buttons.appendChild(
      button(h('span', { class: 'button-label' }, icon(ACTION_ICONS[action.action]), action.label), () => post(chatActionMessage(action)), {
        class: `button secondary error-action action-${action.action}`,
      }),
    );
  }
  if (retryable) {
    const retry = button(
      h('span', { class: 'button-label' }, icon('retry'), 'Retry'),
      () => {
        retry.setAttribute('disabled', '');
        post({ type: 'retry', errorId: id });
      },
      { class: 'button secondary retry' },
    );
    buttons.appendChild(retry);
  }
  return h(
    'div',
    { class: 'error-block', 'data-id': id, role: 'alert' },
    icon('error', 'error-icon'),
    h('div', { class: 'error-message' }, srOnly('Error: '), message),
    buttons.childElementCount > 0 ? buttons : null,
  );
}
