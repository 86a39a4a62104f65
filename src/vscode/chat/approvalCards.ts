// The approval cards of the chat (the session's ApprovalPrompter): a question per tool call that needs
// the user's word, the call's card marked while it waits, the answer recorded on the card.
import type { ApprovalAnswer, ApprovalRequest } from '../../core/chat/approvals';
import type { ApprovalChoice } from '../../shared/protocol';
import { approvalDetail } from './approvalText';
import type { TranscriptModel } from './transcriptModel';

export class ApprovalCards {
  private readonly waiting = new Map<string, (answer: ApprovalAnswer) => void>();

  constructor(private readonly model: TranscriptModel) {}

  request(request: ApprovalRequest): Promise<ApprovalAnswer> {
    const { model } = this;
    const id = model.nextId('a');
    const detail = approvalDetail(request);
    model.setCallStatus(request.callId, 'pending-approval');
    model.items.push({ kind: 'approval', id, tool: request.tool, summary: request.summary, detail, callId: request.callId });
    model.post({ type: 'approvalRequest', id, tool: request.tool, summary: request.summary, detail, callId: request.callId });
    return new Promise<ApprovalAnswer>((resolve) => {
      const settle = (answer: ApprovalAnswer) => {
        if (!this.waiting.delete(id)) return;
        const decision: ApprovalChoice = answer === 'allow_always' ? 'always' : answer;
        const item = model.find('approval', id);
        if (item) item.decision = decision;
        model.setCallStatus(request.callId, answer === 'deny' ? 'denied' : 'running');
        model.post({ type: 'approvalResolved', id, decision });
        resolve(answer);
      };
      this.waiting.set(id, settle);
      request.signal?.addEventListener('abort', () => settle('deny'), { once: true });
    });
  }

  answer(id: string, decision: ApprovalChoice): void {
    this.waiting.get(id)?.(decision === 'always' ? 'allow_always' : decision);
  }

  get pending(): boolean {
    return this.waiting.size > 0;
  }

  /** The chat is cleared: every open question is answered no. */
  denyAll(): void {
    for (const settle of [...this.waiting.values()]) settle('deny');
    this.waiting.clear();
  }
}
