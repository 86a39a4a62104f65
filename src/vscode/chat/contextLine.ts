// What the turn's system prompt held beyond its fixed part (instructions, memory, skills), said
// quietly when it changes, not on every turn; a skill that could not be read is said once, as a warning.
import { describeContext, type ContextSource } from '../../core/context/turnContext';
import type { NoticeTone } from '../../shared/protocol';

export class ContextLine {
  /** The line last shown (shown again only when it changes). */
  private last = '';
  private readonly reportedSkillProblems = new Set<string>();

  constructor(private readonly notice: (text: string, extras?: { tone?: NoticeTone }) => void) {}

  used(sources: readonly ContextSource[]): void {
    const text = describeContext(sources);
    if (text !== '' && text !== this.last) this.notice(`Context: ${text}`);
    this.last = text;
    for (const source of sources) {
      if (source.kind !== 'skill_problem') continue;
      const key = `${source.path}\u0000${source.reason}`;
      if (this.reportedSkillProblems.has(key)) continue;
      this.reportedSkillProblems.add(key);
      this.notice(`Skill not loaded: ${source.path} ${source.reason}.`, { tone: 'warning' });
    }
  }

  /** A new chat: its first turn says its context again. */
  reset(): void {
    this.last = '';
  }
}
