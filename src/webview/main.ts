// Entry of the chat webview bundle: builds the page inside #app, relays user actions to the host
// and applies the host's messages (validated first; anything malformed is ignored).
import { parseHostMessage, type ChatSettings, type ChatSnapshot, type HostToWebview, type ModelInfo, type SpeculationStatusView, type Suggestion } from '../shared/protocol';
import { ChatHeader } from './chatHeader';
import { Announcer } from './announcer';
import { button, h, isScrolledToEnd } from './dom';
import { HistoryView } from './history';
import { Mentions } from './mentions';
import { McpServerList } from './mcpServers';
import { ScrollFollow } from './scrollFollow';
import { FolderHeader } from './folderHeader';
import { icon } from './icons';
import { Composer } from './input';
import { SpeculatedBlock } from './speculatedBlock';
import { SpeculationFileList } from './speculationFiles';
import { SpeculationStatusLine } from './status';
import { Transcript } from './transcript';
import { TurnEndLines } from './turnEnd';
import { UndoConflictBlocks } from './undoConflicts';
import { connectToHost, type SavedState } from './vscodeApi';

const root = document.getElementById('app');
if (root) start(root);

function start(app: HTMLElement): void {
  const host = connectToHost();
  const saved: SavedState | undefined = host.loadState();
  let state: SavedState = saved ?? { draft: '', scrollTop: null };
  let initialised = false;

  const announcer = new Announcer();
  // Each sentence is its own line in the live region, so none swaps out another: the revealed
  // result stays said when a notice follows at once, the suggestion when its status follows.
  const announce = (text: string): void => announcer.say(text);

  const save = (patch: Partial<SavedState>): void => {
    state = { ...state, ...patch };
    host.saveState(state);
  };

  const welcomeNoteText = h('span', {});
  const setUp = button('Set Up Endpoint', () => host.post({ type: 'chatAction', action: 'setUpEndpoint' }), { class: 'button secondary welcome-setup' });
  const welcomeDemo = h('div', { class: 'welcome-demo', hidden: true }, icon('warning'), h('div', {}, h('p', {}, welcomeNoteText), setUp));
  const welcome = buildWelcome(welcomeDemo);

  const folderHeader = new FolderHeader(host.post);
  const status = new SpeculationStatusLine({ post: host.post, announce });
  const speculationFiles = new SpeculationFileList({ post: host.post, announce });
  const composer = new Composer(h('div', { class: 'spec-area' }, status.element, speculationFiles.element), {
    post: host.post,
    announce,
    draftChanged: (draft) => save({ draft }),
    attachments: () => mentions.ids(),
    submitted: () => mentions.sent(),
    revealAccepted: (suggestion, method): { next: Suggestion | null } | null => {
      const revealed = speculated.reveal(suggestion, method);
      // The accepted run's status line goes in the same frame as its result appears.
      if (revealed) {
        status.update(lastSpeculation, revealed.next?.id);
        follow.follow();
        speculationFiles.follow({ ...lastSpeculation, state: status.state });
      }
      return revealed;
    },
  });
  const turnEnds = new TurnEndLines({ post: host.post, announce });
  const undoConflicts = new UndoConflictBlocks({ post: host.post, announce, isTyping: () => composer.hasDraft() });
  const transcript = new Transcript(welcome, {
    post: host.post,
    announce,
    isTyping: () => composer.hasDraft(),
    focusInput: () => composer.focus(),
    renderItem: (item) => (item.kind === 'turnEnd' ? turnEnds.render(item) : item.kind === 'undoConflicts' ? undoConflicts.render(item) : null),
  });
  const progress = h('div', { class: 'progress', hidden: true, role: 'status' }, icon('spinner', 'spin'), h('span', {}, 'Working…'));
  transcript.element.appendChild(progress);
  const speculated: SpeculatedBlock = new SpeculatedBlock(transcript, {
    post: host.post,
    announce,
    retractSuggestion: (id) => {
      if (composer.currentSuggestion?.id !== id) return;
      composer.setSuggestion(null);
      showSpeculation(lastSpeculation);
    },
  });
  transcript.element.appendChild(speculated.element);

  // Issue 18: the header (title, model pickers, usage), the history view, @ context, scroll-follow.
  const header = new ChatHeader({ post: host.post, announce });
  const history = new HistoryView({ post: host.post, announce, closed: () => composer.focus() });
  const mentions: Mentions = new Mentions(composer.textarea, { post: host.post, announce });
  composer.element.querySelector('.input-box')?.prepend(mentions.chips);
  composer.element.querySelector('.input-box')?.before(mentions.popup);
  composer.element.querySelector('.toolbar-actions')?.prepend(mentions.attachButton);
  mentions.acceptDrops(app);
  // The model in the input's toolbar opens the main model's picker too.
  const toolbarModel = composer.element.querySelector<HTMLElement>('.input-toolbar .model');
  toolbarModel?.setAttribute('role', 'button');
  toolbarModel?.setAttribute('tabindex', '0');
  toolbarModel?.addEventListener('click', () => header.models.open('main'));
  toolbarModel?.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      header.models.open('main');
    }
  });
  const follow = new ScrollFollow(transcript.element);
  composer.element.prepend(follow.jumpButton);

  const mcpServers = new McpServerList({ post: host.post, announce });
  app.classList.add('chat');
  app.replaceChildren(header.element, mcpServers.element, transcript.element, composer.element, history.element, announcer.element);
  // The folder the chat works on leads the header (shown only with several folders open).
  header.element.prepend(folderHeader.element);

  let lastSpeculation: SpeculationStatusView = { state: 'idle', toolCalls: 0, filesWritten: [] };
  const showSpeculation = (next: SpeculationStatusView): void => {
    lastSpeculation = next;
    status.update(next, composer.currentSuggestion?.id);
    speculationFiles.follow({ ...next, state: status.state });
  };

  const setModel = (model: ModelInfo): void => {
    composer.setModel(model);
    header.setModel(model);
    welcomeDemo.hidden = !model.demo && !model.unconfigured;
    welcomeNoteText.textContent = model.demo
      ? 'You are on the built-in demo model. Set up your endpoint to chat with your own model.'
      : 'Connect a model to start: pick your provider, and Speculate checks the endpoint and stores its key.';
  };

  const applySettings = (settings: ChatSettings): void => {
    composer.setSettings(settings);
    status.setAcceptKey(composer.acceptKeyLabel());
  };

  // The newest message is at the end; an empty chat's welcome is read from its top (on a short
  // view the end would cut off its title and first lines).
  const scrollToLatest = (): void => {
    const scroller = transcript.element;
    scroller.scrollTop = transcript.isEmpty() ? 0 : scroller.scrollHeight;
  };

  const setBusy = (busy: boolean): void => {
    composer.setBusy(busy);
    const scroller = transcript.element;
    const atBottom = isScrolledToEnd(scroller);
    progress.hidden = !busy;
    if (atBottom) scrollToLatest();
    app.classList.toggle('busy', busy);
    follow.setBusy(busy);
  };

  const applyInit = (snapshot: ChatSnapshot): void => {
    turnEnds.clear();
    undoConflicts.clear();
    transcript.reset(snapshot.transcript);
    speculated.reset(snapshot.preview ?? null);
    speculationFiles.set(snapshot.speculationFiles ?? null);
    setModel(snapshot.model);
    header.setTitle(snapshot.title ?? '');
    header.setUsage(snapshot.usage);
    applySettings(snapshot.settings);
    folderHeader.update(snapshot.folder);
    setBusy(snapshot.busy);
    if (!initialised) {
      // A draft kept by VS Code for this webview wins over the host's copy.
      const draft = state.draft !== '' ? state.draft : (snapshot.draft ?? '');
      if (draft !== '' && composer.value === '') composer.setDraft(draft);
    }
    composer.setSuggestion(snapshot.suggestion);
    showSpeculation(snapshot.speculation);
    const scroller = transcript.element;
    if (!initialised && state.scrollTop !== null) scroller.scrollTop = state.scrollTop;
    else scrollToLatest();
    initialised = true;
  };

  const handle = (message: HostToWebview): void => {
    switch (message.type) {
      case 'init':
        return applyInit(message.state);
      case 'config':
        setModel(message.model);
        folderHeader.update(message.folder);
        return applySettings(message.settings);
      case 'userMessage':
        transcript.userMessage(message.id, message.text, message.speculated === true, message.attachments);
        // What the user just sent comes into view, wherever they had scrolled.
        return follow.follow();
      case 'assistantStart':
        return transcript.assistantStart(message.id, message.speculated === true);
      case 'assistantDelta':
        return transcript.assistantDelta(message.id, message.text);
      case 'reasoningDelta':
        return transcript.reasoningDelta(message.id, message.text);
      case 'assistantEnd':
        return transcript.assistantEnd(message.id);
      case 'toolGroupStart':
        return transcript.toolGroupStart(message.id, message.calls, message.speculated === true);
      case 'toolCallUpdate':
        return transcript.toolCallUpdate(message.groupId, message.call);
      case 'toolGroupEnd':
        return transcript.toolGroupEnd(message.id);
      case 'approvalRequest':
        return transcript.approvalRequest(message.id, message.tool, message.summary, message.detail);
      case 'approvalResolved':
        return transcript.approvalResolved(message.id, message.decision);
      case 'error':
        return transcript.error(message.id, message.message, message.retryable, message.actions);
      case 'turnState':
        return setBusy(message.busy);
      case 'notice':
        return transcript.notice(message.id, message.text, message.tone, message.actions);
      case 'suggestion':
        composer.setSuggestion({ id: message.id, text: message.text });
        return showSpeculation(lastSpeculation);
      case 'suggestionCleared':
        composer.setSuggestion(null);
        return showSpeculation(lastSpeculation);
      case 'speculation':
        return showSpeculation(message.status);
      case 'appendItems':
        for (const item of message.items) transcript.append(item);
        if (message.items.some((item) => item.kind === 'user')) follow.follow();
        return;
      case 'conflicts':
        return transcript.conflicts(message.id, message.files);
      case 'conflictResolved':
        return transcript.conflictResolved(message.id, message.path, message.resolution);
      case 'speculationPreview':
        return speculated.update(message.preview);
      case 'revealAnswer':
        return speculated.answer(message.seq, message.outcome, message.notApplied);
      case 'checkpointUpdate':
        return turnEnds.update(message.checkpoint);
      case 'undoConflictResolved':
        return undoConflicts.resolved(message.id, message.path, message.resolution);
      case 'speculationFiles':
        return speculationFiles.set(message.files);
      case 'clear':
        turnEnds.clear();
        undoConflicts.clear();
        speculationFiles.set(null);
        transcript.clear();
        speculated.reset(null);
        composer.setSuggestion(null);
        showSpeculation({ state: 'idle', toolCalls: 0, filesWritten: [] });
        setBusy(false);
        save({ scrollTop: null });
        header.setTitle('');
        header.setUsage(null);
        mentions.clear();
        return composer.focus();
      case 'focusInput':
        return composer.focus();
      case 'truncate':
        return transcript.truncateAfter(message.afterId);
      case 'chatUsage':
        return header.setUsage(message.usage);
      case 'chatTitle':
        return header.setTitle(message.title);
      case 'showHistory':
        return history.toggle();
      case 'history':
        return history.show(message.query, message.entries);
      case 'mentions':
        return mentions.show(message.requestId, message.items);
      case 'attachmentAdded':
        return mentions.add(message.attachment);
      case 'models':
        return header.models.showModels(message.role, message.models, message.current, message.error);
      case 'mcpServers':
        return mcpServers.update(message.view);
    }
  };

  window.addEventListener('message', (event: MessageEvent) => {
    const message = parseHostMessage(event.data);
    if (!message) return;
    try {
      handle(message);
      follow.refresh();
    } catch (error) {
      // One bad message must not take the chat down; the next init repairs the view.
      console.error('Speculate webview: could not apply', message.type, error);
    }
  });

  // Links never navigate the webview: the host opens files in the editor and URLs outside.
  const onLink = (event: MouseEvent): void => {
    const target = event.target instanceof Element ? event.target.closest('a') : null;
    if (!target) return;
    event.preventDefault();
    if (event.type === 'auxclick') return;
    const url = target.dataset.url;
    const path = target.dataset.path;
    if (url && /^https?:\/\//i.test(url)) host.post({ type: 'openLink', url });
    else if (path) {
      const line = Number(target.dataset.line);
      host.post(Number.isInteger(line) && line >= 1 ? { type: 'openFile', path, line } : { type: 'openFile', path });
    }
  };
  document.addEventListener('click', onLink);
  document.addEventListener('auxclick', onLink);

  // The composer grows and shrinks (status line, ghost text, a long draft): a transcript that was
  // scrolled to the end stays at the end, so the newest notice is never hidden under the input.
  let pinnedToBottom = true;
  let scrollFrame: number | null = null;
  transcript.element.addEventListener('scroll', () => {
    pinnedToBottom = isScrolledToEnd(transcript.element);
    if (scrollFrame !== null) return;
    scrollFrame = requestAnimationFrame(() => {
      scrollFrame = null;
      const scroller = transcript.element;
      save({ scrollTop: isScrolledToEnd(scroller) ? null : Math.round(scroller.scrollTop) });
    });
  });
  if (typeof ResizeObserver !== 'undefined') {
    new ResizeObserver(() => {
      if (pinnedToBottom) scrollToLatest();
    }).observe(transcript.element);
  }

  if (saved && saved.draft !== '') composer.setDraft(saved.draft);
  host.post({ type: 'ready' });
  composer.focus();
}

function buildWelcome(demoNote: HTMLElement): HTMLElement {
  const key = (keys: string, words: string): HTMLElement => h('li', {}, h('span', { class: 'keys' }, ...keys.split(' ').map((k) => h('kbd', {}, k))), h('span', {}, words));
  return h(
    'div',
    { class: 'welcome' },
    h('div', { class: 'welcome-mark' }, icon('sparkle')),
    h('h2', {}, 'Speculate'),
    h('p', {}, 'Ask about your code or say what to change. After each answer, Speculate predicts your next step and starts on it right away, keeping every file change aside until you accept.'),
    h('p', { class: 'welcome-when' }, 'The first suggestion can come right after the first answer. When the next step is not clear from the conversation, none is shown.'),
    h(
      'ul',
      { class: 'welcome-keys', 'aria-label': 'Keys' },
      key('Tab', 'accept the suggestion and its finished work'),
      key('→', 'take the suggestion as text to edit'),
      key('Esc', 'dismiss the suggestion'),
      key('Enter', 'send · Shift+Enter for a new line'),
    ),
    demoNote,
  );
}
