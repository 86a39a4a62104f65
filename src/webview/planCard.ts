// Two pieces of the transcript for issue 26: the plan card that exit_plan_mode's approval shows
// (the plan as Markdown, "Approve and switch to auto-edit" / "Keep planning"), and the folded list
// of a sub-agent's steps inside the agent tool's card.
import type { ApprovalChoice } from '../shared/protocol';
import { button, h } from './dom';
import { icon } from './icons';
import { renderMarkdown } from './markdown';

/** The tool whose approval is a plan card. */
export const PLAN_TOOL = 'exit_plan_mode';

export interface PlanCard {
  element: HTMLElement;
  actions: HTMLElement;
  outcome: HTMLElement;
  /** The button that takes the focus (approve). */
  allow: HTMLButtonElement;
}

/** The plan card in place of the usual approval: approving is "allow", keep planning is "deny". */
export function renderPlanCard(id: string, plan: string, answer: (decision: ApprovalChoice) => void, copy: (text: string) => void): PlanCard {
  const titleId = `plan-title-${id.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  const allow = button('Approve and switch to auto-edit', () => answer('allow'), {
    class: 'button primary',
    'data-decision': 'allow',
    title: 'Carry out the plan: this chat switches to auto-edit (edits run, commands still ask)',
  });
  const keep = button('Keep planning', () => answer('deny'), { class: 'button secondary', 'data-decision': 'deny', title: 'Stay in plan mode and let the model refine the plan' });
  const actions = h('div', { class: 'approval-actions' }, allow, keep);
  const outcome = h('div', { class: 'approval-outcome', hidden: true });
  const body = h('div', { class: 'plan-body markdown' });
  body.appendChild(renderMarkdown(plan, { copy }));
  const element = h(
    'div',
    { class: 'approval plan-card pending', 'data-id': id, role: 'group', 'aria-labelledby': titleId },
    h('div', { class: 'approval-title', id: titleId }, icon('edit'), h('span', {}, 'Plan ready')),
    body,
    actions,
    outcome,
  );
  return { element, actions, outcome, allow };
}

/** What the card says once answered. */
export function planDecisionText(decision: ApprovalChoice): string {
  return decision === 'deny' ? 'Kept planning' : 'Approved: this chat now runs in auto-edit';
}

/** A sub-agent's steps, folded: "Sub-agent · 4 steps", the newest last. */
export function renderProgressFold(progress: readonly string[], running: boolean): HTMLElement {
  const list = h('ol', { class: 'tool-progress-list' }, ...progress.map((line) => h('li', {}, line)));
  const label = `${running ? 'Working' : 'Steps'} · ${progress.length} step${progress.length === 1 ? '' : 's'}`;
  return h('details', { class: 'tool-fold tool-progress' }, h('summary', {}, icon('chevron', 'fold-chevron'), label), list);
}
