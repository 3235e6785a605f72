/** The engine section: which engine, where, and when it cannot be reached, what is wrong and the fix. */
import type { EngineView } from '../src/shared/protocol';
import { button } from './controls';
import { h } from './dom';

export function renderEngine(
  engine: EngineView | undefined,
  post: (message: { type: 'retryEngine' } | { type: 'showLog' }) => void,
): HTMLElement {
  const section = h(
    'section',
    { class: 'engine', 'aria-labelledby': 'engine-title' },
    h('h2', { id: 'engine-title' }, 'Engine'),
  );
  if (!engine) return section;
  const state = engine.state;
  const label =
    state === 'connected'
      ? 'connected'
      : state === 'unavailable'
        ? 'not reachable'
        : state === 'connecting'
          ? 'connecting'
          : 'not contacted yet';
  section.append(
    h(
      'p',
      { class: 'engine-line' },
      h('span', { class: `dot dot-${state}`, 'aria-hidden': 'true' }),
      h('strong', {}, engine.product ? `${engine.product} ${engine.version ?? ''}`.trim() : engine.kind),
      ' ',
      h('span', { class: 'muted' }, `· ${engine.endpoint || engine.kind} · `),
      h('span', { class: `engine-state state-${state}`, role: 'status' }, label),
    ),
  );
  if (engine.isolation) section.append(h('p', { class: 'muted small' }, engine.isolation));
  if (state === 'unavailable') {
    section.append(
      h(
        'div',
        { class: 'problem', role: 'alert' },
        h('p', {}, engine.problem ?? 'The engine does not answer.'),
        engine.fix ? h('p', { class: 'fix' }, engine.fix) : null,
      ),
      h(
        'div',
        { class: 'actions' },
        button('Retry', 'Retry the engine connection', () => post({ type: 'retryEngine' }), 'retry-engine', 'primary'),
        button('Show Log', 'Show the Agent Sandbox log', () => post({ type: 'showLog' }), 'show-log'),
      ),
    );
  }
  return section;
}
