// Small helpers for building the page's elements.

/** An element with properties set and children appended (null, undefined and false are left out). */
export function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

/** A button that calls `onClick`, with more properties (disabled, className) when given. */
export function button(text, onClick, extra = {}) {
  return el('button', { type: 'button', textContent: text, onclick: onClick, ...extra });
}
