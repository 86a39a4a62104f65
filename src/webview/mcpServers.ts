// The chat view's MCP servers section: each server with its state, its exact command or URL, its
// tools and last error, Restart, and Allow for a workspace's server waiting for the user's yes.
import type { McpServerRowView, McpServersView, McpServerStateView, WebviewToHost } from '../shared/protocol';
import { button, h } from './dom';
import { icon } from './icons';

export interface McpServerListActions {
  post(message: WebviewToHost): void;
  announce(text: string): void;
}

/** The state in words; `restartAt` gives the seconds left of a restart's delay. */
export function mcpStateText(server: Pick<McpServerRowView, 'state' | 'restartAt'>, now: number): string {
  const words: { [K in McpServerStateView]: string } = {
    'not-started': 'not started',
    starting: 'starting…',
    running: 'running',
    restarting: 'crashed',
    error: 'error',
    stopped: 'stopped',
    'awaiting-approval': 'waiting for your approval',
    blocked: 'not offered in Restricted Mode',
  };
  if (server.state !== 'restarting') return words[server.state];
  if (server.restartAt === undefined) return 'crashed, restarting';
  const seconds = Math.max(0, Math.ceil((server.restartAt - now) / 1000));
  return seconds > 0 ? `crashed, restarting in ${seconds} s` : 'crashed, restarting now';
}

export class McpServerList {
  readonly element: HTMLElement;
  private readonly details: HTMLDetailsElement;
  private readonly summaryText: HTMLElement;
  private readonly body: HTMLElement;
  private view: McpServersView = { servers: [], notes: [] };
  private ticker: ReturnType<typeof setInterval> | undefined;
  /** States last shown, to say a crash or a failure once (not on every tick). */
  private said = new Map<string, McpServerStateView>();
  /** Servers whose tool list the user opened: it stays open when the list is rebuilt. */
  private readonly openTools = new Set<string>();
  /** Servers whose Allow… the user pressed: their confirmation stays open across rebuilds. */
  private readonly confirming = new Set<string>();

  constructor(private readonly actions: McpServerListActions) {
    this.summaryText = h('span', { class: 'mcp-summary-text' });
    this.body = h('div', { class: 'mcp-body' });
    this.details = h('details', { class: 'mcp-servers-details' }, h('summary', { class: 'mcp-summary' }, icon('chevron', 'fold-chevron'), icon('tools'), this.summaryText), this.body);
    this.element = h('section', { class: 'mcp-servers', 'aria-label': 'MCP servers', hidden: true }, this.details);
  }

  update(view: McpServersView): void {
    this.announceChanges(view);
    this.view = view;
    this.render();
    // A restart's countdown moves on its own; nothing else needs a clock.
    const counting = view.servers.some((server) => server.state === 'restarting' && server.restartAt !== undefined);
    if (counting && !this.ticker) this.ticker = setInterval(() => this.render(), 1000);
    if (!counting && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  private announceChanges(view: McpServersView): void {
    const next = new Map(view.servers.map((server) => [`${server.source}\u0000${server.name}`, server.state]));
    for (const server of view.servers) {
      const before = this.said.get(`${server.source}\u0000${server.name}`);
      if (before === server.state) continue;
      if (server.state === 'restarting') this.actions.announce(`MCP server ${server.name} crashed; it restarts by itself.`);
      if (server.state === 'error') this.actions.announce(`MCP server ${server.name} failed: ${server.error ?? 'see the log'}.`);
      if (server.state === 'awaiting-approval' && before === undefined) this.actions.announce(`This workspace asks to run the MCP server ${server.name}; it waits for your approval.`);
    }
    this.said = next;
  }

  private render(): void {
    const { servers, notes } = this.view;
    this.element.hidden = servers.length === 0 && notes.length === 0;
    const running = servers.filter((server) => server.state === 'running').length;
    const waiting = servers.filter((server) => server.state === 'awaiting-approval').length;
    const failing = servers.filter((server) => server.state === 'error' || server.state === 'restarting').length;
    const parts = [`MCP servers (${servers.length})`];
    if (running > 0) parts.push(`${running} running`);
    if (failing > 0) parts.push(`${failing} failing`);
    if (waiting > 0) parts.push(`${waiting} waiting for approval`);
    this.summaryText.textContent = parts.join(' · ');
    this.details.classList.toggle('attention', waiting > 0 || failing > 0);
    const now = Date.now();
    // Keep the focused button's place: the list is rebuilt on every change and every tick.
    const focused = document.activeElement instanceof HTMLElement && this.body.contains(document.activeElement) ? document.activeElement.dataset.focusKey : undefined;
    const list = h('ul', { class: 'mcp-server-list', 'aria-label': 'MCP servers' }, ...servers.map((server) => this.row(server, now)));
    const footer = h(
      'div',
      { class: 'mcp-footer' },
      button('Open Settings', () => this.actions.post({ type: 'mcpAction', action: 'openSettings' }), { class: 'button secondary', 'data-focus-key': 'settings', title: 'speculate.mcpServers in your user settings' }),
      button('Show Log', () => this.actions.post({ type: 'mcpAction', action: 'showLog' }), { class: 'button secondary', 'data-focus-key': 'log', title: "The servers' stderr and errors, in the Speculate output" }),
    );
    this.body.replaceChildren(...notes.map((note) => h('p', { class: 'mcp-note' }, icon('warning'), h('span', {}, note))), list, footer);
    if (focused) [...this.body.querySelectorAll<HTMLElement>('[data-focus-key]')].find((el) => el.dataset.focusKey === focused)?.focus();
  }

  private row(server: McpServerRowView, now: number): HTMLElement {
    const key = `${server.source}|${server.name}`;
    const stateText = mcpStateText(server, now);
    const heading = h(
      'div',
      { class: 'mcp-server-head' },
      h('span', { class: `mcp-dot state-${server.state}`, 'aria-hidden': 'true' }),
      h('span', { class: 'mcp-server-name' }, server.name),
      h('span', { class: 'mcp-server-state', 'data-state': server.state }, stateText),
      server.runAhead ? h('span', { class: 'mcp-badge', title: 'Its read-only, closed-world tools may run during speculation' }, 'may run ahead') : null,
    );
    const actions = h('div', { class: 'mcp-server-actions' });
    if (server.state === 'awaiting-approval' && !this.confirming.has(key)) {
      actions.appendChild(
        button('Allow…', () => {
          this.confirming.add(key);
          this.render();
          this.body.querySelector<HTMLElement>(`.mcp-server[data-server="${CSS.escape(server.name)}"] .mcp-confirm-detail`)?.focus();
        }, {
          class: 'button primary mcp-allow',
          'data-focus-key': `allow|${key}`,
          'aria-label': `Allow the MCP server ${server.name} from ${server.source} to run ${server.target}`,
        }),
      );
    } else if (server.state !== 'blocked') {
      actions.appendChild(
        button(icon('retry'), () => this.actions.post({ type: 'mcpAction', action: 'restart', server: server.name, source: server.source }), {
          class: 'icon-button small mcp-restart',
          'data-focus-key': `restart|${key}`,
          'aria-label': `Restart the MCP server ${server.name}`,
          title: 'Restart',
        }),
      );
    }
    const why = server.state === 'awaiting-approval'
      ? h('p', { class: 'mcp-why' }, server.changed ? 'Its definition changed since you allowed it, so it does not run until you allow it again.' : 'This workspace defines it; it does not run until you allow it.')
      : null;
    const confirm = server.state === 'awaiting-approval' && this.confirming.has(key) ? this.confirmation(server, key) : null;
    const error = server.error && server.state !== 'running' ? h('p', { class: 'mcp-error' }, icon('error'), h('span', {}, server.error)) : null;
    const tools = server.tools.length > 0
      ? h(
          'details',
          { class: 'mcp-tools', open: this.openTools.has(key) },
          h('summary', {}, `${server.tools.length} tool${server.tools.length === 1 ? '' : 's'}`),
          h('ul', { 'aria-label': `Tools of ${server.name}` }, ...server.tools.map((tool) => h('li', { class: 'mcp-tool', 'data-tool': tool.name }, h('code', {}, tool.name), tool.readOnly ? h('span', { class: 'mcp-badge' }, 'read-only') : null, tool.description ? h('span', { class: 'mcp-tool-description' }, tool.description) : null))),
        )
      : null;
    tools?.addEventListener('toggle', () => {
      if ((tools as HTMLDetailsElement).open) this.openTools.add(key);
      else this.openTools.delete(key);
    });
    return h(
      'li',
      { class: 'mcp-server', 'data-server': server.name, 'data-state': server.state },
      h('div', { class: 'mcp-server-main' }, heading, h('code', { class: 'mcp-target', title: server.source }, server.target), h('span', { class: 'mcp-source' }, server.source), why, confirm, error, tools),
      actions,
    );
  }

  /** The question before a workspace's program runs: all of what it runs, then Allow and Run / Cancel. */
  private confirmation(server: McpServerRowView, key: string): HTMLElement {
    const titleId = `mcp-confirm-${[...key].map((c) => c.charCodeAt(0).toString(36)).join('')}`;
    const done = (): void => {
      this.confirming.delete(key);
      this.render();
    };
    return h(
      'div',
      { class: 'mcp-confirm', role: 'group', 'aria-labelledby': titleId },
      h('p', { class: 'mcp-confirm-title', id: titleId }, icon('shield'), h('span', {}, `Run the MCP server "${server.name}" as you, with your files and network?`)),
      h('pre', { class: 'mcp-confirm-detail', tabindex: '0', 'aria-label': `What ${server.name} runs` }, server.detail ?? server.target),
      h('p', { class: 'mcp-confirm-note' }, 'Allow it only if you trust this repository. It starts with your next message; a change to this definition asks again.'),
      h(
        'div',
        { class: 'mcp-confirm-actions' },
        button('Allow', () => {
          this.confirming.delete(key);
          this.actions.post({ type: 'mcpAction', action: 'allow', server: server.name, source: server.source, ...(server.definition ? { definition: server.definition } : {}) });
        }, { class: 'button primary', 'data-focus-key': `confirm|${key}` }),
        button('Cancel', done, { class: 'button secondary', 'data-focus-key': `cancel|${key}` }),
      ),
    );
  }
}
