/** Default limits, workspace access and network, editable with validation; saved to settings by the host. */
import type { DefaultsEdit, DefaultsView, WebviewToHost } from '../src/shared/protocol';
import { button, controlValue, dropdown, textField } from './controls';
import { h } from './dom';

interface Field {
  key: keyof DefaultsEdit & keyof DefaultsView;
  label: string;
  help: string;
  /** What is wrong with the text, in words that follow "must be", or undefined when it is fine. */
  check: (value: string, defaults: DefaultsView) => string | undefined;
}

/** A number within the bounds the host sent (the settings schema's). */
const number =
  (key: keyof DefaultsView['bounds']) =>
  (value: string, defaults: DefaultsView): string | undefined => {
    const { minimum, exclusiveMinimum, maximum, integer } = defaults.bounds[key];
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) return 'a number';
    if (integer && !Number.isInteger(n)) return 'a whole number';
    const low = minimum !== undefined && n < minimum;
    const high = maximum !== undefined && n > maximum;
    const notAbove = exclusiveMinimum !== undefined && n <= exclusiveMinimum;
    if (!low && !high && !notAbove) return undefined;
    if (minimum !== undefined && maximum !== undefined) return `between ${minimum} and ${maximum}`;
    if (exclusiveMinimum !== undefined && maximum !== undefined)
      return `more than ${exclusiveMinimum} and at most ${maximum}`;
    if (minimum !== undefined) return `at least ${minimum}`;
    if (exclusiveMinimum !== undefined) return `more than ${exclusiveMinimum}`;
    return `at most ${maximum}`;
  };

const FIELDS: Field[] = [
  {
    key: 'memory',
    label: 'Memory',
    help: 'like 512m or 1g, no swap',
    check: (value, defaults) =>
      new RegExp(defaults.sizePattern).test(value.trim()) ? undefined : 'a size like 512m or 1g',
  },
  { key: 'cpus', label: 'CPUs', help: 'cores, 1.5 allowed', check: number('cpus') },
  { key: 'pids', label: 'Processes', help: 'most at once', check: number('pids') },
  { key: 'timeoutSeconds', label: 'Timeout (s)', help: 'per call', check: number('timeoutSeconds') },
  { key: 'maxStdoutBytes', label: 'Stdout cap (bytes)', help: 'kept per call', check: number('maxStdoutBytes') },
  { key: 'maxStderrBytes', label: 'Stderr cap (bytes)', help: 'kept per call', check: number('maxStderrBytes') },
];

export function renderDefaults(
  defaults: DefaultsView | undefined,
  post: (message: WebviewToHost) => void,
  ui: { defaultsOpen: boolean },
  onUiChange: () => void,
): HTMLElement {
  const section = h('details', { class: 'defaults section', open: ui.defaultsOpen });
  section.append(
    h(
      'summary',
      { 'data-action': 'toggle-defaults', 'aria-label': 'Defaults for new sandboxes' },
      h('h2', { class: 'inline-title' }, 'Defaults for new sandboxes'),
    ),
  );
  section.addEventListener('toggle', () => {
    ui.defaultsOpen = (section as HTMLDetailsElement).open;
    onUiChange();
  });
  if (!defaults) return section;
  const shown = defaults;
  const form = h('form', { class: 'defaults-form', novalidate: true });
  const inputs = new Map<keyof DefaultsEdit, HTMLElement>();
  for (const field of FIELDS) {
    const id = `default-${field.key}`;
    const input = textField(
      {
        id,
        value: String(defaults[field.key]),
        'data-field': field.key,
        'aria-describedby': `${id}-help`,
        title: field.help,
      },
      field.label,
    );
    inputs.set(field.key, input);
    form.append(
      h(
        'div',
        { class: 'field' },
        input,
        h('span', { id: `${id}-help`, class: 'visually-hidden' }, field.help),
        h('span', { class: 'error small', id: `${id}-error`, role: 'alert' }),
      ),
    );
  }
  const access = dropdown(
    { id: 'default-access', 'data-field': 'workspaceAccess', 'aria-label': 'Workspace access' },
    (['none', 'copy', 'ro', 'rw'] as const).map((value) => ({ value, selected: value === defaults.workspaceAccess })),
  );
  const network = dropdown(
    { id: 'default-network', 'data-field': 'network', 'aria-label': 'Network' },
    (['off', 'allowlist', 'full'] as const).map((value) => ({ value, selected: value === defaults.network })),
  );
  const allowlist = defaults.networkAllow.length
    ? `allowlist: ${defaults.networkAllow.join(', ')}`
    : 'allowlist: empty (agentSandbox.network.allow in settings)';
  const target = dropdown({ 'data-field': 'target', 'aria-label': 'Save to', disabled: !defaults.canUseWorkspace }, [
    { value: 'user', label: 'user settings', selected: defaults.target === 'user' },
    { value: 'workspace', label: 'workspace settings', selected: defaults.target === 'workspace' },
  ]);
  form.append(
    h('div', { class: 'field' }, h('label', { for: 'default-access' }, 'Workspace access'), access),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'default-network' }, 'Network'),
      network,
      h('span', { class: 'small muted', 'data-field': 'network-allow' }, allowlist),
    ),
    h('div', { class: 'field' }, h('span', {}, 'Save to'), target),
  );
  const save = button(
    'Save Defaults',
    'Save the default limits to settings',
    () => submit(),
    'save-defaults',
    'primary',
  );
  form.append(h('div', { class: 'actions' }, save));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit();
  });
  section.append(form);

  function submit(): void {
    let valid = true;
    for (const field of FIELDS) {
      const input = inputs.get(field.key)!;
      const problem = field.check(controlValue(input), shown);
      const error = form.querySelector(`#default-${field.key}-error`)!;
      error.textContent = problem ? `${field.label} must be ${problem}.` : '';
      input.toggleAttribute('aria-invalid', Boolean(problem));
      valid &&= !problem;
    }
    if (!valid) return;
    post({
      type: 'saveDefaults',
      defaults: {
        memory: controlValue(inputs.get('memory')!).trim(),
        cpus: Number(controlValue(inputs.get('cpus')!)),
        pids: Number(controlValue(inputs.get('pids')!)),
        timeoutSeconds: Number(controlValue(inputs.get('timeoutSeconds')!)),
        maxStdoutBytes: Number(controlValue(inputs.get('maxStdoutBytes')!)),
        maxStderrBytes: Number(controlValue(inputs.get('maxStderrBytes')!)),
        workspaceAccess: controlValue(access) as DefaultsEdit['workspaceAccess'],
        network: controlValue(network) as DefaultsEdit['network'],
        target: controlValue(target) === 'workspace' ? 'workspace' : 'user',
      },
    });
  }
  return section;
}
