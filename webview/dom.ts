/** A tiny element builder: the panel is small enough not to need a framework. */
type Child = Node | string | false | null | undefined;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Record<string, string | boolean | number | undefined>,
  ...children: Child[]
): HTMLElementTagNameMap[K];
export function h(
  tag: string,
  attrs?: Record<string, string | boolean | number | undefined>,
  ...children: Child[]
): HTMLElement;
export function h(
  tag: string,
  attrs: Record<string, string | boolean | number | undefined> = {},
  ...children: Child[]
): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return element;
}
