/**
 * The panel's controls: buttons, text fields, dropdowns, a checkbox and tags. This is the only module
 * that knows they come from @vscode/webview-ui-toolkit, which is archived upstream: a replacement
 * (another element library, or native elements styled with the --vscode-* variables) changes this
 * file only. The views build controls here and read them with `controlValue` / `isChecked`; the
 * stylesheet targets the `control-*` classes given here, never the toolkit's element names.
 */
import {
  provideVSCodeDesignSystem,
  vsCodeButton,
  vsCodeCheckbox,
  vsCodeDropdown,
  vsCodeOption,
  vsCodeTag,
  vsCodeTextField,
} from '@vscode/webview-ui-toolkit';
import { h } from './dom';

type Attributes = Record<string, string | boolean | number | undefined>;

/** Defines the controls' custom elements; call once, before the first render. */
export function registerControls(): void {
  provideVSCodeDesignSystem().register(
    vsCodeButton(),
    vsCodeCheckbox(),
    vsCodeDropdown(),
    vsCodeOption(),
    vsCodeTag(),
    vsCodeTextField(),
  );
}

/** A button showing `text`, named `label` for screen readers and as its tooltip. */
export function button(
  text: string,
  label: string,
  onClick: () => void,
  action: string,
  appearance: 'primary' | 'secondary' = 'secondary',
): HTMLElement {
  const element = h(
    'vscode-button',
    { class: 'control-button', appearance, 'aria-label': label, title: label, 'data-action': action },
    text,
  );
  element.addEventListener('click', onClick);
  return element;
}

/**
 * A one-line text field named `label`, shown above it unless `hidden`. (The toolkit names a field by
 * its text and overwrites an `aria-label`, so a field without a visible label gets a hidden one.)
 */
export function textField(
  attributes: Attributes & { value: string },
  label: string,
  { hidden = false }: { hidden?: boolean } = {},
): HTMLElement {
  return h(
    'vscode-text-field',
    { ...attributes, class: 'control-text' },
    hidden ? h('span', { class: 'visually-hidden' }, label) : label,
  );
}

export interface Choice {
  value: string;
  label?: string;
  selected?: boolean;
}

/** A dropdown of choices; `onChange` gets the chosen value. */
export function dropdown(attributes: Attributes, choices: readonly Choice[], onChange?: (value: string) => void) {
  const element = h(
    'vscode-dropdown',
    { ...attributes, class: 'control-dropdown' },
    ...choices.map((choice) =>
      h('vscode-option', { value: choice.value, selected: choice.selected }, choice.label ?? choice.value),
    ),
  );
  if (onChange) element.addEventListener('change', () => onChange(controlValue(element)));
  return element;
}

/** A checkbox with its label. */
export function checkbox(attributes: Attributes & { checked: boolean }, label: string): HTMLElement {
  return h('vscode-checkbox', { ...attributes, class: 'control-checkbox' }, label);
}

/** A small label beside a name, like a session's scope. */
export function tag(text: string): HTMLElement {
  return h('vscode-tag', { class: 'control-tag' }, text);
}

/** The current value of a text field or dropdown. */
export function controlValue(control: HTMLElement): string {
  return String((control as unknown as { value?: unknown }).value ?? '');
}

/** Whether a checkbox is checked. */
export function isChecked(control: HTMLElement): boolean {
  return Boolean((control as unknown as { checked?: unknown }).checked);
}
