/**
 * The Sandbox panel's browser code. The host sends a full state once, then events; each section
 * re-renders on its own event, and live stats update their card in place so focus is never lost.
 */
import type {
  ActivityView,
  DefaultsView,
  EngineView,
  HostToWebview,
  SessionView,
  StatsView,
  WebviewToHost,
} from '../src/shared/protocol';
import { renderActivity } from './activityView';
import { registerControls } from './controls';
import { h } from './dom';
import { renderDefaults } from './defaultsView';
import { renderEngine } from './engineView';
import { renderSessions, renderUsage, type SessionsUi } from './sessionsView';
import './panel.css';

interface VsCodeApi {
  postMessage(message: WebviewToHost): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

registerControls();

const vscode = acquireVsCodeApi();
const ACTIVITY_SHOWN = 50;

/** UI state only (never data the host owns), kept across hide/show and reloads. */
const ui: SessionsUi & { defaultsOpen: boolean } = {
  newRuntime: 'python',
  defaultsOpen: false,
  ...((vscode.getState() as Partial<SessionsUi & { defaultsOpen: boolean }> | undefined) ?? {}),
};
const saveUi = () => vscode.setState({ ...ui });

let engine: EngineView | undefined;
let sessions: SessionView[] = [];
let defaults: DefaultsView | undefined;
let activity: ActivityView[] = [];
const stats = new Map<string, StatsView>();

const post = (message: WebviewToHost) => vscode.postMessage(message);
const root = document.getElementById('root') ?? document.body;
const status = h('p', { class: 'toast', role: 'status', 'aria-live': 'polite' });
const slots = {
  engine: h('div', { class: 'slot slot-engine' }),
  sessions: h('div', { class: 'slot slot-sessions' }),
  defaults: h('div', { class: 'slot slot-defaults' }),
  activity: h('div', { class: 'slot slot-activity' }),
};
root.replaceChildren(
  h('div', { class: 'layout' }, slots.engine, slots.sessions, slots.activity, slots.defaults),
  status,
);

/** Re-renders a section, keeping keyboard focus on the same control if it is still there. */
function replace(slot: HTMLElement, content: HTMLElement): void {
  const active = document.activeElement as HTMLElement | null;
  const key = active && slot.contains(active) ? focusKey(active) : undefined;
  slot.replaceChildren(content);
  if (key) (slot.querySelector<HTMLElement>(key) ?? slot.querySelector<HTMLElement>('[data-action]'))?.focus();
}

function focusKey(element: HTMLElement): string | undefined {
  const action = element.closest('[data-action],[data-field]') as HTMLElement | null;
  if (!action) return undefined;
  const card = element.closest('[data-session]') as HTMLElement | null;
  const own = action.dataset.action
    ? `[data-action="${action.dataset.action}"]`
    : `[data-field="${action.dataset.field}"]`;
  return card ? `[data-session="${CSS.escape(card.dataset.session!)}"] ${own}` : own;
}

const render = {
  engine: () => replace(slots.engine, renderEngine(engine, post)),
  sessions: () => replace(slots.sessions, renderSessions(sessions, stats, ui, post, saveUi)),
  defaults: () => replace(slots.defaults, renderDefaults(defaults, post, ui, saveUi)),
  activity: () => replace(slots.activity, renderActivity(activity.slice(-ACTIVITY_SHOWN), post)),
};

function updateStats(update: StatsView): void {
  stats.set(update.id, update);
  const session = sessions.find((candidate) => candidate.id === update.id);
  const card = session && slots.sessions.querySelector(`[data-session="${CSS.escape(session.sandboxId)}"] .usage`);
  if (session && card) card.replaceWith(renderUsage(session, update));
}

window.addEventListener('message', (event: MessageEvent<HostToWebview>) => {
  const message = event.data;
  switch (message?.type) {
    case 'state':
      ({ engine, sessions, defaults, activity } = message);
      render.engine();
      render.sessions();
      render.defaults();
      render.activity();
      break;
    case 'engine':
      engine = message.engine;
      render.engine();
      break;
    case 'sessions':
      sessions = message.sessions;
      for (const id of stats.keys()) if (!sessions.some((session) => session.id === id)) stats.delete(id);
      render.sessions();
      break;
    case 'stats':
      updateStats(message.stats);
      break;
    case 'activity':
      activity = [...activity.slice(-(ACTIVITY_SHOWN - 1)), message.entry];
      render.activity();
      break;
    case 'defaults':
      defaults = message.defaults;
      render.defaults();
      break;
    case 'result':
      status.textContent = message.message;
      status.className = `toast ${message.ok ? 'toast-ok' : 'toast-bad'}`;
      break;
  }
});

render.engine();
render.sessions();
post({ type: 'ready' });
