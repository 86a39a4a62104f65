// An approval card in the transcript: "Allow <tool>?" with what the call would do, and Allow,
// Always allow, Deny (Allow focused, so Enter answers); after the answer, the words for it.
import type { ApprovalChoice } from '../shared/protocol';
import { button, cssId, h } from './dom';
import { icon } from './icons';

const DECISION_TEXT: Record<ApprovalChoice, string> = {
  allow: 'Allowed',
  deny: 'Denied',
  always: 'Allowed (won’t ask again in this chat)',
};

/** The words an answered card shows. */
export function approvalDecisionText(decision: ApprovalChoice): string {
  return DECISION_TEXT[decision];
}

export function renderApprovalCard(
  id: string,
  tool: string,
  summary: string,
  detail: string,
  answer: (decision: ApprovalChoice) => void,
): { element: HTMLElement; actions: HTMLElement; outcome: HTMLElement; allow: HTMLButtonElement } {
  const titleId = `approval-title-${cssId(id)}`;
  const allow = button('Allow', () => answer('allow'), { class: 'button primary', 'data-decision': 'allow' });
  const always = button('Always allow', () => answer('always'), {
    class: 'button secondary',
    'data-decision': 'always',
    title: `Allow ${tool} without asking again in this chat`,
  });
  const deny = button('Deny', () => answer('deny'), { class: 'button secondary', 'data-decision': 'deny' });
  const actions = h('div', { class: 'approval-actions' }, allow, always, deny);
  const outcome = h('div', { class: 'approval-outcome', hidden: true });
  const element = h(
    'div',
    { class: 'approval pending', 'data-id': id, role: 'group', 'aria-labelledby': titleId },
    h('div', { class: 'approval-title', id: titleId }, icon('shield'), h('span', {}, 'Allow ', h('code', {}, tool), '?')),
    summary ? h('div', { class: 'approval-summary' }, summary) : null,
    detail && detail !== summary ? h('pre', { class: 'approval-detail', tabindex: '0' }, detail) : null,
    actions,
    outcome,
  );
  return { element, actions, outcome, allow };
}
